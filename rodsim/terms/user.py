"""User terms: force terms written in Python, compiled by numba, on the term contract
(docs/python.md, "Your own force terms"). rodsim.user_term makes one; rodsim.Simulation and
rodsim.run_case take them (terms=[...]), and rodsim.run puts their arrays into the model
(attach).

A user term is S entries, entry i acting on the nodes nodes[i] (M of them) with the parameters
params[i] (K floats). Its forces function

    forces(nodes (S,M) int64, params (S,K) float64, x (N,3), rot (N,3,3), quat (N,4), t,
           f (N,3), tau (N,3)) -> energy

adds its nodal forces and spatial moments to f, tau and returns its energy (stored energy of an
internal or ground term, potential of an applied one), as a built-in term's kernel does. Its
damping function, if any, damping(nodes, params, x, rot, quat, vel, omg, f, tau), adds the
forces of the nodal velocities vel and angular velocities omg (N,3).

How it reaches the compiled sums. rodsim's kernels are written at typing time from TERMS
(rodsim.model.forces) and cached on disk: a user's function inlined into them would make a
cached caller that belongs to one function and is reused for another. So the kernels call it
through numba's first-class function type: the entry holds the function compiled for one fixed
signature (float64 configurations for the explicit scheme and the energies, complex128 for the
implicit Jacobian by complex step), typed FunctionType(signature) through the wrapper address
protocol, and the compiled caller loads its address from the entry and calls it. A caller's
type, and so its cache entry, holds the signature only, never the function.

Three terms, one per role, come after every built-in term in TERMS: user_internal,
user_applied, user_ground. Each holds the user terms of its role as a tuple of entries
(UserEntry), added in the order given; a model without user terms has None there and compiles
as before. The Python hooks (stable step, round-off floor, mechanism check) read the
tangent at the reference by complex step of the same compiled functions (rodsim.terms.
user_tangent) where the user gives no stiffness bound.
"""

import dataclasses
import hashlib
from typing import NamedTuple

import numpy as np

from rodsim.errors import ArgumentError
from rodsim.jit import kernel
from rodsim.terms import user_tangent as tangent
from rodsim.terms.contract import APPLIED, GROUND, INTERNAL, StepShare, Term, step_share
from rodsim.terms.user_compile import Compiled, UserTerm, user_term
from rodsim.terms.user_sums import sum_damping, sum_forces, total

__all__ = ["TERMS", "UserEntry", "UserTerm", "attach", "user_term"]

NAMES = {INTERNAL: "user_internal", APPLIED: "user_applied", GROUND: "user_ground"}


class UserEntry(NamedTuple):
    """One user term as the kernels read it: nodes (S,M) int64, params (S,K) float64; scale
    (1,) its forces' factor (1; an applied term's loads scaled by path following and
    buckling); n_nodes the model's N (the implicit damping's buffers); forces, forces_c the
    forces function compiled for float64 and complex128 configurations (Compiled: typed
    FunctionType in the kernels); damping, damping_c likewise, or None. Read by Python only:
    coupling (B,2) int64 node pairs (b, a), each node with itself and its coupled nodes, and
    k_ref, c_ref (B,6,6) the blocks K_ba, C_ba of its tangent stiffness and damping at the
    model's reference (rodsim.terms.user_tangent; c_ref empty without damping)."""

    nodes: np.ndarray
    params: np.ndarray
    scale: np.ndarray
    n_nodes: int
    forces: Compiled
    forces_c: Compiled
    damping: Compiled | None
    damping_c: Compiled | None
    coupling: np.ndarray
    k_ref: np.ndarray
    c_ref: np.ndarray

    def __repr__(self) -> str:
        # planning fingerprints a term's arrays by repr: numpy's repr drops the middle of a
        # large array, so the entries' values are digested whole
        h = hashlib.blake2b(digest_size=12)
        for a in (self.nodes, self.params, self.scale, self.k_ref, self.c_ref):
            h.update(repr((a.dtype.str, a.shape)).encode())
            h.update(np.ascontiguousarray(a).tobytes())
        return f"UserEntry({spec(self).name!r}, {self.n_nodes}, {id(self.forces)}, {h.hexdigest()})"


def spec(entry: UserEntry) -> UserTerm:
    """The UserTerm an entry was made from (what the Python hooks read)."""
    return entry.forces.term


class UserStrains(NamedTuple):
    """The configuration at the start of an implicit step: x (N,3), rot (N,3,3)."""

    x: np.ndarray
    rot: np.ndarray


