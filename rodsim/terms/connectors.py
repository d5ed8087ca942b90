"""The connectors term: springs, dashpots, cables, struts and plastic links between two nodes
(docs/connectors.md). Kernels in rodsim.model.connectors; the case's `connectors:` are packed
by rodsim.case.connectors into Model.term_arrays["connectors"]."""

from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.model import connector_tangent, connectors
from rodsim.terms.contract import INTERNAL, StepShare, Term, step_share

NAME = "connectors"


class ConnectorStrains(NamedTuple):
    """u, psi (C,3): the measures of each connector (the implicit scheme's dashpots)."""

    u: np.ndarray
    psi: np.ndarray


def arrays(model):
    """The model's ConnectorArrays (Model.term_arrays), or empty ones."""
    own = model.term_arrays.get(NAME)
    return connectors.empty_connectors() if own is None else own


def present(cn) -> bool:
    return cn.a.shape[0] > 0


def initial_state(cn):
    """ConnectorState (slip, alpha (C,3), dissipated work (C,)) at rest; None without
    connectors (a model without them compiles as before)."""
    return connectors.initial_state(cn) if present(cn) else None


@kernel
def forces(own, state, terms, x, rot, quat, t, f, tau):
    return connectors.connector_forces(own, state, x, rot, quat, f, tau), 0.0


@kernel
def tangent(own, state, terms, slots, x, rot, quat, t, k):
    connector_tangent.add_connector_tangents(own, state, x, rot, quat, slots, k)


def tangent_slots(cn, terms, indptr, indices) -> np.ndarray:
    return connector_tangent.connector_slots(cn, indptr, indices)


@kernel
def damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    connectors.connector_damping(own, x, rot, quat, vel, omg, f, tau)


@kernel
def strains(own, state, terms, x, rot, quat, out):
    connectors.connector_strains(own, x, rot, quat, out.u, out.psi)


@kernel
def step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    connectors.connector_strains(own, x1, r1, q1, end.u, end.psi)
    connectors.connector_step_damping(
        own, start.u, start.psi, end.u, end.psi, xb, rb, qb, h, f, tau
    )


@kernel
def accept(own, state, terms, x, rot, quat, t):
    connectors.connector_accept(own, state, x, rot, quat)


def make_strains(cn, dtype=np.float64) -> ConnectorStrains:
    c = cn.a.shape[0]
    return ConnectorStrains(np.zeros((c, 3), dtype), np.zeros((c, 3), dtype))


def damped(cn, beta, alpha) -> bool:
    return bool(np.any(cn.c_t) or np.any(cn.c_r))


def pairs(cn, terms) -> np.ndarray:
    return np.stack([cn.a, cn.b], axis=1)


def conservative(cn) -> bool:
    """Elastic kinds derive from a potential; a plastic connector only incrementally."""
    return not np.any(cn.kind == connectors.PLASTIC)


# the per-frame datasets: output()'s values of each connector (docs/results.md, docs/connectors.md
# "Output"); the frame is the connector's own (node a's current directors, or global axes)
_PER_FRAME = (
    ("force", ("C", 3), "force", "resultant n of the connector's springs in its frame, without "
     "the dashpots: the force on node a (on b: minus it); cable, strut: (N, 0, 0), N > 0 in "
     "tension"),
    ("moment", ("C", 3), "force length", "resultant m = K_r psi of the connector's rotational "
     "springs in its frame (docs/connectors.md gives the moments on the nodes)"),
    ("elongation", ("C", 3), "length", "relative displacement u of node b from node a in the "
     "connector's frame, 0 at the reference; cable, strut: (l - L0, 0, 0)"),
    ("rotation", ("C", 3), "1", "relative rotation psi (rotation vector, rad) of node b from "
     "node a in the connector's frame, 0 at the reference"),
    ("slip", ("C", 3), "length", "plastic slip s of a plastic connector per direction of its "
     "frame (0 for the other kinds)"),
    ("work", ("C",), "energy", "plastic work a connector has dissipated since the start of the "
     "run: F_y times the size of each accepted step's slip, summed (0 for the elastic kinds)"),
)  # fmt: skip
DATASETS = (
    {
        "path": "mesh/connectors",
        "shape": ("C", 2),
        "units": "index",
        "description": "the nodes a, b of each connector: the case's connectors entries in "
        "order, each one's node pairs in order",
        "dtype": "i8",
        "since": 9,
    },
    *(
        {"path": f"{NAME}/{k}", "shape": s, "units": u, "description": d, "since": 9}
        for k, s, u, d in _PER_FRAME
    ),
)


