"""The loads term: nodal forces and moments (dead or follower) and gravity on the lumped masses
(docs/loads.md). Kernels in rodsim.model.loads. Always present in the kernels: the explicit
scheme sets its time-function windows every step."""

import dataclasses
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.load_tangent import add_follower_tangents, follower_slots
from rodsim.model.loads import external_forces, gravity_forces
from rodsim.model.timefunc import evaluate_packed
from rodsim.terms.contract import APPLIED, Term


def arrays(model):
    return model.loads


@kernel
def forces(own, state, terms, x, rot, quat, t, f, tau):
    return 0.0, external_forces(own, t, x, rot, terms.rot0, terms.mass, f, tau)


@kernel
def tangent(own, state, terms, slots, x, rot, quat, t, k):
    # dead forces and moments and gravity have none: only the followers turn with the node
    add_follower_tangents(own, t, rot, terms.rot0, slots, k)


def tangent_slots(ld, terms, indptr, indices) -> np.ndarray:
    return follower_slots(ld, indptr, indices)


def weight(ld, mass, t) -> np.ndarray:
    return gravity_forces(ld, mass, t)


def conservative(ld) -> bool:
    """Dead forces and gravity derive from a potential; dead moments in 3D and follower loads
    do not."""
    return not (np.any(ld.follower) or np.any(ld.moment != 0.0))


@kernel
def window(own, state, terms, a, b):
    """The step [a, b] being taken (NaN: none) for the loads' time functions, and so for the
    pressure's (the same LoadArrays: rodsim.terms.pressure has no window of its own)."""
    own.window[0] = a
    own.window[1] = b


def inputs(ld) -> dict:
    """What a controller writes (rodsim.controls): force and moment (K,3) per loaded node,
    gravity (3,)."""
    return {"force": ld.force, "moment": ld.moment, "gravity": ld.gravity}


def loaded(ld) -> bool:
    """A load entry (even of zero value: a controller may set it) or gravity."""
    return bool(ld.node.shape[0] or np.any(ld.gravity != 0.0))


class PowerArrays(NamedTuple):
    """What `power` reads: the load entries' node, force, moment, follower, tf (K,...), the
    packed time functions and window, gravity (3,) and gravity_tf (1,) (the LoadArrays' own
    arrays), rot0 (N,3,3) the reference frames (follower loads)."""

    node: np.ndarray
    force: np.ndarray
    moment: np.ndarray
    follower: np.ndarray
    tf: np.ndarray
    tf_kinds: np.ndarray
    tf_params: np.ndarray
    tf_tables: np.ndarray
    tf_offsets: np.ndarray
    window: np.ndarray
    gravity: np.ndarray
    gravity_tf: np.ndarray
    rot0: np.ndarray


def power_arrays(ld, model) -> PowerArrays:
    names = [f for f in PowerArrays._fields if f != "rot0"]
    return PowerArrays(*(getattr(ld, f) for f in names), model.rot0)


@kernel
def power(ld, nodes, x, rot, quat, t, p, pi):
    """The power of the nodal loads and gravity on the velocities of the momenta p, pi (N,3):
    sum_k s_k(t) (F_k . v_a + M_k . omega_a) over the load entries (follower values turned by
    Lambda_a Lambda_a0^T, as rodsim.model.loads.external_forces turns them), v_a = p_a / m_a,
    omega_a = Lambda_a I_a^-1 Lambda_a^T pi_a, plus gravity's s_g(t) g . sum_a p_a; free
    components only. O(load entries), and O(N) with gravity. ld: PowerArrays."""
    fixed, mass = nodes.fixed, nodes.mass
    total = 0.0
    for k in range(ld.node.shape[0]):
        s = evaluate_packed(
            ld.tf_kinds, ld.tf_params, ld.tf_tables, ld.tf_offsets, ld.tf[k], t, ld.window
        )
        a = ld.node[k]
        if s == 0.0 or not mass[a] > 0.0:
            continue
        fv = (ld.force[k, 0], ld.force[k, 1], ld.force[k, 2])
        mv = (ld.moment[k, 0], ld.moment[k, 1], ld.moment[k, 2])
        if ld.follower[k]:
            turn = so3.matmulT(so3.mat_at(rot, a), so3.mat_at(ld.rot0, a))
            fv, mv = so3.matvec(turn, fv), so3.matvec(turn, mv)
        for i in range(3):
            if not fixed[a, i]:
                total += s * fv[i] * p[a, i] / mass[a]
        if mv[0] != 0.0 or mv[1] != 0.0 or mv[2] != 0.0:
            r = so3.mat_at(rot, a)
            spin = (pi[a, 0], pi[a, 1], pi[a, 2])
            w = so3.matvec(r, so3.solve3(so3.mat_at(nodes.inertia, a), so3.matTvec(r, spin)))
            for i in range(3):
                if not fixed[a, 3 + i]:
                    total += s * mv[i] * w[i]
    g = ld.gravity
    if g[0] == 0.0 and g[1] == 0.0 and g[2] == 0.0:
        return total
    s = evaluate_packed(
        ld.tf_kinds, ld.tf_params, ld.tf_tables, ld.tf_offsets, ld.gravity_tf[0], t, ld.window
    )
    weight = 0.0
    for a in range(p.shape[0]):
        for i in range(3):
            if not fixed[a, i]:
                weight += g[i] * p[a, i]
    return total + s * weight


def place(model, ld):
    return dataclasses.replace(model, loads=ld)


def empty(ld):
    """No nodal load and no gravity (the pressure rows, the pressure term's, kept)."""
    return ld._replace(
        **{k: getattr(ld, k)[:0] for k in ("node", "force", "moment", "follower", "tf")},
        gravity=np.zeros(3),
        gravity_tf=np.zeros(1, dtype=np.int64),  # packed function 0: the constant 1
    )


def scaled(ld, scale):
    """Forces, moments and gravity times scale (their time functions unchanged)."""
    return ld._replace(force=ld.force * scale, moment=ld.moment * scale, gravity=ld.gravity * scale)


def dead(ld):
    """The dead forces and gravity: follower forces and every moment (no potential in 3D) set
    to zero."""
    follower = ld.follower[:, None] != 0
    return ld._replace(force=np.where(follower, 0.0, ld.force), moment=np.zeros_like(ld.moment))


def entry(ld, rows):
    """The rows of one `loads:` entry (its nodal, edge and distributed rows), no gravity."""
    nodal = np.zeros(len(ld.node), dtype=bool)
    for r in (rows.nodal, rows.edge, *(d[0] for d in rows.distributed.values())):
        nodal[r] = True
    mask = nodal[:, None]
    return ld._replace(
        force=np.where(mask, ld.force, 0.0),
        moment=np.where(mask, ld.moment, 0.0),
        gravity=np.zeros(3),
    )


TERM = Term(
    name="loads",
    role=APPLIED,
    arrays=arrays,
    forces=forces,
    tangent=tangent,
    tangent_slots=tangent_slots,
    weight=weight,
    conservative=conservative,
    window=window,
    inputs=inputs,
    loaded=loaded,
    power_arrays=power_arrays,
    power=power,
    place=place,
    empty=empty,
    scaled=scaled,
    dead=dead,
    entry=entry,
)
