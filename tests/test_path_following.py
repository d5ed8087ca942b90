"""Path following (docs/path_following.md) on Lee's frame (validation/lee_frame): the factor
of a dead load pattern controlled by the load point's displacement equals the prescribed
displacement of the validation case, and the arc-length method passes the limit point, the
snap-back and the second limit point."""

import os
import signal
from pathlib import Path

import numpy as np
import pytest

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
    """Rising u3: the path is the displacement-controlled one (interpolated at the
    digitised points of validation/lee_frame, within 0.1% of the limit load: the arc steps'
    interpolation; measured 0.06%), its limit load within 1.5% of the digitised 18761
    (measured 18790, 0.15%). Then u3 turns back (the snap-back, at about 61), the load goes
    negative (the second limit point, -9858) and the path ends past u3 = 95."""
    u3, load = _u3_and_load(arc)
    turn = int(np.argmax(np.diff(u3) < 0))
    assert 55.0 < u3[turn] < 65.0  # the snap-back in u3
    rows = [line.split(",") for line in open(ROOT / "validation/lee_frame/load_displacement.csv")]
    digitised = np.array([r for r in rows if r[0][0] not in "#l"], dtype=float)
    at = 60 * digitised[:, 0]
    c3, cload = _u3_and_load(controlled)
    node = int(controlled.mesh.sets["load_point"][0])
    cload = -controlled.reaction_force[:, node, 1]
    path_load = np.interp(at, u3[: turn + 1], load[: turn + 1])
    assert np.abs(path_load - np.interp(at, c3, cload)).max() <= 1e-3 * 18761
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
