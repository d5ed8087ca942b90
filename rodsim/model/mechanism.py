"""Free rigid motions of a model, and what its loads do along them (docs/mechanisms.md).

A rigid motion of a connected part of the structure (the nodes that its INTERNAL terms join:
rods, plates, connectors, through their node pairs) is u_a = t + omega x (x_a - c),
theta_a = omega at its nodes a, with c the part's centroid: six of them, translations t along
e1, e2, e3 and rotations omega about them. It is free when nothing restrains it: every fixed
or prescribed component of it is zero, and the stiffness along it, r^T K_s r, of the terms
that restrain rigid motions (their `restraint` hook: the elastic supports; a connector in
global axes) is below RESTRAINT of the part's own bending stiffness scale B / L^3
(bending_scale). K_s is those terms' tangent at the reference, from them alone
(support_work): the elements' stiffness (GA / h on fine meshes of shear-rigid sections)
leaves no round-off in it, and neither it nor the mesh enters the scale.

An equilibrium needs the loads balanced along every free motion. Along a free translation
a net dead force has no balance at all (the potential -F.t falls without bound); along a
free rotation a net moment can be balanced where forces turn with the structure (a pendulum
swings down to hang), but not by moments alone (a dead couple stays). Where the loads do no
work along the free motions (self-equilibrated loads), the equilibrium is there but not
unique: holding m components at one node, chosen to fix exactly the m free motions, picks
one solution and carries no load.
"""

from typing import NamedTuple

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from rodsim.model import forces, variants
from rodsim.terms import INTERNAL, TERMS

DOFS = ("ux", "uy", "uz", "rx", "ry", "rz")
# a rigid motion is free when its constraints vanish to this (relative to the motion's size)
FREE_TOL = 1e-8
# and the supports' stiffness along it is below RESTRAINT of the part's bending scale B / L^3:
# a softer support lets the part move rigidly over 1e6 times farther than the same load bends
# it (P / k against P L^3 / B), so it holds the part within its own size only under loads
# that bend it by less than 1e-6 of that size, loads that strain nothing (the rail's
# foundation, inputs/foundation, is 6.5e3 to 7.8e4 times B / L^3 along its rigid motions)
RESTRAINT = 1e-6
# the loads drive a free motion when their work along it exceeds this part of their size
DRIVEN = 1e-9


class FreeMotions(NamedTuple):
    """The free rigid motions of one connected part: nodes (K,) its nodes, center (3,) its
    centroid, size its extent, basis (6, m) coefficients (t, omega / size) of m orthonormal
    free motions, generalized (m,) the loads' work along each (force, moment / size), scale
    the loads' size (the largest nodal force, or moment / size)."""

    nodes: np.ndarray
    center: np.ndarray
    size: float
    basis: np.ndarray
    generalized: np.ndarray
    scale: float
    force: np.ndarray  # (3,) the loads' net force on the part
    forces: bool  # the part carries forces (not only moments)


def parts(model) -> np.ndarray:
    """(N,) the connected part of each node: nodes joined by the node pairs of the INTERNAL
    terms (rod and plate elements, connectors; a part is labelled by the order of its lowest
    node) (a copy: the last connectivity's labels are kept, as every analysis step of a case
    has the same)."""
    pairs = joined(model)
    key = (model.n_nodes, pairs.tobytes())
    last = _PARTS[0]
    if last is None or last[0] != key:
        last = (key, _parts(model.n_nodes, pairs))
        _PARTS[0] = last  # one assignment: threads see an old pair or a new one, never mixed
    return last[1].copy()


_PARTS: list = [None]  # (key, labels) of the last connectivity


def joined(model) -> np.ndarray:
    """(M,2) int64 the node pairs that the INTERNAL terms join (their `pairs`), term after
    term; loads coupling nodes (a follower pressure) join nothing."""
    terms = model.terms
    pairs = [
        np.asarray(t.pairs(t.arrays(model), terms), dtype=np.int64).reshape(-1, 2)
        for t in TERMS
        if t.role & INTERNAL and t.pairs is not None
    ]
    return np.ascontiguousarray(np.concatenate([*pairs, np.zeros((0, 2), dtype=np.int64)]))


