"""Per-node kinematics of the implicit Cayley variational integrator (SO3xR3 and SE3).

Discrete Lagrangian of one step (docs/theory.md, "The implicit Cayley variational integrator"), per
node with lumped
kinetic operator JJ = diag(J, m I):

    L_d(g_k, g_k+1) = h 1/2 xi.JJ xi - h V(g_bar),   tau(h xi) = g_k^{-1} g_k+1  (Cayley),
    g_bar = g_k tau(s(h xi)),   tau(s(p))^2 = tau(p)  (the Cayley "square root"),

so g_bar is the geodesic midpoint of the step along the one-parameter subgroup, and swapping
(g_k, g_k+1, h) -> (g_k+1, g_k, -h) maps the scheme onto itself (symmetric, hence even
order 2). For a linear system this is the implicit midpoint rule: unconditionally stable and
energy-conserving for the quadratic energy. Right-trivialised variations g -> g exp(eta)
and the left-form Cayley derivative d^R tau_p (d/de tau(p + e d) tau(p)^{-1} = (d^R tau_p d)^)
give the discrete Legendre transforms (derived for rodsim; the thesis writes the
explicit-potential variant (6.2.9)):

    mu = (d^R tau_p)^{-T} JJ xi,                       p = h xi,
    W  = (d^R tau_p)^{-T} s'(p)^T (d^R tau_s)^T Ad_{sigma^{-1}}^T F,   sigma = tau(s(p)),
    momentum at k:   P_k   = mu - h W + h Ad_{sigma^{-1}}^T F      (the equation for xi),
    momentum at k+1: P_k+1 = Ad_tau^T (mu - h W),

F the right-trivialised gradient of V (plus non-conservative and viscous forces, the discrete
Lagrange-d'Alembert forcing) at g_bar. Vectors here are (rotation, translation) 3-tuples.

SO3xR3: tau(w, v) = (cay(w), v), so the translation is the plain midpoint rule; the
rotation part is the SO(3) Cayley map. SE3: the 4x4 Cayley map of docs/theory.md, "The implicit
Cayley variational integrator".
Cayley square root: with S = sqrt(1 + |w|^2/4), s_w = w/(1 + S) (a rotation by half the
angle about the same axis) and, on SE(3) (odd matrix function a g(a^2) of the 4x4 generator,
g(z) = 1/(1 + sqrt(1 - z/4)), using a^4 = -|w|^2 a^2), s_v = v/2 + c (w x (w x v)) with
c = 1/(8 (1 + S)^2).

All functions take and return tuples and are complex-analytic (complex-step Jacobian).
"""

from rodsim.jit import kernel
from rodsim.lie import scalar, so3


@kernel(inline="always")
def cay_quaternion(p):
    """Unit quaternion of cay(p): (1, p/2)/sqrt(1 + |p|^2/4)."""
    c = 1.0 / scalar.sqrt(1.0 + 0.25 * so3.dot(p, p))
    return (c, 0.5 * c * p[0], 0.5 * c * p[1], 0.5 * c * p[2])


@kernel(inline="always")
def _half_coefficients(w):
    """S = sqrt(1 + |w|^2/4), g = 1/(1 + S), c = g^2/8 and their gradients' scalar factors:
    grad g = dg w, grad c = dc w."""
    big_s = scalar.sqrt(1.0 + 0.25 * so3.dot(w, w))
    g = 1.0 / (1.0 + big_s)
    dg = -0.25 * g * g / big_s
    c = 0.125 * g * g
    dc = -0.0625 * g * g * g / big_s
    return g, dg, c, dc


@kernel(inline="always")
def half_step(w, v, se3):
    """Cayley square root s(p) of p = (w, v): returns (s_w, s_v)."""
    g, dg, c, dc = _half_coefficients(w)
    s_w = so3.scale(g, w)
    if se3:
        wwv = so3.cross(w, so3.cross(w, v))
        return s_w, so3.add(so3.scale(0.5, v), so3.scale(c, wwv))
    return s_w, so3.scale(0.5, v)


