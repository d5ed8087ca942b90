"""The per-node solves of the explicit scheme: Jacobians against finite differences, and the
Cayley-parametrised rotation solve against Mata (2015)'s eq. (38) in its exponential form."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rodsim.integrators import drift, lavi
from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix, m, v

RNG = np.random.default_rng(42)
EPS = 1e-6
# central differences: truncation ~ eps^2 |G'''| ~ 1e-12 relative, round-off ~ 1e-16/eps
FD_TOL = 1e-8


def _inertia():
    a = RNG.normal(size=(3, 3))
    return a @ a.T + 3 * np.eye(3)


def _fd_jacobian(fun, x):
    x = np.asarray(x, dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = EPS
        cols.append((np.asarray(fun(x + e)) - np.asarray(fun(x - e))) / (2 * EPS))
    return np.column_stack(cols)


@pytest.mark.parametrize("size", [1e-4, 0.1, 0.8])
def test_rotation_jacobian_matches_finite_differences(size):
    inertia = m(_inertia())
    y = v(RNG.normal(size=3) * 5)
    f = RNG.normal(size=3) * size
    analytic = as_matrix(drift.rotation_jacobian(inertia, v(f), y))
    numeric = _fd_jacobian(lambda z: drift.rotation_residual(inertia, v(z), y), f)
    assert np.abs(analytic - numeric).max() <= FD_TOL * np.abs(analytic).max()


@pytest.mark.parametrize("size", [1e-3, 0.05, 0.5])
def test_rotation_solve_satisfies_lee_equation_38(size):
    """sin t/t I th + (1 - cos t)/t^2 th x I th = y for th = log(cay(2 f)) (docs/theory.md, "The
    explicit scheme"."""
    big_i = _inertia()
    theta_true = RNG.normal(size=3) * size
    t = np.linalg.norm(theta_true)
    it = big_i @ theta_true
    y = np.sin(t) / t * it + (1 - np.cos(t)) / t**2 * np.cross(theta_true, it)
    f, its, ok = drift.solve_rotation(m(big_i), v(y), (False, False, False), 1e-14, 25)
    assert ok
    assert its <= 5
    theta = np.array(so3.log(so3.cay(v(2 * np.asarray(f)))))
    assert np.allclose(theta, theta_true, rtol=0, atol=1e-13 * max(1.0, t))
    # and the rotation equation in matrix form: (F J_d - J_d F^T)^vee = y
    jd = 0.5 * np.trace(big_i) * np.eye(3) - big_i
    big_f = Rotation.from_rotvec(theta_true).as_matrix()
    a = big_f @ jd - jd @ big_f.T
    assert np.allclose([a[2, 1], a[0, 2], a[1, 0]], y, atol=1e-12 * np.abs(y).max())


def test_rotation_momentum_inverts_the_solve():
    big_i = m(_inertia())
    y = v(RNG.normal(size=3))
    f, _, ok = drift.solve_rotation(big_i, y, (False, False, False), 1e-14, 25)
    assert ok
    assert np.allclose(drift.rotation_momentum(big_i, f), y, atol=1e-13)


def test_constrained_rotation_solve_keeps_fixed_axes():
    big_i = m(_inertia())
    y = v(RNG.normal(size=3))
    f, _, ok = drift.solve_rotation(big_i, y, (True, True, False), 1e-14, 25)
    assert ok
    assert f[0] == 0.0
    assert f[1] == 0.0
    r = drift.rotation_residual(big_i, f, y)
    assert abs(r[2]) <= 1e-13


@pytest.mark.parametrize("size", [1e-4, 0.1, 0.6])
def test_lavi_jacobian_matches_finite_differences(size):
    inertia = m(_inertia())
    mass = 2.7
    hpi = v(RNG.normal(size=3))
    hp = v(RNG.normal(size=3))
    z = RNG.normal(size=6) * size
    lin = np.zeros((1, 6, 7))
    lavi.lavi_jacobian(lin, 0, inertia, mass, v(z[:3]), v(z[3:]))

    def residual(w):
        r_w, r_v = lavi.lavi_residual(inertia, mass, v(w[:3]), v(w[3:]), hpi, hp)
        return np.concatenate([r_w, r_v])

    numeric = _fd_jacobian(residual, z)
    analytic = lin[0, :, :6]
    assert np.abs(analytic - numeric).max() <= FD_TOL * np.abs(analytic).max()


def test_lavi_residual_is_the_transposed_cayley_jacobian():
    """(dcay^{-1})^T (I q, m v) from se3's 6x6 matrix equals the residual's closed form."""
    from rodsim.lie import se3

    big_i = _inertia()
    mass = 1.3
    q = RNG.normal(size=3) * 0.4
    w = RNG.normal(size=3) * 0.4
    r_w, r_v = lavi.lavi_residual(m(big_i), mass, v(q), v(w), (0.0,) * 3, (0.0,) * 3)
    xi = v(np.concatenate([q, w]))
    expected = np.asarray(se3.cay_jl_inv(xi)).T @ np.concatenate([big_i @ q, mass * w])
    assert np.allclose(np.concatenate([r_w, r_v]), expected, atol=1e-13)


def test_se3_translation_constraint_row_derivative():
    """d/dq of Lambda (I - hat q/2)^{-1} v equals -1/2 Lambda (I - hat q/2)^{-1} hat(u)."""
    rot = Rotation.from_rotvec(RNG.normal(size=3)).as_matrix()
    q = RNG.normal(size=3) * 0.5
    w = RNG.normal(size=3)

    def dx(z):
        return rot @ as_matrix(so3.i_minus_half_hat_inv(v(z))) @ w

    cinv = as_matrix(so3.i_minus_half_hat_inv(v(q)))
    u = cinv @ w
    analytic = -0.5 * rot @ cinv @ as_matrix(so3.hat(v(u)))
    numeric = _fd_jacobian(dx, q)
    assert np.abs(analytic - numeric).max() <= FD_TOL * np.abs(analytic).max()
    assert np.allclose(np.linalg.inv(np.eye(3) - 0.5 * as_matrix(so3.hat(v(q)))), cinv)
