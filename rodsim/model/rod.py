"""Two-node geometrically exact (Simo–Reissner) rod element and its assembly kernels.

Element (docs/theory.md, "Rod model and its discrete energy", ): geodesic (objective) rotation
interpolation
``Lambda_h(s) = Lambda_1 exp(s/h hat psi)``, ``psi = log(Lambda_1^T Lambda_2)``, linear
positions, one-point Gauss quadrature at the midpoint where ``Lambda_m = Lambda_1 exp(psi/2)``:

    Omega = psi/h - Omega0,   Gamma = Lambda_m^T (x2 - x1)/h - E1 - Gamma0,
    U_e = h (1/2 Gamma.C1 Gamma + 1/2 Omega.C2 Omega).

Nodal forces and moments are the EXACT negative gradient of U_e with respect to the positions
and the spatial rotation variations ``delta Lambda_a = hat(theta_a) Lambda_a`` (not the
approximate Simo–Vu-Quoc formula (52c) of Mata (2015), which breaks the O(dt^2) energy bound):

    f1 = n, f2 = -n,  n = Lambda_m C1 Gamma,
    tau2 = Lambda_1 jl^{-T}(psi) (1/2 jl^T(psi/2) Lambda_1^T (d x n) - C2 Omega),
    tau1 = d x n - tau2.

Sum f = 0 and sum (tau + x x f) = 0 hold identically, which is what makes the integrators
conserve linear and angular momentum to round-off.

Arrays: N nodes, E elements. ``x`` (N,3) positions, ``rot`` (N,3,3) nodal rotations (columns
are the directors d1, d2, d3), ``conn`` (E,2) int64, element data (E,) or (E,3) float64.
Units are the user's consistent units; energies are force x length.
"""

from typing import NamedTuple

import numpy as np
from numba import prange

from rodsim.jit import kernel
from rodsim.lie import scalar, so3

_SMALL = 1.0e-3


class RodElements(NamedTuple):
    """Element data consumed by the kernels (immutable; numba reads it as a named tuple).

    conn (E,2) int64 node indices; length (E,) reference lengths h; c1 (E,3) = (EA, GA2, GA3);
    c2 (E,3) = (GJ, EI2, EI3); gamma0, omega0 (E,3) reference strains (section frame);
    node_ptr (N+1,) and node_slots (2E,) int64: CSR map node -> element ends, a slot being
    2*e + side (side 0 = first node of e), used by the parallel gather.
    offset (E,2,3,3), offset_q (E,2,4) its quaternions, has_offset (E,) int64: where elements
    meet at an angle (frames, Gmsh polylines) a node's frame is not the element's section
    frame; the element then uses Lambda_a Q_ea at its end, Q_ea = Lambda0_a^T (reference
    section frame at that end), a constant rotation. Spatial rotation variations of
    Lambda_a Q_ea are those of Lambda_a, so the element's nodal moments apply to the node
    unchanged.
    """

    conn: np.ndarray
    length: np.ndarray
    c1: np.ndarray
    c2: np.ndarray
    gamma0: np.ndarray
    omega0: np.ndarray
    node_ptr: np.ndarray
    node_slots: np.ndarray
    offset: np.ndarray
    offset_q: np.ndarray
    has_offset: np.ndarray


_load_mat = so3.mat_at  # rot[a] (3,3) as a row-major 9-tuple


_load_vec = so3.vec_at  # arr[a] (3,) as a 3-tuple
_load_quat = so3.quat_at  # arr[a] (4,) as a 4-tuple


