"""Analytic tangent stiffness of the rod element (rodsim.model.rod_tangent) against the complex
step of the force kernel it linearises (rodsim.model.rod.assemble_forces compiled here in
complex128), K_ab = -d(f_a, tau_a)/d(u_b, theta_b) with spatial increments.

Oracle: a translation is x + i h e_j; a rotation Lambda + i h hat(e_j) Lambda with the node
quaternion (1, i h e_j/2) q (exact to first order), h = 1e-30: exact to round-off (no
subtraction), and it follows the kernel's own branches (quaternion sign flip, series below
rod._SMALL) on real parts.

Tolerance BLOCK_TOL = 1e-10 on every 6x6 block, relative to the largest block of the
element (or model): the complex step is exact to round-off, the analytic blocks are exact to
round-off times the conditioning of the force chain (stiffness ratios EA/EI ~ 1e2 here, lever
arms ~ h, jl^{-1} near pi ~ 1e1). Measured: <= 1.5e-15, except just above rod._SMALL (half
angle 1e-3 to ~1e-2), where the ORACLE is off by up to 3e-11: the complex step of the force
kernel's closed forms (1 - w)/half^2, (1 - half w/s)/(4 half^2) cancels in its imaginary part
(eps/half^2), while the analytic blocks are continuous there (1e-15 on the series side).
1e-10 covers that and still catches any missing term (dropping the two D-terms of
so3_tangent gives 1e-2). Identities exact in exact arithmetic use ROUND = 1e-13.
"""

import numpy as np
import pytest
from rotations import exp_matrix as _exp
from rotations import hat as _hat
from rotations import qmul as _qmul
from rotations import quats as _quats

from rodsim.integrators.sparsity import make_pattern
from rodsim.lie import so3
from rodsim.model import rod
from rodsim.model import rod_tangent as rt

pytestmark = pytest.mark.fast

CS_H = 1e-30
BLOCK_TOL = 1e-10
ROUND = 1e-13
C1 = np.array([1.0e4, 4.0e3, 5.0e3])  # EA, GA2, GA3
C2 = np.array([60.0, 80.0, 120.0])  # GJ, EI2, EI3
H = 1.1
RNG = np.random.default_rng(3636)


def _oracle(el, x, rot):
    """Dense (6N,6N) -(d(f,tau)/d(u,theta)) by complex step of assemble_forces."""
    n = x.shape[0]
    quat = _quats(rot)
    k = np.empty((6 * n, 6 * n))
    for b in range(n):
        for j in range(6):
            xc, rc, qc = (a.astype(np.complex128) for a in (x, rot, quat))
            e = np.zeros(3)
            e[j % 3] = 1.0
            if j < 3:
                xc[b, j] += 1j * CS_H
            else:
                rc[b] = (np.eye(3) + 1j * CS_H * _hat(e)) @ rot[b]
                qc[b] = _qmul(np.array([1.0, *(0.5j * CS_H * e)]), quat[b])
            f, tau = np.zeros_like(xc), np.zeros_like(xc)
            rod.assemble_forces(el, xc, rc, qc, f, tau)
            k[:, 6 * b + j] = -np.concatenate([f, tau], axis=1).imag.ravel() / CS_H
    return k


def _analytic(el, x, rot):
    """Dense (6N,6N) from add_rod_tangents on the BSR pattern of the model."""
    n = x.shape[0]
    pattern = make_pattern(el.conn, n)
    slots = rt.rod_slots(el, pattern.indptr, pattern.indices)
    blocks = np.zeros((len(pattern.indices), 6, 6))
    rt.add_rod_tangents(el, x, rot, _quats(rot), slots, blocks)
    k = np.zeros((6 * n, 6 * n))
    for a in range(n):
        for r in range(pattern.indptr[a], pattern.indptr[a + 1]):
            b = pattern.indices[r]
            k[6 * a : 6 * a + 6, 6 * b : 6 * b + 6] = blocks[r]
    return k


def _block_error(got, want):
    """Largest 6x6 block difference relative to the largest block (max-norm)."""
    n = got.shape[0] // 6
    diff = np.abs(got - want).reshape(n, 6, n, 6).max(axis=(1, 3))
    return diff.max() / np.abs(want).max()


