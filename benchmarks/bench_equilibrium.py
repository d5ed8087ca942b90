"""Wall time of a static equilibrium: Newton with load steps (analysis: equilibrium) against
damped explicit dynamics run until it settles on the same state. A script, not a test.

Case: inputs/cantilever_tip/cantilever_tip.yaml (steel cantilever, 100 elements, tip load
P = 2 EI / L^2, 5 load steps). The explicit run applies the full load at once with
mass-proportional damping alpha = 2 omega_1 (critical for the first bending mode) at
dt = 0.9 x the stable step, and stops when the tip is within the given tolerances of the
Newton solution.

    python benchmarks/bench_equilibrium.py                  # about a minute
    python benchmarks/bench_equilibrium.py --explicit-tol 1e-3
"""

import argparse
import dataclasses
import math
import platform
import time
from pathlib import Path

import numba
import numpy as np

from rodsim import run as runner
from rodsim.integrators import dynamics, equilibrium
from rodsim.integrators.stable_step import stable_step

CASE = Path(__file__).resolve().parents[1] / "inputs/cantilever_tip/cantilever_tip.yaml"


def solve_equilibrium(prep):
    s = prep.case.settings.solver
    eq = equilibrium.start(
        prep.setup.model,
        s.group,
        tol=s.equilibrium.tol,
        max_iter=s.newton.max_iter,
        h0=prep.plan.dt,
    )
    steps = [
        equilibrium.solve_load_step(eq, i / prep.plan.n_steps)
        for i in range(1, prep.plan.n_steps + 1)
    ]
    return eq, steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="timed equilibrium solves (best)")
    ap.add_argument(
        "--explicit-tol",
        type=float,
        nargs="+",
        default=[1e-3, 1e-5],
        help="tip tolerances (relative to the tip displacement) for the explicit run",
    )
    args = ap.parse_args()

    print("rodsim equilibrium benchmark: 100-element cantilever under a tip load")
    print(
        f"CPU {platform.processor() or platform.machine()}, numba {numba.__version__}, "
        f"threads {numba.get_num_threads()}"
    )
    prep = runner.prepare(CASE)
    model = prep.setup.model
    started = time.perf_counter()
    solve_equilibrium(prep)  # compiles (or loads the cache)
    first = time.perf_counter() - started
    print(f"first solve (compilation or cache load included): {first:.3g} s")
    walls = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        eq, steps = solve_equilibrium(prep)
        walls.append(time.perf_counter() - started)
    tip = eq.x[-1] - model.x0[-1]
    print(
        f"equilibrium: best of {args.repeats}: {min(walls) * 1e3:.1f} ms "
        f"(median {np.median(walls) * 1e3:.1f} ms) for {len(steps)} load steps"
    )
    for st in steps:
        print(
            f"  load {st.load:.2f}: {st.iterations} Newton iterations, residual {st.residual:.2e}"
        )
    print(f"  tip displacement {tip}")

    # damped explicit dynamics to the same state
    ei = float(model.rods.c2[0, 1])
    rho_a = float(model.rho_a[0])
    length = float(model.rods.length.sum())
    omega1 = 1.875104**2 * math.sqrt(ei / (rho_a * length**4))
    damped = dataclasses.replace(model, alpha=2.0 * omega1)
    dt = 0.9 * stable_step(damped, 2)
    run = dynamics.start(damped, dt, state=dynamics.initial_state(damped))
    # the case's loads ramp with the load multiplier; hold them at 1 from t = 0 on
    run.t0 = 1.0
    scale = float(np.linalg.norm(tip))
    pending = sorted(args.explicit_tol, reverse=True)
    started = time.perf_counter()
    chunk = 2000
    while pending and run.step * dt < 50 * 2 * math.pi / omega1:
        dynamics.advance(run, chunk)
        err = float(np.linalg.norm(run.state.x[-1] - eq.x[-1])) / scale
        while pending and err <= pending[0]:
            wall = time.perf_counter() - started
            print(
                f"explicit (alpha = 2 omega_1 = {2 * omega1:.3g}/s, dt {dt:.3g} s): tip within "
                f"{pending[0]:.0e} after {run.step} steps, {run.step * dt:.3g} s simulated, "
                f"{wall:.3g} s wall ({wall / min(walls):.0f}x the equilibrium solve)"
            )
            pending.pop(0)
    for tol in pending:
        print(f"explicit: tip not within {tol:.0e} after {run.step} steps")


if __name__ == "__main__":
    main()