@kernel(inline="always")
def relative_quaternion(q1, q2):
    """Unit quaternion (w, x, y, z) of F = R(q1)^T R(q2), i.e. conj(q1) q2, sign chosen so
    that w >= 0 (the branch with |log F| <= pi, as Spurrier's extraction of F gives)."""
    w1, x1, y1, z1 = q1
    w2, x2, y2, z2 = q2
    w = w1 * w2 + x1 * x2 + y1 * y2 + z1 * z2
    x = w1 * x2 - w2 * x1 - (y1 * z2 - z1 * y2)
    y = w1 * y2 - w2 * y1 - (z1 * x2 - x1 * z2)
    z = w1 * z2 - w2 * z1 - (x1 * y2 - y1 * x2)
    if w.real < 0.0:
        return -w, -x, -y, -z
    return w, x, y, z


@kernel(inline="always")
def relative_data(q):
    """From q = (w, qx, qy, qz), w >= 0, the quaternion of F = r1^T r2: qv, |qv|, the half
    angle, 1/|qv| (0 when tiny), psi = log F and k = 1/(1 + w)."""
    w, qx, qy, qz = q
    qv = (qx, qy, qz)
    s = scalar.sqrt(qx * qx + qy * qy + qz * qz)
    half = scalar.atan2(s, w)
    if s.real < 1.0e-7:
        fp = 2.0 / w * (1.0 - s * s / (3.0 * w * w))
        inv_s = 0.0  # unused: half < _SMALL in _forces_from_resultants
    else:
        inv_s = 1.0 / s
        fp = 2.0 * half * inv_s
    psi = (fp * qx, fp * qy, fp * qz)
    return qv, s, half, inv_s, psi, 1.0 / (1.0 + w)


@kernel(inline="always")
def log_jl(q):
    """(psi, e) of a unit quaternion q (w >= 0): psi = log of its rotation and
    e = (1 - (t/2) cot(t/2)) / t^2, t = |psi|, the hat^2 coefficient of jl^{-1}(psi) (its
    series below _SMALL), for jl_apply. Used by the supports and the connectors."""
    qv, s, half, inv_s, psi, k = relative_data(q)
    if half.real < _SMALL:
        t2 = 4.0 * half * half
        e = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    else:
        e = (1.0 - half * q[0] * inv_s) * (0.25 / (half * half))
    return psi, e


@kernel(inline="always")
def jl_apply(psi, e, v, sign):
    """jl^{-1}(psi) v (sign -1) or jl^{-T}(psi) v (sign +1): v + sign/2 psi x v +
    e psi x (psi x v), e from log_jl."""
    pv = so3.cross(psi, v)
    ppv = so3.cross(psi, pv)
    return (
        v[0] + 0.5 * sign * pv[0] + e * ppv[0],
        v[1] + 0.5 * sign * pv[1] + e * ppv[1],
        v[2] + 0.5 * sign * pv[2] + e * ppv[2],
    )


@kernel(inline="always")
def _forces_from_resultants(r1, w, qv, s, half, inv_s, psi, k, d, dd, n_mat, m_mat):
    """Nodal force n on node 1 (-n on node 2) and moments tau1, tau2 (spatial) of section
    resultants n_mat, m_mat (section frame): the transpose of the strain map, -h B^T, of
    docs/theory.md, "Rod model and its discrete energy" (the elastic forces for C eps, the viscous
    ones for beta C deps/dt)."""
    qn = so3.cross(qv, n_mat)
    qqn = so3.cross(qv, qn)
    n1 = (
        n_mat[0] + qn[0] + k * qqn[0],
        n_mat[1] + qn[1] + k * qqn[1],
        n_mat[2] + qn[2] + k * qqn[2],
    )
    n = so3.matvec(r1, n1)
    dn = so3.cross(d, n)
    # jl(psi/2)^T = jl(-psi/2): coefficients (1 - cos t)/t^2, (t - sin t)/t^3 at t = half
    # jl(psi)^{-T} = jl_inv(-psi): coefficient (1 - half cot half)/(2 half)^2
    if half.real < _SMALL:
        h2 = half * half
        b = 0.5 - h2 / 24.0 + h2 * h2 / 720.0
        c = 1.0 / 6.0 - h2 / 120.0 + h2 * h2 / 5040.0
        t2 = 4.0 * h2
        e = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    else:
        # (1 - w)/half^2, (half - s)/half^3, (1 - half w/s)/(4 half^2) with 2 divisions, not 4
        ih = 1.0 / half
        ih2 = ih * ih
        b = (1.0 - w) * ih2
        c = (half - s) * ih2 * ih
        e = (1.0 - half * w * inv_s) * (0.25 * ih2)
    v = (0.5 * psi[0], 0.5 * psi[1], 0.5 * psi[2])
    a = so3.cross(dd, n1)
    va = so3.cross(v, a)
    vva = so3.cross(v, va)
    u = (
        0.5 * (a[0] - b * va[0] + c * vva[0]) - m_mat[0],
        0.5 * (a[1] - b * va[1] + c * vva[1]) - m_mat[1],
        0.5 * (a[2] - b * va[2] + c * vva[2]) - m_mat[2],
    )
    pu = so3.cross(psi, u)
    ppu = so3.cross(psi, pu)
    z = (
        u[0] + 0.5 * pu[0] + e * ppu[0],
        u[1] + 0.5 * pu[1] + e * ppu[1],
        u[2] + 0.5 * pu[2] + e * ppu[2],
    )
    tau2 = so3.matvec(r1, z)
    tau1 = so3.sub(dn, tau2)
    return n, tau1, tau2


