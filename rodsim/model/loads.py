"""External loads: nodal dead and follower forces and moments, gravity, each with a time function.

A follower load rotates with its node: its current value is ``Lambda_a Lambda_a0^T F``, i.e. F
is given in global axes at the reference state. Dead (spatially fixed) loads keep their global
direction; dead moments are not conservative in 3D (docs/theory.md, "Loads"). Only gravity has a
potential, reported as the external energy ``-s(t) sum_a m_a g.x_a``.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.model import timefunc
from rodsim.model.plate_kernels import pressure_forces
from rodsim.model.timefunc import TimeFunction


@dataclass(frozen=True)
class NodalLoad:
    """Force and moment (global axes, reference state) applied at each of ``nodes``: one
    (3,) for all of them, or one per node (K,3) (a distributed load lumped to its nodes)."""

    nodes: np.ndarray
    force: tuple[float, float, float] | np.ndarray = (0.0, 0.0, 0.0)
    moment: tuple[float, float, float] | np.ndarray = (0.0, 0.0, 0.0)
    follower: bool = False
    time: TimeFunction = timefunc.constant(1.0)


@dataclass(frozen=True)
class Pressure:
    """Follower pressure p on plate ``elements``, along the current director side (see
    rodsim.model.plate_kernels.pressure_forces), scaled by the time function."""

    elements: np.ndarray
    value: float
    time: TimeFunction = timefunc.constant(1.0)


@dataclass(frozen=True)
class Gravity:
    """Uniform acceleration g (global axes) acting on all lumped masses."""

    g: tuple[float, float, float]
    time: TimeFunction = timefunc.constant(1.0)


class LoadArrays(NamedTuple):
    """Packed loads for the kernels. K load entries (one per loaded node and load):
    node (K,) int64, force/moment (K,3), follower (K,) int64, tf (K,) int64 index into the
    packed time functions; gravity (3,) and gravity_tf (1,) int64; tf_* the packed functions."""

    node: np.ndarray
    force: np.ndarray
    moment: np.ndarray
    follower: np.ndarray
    tf: np.ndarray
    gravity: np.ndarray
    gravity_tf: np.ndarray
    tf_kinds: np.ndarray
    tf_params: np.ndarray
    tf_tables: np.ndarray
    tf_offsets: np.ndarray
    pressure_el: np.ndarray
    pressure: np.ndarray
    pressure_tf: np.ndarray
    window: np.ndarray  # (2,) the step being taken (timefunc.window_time), NaN outside one


def pack_loads(
    loads: Sequence[NodalLoad], gravity: Sequence[Gravity] = (), pressures: Sequence[Pressure] = ()
) -> LoadArrays:
    """Flatten load specifications into LoadArrays (several gravity entries add up; they must
    then share one time function, otherwise a ValueError is raised)."""
    functions: list[TimeFunction] = [timefunc.constant(1.0)]
    node, force, moment, follower, tf = [], [], [], [], []
    for load in loads:
        functions.append(load.time)
        k = len(functions) - 1
        nodes = np.asarray(load.nodes, dtype=np.int64).ravel()
        f = np.broadcast_to(np.asarray(load.force, dtype=np.float64), (len(nodes), 3))
        m = np.broadcast_to(np.asarray(load.moment, dtype=np.float64), (len(nodes), 3))
        for i, a in enumerate(nodes):
            node.append(a)
            force.append(f[i])
            moment.append(m[i])
            follower.append(int(load.follower))
            tf.append(k)
    g = np.zeros(3)
    g_tf = 0
    for grav in gravity:
        if g_tf and grav.time != functions[g_tf]:
            raise ValueError("several gravity loads must share one time function")
        g += np.asarray(grav.g, dtype=float)
        functions.append(grav.time)
        g_tf = len(functions) - 1
    p_el, p_val, p_tf = [], [], []
    for pr in pressures:
        functions.append(pr.time)
        for e in np.asarray(pr.elements, dtype=np.int64).ravel():
            p_el.append(e)
            p_val.append(float(pr.value))
            p_tf.append(len(functions) - 1)
    kinds, params, tables, offsets = timefunc.pack(functions)
    k = len(node)
    return LoadArrays(
        node=np.asarray(node, dtype=np.int64).reshape(k),
        force=np.asarray(force, dtype=np.float64).reshape(k, 3),
        moment=np.asarray(moment, dtype=np.float64).reshape(k, 3),
        follower=np.asarray(follower, dtype=np.int64).reshape(k),
        tf=np.asarray(tf, dtype=np.int64).reshape(k),
        gravity=g,
        gravity_tf=np.array([g_tf], dtype=np.int64),
        tf_kinds=kinds,
        tf_params=params,
        tf_tables=tables,
        tf_offsets=offsets,
        pressure_el=np.asarray(p_el, dtype=np.int64),
        pressure=np.asarray(p_val, dtype=np.float64),
        pressure_tf=np.asarray(p_tf, dtype=np.int64),
        window=timefunc.no_window(),
    )


@kernel
def _multiplier(ld, i, t):
    return timefunc.evaluate_packed(
        ld.tf_kinds, ld.tf_params, ld.tf_tables, ld.tf_offsets, i, t, ld.window
    )


@kernel
def external_forces(ld, t, x, rot, rot0, mass, f, tau):
    """Add the external nodal forces and moments at time t to f, tau (N,3), in place.

    x (N,3), rot and rot0 (N,3,3) current and reference rotations (follower loads), mass (N,).
    Returns the potential energy of the conservative part (gravity).
    """
    for k in range(ld.node.shape[0]):
        s = _multiplier(ld, ld.tf[k], t)
        if s == 0.0:
            continue
        a = ld.node[k]
        if ld.follower[k]:
            for i in range(3):
                fi = 0.0
                mi = 0.0
                for j in range(3):
                    q = 0.0
                    for c in range(3):
                        q += rot[a, i, c] * rot0[a, j, c]
                    fi += q * ld.force[k, j]
                    mi += q * ld.moment[k, j]
                f[a, i] += s * fi
                tau[a, i] += s * mi
        else:
            for i in range(3):
                f[a, i] += s * ld.force[k, i]
                tau[a, i] += s * ld.moment[k, i]
    g = ld.gravity
    if g[0] == 0.0 and g[1] == 0.0 and g[2] == 0.0:
        return 0.0
    s = _multiplier(ld, ld.gravity_tf[0], t)
    potential = 0.0
    for a in range(x.shape[0]):
        m = s * mass[a]
        for i in range(3):
            f[a, i] += m * g[i]
            potential -= m * g[i] * x[a, i]
    return potential


@kernel
def plate_pressure(ld, pl, t, x, rot, f):
    """Add the follower pressure loads at time t on the plates pl to f (N,3) (generic)."""
    if ld.pressure_el.shape[0] == 0:
        return
    p = np.zeros(pl.conn.shape[0])
    for k in range(ld.pressure_el.shape[0]):
        p[ld.pressure_el[k]] += ld.pressure[k] * _multiplier(ld, ld.pressure_tf[k], t)
    pressure_forces(pl, x, rot, p + 0.0 * x[0, 0], f)


def gravity_forces(ld: LoadArrays, mass: np.ndarray, t: float) -> np.ndarray:
    """(N,3) the gravity forces s(t) m_a g at time t (equilibrium: the load multiplier) on
    the lumped masses mass (N,), computed as external_forces adds them (bit for bit)."""
    s = timefunc.evaluate_packed(
        ld.tf_kinds,
        ld.tf_params,
        ld.tf_tables,
        ld.tf_offsets,
        ld.gravity_tf[0],
        float(t),
        ld.window,
    )
    return (s * np.asarray(mass, dtype=float))[:, None] * ld.gravity[None, :]


def load_kinks(
    loads: Sequence[NodalLoad], gravity: Sequence[Gravity] = (), pressures: Sequence[Pressure] = ()
) -> np.ndarray:
    """Sorted times where some load history is not smooth (to place time steps on)."""
    times = [timefunc.kinks(item.time) for item in (*loads, *gravity, *pressures)]
    return np.unique(np.concatenate(times)) if times else np.zeros(0)
