"""Measure the constants of rodsim.estimates (a script, not a test): the run-time cost table
(STEP, NEWTON, FRAME, VTK_FRAME, COMPRESS, START, PARALLEL) on synthetic rods of 10 to 1000
elements and square plates of 8 x 8 to 32 x 32 quads, and the file-size constants
(FRAME_DATASET_BYTES, MESH_DATASET_BYTES) on random results files. It prints them; copy them
into rodsim/estimates.py with the machine they were measured on. Run it on an idle machine
with a warm numba cache (any case run once): busy cores make every figure pessimistic.

    python benchmarks/estimates_calibrate.py                 # all of the cost table, ~8 min
    python benchmarks/estimates_calibrate.py steps frames    # some parts of it
    python benchmarks/estimates_calibrate.py --fit-size      # the file size, ~2 min
"""

import argparse
import contextlib
import logging
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from estimates import run_fresh

ROD = """rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [10, 0, 0], elements: {n}, section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1,
      rhoI: [10, 10]}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - gravity: [0, 0, -0.4]
  - {{set: beam.end, moment: [0, 0, 5]}}
solver: {{analysis: {analysis}, scheme: {scheme}, group: {group}, order: {order},
         t_end: 1.0, parallel: {parallel}}}
output: {{vtk: false}}
"""

PLATE = """rodsim: 1
mesh:
  - rectangle: {{name: p, origin: [0, 0, 0], size: [1, 1], elements: [{n}, {n}], section: s}}
sections:
  s: {{type: plate, material: {{E: 1.0e6, nu: 0.3, rho: 1.0}}, thickness: 0.01}}
boundary:
  - {{set: p.x0, fix: all}}
loads:
  - {{set: p.all, pressure: 1.0e-3}}
solver: {{analysis: {analysis}, scheme: {scheme}, group: {group}, order: {order},
         t_end: 1.0, parallel: {parallel}}}
output: {{vtk: false}}
"""


def _case(
    folder: Path,
    shape: str,
    n: int,
    analysis="dynamic",
    scheme="explicit",
    group="SO3xR3",
    order=2,
    parallel="false",
) -> Path:
    text = (ROD if shape == "rod" else PLATE).format(
        n=n, analysis=analysis, scheme=scheme, group=group, order=order, parallel=parallel
    )
    path = folder / f"{shape}-{n}-{analysis}-{scheme}-{group}-{order}-{parallel}.yaml"
    path.write_text(text)
    return path


@contextlib.contextmanager
def _counting_factorisations():
    """Count the sparse and band LU factorisations (one per Newton iteration) of the
    implicit scheme and equilibrium."""
    from rodsim.integrators import banded, vi_solver

    count = [0]
    real_splu, real_band = vi_solver.splu, banded.factor

    def splu(*a, **kw):
        count[0] += 1
        return real_splu(*a, **kw)

    def factor(*a, **kw):
        count[0] += 1
        return real_band(*a, **kw)

    vi_solver.splu, banded.factor = splu, factor
    try:
        yield count
    finally:
        vi_solver.splu, banded.factor = real_splu, real_band


def _timed(case: Path, overrides: list, folder: Path, vtk=False) -> float:
    from rodsim import run as runner

    prep = runner.prepare(case, overrides)
    started = time.perf_counter()
    runner.execute(prep, folder / "c.h5", vtk=vtk, handle_signals=False)
    return time.perf_counter() - started


def _per_step(case: Path, folder: Path, seconds: float, dt_factor=0.8) -> float:
    """Wall seconds per step of a dynamic case, from two runs of n and 4n steps (2 frames
    each), dt = dt_factor x the stable-step estimate."""
    from rodsim import run as runner

    stable = runner.prepare(case).plan.stable_dt
    dt = dt_factor * stable

    def steps(n):
        return [f"solver.dt={dt!r}", f"solver.t_end={n * dt!r}", f"output.every={n}"]

    _timed(case, steps(4), folder)  # loads the kernels
    n = 16
    while (t := _timed(case, steps(n), folder)) < seconds / 5 and n < 10**8:
        n *= 4
    return (_timed(case, steps(4 * n), folder) - t) / (3 * n)


def _fit(xs, ys) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line, the intercept at least 0."""
    slope, intercept = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return max(float(intercept), 0.0), float(slope)


def _tiny(case: Path) -> list:
    """Overrides for a run of 4 steps (equilibrium: as it is, one load step)."""
    from rodsim import run as runner

    plan = runner.prepare(case).plan
    if plan.kind == "equilibrium":
        return []
    return [f"solver.dt={plan.stable_dt * 0.8!r}", f"solver.t_end={plan.stable_dt * 3.2!r}"]


def _power(xs, ys) -> tuple[float, float]:
    """(c, a) of the least-squares fit y = c x^a in log-log."""
    a, log_c = np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)
    return float(np.exp(log_c)), float(a)


def _start_cost(case: Path, folder: Path) -> float:
    """What a fresh process adds to a run: loading the compiled kernels from numba's cache."""
    overrides = _tiny(case)
    fresh = min(run_fresh(case, overrides, folder / "s.h5") for _ in range(2))
    _timed(case, overrides, folder)
    warm = min(_timed(case, overrides, folder) for _ in range(3))
    return max(fresh - warm, 0.0)


