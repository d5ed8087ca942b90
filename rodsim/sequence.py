"""Analysis steps in turn (docs/steps.md): the frames of a case's steps, each step started
from the state the step before left, each frame stamped with its step and total time, and
a run continued from a restart state (docs/restart.md).

A step's own frames come from its solver (rodsim.solvers.SOLVERS); the state handed from
one step to the next is the restart state of the step's last frame (rodsim.results.restart), the
same arrays a run started by hand from the results file reads back.
"""

import dataclasses
from typing import NamedTuple

import numpy as np

from rodsim import solvers
from rodsim.case.imperfection import check_same_mesh
from rodsim.errors import CaseError
from rodsim.integrators import implicit, modal
from rodsim.results import restart
from rodsim.results.frame import Frame
from rodsim.results.reader import frame_count, open_results

RESTART_KEY = "--restart"


class EigenResult(NamedTuple):
    """A modal or buckling result (rodsim.integrators.modal.Modes or Buckling) of analysis
    step `step`, about `about` (reference, equilibrium, or the state step `step` - 1 left)."""

    result: object
    about: str
    step: int


def steps_of(prep) -> tuple:
    """((name, Prepared), ...) of a prepared case: its steps, or its one analysis."""
    return prep.steps or (("", prep),)


def frames_of(prep, k: int) -> int:
    """The frames step k (prepared as prep) writes: none for a modal step after the first."""
    return 0 if k and prep.plan.kind == "modal" else prep.plan.n_frames


def steps_to_go(prep, resume=None) -> int:
    """The time and load steps a run of the prepared case takes (from restart state resume:
    those left)."""
    steps = steps_of(prep)
    first = 0 if resume is None else resume.step
    total = sum(sp.plan.n_steps for _, sp in steps[first:])
    if resume is None:
        return total
    p = steps[first][1].plan
    if resume.kind != "equilibrium":
        p = solvers.resumed_plan(p, resume)
    return total - steps[first][1].plan.n_steps + max(p.n_steps - resume.count, 0)


def end_time(prep) -> float:
    """The end the run is asked to reach (the file's end_requested): t_end (equilibrium: 1),
    with analysis steps the total time at their end."""
    if not prep.steps:
        return prep.plan.t_end
    return sum(duration(sp) for k, (_, sp) in enumerate(prep.steps) if frames_of(sp, k))


def following(prep) -> bool:
    """Whether the analysis follows an equilibrium path (docs/path_following.md)."""
    return prep.case.settings.solver.equilibrium.path is not None


def duration(prep) -> float:
    """What a step adds to the total time: its end time, 1 for equilibrium (the load
    multiplier), 0 for a modal or buckling analysis about the reference, NaN for a path
    (its arc length is known at its end)."""
    p = prep.plan
    if p.kind in ("explicit", "implicit") or following(prep):
        return p.t_end
    return 1.0 if prep.case.settings.solver.load_steps else 0.0


def frames(prep, progress=None, stop=lambda: False, resume=None):
    """The frames of a prepared case and, after a modal or buckling step's frames, its
    EigenResult; resume: a restart state (rodsim.results.restart.RestartState) to continue from."""
    steps = steps_of(prep)
    handed, total = None, 0.0
    first = 0
    if resume is not None:
        first, total, handed = resume.step, resume.total, resume
    for k in range(first, len(steps)):
        _, sp = steps[k]
        again = resume is not None and k == resume.step
        solver = solvers.SOLVERS[sp.plan.kind]
        if k > 0 and sp.plan.kind == "modal":
            items = _modes_about(sp, handed)
        else:
            items = solver.frames(sp, progress, stop, handed, again)
        last = None
        for item in items:
            if isinstance(item, Frame):
                item = _stamped(item, k, total)
                last = item
            else:
                about = "previous" if k > 0 else sp.case.settings.solver.eigen.about
                item = EigenResult(item, about, k)
            yield item
        if stop() or (last is not None and last.off_schedule):
            return
        if last is not None and last.restart is not None:
            handed = last.restart
        if following(sp):  # the arc length travelled
            total += last.time if last is not None else handed.t0 if handed else 0.0
        elif not (k > 0 and sp.plan.kind == "modal"):
            total += duration(sp)


def _stamped(frame: Frame, step: int, total: float) -> Frame:
    """The frame with its step, total time and restart state's step."""
    state = frame.restart
    if state is not None:
        state = state._replace(step=step, total=total)
    return dataclasses.replace(frame, step=step, total_time=total + frame.time, restart=state)


