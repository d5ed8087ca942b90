"""SE(3): group operations, (co)adjoint, exp/log, Cayley, and their 6x6 Jacobians.

Every function is a numba ``njit`` function built on the tuple helpers of :mod:`rodsim.lie.so3`:

- a group element ``g = (R, t)`` is a pair of a row-major 9-tuple rotation ``R`` and a 3-tuple
  translation ``t``; it acts on points as ``g x = R x + t`` and is the 4x4 homogeneous matrix
  ``[[R, t], [0, 1]]``. Product ``(R1, t1)(R2, t2) = (R1 R2, t1 + R1 t2)``, inverse
  ``(R^T, -R^T t)`` (docs/theory.md, "Conventions").
- a Lie algebra element ``xi = (w, v)`` is a 6-tuple ``(wx, wy, wz, vx, vy, vz)``, **rotational part
  first**, with ``hat(xi) = [[hat w, v], [0, 0]]`` (4x4). For a body velocity
  ``g^{-1} dg/dt = hat(xi)``, ``w`` is the convected angular velocity and ``v = R^T dt/dt``.
- a dual element ``mu = (m, n)`` (moment, force) is paired with ``xi`` by ``<mu, xi> = m.w + n.v``.
- 6x6 matrices act on 6-vectors in the same ``(w, v)`` ordering and are returned as NumPy
  ``(6, 6)`` float64 arrays (they allocate; hot-path kernels use the tuple functions instead).

Jacobian conventions (the same as so3, with "~=" meaning equality to first order in ``d``):

- ``exp(xi + d) ~= exp(jl(xi) d) exp(xi)`` and ``exp(xi + d) ~= exp(xi) exp(jr(xi) d)``,
  ``jr(xi) = jl(-xi)``; ``jl(xi) = sum_k ad(xi)^k / (k + 1)!`` (= the right-trivialised
  ``d^R exp`` of docs/theory.md, "The implicit Cayley variational integrator", eq. 6.2.4);
- ``cay(xi + d) ~= exp(cay_jl(xi) d) cay(xi)`` (right-trivialised ``d^R tau`` of docs/theory.md,
"The implicit Cayley variational integrator") and ``cay(xi + d) ~= cay(xi) exp(cay_jr(xi) d)``,
``cay_jr(xi) = cay_jl(-xi)``.
"""

import math

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3

_SERIES = 0.5  # below this rotation angle the coefficients of Q use their Taylor series


# --- small helpers ---------------------------------------------------------------------------


@kernel(inline="always")
def _w(xi):
    """Rotational part of a 6-vector."""
    return (xi[0], xi[1], xi[2])


@kernel(inline="always")
def _v(xi):
    """Translational part of a 6-vector."""
    return (xi[3], xi[4], xi[5])


@kernel(inline="always")
def _neg6(xi):
    """-xi for a 6-vector."""
    return (-xi[0], -xi[1], -xi[2], -xi[3], -xi[4], -xi[5])


@kernel(inline="always")
def _join(a, b):
    """Concatenate two 3-tuples into a 6-tuple."""
    return (a[0], a[1], a[2], b[0], b[1], b[2])


@kernel(inline="always")
def _madd(a, b):
    """Sum of two 9-tuple matrices."""
    return (
        a[0] + b[0], a[1] + b[1], a[2] + b[2],
        a[3] + b[3], a[4] + b[4], a[5] + b[5],
        a[6] + b[6], a[7] + b[7], a[8] + b[8],
    )  # fmt: skip


@kernel(inline="always")
def _mscale(s, a):
    """Scalar times a 9-tuple matrix."""
    return (
        s * a[0], s * a[1], s * a[2],
        s * a[3], s * a[4], s * a[5],
        s * a[6], s * a[7], s * a[8],
    )  # fmt: skip


@kernel
def _blocks(a, b, c, d):
    """The (6, 6) array [[a, b], [c, d]] from four 9-tuple 3x3 blocks."""
    out = np.empty((6, 6))
    for i in range(3):
        for j in range(3):
            out[i, j] = a[3 * i + j]
            out[i, j + 3] = b[3 * i + j]
            out[i + 3, j] = c[3 * i + j]
            out[i + 3, j + 3] = d[3 * i + j]
    return out


