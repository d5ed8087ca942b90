"""The one place that wires case -> model -> integrator -> writers.

``prepare`` validates a case and builds everything short of integrating (``rodsim check``);
``execute`` integrates and streams frames to the HDF5 file and the ParaView series
(``rodsim run``). The library logs; progress goes to an optional callback; the CLI prints.
"""

import contextlib
import dataclasses
import logging
import time as wallclock
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rodsim import estimates, interrupts, output_lock, resources, solvers
from rodsim.case.load import Case, load_case
from rodsim.case.model import Setup, build, case_mesh
from rodsim.case.settings import FilePart, GravityLoad
from rodsim.errors import (
    CaseError,
    Interrupted,
    NumericalError,
    ResourceError,
    RodsimError,
)
from rodsim.integrators.modal import Buckling, Modes
from rodsim.integrators.planning import Plan, plan, split_steps
from rodsim.model.forces import load_totals
from rodsim.results_writer import COMPLETE, FAILED, INTERRUPTED, ResultsWriter
from rodsim.writers.frame import Frame
from rodsim.writers.mode_series import write_mode_series
from rodsim.writers.vtk import SeriesWriter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    case: Case
    setup: Setup
    plan: Plan
    overrides: tuple[str, ...]
    memory: resources.Memory | None = None


@dataclass(frozen=True)
class Result:
    """What a run wrote. steps: -1 when it did not complete; previous: where the results it
    replaced are kept (None: there were none, or the run completed and deleted them)."""

    path: Path
    pvd: Path | None
    frames: int
    steps: int
    wall: float
    final: Frame | None
    status: str = COMPLETE
    previous: Path | None = None


def prepare(case_path, overrides=(), max_memory: int | None = None) -> Prepared:
    """Validate the case and build the model and the time-stepping plan. ResourceError if the
    model would need more memory than the limit (rodsim.resources; max_memory: bytes, see
    machine_limit): checked before the mesh is generated, and again once mesh files are read.
    case_path: a case file, or a Case (rodsim.case.load) to which the overrides are added.
    """
    if isinstance(case_path, Case):
        case = case_path.with_overrides(*overrides) if overrides else case_path
    else:
        case = load_case(case_path, overrides)
    where = case.label
    limit = resources.machine_limit(max_memory)
    settings = resources.case_settings(case.settings)
    sizes = resources.case_sizes(case.settings)
    memory = resources.check(resources.estimate(sizes, settings), limit, where)
    try:
        mesh = case_mesh(case)
        # again with the mesh's own counts: mesh files read, coincident nodes merged
        need = resources.estimate(resources.mesh_sizes(mesh, sizes), settings)
        memory = resources.check(need, limit, where)
        setup = build(case, mesh)
        del mesh  # build may have replaced the frames (plates): free the old ones
        p = plan(case, setup.model, setup.model.n_elements)
    except CaseError as exc:  # keep the class, add the file
        raise type(exc)(exc.reason, file=where, key=exc.key) from None
    return Prepared(case, setup, p, case.overrides, memory)


def _split_note(prep: Prepared) -> str:
    """', 2 split at load kinks' when steps hold kinks (docs/explicit_scheme.md)."""
    n = split_steps(prep.setup.model.kinks, prep.plan.dt, prep.plan.n_steps)
    return f", {n} split at load kinks" if n else ""


