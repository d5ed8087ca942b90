"""Residual of the implicit Cayley VI (and of static equilibrium) for all nodes, and its sparse
Jacobian by coloured complex-step differentiation.

Unknowns: xi (N,6) per node, (translation, rotation) like the dof names ux..rz. Dynamic mode:
the step velocity of rodsim.integrators.cayley (SO3xR3: spatial translation velocity, body
Cayley rate; SE3: body twist); static mode: the Cayley increment Delta of the configuration,
g <- g tau(Delta). Residual rows (N,6) are spatial, about the node: the discrete momentum
balance P_k - (mu - h W + h Ad^T F) mapped by Lambda_k (dynamic), or -(f, tau) at the trial
configuration (static). Supported components replace their rows by the constraint "this
component of the new configuration equals its target" (held, or prescribed at t_k+1), scaled
by m/h (translation) or the mean rotary inertia/h (rotation) in dynamics; the replaced
balance rows are returned as reactions.

Jacobian: complex step (rodsim.lie.scalar) on a distance-2 node colouring. Nodes of one colour
share no element neighbour, so one complex residual evaluation per colour and dof component
gives every column of those nodes: 6 x colours evaluations (18 for a chain), each column
exact to round-off. Blocks go straight into a BSR array (6x6 blocks) whose pattern is the
node graph.
"""

from typing import NamedTuple

import numpy as np

from rodsim.integrators import cayley
from rodsim.jit import either, kernel
from rodsim.lie import so3
from rodsim.model import forces as fterms

DYNAMIC = 0
STATIC = 1


class StepData(NamedTuple):
    """What one step (or one static Newton solve) starts from; float64 arrays.

    x (N,3), rot (N,3,3), quat (N,4) configuration g_k; mom (N,6) right-trivialised momentum at
    g_k (SO3xR3: spatial linear, body angular; SE3: body linear, body angular), translation
    first; strains: the force terms' strains at g_k (damping; one buffer per term:
    rodsim.model.forces.make_strains);
    target_x (N,3) supported positions at k+1; target_rot (N,3) body Cayley increment to the
    prescribed rotation at k+1; rot_prescribed (N,) int64; h the step, t the load time
    (midpoint time in dynamics, the load multiplier in statics); mode DYNAMIC | STATIC;
    se3 0 | 1; dynamic: mode == DYNAMIC as a compile-time switch (True or None,
    rodsim.jit.switch), so that an equilibrium run does not compile the dynamic balance.
    conserve 1: the elastic forces made energy-consistent over the step (docs/
    implicit_scheme.md, "Energy-conserving steps"), u0 then the elastic energy at g_k (less
    the energy balance error to take back), free_body 1: no supports, the correction's rigid
    part removed.
    """

    x: np.ndarray
    rot: np.ndarray
    quat: np.ndarray
    mom: np.ndarray
    strains: tuple
    target_x: np.ndarray
    target_rot: np.ndarray
    rot_prescribed: np.ndarray
    h: float
    t: float
    mode: int
    se3: int
    dynamic: bool | None
    conserve: int = 0
    u0: float = 0.0
    free_body: int = 0


class Work(NamedTuple):
    """complex128 scratch: trial/midpoint configuration xb (N,3), rb (N,3,3), qb (N,4); end
    configuration x1, r1, q1; forces f, tau (N,3); reaction (N,6); the terms' strains at the
    end of the step (end) and viscous resultants (res) for the damping; the energy
    correction's elastic forces fe, te and scratch f2, t2 (N,3)."""

    xb: np.ndarray
    rb: np.ndarray
    qb: np.ndarray
    x1: np.ndarray
    r1: np.ndarray
    q1: np.ndarray
    f: np.ndarray
    tau: np.ndarray
    reaction: np.ndarray
    end: tuple
    res: tuple
    fe: np.ndarray
    te: np.ndarray
    f2: np.ndarray
    t2: np.ndarray


