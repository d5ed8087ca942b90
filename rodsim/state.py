"""State and Inputs: what a running solver holds apart from the model (docs/python.md, "State
and reset"; docs/restart.md).

The model (rodsim.model.assembly.Model) is what the case built and nothing changes in it as the
solver steps. A `State` is everything else the next step depends on: the nodes' configuration
and momenta, each term's state (plastic slip ...: ForceTerms' ``<name>_state`` fields), the
clock, and the solver's own state (the explicit scheme's forces the next step starts from, the
implicit scheme's quaternions and first guess, the adaptive controller and its held Jacobian).
`Inputs` are what a controller may change between steps (load values, gravity, prescribed
amplitudes): a view of the arrays the kernels read, which rodsim.controls writes.

A State flattens to named arrays (`State.arrays`): x, rot, p, pi, the solver's arrays (ARRAYS)
under their own names, and each term's state field as ``terms/<term>/<field>``. The restart
group (rodsim.results.restart) is written and read by walking them, so a term with state
restarts without a change there. Each solver kind maps its running object to a State and
back (rodsim.solvers.capture: of_explicit / resume_explicit, ...; rodsim.solvers.SOLVERS
wires them): resuming a State
taken from a run and stepping on gives the steps of that run, bit for bit.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from rodsim.terms import TERMS

MOTION = ("x", "rot", "p", "pi")
TERMS_GROUP = "terms"  # term state field f of term t: "terms/t/f"

# the adaptive controller's scalars (rodsim.integrators.adaptive.Control), in the order of the
# array `control`; h_jacobian: the step the held Jacobian was formed for (NaN: none)
CONTROL = (
    "h", "h_last", "h_before", "known", "energy_error", "energy_max", "kinetic", "internal",
    "accepted", "rejected", "partial", "h_jacobian",
)  # fmt: skip
INTEGERS = ("known", "accepted", "rejected")

# every array a State may hold but the terms' own: name -> (its shape per node, N leading, or
# None for a shape of its own, description). The per-node shapes are checked on a restart.
ARRAYS = {
    "x": ((3,), "(N,3) node positions"),
    "rot": ((3, 3), "(N,3,3) nodal rotation matrices, columns d1 d2 d3"),
    "p": ((3,), "(N,3) spatial linear momenta"),
    "pi": ((3,), "(N,3) spatial angular momenta"),
    "quat": ((4,), "(N,4) the solver's unit quaternions of rot (w, x, y, z)"),
    "xi": ((6,), "(N,6) the last step's body velocity, Newton's first guess of the next step"),
    "xi_before": ((6,), "(N,6) adaptive steps: the step velocity of the step before the last"),
    "control": (None, "adaptive steps: the controller's state (rodsim.state.CONTROL)"),
    "jacobian": (None, "adaptive steps: the Jacobian held (B,6,6), its BSR blocks"),
    "last": ((3,), "(N,3) path following: the last path step's node translations"),
    "f": ((3,), "(N,3) explicit: the forces the next step starts from"),
    "tau": ((3,), "(N,3) explicit: the moments the next step starts from"),
    "energy": (None, "(2,) the internal energy and the external potential at the state"),
}
# arrays a state of an older results file may lack: recomputed from the rest (docs/restart.md)
OPTIONAL = ("f", "tau", "energy")


def _copy(a) -> np.ndarray:
    return np.array(a, copy=True)


@dataclass(frozen=True, eq=False)
class Inputs:
    """What may change between steps: terms, term name -> {input name -> array} (each term's
    Term.inputs: "loads": force, moment (K,3) per loaded node, gravity (3,); "pressure":
    pressure (P,)), and prescribed: {"u": (K,3) displacement, "theta": (K,3) rotation vector}
    of the prescribed motions (rodsim.model.prescribed), as given before their time
    functions. `inputs_of(model)` gives the arrays the kernels read (written in place by
    rodsim.controls); copy() a snapshot of them."""

    terms: Mapping[str, Mapping[str, np.ndarray]]
    prescribed: Mapping[str, np.ndarray]

    def _items(self):
        for term, values in self.terms.items():
            for name, a in values.items():
                yield (term, name), a
        for name, a in self.prescribed.items():
            yield ("prescribed", name), a

    def copy(self) -> "Inputs":
        """A snapshot: copies of every array."""
        terms = {t: {k: _copy(a) for k, a in v.items()} for t, v in self.terms.items()}
        return Inputs(terms, {k: _copy(a) for k, a in self.prescribed.items()})

    def equals(self, other: "Inputs") -> bool:
        """Whether other holds the same arrays with the same values, bit for bit."""
        mine, theirs = dict(self._items()), dict(other._items())
        return mine.keys() == theirs.keys() and all(
            mine[k].shape == theirs[k].shape and np.array_equal(mine[k], theirs[k]) for k in mine
        )

    def assign(self, other: "Inputs") -> bool:
        """Write other's values into these arrays, in place (ValueError, before anything is
        written, where other has other arrays or shapes); whether any value changed."""
        mine, theirs = dict(self._items()), dict(other._items())
        if mine.keys() != theirs.keys():
            raise ValueError("the inputs are of another case (other load or motion entries)")
        for k, a in theirs.items():
            if np.shape(a) != mine[k].shape:
                raise ValueError(f"inputs {'.'.join(k)} has shape {np.shape(a)}, expected "
                                 f"{mine[k].shape}")  # fmt: skip
        changed = not self.equals(other)
        for k, a in theirs.items():
            mine[k][...] = a
        return changed


def inputs_of(model) -> Inputs:
    """The Inputs of a model: views of the arrays its kernels read."""
    terms = {}
    for t in TERMS:
        if t.inputs is not None:
            terms[t.name] = dict(t.inputs(t.arrays(model)))
    pa = model.prescribed
    return Inputs(terms, {"u": pa.u, "theta": pa.theta})


@dataclass(frozen=True, eq=False)
class State:
    """A solver's state, apart from the model (copies: it does not change as the solver steps).

    kind: explicit | implicit | equilibrium; x (N,3) positions, rot (N,3,3) nodal frames
    (columns d1 d2 d3), p, pi (N,3) spatial linear and angular momenta (None in equilibrium:
    at rest); the clock: t0 the time origin, count the steps taken from it (adaptive steps:
    frame intervals; equilibrium: load steps), dt the step (adaptive: the frame interval;
    equilibrium: the first pseudo-time step; a path: the next arc-length step), load the load
    multiplier (equilibrium; a path: the load factor; NaN in dynamics); terms: term name ->
    {field -> array}, the state of every term that has one (rodsim.terms.contract); solver:
    the solver's own arrays (ARRAYS: f, tau and energy in the explicit scheme; quat, xi and
    energy in the implicit one, with adaptive steps xi_before, control and jacobian; quat in
    equilibrium, last on a path); inputs: the Inputs in force when it was taken (a copy), or
    None."""

    kind: str
    x: np.ndarray
    rot: np.ndarray
    p: np.ndarray | None = None
    pi: np.ndarray | None = None
    t0: float = 0.0
    count: int = 0
    dt: float = math.nan
    load: float = math.nan
    terms: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    solver: Mapping[str, np.ndarray] = field(default_factory=dict)
    inputs: Inputs | None = None

    @property
    def time(self) -> float:
        """The time (equilibrium: the load multiplier): t0 + count dt, with adaptive steps
        plus the time past the frame grid (a stop between frames)."""
        if self.kind == "equilibrium":
            return self.load
        return self.t0 + self.count * self.dt + partial(self.solver)

    def arrays(self) -> dict:
        """Every array by its name: x, rot (p, pi), the solver's, and terms/<term>/<field>."""
        out = {k: getattr(self, k) for k in MOTION if getattr(self, k) is not None}
        clash = set(out) & set(self.solver)
        if clash:
            raise ValueError(f"solver arrays named as the motion's: {sorted(clash)}")
        out.update(self.solver)
        for term, values in self.terms.items():
            for name, a in values.items():
                out[f"{TERMS_GROUP}/{term}/{name}"] = a
        return out

    def __repr__(self) -> str:
        terms = ", ".join(self.terms) or "none"
        return (
            f"<State {self.kind} t = {self.time:.6g}, {self.count} steps, {len(self.x)} nodes, "
            f"solver arrays {', '.join(self.solver) or 'none'}, term states {terms}>"
        )


