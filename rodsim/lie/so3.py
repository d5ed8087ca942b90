"""SO(3): hat/vee, exp/log, Cayley, their left/right Jacobians, quaternions.

Every function is a numba ``njit`` function on plain float tuples, so kernels can call it with
no allocation and Python code can call it directly:

- a vector is a 3-tuple ``(x, y, z)``;
- a matrix is a row-major 9-tuple ``(a00, a01, a02, a10, ..., a22)``;
- a quaternion is a 4-tuple ``(w, x, y, z)``, scalar first, unit norm, ``w >= 0`` on output.

Use :func:`rodsim.lie.arrays.m` / :func:`rodsim.lie.arrays.t3` to convert to and from NumPy.

Conventions (docs/theory.md, "Conventions"): ``hat(v) @ w == cross(v, w)``; spatial increments
left-multiply. The Jacobians are defined by

- ``exp(v + d) ~= exp(jl(v) @ d) @ exp(v)`` (left, spatial) and
  ``exp(v + d) ~= exp(v) @ exp(jr(v) @ d)`` (right, material), ``jr(v) = jl(-v) = jl(v).T``;
- ``cay(v + d) ~= exp(cay_jl(v) @ d) @ cay(v)`` with ``cay_jl(v) = 2 (2 I + hat v) / (4 + |v|^2)``
  (the right-trivialised ``dcay`` of docs/theory.md, "Conventions") and ``cay_jr(v) = cay_jl(-v)``.
"""

import math

from rodsim.jit import kernel

_SMALL = 1.0e-3  # below this angle the trigonometric ratios use their Taylor series


# --- small linear algebra on tuples ---------------------------------------------------------


@kernel(inline="always")
def add(a, b):
    """Vector sum a + b."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel(inline="always")
def sub(a, b):
    """Vector difference a - b."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel(inline="always")
def scale(s, a):
    """Scalar times vector."""
    return (s * a[0], s * a[1], s * a[2])


@kernel(inline="always")
def dot(a, b):
    """Dot product."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel(inline="always")
def cross(a, b):
    """Cross product a x b."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel(inline="always")
def norm(a):
    """Euclidean norm."""
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel(inline="always")
def matvec(m, v):
    """m @ v."""
    return (
        m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
        m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
        m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
    )


@kernel(inline="always")
def matTvec(m, v):  # noqa: N802
    """m.T @ v."""
    return (
        m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
        m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
        m[2] * v[0] + m[5] * v[1] + m[8] * v[2],
    )


@kernel(inline="always")
def matmul(a, b):
    """a @ b."""
    return (
        a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
        a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
        a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
        a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
        a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
        a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
        a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
        a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
        a[6] * b[2] + a[7] * b[5] + a[8] * b[8],
    )


@kernel(inline="always")
def matTmul(a, b):  # noqa: N802
    """a.T @ b."""
    return (
        a[0] * b[0] + a[3] * b[3] + a[6] * b[6],
        a[0] * b[1] + a[3] * b[4] + a[6] * b[7],
        a[0] * b[2] + a[3] * b[5] + a[6] * b[8],
        a[1] * b[0] + a[4] * b[3] + a[7] * b[6],
        a[1] * b[1] + a[4] * b[4] + a[7] * b[7],
        a[1] * b[2] + a[4] * b[5] + a[7] * b[8],
        a[2] * b[0] + a[5] * b[3] + a[8] * b[6],
        a[2] * b[1] + a[5] * b[4] + a[8] * b[7],
        a[2] * b[2] + a[5] * b[5] + a[8] * b[8],
    )


@kernel(inline="always")
def matmulT(a, b):  # noqa: N802
    """a @ b.T."""
    return (
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2],
        a[0] * b[3] + a[1] * b[4] + a[2] * b[5],
        a[0] * b[6] + a[1] * b[7] + a[2] * b[8],
        a[3] * b[0] + a[4] * b[1] + a[5] * b[2],
        a[3] * b[3] + a[4] * b[4] + a[5] * b[5],
        a[3] * b[6] + a[4] * b[7] + a[5] * b[8],
        a[6] * b[0] + a[7] * b[1] + a[8] * b[2],
        a[6] * b[3] + a[7] * b[4] + a[8] * b[5],
        a[6] * b[6] + a[7] * b[7] + a[8] * b[8],
    )


@kernel(inline="always")
def outer(a, b):
    """a b^T as a 9-tuple."""
    return (
        a[0] * b[0], a[0] * b[1], a[0] * b[2],
        a[1] * b[0], a[1] * b[1], a[1] * b[2],
        a[2] * b[0], a[2] * b[1], a[2] * b[2],
    )  # fmt: skip


@kernel(inline="always")
def mat_axpy(s, a, b):
    """s a + b for 9-tuples."""
    return (
        s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2],
        s * a[3] + b[3], s * a[4] + b[4], s * a[5] + b[5],
        s * a[6] + b[6], s * a[7] + b[7], s * a[8] + b[8],
    )  # fmt: skip


