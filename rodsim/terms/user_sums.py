"""The sums over a role's user-term entries (rodsim.terms.user), written out at typing time:
one call per entry of the tuple, each through the entry's compiled function (float64, or
complex128 for the implicit Jacobian). The user terms' kernel hooks call them, and so do the
Python-side tangent at the reference (rodsim.terms.user_tangent) through total and
total_damping; they sit below both, so neither imports the other's module to reach them."""

import numpy as np
from numba import types

from rodsim.jit import kernel, written


def _entry_types(own) -> list:
    return list(own.types) if isinstance(own, types.BaseTuple) else []


def _has(entry_type, field: str) -> bool:
    return not isinstance(entry_type.types[entry_type.fields.index(field)], types.NoneType)


def _unrolled(name: str, params: str, write):
    """A kernel-callable name(own, <params>) whose body write(own type, argument types by
    name) writes at typing time (rodsim.jit.written), one call per entry of the tuple own,
    inlined into its caller."""
    return written(
        name,
        f"own, {params}",
        lambda ty: (write(ty["own"], ty), {"np": np, "add_scaled": _add_scaled}),
    )


def _suffix(array_type) -> str:
    """The compiled variant a call takes: complex128 configurations (the Jacobian) or float64."""
    return "_c" if isinstance(array_type.dtype, types.Complex) else ""


def _write_forces(own, args):
    """e = the entries' energies; each entry's forces into f, tau, or, where an applied term's
    loads are scaled (scale != 1), into scratch added times scale."""
    s = _suffix(args["x"])
    lines = ["e = 0.0"]
    for i in range(len(_entry_types(own))):
        call = f"own[{i}].forces{s}(own[{i}].nodes, own[{i}].params, x, rot, quat, t, "
        lines += [
            f"if own[{i}].scale[0] == 1.0:",
            f"    e += {call}f, tau)",
            "else:",
            "    g = np.zeros_like(f)",
            "    h = np.zeros_like(tau)",
            f"    e += own[{i}].scale[0] * {call}g, h)",
            f"    add_scaled(f, tau, g, h, own[{i}].scale[0])",
        ]
    return [*lines, "return e"]


def _write_damping(own, args):
    s = _suffix(args["x"])
    return [
        f"own[{i}].damping{s}(own[{i}].nodes, own[{i}].params, x, rot, quat, vel, omg, f, tau)"
        for i, e in enumerate(_entry_types(own))
        if _has(e, "damping")
    ]


sum_forces = _unrolled("sum_forces", "x, rot, quat, t, f, tau", _write_forces)
sum_damping = _unrolled("sum_damping", "x, rot, quat, vel, omg, f, tau", _write_damping)


@kernel(inline="always")
def _add_scaled(f, tau, g, h, s):
    for a in range(f.shape[0]):
        for k in range(3):
            f[a, k] += s * g[a, k]
            tau[a, k] += s * h[a, k]


@kernel
def total(own, x, rot, quat, t, f, tau):
    """The entries' forces into f, tau and their energy, callable from Python."""
    return sum_forces(own, x, rot, quat, t, f, tau)


@kernel
def total_damping(own, x, rot, quat, vel, omg, f, tau):
    """The entries' damping forces into f, tau, callable from Python."""
    sum_damping(own, x, rot, quat, vel, omg, f, tau)
