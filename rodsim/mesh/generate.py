"""Generated parts: straight rods and circular arcs, flat rectangular plates; their nodal frames.

Frames are rotation matrices whose columns are the directors (d1, d2, d3). Rods: d1 the
tangent, d3 the user's ``up`` direction made orthogonal to d1, d2 = d3 x d1. Plates: d1, d2 in
the plate's plane, d3 the normal (the plate director).
"""

from dataclasses import dataclass

import numpy as np

from rodsim.errors import CaseError


@dataclass(frozen=True)
class RodPart:
    """points (N,3), conn (E,2) int64, frames (N,3,3)."""

    points: np.ndarray
    conn: np.ndarray
    frames: np.ndarray


def _unit(v, key: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    n = np.linalg.norm(v)
    if not np.isfinite(n) or n == 0.0:
        raise CaseError("expected a non-zero finite vector", key=key)
    return v / n


def default_up(tangent: np.ndarray) -> np.ndarray:
    """A stable up direction: global z unless the rod is nearly vertical, then global x."""
    z = np.array([0.0, 0.0, 1.0])
    return z if abs(tangent @ z) < 0.9 else np.array([1.0, 0.0, 0.0])


def frame(tangent, up) -> np.ndarray:
    """Columns (d1, d2, d3) with d1 = tangent, d3 = up orthogonalised, d2 = d3 x d1."""
    d1 = _unit(tangent, "tangent")
    d3 = np.asarray(up, dtype=float) - (np.asarray(up, dtype=float) @ d1) * d1
    if np.linalg.norm(d3) < 1e-8 * max(1.0, np.linalg.norm(up)):
        raise CaseError("the up direction is parallel to the rod", key="up")
    d3 /= np.linalg.norm(d3)
    return np.column_stack([d1, np.cross(d3, d1), d3])


def straight_rod(start, end, elements: int, up=None) -> RodPart:
    """A straight rod from start to end with `elements` equal elements."""
    if int(elements) < 1:
        raise CaseError("expected at least one element", key="elements")
    a = np.asarray(start, dtype=float)
    b = np.asarray(end, dtype=float)
    tangent = _unit(b - a, "to")
    up = default_up(tangent) if up is None else np.asarray(up, dtype=float)
    s = np.linspace(0.0, 1.0, int(elements) + 1)
    points = a + s[:, None] * (b - a)
    conn = np.column_stack([np.arange(elements), np.arange(1, elements + 1)]).astype(np.int64)
    frames = np.repeat(frame(tangent, up)[None], len(points), axis=0)
    return RodPart(points, conn, frames)


def arc(center, radius: float, start, normal, angle_deg: float, elements: int, up=None) -> RodPart:
    """A circular arc turning right-handed about `normal` from `start`; 360 degrees closes it.

    Nodal frames follow the exact circle tangent. The stress-free reference curvature of the
    one-point geodesic element is then (element angle)/(chord) = (1/radius)(1 + dphi^2/24 + ...).
    """
    if int(elements) < 1:
        raise CaseError("expected at least one element", key="elements")
    if not (radius > 0.0 and np.isfinite(radius)):
        raise CaseError("expected a positive radius", key="radius")
    c = np.asarray(center, dtype=float)
    n = _unit(normal, "normal")
    r0 = np.asarray(start, dtype=float) - c
    r0 = r0 - (r0 @ n) * n
    if np.linalg.norm(r0) == 0.0:
        raise CaseError("the start point lies on the arc axis", key="start")
    e1 = r0 / np.linalg.norm(r0)
    e2 = np.cross(n, e1)
    closed = abs(abs(angle_deg) - 360.0) < 1e-9
    n_nodes = int(elements) if closed else int(elements) + 1
    phi = np.deg2rad(angle_deg) * np.arange(n_nodes) / int(elements)
    radial = np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2
    points = c + radius * radial
    tangent = -np.sin(phi)[:, None] * e1 + np.cos(phi)[:, None] * e2
    if angle_deg < 0:
        tangent = -tangent
    up = n if up is None else np.asarray(up, dtype=float)
    frames = np.array([frame(t, up) for t in tangent])
    idx = np.arange(int(elements))
    conn = np.column_stack([idx, (idx + 1) % n_nodes]).astype(np.int64)
    return RodPart(points, conn, frames)


@dataclass(frozen=True)
class PlatePart:
    """points (N,3); plates (P,4) int64 quads going round counter-clockwise about d3;
    frames (N,3,3) nodal frames (d1 = e1, d2 = e2, d3 = e1 x e2, the normal); sets: short
    name -> (k,) int64 node indices."""

    points: np.ndarray
    plates: np.ndarray
    frames: np.ndarray
    sets: dict


def plate_axes(e1, e2) -> np.ndarray:
    """Columns (e1, e2, e1 x e2): e1 normalised, e2 made orthogonal to it (Gram-Schmidt), so
    the user may give any e2 in the plate's plane, not only an exactly perpendicular one."""
    d1 = _unit(e1, "e1")
    d2 = np.asarray(e2, dtype=float) - (np.asarray(e2, dtype=float) @ d1) * d1
    if np.linalg.norm(d2) < 1e-8 * max(1.0, np.linalg.norm(e2)):
        raise CaseError("expected a direction not parallel to e1", key="e2")
    d2 /= np.linalg.norm(d2)
    return np.column_stack([d1, d2, np.cross(d1, d2)])


def _rectangle_sets(n1: int, n2: int) -> dict:
    """Node sets of an (n1 x n2)-element grid numbered i + (n1 + 1) j. Both the names of
    docs/case_reference.md (x0, x1, y0, y1, boundary) and the descriptive ones (left, right,
    bottom, top, cornerIJ) are given: the first are the contract, the second read better."""
    grid = np.arange((n1 + 1) * (n2 + 1), dtype=np.int64).reshape(n2 + 1, n1 + 1)
    edges = {"left": grid[:, 0], "right": grid[:, -1], "bottom": grid[0], "top": grid[-1]}
    sets = {"all": grid.ravel(), **edges}
    sets |= {"x0": edges["left"], "x1": edges["right"], "y0": edges["bottom"], "y1": edges["top"]}
    sets["boundary"] = np.unique(np.concatenate(list(edges.values())))
    for i, col in (("0", 0), ("1", -1)):
        for j, row in (("0", 0), ("1", -1)):
            sets[f"corner{i}{j}"] = np.array([grid[row, col]])
    return {k: np.array(v, dtype=np.int64) for k, v in sets.items()}


def rectangle(origin, size, elements, e1=(1.0, 0.0, 0.0), e2=(0.0, 1.0, 0.0)) -> PlatePart:
    """A flat rectangle origin + [0, a] e1 + [0, b] e2 of n1 x n2 equal quads (size = (a, b),
    elements = (n1, n2)); nodes numbered along e1 first."""
    n1, n2 = (int(n) for n in elements)
    if n1 < 1 or n2 < 1:
        raise CaseError("expected at least one element along each side", key="elements")
    a, b = (float(s) for s in size)
    if not (a > 0.0 and b > 0.0 and np.isfinite(a * b)):
        raise CaseError("expected two positive finite lengths", key="size")
    axes = plate_axes(e1, e2)
    s = np.linspace(0.0, a, n1 + 1)
    t = np.linspace(0.0, b, n2 + 1)
    ss, tt = np.meshgrid(s, t)  # rows: e2 index j, columns: e1 index i
    points = (
        np.asarray(origin, dtype=float)
        + ss.ravel()[:, None] * axes[:, 0]
        + tt.ravel()[:, None] * axes[:, 1]
    )
    i, j = np.meshgrid(np.arange(n1), np.arange(n2))
    lower = (i + (n1 + 1) * j).ravel()
    # counter-clockwise about e1 x e2, so the element normal of the node order is d3
    plates = np.column_stack([lower, lower + 1, lower + n1 + 2, lower + n1 + 1]).astype(np.int64)
    frames = np.repeat(axes[None], len(points), axis=0)
    return PlatePart(points, plates, frames, _rectangle_sets(n1, n2))


def cell_frames(points: np.ndarray, plates: np.ndarray) -> np.ndarray:
    """(P,3,3) frames of plate cells (P,4) (triangles repeat the last node): d3 the unit normal
    in the right-hand sense of the node order, d1 global x projected on the plane (global y if
    x is within ~25 degrees of the normal, where the projection becomes ill-conditioned),
    d2 = d3 x d1. Zero-area cells give a NaN normal; the caller reports them."""
    x = points[plates]
    # the diagonals' cross product is the area-weighted mean normal of a (warped) quad, and
    # reduces to the usual edge cross product for a triangle (x3 == x2)
    normal = np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        d3 = normal / np.linalg.norm(normal, axis=1)[:, None]
    ref = np.where((np.abs(d3[:, 0]) > 0.9)[:, None], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    d1 = ref - np.sum(ref * d3, axis=1)[:, None] * d3
    with np.errstate(invalid="ignore", divide="ignore"):
        d1 /= np.linalg.norm(d1, axis=1)[:, None]
    return np.stack([d1, np.cross(d3, d1), d3], axis=2)
