"""The restart state (docs/restart.md): the raw state of a solver at a frame, exactly as the
integrators hold it, so that a run continued from it takes the same steps as one that was
never stopped.

The results file's group ``restart/`` holds two slots, ``slot0`` and ``slot1``, written in
turn (rodsim.results_writer: the latest frame's state with the first frame, at most once a
second, and at the end of the run); the group's attribute ``current`` names the last slot
written completely (-1: none yet). A slot is written and flushed before ``current`` points
at it, so a crash while one is written leaves the other, an older state. Per slot:

- attributes: ``kind`` (explicit | implicit | equilibrium), ``step`` (the analysis step,
  0-based), ``count`` (time steps, or load steps, done in that step), ``t0`` (the step's time
  origin), ``dt`` (the time step; equilibrium: the first pseudo-time step), ``load`` (the
  load multiplier; dynamic: NaN), ``total`` (total time at the step's start), ``every``
  (time steps between frames; equilibrium: 1), ``frame`` (the index of the frame written
  with it);
- datasets: ``x`` (N,3), ``rot`` (N,3,3) rotation matrices (columns d1 d2 d3), and per kind
  ``p``, ``pi`` (N,3) spatial momenta (explicit, implicit), ``quat`` (N,4) the solver's own
  quaternions (implicit, equilibrium), ``xi`` (N,6) the last step velocity, Newton's first
  guess (implicit), with adaptive steps ``xi_before`` (N,6) and ``control`` (the controller's
  scalars, CONTROL), ``last`` (N,3) the last path step's translations (path following, whose
  ``t0`` is the arc length travelled and ``dt`` the next step's length).

Later physics with state of its own (friction history, bodies, joint multipliers) add their
arrays to the slot under their own names.
"""

import math
from typing import NamedTuple

import h5py
import numpy as np

from rodsim.errors import CaseError

GROUP = "restart"
SLOTS = ("slot0", "slot1")
ARRAYS = {
    "explicit": ("x", "rot", "p", "pi"),
    "implicit": ("x", "rot", "p", "pi", "quat", "xi"),
    "equilibrium": ("x", "rot", "quat"),
}
DESCRIPTIONS = {
    "x": "(N,3) node positions",
    "rot": "(N,3,3) nodal rotation matrices, columns d1 d2 d3",
    "p": "(N,3) spatial linear momenta",
    "pi": "(N,3) spatial angular momenta",
    "quat": "(N,4) the solver's unit quaternions of rot (w, x, y, z)",
    "xi": "(N,6) the last step's body velocity, Newton's first guess of the next step",
    "xi_before": "(N,6) adaptive steps: the step velocity of the step before the last",
    "control": "adaptive steps: the controller's state (rodsim.restart.CONTROL)",
    "jacobian": "adaptive steps: the Jacobian held (B,6,6), its BSR blocks",
}
# the adaptive controller's scalars, in the order of the array `control`
CONTROL = (
    "h", "h_last", "h_before", "known", "energy_error", "energy_max", "kinetic", "internal",
    "accepted", "rejected", "partial", "h_jacobian",
)  # fmt: skip
INTEGERS = ("known", "accepted", "rejected")


class RestartState(NamedTuple):
    """A solver's raw state at a frame (see the module docstring for each field)."""

    kind: str
    step: int
    count: int
    t0: float
    dt: float
    load: float
    total: float
    arrays: dict
    every: int = 1
    frame: int = -1


def of_dynamic(run, kind: str, every: int) -> RestartState:
    """The state of a running explicit (dynamics.Explicit) or implicit (implicit.Implicit)
    integration, copied, writing a frame every `every` steps (step and total: 0, set by the
    analysis-step sequence, rodsim.sequence)."""
    st = run.state
    arrays = {"x": st.x, "rot": st.rot, "p": st.p, "pi": st.pi}
    dt = run.settings.dt if kind == "explicit" else run.dt
    if kind == "implicit":
        arrays |= {"quat": run.quat, "xi": run.xi}
        c = run.control
        if c is not None:
            arrays |= {
                "xi_before": c.xi_before,
                "control": np.array([float(_control_value(c, k)) for k in CONTROL]),
                "jacobian": run.solver.data,
            }
    return RestartState(
        kind,
        0,
        int(run.step),
        float(run.t0),
        float(dt),
        float("nan"),
        0.0,
        {k: np.array(v, dtype=float) for k, v in arrays.items()},
        int(every),
    )


