"""Analytic spatial tangent stiffness of the elastic supports (issue 36, notes36.md §4).

The springs of rodsim.model.supports.support_forces act on one node each:

    f = -K_t u,   tau = -Lambda0 jl^{-T}(psi) K_r psi,   u = x - x0,  psi = log(Lambda0^T Lambda),

and a spatial increment delta Lambda = hat(theta) Lambda gives delta psi = jl^{-1}(psi)
Lambda0^T theta (docs/supports.md; docs/theory.md "Conventions"). So the node-diagonal block
K = -d(f, tau)/d(u, theta) (rows force then moment, columns u then theta) is

    K_uu = K_t,   K_u,theta = K_theta,u = 0,
    K_theta,theta = Lambda0 [jl^{-T}(psi) K_r + D_psi[jl^{-T}(psi) m]|_{m = K_r psi}]
                    jl^{-1}(psi) Lambda0^T,

with D_psi of rodsim.lie.so3_tangent. It is symmetric at psi = 0 (for symmetric K_r) and not
in general: its antisymmetric part is hat(tau), as for the rod (the bracket of left
perturbations). Units: force/length (uu), force x length (theta theta).
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3, so3_tangent
from rodsim.model.supports import _rotation
from rodsim.model.tangent_blocks import block_index


@kernel
def add_support_tangents(sp, x, quat, slots, k):
    """Add each spring's node-diagonal block to k (B,6,6): k[slots[i]] += K of entry i.
    sp SupportArrays, x (N,3) positions (the tangent does not depend on them: K_t is
    constant), quat (N,4) node quaternions, slots (S,) int64 (support_slots)."""
    for i in range(sp.node.shape[0]):
        blk = slots[i]
        kt = so3.mat_at(sp.k_t, i)
        kr = so3.mat_at(sp.k_r, i)
        r0 = so3.mat_at(sp.r0, i)
        # the same psi as support_forces (branch w >= 0 of the relative quaternion)
        psi = _rotation(sp, i, quat)[0]
        m = so3.matvec(kr, psi)
        jinv = so3_tangent.jl_inv_matrix(psi)
        dz = so3_tangent.d_jl_inv_apply(psi, m, 1.0)
        inner = so3.mat_axpy(1.0, so3.matmul(so3.transpose(jinv), kr), dz)
        ktt = so3.matmulT(so3.matmul(so3.matmul(r0, inner), jinv), r0)
        for r in range(3):
            for c in range(3):
                k[blk, r, c] += kt[3 * r + c]
                k[blk, 3 + r, 3 + c] += ktt[3 * r + c]


def support_slots(sp, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """slots (S,) int64 for add_support_tangents: the diagonal block of each entry's node in a
    BSR pattern (block rows = nodes, sorted indices per row)."""
    return block_index(indptr, indices, sp.node, sp.node)


@kernel
def add_support_damping_tangents(sp, quat_mid, quat1, u0, psi0, u1, psi1, h, slots, kbar, k1):
    """The blocks of the dashpots' discrete forces over a step of size h (rodsim.model.
    supports.support_step_damping): resultants n = C_t (u1 - u0)/h, m = C_r (psi1 - psi0)/h
    (strains (S,3) at the step's ends) through the map at the midpoint, f = -n, tau = -Lambda0
    jl^{-T}(psibar) m, psibar = log(Lambda0^T Lambda_bar). Spatial increments theta_bar of the
    midpoint and (u_1, theta_1) of the end, delta psi = jl^{-1}(psi) Lambda0^T theta:

        kbar += [0, 0; 0, Lambda0 D_psi[jl^{-T}(psi) m]|_psibar jl^{-1}(psibar) Lambda0^T],
        k1   += [C_t/h, 0; 0, Lambda0 jl^{-T}(psibar) (C_r/h) jl^{-1}(psi1) Lambda0^T],

    into kbar, k1 (B,6,6) at slots (S,) (support_slots). quat_mid, quat1 (N,4) node
    quaternions at the midpoint and the end."""
    c = 1.0 / h
    for i in range(sp.node.shape[0]):
        blk = slots[i]
        r0 = so3.mat_at(sp.r0, i)
        dpsi = (
            c * (psi1[i, 0] - psi0[i, 0]),
            c * (psi1[i, 1] - psi0[i, 1]),
            c * (psi1[i, 2] - psi0[i, 2]),
        )
        cr = so3.mat_at(sp.c_r, i)
        m = so3.matvec(cr, dpsi)
        psib = _rotation(sp, i, quat_mid)[0]
        psie = _rotation(sp, i, quat1)[0]
        jinv_b = so3_tangent.jl_inv_matrix(psib)
        jinv_e = so3_tangent.jl_inv_matrix(psie)
        dz = so3_tangent.d_jl_inv_apply(psib, m, 1.0)
        geo = so3.matmulT(so3.matmul(so3.matmul(r0, dz), jinv_b), r0)
        inner = so3.matmul(so3.matmul(so3.transpose(jinv_b), cr), jinv_e)
        end = so3.matmulT(so3.matmul(r0, inner), r0)
        ct = so3.mat_at(sp.c_t, i)
        for r in range(3):
            for q in range(3):
                kbar[blk, 3 + r, 3 + q] += geo[3 * r + q]
                k1[blk, r, q] += c * ct[3 * r + q]
                k1[blk, 3 + r, 3 + q] += c * end[3 * r + q]
