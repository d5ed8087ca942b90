"""The one place that wires case -> model -> integrator -> writers.

``prepare`` validates a case and builds everything short of integrating (``rodsim check``);
``execute`` integrates and streams frames to the HDF5 file and the ParaView series
(``rodsim run``). The library logs; progress goes to an optional callback; the CLI prints.
"""

import logging
import math
import time as wallclock
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from rodsim.case.load import Case, load_case
from rodsim.case.model import Setup, build
from rodsim.errors import CaseError
from rodsim.integrators import dynamics, equilibrium, implicit
from rodsim.integrators.diagnostics import nodal_velocities
from rodsim.integrators.stable_step import stable_step
from rodsim.lie.arrays import relative_quaternions
from rodsim.model.loads import external_forces, plate_pressure
from rodsim.model.plate import assemble_plate_forces, plate_fields
from rodsim.model.prescribed import largest_rotation_step, prescribed_velocities
from rodsim.model.rod import element_fields, internal_forces
from rodsim.writers.frame import Frame
from rodsim.writers.hdf5 import ResultsWriter
from rodsim.writers.vtk import SeriesWriter

log = logging.getLogger(__name__)

PARALLEL_FROM = 2000  # elements; below this the parallel step does not pay off (benchmarks/)
MAX_STEPS = 10**12
MAX_CHUNK = 2000  # steps per compiled call, so progress and interrupts stay responsive


@dataclass(frozen=True)
class Plan:
    """Time stepping and output: dt, total steps, steps between frames, stable-step estimate.

    kind: explicit | implicit | equilibrium; t_end the simulated time at the end (the load
    multiplier 1 in equilibrium, where a step is a load step and dt the first pseudo-time
    step)."""

    dt: float
    n_steps: int
    steps_per_frame: int
    stable_dt: float
    parallel: bool
    kind: str = "explicit"
    t_end: float = 0.0

    @property
    def n_frames(self) -> int:
        return 1 + math.ceil(self.n_steps / self.steps_per_frame)


@dataclass(frozen=True)
class Prepared:
    case: Case
    setup: Setup
    plan: Plan
    overrides: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    path: Path
    pvd: Path | None
    frames: int
    steps: int
    wall: float
    final: Frame


def plan(case: Case, model, n_elements: int) -> Plan:
    """dt and output cadence from the solver and output settings (see docs/case_reference)."""
    s, out = case.data["solver"], case.data["output"]
    order = int(s["order"])
    with np.errstate(all="ignore"):
        try:
            stable = stable_step(model, order)
        except np.linalg.LinAlgError:
            stable = math.nan
    if math.isnan(stable):
        raise CaseError("the section properties are out of the representable range (the "
                        "stable-step estimate is not a number)", key="sections")
    if s["analysis"] == "equilibrium":
        h0 = s["dt"] if s["dt"] != "auto" else 10.0 * stable if math.isfinite(stable) else 1.0
        n = int(s["equilibrium"]["load_steps"])
        _check_cayley_steps(model, np.linspace(0.0, 1.0, n + 1), "load step",
                            "solver.equilibrium.load_steps")
        return Plan(float(h0), n, 1, float(stable), False, "equilibrium", 1.0)
    t_end = s["t_end"]
    implicit = s["scheme"] == "implicit"
    interval = out["interval"]
    given_interval = interval is not None
    if interval is None and out["every"] is None:
        interval = t_end / 100.0
    if s["dt"] == "auto":
        if not math.isfinite(stable):
            raise CaseError("dt: auto needs a stable-step estimate, and the model has no "
                            "elastic element; give dt", key="solver.dt")
        raw = s["safety"] * stable
        _check_steps(t_end / raw)
        if interval is not None:  # shrink dt so frames fall on the interval and on t_end
            n_frames = max(1, math.ceil(t_end / interval * (1 - 1e-12)))
            per = max(1, math.ceil(t_end / n_frames / raw * (1 - 1e-12)))
            n_steps = n_frames * per
        else:
            n_steps = max(1, math.ceil(t_end / raw * (1 - 1e-12)))
        dt = t_end / n_steps
    else:
        _check_steps(t_end / s["dt"])
        n_steps = max(1, math.ceil(t_end / s["dt"] * (1 - 1e-9)))
        dt = t_end / n_steps
        if abs(dt - s["dt"]) > 1e-9 * s["dt"]:
            log.warning("dt %g does not divide t_end %g: using dt %.6g (%d steps)", s["dt"],
                        t_end, dt, n_steps)
        if interval is not None:
            per = max(1, round(interval / dt))
            if given_interval and abs(per * dt - interval) > 1e-9 * interval:
                log.warning("output.interval %g is not a multiple of dt %g; frames every %d "
                            "steps", interval, dt, per)
    if dt > stable and not implicit:
        log.warning("dt %g is above the stable-step estimate %g: the explicit scheme will "
                    "blow up", dt, stable)
    if implicit and s["dt"] == "auto":
        log.info("scheme: implicit with dt: auto takes the explicit stable step; give "
                 "solver.dt to take the large steps the implicit scheme allows")
    if interval is None:
        per = out["every"]
    if s["parallel"] == "auto":
        parallel = n_elements >= PARALLEL_FROM and numba.config.NUMBA_NUM_THREADS > 1
    else:
        parallel = bool(s["parallel"])
    kind = "implicit" if implicit else "explicit"
    if implicit:
        _check_cayley_steps(model, np.arange(n_steps + 1) * dt, "time step", "solver.dt")
    return Plan(float(dt), int(n_steps), int(min(per, n_steps)), float(stable),
                parallel and not implicit, kind, float(t_end))