class UserRates(NamedTuple):
    """The implicit step's rates: vel (N,3) = (x_k+1 - x_k) / h, omg (N,3) = Lambda_k
    xi_rot (the spatial Cayley vector of the step over h)."""

    vel: np.ndarray
    omg: np.ndarray


# --- the kernel hooks (own, state, terms first) -----------------------------------------------


@kernel
def forces_stored(own, state, terms, x, rot, quat, t, f, tau):
    """Internal and ground terms: their energy is stored energy."""
    return sum_forces(own, x, rot, quat, t, f, tau), 0.0


@kernel
def forces_potential(own, state, terms, x, rot, quat, t, f, tau):
    """Applied terms: their energy is the loads' potential."""
    return 0.0, sum_forces(own, x, rot, quat, t, f, tau)


@kernel
def damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    sum_damping(own, x, rot, quat, vel, omg, f, tau)


@kernel
def strains(own, state, terms, x, rot, quat, out):
    """The configuration at the start of an implicit step (None: no entry is damped)."""
    if out is None:
        return
    for a in range(x.shape[0]):
        for i in range(3):
            out.x[a, i] = x[a, i]
            for j in range(3):
                out.rot[a, i, j] = rot[a, i, j]


@kernel
def step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    """The implicit scheme's damping forces of a step: the entries' damping at the midpoint
    configuration xb, rb, qb with the step's rates, vel = (x_k+1 - x_k) / h and omg =
    Lambda_k xi_rot (Lambda_k cay(h xi_rot) = Lambda_k+1: the spatial Cayley vector over h)."""
    if start is None:
        return
    for a in range(x1.shape[0]):
        for k in range(3):
            res.vel[a, k] = (x1[a, k] - start.x[a, k]) / h
            res.omg[a, k] = (
                start.rot[a, k, 0] * xi[a, 3]
                + start.rot[a, k, 1] * xi[a, 4]
                + start.rot[a, k, 2] * xi[a, 5]
            )
    sum_damping(own, xb, rb, qb, res.vel, res.omg, f, tau)


# --- the Python hooks -----------------------------------------------------------------------


def _arrays_of(name: str):
    def arrays(model):
        """The model's entries of this role (Model.term_arrays), () without."""
        return tuple(model.term_arrays.get(name, ()))

    return arrays


def present(entries) -> bool:
    return len(entries) > 0


def _damped_entries(entries) -> bool:
    return any(e.damping is not None for e in entries)


def damped(entries, beta, alpha) -> bool:
    return _damped_entries(entries)


def make_strains(entries, dtype=np.float64):
    if not _damped_entries(entries):
        return None
    n = entries[0].n_nodes
    return UserStrains(np.zeros((n, 3), dtype), np.zeros((n, 3, 3), dtype))


def make_resultants(entries, dtype=np.float64):
    if not _damped_entries(entries):
        return None
    n = entries[0].n_nodes
    return UserRates(np.zeros((n, 3), dtype), np.zeros((n, 3), dtype))


def pairs(entries, terms=None) -> np.ndarray:
    """(P,2) the node pairs the entries couple: each term's own `pairs`, else every two nodes
    of one of its rows (the implicit Jacobian's pattern; an internal term's join parts)."""
    out = [np.zeros((0, 2), dtype=np.int64)]
    out += [spec(e).coupled() for e in entries]
    return np.ascontiguousarray(np.concatenate(out), dtype=np.int64)


def conservative(entries) -> bool:
    return all(spec(e).conservative for e in entries)


def _fields_of(role: int):
    def fields(entries, x, rot, quat, with_energy, state=None):
        """No Frame field (the results layout has no user datasets: compute them from the
        state in Python); the stored energy of internal and ground terms, at t = 0 (the
        hook has no time; a term whose energy depends on t has it right in dynamics, where
        the energy comes from the step's own sum)."""
        if not (with_energy and entries) or role == APPLIED:
            return {}, 0.0
        f, tau = np.zeros_like(x), np.zeros_like(x)
        return {}, float(total(entries, x, rot, quat, 0.0, f, tau))

    return fields


def stable_step(entries, model) -> StepShare:
    """Per node of an entry (ascending), a bound on the squared frequency of the entries'
    springs against the node's mass and inertia, and on their dashpots' decay rate
    (rodsim.terms.user_tangent.step_bounds: the user's stiffness bounds where given, else
    the tangent at the reference by complex step); no elements."""
    if not entries:
        return step_share()
    nodes, omega2, rate = tangent.step_bounds(entries, model)
    return step_share(node=nodes, omega2=omega2, rate=rate)


def roundoff(entries, size, length) -> float:
    """The largest nodal force error per unit eps: stiffness k (given or the tangent's) times
    coordinates of size `size`, rotational ones weighted by 1/length (as the supports')."""
    return tangent.roundoff(entries, size, length) if entries else 0.0