@kernel(inline="always")
def _element(x1, x2, r1, q, h, c1, c2, g0, w0):
    """The element's strains, resultants, energy and nodal forces/moments (see
    element_response), from r1 and q = (w, qx, qy, qz) the unit quaternion of F = r1^T r2 with
    w >= 0. Inlined into element_response and the assembly (unused outputs are dropped).

    Everything is evaluated in the frame of node 1: with e_half = exp(psi/2) =
    I + hat qv + hat qv^2/(1 + w), Lambda_m = r1 e_half, so Lambda_m^T d = e_half^T (r1^T d),
    r1^T n = e_half n_mat and r1^T (d x n) = (r1^T d) x (r1^T n); only n and tau2 are rotated
    back. This avoids forming Lambda_m (a 3x3 product) per element.
    """
    qv, s, half, inv_s, psi, k = relative_data(q)
    d = so3.sub(x2, x1)
    dd = so3.matTvec(r1, d)
    qd = so3.cross(qv, dd)
    qqd = so3.cross(qv, qd)
    inv_h = 1.0 / h
    ld = (dd[0] - qd[0] + k * qqd[0], dd[1] - qd[1] + k * qqd[1], dd[2] - qd[2] + k * qqd[2])
    gamma = (ld[0] * inv_h - 1.0 - g0[0], ld[1] * inv_h - g0[1], ld[2] * inv_h - g0[2])
    omega = (psi[0] * inv_h - w0[0], psi[1] * inv_h - w0[1], psi[2] * inv_h - w0[2])
    n_mat = (c1[0] * gamma[0], c1[1] * gamma[1], c1[2] * gamma[2])
    m_mat = (c2[0] * omega[0], c2[1] * omega[1], c2[2] * omega[2])
    energy = 0.5 * h * (so3.dot(gamma, n_mat) + so3.dot(omega, m_mat))
    n, tau1, tau2 = _forces_from_resultants(
        r1, q[0], qv, s, half, inv_s, psi, k, d, dd, n_mat, m_mat
    )
    return n, tau1, tau2, energy, gamma, omega, n_mat, m_mat


