"""The mesh of one case-file part, before parts are merged (rodsim.mesh.assemble): a generated
rod, arc or rectangle, or the cells of a mesh file. One builder per part kind, each
(part settings, key path, resolve, merge_tolerance) -> PartMesh; build picks it by the class
of the part's settings (rodsim.case.settings)."""

import logging
from dataclasses import dataclass, field

import numpy as np

from rodsim.case import settings
from rodsim.case.schema import render, within
from rodsim.errors import CaseError
from rodsim.mesh import generate
from rodsim.mesh.read import read_mesh

log = logging.getLogger(__name__)


def _empty(*shape, dtype=np.float64):
    return lambda: np.zeros((0, *shape), dtype=dtype)


@dataclass(frozen=True)
class PartMesh:
    """One part before merging; plates and plate_frames empty for rod parts, conn and
    end_frames empty for plate parts."""

    name: str
    points: np.ndarray
    conn: np.ndarray
    end_frames: np.ndarray
    sections: list  # per rod element section name
    sets: dict  # local node sets, short names
    plates: np.ndarray = field(default_factory=_empty(4, dtype=np.int64))
    plate_frames: np.ndarray = field(default_factory=_empty(4, 3, 3))
    plate_sections: list = field(default_factory=list)  # per plate section name
    notes: tuple[str, ...] = ()


def rod(part: settings.RodPart, path, resolve=None, merge_tolerance=None) -> PartMesh:
    """A straight rod of equal elements."""
    try:
        g = generate.straight_rod(part.from_, part.to, part.elements, part.up)
    except CaseError as exc:
        raise within(exc, path) from None
    return _line_part(part, g)


def arc(part: settings.ArcPart, path, resolve=None, merge_tolerance=None) -> PartMesh:
    """A circular arc (a closed ring at 360 degrees)."""
    try:
        g = generate.arc(
            part.center, part.radius, part.start, part.normal, part.angle, part.elements, part.up
        )
    except CaseError as exc:
        raise within(exc, path) from None
    return _line_part(part, g)


def _line_part(part, g) -> PartMesh:
    last = int(g.conn[-1, 1])
    sets = {"start": np.array([0]), "end": np.array([last]), "all": np.arange(len(g.points))}
    return PartMesh(
        part.name, g.points, g.conn, g.frames[g.conn], [part.section] * len(g.conn), sets
    )


def rectangle(part: settings.RectanglePart, path, resolve=None, merge_tolerance=None) -> PartMesh:
    """A flat plate of n1 x n2 quads."""
    g = generate.rectangle(part.origin, part.size, part.elements, part.e1, part.e2)
    return PartMesh(
        part.name,
        g.points,
        np.zeros((0, 2), np.int64),
        np.zeros((0, 2, 3, 3)),
        [],
        g.sets,
        g.plates,
        g.frames[g.plates],
        [part.section] * len(g.plates),
    )


def _cell_sections(spec: settings.FilePart, path, cell_sets: dict, count: int, kind: str) -> list:
    """Section name per cell (count cells of one kind), from the `sections` mapping of cell
    sets, else the default `section`; a cell set absent from every kind is reported by the
    caller, since a set may hold only lines or only surfaces."""
    names = [None] * count
    for cell_set, section in spec.sections.items():
        for e in cell_sets.get(cell_set, ()):
            names[e] = section
    missing = [e for e, n in enumerate(names) if n is None]
    if missing:
        if spec.section is None:
            raise CaseError(
                f"{len(missing)} {kind} cells (the first is cell {missing[0]}) are "
                "in no cell set mapped under `sections`; map their set or give a "
                "default `section`",
                key=render(path),
            )
        for e in missing:
            names[e] = spec.section
    return names


def _line_frames(
    spec: settings.FilePart, path, points: np.ndarray, lines: np.ndarray
) -> np.ndarray:
    """(E,2,3,3) end frames of line cells: d1 the tangent, d3 `up` (or a stable default)."""
    lengths = np.linalg.norm(points[lines[:, 1]] - points[lines[:, 0]], axis=1)
    if np.any(lengths == 0.0):
        e = int(np.flatnonzero(lengths == 0.0)[0])
        raise CaseError(f"line cell {e} of {spec.file!r} has zero length", key=render(path))
    tangents = (points[lines[:, 1]] - points[lines[:, 0]]) / lengths[:, None]
    frames = np.empty((len(lines), 3, 3))
    for e, t in enumerate(tangents):
        up = generate.default_up(t) if spec.up is None else np.asarray(spec.up)
        try:
            frames[e] = generate.frame(t, up)
        except CaseError:
            raise CaseError(
                f"`up` is parallel to line cell {e}; give a different `up`",
                key=render((*path, "up")),
            ) from None
    return np.repeat(frames[:, None], 2, axis=1)


