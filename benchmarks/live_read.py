"""Reading a results file while a run writes it (docs/results.md "Reading during a run"): a
script, not a test (tests/test_live_read.py runs a shorter loop of the same checks).

A clamped rod (length 1, EI = 10, --elements rod elements, default 20) under a tip force is
run by the real command (`python -m rodsim.cli run`, in a child process) with a frame every
step (output.every: 1) and no end in sight (t_end 1e6), stopped after --run-seconds and
started again (so that the file, and each read, stays small). While it writes, the parent
reads the file in a loop, alternating `rodsim info` in-process (click's CliRunner) and
`rodsim.read_results`, until --info and --api reads are done, with a `rodsim info` child
process every --every-subprocess-th info read; then it stops the run (SIGINT: status
interrupted, every frame kept) and checks every read against the finished file:

- every read succeeded (exit code 0 for info, no exception for read_results);
- read_results: every per-frame array has the same number of frames n, the time increases
  strictly, the positions are finite, and every array equals the finished file's first n
  frames bit for bit (a frame once complete is never rewritten);
- info: its `frames n, time a to b` line names the finished file's time of frame n - 1 as b.

Reported: reads of each kind, failures, torn frames, the frames seen and the reads per
second. --single-try reads each file once, as rodsim did before read_live (the failure
count of the old readers).

    python benchmarks/live_read.py                          # 1000 + 1000 reads, a few minutes
    python benchmarks/live_read.py --info 100 --api 100 --subprocesses 5
"""

import argparse
import dataclasses
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

CASE = """rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {elements}, section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, -1]}}
solver: {{dt: auto, t_end: 1.0e6}}
output: {{vtk: false, every: 1}}
"""
FRAMES_LINE = re.compile(r"^frames\s+(\d+), time (\S+) to (\S+)", re.M)


@dataclasses.dataclass
class Tally:
    info: int = 0
    subprocesses: int = 0
    api: int = 0
    failures: list = dataclasses.field(default_factory=list)
    torn: list = dataclasses.field(default_factory=list)
    seen: list = dataclasses.field(default_factory=list)  # (n, {name: digest}) per api read
    info_seen: list = dataclasses.field(default_factory=list)  # (n, last time text)


