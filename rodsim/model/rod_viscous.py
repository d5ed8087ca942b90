"""Viscous and resultant-driven forces of the rod element (rodsim.model.rod): strain rates,
objective strain-rate damping (explicit scheme), element strains and the resultant -> nodal
force map at an arbitrary configuration (implicit scheme).

The damping forces are discrete Lagrange-d'Alembert forces (docs/theory.md, "Damping"): viscous
resultants beta C1 Gamma', beta C2 Omega' pushed through the transpose of the same strain map as
the elastic ones, so they do no work on rigid motions and leave both momenta exact. Everything
here is generic over float64/complex128 arrays except where the explicit scheme's hot path
reads velocities.
"""

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.rod import (
    _element,
    _forces_from_resultants,
    _load_mat,
    _load_quat,
    _load_vec,
    relative_data,
    relative_quaternion,
)


@kernel(inline="always")
def _transpose_half(qv, k, a):
    """exp(psi/2)^T a = a - qv x a + k qv x (qv x a) (the frame-1 to midpoint map)."""
    qa = so3.cross(qv, a)
    qqa = so3.cross(qv, qa)
    return (a[0] - qa[0] + k * qqa[0], a[1] - qa[1] + k * qqa[1], a[2] - qa[2] + k * qqa[2])


@kernel(inline="always")
def _strain_rates(x1, x2, r1, q, h, v1, v2, w1, w2):
    """d/dt (Gamma, Omega) of the element for nodal velocities v1, v2 and spatial angular
    velocities w1, w2 (all (3,) tuples): with F = r1^T r2 = exp(psi), Lambda_m = r1 exp(psi/2),

        psi' = jl^{-1}(psi) r1^T (w2 - w1),      Omega' = psi'/h,
        W_m = Lambda_m^T w1 + jr(psi/2) psi'/2   (body angular velocity of Lambda_m),
        Gamma' = (Lambda_m^T (v2 - v1) - W_m x Lambda_m^T (x2 - x1)) / h.

    Both vanish for a rigid motion (objective). Returns (Gamma', Omega') in the section frame.
    """
    qv, s, half, inv_s, psi, k = relative_data(q)
    dd = so3.matTvec(r1, so3.sub(x2, x1))
    ld = _transpose_half(qv, k, dd)
    psi_dot = so3.matvec(so3.jl_inv(psi), so3.matTvec(r1, so3.sub(w2, w1)))
    w_half = so3.matvec(so3.jr((0.5 * psi[0], 0.5 * psi[1], 0.5 * psi[2])), psi_dot)
    w_m = so3.add(_transpose_half(qv, k, so3.matTvec(r1, w1)), so3.scale(0.5, w_half))
    ld_dot = _transpose_half(qv, k, so3.matTvec(r1, so3.sub(v2, v1)))
    inv_h = 1.0 / h
    return so3.scale(inv_h, so3.sub(ld_dot, so3.cross(w_m, ld))), so3.scale(inv_h, psi_dot)


@kernel
def damping_forces(el, x, rot, quat, vel, omg, beta, f, tau):
    """Add the forces of objective strain-rate damping, viscous resultants beta C1 Gamma' and
    beta C2 Omega' through the same map as the elastic resultants (a discrete
    Lagrange-d'Alembert force, -h B^T beta C B q'), to f, tau (N,3). vel, omg (N,3) nodal
    velocities; quat (N,4) the nodal quaternions of rot. Returns the dissipated power
    h beta (Gamma'.C1 Gamma' + Omega'.C2 Omega') summed over the elements (>= 0)."""
    power = 0.0
    for e in range(el.conn.shape[0]):
        # end frames loaded written out, not through _element_ends: the helper made the damped
        # explicit step 16% slower (1000 elements: 206 -> 240 us/step, numba 0.68)
        i = el.conn[e, 0]
        j = el.conn[e, 1]
        qi = _load_quat(quat, i)
        qj = _load_quat(quat, j)
        r1 = _load_mat(rot, i)
        if el.has_offset[e]:
            qi = so3.quat_mul(qi, _load_quat(el.offset_q[e], 0))
            qj = so3.quat_mul(qj, _load_quat(el.offset_q[e], 1))
            r1 = so3.matmul(r1, _load_mat(el.offset[e], 0))
        q = relative_quaternion(qi, qj)
        x1 = _load_vec(x, i)
        x2 = _load_vec(x, j)
        g_dot, o_dot = _strain_rates(
            x1,
            x2,
            r1,
            q,
            el.length[e],
            _load_vec(vel, i),
            _load_vec(vel, j),
            _load_vec(omg, i),
            _load_vec(omg, j),
        )
        n_d = (
            beta * el.c1[e, 0] * g_dot[0],
            beta * el.c1[e, 1] * g_dot[1],
            beta * el.c1[e, 2] * g_dot[2],
        )
        m_d = (
            beta * el.c2[e, 0] * o_dot[0],
            beta * el.c2[e, 1] * o_dot[1],
            beta * el.c2[e, 2] * o_dot[2],
        )
        power += el.length[e] * (so3.dot(g_dot, n_d) + so3.dot(o_dot, m_d))
        qv, s, half, inv_s, psi, k = relative_data(q)
        d = so3.sub(x2, x1)
        n, t1, t2 = _forces_from_resultants(
            r1, q[0], qv, s, half, inv_s, psi, k, d, so3.matTvec(r1, d), n_d, m_d
        )
        for c in range(3):
            f[i, c] += n[c]
            f[j, c] -= n[c]
            tau[i, c] += t1[c]
            tau[j, c] += t2[c]
    return power