# The node passes' view of StepData and Work: without the force terms' buffers (StepData's
# strains, Work's end and res: one per term, typed anew for every combination of force terms,
# and with them every kernel that takes them). The node passes take these instead, so they
# compile once per number type, not once per combination of terms (about 20 s for each
# further combination a process met, measured on an implicit cantilever).
StepNodes = NamedTuple(
    "StepNodes", [(f, StepData.__annotations__[f]) for f in StepData._fields if f != "strains"]
)
WorkNodes = NamedTuple(
    "WorkNodes", [(f, np.ndarray) for f in Work._fields if f not in ("end", "res")]
)


@kernel(inline="always")
def step_nodes(sd):
    """The StepNodes of a StepData (the same arrays)."""
    return StepNodes(
        sd.x, sd.rot, sd.quat, sd.mom, sd.target_x, sd.target_rot, sd.rot_prescribed, sd.h,
        sd.t, sd.mode, sd.se3, sd.dynamic, sd.conserve, sd.u0, sd.free_body,
    )  # fmt: skip


@kernel(inline="always")
def work_nodes(w):
    """The WorkNodes of a Work (the same arrays)."""
    return WorkNodes(
        w.xb, w.rb, w.qb, w.x1, w.r1, w.q1, w.f, w.tau, w.reaction, w.fe, w.te, w.f2, w.t2
    )


def nodal(sd: StepData, w: Work) -> tuple[StepNodes, WorkNodes]:
    """step_nodes(sd), work_nodes(w) for a call from Python."""
    return (
        StepNodes(*(getattr(sd, f) for f in StepNodes._fields)),
        WorkNodes(*(getattr(w, f) for f in WorkNodes._fields)),
    )


def make_work(terms: fterms.ForceTerms, n_nodes: int, dtype=np.complex128) -> Work:
    """Scratch (complex128: the Jacobian's; float64: real residuals) for a model of n_nodes
    nodes and force terms `terms`."""
    # xb rb qb, x1 r1 q1, f tau, reaction; then fe te f2 t2 (N,3)
    shapes = ((3,), (3, 3), (4,), (3,), (3, 3), (4,), (3,), (3,), (6,))
    nodal_arrays = [np.zeros((n_nodes, *shape), dtype) for shape in shapes]
    tail = [np.zeros((n_nodes, 3), dtype) for _ in range(4)]
    buffers = fterms.make_strains(terms, dtype), fterms.make_resultants(terms, dtype)
    return Work(*nodal_arrays, *buffers, *tail)


@kernel(inline="always")
def _vec(arr, a, lo):
    return (arr[a, lo], arr[a, lo + 1], arr[a, lo + 2])


@kernel(inline="always")
def _put(arr, a, lo, v):
    for k in range(3):
        arr[a, lo + k] = v[k]


@kernel(inline="always")
def _put_rotation(rot_arr, quat_arr, a, q):
    quat_arr[a, 0] = q[0]
    quat_arr[a, 1] = q[1]
    quat_arr[a, 2] = q[2]
    quat_arr[a, 3] = q[3]
    r = so3.matrix_from_quat(q)
    for i in range(3):
        for j in range(3):
            rot_arr[a, i, j] = r[3 * i + j]


# inlined: called per node, a call passing sd and w paid an atomic reference-count update on
# each of their arrays, about a third of an adaptive implicit step of a 20-element rod
@kernel(inline="always")
def _end_configuration(sd, xi, w, a, scale, se3):
    """The end configuration g_k tau(scale xi_a) of node a into w.x1, r1, q1."""
    v = so3.scale(scale, _vec(xi, a, 0))
    p = so3.scale(scale, _vec(xi, a, 3))
    q = (sd.quat[a, 0], sd.quat[a, 1], sd.quat[a, 2], sd.quat[a, 3])
    dx = cayley.translation(p, v, se3)
    if se3:
        dx = so3.matvec(so3.mat_at(sd.rot, a), dx)
    _put(w.x1, a, 0, so3.add(_vec(sd.x, a, 0), dx))
    _put_rotation(w.r1, w.q1, a, so3.quat_mul(q, cayley.cay_quaternion(p)))