def from_arrays(kind: str, arrays: Mapping, t0=0.0, count=0, dt=math.nan, load=math.nan):
    """The State of named arrays (State.arrays; a restart slot's datasets)."""
    motion = {k: arrays.get(k) for k in MOTION}
    terms, solver = {}, {}
    for name, a in arrays.items():
        if name in MOTION:
            continue
        parts = name.split("/")
        if parts[0] == TERMS_GROUP and len(parts) == 3:
            terms.setdefault(parts[1], {})[parts[2]] = a
        else:
            solver[name] = a
    return State(kind, **motion, t0=float(t0), count=int(count), dt=float(dt),
                 load=float(load), terms=terms, solver=solver)  # fmt: skip


def partial(solver: Mapping) -> float:
    """Adaptive steps: the time past the frame grid (a stop between frames), else 0."""
    control = solver.get("control")
    return float(control[CONTROL.index("partial")]) if control is not None else 0.0


# --- the terms' state -------------------------------------------------------------------------


def term_states(terms) -> dict:
    """Copies of the state of every term that has one: term name -> {field -> array}
    (terms: rodsim.model.forces.ForceTerms, whose `<name>_state` the kernels update)."""
    out = {}
    for t in TERMS:
        live = getattr(terms, t.name + "_state", None)
        if live is not None:
            out[t.name] = {k: _copy(getattr(live, k)) for k in live._fields}
    return out


