"""Soak test: a long `rodsim run` must not grow in memory nor drift in energy (a script, not
a test). See benchmarks/README.md.

A cantilever of 100 rod elements (L = 10, EA = GA = 1e4, GJ = EI = 500, rhoA = 1, rhoI = 10)
is released under gravity (0, 0, -0.4) (static tip deflection about 0.1 L) and vibrates
undamped for 10^6 explicit steps (order 2, dt = 7.5e-4 = 0.75 x the stable-step estimate), a
frame every 1000 steps (1001 frames, with the ParaView series). The case file is written to a
temporary folder and run by the real command, `python -m rodsim.cli run`, in a child process.
Every second the parent reads the child's resident set size (VmRSS in /proc/<pid>/status)
and counts the .vtu files written so far (the frames). Reported:

- RSS after warm-up (the first sample with 10% of the frames written) and at the end (the
  last sample before the last frame, while the writers are open: closing frees their
  buffers), the growth between them (limit 1%), the trend after warm-up (least squares, per
  100 frames), the last sample and the peak (VmHWM);
- the band of the total energy (max - min of energy/total) over the first and the last 10%
  of the frames: an undamped symplectic run keeps it (limit: the last within 0.5 ... 2 x the
  first; a leak of energy would widen it or shift its mean, also printed).

    python benchmarks/soak.py                      # about 1-2 min on a 2-core VM
    python benchmarks/soak.py --steps 100000 --keep /tmp/soak
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

import rodsim

GROWTH_LIMIT = 0.01  # RSS growth after warm-up, fraction
BAND_RATIO = (0.5, 2.0)  # last / first energy band
WARM = 0.1  # fraction of the frames before the warm-up sample; also the energy windows

CASE = """\
rodsim: 1
title: soak (benchmarks/soak.py)
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [10, 0, 0], elements: {elements}, section: s,
          up: [0, 0, 1]}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1,
       rhoI: [10, 10]}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - gravity: [0, 0, -0.4]
