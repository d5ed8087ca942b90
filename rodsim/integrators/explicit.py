"""Explicit Lie-group partitioned Runge–Kutta (Störmer–Verlet / Lobatto IIIA–IIIB) kernels.

One step of size h from (x, Lambda, p, pi) with the forces (f, tau) of the current state
(docs/theory.md, "The explicit scheme", signs corrected; alpha = 1/2):

    p_bar  = p + h/2 f,   pi_bar = pi + h/2 tau                       (half kicks)
    drift: SO3xR3  x' = x + h p_bar/m;  Lambda' = Lambda F with F solving the
                   Lee–Leok–McClamroch equation (docs/theory.md, "The explicit scheme", material
                   form)
                   (F J_d - J_d F^T)^vee = h Lambda^T pi_bar, J_d = tr(I)/2 - I,
                   solved by Newton in the Cayley parametrisation F = cay(2 f), where it is
                   polynomial (docs/theory.md, "The explicit scheme";
           SE3     (Lambda', x') = (Lambda, x) cay_SE3(h xi) with xi solving the Lie-algebra
                   integrator's local equation (dcay^{-1})^T J xi = Lambda^T (pi_bar, p_bar)
                   (docs/theory.md, "The implicit Cayley variational integrator"), then the
                   coadjoint transport
                   pi_bar <- pi_bar - (x' - x) x p_bar, which keeps the spatial momentum;
    forces (f, tau) at the new state and time t + h;
    p' = p_bar + h/2 f,   pi' = pi_bar + h/2 tau                       (half kicks)

p and pi are spatial (pi is the nodal spin about the node). Order 4 is the symmetric
triple-jump composition of this step. Fixed degrees of freedom are global components of the
translational and rotational velocity; a fixed rotational component is imposed by replacing
that row of the local Newton system with theta_i = 0 (exact for clamps, pins and hinges about a
global axis).

The whole step runs in numba; ``advance`` loops over many steps per call so that no Python
runs inside a step.
"""

import math
from typing import NamedTuple

import numba
import numpy as np
from numba import prange

from rodsim.integrators.diagnostics import nodal_velocities
from rodsim.integrators.lavi import (
    constrain_rows,
    lavi_jacobian,
    lavi_residual,
    solve_dense,
)
from rodsim.jit import either, kernel
from rodsim.lie import so3
from rodsim.model import forces
from rodsim.model.prescribed import impose

SO3XR3 = 0
SE3 = 1
GROUPS = {"SO3xR3": SO3XR3, "SE3": SE3}

_TRIPLE_JUMP = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
COEFFICIENTS = {
    2: np.array([1.0]),
    4: np.array([_TRIPLE_JUMP, 1.0 - 2.0 * _TRIPLE_JUMP, _TRIPLE_JUMP]),
}

# status codes returned by advance
OK = 0
NEWTON_FAILED = 1
NOT_FINITE = 2


class StateArrays(NamedTuple):
    """Mutable state: x (N,3), rot (N,3,3), p, pi (N,3) spatial momenta, f, tau (N,3) the
    forces at the current state and time."""

    x: np.ndarray
    rot: np.ndarray
    p: np.ndarray
    pi: np.ndarray
    f: np.ndarray
    tau: np.ndarray


class Settings(NamedTuple):
    """dt, composition coefficients, the group (se3: True for SE3, None for SO3xR3), parallel
    (True or None), Newton tol and max_iter. se3 and parallel are compile-time switches
    (rodsim.jit.switch): a run compiles only the drift and force kernels it uses.
    partial_spin: a switch, True when a node has one or two of its spin components held
    (rotation_drift_fixed is compiled only then)."""

    dt: float
    coefficients: np.ndarray
    se3: bool | None
    parallel: bool | None
    tol: float
    max_iter: int
    partial_spin: bool | None = True


class Workspace(NamedTuple):
    """Scratch: iters (N,) Newton iterations of the last drift (-1: failed), lin (N,6,7) local
    linear systems (SE3), elem (E,2,6) element contributions (parallel assembly), quat (N,4)
    nodal quaternions (the force terms read them), blocks (B+1,) and element_blocks (B+1,)
    int64 node and element block bounds of the parallel kernels (one contiguous block per thread),
    block_energy (B,) the elastic energy per element block, vel, omg (N,3) nodal velocities
    (damping)."""

    iters: np.ndarray
    lin: np.ndarray
    elem: np.ndarray
    quat: np.ndarray
    blocks: np.ndarray
    element_blocks: np.ndarray
    block_energy: np.ndarray
    vel: np.ndarray
    omg: np.ndarray


