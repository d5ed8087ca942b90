"""The memory estimate (rodsim.resources) against the measured peak resident memory of
`rodsim run` in a fresh process. A script, not a test (tests/test_memory_estimate.py checks
the 1e5-element rod).

Each row writes a case, estimates it as `rodsim run` does (rodsim.resources.estimate of the
case's sizes and solver settings) and runs `python -m rodsim.cli run CASE -q --no-vtk` in a
subprocess; the peak is that child's ru_maxrss (os.wait4). Rods: a straight cantilever under
gravity, 3 steps. Plates: a square n x n quads clamped on one edge under a pressure (the
implicit scheme's LU fill grows faster than n^2: 200 x 200 runs about 9 minutes), 3 steps. The
numba cache should be warm (run any case once): a first run compiles the kernels, which takes
a few hundred MB more, once.

Measured (x86_64, 2 cores, 24 GB, Python 3.11, warm numba cache; plates: n x n quads):

    case   scheme     elements   estimate   peak RSS  ratio    wall
    rod    explicit     100000    489 MiB    497 MiB   0.98   13.6s
    rod    explicit    1000000   2.14 GiB   2.12 GiB   1.01  102.1s
    rod    implicit      10000    390 MiB    319 MiB   1.22    7.2s
    rod    implicit     100000   1.17 GiB    1.1 GiB   1.07   32.4s
    plate  explicit      10000    332 MiB    267 MiB   1.24    6.0s
    plate  explicit      90000    585 MiB    601 MiB   0.97   21.5s
    plate  implicit      10000   1.04 GiB    908 MiB   1.17   29.3s

(and, measured separately, a 200 x 200 plate with the implicit scheme: estimate 5.02 GiB, peak
4.56 GiB, 1.10). Small models are overestimated by up to a third: the fixed part (BASELINE) is
the intercept of the large ones.

    python benchmarks/memory_estimate.py                    # rods 1e5 and 1e6, ~2 minutes
    python benchmarks/memory_estimate.py --all              # also implicit and plates, ~4 min
    python benchmarks/memory_estimate.py --rows rod:explicit:100000 plate:implicit:100
"""

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rodsim import resources
from rodsim.case.load import load_case

ROOT = Path(__file__).resolve().parents[1]

ROD = """rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {n}, section: bar}}
sections:
  bar: {{type: rod, material: {{E: 7.0e10, nu: 0.33, rho: 2700}},
         shape: {{rectangle: [0.02, 0.01]}}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - gravity: [0, 0, -9.81]
solver: {{scheme: {scheme}, dt: 1.0e-12, t_end: 3.0e-12}}
output: {{every: 1, vtk: false}}
"""

PLATE = """rodsim: 1
mesh:
  - rectangle: {{name: p, origin: [0, 0, 0], size: [1, 1], elements: [{n}, {n}], section: s}}
sections:
  s: {{type: plate, material: {{E: 1.0e6, nu: 0.3, rho: 1.0}}, thickness: 0.001}}
boundary:
  - {{set: p.x0, fix: all}}
loads:
  - {{set: p.all, pressure: 1.0e-6}}
solver: {{scheme: {scheme}, dt: 1.0e-12, t_end: 3.0e-12}}
output: {{every: 1, vtk: false}}
"""

DEFAULT = ["rod:explicit:100000", "rod:explicit:1000000"]
ALL = DEFAULT + [
    "rod:implicit:10000",
    "rod:implicit:100000",
    "plate:explicit:100",
    "plate:explicit:300",
    "plate:implicit:100",
]


def peak_rss(case: Path) -> tuple[int, float]:
    """(peak resident bytes, wall seconds) of `rodsim run case` in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "-q", "--no-vtk"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{case} failed:\n{output.decode()}")
    return usage.ru_maxrss * 1024, time.perf_counter() - started  # ru_maxrss: KiB


def measure(row: str, folder: Path) -> dict:
    """One row `kind:scheme:n` (rod: n elements; plate: n x n quads)."""
    kind, scheme, n = row.split(":")
    text = (ROD if kind == "rod" else PLATE).format(n=int(n), scheme=scheme)
    case = folder / f"{kind}_{scheme}_{n}.yaml"
    case.write_text(text)
    data = load_case(case).settings
    sizes = resources.case_sizes(data)
    need = resources.estimate(sizes, resources.case_settings(data)).bytes
    peak, wall = peak_rss(case)
    items = sizes.elements if kind == "rod" else sizes.plates
    return {
        "case": kind,
        "scheme": scheme,
        "elements": items,
        "estimate": need,
        "peak": peak,
        "ratio": need / peak,
        "wall": wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--rows",
        nargs="+",
        default=None,
        metavar="KIND:SCHEME:N",
        help="rod|plate : explicit|implicit : elements (plates: n of n x n)",
    )
    ap.add_argument("--all", action="store_true", help="also the implicit scheme and plates")
    args = ap.parse_args()
    rows = args.rows or (ALL if args.all else DEFAULT)
    print(
        f"rodsim memory estimate vs peak RSS; {platform.machine()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores"
    )
    print(
        f"{'case':6} {'scheme':9} {'elements':>9} {'estimate':>10} {'peak RSS':>10} "
        f"{'ratio':>6} {'wall':>7}"
    )
    with tempfile.TemporaryDirectory(prefix="rodsim-memory-") as tmp:
        for row in rows:
            m = measure(row, Path(tmp))
            print(
                f"{m['case']:6} {m['scheme']:9} {m['elements']:>9} "
                f"{resources.format_size(m['estimate']):>10} "
                f"{resources.format_size(m['peak']):>10} {m['ratio']:6.2f} "
                f"{m['wall']:6.1f}s",
                flush=True,
            )


if __name__ == "__main__":
    main()
