"""A user term's tangent at the reference, by complex step: what the explicit stable step, the
Newton round-off floor, the mechanism check and modal damping read of it (rodsim.terms.user).

K d = -Im F(x0 + i eps u, (I + i eps hat(theta)) rot0, (1, i eps theta / 2) * q0) / eps is the
derivative of the entries' forces F (their compiled complex128 variant, the one the implicit
Jacobian differentiates) along the spatial increments d = (u, theta) (N,6); C d likewise of
the damping forces along the rates (vel, omg) = i eps d. Nothing is subtracted, so nothing
cancels: the derivative is exact to round-off, and exactly zero along increments the forces do
not depend on (a ground spring resists no rotation of its node). eps is a power of two, so
scaling by it is exact.

The blocks K_ba (6,6) (node b's forces and moments per unit increment of node a) are found
column by column, with the nodes coloured so that no two nodes of one colour share a coupled
node: 6 evaluations per colour (one colour for springs at single nodes).
"""

import numpy as np

from rodsim.errors import ArgumentError
from rodsim.model.rod import node_quaternions
from rodsim.terms.user_sums import total, total_damping

EPS = 2.0**-100


def _hat(w: np.ndarray) -> np.ndarray:
    """(N,3,3) the cross-product matrices of w (N,3)."""
    out = np.zeros((len(w), 3, 3))
    out[:, 0, 1], out[:, 0, 2], out[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    return out - out.transpose(0, 2, 1)


def _reference(model):
    n = model.n_nodes
    quat = np.empty((n, 4))
    node_quaternions(model.rot0, quat, 0, n)
    return model.x0, model.rot0, quat


def _response(entries, model, d: np.ndarray, rates: bool) -> np.ndarray:
    """(N,6) K d (rates: C d) of the entries (a tuple of UserEntry) at the reference."""
    x0, rot0, q0 = _reference(model)
    u, w = d[:, :3], d[:, 3:]
    f = np.zeros(x0.shape, dtype=complex)
    tau = np.zeros(x0.shape, dtype=complex)
    if rates:
        total_damping(entries, x0 + 0j, rot0 + 0j, q0 + 0j, 1j * EPS * u, 1j * EPS * w, f, tau)
    else:
        rot = rot0 + 1j * EPS * np.einsum("nij,njk->nik", _hat(w), rot0)
        # (0, w) * q0: the spatial increment's quaternion rate, halved
        pure = np.zeros_like(q0)
        pure[:, 0] = -np.einsum("ni,ni->n", w, q0[:, 1:])
        pure[:, 1:] = q0[:, :1] * w + np.cross(w, q0[:, 1:])
        total(entries, x0 + 1j * EPS * u, rot, q0 + 0.5j * EPS * pure, 0.0, f, tau)
    return -np.concatenate([f.imag, tau.imag], axis=1) / EPS


def _neighbours(term) -> dict:
    """node -> sorted nodes coupled to it (itself included): its pairs and its rows."""
    near = {int(a): {int(a)} for a in np.unique(term.nodes)}
    for a, b in term.coupled():
        near.setdefault(int(a), {int(a)}).add(int(b))
        near.setdefault(int(b), {int(b)}).add(int(a))
    return {a: sorted(s) for a, s in near.items()}


def _colours(near: dict) -> list[np.ndarray]:
    """Groups of nodes no two of which share a coupled node (greedy distance-2 colouring)."""
    colour = {}
    for a in sorted(near):
        taken = {colour[c] for b in near[a] for c in near.get(b, ()) if c in colour}
        k = 0
        while k in taken:
            k += 1
        colour[a] = k
    groups = {}
    for a, k in colour.items():
        groups.setdefault(k, []).append(a)
    return [np.array(groups[k], dtype=np.int64) for k in sorted(groups)]


def _undeclared(term, node: int, group, rates: bool):
    what = "damping" if rates else "forces"
    raise ArgumentError(
        f"user term {term.name!r}: its {what} at node {node} change with a node its pairs do "
        f"not couple to it (one of {sorted(int(a) for a in group)[:6]}): give pairs= every "
        "node pair its forces couple (the implicit Jacobian's pattern)",
        key="pairs",
    )


def reference_blocks(entry, model, rates: bool):
    """(pairs (B,2) int64 (b, a), blocks (B,6,6)): K_ba (rates: C_ba) of one entry at the
    model's reference, for every coupled pair and each node with itself. ArgumentError where
    its forces at a node change with a node its pairs do not couple to it (each colour is
    evaluated twice, the second time with its nodes moved by different amounts: the
    derivative is linear in them, so the responses must be the blocks times the amounts)."""
    term = entry.forces.term
    near = _neighbours(term)
    index = {}
    pairs = []
    for a in sorted(near):
        for b in near[a]:
            index[(b, a)] = len(pairs)
            pairs.append((b, a))
    blocks = np.zeros((len(pairs), 6, 6))
    n = model.n_nodes
    weights = np.random.default_rng(0).uniform(1.0, 2.0, n)
    for group in _colours(near):
        owner = np.full(n, -1)  # the node of the group a node is coupled to
        for a in group:
            owner[near[int(a)]] = a
        for k in range(6):
            d = np.zeros((n, 6))
            d[group, k] = 1.0
            r = _response((entry,), model, d, rates)
            # again with the group's nodes moved by different amounts: a node whose response
            # is not its owner's block times the owner's amount hears another node too
            d[group, k] = weights[group]
            check = _response((entry,), model, d, rates)
            reached = owner >= 0
            expected = np.where(reached[:, None], r * weights[owner][:, None], 0.0)
            size = np.abs(check).max(initial=0.0)
            wrong = np.any(np.abs(check - expected) > 1e-9 * size, axis=1)
            if wrong.any():
                _undeclared(term, int(np.flatnonzero(wrong)[0]), group, rates)
            for a in group:
                for b in near[int(a)]:
                    blocks[index[(b, int(a))], :, k] = r[b]
    return np.array(pairs, dtype=np.int64).reshape(-1, 2), blocks


def _mass_scale(model, nodes: np.ndarray):
    """(K,6,6) M^-1/2 at the nodes (mass, and the spatial inertia Lambda0 J Lambda0^T at the
    reference), and (K,6) which components have no mass (zero there)."""
    s = np.zeros((len(nodes), 6, 6))
    massless = np.zeros((len(nodes), 6), dtype=bool)
    m = model.mass[nodes]
    with np.errstate(divide="ignore"):
        s[:, [0, 1, 2], [0, 1, 2]] = np.where(m > 0.0, 1.0 / np.sqrt(np.abs(m)), 0.0)[:, None]
    massless[:, :3] = (m <= 0.0)[:, None]
    r0 = model.rot0[nodes]
    j = np.einsum("nij,njk,nlk->nil", r0, model.inertia[nodes], r0)
    lam, vec = np.linalg.eigh(j)
    with np.errstate(divide="ignore"):
        inv = np.where(lam > 0.0, 1.0 / np.sqrt(np.abs(lam)), 0.0)
    s[:, 3:, 3:] = np.einsum("nij,nj,nkj->nik", vec, inv, vec)
    massless[:, 3:] = (lam <= 0.0).any(axis=1)[:, None]
    return s, massless


def _block_bound(model, n: int, pairs: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """(N,) per node b, sum_a ||M_b^-1/2 B_ba M_a^-1/2||_2: the block row sums that bound the
    largest eigenvalue of M^-1/2 B M^-1/2 (an induced norm bounds the spectral radius); inf
    where a block acts on a component without mass."""
    out = np.zeros(n)
    if not len(blocks):
        return out
    sb, mb = _mass_scale(model, pairs[:, 0])
    sa, ma = _mass_scale(model, pairs[:, 1])
    scaled = np.einsum("bij,bjk,bkl->bil", sb, blocks, sa)
    norm = np.linalg.norm(scaled, ord=2, axis=(1, 2))
    on_massless = np.any((blocks != 0.0) & (mb[:, :, None] | ma[:, None, :]), axis=(1, 2))
    np.add.at(out, pairs[:, 0], np.where(on_massless, np.inf, norm))
    return out


def _given(entries, model) -> np.ndarray:
    """(N,) the squared frequencies of the entries whose stiffness bounds the user gave: at a
    single node, the node's springs summed against its mass and smallest inertia, as the
    supports' (k / m); between M nodes, k S g_i at node i with g_i = 1/sqrt(m_i) and S = sum_j
    g_j (Cauchy-Schwarz, as the connectors': k (1/m_a + 1/m_b) for equal masses)."""
    n = model.n_nodes
    with np.errstate(divide="ignore"):
        g_x = 1.0 / np.sqrt(model.mass)
        j_min = np.linalg.eigvalsh(model.inertia)[:, 0]
        g_r = 1.0 / np.sqrt(j_min)
    sums = {"t": np.zeros(n), "r": np.zeros(n)}
    spread = {"t": np.zeros(n), "r": np.zeros(n)}
    for e in entries:
        term = e.forces.term
        nodes = term.nodes
        for key, k, g in (("t", term.stiffness, g_x), ("r", term.rotational_stiffness, g_r)):
            if nodes.shape[1] == 1:
                np.add.at(sums[key], nodes[:, 0], k)
                continue
            g_total = g[nodes].sum(axis=1)
            for j in range(nodes.shape[1]):
                on = k > 0.0
                np.add.at(spread[key], nodes[on, j], k[on] * g_total[on] * g[nodes[on, j]])
    with np.errstate(divide="ignore", invalid="ignore"):
        trans = np.where(sums["t"] > 0.0, sums["t"] / model.mass, 0.0) + spread["t"]
        rot = np.where(sums["r"] > 0.0, sums["r"] / j_min, 0.0) + spread["r"]
    return np.maximum(trans, rot)


def step_bounds(entries, model):
    """(nodes (S,) ascending, omega2 (S,), rate (S,)) of a role's entries: the user's stiffness
    bounds where given (_given), else the block row sums of the tangent at the reference;
    the dashpots' decay rate half the row sums of their damping blocks (c / 2m)."""
    n = model.n_nodes
    omega2, rate = _given([e for e in entries if e.forces.term.stiffness is not None], model), 0.0
    for e in entries:
        if e.forces.term.stiffness is None:
            omega2 = omega2 + _block_bound(model, n, e.coupling, e.k_ref)
        rate = rate + 0.5 * _block_bound(model, n, e.coupling, e.c_ref)
    nodes = np.unique(np.concatenate([e.nodes.ravel() for e in entries]))
    return nodes, omega2[nodes], (rate + np.zeros(n))[nodes]


def roundoff(entries, size: float, length: float) -> float:
    """max over nodes of the stiffness per translation times size plus that per rotation over
    length (the user's bounds where given, else the tangent's block row sums)."""
    worst = 0.0
    for e in entries:
        term = e.forces.term
        if term.stiffness is not None:
            k_t, k_r = term.stiffness, term.rotational_stiffness
        elif len(e.coupling):
            n = int(e.coupling.max()) + 1
            k_t, k_r = np.zeros(n), np.zeros(n)
            np.add.at(k_t, e.coupling[:, 0], np.linalg.norm(e.k_ref[:, :, :3], 2, (1, 2)))
            np.add.at(k_r, e.coupling[:, 0], np.linalg.norm(e.k_ref[:, :, 3:], 2, (1, 2)))
        else:
            continue
        worst = max(worst, float(np.max(k_t * size + k_r / length, initial=0.0)))
    return worst


def restraint(entries, nodes: np.ndarray, motions: np.ndarray):
    """(6,6) sum over the blocks within the part of r_b^T K_ba r_a along the rigid motions
    motions (K,6,6) at its nodes (K,) (sorted); None where no entry has a node on the part."""
    out = None
    for e in entries:
        p = e.coupling
        inside = np.isin(p[:, 0], nodes) & np.isin(p[:, 1], nodes)
        if not inside.any():
            continue
        rb = motions[np.searchsorted(nodes, p[inside, 0])]
        ra = motions[np.searchsorted(nodes, p[inside, 1])]
        w = np.einsum("bim,bij,bjn->mn", rb, e.k_ref[inside], ra)
        out = w if out is None else out + w
    return out


def damping_blocks(entries, model):
    """(pairs (B,2), blocks (B,6,6)): the entries' damping at the reference (f = -C v)."""
    p = [e.coupling for e in entries if e.damping is not None]
    c = [e.c_ref for e in entries if e.damping is not None]
    return (
        np.concatenate([np.zeros((0, 2), dtype=np.int64), *p]),
        np.concatenate([np.zeros((0, 6, 6)), *c]),
    )
