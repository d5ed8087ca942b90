"""Stable time step (rodsim.integrators.stable_step): element eigenvalue bound against closed
forms, an independent 12x12 Timoshenko element, the Irons bound on an assembled rod, and the
stability factor of the composed (order 4) leapfrog.

Tolerances: element_stiffness is a central difference (eps = 1e-6 relative) of the exact
gradient. At the stress-free reference the gradient is linear to O(eps^2) ~ 1e-12 and its
round-off is ~1e-16 |x| C / h, so each stiffness entry carries an error ~1e-9 of max|K|
(|x| <= 10 here). FD_TOL = 1e-7 relative leaves a margin of ~100; eigenvalues inherit it.
"""

import numpy as np
import pytest
from numpy.polynomial import Polynomial
from scipy.linalg import block_diag, eigh

from rodsim.integrators.stable_step import composition_stability_factor, stable_step
from rodsim.mesh.generate import arc, straight_rod
from rodsim.model.assembly import build_model
from rodsim.model.rod_frequencies import element_stiffness
from rodsim.model.sections import section_from_resultants
from rodsim.terms.rods import element_max_frequencies

FD_TOL = 1.0e-7


def stiffness(model):
    el = model.rods
    k = np.zeros((el.conn.shape[0], 12, 12))
    element_stiffness(
        el.conn, el.length, el.c1, el.c2, el.gamma0, el.omega0, model.x0, model.rot0, 1.0e-6, k
    )
    return k


def timoshenko_element(h, c1, c2):
    """Independent linear stiffness of one straight element, one-point (midpoint) quadrature,
    DOFs (u1, theta1, u2, theta2) in the section frame (d1 the axis):
    Gamma = (u2 - u1)/h + e1 x (theta1 + theta2)/2, Omega = (theta2 - theta1)/h,
    U = h/2 (Gamma.C1 Gamma + Omega.C2 Omega)."""
    eye = np.eye(3)
    e1x = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # hat(e1)
    b1 = np.hstack([-eye / h, 0.5 * e1x, eye / h, 0.5 * e1x])
    b2 = np.hstack([0 * eye, -eye / h, 0 * eye, eye / h])
    return h * (b1.T @ np.diag(c1) @ b1 + b2.T @ np.diag(c2) @ b2)


def lumped_diag(h, rho_a, rho_j, rho_i2, rho_i3):
    half = 0.5 * h * np.array([rho_a, rho_a, rho_a, rho_j, rho_i2, rho_i3])
    return np.concatenate([half, half])


# --- flying spaghetti: the axial limit h/c ------------------------------------------------------


def test_spaghetti_step_is_just_below_axial_limit():
    part = straight_rod([0, 0, 0], [6, 8, 0], 10, up=[0, 0, 1])
    sec = section_from_resultants(
        EA=1e4, GA=(1e4, 1e4), GJ=500, EI=(500, 500), rhoA=1, rhoI=(10, 10), rhoJ=20
    )
    model = build_model(part.points, part.frames, part.conn, sec)
    dt = stable_step(model)
    axial = 1.0 / np.sqrt(1e4 / 1.0)  # h / c with h = 1, c = sqrt(EA / rhoA) = 100
    assert 0.98 * axial <= dt <= axial
    # all elements alike; the shear/rotation coupling gives omega^2 = 4 GA/(rhoA h^2) + GA/rhoI
    omega = element_max_frequencies(model)
    np.testing.assert_allclose(omega, np.sqrt(4e4 + 1e3), rtol=FD_TOL)
    assert stable_step(model, order=4) == pytest.approx(dt * 0.7867009737, rel=1e-9)


# --- a slender section: the shear-rotation cut-off governs ------------------------------------


SLENDER = dict(
    EA=3e4, GA=(1e4, 2e4), GJ=40.0, EI=(30.0, 70.0), rhoA=2.0, rhoI=(1e-3, 4e-3), rhoJ=3e-3
)


def one_element_model(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=3)
    direction = rng.normal(size=3)
    h = 0.5
    b = a + h * direction / np.linalg.norm(direction)
    part = straight_rod(a, b, 1, up=rng.normal(size=3))
    sec = section_from_resultants(**SLENDER)
    return build_model(part.points, part.frames, part.conn, sec), h


@pytest.mark.parametrize("seed", [0, 1])
def test_element_stiffness_matches_independent_timoshenko_element(seed):
    model, h = one_element_model(seed)
    c1 = [SLENDER["EA"], *SLENDER["GA"]]
    c2 = [SLENDER["GJ"], *SLENDER["EI"]]
    k_ref = timoshenko_element(h, c1, c2)
    r0 = model.rot0[0]
    t = block_diag(r0, r0, r0, r0)  # section-frame components -> global components
    k_loc = t.T @ stiffness(model)[0] @ t
    scale = np.max(np.abs(k_ref))
    np.testing.assert_allclose(k_loc, k_ref, rtol=0, atol=FD_TOL * scale)


