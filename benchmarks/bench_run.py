"""The whole run path, timed: rodsim.run.prepare + execute of example cases, writing the
results file and the ParaView series (a script, not a test).

The per-step kernels are timed by bench_explicit.py; this script times what surrounds them:
the frame loop, the output records, the HDF5 and VTK writers (with the run status, the space
reservation and the lock of issue 13). Each case is run once untimed (compilation or cache
load), then REPEAT times; the best wall time in ms is printed per case:

    run <name> <ms>

    python benchmarks/bench_run.py                       # the default cases, best of 5
    python benchmarks/interleave.py --base 004cd09 --same-script -- benchmarks/bench_run.py

It reads only ``rodsim.run.prepare`` and ``rodsim.run.execute(prep, output, vtk)``, which
every version since the first has, so interleave.py can run it against older trees
(``--same-script``: this copy of the script for both).
"""

import argparse
import logging
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = {  # name: (case, overrides, vtk)
    "ring-135-frames-vtk": ("inputs/ring/ring.yaml", ["solver.t_end=2"], True),
    "cantilever-1001-frames": ("inputs/cantilever/cantilever.yaml", [], False),
    "cantilever-1001-frames-vtk": ("inputs/cantilever/cantilever.yaml", [], True),
    "spaghetti-implicit": (
        "inputs/spaghetti/spaghetti.yaml",
        ["solver.scheme=implicit", "solver.dt=0.05"],
        False,
    ),
    "rollup-equilibrium": ("inputs/rollup/rollup.yaml", [], False),
}


def time_case(case: str, overrides: list, vtk: bool, repeat: int, folder: Path) -> float:
    from rodsim import run

    prep = run.prepare(ROOT / case, overrides)
    run.execute(prep, folder / "warm.h5", vtk=vtk)
    best = float("inf")
    for k in range(repeat):
        started = time.perf_counter()
        run.execute(prep, folder / f"r{k}.h5", vtk=vtk)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)  # dt adjustment notes
    for name in args.cases:
        with tempfile.TemporaryDirectory(prefix="rodsim-bench-run-") as tmp:
            ms = 1e3 * time_case(*CASES[name], args.repeat, Path(tmp))
        print(f"run {name} {ms:.2f}", flush=True)


if __name__ == "__main__":
    main()
