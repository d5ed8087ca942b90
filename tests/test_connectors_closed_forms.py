"""Connectors against closed forms (docs/connectors.md, issue 34): two masses on a spring in
both schemes with both momenta exact, a mass bouncing on a cable, the plastic work of
displacement cycles, an equilibrium against the hand solution, and a restart of a run whose
plastic slip moves on across it."""

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import cli_run

from rodsim import api
from rodsim.integrators import dynamics, implicit
from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix
from rodsim.model import connectors as mc
from rodsim.model import forces, timefunc
from rodsim.model.assembly import PointMass, build_model
from rodsim.model.loads import Gravity
from rodsim.model.prescribed import Prescribed
from rodsim.results import read_results
from rodsim.terms import connectors as term

INPUTS = Path(__file__).resolve().parents[1] / "inputs" / "connectors"
J = np.eye(3) * 0.01  # rotary inertia of the point masses


def _model(x0, rot0, items, masses, **kw):
    return build_model(
        x0, rot0, np.zeros((0, 2)), [],
        point_masses=[PointMass(np.array([a]), m, J) for a, m in enumerate(masses)],
        term_arrays={"connectors": mc.pack_connectors(items, x0, rot0)}, **kw,
    )  # fmt: skip


def _start(model, scheme, dt, state=None):
    state = dynamics.initial_state(model) if state is None else state
    if scheme == "explicit":
        return dynamics.start(model, dt, state=state), dynamics.advance
    return implicit.start(model, dt, state=state, tol=1e-13), implicit.advance


def _momenta(run):
    st = run.state
    return st.p.sum(axis=0), (np.cross(st.x, st.p) + st.pi).sum(axis=0)


def _crossings(t, s):
    """Times where s crosses zero downwards (linear interpolation between samples)."""
    i = np.flatnonzero((s[:-1] > 0.0) & (s[1:] <= 0.0))
    return t[i] + (t[i + 1] - t[i]) * s[i] / (s[i] - s[i + 1])


# the schemes' discrete frequencies of a linear oscillator: Stoermer-Verlet (explicit) and the
# midpoint rule (the implicit VI's translations)
DISCRETE = {
    "explicit": lambda w, dt: 2.0 / dt * math.asin(w * dt / 2.0),
    "implicit": lambda w, dt: 2.0 / dt * math.atan(w * dt / 2.0),
}


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_two_free_masses_on_a_spring(scheme):
    """Masses m1, m2 joined by a spring k, released stretched: the stretch oscillates at the
    scheme's discrete frequency of omega = sqrt(k (m1 + m2) / (m1 m2)) within 1e-6 (zero
    crossings over 4 periods), so within 1e-4 of omega itself at omega dt = 0.02 (Verlet
    (omega dt)^2 / 24 = 1.7e-5, midpoint / 12 = 3.3e-5); the momenta stay zero."""
    m1, m2, k = 1.0, 3.0, 200.0
    x0, rot0 = np.array([[0.0, 0, 0], [1.0, 0, 0]]), np.stack([np.eye(3)] * 2)
    model = _model(
        x0, rot0, [mc.Connector(np.array([0]), np.array([1]), stiffness=(k,) * 3)], [m1, m2]
    )
    omega = math.sqrt(k * (m1 + m2) / (m1 * m2))
    dt = 0.02 / omega
    state = dynamics.initial_state(model)
    state.x[1, 0] += 0.01
    run, advance = _start(model, scheme, dt, state)
    n = int(4.2 * 2 * math.pi / omega / dt)
    stretch = np.empty(n)
    for i in range(n):
        advance(run, 1)
        stretch[i] = run.state.x[1, 0] - run.state.x[0, 0] - 1.0
    tc = _crossings(dt * np.arange(1, n + 1), stretch)
    measured = 2 * math.pi * (len(tc) - 1) / (tc[-1] - tc[0])
    assert measured == pytest.approx(DISCRETE[scheme](omega, dt), rel=1e-6)
    assert measured == pytest.approx(omega, rel=1e-4)
    linear, angular = _momenta(run)
    assert np.abs(linear).max() <= 1e-14 and np.abs(angular).max() <= 1e-14


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_momenta_are_exact_with_springs_in_a_nodes_frame(scheme):
    """Two masses tumbling in 3D on translational and rotational springs and dashpots in node
    a's frame (and a cable): the linear and angular momenta keep their initial values to
    round-off (1e-12 of their size) over 400 steps."""
    rng = np.random.default_rng(3)
    x0 = np.array([[0.0, 0, 0], [1.0, 0.3, -0.2]])
    rot0 = np.array([as_matrix(so3.exp(tuple(rng.normal(size=3)))) for _ in range(2)])
    items = [
        mc.Connector(np.array([0]), np.array([1]), frame="node", stiffness=(50, 80, 120),
                     damping=(0.5, 0.2, 0.1), rotational_stiffness=(2, 3, 4),
                     rotational_damping=(0.01, 0.02, 0.03)),
        mc.Connector(np.array([0]), np.array([1]), "cable", stiffness=(30, 0, 0), length=0.9),
    ]  # fmt: skip
    model = _model(x0, rot0, items, [1.0, 2.0])
    state = dynamics.initial_state(
        model,
        velocity=rng.normal(size=(2, 3)),
        angular_velocity=rng.normal(size=(2, 3)),
        rigid=False,
    )
    run, advance = _start(model, scheme, 2e-3, state)
    before = _momenta(run)
    advance(run, 400)
    after = _momenta(run)
    for b, a in zip(before, after, strict=True):
        assert np.abs(a - b).max() <= 1e-12 * (np.abs(b).max() + 1.0)
    assert not np.allclose(run.state.x, x0)  # it moved