def partial(state: "RestartState") -> float:
    """Adaptive steps: the time past the frame grid a state was saved at (a stop request
    between frames), else 0."""
    control = state.arrays.get("control") if state.arrays else None
    return float(control[CONTROL.index("partial")]) if control is not None else 0.0


def steps_taken(state: "RestartState | None") -> int:
    """The time steps (or load steps) a state's analysis step has taken: with adaptive steps
    the controller's accepted steps, else count (0 for None)."""
    if state is None:
        return 0
    control = state.arrays.get("control") if state.arrays else None
    if control is not None:
        return int(control[CONTROL.index("accepted")])
    return int(state.count)


def _control_value(control, name: str) -> float:
    return control.linear.h if name == "h_jacobian" else getattr(control, name)


def resume_control(run, state: RestartState) -> None:
    """Set a running implicit integration's adaptive controller
    (rodsim.integrators.adaptive.Control) to the state saved in a restart state, its held
    Jacobian factorised again from the stored blocks: the run goes on bit for bit."""
    from rodsim.integrators import vi_newton

    a, control = state.arrays, run.control
    for name, value in zip(CONTROL, a["control"], strict=True):
        if name == "h_jacobian":
            control.linear.h = float(value)
        else:
            setattr(control, name, int(value) if name in INTEGERS else float(value))
    control.xi_before[:] = a["xi_before"]
    if math.isfinite(control.linear.h):
        run.solver.data[:] = a["jacobian"]
        vi_newton.factorise(run.solver, control.linear)


def of_equilibrium(eq, count: int) -> RestartState:
    """The state of an equilibrium.Equilibrium after `count` load steps, copied."""
    arrays = {"x": eq.x, "rot": eq.rot, "quat": eq.quat}
    return RestartState(
        "equilibrium",
        0,
        int(count),
        0.0,
        float(eq.h0),
        float(eq.load),
        0.0,
        {k: np.array(v, dtype=float) for k, v in arrays.items()},
    )


def motion(state: RestartState):
    """(x, rot, p, pi) copies of a state's configuration and spatial momenta: a dynamic
    state's own, at rest for an equilibrium's (what a dynamic run started from it holds)."""
    a = state.arrays
    x, rot = a["x"].copy(), a["rot"].copy()
    if "p" in a:
        return x, rot, a["p"].copy(), a["pi"].copy()
    return x, rot, np.zeros_like(x), np.zeros_like(x)


def write(f: h5py.File, state: RestartState, frame: int) -> None:
    """Write state into the slot that `current` does not name, flush, then point `current` at
    it and flush again (OSError passes through: the caller reports it)."""
    g = f.require_group(GROUP)
    current = int(g.attrs.get("current", -1))
    name = SLOTS[1 - current] if current in (0, 1) else SLOTS[0]
    slot = g.require_group(name)
    for key in list(slot):
        if key not in state.arrays or slot[key].shape != state.arrays[key].shape:
            del slot[key]  # another kind's arrays (a step of another analysis)
    for key, value in state.arrays.items():
        if key in slot:
            slot[key][...] = value
        else:
            slot.create_dataset(key, data=value).attrs["description"] = DESCRIPTIONS.get(key, "")
    attrs = state._replace(frame=frame, arrays=None)._asdict()
    del attrs["arrays"]
    for key, value in attrs.items():
        slot.attrs[key] = value
    f.flush()
    g.attrs["current"] = SLOTS.index(name)
    f.flush()


def read(f: h5py.File, where: str, key: str) -> RestartState:
    """The state of the slot `current` names; CaseError naming `key` where the file has none
    (where: the file, for the message)."""
    g = f.get(GROUP)
    current = -1 if g is None else int(g.attrs.get("current", -1))
    if current not in (0, 1) or SLOTS[current] not in g:
        raise CaseError(
            f"{where} holds no restart state (restart/): it was written by a modal or buckling "
            "analysis, or by a rodsim from before restart states",
            key=key,
        )
    slot = g[SLOTS[current]]
    a = slot.attrs
    kind = str(a["kind"])
    arrays = {k: slot[k][()] for k in ARRAYS.get(kind, ()) if k in slot}
    arrays |= {k: slot[k][()] for k in slot if k not in arrays}
    return RestartState(
        kind,
        int(a["step"]),
        int(a["count"]),
        float(a["t0"]),
        float(a["dt"]),
        float(a["load"]),
        float(a["total"]),
        arrays,
        int(a["every"]),
        int(a["frame"]),
    )
