"""Analytic spatial tangent stiffness of the plate element (issue 36), float64.

The element and its strain measures are those of rodsim.model.plate_kernels (docs/theory.md,
"Plates"). Node increments are spatial (docs/theory.md, "Conventions"): delta x_a = u_a and
delta Lambda_a = hat(theta_a) Lambda_a, so a director moves by delta d_i = theta x d_i. The
6x6 block K_ab = -d(f_a, tau_a)/d(u_b, theta_b) holds the force rows 0:3 and moment rows 3:6
of node a, the columns u_b 0:3 and theta_b 3:6, with (f, tau) exactly what
``assemble_plate_forces`` writes.

U depends on the nodes only through x_b, d3_b (and d1_c, d2_c in the drilling term) by
bilinear forms, so with G_a = (dU/dx_a, sum_v v x dU/dv) = -(f_a, tau_a):

    K = sum_q w_q B_q^T diag(A, D, S) B_q + sum_c kd_c b_c b_c^T        material
      + sum_s r_s Q^T (d2 s / dq2) Q                                       geometric
      + diag_a sum_{v in d_a} [v (dU/dv)^T - (v . dU/dv) I]                director

B_q (8 x 6nb) maps (u, theta) to (eps, kappa, gamma) at quadrature slot q, its theta columns
d3_b x (d strain / d d3_b) (the derivative dotted with theta x d3_b); b_c the drilling row;
Q maps (u, theta) to (dx, dd1, dd2, dd3) and r_s are the resultants conjugate to each strain
s. The second derivatives of the strains by the nodal variables are constant multiples of I3
(x-x for the membrane, x-d3 for bending and the tied shear, x-d1 and x-d2 for drilling);
d-d pairs have none. The last line is the rotation of dU/dv by theta at fixed dU/dv:
tau_a = -sum v x dU/dv moves with its directors. It makes K unsymmetric away from
equilibrium, and vanishes with the stresses: at a stress-free configuration K is symmetric.

Shapes: P elements, N nodes, x (N,3), rot (N,3,3) columns (d1, d2, d3); the element tangent
kel (24,24) in slot order (6 b + i, slot b of conn[e, b]; triangles fill 18x18); the
assembled k (B,6,6) float64, B blocks of a block-sparse (BSR) pattern, slots (P,4,4) int64
the block index of (conn[e, i], conn[e, j]), -1 where unused (a triangle's slot 3). Units:
force/length for the translation blocks, force for the mixed ones, force x length for the
rotation blocks.
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.plate_kernels import (
    TIE_DX,
    TIE_T,
    _col,
    _comb,
    _drill,
    _gradients,
    _mem_bend,
    _mv3,
    _shear,
    _tie_vectors,
)
from rodsim.model.tangent_blocks import block_index


@kernel(inline="always")
def _put(a, i, j, v):
    """a[i, j:j+3] = v."""
    a[i, j] = v[0]
    a[i, j + 1] = v[1]
    a[i, j + 2] = v[2]


@kernel(inline="always")
def _add_hat(kel, r, c, v, s):
    """kel[r:r+3, c:c+3] += s hat(v)."""
    kel[r, c + 1] -= s * v[2]
    kel[r, c + 2] += s * v[1]
    kel[r + 1, c] += s * v[2]
    kel[r + 1, c + 2] -= s * v[0]
    kel[r + 2, c] -= s * v[1]
    kel[r + 2, c + 1] += s * v[0]


@kernel(inline="always")
def _add_director(kel, r, d, g, s):
    """kel[r:r+3, r:r+3] += s [d g^T - (d . g) I]: the change of d x g when d turns by theta
    (-(theta x d) x g) at fixed g, i.e. the second-order term of tau = -d x dU/dd."""
    dg = so3.dot(d, g)
    for i in range(3):
        for j in range(3):
            kel[r + i, r + j] += s * d[i] * g[j]
        kel[r + i, r + i] -= s * dg


@kernel
def plate_element_tangent(pl, e, x, rot, kel, bm, cb, gt, cc, tie):
    """The spatial tangent K (6nb x 6nb, in kel[:6nb, :6nb], the rest untouched) of element e
    at (x, rot), elastic resultants; returns nb.

    Scratch (float64): bm, cb (8,24) the strain map B_q and C B_q; gt (4,3) dU/dd3_b; cc
    (2,4,4) the geometric coefficients of x_b-x_c and x_b-d3_c (times I3); tie (2,4,3) the
    tied vectors phi_,xi and t at the 4 tying points. Differentiates plate_kernels._element
    term by term (its strains, resultants and dU/dd3 are recomputed here).
    """
    return plate_element_at(
        pl, e, x, rot, None, None, None, None, kel, bm, cb, gt, cc, tie, None, None
    )


@kernel
def plate_element_at(pl, e, x, rot, rn, rm, rq, rr, kel, bm, cb, gt, cc, tie, bq, bd):
    """plate_element_tangent at given resultants: rn None, the elastic ones (material and
    geometric parts); else the geometric part only, at rn, rm (P,4,3), rq (P,4,2), rr (P,4)
    (as plate_kernels.plate_resultant_forces reads them: the implicit damping's viscous
    resultants). bq (4,8,24), bd (4,24) (None: not kept): the strain maps B_q of the slots
    and the drilling rows b_c of the nodes (zero where kd_c = 0), spatial columns."""
    nb = pl.n_nodes_el[e]
    n6 = 6 * nb
    typ = 1 if nb == 4 else 0
    kel[:n6, :n6] = 0.0
    gt[:, :] = 0.0
    cc[:, :, :] = 0.0
    for k in range(4):
        p, t = _tie_vectors(pl, e, k, x, rot, nb)
        for i in range(3):
            tie[0, k, i] = p[i]
            tie[1, k, i] = t[i]
    # tied covariant shear strains minus their reference (plate_kernels._tied)
    ph = tie[0]
    tv = tie[1]
    g = (
        so3.dot(so3.vec_at(ph, 0), so3.vec_at(tv, 0)) - pl.g0[e, 0],
        so3.dot(so3.vec_at(ph, 1), so3.vec_at(tv, 1)) - pl.g0[e, 1],
        so3.dot(so3.vec_at(ph, 2), so3.vec_at(tv, 2)) - pl.g0[e, 2],
        so3.dot(so3.vec_at(ph, 3), so3.vec_at(tv, 3)) - pl.g0[e, 3],
    )
    dg = (0.0, 0.0, 0.0, 0.0)  # dU/dg_k
    sm = pl.shear_map
    for s in range(nb):
        w = pl.weight[e, s]
        f1, f2, t1, t2 = _gradients(pl, e, s, x, rot, nb)
        eps, kap = _mem_bend(pl, e, s, f1, f2, t1, t2)
        gam = _shear(pl, e, s, g)
        if rn is None:
            n = _mv3(pl.a_mat, e, eps)
            m = _mv3(pl.d_mat, e, kap)
            q1 = pl.s_mat[e, 0, 0] * gam[0] + pl.s_mat[e, 0, 1] * gam[1]
            q2 = pl.s_mat[e, 1, 0] * gam[0] + pl.s_mat[e, 1, 1] * gam[1]
        else:
            n = (rn[e, s, 0], rn[e, s, 1], rn[e, s, 2])
            m = (rm[e, s, 0], rm[e, s, 1], rm[e, s, 2])
            q1 = rq[e, s, 0]
            q2 = rq[e, s, 1]
        # B_q: rows eps11, eps22, 2eps12, k11, k22, 2k12, gamma1, gamma2; columns (u_b, theta_b)
        bm[:, :n6] = 0.0
        for b in range(nb):
            g1 = pl.dn[e, s, b, 0]
            g2 = pl.dn[e, s, b, 1]
            d3 = _col(rot, pl.conn[e, b], 2)
            u, r = 6 * b, 6 * b + 3
            _put(bm, 0, u, so3.scale(g1, f1))
            _put(bm, 1, u, so3.scale(g2, f2))
            _put(bm, 2, u, so3.add(so3.scale(g1, f2), so3.scale(g2, f1)))
            _put(bm, 3, u, so3.scale(g1, t1))
            _put(bm, 4, u, so3.scale(g2, t2))
            _put(bm, 5, u, so3.add(so3.scale(g1, t2), so3.scale(g2, t1)))
            _put(bm, 3, r, so3.cross(d3, so3.scale(g1, f1)))
            _put(bm, 4, r, so3.cross(d3, so3.scale(g2, f2)))
            _put(bm, 5, r, so3.cross(d3, so3.add(so3.scale(g1, f2), so3.scale(g2, f1))))
            for i in range(2):
                du = (0.0, 0.0, 0.0)
                dd = (0.0, 0.0, 0.0)
                for k in range(4):
                    cx = sm[e, s, i, k] * TIE_DX[typ, k, b]
                    ct = sm[e, s, i, k] * TIE_T[typ, k, b]
                    du = _comb(1.0, du, cx, so3.vec_at(tv, k))
                    dd = _comb(1.0, dd, ct, so3.vec_at(ph, k))
                _put(bm, 6 + i, u, du)
                _put(bm, 6 + i, r, so3.cross(d3, dd))
        if bq is not None:
            for i in range(8):
                for j in range(n6):
                    bq[s, i, j] = bm[i, j]
        # C B_q with C = diag(A, D, S)
        for j in range(n6):
            for i in range(3):
                cb[i, j] = (
                    pl.a_mat[e, i, 0] * bm[0, j]
                    + pl.a_mat[e, i, 1] * bm[1, j]
                    + pl.a_mat[e, i, 2] * bm[2, j]
                )
                cb[3 + i, j] = (
                    pl.d_mat[e, i, 0] * bm[3, j]
                    + pl.d_mat[e, i, 1] * bm[4, j]
                    + pl.d_mat[e, i, 2] * bm[5, j]
                )
            for i in range(2):
                cb[6 + i, j] = pl.s_mat[e, i, 0] * bm[6, j] + pl.s_mat[e, i, 1] * bm[7, j]
        if rn is None:
            for i in range(n6):
                for j in range(n6):
                    acc = 0.0
                    for r in range(8):
                        acc += bm[r, i] * cb[r, j]
                    kel[i, j] += w * acc
        # geometric coefficients: membrane x-x, bending x-d3 (d2 eps, d2 kappa by the nodes)
        v1 = _comb(w * m[0], f1, w * m[2], f2)  # dU/dt_1, dU/dt_2 (as in _element)
        v2 = _comb(w * m[1], f2, w * m[2], f1)
        for b in range(nb):
            g1b = pl.dn[e, s, b, 0]
            g2b = pl.dn[e, s, b, 1]
            for i in range(3):
                gt[b, i] += g1b * v1[i] + g2b * v2[i]
            for d in range(nb):
                g1d = pl.dn[e, s, d, 0]
                g2d = pl.dn[e, s, d, 1]
                mix = g1b * g2d + g2b * g1d
                cc[0, b, d] += w * (n[0] * g1b * g1d + n[1] * g2b * g2d + n[2] * mix)
                cc[1, b, d] += w * (m[0] * g1b * g1d + m[1] * g2b * g2d + m[2] * mix)
        dg = (
            dg[0] + w * (q1 * sm[e, s, 0, 0] + q2 * sm[e, s, 1, 0]),
            dg[1] + w * (q1 * sm[e, s, 0, 1] + q2 * sm[e, s, 1, 1]),
            dg[2] + w * (q1 * sm[e, s, 0, 2] + q2 * sm[e, s, 1, 2]),
            dg[3] + w * (q1 * sm[e, s, 0, 3] + q2 * sm[e, s, 1, 3]),
        )
    # tied shear g_k = p_k . t_k: x_b-d3_d coefficient dg_k TIE_DX_kb TIE_T_kd, dU/dd3 += dg p_k
    for k in range(4):
        for b in range(nb):
            for i in range(3):
                gt[b, i] += dg[k] * TIE_T[typ, k, b] * ph[k, i]
            for d in range(nb):
                cc[1, b, d] += dg[k] * TIE_DX[typ, k, b] * TIE_T[typ, k, d]
    for b in range(nb):
        for d in range(nb):
            for i in range(3):
                kel[6 * b + i, 6 * d + i] += cc[0, b, d]
            # dd3_d = -hat(d3_d) theta_d: K[u_b, th_d] = -c hat(d3_d), K[th_d, u_b] = its transpose
            d3 = _col(rot, pl.conn[e, d], 2)
            _add_hat(kel, 6 * b, 6 * d + 3, d3, -cc[1, b, d])
            _add_hat(kel, 6 * d + 3, 6 * b, d3, cc[1, b, d])
        _add_director(
            kel, 6 * b + 3, _col(rot, pl.conn[e, b], 2), (gt[b, 0], gt[b, 1], gt[b, 2]), 1.0
        )
    # drilling w_c = d2_c . p1 - d1_c . p2: rank-one material part, x-d1 and x-d2 geometric
    # part, and the director term of tau_c = -(d1 x dU/dd1 + d2 x dU/dd2)
    for c in range(nb):
        kd = pl.kd[e, c]
        if bd is not None:
            for j in range(n6):
                bd[c, j] = 0.0
        if kd == 0.0:
            continue
        wd, p1, p2 = _drill(pl, e, c, x, rot, nb)
        r = kd * wd if rr is None else rr[e, c]
        a = pl.conn[e, c]
        d1 = _col(rot, a, 0)
        d2 = _col(rot, a, 1)
        bdr = bm[0]  # scratch: B_q is spent
        bdr[:n6] = 0.0
        for b in range(nb):
            v = so3.sub(so3.scale(pl.dnn[e, c, b, 0], d2), so3.scale(pl.dnn[e, c, b, 1], d1))
            for i in range(3):
                bdr[6 * b + i] = v[i]
            _add_hat(kel, 6 * b, 6 * c + 3, v, -r)
            _add_hat(kel, 6 * c + 3, 6 * b, v, r)
        rc = so3.sub(so3.cross(d2, p1), so3.cross(d1, p2))
        for i in range(3):
            bdr[6 * c + 3 + i] = rc[i]
        if rr is None:
            for i in range(n6):
                for j in range(n6):
                    kel[i, j] += kd * bdr[i] * bdr[j]
        if bd is not None:
            for j in range(n6):
                bd[c, j] = bdr[j]
        _add_director(kel, 6 * c + 3, d2, p1, r)
        _add_director(kel, 6 * c + 3, d1, p2, -r)
    return nb


@kernel
def add_plate_tangents(pl, x, rot, slots, k):
    """Add every plate element's spatial tangent blocks to k (B,6,6) float64 in place:
    k[slots[e, i, j]] += K_e[6i:6i+6, 6j:6j+6] (K_e of plate_element_tangent); x (N,3), rot
    (N,3,3) float64, slots (P,4,4) int64 (plate_slots; -1 skips)."""
    kel = np.zeros((24, 24))
    bm = np.zeros((8, 24))
    cb = np.zeros((8, 24))
    gt = np.zeros((4, 3))
    cc = np.zeros((2, 4, 4))
    tie = np.zeros((2, 4, 3))
    for e in range(pl.conn.shape[0]):
        nb = plate_element_tangent(pl, e, x, rot, kel, bm, cb, gt, cc, tie)
        for i in range(nb):
            for j in range(nb):
                blk = slots[e, i, j]
                if blk < 0:
                    continue
                for r in range(6):
                    for s in range(6):
                        k[blk, r, s] += kel[6 * i + r, 6 * j + s]


@kernel
def add_plate_damping_tangents(pl, xb, rb, x1, r1, res, rate, slots, kbar, k1):
    """The blocks of the plates' implicit strain-rate damping forces (plates' step_damping:
    the viscous resultants res (n, m, q, r of plate_viscous.viscous_resultants, beta C times
    the strain increment over dt) through the map at the midpoint (xb, rb)): F = -Bbar^T r,

        -dF = G(g_bar; r) dq_bar + (sum_q w_q Bbar_q^T rate C B1_q
                                    + sum_c rate kd_c bbar_c b1_c^T) dq_1,

    rate = beta / dt, B1, b1 the strain maps at the end (x1, r1). G into kbar, the rest into
    k1, both (B,6,6) at slots (P,4,4) (plate_slots; -1 skips)."""
    kel = np.zeros((24, 24))
    k1e = np.zeros((24, 24))
    bm = np.zeros((8, 24))
    cb = np.zeros((8, 24))
    gt = np.zeros((4, 3))
    cc = np.zeros((2, 4, 4))
    tie = np.zeros((2, 4, 3))
    bqb = np.zeros((4, 8, 24))
    bq1 = np.zeros((4, 8, 24))
    bdb = np.zeros((4, 24))
    bd1 = np.zeros((4, 24))
    rn, rm, rq, rr = res.n, res.m, res.q, res.r
    for e in range(pl.conn.shape[0]):
        plate_element_at(pl, e, x1, r1, rn, rm, rq, rr, kel, bm, cb, gt, cc, tie, bq1, bd1)
        nb = plate_element_at(pl, e, xb, rb, rn, rm, rq, rr, kel, bm, cb, gt, cc, tie, bqb, bdb)
        n6 = 6 * nb
        for i in range(n6):
            for j in range(n6):
                k1e[i, j] = 0.0
        for s in range(nb):
            w = pl.weight[e, s] * rate
            for j in range(n6):  # cb = C B1_q
                for i in range(3):
                    cb[i, j] = (
                        pl.a_mat[e, i, 0] * bq1[s, 0, j]
                        + pl.a_mat[e, i, 1] * bq1[s, 1, j]
                        + pl.a_mat[e, i, 2] * bq1[s, 2, j]
                    )
                    cb[3 + i, j] = (
                        pl.d_mat[e, i, 0] * bq1[s, 3, j]
                        + pl.d_mat[e, i, 1] * bq1[s, 4, j]
                        + pl.d_mat[e, i, 2] * bq1[s, 5, j]
                    )
                for i in range(2):
                    cb[6 + i, j] = (
                        pl.s_mat[e, i, 0] * bq1[s, 6, j] + pl.s_mat[e, i, 1] * bq1[s, 7, j]
                    )
            for i in range(n6):
                for j in range(n6):
                    acc = 0.0
                    for r in range(8):
                        acc += bqb[s, r, i] * cb[r, j]
                    k1e[i, j] += w * acc
        for c in range(nb):
            kd = rate * pl.kd[e, c]
            for i in range(n6):
                for j in range(n6):
                    k1e[i, j] += kd * bdb[c, i] * bd1[c, j]
        for i in range(nb):
            for j in range(nb):
                blk = slots[e, i, j]
                if blk < 0:
                    continue
                for r in range(6):
                    for q in range(6):
                        kbar[blk, r, q] += kel[6 * i + r, 6 * j + q]
                        k1[blk, r, q] += k1e[6 * i + r, 6 * j + q]


def plate_slots(pl, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """slots (P,4,4) int64 for add_plate_tangents: the BSR block index of (conn[e, i],
    conn[e, j]) in the pattern (block rows = nodes, indptr (N+1,), sorted indices), -1 in a
    triangle's slot 3 row and column."""
    conn = np.asarray(pl.conn, dtype=np.int64)
    node = np.where(np.arange(4)[None, :] < pl.n_nodes_el[:, None], conn, -1)
    rows = np.broadcast_to(node[:, :, None], node.shape + (4,))
    cols = np.broadcast_to(node[:, None, :], node.shape[:1] + (4, 4))
    return block_index(indptr, indices, rows, cols)
