"""The two-node Simo–Reissner element (rodsim.model.rod): exact gradient, balance laws,
objectivity, stress-free references, parallel assembly, the (52c) limit and closed-form states.

Conventions: nodal rotations are (3,3) matrices whose columns are the directors; spatial
rotation variations are delta Lambda = hat(theta) Lambda; kernel forces and moments are
PHYSICAL, i.e. minus the gradient of the element energy (docs/theory.md, "Rod model and its discrete
energy").

Tolerances.
- Finite differences: central differences of the energy with step EPS = 1e-6 (positions and
  rotation angles; all data are O(1): h in [0.7, 1.5], stiffnesses in [1, 10], strains <= O(1)).
  The truncation error is EPS^2 |U'''| / 6 ~ 1e-12 |U'''| with |U'''| = O(10-100) here, and the
  round-off error is ~ 1e-16 |U| / EPS ~ 1e-10 |U| with |U| = O(1-10). Both are <= ~1e-9, so the
  criterion |FD - exact| <= FD_TOL * scale with FD_TOL = 1e-7 and scale the largest force or
  moment component of the configuration leaves a margin of >= 100. An error in any coefficient
  of the exact-moment formula (e.g. using (52c) instead) gives a relative error >= 1e-3.
- Round-off comparisons between two evaluations of O(1) quantities: ROUND = 1e-13 relative to
  the natural scale of the compared quantity (a few hundred ulp for chains of ~100 flops).
"""

import math

import numpy as np
import pytest
from conftest import rod_forces
from numba import prange
from scipy.spatial.transform import Rotation

from rodsim.jit import kernel
from rodsim.lie.arrays import m, v
from rodsim.lie.so3 import quat_from_matrix
from rodsim.mesh.generate import arc, straight_rod
from rodsim.model import rod
from rodsim.model.rod import (
    element_fields,
    element_response,
    make_elements,
    reference_strains,
    relative_quaternion,
)

EPS = 1.0e-6
FD_TOL = 1.0e-7
ROUND = 1.0e-13
SEEDS = [0, 1, 2, 3]
REL_ANGLES = [1.0e-7, 0.5, 2.5, 3.1]  # small, moderate, large, near-pi |log(Lambda_1^T Lambda_2)|


@kernel
def element_forces(x1, x2, r1, q, h, c1, c2, g0, w0):
    """(f1, tau1, tau2, energy) as the assembly evaluates them: from q = relative_quaternion(q1,
    q2) of the nodal quaternions instead of r2."""
    return rod._element(x1, x2, r1, q, h, c1, c2, g0, w0)[:4]


@kernel(parallel=True)
def internal_forces_parallel(el, x, rot, f, tau, work):
    """rod.assemble_forces_parallel with the quaternions and block bounds it needs."""
    # a prange of its own: a kernel whose only parallel code is a cached callee does not
    # start numba's threading layer when it is itself loaded from the cache (segfault)
    quat = np.empty((x.shape[0], 4))
    for a in prange(x.shape[0]):
        rod.node_quaternions(rot, quat, a, a + 1)
    ne = work.shape[0]
    blocks = max(1, min(ne, 8))
    bounds = np.empty(blocks + 1, dtype=np.int64)
    for b in range(blocks + 1):
        bounds[b] = b * ne // blocks
    return rod.assemble_forces_parallel(el, x, rot, quat, f, tau, work, bounds, np.empty(blocks))


# --- independent numpy helpers ----------------------------------------------------------------