def restraint(entries, nodes, motions):
    """r^T K r along the part's rigid motions, K the entries' tangent at the reference by
    complex step (exact zero along motions a term does not resist); None: no entry on it."""
    return tangent.restraint(entries, nodes, motions)


def damping_blocks(entries, model):
    """The entries' dashpots at the reference (f = -C v), C by complex step of their damping."""
    return tangent.damping_blocks(entries, model)


def prestressed(entries, base, state, scale):
    """Unchanged: a user term's reference is its own code's, so linear buckling takes its
    tangent at the reference without its share of geometric stiffness (documented)."""
    return entries


def scaled(entries, scale):
    return tuple(e._replace(scale=e.scale * scale) for e in entries)


def dead(entries):
    """Only the conservative terms' loads (the others, possibly follower, set to zero)."""
    return tuple(e if spec(e).conservative else e._replace(scale=0.0 * e.scale) for e in entries)


def entry(entries, rows):
    """A case `loads:` entry holds no user load."""
    return tuple(e._replace(scale=0.0 * e.scale) for e in entries)


def count(entries) -> str | None:
    if not entries:
        return None
    names = ", ".join(spec(e).name for e in entries)
    return f"user term{'s' * (len(entries) > 1)} {names}"


def _term(role: int) -> Term:
    applied = role == APPLIED
    return Term(
        name=NAMES[role],
        role=role,
        arrays=_arrays_of(NAMES[role]),
        present=present,
        forces=forces_potential if applied else forces_stored,
        damping=damping,
        strains=strains,
        make_strains=make_strains,
        make_resultants=make_resultants,
        step_damping=step_damping,
        damped=damped,
        pairs=pairs,
        fields=_fields_of(role),
        conservative=conservative,
        stable_step=stable_step,
        roundoff=roundoff,
        restraint=None if applied else restraint,
        damping_blocks=damping_blocks,
        prestressed=prestressed if role == INTERNAL else None,
        scaled=scaled if applied else None,
        dead=dead if applied else None,
        entry=entry if applied else None,
        count=count,
    )


TERMS: tuple[Term, ...] = tuple(_term(r) for r in (INTERNAL, APPLIED, GROUND))


# --- a model with user terms ------------------------------------------------------------------


def attach(model, terms):
    """The model with the user terms `terms` (UserTerm, from rodsim.user_term) in its
    Model.term_arrays, by role in the order given. ArgumentError for anything else, two terms
    of one name, or nodes the model does not have."""
    terms = [terms] if isinstance(terms, UserTerm) else list(terms or ())
    if not terms:
        return model
    seen = {spec(e).name for name in NAMES.values() for e in model.term_arrays.get(name, ())}
    by_role = {r: [] for r in NAMES}
    for i, t in enumerate(terms):
        if not isinstance(t, UserTerm):
            raise ArgumentError(
                f"expected a user term (rodsim.user_term), got {type(t).__name__}",
                key=f"terms[{i}]",
            )
        if t.name in seen:
            raise ArgumentError(
                f"two user terms of the model are named {t.name!r}", key=f"terms[{i}]"
            )
        seen.add(t.name)
        by_role[t.role].append(make_entry(t, model))
    arrays = dict(model.term_arrays)
    for role, entries in by_role.items():
        if entries:
            arrays[NAMES[role]] = (*arrays.get(NAMES[role], ()), *entries)
    return dataclasses.replace(model, term_arrays=arrays)


def make_entry(term: UserTerm, model) -> UserEntry:
    """The UserEntry of a user term on a model, its tangent at the model's reference included;
    ArgumentError where it names a node the model does not have."""
    n = model.n_nodes
    for what, idx in (("nodes", term.nodes), ("pairs", term.coupled())):
        if idx.size and idx.max() >= n:
            raise ArgumentError(
                f"user term {term.name!r}: {what} names node {int(idx.max())}, and the model "
                f"has {n} nodes (0 to {n - 1})",
                key=what,
            )
    none = np.zeros((0, 6, 6))
    damping = term.damping or (None, None)
    e = UserEntry(
        term.nodes, term.params, np.ones(1), n, *term.forces, *damping,
        np.zeros((0, 2), dtype=np.int64), none, none,
    )  # fmt: skip
    coupling, k_ref = tangent.reference_blocks(e, model, rates=False)
    c_ref = tangent.reference_blocks(e, model, rates=True)[1] if term.damping else none
    return e._replace(coupling=coupling, k_ref=k_ref, c_ref=c_ref)