@kernel(inline="always")
def _zero9():
    """The 3x3 zero matrix."""
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# --- group operations ------------------------------------------------------------------------


@kernel
def compose(R1, t1, R2, t2):  # noqa: N803
    """Product g1 g2 = (R1 R2, t1 + R1 t2) -> (R, t) (docs/theory.md, "Conventions")."""
    return so3.matmul(R1, R2), so3.add(t1, so3.matvec(R1, t2))


@kernel
def inverse(R, t):  # noqa: N803
    """Inverse g^{-1} = (R^T, -R^T t) -> (R, t), so that compose(g, g^{-1}) = identity."""
    s = so3.matTvec(R, t)
    return so3.transpose(R), (-s[0], -s[1], -s[2])


@kernel
def act(R, t, x):  # noqa: N803
    """Action on a point: g x = R x + t -> 3-tuple."""
    return so3.add(so3.matvec(R, x), t)


@kernel
def identity():
    """The identity element (I, 0) -> (R, t)."""
    return so3.identity(), (0.0, 0.0, 0.0)


@kernel
def to_matrix(R, t):  # noqa: N803
    """Homogeneous (4, 4) array [[R, t], [0, 1]] of g = (R, t)."""
    out = np.zeros((4, 4))
    for i in range(3):
        for j in range(3):
            out[i, j] = R[3 * i + j]
        out[i, 3] = t[i]
    out[3, 3] = 1.0
    return out


@kernel
def from_matrix(a):
    """(R, t) of a homogeneous (4, 4) array (the last row is not checked)."""
    R = (a[0, 0], a[0, 1], a[0, 2], a[1, 0], a[1, 1], a[1, 2], a[2, 0], a[2, 1], a[2, 2])  # noqa: N806
    return R, (a[0, 3], a[1, 3], a[2, 3])


# --- hat/vee, adjoint and coadjoint ----------------------------------------------------------


@kernel
def hat(xi):
    """(4, 4) array [[hat w, v], [0, 0]] of xi = (w, v), so hat(xi) @ [x; 1] = [w x x + v; 0]."""
    out = np.zeros((4, 4))
    out[0, 1] = -xi[2]
    out[0, 2] = xi[1]
    out[1, 0] = xi[2]
    out[1, 2] = -xi[0]
    out[2, 0] = -xi[1]
    out[2, 1] = xi[0]
    out[0, 3] = xi[3]
    out[1, 3] = xi[4]
    out[2, 3] = xi[5]
    return out


@kernel
def vee(a):
    """6-tuple (w, v) of a (4, 4) array: w = axial vector of the skew part of a[:3, :3],
    v = a[:3, 3]; vee(hat(xi)) = xi."""
    return (
        0.5 * (a[2, 1] - a[1, 2]),
        0.5 * (a[0, 2] - a[2, 0]),
        0.5 * (a[1, 0] - a[0, 1]),
        a[0, 3],
        a[1, 3],
        a[2, 3],
    )


@kernel
def bracket(xi, eta):
    """Lie bracket [xi, eta] = vee(hat xi hat eta - hat eta hat xi)
    = (w1 x w2, w1 x v2 - w2 x v1) -> 6-tuple; equals ad(xi) @ eta."""
    w1 = _w(xi)
    v1 = _v(xi)
    w2 = _w(eta)
    v2 = _v(eta)
    return _join(so3.cross(w1, w2), so3.sub(so3.cross(w1, v2), so3.cross(w2, v1)))


@kernel
def ad(xi):
    """(6, 6) matrix of eta -> [xi, eta] in (w, v) ordering: [[hat w, 0], [hat v, hat w]]."""
    W = so3.hat(_w(xi))  # noqa: N806
    return _blocks(W, _zero9(), so3.hat(_v(xi)), W)


@kernel
def Ad(R, t):  # noqa: N802, N803
    """(6, 6) adjoint of g = (R, t): Ad_g xi = vee(g hat(xi) g^{-1}), i.e.
    Ad_g (u, v) = (R u, R v + t x R u), matrix [[R, 0], [hat(t) R, R]] (docs/theory.md,
    "Conventions").
    Defining identity: g exp(xi) g^{-1} = exp(Ad_g xi)."""
    return _blocks(R, _zero9(), so3.matmul(so3.hat(t), R), R)


