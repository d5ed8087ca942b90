"""The plates term: Reissner-Mindlin shell elements (docs/plates.md), their strain-rate
damping beta and output fields. Kernels in rodsim.model.plate_kernels and plate_viscous."""

import dataclasses
from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.model import plate, plate_kernels, plate_tangent, plate_viscous
from rodsim.terms.contract import INTERNAL, StepShare, Term, step_share


class PlateStrains(NamedTuple):
    """eps, kappa (P,4,3), gamma (P,4,2), drill (P,4) at the quadrature slots."""

    eps: np.ndarray
    kappa: np.ndarray
    gamma: np.ndarray
    drill: np.ndarray


class PlateResultants(NamedTuple):
    """Viscous resultant scratch n, m (P,4,3), q (P,4,2), r (P,4)."""

    n: np.ndarray
    m: np.ndarray
    q: np.ndarray
    r: np.ndarray


def arrays(model):
    return model.plates


def present(pl) -> bool:
    return pl.conn.shape[0] > 0


@kernel
def forces(own, state, terms, x, rot, quat, t, f, tau):
    return plate_kernels.assemble_plate_forces(own, x, rot, f, tau), 0.0


@kernel
def tangent(own, state, terms, slots, x, rot, quat, t, k):
    plate_tangent.add_plate_tangents(own, x, rot, slots, k)


def tangent_slots(pl, terms, indptr, indices) -> np.ndarray:
    return plate_tangent.plate_slots(pl, indptr, indices)


@kernel
def damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    if not terms.beta > 0.0:
        return
    plate_viscous.plate_damping_forces(own, x, rot, vel, omg, terms.beta, f, tau)


@kernel
def strains(own, state, terms, x, rot, quat, out):
    if not terms.beta > 0.0:
        return
    plate_kernels.plate_strains(own, x, rot, out.eps, out.kappa, out.gamma, out.drill)


@kernel
def step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    if not terms.beta > 0.0:
        return
    pe, pk, pg, pd = end.eps, end.kappa, end.gamma, end.drill
    plate_kernels.plate_strains(own, x1, r1, pe, pk, pg, pd)
    c = 1.0 / h
    for e in range(own.conn.shape[0]):
        for s in range(4):
            for k in range(3):
                pe[e, s, k] = c * (pe[e, s, k] - start.eps[e, s, k])
                pk[e, s, k] = c * (pk[e, s, k] - start.kappa[e, s, k])
            for k in range(2):
                pg[e, s, k] = c * (pg[e, s, k] - start.gamma[e, s, k])
            pd[e, s] = c * (pd[e, s] - start.drill[e, s])
    plate_viscous.viscous_resultants(own, terms.beta, pe, pk, pg, pd, res.n, res.m, res.q, res.r)
    plate_kernels.plate_resultant_forces(own, xb, rb, res.n, res.m, res.q, res.r, f, tau)


@kernel
def step_damping_tangent(
    own, state, terms, slots, start, end, res, x1, r1, q1, xb, rb, qb, h, kbar, k1
):
    """The blocks of step_damping's forces (at the viscous resultants it left in res):
    plate_tangent.add_plate_damping_tangents."""
    if not terms.beta > 0.0:
        return False
    plate_tangent.add_plate_damping_tangents(
        own, xb, rb, x1, r1, res, terms.beta / h, slots, kbar, k1
    )
    return True


def make_strains(pl, dtype=np.float64) -> PlateStrains:
    p = pl.conn.shape[0]
    z = np.zeros
    return PlateStrains(
        z((p, 4, 3), dtype), z((p, 4, 3), dtype), z((p, 4, 2), dtype), z((p, 4), dtype)
    )


def make_resultants(pl, dtype=np.float64) -> PlateResultants:
    p = pl.conn.shape[0]
    z = np.zeros
    return PlateResultants(
        z((p, 4, 3), dtype), z((p, 4, 3), dtype), z((p, 4, 2), dtype), z((p, 4), dtype)
    )


def damped(pl, beta, alpha) -> bool:
    return beta > 0.0


