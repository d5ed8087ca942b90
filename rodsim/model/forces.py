"""The sums over the force terms: the one place that adds up what acts on the nodes.

Every integrator, the equilibrium solver, the energies, the support reactions and the output
get their forces here; none of them names a term. The terms and their order are
rodsim.terms.TERMS; their contract is rodsim.terms.contract (docs/developer.md).

The kernels below (forces, forces_parallel, add_damping, strains, add_step_damping, accept) are
written out at typing time from TERMS (numba overloads, inlined into their callers and cached
with them): a term absent from a model (None in ForceTerms) is left out before typing, so a
model compiles only the terms it has.
"""

import numpy as np
from numba.core import types as numba_types
from numba.experimental import structref

from rodsim.jit import kernel, written
from rodsim.model import rod
from rodsim.terms import ALL, APPLIED, GROUND, INTERNAL, TERMS

__all__ = ["ALL", "APPLIED", "GROUND", "INTERNAL"]

SHARED_FIELDS = ("rot0", "mass", "beta", "alpha", "damped")
TERM_FIELDS = (
    *(t.name for t in TERMS),
    *(t.name + "_state" for t in TERMS),
    *SHARED_FIELDS,
)


@structref.register
class ForceTermsType(numba_types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, numba_types.unliteral(typ)) for name, typ in fields)


class ForceTerms(structref.StructRefProxy):
    """Every force term of a model, as the kernels read it (Model.terms builds it once).

    One field per term of TERMS (its arrays; None in the kernels where the model has none of
    it, the empty arrays in Python) and one per term's state (`<name>_state`: None for a term
    without state); rot0 (N,3,3) the reference frames (follower loads); mass (N,) lumped
    masses; beta (time) strain-rate and alpha (1/time) mass-proportional damping; damped:
    whether any damping force acts.

    A numba StructRef, passed to kernels by reference: as a NamedTuple of its ~60 arrays,
    every kernel call and inlined helper taking it paid an atomic reference-count update per
    array (measured: +0.5 us per force evaluation, +17% on a 10-element explicit step).
    Python reads the same fields as attributes."""

    def __getattr__(self, name):
        try:
            return self.__dict__["_fields"][name]
        except KeyError:
            raise AttributeError(name) from None


structref.define_proxy(ForceTerms, ForceTermsType, list(TERM_FIELDS))


@kernel
def _new_terms(values):
    # a cached constructor: StructRefProxy's own compiles anew in every process (3 s)
    return ForceTerms(*values)


def make_terms(model) -> ForceTerms:
    """The ForceTerms of a model: each term's arrays (TERMS[i].arrays(model)) and initial
    state, with `damped` worked out. The kernels see an absent term (Term.present false) and a
    term without state as None: a kernel branch on None is removed before typing (rodsim.jit),
    so a model compiles only the terms it has. Python reads the arrays as given."""
    arrays = [t.arrays(model) for t in TERMS]
    pairs = list(zip(TERMS, arrays, strict=True))
    states = [t.initial_state(a) if t.initial_state else None for t, a in pairs]
    beta, alpha = float(model.beta), float(model.alpha)
    damped = any(t.damped(a, beta, alpha) for t, a in pairs if t.damped)
    shared = (model.rot0, model.mass, beta, alpha)
    present = [a if t.present(a) else None for t, a in pairs]
    terms = _new_terms((*present, *states, *shared, True if damped else None))
    values = (*arrays, *states, *shared, damped)
    terms._fields = dict(zip(TERM_FIELDS, values, strict=True))  # what Python reads
    terms._fields["_stateful"] = any(
        s is not None and t.accept is not None for t, s in zip(TERMS, states, strict=True)
    )
    return terms


def _buffers(terms: ForceTerms, hook: str, dtype) -> tuple:
    out = []
    for t in TERMS:
        make = getattr(t, hook)
        own = getattr(terms, t.name)
        out.append(make(own, dtype) if make is not None and t.present(own) else None)
    return tuple(out)