@kernel
def _static_configurations(sd, xi, w):
    se3 = sd.se3 == 1
    for a in range(sd.x.shape[0]):
        _end_configuration(sd, xi, w, a, 1.0, se3)
        for k in range(3):
            w.xb[a, k] = w.x1[a, k]
        for k in range(4):
            w.qb[a, k] = w.q1[a, k]
        for i in range(3):
            for j in range(3):
                w.rb[a, i, j] = w.r1[a, i, j]


@kernel
def _dynamic_configurations(sd, xi, w):
    se3 = sd.se3 == 1
    for a in range(sd.x.shape[0]):
        _end_configuration(sd, xi, w, a, sd.h, se3)
        v = so3.scale(sd.h, _vec(xi, a, 0))
        p = so3.scale(sd.h, _vec(xi, a, 3))
        q = (sd.quat[a, 0], sd.quat[a, 1], sd.quat[a, 2], sd.quat[a, 3])
        s_w, s_v = cayley.half_step(p, v, se3)
        dxb = cayley.translation(s_w, s_v, se3)
        if se3:
            dxb = so3.matvec(so3.mat_at(sd.rot, a), dxb)
        _put(w.xb, a, 0, so3.add(_vec(sd.x, a, 0), dxb))
        _put_rotation(w.rb, w.qb, a, so3.quat_mul(q, cayley.cay_quaternion(s_w)))


_configurations = either(_static_configurations, _dynamic_configurations)  # sd.dynamic


@kernel
def configurations(sd, xi, w):
    """Node pass: the configuration where forces are evaluated (midpoint g_k tau(s(h xi)) in
    dynamics, g_k tau(Delta) in statics) into w.xb, rb, qb and the end configuration
    g_k tau(h xi) into w.x1, r1, q1."""
    _configurations(sd.dynamic, sd, xi, w)


@kernel
def forces(m, terms, sd, xi, w):
    """The force terms (rodsim.model.forces) at the configuration xb, rb into w.f, w.tau; in
    dynamics plus the damping forces of the step g_k -> g_k+1 (Lagrange-d'Alembert forces
    through the midpoint, orthogonal to rigid motions, so both momenta stay exact)."""
    if sd.mode == DYNAMIC and sd.conserve:
        _conserving_forces(m, terms, sd, xi, w)
        return
    fterms.forces(terms, w.xb, w.rb, w.qb, sd.t, w.f, w.tau, fterms.ALL)
    if sd.mode == DYNAMIC:
        _step_damping(terms.damped, terms, sd, xi, w)


ELASTIC = fterms.INTERNAL | fterms.GROUND


@kernel(inline="always")
def spatial_increment(sd, xi, a):
    """Node a's spatial Cayley vector of the step, Lambda_k h xi_rot: cay of it turns Lambda_k
    into Lambda_k+1 (the rotation's conjugate of the spatial moments in the step's work)."""
    return so3.matvec(so3.mat_at(sd.rot, a), so3.scale(sd.h, _vec(xi, a, 3)))