def term_mismatch(saved: Mapping, terms) -> str | None:
    """What keeps saved term states (State.terms) from the model's terms, or None: the same
    terms with state, the same fields, shapes and types, finite values."""
    live = {t.name: getattr(terms, t.name + "_state", None) for t in TERMS}
    live = {k: v for k, v in live.items() if v is not None}
    for name in live:
        if name not in saved:
            return f"it holds no state of the term {name!r}, which this case's model has"
    for name, values in saved.items():
        if name not in live:
            return f"it holds a state of the term {name!r}, which this case's model has not"
        fields = live[name]._fields
        if set(values) != set(fields):
            return (
                f"the state of the term {name!r} has the fields {', '.join(sorted(values))}, "
                f"expected {', '.join(sorted(fields))}"
            )
        for k in fields:
            want, got = getattr(live[name], k), np.asarray(values[k])
            if got.shape != want.shape or got.dtype != want.dtype:
                return (
                    f"{TERMS_GROUP}/{name}/{k} is {got.dtype} {got.shape}, expected "
                    f"{want.dtype} {want.shape}"
                )
            if got.dtype.kind in "fc" and not np.isfinite(got).all():
                return f"{TERMS_GROUP}/{name}/{k} holds NaN or infinite values"
    return None


def restore_terms(terms, saved: Mapping, only_shared: bool = False) -> None:
    """Write saved term states (checked by term_mismatch) into the model's, in place: the
    compiled kernels hold the same arrays. only_shared: the terms both have, where the shapes
    agree (a state handed on by an analysis step before, of another model of the mesh)."""
    for t in TERMS:
        live = getattr(terms, t.name + "_state", None)
        if live is None or t.name not in saved:
            continue
        for k in live._fields:
            target, value = getattr(live, k), saved[t.name].get(k)
            if only_shared and (value is None or np.shape(value) != target.shape):
                continue
            target[...] = value


# --- each solver kind: its running object as a State, and back (rodsim.solvers) -------------


LEDGER = "ledger_"  # the energy ledger's sums (rodsim.integrators.ledger.STATE): ledger_<name>
