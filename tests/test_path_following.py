"""Path following (docs/path_following.md) on Lee's frame (validation/lee_frame): the factor
of a dead load pattern controlled by the load point's displacement equals the prescribed
displacement of the validation case, and the arc-length method passes the limit point, the
snap-back and the second limit point."""

import os
import signal
from pathlib import Path

import numpy as np
import pytest
from conftest import looked_at
from scipy.interpolate import CubicSpline

import rodsim
from rodsim.errors import CaseError, Interrupted
from rodsim.results import read_results

ROOT = Path(__file__).resolve().parents[1]
PATTERN = 20000.0  # lbf, downward at the load point: the factor is the load over this


def lee(path: str) -> rodsim.Case:
    """Lee's frame of validation/lee_frame with a dead force pattern instead of the
    prescribed displacement, and solver.equilibrium.path."""
    text = (ROOT / "validation/lee_frame/case.yaml").read_text()
    text = text.replace(
        "  - {set: load_point, prescribe: {displacement: [null, -60, null]}}   # scaled by lambda",
        "",
    ).replace("equilibrium: {load_steps: 120}", f"equilibrium: {{path: {path}}}")
    text += f"loads:\n  - {{set: load_point, force: [0, {-PATTERN}, 0]}}\n"
    return rodsim.case_from_yaml(text)


@pytest.fixture(scope="module")
def arc():
    """The arc-length path to u3 = 95, beyond the snap-back and the second limit point."""
    case = lee("{method: arc_length, set: load_point, component: uy, to: -95, steps: 400}")
    return rodsim.run_in_memory(case)


@pytest.fixture(scope="module")
def controlled():
    """The validation case as it is: the load point's displacement prescribed to 60."""
    return rodsim.run_in_memory(ROOT / "validation/lee_frame/case.yaml")


def _u3_and_load(r):
    node = int(r.mesh.sets["load_point"][0])
    return -(r.position[:, node, 1] - r.mesh.points[node, 1]), r.load_factor * PATTERN


def test_displacement_control_of_the_load_factor_is_the_prescribed_displacement(controlled):
    """The pattern's factor found so that u3 = 60 k / 120 equals, step by step, the reaction
    of the validation case's prescribed u3: the same equilibria, both converged to 1e-8 of
    the loads plus reactions (measured 6e-10 of the limit load, positions 1.8e-9)."""
    case = lee("{method: displacement, set: load_point, component: uy, to: -60, steps: 120}")
    r = rodsim.run_in_memory(case)
    node = int(r.mesh.sets["load_point"][0])
    reaction = -controlled.reaction_force[:, node, 1]
    u3, load = _u3_and_load(r)
    assert u3 == pytest.approx(60 * np.arange(121) / 120, abs=1e-9)
    assert np.abs(load - reaction).max() <= 1e-7 * reaction.max()
    assert np.abs(r.position - controlled.position).max() <= 1e-7


def test_arc_length_passes_the_limit_point_and_the_snap_back(arc, controlled):
    """Rising u3: the path's equilibria are the displacement-controlled ones (its load at
    each frame against the controlled curve's cubic spline at the frame's u3: within 1e-4 of
    the limit load, the spline's error over the curve's 0.5 spacing, whose h^4/384 |P''''|
    is 3e-6 of it away from the limit and grows where the curve turns fastest; measured
    4.8e-5, linear interpolation would be 9e-4), its limit load within 1.5% of the
    digitised 18761 (measured 18789, 0.15%). Then u3 turns back (the snap-back, at about
    61), the load goes negative (the second limit point, -9858) and the path ends past
    u3 = 95."""
    u3, load = _u3_and_load(arc)
    turn = int(np.argmax(np.diff(u3) < 0))
    assert 55.0 < u3[turn] < 65.0  # the snap-back in u3
    c3, cload = _u3_and_load(controlled)
    node = int(controlled.mesh.sets["load_point"][0])
    cload = -controlled.reaction_force[:, node, 1]
    rising = u3[: turn + 1] <= c3[-1]
    error = load[: turn + 1][rising] - CubicSpline(c3, cload)(u3[: turn + 1][rising])
    assert np.abs(error).max() <= 1e-4 * 18761
    assert load[: turn + 1].max() == pytest.approx(18761, rel=1.5e-2)
    assert load.min() < -5000  # past the snap-back the frame carries a pull
    assert u3[-1] >= 95.0 and arc.step.max() == 0
    # every frame an equilibrium: the supports carry the loads at its factor
    reaction = arc.reaction_force[:, :, 1].sum(axis=1)
    assert np.abs(reaction - load).max() <= 1e-6 * np.abs(load).max()
    # time is the arc length travelled: increasing
    assert np.all(np.diff(arc.time) > 0)


