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

from rodsim import interrupts, resources, sequence, solvers
from rodsim.case import steps as case_steps
from rodsim.case.carry import carried
from rodsim.case.load import Case, load_case
from rodsim.case.model import Setup, build, case_mesh
from rodsim.errors import (
    CaseError,
    Interrupted,
    NumericalError,
    ResourceError,
    RodsimError,
)
from rodsim.integrators.planning import Plan, plan
from rodsim.results import guard as output_guard
from rodsim.results import lock as output_lock
from rodsim.results.frame import Frame
from rodsim.results.layout import chosen_datasets
from rodsim.results.mode_series import write_mode_series
from rodsim.results.restart import steps_taken
from rodsim.results.vtk import SeriesWriter, refuse_foreign_index
from rodsim.results.writer import COMPLETE, FAILED, INTERRUPTED, ResultsWriter, previous_path
from rodsim.terms import user

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    case: Case
    setup: Setup
    plan: Plan
    overrides: tuple[str, ...]
    memory: resources.Memory | None = None
    # an analysis step's load-group factors as the case gives them (the summary's; the model
    # of a later equilibrium step has them in its load ramps, rodsim.case.carry)
    factors: dict | None = None
    # analysis steps (docs/steps.md): ((name, Prepared of the step), ...), () without; the
    # case, setup and plan above are then the first step's
    steps: tuple = ()


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


def prepare(case_path, overrides=(), max_memory: int | None = None, terms=()) -> Prepared:
    """Validate the case and build the model and the time-stepping plan. ResourceError if the
    model would need more memory than the limit (rodsim.resources; max_memory: bytes, see
    machine_limit): checked before the mesh is generated, and again once mesh files are read.
    case_path: a case file, or a Case (rodsim.case.load) to which the overrides are added;
    terms: user terms from Python (rodsim.user_term) added to the model before it is planned.
    """
    if isinstance(case_path, Case):
        case = case_path.with_overrides(*overrides) if overrides else case_path
    else:
        case = load_case(case_path, overrides)
    where = case.label
    limit = resources.machine_limit(max_memory)
    # every analysis step's solver: an implicit step after an explicit one needs the Jacobian
    every = [resources.case_settings(s) for s in (case.settings, *(s for _, s in case.steps))]
    sizes = resources.case_sizes(case.settings)
    memory = resources.check(resources.most(sizes, every), limit, where)
    try:
        mesh = case_mesh(case)
        # again with the mesh's own counts: mesh files read, coincident nodes merged
        need = resources.most(resources.mesh_sizes(mesh, sizes), every)
        memory = resources.check(need, limit, where)
        if case.steps:
            stepped = _prepare_steps(case, mesh, memory, terms)
            return dataclasses.replace(stepped[0][1], steps=stepped)
        setup = _with_user_terms(build(case, mesh), terms)
        del mesh  # build may have replaced the frames (plates): free the old ones
        p = plan(case, setup.model, setup.model.n_elements)
    except CaseError as exc:  # keep the class, add the file
        raise type(exc)(exc.reason, file=where, key=exc.key) from None
    return Prepared(case, setup, p, case.overrides, memory)


def _prepare_steps(case: Case, mesh, memory, terms=()) -> tuple:
    """((name, Prepared), ...) of a case's analysis steps (docs/steps.md), each built on the
    one mesh; an equilibrium or modal step after the first takes the loads acting at the end
    of the step before as its start (rodsim.case.carry)."""
    out, before, end = [], None, 0.0
    for k, (step, settings) in enumerate(case.steps):
        later_modal = k > 0 and settings.solver.analysis == "modal"
        factors = dict(settings.combination or {})
        if k > 0 and (settings.solver.static or later_modal):
            settings = carried(settings, before, end)
        one = dataclasses.replace(case, settings=settings, steps=())
        try:
            setup = _with_user_terms(build(one, mesh), terms)
            p = plan(one, setup.model, setup.model.n_elements)
        except CaseError as exc:
            raw = {"solver": step.solver, "combination": step.combination, "output": step.output}
            raise case_steps.rekeyed(exc, raw, k) from None
        prep = Prepared(one, setup, p, case.overrides, memory, factors)
        out.append((step.name, prep))
        if later_modal:  # about the state left: the loads acting stay those before
            continue
        if settings.solver.load_steps or settings.solver.analysis == "dynamic":
            before, end = settings, sequence.duration(prep)
        else:  # modal or buckling about the reference: no load acted
            before, end = None, 0.0
    return tuple(out)


def _with_user_terms(setup: Setup, terms) -> Setup:
    """setup with the user terms in its model (rodsim.terms.user.attach), and in the model
    without automatic holds where it keeps one. The mechanism check of an equilibrium ran
    in build, before them: it counts no user term as holding the structure."""
    if not terms:
        return setup
    unheld = None if setup.unheld is None else user.attach(setup.unheld, terms)
    return dataclasses.replace(setup, model=user.attach(setup.model, terms), unheld=unheld)


