"""Analytic tangent of the connectors (rodsim.model.connector_tangent) against the complex
step of the force kernel it linearises (rodsim.model.connectors.connector_forces, compiled
here in complex128): K = -d(f, tau)/d(u, theta), spatial increments, the 6x6 blocks of each
connector's node pairs (a, a), (a, b), (b, a), (b, b).

Oracle: translation x + 1j h e_j; rotation rot + 1j h hat(e_j) rot and the quaternion
(1, 1j h e_j / 2) quat (the same first-order spatial turn), h = 1e-30. The complex step has no
subtraction, so it is exact to round-off, and it takes the kernel's branches on real parts
(quaternion sign, log's series, the plastic return map, a cable's slack), the branches the
analytic tangent takes from the same committed state.

Tolerance: BLOCK_TOL = 1e-10 of the largest entry of that connector's oracle blocks. Both
sides are exact up to round-off times the conditioning of jl^{-1} (<= ~10 up to psi = pi) and
of the lever |d| of a node-frame link: ~1e-15 expected; 1e-10 (the issue's bound) leaves room
for the series switches near 0 and the angle near pi.
"""

import numpy as np
import pytest
from rotations import exp_matrix as _exp
from rotations import hat as _hat
from rotations import qmul as _qmul
from rotations import quats as _quats

from rodsim.integrators.sparsity import make_pattern
from rodsim.model import connector_tangent as ctan
from rodsim.model import connectors as mc

pytestmark = pytest.mark.fast

CS_H = 1e-30
BLOCK_TOL = 1e-10
AXIS = np.array([0.3, -0.8, 0.5]) / np.linalg.norm([0.3, -0.8, 0.5])
# |psi| of the stressed cases: the series switches, a moderate and a large turn, pi -+ 1e-6
ANGLES = [1e-9, 1e-4, 0.5, 1.5, 2.0, np.pi - 1e-6, np.pi + 1e-6]
NODES = 3  # node 1 is not connected: its blocks must stay 0
A, B = 2, 0  # the connector's nodes (b before a in the node order)
WORST = {}  # measured max block errors, per case (printed by -s)


def _reference(seed):
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=(NODES, 3))
    rot0 = np.array([_exp(rng.normal(size=3)) for _ in range(NODES)])
    return rng, x0, rot0


def _configuration(rng, x0, rot0, angle, move):
    """Positions moved by `move` (random), node a turned arbitrarily and node b so that the
    relative rotation psi has |psi| = angle (about a random axis)."""
    x = x0 + move * rng.normal(size=x0.shape)
    turn = _exp(rng.normal(size=3))
    rot = rot0.copy()
    rot[A] = turn @ rot0[A]
    rot[B] = _exp(angle * AXIS) @ turn @ rot0[B]
    return x, rot


def _oracle(cn, state, x, rot):
    """(6N, 6N) -d(f, tau)/d(u, theta) by complex step of connector_forces."""
    n = x.shape[0]
    quat = _quats(rot)
    k = np.zeros((6 * n, 6 * n))
    for b in range(n):
        for j in range(6):
            xc, rc, qc = (v.astype(np.complex128) for v in (x, rot, quat))
            e = np.zeros(3)
            e[j % 3] = 1.0
            if j < 3:
                xc[b, j] += 1j * CS_H
            else:
                rc[b] = rot[b] + 1j * CS_H * _hat(e) @ rot[b]
                qc[b] = _qmul(np.array([1.0, *(0.5j * CS_H * e)]), quat[b])
            f, tau = np.zeros_like(xc), np.zeros_like(xc)
            mc.connector_forces(cn, state, xc, rc, qc, f, tau)
            k[:, 6 * b + j] = -np.concatenate([f, tau], axis=1).imag.ravel() / CS_H
    return k


def _analytic(cn, state, x, rot):
    """(6N, 6N) from add_connector_tangents into a BSR pattern (connector_slots)."""
    pattern = make_pattern(np.stack([cn.a, cn.b], axis=1), x.shape[0])
    slots = ctan.connector_slots(cn, pattern.indptr, pattern.indices)
    blocks = np.zeros((len(pattern.indices), 6, 6))
    ctan.add_connector_tangents(cn, state, x, rot, _quats(rot), slots, blocks)
    k = np.zeros((6 * x.shape[0], 6 * x.shape[0]))
    for r in range(x.shape[0]):
        for p in range(pattern.indptr[r], pattern.indptr[r + 1]):
            c = pattern.indices[p]
            k[6 * r : 6 * r + 6, 6 * c : 6 * c + 6] = blocks[p]
    return k


def _check(case, cn, state, x, rot):
    got, want = _analytic(cn, state, x, rot), _oracle(cn, state, x, rot)
    scale = np.abs(want).max()
    if scale == 0.0:  # slack: no stiffness at all, on either side
        assert not np.any(got)
        WORST[case] = 0.0
        return want
    err = np.abs(got - want).max() / scale
    WORST[case] = err
    print(f"{case}: {err:.2e} (largest entry {scale:.3g})")
    assert err <= BLOCK_TOL, case
    return want


