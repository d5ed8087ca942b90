"""Prescribed nodal motion: x = x0 + f(t) u (all or some components) and/or
Lambda = exp(f(t) theta) Lambda0.

The prescribed components are also marked fixed, so the integrators leave them alone (their
momenta stay zero: the support supplies whatever force the motion needs); after every drift
to a new time the kernel ``impose`` writes the prescribed configuration. Velocities of
prescribed nodes for output are those of the last step (:func:`prescribed_velocities`);
their momenta stay zero.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model import timefunc
from rodsim.model.timefunc import TimeFunction


@dataclass(frozen=True)
class Prescribed:
    """Prescribed motion of ``nodes``; displacement u and/or rotation vector theta (global
    axes, radians) scaled by the time function; None leaves that part (or that component of
    u) free."""

    nodes: np.ndarray
    displacement: tuple | None = None
    rotation: tuple | None = None
    time: TimeFunction = timefunc.constant(1.0)


class PrescribedArrays(NamedTuple):
    """K entries (one per node and prescription): node (K,) int64, translate (K,3) int64
    flags per component, rotate (K,) int64, u, theta (K,3), tf (K,) index into the packed
    time functions tf_*."""

    node: np.ndarray
    translate: np.ndarray
    rotate: np.ndarray
    u: np.ndarray
    theta: np.ndarray
    tf: np.ndarray
    tf_kinds: np.ndarray
    tf_params: np.ndarray
    tf_tables: np.ndarray
    tf_offsets: np.ndarray
    window: np.ndarray  # (2,) the step being taken (timefunc.window_time), NaN outside one


def pack_prescribed(items: Sequence[Prescribed]) -> PrescribedArrays:
    functions = [timefunc.constant(1.0)]
    node, translate, rotate, u, theta, tf = [], [], [], [], [], []
    for item in items:
        functions.append(item.time)
        for a in np.asarray(item.nodes, dtype=np.int64).ravel():
            node.append(a)
            disp = item.displacement if item.displacement is not None else (None,) * 3
            translate.append([c is not None for c in disp])
            rotate.append(item.rotation is not None)
            u.append([0.0 if c is None else c for c in disp])
            theta.append(item.rotation if item.rotation is not None else (0.0,) * 3)
            tf.append(len(functions) - 1)
    kinds, params, tables, offsets = timefunc.pack(functions)
    return PrescribedArrays(
        np.array(node, dtype=np.int64),
        np.array(translate, dtype=np.int64).reshape(-1, 3),
        np.array(rotate, dtype=np.int64),
        np.array(u, dtype=float).reshape(-1, 3),
        np.array(theta, dtype=float).reshape(-1, 3),
        np.array(tf, dtype=np.int64),
        kinds,
        params,
        tables,
        offsets,
        timefunc.no_window(),
    )


def prescribed_dofs(items: Sequence[Prescribed], n_nodes: int) -> np.ndarray:
    """(N,6) bool: the dofs the prescriptions take over."""
    fixed = np.zeros((n_nodes, 6), dtype=bool)
    for item in items:
        nodes = np.asarray(item.nodes, dtype=np.int64)
        if item.displacement is not None:
            for i, c in enumerate(item.displacement):
                if c is not None:
                    fixed[nodes, i] = True
        if item.rotation is not None:
            fixed[nodes, 3:] = True
    return fixed


@kernel
def impose(pa, t, x0, rot0, x, rot):
    """Write the prescribed positions and rotations at time t into x (N,3), rot (N,3,3)."""
    for k in range(pa.node.shape[0]):
        f = timefunc.evaluate_packed(
            pa.tf_kinds, pa.tf_params, pa.tf_tables, pa.tf_offsets, pa.tf[k], t, pa.window
        )
        a = pa.node[k]
        for i in range(3):
            if pa.translate[k, i]:
                x[a, i] = x0[a, i] + f * pa.u[k, i]
        if pa.rotate[k]:
            r = so3.exp((f * pa.theta[k, 0], f * pa.theta[k, 1], f * pa.theta[k, 2]))
            for i in range(3):
                for j in range(3):
                    rot[a, i, j] = (
                        r[3 * i] * rot0[a, 0, j]
                        + r[3 * i + 1] * rot0[a, 1, j]
                        + r[3 * i + 2] * rot0[a, 2, j]
                    )


def prescribed_velocities(pa: PrescribedArrays, t: float, dt: float, v, omega) -> None:
    """Overwrite v, omega (N,3) of prescribed nodes with the velocities of the last step taken:
    (f(t) - f(t - dt)) / dt times u and theta (forward over the first step at t = 0 + dt).
    One-sided, so a kink or jump of f inside a step shows as that step's mean rate; the
    rotation vector is scaled along a fixed axis, so the spatial angular velocity is that
    rate times theta."""
    for k in range(len(pa.node)):
        f = [
            timefunc.evaluate_packed(
                pa.tf_kinds, pa.tf_params, pa.tf_tables, pa.tf_offsets, pa.tf[k], tk, pa.window
            )
            for tk in (t - dt, t, t + dt)
        ]
        rate = (f[1] - f[0]) / dt if t - dt >= -1e-12 * dt else (f[2] - f[1]) / dt
        if pa.translate[k].any():
            v[pa.node[k]] = np.where(pa.translate[k], rate * pa.u[k], v[pa.node[k]])
        if pa.rotate[k]:
            omega[pa.node[k]] = rate * pa.theta[k]


@kernel
def largest_rotation_step(pa, times):
    """Largest angle (rad) a prescribed rotation turns between consecutive times (sorted
    (n,) array): |f(t_i) - f(t_i-1)| |theta| over the entries and steps."""
    largest = 0.0
    for k in range(pa.node.shape[0]):
        if not pa.rotate[k]:
            continue
        size = math.sqrt(pa.theta[k, 0] ** 2 + pa.theta[k, 1] ** 2 + pa.theta[k, 2] ** 2)
        prev = timefunc.evaluate_packed(
            pa.tf_kinds, pa.tf_params, pa.tf_tables, pa.tf_offsets, pa.tf[k], times[0], pa.window
        )
        for i in range(1, times.shape[0]):
            f = timefunc.evaluate_packed(
                pa.tf_kinds,
                pa.tf_params,
                pa.tf_tables,
                pa.tf_offsets,
                pa.tf[k],
                times[i],
                pa.window,
            )
            largest = max(largest, abs(f - prev) * size)
            prev = f
    return largest
