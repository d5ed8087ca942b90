"""Analytic spatial tangent stiffness of the two-node rod element (issue 36).

Convention (notes36.md §0, docs/theory.md "Conventions"): node increments are spatial,
delta x_a = u_a and delta Lambda_a = hat(theta_a) Lambda_a, and the element block is

    K_ab = -d(f_a, tau_a)/d(u_b, theta_b)          (6x6; rows force then moment of node a)

with (f, tau) exactly the forces and moments of rodsim.model.rod._element (written by
assemble_forces). The element's 12x12 K is ordered (u1, theta1, u2, theta2).

Derivation (notes36.md §3; docs/theory.md "Rod model and its discrete energy"). Everything is
computed in the frame of the element's first end, Lambda_1 (the node frame times the constant
offset Q_e1, whose spatial variation is that of the node). With phi_1 = Lambda_1^T theta_1,
phi = Lambda_1^T (theta_2 - theta_1), dd = Lambda_1^T d, d = x2 - x1, E = exp(psi/2):

    delta psi = jl^{-1}(psi) phi,           W = 1/2 jl(psi/2) delta psi
    delta dd  = Lambda_1^T (u2 - u1) + dd x phi_1
    delta Gamma = E^T (delta dd + dd x W)/h,   delta Omega = delta psi / h      (= B delta q)

and the forces of _element are f1 = -f2 = Lambda_1 n1, tau2 = Lambda_1 z, tau1 = d x n - tau2,
n1 = E n_mat, a = dd x n1, u = 1/2 jl^T(psi/2) a - m_mat, z = jl^{-T}(psi) u, which is
-h B^T (n_mat, m_mat). Hence K = h B^T C B (material, C = diag(C1, C2)) + G, where G is minus
the variation at fixed resultants:

    delta n1 = W x n1,   delta a = delta dd x n1 + dd x delta n1,
    delta u  = 1/2 jl^T(psi/2) delta a + 1/2 D_v[jl^T(v) a]|_{v = psi/2} delta psi / 2,
    delta z  = jl^{-T}(psi) delta u + D_psi[jl^{-T}(psi) u] delta psi,

plus the rotation of the results by Lambda_1 (Lambda_1^T delta(Lambda_1 y) = phi_1 x y + delta y).
The D terms are rodsim.lie.so3_tangent. Away from equilibrium K is not symmetric: its
antisymmetric part is hat(tau_a) on each node's theta-theta block (the bracket of two left
perturbations of one rotation; tests/test_rod_tangent.py), zero elsewhere.

Units: force/length for the u-u blocks, force for u-theta and theta-u, force x length for
theta-theta. Arrays: x (N,3), rot (N,3,3), quat (N,4) as in rodsim.model.rod; k (B,6,6) the
blocks of a BSR matrix whose block rows are nodes.
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3, so3_tangent
from rodsim.model.rod import relative_data, relative_quaternion
from rodsim.model.tangent_blocks import block_index

# slices of the (12,) element vector: (u1, theta1, u2, theta2)
_U1, _T1, _U2, _T2 = 0, 3, 6, 9


@kernel(inline="always")
def _put(dst, col, m, s):
    """dst[:, col:col+3] = s m (m a row-major 9-tuple)."""
    for i in range(3):
        for j in range(3):
            dst[i, col + j] = s * m[3 * i + j]


@kernel
def _mul(m, src, dst, s, add):
    """dst (+)= s m @ src for (3,12) arrays; m a 9-tuple."""
    for j in range(12):
        y0 = s * (m[0] * src[0, j] + m[1] * src[1, j] + m[2] * src[2, j])
        y1 = s * (m[3] * src[0, j] + m[4] * src[1, j] + m[5] * src[2, j])
        y2 = s * (m[6] * src[0, j] + m[7] * src[1, j] + m[8] * src[2, j])
        if add:
            dst[0, j] += y0
            dst[1, j] += y1
            dst[2, j] += y2
        else:
            dst[0, j] = y0
            dst[1, j] = y1
            dst[2, j] = y2


@kernel(inline="always")
def _rows(ke, row, src, s):
    """ke[row:row+3, :] += s src (src (3,12))."""
    for i in range(3):
        for j in range(12):
            ke[row + i, j] += s * src[i, j]


@kernel(inline="always")
def _add_hat(ke, row, col, v):
    """ke[row:row+3, col:col+3] += hat(v)."""
    ke[row, col + 1] -= v[2]
    ke[row, col + 2] += v[1]
    ke[row + 1, col] += v[2]
    ke[row + 1, col + 2] -= v[0]
    ke[row + 2, col] -= v[1]
    ke[row + 2, col + 1] += v[0]


@kernel(inline="always")
def _material(ke, bm, h, c1, c2):
    """ke = h B^T diag(c1, c2) B for bm = B (6,12)."""
    for i in range(12):
        for j in range(i, 12):
            sij = 0.0
            for r in range(3):
                sij += c1[r] * bm[r, i] * bm[r, j] + c2[r] * bm[3 + r, i] * bm[3 + r, j]
            ke[i, j] = h * sij
            ke[j, i] = h * sij


@kernel(inline="always")
def _to_spatial(ke, bm, r1):
    """From the frame of end 1 to spatial components: ke_IJ <- Lambda_1 ke_IJ Lambda_1^T for
    the 3x3 blocks of ke (12,12), bm_J <- bm_J Lambda_1^T for those of bm (6,12)."""
    for bi in range(4):
        for bj in range(4):
            blk = (
                ke[3 * bi, 3 * bj], ke[3 * bi, 3 * bj + 1], ke[3 * bi, 3 * bj + 2],
                ke[3 * bi + 1, 3 * bj], ke[3 * bi + 1, 3 * bj + 1], ke[3 * bi + 1, 3 * bj + 2],
                ke[3 * bi + 2, 3 * bj], ke[3 * bi + 2, 3 * bj + 1], ke[3 * bi + 2, 3 * bj + 2],
            )  # fmt: skip
            out = so3.matmulT(so3.matmul(r1, blk), r1)
            for i in range(3):
                for j in range(3):
                    ke[3 * bi + i, 3 * bj + j] = out[3 * i + j]
    for bj in range(4):
        for i in range(6):
            y = so3.matvec(r1, (bm[i, 3 * bj], bm[i, 3 * bj + 1], bm[i, 3 * bj + 2]))
            for j in range(3):
                bm[i, 3 * bj + j] = y[j]


@kernel
def element_tangent(x1, x2, r1, q, h, c1, c2, g0, w0, ke, bm, work):
    """Tangent stiffness ke (12,12) of one element, order (u1, theta1, u2, theta2), spatial
    increments, K = -d(f1, tau1, f2, tau2)/d(u1, theta1, u2, theta2) = h B^T C B + G (module
    docstring; notes36.md §3), and its strain map bm (6,12) = d(Gamma, Omega)/d(u, theta)
    (section-frame strains per spatial increment, 1/length and 1).

    Inputs as rodsim.model.rod._element: x1, x2 (3,) positions, r1 row-major 9-tuple end frame
    Lambda_1 (with its offset), q = (w, x, y, z) the quaternion of Lambda_1^T Lambda_2 with
    w >= 0 (relative_quaternion), h reference length, c1 = (EA, GA2, GA3), c2 = (GJ, EI2, EI3),
    g0, w0 reference strains (3,). work (8,3,12) float64 scratch. Returns (n_mat, m_mat), the
    section resultants at which G is evaluated.
    """
    qv, s, half, inv_s, psi, k = relative_data(q)
    dd = so3.matTvec(r1, so3.sub(x2, x1))
    e_half = so3._sym_rot(q[0], 1.0, k, qv)
    ld = so3.matTvec(e_half, dd)
    inv_h = 1.0 / h
    # strains exactly as _element (reference strains subtracted)
    gamma = (ld[0] * inv_h - 1.0 - g0[0], ld[1] * inv_h - g0[1], ld[2] * inv_h - g0[2])
    omega = (psi[0] * inv_h - w0[0], psi[1] * inv_h - w0[1], psi[2] * inv_h - w0[2])
    n_mat = (c1[0] * gamma[0], c1[1] * gamma[1], c1[2] * gamma[2])
    m_mat = (c2[0] * omega[0], c2[1] * omega[1], c2[2] * omega[2])
    element_at(x1, x2, r1, q, h, c1, c2, n_mat, m_mat, True, ke, bm, work)
    return n_mat, m_mat


@kernel
def element_at(x1, x2, r1, q, h, c1, c2, n_mat, m_mat, material, ke, bm, work):
    """ke (12,12) = [h B^T C B if material] + G(n_mat, m_mat), spatial increments, order (u1,
    theta1, u2, theta2), and the strain map bm (6,12) (spatial columns) of one element at the
    configuration (x1, x2, r1, q) (as element_tangent), with the geometric part G evaluated at
    the given section resultants n_mat, m_mat (3,) (element_tangent: the elastic ones C eps;
    the implicit damping: the viscous ones). material False: ke = G only (c1, c2 unread)."""
    qv, s, half, inv_s, psi, k = relative_data(q)
    d = so3.sub(x2, x1)
    dd = so3.matTvec(r1, d)
    # exp(psi/2) = I + hat qv + k hat qv^2 = w I + hat qv + k qv qv^T (|qv|^2 k = 1 - w)
    e_half = so3._sym_rot(q[0], 1.0, k, qv)
    inv_h = 1.0 / h
    n1 = so3.matvec(e_half, n_mat)
    a = so3.cross(dd, n1)
    v = (0.5 * psi[0], 0.5 * psi[1], 0.5 * psi[2])
    jh = so3_tangent.jl_matrix(v)
    jh_t = so3.transpose(jh)
    jinv = so3_tangent.jl_inv_matrix(psi)
    jinv_t = so3.transpose(jinv)
    ja = so3.matvec(jh_t, a)
    u = (0.5 * ja[0] - m_mat[0], 0.5 * ja[1] - m_mat[1], 0.5 * ja[2] - m_mat[2])
    z = so3.matvec(jinv_t, u)

    dpsi, dw, ddd, dn1, da, du, dz, tmp = (
        work[0], work[1], work[2], work[3], work[4], work[5], work[6], work[7]
    )  # fmt: skip
    eye = so3.identity()
    for i in range(3):  # explicit loops: a slice assignment costs ~1 s of compile each
        for j in range(12):
            dpsi[i, j] = 0.0
            ddd[i, j] = 0.0
    _put(dpsi, _T1, jinv, -1.0)  # delta psi = jl^{-1}(psi) (phi_2 - phi_1)
    _put(dpsi, _T2, jinv, 1.0)
    _mul(jh, dpsi, dw, 0.5, False)  # W = 1/2 jl(psi/2) delta psi
    _put(ddd, _U1, eye, -1.0)  # delta dd = (u2 - u1) + dd x phi_1
    _put(ddd, _T1, so3.hat(dd), 1.0)
    _put(ddd, _U2, eye, 1.0)
    # strain map, in the frame of end 1: B_Gamma = E^T (delta dd + dd x W)/h, B_Omega = dpsi/h
    _mul(so3.hat(dd), dw, tmp, 1.0, False)
    _rows(tmp, 0, ddd, 1.0)
    _mul(so3.transpose(e_half), tmp, tmp, inv_h, False)
    for j in range(12):
        for i in range(3):
            bm[i, j] = tmp[i, j]
            bm[3 + i, j] = dpsi[i, j] * inv_h
    if material:
        _material(ke, bm, h, c1, c2)  # h B^T C B
    else:
        for i in range(12):
            for j in range(12):
                ke[i, j] = 0.0
    # geometric part: the variations of the force chain at fixed n_mat, m_mat
    hn1 = so3.hat(n1)
    _mul(hn1, dw, dn1, -1.0, False)  # W x n1
    _mul(hn1, ddd, da, -1.0, False)  # delta dd x n1 + dd x delta n1
    _mul(so3.hat(dd), dn1, da, 1.0, True)
    _mul(jh_t, da, du, 0.5, False)
    _mul(so3_tangent.d_jlT_apply(v, a), dpsi, du, 0.25, True)
    _mul(jinv_t, du, dz, 1.0, False)
    _mul(so3_tangent.d_jl_inv_apply(psi, u, 1.0), dpsi, dz, 1.0, True)
    # K rows = -(Lambda_1^T delta(f1, tau1, f2, tau2)); the rotation of each result by
    # Lambda_1 adds phi_1 x y, i.e. -hat(y) on the theta_1 columns (hence +hat(y) in K)
    _rows(ke, _U1, dn1, -1.0)
    _add_hat(ke, _U1, _T1, n1)
    _rows(ke, _T1, da, -1.0)
    _rows(ke, _T1, dz, 1.0)
    _add_hat(ke, _T1, _T1, so3.sub(a, z))
    _rows(ke, _U2, dn1, 1.0)
    _add_hat(ke, _U2, _T1, (-n1[0], -n1[1], -n1[2]))
    _rows(ke, _T2, dz, -1.0)
    _add_hat(ke, _T2, _T1, z)
    _to_spatial(ke, bm, r1)


@kernel
def add_rod_tangents(el, x, rot, quat, slots, k):
    """Add every element's tangent blocks to k (B,6,6): k[slots[e, i, j]] += K_e block (node
    conn[e, i] row, node conn[e, j] column). el RodElements, x (N,3), rot (N,3,3), quat (N,4)
    the nodal quaternions of rot (rodsim.model.rod.node_quaternions), slots (E,2,2) int64
    (rod_slots). The end frames and relative quaternion are those of assemble_forces."""
    ke = np.empty((12, 12))
    bm = np.empty((6, 12))
    work = np.empty((8, 3, 12))
    conn = el.conn
    for e in range(conn.shape[0]):
        i = conn[e, 0]
        j = conn[e, 1]
        qi = so3.quat_at(quat, i)
        qj = so3.quat_at(quat, j)
        r1 = so3.mat_at(rot, i)
        if el.has_offset[e]:  # the element's section frames Lambda_a Q_ea (RodElements)
            qi = so3.quat_mul(qi, so3.quat_at(el.offset_q[e], 0))
            qj = so3.quat_mul(qj, so3.quat_at(el.offset_q[e], 1))
            r1 = so3.matmul(r1, so3.mat_at(el.offset[e], 0))
        element_tangent(
            so3.vec_at(x, i),
            so3.vec_at(x, j),
            r1,
            relative_quaternion(qi, qj),
            el.length[e],
            so3.vec_at(el.c1, e),
            so3.vec_at(el.c2, e),
            so3.vec_at(el.gamma0, e),
            so3.vec_at(el.omega0, e),
            ke,
            bm,
            work,
        )
        for a in range(2):
            for b in range(2):
                blk = slots[e, a, b]
                for r in range(6):
                    for c in range(6):
                        k[blk, r, c] += ke[6 * a + r, 6 * b + c]


def rod_slots(el, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """slots (E,2,2) int64 for add_rod_tangents: the block index of (conn[e,i], conn[e,j])."""
    rows = np.repeat(el.conn[:, :, None], 2, axis=2)
    cols = np.repeat(el.conn[:, None, :], 2, axis=1)
    return block_index(indptr, indices, rows, cols).reshape(-1, 2, 2)


@kernel(inline="always")
def _element_frames(el, e, x, rot, quat):
    """(x1, x2, r1, q) of element e as add_rod_tangents reads them (offsets applied)."""
    i = el.conn[e, 0]
    j = el.conn[e, 1]
    qi = so3.quat_at(quat, i)
    qj = so3.quat_at(quat, j)
    r1 = so3.mat_at(rot, i)
    if el.has_offset[e]:
        qi = so3.quat_mul(qi, so3.quat_at(el.offset_q[e], 0))
        qj = so3.quat_mul(qj, so3.quat_at(el.offset_q[e], 1))
        r1 = so3.matmul(r1, so3.mat_at(el.offset[e], 0))
    return so3.vec_at(x, i), so3.vec_at(x, j), r1, relative_quaternion(qi, qj)


@kernel
def add_rod_damping_tangents(el, xb, rb, qb, x1, r1, q1, n_vis, m_vis, rate, slots, kbar, k1):
    """The blocks of the implicit scheme's strain-rate damping forces (rodsim.model.rod_viscous;
    docs/implicit_scheme.md "Newton Jacobian"). Element e's force is F = -h_e Bbar^T r with
    Bbar its strain map at the midpoint g_bar = (xb, rb, qb) and the viscous resultants
    r = (n_vis, m_vis) (E,3) = rate C (eps(g_k+1) - eps(g_k)), rate = beta / dt, so

        -dF = G(g_bar; r) dq_bar + h_e Bbar^T rate C B_1 dq_1,

    dq_bar, dq_1 the spatial increments of g_bar and g_k+1 = (x1, r1, q1), B_1 the strain map
    there. Adds G into kbar and h_e rate Bbar^T C B_1 into k1, both (B,6,6) at slots (E,2,2)
    (rod_slots; block (conn[e,a], conn[e,b])). Arrays: positions (N,3), rotations (N,3,3),
    quaternions (N,4) float64."""
    ke = np.empty((12, 12))
    bb = np.empty((6, 12))
    b1 = np.empty((6, 12))
    k1e = np.empty((12, 12))
    work = np.empty((8, 3, 12))
    zero = (0.0, 0.0, 0.0)
    for e in range(el.conn.shape[0]):
        c1 = so3.vec_at(el.c1, e)
        c2 = so3.vec_at(el.c2, e)
        ya, yb, fr, q = _element_frames(el, e, x1, r1, q1)
        element_at(ya, yb, fr, q, el.length[e], c1, c2, zero, zero, False, ke, b1, work)
        ya, yb, fr, q = _element_frames(el, e, xb, rb, qb)
        nv = so3.vec_at(n_vis, e)
        mv = so3.vec_at(m_vis, e)
        element_at(ya, yb, fr, q, el.length[e], c1, c2, nv, mv, False, ke, bb, work)
        s = el.length[e] * rate
        for i in range(12):
            for j in range(12):
                sij = 0.0
                for r in range(3):
                    sij += c1[r] * bb[r, i] * b1[r, j] + c2[r] * bb[3 + r, i] * b1[3 + r, j]
                k1e[i, j] = s * sij
        for a in range(2):
            for b in range(2):
                blk = slots[e, a, b]
                for r in range(6):
                    for c in range(6):
                        kbar[blk, r, c] += ke[6 * a + r, 6 * b + c]
                        k1[blk, r, c] += k1e[6 * a + r, 6 * b + c]
