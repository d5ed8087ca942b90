"""The ParaView series (docs/results.md, "The ParaView series"): a user's files in <stem>_vtk/
stay byte-identical through a run, a completed run, an interrupted run, a restart and an
export; a .pvd rodsim did not write is refused (exit 2) with everything left as it was; after
SIGKILL and --restart the series lists exactly the results file's frames."""

import os
import random
import re
import signal
import subprocess
import sys
import time

import h5py
import meshio
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import frames_in, small_cantilever, tree_bytes

from rodsim import api
from rodsim.cli import main
from rodsim.errors import Interrupted
from rodsim.post.export import export_vtk
from rodsim.results import read_results
from rodsim.results.pvd import is_rodsim_pvd
from rodsim.results.vtk import read_pvd

# about 160 frames in a few seconds: long enough to be stopped part-way
CASE = small_cantilever(
    elements=20, solver="{dt: auto, t_end: 80}", output="{interval: 0.5, vtk: true}"
)
USER_FILES = {
    "r_vtk/view.pvsm": b"<ParaView state the user saved here/>",
    "r_vtk/mine/readme.txt": b"my readme",
    "r_vtk/r_final.vtu": b"not a frame file of rodsim's (no 6-digit number)",
    "r_vtk/.hidden": b"x",
}
FOREIGN_PVD = (
    b'<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n  <Collection>\n'
    b'    <DataSet timestep="0" file="experiment/scan_000.vtu"/>\n  </Collection>\n</VTKFile>\n'
)


def user_files(folder) -> dict:
    return {k: v for k, v in tree_bytes(folder).items() if k in USER_FILES}


def put_user_files(folder) -> None:
    for name, data in USER_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def exact(h5) -> None:
    """The series of h5 lists exactly its frames: count, times, files."""
    res = read_results(h5)
    entries = read_pvd(h5.with_suffix(".pvd"))
    times = np.where(np.isfinite(res.total_time), res.total_time, res.time)
    assert len(entries) == res.n_frames
    assert [t for t, _ in entries] == list(times)  # bit for bit: the same float64
    assert all(p.is_file() for _, p in entries)
    return res, entries


