"""Results survive faults (docs/running.md): signals, a second run on the same output, a
killed lock holder, a failing run after a good one, full disks and file-size limits."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from conftest import frames_in

from rodsim.results.reader import frame_count, open_results, read_frame, run_status
from rodsim.results.vtk import read_pvd

CASE = """\
rodsim: 1
title: safety
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -1]}
solver: {dt: auto, t_end: %(t_end)s}
output: {interval: %(interval)s, vtk: true}
"""


def write_case(folder: Path, t_end=1.0e4, interval=5.0e3) -> Path:
    path = folder / "case.yaml"
    path.write_text(CASE % {"t_end": t_end, "interval": interval})
    return path


def rodsim(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rodsim.cli", *map(str, args)], capture_output=True, text=True, **kw
    )


def start(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def wait_running(proc: subprocess.Popen, h5: Path, timeout: float = 120.0) -> None:
    """Until the run holds the lock and has written its first frame (then give it half a
    second to be inside the time loop)."""
    lock = h5.with_name(h5.name + ".lock")
    deadline = time.monotonic() + timeout
    while not (lock.exists() and frames_in(h5) >= 1):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.05)
    time.sleep(0.5)


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """Compile the kernels of the case once (numba caches them on disk) so that the runs
    below are in their time loop, not compiling, when they are signalled."""
    folder = tmp_path_factory.mktemp("warm")
    case = write_case(folder, t_end=0.01, interval=0.01)
    done = rodsim("run", case, "-q")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_mid_run_writes_a_final_frame_within_a_second(tmp_path, warm, sig):
    case = write_case(tmp_path)  # 5000 time units per frame: hours of steps between frames
    h5 = tmp_path / "r.h5"
    proc = start("run", case, "-o", h5)
    wait_running(proc, h5)
    sent = datetime.now().astimezone()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted: stopped by {sig.name}: 2 frames kept in {h5}" in err
    assert "off-schedule" in err
    assert "Traceback" not in err
    with open_results(h5) as f:
        status = run_status(f)
        finished = datetime.fromisoformat(f.attrs["finished"])
        assert frame_count(f) == 2
        assert list(f["solver/off_schedule"][:]) == [0, 1]
        assert 0 < f["time"][1] < 5.0e3  # the state when stopped, off the schedule
        assert np.all(np.isfinite(read_frame(f, 1).position))
    assert (status.state, status.detail) == ("interrupted", sig.name)
    # the contract: acted on within 1 s of wall time (one compiled chunk of ~0.1 s, a frame)
    assert (finished - sent).total_seconds() < 1.0
    info = rodsim("info", h5)
    assert info.returncode == 0
    assert f"status    interrupted by {sig.name}: last frame t = " in info.stdout
    assert "of 10000 (off-schedule)" in info.stdout
    # the ParaView index lists exactly the frames on disk; the lock is gone
    assert [p.name for _, p in read_pvd(tmp_path / "r.pvd")] == ["r_000000.vtu", "r_000001.vtu"]
    assert sorted(p.name for p in (tmp_path / "r_vtk").iterdir()) == [
        "r_000000.vtu",
        "r_000001.vtu",
    ]
    assert not (tmp_path / "r.h5.lock").exists()
    exported = rodsim("export", h5, "-o", tmp_path / "again")
    assert exported.returncode == 0
    assert "holds an incomplete run: interrupted by" in exported.stderr


def test_a_second_run_on_the_same_output_fails_at_once(tmp_path, warm):
    case = write_case(tmp_path)
    h5 = tmp_path / "r.h5"
    first = start("run", case, "-o", h5)
    wait_running(first, h5)
    second = rodsim("run", case, "-o", h5, "--set", "title=second")
    assert second.returncode == 4, second.stderr
    assert "another rodsim run writes these results" in second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert "r.h5.lock" in second.stderr
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    assert first.returncode == 143
    with open_results(h5) as f:  # only the first run wrote it
        assert f.attrs["title"] == "safety"
        assert frame_count(f) == 2
    assert len(read_pvd(tmp_path / "r.pvd")) == 2


def test_a_killed_lock_holder_is_taken_over(tmp_path, warm):
    case = write_case(tmp_path)
    h5 = tmp_path / "r.h5"
    proc = start("run", case, "-o", h5)
    wait_running(proc, h5)
    proc.kill()  # SIGKILL: no chance to clean up
    proc.communicate()
    assert (tmp_path / "r.h5.lock").exists()
    info = rodsim("info", h5)
    assert "status    incomplete: still running or killed, last frame t = 0 of 10000" in (
        info.stdout
    )
    again = rodsim(
        "run", case, "-o", h5, "--set", "solver.t_end=0.01", "--set", "output.interval=0.01"
    )
    assert again.returncode == 0, again.stderr
    assert "took over the lock of a run that is gone" in again.stderr
    assert f"pid {proc.pid}" in again.stderr
    with open_results(h5) as f:
        assert run_status(f).state == "complete"
    assert not (tmp_path / "r.h5.lock").exists()


def test_a_failing_run_keeps_the_previous_results(tmp_path, warm):
    case = write_case(tmp_path, t_end=0.5, interval=0.005)
    h5 = tmp_path / "r.h5"
    good = rodsim("run", case, "-o", h5)
    assert good.returncode == 0, good.stderr
    with open_results(h5) as f:
        assert frame_count(f) == 101
        assert run_status(f).state == "complete"
    # 3x the stable step: the explicit scheme blows up within the first frames
    bad = rodsim("run", case, "-o", h5, "--set", "solver.dt=0.02")
    assert bad.returncode == 3, bad.stderr
    assert "previous  r.h5 is kept as r.prev.h5 until this run completes" in bad.stdout
    assert f"the previous results stay in {tmp_path / 'r.prev.h5'}" in bad.stderr
    with open_results(tmp_path / "r.prev.h5") as f:
        assert frame_count(f) == 101
        assert run_status(f).state == "complete"
    with open_results(h5) as f:
        status = run_status(f)
        assert status.state == "failed"
        assert status.detail.startswith("NumericalError: ")
    assert "status    failed (NumericalError: " in rodsim("info", h5).stdout
    prev_series = read_pvd(tmp_path / "r.prev.pvd")  # the previous ParaView series too
    assert len(prev_series) == 101
    assert all(p.exists() for _, p in prev_series)
    again = rodsim("run", case, "-o", h5)  # a complete run deletes the previous results
    assert again.returncode == 0
    assert not (tmp_path / "r.prev.h5").exists()
    assert not (tmp_path / "r.prev.pvd").exists()
    assert not (tmp_path / "r.prev_vtk").exists()


def check_after_write_failure(folder: Path, err: str) -> None:
    """A run stopped by a write failure: exit 4 named the file and the frames that are safe;
    the file reads, its status and frame count agree with the data, and the ParaView index
    lists exactly the .vtu files on disk."""
    h5 = folder / "r.h5"
    assert "error: " in err
    assert "Traceback" not in err
    assert "bug" not in err
    assert "frames written before are safe" in err or "of the ParaView series" in err
    with open_results(h5) as f:
        n = frame_count(f)
        assert n >= 2
        assert {f[d].shape[0] for d in ("time", "nodes/position", "energy/total")} == {n}
        times = f["time"][:]
        assert np.all(np.diff(times) > 0)  # no frame of zeros at the end
        assert np.all(np.isfinite(read_frame(f, n - 1).position))
        status = run_status(f)
    assert status.state == "failed"
    assert "ResourceError" in status.detail
    listed = [p.name for _, p in read_pvd(folder / "r.pvd")]
    on_disk = sorted(p.name for p in (folder / "r_vtk").iterdir())
    assert listed == on_disk
    assert len(listed) >= 1
    assert not list(folder.glob(".*partial"))


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_a_file_size_limit_stops_cleanly(tmp_path, warm, compression):
    """RLIMIT_FSIZE makes writes past 2 MB fail with EFBIG: a real OS write failure that any
    machine can produce. Compressed, the frames still take more than 2 MB."""
    import resource

    case = write_case(tmp_path, t_end=2.0, interval=0.001)  # 2001 frames, about 12 MB

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, 2 << 20))

    compress = ("--set", f"output.compression={compression}")
    done = rodsim("run", case, "-o", tmp_path / "r.h5", *compress, preexec_fn=limit)
    assert done.returncode == 4, done.stderr
    assert "File too large" in done.stderr
    check_after_write_failure(tmp_path, done.stderr)


CHECK = """
import sys
sys.path.insert(0, {tests!r})
from pathlib import Path
from test_run_safety import check_after_write_failure
check_after_write_failure(Path({folder!r}), open({err!r}).read())
"""


def test_a_full_disk_stops_cleanly(tmp_path, warm):
    """A real full disk: an 8 MB tmpfs mounted in a user and mount namespace (unshare -rm),
    filled by the run's own results and ParaView series."""
    folder, err = tmp_path / "small", tmp_path / "err.txt"
    folder.mkdir()
    probe = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            f"mount -t tmpfs -o size=8m none {folder} && umount {folder}",
        ],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here (unshare -rm: {probe.stderr.strip()})")
    case = write_case(tmp_path, t_end=2.0, interval=0.0005)  # 4001 frames, about 40 MB
    check = tmp_path / "check.py"
    check.write_text(
        CHECK.format(tests=str(Path(__file__).parent), folder=str(folder), err=str(err))
    )
    script = (
        f"mount -t tmpfs -o size=8m none {folder} && "
        f"{sys.executable} -m rodsim.cli run {case} -o {folder / 'r.h5'} 2> {err}; "
        f"echo $? > {tmp_path / 'rc'}; {sys.executable} {check}"
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert (tmp_path / "rc").read_text().strip() == "4", err.read_text()
    assert "No space left on device" in err.read_text()
    assert done.returncode == 0, done.stdout + done.stderr  # the checks inside the namespace


def test_lock_of_a_live_process_is_respected_and_of_a_dead_one_taken_over(tmp_path):
    from rodsim.errors import ResourceError
    from rodsim.results import lock as output_lock

    h5 = tmp_path / "r.h5"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        content = {"host": socket.gethostname(), "pid": sleeper.pid, "started": "then"}
        (tmp_path / "r.h5.lock").write_text(json.dumps(content))
        with pytest.raises(ResourceError, match=f"pid {sleeper.pid}, started then"):
            output_lock.acquire(h5)
        content["host"] = "elsewhere"  # never guessed dead: the user is told what to do
        (tmp_path / "r.h5.lock").write_text(json.dumps(content))
        with pytest.raises(ResourceError, match="on another host: if that run is dead"):
            output_lock.acquire(h5)
    finally:
        sleeper.kill()
        sleeper.wait()
    content["host"] = socket.gethostname()  # the sleeper is dead now
    (tmp_path / "r.h5.lock").write_text(json.dumps(content))
    (tmp_path / ".r.h5.abc.partial").write_text("left by the dead run")
    lock = output_lock.acquire(h5)
    assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    assert not (tmp_path / ".r.h5.abc.partial").exists()
    with pytest.raises(ResourceError, match="another rodsim run"):  # ourselves, alive
        output_lock.acquire(h5)
    output_lock.release(lock)
    assert not lock.path.exists()