def _parts(n: int, pairs: np.ndarray) -> np.ndarray:
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def rigid_basis(x: np.ndarray, center: np.ndarray, size: float) -> np.ndarray:
    """(K, 6, 6) the six unit rigid motions at nodes x (K,3) about center: translations, then
    rotations scaled by 1/size (so that every column is of order 1)."""
    k = len(x)
    r = np.zeros((k, 6, 6))
    for i in range(3):
        e = np.eye(3)[i]
        r[:, i, i] = 1.0
        r[:, :3, 3 + i] = np.cross(e, x - center) / size
        r[:, 3 + i, 3 + i] = 1.0 / size
    return r


def free_motions(model, group: str, times=(1.0,)) -> list[FreeMotions]:
    """The free rigid motions of each connected part of model with any (parts held
    completely are left out), and the applied loads' work along them at each of times (the
    largest; the net force and forces at the time of the largest). group (the kernels'
    choice) does not change the supports' stiffness at the reference."""
    labels = parts(model)
    loose = []  # parts that the fixed and prescribed components leave some rigid motion
    for label in np.unique(labels):
        nodes = np.flatnonzero(labels == label)
        x = model.x0[nodes]
        center = x.mean(axis=0)
        size = float(np.linalg.norm(np.ptp(x, axis=0))) or 1.0
        r = rigid_basis(x, center, size)
        basis = _null(r[model.fixed[nodes]], FREE_TOL)
        if basis.shape[1]:
            loose.append((nodes, center, size, r, basis))
    if not loose:  # the common case: every part held by boundary entries
        return []
    loads = [forces.applied_loads(model.terms, model.x0, model.rot0, t) for t in times]
    out = []
    for nodes, center, size, r, basis in loose:
        s = basis.T @ support_work(model, nodes, r) @ basis
        w, v = np.linalg.eigh(0.5 * (s + s.T))
        basis = basis @ v[:, w <= RESTRAINT * bending_scale(model, labels, nodes[0], size)]
        if basis.shape[1] == 0:
            continue
        works = []
        for f, tau in loads:
            p = np.concatenate([f[nodes], tau[nodes]], axis=1)  # (K, 6)
            big = max(np.abs(f[nodes]).max(), np.abs(tau[nodes]).max() / size, 1e-300)
            g = np.einsum("kij,ki->j", r, p) @ basis
            works.append((np.abs(g).max() / (big * len(nodes)), g, big * len(nodes), f, tau))
        _, g, scale, f, tau = max(works, key=lambda w: w[0])
        pushed = bool(np.abs(f[nodes]).max() > DRIVEN * scale / len(nodes))
        out.append(FreeMotions(nodes, center, size, basis, g, scale, f[nodes].sum(axis=0), pushed))
    return out


def support_work(model, nodes: np.ndarray, r: np.ndarray) -> np.ndarray:
    """(6, 6) the stiffness along the rigid motions r (K, 6, 6) of the part with nodes (K,)
    (sorted) of the terms that restrain rigid motions: the sum of their `restraint`, r^T K r
    with K a term's tangent at the reference, exactly (no element in it; a support stores
    1/2 (u.K_t u + psi.K_r psi) with u = 0 and psi = Lambda0^T theta there)."""
    total = None
    for term in TERMS:
        if term.restraint is not None:
            w = term.restraint(term.arrays(model), nodes, r)
            if w is not None:
                total = w if total is None else total + w
    return np.zeros((6, 6)) if total is None else total


def bending_scale(model, labels: np.ndarray, label_node: int, size: float) -> float:
    """B / L^3, the part's bending stiffness scale (force per length): B its stiffest bending
    stiffness over the terms' `bending` (the rods' EI2, EI3 and the plates' D11, D22 times the
    part's extent L = size, a strip as wide as the part); 0 for a part without elements."""
    label = labels[label_node]
    stiff = [np.zeros(0)]
    for term in TERMS:
        if term.bending is not None:
            stiff.append(np.asarray(term.bending(term.arrays(model), labels, label, size)))
    return float(np.concatenate(stiff).max(initial=0.0)) / size**3


def dead_forces(model, t: float = 1.0) -> np.ndarray:
    """(N,3) the dead forces of model at time t, gravity included (follower loads and
    pressure, which turn with the structure, left out: the APPLIED terms' `dead`)."""
    only = variants.dead_loads(model)
    return forces.applied_loads(only.terms, model.x0, model.rot0, t)[0]


