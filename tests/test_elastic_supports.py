"""Elastic supports and foundations (rodsim.model.supports, docs/supports.md): exact gradients
against finite differences, closed-form frequencies in both schemes, the explicit stable step,
Hetenyi's beam on an elastic foundation, reactions in a global force balance, bad input."""

import h5py
import numpy as np
import pytest
from conftest import cli_run, survives

from rodsim.integrators import dynamics
from rodsim.integrators.stable_step import stable_step
from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix
from rodsim.mesh.generate import straight_rod
from rodsim.model import forces, supports
from rodsim.model.assembly import build_model
from rodsim.model.sections import section_from_resultants
from rodsim.model.supports import Support

RNG = np.random.default_rng(12)

BAR = """\
rodsim: 1
mesh:
  - rod: {{name: bar, from: [0, 0, 0], to: [1, 0, 0], elements: 1, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 2.0,
      rhoI: [0.01, 0.01], rhoJ: 0.02}}
masses:
  - {{set: bar.all, mass: 3.0, inertia: [0.5, 0.1, 0.1]}}
supports:
  - {support}
initial: {initial}
solver: {{scheme: {scheme}, dt: {dt}, t_end: {t_end}}}
output: {{every: 1, vtk: false}}
"""
M_NODE = 3.0 + 2.0 * 1.0 / 2  # point mass + half the rod's mass
J_NODE = 0.5 + 0.02 * 1.0 / 2  # about the rod axis


def _write(tmp_path, **fields):
    case = tmp_path / "bar.yaml"
    case.write_text(BAR.format(**fields))
    return case


def _oscillate(
    tmp_path, support: str, initial: str, scheme: str, omega: float, periods: float, *datasets
):
    """Run the bar case with `support` for `periods` periods of 2 pi / omega, 1000 steps a
    period, a frame every step; (time, *datasets) of the results."""
    dt = 2 * np.pi / omega / 1000
    case = _write(
        tmp_path,
        support=support,
        initial=initial,
        scheme=scheme,
        dt=dt,
        t_end=periods * 2 * np.pi / omega,
    )
    result, out = cli_run(case, tmp_path)
    assert result.exit_code == 0, result.output
    with h5py.File(out) as h5:
        return h5["time"][()], *(h5[name][()] for name in datasets)


def _frequency(t: np.ndarray, signal: np.ndarray) -> float:
    """Angular frequency from the zero crossings of a sampled sinusoid (linear interpolation
    between samples: with omega dt ~ 6e-3 the crossing times are exact to ~1e-6 of a period)."""
    s = signal
    i = np.flatnonzero(np.sign(s[:-1]) * np.sign(s[1:]) < 0)
    tc = t[i] - s[i] * (t[i + 1] - t[i]) / (s[i + 1] - s[i])
    half_periods = np.diff(tc)
    return float(np.pi / half_periods.mean())


def _random_supports(x0, rot0):
    nodes = np.arange(x0.shape[0])
    items = [
        Support(nodes, *(tuple(RNG.uniform(0.5, 2.0, 3)) for _ in range(4)), frame)
        for frame in supports.FRAMES
    ]
    return supports.pack_supports(items, x0, rot0)


def _state(n):
    part = straight_rod([0, 0, 0], [2, 1, 0.5], n - 1, up=[0, 0, 1])
    x = part.points + RNG.normal(scale=0.1, size=part.points.shape)
    rot = np.array(
        [as_matrix(so3.exp(tuple(RNG.normal(scale=0.6, size=3)))) @ r for r in part.frames]
    )
    return part.points, part.frames, x, rot


def _quat(rot):
    quat = np.empty((rot.shape[0], 4))
    forces.quaternions(rot, quat, 0, rot.shape[0])
    return quat


def _turn(rot, a, theta):
    out = rot.copy()
    out[a] = as_matrix(so3.exp(tuple(theta))) @ rot[a]
    return out