def _modes_about(prep, handed):
    """The modes of a modal step after the first: about the state handed on (at rest), under
    the loads acting at the end of the step before (its model at load 0, rodsim.case.carry)."""
    s = prep.case.settings.solver
    x, rot = handed.arrays["x"], handed.arrays["rot"]
    quat = handed.arrays.get("quat")
    if quat is None:
        quat = np.empty((len(x), 4))
        implicit.quaternions(rot, quat)
    modes = modal.modes(prep.setup.model, s.group, x, rot, quat, s.modal.modes, 0.0)
    # the state is at the full loads of the step before (its model's load 0 is their value)
    yield dataclasses.replace(modes, load=1.0)


def restart_time(state) -> float:
    """The time of a restart state in its step (equilibrium: the load multiplier)."""
    if state.kind == "equilibrium":
        return state.load
    return state.t0 + state.count * state.dt + restart.partial(state)


def _check_stress_points(path, recovery, mesh) -> None:
    """CaseError naming --restart unless the file's stress recovery points (its
    mesh/stress_points, where it has them) are this case's: the points moved between
    releases (rodsim.model.thin_walled), and stresses continued at the new points would sit
    under the old ones' coordinates."""
    ours = mesh.stress_points
    if recovery is None or mesh.n_elements == 0:
        return
    # The same section gives the same points to round-off (one formula of its dimensions):
    # 1e-9 of the largest coordinate is far above that and far below any moved point.
    size = float(np.nanmax(np.abs(ours), initial=0.0)) if ours.size else 0.0
    same = recovery.shape == ours.shape and np.allclose(
        recovery, ours, rtol=0.0, atol=1e-9 * (size or 1.0), equal_nan=True
    )
    if not same:
        raise CaseError(
            f"{path}: the sections' stress recovery points (mesh/stress_points) differ from "
            "this case's: a results file of an earlier rodsim, whose sections recover stresses "
            "at other points; run the case anew (without --restart)",
            key=RESTART_KEY,
        )


def resume_state(prep, path):
    """The restart state to continue the results file at path with the prepared case
    (docs/restart.md); CaseError naming the key where they do not go together."""
    with open_results(path) as f:
        state = restart.read(f, str(path), RESTART_KEY)
        count = frame_count(f)
        times = f["time"][:count]
        reference = f["mesh/points"][()]
        recovery = f["mesh/stress_points"][()] if "mesh/stress_points" in f else None
    check_same_mesh(path, reference, prep.setup.mesh.points, RESTART_KEY)
    # the state as a whole before any use: kernels index its arrays unchecked
    restart.check(state, str(path), RESTART_KEY, len(prep.setup.mesh.points), times)
    _check_stress_points(path, recovery, prep.setup.mesh)
    steps = steps_of(prep)
    if state.step >= len(steps):
        raise CaseError(
            f"{path} stopped in analysis step {state.step + 1}; this case has {len(steps)} "
            "step(s): continue it with the case that wrote it",
            key="steps",
        )
    sp = steps[state.step][1]
    kind = sp.plan.kind if sp.plan.kind in ("explicit", "implicit") else "equilibrium"
    if kind != state.kind or not (kind != "equilibrium" or sp.case.settings.solver.load_steps):
        where = f" (step {state.step + 1})" if prep.steps else ""
        raise CaseError(
            f"{path} holds the state of a{'n' * (state.kind[0] in 'ei')} {state.kind} run; "
            f"this case{where} runs {sp.plan.kind}: continue it with the same analysis and "
            "scheme",
            key="solver.analysis",
        )
    adaptive = sp.case.settings.solver.adaptive is not None
    if kind == "implicit" and adaptive != ("control" in state.arrays):
        raise CaseError(
            f"{path} holds the state of an implicit run with "
            f"{'adaptive' if 'control' in state.arrays else 'fixed'} steps; this case takes "
            f"{'adaptive' if adaptive else 'fixed'} ones: continue it with the same "
            "solver.adaptive (given or not)",
            key="solver.adaptive",
        )
    restart.check_terms(state, sp.setup.model.terms, str(path), RESTART_KEY)
    done = restart_time(state)
    if kind != "equilibrium" and sp.plan.t_end < done * (1 - 1e-12):
        raise CaseError(
            f"t_end {sp.plan.t_end:.6g} is before the time {done:.6g} the run reached: give the "
            "same or a later end time",
            key="solver.t_end",
        )
    if (
        kind == "equilibrium"
        and not following(sp)
        and abs(state.load * sp.plan.n_steps - state.count) > 1e-9
    ):
        raise CaseError(
            f"the run reached load {state.load:.6g} after {state.count} load steps; this case "
            f"has {sp.plan.n_steps}: continue it with the same load_steps",
            key="solver.equilibrium.load_steps",
        )
    if state.frame >= count:
        raise CaseError(
            f"the restart state belongs to frame {state.frame}, but {path} holds {count} "
            "complete frames",
            key=RESTART_KEY,
        )
    return state