@kernel
def element_response(x1, x2, r1, r2, h, c1, c2, g0, w0):
    """Strains, resultants, energy and exact nodal forces/moments of one element.

    Inputs are tuples: x1, x2 positions (3,), r1, r2 row-major rotations (9,), c1, c2, g0, w0
    (3,), h the reference length. Returns
    (f1, tau1, tau2, energy, gamma, omega, n_mat, m_mat, lam_m) with f2 = -f1; gamma, omega are
    Gamma - Gamma0 and Omega - Omega0; n_mat = C1 gamma, m_mat = C2 omega (section frame);
    lam_m the midpoint section frame. Source: docs/theory.md, "Rod model and its discrete energy"
    (exact gradient).
    """
    q = so3.quat_from_matrix(so3.matTmul(r1, r2))
    out = _element(x1, x2, r1, q, h, c1, c2, g0, w0)
    # exp(psi/2) from the quaternion of F: I + hat q + hat q^2 / (1 + w)
    w, qx, qy, qz = q
    k = 1.0 / (1.0 + w)
    e_half = (
        1.0 - k * (qy * qy + qz * qz), k * qx * qy - qz, k * qx * qz + qy,
        k * qx * qy + qz, 1.0 - k * (qx * qx + qz * qz), k * qy * qz - qx,
        k * qx * qz - qy, k * qy * qz + qx, 1.0 - k * (qx * qx + qy * qy),
    )  # fmt: skip
    return out + (so3.matmul(r1, e_half),)


@kernel
def node_quaternions(rot, quat, lo, hi):
    """quat[a] = Spurrier quaternion (w, x, y, z) of rot[a] (N,3,3) for lo <= a < hi."""
    for a in range(lo, hi):
        q = so3.quat_from_matrix(_load_mat(rot, a))
        for k in range(4):
            quat[a, k] = q[k]


def _element_at_inlined_body(el, e, x, rot, quat):
    # damping_forces loads its end frames the same way; a shared inline helper returning
    # (r1, q) made this loop 1.65x slower (numba 0.68: 120 -> 198 us/step at 1000 elements)
    i = el.conn[e, 0]
    j = el.conn[e, 1]
    qi = _load_quat(quat, i)
    qj = _load_quat(quat, j)
    r1 = _load_mat(rot, i)
    if el.has_offset[e]:  # the element's own section frames Lambda_a Q_ea (RodElements)
        qi = so3.quat_mul(qi, _load_quat(el.offset_q[e], 0))
        qj = so3.quat_mul(qj, _load_quat(el.offset_q[e], 1))
        r1 = so3.matmul(r1, _load_mat(el.offset[e], 0))
    return _element(
        _load_vec(x, i),
        _load_vec(x, j),
        r1,
        relative_quaternion(qi, qj),
        el.length[e],
        _load_vec(el.c1, e),
        _load_vec(el.c2, e),
        _load_vec(el.gamma0, e),
        _load_vec(el.omega0, e),
    )[:4]


@kernel(inline="always")
def _end_rotations(el, e, rot):
    """Section frames (row-major tuples) at the two ends of element e: Lambda_a Q_ea."""
    r1 = _load_mat(rot, el.conn[e, 0])
    r2 = _load_mat(rot, el.conn[e, 1])
    if el.has_offset[e]:
        r1 = so3.matmul(r1, _load_mat(el.offset[e], 0))
        r2 = so3.matmul(r2, _load_mat(el.offset[e], 1))
    return r1, r2


# Inlining the whole element saves a call and its argument marshalling per element.
_element_at_inlined = kernel(inline="always")(_element_at_inlined_body)


@kernel
def assemble_forces(el, x, rot, quat, f, tau):
    """Add the internal nodal forces and moments of every element to f, tau (N,3), in place,
    given quat (N,4) = the nodal quaternions of rot (node_quaternions). Returns the internal
    energy. Serial scatter."""
    conn = el.conn
    energy = 0.0
    for e in range(conn.shape[0]):
        n, t1, t2, u = _element_at_inlined(el, e, x, rot, quat)
        i = conn[e, 0]
        j = conn[e, 1]
        for k in range(3):
            f[i, k] += n[k]
            f[j, k] -= n[k]
            tau[i, k] += t1[k]
            tau[j, k] += t2[k]
        energy += u
    return energy


