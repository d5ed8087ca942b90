"""Kernels of the geometrically exact Reissner–Mindlin (Simo–Fox 5-parameter) plate element.

Element (docs/theory.md, "Plates", issue 6): 4-node quadrilaterals and 3-node
triangles (conn[:, 3] == conn[:, 2]), isoparametric position ``phi = sum N_a x_a`` and director
``t = sum N_a d3_a`` (nodal directors, not renormalised: the degenerated-shell choice), written
in the element's reference Cartesian coordinates X (reference basis e1, e2):

    F = dphi/dX = (phi_1, phi_2),  T = dt/dX = (t_1, t_2)               (3x2 each)
    eps   = 1/2 (F^T F) - eps0        Voigt (eps11, eps22, 2 eps12)        membrane
    kappa = 1/2 (F^T T + T^T F) - kappa0   Voigt (k11, k22, 2 k12)          bending
    gamma = F^T t - gamma0            (2,), assumed natural strains (MITC)  transverse shear

``kappa_ab = -w_,ab`` for a small deflection w along d3. The transverse shear is never sampled
where it locks: covariant strains ``phi_,xi . t`` are tied at edge midpoints and interpolated
(MITC4, Bathe & Dvorkin 1985; MITC3, Lee & Bathe 2004, Comput. Struct. 82), then mapped to the
Cartesian frame by the inverse Jacobian (``shear_map``). Membrane, bending and shear are
integrated with 2x2 Gauss (quad) or the 3-point rule (triangle); quadrature slot 4 is the
element centre (weight 0, used for output).

Drilling (rotation about d3, no physical stiffness): per node a, with the element's gradient
evaluated at the node along the node's reference in-plane directors c1, c2 (``phi_c = F c``),
``w_a = d2_a . phi_c1 - d1_a . phi_c2 - w0_a`` (to first order minus twice the in-plane
rotation of the nodal frame relative to the element's material lines, blind to symmetric
in-plane strain and zero for any rigid motion) with energy ``1/2 kd_a w_a^2``,
``kd_a = k_drill area / n_nodes`` (make_plates).

    U_e = sum_q w_q (1/2 eps.A eps + 1/2 kappa.D kappa + 1/2 gamma.S gamma) + drilling.

Nodal forces and spatial moments are the EXACT negative gradient: ``f_a = -dU/dx_a``,
``tau_a = -sum_{v in (d1, d2, d3)_a} v x dU/dv`` (work ``tau_a . theta_a`` for
``delta Lambda_a = hat(theta_a) Lambda_a``, as in rod.py). Everything is a dot product of
spatial vectors, hence objective; sum f = 0 and sum (tau + x x f) = 0 hold identically.

Generic kernels run on float64 or complex128 (complex-step differentiation): x, rot, f, tau (and
given resultants) must then share one dtype. Arrays: N nodes, P elements, x (N,3), rot (N,3,3)
(columns d1, d2, d3), strains and resultants at the quadrature slots (P,4,...) (triangles use
slots 0-2; slot 3 is left untouched).
"""

from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3

CENTRE = 4  # quadrature slot of the element centre (output only)


class PlateElements(NamedTuple):
    """Element data consumed by the kernels (immutable; built by plate.make_plates).

    conn (P,4) int64 (triangles repeat their last node); n_nodes_el (P,) int64, 3 or 4, which is
    also the number of quadrature points; basis (P,2,3) reference e1, e2 (e1 x e2 on the side of
    the reference directors); xref (P,4,2) reference nodal coordinates X in that basis (origin
    at the centroid); dn (P,5,4,2) dN_b/dX at the slots (4 = centre); shape (P,5,4) N_b at the
    slots; weight (P,4) quadrature weights (area units); dnn (P,4,4,2) derivatives of N_b at
    node c along that node's reference d1, d2 projected on the element plane (drilling);
    shear_map (P,5,2,4) gamma_i = sum_k shear_map[s,i,k] (g_k - g0_k) from the
    tied covariant strains g_k (tables TIE_DX, TIE_T); eps0, kappa0 (P,5,3), g0 (P,4), w0 (P,4)
    reference strains; a_mat, d_mat (P,3,3), s_mat (P,2,2) resultant stiffnesses (Voigt);
    kd (P,4) drilling stiffness per node (0 in a triangle's slot 3); k_drill (P,) the drilling
    modulus (force/length); thickness, area, rho (P,).
    """

    conn: np.ndarray
    n_nodes_el: np.ndarray
    basis: np.ndarray
    xref: np.ndarray
    dn: np.ndarray
    shape: np.ndarray
    weight: np.ndarray
    dnn: np.ndarray
    shear_map: np.ndarray
    eps0: np.ndarray
    kappa0: np.ndarray
    g0: np.ndarray
    w0: np.ndarray
    a_mat: np.ndarray
    d_mat: np.ndarray
    s_mat: np.ndarray
    kd: np.ndarray
    k_drill: np.ndarray
    thickness: np.ndarray
    area: np.ndarray
    rho: np.ndarray


