"""Start-up time: every case in inputs/ run from an empty numba cache, then again warm.

Each case runs as `rodsim run CASE -o TMP/CASE.h5 --quiet` in a fresh process with its kernel
cache (RODSIM_CACHE_DIR) in a new, empty folder (a first run on a fresh machine), then once
more with the same folder (the warm run). Reported per case: wall time and CPU time (user +
sys of the child, from os.wait4) of both runs; their difference is what compiling cost.

    python benchmarks/startup.py                      # every case, about 10 min
    python benchmarks/startup.py spaghetti ring       # cases whose folder name matches
    python benchmarks/startup.py --profile spaghetti  # + compile time per kernel
    python benchmarks/startup.py --shared             # one cache for all cases, in order
    python benchmarks/startup.py --jobs 8 --cores 2   # 8 cases at a time, 2 CPUs each

--profile records numba's compile events in the cold run and prints the kernels with the
largest exclusive compile time (its own typing and code generation, callees excluded).
--shared keeps one cache across the cases (what a user running the examples in turn sees:
a later case reuses the kernels an earlier one compiled). Figures depend on the machine and
its load: run it on an idle machine (the load average is printed). --jobs N --cores K runs N
cases at once, each on its own K CPUs (an idle K-core machine each, on a machine of at least
N x K quiet cores; not with --shared).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROFILE = r"""
import collections, json, sys, time
import numba.core.event as ev
stack, excl = [], collections.Counter()
class Listener(ev.Listener):
    def on_start(self, event):
        d = event.data["dispatcher"]
        stack.append([f"{d.py_func.__module__}.{d.py_func.__qualname__}",
                      time.perf_counter(), 0.0])
    def on_end(self, event):
        name, t0, child = stack.pop()
        dt = time.perf_counter() - t0
        excl[name] += dt - child
        if stack:
            stack[-1][2] += dt
ev.register("numba:compile", Listener())
from rodsim.cli import main
try:
    main(sys.argv[2:], standalone_mode=False)
finally:
    with open(sys.argv[1], "w") as fh:
        json.dump(excl.most_common(), fh)
"""


def run(cmd: list[str], cache: Path, cores=None) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of cmd with its kernel cache in the folder cache, on the
    CPUs `cores` (a set; None: any)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "RODSIM_CACHE_DIR": str(cache)}
    if cores is not None:
        env["NUMBA_NUM_THREADS"] = str(len(cores))
    pin = None if cores is None else (lambda: os.sched_setaffinity(0, cores))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=pin
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        print(proc.stderr.read().decode(), file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def numba_version() -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import numba; print(numba.__version__)"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help="substrings of case folder names (default: all)")
    ap.add_argument("--profile", action="store_true", help="compile time per kernel")
    ap.add_argument("--shared", action="store_true", help="one cache for all cases")
    ap.add_argument("--top", type=int, default=15, help="kernels listed per case (--profile)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once (own CPUs each)")
    ap.add_argument("--cores", type=int, default=0, help="CPUs per case with --jobs (0: any)")
    args = ap.parse_args()
    if args.jobs > 1 and (args.shared or not args.cores):
        ap.error("--jobs needs --cores and one cache per case (no --shared)")
    cases = sorted(ROOT.glob("inputs/*/*.yaml"))
    if args.cases:
        cases = [c for c in cases if any(s in c.parent.name for s in args.cases)]
    print(
        f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, "
        f"python {sys.version.split()[0]}, numba {numba_version()}"
        + (f", {args.jobs} cases at a time on {args.cores} CPUs each" if args.cores else "")
    )
    print(f"{'case':<28} {'cold wall':>10} {'cold CPU':>9} {'warm wall':>10} {'warm CPU':>9}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)

        def measure(case, slot):
            cache = tmp / ("cache" if args.shared else f"cache-{case.stem}")
            cores = set(range(slot * args.cores, (slot + 1) * args.cores)) if args.cores else None
            out = ["run", str(case), "-o", str(tmp / f"{case.stem}.h5"), "--quiet"]
            if args.profile:
                prof = tmp / f"{case.stem}.json"
                cold = run([sys.executable, "-c", PROFILE, str(prof), *out], cache, cores)
            else:
                cold = run([sys.executable, "-m", "rodsim.cli", *out], cache, cores)
            return cold, run([sys.executable, "-m", "rodsim.cli", *out], cache, cores)

        # case i runs on the CPUs of slot i % jobs, after the case before it there
        jobs = max(args.jobs, 1)
        queues = [cases[slot::jobs] for slot in range(jobs)]
        with ThreadPoolExecutor(jobs) as pool:
            done = pool.map(lambda s: [(c, measure(c, s)) for c in queues[s]], range(jobs))
            results = dict(pair for chunk in done for pair in chunk)
        for case in cases:
            cold, warm = results[case]
            if args.profile:
                prof = tmp / f"{case.stem}.json"
            name = str(case.relative_to(ROOT / "inputs"))
            flag = "" if cold[2] == warm[2] == 0 else f"  exit {cold[2]}/{warm[2]}"
            print(
                f"{name:<28} {cold[0]:>9.1f}s {cold[1]:>8.1f}s {warm[0]:>9.2f}s "
                f"{warm[1]:>8.2f}s{flag}",
                flush=True,
            )
            rows.append(
                {
                    "case": name,
                    "cold_wall": cold[0],
                    "cold_cpu": cold[1],
                    "warm_wall": warm[0],
                    "warm_cpu": warm[1],
                }
            )
            if args.profile:
                kernels = json.loads(prof.read_text())
                total = sum(t for _, t in kernels)
                print(f"    compiling: {total:.1f} s in {len(kernels)} kernels; largest:")
                for kname, t in kernels[: args.top]:
                    print(f"    {t:7.2f} s  {kname}")
                rows[-1]["kernels"] = kernels
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