def test_mass_bouncing_on_a_cable():
    """A mass m on a cable of stiffness k from a fixed point, released at rest with the cable
    slack by h, bounces back to its apex with the period T = 2 sqrt(2h/g) + (2/w)(pi -
    arccos(d/A)), w = sqrt(k/m), d = m g / k, A = sqrt(d^2 + 2 g h / w^2), within 1e-3 (the
    explicit scheme at w dt = 0.003: its error at the cable's kinks is far smaller); the cable
    never pushes: its tension is >= 0, and 0 while slack."""
    m, k, g, h, length = 2.0, 2000.0, 9.81, 0.05, 1.0
    x0 = np.array([[0.0, 0, 0], [0.0, 0, -(length - h)]])
    fixed = np.zeros((2, 6), dtype=bool)
    fixed[0] = True
    cable = mc.Connector(np.array([0]), np.array([1]), "cable", stiffness=(k, 0, 0), length=length)
    model = _model(
        x0, np.stack([np.eye(3)] * 2), [cable], [1.0, m], fixed=fixed, gravity=[Gravity((0, 0, -g))]
    )
    w, d = math.sqrt(k / m), m * g / k
    amplitude = math.sqrt(d * d + 2 * g * h / w**2)
    period = 2 * math.sqrt(2 * h / g) + 2 / w * (math.pi - math.acos(d / amplitude))
    dt = 1e-4
    run = dynamics.start(model, dt)
    n = int(3.1 * period / dt)
    vz, tension, slack = np.empty(n), np.empty(n), np.empty(n, dtype=bool)
    cn, state = model.terms.connectors, model.terms.connectors_state
    for i in range(n):
        dynamics.advance(run, 1)
        st = run.state
        vz[i] = st.p[1, 2] / m
        quat = np.empty((2, 4))
        forces.quaternions(st.rot, quat, 0, 2)
        out = term.output(cn, state, st.x, st.rot, quat)
        tension[i] = out["force"][0, 0]
        slack[i] = out["elongation"][0, 0] <= 0.0
    apex = _crossings(dt * np.arange(1, n + 1), vz)  # upward to downward: the apexes
    assert len(apex) == 3
    np.testing.assert_allclose(np.diff(np.concatenate([[0.0], apex])), period, rtol=1e-3)
    assert tension.min() >= 0.0 and np.all(tension[slack] == 0.0)
    assert slack.any() and tension.max() > m * g  # it went slack and was stretched


