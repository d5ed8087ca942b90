"""The solvers a case can run, by their kind (rodsim.integrators.planning.Plan.kind: explicit,
implicit, equilibrium, modal or buckling): how each starts from a prepared case, steps,
writes its frames and takes a change of loads. rodsim.run, rodsim.Simulation and rodsim.api
go through SOLVERS, so a new solver is one entry here (and its names in the case schema,
rodsim.case.v1)."""

import dataclasses
import logging
import math
import time as wallclock
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from rodsim import state as states
from rodsim.case.imperfection import displaced
from rodsim.integrators import adaptive, dynamics, equilibrium, implicit, modal, path
from rodsim.interrupts import StopRequested
from rodsim.model import forces
from rodsim.output import dynamic_frame, static_frame
from rodsim.registry import Registry
from rodsim.results import restart
from rodsim.results.layout import chosen_datasets

log = logging.getLogger(__name__)

CHUNK_SECONDS = 0.1  # wall time per compiled call: progress and stop signals stay responsive
# an arc-length step is at most this many times the first: frames stay close enough to draw
# the path (|to| / 5 with the automatic first length)
LONGEST = 10.0


def next_chunk(done: int, seconds: float) -> int:
    """Steps for the next compiled call: about CHUNK_SECONDS of wall time at the rate of the
    last call (done steps in seconds), growing at most 4x per call (the first call may
    include compilation), so that a stop signal is acted on within about a second."""
    rate = done / max(seconds, 1e-9)
    return max(1, min(4 * done, int(rate * CHUNK_SECONDS)))


def _start_equilibrium(prep):
    """An equilibrium.Equilibrium at load 0."""
    s = prep.case.settings.solver
    eq = equilibrium.start(
        prep.setup.model,
        s.group,
        tol=s.equilibrium.tol,
        max_steps=s.equilibrium.max_steps,
        max_iter=s.newton.max_iter,
        h0=prep.plan.dt,
    )
    notes = [n for n in prep.setup.mesh.notes if n.startswith("mechanism: ")]
    eq.mechanism = "; ".join(n.removeprefix("mechanism: ").split(";")[0] for n in notes)
    return eq


def _initial_state(prep):
    """The state of the frame the case starts from (initial.from), or the case's initial
    velocities about its reference, displaced by an imperfection of kind displacement
    (rodsim.case.imperfection)."""
    if prep.setup.start is not None:
        x, rot, p, pi = (a.copy() for a in prep.setup.start)
        return dynamics.StateArrays(x, rot, p, pi, np.zeros_like(x), np.zeros_like(x))
    init, model, shape = prep.case.settings.initial, prep.setup.model, prep.setup.displacement
    start = None if shape is None else displaced(model.x0, model.rot0, shape)
    if prep.setup.velocities is not None:  # fields: per node, the rigid spin already in them
        velocity, spin = prep.setup.velocities
        return dynamics.initial_state(model, velocity, spin, configuration=start, rigid=False)
    return dynamics.initial_state(
        model, init.velocity, init.angular_velocity, init.center, configuration=start
    )


def _dynamic_state(begin):
    """The StateArrays of a restart state (rodsim.results.restart): a dynamic one's momenta, or at
    rest (an equilibrium's)."""
    x, rot, p, pi = restart.motion(begin)
    return dynamics.StateArrays(x, rot, p, pi, np.zeros_like(x), np.zeros_like(x))


RESTART_KEY = "--restart"


def _resumed(begin, model) -> states.State:
    """The State of a restart state a run continues, its term states checked against the
    model's (rodsim.results.restart.check_terms)."""
    restart.check_terms(begin, model.terms, "", RESTART_KEY)
    return begin.state()


def _carry_terms(model, begin) -> bool:
    """Put the term states of a state handed on by the analysis step before into the model's
    terms (those both have); whether there were any."""
    saved = {} if begin is None else begin.state().terms
    if saved:
        states.restore_terms(model.terms, saved, only_shared=True)
    return bool(saved)


