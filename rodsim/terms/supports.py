"""The supports term: springs and dashpots from nodes to the ground and elastic foundations
(docs/supports.md). Kernels in rodsim.model.supports."""

import dataclasses
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.model import support_tangent, supports
from rodsim.terms.contract import GROUND, StepShare, Term, step_share


class SupportStrains(NamedTuple):
    """u, psi (S,3): displacement and rotation vector of each support entry."""

    u: np.ndarray
    psi: np.ndarray


def arrays(model):
    return model.supports


def present(sp) -> bool:
    return sp.node.shape[0] > 0


@kernel
def forces(own, state, terms, x, rot, quat, t, f, tau):
    return supports.support_forces(own, x, quat, f, tau), 0.0


@kernel
def tangent(own, state, terms, slots, x, rot, quat, t, k):
    support_tangent.add_support_tangents(own, x, quat, slots, k)


def tangent_slots(sp, terms, indptr, indices) -> np.ndarray:
    return support_tangent.support_slots(sp, indptr, indices)


@kernel
def damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    supports.support_damping_forces(own, quat, vel, omg, f, tau)


@kernel
def strains(own, state, terms, x, rot, quat, out):
    supports.support_strains(own, x, quat, out.u, out.psi)


@kernel
def step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    supports.support_strains(own, x1, q1, end.u, end.psi)
    supports.support_step_damping(own, start.u, start.psi, end.u, end.psi, qb, h, f, tau)


@kernel
def step_damping_tangent(
    own, state, terms, slots, start, end, res, x1, r1, q1, xb, rb, qb, h, kbar, k1
):
    """The blocks of step_damping's forces (at the end strains it left in end): support_tangent.
    add_support_damping_tangents."""
    support_tangent.add_support_damping_tangents(
        own, qb, q1, start.u, start.psi, end.u, end.psi, h, slots, kbar, k1
    )
    return True


def make_strains(sp, dtype=np.float64) -> SupportStrains:
    s = sp.node.shape[0]
    return SupportStrains(np.zeros((s, 3), dtype), np.zeros((s, 3), dtype))


def damped(sp, beta, alpha) -> bool:
    return bool(np.any(sp.c_t) or np.any(sp.c_r))


def fields(sp, x, rot, quat, with_energy, state=None):
    if not (with_energy and sp.node.shape[0]):
        return {}, 0.0
    return {}, supports.support_forces(sp, x, quat, np.zeros_like(x), np.zeros_like(x))


def stable_step(sp, model) -> StepShare:
    """Per supported node (ascending), the largest squared frequency of its springs (all its
    entries summed) against the node's lumped mass and inertia, and its dashpots' largest
    decay rate c / (2 m) (rodsim.model.supports.support_frequencies); no elements."""
    if not sp.node.shape[0]:
        return step_share()
    omega2, rate = supports.support_frequencies(sp, model.mass, model.inertia)
    return step_share(node=np.unique(sp.node), omega2=omega2, rate=rate)


def roundoff(sp, size, length) -> float:
    """A spring's force k_t u has errors ~ eps |k_t| |x| (u a difference of coordinates of size
    |x|) and its moment k_r psi ~ eps |k_r| (psi from unit quaternions; weighted by 1/length):
    the largest over the entries, per unit eps."""
    if not sp.node.shape[0]:
        return 0.0
    k_t = np.abs(sp.k_t).max(axis=(1, 2))
    k_r = np.abs(sp.k_r).max(axis=(1, 2))
    return float(np.max(k_t * size + k_r / length))


def place(model, sp):
    return dataclasses.replace(model, supports=sp)


def empty(sp):
    """No support entry (every SupportArrays field is per entry)."""
    return sp._replace(**{f: v[:0] for f, v in sp._asdict().items()})


def restraint(sp, nodes, motions) -> np.ndarray | None:
    """r^T K_s r along the rigid motions `motions` (K,6,6) at the part's nodes (K,) (sorted),
    K_s the springs' tangent at the reference, exactly: there u = 0 and psi = Lambda0^T
    theta, so an entry stores 1/2 (u.K_t u + psi.K_r psi) (docs/mechanisms.md). None: no
    entry on the part."""
    mine = np.isin(sp.node, nodes)
    if not mine.any():
        return None
    at = motions[np.searchsorted(nodes, sp.node[mine])]  # (S, 6, 6) the motions at the supports
    psi = np.einsum("sji,sjm->sim", sp.r0[mine], at[:, 3:])  # reference-frame components
    return np.einsum("sim,sij,sjn->mn", at[:, :3], sp.k_t[mine], at[:, :3]) + np.einsum(
        "sim,sij,sjn->mn", psi, sp.k_r[mine], psi
    )


def damping_blocks(sp, model):
    """The dashpots at the reference, per entry at its node: C_t on u, Lambda0 C_r Lambda0^T on
    theta (psi' = Lambda0^T omega at psi = 0)."""
    s = sp.node.shape[0]
    blocks = np.zeros((s, 6, 6))
    blocks[:, :3, :3] = sp.c_t
    blocks[:, 3:, 3:] = np.einsum("sij,sjk,slk->sil", sp.r0, sp.c_r, sp.r0)
    return np.stack([sp.node, sp.node], axis=1), blocks


def count(sp) -> str | None:
    nodes = len(np.unique(sp.node))
    return f"{nodes} on elastic supports" if nodes else None


TERM = Term(
    name="supports",
    role=GROUND,
    arrays=arrays,
    present=present,
    forces=forces,
    tangent=tangent,
    tangent_slots=tangent_slots,
    damping=damping,
    strains=strains,
    make_strains=make_strains,
    step_damping=step_damping,
    step_damping_tangent=step_damping_tangent,
    damped=damped,
    fields=fields,
    stable_step=stable_step,
    roundoff=roundoff,
    place=place,
    empty=empty,
    restraint=restraint,
    damping_blocks=damping_blocks,
    count=count,
)
