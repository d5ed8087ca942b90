"""Conversions between the tuple representation of rodsim.lie and NumPy arrays."""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3


def m(a) -> tuple:
    """(3, 3) array-like -> row-major 9-tuple of floats."""
    return tuple(float(x) for x in np.asarray(a, dtype=float).reshape(9))


def v(a) -> tuple:
    """Array-like of n numbers -> n-tuple of floats."""
    return tuple(float(x) for x in np.asarray(a, dtype=float).ravel())


def as_matrix(t) -> np.ndarray:
    """Row-major 9-tuple -> (3, 3) array."""
    return np.asarray(t, dtype=float).reshape(3, 3)


def as_vector(t) -> np.ndarray:
    """Tuple -> 1-D array."""
    return np.asarray(t, dtype=float)


@kernel
def relative_quaternions(rot, rot0, out):
    """Quaternions (N,4), w >= 0, of R_a = Lambda_a Lambda0_a^T for rot, rot0 (N,3,3)."""
    for a in range(rot.shape[0]):
        r = (
            _row_dot(rot, rot0, a, 0, 0),
            _row_dot(rot, rot0, a, 0, 1),
            _row_dot(rot, rot0, a, 0, 2),
            _row_dot(rot, rot0, a, 1, 0),
            _row_dot(rot, rot0, a, 1, 1),
            _row_dot(rot, rot0, a, 1, 2),
            _row_dot(rot, rot0, a, 2, 0),
            _row_dot(rot, rot0, a, 2, 1),
            _row_dot(rot, rot0, a, 2, 2),
        )
        q = so3.quat_from_matrix(r)
        for k in range(4):
            out[a, k] = q[k]


@kernel(inline="always")
def _row_dot(rot, rot0, a, i, j):
    """(Lambda Lambda0^T)_ij = sum_k Lambda_ik Lambda0_jk."""
    return (
        rot[a, i, 0] * rot0[a, j, 0] + rot[a, i, 1] * rot0[a, j, 1] + rot[a, i, 2] * rot0[a, j, 2]
    )
