"""The energy ledger: the work of the applied loads and of the moving supports, and the energy
each damping term dissipates, summed as a dynamic scheme steps (docs/results.md, "Energy
ledger"), so that

    balance = K + U + V - W - W_s + sum_j D_j

stays at its starting value K_0 + U_0 + V_0: K kinetic, U internal (elements, springs), V the
loads' potential (gravity), W the work of the applied loads beyond what V accounts for
(W = integral of the APPLIED terms' power + V(t) - V(t_0): 0 for gravity alone), W_s the work
of the supports' reactions on prescribed motions, D_j the energy term j dissipated (its
viscous damping, plus what its state keeps: Term.dissipated).

Quadratures (the scheme's own discrete work, so the balance holds to the scheme's accuracy):

- explicit (Stormer-Verlet kicks): a kick by the impulse J = h/2 F changes K by exactly
  J . (v_before + v_after)/2. Each force share's power is taken at the node times, with the
  forces the kicks use (damping: at the momenta lagged by half a step) and the velocities of
  the full-step momenta, P_k = F_k . v_k over the free components, and summed by the
  trapezoid rule over each (sub)step h: sum h/2 (P_k + P_k+1). It differs from the kicks'
  exact split by h^2/8 F . M^-1 F at the ends only (no drift): with the conservative forces'
  trapezoid error the balance stays within an O(dt^2) band. Prescribed components move by
  the increments dq of their prescription: every force share there counts (F_k + F_k+1)/2 .
  dq, the reaction -F_total into W_s.
- implicit (Cayley VI, fixed or adaptive steps; rodsim.integrators.ledger_implicit): each
  share's forces of the step (loads at the midpoint g_bar, each term's discrete
  Lagrange-d'Alembert damping forces) times the step's increments d = (x_k+1 - x_k,
  Lambda_k h xi_rot), which is the work the scheme's momentum balance pairs with K (exact
  for the discrete Lagrange-d'Alembert principle); W_s the reaction on supported
  components, minus the forces there, times d.

The explicit ledger is compiled out (None) where nothing can do work: no damping, no load
entry, no gravity, no prescribed motion (the step then costs what it did before the ledger).
"""

from typing import NamedTuple

import numpy as np
from numba.core import types as numba_types

from rodsim import jit
from rodsim.jit import either, kernel, switch
from rodsim.lie import so3
from rodsim.model import forces
from rodsim.model.timefunc import evaluate_packed
from rodsim.results import layout as results_format
from rodsim.terms import APPLIED, TERMS

# the terms with a column of dissipated energy (viscous damping, or dissipation kept in state),
# energy/dissipated_by_term's columns: indices into TERMS
NAMES = results_format.DISSIPATING
DISSIPATING = tuple(i for i, t in enumerate(TERMS) if t.name in NAMES)
WORK, SUPPORT, FIRST = 0, 1, 2  # sums: W, W_s, then D_j at FIRST + j
COLUMN = {i: FIRST + j for j, i in enumerate(DISSIPATING)}


class Ledger(NamedTuple):
    """A run's ledger. State (a restart carries it): sums (2+D,) W, W_s, D_j; power (2+D,) the
    shares' powers at the last node time (explicit trapezoid); potential (1,) V there;
    entry_q (K,6) the prescribed entries' last prescribed (u, theta) f(t), entry_f (K,2+S,6)
    the forces on their components then (total, applied, each damped term's).
    Scratch: new (2+D,) the powers at a step's end; evaluated (1,) the applied power from
    evaluated forces (full); slot (T,) int64 the damping-force slot
    of each term of TERMS (-1: none), column (S,) its sums index; fd, td (S,N,3) the damping
    forces of each slot at the last force evaluation; fa, ta (N,3) (or (0,3)) the applied
    forces; full: a switch, True when the applied power is taken from evaluated forces (a
    prescribed entry, or an applied term without a power hook); applied: per term of TERMS
    its Term.power_arrays (None where not used); work: the implicit scheme's float64 scratch
    (vi_residual.Work), None in the explicit one."""

    sums: np.ndarray
    power: np.ndarray
    potential: np.ndarray
    entry_q: np.ndarray
    entry_f: np.ndarray
    new: np.ndarray
    evaluated: np.ndarray
    slot: np.ndarray
    column: np.ndarray
    fd: np.ndarray
    td: np.ndarray
    fa: np.ndarray
    ta: np.ndarray
    full: bool | None
    applied: tuple = ()
    work: object = None