@kernel(inline="always")
def half_step_transpose(w, v, y_w, y_v, se3):
    """s'(p)^T y for p = (w, v), y = (y_w, y_v)."""
    g, dg, c, dc = _half_coefficients(w)
    out_w = so3.add(so3.scale(g, y_w), so3.scale(dg * so3.dot(w, y_w), w))
    if not se3:
        return out_w, so3.scale(0.5, y_v)
    wv = so3.dot(w, v)
    ww = so3.dot(w, w)
    wyv = so3.dot(w, y_v)
    # s_v = v/2 + c(w) (w (w.v) - v |w|^2)
    u = so3.sub(so3.scale(wv, w), so3.scale(ww, v))
    out_w = so3.add(out_w, so3.scale(dc * so3.dot(u, y_v), w))
    out_w = so3.add(
        out_w,
        so3.scale(
            c,
            so3.add(
                so3.sub(so3.scale(wyv, v), so3.scale(2.0 * so3.dot(v, y_v), w)), so3.scale(wv, y_v)
            ),
        ),
    )
    out_v = so3.add(
        so3.scale(0.5, y_v), so3.scale(c, so3.sub(so3.scale(wyv, w), so3.scale(ww, y_v)))
    )
    return out_w, out_v


@kernel(inline="always")
def translation(w, v, se3):
    """Translation part of tau(w, v): (I - hat w/2)^{-1} v on SE3, v on SO3xR3."""
    if se3:
        return so3.matvec(so3.i_minus_half_hat_inv(w), v)
    return v


@kernel(inline="always")
def dtau_inv_transpose(w, v, y_w, y_v, se3):
    """(d^R tau_p)^{-T} y (docs/theory.md, "The implicit Cayley variational integrator"): A^T y_w +
    B^T y_v, C^T y_v with
    A^T y = y + w x y/2 + (w.y) w/4, C^T y = y + w x y/2, B^T y = v x (C^T y)/2 (SE3; on
    SO3xR3 B = 0, C = I)."""
    a_w = so3.add(
        so3.add(y_w, so3.scale(0.5, so3.cross(w, y_w))), so3.scale(0.25 * so3.dot(w, y_w), w)
    )
    if not se3:
        return a_w, y_v
    c_v = so3.add(y_v, so3.scale(0.5, so3.cross(w, y_v)))
    return so3.add(a_w, so3.scale(0.5, so3.cross(v, c_v))), c_v


@kernel(inline="always")
def dtau_transpose(w, v, y_w, y_v, se3):
    """(d^R tau_s)^T y for s = (w, v): (dcay_w^T (y_w - v x y_v/2), (I + hat w/2)^{-1} y_v),
    dcay_w^T y = 2 (2 y - w x y)/(4 + |w|^2) (docs/theory.md, "The implicit Cayley variational
    integrator"; on SO3xR3 the translation
    block is I)."""
    d = 2.0 / (4.0 + so3.dot(w, w))
    if se3:
        y_w = so3.sub(y_w, so3.scale(0.5, so3.cross(v, y_v)))
        m = so3.i_minus_half_hat_inv((-w[0], -w[1], -w[2]))
        y_v = so3.matvec(m, y_v)
    out_w = so3.scale(d, so3.sub(so3.scale(2.0, y_w), so3.cross(w, y_w)))
    return out_w, y_v


@kernel(inline="always")
def ad_inv_transpose(rot, a, y_w, y_v, se3):
    """Ad_{sigma^{-1}}^T y for sigma = (R, a): (R y_w + a x (R y_v), R y_v) on SE3;
    (R y_w, y_v) on SO3xR3."""
    ry = so3.matvec(rot, y_w)
    if se3:
        rv = so3.matvec(rot, y_v)
        return so3.add(ry, so3.cross(a, rv)), rv
    return ry, y_v
