"""Connectors between two nodes (rodsim.model.connectors, docs/connectors.md): forces as the
exact gradient of their energy in every kind and frame, the complex-step derivative the
implicit Jacobian takes, momentum balance, dashpots from their dissipation function, the
plastic return mapping and its state, the implicit Jacobian's pattern, the case file."""

import numpy as np
import pytest
from click.testing import CliRunner

from rodsim.cli import main
from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix
from rodsim.model import connectors as mc
from rodsim.model import forces
from rodsim.model.assembly import PointMass, build_model
from rodsim.terms import connectors as term

RNG = np.random.default_rng(34)
INF3 = (np.inf, np.inf, np.inf)


def _quat(rot):
    quat = np.empty((rot.shape[0], 4), dtype=rot.dtype)
    if rot.dtype == np.complex128:  # the kernels' own extraction is real: build it to first order
        return None
    forces.quaternions(rot, quat, 0, rot.shape[0])
    return quat


def _turn(rot, a, theta):
    out = rot.copy()
    out[a] = as_matrix(so3.exp(tuple(theta))) @ rot[a]
    return out


def _reference(n=4):
    x0 = RNG.normal(size=(n, 3))
    rot0 = np.array([as_matrix(so3.exp(tuple(RNG.normal(scale=0.8, size=3)))) for _ in range(n)])
    return x0, rot0


def _moved(x0, rot0, scale=0.15, turn=0.6):
    x = x0 + RNG.normal(scale=scale, size=x0.shape)
    rot = np.array([as_matrix(so3.exp(tuple(RNG.normal(scale=turn, size=3)))) @ r for r in rot0])
    return x, rot


def _connector(kind, frame, a=(0, 2), b=(1, 3), **kw):
    values = dict(
        stiffness=tuple(RNG.uniform(1.0, 3.0, 3)),
        damping=tuple(RNG.uniform(0.5, 2.0, 3)),
        rotational_stiffness=tuple(RNG.uniform(1.0, 3.0, 3)),
        rotational_damping=tuple(RNG.uniform(0.5, 2.0, 3)),
    )
    if kind in ("cable", "strut"):
        values = dict(stiffness=(2.5, 0.0, 0.0))
    values.update(kw)
    return mc.Connector(np.array(a), np.array(b), kind=kind, frame=frame, **values)


CASES = [
    ("spring", "node", {}),
    ("spring", "global", {}),
    ("plastic", "node", dict(yield_force=(0.05, 0.08, 0.1), hardening=0.7)),
    ("plastic", "global", dict(yield_force=(0.05, 0.08, 0.1))),
    ("cable", "global", dict(length=0.5)),
    ("strut", "global", dict(length=10.0)),
]


def _packed(kind, frame, kw):
    x0, rot0 = _reference()
    cn = mc.pack_connectors([_connector(kind, frame, **kw)], x0, rot0)
    state = mc.initial_state(cn)
    if kind == "plastic":  # a committed state away from rest
        state.slip[:] = RNG.normal(scale=0.05, size=state.slip.shape)
        state.alpha[:] = 0.1
    return x0, rot0, cn, state


def _energy_and_forces(cn, state, x, rot):
    f, tau = np.zeros_like(x), np.zeros_like(x)
    energy = mc.connector_forces(cn, state, x, rot, _quat(rot), f, tau)
    return energy, f, tau


@pytest.mark.parametrize("kind, frame, kw", CASES)
def test_forces_are_the_exact_gradient_of_the_energy(kind, frame, kw):
    """f = -dV/dx, tau = -dV/dtheta (spatial rotation variations delta Lambda = hat(theta)
    Lambda) at a large rotation (|psi| ~ 1) and, for the plastic kind, a yielding trial state
    (the incremental potential): central differences (e = 1e-6) agree to their O(e^2) error
    and round-off ~ 1e-16 V / e, far below 1e-7."""
    x0, rot0, cn, state = _packed(kind, frame, kw)
    x, rot = _moved(x0, rot0)
    energy, f, tau = _energy_and_forces(cn, state, x, rot)
    assert energy > 0.0
    out = term.output(cn, state, x, rot, _quat(rot))
    if kind == "plastic":
        assert np.any(np.abs(out["force"]) >= np.array(kw["yield_force"]) - 1e-12)  # yielding
    if kind == "cable":
        assert np.all(out["force"][:, 0] > 0.0)  # taut
    if kind == "strut":
        assert np.all(out["force"][:, 0] < 0.0)  # pushed
    e = 1e-6
    for a in range(x.shape[0]):
        for k in range(3):
            d = np.zeros(3)
            d[k] = e
            xp, xm = x.copy(), x.copy()
            xp[a] += d
            xm[a] -= d
            fd = -(
                _energy_and_forces(cn, state, xp, rot)[0]
                - _energy_and_forces(cn, state, xm, rot)[0]
            )
            assert fd / (2 * e) == pytest.approx(f[a, k], abs=1e-7)
            vp = _energy_and_forces(cn, state, x, _turn(rot, a, d))[0]
            vm = _energy_and_forces(cn, state, x, _turn(rot, a, -d))[0]
            assert -(vp - vm) / (2 * e) == pytest.approx(tau[a, k], abs=1e-7)


