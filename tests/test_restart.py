"""Restart (docs/restart.md): the restart state in two alternating slots, `rodsim run
--restart` after a SIGTERM bit-identical to the uninterrupted run (explicit) and within the
Newton tolerance (implicit), a later end time, and a refused restart leaving the file as it
was."""

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import frames_in, interrupted

from rodsim import api
from rodsim.errors import Interrupted
from rodsim.results import read_results, restart
from rodsim.results.reader import frame_count
from rodsim.results.vtk import read_pvd

CASE = """\
rodsim: 1
title: restart
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0.3, -1], time: {sine: {amplitude: 1, frequency: 0.7}}}
solver: %(solver)s
output: {interval: %(interval)s, vtk: true}
"""
EXPLICIT = "{dt: auto, t_end: 400}"  # about 3.5 s on the 2-core CI machine
IMPLICIT = "{scheme: implicit, dt: 0.01, t_end: 16, newton: {tol: 1.0e-10}}"  # about 3 s

# compared bit for bit: what the state of a frame is made of
STATE = ("time", "position", "rotation", "linear_momentum", "angular_momentum")


def write_case(folder: Path, solver=EXPLICIT, interval=5) -> Path:
    path = folder / "case.yaml"
    path.write_text(CASE % {"solver": solver, "interval": interval})
    return path


