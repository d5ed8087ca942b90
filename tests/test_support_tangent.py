"""Analytic tangent of the elastic supports (rodsim.model.support_tangent) against the complex
step of the force kernel it linearises (rodsim.model.supports.support_forces, compiled here in
complex128): K = -d(f, tau)/d(u, theta), spatial increments, one node-diagonal block each.

Oracle and tolerance as in tests/test_rod_tangent.py: the complex step (h = 1e-30) is exact to
round-off and follows the kernel's branches (quaternion sign, log's series); the analytic block
is exact to round-off times the conditioning of jl^{-1} (<= ~10 up to psi = pi), so each block
must match within BLOCK_TOL = 1e-10 of its own largest entry (measured: a few 1e-15).
"""

import numpy as np
import pytest
from rotations import exp_matrix as _exp
from rotations import hat as _hat
from rotations import qmul as _qmul
from rotations import quats as _quats

from rodsim.integrators.sparsity import make_pattern
from rodsim.model import support_tangent as stan
from rodsim.model.supports import Support, pack_supports, support_forces

pytestmark = pytest.mark.fast

CS_H = 1e-30
BLOCK_TOL = 1e-10
ROUND = 1e-13
RNG = np.random.default_rng(4036)
AXIS = np.array([0.3, -0.8, 0.5]) / np.linalg.norm([0.3, -0.8, 0.5])
# rotation angles of the nodes away from their reference frames: every series switch (log's at
# 1e-7 on |qv|, rod._SMALL on the half angle, so3_tangent.SERIES_T on |psi|) and pi +- 1e-6
ANGLES = [0.0, 1e-9, 1e-4, 2e-3, 2e-3 * (1 + 1e-9), 0.5, stan.so3_tangent.SERIES_T, 2.0]
ANGLES += [np.pi - 1e-6, np.pi + 1e-6]


def _model(angle, frame):
    """Three nodes, springs on nodes 0 and 2 (anisotropic, in `frame`) and a second entry on
    node 2 (its blocks add up); nodes turned from the reference by `angle` about AXIS (node 0),
    a random axis (node 2), displaced."""
    n = 3
    x0 = RNG.normal(size=(n, 3))
    rot0 = np.array([_exp(RNG.normal(size=3)) for _ in range(n)])
    items = [
        Support(
            np.array([0, 2]), spring=(3.0, 5.0, 7.0), rotational_spring=(2.0, 9.0, 4.0), frame=frame
        ),
        Support(np.array([2]), spring=(1.0, 0.0, 2.0), rotational_spring=(0.5, 0.0, 1.5)),
    ]
    sp = pack_supports(items, x0, rot0)
    x = x0 + 0.3 * RNG.normal(size=x0.shape)
    axis2 = RNG.normal(size=3)
    turns = [angle * AXIS, np.zeros(3), angle * axis2 / np.linalg.norm(axis2)]
    rot = np.array([_exp(t) @ r for t, r in zip(turns, rot0, strict=True)])
    return sp, x, rot


def _oracle(sp, x, rot):
    """(N,6,6) node-diagonal blocks of -d(f, tau)/d(u, theta) by complex step."""
    n = x.shape[0]
    quat = _quats(rot)
    k = np.zeros((n, 6, 6))
    for b in range(n):
        for j in range(6):
            xc, qc = x.astype(np.complex128), quat.astype(np.complex128)
            e = np.zeros(3)
            e[j % 3] = 1.0
            if j < 3:
                xc[b, j] += 1j * CS_H
            else:
                qc[b] = _qmul(np.array([1.0, *(0.5j * CS_H * e)]), quat[b])
            f, tau = np.zeros_like(xc), np.zeros_like(xc)
            support_forces(sp, xc, qc, f, tau)
            full = -np.concatenate([f, tau], axis=1).imag / CS_H
            for a in range(n):  # springs couple nothing across nodes
                assert a == b or not np.any(full[a])
            k[b, :, j] = full[b]
    return k


def _analytic(sp, x, rot, pattern):
    slots = stan.support_slots(sp, pattern.indptr, pattern.indices)
    blocks = np.zeros((len(pattern.indices), 6, 6))
    stan.add_support_tangents(sp, x, _quats(rot), slots, blocks)
    out = np.zeros((x.shape[0], 6, 6))
    for a in range(x.shape[0]):
        for r in range(pattern.indptr[a], pattern.indptr[a + 1]):
            if pattern.indices[r] == a:
                out[a] = blocks[r]
            else:
                assert not np.any(blocks[r])
    return out


@pytest.mark.parametrize("frame", ["global", "section"])
@pytest.mark.parametrize("angle", ANGLES)
def test_blocks_match_the_complex_step(angle, frame):
    sp, x, rot = _model(angle, frame)
    pattern = make_pattern(np.array([[0, 1], [1, 2]]), 3)  # a chain's pattern, off-diagonals 0
    got, want = _analytic(sp, x, rot, pattern), _oracle(sp, x, rot)
    for a in (0, 2):
        assert np.abs(got[a] - want[a]).max() <= BLOCK_TOL * np.abs(want[a]).max()
    assert not np.any(got[1]) and not np.any(want[1])


@pytest.mark.parametrize("angle", [0.0, 1.2, np.pi - 1e-6])
def test_skew_part_is_the_moment(angle):
    """K - K^T = hat(tau) on the rotation block (as the rod's), 0 elsewhere; symmetric at
    psi = 0 (K_r symmetric)."""
    sp, x, rot = _model(angle, "global")
    got = _analytic(sp, x, rot, make_pattern(np.array([[0, 1], [1, 2]]), 3))
    f, tau = np.zeros((3, 3)), np.zeros((3, 3))
    support_forces(sp, x, _quats(rot), f, tau)
    for a in (0, 2):
        skew = np.zeros((6, 6))
        skew[3:, 3:] = _hat(tau[a])
        assert np.abs(got[a] - got[a].T - skew).max() <= ROUND * np.abs(got[a]).max()


def test_support_slots_refuses_a_node_outside_the_pattern():
    sp, _, _ = _model(0.0, "global")
    with pytest.raises(ValueError, match="not in the sparsity pattern"):
        stan.support_slots(sp, np.array([0, 1, 2, 2]), np.array([0, 1]))