def fields(cn, x, rot, quat, with_energy, state=None):
    """The connectors' datasets (DATASETS, keyed by path) at a configuration and committed
    state `state` (None: the initial state): output()'s values and the node pairs; and their
    energy (springs and hardening). Nothing without connectors."""
    if not present(cn):
        return {}, 0.0
    out = output(cn, state, x, rot, quat)
    values = {f"{NAME}/{k}": out[k] for k, *_ in _PER_FRAME}
    values["mesh/connectors"] = pairs(cn, None)
    return values, out["energy"]


def output(cn, state, x, rot, quat) -> dict:
    """The per-connector values at a configuration x (N,3), rot (N,3,3), quat (N,4) and
    committed state (None: at rest), each in the connector's frame: force, moment (C,3) the
    resultants without the dashpots (cable, strut: (N, 0, 0), N > 0 in tension), elongation
    (C,3) u (cable, strut: (l - L0, 0, 0)), rotation (C,3) psi, slip (C,3) the plastic slip,
    work (C,) the plastic work dissipated so far; energy the stored energy (springs and
    hardening; within a step, the incremental potential)."""
    state = connectors.initial_state(cn) if state is None else state
    c = cn.a.shape[0]
    out = {k: np.zeros((c, 3)) for k in ("force", "moment", "elongation", "rotation")}
    out["energy"] = connectors.connector_fields(
        cn, state, x, rot, quat, out["force"], out["moment"], out["elongation"], out["rotation"]
    )
    out["slip"] = state.slip.copy()
    out["work"] = state.work.copy()
    return out


def _largest(cn):
    """Per connector (C,): the largest translational and rotational stiffness and damping of
    the frame's diagonal (axial kinds: k only; a plastic link's tangent is at most its elastic
    k) and the lever |d0| through which node a's rotation moves u in node a's frame (u' =
    Lambda_a^T (v_b - v_a + d x omega_a); 0 in global axes and for the axial kinds)."""
    axial = (cn.kind == connectors.CABLE) | (cn.kind == connectors.STRUT)
    big = {k: np.abs(getattr(cn, k)).max(axis=1) for k in ("k_t", "c_t", "k_r", "c_r")}
    k_t = np.where(axial, np.abs(cn.k_t[:, 0]), big["k_t"])
    lever = np.where(axial | (cn.local == 0), 0.0, np.linalg.norm(cn.d0, axis=1))
    zero = np.zeros(len(axial))
    rest = (np.where(axial, zero, big[k]) for k in ("c_t", "k_r", "c_r"))
    return (k_t, *rest, lever)


def _spread(k, blocks) -> None:
    """For links k (sum_i G_i v_i)^2 over blocks i, in mass-scaled coordinates v, with |G_i| <=
    g_i: add k S g_i (S = sum_i g_i) to out at node i (blocks: (out (N,), nodes (C,), g (C,))).
    By Cauchy-Schwarz (sum g_i |v_i|)^2 <= S sum g_i |v_i|^2, these are the diagonal of a bound
    on the links' stiffness. Only where k and g_i are positive (0 x inf: a massless end that a
    link does not reach)."""
    total = sum(g for _, _, g in blocks)
    for out, nodes, g in blocks:
        on = (k > 0.0) & (g > 0.0)
        np.add.at(out, nodes[on], k[on] * total[on] * g[on])


def _node_bound(cn, k_t, k_r, lever, g_x, g_r) -> np.ndarray:
    """(N,) per node, the largest over its translation and rotation blocks of the bound."""
    a, b = cn.a, cn.b
    trans, rot = np.zeros(len(g_x)), np.zeros(len(g_x))
    g_lever = np.where(lever > 0.0, lever * g_r[a], 0.0)
    _spread(k_t, [(trans, a, g_x[a]), (trans, b, g_x[b]), (rot, a, g_lever)])
    _spread(k_r, [(rot, a, g_r[a]), (rot, b, g_r[b])])
    return np.maximum(trans, rot)