def _surface_frames(
    spec: settings.FilePart, path, points: np.ndarray, plates: np.ndarray
) -> np.ndarray:
    """(P,4,3,3) corner frames of triangle/quad cells (one frame per flat cell)."""
    frames = generate.cell_frames(points, plates)
    bad = np.flatnonzero(~np.all(np.isfinite(frames), axis=(1, 2)))
    if len(bad):
        raise CaseError(
            f"surface cell {int(bad[0])} of {spec.file!r} has zero area", key=render(path)
        )
    return np.repeat(frames[:, None], 4, axis=1)


def _without_edge_lines(spec: settings.FilePart, fm) -> tuple[np.ndarray, dict]:
    """Line cells and their sets without the boundary lines of plates. Gmsh users name plate
    edges (supports, edge loads) with physical curves, whose line cells meshio returns like any
    other: a line cell that lies on a plate cell's edge, is in no cell set mapped to a section
    and has no default `section` only names nodes (its sets stay node sets), instead of being
    refused as a rod without a section. Mapped or defaulted, it stays a rod (a stiffener)."""
    if len(fm.plates) == 0 or len(fm.lines) == 0 or spec.section is not None:
        return fm.lines, fm.element_sets
    mapped = np.zeros(len(fm.lines), dtype=bool)
    for cell_set in spec.sections:
        mapped[fm.element_sets.get(cell_set, [])] = True
    edges = np.sort(np.concatenate([fm.plates[:, [c, (c + 1) % 4]] for c in range(4)]), axis=1)
    edge_ids = edges[:, 0] * len(fm.points) + edges[:, 1]
    ordered = np.sort(fm.lines, axis=1)
    on_edge = np.isin(ordered[:, 0] * len(fm.points) + ordered[:, 1], edge_ids)
    drop = on_edge & ~mapped
    if not drop.any():
        return fm.lines, fm.element_sets
    log.info(
        "%s: %d unmapped line cells on plate edges name nodes only", spec.file, int(drop.sum())
    )
    renumber = np.cumsum(~drop) - 1
    sets = {k: renumber[v[~drop[v]]] for k, v in fm.element_sets.items()}
    return fm.lines[~drop], sets


def from_file(spec: settings.FilePart, path, resolve, merge_tolerance=None) -> PartMesh:
    """The rods and plates of a meshio-readable file."""
    fm = read_mesh(resolve(spec.file), render((*path, "file")), merge_tolerance)
    for cell_set in spec.sections:
        if cell_set not in fm.element_sets and cell_set not in fm.plate_sets:
            known = ", ".join(sorted({*fm.element_sets, *fm.plate_sets})) or "none"
            raise CaseError(
                f"the mesh has no cell set {cell_set!r} of line, triangle or quad "
                f"cells (it has: {known})",
                key=render((*path, "sections", cell_set)),
            )
    lines, line_sets = _without_edge_lines(spec, fm)
    names = _cell_sections(spec, path, line_sets, len(lines), "line")
    plate_names = _cell_sections(spec, path, fm.plate_sets, len(fm.plates), "surface")
    end_frames = _line_frames(spec, path, fm.points, lines)
    plate_frames = _surface_frames(spec, path, fm.points, fm.plates)
    # drop points no cell uses (e.g. geometry points) by renumbering
    used = fm.node_sets["all"]
    renumber = -np.ones(len(fm.points), dtype=np.int64)
    renumber[used] = np.arange(len(used))
    sets = {}
    for name, nodes in fm.node_sets.items():
        kept = renumber[nodes[nodes < len(renumber)]]
        sets[name] = np.unique(kept[kept >= 0])
    notes = (
        (f"{spec.file}: {len(fm.merged_ids)} node ids defined more than once at one point, merged",)
        if len(fm.merged_ids)
        else ()
    )
    return PartMesh(
        spec.name,
        fm.points[used],
        renumber[lines],
        end_frames,
        names,
        sets,
        renumber[fm.plates],
        plate_frames,
        plate_names,
        notes,
    )


BUILDERS = {
    settings.RodPart: rod,
    settings.ArcPart: arc,
    settings.RectanglePart: rectangle,
    settings.FilePart: from_file,
}


def build(part: settings.Part, path, resolve, merge_tolerance=None) -> PartMesh:
    """The PartMesh of a part of any kind."""
    return BUILDERS[type(part)](part, path, resolve, merge_tolerance)
