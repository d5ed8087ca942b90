"""Tests for rodsim.lie.so3: maps, Jacobians (checked by central finite differences), quaternions.

Finite-difference tolerances: every derivative is checked with a central difference of step
H = 1e-6 of a map whose values are computed to ~1e-16 absolute, so the round-off error of the
difference is ~1e-16 / H = 1e-10 and the truncation error is ~H^2 |f'''| / 6 < 1e-11 for the
O(1) derivatives here; FD_TOL = 1e-8 leaves a factor ~100 of margin over both.

Value comparisons between two independent float evaluations of O(1) quantities use
ROUND = 4e-15 (about 18 ulp): e.g. exp vs scipy differ by up to ~5 ulp near angle pi.
"""

import math

import numpy as np
import pytest
from numba import njit
from scipy.spatial.transform import Rotation

from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix, as_vector, m, v

H = 1.0e-6
FD_TOL = 1.0e-8
ROUND = 4.0e-15
ANGLES = [0.0, 1e-12, 1e-6, 1e-3 * (1 - 1e-6), 1e-3, 1e-3 * (1 + 1e-6), 0.5, 2.0, math.pi - 1e-9]
SEEDS = [0, 1, 2]


def rotvec(rng, angle):
    """Random rotation vector of the given angle."""
    u = rng.normal(size=3)
    return tuple(float(x) for x in angle * u / np.linalg.norm(u))


def hat_np(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def fd_columns(f, x, h=H):
    """Central-difference Jacobian of f: R^n -> R^m at x (columns = partial derivatives)."""
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2.0 * h))
    return np.array(cols).T


def assert_fd(jac, fd, tol=FD_TOL):
    err = np.max(np.abs(np.asarray(jac) - fd))
    assert err <= tol * max(1.0, np.max(np.abs(fd))), err


def jl_reference(a):
    """sum_k hat(a)^k / (k + 1)!, summed directly (accurate to a few eps for |a| <= 1)."""
    w = hat_np(a)
    term = np.eye(3)
    total = np.eye(3)
    for k in range(1, 30):
        term = term @ w / (k + 1)
        total = total + term
    return total


# --- small linear algebra, hat/vee -------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_tuple_linear_algebra(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=3), rng.normal(size=3)
    A, B = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))  # noqa: N806
    ta, tb, tA, tB = v(a), v(b), m(A), m(B)  # noqa: N806
    s = 1.7
    np.testing.assert_allclose(so3.add(ta, tb), a + b, rtol=0, atol=ROUND)
    np.testing.assert_allclose(so3.sub(ta, tb), a - b, rtol=0, atol=ROUND)
    np.testing.assert_allclose(so3.scale(s, ta), s * a, rtol=0, atol=ROUND)
    assert abs(so3.dot(ta, tb) - a @ b) < 1e-14
    np.testing.assert_allclose(so3.cross(ta, tb), np.cross(a, b), rtol=0, atol=ROUND)
    assert abs(so3.norm(ta) - np.linalg.norm(a)) < 1e-14
    np.testing.assert_allclose(so3.matvec(tA, ta), A @ a, rtol=0, atol=ROUND)
    np.testing.assert_allclose(so3.matTvec(tA, ta), A.T @ a, rtol=0, atol=ROUND)
    np.testing.assert_allclose(as_matrix(so3.matmul(tA, tB)), A @ B, rtol=0, atol=ROUND)
    np.testing.assert_allclose(as_matrix(so3.matTmul(tA, tB)), A.T @ B, rtol=0, atol=ROUND)
    np.testing.assert_allclose(as_matrix(so3.matmulT(tA, tB)), A @ B.T, rtol=0, atol=ROUND)
    np.testing.assert_array_equal(as_matrix(so3.transpose(tA)), A.T)
    np.testing.assert_array_equal(as_matrix(so3.identity()), np.eye(3))


@pytest.mark.parametrize("seed", SEEDS)
def test_solve3(seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, 3)) + 3.0 * np.eye(3)  # noqa: N806
    b = rng.normal(size=3)
    x = np.linalg.solve(A, b)
    np.testing.assert_allclose(so3.solve3(m(A), v(b)), x, rtol=0, atol=1e-13 * np.abs(x).max())