def _start_implicit(prep, begin=None):
    """A running implicit.Implicit at the initial state, or at a restart state begin
    (rodsim.results.restart: its step count, time origin, dt, Newton's first guess, the adaptive
    controller and the terms' state)."""
    s, model = prep.case.settings.solver, prep.setup.model
    resume = begin is not None and begin.kind == "implicit"
    run = implicit.start(
        model,
        begin.dt if resume else prep.plan.dt,
        group=s.group,
        state=_initial_state(prep) if begin is None else _dynamic_state(begin),
        tol=s.newton.tol,
        max_iter=s.newton.max_iter,
        t0=begin.t0 if resume else 0.0,
        step=begin.count if resume else 0,
        conserve=s.conserving,
        steps=_adaptive_settings(s, prep.plan),
        h0=prep.plan.first,
    )
    if resume:
        try:
            states.resume_implicit(run, _resumed(begin, model))
        except ValueError as exc:  # a held Jacobian of another sparsity
            raise restart.corrupt("", RESTART_KEY, str(exc)) from None
    elif _carry_terms(model, begin):
        run.internal, run.external = forces.energies(
            model.terms, run.state.x, run.state.rot, run.time
        )
    return run


def _adaptive_settings(s, plan):
    """The adaptive.Settings of solver.adaptive (None: fixed steps), dt_min and dt_max
    resolved: auto is 1e-6 x the first step, and the frame interval."""
    a = s.adaptive
    if a is None:
        return None
    largest = plan.dt if a.dt_max == "auto" else min(float(a.dt_max), plan.dt)
    smallest = 1e-6 * plan.first if a.dt_min == "auto" else float(a.dt_min)
    return adaptive.Settings(a.tol, a.energy_tol, smallest, largest, a.grow)


def _start_explicit(prep, begin=None):
    """A running dynamics.Explicit at the initial state, or at a restart state begin (its
    forces and the terms' state)."""
    s, model = prep.case.settings.solver, prep.setup.model
    resume = begin is not None and begin.kind == "explicit"
    run = dynamics.start(
        model,
        begin.dt if resume else prep.plan.dt,
        order=int(s.order),
        group=s.group,
        parallel=prep.plan.parallel,
        state=_initial_state(prep) if begin is None else _dynamic_state(begin),
        tol=s.rotation_tol,
        t0=begin.t0 if resume else 0.0,
        step=begin.count if resume else 0,
    )
    if resume:
        states.resume_explicit(run, _resumed(begin, model))
    elif _carry_terms(model, begin):
        dynamics.refresh_forces(run)
    return run


def resumed_plan(plan, begin):
    """The plan of a run continued from restart state begin (docs/restart.md): its dt and
    output cadence, steps up to the case's end time."""
    n = max(begin.count, math.ceil((plan.t_end - begin.t0) / begin.dt * (1 - 1e-9)))
    return dataclasses.replace(plan, dt=begin.dt, n_steps=n, steps_per_frame=begin.every)


def _dynamic_frames(prep, progress, stop, begin=None, resume=False):
    """Frames of a dynamic analysis (explicit or implicit), the first at t = 0; on a stop
    request, the current state as a last, off-schedule frame. begin: a restart state
    (rodsim.results.restart) to start from; resume: it is this analysis' own (continue it, its frame
    written already), else the state a step before left (start from it at t = 0)."""
    p = prep.plan
    chosen = chosen_datasets(prep.case.settings.output.fields)  # what the frames compute
    kind = SOLVERS[p.kind]
    run = kind.start(prep, begin if resume else _handed(begin))
    if resume:
        p = resumed_plan(p, begin)
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
            chunk = next_chunk(n, wallclock.perf_counter() - started)
            if progress:
                progress(run.time, run.step, p.n_steps)
        yield _dynamic_record(run, p, chosen)
        written = run.time


def _handed(begin):
    """A state handed on by the step before (None: none), as a dynamic start: count 0."""
    return None if begin is None else begin._replace(kind="handed")


def _dynamic_record(run, p, chosen=None):
    """The frame of a running integration with its restart state."""
    kind = SOLVERS[p.kind]
    state = restart.of_state(kind.state(run), p.steps_per_frame)
    return dataclasses.replace(dynamic_frame(run, kind.dt(run, p), chosen), restart=state)