def rodsim(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rodsim.cli", *map(str, args)], capture_output=True, text=True
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def explicit_runs(tmp_path_factory):
    """(uninterrupted results, restarted results, the restart's output) of the explicit case."""
    folder = tmp_path_factory.mktemp("explicit")
    case = write_case(folder, interval=50)  # a frame every ~0.45 s of wall time
    full = rodsim("run", case, "-o", folder / "full.h5", "-q")
    assert full.returncode == 0, full.stderr
    h5 = folder / "r.h5"
    interrupted(case, h5)
    assert read_results(h5).status.state == "interrupted"
    again = rodsim("run", case, "--restart", h5)
    assert again.returncode == 0, again.stderr
    return read_results(folder / "full.h5"), read_results(h5), again.stdout


def test_sigterm_then_restart_is_bit_identical_explicit(explicit_runs):
    full, resumed, out = explicit_runs
    assert "restart   continuing" in out
    assert resumed.status.state == "complete"
    flagged = resumed.off_schedule == 1
    assert flagged.sum() == 1  # the state at the signal, kept between scheduled frames
    assert resumed.n_frames == full.n_frames + 1
    for name in STATE + ("kinetic", "internal", "force", "moment"):
        a, b = getattr(resumed, name)[~flagged], getattr(full, name)
        assert np.array_equal(a, b), name  # bit for bit: the same steps from the same state


def test_the_series_goes_on_after_a_restart(explicit_runs):
    _, resumed, _ = explicit_runs
    entries = read_pvd(resumed.path.with_suffix(".pvd"))
    assert len(entries) == resumed.n_frames
    assert all(p.is_file() for _, p in entries)
    assert [t for t, _ in entries] == pytest.approx(list(resumed.total_time), abs=0)
    assert not resumed.path.with_name("r.prev.h5").exists()  # completed: the old one gone


def test_restart_implicit_after_sigterm_within_newton_tolerance(tmp_path):
    case = write_case(tmp_path, IMPLICIT, interval=2)
    full = rodsim("run", case, "-o", tmp_path / "full.h5", "-q")
    assert full.returncode == 0, full.stderr
    h5 = tmp_path / "r.h5"
    interrupted(case, h5)
    again = rodsim("run", case, "--restart", h5, "-q")
    assert again.returncode == 0, again.stderr
    a, b = read_results(h5), read_results(tmp_path / "full.h5")
    keep = a.off_schedule == 0
    assert np.array_equal(a.time[keep], b.time)
    # Newton stops at 1e-10 of the step's momenta; the restart holds the solver's own
    # quaternions and first guess, so it takes the same iterations: equal to round-off
    size = np.abs(b.position - b.mesh.points).max()
    assert np.abs(a.position[keep] - b.position).max() <= 1e-10 * size


def _two_slots(h5: Path):
    with h5py.File(h5, "r") as f:
        g = f["restart"]
        current = int(g.attrs["current"])
        slots = [dict(g[s].attrs) | {k: g[s][k][()] for k in g[s]} for s in restart.SLOTS]
        return current, slots, frame_count(f)


def test_the_slots_hold_the_last_frame_and_an_earlier_one(tmp_path):
    """The state is saved with the first frame, then at most once a second, and at the end:
    in a run shorter than a second, frame 0 and the last frame."""
    case = write_case(tmp_path, "{dt: auto, t_end: 2}", interval=0.5)
    api.run_case(case, tmp_path / "r.h5", vtk=False)
    current, slots, frames = _two_slots(tmp_path / "r.h5")
    last, before = slots[current], slots[1 - current]
    assert (last["frame"], before["frame"]) == (frames - 1, 0)
    results = read_results(tmp_path / "r.h5")
    # the raw arrays are the frame's own: positions and momenta bit for bit; the rotation
    # matrices are the integrator's, which the frame's quaternions (the nearest rotation)
    # match to its orthonormality drift (rotation solves to solver.rotation_tol = 1e-13):
    # the reason the restart keeps the matrices, not the quaternions
    assert np.array_equal(last["x"], results.position[-1])
    assert np.array_equal(last["p"], results.linear_momentum[-1])
    assert np.array_equal(before["x"], results.position[0])
    drift = np.abs(np.einsum("nji,njk->nik", last["rot"], last["rot"]) - np.eye(3)).max()
    assert np.abs(last["rot"] - results.directors(frames - 1)).max() <= 10 * max(drift, 1e-15)
    assert last["kind"] == "explicit" and last["count"] > before["count"]


def test_a_crash_while_a_slot_is_written_leaves_the_other(tmp_path, monkeypatch):
    """The slot is written and flushed before `current` points at it: a crash in between
    (here: the flush fails) leaves `current` at the older, complete slot."""
    h5 = tmp_path / "slots.h5"

    def state(value: float):
        x = np.full((3, 3), value)
        rot = np.broadcast_to(np.eye(3), (3, 3, 3)).copy()
        return restart.RestartState(
            "explicit",
            0,
            int(value),
            0.0,
            0.1,
            np.nan,
            0.0,
            {"x": x, "rot": rot, "p": x, "pi": x},
            1,
        )

    with h5py.File(h5, "w") as f:
        restart.write(f, state(1.0), 0)
        restart.write(f, state(2.0), 1)
        monkeypatch.setattr(h5py.File, "flush", lambda self: (_ for _ in ()).throw(OSError()))
        with pytest.raises(OSError):
            restart.write(f, state(3.0), 2)
        monkeypatch.undo()
    with h5py.File(h5, "r") as f:
        got = restart.read(f, str(h5), "--restart")
    assert (got.frame, got.count) == (1, 2)
    assert np.array_equal(got.arrays["x"], np.full((3, 3), 2.0))


def test_a_current_slot_without_data_is_refused_not_guessed(tmp_path):
    """Only the slot `current` names is read: a file whose pointer names no slot is an input
    error, never a silent start from another state."""
    case = write_case(tmp_path, "{dt: auto, t_end: 2}", interval=0.5)
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5, vtk=False)
    with h5py.File(h5, "r+") as f:
        f["restart"].attrs["current"] = 7
    before = digest(h5)
    out = rodsim("run", case, "--restart", h5)
    assert out.returncode == 2, out.stderr
    assert "holds no restart state" in out.stderr and "--restart" in out.stderr
    assert digest(h5) == before


def test_a_later_end_time_continues_a_complete_run(tmp_path):
    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    full = tmp_path / "full.h5"
    api.run_case(case, full, vtk=False, overrides=("solver.t_end=4",))
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5, vtk=False)
    api.run_case(case, vtk=False, overrides=("solver.t_end=4",), restart=h5)
    a, b = read_results(h5), read_results(full)
    assert a.n_frames == b.n_frames == 9
    for name in STATE:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    with h5py.File(h5, "r") as f:
        assert "continued from frame 4" in f.attrs["restarts"]


