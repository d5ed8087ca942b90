"""Driving the implicit Cayley VI: sparse pattern, Newton, steps, and the running integration.

The residual and its complex-step Jacobian are numba kernels (rodsim.integrators.vi_residual),
and so are the Jacobians assembled from the terms' tangents where they all have one
(vi_jacobian: statics, vi_jacobian_dynamic: dynamics where every damping that acts has its
blocks, the terms' step_damping_tangent); this module owns the sparse linear algebra
(scipy.sparse BSR blocks of 6x6, SuperLU) and the Python-side bookkeeping, so that run.py can
step a model frame by frame exactly as it steps the explicit scheme.
"""

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cholesky_banded
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

from rodsim.errors import NumericalError
from rodsim.integrators import adaptive, banded, ledger, ledger_implicit
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.diagnostics import Diagnostics, diagnostics
from rodsim.integrators.explicit import GROUPS, StateArrays
from rodsim.integrators.planning import next_split
from rodsim.integrators.sparsity import Pattern, make_pattern
from rodsim.integrators.vi_jacobian import static_jacobian, stiffness
from rodsim.integrators.vi_jacobian_dynamic import damping_analytic, dynamic_jacobian
from rodsim.integrators.vi_state import body_momenta, momenta_after, quaternions, rotations
from rodsim.integrators.vi_step import step_data
from rodsim.model import forces
from rodsim.model.assembly import Model
from rodsim.model.prescribed import impose
from rodsim.terms import GROUND, TERMS

log = logging.getLogger(__name__)

EPS = 1.0e-30  # complex step: any tiny number; nothing cancels


@dataclass(frozen=True)
class Newton:
    """Outcome of one Newton solve: iterations, final weighted residual norm, reference norm,
    the residual history and whether it converged."""

    iterations: int
    residual: float
    reference: float
    history: tuple
    converged: bool


def weighted_norm(rows: np.ndarray, length: float) -> float:
    """sqrt(sum |force rows|^2 + sum |moment rows / L|^2) of (N,6) rows."""
    return float(math.sqrt(np.sum(rows[:, :3] ** 2) + np.sum((rows[:, 3:] / length) ** 2)))


