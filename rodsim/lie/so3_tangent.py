"""Derivatives of the SO(3) Jacobians applied to a vector, for analytic tangent stiffnesses.

The rod element and the supports (rodsim.model.rod_tangent, rodsim.model.support_tangent)
differentiate their forces, which contain jl(v) a, jl^T(v) a and jl^{-T}(psi) u, with respect to
the rotation vector. With t = |v| and the Jacobians of docs/theory.md, "Conventions":

    jl(v) a      = a + b v x a + c v x (v x a),        b = (1 - cos t)/t^2, c = (t - sin t)/t^3
    jl^{-1}(v) u = u - 1/2 v x u + e v x (v x u),      e = (1 - (t/2) cot(t/2))/t^2
    (jl^T = jl(-v), jl^{-T}(v) u = u + 1/2 v x u + e v x (v x u))

and, from d(v x (v x a))/dv = (v.a) I + v a^T - 2 a v^T and dt/dv = v^T/t (notes36.md §3):

    D_v[jl(v) a]        = -b hat(a) + c [(v.a) I + v a^T - 2 a v^T]
                          + (b'/t) (v x a) v^T + (c'/t) (v x (v x a)) v^T
    D_v[jl^T(v) a]      = -D_u[jl(u) a] at u = -v
    D_v[jl^{-T}(v) u]   = -/+ 1/2 hat(u) + e [(v.u) I + v u^T - 2 u v^T] + (e'/t) (v x (v x u)) v^T

(upper sign for jl^{-T}, lower for jl^{-1}). The ratios b'/t, c'/t, e'/t cancel badly in closed
form: their numerators are differences of O(1) terms that are O(t^4)..O(t^6) (notes36.md §3,
errata). Measured against the exact series, the closed form of e'/t is off by 1e-12 relative at
t = 0.5 and 1e-14 at t = 1, that of c'/t by 4e-14 at t = 0.5. So every coefficient uses its
Taylor series (in t^2, Horner, coefficients exact rationals rounded once) below SERIES_T = 1.5,
where 16 terms leave a truncation error below 1e-17 relative (e and e'/t have radius 2 pi: their
terms fall by (t/2 pi)^2, so they need the most), and the closed forms above, where they are
accurate to a few ulp (e'/t: 3e-16 at 1.5, 4e-15 at 2). Valid for t < 2 pi (jl^{-1} is singular
at 2 pi); rodsim calls it with t <= pi.

Functions are float64 numba kernels on tuples (rodsim.lie.so3 conventions): a vector is a
3-tuple, a 3x3 matrix a row-major 9-tuple.
"""

import math
from fractions import Fraction
from math import factorial

from rodsim.jit import kernel
from rodsim.lie import so3

SERIES_T = 1.5  # below this angle the coefficients use their Taylor series
_TERMS = 16  # series terms: truncation < 1e-17 relative at SERIES_T for all six coefficients


def _bernoulli(n: int) -> list[Fraction]:
    """Bernoulli numbers B_0..B_n (B_1 = -1/2), exactly."""
    out = [Fraction(1)]
    for m in range(1, n + 1):
        s = sum(
            Fraction(factorial(m + 1), factorial(k) * factorial(m + 1 - k)) * out[k]
            for k in range(m)
        )
        out.append(-s / (m + 1))
    return out


def _series_tables(n: int):
    """Coefficients of the six series in t^2, highest power first (for Horner):
    b, c of jl; b'/t, c'/t; e of jl^{-1} (x cot x = sum (-1)^k B_2k (2x)^2k/(2k)!) and e'/t."""
    bern = _bernoulli(2 * n + 4)
    b = [Fraction((-1) ** k, factorial(2 * k + 2)) for k in range(n)]
    c = [Fraction((-1) ** k, factorial(2 * k + 3)) for k in range(n)]
    db = [Fraction((-1) ** k * 2 * k, factorial(2 * k + 2)) for k in range(1, n + 1)]
    dc = [Fraction((-1) ** k * 2 * k, factorial(2 * k + 3)) for k in range(1, n + 1)]
    e = [-((-1) ** k) * bern[2 * k] / factorial(2 * k) for k in range(1, n + 1)]
    de = [-((-1) ** k) * bern[2 * k] * (2 * k - 2) / factorial(2 * k) for k in range(2, n + 2)]
    return tuple(tuple(float(x) for x in reversed(t)) for t in (b, c, db, dc, e, de))


_B, _C, _DB, _DC, _E, _DE = _series_tables(_TERMS)


@kernel(inline="always")
def _horner(coeffs, t2):
    s = 0.0
    for a in coeffs:
        s = s * t2 + a
    return s


