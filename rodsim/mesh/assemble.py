"""The global mesh of a case: parts generated or read, coincident nodes merged, sets named.

Every element keeps the reference section frames at its two ends (``end_frames``), so parts
that meet at an angle keep their own section axes: a shared node carries one frame (that of the
first element touching it) and each element relates its section frame to it by a constant
rotation (see rodsim.model.rod).
"""

import logging
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from rodsim.case.schema import render, within
from rodsim.errors import CaseError, Unavailable
from rodsim.mesh import generate
from rodsim.mesh.read import read_mesh

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mesh:
    """points (N,3); frames (N,3,3) nodal reference frames (columns d1 d2 d3);
    conn (E,2) int64; end_frames (E,2,3,3) reference section frames at the element ends;
    section (E,) int64 index into section_names; part (E,) int64 index into part_names;
    sets: name -> sorted (k,) int64 node indices."""

    points: np.ndarray
    frames: np.ndarray
    conn: np.ndarray
    end_frames: np.ndarray
    section: np.ndarray
    section_names: tuple[str, ...]
    part: np.ndarray
    part_names: tuple[str, ...]
    sets: dict

    @property
    def n_nodes(self) -> int:
        return len(self.points)

    @property
    def n_elements(self) -> int:
        return len(self.conn)


@dataclass(frozen=True)
class _Part:
    name: str
    points: np.ndarray
    conn: np.ndarray
    end_frames: np.ndarray
    sections: list  # per element section name
    sets: dict  # local node sets, short names


def _generated(tag: str, spec: dict, path) -> _Part:
    try:
        if tag == "rod":
            g = generate.straight_rod(spec["from"], spec["to"], spec["elements"], spec["up"])
        else:
            g = generate.arc(spec["center"], spec["radius"], spec["start"], spec["normal"],
                             spec["angle"], spec["elements"], spec["up"])
    except CaseError as exc:
        raise within(exc, path) from None
    last = int(g.conn[-1, 1])
    sets = {"start": np.array([0]), "end": np.array([last]), "all": np.arange(len(g.points))}
    return _Part(spec["name"], g.points, g.conn, g.frames[g.conn],
                 [spec["section"]] * len(g.conn), sets)


def _from_file(spec: dict, path, resolve) -> _Part:
    fm = read_mesh(resolve(spec["file"]), render((*path, "file")))
    if fm.plates:
        raise Unavailable(f"{spec['file']!r} has {fm.plates} triangle/quad cells besides its line "
                        "cells; plates are not available yet in this version of rodsim",
                        key=render((*path, "file")))
    lengths = np.linalg.norm(fm.points[fm.lines[:, 1]] - fm.points[fm.lines[:, 0]], axis=1)
    if np.any(lengths == 0.0):
        e = int(np.flatnonzero(lengths == 0.0)[0])
        raise CaseError(f"line cell {e} of {spec['file']!r} has zero length", key=render(path))
    names = [None] * len(fm.lines)
    for cell_set, section in spec["sections"].items():
        if cell_set not in fm.element_sets:
            known = ", ".join(sorted(fm.element_sets)) or "none"
            raise CaseError(f"the mesh has no cell set {cell_set!r} of line cells (it has: "
                            f"{known})", key=render((*path, "sections", cell_set)))
        for e in fm.element_sets[cell_set]:
            names[e] = section
    missing = [e for e, n in enumerate(names) if n is None]
    if missing:
        if spec["section"] is None:
            raise CaseError(f"{len(missing)} line cells (the first is cell {missing[0]}) are in "
                            "no cell set mapped under `sections`; map their set or give a "
                            "default `section`", key=render(path))
        for e in missing:
            names[e] = spec["section"]
    tangents = (fm.points[fm.lines[:, 1]] - fm.points[fm.lines[:, 0]]) / lengths[:, None]
    frames = np.empty((len(fm.lines), 3, 3))
    for e, t in enumerate(tangents):
        up = generate.default_up(t) if spec["up"] is None else np.asarray(spec["up"])
        try:
            frames[e] = generate.frame(t, up)
        except CaseError:
            raise CaseError(f"`up` is parallel to line cell {e}; give a different `up`",
                            key=render((*path, "up"))) from None
    # drop points no line uses (e.g. geometry points) by renumbering
    used = np.unique(fm.lines)
    renumber = -np.ones(len(fm.points), dtype=np.int64)
    renumber[used] = np.arange(len(used))
    sets = {}
    for name, nodes in fm.node_sets.items():
        kept = renumber[nodes[nodes < len(renumber)]]
        sets[name] = np.unique(kept[kept >= 0])
    return _Part(spec["name"], fm.points[used], renumber[fm.lines],
                 np.repeat(frames[:, None], 2, axis=1), names, sets)


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