def test_spring_forces_are_the_exact_energy_gradient():
    """f = -dV/dx and tau = -dV/dtheta (spatial rotation variations) for springs in both
    frames at a large rotation (|psi| ~ 1): central differences agree to their O(e^2) error."""
    x0, rot0, x, rot = _state(4)
    sp = _random_supports(x0, rot0)
    f, tau = np.zeros_like(x), np.zeros_like(x)
    energy = supports.support_forces(sp, x, _quat(rot), f, tau)
    assert energy > 0

    def v(x_, rot_):
        return supports.support_forces(sp, x_, _quat(rot_), np.zeros_like(x), np.zeros_like(x))

    e = 1e-6
    for a in range(x.shape[0]):
        for k in range(3):
            d = np.zeros(3)
            d[k] = e
            xp, xm = x.copy(), x.copy()
            xp[a] += d
            xm[a] -= d
            assert -(v(xp, rot) - v(xm, rot)) / (2 * e) == pytest.approx(f[a, k], abs=1e-7)
            dtheta = -(v(x, _turn(rot, a, d)) - v(x, _turn(rot, a, -d))) / (2 * e)
            assert dtheta == pytest.approx(tau[a, k], abs=1e-7)


def test_dashpot_forces_derive_from_the_dissipation_function():
    """Dashpot forces are -dD/dv, -dD/domega of D = 1/2 (v.C_t v + psi'.C_r psi'),
    psi' = jl^{-1}(psi) Lambda0^T omega, and the power they return is 2 D >= 0."""
    x0, rot0, x, rot = _state(3)
    sp = _random_supports(x0, rot0)
    quat = _quat(rot)
    vel, omg = RNG.normal(size=x.shape), RNG.normal(size=x.shape)

    def damping(vel_, omg_):
        f, tau = np.zeros_like(x), np.zeros_like(x)
        power = supports.support_damping_forces(sp, quat, vel_, omg_, f, tau)
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


def test_section_frame_spring_equals_the_global_one_along_the_same_axes():
    """A spring [k1, k2, k3] in the section frame of a rod along y (d1 = y, d2 = -x, d3 = z)
    is the global spring [k2, k1, k3]; likewise for rotations."""
    part = straight_rod([0, 0, 0], [0, 2, 0], 2, up=[0, 0, 1])
    assert np.allclose(part.frames[0][:, 0], [0, 1, 0])
    nodes = np.arange(3)
    local = supports.pack_supports(
        [Support(nodes, (1, 2, 3), (4, 5, 6), frame="section")], part.points, part.frames
    )
    world = supports.pack_supports(
        [Support(nodes, (2, 1, 3), (5, 4, 6), frame="global")], part.points, part.frames
    )
    np.testing.assert_allclose(local.k_t, world.k_t, atol=1e-14)
    np.testing.assert_allclose(local.k_r, world.k_r, atol=1e-14)


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_mass_on_a_spring_oscillates_at_sqrt_k_over_m(tmp_path, scheme):
    """Both nodes on springs k along x, moving rigidly: x(t) = (v/omega) sin(omega t), omega =
    sqrt(k/m) within 1e-4 (the schemes' frequency errors are (omega dt)^2/24 and /12 ~ 3e-6)."""
    k = 400.0
    omega = np.sqrt(k / M_NODE)
    t, x = _oscillate(
        tmp_path,
        f"{{set: bar.all, spring: [{k}, 0, 0]}}",
        "{velocity: [0.01, 0, 0]}",
        scheme,
        omega,
        3.2,
        "nodes/position",
    )
    ux = x[:, 1, 0] - 1.0
    assert _frequency(t, ux) == pytest.approx(omega, rel=1e-4)
    assert np.max(np.abs(ux)) == pytest.approx(0.01 / omega, rel=1e-3)


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_rotational_spring_oscillates_at_sqrt_k_over_j(tmp_path, scheme):
    """Both nodes on torsional springs k_r about the rod axis, spinning rigidly about it (the
    rod stays unstrained): theta'' = -(k_r/J) theta exactly, omega = sqrt(k_r/J) within 1e-4;
    the angle reaches 0.4 rad, where psi = log(Lambda0^T Lambda) is still exactly theta e1."""
    k = 50.0
    omega = np.sqrt(k / J_NODE)
    t, q = _oscillate(
        tmp_path,
        f"{{set: bar.all, rotational_spring: [{k}, 0, 0], frame: section}}",
        f"{{angular_velocity: [{0.4 * omega}, 0, 0]}}",
        scheme,
        omega,
        3.2,
        "nodes/rotation",
    )
    q = q[:, 1]
    theta = 2 * np.arctan2(q[:, 1], q[:, 0])
    assert _frequency(t, theta) == pytest.approx(omega, rel=1e-4)
    assert np.max(np.abs(theta)) == pytest.approx(0.4, rel=1e-3)


