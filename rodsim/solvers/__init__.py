"""The solvers a case can run, by their kind (rodsim.integrators.planning.Plan.kind: explicit,
implicit, equilibrium, modal or buckling): how each starts from a prepared case, steps,
writes its frames and takes a change of loads. rodsim.run, rodsim.Simulation and rodsim.api
go through SOLVERS, so a new solver is one entry here (and its names in the case schema,
rodsim.case.v1)."""

import dataclasses
import logging
import time as wallclock
from collections.abc import Callable
from typing import Any, NamedTuple

from rodsim.integrators import dynamics, implicit
from rodsim.registry import Registry
from rodsim.results import restart
from rodsim.results.layout import chosen_datasets
from rodsim.solvers import capture, dynamic, static
from rodsim.solvers.dynamic import CHUNK_SECONDS, next_chunk, resumed_plan
from rodsim.solvers.output import dynamic_frame
from rodsim.solvers.static import linear_buckling, modal_state, preloaded

log = logging.getLogger(__name__)

__all__ = ["SOLVERS", "SolverKind", "start", "CHUNK_SECONDS", "next_chunk", "resumed_plan"]
__all__ += ["linear_buckling", "modal_state", "preloaded"]


def _dynamic_frames(prep, progress, stop, begin=None, resume=False):
    """Frames of a dynamic analysis (explicit or implicit), the first at t = 0; on a stop
    request, the current state as a last, off-schedule frame. begin: a restart state
    (rodsim.results.restart) to start from; resume: it is this analysis' own (continue it, its frame
    written already), else the state a step before left (start from it at t = 0)."""
    p = prep.plan
    chosen = chosen_datasets(prep.case.settings.output.fields)  # what the frames compute
    kind = SOLVERS[p.kind]
    run = kind.start(prep, begin if resume else dynamic.handed(begin))
    if resume:
        p = dynamic.resumed_plan(p, begin)
    else:
        yield _dynamic_record(run, p, chosen)
    chunk, written = 1, run.time
    kind.watch(run, stop)
    while run.step < p.n_steps:
        target = min(p.n_steps, (run.step // p.steps_per_frame + 1) * p.steps_per_frame)
        kind.counters(run, True)  # the frame's counters cover its steps
        while run.step < target:
            if stop():
                if run.time != written:
                    yield dataclasses.replace(_dynamic_record(run, p, chosen), off_schedule=1)
                return
            n = min(chunk, target - run.step)
            started = wallclock.perf_counter()
            kind.advance(run, n)
            chunk = dynamic.next_chunk(n, wallclock.perf_counter() - started)
            if progress:
                progress(run.time, run.step, p.n_steps)
        yield _dynamic_record(run, p, chosen)
        written = run.time


def _dynamic_record(run, p, chosen=None):
    """The frame of a running integration with its restart state."""
    kind = SOLVERS[p.kind]
    state = restart.of_state(kind.state(run), p.steps_per_frame)
    return dataclasses.replace(dynamic_frame(run, kind.dt(run, p), chosen), restart=state)


class SolverKind(NamedTuple):
    """The solver protocol. label(solver settings): the summary's words for it;
    start(prepared case, begin=None): the solver at the initial state, or at restart state
    begin; frames(prepared, progress, stop): the output frames of a run; advance(solver, n):
    n time steps (None: no time steps, equilibrium); refresh(solver, model): bring what
    depends on the loads up to date after they were changed; state(solver, count=None): its
    rodsim.state.State (copies; count: equilibrium's load steps solved); resume(solver,
    State): set it to a State of its model, in place (ValueError where the State's arrays do
    not fit it); counters(solver, reset=False): the counters a frame reports for the steps
    since the last reset (iterations, residual), reset where asked; dt(solver, plan): the
    step size a frame reports (adaptive: the last step taken); watch(solver, stop): hand it
    the stop request to check between its own steps (adaptive steps: a frame's advance may
    take many)."""

    label: Callable[[Any], str]
    start: Callable
    frames: Callable
    advance: Callable | None
    refresh: Callable
    state: Callable
    resume: Callable
    counters: Callable
    dt: Callable = dynamic.plan_dt
    watch: Callable = dynamic.no_watch


_EQUILIBRIUM = (capture.of_equilibrium, capture.resume_equilibrium, static.no_counters)

SOLVERS = Registry(
    "solver",
    {
        "explicit": SolverKind(
            lambda s: f"explicit order {s.order}",
            dynamic.start_explicit,
            _dynamic_frames,
            dynamics.advance,
            dynamic.refresh_explicit,
            capture.of_explicit,
            capture.resume_explicit,
            dynamic.explicit_counters,
        ),
        "implicit": SolverKind(
            lambda s: "implicit (Cayley VI)",
            dynamic.start_implicit,
            _dynamic_frames,
            implicit.advance,
            dynamic.refresh_implicit,
            capture.of_implicit,
            capture.resume_implicit,
            dynamic.implicit_counters,
            dynamic.implicit_dt,
            dynamic.implicit_watch,
        ),
        "equilibrium": SolverKind(
            lambda s: "implicit (Cayley VI) with Newton",
            static.start_equilibrium,
            static.equilibrium_frames,
            None,
            static.refresh_equilibrium,
            *_EQUILIBRIUM,
        ),
        "modal": SolverKind(
            lambda s: f"{s.modal.modes} lowest modes about the {s.modal.about}",
            static.start_equilibrium,
            static.eigen_frames,
            None,
            static.refresh_equilibrium,
            *_EQUILIBRIUM,
        ),
        "buckling": SolverKind(
            lambda s: f"{s.buckling.modes} lowest buckling factors about the {s.buckling.about}",
            static.start_equilibrium,
            static.eigen_frames,
            None,
            static.refresh_equilibrium,
            *_EQUILIBRIUM,
        ),
    },
)


def start(prep):
    """The solver of a prepared case at its initial state, as its settings say: a running
    dynamics.Explicit or implicit.Implicit, or an equilibrium.Equilibrium at load 0 (what
    rodsim run's frames step; rodsim.Simulation steps the same)."""
    return SOLVERS[prep.plan.kind].start(prep)
