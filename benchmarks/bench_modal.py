"""Wall time of the 20 lowest modes of a 1000-element rod and of a 64 x 64 plate
(rodsim.modes, docs/modal.md; issue 17 asks under 5 s each, warm). A script, not a test.

    python benchmarks/bench_modal.py            # about half a minute, compilation included

The first call of each model compiles (or loads from the cache) the residual kernels; it is
reported separately. "warm" is the best of the repeats after it: assembling the tangent
(complex-step Jacobian), the mass, and the shift-invert eigen solve.
"""

import argparse
import platform
import time

import numba

import rodsim

ROD = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [10, 0, 0], elements: 1000, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.02, 0.01]}}
boundary:
  - {set: beam.start, fix: all}
solver: {t_end: 1}
"""

PLATE = """
rodsim: 1
mesh:
  - rectangle: {name: p, origin: [0, 0, 0], size: [1, 1], elements: [64, 64], section: s}
sections:
  s: {type: plate, material: {E: 2.1e11, nu: 0.3, rho: 7850}, thickness: 0.002}
boundary:
  - {set: p.boundary, fix: [ux, uy, uz, rz]}
solver: {t_end: 1}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(
        f"CPU {platform.processor() or platform.machine()}, numba {numba.__version__}, "
        f"threads {numba.get_num_threads()}"
    )
    for name, text in (("rod, 1000 elements", ROD), ("plate, 64 x 64 quads", PLATE)):
        case = rodsim.case_from_yaml(text)
        started = time.perf_counter()
        first = rodsim.modes(case, count=20)
        cold = time.perf_counter() - started
        walls = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            rodsim.modes(case, count=20)
            walls.append(time.perf_counter() - started)
        print(
            f"{name}: 20 modes in {min(walls):.2f} s warm (first call {cold:.1f} s, "
            f"compilation included); f1 = {first.frequency[0]:.6g}, f20 = "
            f"{first.frequency[-1]:.6g}"
        )


if __name__ == "__main__":
    main()