@pytest.mark.parametrize(
    "override, key, words",
    [
        ("solver.t_end=1", "solver.t_end", "before the time 2 the run reached"),
        ("solver.analysis=equilibrium", "solver.analysis", "holds the state of an explicit run"),
        ("mesh[0].rod.elements=10", "--restart", "is of another mesh"),
    ],
)
def test_a_refused_restart_leaves_the_file_as_it_was(tmp_path, override, key, words):
    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5)
    before = digest(h5), digest(tmp_path / "r.pvd")
    out = rodsim("run", case, "--restart", h5, "--set", override)
    assert out.returncode == 2, out.stderr
    assert key in out.stderr
    assert words in out.stderr
    assert "Traceback" not in out.stderr
    assert (digest(h5), digest(tmp_path / "r.pvd")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml", "r.h5", "r.pvd", "r_vtk"]


def test_restart_names_its_own_problems(tmp_path):
    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    missing = rodsim("run", case, "--restart", tmp_path / "nothing.h5")
    assert missing.returncode == 2 and "no such results file" in missing.stderr
    api.run_case(case, tmp_path / "r.h5", vtk=False)
    both = rodsim("run", case, "--restart", tmp_path / "r.h5", "-o", tmp_path / "other.h5")
    assert both.returncode == 2 and "leave -o out or give the same file" in both.stderr
    # docs/running.md and docs/restart.md: -o may name the file that --restart continues
    same = rodsim("run", case, "--restart", tmp_path / "r.h5", "-o", tmp_path / "r.h5")
    assert same.returncode == 0, same.stderr


def test_restart_equilibrium_goes_on_with_the_next_load_step(tmp_path):
    """SIGTERM (sent by the run's own progress callback) after load step 2 of 4; the restart
    solves load steps 3 and 4 from the stored state: the frames of the uninterrupted run."""
    case = write_case(tmp_path, "{analysis: equilibrium, equilibrium: {load_steps: 4}}")
    full = read_results(api.run_case(case, tmp_path / "full.h5", vtk=False).path)

    def progress(load, i, n):
        if i == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(Interrupted):
        api.run_case(case, tmp_path / "r.h5", vtk=False, progress=progress)
    assert read_results(tmp_path / "r.h5").n_frames == 3  # load 0, 1/4, 1/2
    api.run_case(case, vtk=False, restart=tmp_path / "r.h5")
    resumed = read_results(tmp_path / "r.h5")
    assert resumed.status.state == "complete"
    for name in STATE + ("load_factor",):
        assert np.array_equal(getattr(resumed, name), getattr(full, name)), name


def test_a_restart_with_nothing_left_to_run_leaves_the_file(tmp_path):
    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5)
    before = digest(h5)
    out = rodsim("run", case, "--restart", h5)
    assert out.returncode == 0, out.stderr
    assert "done      nothing to run: " in out.stdout
    assert "from frame 4 (t = 2), dt 0.0004, a frame every 1250 steps (stored)" in out.stdout
    assert digest(h5) == before
    assert not (tmp_path / "r.prev.h5").exists()


def test_restart_errors_name_the_file_at_fault(tmp_path):
    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    (tmp_path / "notes.h5").write_text("not HDF5")
    out = rodsim("run", case, "--restart", tmp_path / "notes.h5")
    assert out.returncode == 2
    assert f"error: {tmp_path / 'notes.h5'}: not a readable HDF5 file" in out.stderr
    assert "previous" not in out.stdout  # refused before the summary's file lines


def test_the_continued_series_is_the_runs_own_not_an_older_ones(tmp_path):
    """A complete run A, then run B on the same output stopped (A stays as r.prev.h5, the
    complete results), then B continued: its series starts with B's own frames."""
    import meshio

    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5)  # A
    b = ("loads[0].force=[0, 0.5, 2]",)

    def progress(t, i, n):
        if t > 0.75:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(Interrupted):
        api.run_case(case, h5, overrides=b, progress=progress)
    api.run_case(case, overrides=b, restart=h5)
    resumed = read_results(h5)
    assert resumed.status.state == "complete"
    entries = read_pvd(tmp_path / "r.pvd")
    assert [t for t, _ in entries] == list(resumed.total_time)
    for k in (1, len(entries) - 1):
        shown = meshio.read(entries[k][1]).point_data["displacement"]
        assert np.allclose(shown, resumed.position[k] - resumed.mesh.points, rtol=0, atol=1e-15)