def make_strains(terms: ForceTerms, dtype=np.float64) -> tuple:
    """The terms' strain buffers (the implicit scheme's damping), one per term of TERMS (None
    for a term without one)."""
    return _buffers(terms, "make_strains", dtype)


def make_resultants(terms: ForceTerms, dtype=np.float64) -> tuple:
    """The terms' viscous resultant scratch, one per term of TERMS (None without one)."""
    return _buffers(terms, "make_resultants", dtype)


def analytic_tangent(terms: ForceTerms) -> bool:
    """Whether every term present with forces has a tangent hook (the implicit Jacobian is
    then assembled from them; else by complex step)."""
    return all(
        t.tangent is not None
        for t in TERMS
        if t.forces is not None and t.present(getattr(terms, t.name))
    )


def damping_analytic(terms: ForceTerms, skip=()) -> bool:
    """Whether every term present whose damping acts (its `damped` hook), but those in skip,
    has a step_damping_tangent (and a tangent): its damping's blocks are then analytic."""
    for t in TERMS:
        own = getattr(terms, t.name)
        if t.damped is None or t in skip or not t.damped(own, terms.beta, terms.alpha):
            continue
        if not t.present(own):
            continue
        if t.step_damping_tangent is None or t.tangent is None:
            return False
    return True


def tangent_slots(terms: ForceTerms, indptr: np.ndarray, indices: np.ndarray) -> tuple:
    """Each term's block indices into a Jacobian of BSR structure (indptr, indices) (its
    tangent_slots), one per term of TERMS (None without a tangent or absent)."""
    out = []
    for t in TERMS:
        own = getattr(terms, t.name)
        if t.tangent is not None and t.present(own):
            slots = t.tangent_slots(own, terms, indptr, indices)
            out.append(np.ascontiguousarray(slots, dtype=np.int64))
        else:
            out.append(None)
    return tuple(out)


def coupled_pairs(terms: ForceTerms) -> np.ndarray:
    """(M,2) node pairs whose forces a term couples, term after term (a term without `pairs`
    couples a node only to itself)."""
    pairs = [np.asarray(t.pairs(getattr(terms, t.name), terms)) for t in TERMS if t.pairs]
    pairs.append(np.zeros((0, 2), dtype=np.int64))
    return np.ascontiguousarray(np.concatenate([p.reshape(-1, 2) for p in pairs]), dtype=np.int64)


# --- the compiled sums ---------------------------------------------------------------------


def present(terms_type, hook: str):
    """(index, term) of the terms that a ForceTerms type holds and that have `hook`."""
    fields = dict(terms_type.field_dict)
    return [
        (i, t)
        for i, t in enumerate(TERMS)
        if getattr(t, hook) is not None and not isinstance(fields[t.name], numba_types.NoneType)
    ]


def _sum(name: str, params: str, write):
    """A kernel-callable `name(terms, <params>)` whose body write(terms type) writes at typing
    time (source lines over the present terms; rodsim.jit.written), inlined into its caller."""
    return written(name, f"terms, {params}", lambda types: write(types["terms"]))


def _call(i: int, t, hook: str, args: str) -> str:
    return f"k{i}_{hook}(terms.{t.name}, terms.{t.name}_state, terms, {args})"


def _env(held, hook):
    return {f"k{i}_{hook}": getattr(t, hook) for i, t in held}


def _write_forces(terms):
    held = present(terms, "forces")
    lines = ["f[:] = 0.0", "tau[:] = 0.0", "u = 0.0", "v = 0.0"]
    for i, t in held:
        lines += [
            f"if select & {t.role}:",
            f"    du, dv = {_call(i, t, 'forces', 'x, rot, quat, t, f, tau')}",
            "    u += du",
            "    v += dv",
        ]
    return [*lines, "return u, v"], _env(held, "forces")


