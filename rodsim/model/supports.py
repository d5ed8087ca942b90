"""Elastic supports: translational and rotational springs and dashpots from nodes to the ground,
and elastic (Winkler) foundations along rods lumped onto them (docs/supports.md).

At a supported node a with reference position x0 and frame Lambda0 (fixed in space):

    u = x - x0,          psi = log(Lambda0^T Lambda)   (reference-frame components)
    V = 1/2 u.K_t u + 1/2 psi.K_r psi
    f = -K_t u,          tau = -Lambda0 jl^{-T}(psi) K_r psi      (spatial, about the node)

The moment is the exact negative gradient with respect to the spatial rotation variation
delta Lambda = hat(theta) Lambda: delta psi = jl^{-1}(psi) Lambda0^T theta. K_t is a 3x3 matrix in
global axes, K_r one in the node's reference frame; a stiffness "per direction in the global
frame" is K_t = diag(k), K_r = Lambda0^T diag(k) Lambda0; "in the section frame" is
K_t = Lambda0 diag(k) Lambda0^T, K_r = diag(k).

Dashpots are Lagrange-d'Alembert forces through the same map: resultants n = C_t u', m = C_r psi'
with psi' = jl^{-1}(psi) Lambda0^T omega (explicit scheme), or the discrete rates
(u_k+1 - u_k)/h and (psi_k+1 - psi_k)/h applied at the step's midpoint (implicit scheme, as the
rods' strain-rate damping). Every kernel is generic over float64 and complex128 (branches on
real parts only), so the implicit Jacobian differentiates them by complex step.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.linalg

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.rod import jl_apply, log_jl, relative_quaternion

FRAMES = ("global", "section")


@dataclass(frozen=True)
class Support:
    """Springs and dashpots to the ground at each of ``nodes``: per-direction stiffnesses and
    damping coefficients (3,) in ``frame`` (global | section), each node's values times
    ``scale[i]`` (a foundation's tributary length; None: 1)."""

    nodes: np.ndarray
    spring: tuple = (0.0, 0.0, 0.0)
    rotational_spring: tuple = (0.0, 0.0, 0.0)
    dashpot: tuple = (0.0, 0.0, 0.0)
    rotational_dashpot: tuple = (0.0, 0.0, 0.0)
    frame: str = "global"
    scale: np.ndarray | None = None


class SupportArrays(NamedTuple):
    """Supports packed for the kernels, S entries (one per supported node and support):
    node (S,) int64; x0 (S,3) anchor; r0 (S,3,3) and q0 (S,4) the node's reference frame;
    k_t, c_t (S,3,3) translational stiffness and damping (global axes); k_r, c_r (S,3,3)
    rotational ones (reference-frame components of psi)."""

    node: np.ndarray
    x0: np.ndarray
    r0: np.ndarray
    q0: np.ndarray
    k_t: np.ndarray
    c_t: np.ndarray
    k_r: np.ndarray
    c_r: np.ndarray


def _axes_matrices(values: np.ndarray, frame: str, r0: np.ndarray, rotational: bool):
    """(S,3,3) matrices of per-direction values (S,3) in `frame`, in the coordinates the kernels
    use: global axes for translations, reference-frame ones for rotations."""
    diag = values[:, :, None] * np.eye(3)
    local = frame == "section"
    if local == rotational:
        return diag
    if rotational:  # global directions seen from the reference frame: Lambda0^T D Lambda0
        return np.einsum("nji,njk,nkl->nil", r0, diag, r0)
    return np.einsum("nij,njk,nlk->nil", r0, diag, r0)  # section directions in global axes


def pack_supports(items: Sequence[Support], x0: np.ndarray, rot0: np.ndarray) -> SupportArrays:
    """SupportArrays of the supports on a model with reference positions x0 (N,3) and frames
    rot0 (N,3,3)."""
    blocks = {k: [] for k in ("node", "k_t", "c_t", "k_r", "c_r")}
    for s in items:
        if s.frame not in FRAMES:
            raise ValueError(f"frame must be one of {', '.join(FRAMES)}, got {s.frame!r}")
        nodes = np.asarray(s.nodes, dtype=np.int64).ravel()
        scale = np.ones(len(nodes)) if s.scale is None else np.asarray(s.scale, dtype=float)
        r0 = rot0[nodes]
        for key, value, rotational in (
            ("k_t", s.spring, False),
            ("c_t", s.dashpot, False),
            ("k_r", s.rotational_spring, True),
            ("c_r", s.rotational_dashpot, True),
        ):
            per_node = scale[:, None] * np.asarray(value, dtype=float)[None, :]
            blocks[key].append(_axes_matrices(per_node, s.frame, r0, rotational))
        blocks["node"].append(nodes)
    if not items:
        z = np.zeros((0, 3, 3))
        return SupportArrays(
            np.zeros(0, dtype=np.int64),
            np.zeros((0, 3)),
            z,
            np.zeros((0, 4)),
            z,
            z.copy(),
            z.copy(),
            z.copy(),
        )
    node = np.concatenate(blocks["node"])
    r0 = np.ascontiguousarray(rot0[node])
    q0 = np.array([so3.quat_from_matrix(tuple(r.ravel())) for r in r0]).reshape(-1, 4)
    return SupportArrays(
        node,
        np.ascontiguousarray(x0[node]),
        r0,
        q0,
        *(np.ascontiguousarray(np.concatenate(blocks[k])) for k in ("k_t", "c_t", "k_r", "c_r")),
    )


def foundation_scale(conn: np.ndarray, length: np.ndarray, nodes: np.ndarray):
    """(nodes, tributary lengths) of an elastic foundation on the rod elements whose two ends
    are in `nodes`: half of each such element's reference length to each of its ends (the
    lumped, row-sum form of the consistent foundation matrix). Empty if there is none."""
    inside = np.isin(conn, nodes).all(axis=1)
    share = np.zeros(int(conn.max(initial=-1)) + 1)
    for side in (0, 1):
        np.add.at(share, conn[inside, side], 0.5 * length[inside])
    carried = np.flatnonzero(share > 0.0)
    return carried.astype(np.int64), share[carried]


def support_frequencies(sp: SupportArrays, mass: np.ndarray, inertia: np.ndarray):
    """(omega2, rate) per supported node: the largest squared frequency of the springs at the
    node (all its entries summed: a foundation and a point spring add up) against its lumped
    mass and rotary inertia, and the dashpots' largest decay rate c / (2 m) (translational or
    rotational). The supports add omega2 to the squared top frequency of the elements
    (lambda_max(A + B) <= lambda_max(A) + lambda_max(B) in the mass metric)."""
    nodes, slot = np.unique(sp.node, return_inverse=True)
    total = {}
    for key in ("k_t", "c_t", "k_r", "c_r"):
        total[key] = np.zeros((len(nodes), 3, 3))
        np.add.at(total[key], slot, getattr(sp, key))
    omega2, rate = np.zeros(len(nodes)), np.zeros(len(nodes))
    for i, a in enumerate(nodes):
        m, j = mass[a], inertia[a]
        omega2[i] = np.linalg.eigvalsh(total["k_t"][i]).max() / m
        rate[i] = np.linalg.eigvalsh(total["c_t"][i]).max() / (2.0 * m)
        if np.any(total["k_r"][i]) or np.any(total["c_r"][i]):
            # node inertia is material (the nodal frame, = the reference frame at rest)
            top = scipy.linalg.eigh(total["k_r"][i], j, eigvals_only=True).max()
            damp = scipy.linalg.eigh(total["c_r"][i], j, eigvals_only=True).max()
            omega2[i] = max(omega2[i], top)
            rate[i] = max(rate[i], 0.5 * damp)
    return omega2, rate


# --- kernels --------------------------------------------------------------------------------


@kernel(inline="always")
def _rotation(sp, i, quat):
    """(psi, e): psi = log(Lambda0^T Lambda) of entry i at the node quaternions quat (N,4), and
    e = (1 - (t/2) cot(t/2)) / t^2, t = |psi|, the hat^2 coefficient of jl^{-1}."""
    return log_jl(relative_quaternion(so3.quat_at(sp.q0, i), so3.quat_at(quat, sp.node[i])))


@kernel(inline="always")
def _apply(sp, i, n, m, psi, e, f, tau):
    """f -= n, tau -= Lambda0 jl^{-T}(psi) m at the node of entry i."""
    a = sp.node[i]
    z = so3.matvec(so3.mat_at(sp.r0, i), jl_apply(psi, e, m, 1.0))
    for k in range(3):
        f[a, k] -= n[k]
        tau[a, k] -= z[k]


@kernel
def support_forces(sp, x, quat, f, tau):
    """Add the springs' forces and moments at positions x (N,3) and node quaternions quat (N,4)
    to f, tau (N,3); returns their energy 1/2 (u.K_t u + psi.K_r psi)."""
    energy = 0.0
    for i in range(sp.node.shape[0]):
        u = so3.sub(so3.vec_at(x, sp.node[i]), so3.vec_at(sp.x0, i))
        n = so3.matvec(so3.mat_at(sp.k_t, i), u)
        psi, e = _rotation(sp, i, quat)
        m = so3.matvec(so3.mat_at(sp.k_r, i), psi)
        energy += 0.5 * (so3.dot(u, n) + so3.dot(psi, m))
        _apply(sp, i, n, m, psi, e, f, tau)
    return energy


@kernel
def support_damping_forces(sp, quat, vel, omg, f, tau):
    """Add the dashpots' forces for nodal velocities vel and spatial angular velocities omg
    (N,3) to f, tau; returns the dissipated power n.u' + m.psi' (>= 0 for positive
    semi-definite C)."""
    power = 0.0
    for i in range(sp.node.shape[0]):
        a = sp.node[i]
        rate = so3.vec_at(vel, a)
        n = so3.matvec(so3.mat_at(sp.c_t, i), rate)
        psi, e = _rotation(sp, i, quat)
        psi_dot = jl_apply(psi, e, so3.matTvec(so3.mat_at(sp.r0, i), so3.vec_at(omg, a)), -1.0)
        m = so3.matvec(so3.mat_at(sp.c_r, i), psi_dot)
        power += so3.dot(rate, n) + so3.dot(psi_dot, m)
        _apply(sp, i, n, m, psi, e, f, tau)
    return power


@kernel
def support_strains(sp, x, quat, u, psi):
    """u (S,3) = x - x0 and psi (S,3) = log(Lambda0^T Lambda) of every entry."""
    for i in range(sp.node.shape[0]):
        a = sp.node[i]
        p = _rotation(sp, i, quat)[0]
        for k in range(3):
            u[i, k] = x[a, k] - sp.x0[i, k]
            psi[i, k] = p[k]


@kernel
def support_step_damping(sp, u0, psi0, u1, psi1, quat_mid, h, f, tau):
    """Add the dashpots' discrete forces over a step of size h: resultants C_t (u1 - u0)/h and
    C_r (psi1 - psi0)/h (strains (S,3) at the step's ends) through the map at the midpoint
    node quaternions quat_mid (N,4)."""
    c = 1.0 / h
    for i in range(sp.node.shape[0]):
        du = (c * (u1[i, 0] - u0[i, 0]), c * (u1[i, 1] - u0[i, 1]), c * (u1[i, 2] - u0[i, 2]))
        dpsi = (
            c * (psi1[i, 0] - psi0[i, 0]),
            c * (psi1[i, 1] - psi0[i, 1]),
            c * (psi1[i, 2] - psi0[i, 2]),
        )
        n = so3.matvec(so3.mat_at(sp.c_t, i), du)
        m = so3.matvec(so3.mat_at(sp.c_r, i), dpsi)
        psi, e = _rotation(sp, i, quat_mid)
        _apply(sp, i, n, m, psi, e, f, tau)