def build_mesh(parts: list, case_sets: dict, resolve, merge_tolerance=None) -> Mesh:
    """The global Mesh from normalised ``mesh`` entries ((tag, spec) pairs) and ``sets``.

    resolve: maps a case-relative file name to a Path.
    """
    built, seen = [], {}
    for i, (tag, spec) in enumerate(parts):
        path = ("mesh", i, tag) if tag != "file" else ("mesh", i)
        if tag == "rectangle":
            raise Unavailable("plate parts are not available yet in this version of rodsim",
                            key=render(path))
        if spec["name"] in seen:
            raise CaseError(f"part name {spec['name']!r} is already used by "
                            f"mesh[{seen[spec['name']]}]", key=render((*path, "name")))
        seen[spec["name"]] = i
        built.append(_generated(tag, spec, path) if tag != "file" else
                     _from_file(spec, path, resolve))

    offsets = np.cumsum([0] + [len(p.points) for p in built])
    points = np.concatenate([p.points for p in built])
    conn = np.concatenate([p.conn + o for p, o in zip(built, offsets, strict=False)])
    end_frames = np.concatenate([p.end_frames for p in built])
    size = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
    tol = 1e-8 * max(size, 1e-300) if merge_tolerance is None else merge_tolerance
    rep = _merge_map(points, tol)
    keep = np.unique(rep)
    index = -np.ones(len(points), dtype=np.int64)
    index[keep] = np.arange(len(keep))
    new = index[rep]
    conn = new[conn]
    degenerate = np.flatnonzero(conn[:, 0] == conn[:, 1])
    part_of = np.concatenate([np.full(len(p.conn), k) for k, p in enumerate(built)])
    if len(degenerate):
        e = int(degenerate[0])
        raise CaseError(f"an element of part {built[part_of[e]].name!r} is shorter than the "
                        f"merge tolerance {tol:g}", key=render(("mesh", int(part_of[e]))))
    merged = len(points) - len(keep)
    if merged:
        log.info("merged %d coincident nodes (tolerance %g)", merged, tol)

    n = len(keep)
    # the first element end touching a node gives its frame
    first = np.full(n, 2 * len(conn))
    for side in (0, 1):
        np.minimum.at(first, conn[:, side], np.arange(len(conn)) * 2 + side)
    frames = end_frames.reshape(-1, 3, 3)[first]

    section_names = tuple(dict.fromkeys(s for p in built for s in p.sections))
    section = np.array([section_names.index(s) for p in built for s in p.sections], np.int64)
    sets = {}
    for p, o in zip(built, offsets, strict=False):
        for name, nodes in p.sets.items():
            sets[f"{p.name}.{name}"] = np.unique(new[np.asarray(nodes, dtype=np.int64) + o])
    mesh_points = points[keep]
    for name, (kind, arg) in case_sets.items():
        sets[name] = select(kind, arg, mesh_points, sets, ("sets", name, kind))
    return Mesh(mesh_points, np.ascontiguousarray(frames), np.ascontiguousarray(conn),
                np.ascontiguousarray(end_frames), section, section_names,
                part_of.astype(np.int64), tuple(p.name for p in built), sets)


def select(kind: str, arg, points: np.ndarray, sets: dict, path) -> np.ndarray:
    """Nodes of a `sets:` selector: near, box, nodes or union."""
    if kind == "near":
        return np.array([int(np.argmin(np.linalg.norm(points - np.asarray(arg), axis=1)))])
    if kind == "box":
        if len(arg) != 2:
            raise CaseError(f"expected two corners [[xmin, ymin, zmin], [xmax, ymax, zmax]], got "
                            f"{len(arg)} points", key=render(path))
        lo, hi = np.asarray(arg[0]), np.asarray(arg[1])
        if np.any(lo > hi):
            raise CaseError(f"the first corner must be the lower one, got {list(lo)} and "
                            f"{list(hi)}", key=render(path))
        nodes = np.flatnonzero(np.all((points >= lo) & (points <= hi), axis=1))
        if len(nodes) == 0:
            raise CaseError("the box contains no node", key=render(path))
        return nodes
    if kind == "nodes":
        nodes = np.asarray(arg, dtype=np.int64)
        if nodes.max() >= len(points):
            raise CaseError(f"node {int(nodes.max())} does not exist; the mesh has "
                            f"{len(points)} nodes (0 to {len(points) - 1})", key=render(path))
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
