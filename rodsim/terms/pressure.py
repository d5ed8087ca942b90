"""The pressure term: follower pressure on plates (docs/loads.md). Its arrays are the packed
loads' pressure rows (rodsim.model.loads); it acts through the plates term's arrays."""

import dataclasses

import numpy as np

from rodsim.jit import kernel
from rodsim.model.load_tangent import add_pressure_tangents
from rodsim.model.loads import plate_pressure
from rodsim.model.plate_tangent import plate_slots
from rodsim.terms import plates
from rodsim.terms.contract import APPLIED, Term


def arrays(model):
    return model.loads


def present(ld) -> bool:
    return ld.pressure_el.shape[0] > 0


@kernel
def forces(own, state, terms, x, rot, quat, t, f, tau):
    plate_pressure(own, terms.plates, t, x, rot, f)
    return 0.0, 0.0


@kernel
def tangent(own, state, terms, slots, x, rot, quat, t, k):
    add_pressure_tangents(own, terms.plates, t, x, rot, slots, k)


def tangent_slots(ld, terms, indptr, indices) -> np.ndarray:
    """The plates' slots: the pressure acts through their corners."""
    return plate_slots(terms.plates, indptr, indices)


def pairs(ld, terms) -> np.ndarray:
    """The corners of each loaded plate (its follower pressure turns with all of them)."""
    return plates.corner_pairs(terms.plates.conn[np.unique(ld.pressure_el)])


def conservative(ld) -> bool:
    """A follower pressure has no potential."""
    return not np.any(ld.pressure != 0.0)


def inputs(ld) -> dict:
    """What a controller writes (rodsim.controls): pressure (P,) per loaded plate."""
    return {"pressure": ld.pressure}


def loaded(ld) -> bool:
    """Any pressure entry (even of zero value: a controller may set it)."""
    return bool(ld.pressure_el.shape[0])


def place(model, ld):
    return dataclasses.replace(model, loads=ld)


def empty(ld):
    """No pressure row (the nodal loads and gravity, the loads term's, kept)."""
    rows = ("pressure_el", "pressure", "pressure_tf")
    return ld._replace(**{k: getattr(ld, k)[:0] for k in rows})


def scaled(ld, scale):
    return ld._replace(pressure=ld.pressure * scale)


def dead(ld):
    """None of it: a follower pressure turns with the plates."""
    return ld._replace(pressure=np.zeros_like(ld.pressure))


def entry(ld, rows):
    """The pressure rows of one `loads:` entry."""
    pressed = np.zeros(len(ld.pressure_el), dtype=bool)
    pressed[rows.pressure] = True
    return ld._replace(pressure=np.where(pressed, ld.pressure, 0.0))


TERM = Term(
    name="pressure",
    role=APPLIED,
    arrays=arrays,
    present=present,
    forces=forces,
    tangent=tangent,
    tangent_slots=tangent_slots,
    pairs=pairs,
    conservative=conservative,
    inputs=inputs,
    loaded=loaded,
    place=place,
    empty=empty,
    scaled=scaled,
    dead=dead,
    entry=entry,
)