@kernel
def _elements_to_work(el, x, rot, quat, work, lo, hi):
    """Contributions of elements lo <= e < hi into work (E,2,6) (forces then moments, per end);
    returns their energy. One call per block of the parallel assembly."""
    energy = 0.0
    for e in range(lo, hi):
        n, t1, t2, u = _element_at_inlined(el, e, x, rot, quat)
        for k in range(3):
            work[e, 0, k] = n[k]
            work[e, 1, k] = -n[k]
            work[e, 0, 3 + k] = t1[k]
            work[e, 1, 3 + k] = t2[k]
        energy += u
    return energy


@kernel(parallel=True)
def assemble_forces_parallel(el, x, rot, quat, f, tau, work, bounds, block_energy, overwrite=False):
    """Parallel assemble_forces: contiguous element blocks (bounds (B+1,) int64) in parallel
    into ``work`` (E,2,6), their energies into block_energy (B,), then a race-free gather per
    node through the CSR map. The gather adds in the serial scatter's order, so f and tau are
    bit-identical to assemble_forces; the energy is summed block by block. overwrite: the
    gather starts each node from zero instead of adding to f, tau (which then need no serial
    zeroing pass: 0 + x is x, still bit-identical)."""
    # prange bodies may only capture arrays and scalars, not the named tuple; the element
    # loop is a call per block (an element inlined into the prange body trips numba 0.68's
    # array analysis)
    node_ptr, node_slots = el.node_ptr, el.node_slots
    for b in prange(bounds.shape[0] - 1):
        block_energy[b] = _elements_to_work(el, x, rot, quat, work, bounds[b], bounds[b + 1])
    for a in prange(x.shape[0]):
        if overwrite:
            for k in range(3):
                f[a, k] = 0.0
                tau[a, k] = 0.0
        for q in range(node_ptr[a], node_ptr[a + 1]):
            slot = node_slots[q]
            e = slot // 2
            side = slot - 2 * e
            for k in range(3):
                f[a, k] += work[e, side, k]
                tau[a, k] += work[e, side, 3 + k]
    energy = 0.0
    for b in range(bounds.shape[0] - 1):
        energy += block_energy[b]
    return energy


@kernel
def element_fields(el, x, rot, gamma, omega, n_mat, m_mat):
    """Fill the per-element output fields (E,3) (section frame) and return the energy."""
    energy = 0.0
    for e in range(el.conn.shape[0]):
        i = el.conn[e, 0]
        j = el.conn[e, 1]
        r1, r2 = _end_rotations(el, e, rot)
        out = element_response(
            _load_vec(x, i),
            _load_vec(x, j),
            r1,
            r2,
            el.length[e],
            _load_vec(el.c1, e),
            _load_vec(el.c2, e),
            _load_vec(el.gamma0, e),
            _load_vec(el.omega0, e),
        )
        energy += out[3]
        for k in range(3):
            gamma[e, k] = out[4][k]
            omega[e, k] = out[5][k]
            n_mat[e, k] = out[6][k]
            m_mat[e, k] = out[7][k]
    return energy


@kernel
def reference_strains(conn, length, x, rot, gamma0, omega0):
    """Strains of the reference geometry, so that it is stress-free ().

    Omega0 = log(Lambda_1^T Lambda_2)/h, Gamma0 = Lambda_m^T (x2 - x1)/h - E1; written into
    gamma0, omega0 (E,3).
    """
    zero = (0.0, 0.0, 0.0)
    for e in range(conn.shape[0]):
        i = conn[e, 0]
        j = conn[e, 1]
        out = element_response(
            _load_vec(x, i),
            _load_vec(x, j),
            _load_mat(rot, i),
            _load_mat(rot, j),
            length[e],
            zero,
            zero,
            zero,
            zero,
        )
        for k in range(3):
            gamma0[e, k] = out[4][k]
            omega0[e, k] = out[5][k]


