"""The one place that wires case -> model -> integrator -> writers.

``prepare`` validates a case and builds everything short of integrating (``rodsim check``);
``execute`` integrates and streams frames to the HDF5 file and the ParaView series
(``rodsim run``). The library logs; progress goes to an optional callback; the CLI prints.
"""

import logging
import time as wallclock
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rodsim import resources
from rodsim.case.load import Case, load_case
from rodsim.case.model import Setup, build, case_mesh
from rodsim.errors import CaseError
from rodsim.integrators import dynamics, equilibrium, implicit
from rodsim.integrators.planning import Plan, plan
from rodsim.output import dynamic_frame, static_frame
from rodsim.results_format import ResultsWriter
from rodsim.writers.frame import Frame
from rodsim.writers.vtk import SeriesWriter

log = logging.getLogger(__name__)

MAX_CHUNK = 2000  # steps per compiled call, so progress and interrupts stay responsive


@dataclass(frozen=True)
class Prepared:
    case: Case
    setup: Setup
    plan: Plan
    overrides: tuple[str, ...]
    memory: resources.Memory | None = None


@dataclass(frozen=True)
class Result:
    path: Path
    pvd: Path | None
    frames: int
    steps: int
    wall: float
    final: Frame


def prepare(case_path, overrides=(), max_memory: int | None = None) -> Prepared:
    """Validate the case and build the model and the time-stepping plan. ResourceError if the
    model would need more memory than the limit (rodsim.resources; max_memory: bytes, see
    machine_limit): checked before the mesh is generated, and again once mesh files are read.
    """
    case = load_case(case_path, overrides)
    limit = resources.machine_limit(max_memory)
    settings = resources.case_settings(case.data)
    sizes = resources.case_sizes(case.data)
    memory = resources.check(resources.estimate(sizes, settings), limit, str(case_path))
    try:
        mesh = case_mesh(case)
        # again with the mesh's own counts: mesh files read, coincident nodes merged
        need = resources.estimate(resources.mesh_sizes(mesh, sizes), settings)
        memory = resources.check(need, limit, str(case_path))
        setup = build(case, mesh)
        del mesh  # build may have replaced the frames (plates): free the old ones
        p = plan(case, setup.model, setup.model.n_elements)
    except CaseError as exc:  # keep the class (Unavailable), add the file
        raise type(exc)(exc.reason, file=str(case_path), key=exc.key) from None
    return Prepared(case, setup, p, tuple(overrides), memory)


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
        f"supports  {int(m.fixed.any(axis=1).sum())} nodes with fixed dofs"
        + (f", {len(np.unique(m.supports.node))} on elastic supports"
           if len(m.supports.node) else "")
        + f"; loads {len(d['loads'])}; point masses {len(d['masses'])}",
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
    if prep.memory:
        lines.append(resources.summary_line(prep.memory))
    if prep.overrides:
        lines.append("overrides " + ", ".join(prep.overrides))
    return "\n".join(lines)


def output_paths(case: Case, output=None) -> tuple[Path, Path]:
    """(results .h5, ParaView .pvd) paths: -o, else <case-stem>.h5 next to the case file.
    CaseError (before anything is written) if the results would overwrite the case file, a
    mesh file the case reads, or the run's own ParaView index (-o x.pvd)."""
    h5 = Path(output) if output is not None else case.folder / f"{case.stem}.h5"
    pvd = h5.with_suffix(".pvd")
    inputs = {case.path.resolve(): "the case file"}
    for tag, spec in case.data["mesh"]:
        if tag == "file":
            inputs[case.resolve(spec["file"]).resolve()] = f"the mesh file {spec['file']}"
    target = h5.resolve()
    if target in inputs:
        raise CaseError(f"the results file {h5} is {inputs[target]}: writing it would destroy "
                        "the input; give another -o", file=str(case.path), key="-o")
    if target == pvd.resolve():
        raise CaseError(f"the results file {h5} would be overwritten by the run's own ParaView "
                        "index (same name, .pvd); give a .h5 name", file=str(case.path),
                        key="-o")
    return h5, pvd


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
    yield dynamic_frame(run, p.dt)
    while run.step < p.n_steps:
        target = min(p.n_steps, (run.step // p.steps_per_frame + 1) * p.steps_per_frame)
        run.max_iterations = 0
        if p.kind == "implicit":
            run.residual = 0.0
        while run.step < target:
            step(run, min(MAX_CHUNK, target - run.step))
            if progress:
                progress(run.time, run.step, p.n_steps)
        yield dynamic_frame(run, p.dt)


def _equilibrium_frames(prep: Prepared, progress):
    """Frames of an equilibrium analysis: the reference at load 0, then one per load step."""
    s, p = prep.case.data["solver"], prep.plan
    settings = s["equilibrium"]
    eq = equilibrium.start(prep.setup.model, s["group"], tol=settings["tol"],
                           max_steps=settings["max_steps"], max_iter=s["newton"]["max_iter"],
                           h0=p.dt)  # fmt: skip
    yield static_frame(eq.model, eq.x, eq.rot, eq.load)
    for i in range(1, p.n_steps + 1):
        step = equilibrium.solve_load_step(eq, i / p.n_steps)
        log.info("load %.6g: %d Newton iterations, %d pseudo steps, residual %.3g", step.load,
                 step.iterations, step.pseudo_steps, step.residual)
        if progress:
            progress(step.load, i, p.n_steps)
        yield static_frame(eq.model, eq.x, eq.rot, eq.load, step)


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
