"""The violent pulse (inputs/violent_pulse) run by the explicit scheme and by the implicit
scheme's adaptive steps, and with fixed implicit steps (a script, not a test).

Each run is `rodsim run` in a fresh process (what a user times: start-up, kernel cache load,
steps, frames), after `rodsim warmup` of its case has filled the kernel cache, REPEAT times;
the best wall time is printed with the steps taken, the mean step and the energy error after
the pulse (|K + U - (K + U)(0.2)| / (K + U)(0.2), the largest over the frames):

    python benchmarks/bench_adaptive.py             # explicit vs adaptive implicit
    python benchmarks/bench_adaptive.py --fixed     # also fixed implicit steps (slow)
    python benchmarks/bench_adaptive.py --elements 320   # a finer mesh: a smaller stable step
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import yaml

from rodsim.results import restart

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "inputs" / "violent_pulse" / "violent_pulse.yaml"
RUNS = {  # name: the case's solver settings replaced
    "explicit order 2": {"scheme": "explicit", "t_end": 3},
    "explicit order 4": {"scheme": "explicit", "order": 4, "t_end": 3},
    "implicit adaptive (the input)": None,
    "implicit adaptive, energy_tol 1e-6": {
        "scheme": "implicit", "t_end": 3, "adaptive": {"tol": 1e-2, "energy_tol": 1e-6},
    },
}  # fmt: skip
FIXED = {
    "implicit fixed dt 9.3e-4 (midpoint)": {"scheme": "implicit", "t_end": 3, "dt": 9.3e-4},
    "implicit fixed dt 9.3e-4 (conserving)": {
        "scheme": "implicit", "t_end": 3, "dt": 9.3e-4, "conserve_energy": True,
    },
}  # fmt: skip


def case_with(solver: dict | None, folder: Path, elements: int) -> Path:
    """The case file with its solver settings replaced (None: as it is) and its rod cut into
    `elements` elements."""
    data = yaml.safe_load(CASE.read_text())
    data["mesh"][0]["rod"]["elements"] = elements
    if solver is not None:
        data["solver"] = solver
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run(case: Path, out: Path) -> tuple[float, int]:
    cmd = [sys.executable, "-c", "from rodsim.cli import main; main()", "run", str(case)]
    cmd += ["-o", str(out), "-q"]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    with h5py.File(out) as f:  # the steps the solver took, from its restart state
        steps = restart.steps_taken(restart.read(f, str(out), "-"))
    del done
    return wall, steps


def warm(case: Path) -> None:
    """`rodsim warmup case`: every kernel the run calls in the cache, the adaptive steps'
    compiled batch included (a first run compiles that only when it is long)."""
    cmd = [sys.executable, "-c", "from rodsim.cli import main; main()", "warmup", str(case)]
    subprocess.run(cmd, capture_output=True, text=True, check=True)


def energy_error(out: Path) -> float:
    with h5py.File(out) as f:
        t = f["time"][()]
        e = f["energy/kinetic"][()] + f["energy/internal"][()]
    after = e[t >= 0.2 - 1e-12]
    return float(np.max(np.abs(after - after[0])) / after[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fixed", action="store_true", help="also fixed implicit steps")
    parser.add_argument("--elements", type=int, default=20, help="rod elements (the case: 20)")
    a = parser.parse_args()
    runs = RUNS | (FIXED if a.fixed else {})
    with tempfile.TemporaryDirectory() as tmp:
        for name, solver in runs.items():
            out = Path(tmp) / "out.h5"
            case = case_with(solver, Path(tmp), a.elements)
            warm(case)
            best, steps = min(run(case, out) for _ in range(a.repeat))
            print(
                f"{name:40s} wall {best:6.2f} s  steps {steps:6d}  mean step "
                f"{3.0 / steps:.3g}  energy error {energy_error(out):.1e}"
            )


if __name__ == "__main__":
    main()
