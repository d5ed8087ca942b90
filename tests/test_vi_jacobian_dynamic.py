"""The dynamic residual's Jacobian assembled from tangent blocks
(rodsim.integrators.vi_jacobian_dynamic): each per-node factor against complex steps of the
node-level functions it differentiates (rodsim.integrators.cayley, vi_residual), then the whole
Jacobian against the complex-step Jacobian (vi_residual.jacobian, the test oracle) block by
block, and a run with it against a run with the complex one."""

import dataclasses

import numba
import numpy as np
import pytest
from conftest import GROUPS
from test_implicit import _busy_model, _deformed

from rodsim.integrators import cayley, implicit
from rodsim.integrators import cayley_tangent as ct
from rodsim.integrators import vi_jacobian_dynamic as vjd
from rodsim.integrators import vi_residual as vr
from rodsim.lie import so3
from rodsim.mesh.generate import straight_rod
from rodsim.model import forces
from rodsim.model.assembly import build_model
from rodsim.model.sections import section_from_resultants

RNG = np.random.default_rng(36)
EPS = 1e-30  # complex step: nothing cancels
SIZES = [1e-6, 0.1, 1.0, 2.5]

# Node factors: closed forms against complex steps, both exact to round-off of the O(1)
# quantities; 1e-13 leaves a decade over the largest seen (2e-15).
TOL_NODE = 1e-13
# Whole Jacobian: the analytic blocks and the complex step are both exact to round-off (about
# 1e-15 of the largest entry of a block row, times the conditioning of the Cayley factors at
# |p| ~ 1); each block is measured against the largest block of its block row because the
# constraint rows (m/h) and the stiffness rows (K h^2/2) of one node differ by decades, and an
# entry's round-off follows the largest terms summed into its row. 1e-10 is the bound.
TOL = 1e-10


def _cstep(fun, w, v, dw, dv):
    """Complex-step directional derivative of fun(w, v) -> tuple of 3-tuples."""
    wc = tuple(complex(a, EPS * b) for a, b in zip(w, dw, strict=True))
    vc = tuple(complex(a, EPS * b) for a, b in zip(v, dv, strict=True))
    return [np.array([c.imag / EPS for c in o]) for o in fun(wc, vc)]


def _cplx(y):
    return tuple(complex(c) for c in y)


def _rel(analytic, ref):
    a = np.concatenate([np.ravel(x) for x in analytic])
    r = np.concatenate([np.ravel(x) for x in ref])
    return np.abs(a - r).max() / max(np.abs(r).max(), 1e-300)


@pytest.mark.parametrize("se3", [False, True])
@pytest.mark.parametrize("size", SIZES)
def test_cayley_directional_derivatives(se3, size):
    """Each derivative of cayley_tangent against a complex step of the cayley function."""
    for _ in range(3):
        w, v, dw, dv, yw, yv = (tuple(RNG.normal(size=3) * s) for s in (size, size, 1, 1, 1, 1))
        cases = [
            (ct.half_step_jvp(w, v, dw, dv, se3), lambda a, b: cayley.half_step(a, b, se3)),
            (
                (ct.translation_jvp(w, v, dw, dv, se3),),
                lambda a, b: (cayley.translation(a, b, se3),),
            ),
        ]
        y = (_cplx(yw), _cplx(yv))
        for jvp, fun in [
            (ct.dtau_transpose_jvp, cayley.dtau_transpose),
            (ct.half_step_transpose_jvp, cayley.half_step_transpose),
            (ct.dtau_inv_transpose_jvp, cayley.dtau_inv_transpose),
            (ct.balance_map_jvp, ct.balance_map),
        ]:
            cases.append(
                (
                    jvp(w, v, yw, yv, dw, dv, se3),
                    lambda a, b, fun=fun, y=y: fun(a, b, *y, se3),
                )
            )
        for analytic, fun in cases:
            assert _rel(analytic, _cstep(fun, w, v, dw, dv)) < TOL_NODE


def _node_model():
    """One free node with a full inertia (the node-level checks: no force term acts)."""
    part = straight_rod([0, 0, 0], [1, 0, 0], 1, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e3, GA=[800, 900], GJ=30, EI=[20, 25], rhoA=1.2, rhoI=[0.01, 0.02]
    )
    return build_model(part.points, part.frames, part.conn, sec)