def _sprung_rod(k):
    part = straight_rod([0, 0, 0], [1, 0, 0], 10, up=[0, 0, 1])
    sec = section_from_resultants(EA=1e3, GA=[1e3, 1e3], GJ=1, EI=[1, 1], rhoA=1, rhoI=[1e-3, 1e-3])
    return build_model(
        part.points, part.frames, part.conn, sec, supports=[Support(np.array([5]), (k, k, k))]
    )


def test_stiff_spring_sets_the_stable_step_and_the_blow_up():
    """A spring with k/m 100x the top element frequency^2 governs the step (the bound
    omega^2 <= omega_e^2 + k/m is then within 0.5% of the truth); the explicit scheme runs 4000
    steps at the estimate and blows up at 1.1x it."""
    soft = stable_step(_sprung_rod(0.0))
    k = 1.4e7  # m = 0.1, omega_top^2 = 1.4e6
    model = _sprung_rod(k)
    estimate = stable_step(model)
    m = model.mass[5]
    assert estimate == pytest.approx(2 / np.sqrt(k / m + (2 / soft) ** 2), rel=1e-12)
    assert estimate < 0.2 * soft

    def state():
        return dynamics.initial_state(model, velocity=(0.01, 0.02, -0.01))

    assert survives(model, 1.0 * estimate, state(), kinetic_limit=1e3)
    assert not survives(model, 1.1 * estimate, state(), kinetic_limit=1e3)


FOUNDATION = """\
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [{L}, 0, 0], elements: {n}, section: s,
          up: [0, 0, 1]}}
sections:
  s: {{type: rod, EA: 1.0e6, GA: [1.0e6, 1.0e6], GJ: 1.0, EI: [{EI}, {EI}], rhoA: 1,
      rhoI: [1.0e-3, 1.0e-3]}}
sets:
  middle: {{near: [{mid}, 0, 0]}}
boundary:
  - {{set: middle, fix: [rx]}}   # the foundation does not hold the spin about the axis
supports:
  - {{foundation: beam.all, modulus: [{k}, {k}, {k}]}}
loads:
  - {{set: middle, force: [0, 0, {P}]}}
solver: {{analysis: equilibrium, scheme: implicit}}
output: {{vtk: false}}
"""