def _write_applied(terms):
    # the APPLIED terms only, chosen at typing time: the elements' kernels are not compiled
    # where only the loads are wanted (the summary's load totals, before the first step)
    held = [(i, t) for i, t in present(terms, "forces") if t.role & APPLIED]
    lines = ["f[:] = 0.0", "tau[:] = 0.0", "u = 0.0", "v = 0.0"]
    for i, t in held:
        call = _call(i, t, "forces", "x, rot, quat, t, f, tau")
        lines += [f"du, dv = {call}", "u += du", "v += dv"]
    return [*lines, "return u, v"], _env(held, "forces")


def _write_forces_parallel(terms):
    held = present(terms, "forces")
    env = _env(held, "forces")
    lines = ["u = 0.0", "v = 0.0"]
    first = held[0] if held and held[0][1].forces_parallel is not None else None
    if first is None:
        lines += ["f[:] = 0.0", "tau[:] = 0.0"]
    for i, t in held:
        if (i, t) == first:
            env[f"k{i}_forces_parallel"] = t.forces_parallel
            call = _call(i, t, "forces_parallel", "x, rot, quat, t, f, tau, work")
        else:
            call = _call(i, t, "forces", "x, rot, quat, t, f, tau")
        lines += [f"du, dv = {call}", "u += du", "v += dv"]
    return [*lines, "return u, v"], env


def _write_each(hook: str, args: str):
    def write(terms):
        held = present(terms, hook)
        return [_call(i, t, hook, args.format(i=i)) for i, t in held], _env(held, hook)

    return write


forces = _sum("forces", "x, rot, quat, t, f, tau, select", _write_forces)
forces.__doc__ = """forces(terms, x, rot, quat, t, f, tau, select) -> (u, v): overwrite f, tau
(N,3) with the forces and moments of the terms whose role is in `select` (INTERNAL | APPLIED |
GROUND) at time t (equilibrium: the load multiplier). Returns (stored energy: elements and
springs, external potential: gravity). Serial; generic over float64 and complex128."""

applied = _sum("applied", "x, rot, quat, t, f, tau", _write_applied)
applied.__doc__ = """forces(terms, ..., APPLIED), the other terms left out at typing time."""

forces_parallel = _sum("forces_parallel", "x, rot, quat, t, f, tau, work", _write_forces_parallel)
forces_parallel.__doc__ = """forces(..., ALL) with the first term's forces on all cores (its
forces_parallel; float64). work: the explicit workspace (rodsim.integrators.explicit.Workspace).
"""

add_damping = _sum(
    "add_damping",
    "x, rot, quat, p, vel, omg, f, tau",
    _write_each("damping", "x, rot, quat, p, vel, omg, f, tau"),
)
add_damping.__doc__ = """Add the damping forces of the rates vel, omg (N,3) (spatial velocities
and angular velocities; p (N,3) the linear momenta m vel) to f, tau."""

strains = _sum("strains", "x, rot, quat, out", _write_each("strains", "x, rot, quat, out[{i}]"))
strains.__doc__ = """The strains the discrete damping needs at a configuration, into the terms'
buffers out (make_strains)."""

add_step_damping = _sum(
    "add_step_damping",
    "start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau",
    _write_each(
        "step_damping", "start[{i}], end[{i}], res[{i}], x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau"
    ),
)
add_step_damping.__doc__ = """Add the implicit scheme's damping forces of a step of size h to f,
tau: each term's Lagrange-d'Alembert forces of the step from its strains `start` at g_k and
`end` (scratch) at g_k+1 = x1, r1, q1, applied through the midpoint xb, rb, qb; xi the step
velocity (docs/implicit_scheme.md). Generic over float64 and complex128."""

add_tangents = _sum(
    "add_tangents",
    "slots, x, rot, quat, t, k",
    _write_each("tangent", "slots[{i}], x, rot, quat, t, k"),
)
add_tangents.__doc__ = """Add the terms' tangent stiffness blocks K_ab = -d(f_a, tau_a)/d(u_b,
theta_b) at (x, rot, quat, t) into k (B,6,6) (Term.tangent); slots: one per term of TERMS
(tangent_slots; None without one). float64."""


