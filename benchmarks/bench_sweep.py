"""A 32-run sweep serially (one process) and on the default pool (one worker process per core),
and the time spent compiling kernels (a script, not a test; docs/sweeps.md, "Speed").

The runs are explicit dynamics of a 40-element cantilever, each about 1.2 s, over a grid
of 8 tip loads and 4 section heights. Each sweep runs in a fresh Python process with its own
output folder, against one kernel cache folder:

1. cold: an empty cache, the default pool: the kernels are compiled once, before the fan-out,
   by the sweep's own process; the workers load them (their compile time is printed: 0);
2. serial: --workers 1, the cache warm;
3. pool: the default pool (os.cpu_count() workers), the cache warm.

    python benchmarks/bench_sweep.py [--runs-per-load 4]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASE = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 40, up: [0, 0, 1], section: bar}
sections:
  bar: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.02, 0.01]}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -10.0]}
solver: {t_end: 0.4}
output: {interval: 0.01, vtk: false}
"""
SWEEP = """
rodsim_sweep: 1
case: cant.yaml
parameters:
  loads[0].force[2]: {{linspace: [-10, -80, 8]}}
  sections.bar.shape.rectangle[1]: {{linspace: [0.01, 0.02, {heights}]}}
collect:
  tip: {{series: displacement.z@beam.end, reduce: absmax}}
"""
SNIPPET = """
import json, sys, time
import rodsim
start = time.perf_counter()
workers = None if sys.argv[3] == "0" else int(sys.argv[3])
out = rodsim.run_sweep(sys.argv[1], sys.argv[2], workers=workers)
print(json.dumps({"wall": time.perf_counter() - start, "warmup_compile": out.compile_seconds,
                  "workers_compile": sum(r.compiled for r in out.records), "ran": out.ran,
                  "complete": sum(r.status == "complete" for r in out.records)}))
"""


def sweep(folder: Path, cache: Path, output: str, workers: int) -> dict:
    env = {**os.environ, "RODSIM_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", SNIPPET, str(folder / "sweep.yaml"), str(folder / output),
         str(workers)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-per-load", type=int, default=4, help="section heights")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rodsim-bench-sweep-") as tmp:
        folder = Path(tmp)
        (folder / "cant.yaml").write_text(CASE)
        (folder / "sweep.yaml").write_text(SWEEP.format(heights=args.runs_per_load))
        cache = folder / "cache"
        started = time.perf_counter()
        cold = sweep(folder, cache, "cold", 0)
        cold["wall"] = time.perf_counter() - started
        serial = sweep(folder, cache, "serial", 1)
        pool = sweep(folder, cache, "pool", 0)
    runs = 8 * args.runs_per_load
    cores = os.cpu_count()
    print(f"{runs} runs on {cores} cores")
    print(
        f"cold cache, pool: {cold['wall']:.1f} s, of which compiling before the fan-out "
        f"{cold['warmup_compile']:.1f} s; the workers compiled {cold['workers_compile']:.2f} s"
    )
    print(f"serial (warm cache): {serial['wall']:.1f} s ({serial['wall'] / runs:.2f} s a run)")
    speedup = serial["wall"] / pool["wall"]
    print(
        f"pool (warm cache):   {pool['wall']:.1f} s; speed-up {speedup:.2f} on {cores} cores; "
        f"the workers compiled {pool['workers_compile']:.2f} s"
    )
    return {"cold": cold, "serial": serial, "pool": pool}


if __name__ == "__main__":
    main()