STATE = ("sums", "power", "potential", "entry_q", "entry_f")  # what a restart must carry


def _damped_terms(model) -> list[int]:
    """Indices into TERMS of the terms whose viscous damping acts in the model."""
    terms, beta, alpha = model.terms, float(model.beta), float(model.alpha)
    out = []
    for i, t in enumerate(TERMS):
        own = getattr(terms, t.name)
        if t.damping is not None and t.present(own) and t.damped and t.damped(own, beta, alpha):
            out.append(i)
    return out


def _loaded(model) -> bool:
    """Whether an APPLIED term of the model applies a load."""
    for t in TERMS:
        own = getattr(model.terms, t.name)
        if t.role & APPLIED and t.present(own) and (t.loaded is None or t.loaded(own)):
            return True
    return False


def _powered(t, own) -> bool:
    return bool(t.role & APPLIED and t.power is not None and t.present(own))


def make(model, slots: list[int], full: bool, work=None) -> Ledger:
    n, d, s = model.n_nodes, len(DISSIPATING), len(slots)
    owns = [getattr(model.terms, t.name) for t in TERMS]
    applied = tuple(
        t.power_arrays(own, model) if _powered(t, own) else None
        for t, own in zip(TERMS, owns, strict=True)
    )
    k = model.prescribed.node.shape[0]
    slot = np.full(len(TERMS), -1, dtype=np.int64)
    slot[slots] = np.arange(s)
    rows = n if full else 0
    return Ledger(
        np.zeros(2 + d),
        np.zeros(2 + d),
        np.full(1, np.nan),  # set by the first refresh (explicit) or start (implicit)
        np.full((k, 6), np.nan),
        np.zeros((k, 2 + s, 6)),
        np.zeros(2 + d),
        np.zeros(1),
        slot,
        np.array([COLUMN[i] for i in slots], dtype=np.int64),
        np.zeros((s, n, 3)),
        np.zeros((s, n, 3)),
        np.zeros((rows, 3)),
        np.zeros((rows, 3)),
        switch(full),
        applied,
        work,
    )


def explicit(model) -> Ledger | None:
    """The explicit scheme's ledger of a model; None where nothing can do work (no damping,
    no load, no prescribed motion): the kernels are then compiled without it."""
    slots = _damped_terms(model)
    prescribed = model.prescribed.node.shape[0] > 0
    if not (slots or prescribed or _loaded(model)):
        return None
    hooks = all(
        _powered(t, getattr(model.terms, t.name))
        for t in TERMS
        if t.role & APPLIED and t.present(getattr(model.terms, t.name))
    )
    return make(model, slots, prescribed or not hooks)


# --- the explicit scheme ------------------------------------------------------------------------


def written(name: str, params: str, write):
    """A kernel-callable name(ld, terms, <params>) whose body write(terms type) writes at
    typing time over the terms the model has (rodsim.jit.written, as forces writes its sums)."""
    return jit.written(name, f"ld, terms, {params}", lambda types: write(types["terms"]))


def hook_args(t) -> str:
    return f"terms.{t.name}, terms.{t.name}_state, terms"


def _write_capture(terms):
    lines, env = [], {"snapshot": _snapshot, "difference": _difference}
    for i, t in forces.present(terms, "damping"):
        env[f"k{i}"] = t.damping
        call = f"k{i}({hook_args(t)}, x, rot, quat, p, vel, omg, f, tau)"
        lines += [
            f"j = ld.slot[{i}]",
            "if j >= 0:",
            "    snapshot(f, tau, ld.fd[j], ld.td[j])",
            f"    {call}",
            "    difference(f, tau, ld.fd[j], ld.td[j])",
            "else:",
            f"    {call}",
        ]
    return lines, env


