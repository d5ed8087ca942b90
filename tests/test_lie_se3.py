"""Tests for rodsim.lie.se3: group operations, (co)adjoint, exp/log, Cayley and their Jacobians.

Finite-difference tolerances (as in test_lie_so3): central differences with step H = 1e-6 of maps
evaluated to ~1e-16 absolute have round-off ~1e-16 / H = 1e-10 and truncation ~H^2 |f'''| < 1e-11
for the O(1)-O(10) derivatives here; FD_TOL = 1e-8 (relative to max(1, |derivative|)) leaves a
factor ~100 of margin. Value comparisons of two float evaluations use ROUND = 4e-15 relative to
the size of the entries (about 18 ulp).

Convention checked here: the pairing is <(m, n), (w, v)> = m.w + n.v and
<coAd(g, mu), xi> == <mu, Ad_g xi>, i.e. coAd(g, .) is the matrix Ad(g).T.
"""

import math

import numpy as np
import pytest
from numba import njit
from scipy.linalg import expm

from rodsim.lie import se3, so3
from rodsim.lie.arrays import as_matrix, as_vector

H = 1.0e-6
FD_TOL = 1.0e-8
ROUND = 4.0e-15
SEEDS = [0, 1, 2]
# rotation angles: zero, tiny, both sides of and at the Q series switch (0.5), large, near pi
ANGLES = [0.0, 1e-9, 1e-3, 0.3, 0.5 * (1 - 1e-9), 0.5, 0.5 * (1 + 1e-9), 1.0, 2.0, 3.0]


def twist(rng, angle, trans=1.5):
    """Random 6-tuple (w, v) with |w| = angle and |v| = trans."""
    u, t = rng.normal(size=3), rng.normal(size=3)
    w = angle * u / np.linalg.norm(u)
    v = trans * t / np.linalg.norm(t)
    return tuple(float(x) for x in np.concatenate([w, v]))


def random_element(rng, angle=None):
    """Random (R, t) with rotation angle `angle` (random in [0, pi) if None)."""
    if angle is None:
        angle = rng.uniform(0.0, math.pi)
    xi = twist(rng, angle, trans=rng.uniform(0.5, 3.0))
    return se3.exp(xi)


def g4(g):
    return se3.to_matrix(*g)


def close(a, b, tol=ROUND):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, np.max(np.abs(b)))
    err = np.max(np.abs(a - b))
    assert err <= tol * scale, (err, scale)


def fd_columns(f, x, h=H):
    """Central-difference Jacobian of f: R^n -> R^m at x (columns = partial derivatives)."""
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(f(tuple(x + e))) - np.asarray(f(tuple(x - e)))) / (2.0 * h))
    return np.array(cols).T


def assert_fd(jac, fd, tol=FD_TOL):
    err = np.max(np.abs(np.asarray(jac) - fd))
    assert err <= tol * max(1.0, np.max(np.abs(fd))), err


def phi1(a):
    """sum_k a^k / (k + 1)! via the top-right block of expm([[a, I], [0, 0]])."""
    n = a.shape[0]
    big = np.zeros((2 * n, 2 * n))
    big[:n, :n] = a
    big[:n, n:] = np.eye(n)
    return expm(big)[:n, n:]


def right_diff(g):
    """x -> log(g_x g^{-1}) for a map x -> g_x: derivative = right-trivialised tangent."""
    gi = se3.inverse(*g)
    return lambda gx: se3.log(*se3.compose(*gx, *gi))


def left_diff(g):
    """x -> log(g^{-1} g_x): derivative = left-trivialised tangent."""
    gi = se3.inverse(*g)
    return lambda gx: se3.log(*se3.compose(*gi, *gx))


# --- group operations --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_compose_inverse_act(seed):
    rng = np.random.default_rng(seed)
    g, h = random_element(rng), random_element(rng)
    x = tuple(rng.normal(size=3))
    close(g4(se3.compose(*g, *h)), g4(g) @ g4(h))
    close(g4(se3.inverse(*g)), np.linalg.inv(g4(g)))
    close(g4(se3.compose(*g, *se3.inverse(*g))), np.eye(4))
    close(g4(se3.identity()), np.eye(4))
    close(se3.act(*g, x), (g4(g) @ np.append(x, 1.0))[:3])
    close(se3.act(*se3.compose(*g, *h), x), se3.act(*g, se3.act(*h, x)))
    r, t = se3.from_matrix(g4(g))
    assert r == g[0]
    assert t == g[1]


