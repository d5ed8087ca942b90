"""Connectors: links between two nodes a and b (docs/connectors.md).

Kinds (KINDS): a linear spring and dashpot per direction (translational and rotational), a
tension-only (cable) or compression-only (strut) axial link, and an elastic-perfectly-plastic
or linearly hardening link per translational direction whose plastic slip is term state.

Measures, in the connector's frame (global axes, or node a's current frame Lambda_a), with
d = x_b - x_a, d0 = x_b0 - x_a0, La = Lambda_a (node a's frame), La0 its reference:

    node:    u = Lambda_a^T d - Lambda_a0^T d0,  psi = log(La^T Lb Lb0^T La0)
    global:  u = d - d0,                        psi_g = Lambda_a psi
             (= log(R_b R_a^T), R = Lambda Lambda0^T: b's rotation relative to a's, spatial)
    V = 1/2 u.K_t u + 1/2 psi.K_r psi          (K diagonal in the frame)

The forces are the exact negative gradient of V for delta x and spatial rotation variations
delta Lambda = hat(theta) Lambda, with n = K_t u, m = K_r psi:

    node:    N = Lambda_a n;  f_a = N, f_b = -N, tau_a = d x N + z, tau_b = -z,
             z = Lambda_a jl^{-T}(psi) m
    global:  N = n;           f_a = N, f_b = -N, tau_a = w - psi_g x m, tau_b = -w,
             w = jl^{-T}(psi_g) m

so sum f = 0 always, and in the node frame sum (tau + x x f) = 0 too (V is invariant under a
rigid rotation of everything); in the global frame the moments balance when K_r is isotropic
and the translational force is along the chord (a global-frame link refers to fixed axes).

Axial kinds: l = |d|, N = k (l - L0) along e = d / l, only while l > L0 (cable) or l < L0
(strut); V = 1/2 k (l - L0)^2 there, 0 otherwise.

Plastic kind (per direction j of the frame): trial n = k (u - s_n), yield Y = F_y + H alpha_n;
where |n| > Y the return mapping gives dg = (|n| - Y) / (k + H), s = s_n + sign(n) dg,
alpha = alpha_n + dg, n = k (u - s). The forces are the exact gradient of the incremental
potential Phi(u) = 1/2 k (u - s)^2 + 1/2 H alpha^2 + F_y dg (what the kernels return as the
energy); the committed state (s_n, alpha_n) changes only in connector_accept, after an
accepted step, which also adds the dissipated work F_y dg.

Dashpots act on the rates of u and psi through the same map (Lagrange-d'Alembert forces): in
the explicit scheme u' = Lambda_a^T (v_b - v_a + d x omega_a), psi' = jl^{-1}(psi)
Lambda_a^T (omega_b - omega_a) (node), u' = v_b - v_a, psi_g' = omega_a x psi_g +
jl^{-1}(psi_g) (omega_b - omega_a) (global); in the implicit scheme the discrete rates
(u_k+1 - u_k) / h, (psi_k+1 - psi_k) / h through the map at the step's midpoint.

Every kernel is generic over float64 and complex128 (branches on real parts only), so the
complex step differentiates them (the tests' oracle); the implicit Jacobian takes their exact
tangent from rodsim.model.connector_tangent.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import scalar, so3
from rodsim.model.rod import jl_apply, log_jl, relative_quaternion

KINDS = ("spring", "cable", "strut", "plastic")
SPRING, CABLE, STRUT, PLASTIC = range(4)
FRAMES = ("global", "node")
_ZERO3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Connector:
    """Connectors from each node of ``a`` to the node of ``b`` at the same position (equal
    lengths). spring, plastic: per-direction values (3,) in ``frame`` (global | node);
    cable, strut: ``stiffness`` (3,) whose first entry is the axial k, ``length`` the free
    length L0 (None: the reference distance). plastic: ``yield_force`` (3,) (inf: elastic in
    that direction) and ``hardening`` H."""

    a: np.ndarray
    b: np.ndarray
    kind: str = "spring"
    frame: str = "global"
    stiffness: tuple = _ZERO3
    damping: tuple = _ZERO3
    rotational_stiffness: tuple = _ZERO3
    rotational_damping: tuple = _ZERO3
    length: float | None = None
    yield_force: tuple = (np.inf, np.inf, np.inf)
    hardening: float = 0.0


class ConnectorArrays(NamedTuple):
    """Connectors packed for the kernels, C of them: a, b (C,) int64 nodes; kind (C,) int64
    (SPRING, CABLE, STRUT, PLASTIC); local (C,) int64 (1: node a's frame, 0: global axes);
    d0 (C,3) the reference chord in the frame (Lambda_a0^T d0 or d0); cq (C,4) the quaternion
    of Lambda_b0^T Lambda_a0; length (C,) L0 of the axial kinds; k_t, c_t, k_r, c_r (C,3)
    stiffness and damping per direction (axial kinds: k_t[:, 0] = k); yield_force,
    hardening (C,3) of the plastic kind (inf: never yields)."""

    a: np.ndarray
    b: np.ndarray
    kind: np.ndarray
    local: np.ndarray
    d0: np.ndarray
    cq: np.ndarray
    length: np.ndarray
    k_t: np.ndarray
    c_t: np.ndarray
    k_r: np.ndarray
    c_r: np.ndarray
    yield_force: np.ndarray
    hardening: np.ndarray


class ConnectorState(NamedTuple):
    """The connectors' committed state: slip (C,3) the plastic slip s per direction, alpha
    (C,3) the accumulated plastic slip, work (C,) the plastic work dissipated so far
    (sum of F_y |delta s|; zero for the elastic kinds)."""

    slip: np.ndarray
    alpha: np.ndarray
    work: np.ndarray


def pack_connectors(items: Sequence[Connector], x0: np.ndarray, rot0: np.ndarray):
    """ConnectorArrays of the connectors on a model with reference positions x0 (N,3) and
    frames rot0 (N,3,3)."""
    rows = {k: [] for k in ConnectorArrays._fields}
    for c in items:
        if c.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {c.kind!r}")
        if c.frame not in FRAMES:
            raise ValueError(f"frame must be one of {', '.join(FRAMES)}, got {c.frame!r}")
        a = np.asarray(c.a, dtype=np.int64).ravel()
        b = np.asarray(c.b, dtype=np.int64).ravel()
        if a.shape != b.shape:
            raise ValueError(f"node lists of different sizes: {len(a)} and {len(b)}")
        local = c.frame == "node"
        d0 = x0[b] - x0[a]
        rows["a"].append(a)
        rows["b"].append(b)
        rows["kind"].append(np.full(len(a), KINDS.index(c.kind), dtype=np.int64))
        rows["local"].append(np.full(len(a), int(local), dtype=np.int64))
        rows["d0"].append(np.einsum("nji,nj->ni", rot0[a], d0) if local else d0)
        rows["cq"].append(
            np.array(
                [
                    so3.quat_mul(_conj(_quat_of(rot0[j])), _quat_of(rot0[i]))
                    for i, j in zip(a, b, strict=True)
                ]
            ).reshape(-1, 4)
        )
        length = np.linalg.norm(d0, axis=1) if c.length is None else np.full(len(a), c.length)
        rows["length"].append(length)
        for key, value in (
            ("k_t", c.stiffness),
            ("c_t", c.damping),
            ("k_r", c.rotational_stiffness),
            ("c_r", c.rotational_damping),
            ("yield_force", c.yield_force),
            ("hardening", np.broadcast_to(c.hardening, 3)),
        ):
            rows[key].append(np.tile(np.asarray(value, dtype=float), (len(a), 1)))
    if not items:
        return empty_connectors()
    return ConnectorArrays(
        *(np.ascontiguousarray(np.concatenate(rows[k])) for k in ConnectorArrays._fields)
    )


def empty_connectors() -> ConnectorArrays:
    """ConnectorArrays with no connector (a model without connectors)."""
    i0 = np.zeros(0, dtype=np.int64)
    v = np.zeros((0, 3))
    return ConnectorArrays(
        i0, i0.copy(), i0.copy(), i0.copy(), v, np.zeros((0, 4)), np.zeros(0), *(v.copy(),) * 6
    )


def initial_state(cn: ConnectorArrays) -> ConnectorState:
    """The state at rest in the reference: no slip, no dissipated work."""
    c = cn.a.shape[0]
    return ConnectorState(np.zeros((c, 3)), np.zeros((c, 3)), np.zeros(c))


def _quat_of(r: np.ndarray) -> tuple:
    return so3.quat_from_matrix(tuple(np.asarray(r, dtype=float).ravel()))


def _conj(q: tuple) -> tuple:
    return (q[0], -q[1], -q[2], -q[3])


# --- kernels: measures and the map of resultants to nodal forces -------------------------------


@kernel(inline="always")
def _measures(cn, i, x, rot, quat):
    """(u, psi, e, d, ra) of connector i (spring and plastic kinds): the measures u, psi in
    its frame, the jl^{-1} coefficient e of psi, the chord d = x_b - x_a and Lambda_a (9,)."""
    a = cn.a[i]
    b = cn.b[i]
    d = so3.sub(so3.vec_at(x, b), so3.vec_at(x, a))
    ra = so3.mat_at(rot, a)
    p = relative_quaternion(so3.quat_at(quat, a), so3.quat_at(quat, b))
    q = so3.quat_mul(p, so3.quat_at(cn.cq, i))
    if q[0].real < 0.0:
        q = (-q[0], -q[1], -q[2], -q[3])
    psi, e = log_jl(q)
    if cn.local[i]:
        u = so3.sub(so3.matTvec(ra, d), so3.vec_at(cn.d0, i))
    else:
        u = so3.sub(d, so3.vec_at(cn.d0, i))
        psi = so3.matvec(ra, psi)
    return u, psi, e, d, ra


@kernel(inline="always")
def _apply(cn, i, n, m, psi, e, d, ra, f, tau):
    """Add the nodal forces and moments of resultants n, m (the frame's components) of
    connector i to f, tau (N,3) (module docstring)."""
    a = cn.a[i]
    b = cn.b[i]
    if cn.local[i]:
        big = so3.matvec(ra, n)
        z = so3.matvec(ra, jl_apply(psi, e, m, 1.0))
        za = so3.add(so3.cross(d, big), z)
    else:
        big = n
        z = jl_apply(psi, e, m, 1.0)
        za = so3.sub(z, so3.cross(psi, m))
    for k in range(3):
        f[a, k] += big[k]
        f[b, k] -= big[k]
        tau[a, k] += za[k]
        tau[b, k] -= z[k]


@kernel(inline="always")
def _axial(cn, i, x):
    """(stretch l - L0, unit chord e, engaged) of an axial connector i."""
    d = so3.sub(so3.vec_at(x, cn.b[i]), so3.vec_at(x, cn.a[i]))
    length = scalar.sqrt(so3.dot(d, d))
    stretch = length - cn.length[i]
    if cn.kind[i] == CABLE:
        engaged = stretch.real > 0.0
    else:
        engaged = stretch.real < 0.0
    return stretch, so3.scale(1.0 / length, d), engaged


@kernel(inline="always")
def _return_map(k, hard, fy, s_n, alpha_n, u):
    """One direction of the plastic kind: (n, s, alpha, dg, Phi) at measure u from the
    committed slip s_n and accumulated slip alpha_n (module docstring)."""
    ntr = k * (u - s_n)
    y = fy + hard * alpha_n
    if not abs(ntr.real) > y:
        phi = 0.5 * ntr * (u - s_n) + 0.5 * hard * alpha_n * alpha_n
        return ntr, s_n + 0.0 * u, alpha_n + 0.0 * u, 0.0 * u, phi
    sg = 1.0 if ntr.real > 0.0 else -1.0
    dg = (sg * ntr - y) / (k + hard)
    n = ntr - sg * k * dg
    s = s_n + sg * dg
    alpha = alpha_n + dg
    return n, s, alpha, dg, 0.5 * n * (u - s) + 0.5 * hard * alpha * alpha + fy * dg


@kernel(inline="always")
def _translation(cn, state, i, u):
    """(n, s, alpha, dg, energy) of the translational springs of connector i at u: linear,
    or (plastic kind) the return mapping from the committed state, per direction."""
    if cn.kind[i] != PLASTIC:
        n = (cn.k_t[i, 0] * u[0], cn.k_t[i, 1] * u[1], cn.k_t[i, 2] * u[2])
        z = 0.0 * u[0]
        return n, (z, z, z), (z, z, z), (z, z, z), 0.5 * so3.dot(n, u)
    r0 = _return_map(
        cn.k_t[i, 0], cn.hardening[i, 0], cn.yield_force[i, 0], state.slip[i, 0],
        state.alpha[i, 0], u[0],
    )  # fmt: skip
    r1 = _return_map(
        cn.k_t[i, 1], cn.hardening[i, 1], cn.yield_force[i, 1], state.slip[i, 1],
        state.alpha[i, 1], u[1],
    )  # fmt: skip
    r2 = _return_map(
        cn.k_t[i, 2], cn.hardening[i, 2], cn.yield_force[i, 2], state.slip[i, 2],
        state.alpha[i, 2], u[2],
    )  # fmt: skip
    return (
        (r0[0], r1[0], r2[0]),
        (r0[1], r1[1], r2[1]),
        (r0[2], r1[2], r2[2]),
        (r0[3], r1[3], r2[3]),
        r0[4] + r1[4] + r2[4],
    )


# --- kernels: forces, damping, state ----------------------------------------------------------


@kernel
def connector_forces(cn, state, x, rot, quat, f, tau):
    """Add the connectors' forces and moments at positions x (N,3), frames rot (N,3,3) and
    node quaternions quat (N,4) to f, tau; returns their energy (plastic kind: the
    incremental potential from the committed state; state None: no plastic connector)."""
    energy = 0.0
    for i in range(cn.a.shape[0]):
        kind = cn.kind[i]
        if kind == CABLE or kind == STRUT:
            stretch, e_dir, engaged = _axial(cn, i, x)
            if engaged:
                tension = cn.k_t[i, 0] * stretch
                energy += 0.5 * tension * stretch
                for k in range(3):
                    f[cn.a[i], k] += tension * e_dir[k]
                    f[cn.b[i], k] -= tension * e_dir[k]
            continue
        u, psi, e, d, ra = _measures(cn, i, x, rot, quat)
        n, s, alpha, dg, en = _translation(cn, state, i, u)
        m = (cn.k_r[i, 0] * psi[0], cn.k_r[i, 1] * psi[1], cn.k_r[i, 2] * psi[2])
        energy += en + 0.5 * so3.dot(m, psi)
        _apply(cn, i, n, m, psi, e, d, ra, f, tau)
    return energy


@kernel
def connector_damping(cn, x, rot, quat, vel, omg, f, tau):
    """Add the dashpots' forces for nodal velocities vel and spatial angular velocities omg
    (N,3) to f, tau; returns the dissipated power n.u' + m.psi' (>= 0)."""
    power = 0.0
    for i in range(cn.a.shape[0]):
        kind = cn.kind[i]
        if kind == CABLE or kind == STRUT:
            continue
        a = cn.a[i]
        b = cn.b[i]
        u, psi, e, d, ra = _measures(cn, i, x, rot, quat)
        dv = so3.sub(so3.vec_at(vel, b), so3.vec_at(vel, a))
        dw = so3.sub(so3.vec_at(omg, b), so3.vec_at(omg, a))
        if cn.local[i]:
            rate = so3.matTvec(ra, so3.add(dv, so3.cross(d, so3.vec_at(omg, a))))
            psi_dot = jl_apply(psi, e, so3.matTvec(ra, dw), -1.0)
        else:
            rate = dv
            psi_dot = so3.add(so3.cross(so3.vec_at(omg, a), psi), jl_apply(psi, e, dw, -1.0))
        n = (cn.c_t[i, 0] * rate[0], cn.c_t[i, 1] * rate[1], cn.c_t[i, 2] * rate[2])
        m = (cn.c_r[i, 0] * psi_dot[0], cn.c_r[i, 1] * psi_dot[1], cn.c_r[i, 2] * psi_dot[2])
        power += so3.dot(rate, n) + so3.dot(psi_dot, m)
        _apply(cn, i, n, m, psi, e, d, ra, f, tau)
    return power


@kernel
def connector_strains(cn, x, rot, quat, u, psi):
    """u, psi (C,3): the measures of every spring and plastic connector (axial kinds: 0)."""
    for i in range(cn.a.shape[0]):
        kind = cn.kind[i]
        if kind == CABLE or kind == STRUT:
            for k in range(3):
                u[i, k] = 0.0
                psi[i, k] = 0.0
            continue
        ui, pi = _measures(cn, i, x, rot, quat)[:2]
        for k in range(3):
            u[i, k] = ui[k]
            psi[i, k] = pi[k]


@kernel
def connector_step_damping(cn, u0, psi0, u1, psi1, xb, rb, qb, h, f, tau):
    """Add the dashpots' discrete forces over a step of size h: resultants C_t (u1 - u0)/h and
    C_r (psi1 - psi0)/h (measures (C,3) at the step's ends) through the map at the midpoint
    xb, rb, qb."""
    c = 1.0 / h
    for i in range(cn.a.shape[0]):
        kind = cn.kind[i]
        if kind == CABLE or kind == STRUT:
            continue
        n = (
            cn.c_t[i, 0] * c * (u1[i, 0] - u0[i, 0]),
            cn.c_t[i, 1] * c * (u1[i, 1] - u0[i, 1]),
            cn.c_t[i, 2] * c * (u1[i, 2] - u0[i, 2]),
        )
        m = (
            cn.c_r[i, 0] * c * (psi1[i, 0] - psi0[i, 0]),
            cn.c_r[i, 1] * c * (psi1[i, 1] - psi0[i, 1]),
            cn.c_r[i, 2] * c * (psi1[i, 2] - psi0[i, 2]),
        )
        u, psi, e, d, ra = _measures(cn, i, xb, rb, qb)
        _apply(cn, i, n, m, psi, e, d, ra, f, tau)


@kernel
def connector_accept(cn, state, x, rot, quat):
    """Commit the plastic connectors' slip at an accepted configuration: s, alpha from the
    return mapping, and the dissipated work F_y dg added to state.work."""
    for i in range(cn.a.shape[0]):
        if cn.kind[i] != PLASTIC:
            continue
        u = _measures(cn, i, x, rot, quat)[0]
        n, s, alpha, dg, en = _translation(cn, state, i, u)
        for k in range(3):
            if dg[k] > 0.0:
                state.work[i] += cn.yield_force[i, k] * dg[k]
            state.slip[i, k] = s[k]
            state.alpha[i, k] = alpha[k]


@kernel
def connector_fields(cn, state, x, rot, quat, force, moment, elongation, rotation):
    """Per connector (C,3): force n and moment m (the resultants in the connector's frame,
    without the dashpots; axial kinds: (N, 0, 0), N > 0 in tension), elongation u and
    rotation psi (axial: (l - L0, 0, 0)); returns the energy."""
    energy = 0.0
    for i in range(cn.a.shape[0]):
        kind = cn.kind[i]
        for k in range(3):
            force[i, k] = 0.0
            moment[i, k] = 0.0
            elongation[i, k] = 0.0
            rotation[i, k] = 0.0
        if kind == CABLE or kind == STRUT:
            stretch, e_dir, engaged = _axial(cn, i, x)
            elongation[i, 0] = stretch
            if engaged:
                force[i, 0] = cn.k_t[i, 0] * stretch
                energy += 0.5 * force[i, 0] * stretch
            continue
        u, psi, e, d, ra = _measures(cn, i, x, rot, quat)
        n, s, alpha, dg, en = _translation(cn, state, i, u)
        m = (cn.k_r[i, 0] * psi[0], cn.k_r[i, 1] * psi[1], cn.k_r[i, 2] * psi[2])
        energy += en + 0.5 * so3.dot(m, psi)
        for k in range(3):
            force[i, k] = n[k]
            moment[i, k] = m[k]
            elongation[i, k] = u[k]
            rotation[i, k] = psi[k]
    return energy