def _node_setup(group, size, h=0.05):
    """A 2-node model's solver, scratch and a dynamic step at xi with |h xi| ~ size."""
    model = _node_model()
    solver = implicit.make_solver(model, group)
    x, rot, quat = _deformed(model, RNG, 0.1)
    mom = RNG.normal(size=(model.n_nodes, 6))
    sd = implicit.step_data(solver, x, rot, quat, mom, h, 0.3, 0.3 + h / 2, vr.DYNAMIC)
    xi = RNG.normal(size=(model.n_nodes, 6)) * size / h
    return model, solver, sd, xi


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("size", SIZES)
def test_node_factors(group, size):
    """Sbar, Q, L and D (rows, sbar, diag of node_factors) against complex steps: Sbar of the
    midpoint configuration (vi_residual.configurations), the balance with forces held fixed
    (vi_residual._dynamic_rows at given f, tau, rb) for L and Q, the balance's dependence on
    the midpoint frame at fixed spatial forces for G."""
    model, solver, sd, xi = _node_setup(group, size)
    n, h, se3 = model.n_nodes, sd.h, solver.se3 == 1
    sn, w = vr.nodal(sd, vr.make_work(model.terms, n, np.float64))  # the node passes' view
    vr.configurations(sn, xi, w)
    f, tau = RNG.normal(size=(n, 3)), RNG.normal(size=(n, 3))
    alpha = 0.7
    rows, sbar, diag = (np.empty((n, 6, 6)) for _ in range(3))
    vjd.node_factors(
        model.mass, model.inertia, sd.rot, w.rb, f, tau, xi, h, se3, alpha, rows, sbar, diag
    )
    worst = 0.0
    wc = vr.nodal(sd, vr.make_work(model.terms, n))[1]
    out = np.zeros((n, 6), complex)
    post = np.zeros((n, 6), complex)
    for a in range(n):
        for j in range(6):
            xc = xi.astype(complex)
            xc[a, j] += 1j * EPS
            vr.configurations(sn, xc, wc)
            # Sbar: spatial increments of g_bar (u = dx, hat(theta) = dR R^T)
            u = wc.xb[a].imag / EPS
            dr = wc.rb[a].imag / EPS @ wc.rb[a].real.T
            theta = np.array([dr[2, 1], dr[0, 2], dr[1, 0]])
            worst = max(worst, _rel([sbar[a, :, j]], [np.r_[u, theta]]))
            # the balance at fixed spatial forces (rb moves: the G term rides along), with
            # the mass damping -alpha m v (turned by rb on SE3) added to f as the residual does
            v = xc[a, :3]
            fd = -alpha * model.mass[a] * (wc.rb[a] @ v if se3 else v)
            wc.f[:] = f
            wc.tau[:] = tau
            wc.f[a] += fd
            vr._dynamic_rows(model.nodes, sn, xc, wc, out, post)
            ref = out[a].imag / EPS
            # the analytic: Diag's column j without K (forces fixed): diag[a][:, j]
            worst = max(worst, _rel([diag[a, :, j]], [ref]))
        # Rows = h T Q diag(P^T, rb^T): the balance's derivative in the spatial forces
        for j in range(6):
            wc.f[:] = f
            wc.tau[:] = tau
            v = xi[a, :3]
            wc.f[a] += -alpha * model.mass[a] * (w.rb[a] @ v if se3 else v)
            vr.configurations(sn, xi.astype(complex), wc)
            if j < 3:
                wc.f[a, j] += -1j * EPS  # K = -d(f, tau): a unit of -f
            else:
                wc.tau[a, j - 3] += -1j * EPS
            vr._dynamic_rows(model.nodes, sn, xi.astype(complex), wc, out, post)
            worst = max(worst, _rel([rows[a, :, j]], [out[a].imag / EPS]))
    print(f"{group} |p| ~ {size}: node factors' max relative error {worst:.1e}")
    assert worst < TOL_NODE


def _undamped_model(alpha=0.0, prescribed_translation=True, follower=True):
    """_busy_model of test_implicit without dashpots or strain-rate damping, with a prescribed
    displacement: mass damping alpha only."""
    return _busy_model(
        damping=(0.0, alpha),
        dashpots=False,
        follower=follower,
        displacement=prescribed_translation,
    )