@pytest.mark.parametrize("seed", [0, 1])
def test_slender_step_follows_shear_rotation_cutoff(seed):
    model, h = one_element_model(seed)
    s = SLENDER
    k_ref = timoshenko_element(h, [s["EA"], *s["GA"]], [s["GJ"], *s["EI"]])
    m_diag = lumped_diag(h, s["rhoA"], s["rhoJ"], *s["rhoI"])
    lam = eigh(k_ref, np.diag(m_diag), eigvals_only=True)
    omega_max = np.sqrt(lam[-1])
    # the shear-rotation cut-off governs, far above the axial and bending limits
    axial2 = 4.0 * s["EA"] / (s["rhoA"] * h**2)
    bending2 = 4.0 * max(s["EI"][0] / s["rhoI"][0], s["EI"][1] / s["rhoI"][1]) / h**2
    assert lam[-1] > 10.0 * max(axial2, bending2)
    # GA3 (shear along d3) couples with the rotation about d2: the pure-shear mode
    # (w1 = -w2, theta2_1 = theta2_2, Omega = 0) has exactly omega^2 = GA3/rhoI2 + 4 GA3/(rhoA h^2)
    cutoff2 = s["GA"][1] / s["rhoI"][0] + 4.0 * s["GA"][1] / (s["rhoA"] * h**2)
    assert lam[-1] == pytest.approx(cutoff2, rel=1e-12)
    assert element_max_frequencies(model)[0] == pytest.approx(omega_max, rel=FD_TOL)
    assert stable_step(model) == pytest.approx(2.0 / omega_max, rel=FD_TOL)


# --- composition factor ---------------------------------------------------------------------------


def composed_trace(coefficients):
    """Trace of the composed kick-drift-kick map of q'' = -q (variables q, p) as a polynomial in
    z = omega dt: sub-step c z is K(c z/2) D(c z) K(c z/2)."""
    one, zero, z = Polynomial([1.0]), Polynomial([0.0]), Polynomial([0.0, 1.0])

    def mul(a, b):
        return [[sum(a[i][k] * b[k][j] for k in range(2)) for j in range(2)] for i in range(2)]

    total = [[one, zero], [zero, one]]
    for c in coefficients:
        kick = [[one, zero], [-0.5 * c * z, one]]
        drift = [[one, c * z], [zero, one]]
        total = mul(kick, mul(drift, mul(kick, total)))
    return total[0][0] + total[1][1]


def first_instability(trace):
    """Smallest z > 0 beyond which |trace| > 2 (det = 1, so |tr| <= 2 is stability)."""
    roots = np.concatenate([(trace - 2.0).roots(), (trace + 2.0).roots()])
    real = np.sort([r.real for r in roots if abs(r.imag) < 1e-9 and r.real > 1e-6])
    for r in real:
        if abs(trace(r * (1 + 1e-9))) > 2.0:
            return r
    return np.inf


def test_composition_stability_factor():
    assert composition_stability_factor(2) == 1.0
    assert first_instability(composed_trace([1.0])) == pytest.approx(2.0, rel=1e-12)
    g1 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))  # Yoshida / triple jump
    trace = composed_trace([g1, 1.0 - 2.0 * g1, g1])
    z_star = first_instability(trace)
    zs = np.linspace(0.0, z_star, 2001)[1:-1]
    assert np.all(np.abs(trace(zs)) <= 2.0)
    assert composition_stability_factor(4) == pytest.approx(z_star / 2.0, rel=1e-9)
    assert composition_stability_factor(4) == pytest.approx(0.7867, abs=5e-5)


# --- Irons' element eigenvalue bound on an assembled rod -----------------------------------------


def curved_model():
    part = arc([0.0, 0.0, 0.0], 3.0, [3.0, 0.0, 0.0], [0.3, -0.2, 1.0], 120.0, 5)
    rng = np.random.default_rng(3)
    secs = [
        section_from_resultants(
            EA=rng.uniform(1e4, 3e4),
            GA=tuple(rng.uniform(5e3, 1e4, 2)),
            GJ=rng.uniform(200, 600),
            EI=tuple(rng.uniform(300, 900, 2)),
            rhoA=rng.uniform(0.5, 2.0),
            rhoI=tuple(rng.uniform(0.05, 0.5, 2)),
            rhoJ=rng.uniform(0.1, 1.0),
        )
        for _ in range(5)
    ]
    return build_model(part.points, part.frames, part.conn, secs)


def test_irons_bound_on_assembled_rod():
    model = curved_model()
    el = model.rods
    k_el = stiffness(model)
    # the tangent at the stress-free reference is symmetric (to FD accuracy)
    for k in k_el:
        assert np.max(np.abs(k - k.T)) <= FD_TOL * np.max(np.abs(k))
    n = model.n_nodes
    k_glob = np.zeros((6 * n, 6 * n))
    for e, (i, j) in enumerate(el.conn):
        idx = np.r_[6 * i : 6 * i + 6, 6 * j : 6 * j + 6]
        k_glob[np.ix_(idx, idx)] += 0.5 * (k_el[e] + k_el[e].T)
    m_glob = np.zeros_like(k_glob)
    for a in range(n):
        r0 = model.rot0[a]
        m_glob[6 * a : 6 * a + 3, 6 * a : 6 * a + 3] = model.mass[a] * np.eye(3)
        m_glob[6 * a + 3 : 6 * a + 6, 6 * a + 3 : 6 * a + 6] = r0 @ model.inertia[a] @ r0.T
    lam = eigh(k_glob, m_glob, eigvals_only=True)
    # a free rod: six rigid-body modes
    assert np.all(np.abs(lam[:6]) <= 1e-8 * lam[-1])  # FD error of K ~1e-10 relative
    assert lam[6] > 1e-4 * lam[-1]  # ... and no more
    omega_global = np.sqrt(lam[-1])
    omega_el = element_max_frequencies(model)
    assert omega_global <= omega_el.max() * (1.0 + FD_TOL)
    assert omega_global >= 0.5 * omega_el.max()  # the bound is not vacuous
    assert stable_step(model) == pytest.approx(2.0 / omega_el.max(), rel=1e-14)