@kernel
def _conserving_forces(m, terms, sd, xi, w):
    """The forces of the step with the elastic ones made energy-consistent (docs/
    implicit_scheme.md, "Energy-conserving steps"): F_e(g_bar) + kappa M d, with d the step's
    increments (x_k+1 - x_k, spatial Cayley vectors; zero on supported components), M the
    lumped masses (rotary: the mean of the nodal inertia's diagonal) and kappa such that the
    elastic forces' work over the step is exactly -(U_k+1 - U_k). Skipped where the midpoint
    rule's energy error is at round-off. Loads and damping are as in the midpoint VI."""
    u1 = fterms.forces(terms, w.x1, w.r1, w.q1, sd.t, w.f2, w.t2, ELASTIC)[0]
    fterms.forces(terms, w.xb, w.rb, w.qb, sd.t, w.fe, w.te, ELASTIC)
    fterms.forces(terms, w.xb, w.rb, w.qb, sd.t, w.f2, w.t2, fterms.APPLIED)
    n = xi.shape[0]
    for a in range(n):
        for k in range(3):
            w.f[a, k] = w.fe[a, k] + w.f2[a, k]
            w.tau[a, k] = w.te[a, k] + w.t2[a, k]
    _step_damping(terms.damped, terms, sd, xi, w)
    work = 0.0 * xi[0, 0]
    for a in range(n):  # increments into f2 (translations) and t2 (spatial Cayley vectors)
        c = spatial_increment(sd, xi, a)
        for k in range(3):
            dx = w.x1[a, k] - sd.x[a, k]
            work = work + w.fe[a, k] * dx + w.te[a, k] * c[k]
            # supported components move as their supports say: no correction there (their
            # rows are constraints), the support's work is in the energy balance
            w.f2[a, k] = 0.0 if m.fixed[a, k] else dx
            w.t2[a, k] = 0.0 if m.fixed[a, 3 + k] else c[k]
    if sd.free_body:
        _without_rigid_motion(m, work_nodes(w))
    den = 0.0 * xi[0, 0]
    for a in range(n):
        j = (m.inertia[a, 0, 0] + m.inertia[a, 1, 1] + m.inertia[a, 2, 2]) / 3.0
        c = spatial_increment(sd, xi, a)
        for k in range(3):
            den = den + m.mass[a] * w.f2[a, k] * (w.x1[a, k] - sd.x[a, k])
            den = den + j * w.t2[a, k] * c[k]
    miss = -(u1 - sd.u0) - work
    size = abs(u1.real) + abs(sd.u0) + abs(work.real)
    if abs(miss.real) <= ROUNDOFF * size or den.real <= 0.0:
        return
    kappa = miss / den
    for a in range(n):
        j = (m.inertia[a, 0, 0] + m.inertia[a, 1, 1] + m.inertia[a, 2, 2]) / 3.0
        for k in range(3):
            w.f[a, k] += kappa * m.mass[a] * w.f2[a, k]
            w.tau[a, k] += kappa * j * w.t2[a, k]


@kernel
def _without_rigid_motion(m, w):
    """Remove from the increments (w.f2, w.t2) their rigid part, M-orthogonally: the mean
    translation and the rotation about the mass centre at the midpoint positions w.xb, so
    that the correction has no resultant force or moment (a free structure's momenta)."""
    n = w.xb.shape[0]
    total = 0.0
    centre = (0.0 * w.xb[0, 0], 0.0 * w.xb[0, 0], 0.0 * w.xb[0, 0])
    shift = centre
    for a in range(n):
        total += m.mass[a]
        centre = so3.add(centre, so3.scale(m.mass[a], _vec(w.xb, a, 0)))
        shift = so3.add(shift, so3.scale(m.mass[a], _vec(w.f2, a, 0)))
    if total <= 0.0:
        return
    centre = so3.scale(1.0 / total, centre)
    shift = so3.scale(1.0 / total, shift)
    zero = 0.0 * centre[0]
    rhs = (zero, zero, zero)
    g00, g01, g02, g11, g12, g22 = zero, zero, zero, zero, zero, zero
    for a in range(n):
        r = so3.sub(_vec(w.xb, a, 0), centre)
        j = (m.inertia[a, 0, 0] + m.inertia[a, 1, 1] + m.inertia[a, 2, 2]) / 3.0
        mr = m.mass[a]
        rr = so3.dot(r, r)
        g00 += mr * (rr - r[0] * r[0]) + j
        g11 += mr * (rr - r[1] * r[1]) + j
        g22 += mr * (rr - r[2] * r[2]) + j
        g01 -= mr * r[0] * r[1]
        g02 -= mr * r[0] * r[2]
        g12 -= mr * r[1] * r[2]
        rhs = so3.add(rhs, so3.scale(mr, so3.cross(r, so3.sub(_vec(w.f2, a, 0), shift))))
        rhs = so3.add(rhs, so3.scale(j, _vec(w.t2, a, 0)))
    gram = (g00, g01, g02, g01, g11, g12, g02, g12, g22)
    omega = so3.solve3(gram, rhs)
    for a in range(n):
        r = so3.sub(_vec(w.xb, a, 0), centre)
        _put(w.f2, a, 0, so3.sub(so3.sub(_vec(w.f2, a, 0), shift), so3.cross(omega, r)))
        _put(w.t2, a, 0, so3.sub(_vec(w.t2, a, 0), omega))