def strains_at(el: RodElements, x: np.ndarray, rot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Gamma, Omega) (E,3): the elements' strain measures at the configuration x (N,3),
    rot (N,3,3), as reference_strains computes them for the reference (the strains the
    kernels see are these minus gamma0, omega0)."""
    ne = el.conn.shape[0]
    ends = end_frames_of(el.conn, rot, el.offset).reshape(2 * ne, 3, 3)
    own = np.arange(2 * ne, dtype=np.int64).reshape(ne, 2)
    gamma, omega = np.zeros((ne, 3)), np.zeros((ne, 3))
    reference_strains(
        own,
        el.length,
        np.ascontiguousarray(x[el.conn].reshape(2 * ne, 3)),
        np.ascontiguousarray(ends),
        gamma,
        omega,
    )
    return gamma, omega


def node_element_map(conn: np.ndarray, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR map node -> element ends (slot 2*e + side), for race-free parallel assembly."""
    slots = np.arange(2 * conn.shape[0], dtype=np.int64)
    nodes = conn.reshape(-1)
    order = np.argsort(nodes, kind="stable")
    counts = np.bincount(nodes, minlength=n_nodes)
    ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, slots[order].astype(np.int64)


def end_frames_of(conn: np.ndarray, rot: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Section frames at the element ends (E,2,3,3): Lambda_a Q_ea."""
    return np.einsum("enij,enjk->enik", rot[conn], offset)


def make_elements(conn, x0, rot0, c1, c2, end_frames=None) -> RodElements:
    """Element data from the reference geometry: lengths and stress-free reference strains.

    conn (E,2), x0 (N,3), rot0 (N,3,3), c1, c2 (E,3) or (3,); end_frames (E,2,3,3) reference
    section frames at the element ends (default: the nodal frames). Raises ValueError for a
    zero-length element (the case layer reports it with its key path).
    """
    conn = np.ascontiguousarray(conn, dtype=np.int64)
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    rot0 = np.ascontiguousarray(rot0, dtype=np.float64)
    ne = conn.shape[0]
    length = np.linalg.norm(x0[conn[:, 1]] - x0[conn[:, 0]], axis=1)
    if ne and not np.all(length > 0.0):
        bad = int(np.flatnonzero(~(length > 0.0))[0])
        raise ValueError(f"element {bad} has zero length")
    c1 = np.array(np.broadcast_to(c1, (ne, 3)), dtype=np.float64)  # writable copies
    c2 = np.array(np.broadcast_to(c2, (ne, 3)), dtype=np.float64)
    if end_frames is None:
        offset = np.broadcast_to(np.eye(3), (ne, 2, 3, 3)).copy()
    else:
        ends = np.asarray(end_frames, dtype=np.float64).reshape(ne, 2, 3, 3)
        offset = np.einsum("enji,enjk->enik", rot0[conn], ends)
    has_offset = np.any(np.abs(offset - np.eye(3)) > 1e-14, axis=(1, 2, 3)).astype(np.int64)
    offset = np.ascontiguousarray(offset)
    # reference strains from the end frames: each element as if it had its own two nodes
    ends = end_frames_of(conn, rot0, offset).reshape(2 * ne, 3, 3)
    own = np.arange(2 * ne, dtype=np.int64).reshape(ne, 2)
    gamma0 = np.zeros((ne, 3))
    omega0 = np.zeros((ne, 3))
    reference_strains(
        own,
        length,
        np.ascontiguousarray(x0[conn].reshape(2 * ne, 3)),
        np.ascontiguousarray(ends),
        gamma0,
        omega0,
    )
    offset_q = np.zeros((ne, 2, 4))
    offset_q[:, :, 0] = 1.0
    for e in np.flatnonzero(has_offset):
        for side in (0, 1):
            offset_q[e, side] = so3.quat_from_matrix(tuple(offset[e, side].ravel()))
    ptr, slots = node_element_map(conn, x0.shape[0])
    return RodElements(
        conn, length, c1, c2, gamma0, omega0, ptr, slots, offset, offset_q, has_offset
    )