def _tie_tables():
    """TIE_DX[typ, k, b] = dN_b/dxi_dir(k) and TIE_T[typ, k, b] = N_b at tying point k, so that
    the tied covariant shear strain is g_k = (sum_b TIE_DX x_b) . (sum_b TIE_T d3_b);
    typ 0 = triangle (MITC3), 1 = quad (MITC4)."""
    dx = np.zeros((2, 4, 4))
    tt = np.zeros((2, 4, 4))
    # MITC3: e_rt at (1/2, 0), e_st at (0, 1/2), e_rt and e_st at (1/2, 1/2)
    d_tri = np.array([[-1.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 1.0, 0.0]])
    for k, (direction, r, s) in enumerate(
        [(0, 0.5, 0.0), (1, 0.0, 0.5), (0, 0.5, 0.5), (1, 0.5, 0.5)]
    ):
        dx[0, k] = d_tri[direction]
        tt[0, k] = [1.0 - r - s, r, s, 0.0]
    # MITC4: e_xi at eta = -1, +1 (k = 0, 1), e_eta at xi = -1, +1 (k = 2, 3)
    xi_b = np.array([-1.0, 1.0, 1.0, -1.0])
    eta_b = np.array([-1.0, -1.0, 1.0, 1.0])
    for k, (direction, xi, eta) in enumerate(
        [(0, 0.0, -1.0), (0, 0.0, 1.0), (1, -1.0, 0.0), (1, 1.0, 0.0)]
    ):
        tt[1, k] = 0.25 * (1 + xi_b * xi) * (1 + eta_b * eta)
        if direction == 0:
            dx[1, k] = 0.25 * xi_b * (1 + eta_b * eta)
        else:
            dx[1, k] = 0.25 * eta_b * (1 + xi_b * xi)
    return dx, tt


TIE_DX, TIE_T = _tie_tables()


@kernel(inline="always")
def _col(rot, a, j):
    return (rot[a, 0, j], rot[a, 1, j], rot[a, 2, j])


@kernel(inline="always")
def _comb(c1, a, c2, b):
    """c1 a + c2 b for 3-tuples."""
    return (c1 * a[0] + c2 * b[0], c1 * a[1] + c2 * b[1], c1 * a[2] + c2 * b[2])


@kernel(inline="always")
def _mv3(mat, e, v):
    return (
        mat[e, 0, 0] * v[0] + mat[e, 0, 1] * v[1] + mat[e, 0, 2] * v[2],
        mat[e, 1, 0] * v[0] + mat[e, 1, 1] * v[1] + mat[e, 1, 2] * v[2],
        mat[e, 2, 0] * v[0] + mat[e, 2, 1] * v[1] + mat[e, 2, 2] * v[2],
    )


@kernel(inline="always")
def _gradients(pl, e, s, x, rot, nb):
    """F = (phi_1, phi_2) and T = (t_1, t_2) at quadrature slot s, as four 3-tuples."""
    z = x[0, 0] * 0.0  # the dtype of x (float64 or complex128)
    f1 = (z, z, z)
    f2 = (z, z, z)
    t1 = (z, z, z)
    t2 = (z, z, z)
    for b in range(nb):
        a = pl.conn[e, b]
        g1 = pl.dn[e, s, b, 0]
        g2 = pl.dn[e, s, b, 1]
        xa = so3.vec_at(x, a)
        da = _col(rot, a, 2)
        f1 = _comb(1.0, f1, g1, xa)
        f2 = _comb(1.0, f2, g2, xa)
        t1 = _comb(1.0, t1, g1, da)
        t2 = _comb(1.0, t2, g2, da)
    return f1, f2, t1, t2