def _write_hook_power(types):
    """sum of Term.power over the terms the ledger holds power arrays for (ld.applied)."""
    ld = types["ld"]
    applied = ld.types[ld.fields.index("applied")]
    lines, env = ["pa = 0.0"], {}
    for i, item in enumerate(applied.types):
        if not isinstance(item, numba_types.NoneType):
            env[f"k{i}"] = TERMS[i].power
            lines.append(f"pa += k{i}(ld.applied[{i}], nodes, x, rot, quat, t, p, pi)")
    return [*lines, "return pa"], env


_hook_power = jit.written("_hook_power", "ld, nodes, x, rot, quat, t, p, pi", _write_hook_power)


capture_damping = written("capture_damping", "x, rot, quat, p, vel, omg, f, tau", _write_capture)
capture_damping.__doc__ = """forces.add_damping(terms, ...), term by term in the same order (so
f, tau are bit for bit the same), keeping each damped term's forces in its slot ld.fd, ld.td
(explicit._damping calls it where the run has a ledger)."""


@kernel
def _snapshot(f, tau, fd, td):
    for a in range(f.shape[0]):
        for k in range(3):
            fd[a, k] = f[a, k]
            td[a, k] = tau[a, k]


@kernel
def _difference(f, tau, fd, td):
    for a in range(f.shape[0]):
        for k in range(3):
            fd[a, k] = f[a, k] - fd[a, k]
            td[a, k] = tau[a, k] - td[a, k]


# The explicit step's ledger (explicit.advance, after each (sub)step's second kick):
#   evaluate(ld.full, ...)      the applied forces into ld.fa, ld.ta and their power, where a
#                               prescribed entry needs them or an applied term has no power hook
#   step(ld, ...)               the node-time powers and their trapezoid
#   entries(nodes.prescribed, ...)  the prescribed entries' increments
# step, the common path, is compiled without reference counting (numba's _nrt=False): every
# array a kernel binds out of a named tuple (its arguments, an inlined call's) costs an atomic
# reference-count update, and the ledger's ~40 measured +0.6 us a step on a loaded 10-element
# rod (+17%); without them, 0.1 us. The other two are switches (rodsim.jit.either): nothing
# is called where they are off. Nothing large is inlined (inline="always"): an inlined power
# hook took 40 s more to compile cold, mostly typing it again at every call site.


@kernel
def _evaluated_power(mass, inertia, fixed, f, tau, rot, p, pi):
    """sum f . v + tau . omega over the free components at the velocities of the momenta p,
    pi (v = p/m, omega = Lambda I^-1 Lambda^T pi), worked out only at the nodes where f or tau
    is not zero (loads act on few nodes)."""
    total = 0.0
    for a in range(f.shape[0]):
        if mass[a] > 0.0:
            for k in range(3):
                if not fixed[a, k] and f[a, k] != 0.0:
                    total += f[a, k] * p[a, k] / mass[a]
        if tau[a, 0] != 0.0 or tau[a, 1] != 0.0 or tau[a, 2] != 0.0:
            r = so3.mat_at(rot, a)
            spin = so3.matTvec(r, (pi[a, 0], pi[a, 1], pi[a, 2]))
            w = so3.matvec(r, so3.solve3(so3.mat_at(inertia, a), spin))
            for k in range(3):
                if not fixed[a, 3 + k]:
                    total += tau[a, k] * w[k]
    return total


@kernel
def _evaluate(ld, nodes, terms, s, w, t):
    forces.forces(terms, s.x, s.rot, w.quat, t, ld.fa, ld.ta, APPLIED)
    m = nodes
    ld.evaluated[0] = _evaluated_power(m.mass, m.inertia, m.fixed, ld.fa, ld.ta, s.rot, s.p, s.pi)


@kernel(inline="always")
def _no_evaluate(ld, nodes, terms, s, w, t):
    pass


evaluate = either(_no_evaluate, _evaluate)  # switch: ld.full


