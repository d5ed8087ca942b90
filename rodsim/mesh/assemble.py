"""The global mesh of a case: parts generated or read, coincident nodes merged, sets named.

Every rod element keeps the reference section frames at its two ends (``end_frames``) and every
plate its own reference frame at each corner (``plate_frames``), so parts that meet at an
angle keep their own axes: a shared node carries one frame (that of the first rod element end
touching it, else of the first plate corner) and each element relates its own frame to it by a
constant rotation (see rodsim.model.rod). Rods and plates share one list of section names.
"""

import logging
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from rodsim.case.schema import render
from rodsim.case.settings import part_path
from rodsim.errors import CaseError
from rodsim.mesh.parts import build

log = logging.getLogger(__name__)


def _empty(*shape, dtype=np.float64):
    return lambda: np.zeros((0, *shape), dtype=dtype)


@dataclass(frozen=True)
class Mesh:
    """points (N,3); frames (N,3,3) nodal reference frames (columns d1 d2 d3);
    conn (E,2) int64; end_frames (E,2,3,3) reference section frames at the element ends;
    section (E,) int64 index into section_names; part (E,) int64 index into part_names;
    sets: name -> sorted (k,) int64 node indices;
    plates (P,4) int64 going round the element (triangles repeat their last node:
    plates[:, 3] == plates[:, 2]); plate_section (P,) int64 into section_names (the same
    tuple as the rods'); plate_part (P,) int64 into part_names; plate_frames (P,4,3,3) the
    plate's reference frame at each corner (d1, d2 tangent, d3 the cell normal). ``frames``
    of a node shared by rods and plates is the rod's; the model then gives every plate node
    the plates' frame (rodsim.mesh.plate_geometry.plate_node_frames: d3 the mean normal) and
    the rods keep their section frames through end offsets. Rod-only meshes have P = 0.
    stress_points (S,K,2): the stress recovery points of each section name, set by the model
    builder (rodsim.case.model.stress_points), and so are section_outline (S,B,2) the outline
    of each section name (rodsim.model.outlines; NaN for plate sections) and plate_thickness
    (P,)."""

    points: np.ndarray
    frames: np.ndarray
    conn: np.ndarray
    end_frames: np.ndarray
    section: np.ndarray
    section_names: tuple[str, ...]
    part: np.ndarray
    part_names: tuple[str, ...]
    sets: dict
    plates: np.ndarray = field(default_factory=_empty(4, dtype=np.int64))
    plate_section: np.ndarray = field(default_factory=_empty(dtype=np.int64))
    plate_part: np.ndarray = field(default_factory=_empty(dtype=np.int64))
    plate_frames: np.ndarray = field(default_factory=_empty(4, 3, 3))
    notes: tuple[str, ...] = ()
    stress_points: np.ndarray = field(default_factory=_empty(0, 2))
    point_stresses: bool = False
    section_outline: np.ndarray = field(default_factory=_empty(0, 0, 2))
    plate_thickness: np.ndarray = field(default_factory=_empty())

    @property
    def n_nodes(self) -> int:
        return len(self.points)

    @property
    def n_elements(self) -> int:
        return len(self.conn)

    @property
    def n_plates(self) -> int:
        return len(self.plates)


def _merge_map(points: np.ndarray, tol: float) -> np.ndarray:
    """Index of the representative (lowest index) of each point's cluster within tol."""
    if tol <= 0.0 or len(points) < 2:
        return np.arange(len(points))
    pairs = cKDTree(points).query_pairs(tol, output_type="ndarray")
    n = len(points)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    lowest = np.full(label.max() + 1, n)
    np.minimum.at(lowest, label, np.arange(n))
    return lowest[label]


def build_mesh(parts: tuple, case_sets: dict, resolve, merge_tolerance=None) -> Mesh:
    """The global Mesh from a case's ``mesh`` parts (rodsim.case.settings) and ``sets``.

    resolve: maps a case-relative file name to a Path.
    """
    built, seen = [], {}
    for i, part in enumerate(parts):
        path = part_path(i, part)
        if part.name in seen:
            raise CaseError(
                f"part name {part.name!r} is already used by mesh[{seen[part.name]}]",
                key=render((*path, "name")),
            )
        seen[part.name] = i
        built.append(build(part, path, resolve, merge_tolerance))

    offsets = np.cumsum([0] + [len(p.points) for p in built])
    points = np.concatenate([p.points for p in built])
    conn = np.concatenate([p.conn + o for p, o in zip(built, offsets[:-1], strict=True)])
    plates = np.concatenate([p.plates + o for p, o in zip(built, offsets[:-1], strict=True)])
    size = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
    tol = 1e-8 * max(size, 1e-300) if merge_tolerance is None else merge_tolerance
    rep = _merge_map(points, tol)
    keep = np.unique(rep)
    index = -np.ones(len(points), dtype=np.int64)
    index[keep] = np.arange(len(keep))
    new = index[rep]
    triangle = plates[:, 3] == plates[:, 2]  # before merging: a quad may collapse to one
    conn, plates = new[conn], new[plates]
    part_of = np.concatenate([np.full(len(p.conn), k) for k, p in enumerate(built)])
    plate_part_of = np.concatenate([np.full(len(p.plates), k) for k, p in enumerate(built)])
    _check_degenerate(conn, plates, triangle, part_of, plate_part_of, built, tol)
    merged = len(points) - len(keep)
    if merged:
        log.info("merged %d coincident nodes (tolerance %g)", merged, tol)

    end_frames = np.concatenate([p.end_frames for p in built])
    plate_frames = np.concatenate([p.plate_frames for p in built])
    frames = _nodal_frames(len(keep), conn, end_frames, plates, plate_frames)
    section_names = tuple(dict.fromkeys(s for p in built for s in (*p.sections, *p.plate_sections)))
    section = np.array([section_names.index(s) for p in built for s in p.sections], np.int64)
    plate_section = np.array(
        [section_names.index(s) for p in built for s in p.plate_sections], np.int64
    )
    sets = {}
    for p, o in zip(built, offsets[:-1], strict=True):
        for name, nodes in p.sets.items():
            sets[f"{p.name}.{name}"] = np.unique(new[np.asarray(nodes, dtype=np.int64) + o])
    mesh_points = points[keep]
    _resolve_case_sets(case_sets, mesh_points, sets)
    return Mesh(
        mesh_points,
        frames,
        np.ascontiguousarray(conn),
        np.ascontiguousarray(end_frames),
        section,
        section_names,
        part_of.astype(np.int64),
        tuple(p.name for p in built),
        sets,
        np.ascontiguousarray(plates),
        plate_section,
        plate_part_of.astype(np.int64),
        np.ascontiguousarray(plate_frames),
        tuple(n for p in built for n in p.notes),
    )