MAX_CAYLEY_STEP = 0.75 * math.pi  # the Cayley chart ends at pi; keep well inside it


def _check_cayley_steps(model, times: np.ndarray, what: str, key: str) -> None:
    """The implicit scheme moves a prescribed rotation by one Cayley increment per step, and
    cay^{-1} takes the short way round: more than MAX_CAYLEY_STEP per step is refused."""
    largest = largest_rotation_step(model.prescribed, times)
    if largest > MAX_CAYLEY_STEP:
        factor = math.ceil(largest / MAX_CAYLEY_STEP)
        hint = (f"use at least {factor * (len(times) - 1)} load steps" if key.endswith("steps")
                else f"use dt <= {(times[1] - times[0]) / factor:.6g}")
        raise CaseError(f"a prescribed rotation turns by {largest:.3g} rad in one {what}, more "
                        "than 3 pi/4: the implicit scheme's Cayley update cannot follow it "
                        f"(it would go the short way round); {hint}", key=key)


def _check_steps(n: float) -> None:
    if not n <= MAX_STEPS:
        raise CaseError(f"t_end / dt = {n:.3g} steps is more than {MAX_STEPS:.0e}; shorten "
                        "t_end or enlarge dt", key="solver.t_end")


def prepare(case_path, overrides=()) -> Prepared:
    """Validate the case and build the model and the time-stepping plan."""
    case = load_case(case_path, overrides)
    try:
        setup = build(case)
        p = plan(case, setup.model, setup.model.n_elements)
    except CaseError as exc:  # keep the class (Unavailable), add the file
        raise type(exc)(exc.reason, file=str(case_path), key=exc.key) from None
    return Prepared(case, setup, p, tuple(overrides))


def summary(prep: Prepared) -> str:
    """The one-screen model summary printed by ``rodsim run`` and ``rodsim check``."""
    d, m, p = prep.case.data, prep.setup.model, prep.plan
    s = d["solver"]
    mesh = prep.setup.mesh
    lines = [
        f"case      {prep.case.path}" + (f"  ({d['title']})" if d["title"] else ""),
        f"model     {m.n_nodes} nodes, {m.n_elements} rod elements, "
        + (f"{m.n_plates} plate elements, " if m.n_plates else "")
        + f"{len(mesh.part_names)} parts, {len(set(mesh.section_names))} sections, "
        f"mass {m.mass.sum():.6g}",
        f"supports  {int(m.fixed.any(axis=1).sum())} nodes with fixed dofs; "
        f"loads {len(d['loads'])}; point masses {len(d['masses'])}",
        f"solver    {s['analysis']}, "
        + {"explicit": f"explicit order {s['order']}", "implicit": "implicit (Cayley VI)",
           "equilibrium": "implicit (Cayley VI) with Newton"}[p.kind]
        + f", group {s['group']}" + (", parallel" if p.parallel else ""),
    ]
    if p.kind == "equilibrium":
        eq = s["equilibrium"]
        lines += [
            f"load      {p.n_steps} load steps to multiplier 1, tolerance {eq['tol']:.3g}, "
            f"pseudo-time from h {p.dt:.3g} ({p.dt / p.stable_dt:.3g} x stable-step "
            f"estimate {p.stable_dt:.6g}), at most {eq['max_steps']} per load step",
            f"output    {p.n_frames} frames, one per load step",
        ]
    else:
        lines += [
            f"time      t_end {s['t_end']:.6g}, dt {p.dt:.6g} "
            f"({p.dt / p.stable_dt:.3g} x stable-step estimate {p.stable_dt:.6g}), "
            f"{p.n_steps} steps",
            f"output    {p.n_frames} frames, every {p.steps_per_frame} steps",
        ]
    if prep.overrides:
        lines.append("overrides " + ", ".join(prep.overrides))
    return "\n".join(lines)