PARTS = ("steps", "parallel", "newton", "frames", "compression", "start")


def calibrate(seconds: float, parts) -> None:
    from rodsim import estimates
    from rodsim import run as runner

    logging.disable(logging.WARNING)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rods, plates = [10, 100, 1000], [8, 16, 32]
    with tempfile.TemporaryDirectory(prefix="rodsim-calibrate-") as tmp:
        folder = Path(tmp)
        if "steps" in parts:  # seconds per step
            for label, kw in (
                ("explicit", {}),
                ("order4", {"order": 4}),
                ("SE3", {"group": "SE3"}),
            ):
                r = [_per_step(_case(folder, "rod", n, **kw), folder, seconds) for n in rods]
                p = [_per_step(_case(folder, "plate", n, **kw), folder, seconds) for n in plates]
                print(
                    f"step {label}: rods {_fit(rods, r)} {r}; plates "
                    f"{_fit([n * n for n in plates], p)} {p}",
                    flush=True,
                )
        if "parallel" in parts:
            big = 4000
            serial = _per_step(_case(folder, "rod", big), folder, seconds)
            par = _per_step(_case(folder, "rod", big, parallel="true"), folder, seconds)
            print(f"parallel {big} elements: {par / serial:.3f} of serial", flush=True)
        if "newton" in parts:  # seconds per Newton iteration, iterations per step
            for analysis in ("dynamic", "equilibrium"):
                per_it = {"rod": [], "plate": []}
                its = []
                for shape, sizes in (("rod", rods), ("plate", plates)):
                    for n in sizes:
                        case = _case(folder, shape, n, analysis=analysis, scheme="implicit")
                        steps = 5 if analysis == "equilibrium" else 20
                        overrides = (
                            ["solver.equilibrium.load_steps=5"]
                            if steps == 5
                            else ["solver.dt=0.01", "solver.t_end=0.2", "output.every=20"]
                        )
                        _timed(case, overrides, folder)
                        with _counting_factorisations() as count:
                            t = min(_timed(case, overrides, folder) for _ in range(2))
                        # less writing the frames (the frame rows of the table)
                        prep = runner.prepare(case, overrides)
                        t -= estimates.run_time(prep).frames
                        per_it[shape].append(t / (count[0] / 2))
                        its.append(count[0] / 2 / steps)
                print(
                    f"newton {analysis}: rods {_fit(rods, per_it['rod'])} {per_it['rod']}; "
                    f"plates {_power([n * n for n in plates], per_it['plate'])} "
                    f"{per_it['plate']}; iterations per step {its}",
                    flush=True,
                )
        if "frames" in parts:  # seconds per frame, by nodes
            for vtk in (False, True):
                for shape, sizes in (("rod", rods), ("plate", plates)):
                    ys = []
                    for n in sizes:
                        case = _case(folder, shape, n)
                        step = _per_step(case, folder, seconds / 4)
                        dt = 0.8 * runner.prepare(case).plan.stable_dt
                        count = 200
                        o = [f"solver.dt={dt!r}", f"solver.t_end={count * dt!r}", "output.every=1"]
                        _timed(case, o, folder, vtk)
                        t = min(_timed(case, o, folder, vtk) for _ in range(2))
                        ys.append((t - count * step) / (count + 1))
                    nodes = [n + 1 if shape == "rod" else (n + 1) ** 2 for n in sizes]
                    print(
                        f"frame {shape}{' vtk' if vtk else ''}: {_fit(nodes, ys)} {ys}", flush=True
                    )
        if "compression" in parts:  # seconds a frame's compression adds, by datasets, bytes
            for compression in ("gzip", "lzf"):
                rows, extra = [], []
                for shape, sizes in (("rod", [100, 1000]), ("plate", [16, 32])):
                    for n in sizes:
                        case = _case(folder, shape, n)
                        dt = 0.8 * runner.prepare(case).plan.stable_dt
                        count = 200
                        o = [f"solver.dt={dt!r}", f"solver.t_end={count * dt!r}", "output.every=1"]
                        c = [*o, f"output.compression={compression}"]
                        _timed(case, c, folder)
                        plain = min(_timed(case, o, folder) for _ in range(3))
                        squeezed = min(_timed(case, c, folder) for _ in range(3))
                        extra.append((squeezed - plain) / (count + 1))
                        rows.append(
                            estimates._compressed(runner.prepare(case, c).setup.mesh, compression)
                        )
                coef = np.linalg.lstsq(np.array(rows, float), np.array(extra), rcond=None)[0]
                print(
                    f"compression {compression}: per dataset {coef[0]:.3g} s, per byte "
                    f"{coef[1]:.3g} s; {rows} {extra}",
                    flush=True,
                )
        if "start" in parts:  # seconds a fresh process adds
            for analysis, scheme in (
                ("dynamic", "explicit"),
                ("dynamic", "implicit"),
                ("equilibrium", "implicit"),
            ):
                for shape in ("rod", "plate"):
                    case = _case(folder, shape, 4, analysis=analysis, scheme=scheme)
                    print(
                        f"start {analysis} {scheme} {shape}: {_start_cost(case, folder):.3f}",
                        flush=True,
                    )


