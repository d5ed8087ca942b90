"""Static equilibrium: load stepping, Newton on the static residual, and pseudo-transient
continuation with the implicit Cayley VI where Newton alone does not get there.

Per load step (multiplier lambda = i / load_steps; loads and prescribed motions are evaluated
at "time" lambda, see rodsim.case.model):

1. Newton on the static residual -(f, tau) (spatial, per node) from the last equilibrium, each
   iteration linearised at the current configuration and moved by g <- g cay(Delta) (the
   Jacobian is the exact complex-step one, so convergence is quadratic), with the rotational
   increment capped per iteration.
2. If that fails: pseudo-transient continuation (Kelley & Keyes 1998). Each pseudo step is one
   implicit VI step of size h from rest; the iterate moves to the step's midpoint
   configuration and its momentum is discarded (kinetic damping). From rest the midpoint
   Delta solves (4/h^2) JJ Delta + R(g (+) Delta) = 0 to first order: a backward-Euler step of
   the gradient flow with pseudo time step h^2/4, which stays robust where Newton diverges and
   tends to Newton as h grows. h grows by switched evolution relaxation (h^2 ~ 1/||R||) and is
   cut by 4 when a step's Newton solve fails; plain Newton (1.) is retried once the residual
   has dropped, and ends the load step.
3. Under conservative loads only stable equilibria count (Solver.positive_definite: the
   tangent stiffness positive definite), and each pseudo step must go downhill, so that past a
   bifurcation the path leaves the unstable branch for the buckled one; if the iterate sits on
   an unstable equilibrium it cannot leave (no imperfection), the load step stops with advice.

The residual is measured as sqrt(sum |f|^2 + sum |m / L|^2) over the free components (L the
model size) relative to the same norm of the applied loads plus the support reactions.
"""

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rodsim.errors import NumericalError
from rodsim.integrators import implicit
from rodsim.integrators import vi_residual as vr
from rodsim.interrupts import StopRequested
from rodsim.model import forces
from rodsim.model.prescribed import impose

log = logging.getLogger(__name__)

# the tolerances and limits of the algorithm, in one place
ROTATION_LIMIT = 1.0  # largest Cayley rotation increment |Delta| of one static Newton iteration
GROWTH = (0.5, 4.0)  # bounds of the pseudo step's growth factor per step
MAX_CUTS = 12  # consecutive step cuts (each /4) before giving up
EASY = 4  # Newton iterations of a pseudo step below which h at least doubles
PSEUDO_TOL = 1e-8  # Newton tolerance of a pseudo step (relative to h x the load scale)
CONSTRAINT_TOL = 1e-12  # supported components on target, relative to the model size
RETRY = 1e-2  # retry plain Newton once the residual fell by this factor (or every 10 steps)
STUCK_LIMIT = 3  # unstable Newton results with the iterate not moving: report a bifurcation
MOVED_TOL = 1e-9  # "not moving" between such results, relative to the model size


@dataclass
class LoadStep:
    """Outcome of one load step: multiplier, Newton iterations, pseudo steps, final relative
    residual, final pseudo step size (inf if Newton alone converged: its limit) and residual
    history."""

    load: float
    iterations: int
    pseudo_steps: int
    residual: float
    h: float
    history: tuple


@dataclass
class Equilibrium:
    """The configuration being driven to equilibrium and the settings."""

    solver: implicit.Solver
    x: np.ndarray
    rot: np.ndarray
    quat: np.ndarray
    tol: float
    max_steps: int
    max_iter: int
    h0: float
    load: float = 0.0
    check_stability: bool = True
    # the summary's note where the structure is a mechanism solved as it is
    # (rodsim.model.mechanism), which a failed load step names as its likely cause
    mechanism: str = ""
    # asked between Newton iterations and pseudo steps; True raises StopRequested and leaves
    # the current iterate in place (rodsim.run writes it as an off-schedule frame)
    stop: Callable[[], bool] = lambda: False

    @property
    def model(self):
        return self.solver.model