@pytest.mark.parametrize("seed", SEEDS)
def test_hat_vee(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_array_equal(as_matrix(so3.hat(v(a))), hat_np(a))
    np.testing.assert_allclose(as_matrix(so3.hat(v(a))) @ b, np.cross(a, b), atol=ROUND)
    np.testing.assert_array_equal(so3.vee(so3.hat(v(a))), a)
    # vee takes the axial vector of the skew part
    S = rng.normal(size=(3, 3))  # noqa: N806
    S = S + S.T  # noqa: N806
    np.testing.assert_allclose(so3.vee(m(hat_np(a) + S)), a, rtol=0, atol=ROUND)


# --- exp / log ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES + [3.0, 5.0])
def test_exp_vs_scipy(seed, angle):
    a = rotvec(np.random.default_rng(seed), angle)
    r = as_matrix(so3.exp(a))
    np.testing.assert_allclose(r, Rotation.from_rotvec(a).as_matrix(), rtol=0, atol=ROUND)
    np.testing.assert_allclose(r @ r.T, np.eye(3), rtol=0, atol=ROUND)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES)
def test_log_exp_round_trip(seed, angle):
    a = np.array(rotvec(np.random.default_rng(seed), angle))
    b = np.array(so3.log(so3.exp(v(a))))
    assert np.linalg.norm(b - a) <= 2e-15 * np.linalg.norm(a)  # ~10 ulp, relative


AXES_PI = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1 / 2**0.5, 1 / 2**0.5, 0.0)]


@pytest.mark.parametrize("axis", AXES_PI + [(0.48, -0.6, 0.64)])
def test_log_at_pi(axis):
    n = np.array(axis)
    r = 2.0 * np.outer(n, n) - np.eye(3)  # rotation by exactly pi about n
    a = np.array(so3.log(m(r)))
    assert abs(np.linalg.norm(a) - math.pi) < 1e-15
    assert min(np.linalg.norm(a - math.pi * n), np.linalg.norm(a + math.pi * n)) < ROUND
    np.testing.assert_allclose(as_matrix(so3.exp(v(a))), r, rtol=0, atol=ROUND)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("gap", [1e-3, 1e-6, 1e-9, 1e-12, 0.0])
def test_log_near_pi(seed, gap):
    rng = np.random.default_rng(seed)
    r = so3.exp(rotvec(rng, math.pi - gap))
    a = so3.log(r)
    assert so3.norm(a) <= math.pi + 1e-15
    np.testing.assert_allclose(as_matrix(so3.exp(a)), as_matrix(r), rtol=0, atol=ROUND)


# --- Jacobians of exp --------------------------------------------------------------------------

JAC_ANGLES = [0.0, 1e-6, 1e-3 * (1 - 1e-2), 1e-3, 1e-3 * (1 + 1e-2), 0.3, 1.0, 2.0, 3.0]


def spatial_log_diff(a):
    """x -> log(exp(x) exp(a)^T): its derivative at a is jl(a)."""
    r0 = so3.exp(v(a))
    return lambda x: so3.log(so3.matmulT(so3.exp(v(x)), r0))


def body_log_diff(a):
    """x -> log(exp(a)^T exp(x)): its derivative at a is jr(a)."""
    r0 = so3.exp(v(a))
    return lambda x: so3.log(so3.matTmul(r0, so3.exp(v(x))))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", JAC_ANGLES)
def test_jl_jr_fd(seed, angle):
    a = rotvec(np.random.default_rng(seed), angle)
    assert_fd(as_matrix(so3.jl(a)), fd_columns(spatial_log_diff(a), a))
    assert_fd(as_matrix(so3.jr(a)), fd_columns(body_log_diff(a), a))
    np.testing.assert_allclose(as_matrix(so3.jr(a)), as_matrix(so3.jl(a)).T, rtol=0, atol=ROUND)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", JAC_ANGLES)
