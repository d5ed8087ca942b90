"""The dynamic residual's Newton Jacobian dR/dxi assembled from the terms' tangent stiffness
blocks (the static one: rodsim.integrators.vi_jacobian).

The residual (rodsim.integrators.vi_residual, docs/implicit_scheme.md, "The scheme") of node a
is, with p = h xi_a, the midpoint g_bar = g_k tau(s(p)) and the right-trivialised gradient
g_a = -(P_a^T f_a, rb_a^T tau_a) + (alpha m_a v_a, 0) of the forces at g_bar (P_a = rb_a on
SE3, I on SO3xR3; the last term is the mass damping -alpha m v, turned by rb on SE3, whose
gradient is then alpha m v on both groups):

    R_a = T_a [mu(p, JJ xi_a) + h Q(p) g_a - P_k],   T_a = diag(Lambda_k on SE3 | I, Lambda_k),

mu = (d^R tau_p)^{-T} JJ xi_a and Q(p) the forces' map (rodsim.integrators.cayley_tangent.
balance_map). g_a depends on every xi_b through the spatial increments (u_b, theta_b) of
g_bar, whose derivative K_ab = -d(f_a, tau_a)/d(u_b, theta_b) the terms give (their tangent
hooks, at g_bar and the midpoint time), and on xi_a itself through rb_a: at fixed spatial
forces, d(rb^T y) = rb^T hat(y) theta. Hence, 6x6 blocks, translation first:

    dR_a/dxi_b = Rows_a K_ab Sbar_b + delta_ab Diag_a,
    Rows_a = h T_a Q_a diag(P_a^T, rb_a^T),
    Diag_a = T_a [L_a + h Q_a (G_a Sbar_a + D_a)],

- Sbar_b = d(u_b, theta_b)/dxi_b, the midpoint map: u = Lambda_k d translation(s(p)) (SE3; the
  plain h/2 dv on SO3xR3), theta = Lambda_k cay_jl(s_w) ds_w, ds = s'(p) h dxi;
- L_a = d/dxi_a [mu + h Q(p) g] at fixed g, local (the directional derivatives of
  cayley_tangent, one per column);
- G_a = -(rb^T hat(f) on SE3's translation rows, rb^T hat(tau) on the rotation rows), on the
  theta columns: the rotation of the forces into the midpoint frame;
- D_a = alpha m_a I on the translation block: the mass damping's own xi.

One pass over the blocks with two 6x6 products each. The rows of supported components are then
their constraints (vi_residual._constraint_rows), exact and on the node's own block: a held or
prescribed position component k, (m/h) e_k^T dx_k+1/dxi with x_k+1 = x_k + Lambda_k
translation(p) (SE3) or + p_v; a held rotation component, (J/h) h row k of Lambda_k; a
prescribed one, (J/h) h e_k.

Damping (docs/implicit_scheme.md, "Newton Jacobian"): a term's Lagrange-d'Alembert force
F_d = -Bbar^T r, r = (beta/dt) C (eps(g_k+1) - eps(g_k)), Bbar the strain map at g_bar, is
part of g_a (its forces are added to f, tau) and adds, through its step_damping_tangent hook,

    -dF_d = G(g_bar; r) dq_bar + Bbar^T (beta/dt) C B_1 dq_1:

G into K_ab (chained through Sbar_b), the second part into K1_ab, chained through the end map
E_b = d(u_1, theta_1)/dxi_b of g_k+1 = g_k tau(h xi_b) (end_maps: (h I, Lambda_k cay_jl(p_w) h)
on SO3xR3; Lambda_k d translation(p) on SE3's translation rows). So

    dR_a/dxi_b = Rows_a (K_ab Sbar_b + K1_ab E_b) + delta_ab Diag_a.

What is left out (the complex step serves those: implicit.Solver.matrix): the energy
correction (sd.conserve; left out of every Jacobian) and the damping of a term without a
step_damping_tangent (damping_analytic).
"""

import numpy as np

from rodsim.integrators import cayley
from rodsim.integrators import cayley_tangent as ct
from rodsim.integrators import vi_residual as vr
from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model import forces as fterms
from rodsim.terms import mass_damping


def damping_analytic(terms: fterms.ForceTerms) -> bool:
    """Whether every damping that acts is differentiated here: the mass damping (node_factors)
    and each damped term's step_damping_tangent (rodsim.model.forces.damping_analytic); a
    damped term without one (the connectors' dashpots) keeps the complex step."""
    return fterms.damping_analytic(terms, skip=(mass_damping.TERM,))


@kernel(inline="always")
def _column(out, j, v, w):
    """Column j of a 6x6 (translation rows first) from (translation v, rotation w)."""
    for k in range(3):
        out[k, j] = v[k]
        out[3 + k, j] = w[k]


