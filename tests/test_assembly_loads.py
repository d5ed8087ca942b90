"""Model assembly (lumped inertia, point masses) and external loads (dead, follower, time
functions, gravity) of rodsim.model.assembly / rodsim.model.loads.

All compared values are sums of a few O(1..100) products, so ROUND = 1e-13 relative (a few
hundred ulp) is a round-off criterion, not a modelling tolerance.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rodsim.mesh.generate import frame, straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import PointMass, build_model
from rodsim.model.loads import Gravity, NodalLoad, external_forces, pack_loads
from rodsim.model.sections import section_from_resultants

ROUND = 1.0e-13
SPAGHETTI_PULSE = [[0.0, 0.0], [2.5, 200.0], [5.0, 0.0]]


def polyline_rod(seed=0, n_el=6):
    """A crooked polyline with unequal elements; frames from the element tangents."""
    rng = np.random.default_rng(seed)
    steps = rng.uniform(0.3, 2.0, size=(n_el, 1)) * np.array([1.0, 0.0, 0.0])
    steps += rng.uniform(-0.4, 0.4, size=(n_el, 3))
    x0 = np.vstack([np.zeros(3), np.cumsum(steps, axis=0)]) + np.array([2.0, -1.0, 3.0])
    tangents = np.vstack([steps, steps[-1:]])
    rot0 = np.array([frame(t, [0.1, 0.2, 1.0]) for t in tangents])
    conn = np.column_stack([np.arange(n_el), np.arange(1, n_el + 1)])
    return x0, rot0, conn


def sections(n_el, seed=1):
    rng = np.random.default_rng(seed)
    return [
        section_from_resultants(
            EA=1e4,
            GA=(5e3, 6e3),
            GJ=300,
            EI=(400, 500),
            rhoA=rng.uniform(0.5, 2.0),
            rhoI=tuple(rng.uniform(1.0, 5.0, size=2)),
            rhoJ=rng.uniform(2.0, 9.0),
        )
        for _ in range(n_el)
    ]


def random_rotation(seed):
    return Rotation.random(random_state=np.random.default_rng(seed)).as_matrix()


def apply(model, t, x=None, rot=None):
    x = model.x0 if x is None else x
    rot = model.rot0 if rot is None else rot
    f = np.zeros_like(model.x0)
    tau = np.zeros_like(model.x0)
    pot = external_forces(model.loads, float(t), x, rot, model.rot0, model.mass, f, tau)
    return f, tau, pot


# --- lumped inertia ------------------------------------------------------------------------------


def test_lumped_mass_single_section():
    part = straight_rod([0, 0, 0], [6, 8, 0], 10, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e4, GA=(1e4, 1e4), GJ=500, EI=(500, 500), rhoA=1.3, rhoI=(10, 12), rhoJ=20
    )
    model = build_model(part.points, part.frames, part.conn, sec)
    assert model.mass.sum() == pytest.approx(1.3 * 10.0, rel=ROUND)
    np.testing.assert_allclose(model.mass[[0, -1]], 1.3 * 0.5, rtol=ROUND)
    np.testing.assert_allclose(model.mass[1:-1], 1.3 * 1.0, rtol=ROUND)
    np.testing.assert_allclose(model.inertia[0], np.diag([20.0, 10.0, 12.0]) * 0.5, rtol=ROUND)
    np.testing.assert_allclose(model.inertia[5], np.diag([20.0, 10.0, 12.0]), rtol=ROUND)


def test_lumped_mass_and_inertia_unequal_elements():
    x0, rot0, conn = polyline_rod()
    n_el = conn.shape[0]
    secs = sections(n_el)
    model = build_model(x0, rot0, conn, secs)
    h = np.linalg.norm(x0[1:] - x0[:-1], axis=1)
    np.testing.assert_allclose(model.rods.length, h, rtol=ROUND)
    rho_a = np.array([s.rhoA for s in secs])
    assert model.mass.sum() == pytest.approx(np.sum(rho_a * h), rel=ROUND)
    share = np.zeros(n_el + 1)  # h/2 shares of each adjacent element
    share[:-1] += 0.5 * h * rho_a
    share[1:] += 0.5 * h * rho_a
    np.testing.assert_allclose(model.mass, share, rtol=ROUND)
    for a in range(n_el + 1):
        expected = np.zeros((3, 3))
        for e in (a - 1, a):
            if 0 <= e < n_el:
                s = secs[e]
                expected += 0.5 * h[e] * np.diag([s.rhoJ, s.rhoI2, s.rhoI3])
        # material frame: diagonal, independent of the nodal frame
        np.testing.assert_allclose(model.inertia[a], expected, rtol=ROUND, atol=0)
    np.testing.assert_array_equal(model.rho_a, rho_a)


def test_point_mass_adds_mass_and_global_inertia():
    x0, rot0, conn = polyline_rod(seed=2)
    secs = sections(conn.shape[0], seed=3)
    plain = build_model(x0, rot0, conn, secs)
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 3))
    j_global = a @ a.T + np.eye(3)  # a generic (non-diagonal) SPD tensor in global axes
    pms = [
        PointMass(nodes=np.array([0, 3]), mass=2.5, inertia=j_global),
        PointMass(nodes=np.array([3]), mass=0.5),
    ]
    model = build_model(x0, rot0, conn, secs, point_masses=pms)
    added_m = model.mass - plain.mass
    np.testing.assert_allclose(added_m, [2.5, 0, 0, 3.0, 0, 0, 0], rtol=ROUND, atol=ROUND)
    added = model.inertia - plain.inertia
    for node in (0, 3):
        r0 = rot0[node]
        np.testing.assert_allclose(
            r0 @ added[node] @ r0.T, j_global, rtol=0, atol=ROUND * np.abs(j_global).max()
        )
        # equivalently: the material tensor is R0^T J R0 (not R0 J R0^T)
        np.testing.assert_allclose(
            added[node], r0.T @ j_global @ r0, rtol=0, atol=ROUND * np.abs(j_global).max()
        )
    others = [k for k in range(x0.shape[0]) if k not in (0, 3)]
    np.testing.assert_array_equal(added[others], 0.0)
    # kinetic energy check: spatial inertia at the reference is the sum of both parts
    w = rng.normal(size=3)
    r0 = rot0[0]
    ke = 0.5 * (r0.T @ w) @ model.inertia[0] @ (r0.T @ w)
    ke_expected = 0.5 * (r0.T @ w) @ plain.inertia[0] @ (r0.T @ w) + 0.5 * w @ j_global @ w
    assert ke == pytest.approx(ke_expected, rel=ROUND)


def test_section_count_mismatch_is_rejected():
    x0, rot0, conn = polyline_rod()
    with pytest.raises(ValueError, match="sections"):
        build_model(x0, rot0, conn, sections(2))


# --- external forces ----------------------------------------------------------------------------


def test_dead_load_with_multiplier():
    x0, rot0, conn = polyline_rod()
    loads = [
        NodalLoad(
            nodes=[1, 4], force=(1.0, -2.0, 3.0), moment=(0.5, 0.25, -1.0), time=timefunc.ramp(2.0)
        ),
        NodalLoad(nodes=[4], force=(0.0, 10.0, 0.0), time=timefunc.constant(0.3)),
    ]
    model = build_model(x0, rot0, conn, sections(6), loads=loads)
    # rotate and move the nodes: dead loads do not care
    rot = np.einsum("ij,njk->nik", random_rotation(5), model.rot0)
    x = model.x0 + 1.0
    f, tau, pot = apply(model, 0.5, x, rot)
    assert pot == 0.0
    expected_f = np.zeros_like(f)
    expected_t = np.zeros_like(f)
    expected_f[[1, 4]] += 0.25 * np.array([1.0, -2.0, 3.0])
    expected_t[[1, 4]] += 0.25 * np.array([0.5, 0.25, -1.0])
    expected_f[4] += 0.3 * np.array([0.0, 10.0, 0.0])
    np.testing.assert_allclose(f, expected_f, rtol=ROUND, atol=ROUND)
    np.testing.assert_allclose(tau, expected_t, rtol=ROUND, atol=ROUND)
    # before the ramp only the constant load remains
    f, tau, _ = apply(model, -1.0, x, rot)
    expected_f = np.zeros_like(f)
    expected_f[4] = [0.0, 3.0, 0.0]
    np.testing.assert_allclose(f, expected_f, rtol=ROUND, atol=ROUND)
    np.testing.assert_array_equal(tau, 0.0)


def test_loads_accumulate_into_given_arrays():
    x0, rot0, conn = polyline_rod()
    model = build_model(
        x0, rot0, conn, sections(6), loads=[NodalLoad(nodes=[2], force=(1.0, 2.0, 3.0))]
    )
    f = np.ones_like(x0)
    tau = np.full_like(x0, 2.0)
    external_forces(model.loads, 0.0, x0, rot0, rot0, model.mass, f, tau)
    np.testing.assert_array_equal(f[2], [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.delete(f, 2, axis=0), 1.0)
    np.testing.assert_array_equal(tau, 2.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_follower_load_rotates_with_its_node(seed):
    x0, rot0, conn = polyline_rod(seed)
    force = np.array([0.3, -1.2, 2.0])
    moment = np.array([-0.7, 0.4, 1.1])
    model = build_model(
        x0,
        rot0,
        conn,
        sections(6),
        loads=[
            NodalLoad(
                nodes=[3],
                force=tuple(force),
                moment=tuple(moment),
                follower=True,
                time=timefunc.constant(2.0),
            )
        ],
    )
    # at the reference state the follower load equals its given global value
    f, tau, _ = apply(model, 0.0)
    np.testing.assert_allclose(f[3], 2.0 * force, rtol=ROUND, atol=ROUND)
    np.testing.assert_allclose(tau[3], 2.0 * moment, rtol=ROUND, atol=ROUND)
    # rotate node 3 by q: f = R R0^T F = q F
    q = random_rotation(10 + seed)
    rot = model.rot0.copy()
    rot[3] = q @ model.rot0[3]
    f, tau, _ = apply(model, 0.0, rot=rot)
    np.testing.assert_allclose(f[3], 2.0 * rot[3] @ model.rot0[3].T @ force, atol=ROUND * 10)
    np.testing.assert_allclose(f[3], 2.0 * q @ force, atol=ROUND * 10)
    np.testing.assert_allclose(tau[3], 2.0 * q @ moment, atol=ROUND * 10)
    assert np.linalg.norm(q @ force - force) > 0.1
    # the load's material components are constant: R^T f = R0^T F
    np.testing.assert_allclose(rot[3].T @ f[3], 2.0 * model.rot0[3].T @ force, atol=ROUND * 10)
    assert np.all(np.delete(f, 3, axis=0) == 0.0)


@pytest.mark.parametrize(
    ("t", "value"),
    [(-1.0, 0.0), (0.0, 0.0), (1.25, 100.0), (2.5, 200.0), (3.75, 100.0), (5.0, 0.0), (6.0, 0.0)],
)
def test_table_pulse_time_function(t, value):
    x0, rot0, conn = polyline_rod()
    load = NodalLoad(
        nodes=[6],
        force=(1.0, 0.0, 0.0),
        moment=(0.0, 0.5, 1.0),
        time=timefunc.table(SPAGHETTI_PULSE),
    )
    model = build_model(x0, rot0, conn, sections(6), loads=[load])
    f, tau, _ = apply(model, t)
    np.testing.assert_allclose(f[6], [value, 0.0, 0.0], rtol=ROUND, atol=ROUND)
    np.testing.assert_allclose(tau[6], [0.0, 0.5 * value, value], rtol=ROUND, atol=ROUND)
    np.testing.assert_array_equal(model.kinks, [0.0, 2.5, 5.0])


def test_gravity_forces_and_potential():
    x0, rot0, conn = polyline_rod()
    g = np.array([0.0, -1.0, -9.81])
    pms = [PointMass(nodes=np.array([2]), mass=4.0)]
    model = build_model(
        x0,
        rot0,
        conn,
        sections(6),
        gravity=[Gravity(g=tuple(g), time=timefunc.ramp(4.0))],
        point_masses=pms,
    )
    rng = np.random.default_rng(0)
    x = model.x0 + rng.normal(size=model.x0.shape)
    f, tau, pot = apply(model, 3.0, x)
    s = 0.75
    np.testing.assert_allclose(f, s * model.mass[:, None] * g, rtol=ROUND, atol=ROUND)
    np.testing.assert_array_equal(tau, 0.0)
    assert pot == pytest.approx(-s * np.sum(model.mass * (x @ g)), rel=ROUND)
    # total weight includes the point mass: sum m = rhoA-sum + 4
    np.testing.assert_allclose(f.sum(axis=0), s * model.mass.sum() * g, rtol=ROUND)
    # the force is minus the gradient of the potential (it is linear in x)
    dx = np.zeros_like(x)
    dx[4, 2] = 0.37
    _, _, pot2 = apply(model, 3.0, x + dx)
    assert pot2 - pot == pytest.approx(-f[4, 2] * 0.37, rel=1e-12)


def test_gravity_entries_add_and_must_share_a_time_function():
    ld = pack_loads((), [Gravity(g=(0.0, 0.0, -9.0)), Gravity(g=(1.0, 0.0, 0.0))])
    np.testing.assert_array_equal(ld.gravity, [1.0, 0.0, -9.0])
    with pytest.raises(ValueError, match="time function"):
        pack_loads(
            (),
            [
                Gravity(g=(0.0, 0.0, -9.0), time=timefunc.ramp(1.0)),
                Gravity(g=(1.0, 0.0, 0.0), time=timefunc.ramp(2.0)),
            ],
        )


def test_no_loads():
    x0, rot0, _ = polyline_rod()
    f = np.zeros_like(x0)
    tau = np.zeros_like(x0)
    pot = external_forces(pack_loads(()), 1.0, x0, rot0, rot0, np.ones(x0.shape[0]), f, tau)
    assert pot == 0.0
    assert not f.any()
    assert not tau.any()
