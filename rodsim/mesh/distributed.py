"""Distributed loads lumped to nodes (docs/cases.md, "Loads"): per unit reference length
along rods, per unit reference area on plates, per unit reference volume on both.

Each is lumped to the consistent nodal loads of the element's shape functions N_a, which is
exact for the element, not an approximation:
- a two-node rod element of reference length h (N_1 = 1 - s/h, N_2 = s/h): integral N_a q ds
  = q h / 2 at each end;
- a plate cell: integral N_a dA over its reference surface, by 2 x 2 Gauss points for a
  bilinear quadrilateral (exact: the integrand is polynomial), and A / 3 for a triangle.

In the section frame the components q are turned by the reference frame at each end or
corner (the mesh's rod end frames, plate corner frames): node a receives w_a Lambda_a q. The
result is, for each node, a matrix that turns q into its lumped load in global axes at the
reference, so that a value set later (rodsim.controls) is lumped the same way.
"""

import numpy as np

from rodsim.case.schema import render
from rodsim.errors import CaseError

_GAUSS = 1.0 / np.sqrt(3.0)
# the bilinear quadrilateral's 2 x 2 Gauss points (xi, eta), weight 1 each
_POINTS = np.array([[-_GAUSS, -_GAUSS], [_GAUSS, -_GAUSS], [_GAUSS, _GAUSS], [-_GAUSS, _GAUSS]])
_CORNERS = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])


def elements_within(mesh, nodes: np.ndarray, path, key: str) -> np.ndarray:
    """The rod elements whose two ends are in nodes; CaseError naming the key if none."""
    inside = np.isin(mesh.conn, nodes).all(axis=1)
    if not inside.any():
        raise CaseError(
            f"{key} acts on rod elements, and this set holds none (both ends of an element "
            "must be in the set)",
            key=render(path),
        )
    return np.flatnonzero(inside)


def _gather(cells: np.ndarray, per_corner: np.ndarray):
    """(nodes (Q,), maps (Q,3,3)) of per-corner matrices (C, K, 3, 3) at cells (C, K)."""
    nodes, where = np.unique(cells, return_inverse=True)
    maps = np.zeros((len(nodes), 3, 3))
    np.add.at(maps, where.reshape(-1), per_corner.reshape(-1, 3, 3))
    return nodes, maps


def _turned(weights: np.ndarray, frames: np.ndarray | None) -> np.ndarray:
    """weights (C, K) times the frames (C, K, 3, 3), or times the identity (frames None)."""
    if frames is None:
        return weights[:, :, None, None] * np.eye(3)
    return weights[:, :, None, None] * frames


def line_maps(mesh, elements: np.ndarray, frame: str, scale=None):
    """(nodes, maps) of a load per unit length along the rod elements (times scale (E,) per
    element where given: a body force per volume times the sections' areas)."""
    conn = mesh.conn[elements]
    half = 0.5 * np.linalg.norm(mesh.points[conn[:, 1]] - mesh.points[conn[:, 0]], axis=1)
    if scale is not None:
        half = half * scale
    weights = np.repeat(half[:, None], 2, axis=1)
    frames = mesh.end_frames[elements] if frame == "section" else None
    return _gather(conn, _turned(weights, frames))


def corner_areas(points: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """(C, 4) integral N_a dA of each corner of plate cells (C, 4) (triangles repeat their
    last corner, which then gets 0) on their reference surface."""
    x = points[cells]  # (C, 4, 3)
    tri = cells[:, 3] == cells[:, 2]
    out = np.zeros(cells.shape)
    if tri.any():
        t = x[tri]
        area = 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1)
        out[tri, :3] = area[:, None] / 3.0
    quad = ~tri
    if quad.any():
        q = x[quad]
        for xi, eta in _POINTS:
            n = 0.25 * (1 + xi * _CORNERS[:, 0]) * (1 + eta * _CORNERS[:, 1])  # (4,)
            d_xi = 0.25 * _CORNERS[:, 0] * (1 + eta * _CORNERS[:, 1])
            d_eta = 0.25 * _CORNERS[:, 1] * (1 + xi * _CORNERS[:, 0])
            jac = np.linalg.norm(
                np.cross(np.einsum("k,ckj->cj", d_xi, q), np.einsum("k,ckj->cj", d_eta, q)),
                axis=1,
            )
            out[quad] += jac[:, None] * n[None, :]
    return out


def surface_maps(mesh, cells: np.ndarray, frame: str, scale=None):
    """(nodes, maps) of a load per unit area on plate cells (indices into mesh.plates; times
    scale (C,) per cell where given: a body force per volume times the thickness)."""
    corners = mesh.plates[cells]
    weights = corner_areas(mesh.points, corners)
    if scale is not None:
        weights = weights * scale[:, None]
    frames = mesh.plate_frames[cells] if frame == "section" else None
    return _gather(corners, _turned(weights, frames))


def merged(*parts):
    """(nodes, maps) of several (nodes, maps) summed node by node."""
    nodes = np.concatenate([p[0] for p in parts])
    maps = np.concatenate([p[1] for p in parts])
    return _gather(nodes[:, None], maps[:, None])
