"""Analysis steps (docs/steps.md): a sequence in one case and one results file, each step from
the state the one before left, (step, time, load factor) per frame, per-step combinations,
loads carried into equilibrium steps, a modal step about the final state, and restart across
steps."""

import subprocess
import sys

import h5py
import numpy as np
import pytest
from conftest import interrupted

from rodsim import api
from rodsim.errors import CaseError
from rodsim.results import read_results

BASE = """\
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, up: [0, 0, 1], section: bar}
sections:
  bar:
    type: rod
    material: {E: 7.0e10, nu: 0.33, rho: 2700}
    shape: {rectangle: [0.02, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {gravity: [0, 0, -9.81], group: G}
  - {set: beam.end, force: [0, 5, 0], group: Q}
"""
STEPS = """\
combination: {G: 1, Q: 0}
solver: {t_end: 0.02, equilibrium: {load_steps: 2}}
output: {interval: 0.005}
steps:
  - name: dead load
    solver: {analysis: equilibrium}
  - name: gust
    combination: {Q: 1.5}
  - name: modes
    solver: {analysis: modal, modal: {modes: 4}}
"""
PRELOAD = """\
combination: {G: 1, Q: 0}
solver: {analysis: equilibrium, equilibrium: {load_steps: 2}}
"""
GUST = """\
combination: {G: 1, Q: 1.5}
initial: {from: a.h5, frame: -1}
solver: {t_end: 0.02}
output: {interval: 0.005}
"""


@pytest.fixture(scope="module")
def sequence(tmp_path_factory):
    """The step case's results, and the two parts run by hand (the second from the first's
    last frame, whose restart state is the file's)."""
    folder = tmp_path_factory.mktemp("steps")
    for name, tail in (("steps", STEPS), ("a", PRELOAD), ("b", GUST)):
        (folder / f"{name}.yaml").write_text(BASE + tail)
        api.run_case(folder / f"{name}.yaml", vtk=False)
    return tuple(read_results(folder / f"{n}.h5") for n in ("steps", "a", "b"))


def test_preload_then_dynamics_is_bit_identical_to_the_two_parts_by_hand(sequence):
    steps, a, b = sequence
    for name in ("position", "rotation", "linear_momentum", "angular_momentum", "force"):
        by_hand = getattr(a, name), getattr(b, name)
        assert np.array_equal(getattr(steps, name)[steps.step == 0], by_hand[0]), name
        assert np.array_equal(getattr(steps, name)[steps.step == 1], by_hand[1]), name
    assert np.array_equal(steps.time[steps.step == 1], b.time)


def test_each_frame_carries_step_time_and_load_factor(sequence):
    steps, _, _ = sequence
    assert list(steps.step) == [0, 0, 0, 1, 1, 1, 1, 1]
    assert list(steps.time) == pytest.approx([0, 0.5, 1, 0, 0.005, 0.01, 0.015, 0.02])
    # equilibrium: the load multiplier; dynamic: 1 (the loads' time functions act)
    assert list(steps.load_factor) == [0, 0.5, 1, 1, 1, 1, 1, 1]
    # each step's time added to the steps' before: an equilibrium step counts 1
    assert np.array_equal(steps.total_time, np.where(steps.step == 1, 1.0, 0.0) + steps.time)
    with h5py.File(steps.path, "r") as f:
        names = [str(s) for s in f.attrs["steps"]]
        assert names == ["dead load: equilibrium", "gust: explicit", "modes: modal"]
        assert (f["modes"].attrs["about"], f["modes"].attrs["step"]) == ("previous", 2)
        assert f["modes"].attrs["frame"] == 7


def test_a_modal_step_is_about_the_state_left(tmp_path):
    """A modal step after an equilibrium step gives the modes of a single modal analysis
    about that equilibrium: the same state and the same loads (one Newton path)."""
    tail = PRELOAD + "steps:\n  - {}\n  - solver: {analysis: modal, modal: {modes: 3}}\n"
    (tmp_path / "s.yaml").write_text(BASE + tail)
    one = api.modes(tmp_path / "s.yaml", ("steps=null",), count=3, about="equilibrium")
    two = api.run_in_memory(tmp_path / "s.yaml").modes
    # the same equilibrium to round-off: frequencies to 1e-10 (conditioning of the shift)
    assert two.frequency == pytest.approx(one.frequency, rel=1e-10)


