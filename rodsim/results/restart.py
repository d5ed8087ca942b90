"""The restart state (docs/restart.md): the raw state of a solver at a frame, exactly as the
integrators hold it, so that a run continued from it takes the same steps as one that was
never stopped.

The results file's group ``restart/`` holds two slots, ``slot0`` and ``slot1``, written in
turn (rodsim.results.writer: the latest frame's state with the first frame, at most once a
second, and at the end of the run); the group's attribute ``current`` names the last slot
written completely (-1: none yet). A slot is written and flushed before ``current`` points
at it, so a crash while one is written leaves the other, an older state. Per slot:

- attributes: ``kind`` (explicit | implicit | equilibrium), ``step`` (the analysis step,
  0-based), ``count`` (time steps, or load steps, done in that step), ``t0`` (the step's time
  origin), ``dt`` (the time step; equilibrium: the first pseudo-time step), ``load`` (the
  load multiplier; dynamic: NaN), ``total`` (total time at the step's start), ``every``
  (time steps between frames; equilibrium: 1), ``frame`` (the index of the frame written
  with it);
- datasets: the arrays of the solver's State (rodsim.state) by their names, walked from it:
  ``x`` (N,3), ``rot`` (N,3,3) rotation matrices (columns d1 d2 d3), and per kind ``p``,
  ``pi`` (N,3) spatial momenta (explicit, implicit), ``f``, ``tau`` (N,3) the forces the next
  explicit step starts from and ``energy`` (2,) (explicit, implicit; older files lack them:
  recomputed), ``quat`` (N,4) the solver's own quaternions (implicit, equilibrium), ``xi``
  (N,6) the last step velocity, Newton's first guess (implicit), with adaptive steps
  ``xi_before`` (N,6), ``control`` (the controller's scalars, CONTROL) and ``jacobian``,
  ``last`` (N,3) the last path step's translations (path following, whose ``t0`` is the arc
  length travelled and ``dt`` the next step's length);
- the group ``terms/<term>/<field>``: the state of each term that has one (plastic slip ...),
  written and read field by field without a list here (rodsim.state.State.terms), checked
  against the case's model (check_terms); ``ledger_<name>`` the energy ledger's sums
  (rodsim.integrators.ledger.STATE), checked against the run's ledger when it resumes.
"""

import math
from typing import NamedTuple

import h5py
import numpy as np

from rodsim import state as states
from rodsim.errors import CaseError
from rodsim.state import CONTROL, INTEGERS, OPTIONAL, TERMS_GROUP

GROUP = "restart"
SLOTS = ("slot0", "slot1")
ARRAYS = {
    "explicit": ("x", "rot", "p", "pi"),
    "implicit": ("x", "rot", "p", "pi", "quat", "xi"),
    "equilibrium": ("x", "rot", "quat"),
}
# the solver's arrays (rodsim.state.ARRAYS) and their descriptions; a term's fields are
# described generically (TERM_DESCRIPTION)
DESCRIPTIONS = {k: v[1] for k, v in states.ARRAYS.items()}
TERM_DESCRIPTION = "the state of the term {term}: its field {field} (rodsim.terms.{term})"


class RestartState(NamedTuple):
    """A solver's raw state at a frame (see the module docstring for each field): arrays are
    its State's (rodsim.state.State.arrays), by name."""

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

    def state(self) -> states.State:
        """The State it holds (rodsim.state.from_arrays)."""
        kind = self.kind  # "handed" (rodsim.solvers): the kind its arrays are of
        if kind not in ARRAYS:
            a = self.arrays
            kind = "implicit" if "xi" in a else "explicit" if "p" in a else "equilibrium"
        return states.from_arrays(kind, self.arrays, self.t0, self.count, self.dt, self.load)


def of_state(s: states.State, every: int = 1) -> RestartState:
    """The restart state of a State, writing a frame every `every` steps (step and total: 0,
    set by the analysis-step sequence, rodsim.sequence); its arrays float64 copies where they
    are the solver's, a term's as the term holds them."""
    arrays = {
        k: np.array(v, dtype=float) if k in DESCRIPTIONS else np.array(v)
        for k, v in s.arrays().items()
    }
    return RestartState(
        s.kind, 0, int(s.count), float(s.t0), float(s.dt), float(s.load), 0.0, arrays, int(every)
    )


