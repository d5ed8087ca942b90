"""The estimates of `rodsim check` (rodsim.estimates) against what runs take: run time and
results file size for every case in inputs/, and the file's bytes against its data. A script,
not a test (tests/test_estimates.py checks the file size, which does not depend on the
machine).

Every inputs/*/*.yaml (and a few variants of them that exercise other solver settings,
--no-variants to skip) is run with `python -m rodsim.cli run` in fresh processes: the first
run loads (or compiles) the kernels, the fastest of the next --repeat runs is the warm run,
whose time (the `done` line: the run itself, not starting Python and building the model) is
compared with the estimate. Then the case is run in this process with output.compression
gzip and lzf, and every results file is compared with its data (the sum of its datasets'
nbytes): `- data` is the file's bytes beyond them.

    python benchmarks/estimates.py                    # about 4 minutes with warm kernels
    python benchmarks/estimates.py --cases ring rollup --no-variants

The constants behind the estimates are measured by benchmarks/estimates_calibrate.py.
"""

import argparse
import logging
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parents[1]

VARIANTS = {  # name: (case, overrides)
    "spaghetti-order4": ("spaghetti", ["solver.order=4"]),
    "spaghetti-SE3": ("spaghetti", ["solver.group=SE3"]),
    "spaghetti-implicit": ("spaghetti", ["solver.scheme=implicit", "solver.dt=0.05"]),
    "ring-implicit": ("ring", ["solver.scheme=implicit", "solver.dt=0.015"]),
    "plate-explicit": (
        "ss_plate",
        ["solver.analysis=dynamic", "solver.scheme=explicit", "solver.t_end=0.05"],
    ),
    "cantilever41-static": (
        "cantilever_tip",
        ["mesh[0].rod.elements=40", "solver.equilibrium.load_steps=1"],
    ),
}


def data_bytes(path) -> int:
    """The bytes of the data a results file holds: the sum of its datasets' nbytes."""
    total = 0

    def visit(_, obj):
        nonlocal total
        if isinstance(obj, h5py.Dataset):
            total += obj.nbytes

    with h5py.File(path, "r", locking=False) as f:
        f.visititems(visit)
    return total


def run_fresh(case: Path, overrides: list, out: Path) -> float:
    """The `done` line's seconds of `rodsim run` in a new process."""
    sets = [a for o in overrides for a in ("--set", o)]
    cmd = [sys.executable, "-m", "rodsim.cli", "run", str(case), "-o", str(out), *sets]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError(f"{case}: {done.stderr.strip()}")
    return float(re.search(r"^done .* in (\S+) s", done.stdout, re.M).group(1))


def _short(prep) -> str:
    s, kind = prep.case.settings.solver, prep.plan.kind
    if kind == "explicit":
        return f"explicit {s.order} {s.group}" + (" plates" if prep.setup.model.n_plates else "")
    return kind + (" plates" if prep.setup.model.n_plates else "")


def compare(names: list, variants: bool, repeat: int) -> None:
    from rodsim import estimates
    from rodsim import run as runner

    cases = {p.stem: (p, []) for p in sorted(ROOT.glob("inputs/*/*.yaml"))}
    if names:
        cases = {k: v for k, v in cases.items() if k in names}
    if variants:
        for name, (base, overrides) in VARIANTS.items():
            if base in cases or not names:
                cases[name] = (next(ROOT.glob(f"inputs/*/{base}.yaml")), overrides)
    print(
        f"{'case':20s} {'solver':24s} {'est s':>6s} {'run s':>6s} {'ratio':>5s}  "
        f"{'est size':>9s} {'size':>9s} {'ratio':>5s}  {'data':>9s} {'file/data':>9s} "
        f"{'- data':>7s} {'gzip':>5s} {'lzf':>5s}"
    )
    worst_time, worst_size, bound = 1.0, 1.0, True
    with tempfile.TemporaryDirectory(prefix="rodsim-estimates-") as tmp:
        for name, (case, overrides) in cases.items():
            out = Path(tmp) / f"{name}.h5"
            run_fresh(case, overrides, out)  # loads (or compiles) the kernels
            wall = min(run_fresh(case, overrides, out) for _ in range(repeat))
            prep = runner.prepare(case, overrides)
            est = estimates.run_time(prep)
            size = estimates.results_size_of(prep)
            actual = out.stat().st_size
            data = data_bytes(out)
            bound &= actual <= 1.25 * data + 100_000
            ratios = []
            for comp in ("gzip", "lzf"):
                squeezed = Path(tmp) / f"{name}-{comp}.h5"
                p = runner.prepare(case, [*overrides, f"output.compression={comp}"])
                runner.execute(p, squeezed, vtk=False, handle_signals=False)
                ratios.append(squeezed.stat().st_size / data)
            worst_time = max(worst_time, est.seconds / wall, wall / est.seconds)
            worst_size = max(worst_size, size.bytes / actual, actual / size.bytes)
            print(
                f"{name:20s} {_short(prep):24s} {est.seconds:6.3g} {wall:6.3g} "
                f"{est.seconds / wall:5.2f}  {size.bytes:9d} {actual:9d} "
                f"{size.bytes / actual:5.3f}  {data:9d} {actual / data:9.3f} "
                f"{actual - data:7d} {ratios[0]:5.3f} {ratios[1]:5.3f}",
                flush=True,
            )
    print(
        f"worst run-time factor {worst_time:.2f} (limit 2), worst size factor "
        f"{worst_size:.3f}; every file within 1.25 x data + 100 kB: {bound}; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", nargs="+", default=[], help="inputs/ case names (file stems)")
    p.add_argument("--no-variants", action="store_true")
    p.add_argument("--repeat", type=int, default=3, help="warm runs per case (the fastest counts)")
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)
    compare(args.cases, not args.no_variants, args.repeat)


if __name__ == "__main__":
    main()