ROUNDOFF = 64.0 * 2.220446049250313e-16  # energy differences below this (relative): round-off


@kernel
def step_damping(terms, sd, xi, w):
    """Add the damping forces of the step (at the converged xi) to w.f, w.tau."""
    _step_damping(terms.damped, terms, sd, xi, w)


@kernel
def _step_damping(damped, terms, sd, xi, w):
    if damped is None:  # compiled out for undamped models (rodsim.jit)
        return
    fterms.add_step_damping(
        terms,
        sd.strains,
        w.end,
        w.res,
        w.x1,
        w.r1,
        w.q1,
        w.xb,
        w.rb,
        w.qb,
        xi,
        sd.h,
        sd.se3 == 1,
        w.f,
        w.tau,
    )


@kernel(inline="always")
def _node_balance(m, sd, xi, w, a, se3):
    """Dynamic momentum balance of node a in its frame at k (rotation, translation) and the
    momentum mu - h W it carries to k+1."""
    h = sd.h
    r = so3.mat_at(sd.rot, a)
    rb = so3.mat_at(w.rb, a)
    v = _vec(xi, a, 0)
    omg = _vec(xi, a, 3)
    p_w = so3.scale(h, omg)
    p_v = so3.scale(h, v)
    f = _vec(w.f, a, 0)
    tau = _vec(w.tau, a, 0)
    inertia = so3.mat_at(m.inertia, a)
    mass = m.mass[a]
    # right-trivialised gradient at g_bar: minus the force (damping included)
    g_w = so3.scale(-1.0, so3.matTvec(rb, tau))
    g_v = so3.scale(-1.0, so3.matTvec(rb, f) if se3 else f)
    mu_w, mu_v = cayley.dtau_inv_transpose(
        p_w, p_v, so3.matvec(inertia, omg), so3.scale(mass, v), se3
    )
    s_w, s_v = cayley.half_step(p_w, p_v, se3)
    sig = so3.cay(s_w)
    z_w, z_v = cayley.ad_inv_transpose(sig, cayley.translation(s_w, s_v, se3), g_w, g_v, se3)
    y_w, y_v = cayley.dtau_transpose(s_w, s_v, z_w, z_v, se3)
    y_w, y_v = cayley.half_step_transpose(p_w, p_v, y_w, y_v, se3)
    ww, wv = cayley.dtau_inv_transpose(p_w, p_v, y_w, y_v, se3)
    post_w = so3.sub(mu_w, so3.scale(h, ww))
    post_v = so3.sub(mu_v, so3.scale(h, wv))
    bal_w = so3.sub(so3.add(post_w, so3.scale(h, z_w)), _vec(sd.mom, a, 3))
    bal_v = so3.sub(so3.add(post_v, so3.scale(h, z_v)), _vec(sd.mom, a, 0))
    # rows spatial about the node
    bal_w = so3.matvec(r, bal_w)
    if se3:
        bal_v = so3.matvec(r, bal_v)
    return bal_v, bal_w, post_v, post_w


@kernel
def _dynamic_rows(m, sd, xi, w, out, post):
    se3 = sd.se3 == 1
    for a in range(sd.x.shape[0]):
        bal_v, bal_w, post_v, post_w = _node_balance(m, sd, xi, w, a, se3)
        _put(post, a, 0, post_v)
        _put(post, a, 3, post_w)
        _put(out, a, 0, bal_v)
        _put(out, a, 3, bal_w)


@kernel
def _static_rows(m, sd, xi, w, out, post):
    for a in range(sd.x.shape[0]):
        for k in range(3):
            out[a, k] = -1.0 * w.f[a, k]  # as so3.scale(-1.0, f): the same signed zeros
            out[a, 3 + k] = -1.0 * w.tau[a, k]