@kernel(inline="always")
def transpose(a):
    """a.T."""
    return (a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8])


@kernel(inline="always")
def identity():
    """The 3x3 identity."""
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@kernel(inline="always")
def solve3(a, b):
    """Solve a @ x = b with the adjugate (for the small, well-conditioned 3x3 systems here)."""
    i00 = a[4] * a[8] - a[5] * a[7]
    i01 = a[2] * a[7] - a[1] * a[8]
    i02 = a[1] * a[5] - a[2] * a[4]
    i10 = a[5] * a[6] - a[3] * a[8]
    i11 = a[0] * a[8] - a[2] * a[6]
    i12 = a[2] * a[3] - a[0] * a[5]
    i20 = a[3] * a[7] - a[4] * a[6]
    i21 = a[1] * a[6] - a[0] * a[7]
    i22 = a[0] * a[4] - a[1] * a[3]
    inv = 1.0 / (a[0] * i00 + a[1] * i10 + a[2] * i20)
    return (
        (i00 * b[0] + i01 * b[1] + i02 * b[2]) * inv,
        (i10 * b[0] + i11 * b[1] + i12 * b[2]) * inv,
        (i20 * b[0] + i21 * b[1] + i22 * b[2]) * inv,
    )


# --- hat and vee ----------------------------------------------------------------------------


@kernel(inline="always")
def vec_at(arr, a):
    """Row arr[a] of an (N,3) array as a 3-tuple."""
    return (arr[a, 0], arr[a, 1], arr[a, 2])


@kernel(inline="always")
def quat_at(arr, a):
    """Row arr[a] of an (N,4) array of quaternions (w, x, y, z) as a 4-tuple."""
    return (arr[a, 0], arr[a, 1], arr[a, 2], arr[a, 3])


@kernel(inline="always")
def mat_at(arr, a):
    """The 3x3 block arr[a] of an (N,3,3) array as a row-major 9-tuple."""
    return (
        arr[a, 0, 0], arr[a, 0, 1], arr[a, 0, 2],
        arr[a, 1, 0], arr[a, 1, 1], arr[a, 1, 2],
        arr[a, 2, 0], arr[a, 2, 1], arr[a, 2, 2],
    )  # fmt: skip


@kernel(inline="always")
def hat(v):
    """Skew matrix of v: hat(v) @ w = v x w."""
    return (0.0, -v[2], v[1], v[2], 0.0, -v[0], -v[1], v[0], 0.0)


@kernel(inline="always")
def vee(m):
    """Axial vector of the skew part of m: vee(hat(v)) = v."""
    return (0.5 * (m[7] - m[5]), 0.5 * (m[2] - m[6]), 0.5 * (m[3] - m[1]))


@kernel(inline="always")
def _sym_rot(c, a, b, v):
    """c I + a hat(v) + b v v^T, the common shape of every SO(3) map below."""
    x, y, z = v
    return (
        c + b * x * x,
        b * x * y - a * z,
        b * x * z + a * y,
        b * x * y + a * z,
        c + b * y * y,
        b * y * z - a * x,
        b * x * z - a * y,
        b * y * z + a * x,
        c + b * z * z,
    )


# --- exponential map and its Jacobians ------------------------------------------------------


@kernel
def _exp_coefficients(t):
    """sin(t)/t and (1 - cos t)/t^2, accurate at small t."""
    if t < _SMALL:
        t2 = t * t
        return 1.0 - t2 / 6.0 + t2 * t2 / 120.0, 0.5 - t2 / 24.0 + t2 * t2 / 720.0
    s = math.sin(0.5 * t) / t
    return math.sin(t) / t, 2.0 * s * s


@kernel
def exp(v):
    """Rodrigues: exp(hat v) = I + sin t/t hat v + (1 - cos t)/t^2 hat v^2, t = |v|."""
    t = norm(v)
    a, b = _exp_coefficients(t)
    return _sym_rot(1.0 - b * t * t, a, b, v)


@kernel
def _third(t):
    """(t - sin t)/t^3."""
    if t < _SMALL:
        t2 = t * t
        return 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    return (t - math.sin(t)) / (t * t * t)


@kernel
def jl(v):
    """Left Jacobian of exp: I + (1 - cos t)/t^2 hat v + (t - sin t)/t^3 hat v^2."""
    t = norm(v)
    _, b = _exp_coefficients(t)
    c = _third(t)
    return _sym_rot(1.0 - c * t * t, b, c, v)


@kernel
def jr(v):
    """Right Jacobian of exp: jl(-v) = jl(v).T."""
    return jl((-v[0], -v[1], -v[2]))