@kernel(inline="always")
def _unit(j):
    """The unit direction e_j of xi (translation first) as (rotation, translation) tuples."""
    z = (0.0, 0.0, 0.0)
    if j < 3:
        return z, (1.0 if j == 0 else 0.0, 1.0 if j == 1 else 0.0, 1.0 if j == 2 else 0.0)
    return (1.0 if j == 3 else 0.0, 1.0 if j == 4 else 0.0, 1.0 if j == 5 else 0.0), z


@kernel(inline="always")
def _mm6(a, b, out):
    """out = a @ b for 6x6 arrays (out distinct from a and b)."""
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += a[i, k] * b[k, j]
            out[i, j] = s


@kernel(inline="always")
def _rotate_rows(r_v, r_w, se3, m, out):
    """out = diag(r_v on SE3 | I, r_w) @ m (r_v, r_w 9-tuples)."""
    for j in range(6):
        for i in range(3):
            out[3 + i, j] = (
                r_w[3 * i] * m[3, j] + r_w[3 * i + 1] * m[4, j] + r_w[3 * i + 2] * m[5, j]
            )
            if se3:
                out[i, j] = (
                    r_v[3 * i] * m[0, j] + r_v[3 * i + 1] * m[1, j] + r_v[3 * i + 2] * m[2, j]
                )
            else:
                out[i, j] = m[i, j]


@kernel
def node_factors(mass, inertia, rot, rb, f, tau, xi, h, se3, alpha, rows, sbar, diag):
    """Per node a the factors of dR_a/dxi_b = rows[a] K_ab sbar[b] + delta_ab diag[a] (module
    docstring): rows, sbar, diag (N,6,6). mass (N,), inertia (N,3,3) material; rot (N,3,3)
    Lambda_k; rb (N,3,3) the midpoint rotations; f, tau (N,3) the forces at g_bar without any
    damping; xi (N,6); se3 bool; alpha the mass damping (0: none)."""
    q = np.empty((6, 6))
    loc = np.empty((6, 6))
    gm = np.zeros((6, 6))
    t1 = np.empty((6, 6))
    t2 = np.empty((6, 6))
    for a in range(xi.shape[0]):
        r = so3.mat_at(rot, a)
        rbm = so3.mat_at(rb, a)
        rbt = so3.transpose(rbm)
        v = so3.vec_at(xi, a)
        omg = (xi[a, 3], xi[a, 4], xi[a, 5])
        p_w, p_v = so3.scale(h, omg), so3.scale(h, v)
        fa, ta = so3.vec_at(f, a), so3.vec_at(tau, a)
        c = alpha * mass[a] if alpha > 0.0 else 0.0
        g_w = so3.scale(-1.0, so3.matvec(rbt, ta))
        g_v = so3.add(so3.scale(-1.0, so3.matvec(rbt, fa) if se3 else fa), so3.scale(c, v))
        jm = so3.mat_at(inertia, a)
        jw, mv = so3.matvec(jm, omg), so3.scale(mass[a], v)
        s_w, s_v = cayley.half_step(p_w, p_v, se3)
        jl = so3.cay_jl(s_w)
        for j in range(6):
            e_w, e_v = _unit(j)
            qw, qv = ct.balance_map(p_w, p_v, e_w, e_v, se3)
            _column(q, j, qv, qw)
            dp_w, dp_v = so3.scale(h, e_w), so3.scale(h, e_v)
            # L: mu's derivative at fixed JJ xi, plus mu's linear part JJ dxi, plus h dQ g
            m1w, m1v = ct.dtau_inv_transpose_jvp(p_w, p_v, jw, mv, dp_w, dp_v, se3)
            m2w, m2v = cayley.dtau_inv_transpose(
                p_w, p_v, so3.matvec(jm, e_w), so3.scale(mass[a], e_v), se3
            )
            qw, qv = ct.balance_map_jvp(p_w, p_v, g_w, g_v, dp_w, dp_v, se3)
            _column(
                loc,
                j,
                so3.add(so3.add(m1v, m2v), so3.scale(h, qv)),
                so3.add(so3.add(m1w, m2w), so3.scale(h, qw)),
            )
            # Sbar: the spatial increments of g_bar
            ds_w, ds_v = ct.half_step_jvp(p_w, p_v, dp_w, dp_v, se3)
            ub = ct.translation_jvp(s_w, s_v, ds_w, ds_v, se3)
            if se3:
                ub = so3.matvec(r, ub)
            thb = so3.matvec(r, so3.matvec(jl, ds_w))
            for k in range(3):
                sbar[a, k, j] = ub[k]
                sbar[a, 3 + k, j] = thb[k]
        # G (theta columns) and D (the mass damping's v), then Diag = T (L + h Q (G Sbar + D))
        hf = so3.matmul(rbt, so3.hat(fa))
        ht = so3.matmul(rbt, so3.hat(ta))
        for i in range(3):
            for k in range(3):
                gm[3 + i, 3 + k] = -ht[3 * i + k]
                gm[i, 3 + k] = -hf[3 * i + k] if se3 else 0.0
        _mm6(gm, sbar[a], t1)
        for k in range(3):
            t1[k, k] += c
        _mm6(q, t1, t2)
        for i in range(6):
            for j in range(6):
                t2[i, j] = loc[i, j] + h * t2[i, j]
        _rotate_rows(r, r, se3, t2, diag[a])
        # Rows = h T Q diag(P^T, rb^T) (rbm row-major: rb^T[k, j] = rbm[3 j + k])
        for i in range(6):
            for j in range(3):
                t1[i, 3 + j] = h * (
                    q[i, 3] * rbm[3 * j] + q[i, 4] * rbm[3 * j + 1] + q[i, 5] * rbm[3 * j + 2]
                )
                if se3:
                    t1[i, j] = h * (
                        q[i, 0] * rbm[3 * j] + q[i, 1] * rbm[3 * j + 1] + q[i, 2] * rbm[3 * j + 2]
                    )
                else:
                    t1[i, j] = h * q[i, j]
        _rotate_rows(r, r, se3, t1, rows[a])