def stable_step(cn, model) -> StepShare:
    """Per node of a connector (ascending), a bound on the squared frequency of its links and on
    their dashpots' decay rate; no elements (docs/connectors.md, "Stable step").

    One link of stiffness k between masses m_a and m_b has omega^2 = k (1/m_a + 1/m_b). Per
    node: in coordinates scaled by M^1/2 a link's measure is sum_i G_i v_i over its blocks
    (x_a, x_b: |G| = 1/sqrt(m); in node a's frame also theta_a: |d0| / sqrt(j_min,a); the
    rotational springs theta_a, theta_b: 1/sqrt(j_min)), and k (sum_i G_i v_i)^2 <= k S sum_i
    g_i |v_i|^2 (g_i = |G_i|, S = sum g_i), so lambda_max(M^-1 K) <= the largest block sum of
    k S g_i (_spread). For one link: k (1/sqrt(m_a) + 1/sqrt(m_b)) / sqrt(min(m_a, m_b)), equal
    to k (1/m_a + 1/m_b) for m_a = m_b and at most 1.21 times it otherwise (the step at most
    10% smaller). k: the largest entry of the frame's diagonal; the decay rate likewise from
    the dashpots, halved (c/2m). rodsim.integrators.stable_step adds these node by node to the
    other terms' springs and raises the elements' bound by the stiffest."""
    if not present(cn):
        return step_share()
    with np.errstate(divide="ignore"):
        g_x = 1.0 / np.sqrt(model.mass)
        g_r = 1.0 / np.sqrt(np.linalg.eigvalsh(model.inertia)[:, 0])
    k_t, c_t, k_r, c_r, lever = _largest(cn)
    omega2 = _node_bound(cn, k_t, k_r, lever, g_x, g_r)
    rate = 0.5 * _node_bound(cn, c_t, c_r, lever, g_x, g_r)
    nodes = np.unique(np.concatenate([cn.a, cn.b]))
    return step_share(node=nodes, omega2=omega2[nodes], rate=rate[nodes])


def roundoff(cn, size, length) -> float:
    """A link's force k u has errors ~ eps k |x| (u from differences of coordinates of size
    |x|; axial kinds: l likewise), its moment about node a in node a's frame d x N ~ eps k |x|
    |d0| (weighted by 1/length), its rotational moment k_r psi ~ eps k_r (weighted by
    1/length): the largest over the connectors, per unit eps."""
    if not present(cn):
        return 0.0
    k_t, _, k_r, _, lever = _largest(cn)
    return float(np.max(k_t * size * (1.0 + lever / length) + k_r / length))


def dissipated(cn, state) -> float:
    """The plastic work the connectors have dissipated so far (sum of F_y |delta s|)."""
    return 0.0 if state is None else float(state.work.sum())


def _springs(cn) -> np.ndarray:
    """(C,) bool: the spring and plastic kinds (measures u, psi in the frame; the axial kinds
    act along the chord)."""
    return (cn.kind != connectors.CABLE) & (cn.kind != connectors.STRUT)


def restraint(cn, nodes, motions) -> np.ndarray | None:
    """r^T K r along the rigid motions `motions` (K,6,6) at the part's nodes (K,) (sorted), K
    the connectors' tangent at the reference: only a link in global axes resists a rigid
    motion, through its translational springs (u = d - d0 moves by omega x d0 under a
    rotation; K_t = diag(k_t) on u at u = 0, elastic for the plastic kind); psi and the
    links in node a's frame or along the chord are invariant under a rigid motion of both
    nodes, exactly 0 (left out: no round-off). None: no such link on the part."""
    mine = _springs(cn) & (cn.local == 0) & np.isin(cn.a, nodes) & np.any(cn.k_t != 0.0, axis=1)
    if not mine.any():
        return None
    at_a = motions[np.searchsorted(nodes, cn.a[mine])]
    at_b = motions[np.searchsorted(nodes, cn.b[mine])]
    du = at_b[:, :3] - at_a[:, :3]  # (C, 3, 6)
    return np.einsum("cim,ci,cin->mn", du, cn.k_t[mine], du)