# --- the file-size constants ----------------------------------------------------------------


def _random_mesh(rng, n: int, rods: bool, plates: bool, n_sets: int):
    from rodsim.mesh.assemble import Mesh

    e, p = (n - 1 if rods else 0), (n // 2 if plates else 0)
    return Mesh(
        points=rng.normal(size=(n, 3)),
        frames=rng.normal(size=(n, 3, 3)),
        conn=rng.integers(0, n, (e, 2)),
        end_frames=rng.normal(size=(e, 2, 3, 3)),
        section=rng.integers(0, 2, e),
        section_names=("a", "b"),
        part=rng.integers(0, 2, e),
        part_names=("p", "q"),
        sets={f"part.set{i}": np.arange(min(i, n)) for i in range(n_sets)},
        plates=rng.integers(0, n, (p, 4)),
        plate_section=rng.integers(0, 2, p),
        plate_part=rng.integers(0, 2, p),
        plate_frames=rng.normal(size=(p, 4, 3, 3)),
    )


def _random_frame(rng, mesh):
    from rodsim.results.frame import Frame

    n, e, p = mesh.n_nodes, mesh.n_elements, mesh.n_plates

    def vec(rows, width=3):
        return rng.normal(size=(rows, width))

    return Frame(
        time=1.0,
        position=vec(n),
        rotation=vec(n, 4),
        directors=np.zeros((n, 3, 3)),
        velocity=vec(n),
        angular_velocity=vec(n),
        linear_momentum=vec(n),
        angular_momentum=vec(n),
        force=vec(e),
        moment=vec(e),
        strain=vec(e),
        curvature=vec(e),
        kinetic=1.0,
        internal=1.0,
        external=1.0,
        total_linear=vec(1)[0],
        total_angular=vec(1)[0],
        dt=1.0,
        iterations=1.0,
        residual=1.0,
        reaction_force=vec(n),
        reaction_moment=vec(n),
        plate_membrane=vec(p) if p else None,
        plate_bending=vec(p) if p else None,
        plate_shear=vec(p, 2) if p else None,
    )


def fit_size() -> None:
    """Least-squares FRAME_DATASET_BYTES and MESH_DATASET_BYTES: what the file holds beyond
    the data, the allocated chunks and the chunk index past its first node."""
    from rodsim import estimates
    from rodsim.results.writer import ResultsWriter

    rng = np.random.default_rng(0)
    rows, sizes = [], []
    with tempfile.TemporaryDirectory(prefix="rodsim-fit-size-") as tmp:
        path = Path(tmp) / "r.h5"
        for rods, plates in ((True, False), (False, True), (True, True)):
            for n in (7, 60, 600):
                for frames in (1, 2, 17, 100, 400, 1000):
                    if n * frames > 100_000:
                        continue
                    for n_sets in (1, 10, 30):
                        mesh = _random_mesh(rng, n, rods, plates, n_sets)
                        written = [_random_frame(rng, mesh) for _ in range(2)]
                        text = "x" * int(rng.integers(0, 3000))
                        with ResultsWriter(path, mesh, text, expected_frames=frames) as w:
                            for k in range(frames):
                                w.write(written[k % 2])
                        zero = estimates.results_size(
                            mesh, frames, text_bytes=len(text), constants=(0, 0)
                        )
                        ones = [
                            estimates.results_size(
                                mesh, frames, text_bytes=len(text), constants=c
                            ).bytes
                            - zero.bytes
                            for c in ((1, 0), (0, 1))
                        ]
                        rows.append(ones)
                        sizes.append(path.stat().st_size - zero.bytes)
    a, y = np.array(rows, float), np.array(sizes, float)
    coef = np.linalg.lstsq(a, y, rcond=None)[0]
    error = a @ coef - y
    print(
        f"{len(y)} files: FRAME_DATASET_BYTES = {coef[0]:.0f}, MESH_DATASET_BYTES = "
        f"{coef[1]:.0f}; residuals {error.min():.0f} to {error.max():.0f} bytes"
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("parts", nargs="*", help=f"parts of the cost table: {', '.join(PARTS)}")
    p.add_argument("--seconds", type=float, default=1.0, help="seconds per timed run")
    p.add_argument("--fit-size", action="store_true", help="fit the file-size constants")
    args = p.parse_args(argv)
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        p.error(f"unknown parts {', '.join(sorted(unknown))}; choose from {', '.join(PARTS)}")
    if args.fit_size:
        fit_size()
    else:
        calibrate(args.seconds, args.parts or PARTS)


if __name__ == "__main__":
    main()
