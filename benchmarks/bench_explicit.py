"""Throughput of the explicit integrator on the flying-spaghetti rod (a script, not a test).

Prints element-steps per second and microseconds per step for 10 ... 10000 elements, single core
(parallel=False, 1 numba thread) and all cores (parallel=True, NUMBA_NUM_THREADS threads), for the
nodal groups SO3xR3 and SE3 at order 2, plus one order-4 row at 1000 elements per group and mode,
next to the PyElastica 1.0.0 reference figures. See benchmarks/README.md.

    python benchmarks/bench_explicit.py [--elements 10 100] [--groups SE3]
                                                       [--seconds 2] [--json results.json]
"""

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, fields

import numba
import numpy as np

from rodsim.errors import NumericalError
from rodsim.integrators import dynamics
from rodsim.integrators.stable_step import stable_step
from rodsim.mesh.generate import straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad
from rodsim.model.sections import section_from_resultants

# PyElastica 1.0.0, single core, flying spaghetti (position Verlet), measured by the project on
# this machine class (2 cores): elements -> million element-steps per second.
PYELASTICA = {10: 0.55, 100: 3.1, 1000: 6.1, 10000: 5.7}
PYELASTICA_NOTE = (
    "PyElastica 1.0.0 reference (from the issue; single core, measured by the project on this "
    "machine class, 2 cores)"
)

GROUPS = ("SO3xR3", "SE3")
ORDER4_ELEMENTS = 1000
WARMUP_STEPS = 50  # the first call compiles; the loaded rod is in motion during the pulse
MIN_STEPS = 20  # floor on steps per measurement (matters for 10000 elements)
LENGTH = 10.0


@dataclass
class Row:
    group: str
    order: int
    elements: int
    mode: str  # "single" or "all"
    parallel: bool
    threads: int
    dt: float = 0.0
    steps: int = 0  # steps of the best measurement
    repeats: int = 0  # measurements counted
    us_per_step: float = float("nan")  # best (minimum) over the repeats
    us_per_step_median: float = float("nan")
    msteps: float = float("nan")  # million element-steps per second (from the best)
    pyelastica_msteps: float | None = None
    ratio: float | None = None
    mean_iterations: float = float("nan")  # Newton iterations per node solve, timed steps
    max_iterations: int = 0
    sim_time: float = 0.0  # model time reached at the end
    warmup_x: np.ndarray | None = None  # positions after the warm-up (parallel check)
    error: str = ""