def test_free_beam_on_winkler_foundation_matches_hetenyi(tmp_path):
    """Free-free beam, beta L = 12 (beta = (k/4EI)^(1/4) = 1), point load P at mid-span,
    beta h = 0.1: mid-span deflection P beta / (2k) within 0.5% (Hetenyi 1946; the finite
    length changes it by ~exp(-beta L / 2) = 0.25%); the reactions of the foundation
    balance the load."""
    ei, k, length, p = 1.0, 4.0, 12.0, -1e-3
    beta = (k / (4 * ei)) ** 0.25
    case = tmp_path / "winkler.yaml"
    case.write_text(FOUNDATION.format(L=length, n=120, EI=ei, k=k, mid=length / 2, P=p))
    result, out = cli_run(case, tmp_path)
    assert result.exit_code == 0, result.output
    with h5py.File(out) as h5:
        w = h5["nodes/position"][-1, 60, 2]
        reaction = h5["nodes/reaction_force"][-1]
        internal = h5["energy/internal"][-1]
    assert w == pytest.approx(p * beta / (2 * k), rel=5e-3)
    # global balance: the supports' forces carry the load. The residual's norm is at most
    # tol = 1e-8 x (loads + reactions ~ 2|P|); summed over the N = 121 nodes, sqrt(N) times it
    np.testing.assert_allclose(
        reaction.sum(axis=0), [0, 0, -p], atol=np.sqrt(121) * 1e-8 * 2 * abs(p)
    )
    # the foundation's energy is in the strain energy: at equilibrium under a dead load it is
    # half the load's work, 1/2 P w (Clapeyron)
    assert internal == pytest.approx(0.5 * p * w, rel=1e-6)


def test_spring_reaction_and_energy_in_a_cantilever(tmp_path):
    """A clamped cantilever propped by a spring at its tip: the spring's reaction is -k w_tip and
    the clamp's and spring's reactions balance the tip load."""
    case = tmp_path / "prop.yaml"
    case.write_text("""\
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 20, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e6, GA: [1.0e6, 1.0e6], GJ: 50, EI: [30, 30], rhoA: 1, rhoI: [1, 1]}
boundary:
  - {set: beam.start, fix: all}
supports:
  - {set: beam.end, spring: [0, 0, 20.0]}
loads:
  - {set: beam.end, force: [0, 0, -0.05]}
solver: {analysis: equilibrium, scheme: implicit}
output: {vtk: false}
""")
    result, out = cli_run(case, tmp_path)
    assert result.exit_code == 0, result.output
    with h5py.File(out) as h5:
        w = h5["nodes/position"][-1, -1, 2]
        reaction = h5["nodes/reaction_force"][-1]
    # beam and spring in parallel at the tip: w = P / (3EI/L^3 + k) (shear adds 1e-5)
    assert w == pytest.approx(-0.05 / (3 * 30 / 8 + 20.0), rel=1e-3)
    assert reaction[-1, 2] == pytest.approx(-20.0 * w, rel=1e-9)
    # the balance holds to sqrt(N) x the equilibrium tolerance 1e-8 x (loads + reactions
    # ~ 0.1), N = 21 nodes
    np.testing.assert_allclose(reaction.sum(axis=0), [0, 0, 0.05], atol=np.sqrt(21) * 1e-8 * 0.1)