def _equilibrium_frames(prep, progress, stop, begin=None, resume=False, eq=None):
    """Frames of an equilibrium analysis: the reference at load 0, then one per load step; on
    a stop request, the current (unconverged) iterate as a last, off-schedule frame at the
    load multiplier it was heading for, with its residual. begin, resume: see
    _dynamic_frames (begin's load steps are this analysis' when resumed)."""
    if prep.case.settings.solver.equilibrium.path is not None:
        yield from _path_frames(prep, progress, stop, begin, resume)
        return
    p = prep.plan
    chosen = chosen_datasets(prep.case.settings.output.fields)  # what the frames keep
    eq = _start_equilibrium(prep) if eq is None else eq
    eq.stop = stop
    first = 1
    if begin is not None:
        _place(eq, begin, resume)
    if resume:
        eq.load = begin.load
        first = begin.count + 1
    else:
        yield _static_record(eq, 0, chosen=chosen)
    for i in range(first, p.n_steps + 1):
        load = i / p.n_steps
        if stop():  # between load steps: the state is the last frame's
            return
        try:
            step = equilibrium.solve_load_step(eq, load)
        except StopRequested:
            residual = equilibrium.static_residual(eq, load)[0]
            now = equilibrium.LoadStep(load, 0, 0, residual, math.nan, ())
            yield dataclasses.replace(
                static_frame(eq.model, eq.x, eq.rot, load, now, chosen=chosen), off_schedule=1
            )
            return
        log.info(
            "load %.6g: %d Newton iterations, %d pseudo steps, residual %.3g",
            step.load,
            step.iterations,
            step.pseudo_steps,
            step.residual,
        )
        if progress:
            progress(step.load, i, p.n_steps)
        lowest = math.nan
        if prep.case.settings.solver.equilibrium.eigenvalue:
            group = prep.case.settings.solver.group
            state = (eq.x, eq.rot, eq.quat, eq.load)
            lowest = modal.lowest_eigenvalue(eq.model, group, *state, eq.solver)
        yield _static_record(eq, i, step, lowest, chosen)


def _place(eq, begin, resume: bool = False) -> None:
    """Put eq at a restart state's configuration (its own quaternions where it has them) and
    term states: a restart's (resume: checked against the model), or those a step before
    handed on."""
    if resume:
        states.place_equilibrium(eq, _resumed(begin, eq.model))
    else:
        states.place_equilibrium(eq, begin.state(), only_shared=True)


def _static_record(eq, count: int, step=None, lowest: float = math.nan, chosen=None):
    """The frame of an equilibrium after count load steps, with its restart state; chosen:
    the datasets output.fields keeps (None: all)."""
    frame = static_frame(eq.model, eq.x, eq.rot, eq.load, step, lowest, chosen)
    return dataclasses.replace(frame, restart=restart.of_equilibrium(eq, count))


def _path_frames(prep, progress, stop, begin=None, resume=False):
    """Frames of an equilibrium path (docs/path_following.md): the start, then one per path
    step, with time the arc length travelled (displacement control: the controlled
    displacement's travel) and load_factor the loads' factor. begin, resume: see
    _dynamic_frames (a resumed path goes on with its stored factor, arc, step length and
    direction)."""
    s, model = prep.case.settings.solver, prep.setup.model
    chosen = chosen_datasets(prep.case.settings.output.fields)  # what the frames keep
    spec, (node, comp) = s.equilibrium.path, prep.setup.path
    eq = _start_equilibrium(prep)
    if model.prescribed.node.shape[0] and not resume:
        # prescribed motions stay at their full value: the path starts from their equilibrium
        # without the loads (its frame 0)
        alone = equilibrium.start(
            modal.scaled_loads(model, 0.0),
            s.group,
            tol=s.equilibrium.tol,
            max_steps=s.equilibrium.max_steps,
            max_iter=s.newton.max_iter,
            h0=prep.plan.dt,
        )
        equilibrium.solve_load_step(alone, 1.0)
        eq.x[:], eq.rot[:], eq.quat[:] = alone.x, alone.rot, alone.quat
    follower = path.Follower(eq, s.group)
    first = abs(spec.to) / 50.0 if spec.length == "auto" else float(spec.length)
    state = path.PathState(length=first)
    arc, done = 0.0, 0
    if begin is not None:
        _place(eq, begin, resume)
    if resume:
        state.load, state.length, arc, done = begin.load, begin.dt, begin.t0, begin.count
        last = begin.arrays.get("last")
        state.last = None if last is None or not np.any(last) else last.copy()
    else:
        yield _path_record(eq, state, arc, 0, None, chosen)
    x0 = model.x0[node, comp]
    sign = 1.0 if spec.to >= 0 else -1.0

    def reached(e) -> bool:
        return sign * (e.x[node, comp] - x0 - spec.to) >= -1e-12 * abs(spec.to)

    if resume and reached(eq):  # a path that ended at `to`: nothing left
        return
    control = (node, comp) if spec.method == "displacement" else None
    targets = [spec.to * (k + 1) / spec.steps for k in range(spec.steps)]
    steps = path.follow(
        eq,
        follower,
        state,
        spec.steps - done,
        until=reached,
        control=control,
        targets=targets[done:],
        stop=stop,
        longest=LONGEST * first,
    )
    for k, taken in enumerate(steps, start=done + 1):
        arc += taken.length
        log.info("path step %d: load factor %.6g, %d iterations", k, taken.load, taken.iterations)
        if progress:
            progress(arc, k, spec.steps)
        yield _path_record(eq, state, arc, k, taken, chosen)
    if not reached(eq) and not stop():
        log.warning(
            "the path ended after its %d steps at %s = %.6g of node %d, short of to = %.6g: "
            "raise solver.equilibrium.path.steps or length",
            spec.steps,
            spec.component,
            eq.x[node, comp] - x0,
            node,
            spec.to,
        )