@pytest.mark.parametrize("seed", SEEDS)
def test_hat_vee_bracket(seed):
    rng = np.random.default_rng(seed)
    xi, eta = tuple(rng.normal(size=6)), tuple(rng.normal(size=6))
    x = rng.normal(size=3)
    a = se3.hat(xi)
    assert se3.vee(a) == xi
    np.testing.assert_array_equal(a[:3, :3], as_matrix(so3.hat(xi[:3])))
    close(a @ np.append(x, 1.0), np.append(np.cross(xi[:3], x) + xi[3:], 0.0))
    b = se3.hat(eta)
    comm = se3.vee(a @ b - b @ a)
    close(se3.bracket(xi, eta), comm)
    close(se3.ad(xi) @ np.array(eta), comm)


# --- exp / log ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES + [math.pi - 1e-9])
def test_exp_vs_expm(seed, angle):
    xi = twist(np.random.default_rng(seed), angle)
    close(g4(se3.exp(xi)), expm(se3.hat(xi)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES + [math.pi - 1e-6])
def test_log_exp_round_trip(seed, angle):
    xi = twist(np.random.default_rng(seed), angle)
    close(se3.log(*se3.exp(xi)), xi)


@pytest.mark.parametrize("seed", range(6))
def test_exp_log_round_trip(seed):
    rng = np.random.default_rng(seed)
    g = random_element(rng)
    xi = se3.log(*g)
    assert so3.norm(xi[:3]) <= math.pi + 1e-15
    close(g4(se3.exp(xi)), g4(g))
    # rotation by exactly pi
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    g = (so3.exp(tuple(math.pi * n)), tuple(rng.normal(size=3)))
    close(g4(se3.exp(se3.log(*g))), g4(g))


# --- adjoint -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_Ad(seed):  # noqa: N802
    rng = np.random.default_rng(seed)
    g, h = random_element(rng), random_element(rng)
    xi = twist(rng, rng.uniform(0.1, 2.5))
    ad_g = se3.Ad(*g)
    # g exp(xi) g^{-1} == exp(Ad_g xi), compared as 4x4 matrices
    lhs = g4(g) @ g4(se3.exp(xi)) @ np.linalg.inv(g4(g))
    close(g4(se3.exp(tuple(ad_g @ np.array(xi)))), lhs, tol=2 * ROUND)
    close(se3.hat(tuple(ad_g @ np.array(xi))), g4(g) @ se3.hat(xi) @ np.linalg.inv(g4(g)))
    close(se3.Ad_apply(*g, xi), ad_g @ np.array(xi))
    close(se3.Ad(*se3.compose(*g, *h)), ad_g @ se3.Ad(*h))
    close(se3.Ad(*se3.inverse(*g)), np.linalg.inv(ad_g))


@pytest.mark.parametrize("seed", SEEDS)
def test_ad_is_derivative_of_Ad(seed):  # noqa: N802
    rng = np.random.default_rng(seed)
    xi = np.array(twist(rng, rng.uniform(0.1, 2.5)))
    fd = (se3.Ad(*se3.exp(tuple(H * xi))) - se3.Ad(*se3.exp(tuple(-H * xi)))) / (2 * H)
    assert_fd(se3.ad(tuple(xi)), fd)


# --- coadjoint ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_coadjoint(seed):
    rng = np.random.default_rng(seed)
    g, h = random_element(rng), random_element(rng)
    m, n = tuple(rng.normal(size=3)), tuple(rng.normal(size=3))
    mu = np.array(m + n)
    xi = np.array(twist(rng, 1.0))
    cm, cn = se3.coAd(*g, m, n)
    # dual of Ad: <coAd(g, mu), xi> == <mu, Ad_g xi>, i.e. coAd(g, .) == Ad(g).T
    close(np.dot(cm + cn, xi), np.dot(mu, se3.Ad(*g) @ xi))
    close(cm + cn, se3.Ad(*g).T @ mu)
    # ... and not the other pairing (that would be coAd(g^{-1}, .))
    assert abs(np.dot(cm + cn, xi) - np.dot(mu, se3.Ad(*se3.inverse(*g)) @ xi)) > 1e-3
    # spatial momentum = Ad*_{g^{-1}} = Ad(g^{-1}).T, inverse of coAd(g, .)
    sm, sn = se3.spatial_momentum(*g, m, n)
    close(sm + sn, se3.Ad(*se3.inverse(*g)).T @ mu)
    close(np.concatenate(se3.coAd(*g, sm, sn)), mu)
    # moving the body momentum from frame g to frame g h keeps the spatial momentum
    ghm, ghn = se3.spatial_momentum(*se3.compose(*g, *h), *se3.coAd(*h, m, n))
    close(ghm + ghn, sm + sn)
    # right action: coAd(g h) = coAd(h) o coAd(g)
    close(se3.coAd(*se3.compose(*g, *h), m, n), se3.coAd(*h, *se3.coAd(*g, m, n)))


# --- Jacobians of exp --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES)
def test_exp_jacobians_fd(seed, angle):
    xi = twist(np.random.default_rng(seed), angle)
    g = se3.exp(xi)
    # exp(xi + d) ~= exp(jl d) exp(xi) and exp(xi + d) ~= exp(xi) exp(jr d)
    f_l, f_r = right_diff(g), left_diff(g)
    assert_fd(se3.jl(xi), fd_columns(lambda x: f_l(se3.exp(x)), xi))
    assert_fd(se3.jr(xi), fd_columns(lambda x: f_r(se3.exp(x)), xi))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES)
