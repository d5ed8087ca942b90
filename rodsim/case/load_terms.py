"""The `loads:` entries of a case as model terms (rodsim.model.loads): nodal forces and
moments, plate pressure and edge forces, distributed loads per length, area and volume
(rodsim.mesh.distributed), gravity; and where each entry's values went (LoadRows), so that
rodsim.controls can change them in place."""

import dataclasses
import difflib
from dataclasses import dataclass, field

import numpy as np

from rodsim.case.conditions import LOAD_VALUES
from rodsim.case.schema import render
from rodsim.case.settings import GravityLoad, NodeLoad
from rodsim.errors import CaseError
from rodsim.mesh import distributed
from rodsim.mesh.assemble import Mesh, unknown_set_message
from rodsim.mesh.plate_geometry import edge_lengths, plates_within
from rodsim.model.loads import Gravity, NodalLoad, Pressure


@dataclass(frozen=True)
class LoadRows:
    """Where one `loads:` entry went in the model's packed loads (rodsim.model.loads.
    LoadArrays), so that its values can be changed in place (rodsim.controls): nodal (R,) its
    rows of force and moment, one per node of its set; edge (Q,) its edge_force rows, with
    edge_length (Q,) the edge length each carries; pressure (S,) its pressure rows, one per
    plate element; distributed: key (line_force, line_moment, surface_force, body_force) ->
    (rows (L,), maps (L,3,3), "force" or "moment"): each row's matrix turns the value per
    length, area or volume into its lumped load (rodsim.mesh.distributed); factor: its load
    group's factor in the case's combination (1 without), already in the values. Empty where
    the entry has no such key; all empty for gravity."""

    nodal: np.ndarray
    edge: np.ndarray
    edge_length: np.ndarray
    pressure: np.ndarray
    distributed: dict = field(default_factory=dict)
    factor: float = 1.0


def nodes_of(mesh: Mesh, name: str, path) -> np.ndarray:
    if name not in mesh.sets:
        raise CaseError(unknown_set_message(name, mesh.sets), key=render(path))
    nodes = mesh.sets[name]
    if len(nodes) == 0:
        raise CaseError(f"node set {name!r} is empty", key=render(path))
    return nodes


@dataclass(frozen=True)
class Loads:
    """The model's load terms as they are built, in `loads:` order, and each entry's rows;
    rod_area (E,) the rod elements' cross-section areas (NaN: a section given by its
    stiffnesses) and plate_thickness (P,), for body forces."""

    nodal: list
    gravity: list
    pressures: list
    rows: list
    rod_area: np.ndarray
    plate_thickness: np.ndarray


def _no_rows() -> dict:
    return dict.fromkeys(("nodal", "edge", "pressure"), np.zeros(0, dtype=np.int64))


def _gravity(mesh: Mesh, spec: GravityLoad, tf, path, terms: Loads, factor: float) -> LoadRows:
    terms.gravity.append(Gravity(tuple(factor * g for g in spec.gravity), tf))
    return LoadRows(edge_length=np.zeros(0), factor=factor, **_no_rows())


def _factored(spec: NodeLoad, factor: float) -> NodeLoad:
    """The entry with its values times its group's factor."""
    if factor == 1.0:
        return spec
    scaled = {}
    for key in LOAD_VALUES:
        value = getattr(spec, key)
        if value is not None:
            scaled[key] = factor * value if key == "pressure" else tuple(factor * v for v in value)
    return dataclasses.replace(spec, **scaled)


