"""Static equilibrium (`analysis: equilibrium`): Newton on the static residual with load steps,
pseudo-transient continuation where Newton alone fails, and the benchmarks of issue 4 through
the CLI path (case file -> HDF5)."""

import importlib.util
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import GROUPS, cli_run

from rodsim.cli import main
from rodsim.errors import NumericalError
from rodsim.integrators import equilibrium
from rodsim.mesh.generate import straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad
from rodsim.model.prescribed import Prescribed
from rodsim.model.sections import section_from_resultants

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ROOT / "inputs"

# Kynema (kynema/kynema docs/sphinx/testing/curved.rst), converged LSFE, P = 600, in the frame
# of inputs/bend45 (tangent at the root along +x, arc curving towards -y, load along +z)
BEND_REFERENCE = np.array([-23.64597, 13.72080, 53.57765])


def _run(case, tmp_path, *overrides):
    return cli_run(case, tmp_path, *overrides)


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("steps", [1, 4])
def test_rollup_closes_the_circle(tmp_path, group, steps):
    """M = 2 pi EI / L: the tip returns to the root to 1e-6 L (seen: ~1e-12 L), the nodes form
    the regular polygon with chords h (inscribed in a circle of radius h / (2 sin(pi/n))),
    one frame per load step with the multiplier as time, and the solver group records
    iterations and residuals."""
    res, out = _run(
        INPUTS / "rollup/rollup.yaml",
        tmp_path,
        f"solver.group={group}",
        f"solver.equilibrium.load_steps={steps}",
    )
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        np.testing.assert_allclose(f["time"][:], np.linspace(0, 1, steps + 1))
        x = f["nodes/position"][-1]
        iterations = f["solver/iterations"][1:]
        residual = f["solver/residual"][1:]
        m_z = f["rods/moment"][-1][:, 2]
    length, n = 10.0, 10
    assert np.linalg.norm(x[-1]) < 1e-6 * length
    corners = x[:-1]
    radius = (length / n) / (2 * np.sin(np.pi / n))
    np.testing.assert_allclose(
        np.linalg.norm(corners - corners.mean(axis=0), axis=1), radius, rtol=1e-9
    )
    np.testing.assert_allclose(m_z, 2 * np.pi * 2 / length, rtol=1e-9)  # M = EI kappa
    assert np.all(residual <= 1e-8)
    assert np.all(iterations >= 1)


def test_bend45_matches_the_converged_reference(tmp_path):
    """Bathe-Bolourchi 45-degree bend, 16 elements, 4 load steps: the tip displacement at
    P = 600 is within 0.5% (vector norm) of Kynema's converged value."""
    res, out = _run(INPUTS / "bend45/bend45.yaml", tmp_path)
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        u = f["nodes/position"][:, -1] - f["mesh/points"][-1]
        np.testing.assert_allclose(f["time"][:], [0, 0.25, 0.5, 0.75, 1.0])
    error = np.linalg.norm(u[-1] - BEND_REFERENCE) / np.linalg.norm(BEND_REFERENCE)
    assert error < 5e-3, (u[-1], error)
    # the path is monotone out of plane (P = 150, 300, 450, 600)
    assert np.all(np.diff(u[:, 2]) > 0)


def test_bend45_converges_in_h(tmp_path):
    """The tip displacement converges at order 2 in the element size (8, 16, 32 elements)."""
    tips = []
    for n in (8, 16, 32):
        res, out = _run(INPUTS / "bend45/bend45.yaml", tmp_path, f"mesh.0.arc.elements={n}")
        assert res.exit_code == 0, res.output
        with h5py.File(out) as f:
            tips.append(f["nodes/position"][-1, -1])
    ratio = np.linalg.norm(tips[0] - tips[1]) / np.linalg.norm(tips[1] - tips[2])
    assert 3.5 < ratio < 4.5, ratio