def _oracle_tangent(model, pattern, x, rot, quat, t):
    """kbuf (B,6,6) of K_ab = -d(f_a, tau_a)/d(u_b, theta_b) by complex steps of the forces
    (each node's position moved by i eps e_j, or its frame by cay(i eps e_j), spatially),
    and the dense K, to check that nothing falls outside the pattern."""
    n = model.n_nodes
    k = np.zeros((n, 6, n, 6))
    for b in range(n):
        for j in range(6):
            xc, rc, qc = x.astype(complex), rot.astype(complex), quat.astype(complex)
            if j < 3:
                xc[b, j] += 1j * EPS
            else:
                e = [0j, 0j, 0j]
                e[j - 3] = 1j * EPS
                q = so3.quat_mul(cayley.cay_quaternion(tuple(e)), tuple(qc[b]))
                qc[b] = q
                rc[b] = np.array(so3.matrix_from_quat(q)).reshape(3, 3)
            f, tau = np.zeros((n, 3), complex), np.zeros((n, 3), complex)
            forces._forces(model.terms, xc, rc, qc, t, f, tau, forces.ALL)
            k[:, :3, b, j] = -f.imag / EPS
            k[:, 3:, b, j] = -tau.imag / EPS
    kbuf = np.zeros((len(pattern.indices), 6, 6))
    inside = np.zeros((n, n), bool)
    for a in range(n):
        for r in range(pattern.indptr[a], pattern.indptr[a + 1]):
            b = pattern.indices[r]
            kbuf[r] = k[a, :, b, :]
            inside[a, b] = True
    assert not np.any(k.transpose(0, 2, 1, 3)[~inside]), "a force couples nodes outside the pattern"
    return kbuf


def _worst(data, oracle, pattern):
    """Max over blocks of |analytic - oracle| / (largest oracle block of its block row)."""
    worst = 0.0
    for a in range(len(pattern.indptr) - 1):
        blocks = range(pattern.indptr[a], pattern.indptr[a + 1])
        scale = max(np.abs(oracle[r]).max() for r in blocks)
        for r in blocks:
            worst = max(worst, np.abs(data[r] - oracle[r]).max() / scale)
    return worst


def _complex_blocks(solver, sd, xi):
    p, m = solver.pattern, solver.model
    data = np.zeros_like(solver.data)
    vr.jacobian(
        m.nodes, m.terms, sd, xi, solver.work, p.color_ptr, p.color_nodes, p.col_ptr,
        p.col_rows, p.col_blocks, implicit.EPS, data,
    )  # fmt: skip
    return data


def _dynamic_case(group, scale, alpha, h=0.05):
    model = _undamped_model(alpha)
    solver = implicit.make_solver(model, group)
    x, rot, quat = _deformed(model, RNG, 0.1)
    mom = RNG.normal(size=(model.n_nodes, 6))
    sd = implicit.step_data(solver, x, rot, quat, mom, h, 0.4, 0.4 + h / 2, vr.DYNAMIC)
    xi = RNG.normal(size=(model.n_nodes, 6)) * scale
    return model, solver, sd, xi


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("scale", [1.0, 0.05])
@pytest.mark.parametrize("alpha", [0.0, 0.4])
def test_node_maps_with_oracle_tangents(group, scale, alpha):
    """The whole dynamic Jacobian from K blocks taken by complex step of the forces (every
    term, tangent hook or not): node_maps against vi_residual.jacobian, block by block.
    Checks the chain rule independently of the terms' tangents."""
    model, solver, sd, xi = _dynamic_case(group, scale, alpha)
    assert vjd.damping_analytic(model.terms)
    p, n = solver.pattern, model.n_nodes
    w = vr.make_work(model.terms, n, np.float64)
    sn, wn = vr.nodal(sd, w)
    vr.configurations(sn, xi, wn)
    forces._forces(model.terms, w.xb, w.rb, w.qb, sd.t, w.f, w.tau, forces.ALL)
    kbuf = _oracle_tangent(model, p, w.xb, w.rb, w.qb, sd.t)
    data = np.zeros_like(solver.data)
    vjd.node_maps(
        model.nodes.mass, model.nodes.inertia, model.nodes.fixed, sd.rot, sd.rot_prescribed,
        w.rb, w.f, w.tau, xi, sd.h, solver.se3 == 1, model.terms.alpha, p.indptr, p.indices,
        kbuf, None, data,
    )  # fmt: skip
    worst = _worst(data, _complex_blocks(solver, sd, xi), p)
    print(f"{group} scale {scale} alpha {alpha}: max relative block error {worst:.2e}")
    assert worst < TOL


