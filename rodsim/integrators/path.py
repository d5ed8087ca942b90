"""Path following (docs/path_following.md): equilibria of a structure under a load pattern
whose factor lambda is an unknown, found by a bordered Newton on (configuration, lambda).

The pattern is the case's loads at load multiplier 1, P; prescribed motions stay at their
values at 1. The residual at lambda is affine in it: R(g, lambda) = R0(g) + lambda (R1(g) -
R0(g)), R1 the static residual of the case and R0 that of the case with its loads scaled to
0 (followers included: they scale, their direction follows g), and so is its Jacobian,
J(lambda) = J0 + lambda (J1 - J0). Each Newton iteration solves J d_R = -R and J d_P = -(R1 -
R0) with one LU, and the increment d = d_R + dl d_P, where the constraint fixes dl:

- displacement control: the controlled translation component of one node reaches its target
  (linearised: u + T d = target, T the spatial translation of the Jacobian's increments:
  the identity on SO3xR3, the nodal rotation on SE3);
- arc length (Crisfield's cylindrical form): the translations of the step, Delta u, have
  |Delta u| = Delta s; dl is the root of the quadratic |Delta u + T d_R + dl T d_P|^2 =
  Delta s^2 whose increment turns least from the step so far (the previous step's direction
  for the predictor), so the path passes limit points and snap-backs.

The configuration moves by the Cayley update (rodsim.integrators.vi_residual.configurations),
as in the equilibrium solver. Step-length control: Delta s is scaled by sqrt(target / used)
Newton corrections (within [1/2, 2]) after each step, and halved on a failed one.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import splu

from rodsim.errors import NumericalError
from rodsim.integrators import implicit, modal
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.equilibrium import CONSTRAINT_TOL, Equilibrium
from rodsim.model import forces

# Newton corrections (after the predictor) a path step aims at. A step that converged in as
# many keeps its length and one in fewer grows: from a predictor O(Delta s^2) off the path,
# quadratic convergence to the 1e-8 tolerance takes 3 to 5 corrections, so a smaller target
# holds steps at lengths where Newton is still easy (with 4 counting the predictor, steps
# settled where they had to and never grew back after a cut)
TARGET_ITERATIONS = 5
MAX_CUTS = 8  # halvings of a failed step before giving up


@dataclass
class PathState:
    """The path so far: the load factor, the last step's translations (N,3) (its direction
    for the next predictor), the arc length of the next step, the steps taken."""

    load: float = 0.0
    last: np.ndarray | None = None
    length: float = 0.0
    steps: int = 0


@dataclass(frozen=True)
class PathStep:
    """One converged path step: load factor, Newton iterations, relative residual, the arc
    length taken (displacement control: the controlled increment)."""

    load: float
    iterations: int
    residual: float
    length: float


class Follower:
    """Residuals and Jacobians of the affine family R0 + lambda (R1 - R0) about eq's state."""

    def __init__(self, eq: Equilibrium, group: str):
        self.eq = eq
        self.empty = implicit.make_solver(modal.scaled_loads(eq.model, 0.0), group)
        self.zero = np.zeros((eq.model.n_nodes, 6))
        # dead forces have no stiffness on SO3xR3 (spatial translations): J1 = J0, one
        # Jacobian (the cost of an iteration); on SE3 the body-frame residual turns them
        self.dead = forces.conservative(eq.model.terms) and not eq.solver.se3

    def _rows(self, solver):
        eq = self.eq
        sd = implicit.step_data(solver, eq.x, eq.rot, eq.quat, self.zero, 1.0, 1.0, 1.0, vr.STATIC)
        rows, _ = solver.residual(sd, self.zero)
        return rows.real.copy(), sd, solver

    def linearise(self, load: float):
        """(residual rows (N,6) at load, d rows / d load, J at load, step data)."""
        r1, sd1, s1 = self._rows(self.eq.solver)
        r0, sd0, s0 = self._rows(self.empty)
        j1 = s1.matrix(sd1, self.zero)
        if self.dead:
            return r0 + load * (r1 - r0), r1 - r0, j1.tocsc(), sd1
        j0 = s0.matrix(sd0, self.zero)
        return r0 + load * (r1 - r0), r1 - r0, (j0 + load * (j1 - j0)).tocsc(), sd1

    def norms(self, rows: np.ndarray, load: float) -> tuple[float, float]:
        """(relative, absolute) weighted norm of the free rows, relative to the loads at load
        plus the reactions (the equilibrium solver's measure)."""
        eq, s = self.eq, self.eq.solver
        free = np.where(eq.model.fixed, 0.0, rows)
        reactions = np.where(eq.model.fixed, s.reaction(), 0.0)
        applied = abs(load) * implicit.applied_norm(s, eq.x, eq.rot, 1.0)
        reference = max(applied + implicit.weighted_norm(reactions, s.length), 1e-300)
        norm = implicit.weighted_norm(free, s.length)
        return norm / reference, norm


def _translations(eq: Equilibrium, d: np.ndarray) -> np.ndarray:
    """(N,3) spatial translations of Jacobian increments d (N,6) (to first order)."""
    if eq.solver.se3:
        return np.einsum("nij,nj->ni", eq.rot, d[:, :3])
    return d[:, :3].copy()


