"""A running solver's State and back (rodsim.state.State: what restart files,
rodsim.Simulation.state and reset carry; rodsim.solvers.SOLVERS: state, resume), restart
states checked against the model, and the term states an analysis step before left."""

import math
from collections.abc import Mapping

import numpy as np

from rodsim import state as states
from rodsim.integrators import dynamics, implicit, ledger, vi_newton
from rodsim.model import forces
from rodsim.results import restart
from rodsim.state import (
    CONTROL,
    INTEGERS,
    LEDGER,
    MOTION,
    OPTIONAL,
    State,
    _copy,
    restore_terms,
    term_states,
)

RESTART_KEY = "--restart"


def resumed(begin, model) -> states.State:
    """The State of a restart state a run continues, its term states checked against the
    model's (rodsim.results.restart.check_terms)."""
    restart.check_terms(begin, model.terms, "", RESTART_KEY)
    return begin.state()


def carry_terms(model, begin) -> bool:
    """Put the term states of a state handed on by the analysis step before into the model's
    terms (those both have); whether there were any."""
    saved = {} if begin is None else begin.state().terms
    if saved:
        states.restore_terms(model.terms, saved, only_shared=True)
    return bool(saved)


def _motion(st) -> dict:
    return {k: _copy(getattr(st, k)) for k in MOTION}


def _ledger(run) -> dict:
    """The run's energy ledger state (its sums so far), where it keeps one."""
    held = getattr(run, "ledger", None)
    if held is None:
        return {}
    return {LEDGER + k: _copy(getattr(held, k)) for k in ledger.STATE}


def _ledger_mismatch(run, solver: Mapping) -> str | None:
    """What keeps a State's ledger arrays from the run's ledger (none stored: an older file,
    whose run starts its sums anew), or None."""
    held = getattr(run, "ledger", None)
    for name, value in solver.items():
        if not name.startswith(LEDGER):
            continue
        target = None if held is None else getattr(held, name[len(LEDGER) :], None)
        if target is None:
            return f"{name} has no place in this run (no energy ledger of that name)"
        if np.shape(value) != target.shape:
            return f"{name} has shape {np.shape(value)}, expected {target.shape}"
        if not np.isfinite(value).all():
            return f"{name} holds NaN or infinite values"
    return None


def _restore_ledger(run, solver: Mapping) -> None:
    for name, value in solver.items():
        if name.startswith(LEDGER):
            getattr(run.ledger, name[len(LEDGER) :])[...] = value


def of_explicit(run, count=None) -> State:
    """The State of a running dynamics.Explicit (count: unused, the run counts its steps)."""
    st = run.state
    solver = {
        "f": _copy(st.f),
        "tau": _copy(st.tau),
        "energy": np.array([run.internal, run.external], dtype=float),
        **_ledger(run),
    }
    return State("explicit", **_motion(st), t0=float(run.t0), count=int(run.step),
                 dt=float(run.settings.dt), terms=term_states(run.model.terms),
                 solver=solver)  # fmt: skip


def resume_explicit(run, s: State) -> None:
    """Set a running dynamics.Explicit to State s (of its model), in place; without the
    forces (an older restart state) they are computed at it. ValueError where its ledger
    arrays do not fit (checked before anything is set)."""
    what = _ledger_mismatch(run, s.solver)
    if what is not None:
        raise ValueError(what)
    st = run.state
    for k in MOTION:
        getattr(st, k)[...] = getattr(s, k)
    restore_terms(run.model.terms, s.terms)
    run.t0, run.step = float(s.t0), int(s.count)
    if run.settings.dt != s.dt:
        run.settings = run.settings._replace(dt=float(s.dt))
    if all(k in s.solver for k in OPTIONAL):
        st.f[...], st.tau[...] = s.solver["f"], s.solver["tau"]
        run.internal, run.external = (float(v) for v in s.solver["energy"])
    else:
        dynamics.refresh_forces(run)
    _restore_ledger(run, s.solver)  # after a refresh, which sets the ledger's start powers
    run.max_iterations, run.mean_iterations = 0, 0.0


