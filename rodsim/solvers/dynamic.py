"""The explicit and implicit solvers: how each starts from a prepared case (or a restart state),
steps in compiled chunks, and what its frames report (rodsim.solvers.SOLVERS)."""

import dataclasses
import math

import numpy as np

from rodsim.case.imperfection import displaced
from rodsim.integrators import adaptive, dynamics, implicit
from rodsim.model import forces
from rodsim.results import restart
from rodsim.solvers import capture

CHUNK_SECONDS = 0.1  # wall time per compiled call: progress and stop signals stay responsive


def next_chunk(done: int, seconds: float) -> int:
    """Steps for the next compiled call: about CHUNK_SECONDS of wall time at the rate of the
    last call (done steps in seconds), growing at most 4x per call (the first call may
    include compilation), so that a stop signal is acted on within about a second."""
    rate = done / max(seconds, 1e-9)
    return max(1, min(4 * done, int(rate * CHUNK_SECONDS)))


def initial_state(prep):
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


def dynamic_state(begin):
    """The StateArrays of a restart state (rodsim.results.restart): a dynamic one's momenta, or at
    rest (an equilibrium's)."""
    x, rot, p, pi = restart.motion(begin)
    return dynamics.StateArrays(x, rot, p, pi, np.zeros_like(x), np.zeros_like(x))


def start_implicit(prep, begin=None):
    """A running implicit.Implicit at the initial state, or at a restart state begin
    (rodsim.results.restart: its step count, time origin, dt, Newton's first guess, the adaptive
    controller and the terms' state)."""
    s, model = prep.case.settings.solver, prep.setup.model
    resume = begin is not None and begin.kind == "implicit"
    run = implicit.start(
        model,
        begin.dt if resume else prep.plan.dt,
        group=s.group,
        state=initial_state(prep) if begin is None else dynamic_state(begin),
        tol=s.newton.tol,
        max_iter=s.newton.max_iter,
        t0=begin.t0 if resume else 0.0,
        step=begin.count if resume else 0,
        conserve=s.conserving,
        steps=adaptive_settings(s, prep.plan),
        h0=prep.plan.first,
    )
    if resume:
        try:
            capture.resume_implicit(run, capture.resumed(begin, model))
        except ValueError as exc:  # a held Jacobian of another sparsity
            raise restart.corrupt("", capture.RESTART_KEY, str(exc)) from None
    elif capture.carry_terms(model, begin):
        run.internal, run.external = forces.energies(
            model.terms, run.state.x, run.state.rot, run.time
        )
    return run


def adaptive_settings(s, plan):
    """The adaptive.Settings of solver.adaptive (None: fixed steps), dt_min and dt_max
    resolved: auto is 1e-6 x the first step, and the frame interval."""
    a = s.adaptive
    if a is None:
        return None
    largest = plan.dt if a.dt_max == "auto" else min(float(a.dt_max), plan.dt)
    smallest = 1e-6 * plan.first if a.dt_min == "auto" else float(a.dt_min)
    return adaptive.Settings(a.tol, a.energy_tol, smallest, largest, a.grow, plan.t_end)


def start_explicit(prep, begin=None):
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
        state=initial_state(prep) if begin is None else dynamic_state(begin),
        tol=s.rotation_tol,
        t0=begin.t0 if resume else 0.0,
        step=begin.count if resume else 0,
    )
    if resume:
        capture.resume_explicit(run, capture.resumed(begin, model))
    elif capture.carry_terms(model, begin):
        dynamics.refresh_forces(run)
    return run


def resumed_plan(plan, begin):
    """The plan of a run continued from restart state begin (docs/restart.md): its dt and
    output cadence, steps up to the case's end time."""
    n = max(begin.count, math.ceil((plan.t_end - begin.t0) / begin.dt * (1 - 1e-9)))
    return dataclasses.replace(plan, dt=begin.dt, n_steps=n, steps_per_frame=begin.every)


def handed(begin):
    """A state handed on by the step before (None: none), as a dynamic start: count 0."""
    return None if begin is None else begin._replace(kind="handed")


def refresh_explicit(run, model) -> None:
    dynamics.refresh_forces(run)


def refresh_implicit(run, model) -> None:
    run.internal, run.external = forces.energies(model.terms, run.state.x, run.state.rot, run.time)


def explicit_counters(run, reset: bool = False) -> dict:
    out = {"iterations": run.max_iterations, "mean_iterations": run.mean_iterations}
    if reset:
        run.max_iterations = 0
    return out


def implicit_counters(run, reset: bool = False) -> dict:
    out = {"iterations": run.max_iterations, "residual": run.residual}
    if reset:
        run.max_iterations, run.residual = 0, 0.0
    return out


def plan_dt(run, plan) -> float:
    return plan.dt


def implicit_dt(run, plan) -> float:
    c = run.control  # adaptive steps: the last step taken
    return plan.dt if c is None else c.h_last or c.h


def no_watch(run, stop) -> None:
    pass


def implicit_watch(run, stop) -> None:
    if run.control is not None:  # adaptive steps: a frame interval may hold many steps
        run.stop = stop
