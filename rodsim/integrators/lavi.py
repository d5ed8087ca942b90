"""The local Lie-algebra solve of the SE(3) explicit scheme (docs/theory.md, "The implicit Cayley
variational integrator").

Per node, with body momenta (Pi, P) and q = h omega, v = h gamma the scaled body velocities,
the Cayley Lie-algebra integrator solves (dcay^{-1}_{(q,v)})^T (I q, m v) = (h Pi, h P) with
the 6x6 right-trivialised inverse Cayley Jacobian of docs/theory.md, "The implicit Cayley
variational integrator". Fixed components in
global axes replace rows of this system (see constrain_rows).
"""

from rodsim.jit import kernel
from rodsim.lie import so3


@kernel
def solve_dense(lin, a, n):
    """Gaussian elimination with partial pivoting on lin[a] (n, n+1); solution in column n."""
    sys = lin[a]
    for c in range(n):
        piv = c
        big = abs(sys[c, c])
        for r in range(c + 1, n):
            if abs(sys[r, c]) > big:
                big = abs(sys[r, c])
                piv = r
        if piv != c:
            for k in range(c, n + 1):
                tmp = sys[c, k]
                sys[c, k] = sys[piv, k]
                sys[piv, k] = tmp
        inv = 1.0 / sys[c, c]
        for r in range(c + 1, n):
            g = sys[r, c] * inv
            if g != 0.0:
                for k in range(c, n + 1):
                    sys[r, k] -= g * sys[c, k]
    for c in range(n - 1, -1, -1):
        acc = sys[c, n]
        for k in range(c + 1, n):
            acc -= sys[c, k] * sys[k, n]
        sys[c, n] = acc / sys[c, c]


@kernel
def lavi_residual(inertia, mass, q, v, hpi, hp):
    """Body-frame residual of (dcay^{-1}_{(q,v)})^T (I q, m v) = (h Pi, h P) (docs/theory.md, "The
    implicit Cayley variational integrator".

    q = h omega, v = h gamma (body); returns (r_w, r_v) 3-tuples:
    r_w = I q + q x I q/2 + (q.I q) q/4 + m v x (q x v)/4 - h Pi,  r_v = m (v + q x v/2) - h P.
    """
    iq = so3.matvec(inertia, q)
    qiq = so3.cross(q, iq)
    qv = so3.cross(q, v)
    vqv = so3.cross(v, qv)
    d = 0.25 * so3.dot(q, iq)
    mq = 0.25 * mass
    r_w = (
        iq[0] + 0.5 * qiq[0] + d * q[0] + mq * vqv[0] - hpi[0],
        iq[1] + 0.5 * qiq[1] + d * q[1] + mq * vqv[1] - hpi[1],
        iq[2] + 0.5 * qiq[2] + d * q[2] + mq * vqv[2] - hpi[2],
    )
    r_v = (
        mass * (v[0] + 0.5 * qv[0]) - hp[0],
        mass * (v[1] + 0.5 * qv[1]) - hp[1],
        mass * (v[2] + 0.5 * qv[2]) - hp[2],
    )
    return r_w, r_v


@kernel
def lavi_jacobian(lin, a, inertia, mass, q, v):
    """Write the 6x6 body-frame Jacobian of lavi_residual w.r.t. (q, v) into lin[a, :, :6]."""
    iq = so3.matvec(inertia, q)
    qd = so3.dot(q, iq)
    vv = so3.dot(v, v)
    vq = so3.dot(v, q)
    mq = 0.25 * mass
    hq = so3.hat(q)
    hqi = so3.matmul(hq, inertia)
    hiq = so3.hat(iq)
    hv = so3.hat(v)
    sys = lin[a]
    for i in range(3):
        for j in range(3):
            k = 3 * i + j
            eye = 1.0 if i == j else 0.0
            sys[i, j] = (
                inertia[k]
                + 0.5 * (hqi[k] - hiq[k])
                + 0.5 * q[i] * iq[j]
                + 0.25 * qd * eye
                + mq * (vv * eye - v[i] * v[j])
            )
            sys[i, 3 + j] = mq * (2.0 * q[i] * v[j] - vq * eye - v[i] * q[j])
            sys[3 + i, j] = -0.5 * mass * hv[k]
            sys[3 + i, 3 + j] = mass * (eye + 0.5 * hq[k])


@kernel
def constrain_rows(lin, a, rot, fx, q, v, r_w, r_v):
    """Rotate the local system to global axes and replace each fixed component's row by its
    constraint: (Lambda q)_i = 0 (rotation) or (Lambda (I - hat q/2)^{-1} v)_i = 0 (translation)."""
    sys = lin[a]
    rw = so3.matvec(rot, r_w)
    rv = so3.matvec(rot, r_v)
    for j in range(6):
        col_w = so3.matvec(rot, (sys[0, j], sys[1, j], sys[2, j]))
        col_v = so3.matvec(rot, (sys[3, j], sys[4, j], sys[5, j]))
        for i in range(3):
            sys[i, j] = col_w[i]
            sys[3 + i, j] = col_v[i]
    for i in range(3):
        sys[i, 6] = rw[i]
        sys[3 + i, 6] = rv[i]
    cinv = so3.i_minus_half_hat_inv(q)
    u = so3.matvec(cinv, v)
    rc = so3.matmul(rot, cinv)
    du_dq = so3.matmul(rc, so3.hat(u))  # d(Lambda u)/dq = -1/2 Lambda C^{-1} hat(u)
    rq = so3.matvec(rot, q)
    ru = so3.matvec(rot, u)
    for i in range(3):
        if fx[3 + i]:
            for j in range(3):
                sys[i, j] = rot[3 * i + j]
                sys[i, 3 + j] = 0.0
            sys[i, 6] = rq[i]
        if fx[i]:
            for j in range(3):
                sys[3 + i, j] = -0.5 * du_dq[3 * i + j]
                sys[3 + i, 3 + j] = rc[3 * i + j]
            sys[3 + i, 6] = ru[i]
