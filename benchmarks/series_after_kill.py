"""SIGKILL `rodsim run --vtk` at a random time, continue it with `rodsim run --restart
--vtk`, and check that the ParaView series lists exactly the results file's frames: the same
count, the same times (bit for bit), every listed .vtu present, and one frame chosen at
random showing the results file's displacement (docs/restart.md, item 4).

    python benchmarks/series_after_kill.py --trials 100

prints one line per failed trial and a summary `series exact after SIGKILL + restart: N of N
trials (... s)`; exit code 1 if any trial failed.
"""

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import meshio
import numpy as np

from rodsim.results import read_results
from rodsim.results.reader import frame_count
from rodsim.results.vtk import read_pvd

# a frame every 0.5 of simulated time, ~1/40 s of wall time (2-core machine), so that the
# index (rewritten at most once a second) lags the results file by tens of frames at a kill
CASE = """\
rodsim: 1
title: series after kill
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0.3, -1], time: {sine: {amplitude: 1, frequency: 0.7}}}
solver: {dt: auto, t_end: %(t_end)s}
output: {interval: 0.5, vtk: true}
"""


def frames_in(path) -> int:
    try:
        with h5py.File(path, "r", locking=False) as f:
            return frame_count(f)
    except (OSError, KeyError):
        return 0


def rodsim(*args, **kw):
    return [sys.executable, "-m", "rodsim.cli", *map(str, args)]


def check(h5: Path, rng: random.Random) -> str:
    """'' if the series lists exactly the results file's frames, else what is wrong."""
    res = read_results(h5)
    if res.status.state != "complete":
        return f"the restarted run is {res.status.state}"
    entries = read_pvd(h5.with_suffix(".pvd"))
    times = np.where(np.isfinite(res.total_time), res.total_time, res.time)
    if len(entries) != res.n_frames:
        return f"the series lists {len(entries)} frames, the results file holds {res.n_frames}"
    if not np.array_equal([t for t, _ in entries], times):
        return "the series' times differ from the results file's"
    missing = [p.name for _, p in entries if not p.is_file()]
    if missing:
        return f"listed but missing: {missing[:3]}"
    k = rng.randrange(res.n_frames)
    shown = meshio.read(entries[k][1]).point_data["displacement"]
    # written from the same float64 arrays: the same values to rounding of one subtraction
    if not np.allclose(shown, res.position[k] - res.mesh.points, rtol=0, atol=1e-12):
        return f"frame {k}'s .vtu is not the results file's frame {k}"
    return ""


def trial(folder: Path, case: Path, rng: random.Random, frames: int) -> tuple[str, int]:
    """Kill the run once it has written a random number of frames (1 to `frames` - 5), at a
    random moment up to 50 ms later, then restart it; (problem, frames when killed). The kill
    falls on the frame count, not a time, so that it lands before the run's end on a busy
    machine as on an idle one."""
    h5 = folder / "r.h5"
    target = rng.randint(1, frames - 5)
    proc = subprocess.Popen(rodsim("run", case, "-o", h5, "-q", "--vtk"))
    deadline = time.monotonic() + 300
    while frames_in(h5) < target:
        if proc.poll() is not None or time.monotonic() > deadline:
            return "the run did not get going", 0
        time.sleep(0.002)
    time.sleep(rng.uniform(0, 0.05))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.returncode != -signal.SIGKILL:
        return "the run ended before the kill: make it longer", 0
    killed_at = frames_in(h5)
    again = subprocess.run(
        rodsim("run", case, "--restart", h5, "-q", "--vtk"), capture_output=True, text=True
    )
    if again.returncode != 0:
        return f"the restart failed ({again.returncode}): {again.stderr.strip()[-300:]}", killed_at
    return check(h5, rng), killed_at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--t-end", type=float, default=40.0, help="the run's end time")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    good, frames = 0, []
    with tempfile.TemporaryDirectory(prefix="series_after_kill.") as tmp:
        for n in range(args.trials):
            folder = Path(tmp) / f"t{n}"
            folder.mkdir()
            case = folder / "case.yaml"
            case.write_text(CASE % {"t_end": args.t_end})
            problem, killed_at = trial(folder, case, rng, int(args.t_end / 0.5) + 1)
            frames.append(killed_at)
            if problem:
                print(f"trial {n}: killed at {killed_at} frames: {problem}", flush=True)
            else:
                good += 1
    wall = time.perf_counter() - started
    print(
        f"series exact after SIGKILL + restart: {good} of {args.trials} trials "
        f"({wall:.0f} s; killed after {min(frames)} to {max(frames)} frames)"
    )
    return 0 if good == args.trials else 1


if __name__ == "__main__":
    sys.exit(main())