def unstable(model, fm: FreeMotions, f: np.ndarray) -> bool:
    """Whether the dead forces f (N,3) make the equilibrium unstable along a free motion of
    fm: the second variation of their potential -sum f.u along a rigid motion exp(e (t,
    omega)), whose second-order displacement is omega x (t + omega x v)/2 (v = x - c), is
    negative for some motion of the free space (an inverted pendulum; a free bar under dead
    compression)."""
    x, fa = model.x0[fm.nodes] - fm.center, f[fm.nodes]
    scale = float(np.abs(fa).sum() * fm.size)
    if scale == 0.0:
        return False

    def second(z):  # -(second-order work of the forces) along coefficients z (6,)
        t, omega = z[:3], z[3:] / fm.size
        return -float(np.sum(fa * np.cross(omega, t + np.cross(omega, x))))

    m = fm.basis.shape[1]
    h = np.zeros((m, m))
    for j in range(m):
        for k in range(m):
            b = fm.basis[:, j] + fm.basis[:, k]
            h[j, k] = 0.5 * (second(b) - second(fm.basis[:, j]) - second(fm.basis[:, k]))
    return bool(np.linalg.eigvalsh(0.5 * (h + h.T)).min() < -DRIVEN * scale)


class Holds(NamedTuple):
    """What an equilibrium of a model needs of its free motions: fixed (N,6) bool, the
    model's fixed components with the holds added; notes, one line per part for the
    summary; refusal, the reason no equilibrium exists (None: there may be one)."""

    fixed: np.ndarray
    notes: list
    refusal: str | None


def settle(model, group: str, times=(1.0,)) -> Holds:
    """The free motions of model under its loads at times (an equilibrium's load
    multipliers), and what to do about them (the module docstring): refuse, hold the free
    motions that the loads leave alone at one node, or solve on (loads that turn with the
    structure restrain it) with its free translations held."""

    fixed = model.fixed.copy()
    notes = []
    for fm in free_motions(model, group, times):
        what = phrase(fm.basis)
        part = f"the part with node {fm.nodes[0]} is free ({what}: no support holds it"
        driven = np.abs(fm.generalized) > DRIVEN * fm.scale
        if not driven.any():
            if unstable(model, fm, dead_forces(model)):
                return Holds(
                    fixed,
                    notes,
                    f"no stable equilibrium: {part}), and its dead loads would turn it "
                    "further along a free motion, as an inverted pendulum falls; hold it "
                    "(boundary fix entries, supports)",
                )
            node, dofs = _holds(model, fm, fm.basis)
            fixed[node, dofs] = True
            notes.append(
                f"rigid motions held: the part with node {fm.nodes[0]} is free ({what}), "
                f"held at node {node} ({', '.join(DOFS[d] for d in dofs)}): the loads do no "
                "work along them, so these holds carry no load"
            )
            continue
        pure = fm.basis @ _null(fm.basis[3:], FREE_TOL)  # the free translations
        along = pure[:3].T @ fm.force
        if pure.shape[1] and np.abs(along).max() > DRIVEN * fm.scale:
            return Holds(
                fixed,
                notes,
                f"no equilibrium: {part}), and its loads have a net force "
                f"{vector_text(pure[:3] @ along)} along its free translations; hold it "
                "(boundary fix entries, supports) or balance the loads",
            )
        if not fm.forces:
            return Holds(
                fixed,
                notes,
                f"no equilibrium: {part}), and its loads are moments with a net moment along "
                "a free rotation, which no force balances; hold it (boundary fix entries, "
                "supports) or balance the moments",
            )
        held = ""
        if pure.shape[1]:  # the translations the loads leave alone: held, or they drift
            node, dofs = _holds(model, fm, pure)
            fixed[node, dofs] = True
            named = ", ".join(DOFS[d] for d in dofs)
            held = f"; its free translations held at node {node} ({named})"
        notes.append(
            f"mechanism: the part with node {fm.nodes[0]} is free ({what}); its forces "
            f"turn with it and may balance, as a pendulum's do: solved as it is{held}"
        )
    return Holds(fixed, notes, None)