def test_jl_inv_jr_inv(seed, angle):
    a = rotvec(np.random.default_rng(seed), angle)
    r0 = so3.exp(a)
    jli, jri = as_matrix(so3.jl_inv(a)), as_matrix(so3.jr_inv(a))
    np.testing.assert_allclose(jli @ as_matrix(so3.jl(a)), np.eye(3), rtol=0, atol=ROUND)
    np.testing.assert_allclose(jri @ as_matrix(so3.jr(a)), np.eye(3), rtol=0, atol=ROUND)
    # d/de log(exp(e d) exp(a)) = jl_inv(a) d and d/de log(exp(a) exp(e d)) = jr_inv(a) d
    fd_l = fd_columns(lambda d: so3.log(so3.matmul(so3.exp(v(d)), r0)), np.zeros(3))
    fd_r = fd_columns(lambda d: so3.log(so3.matmul(r0, so3.exp(v(d)))), np.zeros(3))
    assert_fd(jli, fd_l)
    assert_fd(jri, fd_r)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", [1e-8, 1e-3 * (1 - 1e-9), 1e-3, 1e-3 * (1 + 1e-9), 0.1, 1.0])
def test_jacobian_accuracy_at_series_threshold(seed, angle):
    """The series/closed-form switch at 1e-3 is accurate to round-off on both sides."""
    a = rotvec(np.random.default_rng(seed), angle)
    ref = jl_reference(a)
    np.testing.assert_allclose(as_matrix(so3.jl(a)), ref, rtol=0, atol=ROUND)
    np.testing.assert_allclose(as_matrix(so3.jl_inv(a)), np.linalg.inv(ref), rtol=0, atol=ROUND)
    np.testing.assert_allclose(
        as_matrix(so3.exp(a)), np.eye(3) + hat_np(a) @ ref, rtol=0, atol=ROUND
    )


# --- Cayley ------------------------------------------------------------------------------------

CAY_NORMS = [0.0, 1e-9, 1e-3, 0.1, 1.0, 3.0, 10.0, 50.0]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", CAY_NORMS)
def test_cay_matrix_formula_and_round_trip(seed, size):
    a = np.array(rotvec(np.random.default_rng(seed), size))
    r = as_matrix(so3.cay(v(a)))
    w = hat_np(a)
    ref = np.linalg.solve(np.eye(3) - w / 2, np.eye(3) + w / 2)
    np.testing.assert_allclose(r, ref, rtol=0, atol=ROUND)
    # rotation by 2 atan(|a|/2) about a
    np.testing.assert_allclose(
        r, Rotation.from_rotvec(2 * np.arctan(size / 2) * a / max(size, 1e-300)).as_matrix(),
        rtol=0, atol=ROUND,
    )  # fmt: skip
    b = np.array(so3.cay_inv(m(r)))
    # |a| = 2 tan(angle/2): an O(eps) error of the rotation moves a by O(eps (1 + |a|^2/4))
    assert np.linalg.norm(b - a) <= 2e-15 * size * max(1.0, size / 4.0)


def cay_spatial_diff(a):
    r0 = so3.cay(v(a))
    return lambda x: so3.log(so3.matmulT(so3.cay(v(x)), r0))


def cay_body_diff(a):
    r0 = so3.cay(v(a))
    return lambda x: so3.log(so3.matTmul(r0, so3.cay(v(x))))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", [0.0, 1e-3, 0.5, 2.0, 6.0])
def test_cay_jacobians_fd(seed, size):
    a = rotvec(np.random.default_rng(seed), size)
    r0 = so3.cay(a)
    jl_, jr_ = as_matrix(so3.cay_jl(a)), as_matrix(so3.cay_jr(a))
    assert_fd(jl_, fd_columns(cay_spatial_diff(a), a))
    assert_fd(jr_, fd_columns(cay_body_diff(a), a))
    jli, jri = as_matrix(so3.cay_jl_inv(a)), as_matrix(so3.cay_jr_inv(a))
    np.testing.assert_allclose(jli @ jl_, np.eye(3), rtol=0, atol=ROUND)
    np.testing.assert_allclose(jri @ jr_, np.eye(3), rtol=0, atol=ROUND)
    # d/de cay_inv(exp(e d) cay(a)) = cay_jl_inv(a) d, d/de cay_inv(cay(a) exp(e d)) = cay_jr_inv d
    fd_l = fd_columns(lambda d: so3.cay_inv(so3.matmul(so3.exp(v(d)), r0)), np.zeros(3))
    fd_r = fd_columns(lambda d: so3.cay_inv(so3.matmul(r0, so3.exp(v(d)))), np.zeros(3))
    assert_fd(jli, fd_l)
    assert_fd(jri, fd_r)


