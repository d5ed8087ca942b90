"""The implicit Cayley variational integrator: its hand-derived formulas against finite
differences, its Jacobian against finite differences, and the properties the theory promises
(momenta, order 2, symmetry, unconditional stability, quadratic Newton convergence, damping
that leaves both momenta alone)."""

import dataclasses

import numpy as np
import pytest
from conftest import GROUPS, energies_keeping_momenta, rod_forces, spaghetti

from rodsim import run as runner
from rodsim.integrators import cayley, dynamics, implicit
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.stable_step import stable_step
from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix
from rodsim.mesh.generate import straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad
from rodsim.model.prescribed import Prescribed
from rodsim.model.sections import section_from_resultants
from rodsim.model.supports import Support

RNG = np.random.default_rng(11)


def _hat(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _twist(w, v, se3):
    """4x4 generator of (w, v); on SO3xR3 the translation is its own (abelian) block."""
    m = np.zeros((4, 4))
    m[:3, :3] = _hat(w)
    m[:3, 3] = v
    return m


def _cay4(w, v, se3):
    """Cayley map of the group: 4x4 matrix Cayley on SE3; (cay(w), v) on SO3xR3."""
    if se3:
        a = _twist(w, v, se3)
        return np.linalg.solve(np.eye(4) - a / 2, np.eye(4) + a / 2)
    g = np.eye(4)
    g[:3, :3] = np.linalg.solve(np.eye(3) - _hat(w) / 2, np.eye(3) + _hat(w) / 2)
    g[:3, 3] = v
    return g


@pytest.mark.parametrize("se3", [False, True])
def test_cayley_square_root(se3):
    """tau(s(p))^2 = tau(p): the midpoint configuration is the half step along the subgroup."""
    for _ in range(5):
        w, v = RNG.normal(size=3) * 1.5, RNG.normal(size=3)
        s_w, s_v = cayley.half_step(tuple(w), tuple(v), se3)
        half = _cay4(np.array(s_w), np.array(s_v), se3)
        if se3:
            np.testing.assert_allclose(half @ half, _cay4(w, v, se3), atol=1e-13)
        else:  # translation is additive on SO3xR3
            np.testing.assert_allclose(
                (half[:3, :3] @ half[:3, :3]), _cay4(w, v, se3)[:3, :3], atol=1e-13
            )
            np.testing.assert_allclose(2 * np.array(s_v), v, atol=1e-15)


@pytest.mark.parametrize("se3", [False, True])
def test_half_step_transpose_matches_finite_differences(se3):
    w, v = RNG.normal(size=3), RNG.normal(size=3)
    y_w, y_v = RNG.normal(size=3), RNG.normal(size=3)
    t_w, t_v = cayley.half_step_transpose(tuple(w), tuple(v), tuple(y_w), tuple(y_v), se3)
    grad = np.concatenate([t_w, t_v])

    def f(p):
        s_w, s_v = cayley.half_step(tuple(p[:3]), tuple(p[3:]), se3)
        return np.dot(s_w, y_w) + np.dot(s_v, y_v)

    p0, e = np.concatenate([w, v]), 1e-6
    fd = [(f(p0 + e * d) - f(p0 - e * d)) / (2 * e) for d in np.eye(6)]
    np.testing.assert_allclose(grad, fd, atol=1e-9)


def _left_derivative(w, v, se3):
    """d^R tau_p by finite differences: d/de tau(p + e d) tau(p)^{-1}, as a 6x6 (w, v) map."""
    g_inv = np.linalg.inv(_cay4(w, v, se3))
    cols, e = [], 1e-6
    for d in np.eye(6):
        gp = _cay4(w + e * d[:3], v + e * d[3:], se3)
        gm = _cay4(w - e * d[:3], v - e * d[3:], se3)
        if se3:
            xi = (gp - gm) @ g_inv / (2 * e)
            cols.append(np.concatenate([[xi[2, 1], xi[0, 2], xi[1, 0]], xi[:3, 3]]))
        else:
            r = (gp[:3, :3] - gm[:3, :3]) @ g_inv[:3, :3] / (2 * e)
            cols.append(np.concatenate([[r[2, 1], r[0, 2], r[1, 0]], (gp - gm)[:3, 3] / (2 * e)]))
    return np.array(cols).T


@pytest.mark.parametrize("se3", [False, True])
def test_cayley_derivatives_match_finite_differences(se3):
    """dtau_transpose = (d^R tau)^T and dtau_inv_transpose = (d^R tau)^{-T} (docs/theory.md, "The
    implicit Cayley variational integrator"), against the derivative of the matrix Cayley map."""
    w, v = RNG.normal(size=3), RNG.normal(size=3)
    d = _left_derivative(w, v, se3)
    y = RNG.normal(size=6)
    t = np.concatenate(cayley.dtau_transpose(tuple(w), tuple(v), tuple(y[:3]), tuple(y[3:]), se3))
    np.testing.assert_allclose(t, d.T @ y, atol=1e-8)
    ti = np.concatenate(
        cayley.dtau_inv_transpose(tuple(w), tuple(v), tuple(y[:3]), tuple(y[3:]), se3)
    )
    np.testing.assert_allclose(d.T @ ti, y, atol=1e-8)


# --- the discrete Lagrangian and its Legendre transforms ---------------------------------------


def _deformed(model, rng, scale=0.1):
    x = model.x0 + scale * rng.normal(size=model.x0.shape)
    rot = np.array([as_matrix(so3.exp(tuple(0.4 * rng.normal(size=3)))) @ r for r in model.rot0])
    quat = np.empty((model.n_nodes, 4))
    implicit.quaternions(rot, quat)
    return x, rot, quat


def _compose(x, rot, eta, se3):
    """g exp(eta) per node, eta (N,6) = (translation, rotation), right-trivialised."""
    rot2 = np.array([r @ as_matrix(so3.exp(tuple(e[3:]))) for r, e in zip(rot, eta, strict=True)])
    dx = np.einsum("nij,nj->ni", rot, eta[:, :3]) if se3 else eta[:, :3]
    return x + dx, rot2


def _step_of(x0, r0, x1, r1, h, se3):
    """xi with g1 = g0 tau(h xi)."""
    xi = np.zeros((len(x0), 6))
    for a in range(len(x0)):
        w = np.array(so3.cay_inv(tuple((r0[a].T @ r1[a]).ravel())))
        d = x1[a] - x0[a]
        v = (np.eye(3) - _hat(w) / 2) @ (r0[a].T @ d) if se3 else d
        xi[a, :3], xi[a, 3:] = v / h, w / h
    return xi


def _lagrangian(model, solver, x0, r0, x1, r1, h):
    """L_d = h sum 1/2 xi.JJ xi - h V(g_bar), V the elastic energy at the midpoint."""
    se3 = solver.se3
    xi = _step_of(x0, r0, x1, r1, h, se3)
    q0 = np.empty((len(x0), 4))
    implicit.quaternions(r0, q0)
    sd = implicit.step_data(solver, x0, r0, q0, np.zeros((len(x0), 6)), h, 0.0, h, vr.DYNAMIC)
    sn, wn = vr.nodal(sd, solver.work)
    vr.configurations(sn, xi.astype(complex), wn)
    xb, rb = solver.work.xb.real.copy(), solver.work.rb.real.copy()
    f, tau = np.zeros_like(xb), np.zeros_like(xb)
    energy = rod_forces(model.rods, xb, rb, f, tau)
    kinetic = 0.5 * (
        np.sum(model.mass * np.sum(xi[:, :3] ** 2, axis=1))
        + np.einsum("ni,nij,nj->", xi[:, 3:], model.inertia, xi[:, 3:])
    )
    return h * kinetic - h * energy


@pytest.mark.parametrize("group", GROUPS)
def test_legendre_transforms_match_finite_differences(group):
    """The hand-derived momenta: P_k = -D1 L_d (the equation Newton solves) and
    P_k+1 = D2 L_d (the update), right-trivialised, against central differences of L_d."""
    model = spaghetti(3, loaded=False)
    solver = implicit.make_solver(model, group)
    se3 = solver.se3 == 1
    x0, r0, q0 = _deformed(model, RNG)
    h = 0.3
    xi = RNG.normal(size=(model.n_nodes, 6)) * 0.5
    sd = implicit.step_data(solver, x0, r0, q0, np.zeros((model.n_nodes, 6)), h, 0.0, h, vr.DYNAMIC)
    rows, post = solver.residual(sd, xi)  # with P_k = 0: rows = -D1 L_d, spatial
    x1, r1 = solver.used.x1.real.copy(), solver.used.r1.real.copy()
    p1, pi1 = np.zeros((model.n_nodes, 3)), np.zeros((model.n_nodes, 3))
    implicit.momenta_after(r0, xi, post, h, solver.se3, np.zeros_like(model.fixed), p1, pi1)

    e = 1e-6
    d1, d2 = np.zeros((model.n_nodes, 6)), np.zeros((model.n_nodes, 6))
    for a in range(model.n_nodes):
        for k in range(6):
            eta = np.zeros((model.n_nodes, 6))
            eta[a, k] = e
            lp = _lagrangian(model, solver, *_compose(x0, r0, eta, se3), x1, r1, h)
            lm = _lagrangian(model, solver, *_compose(x0, r0, -eta, se3), x1, r1, h)
            d1[a, k] = (lp - lm) / (2 * e)
            lp = _lagrangian(model, solver, x0, r0, *_compose(x1, r1, eta, se3), h)
            lm = _lagrangian(model, solver, x0, r0, *_compose(x1, r1, -eta, se3), h)
            d2[a, k] = (lp - lm) / (2 * e)
    # right-trivialised -> spatial rows (about the node)
    minus_d1 = -d1.copy()
    minus_d1[:, 3:] = np.einsum("nij,nj->ni", r0, minus_d1[:, 3:])
    d2s = d2.copy()
    d2s[:, 3:] = np.einsum("nij,nj->ni", r1, d2[:, 3:])
    if se3:
        minus_d1[:, :3] = np.einsum("nij,nj->ni", r0, minus_d1[:, :3])
        d2s[:, :3] = np.einsum("nij,nj->ni", r1, d2[:, :3])
    scale = np.abs(minus_d1).max()
    np.testing.assert_allclose(rows, minus_d1, atol=1e-7 * scale)
    np.testing.assert_allclose(np.hstack([p1, pi1]), d2s, atol=1e-7 * scale)


# --- the Jacobian ------------------------------------------------------------------------------


def _busy_model(damping=(0.02, 0.3), dashpots=True, follower=True, displacement=False):
    """Two rods at a right angle (end frames), a follower load, a dead moment, gravity, a pin
    with a free spin component, a prescribed rotation and elastic supports with dashpots in
    both frames: every path of the residual. dashpots, follower: the supports' dashpots and
    the follower load, or none; displacement: a prescribed displacement too."""
    part_a = straight_rod([0, 0, 0], [1, 0, 0], 3, up=[0, 0, 1])
    part_b = straight_rod([1, 0, 0], [1, 1, 0.2], 3, up=[0, 0, 1])
    x0 = np.vstack([part_a.points, part_b.points[1:]])
    frames = np.vstack([part_a.frames, part_b.frames[1:]])
    conn = np.vstack([part_a.conn, part_b.conn + 3])
    end_frames = np.stack([np.stack([frames[i], frames[j]]) for i, j in conn])
    end_frames[3, 0] = part_b.frames[0]
    sec = section_from_resultants(
        EA=1e3, GA=[800, 900], GJ=30, EI=[20, 25], rhoA=1.2, rhoI=[0.01, 0.02]
    )
    fixed = np.zeros((7, 6), dtype=bool)
    fixed[0, :3] = True
    fixed[0, 3:5] = True  # pin with a free spin about z
    loads = [NodalLoad(nodes=[3], moment=(0, 0.4, 0), time=timefunc.constant(1.0))]
    if follower:
        loads.insert(
            0,
            NodalLoad(
                nodes=[6],
                force=(0.3, -0.2, 0.5),
                moment=(0.1, 0, 0.2),
                follower=True,
                time=timefunc.ramp(1.0),
            ),
        )
    prescribed = [Prescribed(np.array([6]), rotation=(0.0, 0.3, 0.1), time=timefunc.ramp(1.0))]
    if displacement:
        prescribed.append(
            Prescribed(np.array([4]), displacement=(0.1, None, 0.05), time=timefunc.ramp(1.0))
        )
    c_t, c_r = ((0.5, 0.6, 0.7), (0.2, 0, 0)), ((0.04, 0.05, 0.06), (0, 0, 0.03))
    if not dashpots:
        c_t, c_r = ((0, 0, 0), (0, 0, 0)), ((0, 0, 0), (0, 0, 0))
    from rodsim.model.loads import Gravity

    return build_model(
        x0,
        frames,
        conn,
        sec,
        fixed=fixed,
        loads=loads,
        end_frames=end_frames,
        gravity=[Gravity((0, 0, -9.81), timefunc.constant(1.0))],
        prescribed=prescribed,
        damping=damping,
        supports=[
            Support(np.array([3]), (50, 60, 70), (4, 5, 6), c_t[0], c_r[0], "section"),
            Support(np.array([2, 5]), (30, 0, 20), (0, 3, 0), c_t[1], c_r[1], "global"),
        ],
    )


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("mode", [vr.DYNAMIC, vr.STATIC])
def test_jacobian_matches_finite_differences(group, mode):
    """The complex-step Jacobian (coloured, BSR) is the derivative of the residual: central
    differences agree to their own truncation/round-off level, column by column."""
    model = _busy_model()
    solver = implicit.make_solver(model, group)
    assert solver.pattern.n_colors == 3  # a chain with a corner: distance-2 colouring
    x, rot, quat = _deformed(model, RNG, 0.05)
    mom = RNG.normal(size=(model.n_nodes, 6))
    sd = implicit.step_data(solver, x, rot, quat, mom, 0.05, 0.4, 0.45, mode)
    xi = RNG.normal(size=(model.n_nodes, 6)) * (1.0 if mode == vr.DYNAMIC else 0.05)
    jac = solver.matrix(sd, xi).toarray()
    fd = np.zeros_like(jac)
    e = 1e-6
    for c in range(jac.shape[1]):
        d = np.zeros(jac.shape[1])
        d[c] = e
        rp, _ = solver.residual(sd, xi + d.reshape(-1, 6))
        rm, _ = solver.residual(sd, xi - d.reshape(-1, 6))
        fd[:, c] = (rp - rm).ravel() / (2 * e)
    np.testing.assert_allclose(jac, fd, atol=1e-7 * np.abs(jac).max())
    # the block pattern holds every nonzero (nothing was dropped by the colouring)
    assert np.count_nonzero(np.abs(fd) > 1e-6 * np.abs(fd).max()) <= np.count_nonzero(jac)


# --- properties of the scheme --------------------------------------------------------------------


def _run(model, dt, t_end, group, state=None, tol=1e-12, **kw):
    state = dynamics.initial_state(model, **kw) if state is None else state
    run = implicit.start(model, dt, group=group, state=state, tol=tol)
    implicit.advance(run, int(round(t_end / dt)))
    return run


def test_momenta_conserved_without_damping(group):
    """Flying spaghetti at 10x the explicit stable step: after the pulse L = (50, 0, 0) and both
    momenta stay constant to the Newton tolerance."""
    model = spaghetti(10)
    run = _run(model, 0.1, 5.0, group)
    lin, ang = run.diagnostics().linear_momentum, run.diagnostics().angular_momentum
    np.testing.assert_allclose(lin, [50, 0, 0], atol=1e-9)
    for _ in range(30):
        implicit.advance(run, 1)
        d = run.diagnostics()
        np.testing.assert_allclose(d.linear_momentum, lin, rtol=0, atol=1e-10 * 50)
        np.testing.assert_allclose(
            d.angular_momentum, ang, rtol=0, atol=1e-10 * np.linalg.norm(ang)
        )


def test_energy_band_shrinks_as_dt_squared(group):
    """After the pulse the energy oscillates in a band, without drift, whose width falls by 4
    when dt halves (seen: 4.07 to 4.23 on both groups)."""
    bands = []
    for dt in (0.1, 0.05, 0.025):
        run = _run(spaghetti(10), dt, 5.0, group)
        energies = []
        for _ in range(round(10 / dt)):
            implicit.advance(run, 1)
            energies.append(run.diagnostics().total)
        bands.append(np.ptp(energies))
    ratios = np.array(bands[:-1]) / np.array(bands[1:])
    assert np.all((ratios > 3.5) & (ratios < 4.5)), bands


def test_trajectory_converges_at_order_two(group):
    model = spaghetti(6)
    ends = {dt: _run(model, dt, 2.0, group).state.x.copy() for dt in (0.1, 0.05, 0.025, 0.0125)}
    ref = ends[0.0125]
    errors = [np.abs(ends[dt] - ref).max() for dt in (0.1, 0.05, 0.025)]
    # against a finer run the last error is 1/3 of the true one: compare the first two
    ratio = errors[0] / errors[1]
    assert 3.3 < ratio < 4.7, errors


def test_scheme_is_symmetric(group):
    """A step of -h undoes a step of h (the midpoint is the Cayley square root)."""
    model = spaghetti(5)
    st = dynamics.initial_state(model, velocity=(0.3, -0.2, 0.1), angular_velocity=(0, 0.2, 0.5))
    run = implicit.start(model, 0.2, group=group, state=st, tol=1e-14, t0=1.0)
    x0, r0 = run.state.x.copy(), run.state.rot.copy()
    p0, pi0 = run.state.p.copy(), run.state.pi.copy()
    implicit.advance(run, 1)
    assert np.abs(run.state.x - x0).max() > 0.05
    back = implicit.start(model, -0.2, group=group, state=run.state, tol=1e-14, t0=1.2)
    implicit.advance(back, 1)
    np.testing.assert_allclose(back.state.x, x0, atol=1e-12)
    np.testing.assert_allclose(back.state.rot, r0, atol=1e-12)
    np.testing.assert_allclose(back.state.p, p0, atol=1e-11)
    np.testing.assert_allclose(back.state.pi, pi0, atol=1e-11)


def test_newton_converges_quadratically(group):
    """Residual histories of loaded steps: once the relative residual e is below 1e-2, the next
    is below 10 e^2 (a linear rate above 0.1 would fail) until round-off (the solver's floor
    estimate, itself 10x pessimistic)."""
    model = spaghetti(10)
    run = implicit.start(model, 0.2, group=group, state=dynamics.initial_state(model), tol=1e-14)
    seen = 0
    for _ in range(20):
        implicit.advance(run, 1)
        r = run.last
        e = np.array(r.history) / r.reference
        for a, b in zip(e[:-1], e[1:], strict=True):
            if a < 1e-2 and b > run.solver.floor * run.dt / r.reference:
                assert b <= 10 * a * a, e
                seen += 1
    assert seen >= 5


def _cantilever(n=10, damping=(0.0, 0.0)):
    part = straight_rod([0, 0, 0], [1, 0, 0], n, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e7, GA=[4e6, 4e6], GJ=50, EI=[80, 80], rhoA=1, rhoI=[1e-4, 1e-4]
    )
    fixed = np.zeros((n + 1, 6), dtype=bool)
    fixed[0] = True
    return build_model(part.points, part.frames, part.conn, sec, fixed=fixed, damping=damping)


def test_stable_at_fifty_times_the_explicit_step(group):
    """Small-amplitude vibration of a cantilever at 50x the explicit stable step: the energy
    stays at its initial value (midpoint rule: no growth, no numerical damping)."""
    model = _cantilever()
    dt = 50 * stable_step(model, 2)
    st = dynamics.initial_state(model)
    st.p[:, 2] = 1e-3 * model.mass * np.linspace(0, 1, model.n_nodes) ** 2
    run = implicit.start(model, dt, group=group, state=st, tol=1e-13)
    e0 = run.diagnostics().total
    energies = []
    for _ in range(20):
        implicit.advance(run, 10)
        energies.append(run.diagnostics().total)
    assert np.max(np.abs(np.array(energies) / e0 - 1)) < 1e-3
    assert np.abs(run.state.x[:, 2]).max() < 1e-2  # still a small vibration


def test_strain_rate_damping_keeps_both_momenta(group):
    """A free rod thrown with momentum and spin, beta > 0: the energy decays, L and J stay
    constant to 1e-10 relative."""
    model = dataclasses.replace(spaghetti(8, loaded=False), beta=0.05)
    st = dynamics.initial_state(
        model, velocity=(1.0, -0.5, 0.3), angular_velocity=(0.1, 0.2, 0.4), center=(3, 4, 0)
    )
    st.p[:, 2] += np.linspace(-1, 1, model.n_nodes)  # deformation modes to damp
    run = implicit.start(model, 0.1, group=group, state=st, tol=1e-13)
    d0 = run.diagnostics()
    energies = energies_keeping_momenta(run, implicit.advance, 30, 2, 1e-10, 1e-10)
    assert np.all(np.diff(energies) <= 1e-12 * energies[0])
    # the rigid part of the energy cannot go: what decays is the deformation energy
    assert energies[-1] < energies[0] - 0.2 * (energies[0] - _rigid_energy(model, d0))


def _rigid_energy(model, d):
    """Kinetic energy of the rigid motion carrying the same momenta (a lower bound)."""
    m = model.mass.sum()
    c = (model.mass[:, None] * model.x0).sum(axis=0) / m
    r = model.x0 - c
    inertia = np.einsum("n,nij->ij", model.mass, np.einsum("ni,nj->nij", r, r))
    inertia = np.trace(inertia) * np.eye(3) - inertia
    inertia += np.einsum("nij,njk,nlk->il", model.rot0, model.inertia, model.rot0)
    j = d.angular_momentum - np.cross(c, d.linear_momentum)
    return 0.5 * d.linear_momentum @ d.linear_momentum / m + 0.5 * j @ np.linalg.solve(inertia, j)


def test_mass_damping_brings_a_cantilever_to_rest(group):
    model = _cantilever(damping=(0.0, 60.0))  # about 2 omega_1: near critical
    st = dynamics.initial_state(model)
    # a smooth, first-mode-like start: mass damping cannot remove energy from the stiff modes
    st.p[:, 2] = 1e-3 * model.mass * np.linspace(0, 1, model.n_nodes) ** 2
    run = implicit.start(model, 5e-3, group=group, state=st, tol=1e-12)
    e0 = run.diagnostics().total
    implicit.advance(run, 60)
    assert run.diagnostics().total < 1e-3 * e0


def test_newton_failure_is_a_numerical_error(tmp_path):
    """A step far too large for the motion: exit 3 with advice, frames so far kept."""
    case = tmp_path / "s.yaml"
    case.write_text(
        (runner.Path(__file__).parents[1] / "inputs/spaghetti/spaghetti.yaml").read_text()
    )
    from click.testing import CliRunner

    from rodsim.cli import main

    res = CliRunner().invoke(
        main,
        [
            "run",
            str(case),
            "-q",
            "--no-vtk",
            "--set",
            "solver.scheme=implicit",
            "--set",
            "solver.dt=2.5",
            "--set",
            "solver.newton.max_iter=3",
        ],
    )
    assert res.exit_code == 3, res.output
    assert "reduce dt" in res.output
    import h5py

    with h5py.File(tmp_path / "s.h5") as f:
        assert f["time"].shape[0] >= 1


def test_mass_damping_is_the_same_nodal_force_in_both_schemes(group):
    """alpha damps translation only (-alpha m v, docs/case_reference.md), in both schemes: a rod
    spinning about its own axis keeps its kinetic energy; a translating one loses it as
    exp(-2 alpha t) (the explicit kick's damping is first order: error ~ alpha dt = 1e-3)."""
    model = dataclasses.replace(spaghetti(6, loaded=False), alpha=1.0)
    axis = np.array([6.0, 8.0, 0.0]) / 10.0
    for velocity, spin, expected in (
        ((0, 0, 0), 2.0 * axis, 1.0),
        ((0.3, 0.4, 0.0), (0, 0, 0), np.exp(-2.0)),
    ):
        energies = []
        for scheme in ("explicit", "implicit"):
            st = dynamics.initial_state(model, velocity=velocity, angular_velocity=spin)
            if scheme == "implicit":
                run = implicit.start(model, 0.01, group=group, state=st, tol=1e-13)
                e0 = run.diagnostics().kinetic
                implicit.advance(run, 100)
            else:
                run = dynamics.start(model, 0.001, group=group, state=st)
                e0 = run.diagnostics().kinetic
                dynamics.advance(run, 1000)
            energies.append(run.diagnostics().kinetic / e0)
        np.testing.assert_allclose(energies, expected, rtol=2e-3)


def test_auto_step_of_the_implicit_scheme_is_the_explicit_one(tmp_path):
    """dt: auto means safety x the stable-step estimate (docs/case_reference.md), whatever the
    scheme."""
    case = runner.Path(__file__).parents[1] / "inputs/spaghetti/spaghetti.yaml"
    explicit = runner.prepare(case).plan
    implicit_plan = runner.prepare(case, ["solver.scheme=implicit"]).plan
    assert implicit_plan.kind == "implicit"
    assert implicit_plan.dt == explicit.dt