def _write_damping_tangents(terms):
    held = present(terms, "step_damping_tangent")
    args = "start[{i}], end[{i}], res[{i}], x1, r1, q1, xb, rb, qb"
    lines = ["acted = False"]
    for i, t in held:
        a = args.format(i=i)
        lines += [
            _call(i, t, "step_damping", f"{a}, xi, h, se3, f, tau"),
            f"if {_call(i, t, 'step_damping_tangent', f'slots[{i}], {a}, h, kbar, k1')}:",
            "    acted = True",
        ]
    env = {**_env(held, "step_damping"), **_env(held, "step_damping_tangent")}
    return [*lines, "return acted"], env


add_damping_tangents = _sum(
    "add_damping_tangents",
    "slots, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau, kbar, k1",
    _write_damping_tangents,
)
add_damping_tangents.__doc__ = """For each term with a step_damping_tangent (Term): add its
step_damping forces to f, tau (arguments as add_step_damping) and then the blocks of those
forces, K = -dF_d, into kbar (through the midpoint xb, rb, qb) and k1 (through the end x1, r1,
q1), both (B,6,6) at its tangent slots. Returns whether any such damping acts. The mass
damping has none: the dynamic Jacobian takes it itself (rodsim.integrators.
vi_jacobian_dynamic). float64."""

set_window = _sum("set_window", "a, b", _write_each("window", "a, b"))
set_window.__doc__ = """The step [a, b] being taken (NaN: none), for the terms' time functions
(Term.window; rodsim.model.timefunc.window_time)."""

accept = _sum("accept", "x, rot, quat, t", _write_each("accept", "x, rot, quat, t"))
accept.__doc__ = """Update the terms' state after an accepted step ending at x, rot, quat, t."""


@kernel
def _forces(terms, x, rot, quat, t, f, tau, select):
    return forces(terms, x, rot, quat, t, f, tau, select)


@kernel
def _applied(terms, x, rot, quat, t, f, tau):
    return applied(terms, x, rot, quat, t, f, tau)


@kernel
def compute_strains(terms, x, rot, quat, out):
    """strains() callable from Python."""
    strains(terms, x, rot, quat, out)


@kernel
def _accept(terms, x, rot, quat, t):
    accept(terms, x, rot, quat, t)


# --- derived quantities (Python side) -------------------------------------------------------

quaternions = rod.node_quaternions  # quat[a] of rot[a] for lo <= a < hi: what the terms read


def _quat(rot):
    quat = np.empty((rot.shape[0], 4))
    quaternions(rot, quat, 0, rot.shape[0])
    return quat


def _serial(terms: ForceTerms, x, rot, t: float, select: int):
    f, tau = np.zeros_like(x), np.zeros_like(x)
    if select == APPLIED:
        u, v = _applied(terms, x, rot, _quat(rot), float(t), f, tau)
    else:
        u, v = _forces(terms, x, rot, _quat(rot), float(t), f, tau, select)
    return f, tau, u, v


def stateful(terms: ForceTerms) -> bool:
    """Whether a term with state that its accept hook moves on is present."""
    return terms._fields["_stateful"]


def accept_step(terms: ForceTerms, x, rot, t: float) -> None:
    """Run the terms' accept hooks after an accepted step (Python-driven schemes); nothing to
    do (and no call) when no term has state."""
    if not stateful(terms):
        return
    _accept(terms, x, rot, _quat(rot), float(t))


def energies(terms: ForceTerms, x, rot, t: float) -> tuple[float, float]:
    """(internal energy: elements and springs, external potential: gravity) at a state."""
    return _serial(terms, x, rot, t, ALL)[2:]


def external_potential(terms: ForceTerms, x, rot, t: float) -> float:
    """The potential of the conservative loads (gravity) at a state and time."""
    return _serial(terms, x, rot, t, APPLIED)[3]