@kernel(inline="always")
def _mem_bend(pl, e, s, f1, f2, t1, t2):
    """Membrane and bending strains (Voigt 3-tuples) at slot s."""
    eps = (
        0.5 * so3.dot(f1, f1) - pl.eps0[e, s, 0],
        0.5 * so3.dot(f2, f2) - pl.eps0[e, s, 1],
        so3.dot(f1, f2) - pl.eps0[e, s, 2],
    )
    kap = (
        so3.dot(f1, t1) - pl.kappa0[e, s, 0],
        so3.dot(f2, t2) - pl.kappa0[e, s, 1],
        so3.dot(f1, t2) + so3.dot(f2, t1) - pl.kappa0[e, s, 2],
    )
    return eps, kap


@kernel(inline="always")
def _tie_vectors(pl, e, k, x, rot, nb):
    """phi_,xi and t at tying point k (the two factors of g_k)."""
    typ = 1 if nb == 4 else 0
    z = x[0, 0] * 0.0
    p = (z, z, z)
    t = (z, z, z)
    for b in range(nb):
        a = pl.conn[e, b]
        p = _comb(1.0, p, TIE_DX[typ, k, b], so3.vec_at(x, a))
        t = _comb(1.0, t, TIE_T[typ, k, b], _col(rot, a, 2))
    return p, t


@kernel(inline="always")
def _tied(pl, e, x, rot, nb):
    """Tied covariant shear strains minus their reference, (g_0..g_3)."""
    p0, t0 = _tie_vectors(pl, e, 0, x, rot, nb)
    p1, t1 = _tie_vectors(pl, e, 1, x, rot, nb)
    p2, t2 = _tie_vectors(pl, e, 2, x, rot, nb)
    p3, t3 = _tie_vectors(pl, e, 3, x, rot, nb)
    return (
        so3.dot(p0, t0) - pl.g0[e, 0],
        so3.dot(p1, t1) - pl.g0[e, 1],
        so3.dot(p2, t2) - pl.g0[e, 2],
        so3.dot(p3, t3) - pl.g0[e, 3],
    )


@kernel(inline="always")
def _shear(pl, e, s, g):
    c = pl.shear_map
    g1 = c[e, s, 0, 0] * g[0] + c[e, s, 0, 1] * g[1] + c[e, s, 0, 2] * g[2] + c[e, s, 0, 3] * g[3]
    g2 = c[e, s, 1, 0] * g[0] + c[e, s, 1, 1] * g[1] + c[e, s, 1, 2] * g[2] + c[e, s, 1, 3] * g[3]
    return g1, g2


@kernel(inline="always")
def _node_gradient(pl, e, c, x, nb):
    """phi_1, phi_2 of the element evaluated at its node c (drilling measure)."""
    z = x[0, 0] * 0.0
    p1 = (z, z, z)
    p2 = (z, z, z)
    for b in range(nb):
        xa = so3.vec_at(x, pl.conn[e, b])
        p1 = _comb(1.0, p1, pl.dnn[e, c, b, 0], xa)
        p2 = _comb(1.0, p2, pl.dnn[e, c, b, 1], xa)
    return p1, p2


@kernel(inline="always")
def _drill(pl, e, c, x, rot, nb):
    p1, p2 = _node_gradient(pl, e, c, x, nb)
    a = pl.conn[e, c]
    return so3.dot(_col(rot, a, 1), p1) - so3.dot(_col(rot, a, 0), p2) - pl.w0[e, c], p1, p2


@kernel(inline="always")
def _add_row(g, b, v, c):
    g[b, 0] += c * v[0]
    g[b, 1] += c * v[1]
    g[b, 2] += c * v[2]