def of_implicit(run, count=None) -> State:
    """The State of a running implicit.Implicit (with adaptive steps, its controller's;
    count: unused, the run counts its steps)."""
    solver = {
        "quat": _copy(run.quat),
        "xi": _copy(run.xi),
        "energy": np.array([run.internal, run.external], dtype=float),
        **_ledger(run),
    }
    c = run.control
    if c is not None:
        solver["xi_before"] = _copy(c.xi_before)
        solver["control"] = np.array([float(_control_value(c, k)) for k in CONTROL])
        solver["jacobian"] = _copy(run.solver.data)
    return State("implicit", **_motion(run.state), t0=float(run.t0), count=int(run.step),
                 dt=float(run.dt), terms=term_states(run.model.terms),
                 solver=solver)  # fmt: skip


def _control_value(control, name: str) -> float:
    return control.linear.h if name == "h_jacobian" else getattr(control, name)


def resume_implicit(run, s: State) -> None:
    """Set a running implicit.Implicit to State s, in place: its quaternions and first guess,
    the adaptive controller with its held Jacobian factorised again from the stored blocks
    (deterministic: the run goes on bit for bit). ValueError where s's Jacobian is of another
    sparsity or not finite (checked before anything is set)."""
    a, c = s.solver, run.control
    what = _ledger_mismatch(run, a)
    if what is not None:
        raise ValueError(what)
    held = c is not None and "control" in a and math.isfinite(a["control"][-1])
    if held:
        if a["jacobian"].shape != run.solver.data.shape:
            raise ValueError(
                f"jacobian has shape {a['jacobian'].shape}, expected {run.solver.data.shape}"
            )
        if not np.isfinite(a["jacobian"]).all():
            raise ValueError("jacobian holds NaN or infinite values")
    st = run.state
    for k in MOTION:
        getattr(st, k)[...] = getattr(s, k)
    restore_terms(run.model.terms, s.terms)
    run.quat[...] = a["quat"]
    run.xi[...] = a["xi"]
    run.t0, run.step, run.dt = float(s.t0), int(s.count), float(s.dt)
    if c is not None and "control" in a:
        for name, value in zip(CONTROL, a["control"], strict=True):
            if name == "h_jacobian":
                c.linear.h = float(value)
            else:
                setattr(c, name, int(value) if name in INTEGERS else float(value))
        c.xi_before[...] = a["xi_before"]
        if held:
            run.solver.data[...] = a["jacobian"]
            vi_newton.factorise(run.solver, c.linear)
    if "energy" in a:
        run.internal, run.external = (float(v) for v in a["energy"])
    else:
        run.internal, run.external = forces.energies(run.model.terms, st.x, st.rot, run.time)
    _restore_ledger(run, a)
    run.max_iterations, run.residual, run.last = 0, 0.0, None


def of_equilibrium(eq, count: int = 0) -> State:
    """The State of an equilibrium.Equilibrium after `count` load steps."""
    return State("equilibrium", _copy(eq.x), _copy(eq.rot), count=int(count), dt=float(eq.h0),
                 load=float(eq.load), terms=term_states(eq.model.terms),
                 solver={"quat": _copy(eq.quat)})  # fmt: skip


def place_equilibrium(eq, s: State, only_shared: bool = False) -> None:
    """Put eq at s's configuration (its own quaternions where it has them) and term states."""
    eq.x[...], eq.rot[...] = s.x, s.rot
    if "quat" in s.solver:
        eq.quat[...] = s.solver["quat"]
    else:
        implicit.quaternions(eq.rot, eq.quat)
    restore_terms(eq.model.terms, s.terms, only_shared)


def resume_equilibrium(eq, s: State) -> None:
    """Set eq to State s: its configuration, load multiplier and first pseudo-time step."""
    place_equilibrium(eq, s)
    eq.load = float(s.load)
    if math.isfinite(s.dt):
        eq.h0 = float(s.dt)


def of_path(eq, path, arc: float, count: int) -> State:
    """The State of an equilibrium on a path (rodsim.integrators.path.PathState path): the
    arc length travelled as t0, the next step's length as dt, the load factor as load, the
    last step's translations (zeros before the first)."""
    last = np.zeros_like(eq.x) if path.last is None else _copy(path.last)
    return State("equilibrium", _copy(eq.x), _copy(eq.rot), t0=float(arc), count=int(count),
                 dt=float(path.length), load=float(path.load), terms=term_states(eq.model.terms),
                 solver={"quat": _copy(eq.quat), "last": last})  # fmt: skip


def restart_equilibrium(eq, count: int) -> restart.RestartState:
    """The state of an equilibrium.Equilibrium after `count` load steps, copied."""
    return restart.of_state(of_equilibrium(eq, count))