def applied_loads(terms: ForceTerms, x, rot, t: float):
    """(f, tau) (N,3) of the applied loads (APPLIED terms) at a state and time."""
    return _serial(terms, x, rot, t, APPLIED)[:2]


def load_totals(terms: ForceTerms, x, rot, t: float):
    """Resultants of the applied loads at a state (x (N,3), rot (N,3,3)) and time t: (force
    (3,), moment about the origin (3,)) of the nodal, edge and pressure loads, and the force
    (3,) of gravity (its own, so that a node's loads are not lost in the round-off of its
    weight). Several loads on one node add, as in the kernels."""
    f, tau = applied_loads(terms, x, rot, t)
    g = np.zeros_like(x)
    for term in TERMS:
        if term.weight is not None:
            g += term.weight(getattr(terms, term.name), terms.mass, t)
    f -= g  # node by node, so that a node with no load but its weight gives exactly 0
    return f.sum(axis=0), (np.cross(x, f) + tau).sum(axis=0), g.sum(axis=0)


def conservative(terms: ForceTerms) -> bool:
    """Whether every applied load derives from a potential (dead forces, gravity): only then is
    a positive definite tangent stiffness the test of a stable equilibrium."""
    return all(t.conservative(getattr(terms, t.name)) for t in TERMS if t.role & APPLIED)


def reactions(terms: ForceTerms, fixed: np.ndarray, x, rot, t: float, vel=None, omg=None):
    """Forces and moments (N,3) the supports exert on the nodes: in fixed components minus the
    element forces and applied loads, elsewhere the GROUND terms' forces and, at the nodal
    velocities vel and angular velocities omg (N,3) if given, their damping (a component both
    fixed and sprung: the two together supply minus the rest). The nodes' inertia and the
    elements' damping forces are not included."""
    f, tau = _serial(terms, x, rot, t, INTERNAL | APPLIED)[:2]
    ground = [g for g in TERMS if g.role & GROUND and g.present(getattr(terms, g.name))]
    if not ground:
        return np.where(fixed[:, :3], -f, 0.0), np.where(fixed[:, 3:], -tau, 0.0)
    g, m = _serial(terms, x, rot, t, GROUND)[:2]
    if vel is not None:
        quat, p = _quat(rot), np.zeros_like(x)
        for term in ground:
            if term.damping is not None:
                own = getattr(terms, term.name)
                state = getattr(terms, term.name + "_state")
                term.damping(own, state, terms, x, rot, quat, p, vel, omg, g, m)
    return np.where(fixed[:, :3], -f, g), np.where(fixed[:, 3:], -tau, m)


def fields(terms: ForceTerms, x, rot, with_energy: bool = False, own_only: bool = False) -> dict:
    """The terms' per-element output fields at a state, keyed by Frame attribute (each term's
    `fields` hook: rods force, moment, strain, curvature (E,3); plates plate_membrane,
    plate_bending (P,3), plate_shear (P,2) where there are plates), and "terms": the
    datasets the terms declare (Term.datasets), keyed by path (Frame.terms; absent where
    no term gives any). with_energy: also "energy", the stored energy (elements and
    springs), summed term after term. own_only: only the terms with datasets of their own
    that the model has (their mesh datasets go with every frame)."""
    out, energy, quat = {}, 0.0, None
    for t in TERMS:
        if t.fields is None or (own_only and not t.datasets):
            continue
        own, state = getattr(terms, t.name), getattr(terms, t.name + "_state")
        if own_only and not t.present(own):
            continue
        quat = _quat(rot) if quat is None else quat
        values, e = t.fields(own, x, rot, quat, with_energy, state=state)
        declared = {d["path"] for d in t.datasets or ()}
        for key, value in values.items():
            (out.setdefault("terms", {}) if key in declared else out)[key] = value
        energy += e
    if with_energy:
        out["energy"] = energy
    return out
