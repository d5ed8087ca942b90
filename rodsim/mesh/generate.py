"""Generated rod parts: straight rods and circular arcs with their nodal section frames.

Frames are rotation matrices whose columns are the directors (d1, d2, d3): d1 the tangent,
d3 the user's ``up`` direction made orthogonal to d1, d2 = d3 x d1.
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