@kernel
def end_maps(rot, xi, h, se3, ends):
    """ends (N,6,6) = d(u_1, theta_1)/dxi_a, the spatial increments of node a's end
    configuration g_k+1 = g_k tau(h xi_a) per dxi_a: u_1 = Lambda_k d translation(p) (SE3; h dv
    on SO3xR3), theta_1 = Lambda_k cay_jl(p_w) h dw, p = h xi_a. rot (N,3,3) Lambda_k."""
    for a in range(xi.shape[0]):
        r = so3.mat_at(rot, a)
        p_w = (h * xi[a, 3], h * xi[a, 4], h * xi[a, 5])
        p_v = (h * xi[a, 0], h * xi[a, 1], h * xi[a, 2])
        jl = so3.cay_jl(p_w)
        for j in range(6):
            e_w, e_v = _unit(j)
            dp_w, dp_v = so3.scale(h, e_w), so3.scale(h, e_v)
            u1 = ct.translation_jvp(p_w, p_v, dp_w, dp_v, se3)
            if se3:
                u1 = so3.matvec(r, u1)
            th = so3.matvec(r, so3.matvec(jl, dp_w))
            for k in range(3):
                ends[a, k, j] = u1[k]
                ends[a, 3 + k, j] = th[k]


@kernel
def _assemble(indptr, indices, kbuf, k1, rows, sbar, ends, diag, data):
    """data[blk(a,b)] = rows[a] (kbuf[blk] sbar[b] + k1[blk] ends[b]) (+ diag[a] on the
    diagonal); k1 None: without the end part."""
    tmp = np.empty((6, 6))
    tmp1 = np.empty((6, 6))
    for a in range(indptr.shape[0] - 1):
        for r in range(indptr[a], indptr[a + 1]):
            b = indices[r]
            _mm6(kbuf[r], sbar[b], tmp)
            if k1 is not None:
                _mm6(k1[r], ends[b], tmp1)
                for i in range(6):
                    for j in range(6):
                        tmp[i, j] += tmp1[i, j]
            _mm6(rows[a], tmp, data[r])
            if b == a:
                for i in range(6):
                    for j in range(6):
                        data[r, i, j] += diag[a, i, j]