def block_bounds(n: int, blocks: int) -> np.ndarray:
    """Bounds (B+1,) int64 of B = max(1, min(n, blocks)) contiguous, near-equal blocks of n."""
    b = max(1, min(n, blocks))
    return np.array([k * n // b for k in range(b + 1)], dtype=np.int64)


def make_workspace(n_nodes: int, n_elements: int, threads: int | None = None) -> Workspace:
    """Scratch arrays; threads (default: numba's current thread count) sets the drift blocks.

    Always calls numba.get_num_threads(), which starts numba's threading layer: kernels loaded
    from the cache that reach parallel code only through a callee (compute_forces, advance)
    do not start it themselves and would segfault."""
    current = numba.get_num_threads()
    threads = current if threads is None else threads
    return Workspace(
        np.zeros(n_nodes, dtype=np.int64),
        np.zeros((n_nodes, 6, 7)),
        np.zeros((n_elements, 2, 6)),
        np.zeros((n_nodes, 4)),
        block_bounds(n_nodes, threads),
        block_bounds(n_elements, threads),
        np.zeros(max(1, min(n_elements, threads))),
        np.zeros((n_nodes, 3)),
        np.zeros((n_nodes, 3)),
    )


# --- local rotation solve (SO3xR3) ----------------------------------------------------------


@kernel(inline="always")
def rotation_residual(inertia, f, y):
    """G(f) = y + y x f + (y.f) f - 2 I f (docs/theory.md, "The explicit scheme", Lee's Cayley
    form).

    G(f) = 0 with F = cay(2 f) is the Lee–Leok–McClamroch equation
    (F J_d - J_d F^T)^vee = y, J_d = tr(I)/2 - I, i.e. docs/theory.md, "The explicit scheme" with F
    = exp(theta):
    the same equation in a parametrisation where it is polynomial (no trigonometry)."""
    yf = so3.dot(y, f)
    yxf = so3.cross(y, f)
    i_f = so3.matvec(inertia, f)
    return (
        y[0] + yxf[0] + yf * f[0] - 2.0 * i_f[0],
        y[1] + yxf[1] + yf * f[1] - 2.0 * i_f[1],
        y[2] + yxf[2] + yf * f[2] - 2.0 * i_f[2],
    )


@kernel(inline="always")
def rotation_jacobian(inertia, f, y):
    """dG/df = hat(y) + (y.f) I3 + f y^T - 2 I (checked against finite differences)."""
    jac = so3.mat_axpy(-2.0, inertia, so3.hat(y))
    jac = so3.mat_axpy(1.0, so3.outer(f, y), jac)
    yf = so3.dot(y, f)
    return so3.mat_axpy(yf, so3.identity(), jac)


@kernel(inline="always")
def rotation_momentum(inertia, f):
    """The y for which f solves G(f) = 0: y = (I3 + hat f) 2 I f / (1 + |f|^2)."""
    i_f = so3.matvec(inertia, f)
    c = 2.0 / (1.0 + so3.dot(f, f))
    fxi = so3.cross(f, i_f)
    return (c * (i_f[0] + fxi[0]), c * (i_f[1] + fxi[1]), c * (i_f[2] + fxi[2]))


@kernel(inline="always")
def _unit_rows(m, fix):
    """m with row i replaced by e_i where fix[i]."""
    f0, f1, f2 = fix
    return (
        1.0 if f0 else m[0], 0.0 if f0 else m[1], 0.0 if f0 else m[2],
        0.0 if f1 else m[3], 1.0 if f1 else m[4], 0.0 if f1 else m[5],
        0.0 if f2 else m[6], 0.0 if f2 else m[7], 1.0 if f2 else m[8],
    )  # fmt: skip


@kernel(inline="always")
def solve_rotation(inertia, y, fix, tol, max_iter):
    """Newton for G(f) = 0; rows i with fix[i] are replaced by f_i = 0.

    inertia: standard inertia 9-tuple in the frame of y and f; y = h pi_bar (3-tuple).
    Returns (f, iterations, converged); the rotation increment is cay(2 f).
    Initial guess (2 I)^{-1} y, exact to first order.
    """
    f = so3.scale(0.5, so3.solve3(inertia, y))
    f = (0.0 if fix[0] else f[0], 0.0 if fix[1] else f[1], 0.0 if fix[2] else f[2])
    # |r| <= tol |y| compared squared: no square root per iteration
    scale = tol * (so3.norm(y) + 1.0e-300)
    scale2 = scale * scale
    for it in range(max_iter + 1):
        r = rotation_residual(inertia, f, y)
        r = (0.0 if fix[0] else r[0], 0.0 if fix[1] else r[1], 0.0 if fix[2] else r[2])
        if so3.dot(r, r) <= scale2:
            return f, it, True
        if it == max_iter:
            break
        jac = _unit_rows(rotation_jacobian(inertia, f, y), fix)
        f = so3.sub(f, so3.solve3(jac, r))
    return f, max_iter, False


_mat_at = so3.mat_at  # the 3x3 block arr[a] as a row-major 9-tuple


@kernel(inline="always")
def _store_mat(arr, a, m):
    for i in range(3):
        for j in range(3):
            arr[a, i, j] = m[3 * i + j]


@kernel(inline="always")
def rotation_drift(rot, inertia, hpi, tol, max_iter):
    """Rotation update of a node with no fixed spin component: Lambda' = Lambda cay(2 f), f
    solving G(f) = 0 with y = Lambda^T h pi_bar (material frame).

    rot, inertia: row-major 9-tuples (inertia material, standard); hpi = h pi_bar (3-tuple).
    Returns (Lambda' 9-tuple, Newton iterations, converged)."""
    f, its, ok = solve_rotation(
        inertia, so3.matTvec(rot, hpi), (False, False, False), tol, max_iter
    )
    return so3.matmul(rot, so3.cay(so3.scale(2.0, f))), its, ok


@kernel
def rotation_drift_fixed(rot, inertia, hpi, fix, tol, max_iter):
    """Rotation update with the spin components fix (3 bools, global axes) held: solved in the
    spatial frame, Lambda' = cay(2 f) Lambda.

    Returns (Lambda', y, iterations, converged) with y = rotation_momentum(f) = h pi_bar
    including the reaction moment on the fixed components."""
    spatial = so3.matmulT(so3.matmul(rot, inertia), rot)
    f, its, ok = solve_rotation(spatial, hpi, fix, tol, max_iter)
    rot_new = so3.matmul(so3.cay(so3.scale(2.0, f)), rot)
    return rot_new, rotation_momentum(spatial, f), its, ok


@kernel
def _no_partial_drift(rot, inertia, hpi, fix, tol, max_iter):
    # never called: the switch is None only when no node has a partly held spin
    return rot, (0.0, 0.0, 0.0), 0, False


_partial_drift = either(_no_partial_drift, rotation_drift_fixed)  # switch: cfg.partial_spin


@kernel
def _drift_so3_nodes(
    mass, inertia, fixed, x, rot, p, pi, f, tau, iters, tol, max_iter, h, lo, hi, partial
):
    """Half kick and drift of nodes lo <= a < hi on SO3xR3; iters[a] = Newton iterations
    (-1 on failure).

    Plain arrays and one loop per call: per-node calls taking arrays or named tuples cost
    atomic reference-count updates on every array, which dominated the drift."""
    for a in range(lo, hi):
        inv_m = 1.0 / mass[a]
        for k in range(3):
            if fixed[a, k]:
                p[a, k] = 0.0
            else:
                p[a, k] += 0.5 * h * f[a, k]
                x[a, k] += h * p[a, k] * inv_m
        fix = (fixed[a, 3], fixed[a, 4], fixed[a, 5])
        if fix[0] and fix[1] and fix[2]:
            for k in range(3):
                pi[a, k] = 0.0
            iters[a] = 0
            continue
        for k in range(3):
            pi[a, k] += 0.5 * h * tau[a, k]
        r = _mat_at(rot, a)
        hpi = (h * pi[a, 0], h * pi[a, 1], h * pi[a, 2])
        if not (fix[0] or fix[1] or fix[2]):
            r_new, its, ok = rotation_drift(r, _mat_at(inertia, a), hpi, tol, max_iter)
        else:
            r_new, y, its, ok = _partial_drift(
                partial, r, _mat_at(inertia, a), hpi, fix, tol, max_iter
            )
            # the reaction moment sets the fixed components: pi_bar = y(f)/h exactly
            for k in range(3):
                pi[a, k] = y[k] / h
        _store_mat(rot, a, r_new)
        iters[a] = its if ok else -1


@kernel
def _drift_se3_nodes(
    mass, inertia, fixed, x, rot, p, pi, f, tau, lin, iters, tol, max_iter, h, lo, hi
):
    """Half kick, Lie-algebra drift on SE(3) with the Cayley map and coadjoint transport of
    nodes lo <= a < hi; iters[a] = Newton iterations (-1 on failure)."""
    for a in range(lo, hi):
        fx = (fixed[a, 0], fixed[a, 1], fixed[a, 2], fixed[a, 3], fixed[a, 4], fixed[a, 5])
        _kick_node(fx, p, pi, f, tau, a, h)
        if fx[0] and fx[1] and fx[2] and fx[3] and fx[4] and fx[5]:
            for k in range(3):
                p[a, k] = 0.0
                pi[a, k] = 0.0
            iters[a] = 0
            continue
        constrained = fx[0] or fx[1] or fx[2] or fx[3] or fx[4] or fx[5]
        r = _mat_at(rot, a)
        ine = _mat_at(inertia, a)
        m = mass[a]
        pbar = (p[a, 0], p[a, 1], p[a, 2])
        hpi = so3.scale(h, so3.matTvec(r, (pi[a, 0], pi[a, 1], pi[a, 2])))
        hp = so3.scale(h, so3.matTvec(r, pbar))
        q = so3.solve3(ine, hpi)
        v = so3.scale(1.0 / m, hp)
        its = -1
        for it in range(max_iter + 1):
            r_w, r_v = lavi_residual(ine, m, q, v, hpi, hp)
            lavi_jacobian(lin, a, ine, m, q, v)
            if constrained:
                constrain_rows(lin, a, r, fx, q, v, r_w, r_v)
            else:
                for k in range(3):
                    lin[a, k, 6] = r_w[k]
                    lin[a, 3 + k, 6] = r_v[k]
            solve_dense(lin, a, 6)
            dq = (lin[a, 0, 6], lin[a, 1, 6], lin[a, 2, 6])
            dv = (lin[a, 3, 6], lin[a, 4, 6], lin[a, 5, 6])
            q = so3.sub(q, dq)
            v = so3.sub(v, dv)
            # quadratic convergence: an update of relative size tol leaves an error ~ tol^2
            if so3.norm(dq) + so3.norm(dv) <= tol * (so3.norm(q) + so3.norm(v)) + 1.0e-300:
                its = it + 1
                break
        if constrained:
            r_w, r_v = lavi_residual(ine, m, q, v, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            pi_new = so3.scale(1.0 / h, so3.matvec(r, r_w))
            pbar = so3.scale(1.0 / h, so3.matvec(r, r_v))
            for k in range(3):
                pi[a, k] = pi_new[k]
                p[a, k] = pbar[k]
        dx = so3.matvec(r, so3.matvec(so3.i_minus_half_hat_inv(q), v))
        transport = so3.cross(dx, pbar)
        for k in range(3):
            x[a, k] += dx[k]
            pi[a, k] -= transport[k]
        _store_mat(rot, a, so3.matmul(r, so3.cay(q)))
        iters[a] = its


@kernel(inline="always")
def _kick_node(fx, p, pi, f, tau, a, h):
    """p += h/2 f, pi += h/2 tau on the free components (fx: 6 bools) of node a."""
    for k in range(3):
        if not fx[k]:
            p[a, k] += 0.5 * h * f[a, k]
        if not fx[3 + k]:
            pi[a, k] += 0.5 * h * tau[a, k]


@kernel
def _kick_nodes(fixed, p, pi, f, tau, h, lo, hi):
    """Second half kick of the free components of nodes lo <= a < hi."""
    for a in range(lo, hi):
        fx = (fixed[a, 0], fixed[a, 1], fixed[a, 2], fixed[a, 3], fixed[a, 4], fixed[a, 5])
        _kick_node(fx, p, pi, f, tau, a, h)


# --- the step -------------------------------------------------------------------------------
#
# The serial and the parallel drift run the same compiled node loop (_drift_*_nodes): the
# parallel one hands each thread a contiguous block of nodes, so both give bit-identical
# results. Nothing is inlined into the prange body at the IR level: numba 0.68 silently dropped
# state writes when it inlined the SO3xR3 node drift there (caught by
# tests/test_explicit_invariants.py::test_parallel_equals_serial).


@kernel(inline="always")
def _drift_so3(m, s, cfg, w, h, lo, hi):
    _drift_so3_nodes(
        m.mass,
        m.inertia,
        m.fixed,
        s.x,
        s.rot,
        s.p,
        s.pi,
        s.f,
        s.tau,
        w.iters,
        cfg.tol,
        cfg.max_iter,
        h,
        lo,
        hi,
        cfg.partial_spin,
    )


@kernel(inline="always")
def _drift_se3(m, s, cfg, w, h, lo, hi):
    _drift_se3_nodes(
        m.mass,
        m.inertia,
        m.fixed,
        s.x,
        s.rot,
        s.p,
        s.pi,
        s.f,
        s.tau,
        w.lin,
        w.iters,
        cfg.tol,
        cfg.max_iter,
        h,
        lo,
        hi,
    )


_drift_block = either(_drift_so3, _drift_se3)  # switch: cfg.se3


@kernel(inline="always")
def _drift_serial(m, s, cfg, w, h):
    _drift_block(cfg.se3, m, s, cfg, w, h, 0, s.x.shape[0])


@kernel(parallel=True)
def _drift_parallel_so3(m, s, cfg, w, h):
    # prange bodies may only capture arrays and scalars: unpack the named tuples
    mass, inertia, fixed = m.mass, m.inertia, m.fixed
    x, rot, p, pi, f, tau = s.x, s.rot, s.p, s.pi, s.f, s.tau
    iters, bounds, tol, max_iter = w.iters, w.blocks, cfg.tol, cfg.max_iter
    partial = cfg.partial_spin
    for b in prange(bounds.shape[0] - 1):
        _drift_so3_nodes(
            mass,
            inertia,
            fixed,
            x,
            rot,
            p,
            pi,
            f,
            tau,
            iters,
            tol,
            max_iter,
            h,
            bounds[b],
            bounds[b + 1],
            partial,
        )


@kernel(parallel=True)
def _drift_parallel_se3(m, s, cfg, w, h):
    mass, inertia, fixed = m.mass, m.inertia, m.fixed
    x, rot, p, pi, f, tau = s.x, s.rot, s.p, s.pi, s.f, s.tau
    iters, lin, bounds, tol, max_iter = w.iters, w.lin, w.blocks, cfg.tol, cfg.max_iter
    for b in prange(bounds.shape[0] - 1):
        _drift_se3_nodes(
            mass,
            inertia,
            fixed,
            x,
            rot,
            p,
            pi,
            f,
            tau,
            lin,
            iters,
            tol,
            max_iter,
            h,
            bounds[b],
            bounds[b + 1],
        )


_drift_parallel_group = either(_drift_parallel_so3, _drift_parallel_se3)  # switch: cfg.se3


@kernel(inline="always")
def _drift_parallel(m, s, cfg, w, h):
    _drift_parallel_group(cfg.se3, m, s, cfg, w, h)


_drift = either(_drift_serial, _drift_parallel)  # switch: cfg.parallel


@kernel(inline="always")
def _kick_serial(m, s, w, h):
    """Second half kick of the free components."""
    _kick_nodes(m.fixed, s.p, s.pi, s.f, s.tau, h, 0, s.x.shape[0])


@kernel(parallel=True)
def _kick_parallel(m, s, w, h):
    """_kick_serial on the node blocks of the parallel drift."""
    fixed, p, pi, f, tau, bounds = m.fixed, s.p, s.pi, s.f, s.tau, w.blocks
    for b in prange(bounds.shape[0] - 1):
        _kick_nodes(fixed, p, pi, f, tau, h, bounds[b], bounds[b + 1])


_kick = either(_kick_serial, _kick_parallel)  # switch: cfg.parallel


@kernel(parallel=True)
def _quaternions_parallel(rot, quat, bounds):
    for b in prange(bounds.shape[0] - 1):
        forces.quaternions(rot, quat, bounds[b], bounds[b + 1])


@kernel(inline="always")
def _forces_serial(terms, s, w, t):
    forces.quaternions(s.rot, w.quat, 0, s.x.shape[0])
    return forces.forces(terms, s.x, s.rot, w.quat, t, s.f, s.tau, forces.ALL)


@kernel(inline="always")
def _forces_parallel(terms, s, w, t):
    _quaternions_parallel(s.rot, w.quat, w.blocks)
    return forces.forces_parallel(terms, s.x, s.rot, w.quat, t, s.f, s.tau, w)


_forces = either(_forces_serial, _forces_parallel)  # switch: parallel


@kernel
def _damping(damped, nodes, terms, s, w):
    # Lagrange-d'Alembert forces from the current momenta (in the step: p at n + 1/2, lagged
    # by half a step, which keeps the scheme explicit); serial, also in parallel runs: at 1000
    # elements a damped step costs 266 us against 105 us undamped (nodal velocities, strain
    # rates, a second force map)
    if damped is None:
        return
    nodal_velocities(nodes.mass, nodes.inertia, s.rot, s.p, s.pi, w.vel, w.omg)
    forces.add_damping(terms, s.x, s.rot, w.quat, s.p, w.vel, w.omg, s.f, s.tau)


@kernel(inline="always")
def compute_forces(nodes, terms, s, w, t, parallel):
    """Overwrite (f, tau) with the forces of every term (rodsim.model.forces) at time t.

    Returns (internal energy, external potential). parallel: a switch (True or None). The
    parallel kernels need numba's threading layer started, which make_workspace does
    (numba.get_num_threads)."""
    u, v = _forces(parallel, terms, s, w, t)
    _damping(terms.damped, nodes, terms, s, w)
    return u, v


@kernel
def _impose(prescribed, t, x0, rot0, x, rot):
    if prescribed is None:  # no prescribed motion (rodsim.model.assembly.Model.nodes)
        return
    impose(prescribed, t, x0, rot0, x, rot)


@kernel
def _set_window(prescribed, loads, a, b):
    """The step [a, b] being taken, for the time functions (timefunc.window_time)."""
    loads.window[0] = a
    loads.window[1] = b
    if prescribed is None:
        return
    prescribed.window[0] = a
    prescribed.window[1] = b


@kernel
def advance(m, terms, s, cfg, w, t0, k0, n_steps):
    """Advance n_steps steps of size cfg.dt from step index k0 (time t0 + k0 dt would drift by
    round-off, so times are t0 + k dt). On entry (f, tau) must hold the forces at the current
    state. Returns (steps done, status, internal energy, external potential, max Newton
    iterations, total Newton iterations). status: OK, NEWTON_FAILED or NOT_FINITE; on failure
    the state is that of the failed step (the caller keeps its last good frame). m: the nodes
    (rodsim.model.assembly.NodeArrays), terms: the force terms (rodsim.model.forces).
    """
    u = 0.0
    v = 0.0
    max_its = 0
    sum_its = 0
    coeffs = cfg.coefficients
    # a composition's stages reach beyond the step: its loads follow the step's smooth piece
    windowed = coeffs.shape[0] > 1
    for k in range(n_steps):
        t_sub = t0 + (k0 + k) * cfg.dt
        if windowed:
            _set_window(m.prescribed, terms.loads, t_sub, t0 + (k0 + k + 1) * cfg.dt)
        for c in range(coeffs.shape[0]):
            h = coeffs[c] * cfg.dt
            _drift(cfg.parallel, m, s, cfg, w, h)
            for a in range(w.iters.shape[0]):
                its = w.iters[a]
                if its < 0:
                    _set_window(m.prescribed, terms.loads, math.nan, math.nan)
                    return k, NEWTON_FAILED, u, v, max_its, sum_its
                sum_its += its
                if its > max_its:
                    max_its = its
            t_sub += h
            if c == coeffs.shape[0] - 1:
                t_sub = t0 + (k0 + k + 1) * cfg.dt  # land exactly on the grid
            _impose(m.prescribed, t_sub, m.x0, m.rot0, s.x, s.rot)  # fixed in the drift
            u, v = compute_forces(m, terms, s, w, t_sub, cfg.parallel)
            _kick(cfg.parallel, m, s, w, h)
        if not math.isfinite(u):
            _set_window(m.prescribed, terms.loads, math.nan, math.nan)
            return k + 1, NOT_FINITE, u, v, max_its, sum_its
    _set_window(m.prescribed, terms.loads, math.nan, math.nan)
    return n_steps, OK, u, v, max_its, sum_its
