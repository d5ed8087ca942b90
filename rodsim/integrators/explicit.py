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

from rodsim.integrators import ledger
from rodsim.integrators.diagnostics import nodal_velocities
from rodsim.integrators.drift import drift_se3_nodes, drift_so3_nodes, kick_nodes
from rodsim.jit import either, kernel
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
    (drift.rotation_drift_fixed is compiled only then)."""

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


# --- the step -------------------------------------------------------------------------------
#
# The serial and the parallel drift run the same compiled node loop (drift.drift_*_nodes): the
# parallel one hands each thread a contiguous block of nodes, so both give bit-identical
# results. Nothing is inlined into the prange body at the IR level: numba 0.68 silently dropped
# state writes when it inlined the SO3xR3 node drift there (caught by
# tests/test_explicit_invariants.py::test_parallel_equals_serial).


@kernel(inline="always")
def _drift_so3(m, s, cfg, w, h, lo, hi):
    drift_so3_nodes(
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
    drift_se3_nodes(
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
        drift_so3_nodes(
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
        drift_se3_nodes(
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
    kick_nodes(m.fixed, s.p, s.pi, s.f, s.tau, h, 0, s.x.shape[0])


@kernel(parallel=True)
def _kick_parallel(m, s, w, h):
    """_kick_serial on the node blocks of the parallel drift."""
    fixed, p, pi, f, tau, bounds = m.fixed, s.p, s.pi, s.f, s.tau, w.blocks
    for b in prange(bounds.shape[0] - 1):
        kick_nodes(fixed, p, pi, f, tau, h, bounds[b], bounds[b + 1])


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
def _damped(nodes, terms, s, w, ld):
    # Lagrange-d'Alembert forces from the current momenta (in the step: p at n + 1/2, lagged
    # by half a step, which keeps the scheme explicit); serial, also in parallel runs: at 1000
    # elements a damped step costs 266 us against 105 us undamped (nodal velocities, strain
    # rates, a second force map)
    nodal_velocities(nodes.mass, nodes.inertia, s.rot, s.p, s.pi, w.vel, w.omg)
    if ld is None:
        forces.add_damping(terms, s.x, s.rot, w.quat, s.p, w.vel, w.omg, s.f, s.tau)
    else:  # the same sum, each damped term's forces kept for the energy ledger too
        ledger.capture_damping(ld, terms, s.x, s.rot, w.quat, s.p, w.vel, w.omg, s.f, s.tau)


@kernel(inline="always")
def _undamped(nodes, terms, s, w, ld):
    pass


# switch: terms.damped. An undamped step makes no call: a kernel takes a reference to every
# array of the named tuples it is called with, which the ledger's (ld) made cost 0.25 us a
# step on a 10-element rod even where the call returned at once
_damping = either(_undamped, _damped)


@kernel(inline="always")
def compute_forces(nodes, terms, s, w, ld, t, parallel):
    """Overwrite (f, tau) with the forces of every term (rodsim.model.forces) at time t.

    Returns (internal energy, external potential). parallel: a switch (True or None). The
    parallel kernels need numba's threading layer started, which make_workspace does
    (numba.get_num_threads). ld: the energy ledger (rodsim.integrators.ledger; None: none)."""
    u, v = _forces(parallel, terms, s, w, t)
    _damping(terms.damped, nodes, terms, s, w, ld)
    return u, v


@kernel
def _impose(prescribed, t, x0, rot0, x, rot):
    if prescribed is None:  # no prescribed motion (rodsim.model.assembly.Model.nodes)
        return
    impose(prescribed, t, x0, rot0, x, rot)


# every term's time-function window (Term.window: the loads'), written out from TERMS at
# typing time like the force sums (rodsim.model.forces)
@kernel
def _set_window(prescribed, terms, a, b):
    """The step [a, b] being taken, for the time functions (timefunc.window_time) of the terms
    (Term.window) and of the prescribed motions."""
    forces.set_window(terms, a, b)
    if prescribed is None:
        return
    prescribed.window[0] = a
    prescribed.window[1] = b


@kernel
def advance(m, terms, s, cfg, w, ld, t0, k0, n_steps):
    """Advance n_steps steps of size cfg.dt from step index k0 (time t0 + k0 dt would drift by
    round-off, so times are t0 + k dt). On entry (f, tau) must hold the forces at the current
    state. Returns (steps done, status, internal energy, external potential, max Newton
    iterations, total Newton iterations). status: OK, NEWTON_FAILED or NOT_FINITE; on failure
    the state is that of the failed step (the caller keeps its last good frame). m: the nodes
    (rodsim.model.assembly.NodeArrays), terms: the force terms (rodsim.model.forces), ld: the
    energy ledger (rodsim.integrators.ledger; None: compiled out).
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
            _set_window(m.prescribed, terms, t_sub, t0 + (k0 + k + 1) * cfg.dt)
        for c in range(coeffs.shape[0]):
            h = coeffs[c] * cfg.dt
            _drift(cfg.parallel, m, s, cfg, w, h)
            for a in range(w.iters.shape[0]):
                its = w.iters[a]
                if its < 0:
                    _set_window(m.prescribed, terms, math.nan, math.nan)
                    return k, NEWTON_FAILED, u, v, max_its, sum_its
                sum_its += its
                if its > max_its:
                    max_its = its
            t_sub += h
            if c == coeffs.shape[0] - 1:
                t_sub = t0 + (k0 + k + 1) * cfg.dt  # land exactly on the grid
            _impose(m.prescribed, t_sub, m.x0, m.rot0, s.x, s.rot)  # fixed in the drift
            u, v = compute_forces(m, terms, s, w, ld, t_sub, cfg.parallel)
            _kick(cfg.parallel, m, s, w, h)
            if ld is not None:  # the energy ledger (None: compiled out)
                ledger.evaluate(ld.full, ld, m, terms, s, w, t_sub)
                ledger.step(ld, terms.damped, m, s, w, t_sub, h, v)
                ledger.entries(m.prescribed, m.prescribed, ld, s, t_sub)
        # the terms' state (plastic slip ...) moves on once the step is taken: its last force
        # evaluation (at the step's end, used by the next kick) already saw the trial state
        forces.accept(terms, s.x, s.rot, w.quat, t_sub)
        if not math.isfinite(u):
            _set_window(m.prescribed, terms, math.nan, math.nan)
            return k + 1, NOT_FINITE, u, v, max_its, sum_its
    _set_window(m.prescribed, terms, math.nan, math.nan)
    return n_steps, OK, u, v, max_its, sum_its