def summary(prep: Prepared) -> str:
    """The one-screen model summary printed by ``rodsim run`` and ``rodsim check``."""
    d, m, p = prep.case.settings, prep.setup.model, prep.plan
    s = d.solver
    mesh = prep.setup.mesh
    lines = [
        f"case      {prep.case.path}" + (f"  ({d.title})" if d.title else ""),
        f"model     {m.n_nodes} nodes, {m.n_elements} rod elements, "
        + (f"{m.n_plates} plate elements, " if m.n_plates else "")
        + f"{len(mesh.part_names)} parts, {len(set(mesh.section_names))} sections, "
        f"mass {m.mass.sum():.6g}",
        f"supports  {int(m.fixed.any(axis=1).sum())} nodes with fixed dofs"
        + (
            f", {len(np.unique(m.supports.node))} on elastic supports"
            if len(m.supports.node)
            else ""
        ),
        _loads_line(prep),
        _masses_line(prep),
        f"solver    {s.analysis}, {solvers.SOLVERS[p.kind].label(s)}, group {s.group}"
        + (", parallel" if p.parallel else ""),
    ]
    if d.imperfection is not None:
        imp = d.imperfection
        lines.append(
            f"seed      mode {imp.mode} of {imp.from_}, amplitude {imp.amplitude:g}, as "
            + (
                "a stress-free imperfect reference"
                if imp.kind == "geometry"
                else "an initial displacement"
            )
        )
    beta, alpha = s.damping.coefficients
    if beta or alpha:
        fitted = ", ".join(f"{z:g} at {f:g}" for f, z in s.damping.ratios or ())
        lines.append(
            f"damping   strain_rate {beta:.6g}, mass {alpha:.6g}"
            + (f" (fitted to the ratios {fitted})" if fitted else "")
        )
    if s.eigen is not None:
        what = "modes" if p.kind == "modal" else "buckling factors"
        lines.append(
            f"{p.kind:<9} the {s.eigen.modes} lowest {what} about the {s.eigen.about} "
            "(docs/modal.md)"
        )
    if s.load_steps:
        eq = s.equilibrium
        lines += [
            f"load      {p.n_steps} load steps to multiplier 1, tolerance {eq.tol:.3g}, "
            f"pseudo-time from h {p.dt:.3g} ({p.dt / p.stable_dt:.3g} x stable-step "
            f"estimate {p.stable_dt:.6g}), at most {eq.max_steps} per load step",
            f"output    {p.n_frames} frames, one per load step",
        ]
    elif s.eigen is not None:
        what = "modes" if p.kind == "modal" else "buckling modes"
        lines.append(f"output    1 frame (the reference), then the {what}")
    else:
        lines += [
            f"time      t_end {s.t_end:.6g}, dt {p.dt:.6g} "
            f"({p.dt / p.stable_dt:.3g} x stable-step estimate {p.stable_dt:.6g}), "
            f"{p.n_steps} steps" + _split_note(prep),
            f"output    {p.n_frames} frames, every {p.steps_per_frame} steps",
        ]
    lines += _stress_line(prep)
    if d.units is not None:
        lines.append(f"units     {d.units.as_attribute()}")
    lines += [f"note      {note}" for note in mesh.notes]
    if prep.memory:
        lines.append(resources.summary_line(prep.memory))
    lines += estimates.summary_lines(prep)
    if prep.overrides:
        lines.append("overrides " + ", ".join(prep.overrides))
    return "\n".join(lines)


def _stress_line(prep: Prepared) -> list[str]:
    """What the run says of stresses (docs/stresses.md): which rod sections have none, said
    once here rather than as made-up numbers in the file."""
    bare = sorted(name for name, sec in prep.setup.sections.items() if sec.geometry is None)
    shaped = len(prep.setup.sections) - len(bare)
    out = []
    if shaped:
        what = prep.case.settings.output.stresses
        out.append(
            f"stresses  rods: von Mises at {prep.setup.model.stress.n_points} recovery points "
            f"per section (output.stresses: {what})"
        )
    if bare:
        out.append(
            f"stresses  none for rod sections {', '.join(bare)}: given by stiffnesses, they "
            "have no shape to recover stresses on (give material and shape)"
        )
    return out


def _loads_line(prep: Prepared) -> str:
    """The summary's loads: the count of `loads:` entries, the resultant force and moment
    about the origin of all but gravity, and gravity's force, in the reference configuration
    at t = 0 (equilibrium: at the full load, multiplier 1), time functions included; then,
    with more than one entry, each entry's own (its set's nodes and elements)."""
    d, m = prep.case.settings, prep.setup.model
    t = 1.0 if d.solver.static else 0.0
    force, moment, weight = load_totals(m.terms, m.x0, m.rot0, t)
    line = (
        f"loads     {_count(len(d.loads))}; at {'load 1' if t else 't = 0'}: "
        f"force {vector_text(force)}, moment about the origin {vector_text(moment)}, "
        f"gravity {vector_text(weight)}"
    )
    if len(d.loads) < 2:
        return line
    for i, (spec, rows) in enumerate(zip(d.loads, prep.setup.load_rows, strict=True)):
        if isinstance(spec, GravityLoad):
            continue
        f, mo, _ = load_totals(_only(m, rows).terms, m.x0, m.rot0, t)
        group = f" ({spec.group} x {rows.factor:g})" if spec.group is not None else ""
        line += (
            f"\n  loads[{i}] on {spec.set}{group}: force {vector_text(f)}, moment {vector_text(mo)}"
        )
    return line