def with_terms(prep: Prepared, terms) -> Prepared:
    """A prepared case with user terms added to its model (each analysis step's), planned
    anew (they enter the stable step). CaseError naming the case file, as prepare."""
    if not terms:
        return prep
    if prep.steps:
        steps = tuple((name, with_terms(sp, terms)) for name, sp in prep.steps)
        return dataclasses.replace(steps[0][1], steps=steps)
    try:
        setup = _with_user_terms(prep.setup, terms)
        p = plan(prep.case, setup.model, setup.model.n_elements)
    except CaseError as exc:
        raise type(exc)(exc.reason, file=prep.case.label, key=exc.key) from None
    return dataclasses.replace(prep, setup=setup, plan=p)


def output_paths(case: Case, output=None) -> tuple[Path, Path]:
    """(results .h5, ParaView .pvd) paths: -o, else <case-stem>.h5 next to the case file.
    CaseError (before anything is written, rodsim.results.guard) if the results would
    overwrite a file the case reads (the case, a mesh, the results file of initial.from or
    imperfection.from, a shape file), a file that is not a rodsim results file, or the run's
    own ParaView index (-o x.pvd)."""
    h5 = Path(output) if output is not None else case.folder / f"{case.stem}.h5"
    pvd = h5.with_suffix(".pvd")
    if h5.resolve() == pvd.resolve():
        raise CaseError(
            f"the results file {h5} would be overwritten by the run's own ParaView "
            "index (same name, .pvd); give a .h5 name",
            file=str(case.path),
            key="-o",
        )
    reads = output_guard.reads_of(case)
    output_guard.check(h5, "results", reads=reads, file=str(case.path))
    # the previous results go there when the run starts, and are deleted when it completes
    previous = previous_path(h5)
    advice = "move it away or give another -o"
    output_guard.check(previous, "results", reads=reads, file=str(case.path), advice=advice)
    return h5, pvd


def frames(prep: Prepared, progress=None, stop=lambda: False, resume=None):
    """The output frames of a prepared case, as ``rodsim run`` writes them, with a modal or
    buckling step's sequence.EigenResult after its frames (progress and stop: see execute;
    resume: a restart state to continue from); rodsim.api keeps them in memory."""
    return sequence.frames(prep, progress, stop, resume)


def warm_up(prep: Prepared) -> None:
    """Compile every kernel the case uses, writing nothing: its first frame and one step (one
    load step in equilibrium; a load step that does not converge is no matter here)."""
    p = prep.plan
    short = dataclasses.replace(prep, plan=dataclasses.replace(p, n_steps=1, steps_per_frame=1))
    with contextlib.suppress(NumericalError):
        for _ in solvers.SOLVERS[p.kind].frames(short, None, lambda: False):
            pass


def execute(
    prep: Prepared,
    output=None,
    vtk: bool | None = None,
    progress: Callable[[float, int, int], None] | None = None,
    handle_signals: bool = True,
    restart=None,
) -> Result:
    """Integrate (or solve for equilibrium) and write results (docs/running.md).

    The output is locked for the run (ResourceError if another run holds it). SIGINT,
    SIGTERM and SIGHUP (handle_signals, main thread only) stop the run within about a second:
    the current state is written as an off-schedule frame and Interrupted is raised.
    NumericalError and ResourceError (a write failed) keep the frames written before. In
    every case the file records its status, and an existing results file is kept as
    <stem>.prev.h5 unless the run completes. The exception raised carries ``result`` (the
    Result so far) where frames were written.

    restart: a results file of this case to continue from its restart state (docs/restart.md)
    instead of starting anew: the frames after that state's go, new ones are appended (the
    file itself is the output; CaseError if output names another)."""
    if restart is not None:
        if output is not None and Path(output).resolve() != Path(restart).resolve():
            raise CaseError(
                f"a restart writes into the results file it continues ({restart}), and -o "
                f"names another ({output}): leave -o out or give the same file",
                file=prep.case.label,
                key="--restart",
            )
        output = restart
    h5, pvd = output_paths(prep.case, output)
    vtk = prep.case.settings.output.vtk if vtk is None else vtk
    lock = output_lock.acquire(h5)
    try:
        resume = None if restart is None else restart_state(prep, h5)
        with interrupts.watch(handle_signals) as watch:
            return _write(prep, h5, pvd if vtk else None, progress, watch, resume)
    finally:
        output_lock.release(lock)


def restart_state(prep: Prepared, path):
    """The restart state from which the results file at path continues with the prepared case
    (rodsim.sequence.resume_state); CaseError naming the file at fault and the key."""
    try:
        return sequence.resume_state(prep, Path(path))
    except CaseError as exc:
        raise CaseError(exc.reason, file=exc.file or prep.case.label, key=exc.key) from None