def _element(psi_ref, offsets):
    """One element (h = H) whose reference end frames are I and exp(psi_ref), optionally seen
    through constant offsets Q_ea (node frames Lambda0_a = ends_a Q_ea^T)."""
    x0 = np.array([[0.0, 0.0, 0.0], [H, 0.0, 0.0]])
    ends = np.array([np.eye(3), _exp(psi_ref)])
    q = np.array([_exp(RNG.normal(size=3)) for _ in range(2)]) if offsets else ends * 0 + np.eye(3)
    rot0 = np.einsum("aij,akj->aik", ends, q)
    el = rod.make_elements(np.array([[0, 1]]), x0, rot0, C1, C2, end_frames=ends[None])
    return el, q


def _state(q, psi, gamma):
    """Nodes whose element end frames are R and R exp(psi) (R random) and whose chord is
    R exp(psi/2) h (E1 + gamma): the element's psi and Lambda_m^T d/h - E1 are psi, gamma."""
    r = _exp(RNG.normal(size=3))
    ends = np.array([r, r @ _exp(psi)])
    x1 = RNG.normal(size=3)
    x2 = x1 + r @ _exp(0.5 * np.asarray(psi)) @ (H * (np.array([1.0, 0, 0]) + gamma))
    return np.array([x1, x2]), np.einsum("aij,akj->aik", ends, q)


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


AXIS = _unit([1.0, 0.4, -0.3])  # mostly twist, some bending
PSI_REF = np.array([0.2, 0.5, -0.3])
STRESS = np.array([0.15, 0.1, -0.08])  # stretch and shears
SMALL = 2.0 * rod._SMALL  # rod.py's series switch is on the half angle
CASES = {
    # name: (reference psi, offsets, psi, gamma); gamma None: the reference's own (unstressed)
    "straight unstressed": (np.zeros(3), False, np.zeros(3), None),
    "curved unstressed": (PSI_REF, False, PSI_REF, None),
    "curved unstressed offsets": (PSI_REF, True, PSI_REF, None),
    "straight stressed": (np.zeros(3), False, np.array([1.3, 0.9, -0.7]), STRESS),
    "curved stressed": (PSI_REF, False, np.array([1.3, -0.9, 0.7]), STRESS),
    "curved stressed offsets": (PSI_REF, True, np.array([-1.1, 0.8, 1.4]), -STRESS),
    "twist pi - 1e-6": (np.zeros(3), True, (np.pi - 1e-6) * AXIS, STRESS),
    "twist pi + 1e-6": (np.zeros(3), True, (np.pi + 1e-6) * AXIS, STRESS),
    "psi 0": (PSI_REF, True, np.zeros(3), STRESS),
    "psi 1e-9": (PSI_REF, True, 1e-9 * AXIS, STRESS),
    "psi 1e-4": (PSI_REF, True, 1e-4 * AXIS, STRESS),
    "psi at rod._SMALL": (PSI_REF, True, SMALL * AXIS, STRESS),
    "psi below rod._SMALL": (PSI_REF, True, SMALL * (1 - 1e-9) * AXIS, STRESS),
    "psi above rod._SMALL": (PSI_REF, True, SMALL * (1 + 1e-9) * AXIS, STRESS),
    "psi 0.5": (PSI_REF, True, 0.5 * AXIS, STRESS),
    "psi at SERIES_T": (PSI_REF, True, rt.so3_tangent.SERIES_T * AXIS, STRESS),
    "psi/2 at SERIES_T": (PSI_REF, True, 2 * rt.so3_tangent.SERIES_T * AXIS, STRESS),
}


def _case(name):
    psi_ref, offsets, psi, gamma = CASES[name]
    el, q = _element(psi_ref, offsets)
    if gamma is None:  # a rigid motion of the reference
        gamma = el.gamma0[0]
    x, rot = _state(q, psi, gamma)
    return el, x, rot


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    el, x, rot = _case(request.param)
    return request.param, el, x, rot, _analytic(el, x, rot), _oracle(el, x, rot)


def test_blocks_match_the_complex_step(case):
    name, _, _, _, got, want = case
    assert _block_error(got, want) <= BLOCK_TOL, name