def machine() -> dict:
    """CPU model, core counts, versions and numba threading."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu_model": model,
        "logical_cpus": os.cpu_count(),
        "usable_cpus": usable,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba_num_threads": int(numba.config.NUMBA_NUM_THREADS),
        "numba_threading_layer": None,  # known only after a parallel kernel has run
        "platform": platform.platform(),
        "load_average_1_5_15": list(os.getloadavg()),
    }


def make_model(n_elements: int):
    """The flying spaghetti: L = 10 rod, tip force and moment pulse over 0 <= t <= 5."""
    part = straight_rod([0, 0, 0], [6, 8, 0], n_elements, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e4, GA=[1e4, 1e4], GJ=500, EI=[500, 500], rhoA=1, rhoI=[10, 10]
    )
    pulse = timefunc.table([[0, 0], [2.5, 200], [5, 0]])
    load = NodalLoad(nodes=[n_elements], force=(0.1, 0, 0), moment=(0, 0.5, 1.0), time=pulse)
    return build_model(part.points, part.frames, part.conn, sec, loads=[load])


def calibrate(run, target: float) -> float:
    """Seconds per step: grow the run length until one run lasts >= target seconds, then run
    that length once more and keep the faster of the two (guards against a one-off stall)."""
    n = 5
    while True:
        t = time.perf_counter()
        dynamics.advance(run, n)
        elapsed = time.perf_counter() - t
        if elapsed >= target or n >= 1_000_000:
            break
        n = max(2 * n, int(1.2 * n * target / max(elapsed, 1e-9)))
    t = time.perf_counter()
    dynamics.advance(run, n)
    return min(elapsed, time.perf_counter() - t) / n


def measure(model, dt, row: Row, seconds: float, repeats: int) -> None:
    """Warm up, calibrate, then time `repeats` runs of ~`seconds` each; fill in row.

    The step count is re-aimed after every run (the machine may be shared, so the calibration
    can be off); a run counts when it lasted 0.5 ... 2 x `seconds` (or used the 20-step floor),
    at most two extra runs are made to get `repeats` counted runs, and the best (minimum)
    time per step over the counted runs is reported."""
    run = dynamics.start(model, dt, order=row.order, group=row.group, parallel=row.parallel)
    dynamics.advance(run, WARMUP_STEPS)  # compiles on first use (or loads the numba cache)
    row.warmup_x = run.state.x.copy()
    per_step = calibrate(run, min(0.25, max(seconds / 8, 0.02)))
    steps = max(MIN_STEPS, int(round(seconds / per_step)))
    counted: list[tuple[float, int]] = []  # (seconds per step, steps) of the counted runs
    every: list[tuple[float, int]] = []
    its_sum = 0.0
    n_steps = 0
    run.max_iterations = 0
    for _ in range(repeats + 2):
        t = time.perf_counter()
        dynamics.advance(run, steps)
        elapsed = time.perf_counter() - t
        its_sum += run.mean_iterations * steps
        n_steps += steps
        every.append((elapsed / steps, steps))
        if 0.5 * seconds <= elapsed <= 2.0 * seconds or (steps == MIN_STEPS and elapsed > seconds):
            counted.append(every[-1])
        if len(counted) == repeats:
            break
        steps = max(MIN_STEPS, int(round(steps * seconds / max(elapsed, 1e-9))))
    used = counted or every
    best, row.steps = min(used)
    row.repeats = len(used)
    row.us_per_step = best * 1e6
    row.us_per_step_median = float(np.median([t for t, _ in used])) * 1e6
    row.msteps = row.elements / best / 1e6
    row.mean_iterations = its_sum / n_steps
    row.max_iterations = run.max_iterations
    row.sim_time = run.time
    ref = PYELASTICA.get(row.elements)
    if ref is not None:
        row.pyelastica_msteps = ref
        row.ratio = row.msteps / ref


def fmt(x, spec: str, width: int) -> str:
    return f"{'-':>{width}}" if x is None or x != x else f"{x:{width}{spec}}"


HEADER = (
    f"{'group':<7} {'ord':>3} {'elements':>8} {'cores':<14} {'steps x rep':>13} "
    f"{'us/step':>11} {'M el-st/s':>9} {'PyEl M':>7} {'ratio':>6} {'Newton its':>11}"
)


def print_row(row: Row) -> None:
    cores = "single" if row.mode == "single" else f"all ({row.threads} thr)"
    if row.error:
        print(f"{row.group:<7} {row.order:>3} {row.elements:>8} {cores:<14} FAILED: {row.error}")
        return
    its = f"{row.mean_iterations:.2f}/{row.max_iterations}"
    print(
        f"{row.group:<7} {row.order:>3} {row.elements:>8} {cores:<14} "
        f"{f'{row.steps} x {row.repeats}':>13} {row.us_per_step:11.2f} "
        f"{row.msteps:9.3f} {fmt(row.pyelastica_msteps, '.2f', 7)} "
        f"{fmt(row.ratio, '.2f', 6)} {its:>11}",
        flush=True,
    )


def _jsonable(row: Row) -> dict:
    """Row as a dict for JSON: no warm-up state, NaN as null."""
    out = {}
    for f in fields(row):
        v = getattr(row, f.name)
        if f.name != "warmup_x":
            out[f.name] = None if isinstance(v, float) and v != v else v
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--elements",
        type=int,
        nargs="+",
        default=[10, 100, 1000, 10000],
        help="element counts (default: 10 100 1000 10000)",
    )
    p.add_argument(
        "--groups",
        nargs="+",
        choices=GROUPS,
        default=list(GROUPS),
        help="nodal groups (default: both)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        help="target wall time of one timed measurement (default 2)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timed measurements per row; the best is reported (default 3)",
    )
    p.add_argument(
        "--no-order4",
        action="store_true",
        help=f"skip the order-4 rows at {ORDER4_ELEMENTS} elements",
    )
    p.add_argument("--json", metavar="FILE", help="also write the results to FILE as JSON")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1 or min(args.elements) < 1:
        p.error("--seconds must be > 0, --repeats >= 1 and --elements >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    info = machine()
    all_threads = info["numba_num_threads"]

    print("rodsim explicit integrator benchmark: flying spaghetti (L = 10, tip load pulse)")
    print(f"CPU            : {info['cpu_model']}")
    print(f"cores          : {info['logical_cpus']} logical, {info['usable_cpus']} usable")
    print(f"python / numpy : {info['python']} / {info['numpy']}")
    print(f"numba          : {info['numba']}, NUMBA_NUM_THREADS = {all_threads}")
    load = info["load_average_1_5_15"]
    print(
        f"load average   : {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1/5/15 min) at start"
        + ("  -- machine recently busy: other processes may slow the run" if load[0] > 0.5 else "")
    )
    print(f"{PYELASTICA_NOTE}:")
    for n, m in PYELASTICA.items():
        print(f"  {n:>6} elements: {m:4.2f} M element-steps/s ({n / m:7.1f} us per step)")
    print(
        f"timing: warm-up {WARMUP_STEPS} steps (compiles), then best of {args.repeats} "
        f"measurements of ~{args.seconds:g} s (>= {MIN_STEPS} steps each), "
        "time.perf_counter"
    )
    print(
        "dt = 0.9 x stable_step(model, order); single = parallel=False, 1 thread; "
        "all = parallel=True, NUMBA_NUM_THREADS threads"
    )
    print()

    cases = [(g, 2, n) for g in args.groups for n in args.elements]
    if not args.no_order4:
        cases += [(g, 4, ORDER4_ELEMENTS) for g in args.groups]
    modes = [("single", False, 1), ("all", True, all_threads)]

    rows: list[Row] = []
    t_start = time.perf_counter()
    models = {}
    for mode, parallel, threads in modes:
        numba.set_num_threads(threads)
        print(f"== {'single core' if mode == 'single' else f'all cores ({threads} threads)'} ==")
        print(HEADER)
        for group, order, n in cases:
            if n not in models:
                models[n] = make_model(n)
            model = models[n]
            dt = 0.9 * stable_step(model, order)
            row = Row(group, order, n, mode, parallel, threads, dt=dt)
            try:
                measure(model, dt, row, args.seconds, args.repeats)
            except NumericalError as exc:
                row.error = str(exc)
            rows.append(row)
            print_row(row)
        print()
        if parallel:
            try:
                info["numba_threading_layer"] = numba.threading_layer()
            except ValueError:
                pass
    numba.set_num_threads(all_threads)

    # the parallel kernels must reproduce the serial ones: compare the state after the warm-up
    print("check: max |x_all - x_single| after the warm-up steps (same model, dt, start state)")
    checks = []
    by_key = {(r.group, r.order, r.elements, r.mode): r for r in rows}
    for group, order, n in cases:
        a = by_key[(group, order, n, "single")]
        b = by_key[(group, order, n, "all")]
        if a.warmup_x is None or b.warmup_x is None:
            continue
        diff = float(np.abs(a.warmup_x - b.warmup_x).max())
        ok = diff <= 1e-9 * LENGTH
        checks.append({"group": group, "order": order, "elements": n, "max_dx": diff, "ok": ok})
        flag = "ok" if ok else "MISMATCH: parallel result differs from serial"
        print(f"  {group:<7} order {order} {n:>6} elements: {diff:.3e}  {flag}")
    print()
    load = os.getloadavg()
    info["load_average_at_end"] = list(load)
    print(
        f"threading layer: {info['numba_threading_layer']}; load average at end "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"total wall time {time.perf_counter() - t_start:.1f} s"
    )

    if args.json:
        out = {
            "benchmark": "explicit integrator, flying spaghetti",
            "settings": {
                "seconds": args.seconds,
                "repeats": args.repeats,
                "warmup_steps": WARMUP_STEPS,
                "min_steps": MIN_STEPS,
            },
            "machine": info,
            "pyelastica_reference": {"note": PYELASTICA_NOTE, "msteps_per_s": PYELASTICA},
            "rows": [_jsonable(r) for r in rows],
            "parallel_checks": checks,
        }
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2, default=float)
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