def _only(model, rows):
    """The model with only the load rows of one `loads:` entry (no gravity)."""
    ld = model.loads
    nodal = np.zeros(len(ld.node), dtype=bool)
    for r in (rows.nodal, rows.edge, *(d[0] for d in rows.distributed.values())):
        nodal[r] = True
    pressed = np.zeros(len(ld.pressure_el), dtype=bool)
    pressed[rows.pressure] = True
    mask = nodal[:, None]
    only = ld._replace(
        force=np.where(mask, ld.force, 0.0),
        moment=np.where(mask, ld.moment, 0.0),
        pressure=np.where(pressed, ld.pressure, 0.0),
        gravity=np.zeros(3),
    )
    return dataclasses.replace(model, loads=only)


def _masses_line(prep: Prepared) -> str:
    """The summary's masses: the model's total (what the nodes carry), the point masses' share
    (each `masses:` entry at every node of its set) and the rest, the structure's."""
    d, m, sets = prep.case.settings, prep.setup.model, prep.setup.mesh.sets
    point = sum(pm.mass * len(sets[pm.set]) for pm in d.masses)
    total = float(m.mass.sum())
    return (
        f"masses    total {total:.6g}: structure {total - point:.6g}, point masses "
        f"{point:.6g} ({_count(len(d.masses))})"
    )