def _qmul(p, q):
    return np.array(
        [
            p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
            p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
            p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
            p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0],
        ]
    )


def _complex_forces(cn, state, x, rot, a, k, h, rotation: bool):
    """(f, tau) at a complex step i h along x[a, k] or the spatial rotation theta_k of node
    a (Lambda -> (I + i h hat e_k) Lambda, q -> (1, i h e_k / 2) q: exact to first order)."""
    xc, rc = x.astype(np.complex128), rot.astype(np.complex128)
    qc = _quat(rot).astype(np.complex128)
    if rotation:
        e = np.zeros(3)
        e[k] = 1.0
        hat = np.array([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
        rc[a] = (np.eye(3) + 1j * h * hat) @ rc[a]
        qc[a] = _qmul(np.array([1.0, *(0.5j * h * e)]), qc[a])
    else:
        xc[a, k] += 1j * h
    f, tau = np.zeros_like(xc), np.zeros_like(xc)
    mc.connector_forces(cn, state, xc, rc, qc, f, tau)
    return f, tau


@pytest.mark.parametrize("kind, frame, kw", CASES)
def test_complex_step_derivative_matches_differences(kind, frame, kw):
    """The implicit Jacobian's complex step (h = 1e-30: exact to round-off) of the forces
    equals central differences of the real forces (e = 1e-6, error O(e^2) ~ 1e-11 relative),
    also in a yielding plastic trial state (the consistent tangent k H / (k + H))."""
    x0, rot0, cn, state = _packed(kind, frame, kw)
    x, rot = _moved(x0, rot0)
    h, e = 1e-30, 1e-6
    scale = np.abs(_energy_and_forces(cn, state, x, rot)[1]).max() + 1.0
    for a in range(x.shape[0]):
        for k in range(3):
            for rotation in (False, True):
                f, tau = _complex_forces(cn, state, x, rot, a, k, h, rotation)
                d = np.zeros(3)
                d[k] = e
                if rotation:
                    plus = _energy_and_forces(cn, state, x, _turn(rot, a, d))
                    minus = _energy_and_forces(cn, state, x, _turn(rot, a, -d))
                else:
                    xp, xm = x.copy(), x.copy()
                    xp[a] += d
                    xm[a] -= d
                    plus = _energy_and_forces(cn, state, xp, rot)
                    minus = _energy_and_forces(cn, state, xm, rot)
                np.testing.assert_allclose(
                    f.imag / h, (plus[1] - minus[1]) / (2 * e), atol=1e-7 * scale
                )
                np.testing.assert_allclose(
                    tau.imag / h, (plus[2] - minus[2]) / (2 * e), atol=1e-7 * scale
                )
                np.testing.assert_array_equal(f.real, _energy_and_forces(cn, state, x, rot)[1])


def test_momentum_balance_at_random_configurations():
    """In node a's frame (and for the axial kinds) the forces and dashpots balance: sum f = 0
    and sum (x x f + tau) = 0 to round-off (1e-13 of |x| |f|), at random configurations and
    rates; in global axes sum f = 0 (its moments refer to fixed axes: not balanced)."""
    x0, rot0 = _reference(6)
    pairs = dict(a=(0, 2, 4), b=(1, 3, 5))
    node = [
        _connector("spring", "node", **pairs),
        _connector("plastic", "node", yield_force=(0.05, 0.05, 0.05), **pairs),
        _connector("cable", "global", length=0.1, **pairs),
        _connector("strut", "global", length=20.0, **pairs),
    ]
    world = [_connector("spring", "global", **pairs)]
    for items, angular in ((node, True), (world, False)):
        cn = mc.pack_connectors(items, x0, rot0)
        state = mc.initial_state(cn)
        for _ in range(5):
            x, rot = _moved(x0, rot0, scale=0.3, turn=1.0)
            f, tau = _energy_and_forces(cn, state, x, rot)[1:]
            vel, omg = RNG.normal(size=x.shape), RNG.normal(size=x.shape)
            mc.connector_damping(cn, x, rot, _quat(rot), vel, omg, f, tau)
            size = np.abs(f).max() * (1.0 + np.abs(x).max())
            assert np.abs(f.sum(axis=0)).max() <= 1e-13 * size
            moment = np.abs((np.cross(x, f) + tau).sum(axis=0)).max()
            assert (moment <= 1e-13 * size) == angular


@pytest.mark.parametrize("frame", mc.FRAMES)
def test_dashpots_derive_from_the_dissipation_function(frame):
    """Dashpot forces are -dD/dv, -dD/domega of D = 1/2 (u'.C_t u' + psi'.C_r psi') with the
    rates of the measures (module docstring), and the power they return is 2 D >= 0."""
    x0, rot0 = _reference()
    cn = mc.pack_connectors([_connector("spring", frame)], x0, rot0)
    x, rot = _moved(x0, rot0)
    quat = _quat(rot)
    vel, omg = RNG.normal(size=x.shape), RNG.normal(size=x.shape)

    def damping(vel_, omg_):
        f, tau = np.zeros_like(x), np.zeros_like(x)
        power = mc.connector_damping(cn, x, rot, quat, vel_, omg_, f, tau)
        return f, tau, 0.5 * power

    f, tau, dissipation = damping(vel, omg)
    assert dissipation > 0
    e = 1e-6
    for a in range(x.shape[0]):
        for k in range(3):
            d = np.zeros_like(x)
            d[a, k] = e
            dv = (damping(vel + d, omg)[2] - damping(vel - d, omg)[2]) / (2 * e)
            dw = (damping(vel, omg + d)[2] - damping(vel, omg - d)[2]) / (2 * e)
            assert -dv == pytest.approx(f[a, k], abs=1e-7)
            assert -dw == pytest.approx(tau[a, k], abs=1e-7)


def _measures_along(cn, x, rot, vel, omg, s):
    """u, psi (C,3) at x + s vel, Lambda = exp(s omega) Lambda."""
    r = np.array([as_matrix(so3.exp(tuple(s * w))) @ m for w, m in zip(omg, rot, strict=True)])
    u, psi = np.zeros((cn.a.shape[0], 3)), np.zeros((cn.a.shape[0], 3))
    mc.connector_strains(cn, x + s * vel, r, _quat(r), u, psi)
    return u, psi


@pytest.mark.parametrize("frame", mc.FRAMES)
def test_dashpot_rates_are_the_time_derivatives_of_the_measures(frame):
    """The explicit dashpots' rates u', psi' are d/dt of the measures u, psi (the implicit
    dashpots difference those): along x + t v, Lambda = exp(t omega) Lambda, with unit
    dashpots the power n.u' + m.psi' is |u'|^2 + |psi'|^2 of the differenced measures
    (central differences, e = 1e-6: 1e-8 relative)."""
    x0, rot0 = _reference()
    ones = dict(damping=(1.0, 1.0, 1.0), rotational_damping=(1.0, 1.0, 1.0))
    cn = mc.pack_connectors([_connector("spring", frame, **ones)], x0, rot0)
    x, rot = _moved(x0, rot0)
    vel, omg = RNG.normal(size=x.shape), RNG.normal(size=x.shape)
    e = 1e-6
    up, pp = _measures_along(cn, x, rot, vel, omg, e)
    um, pm = _measures_along(cn, x, rot, vel, omg, -e)
    rates = np.concatenate([(up - um) / (2 * e), (pp - pm) / (2 * e)])
    f, tau = np.zeros_like(x), np.zeros_like(x)
    power = mc.connector_damping(cn, x, rot, _quat(rot), vel, omg, f, tau)
    assert power == pytest.approx(np.sum(rates**2), rel=1e-8)


def test_plastic_state_moves_only_when_accepted():
    """The forces see the committed slip (the kernels never write it); accept commits the
    return mapping at the accepted configuration: then the force is unchanged, within the
    yield force, and the dissipated work is F_y |delta s|."""
    x0 = np.array([[0.0, 0, 0], [1.0, 0, 0]])
    rot0 = np.stack([np.eye(3)] * 2)
    k, fy = 100.0, 2.0
    cn = mc.pack_connectors(
        [mc.Connector(np.array([0]), np.array([1]), "plastic", stiffness=(k, 0, 0),
                      yield_force=(fy, np.inf, np.inf))],
        x0, rot0,
    )  # fmt: skip
    state = mc.initial_state(cn)
    x = x0.copy()
    x[1, 0] += 0.05  # trial force k u = 5 > F_y: slip 0.03
    quat = _quat(rot0)
    before = _energy_and_forces(cn, state, x, rot0)
    assert np.all(state.slip == 0.0)
    assert before[1][1, 0] == pytest.approx(-fy, rel=1e-15)
    mc.connector_accept(cn, state, x, rot0, quat)
    assert state.slip[0, 0] == pytest.approx(0.05 - fy / k, rel=1e-14)
    assert state.work[0] == pytest.approx(fy * (0.05 - fy / k), rel=1e-14)
    after = _energy_and_forces(cn, state, x, rot0)
    assert after[1][1, 0] == pytest.approx(-fy, rel=1e-14)
    assert after[0] == pytest.approx(0.5 * fy**2 / k, rel=1e-14)  # stored energy only now
    x[1, 0] = 1.0  # back to u = 0: elastic down to -F_y at u = 0.01, then slips back 0.01
    mc.connector_accept(cn, state, x, rot0, quat)
    assert state.slip[0, 0] == pytest.approx(fy / k, rel=1e-14)
    assert state.work[0] == pytest.approx(fy * (0.05 - fy / k) + fy * (0.05 - 2 * fy / k))


def _point_masses(x0, rot0, items, masses, **kw):
    j = np.eye(3) * 0.01
    return build_model(
        x0, rot0, np.zeros((0, 2)), [],
        point_masses=[PointMass(np.array([a]), m, j) for a, m in enumerate(masses)],
        term_arrays={"connectors": mc.pack_connectors(items, x0, rot0)}, **kw,
    )  # fmt: skip


def test_implicit_jacobian_has_the_connectors_pairs():
    """The implicit Jacobian (coloured complex step on the pattern of Term.pairs) equals
    central differences of the residual with connectors between nodes that no element joins:
    without their pairs in the pattern, a and b would share a colour and mix their columns."""
    from rodsim.integrators import implicit
    from rodsim.integrators import vi_residual as vr

    x0, rot0 = _reference(4)
    items = [
        _connector("spring", "node", a=(0, 1), b=(2, 3)),
        _connector("cable", "global", a=(0,), b=(3,), length=0.1),
    ]
    model = _point_masses(x0, rot0, items, [1.0, 2.0, 3.0, 4.0])
    assert model.terms.connectors is not None
    np.testing.assert_array_equal(forces.coupled_pairs(model.terms), [[0, 2], [1, 3], [0, 3]])
    s = implicit.make_solver(model, "SO3xR3")
    x, rot = _moved(x0, rot0, scale=0.1, turn=0.3)
    sd = implicit.step_data(s, x, rot, _quat(rot), np.zeros((4, 6)), 1.0, 0.0, 0.0, vr.STATIC)
    xi = RNG.normal(scale=0.01, size=(4, 6))
    jac = s.matrix(sd, xi).toarray()
    e = 1e-6
    fd = np.zeros_like(jac)
    for c in range(24):
        d = np.zeros(24)
        d[c] = e
        plus = s.residual(sd, xi + d.reshape(4, 6))[0].ravel()
        minus = s.residual(sd, xi - d.reshape(4, 6))[0].ravel()
        fd[:, c] = (plus - minus) / (2 * e)
    np.testing.assert_allclose(jac, fd, atol=1e-6 * np.abs(jac).max())


def test_a_model_without_connectors_compiles_them_out():
    """No connectors: the kernels see None for the term and its state (compiled out), Python
    empty arrays; connectors: their arrays and a state at rest."""
    x0, rot0 = _reference(2)
    bare = build_model(x0, rot0, np.zeros((0, 2)), [], point_masses=[PointMass(np.arange(2), 1.0)])
    assert bare.terms.connectors.a.shape == (0,)
    assert bare.terms.connectors_state is None
    model = _point_masses(x0, rot0, [_connector("spring", "global", a=(0,), b=(1,))], [1, 1])
    assert model.terms.connectors_state.slip.shape == (1, 3)
    assert term.TERM.conservative(model.terms.connectors)
    plastic = _connector("plastic", "global", a=(0,), b=(1,), yield_force=INF3)
    assert not term.TERM.conservative(mc.pack_connectors([plastic], x0, rot0))


CASE = """\
rodsim: 1
mesh:
  - rod: {{name: a, from: [0, 0, 0], to: [1, 0, 0], elements: 2, section: s, up: [0, 0, 1]}}
  - rod: {{name: b, from: [0, 1, 0], to: [1, 1, 0], elements: 2, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}}
boundary: [{{set: a.start, fix: all}}, {{set: b.start, fix: all}}]
solver: {{analysis: equilibrium}}
connectors:
  - {connector}
"""


@pytest.mark.parametrize(
    "connector, key, words",
    [
        ("{between: [a.end, b.end], stifness: [1, 1, 1]}", "connectors[0].stifness", "unknown key"),
        ("{between: [a.end, nowhere], stiffness: 1}", "connectors[0].between[1]", "nowhere"),
        ("{between: [a.all, b.end], stiffness: 1}", "connectors[0].between", "different sizes"),
        ("{between: [a.end], stiffness: 1}", "connectors[0].between", "at least 2"),
        ("{between: [a.end, b.end, a.all], stiffness: 1}", "connectors[0].between", "two node set"),
        ("{between: [a.end, a.end], stiffness: 1}", "connectors[0].between", "both sets"),
        (
            "{between: [a.end, b.end], kind: cable, stiffness: [1, 2, 3]}",
            "connectors[0].stiffness",
            "one number",
        ),
        (
            "{between: [a.end, b.end], kind: cable, stiffness: 1, frame: node}",
            "connectors[0].frame",
            "chord",
        ),
        (
            "{between: [a.end, b.end], kind: spring, stiffness: 1, length: 2}",
            "connectors[0].length",
            "takes no length",
        ),
        (
            "{between: [a.end, b.end], kind: plastic, stiffness: 1}",
            "connectors[0].yield_force",
            "needs a yield_force",
        ),
        ("{between: [a.end, b.end], kind: strut}", "connectors[0].stiffness", "needs a stiffness"),
        ("{between: [a.end, b.end]}", "connectors[0]", "at least one of"),
        (
            "{between: [a.end, b.end], kind: rope, stiffness: 1}",
            "connectors[0].kind",
            "one of spring",
        ),
        ("{between: [a.end, b.end], stiffness: -1}", "connectors[0].stiffness", ">= 0"),
    ],
)
def test_case_errors_name_the_key(tmp_path, connector, key, words):
    """Bad connectors: exit 2, the key path and what is wrong."""
    case = tmp_path / "c.yaml"
    case.write_text(CASE.format(connector=connector))
    result = CliRunner().invoke(main, ["check", str(case)])
    assert result.exit_code == 2, result.output
    assert key in result.output and words in result.output, result.output


def test_case_builds_the_pairs_in_node_order(tmp_path):
    """between: [a.all, b.all] joins the i-th node of a to the i-th node of b (ascending node
    numbers), kinds and values as given, in the model's term_arrays."""
    from rodsim import run as runner

    case = tmp_path / "c.yaml"
    first = "{between: [a.all, b.all], frame: node, stiffness: 5, rotational_stiffness: [1, 2, 3]}"
    second = "{between: [a.end, b.end], kind: plastic, stiffness: [1, 2, 3], yield_force: 4, "
    case.write_text(CASE.format(connector=first) + f"  - {second}hardening: 0.5}}\n")
    cn = runner.prepare(case).setup.model.term_arrays["connectors"]
    np.testing.assert_array_equal(cn.a, [0, 1, 2, 2])
    np.testing.assert_array_equal(cn.b, [3, 4, 5, 5])
    np.testing.assert_array_equal(cn.kind, [0, 0, 0, mc.PLASTIC])
    np.testing.assert_array_equal(cn.local, [1, 1, 1, 0])
    np.testing.assert_array_equal(cn.k_t[0], [5, 5, 5])
    np.testing.assert_array_equal(cn.k_r[1], [1, 2, 3])
    np.testing.assert_array_equal(cn.yield_force[3], [4, 4, 4])
    np.testing.assert_array_equal(cn.yield_force[0], [np.inf] * 3)
    np.testing.assert_array_equal(cn.hardening[3], [0.5] * 3)
    np.testing.assert_allclose(cn.d0[0], [0, 1, 0], atol=1e-15)  # in node a's frame: d1 = x