def _move(eq: Equilibrium, sd, d: np.ndarray) -> None:
    s = eq.solver
    eq.x[:], q = s.configuration(sd, d)
    eq.quat[:] = q / np.linalg.norm(q, axis=1)[:, None]
    implicit.rotations(eq.quat, eq.rot)


def step(
    eq: Equilibrium,
    follower: Follower,
    path: PathState,
    control=None,
    target: float = 0.0,
    max_iter: int = 12,
) -> PathStep:
    """One path step from the current equilibrium (eq at path.load): arc length path.length,
    or, with control = (node, component), the displacement of that translation component to
    target. Moves eq and path on; NumericalError (the state restored) if Newton fails."""
    saved = (eq.x.copy(), eq.rot.copy(), eq.quat.copy(), path.load)
    start = eq.x.copy()
    load = path.load
    history = []
    for it in range(max_iter + 1):
        rows, slope, jac, sd = follower.linearise(load)
        rel, norm = follower.norms(rows, load)
        history.append(rel)
        # at small loads the residual meets the round-off of the internal forces first
        converged = rel <= eq.tol or (norm <= eq.solver.floor and implicit.stalled(history))
        constraint = float(np.max(np.abs(np.where(eq.model.fixed, rows, 0.0)), initial=0.0))
        moved = eq.x - start
        if control is not None:  # target: the component's displacement from the reference
            u = eq.x[control] - eq.model.x0[control]
            reached = abs(u - target) <= 1e-9 * eq.solver.length
        else:
            reached = abs(np.linalg.norm(moved) - path.length) <= 1e-9 * max(path.length, 1e-300)
        if it and converged and reached and constraint <= CONSTRAINT_TOL * eq.solver.length:
            eq.load = load
            forces.accept_step(eq.model.terms, eq.x, eq.rot, load)
            if control is None:
                path.last = moved
            path.load, path.steps = load, path.steps + 1
            size = float(np.linalg.norm(moved)) if control is not None else path.length
            return PathStep(load, it, rel, size)
        if not math.isfinite(rel) or it == max_iter:
            break
        try:
            lu = splu(jac)
        except RuntimeError:
            break
        d_r = lu.solve(-rows.ravel()).reshape(-1, 6)
        d_p = lu.solve(-slope.ravel()).reshape(-1, 6)
        t_r, t_p = _translations(eq, d_r), _translations(eq, d_p)
        if control is not None:
            if abs(t_p[control]) < 1e-300:
                break
            dl = (target - u - t_r[control]) / t_p[control]
        else:
            dl = _arc_root(moved, t_r, t_p, path)
            if dl is None:
                break
        _move(eq, sd, d_r + dl * d_p)
        load += dl
    eq.x[:], eq.rot[:], eq.quat[:], path.load = saved
    advice = (
        "use more solver.equilibrium.path.steps (smaller increments); displacement control "
        "cannot pass a point where the controlled displacement turns back (a snap-back) or "
        "does not move with the loads: use method: arc_length"
        if control is not None
        else "give a shorter solver.equilibrium.path.length (it was halved 8 times)"
    )
    raise NumericalError(
        f"path step from load factor {saved[3]:.6g} did not converge in {max_iter} Newton "
        f"iterations (relative residual {history[-1]:.3g}); {advice}",
        time=saved[3],
    )


def _arc_root(moved, t_r, t_p, path: PathState):
    """The load increment of the arc-length constraint |moved + t_r + dl t_p| = length, the
    root that turns least from the step so far (or, for the predictor, from the previous
    step; the first step loads up); None when the circle is missed."""
    c = (moved + t_r).ravel()
    b = t_p.ravel()
    a = float(b @ b)
    if a == 0.0:
        return None
    half = float(c @ b)
    disc = half * half - a * (float(c @ c) - path.length**2)
    if disc < 0.0:
        return None
    roots = ((-half + math.sqrt(disc)) / a, (-half - math.sqrt(disc)) / a)
    reference = moved.ravel() if np.any(moved) else None
    if reference is None and path.last is not None:
        reference = path.last.ravel()
    if reference is None:  # the first predictor: the load increases
        return max(roots)
    return max(roots, key=lambda dl: float((c + dl * b) @ reference))


def follow(
    eq, follower, path, steps: int, until=None, control=None, targets=None, stop=None, longest=None
):
    """Up to `steps` path steps (arc length; with control, to each of targets): yields each
    PathStep after the state moved; ends when until(eq) is true. Halves the arc length of a
    failed step (MAX_CUTS times) and adapts it to TARGET_ITERATIONS, at most `longest`."""
    for k in range(steps):
        if stop is not None and stop():
            return
        for cut in range(MAX_CUTS + 1):
            try:
                if control is not None:
                    done = step(eq, follower, path, control, targets[k])
                else:
                    done = step(eq, follower, path)
                break
            except NumericalError:
                if control is not None or cut == MAX_CUTS:
                    raise
                path.length *= 0.5
        if control is None:
            grow = math.sqrt(TARGET_ITERATIONS / max(done.iterations - 1, 1))
            path.length *= min(max(grow, 0.5), 2.0)
            if longest is not None:
                path.length = min(path.length, longest)
        yield done
        if until is not None and until(eq):
            return