def _node_load(mesh: Mesh, spec: NodeLoad, tf, path, terms: Loads, factor: float) -> LoadRows:
    """Nodal force and moment, plate pressure and edge force, and distributed loads of one
    `loads:` entry, its values times its group's factor."""
    spec = _factored(spec, factor)
    rows, edge_length = _no_rows(), np.zeros(0)
    nodes = nodes_of(mesh, spec.set, (*path, "set"))
    if spec.pressure is not None:
        first = sum(len(p.elements) for p in terms.pressures)
        plates = plates_within(mesh, nodes, (*path, "set"))
        terms.pressures.append(Pressure(plates, spec.pressure, tf))
        rows["pressure"] = np.arange(first, first + len(plates))
    first = sum(len(load.nodes) for load in terms.nodal)
    if spec.force is not None or spec.moment is not None:
        zero = (0.0, 0.0, 0.0)
        terms.nodal.append(
            NodalLoad(nodes, spec.force or zero, spec.moment or zero, spec.follower, tf)
        )
        rows["nodal"] = np.arange(first, first + len(nodes))
    if spec.edge_force is not None:
        per_node = edge_lengths(mesh, nodes, (*path, "set"))
        force = np.asarray(spec.edge_force, dtype=float)
        for a, length in per_node.items():
            terms.nodal.append(
                NodalLoad(np.array([a]), tuple(length * force), follower=spec.follower, time=tf)
            )
        first += len(rows["nodal"])
        rows["edge"] = np.arange(first, first + len(per_node))
        edge_length = np.array(list(per_node.values()))
    spread = {}
    for key, target, kind in DISTRIBUTED:
        value = getattr(spec, key)
        if value is None:
            continue
        loaded, maps = _distributed_maps(mesh, nodes, kind, spec.frame, (*path, "set"), key, terms)
        lumped = maps @ np.asarray(value, dtype=float)
        zero = np.zeros_like(lumped)
        first = sum(len(load.nodes) for load in terms.nodal)
        pair = (lumped, zero) if target == "force" else (zero, lumped)
        terms.nodal.append(NodalLoad(loaded, *pair, spec.follower, tf))
        spread[key] = (np.arange(first, first + len(loaded)), maps, target)
    return LoadRows(edge_length=edge_length, distributed=spread, factor=factor, **rows)


# the distributed keys of a `loads:` entry: (key, "force" or "moment", what it acts on)
DISTRIBUTED = (
    ("line_force", "force", "line"),
    ("line_moment", "moment", "line"),
    ("surface_force", "force", "surface"),
    ("body_force", "force", "body"),
)


def _distributed_maps(mesh: Mesh, nodes, kind: str, frame: str, path, key: str, terms):
    """(nodes, maps) lumping a value per length (rods), area (plates) or volume (rods, with
    their sections' areas, and plates, with their thickness) on the set's elements."""
    if kind == "line":
        elements = distributed.elements_within(mesh, nodes, path, key)
        return distributed.line_maps(mesh, elements, frame)
    cells = np.flatnonzero(np.isin(getattr(mesh, "plates", np.zeros((0, 4))), nodes).all(axis=1))
    if kind == "surface":
        if len(cells) == 0:
            plates_within(mesh, nodes, path, key)  # raises, naming the key
        return distributed.surface_maps(mesh, cells, frame)
    rods = np.flatnonzero(np.isin(mesh.conn, nodes).all(axis=1))
    if len(rods) == 0 and len(cells) == 0:
        raise CaseError(
            "body_force acts on rod elements and plate cells, and this set holds none (all "
            "their nodes must be in the set)",
            key=render(path),
        )
    parts = []
    if len(rods):
        area = terms.rod_area[rods]
        if np.isnan(area).any():
            name = mesh.section_names[mesh.section[rods[np.isnan(area)][0]]]
            raise CaseError(
                f"body_force needs the rods' cross-section area, and section {name!r} is "
                "given by its stiffnesses: give it a shape",
                key=render(path),
            )
        parts.append(distributed.line_maps(mesh, rods, "global", area))
    if len(cells):
        parts.append(distributed.surface_maps(mesh, cells, "global", terms.plate_thickness[cells]))
    return distributed.merged(*parts)


# how each kind of `loads:` entry (rodsim.case.conditions.LOAD) becomes model terms
LOAD_BUILDERS = {NodeLoad: _node_load, GravityLoad: _gravity}


def group_factors(data) -> dict:
    """group name -> factor of the case's `combination` (every group of `loads` listed; each
    listed group used), {} without groups; CaseError naming the key otherwise."""
    groups = {spec.group for spec in data.loads if spec.group is not None}
    combination = data.combination
    if combination is None:
        return dict.fromkeys(groups, 1.0)
    for name in combination:
        if name not in groups:
            same = [g for g in sorted(groups) if g.lower() == name.lower()]
            close = same or difflib.get_close_matches(name, sorted(groups), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise CaseError(
                f"no load entry is in group {name!r}{hint}; the groups are "
                f"{', '.join(sorted(groups)) or 'none'}",
                key=render(("combination", name)),
            )
    for i, spec in enumerate(data.loads):
        if spec.group is not None and spec.group not in combination:
            raise CaseError(
                f"group {spec.group!r} has no factor in combination (give it one, 0 to leave "
                f"it out; combination has {', '.join(sorted(combination)) or 'none'})",
                key=render(("loads", i, "group")),
            )
    return dict(combination)
