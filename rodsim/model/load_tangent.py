"""Load stiffness of the configuration-dependent external loads (issue 36), float64.

Same convention as rodsim.model.plate_tangent (docs/theory.md, "Conventions"): spatial
increments (u_b, theta_b), K_ab = -d(f_a, tau_a)/d(u_b, theta_b) (6x6, force rows 0:3, moment
rows 3:6), with (f, tau) what rodsim.model.loads writes, at a fixed time t (the time
functions' multipliers are constants here). Blocks are added into k (B,6,6) float64 at block
indices given by slots (rodsim.model.tangent_blocks.block_index, plate_slots).

- Dead nodal forces and moments and gravity do not depend on the configuration: their load
  stiffness is zero, and no kernel is needed for them.
- Follower nodal loads (docs/theory.md, "Loads"): f = s Lambda Lambda0^T F turns with the
  node, delta f = theta x f = -hat(f) theta, so K_aa[0:3, 3:6] = hat(f) and
  K_aa[3:6, 3:6] = hat(m) (m the current follower moment).
- Follower pressure (docs/plates.md; plate_kernels.pressure_forces):
  f_a = p sum_q w_q N_a (phi_1 x phi_2), so with delta phi_i = sum_b N_b,i u_b
  K_ab[0:3, 0:3] = hat(p sum_q w_q N_a (N_b,1 phi_2 - N_b,2 phi_1)): every 3x3 block is skew,
  the element matrix is not symmetric; over a closed surface (or one whose edges are held)
  the assembled matrix is symmetric (then f = p dV/dx, V the enclosed volume). No moment
  rows, no rotation columns (the pressure ignores the directors).
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.loads import _multiplier
from rodsim.model.plate_kernels import _gradients
from rodsim.model.plate_tangent import _add_hat
from rodsim.model.tangent_blocks import block_index


@kernel
def add_follower_tangents(ld, t, rot, rot0, slots, k):
    """Add the follower nodal loads' stiffness at time t to k (B,6,6) in place.

    ld: LoadArrays; rot, rot0 (N,3,3) current and reference rotations; slots (K,) int64 the
    block index of (node[k], node[k]) for each load entry k (follower_slots; -1 skips). Dead
    entries add nothing. Units: force (force rows), force x length (moment rows).
    """
    for ent in range(ld.node.shape[0]):
        if not ld.follower[ent] or slots[ent] < 0:
            continue
        s = _multiplier(ld, ld.tf[ent], t)
        if s == 0.0:
            continue
        a = ld.node[ent]
        blk = slots[ent]
        # current load s Lambda Lambda0^T F (loads.external_forces)
        q = so3.matmulT(so3.mat_at(rot, a), so3.mat_at(rot0, a))
        fv = so3.scale(s, so3.matvec(q, so3.vec_at(ld.force, ent)))
        mv = so3.scale(s, so3.matvec(q, so3.vec_at(ld.moment, ent)))
        _add_hat(k[blk], 0, 3, fv, 1.0)
        _add_hat(k[blk], 3, 3, mv, 1.0)


@kernel
def add_pressure_tangents(ld, pl, t, x, rot, slots, k):
    """Add the follower pressure's load stiffness at time t on the plates pl to k (B,6,6) in
    place (only the u-u blocks).

    x (N,3), rot (N,3,3) (rot unused, as in loads.plate_pressure); slots (P,4,4) the plates'
    block map (plate_tangent.plate_slots). Units: force/length.
    """
    if ld.pressure_el.shape[0] == 0:
        return
    p = np.zeros(pl.conn.shape[0])
    for ent in range(ld.pressure_el.shape[0]):
        p[ld.pressure_el[ent]] += ld.pressure[ent] * _multiplier(ld, ld.pressure_tf[ent], t)
    for e in range(pl.conn.shape[0]):
        if p[e] == 0.0:
            continue
        nb = pl.n_nodes_el[e]
        for s in range(nb):
            f1, f2, _, _ = _gradients(pl, e, s, x, rot, nb)
            c = p[e] * pl.weight[e, s]
            for a in range(nb):
                ca = c * pl.shape[e, s, a]
                for b in range(nb):
                    blk = slots[e, a, b]
                    if blk < 0:
                        continue
                    g1 = pl.dn[e, s, b, 0]
                    g2 = pl.dn[e, s, b, 1]
                    v = (
                        g1 * f2[0] - g2 * f1[0],
                        g1 * f2[1] - g2 * f1[1],
                        g1 * f2[2] - g2 * f1[2],
                    )
                    _add_hat(k[blk], 0, 0, v, ca)


def follower_slots(ld, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """slots (K,) int64 for add_follower_tangents: the BSR block index of each load entry's
    diagonal block (node, node), -1 for dead entries (they need no block)."""
    node = np.where(np.asarray(ld.follower) != 0, np.asarray(ld.node, dtype=np.int64), -1)
    return block_index(indptr, indices, node, node)
