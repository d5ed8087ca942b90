"""Stepping from Python against the command line: steps per second of rodsim.Simulation's
advance(100) and step() against the time loop of `rodsim run` on the same model (a script,
not a test; benchmarks/README.md has the figures).

The model is a cantilever of --elements rod elements (L = 10, EA = GA = 1e4, GJ = EI = 500,
rhoA = 1, rhoI = 10) released under gravity (0, 0, -0.4), explicit order 2, dt = 7.5e-4 (the
soak.py case). Every method runs the same --steps steps from the same initial state, so they
do the same work (the same trajectory, bit for bit):

- ``rodsim run``: rodsim.run.execute (what the command runs) with two frames (t = 0 and the
  end) and no ParaView series; its rate is that of the time loop alone, taken from the
  progress callback: steps between the first and the last call over the wall time between
  them (the frames and the writer's set-up fall outside);
- ``advance(100)``: sim.advance(100) in a Python loop;
- ``step()``: sim.step() in a Python loop;
- ``step() + force``: sim.loads[0].force = ... then sim.step(), a controller's loop (the forces
  of the step's start are recomputed after every change: one more force evaluation a step).

The methods run in turn, --rounds times; the best and the median rate of each are printed,
with their ratio to the command line's. Kernels must be compiled (run once before timing).

    python benchmarks/bench_api.py                    # 100 elements, 20000 steps, 5 rounds
    python benchmarks/bench_api.py --elements 10 1000 --steps 5000
"""

import argparse
import logging
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

import rodsim
from rodsim import run as runner

CASE = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [10, 0, 0], elements: {elements}, up: [0, 0, 1],
          section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1,
      rhoI: [10, 10]}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, 0]}}
  - gravity: [0, 0, -0.4]
solver: {{dt: 7.5e-4, t_end: {t_end}, parallel: false}}
output: {{every: {steps}, vtk: false}}
"""


def command_line(prep, folder: Path) -> float:
    """Steps per second of execute's time loop, from its progress calls."""
    calls = []
    runner.execute(
        prep,
        folder / "r.h5",
        vtk=False,
        progress=lambda t, k, n: calls.append((time.perf_counter(), k)),
    )
    (t0, k0), (t1, k1) = calls[0], calls[-1]
    return (k1 - k0) / (t1 - t0)


def advance_100(prep, steps: int) -> float:
    sim = rodsim.Simulation(prep)
    sim.advance(0)  # binds the compiled kernel, as execute's first call does
    started = time.perf_counter()
    for _ in range(steps // 100):
        sim.advance(100)
    return steps // 100 * 100 / (time.perf_counter() - started)


def step_1(prep, steps: int) -> float:
    sim = rodsim.Simulation(prep)
    sim.advance(0)
    started = time.perf_counter()
    for _ in range(steps):
        sim.step()
    return steps / (time.perf_counter() - started)


def step_with_force(prep, steps: int) -> float:
    sim = rodsim.Simulation(prep)
    sim.advance(0)
    tip = sim.loads[0]
    force = np.zeros(3)
    started = time.perf_counter()
    for _ in range(steps):
        force[2] = -0.001 * sim.state.x[-1, 2]  # a feedback law: what a controller does
        tip.force = force
        sim.step()
    return steps / (time.perf_counter() - started)


METHODS = {
    "rodsim run": None,
    "advance(100)": advance_100,
    "step()": step_1,
    "step() + force": step_with_force,
}


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").open()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy "
        f"{np.__version__}, numba {numba.__version__}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )


def bench(elements: int, steps: int, rounds: int) -> None:
    t_end = steps * 7.5e-4
    prep = rodsim.prepare(
        rodsim.case_from_yaml(CASE.format(elements=elements, steps=steps, t_end=t_end))
    )
    assert prep.plan.n_steps == steps, prep.plan
    rates = {name: [] for name in METHODS}
    with tempfile.TemporaryDirectory(prefix="rodsim-bench-api-") as tmp:
        command_line(prep, Path(tmp))  # compile or load the kernels
        for _ in range(rounds):
            for name, method in METHODS.items():
                rate = command_line(prep, Path(tmp)) if method is None else method(prep, steps)
                rates[name].append(rate)
    cli_best, cli_median = max(rates["rodsim run"]), statistics.median(rates["rodsim run"])
    print(f"\n{elements} elements, {steps} steps, {rounds} rounds")
    print(
        f"{'method':<16}{'best steps/s':>14}{'median':>10}{'us/step':>9}"
        f"{'ratio best':>12}{'ratio median':>14}"
    )
    for name, values in rates.items():
        best, median = max(values), statistics.median(values)
        print(
            f"{name:<16}{best:>14.0f}{median:>10.0f}{1e6 / best:>9.2f}"
            f"{best / cli_best:>12.3f}{median / cli_median:>14.3f}"
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--elements", type=int, nargs="+", default=[100])
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)
    print(machine())
    for n in args.elements:
        bench(n, args.steps, args.rounds)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