def partial(state: "RestartState") -> float:
    """Adaptive steps: the time past the frame grid a state was saved at (a stop request
    between frames), else 0."""
    return states.partial(state.arrays) if state.arrays else 0.0


def steps_taken(state: "RestartState | None") -> int:
    """The time steps (or load steps) a state's analysis step has taken: with adaptive steps
    the controller's accepted steps, else count (0 for None)."""
    if state is None:
        return 0
    control = state.arrays.get("control") if state.arrays else None
    if control is not None:
        return int(control[CONTROL.index("accepted")])
    return int(state.count)


def motion(state: RestartState):
    """(x, rot, p, pi) copies of a state's configuration and spatial momenta: a dynamic
    state's own, at rest for an equilibrium's (what a dynamic run started from it holds)."""
    a = state.arrays
    x, rot = a["x"].copy(), a["rot"].copy()
    if "p" in a:
        return x, rot, a["p"].copy(), a["pi"].copy()
    return x, rot, np.zeros_like(x), np.zeros_like(x)


def _datasets(group: h5py.Group) -> dict:
    """name (relative path) -> item of every dataset under group, and of any other item that
    is neither a group nor a dataset (a named type: refused as not a dataset)."""
    found = {}

    def visit(name, item):
        if not isinstance(item, h5py.Group):
            found[name] = item

    group.visititems(visit)
    return found


def _description(name: str) -> str:
    parts = name.split("/")
    if parts[0] == TERMS_GROUP and len(parts) == 3:
        return TERM_DESCRIPTION.format(term=parts[1], field=parts[2])
    if name.startswith(states.LEDGER):
        return f"the energy ledger's {name[len(states.LEDGER) :]} (rodsim.integrators.ledger)"
    return DESCRIPTIONS.get(name, "")


def write(f: h5py.File, state: RestartState, frame: int) -> None:
    """Write state into the slot that `current` does not name, flush, then point `current` at
    it and flush again (OSError passes through: the caller reports it)."""
    g = f.require_group(GROUP)
    current = int(g.attrs.get("current", -1))
    name = SLOTS[1 - current] if current in (0, 1) else SLOTS[0]
    slot = g.require_group(name)
    for key, item in _datasets(slot).items():
        value = state.arrays.get(key)
        if value is None or item.shape != value.shape or item.dtype != value.dtype:
            del slot[key]  # another kind's arrays (a step of another analysis)
    for key in [k for k, v in slot.items() if isinstance(v, h5py.Group) and not _datasets(v)]:
        del slot[key]  # a term's group emptied above
    for key, value in state.arrays.items():
        if key in slot:
            slot[key][...] = value
        else:
            slot.create_dataset(key, data=value).attrs["description"] = _description(key)
    attrs = state._replace(frame=frame, arrays=None)._asdict()
    del attrs["arrays"]
    for key, value in attrs.items():
        slot.attrs[key] = value
    f.flush()
    g.attrs["current"] = SLOTS.index(name)
    f.flush()


def read(f: h5py.File, where: str, key: str) -> RestartState:
    """The state of the slot `current` names; CaseError naming `key` where the file has none,
    or where its attributes or datasets are not numbers of the layout above (where: the file,
    for the message). The values are checked by `check`."""
    g = f.get(GROUP)
    current = -1 if g is None else g.attrs.get("current", -1)
    try:
        current = int(current)
    except (TypeError, ValueError):
        current = -1
    if current not in (0, 1) or SLOTS[current] not in g:
        raise CaseError(
            f"{where} holds no restart state (restart/): it was written by a modal or buckling "
            "analysis, or by a rodsim from before restart states",
            key=key,
        )
    slot = g[SLOTS[current]]
    if not isinstance(slot, h5py.Group):
        raise corrupt(where, key, f"{GROUP}/{SLOTS[current]} is not a group")
    a = slot.attrs
    kind = str(a.get("kind", ""))
    if kind not in ARRAYS:
        raise corrupt(where, key, f"kind {kind!r} is not one of {', '.join(ARRAYS)}")
    names = [*ARRAYS[kind], *(k for k in _datasets(slot) if k not in ARRAYS[kind])]
    arrays = {k: _array(slot, k, where, key) for k in names}
    return RestartState(
        kind,
        *(_number(a, k, where, key, integer=True) for k in ("step", "count")),
        *(_number(a, k, where, key) for k in ("t0", "dt", "load", "total")),
        arrays,
        *(_number(a, k, where, key, integer=True) for k in ("every", "frame")),
    )