def _check_degenerate(conn, plates, triangle, part_of, plate_part_of, built, tol) -> None:
    """CaseError naming the part of the first element that merging collapsed: a rod element
    with both ends on one node, a plate with fewer distinct nodes than it had corners."""
    degenerate = np.flatnonzero(conn[:, 0] == conn[:, 1])
    if len(degenerate):
        k = int(part_of[degenerate[0]])
        raise CaseError(
            f"an element of part {built[k].name!r} is shorter than the merge tolerance {tol:g}",
            key=render(("mesh", k)),
        )
    ordered = np.sort(plates, axis=1)
    distinct = 1 + np.count_nonzero(np.diff(ordered, axis=1), axis=1)
    collapsed = np.flatnonzero(distinct != np.where(triangle, 3, 4))
    if len(collapsed):
        k = int(plate_part_of[collapsed[0]])
        raise CaseError(
            f"plate cell {int(collapsed[0] - np.flatnonzero(plate_part_of == k)[0])} "
            f"of part {built[k].name!r} has corners closer than the merge "
            f"tolerance {tol:g}",
            key=render(("mesh", k)),
        )


def _nodal_frames(n: int, conn, end_frames, plates, plate_frames) -> np.ndarray:
    """(n,3,3): the frame of the first rod element end touching each node, else of the first
    plate corner. Rods win because a rod's section axes matter to its response (d2, d3 are
    its bending axes), while the plate element takes whatever nodal frame it finds through
    the constant offset to its own plate_frames."""
    big = 2 * len(conn) + 4 * len(plates)
    first = np.full(n, big)
    for side in (0, 1):
        np.minimum.at(first, conn[:, side], np.arange(len(conn)) * 2 + side)
    for corner in range(4):
        np.minimum.at(first, plates[:, corner], 2 * len(conn) + np.arange(len(plates)) * 4 + corner)
    candidates = np.concatenate([end_frames.reshape(-1, 3, 3), plate_frames.reshape(-1, 3, 3)])
    return np.ascontiguousarray(candidates[first])


def _resolve_case_sets(case_sets: dict, points: np.ndarray, sets: dict) -> None:
    """Add the case's `sets:` to `sets` (the parts' sets), each after the sets its union names,
    so they may be given in any order; a cycle of unions is an error that names it."""
    opened: list[str] = []

    def resolve(name: str) -> None:
        if name in sets:
            return
        if name in opened:
            cycle = " -> ".join([*opened[opened.index(name) :], name])
            raise CaseError(
                f"node sets refer to each other in a cycle: {cycle}",
                key=render(("sets", name, "union")),
            )
        kind, arg = case_sets[name].kind, case_sets[name].value
        opened.append(name)
        if kind == "union":
            for ref in arg:
                if ref in case_sets:
                    resolve(ref)
        sets[name] = select(kind, arg, points, sets, ("sets", name, kind))
        opened.pop()

    for name in case_sets:
        resolve(name)


def select(kind: str, arg, points: np.ndarray, sets: dict, path) -> np.ndarray:
    """Nodes of a `sets:` selector: near, box, nodes or union."""
    if kind == "near":
        return np.array([int(np.argmin(np.linalg.norm(points - np.asarray(arg), axis=1)))])
    if kind == "box":
        if len(arg) != 2:
            raise CaseError(
                f"expected two corners [[xmin, ymin, zmin], [xmax, ymax, zmax]], got "
                f"{len(arg)} points",
                key=render(path),
            )
        lo, hi = np.asarray(arg[0]), np.asarray(arg[1])
        if np.any(lo > hi):
            raise CaseError(
                f"the first corner must be the lower one, got {list(lo)} and {list(hi)}",
                key=render(path),
            )
        nodes = np.flatnonzero(np.all((points >= lo) & (points <= hi), axis=1))
        if len(nodes) == 0:
            raise CaseError("the box contains no node", key=render(path))
        return nodes
    if kind == "nodes":
        nodes = np.asarray(arg, dtype=np.int64)
        if nodes.max() >= len(points):
            raise CaseError(
                f"node {int(nodes.max())} does not exist; the mesh has "
                f"{len(points)} nodes (0 to {len(points) - 1})",
                key=render(path),
            )
        return np.unique(nodes)
    out = []
    for i, name in enumerate(arg):
        if name not in sets:
            raise CaseError(unknown_set_message(name, sets), key=render((*path, i)))
        out.append(sets[name])
    return np.unique(np.concatenate(out))


def unknown_set_message(name: str, sets: dict) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(sets), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown node set {name!r}{hint} (sets: {', '.join(sorted(sets))})"