def _count(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def reaction_totals(frame: Frame):
    """(force, moment about the origin) (3,) each that the supports exert at a frame (its
    nodes' reactions summed), or None where it has none."""
    if frame.reaction_force is None or not np.any(frame.reaction_force):
        return None
    force = frame.reaction_force.sum(axis=0)
    moment = (np.cross(frame.position, frame.reaction_force) + frame.reaction_moment).sum(axis=0)
    return force, moment


def vector_text(v) -> str:
    """(x, y, z) to 6 digits; components below 1e-12 of the largest are round-off: 0."""
    v = np.asarray(v, dtype=float)
    v = np.where(np.abs(v) <= 1e-12 * np.abs(v).max(), 0.0, v) + 0.0  # + 0.0: no "-0"
    return "(" + ", ".join(f"{x:.6g}" for x in v) + ")"


def output_paths(case: Case, output=None) -> tuple[Path, Path]:
    """(results .h5, ParaView .pvd) paths: -o, else <case-stem>.h5 next to the case file.
    CaseError (before anything is written) if the results would overwrite the case file, a
    mesh file the case reads, or the run's own ParaView index (-o x.pvd)."""
    h5 = Path(output) if output is not None else case.folder / f"{case.stem}.h5"
    pvd = h5.with_suffix(".pvd")
    inputs = {case.path.resolve(): "the case file"}
    for spec in case.settings.mesh:
        if isinstance(spec, FilePart):
            inputs[case.resolve(spec.file).resolve()] = f"the mesh file {spec.file}"
    target = h5.resolve()
    if target in inputs:
        raise CaseError(
            f"the results file {h5} is {inputs[target]}: writing it would destroy "
            "the input; give another -o",
            file=str(case.path),
            key="-o",
        )
    if target == pvd.resolve():
        raise CaseError(
            f"the results file {h5} would be overwritten by the run's own ParaView "
            "index (same name, .pvd); give a .h5 name",
            file=str(case.path),
            key="-o",
        )
    return h5, pvd


def frames(prep: Prepared, progress=None, stop=lambda: False):
    """The output frames of a prepared case, as ``rodsim run`` writes them (progress and stop:
    see execute); rodsim.api keeps them in memory."""
    return solvers.SOLVERS[prep.plan.kind].frames(prep, progress, stop)


def warm_up(prep: Prepared) -> None:
    """Compile every kernel the case uses, writing nothing: its first frame and one step (one
    load step in equilibrium; a load step that does not converge is no matter here)."""
    p = prep.plan
    short = dataclasses.replace(prep, plan=dataclasses.replace(p, n_steps=1, steps_per_frame=1))
    with contextlib.suppress(NumericalError):
        for _ in frames(short):
            pass


def execute(
    prep: Prepared,
    output=None,
    vtk: bool | None = None,
    progress: Callable[[float, int, int], None] | None = None,
    handle_signals: bool = True,
) -> Result:
    """Integrate (or solve for equilibrium) and write results (docs/running.md).

    The output is locked for the run (ResourceError if another run holds it). SIGINT,
    SIGTERM and SIGHUP (handle_signals, main thread only) stop the run within about a second:
    the current state is written as an off-schedule frame and Interrupted is raised.
    NumericalError and ResourceError (a write failed) keep the frames written before. In
    every case the file records its status, and an existing results file is kept as
    <stem>.prev.h5 unless the run completes. The exception raised carries ``result`` (the
    Result so far) where frames were written."""
    h5, pvd = output_paths(prep.case, output)
    vtk = prep.case.settings.output.vtk if vtk is None else vtk
    lock = output_lock.acquire(h5)
    try:
        with interrupts.watch(handle_signals) as watch:
            return _write(prep, h5, pvd if vtk else None, progress, watch)
    finally:
        output_lock.release(lock)


def units_attribute(case: Case) -> str:
    """The results file's `units` attribute: the declared system, or '' (docs/results.md)."""
    system = case.settings.units
    return system.as_attribute() if system is not None else ""


def _write(prep: Prepared, h5: Path, pvd: Path | None, progress, watch) -> Result:
    case, mesh, p = prep.case, prep.setup.mesh, prep.plan
    started = wallclock.perf_counter()
    with watch.deferred():
        writer = ResultsWriter(
            h5,
            mesh,
            case.text,
            case.settings.title,
            prep.overrides,
            extra_attrs={"units": units_attribute(case)},
            end_requested=p.t_end,
            expected_frames=p.n_frames,
            compression=case.settings.output.compression,
        )
    series = None
    last, status, detail, error = None, COMPLETE, "", None
    stopped = []

    def stop() -> bool:  # asked by the frame generators only where they then stop
        if watch.requested():
            stopped.append(watch.signal)
        return bool(stopped)

    try:
        if pvd:
            series = SeriesWriter(
                pvd, mesh.points, mesh.conn, plates=mesh.plates, expected_frames=p.n_frames + 1
            )
        for frame in frames(prep, progress, stop):
            if isinstance(frame, Modes | Buckling):  # the result, after the frames
                with watch.deferred():
                    writer.write_eigen(frame, prep.case.settings.solver.eigen.about)
                    if pvd and last is not None:
                        write_mode_series(pvd, mesh, last, frame)
                continue
            with watch.deferred():  # a second signal does not cut a frame in half
                writer.write(frame)
                last = frame
                if series:
                    series.discard_existing = writer.dropped_incomplete
                    series.write(frame)
    except RodsimError as exc:
        status, detail, error = FAILED, f"{type(exc).__name__}: {exc}", exc
    except BaseException as exc:  # a second signal (KeyboardInterrupt) or a bug
        status, detail = FAILED, f"{type(exc).__name__}: {exc}"
        if isinstance(exc, KeyboardInterrupt):
            status, detail = INTERRUPTED, watch.name or "SIGINT"
        with watch.deferred():
            _close(writer, series, status, detail)
        raise
    if status == COMPLETE and stopped:
        status, detail = INTERRUPTED, watch.name
    with watch.deferred():
        series_error = _close(writer, series, status, detail)
    if series_error is not None and status == INTERRUPTED:  # the signal is the news
        log.warning("%s", series_error)
    error = error or series_error
    wall = wallclock.perf_counter() - started
    steps = p.n_steps if status == COMPLETE else -1
    result = Result(
        h5,
        pvd,
        writer.frames,
        steps,
        wall,
        last,
        status,
        writer.previous if writer.kept_previous else None,
    )
    if status == INTERRUPTED and error is None:
        error = Interrupted(f"stopped by {watch.name}: {kept_text(result)}", signal=watch.signal)
    if error is not None:
        error.result = result
        raise error
    log.info(
        "%d steps in %.3g s (%.3g steps/s), %d frames",
        steps,
        wall,
        steps / max(wall, 1e-12),
        writer.frames,
    )
    return result


def _close(writer: ResultsWriter, series, status: str, detail: str):
    """Close the series (its index listing exactly the frames on disk), then record the
    status in the results file, whatever happened to the series. Returns the ResourceError
    of a failed final write of the series, if any."""
    error = None
    try:
        if series:
            series.close(complete=status == COMPLETE)
    except ResourceError as exc:
        error = exc
    finally:
        writer.finish(status, detail)
    return error


def kept_text(result: Result) -> str:
    """What a run that did not complete leaves: its frames and the previous results."""
    frame = result.final
    at = (
        f" (the last, off-schedule, at t = {frame.time:.6g})"
        if frame is not None and frame.off_schedule
        else ""
    )
    text = f"{result.frames} frame{'s' * (result.frames != 1)} kept in {result.path}{at}"
    if result.previous:
        text += f"; the previous results stay in {result.previous}"
    return text