@kernel
def _jinv_coefficient(t):
    """(1 - (t/2) cot(t/2)) / t^2, the hat v^2 coefficient of jl^{-1} (valid for t < 2 pi)."""
    if t < _SMALL:
        t2 = t * t
        return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    h = 0.5 * t
    return (1.0 - h * math.cos(h) / math.sin(h)) / (t * t)


@kernel
def jl_inv(v):
    """Inverse left Jacobian: I - hat v / 2 + (1 - (t/2) cot(t/2))/t^2 hat v^2."""
    t = norm(v)
    e = _jinv_coefficient(t)
    return _sym_rot(1.0 - e * t * t, -0.5, e, v)


@kernel
def jr_inv(v):
    """Inverse right Jacobian: jl_inv(-v)."""
    return jl_inv((-v[0], -v[1], -v[2]))


# --- quaternions ----------------------------------------------------------------------------


@kernel
def quat_from_matrix(r):
    """Spurrier's singularity-free extraction (docs/theory.md, "Conventions", corrected), w >= 0."""
    tr = r[0] + r[4] + r[8]
    a = max(tr, r[0], r[4], r[8])
    if a == tr:
        w = 0.5 * math.sqrt(1.0 + tr)
        f = 0.25 / w
        x = (r[7] - r[5]) * f
        y = (r[2] - r[6]) * f
        z = (r[3] - r[1]) * f
    elif a == r[0]:
        x = math.sqrt(0.5 * r[0] + 0.25 * (1.0 - tr))
        f = 0.25 / x
        w = (r[7] - r[5]) * f
        y = (r[1] + r[3]) * f
        z = (r[2] + r[6]) * f
    elif a == r[4]:
        y = math.sqrt(0.5 * r[4] + 0.25 * (1.0 - tr))
        f = 0.25 / y
        w = (r[2] - r[6]) * f
        x = (r[1] + r[3]) * f
        z = (r[5] + r[7]) * f
    else:
        z = math.sqrt(0.5 * r[8] + 0.25 * (1.0 - tr))
        f = 0.25 / z
        w = (r[3] - r[1]) * f
        x = (r[2] + r[6]) * f
        y = (r[5] + r[7]) * f
    if w < 0.0:
        return (-w, -x, -y, -z)
    return (w, x, y, z)


@kernel
def matrix_from_quat(q):
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
    )


@kernel
def quat_mul(p, q):
    """Hamilton product p * q, so that R(p * q) = R(p) @ R(q)."""
    return (
        p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
        p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
        p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
        p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0],
    )


# --- logarithm ------------------------------------------------------------------------------


@kernel
def log(r):
    """Rotation vector of r, |log r| <= pi; through Spurrier, so accurate near 0 and near pi."""
    w, x, y, z = quat_from_matrix(r)
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1.0e-7:
        f = 2.0 / w * (1.0 - s * s / (3.0 * w * w))  # 2 atan2(s, w)/s to O(s^4)
    else:
        f = 2.0 * math.atan2(s, w) / s
    return (f * x, f * y, f * z)


# --- Cayley map -----------------------------------------------------------------------------


@kernel
def cay(v):
    """cay(v) = (I - hat v/2)^{-1} (I + hat v/2) = I + 4/(4 + |v|^2) (hat v + hat v^2 / 2)."""
    n2 = dot(v, v)
    a = 4.0 / (4.0 + n2)
    return _sym_rot(1.0 - 0.5 * a * n2, a, 0.5 * a, v)


@kernel(inline="always")
def i_minus_half_hat_inv(v):
    """(I - hat v/2)^{-1} = (4 I + 2 hat v + v v^T)/(4 + |v|^2): the translation factor of the
    SE(3) Cayley map (docs/theory.md, "The implicit Cayley variational integrator")."""
    c = 1.0 / (4.0 + dot(v, v))
    return _sym_rot(4.0 * c, 2.0 * c, c, v)


@kernel
def cay_inv(r):
    """Inverse Cayley: v = 2 q_v / w (rotation by angle t gives |v| = 2 tan(t/2)); t < pi."""
    w, x, y, z = quat_from_matrix(r)
    f = 2.0 / w
    return (f * x, f * y, f * z)


@kernel
def cay_jl(v):
    """Left (right-trivialised) Jacobian of Cayley: 2 (2 I + hat v) / (4 + |v|^2)."""
    a = 2.0 / (4.0 + dot(v, v))
    return _sym_rot(2.0 * a, a, 0.0, v)


@kernel
def cay_jl_inv(v):
    """Inverse of cay_jl: I - hat v / 2 + v v^T / 4."""
    return _sym_rot(1.0, -0.5, 0.25, v)


@kernel
def cay_jr(v):
    """Right (left-trivialised) Jacobian of Cayley: cay_jl(-v)."""
    return cay_jl((-v[0], -v[1], -v[2]))


@kernel
def cay_jr_inv(v):
    """Inverse of cay_jr: I + hat v / 2 + v v^T / 4."""
    return _sym_rot(1.0, 0.5, 0.25, v)