def test_an_unchanged_load_stays_on_and_a_new_one_ramps_on(tmp_path):
    """Equilibrium G, then equilibrium G + Q: the second step starts where the first ended
    (its frame at load 0 is the first's last state, under the same loads), and ends at the
    equilibrium of G + Q found in one step (dead loads: path independent)."""
    tail = (
        "combination: {G: 1, Q: 0}\n"
        "solver: {analysis: equilibrium, equilibrium: {load_steps: 2, tol: 1.0e-11}}\n"
        "steps:\n  - {}\n  - {combination: {Q: 1}}\n"
    )
    (tmp_path / "s.yaml").write_text(BASE + tail)
    r = read_results(api.run_case(tmp_path / "s.yaml", vtk=False).path)
    first_end, second_start = np.flatnonzero(r.step == 0)[-1], np.flatnonzero(r.step == 1)[0]
    assert np.array_equal(r.position[second_start], r.position[first_end])
    reaction = r.reaction_force[first_end].sum(axis=0)
    # the loads at the second step's start are the first's end: (1 - 0) 1 G + 0 Q
    assert np.allclose(r.reaction_force[second_start].sum(axis=0), reaction, rtol=0, atol=1e-12)
    one = api.run_in_memory(
        tmp_path / "s.yaml", overrides=("steps=null", "combination={G: 1, Q: 1}")
    )
    size = np.abs(one.position[-1] - one.mesh.points).max()
    # both stop at a residual of 1e-11 of the loads: the deflection agrees to that order
    assert np.abs(r.position[-1] - one.position[-1]).max() <= 1e-8 * size
    assert r.load_factor[-1] == 1.0 and r.step[-1] == 1


@pytest.mark.parametrize(
    "steps, key, words",
    [
        ("[{solver: {t_end: -1}}]", "steps[0].solver.t_end", "expected"),
        ("[{}, {solver: {tend: 1}}]", "steps[1].solver.tend", "unknown key"),
        ("[{}, {solver: {analysis: buckling}}]", "steps[1].solver.analysis", "first step only"),
        (
            "[{}, {solver: {analysis: modal, modal: {about: equilibrium}}}]",
            "steps[1].solver.modal.about",
            "leave `about` out",
        ),
        (
            "[{}, {solver: {analysis: modal}, combination: {Q: 1}}]",
            "steps[1].combination",
            "no combination of its own",
        ),
        ("[{name: a}, {name: a}]", "steps", "distinct step names"),
        ("[{combination: {W: 1}}]", "steps[0].combination.W", "no load entry is in group 'W'"),
        ("[]", "steps", "at least one step"),
    ],
)
def test_bad_steps_name_their_key(tmp_path, steps, key, words):
    (tmp_path / "s.yaml").write_text(
        BASE + "combination: {G: 1, Q: 0}\nsolver: {t_end: 0.01}\nsteps: " + steps + "\n"
    )
    with pytest.raises(CaseError) as err:
        api.prepare(tmp_path / "s.yaml")
    assert err.value.key == key
    assert words in err.value.reason