# Unit norms: the integrators' rotations come from Cayley and exponential maps, orthonormal in
# exact arithmetic; round-off drifts them by about 1e-16 a step, so 1e-6 allows 1e10 steps
# while a scaled or garbled rotation (whose error is of the order of the scaling) is caught.
UNIT_TOL = 1e-6
# the trailing shape of each array per node (N leading), else its whole shape
PER_NODE = {k: v[0] for k, v in states.ARRAYS.items() if v[0] is not None}
ADAPTIVE = ("xi_before", "control", "jacobian")
# a state's arrays that files before layout 1.8 lack, by kind (the solver computes them anew)
ARRAYS_SINCE = {"explicit": ("f", "tau", "energy"), "implicit": ("energy",)}


def corrupt(where: str, key: str, what: str) -> CaseError:
    """The CaseError of a restart state that cannot be used (docs/restart.md)."""
    place = f"{where}: " if where else ""
    return CaseError(
        f"{place}the restart state (restart/) is corrupt: {what}; run the case anew "
        "(without --restart) or from an intact copy of the file",
        key=key,
    )


def _array(slot, name: str, where: str, key: str) -> np.ndarray:
    item = slot.get(name)
    if not isinstance(item, h5py.Dataset):
        raise corrupt(where, key, f"the dataset {name!r} is missing")
    if name not in DESCRIPTIONS:  # a term's state, of its own types: check_terms
        return np.ascontiguousarray(item[()])
    if item.dtype != np.float64:
        raise corrupt(where, key, f"{name} is of type {item.dtype}, expected float64")
    return np.ascontiguousarray(item[()])


def _number(attrs, name: str, where: str, key: str, integer: bool = False):
    """An attribute as a float (integer: an int), CaseError where it is missing or not a
    number (a string, an array)."""
    value = attrs.get(name)
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    if ok and integer:
        ok = math.isfinite(float(value)) and float(value) == int(value)
    if not ok:
        wanted = "an integer" if integer else "a number"
        raise corrupt(where, key, f"the attribute {name!r} is {value!r}, expected {wanted}")
    return int(value) if integer else float(value)


def check(state: RestartState, where: str, key: str, n_nodes: int, times=None) -> RestartState:
    """The state, checked as a whole before any use: its arrays those of its kind with N =
    n_nodes rows, finite, rotations and quaternions of unit norm (UNIT_TOL), its counters
    usable (dt > 0, every >= 1, counts >= 0, t0 finite), and a dynamic state's time that of
    its frame in times (the file's `time`, where given). CaseError naming key otherwise:
    numba kernels index the arrays unchecked, and a NaN would be blamed on dt or the loads."""
    a = state.arrays
    missing = [k for k in ARRAYS[state.kind] if k not in a]
    adaptive = [k for k in ADAPTIVE if k in a]
    if adaptive and (state.kind != "implicit" or len(adaptive) < len(ADAPTIVE)):
        missing += [k for k in ADAPTIVE if k not in a] or ["(none: a dynamic implicit kind)"]
    optional = [k for k in OPTIONAL if k in ARRAYS_SINCE.get(state.kind, ())]
    if any(k in a for k in optional):  # older files have none of them
        missing += [k for k in optional if k not in a]
    if missing:
        raise corrupt(where, key, f"a {state.kind} state lacks {', '.join(missing)}")
    for name, value in a.items():
        _check_array(name, value, n_nodes, where, key)
    _check_counters(state, where, key)
    if "rot" in a:
        rot = a["rot"]
        error = np.abs(np.einsum("nji,njk->nik", rot, rot) - np.eye(3)).max(initial=0.0)
        if error > UNIT_TOL:
            raise corrupt(where, key, f"rot is not orthonormal (R^T R - I up to {error:.3g})")
    if "quat" in a:
        error = np.abs(np.linalg.norm(a["quat"], axis=1) - 1.0).max(initial=0.0)
        if error > UNIT_TOL:
            raise corrupt(where, key, f"quat is not of unit norm (off by up to {error:.3g})")
    if times is not None and state.kind != "equilibrium" and state.frame < len(times):
        _check_time(state, float(times[state.frame]), where, key)
    return state