@dataclass
class Solver:
    """Model, pattern and scratch shared by the dynamic and static solves."""

    model: Model
    se3: int
    pattern: Pattern
    length: float
    floor: float
    work: vr.Work = field(repr=False)
    data: np.ndarray = field(repr=False)
    # the terms' tangent block indices where every term present has a tangent (the static
    # Jacobian is then assembled from them: vi_jacobian); None: complex step
    slots: tuple | None = field(default=None, repr=False)
    # float64 scratch of the static residuals where the Jacobian is analytic: an equilibrium
    # then compiles no force kernel in complex128 (work, complex, serves the complex step)
    real: vr.Work | None = field(default=None, repr=False)
    used: vr.Work | None = field(default=None, repr=False)
    # the analytic static Jacobian's band LU (banded: rods), None: SuperLU
    band: banded.Band | None = field(default=None, repr=False)
    # the terms' tangent blocks (2,B,6,6) of the dynamic Jacobian (through the midpoint, and
    # the damping's through the end of the step), which is assembled from them
    # (vi_jacobian_dynamic) where slots is set and every damping that acts has blocks
    # (damping_analytic); None: the complex step serves dynamic steps
    kbuf: np.ndarray | None = field(default=None, repr=False)

    def analytic(self, sd: vr.StepData, xi: np.ndarray) -> bool:
        """Whether the static Jacobian at (sd, xi) is assembled from the terms' tangents
        (statics at Delta = 0 where every term has one; vi_jacobian), not by complex step."""
        return self.slots is not None and sd.mode == vr.STATIC and not np.any(xi)

    def scratch(self, sd: vr.StepData) -> vr.Work:
        """The scratch a residual of sd is evaluated in: float64 where the Jacobian of its
        kind (static, dynamic) is analytic, else complex128 (shared with the complex step)."""
        real = self.kbuf is not None if sd.mode == vr.DYNAMIC else self.real is not None
        return self.real if real else self.work

    def residual(self, sd: vr.StepData, xi: np.ndarray):
        """(rows (N,6) float, post (N,6) float) at xi; the reactions (the replaced balance
        rows) are then in reaction()."""
        w = self.used = self.scratch(sd)
        dtype = w.x1.dtype
        out = np.zeros(xi.shape, dtype=dtype)
        post = np.zeros(xi.shape, dtype=dtype)
        m = self.model
        vr.residual(m.nodes, m.terms, sd, xi.astype(dtype), w, out, post)
        return out.real.copy(), post.real.copy()

    def reaction(self) -> np.ndarray:
        """(N,6) the balance rows the last residual replaced by constraints."""
        return self.used.reaction.real

    def configuration(self, sd: vr.StepData, xi: np.ndarray):
        """(x (N,3), q (N,4)) of the end configuration g_k tau(xi) (statics: tau(Delta))."""
        w = self.scratch(sd)
        vr.configurations(sd, xi.astype(w.x1.dtype), w)
        return w.x1.real.copy(), w.q1.real.copy()

    def matrix(self, sd: vr.StepData, xi: np.ndarray) -> sp.csc_matrix:
        p = self.pattern
        m = self.model
        n = 6 * self.model.n_nodes
        if self.analytic(sd, xi):
            static_jacobian(m.nodes, m.terms, sd, self.slots, p.indptr, p.indices, self.data)
            return sp.bsr_matrix((self.data, p.indices, p.indptr), shape=(n, n)).tocsc()
        dynamic = self.slots is not None and self.kbuf is not None
        if dynamic and sd.mode == vr.DYNAMIC and not sd.conserve:
            xr = np.ascontiguousarray(xi, dtype=np.float64)
            dynamic_jacobian(
                m.nodes, m.terms, sd, xr, self.real, self.slots, p.indptr, p.indices, self.kbuf,
                self.data,
            )  # fmt: skip
            return sp.bsr_matrix((self.data, p.indices, p.indptr), shape=(n, n)).tocsc()
        vr.jacobian(
            m.nodes,
            m.terms,
            sd,
            xi,
            self.work,
            p.color_ptr,
            p.color_nodes,
            p.col_ptr,
            p.col_rows,
            p.col_blocks,
            EPS,
            self.data,
        )
        return sp.bsr_matrix((self.data, p.indices, p.indptr), shape=(n, n)).tocsc()

    def newton_step(self, sd: vr.StepData, xi: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The Newton step -J^{-1} rows (N,6) at xi: by the band LU where the Jacobian is
        analytic and the band narrow, else SuperLU. Raises RuntimeError where J is singular
        (an unsupported rigid motion)."""
        b, p = self.band, self.pattern
        if b is None or not self.analytic(sd, xi):
            return splu(self.matrix(sd, xi)).solve(-rows.ravel()).reshape(-1, 6)
        m = self.model
        static_jacobian(m.nodes, m.terms, sd, self.slots, p.indptr, p.indices, self.data)
        banded.fill(b.ab, b.kl, b.ku, b.order, self.data, p.indptr, p.indices)
        if not banded.factor(b.ab, b.kl, b.ku, b.piv):
            raise RuntimeError("singular Jacobian")
        z = np.empty_like(rows)
        z[b.order] = -rows  # node a's rows at its place in the band order
        z = z.ravel()
        banded.solve(b.ab, b.kl, b.ku, b.piv, z)
        return z.reshape(-1, 6)[b.order]

    def positive_definite(self, sd: vr.StepData, xi: np.ndarray) -> bool:
        """Whether the symmetric part of the Jacobian at xi, in spatial increments and on the
        free components, is positive definite: in statics the test of a stable equilibrium
        (a minimum of the potential, not a saddle on an unstable branch); for a pseudo-time
        step, of a step that goes downhill. Banded Cholesky in reverse Cuthill-McKee order.
        """
        m = self.model
        free = np.flatnonzero(~m.fixed.ravel())
        if self.analytic(sd, xi):  # K itself, in spatial increments
            p, n = self.pattern, 6 * m.n_nodes
            stiffness(m.terms, sd, self.slots, self.data)
            k = sp.bsr_matrix((self.data, p.indices, p.indptr), shape=(n, n)).tocsr()
        else:
            k = self.matrix(sd, xi) @ spatial_columns(sd.rot, sd.se3)
        k = k[free][:, free]
        sym = ((k + k.T) * 0.5).tocsr()
        if sym.shape[0] == 0:
            return True
        # Jacobi scaling (a congruence: definiteness is kept) brings axial, bending and
        # rotational stiffnesses, many decades apart, to a unit diagonal; then unsupported
        # rigid motions (zero eigenvalues: neutral, not unstable) pass Cholesky with a shift
        # far below any physical stiffness
        diag = sym.diagonal()
        if np.any(diag < 0.0):
            return False
        scale = 1.0 / np.sqrt(np.maximum(diag, 1e-300 + 1e-12 * diag.max()))
        sym = sp.diags(scale) @ sym @ sp.diags(scale)
        order = reverse_cuthill_mckee(sym.tocsr(), symmetric_mode=True)
        sym = sym.tocsr()[order][:, order].tocoo()
        shift = 1e-10
        band = int(np.max(np.abs(sym.row - sym.col), initial=0))
        ab = np.zeros((band + 1, sym.shape[0]))
        lower = sym.row >= sym.col
        ab[(sym.row - sym.col)[lower], sym.col[lower]] = sym.data[lower]
        ab[0] += shift
        try:
            cholesky_banded(ab, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return False
        return True

    def newton(self, sd, xi, tol, max_iter, reference, limit=math.inf):
        """Solve residual(xi) = 0 in place: ||R|| <= tol * reference (weighted norm), or at
        round-off: below the floor (Solver.floor, times h in dynamics) and no longer falling.

        limit caps the largest rotational Cayley increment per iteration (statics: a damped
        Newton step that keeps far-from-solution iterates from flipping sections over)."""
        history = []
        floor = self.floor * (abs(sd.h) if sd.mode == vr.DYNAMIC else 1.0)
        for it in range(max_iter + 1):
            rows, post = self.residual(sd, xi)
            norm = weighted_norm(rows, self.length)
            history.append(norm)
            if not math.isfinite(norm):
                return Newton(it, norm, reference, tuple(history), False), post
            if norm <= tol * reference or (norm <= floor and stalled(history)):
                return Newton(it, norm, reference, tuple(history), True), post
            if it == max_iter:
                break
            try:
                delta = (
                    splu(self.matrix(sd._replace(conserve=0), xi))
                    .solve(-rows.ravel())
                    .reshape(-1, 6)
                )
            except RuntimeError:  # singular matrix (a mechanism: unsupported rigid motion)
                return Newton(it, norm, reference, tuple(history), False), post
            if math.isfinite(limit):
                step = sd.h if sd.mode == vr.DYNAMIC else 1.0
                big = step * float(np.max(np.linalg.norm(delta[:, 3:], axis=1), initial=0.0))
                if big > limit:
                    delta *= limit / big
            xi += delta
            if not np.all(np.isfinite(xi)):
                return Newton(it + 1, math.inf, reference, tuple(history), False), post
        return Newton(max_iter, history[-1], reference, tuple(history), False), post


def spatial_columns(rot, se3) -> sp.csc_matrix:
    """(6N, 6N): the Jacobian's columns, body rotation (and on SE3 body translation)
    increments, from spatial ones (u, theta) per node: d = R^T d_s, block diagonal."""
    rt = np.transpose(rot, (0, 2, 1))
    blocks = np.zeros((len(rot), 6, 6))
    blocks[:, :3, :3] = rt if se3 else np.eye(3)
    blocks[:, 3:, 3:] = rt
    return sp.block_diag(list(blocks), format="csc")


def stalled(history) -> bool:
    """The last Newton iteration gained less than a factor 10: round-off has been reached."""
    return len(history) >= 2 and history[-1] > 0.1 * history[-2]


def make_solver(model: Model, group: str) -> Solver:
    """Solver of a model on group SO3xR3 | SE3: sparse pattern, colouring, scratch, scales."""
    if group not in GROUPS:
        raise ValueError(f"group must be one of {sorted(GROUPS)}, got {group!r}")
    extent = np.ptp(model.x0, axis=0) if model.n_nodes else np.zeros(3)
    length = float(np.linalg.norm(extent)) or 1.0
    pattern = make_pattern(forces.coupled_pairs(model.terms), model.n_nodes)
    n_blocks = len(pattern.indices)
    analytic = forces.analytic_tangent(model.terms)
    dynamic = analytic and damping_analytic(model.terms)
    return Solver(
        model,
        int(group == "SE3"),
        pattern,
        length,
        roundoff_floor(model, length),
        vr.make_work(model.terms, model.n_nodes),
        np.zeros((n_blocks, 6, 6)),
        forces.tangent_slots(model.terms, pattern.indptr, pattern.indices) if analytic else None,
        vr.make_work(model.terms, model.n_nodes, np.float64) if analytic else None,
        band=banded.banded(pattern, model.n_nodes) if analytic else None,
        kbuf=np.zeros((2, n_blocks, 6, 6)) if dynamic else None,
    )


def roundoff_floor(model: Model, length: float) -> float:
    """The weighted residual norm that round-off alone produces: each term's largest force error
    per unit relative round-off eps (Term.roundoff: an element's strains carry errors ~ eps |x|
    / h_e, so its forces errors ~ eps C |x| / h_e; a spring's ~ eps k |x|), with coordinates of
    size |x| <= max|x0| + length; summed in quadrature over the nodes, with a safety factor of
    10. Newton stops below it only once the residual stops falling."""
    if not model.n_nodes:
        return 0.0
    size = float(np.max(np.abs(model.x0))) + length
    per_element = [0.0]
    for t in TERMS:
        if t.roundoff is not None:
            per_element.append(t.roundoff(t.arrays(model), size, length))
    eps = np.finfo(float).eps
    return float(10.0 * eps * math.sqrt(model.n_nodes) * max(per_element))


def restrained(model: Model) -> bool:
    """Whether something holds the model's rigid motions: a fixed component or a GROUND term
    present (springs to the ground). Else the energy correction keeps both momenta."""
    ground = (t for t in TERMS if t.role & GROUND)
    return bool(model.fixed.any()) or any(t.present(t.arrays(model)) for t in ground)


def applied_norm(solver: Solver, x, rot, t: float) -> float:
    """Weighted norm of the external loads at time t (the equilibrium residual's scale)."""
    f, tau = forces.applied_loads(solver.model.terms, x, rot, t)
    return weighted_norm(np.hstack([f, tau]), solver.length)


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
            t, done = adaptive.advance_to(run, c, run.time, end, run.kinks, run.stop)
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
