"""How long `rodsim sweep --check` takes for 100,000 runs (docs/sweeps.md, "Limits"): a grid
of 100 loads x 1000 section heights of a small cantilever, checked (every run's case
validated, every run named) in a fresh process, its run list to /dev/null.

    python benchmarks/sweep_check_scale.py [--loads 100] [--heights 1000]
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASE = """rodsim: 1
title: cantilever
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 8, up: [0, 0, 1], section: bar}
sections:
  bar: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.02, 0.01]}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -100.0]}
solver: {analysis: equilibrium}
output: {vtk: false}
"""
RODSIM = "import sys; from rodsim.cli import main; sys.argv[0] = 'rodsim'; main()"
SWEEP = """rodsim_sweep: 1
case: cant.yaml
parameters:
  loads[0].force[2]: {{linspace: [-100, -400, {loads}]}}
  sections.bar.shape.rectangle[1]: {{linspace: [0.01, 0.02, {heights}]}}
collect:
  tip: {{series: displacement.z@beam.end, reduce: final}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=100)
    parser.add_argument("--heights", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "cant.yaml").write_text(CASE)
        sweep = folder / "sweep.yaml"
        sweep.write_text(SWEEP.format(loads=args.loads, heights=args.heights))
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", RODSIM, "sweep", str(sweep), "--check"],
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"rodsim sweep --check failed ({done.returncode}): {done.stderr}")
    runs = args.loads * args.heights
    lines = done.stdout.count("\n") - 1
    print(f"rodsim sweep --check of {runs} runs ({lines} listed): {seconds:.1f} s "
          f"({seconds / runs * 1e3:.3f} ms a run, process start included)")  # fmt: skip


if __name__ == "__main__":
    main()