def check_terms(state: RestartState, terms, where: str, key: str) -> RestartState:
    """The state's term states (terms/<term>/<field>), checked against the model's terms
    (rodsim.model.forces.ForceTerms): the same terms with state, fields, shapes and types,
    finite. CaseError naming key otherwise; a file of a rodsim before term states (layout
    1.7 or older) holds none, and continues only a model whose terms have none."""
    saved = state.state().terms
    what = states.term_mismatch(saved, terms)
    if what is None:
        return state
    if not saved:  # not corrupt: written without term states
        place = f"{where}: " if where else ""
        raise CaseError(
            f"{place}the restart state (restart/) {what} (a results file of layout 1.7 or "
            "older, or of a case without it, holds no term states); run the case anew "
            "(without --restart)",
            key=key,
        )
    raise corrupt(where, key, what)


def _check_array(name: str, value: np.ndarray, n: int, where: str, key: str) -> None:
    if name in PER_NODE:
        wanted = (n, *PER_NODE[name])
    elif name == "control":
        wanted = (len(CONTROL),)
    elif name == "jacobian":
        wanted = (value.shape[0] if value.ndim == 3 else "B", 6, 6)
    elif name == "energy":
        wanted = (2,)
    else:  # a term's state: checked against the model (check_terms)
        return
    if value.shape != wanted:
        shape = "(" + ",".join(map(str, wanted)) + ")"
        raise corrupt(where, key, f"{name} has shape {value.shape}, expected {shape}")
    if name == "control":
        _check_control(value, where, key)
    elif name != "jacobian" and not np.isfinite(value).all():
        raise corrupt(where, key, f"{name} holds NaN or infinite values")


def _check_control(control: np.ndarray, where: str, key: str) -> None:
    h = control[CONTROL.index("h")]
    if not (math.isfinite(h) and h > 0):
        raise corrupt(where, key, f"the controller's step h is {h}, expected a number > 0")
    for name in INTEGERS:
        v = control[CONTROL.index(name)]
        if not (math.isfinite(v) and v >= 0 and v == int(v)):
            raise corrupt(where, key, f"the controller's {name} is {v}, expected an integer >= 0")


def _check_counters(state: RestartState, where: str, key: str) -> None:
    if not (math.isfinite(state.dt) and state.dt > 0):
        raise corrupt(where, key, f"dt is {state.dt}, expected a number > 0")
    if state.every < 1:
        raise corrupt(where, key, f"every is {state.every}, expected an integer >= 1")
    for name in ("step", "count", "frame"):
        if getattr(state, name) < 0:
            value = getattr(state, name)
            raise corrupt(where, key, f"{name} is {value}, expected an integer >= 0")
    for name in ("t0", "total"):
        value = getattr(state, name)
        if not (math.isfinite(value) and value >= 0):
            raise corrupt(where, key, f"{name} is {value}, expected a number >= 0")
    if state.kind == "equilibrium" and not math.isfinite(state.load):
        raise corrupt(where, key, f"load is {state.load}, expected a number")


def _check_time(state: RestartState, time: float, where: str, key: str) -> None:
    """A dynamic state's time t0 + count dt (+ the time past the grid) is its frame's: the
    integrator computes both with the same expression, so they agree to a few roundings
    (1e-9 of the time is far above those and far below a step of any run shorter than 1e9
    steps)."""
    reached = state.t0 + state.count * state.dt + partial(state)
    if not abs(reached - time) <= 1e-9 * max(abs(time), state.dt):
        raise corrupt(
            where,
            key,
            f"its time t0 + count dt = {reached:.9g} is not that of its frame {state.frame} "
            f"({time:.9g})",
        )