def test_restart_after_sigkill_recomputes_the_frames_after_the_state(explicit_runs, tmp_path):
    """SIGKILL leaves no last word: the saved state is up to a second older than the last
    frame. The restart drops the frames after it and computes them again: the uninterrupted
    run's frames, bit for bit."""
    full, _, _ = explicit_runs
    case = write_case(tmp_path, interval=50)  # the fixture's case
    h5 = tmp_path / "r.h5"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "-o", str(h5), "-q", "--no-vtk"]
    )
    deadline = time.monotonic() + 120
    while frames_in(h5) < 5:  # a frame every ~0.45 s: past the first saved states
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    with h5py.File(h5, "r") as f:
        saved = int(f["restart"][restart.SLOTS[int(f["restart"].attrs["current"])]].attrs["frame"])
        assert saved < frame_count(f)
    again = rodsim("run", case, "--restart", h5, "--no-vtk")
    assert again.returncode == 0, again.stderr
    assert f"from frame {saved} " in again.stdout
    resumed = read_results(h5)
    for name in STATE:
        assert np.array_equal(getattr(resumed, name), getattr(full, name)), name


def test_a_restart_from_an_older_state_recomputes_the_frames_after_it(tmp_path):
    """What a crash leaves when the state lags the last frame, made deterministic: a short
    run's slots hold frame 0 and its last frame; pointing `current` at frame 0's slot, the
    restart drops frames 1 on and computes them again, bit for bit."""
    case = write_case(tmp_path, "{dt: 0.0004, t_end: 2}", interval=0.5)
    full = read_results(api.run_case(case, tmp_path / "full.h5", vtk=False).path)
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5, vtk=False)
    current, slots, frames = _two_slots(h5)
    assert slots[1 - current]["frame"] == 0 and frames == 5
    with h5py.File(h5, "r+") as f:
        f["restart"].attrs["current"] = 1 - current
    out = rodsim("run", case, "--restart", h5, "--no-vtk")
    assert out.returncode == 0, out.stderr
    assert "from frame 0 " in out.stdout
    again = read_results(h5)
    assert again.n_frames == 5
    for name in STATE:
        assert np.array_equal(getattr(again, name), getattr(full, name)), name


STEEL_I = """\
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 8, section: s}
  - rod: {name: tip, from: [2, 0, 0], to: [2.5, 0, 0], elements: 2, section: r}
sections:
  s: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850},
      shape: {i_section: [0.3, 0.15, 0.0071, 0.0107]}}
  r: {type: rod, EA: 1.0e9, GA: [3.0e8, 3.0e8], GJ: 1.0e5, EI: [1.0e6, 1.0e6], rhoA: 50,
      rhoI: [0.1, 0.1]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: tip.end, force: [0, 0, -1000]}
solver: {dt: auto, t_end: 2.0e-3}
output: {interval: 1.0e-3, vtk: false}
"""


def test_a_restart_refuses_a_file_with_other_stress_recovery_points(tmp_path):
    """A results file of an earlier rodsim holds the thin-walled sections' old recovery points
    in mesh/stress_points: continuing it would append stresses at the new points under the old
    coordinates, so the restart is refused (exit 2, --restart) and the file left as it was;
    the file with this rodsim's points continues."""
    case = tmp_path / "i.yaml"
    case.write_text(STEEL_I)
    h5 = tmp_path / "i.h5"
    api.run_case(case, h5, vtk=False)
    with h5py.File(h5, "r") as f:
        points = f["mesh/stress_points"][()]
    assert np.isfinite(points).any()  # the I section recovers stresses
    assert np.isnan(points).any()  # section r, of stiffnesses, has no points
    longer = ("--set", "solver.t_end=3.0e-3")
    good = tmp_path / "good.h5"
    good.write_bytes(h5.read_bytes())
    with h5py.File(h5, "r+") as f:  # the points of an earlier release: one moved by 1 mm
        moved = points.copy()
        moved[np.isfinite(moved[:, 0, 0]).argmax(), 0] += [0.0, 1.0e-3]
        f["mesh/stress_points"][...] = moved
    before = digest(h5)
    out = rodsim("run", case, "--restart", h5, *longer)
    assert out.returncode == 2, out.stderr
    assert "--restart" in out.stderr and "stress recovery points" in out.stderr, out.stderr
    assert "i.h5" in out.stderr and "Traceback" not in out.stderr
    assert digest(h5) == before
    same = rodsim("run", case, "--restart", good, *longer)  # NaN padding compares equal
    assert same.returncode == 0, same.stderr