def test_damping_analytic_rule():
    """Mass damping, the rods' strain-rate damping and dashpots keep the analytic path (their
    blocks: node_factors, step_damping_tangent; tests/test_damping_tangent.py)."""
    assert vjd.damping_analytic(_undamped_model(0.5).terms)
    from test_implicit import _busy_model

    assert vjd.damping_analytic(_busy_model(damping=(0.0, 0.0)).terms)  # dashpots
    model = _undamped_model(0.0)
    damped = dataclasses.replace(model, beta=0.01)
    assert vjd.damping_analytic(forces.make_terms(damped))


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("scale", [1.0, 0.05])
@pytest.mark.parametrize("alpha", [0.0, 0.4])
def test_dynamic_jacobian_matches_complex_step(group, scale, alpha):
    """Rods at an angle with end frames, elastic supports in both frames, a dead moment,
    gravity, a pin with a free spin, a prescribed rotation and a prescribed displacement, mass
    damping: Solver.matrix (the terms' tangents, then the node maps) against the complex step,
    h = 0.05, xi normal of the scale, a deformed start."""
    model = _undamped_model(alpha, follower=False)
    solver = implicit.make_solver(model, group)
    assert solver.slots is not None and solver.kbuf is not None
    x, rot, quat = _deformed(model, RNG, 0.1)
    mom = RNG.normal(size=(model.n_nodes, 6))
    h = 0.05
    sd = implicit.step_data(solver, x, rot, quat, mom, h, 0.4, 0.4 + h / 2, vr.DYNAMIC)
    xi = RNG.normal(size=(model.n_nodes, 6)) * scale
    data = solver.matrix(sd, xi).tobsr(blocksize=(6, 6))
    p = solver.pattern
    assert np.array_equal(data.indptr, p.indptr) and np.array_equal(data.indices, p.indices)
    worst = _worst(data.data, _complex_blocks(solver, sd, xi), p)
    print(f"{group} scale {scale} alpha {alpha}: max relative block error {worst:.2e}")
    assert worst < TOL


def runs_agree(model, group):
    """20 fixed steps with the analytic Jacobian reach the states of 20 with the complex step
    (the oracle): both converge to the same root at Newton tolerance 1e-12, the iterates
    differing by round-off, so the states agree far inside 1e-9 of their size. Returns the
    analytic run."""
    from rodsim.integrators import dynamics

    runs = []
    for analytic in (False, True):
        state = dynamics.initial_state(model)
        run = implicit.start(model, 0.02, group=group, state=state, tol=1e-12)
        if analytic:
            assert run.solver.slots is not None and run.solver.kbuf is not None
        else:
            run.solver = dataclasses.replace(run.solver, slots=None, real=None, kbuf=None)
        implicit.advance(run, 20)
        runs.append(run)
    a, b = runs
    size = np.abs(a.state.x).max()
    np.testing.assert_allclose(b.state.x, a.state.x, rtol=0, atol=1e-9 * size)
    np.testing.assert_allclose(b.state.rot, a.state.rot, rtol=0, atol=1e-9)
    np.testing.assert_allclose(b.state.p, a.state.p, rtol=0, atol=1e-9 * np.abs(a.state.p).max())
    assert b.max_iterations <= a.max_iterations + 1
    return b


@pytest.mark.parametrize("group", GROUPS)
def test_run_matches_complex_jacobian(group):
    """The undamped model's 20 fixed steps: analytic and complex Jacobian agree (runs_agree)."""
    run = runs_agree(_undamped_model(0.3, follower=False), group)
    assert np.any(run.solver.kbuf), "the analytic Jacobian was used"


def test_node_passes_see_one_type_for_every_combination_of_terms():
    """The node passes' view of the step data and scratch (vi_residual.StepNodes, WorkNodes)
    has one numba type for a model with no force term and for one with rods, loads, supports
    and damping (whose StepData and Work types differ: the terms' buffers), so the node passes
    compile once; the view holds the very arrays of StepData and Work, from Python (nodal) and
    in a kernel (step_nodes, work_nodes)."""
    views, fulls = [], []
    for model in (_node_model(), _busy_model()):
        solver = implicit.make_solver(model, "SO3xR3")
        n = model.n_nodes
        x, rot, quat = _deformed(model, RNG, 0.1)
        sd = implicit.step_data(solver, x, rot, quat, np.zeros((n, 6)), 0.05, 0.3, 0.3, vr.DYNAMIC)
        w = vr.make_work(model.terms, n, np.float64)
        sn, wn = vr.nodal(sd, w)
        assert all(getattr(sn, f) is getattr(sd, f) for f in sn._fields)
        assert all(getattr(wn, f) is getattr(w, f) for f in wn._fields)
        kernel_sn, kernel_wn = _views(sd, w)
        assert all(np.shares_memory(getattr(kernel_sn, f), getattr(sd, f)) for f in ("x", "mom"))
        assert all(np.shares_memory(getattr(kernel_wn, f), getattr(w, f)) for f in ("xb", "t2"))
        assert (kernel_sn.h, kernel_sn.dynamic) == (sd.h, sd.dynamic)
        views.append((numba.typeof(sn), numba.typeof(wn)))
        fulls.append((numba.typeof(sd), numba.typeof(w)))
    assert fulls[0] != fulls[1]  # the terms' buffers differ ...
    assert views[0] == views[1]  # ... and the node passes do not see them


@numba.njit
def _views(sd, w):
    return vr.step_nodes(sd), vr.work_nodes(w)