def hat(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def expm(a):
    """Rodrigues' formula (numpy, independent of rodsim.lie)."""
    a = np.asarray(a, dtype=float)
    t = np.linalg.norm(a)
    k = hat(a)
    if t < 1e-8:
        return np.eye(3) + k + 0.5 * k @ k
    return np.eye(3) + math.sin(t) / t * k + (1.0 - math.cos(t)) / t**2 * k @ k


def random_rotation(rng):
    return Rotation.random(random_state=rng).as_matrix()


def unit(rng):
    u = rng.normal(size=3)
    return u / np.linalg.norm(u)


def response(x1, x2, r1, r2, h, c1, c2, g0, w0):
    """element_response with numpy in and out: (f1, tau1, tau2, energy, gamma, omega, n_mat,
    m_mat, lam_m)."""
    out = element_response(v(x1), v(x2), m(r1), m(r2), float(h), v(c1), v(c2), v(g0), v(w0))
    f1, t1, t2, energy, gamma, omega, n_mat, m_mat, lam_m = out
    return (
        np.array(f1),
        np.array(t1),
        np.array(t2),
        float(energy),
        np.array(gamma),
        np.array(omega),
        np.array(n_mat),
        np.array(m_mat),
        np.array(lam_m).reshape(3, 3),
    )


def random_element(seed, rel_angle):
    """Random positions and rotations with |log(R1^T R2)| = rel_angle, random nonzero reference
    strains and anisotropic stiffnesses; strains of the state are O(0.1-1)."""
    rng = np.random.default_rng(seed)
    r1 = random_rotation(rng)
    r2 = r1 @ expm(rel_angle * unit(rng))
    h = rng.uniform(0.7, 1.5)
    x1 = rng.normal(size=3)
    stretch = rng.uniform(0.8, 1.2)
    x2 = x1 + h * stretch * r1[:, 0] + 0.3 * rng.normal(size=3)
    c1 = rng.uniform(1.0, 10.0, size=3)
    c2 = rng.uniform(1.0, 10.0, size=3)
    g0 = rng.uniform(-0.2, 0.2, size=3)
    w0 = rng.uniform(-0.5, 0.5, size=3)
    return x1, x2, r1, r2, h, c1, c2, g0, w0


def energy(x1, x2, r1, r2, h, c1, c2, g0, w0):
    return response(x1, x2, r1, r2, h, c1, c2, g0, w0)[3]


def perturbed(args, dof, delta):
    """args with DOF dof (0-11: x1, theta1, x2, theta2) moved by delta; rotations are perturbed
    by spatial variations, R -> exp(delta e_k) R."""
    x1, x2, r1, r2, *rest = args
    e = np.zeros(3)
    e[dof % 3] = delta
    block = dof // 3
    if block == 0:
        x1 = x1 + e
    elif block == 1:
        r1 = expm(e) @ r1
    elif block == 2:
        x2 = x2 + e
    else:
        r2 = expm(e) @ r2
    return (x1, x2, r1, r2, *rest)


def fd_gradient(args):
    """Central-difference gradient of the energy: (dU/dx1, dU/dtheta1, dU/dx2, dU/dtheta2)."""
    return np.array(
        [
            (energy(*perturbed(args, k, EPS)) - energy(*perturbed(args, k, -EPS))) / (2 * EPS)
            for k in range(12)
        ]
    )


def random_rod(seed, n_elements=12, center=(30.0, -20.0, 10.0)):
    """A curved rod (arc) as reference and a randomly perturbed current state far from the origin
    (so that x cross f is large compared with f)."""
    rng = np.random.default_rng(seed)
    part = arc(center, 4.0, np.add(center, [4.0, 0.0, 0.0]), [0.2, 0.3, 1.0], 230.0, n_elements)
    ne = part.conn.shape[0]
    c1 = rng.uniform(1.0, 10.0, size=(ne, 3))
    c2 = rng.uniform(1.0, 10.0, size=(ne, 3))
    el = make_elements(part.conn, part.points, part.frames, c1, c2)
    x = part.points + 0.3 * rng.normal(size=part.points.shape)
    rot = np.array([expm(0.4 * rng.normal(size=3)) @ r for r in part.frames])
    return el, x, rot


def assemble(el, x, rot):
    f = np.zeros_like(x)
    tau = np.zeros_like(x)
    u = rod_forces(el, x, rot, f, tau)
    return u, f, tau


# --- exact gradient -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rel_angle", REL_ANGLES)
def test_forces_are_minus_the_energy_gradient(seed, rel_angle):
    args = random_element(seed, rel_angle)
    f1, t1, t2 = response(*args)[:3]
    exact = np.concatenate([f1, t1, -f1, t2])
    fd = -fd_gradient(args)
    scale = np.max(np.abs(exact))
    assert scale > 0.1  # a genuinely loaded state
    err = np.abs(exact - fd)
    assert np.max(err) <= FD_TOL * scale, (err / scale).max()


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_gradient_differs_from_paper_form_at_large_rotation(seed):
    """Sanity check of the FD test's power: the (52c) moments are NOT the gradient at 0.5 rad."""
    args = random_element(seed, 0.5)
    f1, t1, t2, _, _, _, _, m_mat, lam_m = response(*args)
    d = args[1] - args[0]
    dn = np.cross(d, f1)
    mm = lam_m @ m_mat
    fd = -fd_gradient(args)
    scale = np.max(np.abs(fd))
    assert np.max(np.abs(fd[9:] - (0.5 * dn - mm))) > 1e3 * FD_TOL * scale
    assert np.max(np.abs(fd[3:6] - (0.5 * dn + mm))) > 1e3 * FD_TOL * scale


# --- the assembly's quaternion path ------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rel_angle", REL_ANGLES)
def test_element_forces_from_nodal_quaternions_match_element_response(seed, rel_angle):
    """The assembly feeds element_forces the relative quaternion conj(q1) q2 of the nodal
    quaternions instead of extracting one from r1^T r2: same forces up to round-off, also near
    a relative half turn (where the sign of the product quaternion must be flipped)."""
    x1, x2, r1, r2, h, c1, c2, g0, w0 = random_element(seed, rel_angle)
    ref = response(x1, x2, r1, r2, h, c1, c2, g0, w0)
    q = relative_quaternion(quat_from_matrix(m(r1)), quat_from_matrix(m(r2)))
    assert q[0] >= 0.0
    out = element_forces(v(x1), v(x2), m(r1), q, float(h), v(c1), v(c2), v(g0), v(w0))
    scale = max(np.abs(ref[0]).max(), np.abs(ref[1]).max(), np.abs(ref[2]).max())
    for k in range(3):
        np.testing.assert_allclose(out[k], ref[k], rtol=0, atol=ROUND * scale)
    assert abs(out[3] - ref[3]) <= ROUND * abs(ref[3])


# --- momentum balance ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rel_angle", REL_ANGLES)
def test_element_momentum_balance(seed, rel_angle):
    x1, x2, r1, r2, *rest = random_element(seed, rel_angle)
    offset = np.array([40.0, -25.0, 17.0])  # far from the origin: large x cross f
    x1, x2 = x1 + offset, x2 + offset
    f1, t1, t2 = response(x1, x2, r1, r2, *rest)[:3]
    f2 = -f1
    scale = np.linalg.norm(f1) * max(np.linalg.norm(x1), np.linalg.norm(x2)) + np.linalg.norm(t1)
    assert np.max(np.abs(f1 + f2)) == 0.0
    resid = t1 + t2 + np.cross(x1, f1) + np.cross(x2, f2)
    assert np.max(np.abs(resid)) <= ROUND * scale


@pytest.mark.parametrize("seed", SEEDS)
def test_assembled_momentum_balance(seed):
    el, x, rot = random_rod(seed)
    _, f, tau = assemble(el, x, rot)
    fmax = np.max(np.linalg.norm(f, axis=1))
    xmax = np.max(np.linalg.norm(x, axis=1))
    tmax = np.max(np.linalg.norm(tau, axis=1))
    assert fmax > 1.0
    assert tmax > 1.0  # a genuinely deformed state
    n = x.shape[0]
    assert np.max(np.abs(f.sum(axis=0))) <= ROUND * n * fmax
    moment = tau.sum(axis=0) + np.cross(x, f).sum(axis=0)
    assert np.max(np.abs(moment)) <= ROUND * n * (fmax * xmax + tmax)


# --- objectivity --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rel_angle", REL_ANGLES)
def test_objectivity_under_superposed_rigid_motion(seed, rel_angle):
    x1, x2, r1, r2, *rest = random_element(seed, rel_angle)
    rng = np.random.default_rng(100 + seed)
    q = random_rotation(rng)
    c = 10.0 * rng.normal(size=3)
    a = response(x1, x2, r1, r2, *rest)
    b = response(q @ x1 + c, q @ x2 + c, q @ r1, q @ r2, *rest)
    u_a, u_b = a[3], b[3]
    assert abs(u_a - u_b) <= ROUND * abs(u_a)
    h, c1, c2, g0, w0 = rest
    # section-frame strains and resultants: unchanged (scales: strain incl. reference values)
    g_scale = np.max(np.abs(a[4])) + np.max(np.abs(g0)) + 1.0
    w_scale = np.max(np.abs(a[5])) + np.max(np.abs(w0)) + rel_angle / h
    np.testing.assert_allclose(b[4], a[4], rtol=0, atol=ROUND * g_scale)
    np.testing.assert_allclose(b[5], a[5], rtol=0, atol=ROUND * w_scale)
    np.testing.assert_allclose(b[6], a[6], rtol=0, atol=ROUND * g_scale * np.max(c1))
    np.testing.assert_allclose(b[7], a[7], rtol=0, atol=ROUND * w_scale * np.max(c2))
    # midpoint frame and spatial forces/moments rotate with Q
    np.testing.assert_allclose(b[8], q @ a[8], rtol=0, atol=ROUND)
    scale = max(np.max(np.abs(a[k])) for k in range(3))
    for k in range(3):
        np.testing.assert_allclose(b[k], q @ a[k], rtol=0, atol=ROUND * scale)


# --- stress-free reference configurations ------------------------------------------------------


def _check_stress_free(points, conn, frames, c1=(3.0, 2.0, 5.0), c2=(7.0, 4.0, 6.0)):
    el = make_elements(conn, points, frames, c1, c2)
    # round-off scales: strains O(1) (incl. the reference curvature times h), stiffness max C
    strain_scale = 1.0 + np.max(np.abs(el.omega0)) * np.max(el.length)
    c_max = max(np.max(c1), np.max(c2))
    rng = np.random.default_rng(7)
    q = random_rotation(rng)
    rigid = (points @ q.T + rng.normal(size=3), np.einsum("ij,njk->nik", q, frames))
    # at the reference itself, and after a superposed rigid motion (objectivity)
    for x, rot in [(points, frames), rigid]:
        u, f, tau = assemble(el, x, rot)
        assert abs(u) <= np.sum(el.length) * c_max * (ROUND * strain_scale) ** 2
        assert np.max(np.abs(f)) <= ROUND * c_max * strain_scale
        assert np.max(np.abs(tau)) <= ROUND * c_max * strain_scale * np.max(el.length)
    return el


def test_straight_rod_is_stress_free_with_zero_reference_strain():
    part = straight_rod([1.0, -2.0, 0.5], [4.0, 2.0, 7.0], 7, up=[0.3, 1.0, 0.2])
    el = _check_stress_free(part.points, part.conn, part.frames)
    np.testing.assert_allclose(el.length, np.linalg.norm([3.0, 4.0, 6.5]) / 7, rtol=1e-14)
    np.testing.assert_allclose(el.gamma0, 0.0, atol=ROUND)
    np.testing.assert_allclose(el.omega0, 0.0, atol=ROUND)


@pytest.mark.parametrize("angle", [90.0, -135.0, 360.0])
def test_arc_is_stress_free_with_reference_curvature_about_d3(angle):
    radius, n_el = 2.5, 9
    normal = np.array([1.0, -2.0, 2.0]) / 3.0
    part = arc([1.0, 2.0, 3.0], radius, [4.0, 2.0, 3.0], normal, angle, n_el)
    # frames: d3 = normal (up), d1 = tangent; the arc turns about d3 (sign of the angle)
    np.testing.assert_allclose(
        part.frames[:, :, 2], np.tile(normal, (part.frames.shape[0], 1)), atol=1e-15
    )
    el = _check_stress_free(part.points, part.conn, part.frames)
    dphi = math.radians(abs(angle)) / n_el
    chord = 2.0 * radius * math.sin(dphi / 2.0)
    np.testing.assert_allclose(el.length, chord, rtol=1e-14)
    # one-point geodesic element: Omega0 = psi / h with psi = dphi about d3 and h the chord,
    # i.e. (dphi/chord) = (1/R) (1 + dphi^2/24 + ...), and Gamma0 = 0 (chord || midpoint d1)
    kappa = math.copysign(dphi / chord, angle)
    np.testing.assert_allclose(el.omega0[:, 2], kappa, rtol=1e-13)
    np.testing.assert_allclose(el.omega0[:, :2], 0.0, atol=ROUND / radius)
    np.testing.assert_allclose(el.gamma0, 0.0, atol=ROUND)
    # x / (2 sin(x/2)) = 1 + x^2/24 + 7 x^4/5760 + ...: the discrete curvature exceeds 1/R
    assert dphi**2 / 24.0 <= abs(kappa) * radius - 1.0 <= dphi**2 / 24.0 * (1.0 + dphi**2 / 20.0)
    if angle == 360.0:  # closed ring: last element joins the last node to node 0
        assert el.conn[-1, 1] == 0
        assert el.conn.shape[0] == part.points.shape[0]


def test_pretwisted_rod_is_stress_free_with_reference_twist():
    n_el, twist = 8, 0.4  # rad per element about the tangent
    part = straight_rod([0.0, 0.0, 0.0], [2.0, 1.0, -2.0], n_el)
    frames = np.array([r @ expm([twist * a, 0.0, 0.0]) for a, r in enumerate(part.frames)])
    el = _check_stress_free(part.points, part.conn, frames)
    h = 3.0 / n_el
    np.testing.assert_allclose(el.omega0[:, 0], twist / h, rtol=1e-13)
    np.testing.assert_allclose(el.omega0[:, 1:], 0.0, atol=ROUND / h)
    np.testing.assert_allclose(el.gamma0, 0.0, atol=ROUND)


def test_reference_strains_kernel_matches_make_elements():
    el, x, rot = random_rod(5)
    g0 = np.zeros_like(el.gamma0)
    w0 = np.zeros_like(el.omega0)
    reference_strains(el.conn, el.length, x, rot, g0, w0)
    # element_fields with zero reference strains reports the same strains
    zero = el._replace(gamma0=np.zeros_like(g0), omega0=np.zeros_like(w0))
    out = [np.zeros_like(g0) for _ in range(4)]
    element_fields(zero, x, rot, *out)
    np.testing.assert_array_equal(out[0], g0)
    np.testing.assert_array_equal(out[1], w0)


def test_zero_length_element_is_rejected():
    x0 = np.array([[0.0, 0, 0], [1.0, 0, 0], [1.0, 0, 0]])
    with pytest.raises(ValueError, match="element 1"):
        make_elements([[0, 1], [1, 2]], x0, np.tile(np.eye(3), (3, 1, 1)), 1.0, 1.0)


# --- parallel assembly --------------------------------------------------------------------------


@pytest.mark.parametrize("shuffle", [False, True])
def test_parallel_assembly_matches_serial(shuffle):
    rng = np.random.default_rng(11)
    n_el = 50
    part = straight_rod([0.0, 0.0, 0.0], [10.0, 2.0, 1.0], n_el)
    x0, rot0, conn = part.points, part.frames, part.conn
    if shuffle:  # arbitrary node and element numbering exercises the CSR gather
        perm = rng.permutation(x0.shape[0])
        inv = np.argsort(perm)
        x0, rot0 = x0[perm], rot0[perm]
        conn = inv[conn][rng.permutation(n_el)]
        flip = rng.random(n_el) < 0.5
        conn[flip] = conn[flip][:, ::-1]
    c1 = rng.uniform(1.0, 10.0, size=(n_el, 3))
    c2 = rng.uniform(1.0, 10.0, size=(n_el, 3))
    el = make_elements(conn, x0, rot0, c1, c2)
    x = x0 + 0.1 * rng.normal(size=x0.shape)
    rot = np.array([expm(0.5 * rng.normal(size=3)) @ r for r in rot0])
    base_f = rng.normal(size=x.shape)  # both kernels ADD into f and tau
    base_t = rng.normal(size=x.shape)
    f_s, t_s = base_f.copy(), base_t.copy()
    u_s = rod_forces(el, x, rot, f_s, t_s)
    f_p, t_p = base_f.copy(), base_t.copy()
    work = np.zeros((n_el, 2, 6))
    u_p = internal_forces_parallel(el, x, rot, f_p, t_p, work)
    assert abs(u_p - u_s) <= ROUND * u_s
    scale = max(np.max(np.abs(f_s)), np.max(np.abs(t_s)))
    np.testing.assert_allclose(f_p, f_s, rtol=0, atol=ROUND * scale)
    np.testing.assert_allclose(t_p, t_s, rtol=0, atol=ROUND * scale)
    assert np.max(np.abs(f_s - base_f)) > 0.1  # nontrivial internal forces


# --- the (52c) limit ----------------------------------------------------------------------------


def _paper_difference(seed, angle, sheared):
    """tau2 - tau2^(52c) and its predicted leading term, for |psi| = angle."""
    rng = np.random.default_rng(seed)
    r1 = random_rotation(rng)
    axis = unit(rng)
    psi = angle * axis
    r2 = r1 @ expm(psi)
    lam_m = r1 @ expm(psi / 2)
    h = 1.3
    c1 = (4.0, 2.0, 3.0)
    c2 = (5.0, 7.0, 6.0)
    w0 = (0.3, -0.2, 0.4)
    x1 = rng.normal(size=3)
    if sheared:
        x2 = x1 + h * (lam_m @ np.array([1.1, 0.3, -0.2]))
        g0 = (0.01, -0.05, 0.02)
    else:  # d || n: pure axial strain, no shear, so d x n = 0
        x2 = x1 + 1.1 * h * lam_m[:, 0]
        g0 = (0.0, 0.0, 0.0)
    f1, t1, t2, _, _, _, _, m_mat, lam = response(x1, x2, r1, r2, h, c1, c2, g0, w0)
    np.testing.assert_allclose(lam, lam_m, atol=ROUND)
    dn = np.cross(x2 - x1, f1)
    mm = lam_m @ m_mat
    diff1 = t1 - (0.5 * dn + mm)
    diff2 = t2 - (0.5 * dn - mm)
    np.testing.assert_allclose(diff1, -diff2, atol=ROUND * np.max(np.abs(t1)))
    if sheared:
        # B^T = 1/2 Lambda_m (I + hat(psi)/4 + O(psi^2)) Lambda_m^T
        lead = np.cross(lam_m @ psi, dn) / 8.0
    else:
        # Lambda_1 (jl^{-T}(psi) - exp(hat(psi)/2)) m_mat = -(1/24) Lambda_m hat(psi)^2 m_mat
        lead = lam_m @ hat(psi) @ hat(psi) @ m_mat / 24.0
    return np.linalg.norm(diff2), np.linalg.norm(diff2 - lead), np.linalg.norm(lead)


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_moments_tend_to_paper_form_shear_free(seed):
    """Without shear (d x n = 0) the difference to (52c) is O(|psi|^2): ratio ~4 per halving,
    leading term Lambda_m hat(psi)^2 m_mat / 24 with an O(|psi|^3) remainder."""
    angles = [0.08, 0.04, 0.02, 0.01]
    res = [_paper_difference(seed, a, sheared=False) for a in angles]
    for (d_a, r_a, _), (d_b, r_b, _) in zip(res[:-1], res[1:], strict=True):
        assert 3.8 < d_a / d_b < 4.2
        assert r_a / r_b > 7.0  # remainder at least cubic
    assert res[-1][1] < 1e-3 * res[-1][0]


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_moments_tend_to_paper_form_general(seed):
    """With shear the difference to (52c) is only O(|psi|) (ratio ~2 per halving): its leading
    term is (Lambda_m psi) x (d x n) / 8; the remainder is O(|psi|^2) (ratio ~4)."""
    angles = [0.04, 0.02, 0.01, 0.005]
    res = [_paper_difference(seed, a, sheared=True) for a in angles]
    for (d_a, r_a, _), (d_b, r_b, _) in zip(res[:-1], res[1:], strict=True):
        assert 1.9 < d_a / d_b < 2.1
        assert 3.7 < r_a / r_b < 4.3
    assert res[-1][0] < 1e-2  # -> 0


# --- closed-form states --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_pure_stretch(seed):
    rng = np.random.default_rng(seed)
    r = random_rotation(rng)
    h, stretch = 1.7, 0.03
    c1 = np.array([5.0e3, 2.0e3, 3.0e3])
    c2 = np.array([40.0, 50.0, 60.0])
    x1 = rng.normal(size=3)
    x2 = x1 + (1.0 + stretch) * h * r[:, 0]
    f1, t1, t2, u, gamma, omega, n_mat, m_mat, _ = response(
        x1, x2, r, r, h, c1, c2, (0, 0, 0), (0, 0, 0)
    )
    np.testing.assert_allclose(gamma, [stretch, 0.0, 0.0], rtol=1e-13, atol=ROUND)
    np.testing.assert_allclose(n_mat, [c1[0] * stretch, 0.0, 0.0], rtol=1e-12, atol=ROUND * c1[0])
    np.testing.assert_array_equal(omega, 0.0)
    np.testing.assert_array_equal(m_mat, 0.0)
    np.testing.assert_allclose(u, 0.5 * h * c1[0] * stretch**2, rtol=1e-12)
    # the tension pulls node 1 towards node 2; no moments
    np.testing.assert_allclose(f1, c1[0] * stretch * r[:, 0], rtol=1e-12, atol=ROUND * c1[0])
    np.testing.assert_allclose(t1, 0.0, atol=ROUND * c1[0] * h)
    np.testing.assert_allclose(t2, 0.0, atol=ROUND * c1[0] * h)


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("dphi", [1e-4, 0.3, 1.2])
def test_uniform_bend(axis, dphi):
    """A straight, stress-free element of length h bent onto a circle of radius R = h/dphi
    with frames following the tangent: Omega = (1/R) e_axis exactly (geodesic interpolation),
    and the chord shortening gives Gamma = (2 sin(dphi/2)/dphi - 1, 0, 0)."""
    rng = np.random.default_rng(3)
    q = random_rotation(rng)
    c = rng.normal(size=3)
    h = 0.9
    radius = h / dphi
    c1 = np.array([1.0e3, 2.0e3, 3.0e3])
    c2 = np.array([4.0, 5.0, 6.0])
    k = np.eye(3)[axis]  # bend about d2 (axis 1) or d3 (axis 2)
    phi0 = 0.7

    e1 = np.eye(3)[0]
    # circle tangent to d1 turning about k: x(s) - x(0) = R (sin(s/R) e1 + (1 - cos(s/R)) k x e1)
    chord = radius * (math.sin(dphi) * e1 + 2.0 * math.sin(dphi / 2) ** 2 * np.cross(k, e1))
    r1 = q @ expm(phi0 * k)
    r2 = q @ expm((phi0 + dphi) * k)
    x1 = c
    x2 = c + r1 @ chord
    np.testing.assert_allclose(
        (r1.T @ (x2 - x1)) / np.linalg.norm(x2 - x1), expm(0.5 * dphi * k)[:, 0], atol=1e-14
    )
    _, _, _, u, gamma, omega, n_mat, m_mat, _ = response(
        x1, x2, r1, r2, h, c1, c2, (0, 0, 0), (0, 0, 0)
    )
    m_exact = np.zeros(3)
    m_exact[axis] = c2[axis] / radius
    # psi comes from R1^T R2 (entries O(1)): absolute round-off ~1e-16, i.e. ROUND / h in omega
    np.testing.assert_allclose(m_mat, m_exact, rtol=1e-12, atol=ROUND * c2.max() / h)
    np.testing.assert_allclose(omega, m_exact / c2, rtol=1e-12, atol=ROUND / h)
    g1 = 2.0 * math.sin(dphi / 2) / dphi - 1.0
    # gamma_1 is a difference of O(1) numbers: absolute round-off
    np.testing.assert_allclose(gamma, [g1, 0.0, 0.0], rtol=0, atol=10 * ROUND * (1 + radius))
    np.testing.assert_allclose(n_mat[1:], 0.0, atol=10 * ROUND * (1 + radius) * c1.max())
    u_exact = 0.5 * h * (c1[0] * g1**2 + c2[axis] / radius**2)
    assert abs(u - u_exact) <= 1e-12 * u_exact + 1e-12 * h * c1[0] * (1 + radius) * abs(g1)