@kernel
def _slot_powers(fd, td, column, fixed, mass, inertia, rot, p, pi, out):
    """Each damped slot's power sum fd . v + td . omega over the free components into its
    column of out, at the velocities of the momenta p, pi (v = p/m, omega = Lambda I^-1
    Lambda^T pi, as diagnostics.nodal_velocities), in one pass over the nodes with no velocity
    array written; each slot's sum in the order of a slot-by-slot loop."""
    n_slots = column.shape[0]
    for j in range(n_slots):
        out[column[j]] = 0.0
    for a in range(p.shape[0]):
        r = so3.mat_at(rot, a)
        big_pi = so3.matTvec(r, (pi[a, 0], pi[a, 1], pi[a, 2]))
        w = so3.matvec(r, so3.solve3(so3.mat_at(inertia, a), big_pi))
        for j in range(n_slots):
            total = out[column[j]]
            for k in range(3):
                if not fixed[a, k]:
                    total += fd[j, a, k] * (p[a, k] / mass[a])
                if not fixed[a, 3 + k]:
                    total += td[j, a, k] * w[k]
            out[column[j]] = total


@kernel(inline="always")
def _no_damping_power(ld, nodes, s, w, out):
    pass


@kernel(inline="always")
def _damping_power(ld, nodes, s, w, out):
    _slot_powers(ld.fd, ld.td, ld.column, nodes.fixed, nodes.mass, nodes.inertia, s.rot, s.p,
                 s.pi, out)  # fmt: skip


_damping_powers = either(_no_damping_power, _damping_power)  # switch: damped


@kernel(inline="always")
def _applied_hooks(ld, nodes, s, w, t):
    return _hook_power(ld, nodes, s.x, s.rot, w.quat, t, s.p, s.pi)


@kernel(inline="always")
def _applied_evaluated(ld, nodes, s, w, t):
    return ld.evaluated[0]  # evaluate's


_applied_power = either(_applied_hooks, _applied_evaluated)  # switch: ld.full


@kernel(inline="always")
def _powers(ld, damped, nodes, s, w, t, out):
    """The shares' powers at the node time into out (2+D,): applied, 0, each damped slot's
    column (the others 0)."""
    for c in range(out.shape[0]):
        out[c] = 0.0
    out[WORK] = _applied_power(ld.full, ld, nodes, s, w, t)
    _damping_powers(damped, ld, nodes, s, w, out)


@kernel
def _trapezoid(sums, power, new, potential, h, v):
    """sums += h/2 (power + new) (W counts up, D down), power = new; V's change into W."""
    for c in range(new.shape[0]):
        if c != SUPPORT:
            sign = 1.0 if c == WORK else -1.0
            sums[c] += sign * 0.5 * h * (power[c] + new[c])
            power[c] = new[c]
    sums[WORK] += v - potential[0]
    potential[0] = v


@kernel(_nrt=False)
def step(ld, damped, nodes, s, w, t, h, v):
    """The explicit scheme's ledger after a (sub)step of size h ending at node time t, where
    the kick has been taken and v is the loads' potential: the trapezoid h/2 (P_k + P_k+1)
    of each share's power, V's change into W."""
    _powers(ld, damped, nodes, s, w, t, ld.new)
    _trapezoid(ld.sums, ld.power, ld.new, ld.potential, h, v)


@kernel
def _entry_work(pa, sums, entry_q, entry_f, column, fd, td, f, tau, fa, ta, t, account):
    """Prescribed entries at a node time t: with account, each share's (F_k + F_k+1)/2 . dq
    over the step into the sums (the reaction -F_total into W_s); then the entries' q and
    forces are kept (q only where not yet set: at the start, or carried over a refresh)."""
    n_slots = column.shape[0]
    for e in range(pa.node.shape[0]):
        value = evaluate_packed(
            pa.tf_kinds, pa.tf_params, pa.tf_tables, pa.tf_offsets, pa.tf[e], t, pa.window
        )
        a = pa.node[e]
        for c in range(6):
            if (c < 3 and not pa.translate[e, c]) or (c >= 3 and not pa.rotate[e]):
                continue
            q = value * (pa.u[e, c] if c < 3 else pa.theta[e, c - 3])
            total = f[a, c] if c < 3 else tau[a, c - 3]
            applied = fa[a, c] if c < 3 else ta[a, c - 3]
            known = entry_q[e, c] == entry_q[e, c]  # not NaN: set
            if account and known:
                dq = 0.5 * (q - entry_q[e, c])
                sums[SUPPORT] -= (entry_f[e, 0, c] + total) * dq
                sums[WORK] += (entry_f[e, 1, c] + applied) * dq
                for j in range(n_slots):
                    fj = fd[j, a, c] if c < 3 else td[j, a, c - 3]
                    sums[column[j]] -= (entry_f[e, 2 + j, c] + fj) * dq
            if account or not known:
                entry_q[e, c] = q
            entry_f[e, 0, c] = total
            entry_f[e, 1, c] = applied
            for j in range(n_slots):
                entry_f[e, 2 + j, c] = fd[j, a, c] if c < 3 else td[j, a, c - 3]