def test_a_path_continues_after_a_signal_bit_for_bit(tmp_path, arc):
    """SIGTERM (from the progress callback) after 40 path steps, then --restart: the frames
    of the uninterrupted path, the step length and direction restored from the file."""
    case = lee("{method: arc_length, set: load_point, component: uy, to: -95, steps: 400}")

    def progress(arc_length, k, n):
        if k == 40:
            os.kill(os.getpid(), signal.SIGTERM)

    h5 = tmp_path / "p.h5"
    with pytest.raises(Interrupted):
        rodsim.run_case(case, h5, vtk=False, progress=progress)
    assert read_results(h5).n_frames == 41
    rodsim.run_case(case, vtk=False, restart=h5)
    again = read_results(h5)
    for name in ("time", "load_factor", "position", "rotation"):
        assert np.array_equal(getattr(again, name), getattr(arc, name)), name


@pytest.mark.parametrize(
    "change, key, words",
    [
        ("set: column.all", "solver.equilibrium.path.set", "expected a set of one node"),
        ("component: rz", "solver.equilibrium.path.component", "one of ux, uy, uz"),
    ],
)
def test_bad_paths_name_their_key(change, key, words):
    spec = "{method: arc_length, set: load_point, component: uy, to: -95}".replace(
        change.split(":")[0] + ": " + ("load_point" if "set" in change else "uy"), change
    )
    with pytest.raises(CaseError) as err:
        rodsim.prepare(lee(spec))
    assert err.value.key == key and words in err.value.reason


def test_a_path_is_an_equilibriums():
    case = lee("{method: arc_length, set: load_point, component: uy, to: -95}")
    with pytest.raises(CaseError) as err:
        rodsim.prepare(case, ("solver.analysis=dynamic", "solver.t_end=1"))
    assert err.value.key == "solver.equilibrium.path"


def _distance(u, load, curve, span=100.0, scale=18761.0):
    """The distance of each digitised point (u, F) of curve (M, 2) to the path polyline
    (u, load), in the plane of u / span and F / scale (a load error of 1% of the limit load
    is 0.01; where the path turns in u, a load error at fixed u would be meaningless)."""
    path = np.column_stack([u / span, load / scale])
    a, b = path[:-1], path[1:]
    ab = b - a
    out = []
    for q in np.column_stack([curve[:, 0] / span, curve[:, 1] / scale]):
        t = np.clip(np.einsum("ij,ij->i", q - a, ab) / np.einsum("ij,ij->i", ab, ab), 0, 1)
        out.append(np.linalg.norm(a + t[:, None] * ab - q, axis=1).min())
    return np.array(out)


def test_the_path_through_the_snap_back_lies_on_the_published_curves():
    """40 elements per member (the validation's full tier), arc length 0.5 to u3 = 96: every
    one of the 151 digitised points of both published curves (load against u3 and against
    u1, validation/lee_frame/path_u*.csv) lies within 2% of the limit load of the path
    (measured 1.6% and 1.9%: digitising, the curves' two limit loads differ by 2.6%); the
    first limit load is within 1.5% of the digitised 18761 (measured 18560, -1.1%), the
    second within 1.5% of the u3 curve's -9466 (measured -9421, -0.5%)."""
    case = lee(
        "{method: arc_length, set: load_point, component: uy, to: -96, steps: 1000, length: 0.5}"
    )
    r = rodsim.run_in_memory(case, overrides=("mesh.0.rod.elements=40", "mesh.1.rod.elements=40"))
    node = int(r.mesh.sets["load_point"][0])
    u3, load = _u3_and_load(r)
    u1 = r.position[:, node, 0] - r.mesh.points[node, 0]
    for name, u in (("u3", u3), ("u1", u1)):
        curve = np.loadtxt(
            ROOT / f"validation/lee_frame/path_{name}.csv", delimiter=",", skiprows=7
        )
        assert _distance(u, load, curve).max() <= 0.02, name
    turn = int(np.argmax(np.diff(u3) < 0))
    assert load[: turn + 1].max() == pytest.approx(18761, rel=1.5e-2)
    assert load.min() == pytest.approx(-9465.9, rel=1.5e-2)


def test_the_deep_arch_reaches_its_limit_load():
    """inputs/arch/deep_arch.yaml at 80 elements, by arc length just past its limit point:
    the largest load is DaDeppo & Schmidt's P R^2 / EI = 8.97 (P = 897) within 1% (measured
    899.3, +0.26%; 905.5 at 40 elements: the element's O(h^2) converges to 897.2)."""
    r = rodsim.run_in_memory(
        ROOT / "inputs/arch/deep_arch.yaml",
        overrides=("mesh[0].arc.elements=80", "solver.equilibrium.path.to=-116"),
    )
    apex = int(r.mesh.sets["apex"][0])
    deflection = -(r.position[:, apex, 1] - r.mesh.points[apex, 1])
    load = r.load_factor * 1.0e5
    top = int(np.argmax(load))
    assert load[top] == pytest.approx(897.0, rel=1e-2)
    assert 100 < deflection[top] < 125 and load[-1] < load[top]  # past the limit point


