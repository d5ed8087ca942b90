"""Driving the implicit Cayley VI: steps and the running integration, frame by frame as run.py
steps the explicit scheme. The residual and its Jacobians are numba kernels
(rodsim.integrators.vi_residual, vi_jacobian, vi_jacobian_dynamic); the Newton solver that
holds the model's pattern and scratch and owns the sparse linear algebra is
rodsim.integrators.vi_solver (its names are reachable here too)."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rodsim.errors import NumericalError
from rodsim.integrators import adaptive, adaptive_batch, ledger, ledger_implicit
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.diagnostics import Diagnostics, diagnostics
from rodsim.integrators.explicit import StateArrays
from rodsim.integrators.planning import next_split
from rodsim.integrators.vi_solver import (
    EPS,
    Newton,
    Solver,
    applied_norm,
    make_solver,
    restrained,
    roundoff_floor,
    spatial_columns,
    stalled,
    weighted_norm,
)
from rodsim.integrators.vi_state import body_momenta, momenta_after, quaternions, rotations
from rodsim.integrators.vi_step import step_data
from rodsim.model import forces
from rodsim.model.assembly import Model
from rodsim.model.prescribed import impose

log = logging.getLogger(__name__)

# the Newton solver lives in vi_solver; its names stay reachable here for the callers
__all__ = [
    "EPS",
    "Newton",
    "Solver",
    "applied_norm",
    "make_solver",
    "restrained",
    "roundoff_floor",
    "spatial_columns",
    "stalled",
    "weighted_norm",
]

# --- dynamics -------------------------------------------------------------------------------


@dataclass
class Implicit:
    """A running implicit integration (the same attributes run.py reads from Explicit)."""

    solver: Solver
    dt: float
    state: StateArrays
    quat: np.ndarray
    xi: np.ndarray
    t0: float
    tol: float
    max_iter: int
    step: int = 0
    internal: float = 0.0
    external: float = 0.0
    max_iterations: int = 0
    residual: float = 0.0
    last: Newton | None = None
    # Model.kinks: a step across one is taken as sub-steps that end on it (planning.next_split)
    kinks: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    conserve: bool = False  # energy-consistent elastic forces (vi_residual._conserving_forces)
    free_body: int = 0  # no support: the energy correction keeps both momenta
    control: "adaptive.Control | None" = field(default=None, repr=False)  # adaptive steps
    stop: Callable[[], bool] | None = field(default=None, repr=False)  # adaptive: stop asked
    # the energy ledger (rodsim.integrators.ledger): work and dissipation of the steps taken
    ledger: "ledger.Ledger | None" = field(default=None, repr=False)

    @property
    def model(self) -> Model:
        return self.solver.model

    @property
    def time(self) -> float:
        # adaptive steps stopped between frames (a stop request) are `partial` past the grid
        partial = self.control.partial if self.control is not None else 0.0
        return self.t0 + self.step * self.dt + partial

    def diagnostics(self) -> Diagnostics:
        return diagnostics(self.model, self.state, self.internal, self.external)


def _energies(run) -> None:
    run.internal, run.external = forces.energies(
        run.model.terms, run.state.x, run.state.rot, run.time
    )


def start(
    model: Model,
    dt: float,
    *,
    group: str = "SO3xR3",
    state: StateArrays,
    t0: float = 0.0,
    tol: float = 1.0e-10,
    max_iter: int = 25,
    step: int = 0,
    conserve: bool = False,
    steps: "adaptive.Settings | None" = None,
    h0: float | None = None,
) -> Implicit:
    """Set up an implicit integration from state (see dynamics.initial_state); step: the
    steps already taken from t0 (a restart: time t0 + step dt)."""
    if model.prescribed.node.shape[0] and not step:
        impose(model.prescribed, t0, model.x0, model.rot0, state.x, state.rot)
    quat = np.empty((model.n_nodes, 4))
    quaternions(state.rot, quat)
    solver = make_solver(model, group)
    # first guess of the step velocity: JJ^{-1} P_k
    mom = np.empty((model.n_nodes, 6))
    body_momenta(state.rot, state.p, state.pi, solver.se3, mom)
    xi = np.zeros((model.n_nodes, 6))
    heavy = model.mass > 0.0
    xi[heavy, :3] = mom[heavy, :3] / model.mass[heavy, None]
    for a in range(model.n_nodes):
        if np.any(mom[a, 3:]):
            xi[a, 3:] = np.linalg.lstsq(model.inertia[a], mom[a, 3:], rcond=None)[0]
    run = Implicit(
        solver,
        float(dt),
        state,
        quat,
        xi,
        t0,
        tol,
        max_iter,
        step=int(step),
        kinks=np.asarray(model.kinks, dtype=float),
        conserve=bool(conserve),
        free_body=int(not restrained(model)),
    )
    if steps is not None:
        run.control = adaptive.start(run, steps, dt if h0 is None else h0)
    run.ledger = ledger_implicit.start(model, state.x, state.rot, run.time)
    _energies(run)
    log.debug(
        "implicit %s, dt %g, %d nodes, %d colours",
        group,
        dt,
        model.n_nodes,
        solver.pattern.n_colors,
    )
    return run


def take_step(run: Implicit, t: float | None = None, h: float | None = None) -> Newton:
    """One step of the VI from time t (default: the run's) of size h (default: dt); the state
    moves on only if Newton converged."""
    s, st, m = run.solver, run.state, run.model
    h = run.dt if h is None else h
    x, rot, quat = st.x.copy(), st.rot.copy(), run.quat.copy()  # g_k, kept through the step
    mom = np.empty((m.n_nodes, 6))
    body_momenta(rot, st.p, st.pi, s.se3, mom)
    t = run.time if t is None else t
    sd = step_data(s, x, rot, quat, mom, h, t + 0.5 * h, t + h, vr.DYNAMIC)
    if run.conserve:
        u0 = forces.energies(m.terms, x, rot, t)[0]
        sd = sd._replace(conserve=1, u0=u0, free_body=run.free_body)
    # reference: the momenta and the impulse of the forces over the step
    static = step_data(s, x, rot, quat, mom, 1.0, t + 0.5 * h, t + h, vr.STATIC)
    loads, _ = s.residual(static, np.zeros_like(run.xi))
    loads[m.fixed] = 0.0  # constraint rows there (lengths), not forces
    reference = max(weighted_norm(mom, s.length), abs(h) * weighted_norm(loads, s.length), 1e-300)
    xi = run.xi.copy()
    result, post = s.newton(sd, xi, run.tol, run.max_iter, reference)
    if not result.converged:
        return result
    if run.ledger is not None:  # the step's work and dissipation, from its start state
        ledger_implicit.accept(run, sd, xi, s.used.f, s.used.tau, t + h)
    w = s.used
    st.x[:] = w.x1.real
    q = w.q1.real
    run.quat[:] = q / np.linalg.norm(q, axis=1)[:, None]
    rotations(run.quat, st.rot)
    forces.accept_step(m.terms, st.x, st.rot, t + h)
    momenta_after(rot, xi, post, h, s.se3, m.fixed, st.p, st.pi)
    run.xi[:] = xi
    return result


def advance(run: Implicit, n_steps: int) -> None:
    """Advance n_steps steps (adaptive: n_steps frame intervals dt, each in steps of the
    controller's size); NumericalError with advice if a Newton solve fails."""
    c = run.control
    if c is not None:
        for _ in range(int(n_steps)):
            end = run.t0 + (run.step + 1) * run.dt
            t, done = adaptive_batch.advance_to(run, c, run.time, end, run.kinks, run.stop)
            if not done:  # a stop request: between frames, where the step ended
                c.partial = t - (run.t0 + run.step * run.dt)
                break
            c.partial = 0.0
            run.step += 1
        _energies(run)
        return
    for _ in range(int(n_steps)):
        split = next_split(run.kinks, run.t0, run.dt, run.step, run.step + 1)
        if split is None:
            _checked_step(run, run.time, run.dt)
        else:
            t = run.time
            for b in [*split[1], run.t0 + (run.step + 1) * run.dt]:
                _checked_step(run, t, b - t)
                t = b
        run.step += 1
    _energies(run)


def _checked_step(run: Implicit, t: float, h: float) -> None:
    result = take_step(run, t, h)
    run.last = result
    if not result.converged:
        hist = ", ".join(f"{r:.3g}" for r in result.history[-6:])
        raise NumericalError(
            f"the implicit step's Newton iteration did not converge at t = {t:.6g} "
            f"(step {run.step + 1}) in {result.iterations} iterations (residual history "
            f"{hist}; target {run.tol:.3g} x {result.reference:.3g}): reduce dt (now "
            f"{run.dt:.6g}), or raise solver.newton.max_iter",
            time=run.time,
            step=run.step,
        )
    run.max_iterations = max(run.max_iterations, result.iterations)
    run.residual = max(run.residual, result.residual / result.reference)