@kernel
def Ad_apply(R, t, xi):  # noqa: N802, N803
    """Ad_g xi -> 6-tuple (R w, R v + t x R w), without allocation."""
    rw = so3.matvec(R, _w(xi))
    return _join(rw, so3.add(so3.matvec(R, _v(xi)), so3.cross(t, rw)))


@kernel
def coAd(R, t, m, n):  # noqa: N802, N803
    """Coadjoint action Ad*_{(R,t)}(m, n) = (R^T (m - t x n), R^T n) -> (m', n') 3-tuples.

    This is the transpose (dual) of the adjoint: <coAd(g, mu), xi> = <mu, Ad_g xi> for the
    pairing <(m, n), (w, v)> = m.w + n.v, i.e. coAd(g, .) = Ad(g).T (docs/theory.md, "Conventions"
    [V]).
    It re-expresses a body momentum mu held in the frame of an element g in the frame of
    g (R, t) without changing the spatial momentum: for h = (R, t),
    spatial_momentum(compose(g, h), coAd(h, mu)) == spatial_momentum(g, mu). It is a right
    action: coAd(g h, mu) = coAd(h, coAd(g, mu)). LAVI update (docs/theory.md, "The implicit Cayley
    variational integrator"):
    mu_prev_transported = coAd(cay(dt xi_prev), mu_prev)."""
    return so3.matTvec(R, so3.sub(m, so3.cross(t, n))), so3.matTvec(R, n)


@kernel
def spatial_momentum(R, t, m, n):  # noqa: N803
    """Spatial momentum of the body momentum (m, n) of g = (R, t):
    Ad*_{g^{-1}}(m, n) = (R m + t x R n, R n) -> (m', n') (docs/theory.md, "Conventions", eq.
    4.2.19).
    Equals Ad(inverse(g)).T @ (m, n) and inverts coAd: coAd(g, spatial_momentum(g, mu)) = mu."""
    rn = so3.matvec(R, n)
    return so3.add(so3.matvec(R, m), so3.cross(t, rn)), rn


# --- exponential map and its Jacobians -------------------------------------------------------


@kernel
def exp(xi):
    """Exponential map expm(hat xi) -> (R, t) in closed form: R = so3.exp(w), t = so3.jl(w) v."""
    w = _w(xi)
    return so3.exp(w), so3.matvec(so3.jl(w), _v(xi))


@kernel
def log(R, t):  # noqa: N803
    """Inverse of exp -> 6-tuple (w, v): w = so3.log(R) (|w| <= pi), v = so3.jl_inv(w) t."""
    w = so3.log(R)
    return _join(w, so3.matvec(so3.jl_inv(w), t))


# Taylor coefficients (in x = p^2) of the three ratios of _q_coefficients, j = 0..7:
# (-1)^j / (2j+3)!, (-1)^j / (2j+4)!, (-1)^j (j+1) / (2j+5)!.
_C1 = (
    1.0 / 6.0,
    -1.0 / 120.0,
    1.0 / 5040.0,
    -1.0 / 362880.0,
    1.0 / 39916800.0,
    -1.0 / 6227020800.0,
    1.0 / 1307674368000.0,
    -1.0 / 355687428096000.0,
)
_C2 = (
    1.0 / 24.0,
    -1.0 / 720.0,
    1.0 / 40320.0,
    -1.0 / 3628800.0,
    1.0 / 479001600.0,
    -1.0 / 87178291200.0,
    1.0 / 20922789888000.0,
    -1.0 / 6402373705728000.0,
)
_C3 = (
    1.0 / 120.0,
    -2.0 / 5040.0,
    3.0 / 362880.0,
    -4.0 / 39916800.0,
    5.0 / 6227020800.0,
    -6.0 / 1307674368000.0,
    7.0 / 355687428096000.0,
    -8.0 / 121645100408832000.0,
)


