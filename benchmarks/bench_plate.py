"""Throughput of the explicit integrator on plates: element-steps per second for a free square
plate of n x n quads (or 2 n^2 triangles) thrown with a small deformation. A script, not a test.

    python benchmarks/bench_plate.py                       # 16, 64, 128; about a minute
    python benchmarks/bench_plate.py --sizes 32 --triangles
"""

import argparse
import platform
import time

import numba
import numpy as np

from rodsim.integrators import dynamics
from rodsim.integrators.stable_step import stable_step
from rodsim.model.assembly import build_model
from rodsim.model.plate import make_plates


def square(n: int, triangles: bool):
    xs = np.linspace(0.0, 1.0, n + 1)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    points = np.c_[gx.ravel(), gy.ravel(), np.zeros(gx.size)]
    idx = np.arange(points.shape[0]).reshape(n + 1, n + 1)
    a, b = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    c, d = idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    if triangles:
        conn = np.concatenate([np.c_[a, b, c, c], np.c_[a, c, d, d]])
    else:
        conn = np.c_[a, b, c, d]
    frames = np.repeat(np.eye(3)[None], points.shape[0], axis=0)
    plates = make_plates(conn, points, frames, 1e6, 0.3, 0.01, 1.0)
    return build_model(points, frames, np.zeros((0, 2), np.int64), [], plates=plates)


def measure(model, seconds: float) -> tuple[float, int]:
    st = dynamics.initial_state(model)
    st.p[:, 2] = 1e-6 * model.mass * np.sin(7.0 * np.arange(model.n_nodes))
    run = dynamics.start(model, 0.9 * stable_step(model, 2), state=st)
    dynamics.advance(run, 20)  # compiles (or loads the cache)
    steps = 20
    while True:
        started = time.perf_counter()
        dynamics.advance(run, steps)
        wall = time.perf_counter() - started
        if wall > seconds or steps > 10**7:
            return wall / steps, steps
        steps *= 4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 128])
    ap.add_argument("--triangles", action="store_true")
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    numba.set_num_threads(1)
    print(
        f"rodsim explicit plate benchmark ({'triangles' if args.triangles else 'quads'}), "
        f"{platform.processor() or platform.machine()}, numba {numba.__version__}, 1 thread"
    )
    print(f"{'mesh':>8} {'elements':>9} {'nodes':>7} {'us/step':>10} {'M el-steps/s':>13}")
    for n in args.sizes:
        model = square(n, args.triangles)
        per_step, steps = measure(model, args.seconds)
        print(
            f"{n:>4}x{n:<3} {model.n_plates:>9} {model.n_nodes:>7} {per_step * 1e6:>10.1f} "
            f"{model.n_plates / per_step / 1e6:>13.2f}"
        )


if __name__ == "__main__":
    main()