@kernel
def _constraints(mass, inertia, fixed, rot, rot_prescribed, xi, h, se3, indptr, indices, data):
    """The rows of supported components: their constraints' derivatives (module docstring)."""
    for a in range(xi.shape[0]):
        if not (
            fixed[a, 0] or fixed[a, 1] or fixed[a, 2] or fixed[a, 3] or fixed[a, 4] or fixed[a, 5]
        ):
            continue
        d = -1
        for r in range(indptr[a], indptr[a + 1]):
            if indices[r] == a:
                d = r
            for k in range(6):
                if fixed[a, k]:
                    for j in range(6):
                        data[r, k, j] = 0.0
        scale_t = mass[a] / h
        scale_r = (inertia[a, 0, 0] + inertia[a, 1, 1] + inertia[a, 2, 2]) / (3.0 * h)
        rm = so3.mat_at(rot, a)
        p_w = (h * xi[a, 3], h * xi[a, 4], h * xi[a, 5])
        p_v = (h * xi[a, 0], h * xi[a, 1], h * xi[a, 2])
        if fixed[a, 0] or fixed[a, 1] or fixed[a, 2]:
            for j in range(6):
                e_w, e_v = _unit(j)
                u1 = ct.translation_jvp(p_w, p_v, so3.scale(h, e_w), so3.scale(h, e_v), se3)
                if se3:
                    u1 = so3.matvec(rm, u1)
                for k in range(3):
                    if fixed[a, k]:
                        data[d, k, j] = scale_t * u1[k]
        for k in range(3):
            if not fixed[a, 3 + k]:
                continue
            for j in range(3):
                if rot_prescribed[a]:
                    data[d, 3 + k, 3 + j] = scale_r * h if j == k else 0.0
                else:
                    data[d, 3 + k, 3 + j] = scale_r * h * rm[3 * k + j]


@kernel
def node_maps(
    mass, inertia, fixed, rot, rot_prescribed, rb, f, tau, xi, h, se3, alpha, indptr, indices,
    kbuf, k1, data,
):  # fmt: skip
    """data (B,6,6) = dR/dxi from the blocks kbuf (B,6,6) through the midpoint (K_ab at
    g_bar, summed over the terms, with the damping's geometric parts) and k1 (B,6,6) through
    the end configuration (the damping's; None: none), and the forces f, tau (N,3) at g_bar
    (damping included, but the mass damping: alpha); BSR structure (indptr, indices). Arrays
    only, so that it compiles once for every model (and once more with k1)."""
    n = xi.shape[0]
    rows = np.empty((n, 6, 6))
    sbar = np.empty((n, 6, 6))
    diag = np.empty((n, 6, 6))
    ends = np.empty((n, 6, 6))
    node_factors(mass, inertia, rot, rb, f, tau, xi, h, se3, alpha, rows, sbar, diag)
    if k1 is not None:
        end_maps(rot, xi, h, se3, ends)
    _assemble(indptr, indices, kbuf, k1, rows, sbar, ends, diag, data)
    _constraints(mass, inertia, fixed, rot, rot_prescribed, xi, h, se3, indptr, indices, data)


@kernel
def _maps(m, sd, xi, w, alpha, indptr, indices, kbuf, k1, data):
    node_maps(
        m.mass, m.inertia, m.fixed, sd.rot, sd.rot_prescribed, w.rb, w.f, w.tau, xi, sd.h,
        sd.se3 == 1, alpha, indptr, indices, kbuf, k1, data,
    )  # fmt: skip


@kernel
def _damping_blocks(damped, terms, sd, xi, w, slots, kb, k1):
    """The damping forces and blocks of the terms with a step_damping_tangent (compiled out
    for undamped models, as vi_residual._step_damping); whether any acts."""
    if damped is None:
        return False
    return fterms.add_damping_tangents(
        terms, slots, sd.strains, w.end, w.res, w.x1, w.r1, w.q1, w.xb, w.rb, w.qb, xi, sd.h,
        sd.se3 == 1, w.f, w.tau, kb, k1,
    )  # fmt: skip


@kernel
def dynamic_jacobian(m, terms, sd, xi, w, slots, indptr, indices, kbuf, data):
    """data (B,6,6) = dR/dxi of the dynamic residual (sd.mode DYNAMIC, sd.conserve 0; every
    damping differentiable: damping_analytic) at xi (N,6) float64: configurations and forces
    at the midpoint g_bar into the float64 scratch w (vi_residual.Work), the terms' tangent
    blocks there into kbuf[0] and their damping forces (added to w.f, w.tau) and blocks into
    kbuf[0] (through g_bar) and kbuf[1] (through g_k+1), kbuf (2,B,6,6) (slots: rodsim.model.
    forces.tangent_slots), then the node maps (module docstring). m: the nodes (rodsim.model.
    assembly.NodeArrays)."""
    sn, wn = vr.step_nodes(sd), vr.work_nodes(w)
    vr.configurations(sn, xi, wn)
    fterms.forces(terms, w.xb, w.rb, w.qb, sd.t, w.f, w.tau, fterms.ALL)
    kbuf[:] = 0.0
    kb, k1 = kbuf[0], kbuf[1]
    fterms.add_tangents(terms, slots, w.xb, w.rb, w.qb, sd.t, kb)
    if _damping_blocks(terms.damped, terms, sd, xi, w, slots, kb, k1):
        _maps(m, sn, xi, wn, terms.alpha, indptr, indices, kb, k1, data)
    else:
        _maps(m, sn, xi, wn, terms.alpha, indptr, indices, kb, None, data)
