"""Analytic spatial tangent stiffness of the connectors (issue 36, notes36.md §4).

Linearises rodsim.model.connectors.connector_forces exactly (docs/connectors.md, "Measures and
forces"; the module docstring of rodsim.model.connectors). Convention (docs/theory.md,
"Conventions"): spatial increments delta x_a = u_a, delta Lambda_a = hat(theta_a) Lambda_a, and
per connector the 12x12 matrix, order (u_a, theta_a, u_b, theta_b),

    K = -d(f_a, tau_a, f_b, tau_b)/d(u_a, theta_a, u_b, theta_b),

whose 6x6 blocks K_ab (rows force then moment of the row node) go to the Jacobian's blocks of
the node pairs (a, a), (a, b), (b, a), (b, b).

Translational tangent Kt' = diag(kt'), per direction of the frame: the spring's k; the plastic
kind's consistent tangent of the return mapping (connectors._return_map) from the committed
state (s_n, alpha_n): k on the elastic branch (|k (u - s_n)| <= F_y + H alpha_n, the branch
the forces take on real parts) and k H / (k + H) on the yielding one.

Node frame (docs/connectors.md: u = Lambda_a^T d - d0, psi = log(Lambda_a^T Lambda_b C),
N = Lambda_a n, f_a = -f_b = N, tau_a = d x N + z, tau_b = -z, z = Lambda_a y,
y = jl^{-T}(psi) m, m = K_r psi). In node a's frame (primes: Lambda_a^T times the spatial
increment; dd = Lambda_a^T d):

    delta u   = (u_b' - u_a') + hat(dd) theta_a'
    delta psi = jl^{-1}(psi) (theta_b' - theta_a')
    Lambda_a^T delta f_a = Kt' delta u - hat(n) theta_a'
    Lambda_a^T delta z   = A delta psi - hat(y) theta_a',   A = jl^{-T}(psi) K_r
                                                              + D_psi[jl^{-T}(psi) m]
    Lambda_a^T delta tau_a = hat(n) (u_a' - u_b') + hat(dd) Lambda_a^T delta f_a
                             + Lambda_a^T delta z

(the -hat(.) theta_a' terms: the rotation of n and y by Lambda_a), and each 3x3 block turns to
spatial components as K_IJ = Lambda_a K'_IJ Lambda_a^T.

Global frame (u = d - d0, psi_g = Lambda_a psi = log(R_b R_a^T), f_a = -f_b = n,
tau_a = w - psi_g x m, tau_b = -w, w = jl^{-T}(psi_g) m, m = K_r psi_g), spatial throughout:

    delta u     = u_b - u_a
    delta psi_g = theta_a x psi_g + jl^{-1}(psi_g) (theta_b - theta_a)
    delta w     = A delta psi_g,   A = jl^{-T}(psi_g) K_r + D_psi[jl^{-T}(psi_g) m]
    delta tau_a = (A + hat(m) - hat(psi_g) K_r) delta psi_g

Axial kinds (cable, strut), engaged (l > L0, l < L0): f_a = -f_b = T e, T = k (l - L0),
e = d / l, so with S = k e e^T + (T/l)(I - e e^T) the translation blocks are K_aa = K_bb = S,
K_ab = K_ba = -S; rotations do not enter. Slack: 0 (the forces take the same branch).

D_psi are rodsim.lie.so3_tangent's (accurate at every angle below 2 pi). Units: force/length
(u-u), force (u-theta, theta-u), force x length (theta-theta). Arrays: x (N,3), rot (N,3,3),
quat (N,4) the node quaternions of rot, k (B,6,6) the blocks of a BSR matrix whose block rows
are nodes.
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3, so3_tangent
from rodsim.model import connectors as mc
from rodsim.model.tangent_blocks import block_index

# column/row offsets of the (12,) connector vector (u_a, theta_a, u_b, theta_b)
_UA, _TA, _UB, _TB = 0, 3, 6, 9


@kernel(inline="always")
def _add(ke, row, col, m, s):
    """ke[row:row+3, col:col+3] += s m (m a row-major 9-tuple)."""
    for i in range(3):
        for j in range(3):
            ke[row + i, col + j] += s * m[3 * i + j]


@kernel
def _add_turned(ke, row, col, ra, m, s):
    """ke[row:row+3, col:col+3] += s Lambda_a m Lambda_a^T (node a's frame to spatial)."""
    _add(ke, row, col, so3.matmulT(so3.matmul(ra, m), ra), s)


@kernel(inline="always")
def _diag_mul(dg, m):
    """diag(dg) m (9-tuple)."""
    return (
        dg[0] * m[0], dg[0] * m[1], dg[0] * m[2],
        dg[1] * m[3], dg[1] * m[4], dg[1] * m[5],
        dg[2] * m[6], dg[2] * m[7], dg[2] * m[8],
    )  # fmt: skip


@kernel(inline="always")
def _mul_diag(m, dg):
    """m diag(dg) (9-tuple)."""
    return (
        m[0] * dg[0], m[1] * dg[1], m[2] * dg[2],
        m[3] * dg[0], m[4] * dg[1], m[5] * dg[2],
        m[6] * dg[0], m[7] * dg[1], m[8] * dg[2],
    )  # fmt: skip


@kernel(inline="always")
def _plastic_slope(k, hard, fy, s_n, alpha_n, u):
    """dn/du of one direction of the plastic kind: the branch of connectors._return_map."""
    ntr = k * (u - s_n)
    if not abs(ntr) > fy + hard * alpha_n:
        return k
    return k * hard / (k + hard)


@kernel(inline="always")
def _slopes(cn, state, i, u):
    """Kt' (3,) of connector i at measure u: k_t, or the plastic kind's consistent tangent."""
    if cn.kind[i] != mc.PLASTIC:
        return (cn.k_t[i, 0], cn.k_t[i, 1], cn.k_t[i, 2])
    return (
        _plastic_slope(cn.k_t[i, 0], cn.hardening[i, 0], cn.yield_force[i, 0],
                       state.slip[i, 0], state.alpha[i, 0], u[0]),
        _plastic_slope(cn.k_t[i, 1], cn.hardening[i, 1], cn.yield_force[i, 1],
                       state.slip[i, 1], state.alpha[i, 1], u[1]),
        _plastic_slope(cn.k_t[i, 2], cn.hardening[i, 2], cn.yield_force[i, 2],
                       state.slip[i, 2], state.alpha[i, 2], u[2]),
    )  # fmt: skip


@kernel(inline="always")
def _eye_times(c):
    """c I (9-tuple)."""
    return (c, 0.0, 0.0, 0.0, c, 0.0, 0.0, 0.0, c)


@kernel
def _axial_tangent(cn, i, x, ke):
    """Add to ke (12,12) the blocks of axial connector i: S = k e e^T + (T/l)(I - e e^T) on
    (a,a), (b,b) and -S on (a,b), (b,a) when engaged (module docstring); nothing when slack."""
    stretch, e, engaged = mc._axial(cn, i, x)
    if not engaged:
        return
    d = so3.sub(so3.vec_at(x, cn.b[i]), so3.vec_at(x, cn.a[i]))
    k = cn.k_t[i, 0]
    t_l = k * stretch / so3.norm(d)
    s = so3.mat_axpy(k - t_l, so3.outer(e, e), _eye_times(t_l))
    _add(ke, _UA, _UA, s, 1.0)
    _add(ke, _UA, _UB, s, -1.0)
    _add(ke, _UB, _UA, s, -1.0)
    _add(ke, _UB, _UB, s, 1.0)


@kernel
def _node_tangent(kt, kr, n, m, psi, d, ra, ke):
    """Add to ke (12,12) the blocks of a spring or plastic connector in node a's frame: the
    measures' tangent Kt' = diag(kt) (3,), K_r = diag(kr), resultants n, m (frame components),
    psi, chord d (spatial), ra = Lambda_a (9-tuple). Computed in node a's frame and turned to
    spatial components, K_IJ = Lambda_a K'_IJ Lambda_a^T (module docstring)."""
    dd = so3.matTvec(ra, d)
    hdd = so3.hat(dd)
    hn = so3.hat(n)
    jinv = so3_tangent.jl_inv_matrix(psi)
    jinv_t = so3.transpose(jinv)
    y = so3.matvec(jinv_t, m)
    amat = so3.mat_axpy(1.0, _mul_diag(jinv_t, kr), so3_tangent.d_jl_inv_apply(psi, m, 1.0))
    aj = so3.matmul(amat, jinv)  # A jl^{-1}: delta z' per (theta_b' - theta_a')
    ktm = (kt[0], 0.0, 0.0, 0.0, kt[1], 0.0, 0.0, 0.0, kt[2])
    # Lambda_a^T delta f_a by column block: (-Kt', Kt' hat(dd) - hat(n), Kt', 0)
    df_ua = (-kt[0], 0.0, 0.0, 0.0, -kt[1], 0.0, 0.0, 0.0, -kt[2])
    df_ta = so3.mat_axpy(-1.0, hn, _diag_mul(kt, hdd))
    # Lambda_a^T delta z: (0, -A jl^{-1} - hat(y), 0, A jl^{-1})
    dz_ta = so3.mat_axpy(-1.0, aj, so3.hat((-y[0], -y[1], -y[2])))
    # Lambda_a^T delta tau_a = hat(n) (u_a' - u_b') + hat(dd) delta f_a' + delta z'
    dt_ua = so3.mat_axpy(1.0, hn, so3.matmul(hdd, df_ua))
    dt_ta = so3.mat_axpy(1.0, so3.matmul(hdd, df_ta), dz_ta)
    dt_ub = so3.mat_axpy(-1.0, hn, so3.matmul(hdd, ktm))
    _add_turned(ke, _UA, _UA, ra, df_ua, -1.0)
    _add_turned(ke, _UA, _TA, ra, df_ta, -1.0)
    _add_turned(ke, _UA, _UB, ra, ktm, -1.0)
    _add_turned(ke, _TA, _UA, ra, dt_ua, -1.0)
    _add_turned(ke, _TA, _TA, ra, dt_ta, -1.0)
    _add_turned(ke, _TA, _UB, ra, dt_ub, -1.0)
    _add_turned(ke, _TA, _TB, ra, aj, -1.0)
    _add_turned(ke, _UB, _UA, ra, df_ua, 1.0)
    _add_turned(ke, _UB, _TA, ra, df_ta, 1.0)
    _add_turned(ke, _UB, _UB, ra, ktm, 1.0)
    _add_turned(ke, _TB, _TA, ra, dz_ta, 1.0)
    _add_turned(ke, _TB, _TB, ra, aj, 1.0)


@kernel
def _global_tangent(kt, kr, m, psi, ke):
    """Add to ke (12,12) the blocks of a spring or plastic connector in global axes: Kt' =
    diag(kt), K_r = diag(kr), m = K_r psi_g, psi = psi_g (module docstring)."""
    ktm = (kt[0], 0.0, 0.0, 0.0, kt[1], 0.0, 0.0, 0.0, kt[2])
    jinv = so3_tangent.jl_inv_matrix(psi)
    jinv_t = so3.transpose(jinv)
    amat = so3.mat_axpy(1.0, _mul_diag(jinv_t, kr), so3_tangent.d_jl_inv_apply(psi, m, 1.0))
    # delta tau_a per delta psi_g: A + hat(m) - hat(psi_g) K_r
    bmat = so3.mat_axpy(1.0, amat, so3.mat_axpy(-1.0, _mul_diag(so3.hat(psi), kr), so3.hat(m)))
    # delta psi_g = (-hat(psi_g) - jl^{-1}) theta_a + jl^{-1} theta_b
    p_ta = so3.mat_axpy(-1.0, jinv, so3.hat((-psi[0], -psi[1], -psi[2])))
    _add(ke, _UA, _UA, ktm, 1.0)
    _add(ke, _UA, _UB, ktm, -1.0)
    _add(ke, _UB, _UA, ktm, -1.0)
    _add(ke, _UB, _UB, ktm, 1.0)
    _add(ke, _TA, _TA, so3.matmul(bmat, p_ta), -1.0)
    _add(ke, _TA, _TB, so3.matmul(bmat, jinv), -1.0)
    _add(ke, _TB, _TA, so3.matmul(amat, p_ta), 1.0)
    _add(ke, _TB, _TB, so3.matmul(amat, jinv), 1.0)


@kernel
def connector_tangent(cn, state, i, x, rot, quat, ke):
    """ke (12,12) = K of connector i, order (u_a, theta_a, u_b, theta_b), spatial increments
    (module docstring), at the configuration x (N,3), rot (N,3,3), quat (N,4) and committed
    state `state` (ConnectorState; plastic kind). The measures are connector_forces' own
    (connectors._measures: the same quaternion branches)."""
    for r in range(12):
        for c in range(12):
            ke[r, c] = 0.0
    kind = cn.kind[i]
    if kind == mc.CABLE or kind == mc.STRUT:
        _axial_tangent(cn, i, x, ke)
        return
    u, psi, e, d, ra = mc._measures(cn, i, x, rot, quat)
    kt = _slopes(cn, state, i, u)
    kr = (cn.k_r[i, 0], cn.k_r[i, 1], cn.k_r[i, 2])
    m = (kr[0] * psi[0], kr[1] * psi[1], kr[2] * psi[2])
    if cn.local[i]:
        n = mc._translation(cn, state, i, u)[0]
        _node_tangent(kt, kr, n, m, psi, d, ra, ke)
    else:
        _global_tangent(kt, kr, m, psi, ke)


@kernel
def add_connector_tangents(cn, state, x, rot, quat, slots, k):
    """Add every connector's tangent blocks to k (B,6,6): k[slots[i, p, q]] += the (p, q) 6x6
    block of connector_tangent (p, q = 0: node a, 1: node b). cn ConnectorArrays, state
    ConnectorState (the committed one the forces use), x (N,3), rot (N,3,3), quat (N,4) the
    node quaternions of rot, slots (C,2,2) int64 (connector_slots)."""
    ke = np.empty((12, 12))
    for i in range(cn.a.shape[0]):
        connector_tangent(cn, state, i, x, rot, quat, ke)
        for p in range(2):
            for q in range(2):
                blk = slots[i, p, q]
                for r in range(6):
                    for c in range(6):
                        k[blk, r, c] += ke[6 * p + r, 6 * q + c]


def connector_slots(cn, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """slots (C,2,2) int64 for add_connector_tangents: the block index of the node pair
    (nodes[i, p], nodes[i, q]), nodes = (a, b), in a BSR pattern (block rows = nodes, sorted
    column indices per row)."""
    nodes = np.stack([cn.a, cn.b], axis=1)
    rows = np.repeat(nodes[:, :, None], 2, axis=2)
    cols = np.repeat(nodes[:, None, :], 2, axis=1)
    return block_index(indptr, indices, rows, cols).reshape(-1, 2, 2)
