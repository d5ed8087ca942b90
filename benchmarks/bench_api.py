"""Stepping from Python against the command line: steps per second of rodsim.Simulation's
advance(100) and step() against the time loop of `rodsim run` on the same model (a script,
not a test; benchmarks/README.md has the figures).

The model is a cantilever of --elements rod elements (L = 10, EA = GA = 1e4, GJ = EI = 500,
rhoA = 1, rhoI = 10) released under gravity (0, 0, -0.4), explicit order 2, dt = 0.075 /
elements (0.75 x the stable-step estimate; for 100 elements the soak.py case). The loops:

- ``rodsim run``: the time loop of rodsim.run.execute, which `rodsim run` runs: the solver
  that rodsim.solvers.start builds for the case, stepped by rodsim.integrators.dynamics.advance
  in one compiled call per chunk (execute's chunks last about 0.1 s);
- ``advance(100)``: sim.advance(100) in a Python loop;
- ``step()``: sim.step() in a Python loop;
- ``step() + force``: a controller's loop: sim.loads[0].force = (feedback of the tip's
  height), then sim.step() (after each change the forces of the step's start are
  recomputed: one more force evaluation a step).

Each loop steps its own copy of the model. The machine is shared (other processes take the
cores at times), so the loops take turns in short trials of the same number of steps (about
30 ms of the command line's loop), --trials times; the best (least) time per step of each
loop is printed, and the ratio of its rate to the command line's: of the best times, and
the median of the ratios within a trial. As a check of the first row, execute itself runs
once (two frames, no ParaView series) and its loop's rate is taken from its progress calls.

    python benchmarks/bench_api.py                    # 100 elements, 40 trials
    python benchmarks/bench_api.py --elements 10 100 1000
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
from rodsim import solvers
from rodsim.integrators import dynamics

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
solver: {{dt: {dt!r}, t_end: {t_end!r}, parallel: false}}
output: {{every: {steps}, vtk: false}}
"""


def execute_rate(prep, folder: Path) -> float:
    """Steps per second of execute's time loop, between its first and last progress call."""
    marks = []
    runner.execute(
        prep,
        folder / "r.h5",
        vtk=False,
        progress=lambda t, k, n: marks.append((time.perf_counter(), k)),
    )
    (t0, k0), (t1, k1) = marks[0], marks[-1]
    return (k1 - k0) / (t1 - t0)


def loops(prep, steps: int) -> dict:
    """name -> a function that runs `steps` steps of that loop."""
    run = solvers.start(prep)  # the solver execute steps, stepped as it steps it

    def command_line():
        dynamics.advance(run, steps)

    a, s, c = (rodsim.Simulation(prep) for _ in range(3))
    tip = c.loads[0]

    def advance_100():
        for _ in range(steps // 100):
            a.advance(100)

    def step_1():
        for _ in range(steps):
            s.step()

    def controller():
        for _ in range(steps):
            tip.force = (0.0, 0.0, -0.001 * c.state.x[-1, 2])  # a feedback law
            c.step()

    return {
        "rodsim run": command_line,
        "advance(100)": advance_100,
        "step()": step_1,
        "step() + force": controller,
    }


def seconds(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


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


def bench(elements: int, trials: int) -> None:
    dt = 0.075 / elements
    text = CASE.format(elements=elements, steps=20000, dt=dt, t_end=20000 * dt)
    prep = rodsim.prepare(rodsim.case_from_yaml(text))
    with tempfile.TemporaryDirectory(prefix="rodsim-bench-api-") as tmp:
        rate = execute_rate(prep, Path(tmp))  # also compiles or loads the kernels
        steps = max(100, round(rate * 0.03 / 100) * 100)  # a trial: about 30 ms
        runs = loops(prep, steps)
        for fn in runs.values():  # warm-up: binds the kernels, fills the caches
            fn()
        times = {name: [] for name in runs}
        for _ in range(trials):
            for name, fn in runs.items():
                times[name].append(seconds(fn) / steps)
        checked = execute_rate(prep, Path(tmp))
    base = times["rodsim run"]
    print(
        f"\n{elements} elements: {trials} trials of {steps} steps; rodsim.run.execute's "
        f"loop {checked:.0f} steps/s"
    )
    print(f"{'loop':<16}{'best steps/s':>14}{'us/step':>9}{'ratio best':>12}{'ratio median':>14}")
    for name, values in times.items():
        ratios = [b / v for b, v in zip(base, values, strict=True)]
        print(
            f"{name:<16}{1 / min(values):>14.0f}{1e6 * min(values):>9.2f}"
            f"{min(base) / min(values):>12.3f}{statistics.median(ratios):>14.3f}"
        )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--elements", type=int, nargs="+", default=[100])
    p.add_argument("--trials", type=int, default=40)
    args = p.parse_args(argv)
    logging.disable(logging.WARNING)
    print(machine())
    for n in args.elements:
        bench(n, args.trials)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