def frame(run: dynamics.Explicit, dt: float) -> Frame:
    """The output Frame of a running explicit integration."""
    model, st = run.model, run.state
    n, e = model.n_nodes, model.n_elements
    vel, omega = np.empty((n, 3)), np.empty((n, 3))
    nodal_velocities(model.mass, model.inertia, st.rot, st.p, st.pi, vel, omega)
    prescribed_velocities(model.prescribed, run.time, dt, vel, omega)  # of the last step
    quat = np.empty((n, 4))
    relative_quaternions(st.rot, model.rot0, quat)
    gamma, kappa, force, moment = (np.empty((e, 3)) for _ in range(4))
    element_fields(model.rods, st.x, st.rot, gamma, kappa, force, moment)
    diag = run.diagnostics()
    return Frame(
        time=run.time, position=st.x.copy(), rotation=quat, directors=st.rot.copy(),
        velocity=vel, angular_velocity=omega, linear_momentum=st.p.copy(),
        angular_momentum=st.pi.copy(), force=force, moment=moment,
        strain=gamma - model.rods.gamma0, curvature=kappa - model.rods.omega0,
        kinetic=diag.kinetic, internal=diag.internal, external=diag.external,
        total_linear=np.asarray(diag.linear_momentum, dtype=float),
        total_angular=np.asarray(diag.angular_momentum, dtype=float), dt=dt,
        iterations=float(run.max_iterations), residual=getattr(run, "residual", math.nan),
        **dict(zip(("reaction_force", "reaction_moment"),
                   support_reactions(model, st.x, st.rot, run.time), strict=True)),
        **plate_output(model, st.x, st.rot),
    )  # fmt: skip


def plate_output(model, x, rot) -> dict:
    """Frame fields of the plates at (x, rot): N, M (P,3), Q (P,2) at the element centres, in
    each element's basis (empty for a model without plates)."""
    if not model.n_plates:
        return {}
    p = model.n_plates
    membrane, bending, shear = np.empty((p, 3)), np.empty((p, 3)), np.empty((p, 2))
    plate_fields(model.plates, x, rot, membrane, bending, shear)
    return {"plate_membrane": membrane, "plate_bending": bending, "plate_shear": shear}