def _shooting_bend(loads):
    """The continuum solution of validation/bend45/shooting.py (scipy shooting, independent of
    rodsim's elements), for inputs/bend45's arc, whose centre is on the -y side."""
    spec = importlib.util.spec_from_file_location(
        "shooting", INPUTS.parent / "validation" / "bend45" / "shooting.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tip_displacements(loads, centre_side=-1.0)


def test_bend45_converges_to_the_continuum_solution(tmp_path):
    """Richardson-extrapolated tips of 16 and 32 elements agree with the shooting solution of
    the same continuum problem to 1e-4 at P = 150, 300, 450, 600 (seen: (-23.5613, 13.6050,
    53.4761) at P = 600 from both; Kynema's LSFE value differs from it by 0.4%)."""
    tips = []
    for n in (16, 32):
        res, out = _run(INPUTS / "bend45/bend45.yaml", tmp_path, f"mesh.0.arc.elements={n}")
        assert res.exit_code == 0, res.output
        with h5py.File(out) as f:
            tips.append(f["nodes/position"][1:, -1] - f["mesh/points"][-1])
    extrapolated = tips[1] + (tips[1] - tips[0]) / 3
    exact = _shooting_bend([150.0, 300.0, 450.0, 600.0])
    err = np.linalg.norm(extrapolated - exact, axis=1) / np.linalg.norm(exact, axis=1)
    assert np.all(err < 1e-4), err


def test_cantilever_tip_load_matches_mattiasson(tmp_path):
    """100 elements, P L^2 / EI = 2, 5 load steps: a handful of Newton iterations per load
    step to a relative residual of 1e-8; the tip agrees with the elliptic-integral solution
    (Mattiasson 1981: vertical 0.49346 L, horizontal 0.16064 L; shear flexibility adds ~1e-5)."""
    res, out = _run(INPUTS / "cantilever_tip/cantilever_tip.yaml", tmp_path)
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        tip = f["nodes/position"][-1, -1]
        iterations = f["solver/iterations"][1:]
        residual = f["solver/residual"][1:]
        reaction = f["nodes/reaction_force"][-1]
        reaction_moment = f["nodes/reaction_moment"][-1]
    assert np.all(iterations <= 8)
    assert np.all(residual <= 1e-8)
    assert abs(-tip[2] - 0.49346) < 1e-3
    assert abs(1 - tip[0] - 0.16064) < 1e-3
    # the clamp carries the load and its moment about the root; nothing elsewhere
    np.testing.assert_allclose(reaction[0], [0, 0, 700], atol=1e-5)
    np.testing.assert_allclose(reaction_moment[0], [0, -700 * tip[0], 0], rtol=1e-9, atol=1e-6)
    assert not np.any(reaction[1:])
    assert not np.any(reaction_moment[1:])


def test_displacement_control_passes_the_limit_point(tmp_path):
    """Lee's frame with the load point's vertical displacement prescribed (the horizontal one
    free, `displacement: [null, -60, null]`): the load it carries, its support reaction, rises
    to the limit load (18.79e3 with 10 elements per member) and falls past it."""
    res, out = _run(
        INPUTS.parent / "validation/lee_frame/case.yaml",
        tmp_path,
        "solver.equilibrium.load_steps=60",
    )
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        node = f["mesh/sets/load_point"][0]
        lam = f["time"][:]
        u = f["nodes/position"][:, node] - f["mesh/points"][node]
        load = -f["nodes/reaction_force"][:, node, 1]
    np.testing.assert_allclose(u[:, 1], -60 * lam, atol=1e-12)
    assert u[-1, 0] > 10.0  # the free horizontal component moved
    peak = np.argmax(load)
    assert 0 < peak < len(lam) - 1
    assert load[-1] < load[peak]
    assert abs(load[peak] / 18790 - 1) < 5e-3


def _bar(n=4, prescribed=(), fixed_end=True, load=None):
    part = straight_rod([0, 0, 0], [2, 0, 0], n, up=[0, 0, 1])
    sec = section_from_resultants(EA=300, GA=[200, 200], GJ=7, EI=[5, 6], rhoA=1, rhoI=[0.01, 0.01])
    fixed = np.zeros((n + 1, 6), dtype=bool)
    if fixed_end:
        fixed[0] = True
    loads = [] if load is None else [load]
    return build_model(
        part.points, part.frames, part.conn, sec, fixed=fixed, prescribed=prescribed, loads=loads
    )


@pytest.mark.parametrize("group", GROUPS)
def test_prescribed_stretch_and_twist(group):
    """Prescribed end displacement and rotation reach their targets; the resultants are the
    exact N = EA u / L and T = GJ phi / L of a uniform stretch and twist."""
    end = np.array([4])
    model = _bar(
        prescribed=[
            Prescribed(end, displacement=(0.1, 0, 0), rotation=(0.3, 0, 0), time=timefunc.ramp(1.0))
        ]
    )
    eq = equilibrium.start(model, group, h0=0.01)
    for lam in (0.5, 1.0):
        step = equilibrium.solve_load_step(eq, lam)
        assert step.residual <= 1e-8
    np.testing.assert_allclose(eq.x[-1], [2.1, 0, 0], atol=1e-12)
    from rodsim.model.rod import element_fields

    out = [np.empty((4, 3)) for _ in range(4)]
    element_fields(model.rods, eq.x, eq.rot, *out)
    force, moment = out[2], out[3]
    np.testing.assert_allclose(force[:, 0], 300 * 0.1 / 2, rtol=1e-9)
    np.testing.assert_allclose(moment[:, 0], 7 * 0.3 / 2, rtol=1e-6)


@pytest.mark.parametrize("group", GROUPS)
def test_continuation_takes_over_where_newton_fails(group):
    """Two full turns in one load step: plain Newton from the straight rod does not converge,
    pseudo-transient continuation gets there and ends in Newton (residual 1e-8), and the
    tip is back at the root."""
    n, length, ei = 20, 10.0, 2.0
    moment = 2 * 2 * np.pi * ei / length
    load = NodalLoad(nodes=[n], moment=(0, 0, moment), time=timefunc.ramp(1.0))
    part = straight_rod([0, 0, 0], [length, 0, 0], n, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e4, GA=[1e4, 1e4], GJ=2, EI=[ei, ei], rhoA=1, rhoI=[0.01, 0.01]
    )
    fixed = np.zeros((n + 1, 6), dtype=bool)
    fixed[0] = True
    model = build_model(part.points, part.frames, part.conn, sec, fixed=fixed, loads=[load])
    eq = equilibrium.start(model, group, h0=0.02)
    assert not equilibrium.newton(eq, 1.0, 25).converged  # the reason continuation exists
    step = equilibrium.solve_load_step(eq, 1.0)
    assert step.pseudo_steps > 0
    assert step.residual <= 1e-8
    assert np.linalg.norm(eq.x[-1]) < 1e-6 * length


def test_no_equilibrium_reached_is_exit_3(tmp_path):
    """A cantilever bent far by a following tip force in one load step, with 3 pseudo-time
    steps of 3 Newton iterations allowed, does not get there: exit 3 with a message that names
    the load multiplier and what to change, and the frames so far (the reference) kept. (A
    free rod under a dead force, which has no equilibrium at all, is refused before:
    tests/test_mechanisms.py.)"""
    case = tmp_path / "short.yaml"
    case.write_text("""
rodsim: 1
mesh:
  - rod: {name: r, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s}
sections:
  s: {type: rod, EA: 100, GA: [100, 100], GJ: 1, EI: [1, 1], rhoA: 1, rhoI: [0.01, 0.01]}
boundary:
  - {set: r.start, fix: all}
loads:
  - {set: r.end, force: [0, 30, 0], follower: true}
solver: {analysis: equilibrium, scheme: implicit, equilibrium: {max_steps: 3},
         newton: {max_iter: 3}}
""")
    res, out = _run(case, tmp_path)
    assert res.exit_code == 3, res.output
    assert "load multiplier 1" in res.output
    assert "load_steps" in res.output
    # a stiffening path: the tangent at the start of the step is the reference's
    assert "likely cause: the load step from 0 to 1 is too large" in res.output
    with h5py.File(out) as f:
        assert f["time"][:].tolist() == [0.0]


def test_a_step_past_a_limit_point_names_it_as_the_likely_cause(tmp_path):
    """Lee's frame under a dead force of 20000 (its limit load is 18761, the digitised curve
    in validation/lee_frame) in 10 load steps: the last step starts at 0.9 (18000, 0.96 of
    the limit), where the tangent's lowest eigenvalue has fallen to 0.11 of the
    reference's, and cannot reach 20000 near by: the message says limit point."""
    text = (ROOT / "validation/lee_frame/case.yaml").read_text()
    text = text.replace(
        "  - {set: load_point, prescribe: {displacement: [null, -60, null]}}   # scaled by lambda",
        "",
    ).replace("equilibrium: {load_steps: 120}", "equilibrium: {load_steps: 10, max_steps: 30}")
    case = tmp_path / "lee.yaml"
    case.write_text(text + "loads:\n  - {set: load_point, force: [0, -20000, 0]}\n")
    res, out = _run(case, tmp_path)
    assert res.exit_code == 3, res.output
    assert "likely cause: a limit or bifurcation point near load 0.9" in res.output
    assert "controlling a displacement" in res.output


def test_equilibrium_needs_no_t_end_but_dynamics_does(tmp_path):
    case = tmp_path / "c.yaml"
    text = (INPUTS / "rollup/rollup.yaml").read_text()
    case.write_text(text)
    assert CliRunner().invoke(main, ["check", str(case)]).exit_code == 0
    res = CliRunner().invoke(main, ["check", str(case), "--set", "solver.analysis=dynamic"])
    assert res.exit_code == 2
    assert "solver.t_end" in res.output


@pytest.mark.parametrize("group", GROUPS)
def test_stability_test_finds_the_euler_load(group):
    """A straight cantilever column under a dead axial compression P stays straight in Newton's
    solution; that equilibrium is stable below Euler's load pi^2 EI / (4 L^2) and a saddle
    above it (the tangent stiffness stops being positive definite)."""
    n, length, ei = 20, 1.0, 2.0
    euler = np.pi**2 * ei / (4 * length**2)
    part = straight_rod([0, 0, 0], [length, 0, 0], n, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e5, GA=[1e5, 1e5], GJ=3, EI=[ei, ei], rhoA=1, rhoI=[0.01, 0.01]
    )
    fixed = np.zeros((n + 1, 6), dtype=bool)
    fixed[0] = True
    for factor, stable in ((0.97, True), (1.03, False)):
        load = NodalLoad(nodes=[n], force=(-factor * euler, 0, 0), time=timefunc.ramp(1.0))
        model = build_model(part.points, part.frames, part.conn, sec, fixed=fixed, loads=[load])
        eq = equilibrium.start(model, group, h0=0.01)
        eq.check_stability = False  # reach the straight solution whatever its stability
        assert equilibrium.newton(eq, 1.0, 25).converged
        assert np.abs(eq.x[:, 1:]).max() < 1e-12
        _, _, _, _, sd = equilibrium.static_residual(eq, 1.0)
        assert eq.solver.positive_definite(sd, np.zeros((n + 1, 6))) is stable


def test_buckling_branch_is_followed(tmp_path):
    """Argyris' right-angle frame with a 1e-4 imperfection: below the critical tip force
    (about 1.09 N) the lateral displacement stays small; past it the stable, buckled branch
    is found (Newton alone would stay on the unstable in-plane branch)."""
    res, out = _run(
        INPUTS.parent / "validation/argyris_frame/case.yaml",
        tmp_path,
        "solver.equilibrium.load_steps=20",
    )
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        force = 1.5 * f["time"][:]
        uz = np.abs(f["nodes/position"][:, -1, 2])
    assert np.all(uz[force < 1.0] < 1.0)
    assert np.all(uz[force > 1.2] > 20.0)


def _column(factor, n=10):
    length, ei = 1.0, 2.0
    part = straight_rod([0, 0, 0], [length, 0, 0], n, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e5, GA=[1e5, 1e5], GJ=3, EI=[ei, ei], rhoA=1, rhoI=[0.01, 0.01]
    )
    fixed = np.zeros((n + 1, 6), dtype=bool)
    fixed[0] = True
    load = NodalLoad(nodes=[n], force=(-factor * np.pi**2 * ei / 4, 0, 0), time=timefunc.ramp(1.0))
    return build_model(part.points, part.frames, part.conn, sec, fixed=fixed, loads=[load])


def test_a_perfect_column_past_euler_is_reported_as_a_bifurcation():
    """Without an imperfection nothing leads the path off the straight, unstable branch: the
    run stops promptly with exit-3 advice (add an imperfection), not after max_steps."""
    eq = equilibrium.start(_column(1.03), "SO3xR3", h0=0.01, max_steps=10000)
    with pytest.raises(NumericalError, match="unstable.*imperfection") as info:
        equilibrium.solve_load_step(eq, 1.0)
    assert info.value.step < 100


def test_unsupported_rigid_motions_are_not_instabilities():
    """A free rod under no load is in neutral equilibrium, which Newton accepts at once; under
    equal and opposite end pulls (singular tangent: continuation) it stretches by N L / EA."""
    part = straight_rod([0, 0, 0], [1, 0, 0], 4, up=[0, 0, 1])
    sec = section_from_resultants(EA=100, GA=[100, 100], GJ=1, EI=[1, 1], rhoA=1, rhoI=[0.01, 0.01])
    pulls = [NodalLoad(nodes=[0], force=(-1, 0, 0)), NodalLoad(nodes=[4], force=(1, 0, 0))]
    for loads in ([], pulls):
        model = build_model(part.points, part.frames, part.conn, sec, loads=loads)
        eq = equilibrium.start(model, "SO3xR3", h0=0.01)
        step = equilibrium.solve_load_step(eq, 1.0)
        assert step.residual <= 1e-8
        if not loads:
            assert step.pseudo_steps == 0
            assert step.iterations == 0
        else:
            np.testing.assert_allclose(eq.x[4, 0] - eq.x[0, 0], 1.01, rtol=1e-9)


def test_prescribed_rotation_faster_than_the_cayley_chart_is_an_input_error(tmp_path):
    """A prescribed rotation of 4.5 rad in one load step cannot be followed by the Cayley
    update (it would silently go the short way round): exit 2 naming load_steps."""
    case = tmp_path / "twist.yaml"
    case.write_text("""
rodsim: 1
mesh:
  - rod: {name: r, from: [0, 0, 0], to: [10, 0, 0], elements: 20, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 2, EI: [2, 2], rhoA: 1, rhoI: [0.01, 0.01]}
boundary:
  - {set: r.start, fix: all}
  - {set: r.end, prescribe: {rotation: [0, 0, 4.5]}}
solver: {analysis: equilibrium, scheme: implicit}
""")
    res, out = _run(case, tmp_path)
    assert res.exit_code == 2, res.output
    assert "solver.equilibrium.load_steps" in res.output
    assert "at least 2" in res.output
    res, out = _run(case, tmp_path, "solver.equilibrium.load_steps=2")
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        moment = f["rods/moment"][-1][:, 2]
    np.testing.assert_allclose(moment, 2 * 4.5 / 10, rtol=1e-6)  # EI kappa, the long way
