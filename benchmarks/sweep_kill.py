"""SIGKILL to a running `rodsim sweep` on a pool of 2 workers (a script, not a test;
docs/sweeps.md, "Executors"; tests/test_sweep_kill.py runs one trial of it).

Each trial starts `rodsim sweep --workers 2` of an 8-run sweep (equilibrium runs of a small
cantilever in 60 load steps) with its standard output and error captured through pipes, as
`subprocess.run(..., capture_output=True)` does; once a run has started (a results file is in
runs/), it records the sweep's child processes (from /proc/<pid>/task/*/children: the pool's
workers and multiprocessing's resource tracker) and sends the sweep SIGKILL. It measures

- the seconds until none of those children is alive (a zombie waiting for its reaper counts as
  dead: it runs nothing and holds no file);
- the seconds until both pipes read to their end (nothing holds them open);

then runs the sweep again on the same folder (it resumes: finished runs are reused) and
compares its summary.csv with a serial reference (`--workers 1`, another folder) value by
value, every column but `wall_time` (seconds, never equal) and `reused` (1 where a run
finished before the kill).

    python benchmarks/sweep_kill.py [--trials 10] [--limit 5]
"""

import argparse
import csv
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CASE = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 8, up: [0, 0, 1], section: bar}
sections:
  bar: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.02, 0.01]}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -100.0]}
solver: {analysis: equilibrium, equilibrium: {load_steps: 60}}
output: {vtk: false}
"""
SWEEP = """
rodsim_sweep: 1
case: cant.yaml
parameters:
  loads[0].force[2]: {linspace: [-100, -400, 4]}
  sections.bar.shape.rectangle[1]: [0.01, 0.02]
collect:
  tip: {series: displacement.z@beam.end, reduce: final}
"""
IGNORED = ("wall_time", "reused")  # a run's seconds; 1 for a run finished before the kill


def files(folder: Path) -> Path:
    """The case and the sweep file in folder; the sweep file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cant.yaml").write_text(CASE)
    (folder / "sweep.yaml").write_text(SWEEP)
    return folder / "sweep.yaml"


def sweep_command(path: Path, output: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "rodsim.cli", "sweep", str(path), "-q", "-o", str(output),
            "--workers", str(workers)]  # fmt: skip


def started(pid: int) -> str | None:
    """A process's start time (field 22 of /proc/<pid>/stat), None once it is gone or a
    zombie: with the pid it names one process, whatever later reuses the pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command, which may hold spaces
    return None if fields[0] in ("Z", "X") else fields[19]


def children(pid: int) -> dict[int, str]:
    """The live child processes of pid, each with its start time."""
    out = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            pids = [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        out.update({c: s for c in pids if (s := started(c)) is not None})
    return out


def alive(procs: dict[int, str]) -> list[int]:
    """Those of procs (pid -> start time) still running."""
    return [pid for pid, start in procs.items() if started(pid) == start]


def drain(proc: subprocess.Popen) -> list[threading.Thread]:
    """Read the process's pipes to their end, a thread each: a thread ends at its pipe's end."""
    readers = []
    for pipe in (proc.stdout, proc.stderr):

        def read(pipe=pipe):
            while pipe.read(65536):
                pass

        readers.append(threading.Thread(target=read, daemon=True))
        readers[-1].start()
    return readers


def joined(threads: list[threading.Thread], until: float) -> bool:
    """Whether the threads all end before the time.monotonic() `until`."""
    for thread in threads:
        thread.join(max(0.0, until - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)


def table(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return [{k: v for k, v in row.items() if k not in IGNORED} for row in csv.DictReader(f)]


def reference(folder: Path) -> Path:
    """The serial sweep's summary.csv (made once per folder)."""
    output = folder / "serial"
    if not (output / "summary.csv").exists():
        subprocess.run(sweep_command(files(folder), output, 1), check=True, capture_output=True)
    return output / "summary.csv"


def trial(folder: Path, serial: Path, limit: float = 5.0) -> dict:
    """One SIGKILL of a pooled sweep: what was left, how long, and whether the resumed sweep's
    summary equals the serial one. Kills (by pid) any child still running after `limit` s so
    that nothing outlives the trial."""
    path, output = files(folder), folder / "pooled"
    proc = subprocess.Popen(sweep_command(path, output, 2), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    runs, deadline = output / "runs", time.monotonic() + 120
    while not list(runs.glob("*.h5")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    procs = children(proc.pid)
    if proc.poll() is not None or not procs:
        proc.kill()
        proc.communicate()
        raise RuntimeError(f"the sweep ended or had no workers before the kill ({proc.returncode})")
    readers = drain(proc)
    os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    proc.wait()
    gone = None
    while time.monotonic() - killed < limit:
        if not alive(procs):
            gone = time.monotonic() - killed
            break
        time.sleep(0.02)
    left = alive(procs)
    closed = joined(readers, killed + limit)
    pipes = time.monotonic() - killed if closed else None
    for pid in left:  # what the old code left: stop it, it is ours
        os.kill(pid, signal.SIGKILL)
    joined(readers, time.monotonic() + 10)
    again = subprocess.run(sweep_command(path, output, 2), capture_output=True, text=True)
    same = again.returncode == 0 and table(output / "summary.csv") == table(serial)
    return {"children": len(procs), "left": len(left), "gone_s": gone, "pipes_s": pipes,
            "resumed_equal": same, "resume_stderr": again.stderr[-2000:]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--limit", type=float, default=5.0, help="seconds the children may take")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        serial = reference(Path(tmp))
        results = []
        for i in range(args.trials):
            r = trial(Path(tmp) / f"trial{i}", serial, args.limit)
            results.append(r)
            gone = "-" if r["gone_s"] is None else f"{r['gone_s']:.2f}"
            pipes = "-" if r["pipes_s"] is None else f"{r['pipes_s']:.2f}"
            print(f"trial {i}: {r['children']} children, {r['left']} left after {args.limit} s, "
                  f"all gone in {gone} s, pipes at their end in {pipes} s, resumed summary "
                  f"{'equal to' if r['resumed_equal'] else 'DIFFERENT from'} the serial one",
                  flush=True)  # fmt: skip
    clean = sum(r["left"] == 0 and r["pipes_s"] is not None for r in results)
    equal = sum(r["resumed_equal"] for r in results)
    worst = max((r["gone_s"] or float("inf")) for r in results)
    print(f"{clean} of {args.trials} trials left no child and closed the pipes within "
          f"{args.limit} s (slowest: {worst:.2f} s); {equal} of {args.trials} resumed summaries "
          f"equal the serial one")  # fmt: skip


if __name__ == "__main__":
    main()