def _spring(kind, frame, **kw):
    kw.setdefault("stiffness", (3.0, 5.0, 7.0))
    kw.setdefault("rotational_stiffness", (2.0, 9.0, 4.0))
    return mc.Connector(np.array([A]), np.array([B]), kind=kind, frame=frame, **kw)


@pytest.mark.parametrize("frame", ["global", "node"])
@pytest.mark.parametrize("angle", [0.0, *ANGLES])
def test_spring(frame, angle):
    """Unstressed (angle 0: the reference) and strongly stressed (positions moved by 0.5, the
    relative rotation up to pi on either side of the quaternion's sign switch)."""
    rng, x0, rot0 = _reference(7)
    cn = mc.pack_connectors([_spring("spring", frame)], x0, rot0)
    state = mc.initial_state(cn)
    x, rot = (x0, rot0) if angle == 0.0 else _configuration(rng, x0, rot0, angle, 0.5)
    want = _check(f"spring {frame} {angle:.3g}", cn, state, x, rot)
    assert not np.any(want[6:12]) and not np.any(want[:, 6:12])  # node 1 unconnected


@pytest.mark.parametrize("frame", ["global", "node"])
@pytest.mark.parametrize("angle", [0.0, 0.7, np.pi - 1e-6])
@pytest.mark.parametrize("branch", ["elastic", "yielding", "perfect"])
def test_plastic(frame, angle, branch):
    """The return map from a committed state with slip and hardening: elastic in every
    direction, yielding in two (one stays elastic: an infinite yield force), and yielding
    without hardening (tangent 0 in those directions)."""
    rng, x0, rot0 = _reference(11)
    if branch == "elastic":
        kw = {"yield_force": (50.0, 50.0, 50.0), "hardening": 0.5}
    else:
        hard = 0.5 if branch == "yielding" else 0.0
        kw = {"yield_force": (0.2, 0.3, np.inf), "hardening": hard}
    cn = mc.pack_connectors([_spring("plastic", frame, **kw)], x0, rot0)
    state = mc.ConnectorState(
        np.array([[0.05, -0.02, 0.01]]), np.array([[0.1, 0.05, 0.0]]), np.zeros(1)
    )
    x, rot = _configuration(rng, x0, rot0, angle, 0.4)
    # the branch the forces take: |k (u - s_n)| against F_y + H alpha_n per direction
    u, psi = np.zeros((1, 3)), np.zeros((1, 3))
    mc.connector_strains(cn, x, rot, _quats(rot), u, psi)
    trial = np.abs(cn.k_t * (u - state.slip))
    yields = trial > cn.yield_force + cn.hardening * state.alpha
    assert yields.tolist() == [[branch != "elastic"] * 2 + [False]]
    _check(f"plastic {branch} {frame} {angle:.3g}", cn, state, x, rot)


@pytest.mark.parametrize("kind", ["cable", "strut"])
@pytest.mark.parametrize("taut", [False, True])
@pytest.mark.parametrize("frame", ["global", "node"])
def test_axial(kind, taut, frame):
    """Cable and strut, engaged (tension, compression) and slack (no stiffness at all); the
    frame does not matter to them. Nodes turned: rotations must not enter."""
    rng, x0, rot0 = _reference(13)
    x, rot = _configuration(rng, x0, rot0, 1.0, 0.3)
    length = np.linalg.norm(x[B] - x[A])
    longer = (kind == "cable") != taut  # a slack cable or a taut strut: L0 above l
    free = length * (1.3 if longer else 0.7)
    item = _spring(kind, frame, stiffness=(5.0, 0.0, 0.0), length=free)
    cn = mc.pack_connectors([item], x0, rot0)
    want = _check(f"{kind} {'taut' if taut else 'slack'} {frame}", cn, mc.initial_state(cn), x, rot)
    assert np.any(want) == taut
    assert not np.any(want[:, 3:6]) and not np.any(want[:, 15:18])  # no rotation columns


def test_several_connectors_add_up():
    """Two connectors on the same pair of nodes and one on another pair, all kinds mixed:
    their blocks add at shared slots."""
    rng, x0, rot0 = _reference(17)
    items = [
        _spring("spring", "node"),
        _spring("plastic", "global", yield_force=(0.2, 0.3, 0.4), hardening=0.3),
        mc.Connector(np.array([1]), np.array([2]), kind="cable", stiffness=(4.0, 0, 0),
                     length=0.1),
    ]  # fmt: skip
    cn = mc.pack_connectors(items, x0, rot0)
    x, rot = _configuration(rng, x0, rot0, 2.5, 0.5)
    _check("mixed", cn, mc.initial_state(cn), x, rot)
