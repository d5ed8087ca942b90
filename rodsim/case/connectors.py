"""The case file's `connectors:` (docs/connectors.md): their schema record, typed settings and
the builder from a case and its mesh to the connectors term's arrays
(rodsim.model.connectors.ConnectorArrays, Model.term_arrays["connectors"])."""

from dataclasses import dataclass

import numpy as np

from rodsim.case.fields import SET_NAME, nonnegative, positive, vector
from rodsim.case.load_terms import nodes_of
from rodsim.case.schema import (
    Either,
    Field,
    ListOf,
    Number,
    Path,
    Record,
    Text,
    Vector,
    fail,
    render,
)
from rodsim.errors import CaseError
from rodsim.model.connectors import FRAMES, KINDS, pack_connectors
from rodsim.model.connectors import Connector as ModelConnector

Vec3 = tuple[float, float, float]

# the keys each kind takes besides between, kind and frame
_KEYS = {
    "spring": ("stiffness", "damping", "rotational_stiffness", "rotational_damping"),
    "cable": ("stiffness", "length"),
    "strut": ("stiffness", "length"),
    "plastic": (
        "stiffness",
        "damping",
        "rotational_stiffness",
        "rotational_damping",
        "yield_force",
        "hardening",
    ),
}
_OPTIONAL = ("stiffness", "damping", "rotational_stiffness", "rotational_damping", "length")
_OPTIONAL += ("yield_force", "hardening")


@dataclass(frozen=True)
class Connector:
    """One `connectors:` entry (values in the case's units; absent optional keys None)."""

    between: tuple[str, str]
    kind: str
    frame: str
    stiffness: float | Vec3 | None
    damping: Vec3 | None
    rotational_stiffness: Vec3 | None
    rotational_damping: Vec3 | None
    length: float | None
    yield_force: float | Vec3 | None
    hardening: float | None


def _two_sets(items, path: Path) -> None:
    if len(items) != 2:
        raise fail(path, f"expected two node set names [a, b], got {len(items)}")


def _per_kind(data, path: Path) -> None:
    kind = data["kind"]
    allowed = _KEYS[kind]
    for key in _OPTIONAL:
        if data[key] is not None and key not in allowed:
            raise fail(
                (*path, key),
                f"a {kind} connector takes no {key} (its keys: {', '.join(allowed)})",
            )
    axial = kind in ("cable", "strut")
    if (kind == "plastic" or axial) and data["stiffness"] is None:
        raise fail((*path, "stiffness"), f"a {kind} connector needs a stiffness")
    if axial and isinstance(data["stiffness"], tuple):
        raise fail(
            (*path, "stiffness"),
            f"a {kind} connector's stiffness is one number (axial, along the chord)",
        )
    if axial and data["frame"] != "global":
        raise fail((*path, "frame"), f"a {kind} connector acts along its chord: no frame")
    if kind == "plastic" and data["yield_force"] is None:
        raise fail((*path, "yield_force"), "a plastic connector needs a yield_force")
    if kind == "spring" and all(data[k] is None for k in allowed):
        raise fail(path, f"expected at least one of {', '.join(allowed)}")


_per_kind.__doc__ = "the keys of each kind (docs/connectors.md)"


def _per_direction(dim: str, strictly_positive: bool = False) -> Either:
    """One number (every direction) or three (per direction), >= 0 (or > 0)."""
    bound = {"gt": 0} if strictly_positive else {"ge": 0}
    return Either((Number(dim=dim, **bound), Vector(item=Number(dim=dim, **bound))))