@kernel
def _q_coefficients(p):
    """(p - sin p)/p^3, (p^2 + 2 cos p - 2)/(2 p^4), (2 p - 3 sin p + p cos p)/(2 p^5), p >= 0.

    The closed forms lose ~eps/p^2 .. eps/p^4 relative accuracy to cancellation, which would
    pollute Q by ~eps |v| / p; so for p < _SERIES (= 0.5) the eight-term Taylor series in p^2 are
    used instead (truncation < 1e-21 relative there). Above _SERIES the closed forms (with
    2 - 2 cos p written as 4 sin^2(p/2)) are accurate to a few eps.
    """
    x = p * p
    if p < _SERIES:
        c1 = 0.0
        c2 = 0.0
        c3 = 0.0
        for j in range(7, -1, -1):
            c1 = c1 * x + _C1[j]
            c2 = c2 * x + _C2[j]
            c3 = c3 * x + _C3[j]
        return c1, c2, c3
    s = math.sin(p)
    h = math.sin(0.5 * p)
    c1 = (p - s) / (x * p)
    c2 = (x - 4.0 * h * h) / (2.0 * x * x)
    c3 = (2.0 * p - 3.0 * s + p * math.cos(p)) / (2.0 * x * x * p)
    return c1, c2, c3


@kernel
def q_matrix(xi):
    """Barfoot's Q(xi), the bottom-left block of jl(xi) (9-tuple). With W = hat w, V = hat v,
    p = |w|: Q = V/2 + c1 (WV + VW + WVW) + c2 (WWV + VWW - 3 WVW) + c3 (WVWW + WWVW),
    c1 = (p - sin p)/p^3, c2 = (p^2 + 2 cos p - 2)/(2 p^4), c3 = (2p - 3 sin p + p cos p)/(2 p^5)
    (Barfoot, State Estimation for Robotics, eq. 7.86, with rho = v, phi = w);
    equivalently Q = sum_{a,b >= 0} W^a V W^b / (a + b + 2)!."""
    w = _w(xi)
    W = so3.hat(w)  # noqa: N806
    V = so3.hat(_v(xi))  # noqa: N806
    c1, c2, c3 = _q_coefficients(so3.norm(w))
    WV = so3.matmul(W, V)  # noqa: N806
    VW = so3.matmul(V, W)  # noqa: N806
    WVW = so3.matmul(WV, W)  # noqa: N806
    WWV = so3.matmul(W, WV)  # noqa: N806
    VWW = so3.matmul(VW, W)  # noqa: N806
    WVWW = so3.matmul(WVW, W)  # noqa: N806
    WWVW = so3.matmul(W, WVW)  # noqa: N806
    q = _mscale(0.5, V)
    q = _madd(q, _mscale(c1, _madd(_madd(WV, VW), WVW)))
    q = _madd(q, _mscale(c2, _madd(_madd(WWV, VWW), _mscale(-3.0, WVW))))
    q = _madd(q, _mscale(c3, _madd(WVWW, WWVW)))
    return q


@kernel
def jl(xi):
    """(6, 6) left Jacobian of exp, exp(xi + d) ~= exp(jl(xi) d) exp(xi):
    [[J, 0], [Q, J]] with J = so3.jl(w) and Q = q_matrix(xi); = sum_k ad(xi)^k / (k + 1)!."""
    j = so3.jl(_w(xi))
    return _blocks(j, _zero9(), q_matrix(xi), j)


@kernel
def jr(xi):
    """(6, 6) right Jacobian of exp, exp(xi + d) ~= exp(xi) exp(jr(xi) d); jr(xi) = jl(-xi)."""
    return jl(_neg6(xi))


@kernel
def jl_inv(xi):
    """(6, 6) inverse of jl: [[Ji, 0], [-Ji Q Ji, Ji]], Ji = so3.jl_inv(w); valid for |w| < 2 pi."""
    ji = so3.jl_inv(_w(xi))
    b = so3.matmul(ji, so3.matmul(q_matrix(xi), ji))
    return _blocks(ji, _zero9(), _mscale(-1.0, b), ji)


@kernel
def jr_inv(xi):
    """(6, 6) inverse of jr: jl_inv(-xi)."""
    return jl_inv(_neg6(xi))


# --- Cayley map and its Jacobians ------------------------------------------------------------