def test_skew_part_is_the_moment_on_the_rotation_diagonal(case):
    """K - K^T = diag(0, hat(tau_1), 0, hat(tau_2)): the bracket of two left perturbations of
    the same node (zero when unstressed). Sign fixed by the oracle."""
    _, el, x, rot, got, want = case
    f, tau = np.zeros((2, 3)), np.zeros((2, 3))
    rod.assemble_forces(el, x, rot, _quats(rot), f, tau)
    skew = np.zeros((12, 12))
    skew[3:6, 3:6] = _hat(tau[0])
    skew[9:12, 9:12] = _hat(tau[1])
    scale = np.abs(want).max()
    assert np.abs((want - want.T) - skew).max() <= BLOCK_TOL * scale  # the oracle says so
    assert np.abs((got - got.T) - skew).max() <= ROUND * scale


def test_strain_map_gives_the_forces(case):
    """-h B^T (n_mat, m_mat) = (f1, tau1, f2, tau2) of the force kernel, to round-off."""
    _, el, x, rot, _, _ = case
    r1, r2 = (tuple(map(float, (rot[a] @ el.offset[0, a]).ravel())) for a in (0, 1))
    q = rod.relative_quaternion(so3.quat_from_matrix(r1), so3.quat_from_matrix(r2))
    args = (tuple(x[0]), tuple(x[1]), r1, q, el.length[0]) + tuple(
        tuple(getattr(el, k)[0]) for k in ("c1", "c2", "gamma0", "omega0")
    )
    ke, bm = np.empty((12, 12)), np.empty((6, 12))
    n_mat, m_mat = rt.element_tangent(*args, ke, bm, np.empty((8, 3, 12)))
    f, tau = np.zeros((2, 3)), np.zeros((2, 3))
    rod.assemble_forces(el, x, rot, _quats(rot), f, tau)
    forces = np.concatenate([f, tau], axis=1).ravel()
    got = -el.length[0] * bm.T @ np.concatenate([n_mat, m_mat])
    # scale: the forces, or at a stress-free state the resultant of a unit strain (the force
    # kernel's own round-off there is eps EA)
    assert np.abs(got - forces).max() <= ROUND * max(np.abs(forces).max(), C1.max())


@pytest.mark.parametrize("name", ["straight unstressed", "curved unstressed offsets"])
def test_symmetric_and_material_when_unstressed(name):
    """At a stress-free state K = h B^T C B: symmetric, and rigid motions are its null space."""
    el, x, rot = _case(name)
    k = _analytic(el, x, rot)
    scale = np.abs(k).max()
    assert np.abs(k - k.T).max() <= ROUND * scale
    rigid = np.zeros((12, 6))  # translations and infinitesimal rotations about the origin
    for a in range(2):
        rigid[6 * a : 6 * a + 3, :3] = np.eye(3)
        rigid[6 * a : 6 * a + 3, 3:] = -_hat(x[a])
        rigid[6 * a + 3 : 6 * a + 6, 3:] = np.eye(3)
    assert np.abs(k @ rigid).max() <= ROUND * scale * max(1.0, np.abs(x).max())


def test_assembled_chain_with_kinks_and_offsets():
    """A chain of five elements (kinked reference, offsets on some ends, strongly deformed):
    the blocks add up on the BSR pattern as the oracle's Jacobian."""
    n = 6
    x0 = np.cumsum(RNG.normal(size=(n, 3)) * 0.3 + [1.0, 0, 0], axis=0)
    rot0 = np.array([_exp(0.4 * RNG.normal(size=3)) for _ in range(n)])
    conn = np.array([[a, a + 1] for a in range(n - 1)])
    ends = rot0[conn].copy()
    ends[1, 1] = ends[1, 1] @ _exp([0.3, -0.2, 0.5])
    ends[3, 0] = ends[3, 0] @ _exp([-0.6, 0.1, 0.2])
    el = rod.make_elements(conn, x0, rot0, C1, C2, end_frames=ends)
    x = x0 + 0.2 * RNG.normal(size=x0.shape)
    rot = np.array([_exp(0.9 * RNG.normal(size=3)) @ r for r in rot0])
    assert _block_error(_analytic(el, x, rot), _oracle(el, x, rot)) <= BLOCK_TOL


def test_rod_slots_refuses_a_block_outside_the_pattern():
    el, _ = _element(np.zeros(3), False)
    with pytest.raises(ValueError, match="not in the sparsity pattern"):
        rt.rod_slots(el, np.array([0, 1, 2]), np.array([0, 1]))