CONNECTOR = Record(
    (
        Field(
            "between",
            ListOf(SET_NAME, min_items=2, rule=_two_sets),
            "two node sets [a, b] of equal size: each node of a is joined to the node of b "
            "at the same place in node-number order",
        ),
        Field(
            "kind",
            Text(choices=KINDS),
            "spring (springs and dashpots per direction), cable (tension only), strut "
            "(compression only), plastic (elastic-perfectly-plastic or hardening per direction)",
            default="spring",
        ),
        Field(
            "frame",
            Text(choices=FRAMES),
            "axes of the per-direction values and measures: global, or node a's current "
            "frame d1 d2 d3 (moves with it)",
            default="global",
        ),
        Field(
            "stiffness",
            _per_direction("force/length"),
            "translational stiffness per direction (one number: the same in every direction); "
            "cable, strut: the axial stiffness k",
            optional=True,
        ),
        Field(
            "damping",
            vector("force*time/length", ge=0),
            "translational dashpot per direction (force/velocity)",
            optional=True,
        ),
        Field(
            "rotational_stiffness",
            vector("force*length", ge=0),
            "rotational stiffness per direction (moment/radian) on the relative rotation psi",
            optional=True,
        ),
        Field(
            "rotational_damping",
            vector("force*length*time", ge=0),
            "rotational dashpot per direction (moment x time/radian) on the rate of psi",
            optional=True,
        ),
        Field(
            "length",
            positive("length"),
            "cable, strut: the free length L0 (default: the reference distance of the nodes)",
            optional=True,
        ),
        Field(
            "yield_force",
            _per_direction("force", True),
            "plastic: the force at which each direction slips (one number: every direction)",
            optional=True,
        ),
        Field(
            "hardening",
            nonnegative("force/length"),
            "plastic: linear hardening H, the yield force grows by H per unit of plastic slip "
            "(default 0: perfectly plastic)",
            optional=True,
        ),
    ),
    rules=(_per_kind,),
    into=Connector,
)

CONNECTORS = ListOf(CONNECTOR)
DOC = "links between two nodes: springs and dashpots, cables, struts, plastic links"


def _vec(value, default: float = 0.0) -> tuple:
    if value is None:
        return (default,) * 3
    return tuple(value) if isinstance(value, tuple) else (float(value),) * 3


def _pairs(mesh, spec: Connector, path) -> tuple[np.ndarray, np.ndarray]:
    a = nodes_of(mesh, spec.between[0], (*path, "between", 0))
    b = nodes_of(mesh, spec.between[1], (*path, "between", 1))
    if len(a) != len(b):
        raise CaseError(
            f"the sets have different sizes: {spec.between[0]!r} {len(a)} nodes, "
            f"{spec.between[1]!r} {len(b)}; a connector joins their nodes in pairs",
            key=render((*path, "between")),
        )
    same = np.flatnonzero(a == b)
    if len(same):
        raise CaseError(
            f"node {int(a[same[0]])} is in both sets: a connector joins two different nodes",
            key=render((*path, "between")),
        )
    return np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)


def connector_items(mesh, data) -> list[ModelConnector]:
    """The model's Connector entries of the case's `connectors:`."""
    out = []
    for i, spec in enumerate(getattr(data, "connectors", ())):
        path = ("connectors", i)
        a, b = _pairs(mesh, spec, path)
        if spec.kind in ("cable", "strut"):
            chord = np.linalg.norm(mesh.points[b] - mesh.points[a], axis=1)
            if np.any(chord == 0.0):
                raise CaseError(
                    f"node {int(a[np.argmin(chord)])} and {int(b[np.argmin(chord)])} are at one "
                    f"place: a {spec.kind} acts along the line between its nodes (use a spring)",
                    key=render((*path, "between")),
                )
            stiffness = (float(spec.stiffness), 0.0, 0.0)
        else:
            stiffness = _vec(spec.stiffness)
        out.append(
            ModelConnector(
                a,
                b,
                kind=spec.kind,
                frame=spec.frame,
                stiffness=stiffness,
                damping=_vec(spec.damping),
                rotational_stiffness=_vec(spec.rotational_stiffness),
                rotational_damping=_vec(spec.rotational_damping),
                length=spec.length,
                yield_force=_vec(spec.yield_force, np.inf),
                hardening=0.0 if spec.hardening is None else spec.hardening,
            )
        )
    return out


def build(mesh, frames: np.ndarray, data):
    """ConnectorArrays of the case's `connectors:` on the mesh's nodes (reference positions
    mesh.points, frames (N,3,3) the model's reference frames), or None without any."""
    items = connector_items(mesh, data)
    if not items:
        return None
    return pack_connectors(items, np.asarray(mesh.points, dtype=float), frames)