def _path_record(eq, state, arc: float, count: int, taken, chosen=None):
    """The frame of an equilibrium on a path: its loads at the factor reached, with the path's
    restart state (the factor, the arc, the next step's length and the last direction);
    chosen: the datasets output.fields keeps (None: all)."""
    load = state.load
    model = modal.scaled_loads(eq.model, load)
    step = None
    if taken is not None:
        step = equilibrium.LoadStep(load, taken.iterations, 0, taken.residual, taken.length, ())
    frame = static_frame(model, eq.x, eq.rot, 1.0, step, chosen=chosen)
    raw = restart.of_state(states.of_path(eq, state, arc, count))
    return dataclasses.replace(frame, time=arc, load_factor=load, restart=raw)


def preloaded(prep):
    """The equilibrium.Equilibrium of a prepared case at load multiplier 1, through its
    solver.equilibrium.load_steps."""
    eq = _start_equilibrium(prep)
    n = prep.case.settings.solver.equilibrium.load_steps
    for i in range(1, n + 1):
        equilibrium.solve_load_step(eq, i / n)
    return eq


def modal_state(prep, about: str):
    """(x, rot, quat, load) the modes of a prepared case are about: its equilibrium at load 1
    (through its load steps; "equilibrium") or its reference ("reference")."""
    model = prep.setup.model
    if about == "equilibrium":
        eq = preloaded(prep)
        return eq.x, eq.rot, eq.quat, eq.load
    quat = np.empty((model.n_nodes, 4))
    implicit.quaternions(model.rot0, quat)
    return model.x0, model.rot0, quat, 0.0


def linear_buckling(prep, count: int, eq=None) -> modal.Buckling:
    """Linear buckling of a prepared case's loads (rodsim.integrators.modal.buckling) about
    the state of the equilibrium eq (its preload), or about the reference (eq None)."""
    model, s = prep.setup.model, prep.case.settings.solver
    if eq is None:
        base = modal_state(prep, "reference")
    else:
        base = (eq.x.copy(), eq.rot.copy(), eq.quat.copy(), eq.load)

    def solve(multiplier: float, scale: float):
        # a fresh equilibrium of the model with scaled loads, started from the base state
        e = _start_equilibrium(prep)
        if scale != 1.0:
            e = dataclasses.replace(
                e, solver=implicit.make_solver(modal.scaled_loads(model, scale), s.group)
            )
        e.x[:], e.rot[:], e.quat[:], e.load = base
        equilibrium.solve_load_step(e, multiplier)
        return e.x, e.rot, e.quat

    return modal.buckling(model, s.group, count, base, solve)