def start_run(folder: Path, elements: int) -> tuple[subprocess.Popen, Path]:
    case, out = folder / "case.yaml", folder / "live.h5"
    case.write_text(CASE.format(elements=elements))
    cmd = [sys.executable, "-m", "rodsim.cli", "run", str(case), "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while not out.exists():  # renamed in place at the first frame
        if proc.poll() is not None:
            sys.exit(f"the run ended before its first frame: {proc.stderr.read().decode()}")
        time.sleep(0.01)
    return proc, out


def arrays_of(results) -> dict:
    """The per-frame arrays of a Results (those with a frame axis)."""
    out = {}
    for field in dataclasses.fields(results):
        value = getattr(results, field.name)
        if isinstance(value, np.ndarray):
            out[field.name] = value
    return out


def digest(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


def check_api(results, tally: Tally) -> None:
    """Record a read_results read; a torn frame (lengths differ, time not increasing,
    non-finite positions) goes to tally.torn."""
    arrays = arrays_of(results)
    n = results.n_frames
    lengths = {name: a.shape[0] for name, a in arrays.items()}
    if set(lengths.values()) != {n}:
        tally.torn.append(f"api read {tally.api}: lengths differ {lengths}")
    if n > 1 and not np.all(np.diff(results.time) > 0):
        tally.torn.append(f"api read {tally.api}: time not increasing")
    if not np.isfinite(results.position).all():
        tally.torn.append(f"api read {tally.api}: non-finite positions")
    tally.seen.append((n, {name: digest(a) for name, a in arrays.items()}))


def read_info(path: Path, tally: Tally, runner, child: bool) -> None:
    if child:
        cmd = [sys.executable, "-m", "rodsim.cli", "info", str(path)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        code, text = done.returncode, done.stdout + done.stderr
        tally.subprocesses += 1
    else:
        from rodsim.cli import main

        done = runner.invoke(main, ["info", str(path)])
        code, text = done.exit_code, done.output
        if done.exception is not None and not isinstance(done.exception, SystemExit):
            text += f"\n{type(done.exception).__name__}: {done.exception}"
    tally.info += 1
    if code != 0:
        tally.failures.append(f"info (exit {code}): {text.strip().splitlines()[-1:]}")
        return
    m = FRAMES_LINE.search(text)
    if m:
        tally.info_seen.append((int(m.group(1)), m.group(3)))
    elif "frames    0" not in text:
        tally.torn.append(f"info read {tally.info}: no frames line:\n{text}")


def read_api(path: Path, tally: Tally) -> None:
    import rodsim

    tally.api += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the LiveFileWarning each read gives
            results = rodsim.read_results(path)
    except Exception as exc:  # noqa: BLE001 - every failure is counted
        tally.failures.append(f"read_results: {type(exc).__name__}: {exc}")
        return
    check_api(results, tally)


def compare_final(path: Path, tally: Tally) -> None:
    """Every read against the finished file: the same values for the frames it read."""
    import rodsim

    final = rodsim.read_results(path)
    arrays = arrays_of(final)
    for k, (n, digests) in enumerate(tally.seen):
        for name, d in digests.items():
            if n > final.n_frames or digest(arrays[name][:n]) != d:
                tally.torn.append(f"api read {k}: {name} of its {n} frames differs at the end")
    for n, last in tally.info_seen:
        if n > final.n_frames or f"{final.time[n - 1]:.6g}" != last:
            tally.torn.append(f"info: frames {n} ending at {last}, finished file differs")


def live_reads(
    folder: Path,
    info: int,
    api: int,
    every_subprocess: int,
    elements: int,
    single_try: bool = False,
    run_seconds: float = 20.0,
) -> Tally:
    """The reads, against runs of run_seconds each (a new run when one is stopped, so that
    the file and each read stay small), every read checked against its run's finished file."""
    from click.testing import CliRunner

    from rodsim.results import reader as results_reader

    if single_try:  # as before read_live: one try, whatever the lock says
        results_reader.RETRIES_ANYWAY = 0
        results_reader.is_live = lambda path: False
    total, runner, run = Tally(), CliRunner(), 0
    while total.info < info or total.api < api:
        tally = Tally(info=total.info, subprocesses=total.subprocesses, api=total.api)
        run_folder = folder / f"run{run}"
        run_folder.mkdir()
        proc, path = start_run(run_folder, elements)
        end = time.monotonic() + run_seconds
        try:
            while (tally.info < info or tally.api < api) and time.monotonic() < end:
                if proc.poll() is not None:
                    sys.exit(f"the run ended early: {proc.stderr.read().decode()}")
                if tally.info < info:
                    child = every_subprocess > 0 and tally.info % every_subprocess == 0
                    read_info(path, tally, runner, child)
                if tally.api < api:
                    read_api(path, tally)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
        compare_final(path, tally)
        total = Tally(
            tally.info,
            tally.subprocesses,
            tally.api,
            total.failures + tally.failures,
            total.torn + tally.torn,
            total.seen + [(n, {}) for n, _ in tally.seen],
            total.info_seen + tally.info_seen,
        )
        run += 1
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--info", type=int, default=1000, help="rodsim info reads")
    parser.add_argument("--api", type=int, default=1000, help="rodsim.read_results reads")
    parser.add_argument(
        "--subprocesses", type=int, default=40, help="of the info reads, child processes"
    )
    parser.add_argument("--elements", type=int, default=20)
    parser.add_argument("--run-seconds", type=float, default=20.0, help="length of each run")
    parser.add_argument("--single-try", action="store_true", help="read as before read_live")
    args = parser.parse_args()
    every = max(1, args.info // args.subprocesses) if args.subprocesses else 0
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        tally = live_reads(
            Path(tmp),
            args.info,
            args.api,
            every,
            args.elements,
            args.single_try,
            args.run_seconds,
        )
        seconds = time.perf_counter() - start
    frames = [n for n, _ in tally.seen]
    print(
        f"{tally.info} info reads ({tally.subprocesses} child processes), {tally.api} "
        f"read_results reads in {seconds:.1f} s ({(tally.info + tally.api) / seconds:.1f}/s)"
    )
    if frames:
        print(f"frames seen by read_results: {min(frames)} to {max(frames)}")
    print(f"failures: {len(tally.failures)}; torn frames: {len(tally.torn)}")
    for line in (tally.failures + tally.torn)[:10]:
        print("  " + line)
    sys.exit(1 if tally.failures or tally.torn else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
