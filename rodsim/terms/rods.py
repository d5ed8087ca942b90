"""The rods term: Simo-Reissner elements (docs/theory.md), their strain-rate damping beta
(docs/damping.md) and their output fields. Kernels in rodsim.model.rod and rod_viscous."""

import dataclasses
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.model import rod, rod_frequencies, rod_tangent, rod_viscous
from rodsim.terms.contract import INTERNAL, StepShare, Term, step_share


class RodStrains(NamedTuple):
    """Strain measures gamma, omega (E,3) (discrete damping)."""

    gamma: np.ndarray
    omega: np.ndarray


class RodResultants(NamedTuple):
    """Viscous resultant scratch n, m (E,3)."""

    n: np.ndarray
    m: np.ndarray


def arrays(model):
    return model.rods


def present(el) -> bool:
    return el.conn.shape[0] > 0


@kernel
def forces(own, state, terms, x, rot, quat, t, f, tau):
    return rod.assemble_forces(own, x, rot, quat, f, tau), 0.0


@kernel
def tangent(own, state, terms, slots, x, rot, quat, t, k):
    rod_tangent.add_rod_tangents(own, x, rot, quat, slots, k)


def tangent_slots(el, terms, indptr, indices) -> np.ndarray:
    return rod_tangent.rod_slots(el, indptr, indices)


@kernel
def forces_parallel(own, state, terms, x, rot, quat, t, f, tau, work):
    u = rod.assemble_forces_parallel(
        own, x, rot, quat, f, tau, work.elem, work.element_blocks, work.block_energy, True
    )
    return u, 0.0


@kernel
def damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    if not terms.beta > 0.0:
        return
    rod_viscous.damping_forces(own, x, rot, quat, vel, omg, terms.beta, f, tau)


@kernel
def strains(own, state, terms, x, rot, quat, out):
    if not terms.beta > 0.0:
        return
    rod_viscous.element_strains(own, x, rot, quat, out.gamma, out.omega)


@kernel
def step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    if not terms.beta > 0.0:
        return
    rod_viscous.element_strains(own, x1, r1, q1, end.gamma, end.omega)
    c = terms.beta / h
    for e in range(own.conn.shape[0]):
        for k in range(3):
            res.n[e, k] = c * own.c1[e, k] * (end.gamma[e, k] - start.gamma[e, k])
            res.m[e, k] = c * own.c2[e, k] * (end.omega[e, k] - start.omega[e, k])
    rod_viscous.resultant_forces(own, xb, rb, qb, res.n, res.m, f, tau)


@kernel
def step_damping_tangent(
    own, state, terms, slots, start, end, res, x1, r1, q1, xb, rb, qb, h, kbar, k1
):
    """The blocks of step_damping's forces (at the resultants it left in res): rod_tangent.
    add_rod_damping_tangents."""
    if not terms.beta > 0.0:
        return False
    rod_tangent.add_rod_damping_tangents(
        own, xb, rb, qb, x1, r1, q1, res.n, res.m, terms.beta / h, slots, kbar, k1
    )
    return True


def make_strains(el, dtype=np.float64) -> RodStrains:
    e = el.conn.shape[0]
    return RodStrains(np.zeros((e, 3), dtype), np.zeros((e, 3), dtype))


def make_resultants(el, dtype=np.float64) -> RodResultants:
    e = el.conn.shape[0]
    return RodResultants(np.zeros((e, 3), dtype), np.zeros((e, 3), dtype))


def damped(el, beta, alpha) -> bool:
    return beta > 0.0


def pairs(el, terms) -> np.ndarray:
    return el.conn


def fields(el, x, rot, quat, with_energy, state=None):
    """force, moment (section resultants), strain, curvature (minus the reference strains),
    all (E,3) in the section frame; always given (empty without rods)."""
    e = el.conn.shape[0]
    gamma, kappa, force, moment = (np.empty((e, 3)) for _ in range(4))
    energy = rod.element_fields(el, x, rot, gamma, kappa, force, moment) if e else 0.0
    return {"force": force, "moment": moment, "strain": gamma, "curvature": kappa}, energy


def element_max_frequencies(model) -> np.ndarray:
    """omega_max (E,) of every rod element of a model against its own lumped share of mass and
    inertia (rodsim.model.rod_frequencies)."""
    el, x0, rot0 = model.rods, model.x0, model.rot0
    return rod_frequencies.element_max_frequencies(el, x0, rot0, model.rho_a, model.rho_i)


def stable_step(el, model) -> StepShare:
    """The elements' top frequencies (E,) at the reference state; no springs at nodes."""
    if not el.conn.shape[0]:
        return step_share(label="rod element")
    return step_share(element_max_frequencies(model), label="rod element")


def roundoff(el, size, length) -> float:
    """An element's strains carry errors ~ eps |x| / h_e (differences of coordinates of size
    |x|), so its forces errors ~ eps C1 |x| / h_e and its moments ~ eps C2 / h_e (weighted by
    1/length): the largest over the elements, per unit eps."""
    if not el.conn.shape[0]:
        return 0.0
    return float(np.max((el.c1.max(axis=1) * size + el.c2.max(axis=1) / length) / el.length))


def place(model, el):
    return dataclasses.replace(model, rods=el)


def empty(el):
    """No rod element (the node map kept, every node with no element end)."""
    return el._replace(
        **{k: getattr(el, k)[:0] for k in el._fields if k != "node_ptr"},
        node_ptr=np.zeros_like(el.node_ptr),
    )


def bending(el, labels, label, size) -> np.ndarray:
    """EI2, EI3 of the elements in the part `label` (the part of an element's first node)."""
    return el.c2[labels[el.conn[:, 0]] == label, 1:].ravel()


def rate_damping(el, beta, alpha) -> float:
    """The strain-rate damping: beta times the material stiffness (docs/theory.md)."""
    return beta


def prestressed(el, base, state, scale):
    """Gamma0, Omega0 shifted by scale x (Gamma, Omega at state - at base) (docs/modal.md,
    "Buckling")."""
    (g1, w1), (g0, w0) = rod.strains_at(el, *state), rod.strains_at(el, *base)
    return el._replace(gamma0=el.gamma0 - scale * (g1 - g0), omega0=el.omega0 - scale * (w1 - w0))


def count(el) -> str:
    return f"{el.conn.shape[0]} rod elements"


TERM = Term(
    name="rods",
    role=INTERNAL,
    arrays=arrays,
    present=present,
    forces=forces,
    tangent=tangent,
    tangent_slots=tangent_slots,
    forces_parallel=forces_parallel,
    damping=damping,
    strains=strains,
    make_strains=make_strains,
    make_resultants=make_resultants,
    step_damping=step_damping,
    step_damping_tangent=step_damping_tangent,
    damped=damped,
    pairs=pairs,
    fields=fields,
    stable_step=stable_step,
    roundoff=roundoff,
    place=place,
    empty=empty,
    bending=bending,
    rate_damping=rate_damping,
    prestressed=prestressed,
    count=count,
)