def test_user_files_in_the_series_folder_stay(tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text(CASE)
    h5 = tmp_path / "r.h5"
    (tmp_path / "r_vtk").mkdir()
    put_user_files(tmp_path)
    api.run_case(case, h5)  # a run into a folder holding only the user's files
    assert user_files(tmp_path) == USER_FILES
    api.run_case(case, h5)  # a completed run over a series: the old frames go
    assert user_files(tmp_path) == USER_FILES
    assert not (tmp_path / "r.prev_vtk").exists()

    def progress(t, i, n):
        if t > 20:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(Interrupted):  # interrupted: the previous series kept aside
        api.run_case(case, h5, progress=progress)
    assert user_files(tmp_path) == USER_FILES
    assert (tmp_path / "r.prev_vtk").is_dir()
    api.run_case(case, restart=h5)  # continued to the end
    assert user_files(tmp_path) == USER_FILES
    exact(h5)
    assert not (tmp_path / "r.prev_vtk").exists()
    assert not (tmp_path / ".r_vtk.restart").exists()
    export_vtk(h5, tmp_path)  # rebuilt over itself
    assert user_files(tmp_path) == USER_FILES
    exact(h5)
    on_disk = {p.name for p in (tmp_path / "r_vtk").iterdir()}
    frames = {p.name for _, p in read_pvd(tmp_path / "r.pvd")}
    assert on_disk == frames | {"view.pvsm", "mine", "r_final.vtu", ".hidden"}


def test_is_rodsim_pvd(tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text(CASE.replace("t_end: 80", "t_end: 1"))
    api.run_case(case, tmp_path / "r.h5")
    assert is_rodsim_pvd(tmp_path / "r.pvd")
    text = (tmp_path / "r.pvd").read_text()
    older = re.sub(r"<!--.*-->\n", "", text)  # an older rodsim wrote no comment
    (tmp_path / "r.pvd").write_text(older)
    assert is_rodsim_pvd(tmp_path / "r.pvd")
    (tmp_path / "q.pvd").write_text(older)  # another stem's frames: not q's series
    (tmp_path / "f.pvd").write_bytes(FOREIGN_PVD)
    (tmp_path / "e.pvd").write_text('<VTKFile type="Collection"><Collection/></VTKFile>')
    (tmp_path / "g.pvd").write_bytes(b"\x00garbage")
    for name in ("q.pvd", "f.pvd", "e.pvd", "g.pvd", "missing.pvd"):
        assert not is_rodsim_pvd(tmp_path / name), name


@pytest.mark.parametrize("which", ["r.pvd", "r.prev.pvd"])
def test_a_foreign_index_is_refused_by_run(tmp_path, which):
    case = tmp_path / "case.yaml"
    case.write_text(CASE.replace("t_end: 80", "t_end: 1"))
    (tmp_path / "r_vtk").mkdir()
    put_user_files(tmp_path)
    (tmp_path / which).write_bytes(FOREIGN_PVD)
    before = tree_bytes(tmp_path)
    res = CliRunner().invoke(main, ["run", str(case), "-o", str(tmp_path / "r.h5"), "--vtk"])
    assert res.exit_code == 2, res.output
    message = res.stderr if hasattr(res, "stderr") else res.output
    assert f"-o: {tmp_path / which} exists and is not a rodsim series index" in message
    assert "Traceback" not in message
    assert tree_bytes(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["case.yaml", "r_vtk", which])


def test_a_foreign_index_is_refused_by_export(tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text(CASE.replace("t_end: 80", "t_end: 1"))
    api.run_case(case, tmp_path / "r.h5", vtk=False)
    out = tmp_path / "series"
    (out / "r_vtk").mkdir(parents=True)
    put_user_files(out)
    (out / "r.pvd").write_bytes(FOREIGN_PVD)
    before = tree_bytes(tmp_path)
    res = CliRunner().invoke(main, ["export", str(tmp_path / "r.h5"), "-o", str(out)])
    assert res.exit_code == 2, res.output
    message = res.stderr if hasattr(res, "stderr") else res.output
    assert f"-o: {out / 'r.pvd'} exists and is not a rodsim series index" in message
    assert tree_bytes(tmp_path) == before


def damage_series(folder) -> None:
    """The series r.pvd of folder as a SIGKILL leaves it at its worst: its index listing
    frame 0 only (it lags), every later frame file gone (killed between the two files)."""
    pvd = folder / "r.pvd"
    lines = pvd.read_text().splitlines(keepends=True)
    datasets = [i for i, line in enumerate(lines) if "<DataSet" in line]
    pvd.write_text("".join(lines[: datasets[0] + 1] + lines[datasets[-1] + 1 :]))
    for vtu in sorted((folder / "r_vtk").glob("r_*.vtu"))[1:]:
        vtu.unlink()


def killed(case, h5, frames: int, after: float = 0.0) -> bool:
    """`rodsim run case --vtk` SIGKILLed once `frames` frames are on disk and `after` seconds
    have passed since its first (conditions, not a fixed wait: the same kill on a busy or an
    idle machine). False where the run completed first (a fast machine): the restart then
    has no frame left to run, which mends the series all the same."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "-o", str(h5), "-q", "--vtk"]
    )
    deadline, first = time.monotonic() + 120, None
    while proc.poll() is None:
        assert time.monotonic() < deadline, "the run did not get going"
        n = frames_in(h5)
        if n >= 1 and first is None:
            first = time.monotonic()
        if n >= frames and first is not None and time.monotonic() - first >= after:
            proc.kill()
            break
        time.sleep(0.005)
    proc.wait()
    assert proc.returncode in (0, -signal.SIGKILL), proc.returncode
    return proc.returncode == -signal.SIGKILL


def test_the_series_is_exact_after_a_lagging_index_and_missing_frames(tmp_path):
    """What a SIGKILL leaves at its worst, made certain: the index behind the results file
    (here it lists frame 0 only) and frames of the results file without their .vtu (killed
    between the two). The restart's series lists every frame of the results file."""
    case = tmp_path / "case.yaml"
    # 321 frames (t_end / interval + 1), so that the kill lands before the end on an idle
    # machine too
    case.write_text(CASE.replace("t_end: 80", "t_end: 160"))
    h5 = tmp_path / "r.h5"
    # the restart state is saved once a second: 1.5 s on, it is past frame 0
    was_killed = killed(case, h5, frames=2, after=1.5)
    damage_series(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "--restart", str(h5), "-q"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    res, entries = exact(h5)
    with h5py.File(h5, "r") as f:
        restarts = f.attrs.get("restarts")
    if restarts is not None:
        kept = int(re.search(r"continued from frame (\d+)", str(restarts)).group(1))
        assert kept >= 1, "the restart kept frame 0 only: kill later"
    else:  # killed after its last frame, or completed first: every frame kept, none run
        assert not was_killed or res.n_frames == 321
        kept = len(entries) - 1
    for k in (kept, len(entries) - 1):  # one rewritten from the results file, one new
        shown = meshio.read(entries[k][1]).point_data["displacement"]
        # the same float64 subtraction as the results file's position minus mesh/points
        assert np.allclose(shown, res.position[k] - res.mesh.points, rtol=0, atol=1e-12)


def test_the_series_is_exact_after_sigkill_and_restart(tmp_path):
    """A few kills at random times (benchmarks/series_after_kill.py runs 100)."""
    rng = random.Random(7)
    for n in range(2):
        folder = tmp_path / f"t{n}"
        folder.mkdir()
        case = folder / "case.yaml"
        case.write_text(CASE)
        h5 = folder / "r.h5"
        killed(case, h5, frames=rng.randint(1, 150))
        res = subprocess.run(
            [sys.executable, "-m", "rodsim.cli", "run", str(case), "--restart", str(h5), "-q"],
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr
        exact(h5)


def test_a_restart_with_no_frame_left_mends_the_series(tmp_path):
    """A run killed after its last frame (its restart state is the last frame): the restart
    runs nothing, and the lagging, damaged series is rebuilt to the results file's frames
    (was: left listing what the killed run's index listed)."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE.replace("t_end: 80", "t_end: 5"))
    h5 = tmp_path / "r.h5"
    api.run_case(case, h5)
    damage_series(tmp_path)
    put_user_files(tmp_path)
    api.run_case(case, restart=h5)
    exact(h5)
    assert user_files(tmp_path) == USER_FILES


def test_a_series_folder_that_is_a_link_is_refused(tmp_path):
    """<stem>_vtk a link to a user's folder: its r_NNNNNN.vtu files would be moved and
    deleted there."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE.replace("t_end: 80", "t_end: 1"))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "r_000000.vtu").write_bytes(b"the user's own frame")
    (tmp_path / "r_vtk").symlink_to(mine)
    before = tree_bytes(tmp_path)
    res = CliRunner().invoke(main, ["run", str(case), "-o", str(tmp_path / "r.h5"), "--vtk"])
    assert res.exit_code == 2 and "is a link" in res.output, res.output
    assert tree_bytes(tmp_path) == before


def test_a_foreign_mode_series_index_is_refused_before_the_run(tmp_path):
    """A modal run writes <stem>_mode<k>.pvd after the eigen solve: a foreign one there is
    refused before anything is written (was: after the solve, with the results written)."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE.replace("solver: {dt: auto, t_end: 80}", "solver: {analysis: modal}"))
    (tmp_path / "r_mode2.pvd").write_bytes(FOREIGN_PVD)
    before = tree_bytes(tmp_path)
    res = CliRunner().invoke(main, ["run", str(case), "-o", str(tmp_path / "r.h5"), "--vtk"])
    assert res.exit_code == 2, res.output
    assert "r_mode2.pvd exists and is not a rodsim series index" in res.output
    assert tree_bytes(tmp_path) == before