def test_exp_jacobians_vs_series(seed, angle):
    """jl = sum_k ad^k / (k+1)! to round-off, including both sides of the Q series switch."""
    xi = twist(np.random.default_rng(seed), angle)
    close(se3.jl(xi), phi1(se3.ad(xi)))
    close(se3.jr(xi), phi1(-se3.ad(xi)))
    q_ref = phi1(se3.ad(xi))[3:, :3]
    close(as_matrix(se3.q_matrix(xi)), q_ref)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("angle", ANGLES)
def test_exp_jacobian_inverses(seed, angle):
    xi = twist(np.random.default_rng(seed), angle)
    g = se3.exp(xi)
    close(se3.jl_inv(xi) @ se3.jl(xi), np.eye(6))
    close(se3.jr_inv(xi) @ se3.jr(xi), np.eye(6))
    close(se3.jl_inv(xi), np.linalg.inv(se3.jl(xi)), tol=4 * ROUND)
    # d/de log(exp(e d) g) = jl_inv(xi) d and d/de log(g exp(e d)) = jr_inv(xi) d
    zero = np.zeros(6)
    fd_l = fd_columns(lambda d: se3.log(*se3.compose(*se3.exp(d), *g)), zero)
    fd_r = fd_columns(lambda d: se3.log(*se3.compose(*g, *se3.exp(d))), zero)
    assert_fd(se3.jl_inv(xi), fd_l)
    assert_fd(se3.jr_inv(xi), fd_r)


# --- Cayley ------------------------------------------------------------------------------------

CAY_SIZES = [0.0, 1e-9, 1e-3, 0.5, 1.0, 3.0, 10.0]


def cay_matrix(xi):
    a = se3.hat(xi)
    return np.linalg.solve(np.eye(4) - a / 2, np.eye(4) + a / 2)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", CAY_SIZES)
def test_cay(seed, size):
    xi = twist(np.random.default_rng(seed), size)
    g = se3.cay(xi)
    close(g4(g), cay_matrix(xi))
    w, v = np.array(xi[:3]), np.array(xi[3:])
    t = (4 * v + 2 * np.cross(w, v) + np.dot(w, v) * w) / (4 + w @ w)
    close(g[1], t)
    close(g4(se3.cay(tuple(-x for x in xi))), np.linalg.inv(g4(g)))
    back = np.array(se3.cay_inv(*g))
    # cay_inv amplifies an O(eps) error of R by O(1 + |w|^2 / 4) (see test_lie_so3)
    close(back, xi, tol=2 * ROUND * max(1.0, size**2 / 4))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", CAY_SIZES)
