"""The static solvers: equilibrium with load steps, path following, and the modal and buckling
analyses about the reference or a loaded equilibrium (rodsim.solvers.SOLVERS)."""

import dataclasses
import logging
import math

import numpy as np

from rodsim.integrators import equilibrium, implicit, modal, path
from rodsim.interrupts import StopRequested
from rodsim.model import forces
from rodsim.results import restart
from rodsim.results.layout import chosen_datasets
from rodsim.solvers import capture
from rodsim.solvers.output import static_frame

log = logging.getLogger(__name__)

# an arc-length step is at most this many times the first: frames stay close enough to draw
# the path (|to| / 5 with the automatic first length)
LONGEST = 10.0


def start_equilibrium(prep):
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


def equilibrium_frames(prep, progress, stop, begin=None, resume=False, eq=None):
    """Frames of an equilibrium analysis: the reference at load 0, then one per load step; on
    a stop request, the current (unconverged) iterate as a last, off-schedule frame at the
    load multiplier it was heading for, with its residual. begin, resume: see
    _dynamic_frames (begin's load steps are this analysis' when resumed)."""
    if prep.case.settings.solver.equilibrium.path is not None:
        yield from path_frames(prep, progress, stop, begin, resume)
        return
    p = prep.plan
    chosen = chosen_datasets(prep.case.settings.output.fields)  # what the frames keep
    eq = start_equilibrium(prep) if eq is None else eq
    eq.stop = stop
    first = 1
    if begin is not None:
        place(eq, begin, resume)
    if resume:
        eq.load = begin.load
        first = begin.count + 1
    else:
        yield static_record(eq, 0, chosen=chosen)
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
        yield static_record(eq, i, step, lowest, chosen)


def place(eq, begin, resume: bool = False) -> None:
    """Put eq at a restart state's configuration (its own quaternions where it has them) and
    term states: a restart's (resume: checked against the model), or those a step before
    handed on."""
    if resume:
        capture.place_equilibrium(eq, capture.resumed(begin, eq.model))
    else:
        capture.place_equilibrium(eq, begin.state(), only_shared=True)


def static_record(eq, count: int, step=None, lowest: float = math.nan, chosen=None):
    """The frame of an equilibrium after count load steps, with its restart state; chosen:
    the datasets output.fields keeps (None: all)."""
    frame = static_frame(eq.model, eq.x, eq.rot, eq.load, step, lowest, chosen)
    return dataclasses.replace(frame, restart=capture.restart_equilibrium(eq, count))


def path_frames(prep, progress, stop, begin=None, resume=False):
    """Frames of an equilibrium path (docs/path_following.md): the start, then one per path
    step, with time the arc length travelled (displacement control: the controlled
    displacement's travel) and load_factor the loads' factor. begin, resume: see
    _dynamic_frames (a resumed path goes on with its stored factor, arc, step length and
    direction)."""
    s, model = prep.case.settings.solver, prep.setup.model
    chosen = chosen_datasets(prep.case.settings.output.fields)  # what the frames keep
    spec, (node, comp) = s.equilibrium.path, prep.setup.path
    eq = start_equilibrium(prep)
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
        place(eq, begin, resume)
    if resume:
        state.load, state.length, arc, done = begin.load, begin.dt, begin.t0, begin.count
        last = begin.arrays.get("last")
        state.last = None if last is None or not np.any(last) else last.copy()
    else:
        yield path_record(eq, state, arc, 0, None, chosen)
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
        yield path_record(eq, state, arc, k, taken, chosen)
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


def path_record(eq, state, arc: float, count: int, taken, chosen=None):
    """The frame of an equilibrium on a path: its loads at the factor reached, with the path's
    restart state (the factor, the arc, the next step's length and the last direction);
    chosen: the datasets output.fields keeps (None: all)."""
    load = state.load
    model = modal.scaled_loads(eq.model, load)
    step = None
    if taken is not None:
        step = equilibrium.LoadStep(load, taken.iterations, 0, taken.residual, taken.length, ())
    frame = static_frame(model, eq.x, eq.rot, 1.0, step, chosen=chosen)
    raw = restart.of_state(capture.of_path(eq, state, arc, count))
    return dataclasses.replace(frame, time=arc, load_factor=load, restart=raw)


def preloaded(prep):
    """The equilibrium.Equilibrium of a prepared case at load multiplier 1, through its
    solver.equilibrium.load_steps."""
    eq = start_equilibrium(prep)
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
        e = start_equilibrium(prep)
        if scale != 1.0:
            e = dataclasses.replace(
                e, solver=implicit.make_solver(modal.scaled_loads(model, scale), s.group)
            )
        e.x[:], e.rot[:], e.quat[:], e.load = base
        equilibrium.solve_load_step(e, multiplier)
        return e.x, e.rot, e.quat

    return modal.buckling(model, s.group, count, base, solve)


def eigen_frames(prep, progress, stop, begin=None, resume=False):
    """Frames of a modal or buckling analysis: the state it is about (the reference, or the
    equilibrium's load steps), then its result (rodsim.integrators.modal.Modes or Buckling)
    as the last item, unless a stop request cut the equilibrium short. begin, resume: a
    restart state of the equilibrium (see _dynamic_frames)."""
    s, model = prep.case.settings.solver, prep.setup.model
    eq = None
    if s.load_steps:
        eq = start_equilibrium(prep)
        yield from equilibrium_frames(prep, progress, stop, begin, resume, eq)
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


def refresh_equilibrium(run, model) -> None:
    run.check_stability = forces.conservative(model.terms)


def no_counters(eq, reset: bool = False) -> dict:
    return {}