_balance_rows = either(_static_rows, _dynamic_rows)  # switch: sd.dynamic


@kernel
def _constraint_rows(m, sd, xi, w, out):
    """Replace the rows of supported components by their constraints; the replaced balance
    rows go to w.reaction."""
    for a in range(sd.x.shape[0]):
        if sd.mode == DYNAMIC:
            scale_t = m.mass[a] / sd.h
            scale_r = (m.inertia[a, 0, 0] + m.inertia[a, 1, 1] + m.inertia[a, 2, 2]) / (3.0 * sd.h)
        else:
            scale_t = 1.0
            scale_r = 1.0
        for k in range(6):
            w.reaction[a, k] = 0.0
        for k in range(3):
            if m.fixed[a, k]:
                w.reaction[a, k] = out[a, k]
                out[a, k] = scale_t * (w.x1[a, k] - sd.target_x[a, k])
        if m.fixed[a, 3] or m.fixed[a, 4] or m.fixed[a, 5]:
            step = 1.0 if sd.mode == STATIC else sd.h
            p = so3.scale(step, _vec(xi, a, 3))
            if sd.rot_prescribed[a]:
                c = so3.sub(p, _vec(sd.target_rot, a, 0))
            else:  # the held components of the spatial Cayley increment
                c = so3.matvec(so3.mat_at(sd.rot, a), p)
            for k in range(3):
                if m.fixed[a, 3 + k]:
                    w.reaction[a, 3 + k] = out[a, 3 + k]
                    out[a, 3 + k] = scale_r * c[k]


@kernel
def residual(m, terms, sd, xi, w, out, post):
    """Residual rows (N,6) into out (spatial, translation first, constraints substituted) and,
    in dynamics, the momentum mu - h W (N,6), right-trivialised at k, into post. xi, out, post
    complex128 (N,6); m the nodes (rodsim.model.assembly.NodeArrays), terms the force terms.
    Returns nothing; reactions in w.reaction.

    Only the force evaluation depends on the terms: the node passes are kernels of their own
    on StepNodes and WorkNodes, compiled once for every model rather than once per combination
    of force terms."""
    sn, wn = step_nodes(sd), work_nodes(w)
    configurations(sn, xi, wn)
    forces(m, terms, sd, xi, w)
    _balance_rows(sd.dynamic, m, sn, xi, wn, out, post)
    _constraint_rows(m, sn, xi, wn, out)


@kernel
def jacobian(m, terms, sd, xi, w, color_ptr, color_nodes, col_ptr, col_rows, col_blocks, eps, data):
    """BSR blocks data (B,6,6) of d residual / d xi at xi (N,6) float64 by complex step.

    color_ptr/color_nodes: CSR list of the nodes of each colour (distance-2 colouring);
    col_ptr/col_rows/col_blocks: for node a, the nodes b whose residual depends on xi_a and
    the BSR block index of (b, a). eps: the imaginary step (any tiny number)."""
    n = xi.shape[0]
    xc = np.zeros((n, 6), dtype=np.complex128)
    out = np.zeros((n, 6), dtype=np.complex128)
    post = np.zeros((n, 6), dtype=np.complex128)
    for a in range(n):
        for k in range(6):
            xc[a, k] = xi[a, k]
    inv = 1.0 / eps
    for c in range(color_ptr.shape[0] - 1):
        for j in range(6):
            for q in range(color_ptr[c], color_ptr[c + 1]):
                xc[color_nodes[q], j] = xi[color_nodes[q], j] + 1j * eps
            residual(m, terms, sd, xc, w, out, post)
            for q in range(color_ptr[c], color_ptr[c + 1]):
                a = color_nodes[q]
                xc[a, j] = xi[a, j]
                for r in range(col_ptr[a], col_ptr[a + 1]):
                    b = col_rows[r]
                    blk = col_blocks[r]
                    for i in range(6):
                        data[blk, i, j] = out[b, i].imag * inv