# --- quaternions -------------------------------------------------------------------------------


def spurrier_branch(r):
    """Which branch quat_from_matrix takes: 0 = trace, 1..3 = diagonal entry."""
    return int(np.argmax([np.trace(r), r[0, 0], r[1, 1], r[2, 2]]))


def check_quaternion(r):
    q = np.array(so3.quat_from_matrix(m(r)))
    assert q[0] >= 0.0
    assert abs(np.linalg.norm(q) - 1.0) < 1e-15
    np.testing.assert_allclose(as_matrix(so3.matrix_from_quat(v(q))), r, rtol=0, atol=ROUND)
    ref = Rotation.from_matrix(r).as_quat()  # (x, y, z, w)
    ref = np.array([ref[3], ref[0], ref[1], ref[2]])
    if ref[0] < 0 or (ref[0] == 0 and np.dot(ref, q) < 0):
        ref = -ref
    if abs(q[0]) < 1e-12:  # q and -q both have w = 0 here
        ref = ref if np.dot(ref, q) >= 0 else -ref
    np.testing.assert_allclose(q, ref, rtol=0, atol=ROUND)


@pytest.mark.parametrize("seed", range(6))
def test_quaternion_round_trip_random(seed):
    for r in Rotation.random(20, random_state=seed).as_matrix():
        check_quaternion(r)


@pytest.mark.parametrize(
    ("rvec", "branch"),
    [
        ((0.1, -0.2, 0.3), 0),
        ((math.pi, 0.0, 0.0), 1),
        ((0.0, math.pi, 0.0), 2),
        ((0.0, 0.0, math.pi), 3),
        ((math.pi / 2**0.5, math.pi / 2**0.5, 0.0), 1),  # tie r00 == r11: first wins
        ((2.9, 0.3, -0.2), 1),
        ((0.2, -2.9, 0.3), 2),
        ((-0.3, 0.2, 2.9), 3),
    ],
)
def test_quaternion_branches(rvec, branch):
    r = Rotation.from_rotvec(rvec).as_matrix()
    if branch == 0 or np.linalg.norm(rvec) < 3.0:
        assert spurrier_branch(r) == branch
    check_quaternion(r)
    n = np.array(rvec) / np.linalg.norm(rvec)
    if abs(np.linalg.norm(rvec) - math.pi) < 1e-15:
        check_quaternion(2.0 * np.outer(n, n) - np.eye(3))  # exact rotation by pi
        assert spurrier_branch(2.0 * np.outer(n, n) - np.eye(3)) == branch


@pytest.mark.parametrize("seed", SEEDS)
def test_quat_mul(seed):
    rp, rq = Rotation.random(2, random_state=seed).as_matrix()
    p, q = so3.quat_from_matrix(m(rp)), so3.quat_from_matrix(m(rq))
    pq = so3.quat_mul(p, q)
    np.testing.assert_allclose(as_matrix(so3.matrix_from_quat(pq)), rp @ rq, rtol=0, atol=ROUND)
    assert abs(np.linalg.norm(pq) - 1.0) < 1e-15


# --- calls from other jitted code --------------------------------------------------------------


@njit
def _jitted_user(a, b):
    r = so3.matmul(so3.exp(a), so3.cay(b))
    q = so3.quat_from_matrix(r)
    return so3.log(so3.matrix_from_quat(q)), so3.matvec(so3.jl_inv(a), b)


def test_callable_from_njit():
    a, b = (0.3, -0.1, 0.2), (0.05, 0.4, -0.3)
    w, y = _jitted_user(a, b)
    r = as_matrix(so3.exp(a)) @ as_matrix(so3.cay(b))
    np.testing.assert_allclose(as_matrix(so3.exp(w)), r, rtol=0, atol=ROUND)
    np.testing.assert_allclose(y, as_matrix(so3.jl_inv(a)) @ as_vector(b), rtol=0, atol=ROUND)
