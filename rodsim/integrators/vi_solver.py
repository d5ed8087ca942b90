"""The Newton solver of the implicit residual: the model's sparse pattern and scratch, the
residual, the Jacobian (assembled from the terms' tangents, rodsim.integrators.vi_jacobian and
vi_jacobian_dynamic, or by complex step, vi_residual.jacobian), the Newton iteration and the
stability test, for the dynamic steps (rodsim.integrators.implicit), equilibrium, path
following and the modal analysis alike. It owns the sparse linear algebra (scipy.sparse BSR
blocks of 6x6, SuperLU, the band LU)."""

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cholesky_banded
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

from rodsim import kernel_cache
from rodsim.integrators import banded
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.explicit import GROUPS
from rodsim.integrators.sparsity import Pattern, make_pattern
from rodsim.integrators.vi_jacobian import static_jacobian, stiffness
from rodsim.integrators.vi_jacobian_dynamic import damping_analytic, dynamic_jacobian
from rodsim.integrators.vi_step import step_data
from rodsim.model import forces
from rodsim.model.assembly import Model
from rodsim.terms import GROUND, TERMS

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
    # the analytic Jacobian's kernel compiling in a second process (compile_ahead)
    ahead: kernel_cache.Ahead | None = field(default=None, repr=False)

    def compile_ahead(self) -> None:
        """Start compiling the static analytic Jacobian's kernel in a second process while
        this one compiles the residual (a first run on a cold cache: kernel_cache.
        compile_ahead); its first use waits for it (ready). Not for the dynamic Jacobian: the
        adaptive steps form it before their first residual, so nothing would overlap."""
        m, p = self.model, self.pattern
        n = m.n_nodes
        if self.slots is None or not n:
            return
        quat = np.zeros((n, 4))
        quat[:, 0] = 1.0
        sd = step_data(self, m.x0, m.rot0, quat, np.zeros((n, 6)), 1.0, 0.0, 0.0, vr.STATIC)
        args = (m.nodes, m.terms, sd, self.slots, p.indptr, p.indices, self.data)
        types = tuple(static_jacobian.typeof_pyval(a) for a in args)
        self.ahead = kernel_cache.compile_ahead([(static_jacobian, types)])

    def ready(self) -> None:
        """Wait for the kernel compile_ahead started (then in the cache)."""
        if self.ahead is not None:
            self.ahead.wait()
            self.ahead = None

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
        sn, wn = vr.nodal(sd, w)
        vr.configurations(sn, xi.astype(w.x1.dtype), wn)
        return w.x1.real.copy(), w.q1.real.copy()

    def matrix(self, sd: vr.StepData, xi: np.ndarray) -> sp.csc_matrix:
        p = self.pattern
        m = self.model
        n = 6 * self.model.n_nodes
        self.ready()
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
        self.ready()
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
            self.ready()
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