def start(
    model, group: str, *, tol: float = 1e-8, max_steps: int = 10000, max_iter: int = 25, h0: float
) -> Equilibrium:
    """Start from the reference configuration (prescribed motions at load 0)."""
    solver = implicit.make_solver(model, group)
    solver.compile_ahead()
    x, rot = model.x0.copy(), model.rot0.copy()
    if model.prescribed.node.shape[0]:
        impose(model.prescribed, 0.0, model.x0, model.rot0, x, rot)
    quat = np.empty((model.n_nodes, 4))
    implicit.quaternions(rot, quat)
    return Equilibrium(
        solver,
        x,
        rot,
        quat,
        tol,
        max_steps,
        max_iter,
        float(h0),
        check_stability=forces.conservative(model.terms),
    )


def static_residual(eq: Equilibrium, load: float):
    """(relative residual, absolute weighted norm, reference, rows) at the current state."""
    s, m = eq.solver, eq.model
    zero = np.zeros((m.n_nodes, 6))
    sd = implicit.step_data(s, eq.x, eq.rot, eq.quat, zero, 1.0, load, load, vr.STATIC)
    rows, _ = s.residual(sd, zero)
    free = np.where(m.fixed, 0.0, rows)
    reactions = np.where(m.fixed, s.reaction(), 0.0)
    reference = max(
        implicit.applied_norm(s, eq.x, eq.rot, load) + implicit.weighted_norm(reactions, s.length),
        1e-300,
    )
    norm = implicit.weighted_norm(free, s.length)
    return norm / reference, norm, reference, rows, sd


def _move(eq: Equilibrium, x, q) -> None:
    eq.x[:] = x
    eq.quat[:] = q / np.linalg.norm(q, axis=1)[:, None]
    implicit.rotations(eq.quat, eq.rot)


@dataclass(frozen=True)
class Attempt:
    """Outcome of a static Newton solve: converged, iterations, relative residual history, and
    whether it stopped at an equilibrium that is unstable (rejected)."""

    converged: bool
    iterations: int
    history: tuple
    unstable: bool = False


def newton(eq: Equilibrium, load: float, max_iter: int) -> Attempt:
    """Static Newton from the current state. On
    failure the state is restored. Under conservative loads, converging to an unstable
    equilibrium (a saddle: the tangent stiffness is not positive definite, e.g. the unbuckled
    branch past a bifurcation) counts as a failure, so that continuation finds the stable one.
    """
    s = eq.solver
    saved = (eq.x.copy(), eq.rot.copy(), eq.quat.copy())
    history = []
    floor = s.floor
    for it in range(max_iter + 1):
        if eq.stop():
            raise StopRequested
        rel, norm, reference, rows, sd = static_residual(eq, load)
        history.append(rel)
        constraint = float(np.max(np.abs(np.where(eq.model.fixed, rows, 0.0)), initial=0.0))
        if not math.isfinite(rel):
            break
        at_floor = norm <= floor and implicit.stalled(history)
        if (rel <= eq.tol or at_floor) and constraint <= CONSTRAINT_TOL * s.length:
            if not eq.check_stability or s.positive_definite(sd, np.zeros((eq.model.n_nodes, 6))):
                return Attempt(True, it, tuple(history))
            log.info("load %.6g: Newton reached an unstable equilibrium", load)
            eq.x[:], eq.rot[:], eq.quat[:] = saved
            return Attempt(False, it, tuple(history), unstable=True)
        if it == max_iter or rel > 1e8 * max(history[0], 1.0):
            break
        zero = np.zeros((eq.model.n_nodes, 6))
        try:
            delta = s.newton_step(sd, zero, rows)
        except RuntimeError:
            break
        big = float(np.max(np.linalg.norm(delta[:, 3:], axis=1), initial=0.0))
        if big > ROTATION_LIMIT:
            delta *= ROTATION_LIMIT / big
        _move(eq, *s.configuration(sd, delta))
    eq.x[:], eq.rot[:], eq.quat[:] = saved
    return Attempt(False, len(history) - 1, tuple(history))