def buckling_refusal(notes) -> str:
    """Why linear buckling refuses a structure with free rigid motions (notes: settle's lines,
    held or solved as a mechanism): its tangent K_T is singular along them, held or not (a
    pendulum's swing, a pinned rod's turn about its own axis), so (K_T + mu K_G) phi = 0 has
    no meaningful lowest mu: the solver returns round-off (factors of 1e-18, or of ~1 about
    the equilibrium) or fails, and automatic holds would change the stability."""
    return (
        "linear buckling needs the structure held: "
        + "; ".join(notes)
        + "; a mechanism's tangent stiffness is singular along its free motions, so no "
        "buckling factor is defined (and the automatic holds would change its stability): "
        "hold it with boundary fix entries or supports"
    )


def buckling_check(model, group: str) -> str | None:
    """buckling_refusal for a model with free rigid motions (its fixed components and
    supports as given), None for a held structure."""
    loose = free_motions(model, group)
    if not loose:
        return None
    return buckling_refusal(
        [f"the part with node {fm.nodes[0]} is free ({phrase(fm.basis)})" for fm in loose]
    )


def _holds(model, fm: FreeMotions, basis: np.ndarray) -> tuple[int, list[int]]:
    """(node, dofs): m components at the node nearest the part's centroid that fix exactly
    the m motions of basis (6, m) (the best conditioned choice, by QR with column
    pivoting)."""
    from scipy.linalg import qr

    x = model.x0[fm.nodes]
    node = int(fm.nodes[np.argmin(np.linalg.norm(x - fm.center, axis=1))])
    rows = rigid_basis(model.x0[[node]], fm.center, fm.size)[0] @ basis  # (6, m)
    m = basis.shape[1]
    _, _, order = qr(rows.T, pivoting=True)
    dofs = sorted(int(d) for d in order[:m])
    return node, dofs


def _null(a: np.ndarray, tol: float) -> np.ndarray:
    """(c, m) an orthonormal basis of the null space of a (rows, c)."""
    if a.shape[0] == 0:
        return np.eye(a.shape[1])
    _, s, vt = np.linalg.svd(a)
    rank = int(np.sum(s > tol * max(s.max(), 1.0)))
    return vt[rank:].T


def names(basis: np.ndarray) -> list[str]:
    """The free motions of basis (6, m) in words: its pure translations ('translation along
    e1') and the axes of its rotations ('rotation about e3'), as axes where the space holds
    them, else as directions ('translation along (0.71, 0.71, 0)')."""
    if basis.shape[1] == 0:
        return []
    pure = basis[:3] @ _null(basis[3:], FREE_TOL)  # motions without rotation
    u, s, _ = np.linalg.svd(basis[3:])
    turns = u[:, : int(np.sum(s > FREE_TOL))]
    return [f"translation along {d}" for d in _directions(pure)] + [
        f"rotation about {d}" for d in _directions(turns)
    ]


def phrase(basis: np.ndarray) -> str:
    """names() in one phrase: 'translation along e1, e2 and rotation about e3'."""
    groups = {}
    for name in names(basis):
        what, _, direction = name.rpartition(" ")
        groups.setdefault(what, []).append(direction)
    return " and ".join(f"{what} {', '.join(d)}" for what, d in groups.items())


def _directions(vectors: np.ndarray) -> list[str]:
    """Unit directions spanning the columns of vectors (3, m): axes where the span holds
    them, else the vectors themselves."""
    m = vectors.shape[1]
    if m == 0:
        return []
    q, _ = np.linalg.qr(vectors)
    axes = [i for i in range(3) if np.linalg.norm(q.T @ np.eye(3)[i]) > 1 - 1e-9]
    if len(axes) == m:
        return [f"e{i + 1}" for i in axes]
    q = np.where(np.abs(q) < 1e-9, 0.0, q) + 0.0
    return ["(" + ", ".join(f"{c:.2g}" for c in q[:, j]) + ")" for j in range(m)]


def vector_text(v) -> str:
    """(x, y, z) to 6 digits; components below 1e-12 of the largest are round-off: 0."""
    v = np.asarray(v, dtype=float)
    v = np.where(np.abs(v) <= 1e-12 * np.abs(v).max(), 0.0, v) + 0.0  # + 0.0: no "-0"
    return "(" + ", ".join(f"{x:.6g}" for x in v) + ")"