@kernel
def cay(xi):
    """Matrix Cayley map (I - hat xi / 2)^{-1} (I + hat xi / 2) (4x4) -> (R, t):
    R = so3.cay(w), t = (I - hat w/2)^{-1} v = (4 v + 2 w x v + (w.v) w) / (4 + |w|^2)
    (docs/theory.md, "The implicit Cayley variational integrator"). Note t differs from
    so3.cay_jl(w) v. cay(-xi) = cay(xi)^{-1}."""
    w = _w(xi)
    return so3.cay(w), so3.matvec(so3.i_minus_half_hat_inv(w), _v(xi))


@kernel
def cay_inv(R, t):  # noqa: N803
    """Inverse Cayley -> 6-tuple (w, v): w = so3.cay_inv(R) (rotation angle < pi),
    v = (I - hat w / 2) t = t - w x t / 2."""
    w = so3.cay_inv(R)
    return _join(w, so3.sub(t, so3.scale(0.5, so3.cross(w, t))))


@kernel
def cay_jl(xi):
    """(6, 6) right-trivialised derivative d^R tau of the Cayley map (docs/theory.md, "The implicit
    Cayley variational integrator"):
    cay(xi + d) ~= exp(cay_jl(xi) d) cay(xi), i.e. d/de cay(xi + e d) cay(xi)^{-1} at e = 0 is
    hat(cay_jl(xi) d) = (I - hat xi/2)^{-1} hat(d) (I + hat xi/2)^{-1}. Blocks:
    [[so3.cay_jl(w), 0], [hat(v) so3.cay_jl(w) / 2, (I - hat w / 2)^{-1}]]."""
    w = _w(xi)
    d = so3.cay_jl(w)
    lower = _mscale(0.5, so3.matmul(so3.hat(_v(xi)), d))
    return _blocks(d, _zero9(), lower, so3.i_minus_half_hat_inv(w))


@kernel
def cay_jl_inv(xi):
    """(6, 6) inverse of cay_jl (docs/theory.md, "The implicit Cayley variational integrator"),
    blocks [[A, 0], [B, C]] with
    A = I - hat w/2 + w w^T/4 = so3.cay_jl_inv(w), B = -(I - hat w/2) hat(v)/2, C = I - hat w/2;
    as 4x4 matrices hat(cay_jl_inv(xi) d) = hat d - [hat xi, hat d]/2 - hat xi hat d hat xi/4."""
    w = _w(xi)
    c = _madd(so3.identity(), _mscale(-0.5, so3.hat(w)))
    b = _mscale(-0.5, so3.matmul(c, so3.hat(_v(xi))))
    return _blocks(so3.cay_jl_inv(w), _zero9(), b, c)


@kernel
def cay_jr(xi):
    """(6, 6) left-trivialised derivative of Cayley, cay(xi + d) ~= cay(xi) exp(cay_jr(xi) d);
    cay_jr(xi) = cay_jl(-xi)."""
    return cay_jl(_neg6(xi))


@kernel
def cay_jr_inv(xi):
    """(6, 6) inverse of cay_jr: cay_jl_inv(-xi)."""
    return cay_jl_inv(_neg6(xi))


@kernel
def cay_jl_inv_T_apply(xi, y):  # noqa: N802
    """cay_jl_inv(xi).T @ y -> 6-tuple, with no allocation (docs/theory.md, "The implicit Cayley
    variational integrator"):
    (A^T y_w + B^T y_v, C^T y_v) with A^T a = a + w x a / 2 + (w.a) w / 4,
    C^T a = a + w x a / 2, B^T a = v x (C^T a) / 2. LAVI momentum (docs/theory.md, "The implicit
    Cayley variational integrator"):
    mu = w_a l_K cay_jl_inv_T_apply(dt xi, (J omega, M gamma)) -- note the argument dt xi."""
    w = _w(xi)
    yw = _w(y)
    yv = _v(y)
    cy = so3.add(yv, so3.scale(0.5, so3.cross(w, yv)))
    ay = so3.add(so3.add(yw, so3.scale(0.5, so3.cross(w, yw))), so3.scale(0.25 * so3.dot(w, yw), w))
    return _join(so3.add(ay, so3.scale(0.5, so3.cross(_v(xi), cy))), cy)
