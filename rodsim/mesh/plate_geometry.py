"""Geometry of the plate cells of a mesh that the model needs: the nodal director field of a
faceted shell (mean normals, consistently oriented cells), the plate boundary edges that
carry an edge load, and the plates inside a node set (pressure)."""

import numpy as np

from rodsim.case.schema import render
from rodsim.errors import CaseError
from rodsim.mesh.assemble import Mesh


def plate_node_frames(points, frames, plates) -> np.ndarray:
    """Nodal frames with, at every plate node, d3 = the mean (area-weighted) reference normal
    of the plates around it (a smooth director field over a faceted shell), d1 = the node's
    given d1 projected on that plane, d2 = d3 x d1. Rods there keep their own section frames
    through their end offsets (RodElements)."""
    out = np.array(frames, dtype=float, copy=True)
    if len(plates) == 0:
        return out
    p = points[plates]
    # quads: the diagonals' cross product is twice the vector area; triangles: the edges'
    normal = np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1])
    tri = plates[:, 3] == plates[:, 2]
    normal[tri] = np.cross(p[tri, 1] - p[tri, 0], p[tri, 2] - p[tri, 0])
    normal *= consistent_orientation(plates)[:, None]
    acc = np.zeros_like(points)
    for c in range(4):
        on = ~tri if c == 3 else np.ones(len(plates), dtype=bool)
        np.add.at(acc, plates[on, c], normal[on])
    nodes = np.unique(plates)
    size = np.linalg.norm(acc[nodes], axis=1)
    folded = size <= 1e-9 * np.max(size)
    if np.any(folded):
        raise CaseError(
            f"the plates around node {int(nodes[np.argmax(folded)])} fold back onto "
            "each other (their normals cancel): no director can be defined there",
            key="mesh",
        )
    d3 = acc[nodes] / size[:, None]
    d1 = out[nodes, :, 0] - np.sum(out[nodes, :, 0] * d3, axis=1)[:, None] * d3
    weak = np.linalg.norm(d1, axis=1) < 1e-6
    d1[weak] = out[nodes[weak], :, 1]  # d1 along the normal: take d2 instead
    d1 = d1 - np.sum(d1 * d3, axis=1)[:, None] * d3
    d1 /= np.linalg.norm(d1, axis=1)[:, None]
    out[nodes] = np.stack([d1, np.cross(d3, d1), d3], axis=2)
    return out


def consistent_orientation(plates: np.ndarray) -> np.ndarray:
    """(P,) +-1: flips that make the node order of neighbouring plate cells agree (a shared
    edge runs opposite ways in the two cells), by a walk over each connected patch from its
    first cell, across edges shared by exactly two cells. Raises CaseError for a
    non-orientable surface (a Moebius strip). Mesh files wind cells as they like; the mean
    nodal normals need one orientation."""
    n = len(plates)
    edges = {}
    for e, cell in enumerate(plates):
        corners = list(dict.fromkeys(cell.tolist()))
        for k in range(len(corners)):
            a, b = corners[k], corners[(k + 1) % len(corners)]
            edges.setdefault((min(a, b), max(a, b)), []).append((e, a < b))
    sign = np.zeros(n, dtype=np.int64)
    for start in range(n):
        if sign[start]:
            continue
        sign[start] = 1
        stack = [start]
        while stack:
            e = stack.pop()
            cell = list(dict.fromkeys(plates[e].tolist()))
            for k in range(len(cell)):
                a, b = cell[k], cell[(k + 1) % len(cell)]
                forward = (a < b) == (sign[e] > 0)
                sharing = edges[(min(a, b), max(a, b))]
                if len(sharing) != 2:  # a boundary, or a T-junction of plates: no neighbour
                    continue
                for other, other_forward in sharing:
                    if other == e:
                        continue
                    # agreeing neighbours run the shared edge in opposite directions
                    want = 1 if other_forward != forward else -1
                    if sign[other] == 0:
                        sign[other] = want
                        stack.append(other)
                    elif sign[other] != want:
                        raise CaseError(
                            f"plate cells {e} and {other} cannot be oriented "
                            "consistently (a non-orientable surface)",
                            key="mesh",
                        )
    return sign


def edge_lengths(mesh: Mesh, nodes: np.ndarray, path) -> dict:
    """node -> the length it carries of a line load: half of each plate boundary edge (an edge
    of exactly one plate cell) whose two ends are in nodes."""
    count = {}
    for cell in getattr(mesh, "plates", np.zeros((0, 4), dtype=np.int64)):
        corners = list(dict.fromkeys(cell.tolist()))
        for k in range(len(corners)):
            a, b = corners[k], corners[(k + 1) % len(corners)]
            key = (min(a, b), max(a, b))
            count[key] = count.get(key, 0) + 1
    inside = set(np.asarray(nodes).tolist())
    out = {}
    for (a, b), n in count.items():
        if n == 1 and a in inside and b in inside:
            half = 0.5 * float(np.linalg.norm(mesh.points[a] - mesh.points[b]))
            out[a] = out.get(a, 0.0) + half
            out[b] = out.get(b, 0.0) + half
    if not out:
        raise CaseError(
            "edge_force acts on plate boundary edges, and this set holds none (both "
            "ends of an edge must be in the set)",
            key=render(path),
        )
    return out


def plates_within(mesh: Mesh, nodes: np.ndarray, path, what: str = "pressure") -> np.ndarray:
    """Plate elements whose corners all belong to nodes; CaseError naming `what` (the load
    that needs them) where there are none."""
    cells = getattr(mesh, "plates", np.zeros((0, 4), dtype=np.int64))
    inside = np.isin(cells, nodes).all(axis=1)
    if not inside.any():
        rods = " (a load per length on rods is line_force)" if what == "surface_force" else ""
        raise CaseError(
            f"{what} acts on plate elements, and this set holds no plate element "
            f"(all corners of a plate must be in the set){rods}",
            key=render(path),
        )
    return np.flatnonzero(inside)