def test_cay_jacobians_fd(seed, size):
    xi = twist(np.random.default_rng(seed), size)
    g = se3.cay(xi)
    # definition through exp: cay(xi + d) ~= exp(cay_jl d) cay(xi) ~= cay(xi) exp(cay_jr d)
    f_l, f_r = right_diff(g), left_diff(g)
    assert_fd(se3.cay_jl(xi), fd_columns(lambda x: f_l(se3.cay(x)), xi))
    assert_fd(se3.cay_jr(xi), fd_columns(lambda x: f_r(se3.cay(x)), xi))
    # first-order 4x4 definition: d/de cay(xi + e d) cay(xi)^{-1} = hat(cay_jl d)
    gi = np.linalg.inv(g4(g))
    for i in range(6):
        e = np.zeros(6)
        e[i] = H
        x = np.array(xi)
        d4 = (g4(se3.cay(tuple(x + e))) - g4(se3.cay(tuple(x - e)))) / (2 * H) @ gi
        assert_fd(se3.hat(tuple(se3.cay_jl(xi)[:, i])), d4)
    # Iserles' form: (I - xi/2)^{-1} hat(d) (I + xi/2)^{-1}
    a = se3.hat(xi)
    for i in range(6):
        d = np.zeros(6)
        d[i] = 1.0
        ref = np.linalg.solve(np.eye(4) - a / 2, se3.hat(tuple(d))) @ np.linalg.inv(
            np.eye(4) + a / 2
        )
        close(se3.hat(tuple(se3.cay_jl(xi)[:, i])), ref)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", CAY_SIZES)
def test_cay_jacobian_inverses(seed, size):
    rng = np.random.default_rng(seed)
    xi = twist(rng, size)
    g = se3.cay(xi)
    tol = ROUND * max(1.0, size**2)
    close(se3.cay_jl_inv(xi) @ se3.cay_jl(xi), np.eye(6), tol=tol)
    close(se3.cay_jr_inv(xi) @ se3.cay_jr(xi), np.eye(6), tol=tol)
    # hat(cay_jl_inv d) = hat d - [hat xi, hat d] / 2 - hat xi hat d hat xi / 4
    a = se3.hat(xi)
    for i in range(6):
        d = np.zeros(6)
        d[i] = 1.0
        b = se3.hat(tuple(d))
        ref = b - (a @ b - b @ a) / 2 - a @ b @ a / 4
        close(se3.hat(tuple(se3.cay_jl_inv(xi)[:, i])), ref)
    # d/de cay_inv(exp(e d) g) = cay_jl_inv(xi) d and d/de cay_inv(g exp(e d)) = cay_jr_inv d
    zero = np.zeros(6)
    fd_l = fd_columns(lambda d: se3.cay_inv(*se3.compose(*se3.exp(d), *g)), zero)
    fd_r = fd_columns(lambda d: se3.cay_inv(*se3.compose(*g, *se3.exp(d))), zero)
    assert_fd(se3.cay_jl_inv(xi), fd_l)
    assert_fd(se3.cay_jr_inv(xi), fd_r)
    # tuple helper used by integrators
    y = rng.normal(size=6)
    close(se3.cay_jl_inv_T_apply(xi, tuple(y)), se3.cay_jl_inv(xi).T @ y, tol=tol)


# --- calls from other jitted code --------------------------------------------------------------


@njit
def _jitted_user(xi, y):
    r, t = se3.cay(xi)
    r2, t2 = se3.compose(r, t, *se3.exp(xi))
    return se3.log(r2, t2), se3.cay_jl_inv_T_apply(xi, y), se3.coAd(r, t, y[:3], y[3:])


def test_callable_from_njit():
    xi = (0.3, -0.1, 0.2, 1.0, 0.5, -0.7)
    y = (0.2, 0.4, -1.0, 0.3, 0.1, 0.6)
    lg, mu, (cm, cn) = _jitted_user(xi, y)
    g = se3.compose(*se3.cay(xi), *se3.exp(xi))
    close(g4(se3.exp(lg)), g4(g))
    close(mu, se3.cay_jl_inv(xi).T @ as_vector(y))
    close(cm + cn, se3.Ad(*se3.cay(xi)).T @ as_vector(y))