@kernel(inline="always")
def _element_ends(el, e, x, rot, quat):
    """(x1, x2, r1, q) of element e: end positions, the section frame at node 1 and the
    relative quaternion of its two section frames (offsets applied). The hot assembly loops
    load these written out (see _element_at_inlined_body); this helper serves the implicit
    scheme's kernels, which are dominated by the Newton solve."""
    i = el.conn[e, 0]
    j = el.conn[e, 1]
    qi = _load_quat(quat, i)
    qj = _load_quat(quat, j)
    r1 = _load_mat(rot, i)
    if el.has_offset[e]:
        qi = so3.quat_mul(qi, _load_quat(el.offset_q[e], 0))
        qj = so3.quat_mul(qj, _load_quat(el.offset_q[e], 1))
        r1 = so3.matmul(r1, _load_mat(el.offset[e], 0))
    return _load_vec(x, i), _load_vec(x, j), r1, relative_quaternion(qi, qj)


@kernel
def element_strains(el, x, rot, quat, gamma, omega):
    """Strains Gamma - Gamma0, Omega - Omega0 (E,3) of every element, written into gamma and
    omega, from positions x (N,3), rotations rot (N,3,3) and their quaternions quat (N,4).
    Generic: float64 or complex128 arrays (the implicit scheme's complex-step Jacobian)."""
    for e in range(el.conn.shape[0]):
        x1, x2, r1, q = _element_ends(el, e, x, rot, quat)
        out = _element(
            x1,
            x2,
            r1,
            q,
            el.length[e],
            _load_vec(el.c1, e),
            _load_vec(el.c2, e),
            _load_vec(el.gamma0, e),
            _load_vec(el.omega0, e),
        )
        for k in range(3):
            gamma[e, k] = out[4][k]
            omega[e, k] = out[5][k]


@kernel
def resultant_forces(el, x, rot, quat, n_mat, m_mat, f, tau):
    """Add the nodal forces and spatial moments of section resultants n_mat, m_mat (E,3) (the
    map -h B^T of docs/theory.md, "Rod model and its discrete energy" that turns the elastic
    resultants into the exact energy
    gradient) at configuration x, rot, quat to f, tau (N,3). The implicit scheme's viscous
    forces: resultants beta C (strain increment)/dt through the midpoint configuration.
    Generic over float64/complex128."""
    for e in range(el.conn.shape[0]):
        x1, x2, r1, q = _element_ends(el, e, x, rot, quat)
        qv, s, half, inv_s, psi, k = relative_data(q)
        d = so3.sub(x2, x1)
        n, t1, t2 = _forces_from_resultants(
            r1,
            q[0],
            qv,
            s,
            half,
            inv_s,
            psi,
            k,
            d,
            so3.matTvec(r1, d),
            _load_vec(n_mat, e),
            _load_vec(m_mat, e),
        )
        i = el.conn[e, 0]
        j = el.conn[e, 1]
        for c in range(3):
            f[i, c] += n[c]
            f[j, c] -= n[c]
            tau[i, c] += t1[c]
            tau[j, c] += t2[c]
