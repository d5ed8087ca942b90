"""The one numba decorator rodsim's kernels use.

``error_model="numpy"`` drops the per-division ZeroDivisionError checks of the Python error
model (a division by zero gives inf/NaN, which the integrators detect); fastmath stays off so
NaN checks and the carefully ordered small-angle series keep their meaning. ``cache=True``
compiles once per machine.
"""

from numba import njit

_OPTIONS = {"cache": True, "error_model": "numpy"}


def kernel(fn=None, **options):
    """njit with rodsim's options; use as @kernel or @kernel(inline="always", parallel=True)."""
    opts = {**_OPTIONS, **options}
    if fn is None:
        return njit(**opts)
    return njit(**opts)(fn)