def _rate_maps(cn, model):
    """(G_t, G_r) (C,3,12): the dashpots' rates u', psi' (frame components) of the rates
    (v_a, omega_a, v_b, omega_b) at the reference: global axes u' = v_b - v_a,
    psi' = omega_b - omega_a; node a's frame u' = Lambda_a0^T (v_b - v_a + d0 x omega_a),
    psi' = Lambda_a0^T (omega_b - omega_a) (rodsim.model.connectors at psi = 0)."""
    c = cn.a.shape[0]
    eye = np.broadcast_to(np.eye(3), (c, 3, 3))
    d = model.x0[cn.b] - model.x0[cn.a]
    hat = np.zeros((c, 3, 3))
    hat[:, 0, 1], hat[:, 0, 2], hat[:, 1, 2] = -d[:, 2], d[:, 1], -d[:, 0]
    hat = hat - hat.transpose(0, 2, 1)
    local = (cn.local != 0)[:, None, None]
    g_t = np.zeros((c, 3, 12))
    g_r = np.zeros((c, 3, 12))
    g_t[:, :, 0:3], g_t[:, :, 6:9] = -eye, eye
    g_t[:, :, 3:6] = np.where(local, hat, 0.0)
    g_r[:, :, 3:6], g_r[:, :, 9:12] = -eye, eye
    turn = np.where(local, model.rot0[cn.a].transpose(0, 2, 1), eye)
    return turn @ g_t, turn @ g_r


def damping_blocks(cn, model):
    """The dashpots at the reference (spring and plastic kinds): C = G_t^T diag(c_t) G_t +
    G_r^T diag(c_r) G_r over (v_a, omega_a, v_b, omega_b), so that the dashpots' forces are
    -C times the rates (_rate_maps); four blocks per connector (a,a), (a,b), (b,a), (b,b)."""
    on = _springs(cn) & (np.any(cn.c_t != 0.0, axis=1) | np.any(cn.c_r != 0.0, axis=1))
    sub = cn._replace(**{f: v[on] for f, v in cn._asdict().items()})
    g_t, g_r = _rate_maps(sub, model)
    full = np.einsum("cim,ci,cin->cmn", g_t, sub.c_t, g_t)
    full += np.einsum("cim,ci,cin->cmn", g_r, sub.c_r, g_r)
    a, b = sub.a, sub.b
    pairs = np.concatenate([np.stack(p, axis=1) for p in ((a, a), (a, b), (b, a), (b, b))])
    blocks = np.concatenate(
        [full[:, 0:6, 0:6], full[:, 0:6, 6:12], full[:, 6:12, 0:6], full[:, 6:12, 6:12]]
    )
    return pairs, blocks


def _measures(cn, x, rot):
    """(m (C,3), l (C,)): the translational measure before its reference, Lambda_a^T d (node
    a's frame) or d (global axes), and the chord length |d|, at x (N,3), rot (N,3,3)."""
    d = x[cn.b] - x[cn.a]
    local = np.einsum("cji,cj->ci", rot[cn.a], d)
    return np.where((cn.local != 0)[:, None], local, d), np.linalg.norm(d, axis=1)


def prestressed(cn, base, state, scale):
    """The reference chord d0 (spring, plastic: u = m - d0) and the free length L0 (cable,
    strut: l - L0) shifted by scale x (the measure at state - at base). The rotational
    springs keep their reference: psi = log(Lambda_a^T Lambda_b C) takes its reference C
    multiplicatively, so no shift of C adds a moment without changing their material
    stiffness; their geometric stiffness is left out of linear buckling."""
    (m1, l1), (m0, l0) = _measures(cn, *state), _measures(cn, *base)
    springs = _springs(cn)
    d0 = np.where(springs[:, None], cn.d0 - scale * (m1 - m0), cn.d0)
    length = np.where(springs, cn.length, cn.length - scale * (l1 - l0))
    return cn._replace(d0=np.ascontiguousarray(d0), length=length)


def count(cn) -> str | None:
    c = cn.a.shape[0]
    return None if not c else "1 connector" if c == 1 else f"{c} connectors"


TERM = Term(
    name=NAME,
    role=INTERNAL,
    arrays=arrays,
    present=present,
    forces=forces,
    tangent=tangent,
    tangent_slots=tangent_slots,
    damping=damping,
    strains=strains,
    make_strains=make_strains,
    step_damping=step_damping,
    accept=accept,
    damped=damped,
    pairs=pairs,
    initial_state=initial_state,
    fields=fields,
    conservative=conservative,
    stable_step=stable_step,
    roundoff=roundoff,
    dissipated=dissipated,
    restraint=restraint,
    damping_blocks=damping_blocks,
    prestressed=prestressed,
    count=count,
    datasets=DATASETS,
)