def continuation(eq: Equilibrium, load: float, first_rel: float):
    """Pseudo-transient continuation to equilibrium at `load` (see the module docstring).
    Returns (iterations, pseudo steps, final h, history); raises NumericalError."""
    s, m = eq.solver, eq.model
    h = eq.h0
    rest = np.zeros((m.n_nodes, 6))
    prev = first_rel
    iterations, cuts, stuck = 0, 0, 0
    h_cap, last_unstable = math.inf, None
    history = [first_rel]
    for step in range(1, eq.max_steps + 1):
        if eq.stop():
            raise StopRequested
        sd = implicit.step_data(s, eq.x, eq.rot, eq.quat, rest, h, load, load, vr.DYNAMIC)
        _, _, reference, _, _ = static_residual(eq, load)
        xi = np.zeros((m.n_nodes, 6))
        result, _ = s.newton(sd, xi, PSEUDO_TOL, eq.max_iter, h * reference, limit=ROTATION_LIMIT)
        iterations += result.iterations
        # under conservative loads a pseudo step must go downhill: its matrix (4/h^2) JJ + K
        # positive definite; too large an h near a saddle acts like Newton and climbs to it
        descent = not result.converged or not eq.check_stability or s.positive_definite(sd, xi)
        if not descent:
            h_cap = h = 0.25 * h
            continue
        if not result.converged:
            cuts += 1
            if cuts > MAX_CUTS:
                raise NumericalError(
                    f"equilibrium at load multiplier {load:.6g}: the pseudo-time step was cut "
                    f"{MAX_CUTS} times in a row (now {h:.3g}) and still does not converge "
                    f"(relative residual {prev:.3g}); use more solver.equilibrium.load_steps "
                    f"or check the supports (an unsupported rigid motion has no equilibrium)",
                    time=load,
                    step=step,
                )
            h *= 0.25
            continue
        cuts = 0
        w = s.used  # the pseudo step's last residual
        _move(eq, w.xb.real, w.qb.real)
        if m.prescribed.node.shape[0]:  # the midpoint is half-way: put supports on target
            impose(m.prescribed, load, m.x0, m.rot0, eq.x, eq.rot)
            implicit.quaternions(eq.rot, eq.quat)
        rel = static_residual(eq, load)[0]
        history.append(rel)
        if not math.isfinite(rel):
            raise NumericalError(
                f"equilibrium at load multiplier {load:.6g}: the pseudo-time "
                "iteration produced a non-finite state; use more "
                "solver.equilibrium.load_steps",
                time=load,
                step=step,
            )
        if rel <= eq.tol or rel < RETRY * first_rel or step % 10 == 0:
            attempt = newton(eq, load, eq.max_iter)
            iterations += attempt.iterations
            if attempt.converged:
                history.extend(attempt.history[1:])
                return iterations, step, h, tuple(history)
            if attempt.unstable:
                # Newton climbed to a saddle from here; give up only if the descending pseudo
                # steps no longer move the iterate either (a perfect, imperfection-free
                # bifurcation: nothing picks a buckling mode)
                moved = (
                    last_unstable is None
                    or np.max(np.abs(eq.x - last_unstable)) > MOVED_TOL * s.length
                )
                stuck = 0 if moved else stuck + 1
                last_unstable = eq.x.copy()
            if stuck >= STUCK_LIMIT:
                raise NumericalError(
                    f"equilibrium at load multiplier {load:.6g}: the only equilibrium found is "
                    "unstable (its tangent stiffness is not positive definite), so the "
                    "structure buckles or snaps here and the path cannot leave it by "
                    "itself; seed an imperfection (the case key imperfection: a mode of an "
                    "analysis: buckling run, docs/modal.md; or a small load or offset that "
                    "picks the buckling mode), or use displacement control (prescribe)",
                    time=load,
                    step=step,
                )
        # SER, but an easy step (few Newton iterations) doubles h even while the residual
        # stalls: the slow (soft) modes need large pseudo steps before the residual moves
        factor = math.sqrt(prev / rel) if rel > 0.0 else GROWTH[1]
        if result.iterations <= EASY:
            factor = max(factor, 2.0)
        h = min(h * min(max(factor, GROWTH[0]), GROWTH[1]), h_cap)
        prev = rel
    raise NotReached(
        f"equilibrium at load multiplier {load:.6g} not reached in "
        f"{eq.max_steps} pseudo-time steps (relative residual {prev:.3g}, "
        f"target {eq.tol:.3g})",
        time=load,
        step=eq.max_steps,
    )