solver: {{scheme: explicit, order: 2, dt: {dt!r}, t_end: {t_end!r}}}
output: {{every: {every}, vtk: true}}
"""


@dataclass(frozen=True)
class Sample:
    """One reading of the child: seconds since start, RSS and peak RSS (kB), frames written."""

    wall: float
    rss_kb: int
    hwm_kb: int
    frames: int


def case_text(elements: int, steps: int, every: int, dt: float) -> str:
    """The case file; t_end = steps x dt (the planner's step count is then exactly steps)."""
    return CASE.format(elements=elements, dt=dt, t_end=steps * dt, every=every)


def proc_status(pid: int) -> tuple[int, int] | None:
    """(VmRSS, VmHWM) in kB of a live process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    values = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0])
    if "VmRSS" not in values:  # a zombie: the memory is already released
        return None
    return values["VmRSS"], values.get("VmHWM", 0)


def count_frames(folder: Path) -> int:
    """The .vtu files in the series folder (one per frame written)."""
    try:
        return sum(1 for e in os.scandir(folder) if e.name.endswith(".vtu"))
    except FileNotFoundError:
        return 0


def clear_outputs(h5: Path) -> None:
    """Remove the results of an earlier soak in a --keep folder: the frame count reads the
    series folder."""
    series = h5.with_name(h5.stem + "_vtk")
    for old in (h5, h5.with_suffix(".pvd"), *(series.glob("*.vtu") if series.is_dir() else ())):
        old.unlink(missing_ok=True)


def count_h5_frames(h5: Path) -> int:
    """Frames in the results file so far (the writer flushes each; a read may race a write:
    then -1, and the sample is not used for the warm-up or end points)."""
    try:
        with h5py.File(h5, "r", locking=False) as f:
            return int(f["time"].shape[0])
    except (OSError, KeyError):
        return -1


def child_env() -> dict:
    """The environment of the child: this script's rodsim first on the path."""
    root = str(Path(rodsim.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def run_and_sample(
    case: Path, h5: Path, interval: float, vtk: bool = True
) -> tuple[list[Sample], float, str]:
    """Run the case through `rodsim run` and sample the child until it exits; (samples,
    wall seconds, the child's output). Raises SystemExit if the run fails. Without the
    ParaView series (vtk False) the frame count is read from the results file instead."""
    series = h5.with_name(h5.stem + "_vtk")
    cmd = [
        sys.executable,
        "-m",
        "rodsim.cli",
        "run",
        str(case),
        "-o",
        str(h5),
        "--vtk" if vtk else "--no-vtk",
    ]
    started = time.perf_counter()
    log = h5.with_suffix(".log")
    with open(log, "w") as out:
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=child_env())
        samples = []
        while child.poll() is None:
            status = proc_status(child.pid)
            if status is not None:
                frames = count_frames(series) if vtk else count_h5_frames(h5)
                samples.append(Sample(time.perf_counter() - started, *status, frames))
            time.sleep(interval)
    wall = time.perf_counter() - started
    text = log.read_text()
    if child.returncode != 0:
        raise SystemExit(f"rodsim run exited {child.returncode}:\n{text}")
    return samples, wall, text


def rss_figures(samples: list[Sample], frames: int) -> dict:
    """RSS at warm-up (the first sample with 10% of the frames written) and at the end (the
    last sample before the last frame, while the writers are still open: after it they close
    and free their buffers, which would hide a growth), in kB; growth (fraction), the RSS at
    exit (the last sample), the peak (kB) and the trend after warm-up (kB per 100 frames,
    least squares over the samples)."""
    warm_frames = int(np.ceil(WARM * frames))
    running = [s for s in samples if warm_frames <= s.frames < frames]
    if len(running) < 2:
        raise SystemExit(
            f"only {len(running)} samples after warm-up: run longer or sample "
            "more often (--interval)"
        )
    warm, end = running[0], running[-1]
    x = np.array([s.frames for s in running], dtype=float)
    y = np.array([s.rss_kb for s in running], dtype=float)
    slope = np.polyfit(x, y, 1)[0] * 100 if np.ptp(x) > 0 else 0.0
    return {
        "warm": warm,
        "end": end,
        "growth": (end.rss_kb - warm.rss_kb) / warm.rss_kb,
        "exit": samples[-1],
        "peak": max(s.hwm_kb for s in samples),
        "trend": slope,
        "samples": len(samples),
    }


def energy_figures(h5: Path) -> dict:
    """Band (max - min) and mean of energy/total over the first and the last 10% of the
    frames, and the energy scale (max |kinetic|) they are measured against."""
    with h5py.File(h5, "r") as f:
        total = f["energy/total"][:]
        kinetic = f["energy/kinetic"][:]
    k = max(2, int(round(WARM * len(total))))
    first, last = total[:k], total[-k:]
    return {
        "frames": len(total),
        "window": k,
        "first_band": float(np.ptp(first)),
        "last_band": float(np.ptp(last)),
        "first_mean": float(first.mean()),
        "last_mean": float(last.mean()),
        "scale": float(np.abs(kinetic).max()),
    }


def write_samples(path: Path, samples: list[Sample]) -> None:
    """The samples as CSV: wall_s, rss_kb, hwm_kb, frames."""
    rows = [f"{s.wall:.3f},{s.rss_kb},{s.hwm_kb},{s.frames}" for s in samples]
    path.write_text("wall_s,rss_kb,hwm_kb,frames\n" + "\n".join(rows) + "\n")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def report(args, samples, wall, rss, en) -> bool:
    """Print the report table; True if both checks pass."""
    mb = 1024.0
    grows = rss["growth"] < GROWTH_LIMIT
    ratio = en["last_band"] / en["first_band"] if en["first_band"] > 0 else float("inf")
    keeps = BAND_RATIO[0] <= ratio <= BAND_RATIO[1]
    w, e, x = rss["warm"], rss["end"], rss["exit"]
    rows = [
        (
            "case",
            f"cantilever, {args.elements} elements, explicit order 2, dt {args.dt:g}, "
            f"{args.steps} steps, a frame every {args.every} ({en['frames']} frames)",
        ),
        (
            "machine",
            f"{cpu_model()}, {os.cpu_count()} cores, load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end",
        ),
        (
            "wall",
            f"{wall:.1f} s ({args.steps / wall:.3g} steps/s with start-up and output), "
            f"{rss['samples']} samples",
        ),
        ("RSS warm-up", f"{w.rss_kb / mb:.1f} MiB at {w.wall:.0f} s, frame {w.frames}"),
        ("RSS end", f"{e.rss_kb / mb:.1f} MiB at {e.wall:.0f} s, frame {e.frames}"),
        (
            "RSS growth",
            f"{100 * rss['growth']:+.3f} % (limit {100 * GROWTH_LIMIT:g} %)  "
            + ("ok" if grows else "FAIL"),
        ),
        ("RSS trend", f"{rss['trend']:+.1f} kB per 100 frames after warm-up"),
        (
            "RSS last",
            f"{x.rss_kb / mb:.1f} MiB at {x.wall:.0f} s, frame {x.frames} (the last "
            f"sample); peak {rss['peak'] / mb:.1f} MiB (VmHWM)",
        ),
        (
            "energy first",
            f"band {en['first_band']:.3g}, mean {en['first_mean']:+.3g} "
            f"(frames 0-{en['window'] - 1})",
        ),
        (
            "energy last",
            f"band {en['last_band']:.3g}, mean {en['last_mean']:+.3g} (last {en['window']} frames)",
        ),
        (
            "energy ratio",
            f"last / first band {ratio:.3g} (limit {BAND_RATIO[0]:g} ... "
            f"{BAND_RATIO[1]:g}); bands / max kinetic energy "
            f"{en['first_band'] / en['scale']:.2g}, "
            f"{en['last_band'] / en['scale']:.2g}  " + ("ok" if keeps else "FAIL"),
        ),
    ]
    width = max(len(r[0]) for r in rows)
    for name, text in rows:
        print(f"{name:<{width}}  {text}")
    return grows and keeps


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=1_000_000, help="time steps (default 10^6)")
    p.add_argument("--every", type=int, default=1000, help="steps between frames")
    p.add_argument("--elements", type=int, default=100, help="rod elements")
    p.add_argument(
        "--dt",
        type=float,
        default=7.5e-4,
        help="time step (default 7.5e-4, 0.75 x the stable-step estimate at 100)",
    )
    p.add_argument("--interval", type=float, default=1.0, help="seconds between RSS samples")
    p.add_argument(
        "--no-vtk",
        dest="vtk",
        action="store_false",
        help="no ParaView series (to tell the writers' memory apart)",
    )
    p.add_argument(
        "--keep",
        type=Path,
        help="write the case, results and the samples (rss.csv) here and keep them",
    )
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rodsim-soak-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        case = folder / "soak.yaml"
        case.write_text(case_text(args.elements, args.steps, args.every, args.dt))
        h5 = folder / "soak.h5"
        clear_outputs(h5)
        samples, wall, _ = run_and_sample(case, h5, args.interval, args.vtk)
        if args.keep:
            write_samples(folder / "rss.csv", samples)
        frames = args.steps // args.every + 1
        ok = report(args, samples, wall, rss_figures(samples, frames), energy_figures(h5))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