@kernel(inline="always")
def _element(pl, e, x, rot, res_n, res_m, res_q, res_r, given, gx, gt, f, tau):
    """Add element e's nodal forces/moments to f, tau; return its elastic energy.

    Resultants: stiffness times strains (given = False), or res_n, res_m (P,4,3), res_q (P,4,2),
    res_r (P,4) read at the slots (given = True; the energy is then meaningless). gx, gt (4,3)
    scratch for dU/dx_b and dU/dd3_b.
    """
    nb = pl.n_nodes_el[e]
    gx[:, :] = 0.0
    gt[:, :] = 0.0
    energy = 0.0
    g = _tied(pl, e, x, rot, nb)
    z = x[0, 0] * 0.0
    dg = (z, z, z, z)  # dU/dg_k
    for s in range(nb):
        w = pl.weight[e, s]
        f1, f2, t1, t2 = _gradients(pl, e, s, x, rot, nb)
        eps, kap = _mem_bend(pl, e, s, f1, f2, t1, t2)
        gam = _shear(pl, e, s, g)
        if given:  # + z: one tuple type in both branches (complex x, float resultants)
            n = (res_n[e, s, 0] + z, res_n[e, s, 1] + z, res_n[e, s, 2] + z)
            m = (res_m[e, s, 0] + z, res_m[e, s, 1] + z, res_m[e, s, 2] + z)
            q1 = res_q[e, s, 0] + z
            q2 = res_q[e, s, 1] + z
        else:
            n = _mv3(pl.a_mat, e, eps)
            m = _mv3(pl.d_mat, e, kap)
            q1 = pl.s_mat[e, 0, 0] * gam[0] + pl.s_mat[e, 0, 1] * gam[1]
            q2 = pl.s_mat[e, 1, 0] * gam[0] + pl.s_mat[e, 1, 1] * gam[1]
            energy += 0.5 * w * (so3.dot(eps, n) + so3.dot(kap, m) + gam[0] * q1 + gam[1] * q2)
        # d(eps11) = f1.df1, d(2 eps12) = f1.df2 + f2.df1, d(k11) = f1.dt1 + t1.df1, ...
        u1 = _comb(w * n[0], f1, w * n[2], f2)
        u1 = _comb(1.0, u1, 1.0, _comb(w * m[0], t1, w * m[2], t2))
        u2 = _comb(w * n[1], f2, w * n[2], f1)
        u2 = _comb(1.0, u2, 1.0, _comb(w * m[1], t2, w * m[2], t1))
        v1 = _comb(w * m[0], f1, w * m[2], f2)
        v2 = _comb(w * m[1], f2, w * m[2], f1)
        for b in range(nb):
            c1 = pl.dn[e, s, b, 0]
            c2 = pl.dn[e, s, b, 1]
            _add_row(gx, b, u1, c1)
            _add_row(gx, b, u2, c2)
            _add_row(gt, b, v1, c1)
            _add_row(gt, b, v2, c2)
        c = pl.shear_map
        dg = (
            dg[0] + w * (q1 * c[e, s, 0, 0] + q2 * c[e, s, 1, 0]),
            dg[1] + w * (q1 * c[e, s, 0, 1] + q2 * c[e, s, 1, 1]),
            dg[2] + w * (q1 * c[e, s, 0, 2] + q2 * c[e, s, 1, 2]),
            dg[3] + w * (q1 * c[e, s, 0, 3] + q2 * c[e, s, 1, 3]),
        )
    typ = 1 if nb == 4 else 0
    for k in range(4):
        p, t = _tie_vectors(pl, e, k, x, rot, nb)
        for b in range(nb):
            _add_row(gx, b, t, dg[k] * TIE_DX[typ, k, b])
            _add_row(gt, b, p, dg[k] * TIE_T[typ, k, b])
    for c in range(nb):
        wd, p1, p2 = _drill(pl, e, c, x, rot, nb)
        r = res_r[e, c] + z if given else pl.kd[e, c] * wd
        if not given:
            energy += 0.5 * r * wd
        a = pl.conn[e, c]
        d1 = _col(rot, a, 0)
        d2 = _col(rot, a, 1)
        for b in range(nb):
            _add_row(gx, b, _comb(pl.dnn[e, c, b, 0], d2, -pl.dnn[e, c, b, 1], d1), r)
        # -(d2 x dU/dd2 + d1 x dU/dd1) with dU/dd2 = r p1, dU/dd1 = -r p2
        m_dr = _comb(-r, so3.cross(d2, p1), r, so3.cross(d1, p2))
        for k in range(3):
            tau[a, k] += m_dr[k]
    for b in range(nb):
        a = pl.conn[e, b]
        m_t = so3.cross(_col(rot, a, 2), (gt[b, 0], gt[b, 1], gt[b, 2]))
        for k in range(3):
            f[a, k] -= gx[b, k]
            tau[a, k] -= m_t[k]
    return energy