@kernel
def _account_entries(pa, ld, s, t):
    _entry_work(
        pa, ld.sums, ld.entry_q, ld.entry_f, ld.column, ld.fd, ld.td, s.f, s.tau, ld.fa, ld.ta,
        t, True,
    )  # fmt: skip


@kernel(inline="always")
def _no_entries(pa, ld, s, t):
    pass


entries = either(_no_entries, _account_entries)  # switch: the prescribed motions


@kernel
def _keep_entries(pa, ld, s, t):
    _entry_work(
        pa, ld.sums, ld.entry_q, ld.entry_f, ld.column, ld.fd, ld.td, s.f, s.tau, ld.fa, ld.ta,
        t, False,
    )  # fmt: skip


def refresh(run, call) -> None:
    """What the next step's trapezoid starts from, at a running dynamics.Explicit's current
    state after its forces were evaluated (its start, or loads changed between steps): the
    node-time powers (a step of size 0, which also books a change of V into W), the
    prescribed entries' forces, and at the start V and the entries' q. call(kernel, args,
    rest): runs the compiled kernel (dynamics._kernel), the same step advance calls."""
    ld, m, st = run.ledger, run.model, run.state
    if not ld.potential[0] == ld.potential[0]:  # NaN: the start
        ld.potential[0] = run.external
    t = float(run.time)
    if ld.full:
        call(_evaluate, (ld, m.nodes, m.terms, st, run.work), (t,))
    call(step, (ld, switch(m.terms.damped), m.nodes, st, run.work), (t, 0.0, float(run.external)))
    if m.prescribed.node.shape[0]:
        call(_keep_entries, (m.nodes.prescribed, ld, st), (t,))


# --- what a frame reports -----------------------------------------------------------------------


def values(run, kinetic: float, internal: float, external: float) -> dict:
    """The Frame fields of the ledger of a running integration (rodsim.integrators.dynamics.
    Explicit or implicit.Implicit): external_work, support_work, dissipated,
    dissipated_by_term (D,) (columns NAMES), balance = K + U + V - W - W_s + D."""
    ld = getattr(run, "ledger", None)
    by_term = np.zeros(len(DISSIPATING))
    work = support = 0.0
    if ld is not None:
        work, support = float(ld.sums[WORK]), float(ld.sums[SUPPORT])
        by_term += ld.sums[FIRST:]
    elif _loaded(run.model):  # compiled out, and a controller has set loads since: unknown
        work = np.nan
    terms = run.model.terms
    for j, i in enumerate(DISSIPATING):
        t = TERMS[i]
        if t.dissipated is not None:
            by_term[j] += t.dissipated(getattr(terms, t.name), getattr(terms, t.name + "_state"))
    dissipated = float(by_term.sum())
    balance = kinetic + internal + external - work - support + dissipated
    return {
        "external_work": work,
        "support_work": support,
        "dissipated": dissipated,
        "dissipated_by_term": by_term,
        "balance": balance,
    }


def static_values() -> dict:
    """What a frame of an equilibrium, a path or a modal analysis reports: NaN (no ledger)."""
    nan = float("nan")
    return {
        "external_work": nan,
        "support_work": nan,
        "dissipated": nan,
        "dissipated_by_term": np.full(len(DISSIPATING), nan),
        "balance": nan,
    }