def test_a_step_without_its_end_time_says_which_step(tmp_path):
    (tmp_path / "s.yaml").write_text(
        BASE
        + "combination: {G: 1, Q: 0}\nsolver: {equilibrium: {load_steps: 1}}\n"
        + "steps:\n  - solver: {analysis: equilibrium}\n  - {}\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "rodsim.cli", "check", str(tmp_path / "s.yaml")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "solver.t_end" in out.stderr and "(in step 2)" in out.stderr


def test_restart_in_a_later_step_is_bit_identical(tmp_path):
    """SIGTERM in the dynamic step of a preload-then-dynamics case; --restart goes on in that
    step from its restart state and gives the uninterrupted run's frames bit for bit."""
    tail = STEPS.replace("t_end: 0.02", "t_end: 1.5").replace("interval: 0.005", "interval: 0.1")
    case = tmp_path / "s.yaml"
    case.write_text(BASE + tail)
    api.run_case(case, tmp_path / "full.h5", vtk=False)
    h5 = tmp_path / "r.h5"
    interrupted(case, h5, 5, 0.05, "--no-vtk")  # 3 frames of the equilibrium, 2 of the gust
    assert read_results(h5).step[-1] == 1
    again = subprocess.run(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "--restart", str(h5), "-q"],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    a, b = read_results(h5), read_results(tmp_path / "full.h5")
    keep = a.off_schedule == 0
    for name in ("step", "time", "position", "rotation", "linear_momentum", "angular_momentum"):
        assert np.array_equal(getattr(a, name)[keep], getattr(b, name)), name
    assert a.modes.frequency == pytest.approx(b.modes.frequency, rel=0, abs=0)


def test_a_later_end_time_recomputes_the_modes_of_a_last_modal_step(tmp_path):
    """A complete preload-gust-modes file continued to a later end time: the gust goes on and
    the modes are those about its new end, as in a run made with that end time."""
    (tmp_path / "s.yaml").write_text(BASE + STEPS.replace("t_end: 0.02", "t_end: 0.01"))
    h5 = tmp_path / "s.h5"
    api.run_case(tmp_path / "s.yaml", h5, vtk=False)
    old = read_results(h5).modes.frequency
    api.run_case(tmp_path / "s.yaml", vtk=False, overrides=("solver.t_end=0.02",), restart=h5)
    full = api.run_in_memory(tmp_path / "s.yaml", overrides=("solver.t_end=0.02",))
    again = read_results(h5)
    assert np.array_equal(again.position, full.position)
    assert np.array_equal(again.modes.frequency, full.modes.frequency)
    assert not np.array_equal(again.modes.frequency, old)
    with h5py.File(h5, "r") as f:
        assert (f["modes"].attrs["frame"], f["modes"].attrs["load"]) == (again.n_frames - 1, 1.0)


def test_the_summary_names_each_steps_factors(tmp_path):
    tail = (
        "combination: {G: 1, Q: 0}\n"
        "solver: {analysis: equilibrium}\n"
        "steps:\n  - {}\n  - {combination: {Q: 2}}\n  - {combination: {G: 0}}\n"
    )
    (tmp_path / "s.yaml").write_text(BASE + tail)
    text = api.check(tmp_path / "s.yaml")
    assert "step 1    step 1: combination G 1, Q 0" in text
    assert "step 2    step 2: combination G 1, Q 2" in text
    assert "step 3    step 3: combination G 0, Q 0" in text  # over the case's, not step 2's


def test_a_steps_every_replaces_the_cases_interval(tmp_path):
    tail = (
        "combination: {G: 1, Q: 1}\nsolver: {t_end: 0.01}\noutput: {interval: 0.005}\n"
        "steps:\n  - {}\n  - {output: {every: 1000}}\n"
    )
    (tmp_path / "s.yaml").write_text(BASE + tail)
    prep = api.prepare(tmp_path / "s.yaml")
    assert prep.steps[1][1].plan.steps_per_frame == 1000
    assert prep.steps[0][1].plan.n_frames == 3


@pytest.mark.parametrize(
    "steps, key, words",
    [
        ("{}, {output: {vtk: false}}", "steps[1].output.vtk", "give it at the case"),
        ("{}, {solver: {analysis: modal}}", "solver.modal.about", "would apply to modal step 2"),
    ],
)
def test_step_keys_that_would_be_ignored_are_refused(tmp_path, steps, key, words):
    head = (
        "combination: {G: 1, Q: 0}\nsolver: {analysis: equilibrium, modal: {about: equilibrium}}\n"
    )
    (tmp_path / "s.yaml").write_text(BASE + head + f"steps: [{steps}]\n")
    with pytest.raises(CaseError) as err:
        api.prepare(tmp_path / "s.yaml")
    assert err.value.key == key and words in err.value.reason