@kernel
def assemble_plate_forces(pl, x, rot, f, tau):
    """Add the internal nodal forces and spatial moments of every plate element to f, tau
    (N,3) in place; return the internal energy (float or complex like x)."""
    gx = np.zeros((4, 3), dtype=x.dtype)
    gt = np.zeros((4, 3), dtype=x.dtype)
    dummy = pl.eps0
    energy = 0.0
    for e in range(pl.conn.shape[0]):
        energy += _element(pl, e, x, rot, dummy, dummy, dummy, pl.w0, False, gx, gt, f, tau)
    return energy


@kernel
def plate_resultant_forces(pl, x, rot, n, m, q, r, f, tau):
    """Add the nodal forces/moments of given resultants to f, tau (N,3): the transpose of the
    strain map (-B^T), i.e. f_a = -sum_q w_q (dStrain_q/dx_a)^T resultant_q, likewise tau.

    n, m (P,4,3) membrane forces and moments (Voigt, conjugate to eps, kappa of plate_strains),
    q (P,4,2) shear forces, r (P,4) drilling resultants (conjugate to the drilling strain,
    per node, already including the nodal area share: elastic r = kd * drill). With
    n = A eps, m = D kappa, q = S gamma, r = kd drill this is assemble_plate_forces; with
    strain-rate resultants it gives viscous forces."""
    gx = np.zeros((4, 3), dtype=x.dtype)
    gt = np.zeros((4, 3), dtype=x.dtype)
    for e in range(pl.conn.shape[0]):
        _element(pl, e, x, rot, n, m, q, r, True, gx, gt, f, tau)


@kernel
def plate_strains(pl, x, rot, eps, kappa, gamma, drill):
    """Strains at the quadrature slots, written in place: eps, kappa (P,4,3) Voigt
    (11, 22, 2*12) in the element basis, gamma (P,4,2), drill (P,4) per node."""
    for e in range(pl.conn.shape[0]):
        nb = pl.n_nodes_el[e]
        g = _tied(pl, e, x, rot, nb)
        for s in range(nb):
            f1, f2, t1, t2 = _gradients(pl, e, s, x, rot, nb)
            ep, kp = _mem_bend(pl, e, s, f1, f2, t1, t2)
            gm = _shear(pl, e, s, g)
            for k in range(3):
                eps[e, s, k] = ep[k]
                kappa[e, s, k] = kp[k]
            gamma[e, s, 0] = gm[0]
            gamma[e, s, 1] = gm[1]
            drill[e, s] = _drill(pl, e, s, x, rot, nb)[0]


@kernel
def plate_fields(pl, x, rot, membrane, bending, shear):
    """Resultants at the element centre in the element basis, written in place: membrane
    (P,3) = (N11, N22, N12), bending (P,3) = (M11, M22, M12), shear (P,2) = (Q1, Q2) (force
    per length, moment per length). Returns the internal energy."""
    f = np.zeros_like(x)
    tau = np.zeros_like(x)
    energy = assemble_plate_forces(pl, x, rot, f, tau)
    for e in range(pl.conn.shape[0]):
        nb = pl.n_nodes_el[e]
        f1, f2, t1, t2 = _gradients(pl, e, CENTRE, x, rot, nb)
        eps, kap = _mem_bend(pl, e, CENTRE, f1, f2, t1, t2)
        gam = _shear(pl, e, CENTRE, _tied(pl, e, x, rot, nb))
        n = _mv3(pl.a_mat, e, eps)
        m = _mv3(pl.d_mat, e, kap)
        for k in range(3):
            membrane[e, k] = n[k]
            bending[e, k] = m[k]
        for i in range(2):
            shear[e, i] = pl.s_mat[e, i, 0] * gam[0] + pl.s_mat[e, i, 1] * gam[1]
    return energy


@kernel
def pressure_forces(pl, x, rot, p, f):
    """Add the nodal forces of a follower pressure p (P,) along the current normal to f (N,3):
    f_a += p_e integral N_a (phi_1 x phi_2) dA (reference area; = p n da), exact by the
    quadrature (2x2 Gauss / 3-point). Positive p pushes towards e1 x e2, the side of the
    reference directors d3. rot is unused (kept for a uniform signature)."""
    for e in range(pl.conn.shape[0]):
        nb = pl.n_nodes_el[e]
        for s in range(nb):
            f1, f2, _, _ = _gradients(pl, e, s, x, rot, nb)
            nrm = so3.cross(f1, f2)
            c = p[e] * pl.weight[e, s]
            for b in range(nb):
                _add_row(f, pl.conn[e, b], nrm, c * pl.shape[e, s, b])