CANTILEVER = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, up: [0, 0, 1], section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, EI: [1, 1], rhoA: 1, rhoI: [0.01, 0.01]}}
boundary: {boundary}
loads: {loads}
solver:
  analysis: equilibrium
  equilibrium: {{path: {path}}}
"""
TIP = "{method: displacement, set: beam.end, component: uy, to: 0.5, steps: 10}"


def cantilever(
    boundary="[{set: beam.start, fix: all}]",
    loads="[{set: beam.end, force: [0, 1, 0]}]",
    path=TIP,
):
    return rodsim.case_from_yaml(CANTILEVER.format(boundary=boundary, loads=loads, path=path))


def test_prescribed_motions_are_reached_before_the_path():
    """A cantilever whose clamped root is moved by (0.05, 0.1): frame 0 is that motion's
    equilibrium (a rigid shift, no strain energy); the path's tip deflection is measured from
    the reference, so its last frame's bending is that of 0.4 beyond the shift."""
    root = "[{set: beam.start, prescribe: {displacement: [0.05, 0.1, 0], rotation: [0, 0, 0]}}]"
    for method in ("displacement", "arc_length"):
        spec = TIP.replace("displacement,", f"{method},").replace("steps: 10", "steps: 200")
        r = rodsim.run_in_memory(cantilever(boundary=root, path=spec))
        assert r.internal[0] <= 1e-12
        assert r.position[0, 0] == pytest.approx([0.05, 0.1, 0], abs=1e-12)
        assert r.position[-1, -1, 1] - r.mesh.points[-1, 1] >= 0.5 - 1e-9


@pytest.mark.parametrize(
    "kwargs, key, words",
    [
        (
            {"path": TIP.replace("beam.end", "beam.start")},
            "solver.equilibrium.path.component",
            "held",
        ),
        ({"path": TIP.replace("to: 0.5", "to: 0")}, "solver.equilibrium.path.to", "non-zero"),
        ({"loads": "[]"}, "loads", "zero at load multiplier 1"),
    ],
)
def test_paths_that_cannot_be_followed_are_input_errors(kwargs, key, words):
    with pytest.raises(CaseError) as err:
        rodsim.prepare(cantilever(**kwargs))
    assert err.value.key == key and words in err.value.reason


def test_a_path_that_reached_its_end_has_nothing_left_to_run(tmp_path):
    spec = "{method: arc_length, set: beam.end, component: uy, to: 0.3, steps: 100}"
    h5 = tmp_path / "p.h5"
    first = rodsim.run_case(cantilever(path=spec), h5, vtk=False)
    before = h5.read_bytes()
    again = rodsim.run_case(cantilever(path=spec), vtk=False, restart=h5)
    assert again.frames == first.frames and h5.read_bytes() == before


def test_a_load_displacement_plot(tmp_path):
    """rodsim plot FILE load_factor --against displacement.y@apex: the path's curve, drawn
    from the file's own datasets; --against takes one curve only."""
    from rodsim.post.plots import _scalar, plot_results
    from rodsim.results.reader import open_results

    spec = "{method: arc_length, set: beam.end, component: uy, to: 0.3, steps: 100}"
    h5 = rodsim.run_case(cantilever(path=spec), tmp_path / "p.h5", vtk=False).path
    png = plot_results(h5, "load_factor", against="displacement.y@beam.end")
    assert png.name == "p_load_factor_vs_displacement.y_at_beam.end.png"
    looked_at(png, 1)
    with open_results(h5) as f:
        x, label = _scalar(f, "displacement.y@beam.end", 10, "--against")
        r = read_results(h5)
        assert np.array_equal(x, r.position[:10, -1, 1] - r.mesh.points[-1, 1])
        with pytest.raises(CaseError, match="expected one curve for --against"):
            _scalar(f, "displacement@beam.end", 10, "--against")


def test_arc_length_steps_grow_while_newton_converges_easily():
    """The roll-up of inputs/rollup to a half circle (the tip above the root, u1 = -L): the
    steps grow from the first (|to| / 50) while Newton needs at most 5 corrections, past the
    4 first lengths steps were once held to, and the circle takes fewer steps than when they
    stopped growing at 5 Newton solves (57, measured now 36)."""
    text = (ROOT / "inputs/rollup/rollup.yaml").read_text()
    text = text.replace(
        "equilibrium: {load_steps: 4}",
        "equilibrium: {path: {method: arc_length, set: beam.end, component: ux, to: -10}}",
    )
    r = rodsim.run_in_memory(rodsim.case_from_yaml(text))
    first = 10 / 50
    assert r.dt[1] == pytest.approx(first)
    assert np.nanmax(r.dt) > 4 * first
    assert len(r.time) - 1 < 45
    tip = int(r.mesh.sets["beam.end"][0])
    assert r.position[-1, tip, 0] <= 1e-9  # reached: the tip at or past the root