@pytest.mark.parametrize(
    "support, key, words",
    [
        ("{foundation: bar.end, modulus: [1, 1, 1]}", "supports[0].foundation", "rod elements"),
        ("{set: bar.end, spring: [1, 1, 1], frame: local}", "supports[0].frame", "global"),
        ("{set: bar.end}", "supports[0]", "at least one of"),
        ("{set: bar.end, spring: [1, -1, 1]}", "supports[0].spring[1]", ">= 0"),
        ("{set: nowhere, spring: [1, 1, 1]}", "supports[0].set", "nowhere"),
    ],
)
def test_bad_supports_are_refused_with_the_key(tmp_path, support, key, words):
    case = _write(tmp_path, support=support, initial="{}", scheme="explicit", dt=0.001, t_end=0.01)
    result, _ = cli_run(case, tmp_path)
    assert result.exit_code == 2, result.output
    assert key in result.output, result.output
    assert words in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_dashpot_decays_at_c_over_2m(tmp_path, scheme):
    """A mass on a spring and a dashpot (zeta = 0.05): the extrema of x(t) = A exp(-s t)
    sin(omega_d t) decay at s = c / (2m) and the zero crossings give omega_d = omega
    sqrt(1 - zeta^2). The explicit scheme's damping force uses the momentum lagged half a
    step, tau = dt/2: an added stiffness c tau omega^2 that raises omega_d by s tau = 1.6e-4
    (measured 1.58e-4), and a relative error ~ omega tau = 3e-3 in s; hence 5e-4 on omega_d
    and 1e-2 on s. The reactions of the free nodes are the spring and dashpot forces at the
    frame's velocity."""
    k, zeta = 400.0, 0.05
    omega = np.sqrt(k / M_NODE)
    c = 2 * zeta * M_NODE * omega
    t, x, v, r = _oscillate(
        tmp_path,
        f"{{set: bar.all, spring: [{k}, 0, 0], dashpot: [{c}, 0, 0]}}",
        "{velocity: [0.01, 0, 0]}",
        scheme,
        omega,
        4.2,
        "nodes/position",
        "nodes/velocity",
        "nodes/reaction_force",
    )
    ux, vx, reaction = x[:, 1, 0] - 1.0, v[:, 1, 0], r[:, 1, 0]
    assert _frequency(t, ux) == pytest.approx(omega * np.sqrt(1 - zeta**2), rel=5e-4)
    crossings = np.flatnonzero(np.sign(ux[:-1]) * np.sign(ux[1:]) < 0)
    peaks = [
        np.argmax(np.abs(ux[a:b])) + a for a, b in zip(crossings[:-1], crossings[1:], strict=True)
    ]
    rate = -np.polyfit(t[peaks], np.log(np.abs(ux[peaks])), 1)[0]
    assert rate == pytest.approx(c / (2 * M_NODE), rel=1e-2)
    np.testing.assert_allclose(reaction, -(k * ux + c * vx), atol=1e-12 * k * 0.01 / omega)


def test_springs_at_one_node_add_up_in_the_stable_step():
    """Two support entries on the same node (a foundation and a spring, say) act as one spring
    k1 + k2: the estimate is 2 / sqrt((k1 + k2)/m + omega_e^2), not the stiffer one alone."""
    soft = stable_step(_sprung_rod(0.0))
    one = _sprung_rod(1.4e7)
    two = build_model(
        one.x0,
        one.rot0,
        one.rods.conn,
        section_from_resultants(EA=1e3, GA=[1e3, 1e3], GJ=1, EI=[1, 1], rhoA=1, rhoI=[1e-3, 1e-3]),
        supports=[Support(np.array([5]), (1.4e7,) * 3), Support(np.array([5]), (1.4e7,) * 3)],
    )
    m = one.mass[5]
    assert stable_step(two) == pytest.approx(2 / np.sqrt(2.8e7 / m + (2 / soft) ** 2), rel=1e-12)
    assert stable_step(two) < stable_step(one)


ANGLE = """\
rodsim: 1
mesh:
  - rod: {{name: a, from: [0, 0, 0], to: [1, 0, 0], elements: 2, section: s, up: [0, 0, 1]}}
  - rod: {{name: b, from: [1, 0, 0], to: [1, 1, 0], elements: 2, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}}
sets:
  both: {{union: [a.all, b.all]}}
supports:
  - {{foundation: both, modulus: {modulus}, frame: section}}
solver: {{t_end: 0.01}}
output: {{vtk: false}}
"""


@pytest.mark.parametrize("modulus, code", [("[1, 2, 3]", 2), ("[2, 2, 2]", 0)])
def test_section_foundation_on_rods_at_an_angle(tmp_path, modulus, code):
    """Where a foundation's rods meet at an angle a node has no single section frame: a
    modulus per section direction is refused there (naming the key), an isotropic one runs."""
    case = tmp_path / "angle.yaml"
    case.write_text(ANGLE.format(modulus=modulus))
    result, _ = cli_run(case, tmp_path)
    assert result.exit_code == code, result.output
    if code:
        assert "supports[0].frame" in result.output
        assert "angle" in result.output