# one cycle 0 -> u_max -> -u_max -> 0 of node b's displacement, twice
CYCLES = timefunc.table([[0, 0], [1, 1], [3, -1], [4, 0], [5, 1], [7, -1], [8, 0]])


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_plastic_work_of_displacement_cycles(scheme):
    """An elastic-perfectly-plastic connector (k, F_y), node a fixed, node b driven along x
    through cycles of amplitude u_max from rest: the first cycle dissipates F_y (4 u_max -
    5 F_y / k), every later one 4 F_y (u_max - F_y / k), within 1e-3 (the return mapping at
    each accepted step is exact for this piecewise linear path: the steps end on its
    corners)."""
    k, fy, u_max = 100.0, 1.0, 0.05
    # node 2 glides by, joined to nothing: a model whose every node is held has no momentum to
    # measure the implicit residual against (the constraint rows' round-off, ~2e-14, then never
    # meets tol x 1e-300)
    x0, rot0 = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 1.0, 0]]), np.stack([np.eye(3)] * 3)
    fixed = np.zeros((3, 6), dtype=bool)
    fixed[0] = True
    link = mc.Connector(
        np.array([0]),
        np.array([1]),
        "plastic",
        stiffness=(k, 0, 0),
        yield_force=(fy, np.inf, np.inf),
    )
    drive = Prescribed(np.array([1]), (u_max, 0.0, 0.0), time=CYCLES)
    model = _model(x0, rot0, [link], [1.0, 1.0, 1.0], fixed=fixed, prescribed=[drive])
    glide = dynamics.initial_state(model, velocity=[[0, 0, 0], [0, 0, 0], [0, 0, 1.0]], rigid=False)
    run, advance = _start(model, scheme, 0.01, glide)
    state = model.terms.connectors_state
    advance(run, 400)
    first = state.work[0]
    assert first == pytest.approx(fy * (4 * u_max - 5 * fy / k), rel=1e-3)
    advance(run, 400)
    assert state.work[0] - first == pytest.approx(4 * fy * (u_max - fy / k), rel=1e-3)
    assert term.TERM.dissipated(model.terms.connectors, state) == state.work[0]


def test_equilibrium_matches_the_hand_solution(tmp_path):
    """inputs/connectors/coupled_cantilevers.yaml: w1 = P (kc + k) / (kc (kc + 2k)), w2 =
    P k / (kc (kc + 2k)) with the 10-element cantilevers' tip stiffness kc = 3 EI / L^3 /
    (1 - 1/(4 n^2)) (one-point elements: the tip deflection of a tip load is short by
    P L^3 / (12 EI n^2)), within 1e-4: the geometric nonlinearity is ~ (w/L)^2 = 3.6e-5
    (measured 2.7e-5 and 3.2e-5, and 100 times less at a tenth of the load)."""
    result, out = cli_run(INPUTS / "coupled_cantilevers.yaml", tmp_path)
    assert result.exit_code == 0, result.output
    with h5py.File(out) as f:
        sets = f["mesh/sets"]
        a, b = sets["first.end"][0], sets["second.end"][0]
        w = f["nodes/position"][-1][[a, b], 2] - f["mesh/points"][[a, b], 2]
    p, k, n = 30.0, 6000.0, 10
    kc = 3 * 1.0e3 / (1 - 1 / (4 * n * n))
    expect = -p * np.array([kc + k, k]) / (kc * (kc + 2 * k))
    np.testing.assert_allclose(w, expect, rtol=1e-4)


def test_restart_with_plastic_slip_is_bit_identical(tmp_path):
    """inputs/connectors/slip_joint.yaml run to t = 0.6 and continued to 0.9 equals the run to
    0.9 bit for bit: the joint's slip, which moves on across the restart, is restarted."""
    case = INPUTS / "slip_joint.yaml"
    short = ("solver.t_end=0.6", "output.interval=0.1")
    full, part = tmp_path / "full.h5", tmp_path / "part.h5"
    api.run_case(case, full, vtk=False, overrides=("solver.t_end=0.9", "output.interval=0.1"))
    api.run_case(case, part, vtk=False, overrides=short)
    api.run_case(
        case, vtk=False, overrides=("solver.t_end=0.9", "output.interval=0.1"), restart=part
    )
    a, b = read_results(part), read_results(full)
    assert a.n_frames == b.n_frames == 10
    for name in ("time", "position", "rotation", "linear_momentum", "angular_momentum"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    with h5py.File(part) as f:  # the joint did slip before the restart
        slot = next(s for s in f["restart"] if "terms" in f["restart"][s])
        assert np.abs(f["restart"][slot]["terms/connectors/slip"][()]).max() > 1e-4