def _eigen_frames(prep, progress, stop, begin=None, resume=False):
    """Frames of a modal or buckling analysis: the state it is about (the reference, or the
    equilibrium's load steps), then its result (rodsim.integrators.modal.Modes or Buckling)
    as the last item, unless a stop request cut the equilibrium short. begin, resume: a
    restart state of the equilibrium (see _dynamic_frames)."""
    s, model = prep.case.settings.solver, prep.setup.model
    eq = None
    if s.load_steps:
        eq = _start_equilibrium(prep)
        yield from _equilibrium_frames(prep, progress, stop, begin, resume, eq)
        if eq.load < 1.0:
            return
        x, rot, quat, load = eq.x, eq.rot, eq.quat, eq.load
    else:
        x, rot, quat, load = modal_state(prep, "reference")
        chosen = chosen_datasets(prep.case.settings.output.fields)
        yield static_frame(model, x, rot, load, chosen=chosen)
    if s.analysis == "buckling":
        yield linear_buckling(prep, s.buckling.modes, eq)
    else:
        free = prep.setup.unheld or model  # the free structure's modes, rigid ones too
        yield modal.modes(free, s.group, x, rot, quat, s.modal.modes, load)


def _refresh_explicit(run, model) -> None:
    dynamics.refresh_forces(run)


def _refresh_implicit(run, model) -> None:
    run.internal, run.external = forces.energies(model.terms, run.state.x, run.state.rot, run.time)


def _refresh_equilibrium(run, model) -> None:
    run.check_stability = forces.conservative(model.terms)


def _explicit_counters(run, reset: bool = False) -> dict:
    out = {"iterations": run.max_iterations, "mean_iterations": run.mean_iterations}
    if reset:
        run.max_iterations = 0
    return out


def _implicit_counters(run, reset: bool = False) -> dict:
    out = {"iterations": run.max_iterations, "residual": run.residual}
    if reset:
        run.max_iterations, run.residual = 0, 0.0
    return out


def _no_counters(eq, reset: bool = False) -> dict:
    return {}


def _plan_dt(run, plan) -> float:
    return plan.dt


def _implicit_dt(run, plan) -> float:
    c = run.control  # adaptive steps: the last step taken
    return plan.dt if c is None else c.h_last or c.h


def _no_watch(run, stop) -> None:
    pass


def _implicit_watch(run, stop) -> None:
    if run.control is not None:  # adaptive steps: a frame interval may hold many steps
        run.stop = stop


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
    dt: Callable = _plan_dt
    watch: Callable = _no_watch


_EQUILIBRIUM = (states.of_equilibrium, states.resume_equilibrium, _no_counters)

SOLVERS = Registry(
    "solver",
    {
        "explicit": SolverKind(
            lambda s: f"explicit order {s.order}",
            _start_explicit,
            _dynamic_frames,
            dynamics.advance,
            _refresh_explicit,
            states.of_explicit,
            states.resume_explicit,
            _explicit_counters,
        ),
        "implicit": SolverKind(
            lambda s: "implicit (Cayley VI)",
            _start_implicit,
            _dynamic_frames,
            implicit.advance,
            _refresh_implicit,
            states.of_implicit,
            states.resume_implicit,
            _implicit_counters,
            _implicit_dt,
            _implicit_watch,
        ),
        "equilibrium": SolverKind(
            lambda s: "implicit (Cayley VI) with Newton",
            _start_equilibrium,
            _equilibrium_frames,
            None,
            _refresh_equilibrium,
            *_EQUILIBRIUM,
        ),
        "modal": SolverKind(
            lambda s: f"{s.modal.modes} lowest modes about the {s.modal.about}",
            _start_equilibrium,
            _eigen_frames,
            None,
            _refresh_equilibrium,
            *_EQUILIBRIUM,
        ),
        "buckling": SolverKind(
            lambda s: f"{s.buckling.modes} lowest buckling factors about the {s.buckling.about}",
            _start_equilibrium,
            _eigen_frames,
            None,
            _refresh_equilibrium,
            *_EQUILIBRIUM,
        ),
    },
)


def start(prep):
    """The solver of a prepared case at its initial state, as its settings say: a running
    dynamics.Explicit or implicit.Implicit, or an equilibrium.Equilibrium at load 0 (what
    rodsim run's frames step; rodsim.Simulation steps the same)."""
    return SOLVERS[prep.plan.kind].start(prep)
