"""Static equilibrium (`analysis: equilibrium`): Newton on the static residual with load steps,
pseudo-transient continuation where Newton alone fails, and the benchmarks of issue 4 through
the CLI path (case file -> HDF5)."""

from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import GROUPS

from rodsim.cli import main
from rodsim.integrators import equilibrium
from rodsim.mesh.generate import straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad
from rodsim.model.prescribed import Prescribed
from rodsim.model.sections import section_from_resultants

INPUTS = Path(__file__).resolve().parents[1] / "inputs"

# Kynema (kynema/kynema docs/sphinx/testing/curved.rst), converged LSFE, P = 600, in the frame
# of inputs/bend45 (tangent at the root along +x, arc curving towards -y, load along +z)
BEND_REFERENCE = np.array([-23.64597, 13.72080, 53.57765])


def _run(case, tmp_path, *overrides):
    out = tmp_path / "out.h5"
    args = ["run", str(case), "-o", str(out), "-q", "--no-vtk"]
    for o in overrides:
        args += ["--set", o]
    res = CliRunner().invoke(main, args)
    return res, out


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("steps", [1, 4])
def test_rollup_closes_the_circle(tmp_path, group, steps):
    """M = 2 pi EI / L: the tip returns to the root to 1e-6 L (seen: ~1e-12 L), the nodes form
    the regular polygon with chords h (inscribed in a circle of radius h / (2 sin(pi/n))),
    one frame per load step with the multiplier as time, and the solver group records
    iterations and residuals."""
    res, out = _run(INPUTS / "rollup/rollup.yaml", tmp_path, f"solver.group={group}",
                    f"solver.equilibrium.load_steps={steps}")
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
    np.testing.assert_allclose(np.linalg.norm(corners - corners.mean(axis=0), axis=1), radius,
                               rtol=1e-9)
    np.testing.assert_allclose(m_z, 2 * np.pi * 2 / length, rtol=1e-9)  # M = EI kappa
    assert np.all(residual <= 1e-8) and np.all(iterations >= 1)


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
    """Independent reference: the Simo-Reissner boundary-value problem of the 45-degree bend
    solved by shooting (scipy solve_ivp + fsolve on the root moment), continuing in the load.
    With n = (0, 0, P) constant: x' = Lambda (E1 + C1^-1 Lambda^T n), Lambda' = Lambda
    hat(K0 + C2^-1 Lambda^T m), m' = -x' x n, m(L) = 0. Returns the tip displacements."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import fsolve

    radius, length = 100.0, 100.0 * np.pi / 4
    frame0 = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]])  # d1 = x, d2 = y, d3 = z at the root
    k0 = np.array([0.0, 0.0, -1.0 / radius])  # turning towards -y about d3
    c1 = np.array([1e7, 4.16667e6, 4.16667e6])
    c2 = np.array([8.333e5, 8.333e5, 8.333e5])

    def hat(v):
        return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])

    def rhs(_, y, n):
        lam = y[3:12].reshape(3, 3)
        xp = lam @ (np.array([1.0, 0, 0]) + lam.T @ n / c1)
        lp = lam @ hat(k0 + lam.T @ y[12:15] / c2)
        return np.concatenate([xp, lp.ravel(), -np.cross(xp, n)])

    def shoot(m0, n):
        y0 = np.concatenate([np.zeros(3), frame0.ravel(), m0])
        return solve_ivp(rhs, [0, length], y0, args=(n,), rtol=1e-11, atol=1e-11).y[:, -1]

    tip0 = np.array([radius * np.sin(np.pi / 4), -radius * (1 - np.cos(np.pi / 4)), 0.0])
    m0, tips = np.zeros(3), []
    for p in loads:
        n = np.array([0.0, 0.0, p])
        m0 = fsolve(lambda m, n=n: shoot(m, n)[12:15], m0, xtol=1e-12)
        tips.append(shoot(m0, n)[:3] - tip0)
    return np.array(tips)


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
    assert np.all(iterations <= 8) and np.all(residual <= 1e-8)
    assert abs(-tip[2] - 0.49346) < 1e-3 and abs(1 - tip[0] - 0.16064) < 1e-3


def _bar(n=4, prescribed=(), fixed_end=True, load=None):
    part = straight_rod([0, 0, 0], [2, 0, 0], n, up=[0, 0, 1])
    sec = section_from_resultants(EA=300, GA=[200, 200], GJ=7, EI=[5, 6], rhoA=1,
                                  rhoI=[0.01, 0.01])
    fixed = np.zeros((n + 1, 6), dtype=bool)
    if fixed_end:
        fixed[0] = True
    loads = [] if load is None else [load]
    return build_model(part.points, part.frames, part.conn, sec, fixed=fixed,
                       prescribed=prescribed, loads=loads)


@pytest.mark.parametrize("group", GROUPS)
def test_prescribed_stretch_and_twist(group):
    """Prescribed end displacement and rotation reach their targets; the resultants are the
    exact N = EA u / L and T = GJ phi / L of a uniform stretch and twist."""
    end = np.array([4])
    model = _bar(prescribed=[Prescribed(end, displacement=(0.1, 0, 0), rotation=(0.3, 0, 0),
                                        time=timefunc.ramp(1.0))])
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
    sec = section_from_resultants(EA=1e4, GA=[1e4, 1e4], GJ=2, EI=[ei, ei], rhoA=1,
                                  rhoI=[0.01, 0.01])
    fixed = np.zeros((n + 1, 6), dtype=bool)
    fixed[0] = True
    model = build_model(part.points, part.frames, part.conn, sec, fixed=fixed, loads=[load])
    eq = equilibrium.start(model, group, h0=0.02)
    ok, _, _ = equilibrium.newton(eq, 1.0, 25)
    assert not ok  # the reason continuation exists
    step = equilibrium.solve_load_step(eq, 1.0)
    assert step.pseudo_steps > 0 and step.residual <= 1e-8
    assert np.linalg.norm(eq.x[-1]) < 1e-6 * length


def test_no_equilibrium_is_exit_3(tmp_path):
    """A free rod under a dead force has no equilibrium: exit 3 with a message that names the
    load multiplier and what to change, and the frames so far (the reference) kept."""
    case = tmp_path / "free.yaml"
    case.write_text("""
rodsim: 1
mesh:
  - rod: {name: r, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s}
sections:
  s: {type: rod, EA: 100, GA: [100, 100], GJ: 1, EI: [1, 1], rhoA: 1, rhoI: [0.01, 0.01]}
loads:
  - {set: r.end, force: [0, 1, 0]}
solver: {analysis: equilibrium, scheme: implicit, equilibrium: {max_steps: 30}}
""")
    res, out = _run(case, tmp_path)
    assert res.exit_code == 3, res.output
    assert "load multiplier 1" in res.output and "load_steps" in res.output
    with h5py.File(out) as f:
        assert f["time"][:].tolist() == [0.0]


def test_equilibrium_needs_no_t_end_but_dynamics_does(tmp_path):
    case = tmp_path / "c.yaml"
    text = (INPUTS / "rollup/rollup.yaml").read_text()
    case.write_text(text)
    assert CliRunner().invoke(main, ["check", str(case)]).exit_code == 0
    res = CliRunner().invoke(main, ["check", str(case), "--set", "solver.analysis=dynamic"])
    assert res.exit_code == 2 and "solver.t_end" in res.output