@kernel
def jl_coefficients(t):
    """(b, c, b'/t, c'/t) of jl at angle t >= 0: b = (1 - cos t)/t^2, c = (t - sin t)/t^3."""
    if t < SERIES_T:
        t2 = t * t
        return _horner(_B, t2), _horner(_C, t2), _horner(_DB, t2), _horner(_DC, t2)
    sn = math.sin(t)
    h = math.sin(0.5 * t)
    one_cos = 2.0 * h * h  # 1 - cos t without cancellation
    it2 = 1.0 / (t * t)
    b = one_cos * it2
    c = (t - sn) * it2 / t
    db = (t * sn - 2.0 * one_cos) * it2 * it2  # (b' t^3 = t sin t - 2 (1 - cos t)) / t^4
    dc = (t * one_cos - 3.0 * (t - sn)) * it2 * it2 / t
    return b, c, db, dc


@kernel
def jl_inv_coefficients(t):
    """(e, e'/t) of jl^{-1} at angle 0 <= t < 2 pi: e = (1 - (t/2) cot(t/2))/t^2."""
    if t < SERIES_T:
        t2 = t * t
        return _horner(_E, t2), _horner(_DE, t2)
    x = 0.5 * t
    s = math.sin(x)
    w = math.cos(x)
    e = (1.0 - x * w / s) / (t * t)
    de = (x * (x + s * w) - 2.0 * s * s) / (16.0 * x * x * x * x * s * s)
    return e, de


@kernel(inline="always")
def _d_apply(v, a, hat_coefficient, c, dc_t):
    """hat_coefficient hat(a) + c [(v.a) I + v a^T - 2 a v^T] + (v x (v x a)) (dc_t v)^T, the
    common shape of the three derivatives (the (b'/t) (v x a) v^T term is added by the caller)."""
    va = so3.dot(v, a)
    w = so3.cross(v, so3.cross(v, a))
    p = hat_coefficient
    return (
        c * (va + v[0] * a[0] - 2.0 * a[0] * v[0]) + dc_t * w[0] * v[0],
        -p * a[2] + c * (v[0] * a[1] - 2.0 * a[0] * v[1]) + dc_t * w[0] * v[1],
        p * a[1] + c * (v[0] * a[2] - 2.0 * a[0] * v[2]) + dc_t * w[0] * v[2],
        p * a[2] + c * (v[1] * a[0] - 2.0 * a[1] * v[0]) + dc_t * w[1] * v[0],
        c * (va + v[1] * a[1] - 2.0 * a[1] * v[1]) + dc_t * w[1] * v[1],
        -p * a[0] + c * (v[1] * a[2] - 2.0 * a[1] * v[2]) + dc_t * w[1] * v[2],
        -p * a[1] + c * (v[2] * a[0] - 2.0 * a[2] * v[0]) + dc_t * w[2] * v[0],
        p * a[0] + c * (v[2] * a[1] - 2.0 * a[2] * v[1]) + dc_t * w[2] * v[1],
        c * (va + v[2] * a[2] - 2.0 * a[2] * v[2]) + dc_t * w[2] * v[2],
    )


@kernel
def d_jl_apply(v, a):
    """D_v[jl(v) a] (9-tuple, rows = components of jl(v) a, columns = of v); units of a."""
    b, c, db, dc = jl_coefficients(so3.norm(v))
    m = _d_apply(v, a, -b, c, dc)
    r = so3.cross(v, a)
    return (
        m[0] + db * r[0] * v[0], m[1] + db * r[0] * v[1], m[2] + db * r[0] * v[2],
        m[3] + db * r[1] * v[0], m[4] + db * r[1] * v[1], m[5] + db * r[1] * v[2],
        m[6] + db * r[2] * v[0], m[7] + db * r[2] * v[1], m[8] + db * r[2] * v[2],
    )  # fmt: skip


@kernel
def d_jlT_apply(v, a):  # noqa: N802
    """D_v[jl^T(v) a] = -D_u[jl(u) a] at u = -v (jl^T(v) = jl(-v))."""
    m = d_jl_apply((-v[0], -v[1], -v[2]), a)
    return (-m[0], -m[1], -m[2], -m[3], -m[4], -m[5], -m[6], -m[7], -m[8])


@kernel
def d_jl_inv_apply(v, u, sign):
    """D_v[jl^{-T}(v) u] (sign +1) or D_v[jl^{-1}(v) u] (sign -1), the derivatives of
    rodsim.model.rod.jl_apply(v, e, u, sign) in v (9-tuple)."""
    e, de = jl_inv_coefficients(so3.norm(v))
    return _d_apply(v, u, -0.5 * sign, e, de)


@kernel
def jl_matrix(v):
    """jl(v) (9-tuple) with the coefficients above (accurate at every angle)."""
    t = so3.norm(v)
    b, c, _, _ = jl_coefficients(t)
    return so3._sym_rot(1.0 - c * t * t, b, c, v)


@kernel
def jl_inv_matrix(v):
    """jl^{-1}(v) = I - hat(v)/2 + e hat(v)^2 (9-tuple); its transpose is jl^{-T}(v)."""
    t = so3.norm(v)
    e, _ = jl_inv_coefficients(t)
    return so3._sym_rot(1.0 - e * t * t, -0.5, e, v)