def corner_pairs(conn: np.ndarray) -> np.ndarray:
    """(6P,2) every pair of the corners of plates conn (P,4)."""
    return np.concatenate([conn[:, [i, j]] for i in range(4) for j in range(i + 1, 4)])


def pairs(pl, terms) -> np.ndarray:
    return corner_pairs(pl.conn)


def fields(pl, x, rot, quat, with_energy, state=None):
    """plate_membrane, plate_bending (P,3), plate_shear (P,2) at the element centres (absent
    without plates)."""
    p = pl.conn.shape[0]
    if not p:
        return {}, 0.0
    out = {"plate_membrane": np.empty((p, 3)), "plate_bending": np.empty((p, 3))}
    out["plate_shear"] = np.empty((p, 2))
    plate_kernels.plate_fields(
        pl, x, rot, out["plate_membrane"], out["plate_bending"], out["plate_shear"]
    )
    energy = 0.0
    if with_energy:
        energy = plate_kernels.assemble_plate_forces(pl, x, rot, np.zeros_like(x), np.zeros_like(x))
    return out, energy


# Plates per pass of the frequency computation: a plate's 24x24 matrices and their temporaries
# take ~30 KB; in chunks they stay near 50 MB (rodsim.resources counts them in its baseline).
# Plates are independent: the result does not depend on the chunk size.
CHUNK = 2048


def stable_step(pl, model) -> StepShare:
    """plate_max_frequencies (P,) of every plate against its own mass share (each element
    against its own share: the assembled nodal masses gave an estimate 30% above the measured
    blow-up of a free plate strip, the element shares 3%, tests/test_plate_dynamics.py), CHUNK
    plates at a time (every PlateElements field is per plate); no springs at nodes."""
    n = pl.conn.shape[0]
    out = np.empty(n)
    for lo in range(0, n, CHUNK):
        part = pl._replace(**{f: v[lo : lo + CHUNK] for f, v in pl._asdict().items()})
        out[lo : lo + CHUNK] = plate.plate_max_frequencies(part, model.x0, model.rot0)
    return step_share(out, label="plate element")


def roundoff(pl, size, length) -> float:
    """Membrane resultants (force/length) over the element size: nodal forces ~ A eps h_e with
    strain errors ~ eps |x| / h_e, so A eps |x|; moments D eps (weighted by 1/length): the
    largest over the plates, per unit eps."""
    if not pl.conn.shape[0]:
        return 0.0
    a = np.abs(pl.a_mat).max(axis=(1, 2))
    d = np.abs(pl.d_mat).max(axis=(1, 2))
    return float(np.max(a * size + d / length))


def place(model, pl):
    return dataclasses.replace(model, plates=pl)


def empty(pl):
    """No plate (every PlateElements field is per plate)."""
    return pl._replace(**{f: v[:0] for f, v in pl._asdict().items()})


def bending(pl, labels, label, size) -> np.ndarray:
    """D11, D22 (bending stiffness per width) times size, a strip as wide as the part, of the
    plates in the part `label` (the part of a plate's first corner)."""
    mine = labels[pl.conn[:, 0]] == label
    return pl.d_mat[mine][:, [0, 1], [0, 1]].ravel() * size


def rate_damping(pl, beta, alpha) -> float:
    """The strain-rate damping: beta times the material stiffness (docs/plates.md)."""
    return beta


def prestressed(pl, base, state, scale):
    """eps0, kappa0, g0, w0 shifted by scale x (the strain measures at state - at base)."""
    if not pl.conn.shape[0]:
        return pl
    new, old = plate.strains_at(pl, *state), plate.strains_at(pl, *base)
    shifted = [
        ref - scale * (a - b)
        for ref, a, b in zip((pl.eps0, pl.kappa0, pl.g0, pl.w0), new, old, strict=True)
    ]
    return pl._replace(eps0=shifted[0], kappa0=shifted[1], g0=shifted[2], w0=shifted[3])


def count(pl) -> str | None:
    return f"{pl.conn.shape[0]} plate elements" if pl.conn.shape[0] else None


TERM = Term(
    name="plates",
    role=INTERNAL,
    arrays=arrays,
    present=present,
    forces=forces,
    tangent=tangent,
    tangent_slots=tangent_slots,
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