def support_reactions(model, x, rot, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Forces and moments (N,3) the supports exert: minus the internal and external nodal
    forces in the supported components (the nodes' own inertia aside: supported components
    carry no momentum)."""
    f, tau = np.zeros_like(x), np.zeros_like(x)
    internal_forces(model.rods, x, rot, f, tau)
    if model.n_plates:
        assemble_plate_forces(model.plates, x, rot, f, tau)
        plate_pressure(model.loads, model.plates, t, x, rot, f)
    external_forces(model.loads, t, x, rot, model.rot0, model.mass, f, tau)
    return np.where(model.fixed[:, :3], -f, 0.0), np.where(model.fixed[:, 3:], -tau, 0.0)


def equilibrium_frame(eq, step: equilibrium.LoadStep | None) -> Frame:
    """The output Frame of an equilibrium state: time = load multiplier, at rest."""
    model = eq.model
    n, e = model.n_nodes, model.n_elements
    zeros = np.zeros((n, 3))
    quat = np.empty((n, 4))
    relative_quaternions(eq.rot, model.rot0, quat)
    gamma, kappa, force, moment = (np.empty((e, 3)) for _ in range(4))
    internal = element_fields(model.rods, eq.x, eq.rot, gamma, kappa, force, moment)
    if model.n_plates:
        internal += assemble_plate_forces(model.plates, eq.x, eq.rot, np.zeros((n, 3)),
                                          np.zeros((n, 3)))
    f, tau = np.zeros((n, 3)), np.zeros((n, 3))
    external = external_forces(model.loads, eq.load, eq.x, eq.rot, model.rot0, model.mass, f,
                               tau)  # fmt: skip
    return Frame(
        time=eq.load, position=eq.x.copy(), rotation=quat, directors=eq.rot.copy(),
        velocity=zeros, angular_velocity=zeros, linear_momentum=zeros,
        angular_momentum=zeros, force=force, moment=moment,
        strain=gamma - model.rods.gamma0, curvature=kappa - model.rods.omega0,
        kinetic=0.0, internal=internal, external=external, total_linear=np.zeros(3),
        total_angular=np.zeros(3), dt=math.nan if step is None else step.h,  # inf: Newton
        iterations=0.0 if step is None else float(step.iterations),
        residual=0.0 if step is None else step.residual,
        **dict(zip(("reaction_force", "reaction_moment"),
                   support_reactions(model, eq.x, eq.rot, eq.load), strict=True)),
        **plate_output(model, eq.x, eq.rot),
    )  # fmt: skip


def output_paths(case: Case, output=None) -> tuple[Path, Path]:
    """(results .h5, ParaView .pvd) paths: -o, else <case-stem>.h5 next to the case file."""
    h5 = Path(output) if output is not None else case.folder / f"{case.stem}.h5"
    return h5, h5.with_suffix(".pvd")


def _dynamic_frames(prep: Prepared, progress):
    """Frames of a dynamic analysis (explicit or implicit), the first at t = 0."""
    s, p, model = prep.case.data["solver"], prep.plan, prep.setup.model
    init = prep.case.data["initial"]
    state = dynamics.initial_state(model, init["velocity"], init["angular_velocity"],
                                   init["center"])
    if p.kind == "implicit":
        run = implicit.start(model, p.dt, group=s["group"], state=state,
                             tol=s["newton"]["tol"], max_iter=s["newton"]["max_iter"])
        step = implicit.advance
    else:
        run = dynamics.start(model, p.dt, order=int(s["order"]), group=s["group"],
                             parallel=p.parallel, state=state, tol=s["rotation_tol"])
        step = dynamics.advance
    yield frame(run, p.dt)
    while run.step < p.n_steps:
        target = min(p.n_steps, (run.step // p.steps_per_frame + 1) * p.steps_per_frame)
        run.max_iterations = 0
        if p.kind == "implicit":
            run.residual = 0.0
        while run.step < target:
            step(run, min(MAX_CHUNK, target - run.step))
            if progress:
                progress(run.time, run.step, p.n_steps)
        yield frame(run, p.dt)


def _equilibrium_frames(prep: Prepared, progress):
    """Frames of an equilibrium analysis: the reference at load 0, then one per load step."""
    s, p = prep.case.data["solver"], prep.plan
    settings = s["equilibrium"]
    eq = equilibrium.start(prep.setup.model, s["group"], tol=settings["tol"],
                           max_steps=settings["max_steps"], max_iter=s["newton"]["max_iter"],
                           h0=p.dt)  # fmt: skip
    yield equilibrium_frame(eq, None)
    for i in range(1, p.n_steps + 1):
        step = equilibrium.solve_load_step(eq, i / p.n_steps)
        log.info("load %.6g: %d Newton iterations, %d pseudo steps, residual %.3g", step.load,
                 step.iterations, step.pseudo_steps, step.residual)
        if progress:
            progress(step.load, i, p.n_steps)
        yield equilibrium_frame(eq, step)


def execute(prep: Prepared, output=None, vtk: bool | None = None,
            progress: Callable[[float, int, int], None] | None = None) -> Result:
    """Integrate (or solve for equilibrium) and write results; raises NumericalError (frames
    so far stay readable)."""
    case, setup, p = prep.case, prep.setup, prep.plan
    h5, pvd = output_paths(case, output)
    vtk = case.data["output"]["vtk"] if vtk is None else vtk
    frames_of = _equilibrium_frames if p.kind == "equilibrium" else _dynamic_frames
    started = wallclock.perf_counter()
    title = case.data["title"]
    try:
        writer = ResultsWriter(h5, setup.mesh, case.text, title, prep.overrides)
    except OSError as exc:
        raise CaseError(f"cannot write results to {h5}: {exc.strerror or exc}",
                        file=str(case.path)) from None
    try:
        series = (SeriesWriter(pvd, setup.mesh.points, setup.mesh.conn, plates=setup.mesh.plates)
                  if vtk else None)
    except OSError as exc:
        writer.close()
        raise CaseError(f"cannot write the ParaView series {pvd} and "
                        f"{pvd.with_name(pvd.stem + '_vtk')}/: {exc.strerror or exc}",
                        file=str(case.path)) from None
    with writer:
        try:
            for last in frames_of(prep, progress):
                writer.write(last)
                if series:
                    series.write(last)
        finally:
            if series:
                series.close()  # the .pvd index lists every frame written, also on failure
        frames = writer.frames
    steps = p.n_steps  # all of them: a failure raises
    wall = wallclock.perf_counter() - started
    log.info("%d steps in %.3g s (%.3g steps/s), %d frames", steps, wall,
             steps / max(wall, 1e-12), frames)
    return Result(h5, pvd if vtk else None, frames, steps, wall, last)