def units_attribute(case: Case) -> str:
    """The results file's `units` attribute: the declared system, or '' (docs/results.md)."""
    system = case.settings.units
    return system.as_attribute() if system is not None else ""


def _write(prep: Prepared, h5: Path, pvd: Path | None, progress, watch, resume) -> Result:
    mesh = prep.setup.mesh
    steps = sequence.steps_of(prep)
    n_steps = sequence.steps_to_go(prep, resume)
    n_frames = sum(sequence.frames_of(sp, k) for k, (_, sp) in enumerate(steps))
    keep = None if resume is None else resume.frame + 1
    started = wallclock.perf_counter()
    # the series before the results writer: a .pvd rodsim did not write is refused before
    # anything is written, and a restart's kept frames are staged from the results file
    # while it is still the one continued
    if pvd:  # the modes' series too, written after the eigen solve: refused before the run
        for path in _mode_series(prep, pvd):
            refuse_foreign_index(path, "-o", SERIES_ADVICE)
    series = _series(pvd, mesh, n_frames + 1, keep or 0, h5) if pvd else None
    try:
        with watch.deferred():
            writer = _results_writer(prep, h5, n_frames, resume, keep)
    except BaseException:
        if series:
            series.close(complete=False)  # no frame written: only its staging goes
        raise
    last, status, detail, error = None, COMPLETE, "", None
    stopped = []

    def stop() -> bool:  # asked by the frame generators only where they then stop
        if watch.requested():
            stopped.append(watch.signal)
        return bool(stopped)

    try:
        for frame in frames(prep, progress, stop, resume):
            if isinstance(frame, sequence.EigenResult):  # the result, after the frames
                with watch.deferred():
                    writer.write_eigen(frame.result, frame.about, frame.step)
                    if pvd and last is not None:
                        write_mode_series(pvd, mesh, last, frame.result)
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
    if not prep.steps and last is not None and last.restart is not None:
        # the steps taken, as the solver counted them (a path ends where it reaches its end)
        n_steps = steps_taken(last.restart) - steps_taken(resume)
    with watch.deferred():
        series_error = _close(writer, series, status, detail)
    if series_error is not None and status == INTERRUPTED:  # the signal is the news
        log.warning("%s", series_error)
    error = error or series_error
    wall = wallclock.perf_counter() - started
    result = Result(
        h5,
        pvd,
        writer.frames,
        n_steps if status == COMPLETE else -1,
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
        n_steps,
        wall,
        n_steps / max(wall, 1e-12),
        writer.frames,
    )
    return result


def _results_writer(prep: Prepared, h5: Path, n_frames: int, resume, keep) -> ResultsWriter:
    """The run's results file (a restart: continuing the first `keep` frames of h5)."""
    case = prep.case
    return ResultsWriter(
        h5,
        prep.setup.mesh,
        case.text,
        case.settings.title,
        prep.overrides,
        extra_attrs={"units": units_attribute(case), "steps": _step_names(prep)},
        end_requested=sequence.end_time(prep),
        expected_frames=n_frames,
        compression=case.settings.output.compression,
        resume=None if resume is None else (keep, resume.step),
        fields=chosen_datasets(case.settings.output.fields),
    )


SERIES_ADVICE = "move it away, give another -o or run with --no-vtk"


def _mode_series(prep: Prepared, pvd: Path) -> list[Path]:
    """The indexes of the mode series a modal or buckling step writes (writers.mode_series:
    <stem>_mode<k>.pvd, <stem>_buckling<k>.pvd)."""
    out = []
    for _, sp in sequence.steps_of(prep):
        s = sp.case.settings.solver
        if s.analysis in ("modal", "buckling"):
            kind, chosen = (
                ("buckling", s.buckling) if s.analysis == "buckling" else ("mode", s.modal)
            )
            out += [pvd.with_name(f"{pvd.stem}_{kind}{k}.pvd") for k in range(1, chosen.modes + 1)]
    return out


def _series(pvd: Path, mesh, expected: int, keep: int, h5: Path) -> SeriesWriter:
    """The run's ParaView series (CaseError, key -o, if an existing index is not rodsim's); a
    restart's (keep > 0) kept frames staged from the results file h5 (SeriesWriter.stage)."""
    series = SeriesWriter(
        pvd,
        mesh.points,
        mesh.conn,
        plates=mesh.plates,
        expected_frames=expected,
        keep=keep,
        results=h5,
        advice=SERIES_ADVICE,
    )
    try:
        series.stage()
    except BaseException:
        series.close(complete=False)  # the staging folder goes, the series stays untouched
        raise
    return series


def _step_names(prep: Prepared) -> list[str]:
    """The file's `steps` attribute: each analysis step's name and analysis, `name:
    analysis` (docs/results.md); one `: analysis` entry without steps."""
    return [f"{name}: {sp.plan.kind}" for name, sp in sequence.steps_of(prep)]


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