class NotReached(NumericalError):
    """The pseudo-time steps ran out before equilibrium (solve_load_step adds the likely
    cause)."""


# the tangent's lowest eigenvalue at the last equilibrium below this part of the reference's:
# a critical point (limit or bifurcation) is close (near a limit point it falls as the square
# root of the load left: Lee's frame at 0.96 of its limit load is at 0.11)
NEAR_CRITICAL = 0.25


def likely_cause(eq: Equilibrium, before, load: float) -> str:
    """Why a load step from the equilibrium `before` (x, rot, quat, load) to `load` did not
    converge: a critical point near, by the tangent's lowest eigenvalue there against the
    reference's (rodsim.integrators.modal.lowest_eigenvalue), else the load step's size."""
    from rodsim.integrators import modal

    x, rot, quat, prev = before
    m, group = eq.model, "SE3" if eq.solver.se3 else "SO3xR3"
    advice = "raise solver.equilibrium.max_steps or use more load_steps"
    if eq.mechanism:
        return (
            f"; likely cause: the structure is a mechanism ({eq.mechanism}), and its loads "
            "may balance in no position (a moment larger than the forces' can hold) or only "
            "far from the last one; hold it (boundary fix entries, supports), or " + advice
        )
    try:
        q0 = np.empty((m.n_nodes, 4))
        implicit.quaternions(m.rot0, q0)
        start = modal.lowest_eigenvalue(m, group, m.x0, m.rot0, q0, 0.0, eq.solver)
        now = modal.lowest_eigenvalue(m, group, x, rot, quat, prev, eq.solver)
    except NumericalError:
        return f"; {advice}"
    if not (math.isfinite(start) and math.isfinite(now)) or start <= 0.0:
        return f"; {advice}"
    if now < NEAR_CRITICAL * start:
        return (
            f"; likely cause: a limit or bifurcation point near load {prev:.6g}, where the "
            f"tangent's lowest eigenvalue fell to {now / start:.3g} of its value at the "
            "reference (solver.equilibrium.eigenvalue tracks it); past a limit point the "
            "equilibrium nearby is gone and the structure snaps: follow the path by "
            "controlling a displacement (prescribe the loaded point's), run the snap in "
            "dynamics, or, at a bifurcation, seed an imperfection (docs/modal.md)"
        )
    return (
        f"; likely cause: the load step from {prev:.6g} to {load:.6g} is too large for the "
        f"path's nonlinearity (the tangent is still stiff: {now / start:.3g} of its lowest "
        f"eigenvalue at the reference); {advice}"
    )


def solve_load_step(eq: Equilibrium, load: float) -> LoadStep:
    """Reach equilibrium at `load` from the current state."""
    before = (eq.x.copy(), eq.rot.copy(), eq.quat.copy(), eq.load)
    first = newton(eq, load, eq.max_iter)
    if first.converged:
        eq.load = load
        forces.accept_step(eq.model.terms, eq.x, eq.rot, load)
        return LoadStep(load, first.iterations, 0, first.history[-1], math.inf, first.history)
    log.info(
        "load %.6g: Newton alone did not converge (%d iterations); pseudo-transient "
        "continuation from h = %.3g",
        load,
        first.iterations,
        eq.h0,
    )
    rel = static_residual(eq, load)[0]
    try:
        more, steps, h, hist = continuation(eq, load, rel)
    except NotReached as exc:
        cause = likely_cause(eq, before, load)
        raise NumericalError(f"{exc}{cause}", time=exc.time, step=exc.step) from None
    eq.load = load
    forces.accept_step(eq.model.terms, eq.x, eq.rot, load)
    return LoadStep(load, first.iterations + more, steps, hist[-1], h, first.history + hist)
