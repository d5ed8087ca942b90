"""Thin-walled profiles: I/H sections, rectangular hollow sections (boxes), channels and
angles (docs/stresses.md, "Profiles").

Section properties (A, I2, I3) are exact for the profile made of rectangles (no fillets);
the torsion constant and the stresses follow thin-walled theory (Megson, *Aircraft Structures
for Engineering Students*, 4th ed., ch. 17-18; Timoshenko & Gere, sec. 6.8-6.9):

- a profile is a set of walls, straight midline segments of thickness t, in principal axes
  through the centroid;
- shear flow of a shear force, integrated along each wall in its direction u from a free end
  (or from the flows that enter its start), q = q_in - V2/I3 int x2 t ds - V3/I2 int x3 t ds;
  the shear stress is q / t along u, uniform through the wall;
- open profiles in torsion: J = sum L t^3 / 3, tau = T t / J along the wall, opposite on its
  two faces; closed (the box, one cell): Bredt, tau = T / (2 A_m t), J = 4 A_m^2 / sum(L / t),
  and the flow of a shear force closed by the symmetry of the box (zero at the middle of the
  walls across the force).

The recovery points are on both faces of every wall, m per wall and face, at the ends and m - 2
points between (normal stress at the face, shear stress of the midline).
"""

import math
from typing import NamedTuple

import numpy as np

from rodsim.model.section_geometry import Boundary, ShapeProperties


class Wall(NamedTuple):
    """A midline segment from p0 to p1 (section coordinates) of thickness t; feeds: the walls
    whose end flows enter at p0 (open profiles)."""

    p0: tuple
    p1: tuple
    t: float
    feeds: tuple = ()


def _rectangles(rects) -> tuple[float, np.ndarray, np.ndarray]:
    """(A, centroid (2,), second moments (Iyy, Izz, Iyz) about the centroid, y = x2, z = x3)
    of axis-aligned rectangles (y0, z0, y1, z1)."""
    r = np.asarray(rects, dtype=float)
    w, h = r[:, 2] - r[:, 0], r[:, 3] - r[:, 1]
    a = w * h
    c = np.column_stack([(r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2])
    area = a.sum()
    g = (a[:, None] * c).sum(axis=0) / area
    d = c - g
    i_zz = np.sum(w * h**3 / 12 + a * d[:, 1] ** 2)  # int z^2: about the y axis (d2)
    i_yy = np.sum(h * w**3 / 12 + a * d[:, 0] ** 2)  # int y^2
    i_yz = np.sum(a * d[:, 0] * d[:, 1])
    return area, g, np.array([i_zz, i_yy, i_yz])


def _samples(walls, m: int, area: float, i2: float, i3: float, j: float, closed=None):
    """Boundary of the walls: m points per wall on each face; closed: A_m of a box (Bredt)."""
    xs, cts, cv2s, cv3s = [], [], [], []
    end_flow = {}  # wall -> (q of unit V2, q of unit V3) at its end
    for k, w in enumerate(walls):
        p0, p1 = np.asarray(w.p0, float), np.asarray(w.p1, float)
        length = float(np.linalg.norm(p1 - p0))
        u = (p1 - p0) / length
        n = np.array([-u[1], u[0]])
        s = np.linspace(0.0, length, m)
        mid = p0 + np.outer(s, u)
        q_in = np.sum([end_flow[f] for f in w.feeds], axis=0) if w.feeds else np.zeros(2)
        # int_0^s x t ds along the wall, x linear in s
        first = w.t * (p0[None, :] * s[:, None] + 0.5 * u[None, :] * s[:, None] ** 2)
        q2 = q_in[0] - first[:, 0] / i3
        q3 = q_in[1] - first[:, 1] / i2
        end_flow[k] = np.array([q2[-1], q3[-1]])
        for side in (1.0, -1.0):
            xs.append(mid + side * 0.5 * w.t * n)
            if closed is None:  # open: Saint-Venant strips, opposite on the two faces
                cts.append(np.tile(-side * w.t / j * u, (m, 1)))
            else:  # Bredt: counter-clockwise (walls go counter-clockwise), both faces
                cts.append(np.tile(u / (2.0 * closed * w.t), (m, 1)))
            cv2s.append((q2 / w.t)[:, None] * u)
            cv3s.append((q3 / w.t)[:, None] * u)
    return Boundary(*(np.concatenate(a) for a in (xs, cts, cv2s, cv3s)))


# --- I/H ---------------------------------------------------------------------------------------


def _i_parts(size):
    h, b, tw, tf = size
    if not (2 * tf < h and tw < b):
        raise ValueError(
            f"i_section [h, b, tw, tf]: expected 2 tf < h and tw < b, got {list(size)}"
        )
    rects = [
        (-b / 2, h / 2 - tf, b / 2, h / 2),
        (-b / 2, -h / 2, b / 2, -h / 2 + tf),
        (-tw / 2, -h / 2 + tf, tw / 2, h / 2 - tf),
    ]
    area, _, (i2, i3, _) = _rectangles(rects)
    d = h - tf  # between the flanges' midlines
    j = (2 * b * tf**3 + (h - 2 * tf) * tw**3) / 3
    web = area - 2 * b * tf + tw * tf  # shear area along the web (EN 1993-1-1, 6.2.6, r = 0)
    flanges = 5.0 / 6.0 * 2 * b * tf  # two rectangles along d2
    props = ShapeProperties("i_section", area, i2, i3, j, k2=flanges / area, k3=web / area)
    walls = [
        Wall((-b / 2, d / 2), (0.0, d / 2), tf),  # top flange, from the tips to the web
        Wall((b / 2, d / 2), (0.0, d / 2), tf),
        Wall((0.0, d / 2), (0.0, -d / 2), tw, feeds=(0, 1)),  # web, downwards
        Wall((-b / 2, -d / 2), (0.0, -d / 2), tf),  # bottom flange, from the tips
        Wall((b / 2, -d / 2), (0.0, -d / 2), tf),
    ]
    return props, walls


def i_section_properties(size) -> ShapeProperties:
    """I or H profile [h, b, tw, tf]: height h along d3, flange width b along d2, web and flange
    thickness; A, I2 = (b h^3 - (b - tw)(h - 2 tf)^3) / 12, I3 exact; J = (2 b tf^3 + (h - 2 tf)
    tw^3) / 3; shear factors from the web area (A - 2 b tf + tw tf) and 5/6 of the flanges'."""
    return _i_parts(size)[0]


def i_section_boundary(size, m: int) -> Boundary:
    props, walls = _i_parts(size)
    return _samples(walls, m, props.area, props.I2, props.I3, props.J)


# --- channel -----------------------------------------------------------------------------------


def _channel_parts(size):
    h, b, tw, tf = size
    if not (2 * tf < h and tw < b):
        raise ValueError(f"channel [h, b, tw, tf]: expected 2 tf < h and tw < b, got {list(size)}")
    rects = [
        (0.0, h / 2 - tf, b, h / 2),
        (0.0, -h / 2, b, -h / 2 + tf),
        (0.0, -h / 2 + tf, tw, h / 2 - tf),
    ]
    area, g, (i2, i3, _) = _rectangles(rects)
    y = -g[0]  # the web's outer face at x2 = -g
    d = h - tf
    j = (2 * b * tf**3 + (h - 2 * tf) * tw**3) / 3
    web = area - 2 * b * tf + tw * tf
    props = ShapeProperties(
        "channel", area, i2, i3, j, k2=5.0 / 6.0 * 2 * b * tf / area, k3=web / area
    )
    xw = y + tw / 2  # the web's midline
    walls = [
        Wall((y + b, d / 2), (xw, d / 2), tf),  # top flange, from the tip to the web
        Wall((xw, d / 2), (xw, -d / 2), tw, feeds=(0,)),  # web, downwards
        Wall((y + b, -d / 2), (xw, -d / 2), tf),  # bottom flange, from the tip
    ]
    return props, walls


def channel_properties(size) -> ShapeProperties:
    """Channel [h, b, tw, tf]: web of height h along d3 on the -d2 side, flanges of width b
    towards +d2, the centroid at the origin (shear centre offset ignored: docs/stresses.md)."""
    return _channel_parts(size)[0]


def channel_boundary(size, m: int) -> Boundary:
    props, walls = _channel_parts(size)
    return _samples(walls, m, props.area, props.I2, props.I3, props.J)


# --- angle -------------------------------------------------------------------------------------


def _angle_parts(size):
    h, b, t = size
    if not (t < h and t < b):
        raise ValueError(f"angle [h, b, t]: expected t < h and t < b, got {list(size)}")
    rects = [(0.0, 0.0, b, t), (0.0, t, t, h)]  # legs along +y (width b) and +z (height h)
    area, g, (izz, iyy, iyz) = _rectangles(rects)
    # principal axes: the rotation by theta that makes the product of inertia vanish
    theta = 0.5 * math.atan2(2.0 * iyz, iyy - izz)
    c, s = math.cos(theta), math.sin(theta)

    def principal(p):  # leg coordinates -> principal (x2, x3) about the centroid
        y, z = p[0] - g[0], p[1] - g[1]
        return (c * y + s * z, -s * y + c * z)

    i2 = s * s * iyy + c * c * izz - 2 * s * c * iyz
    i3 = c * c * iyy + s * s * izz + 2 * s * c * iyz
    j = (b * t**3 + (h - t) * t**3) / 3
    props = ShapeProperties(
        "angle", area, i2, i3, j, k2=5.0 / 6.0 * b * t / area, k3=5.0 / 6.0 * h * t / area
    )
    corner = principal((t / 2, t / 2))
    walls = [
        Wall(principal((b, t / 2)), corner, t),  # horizontal leg, from its tip to the corner
        Wall(principal((t / 2, h)), corner, t),  # vertical leg, from its tip
    ]
    return props, walls, theta


def angle_properties(size) -> ShapeProperties:
    """Angle [h, b, t]: legs of length h and b, thickness t; d2, d3 are its principal axes
    (docs/stresses.md says where the legs are)."""
    return _angle_parts(size)[0]


def angle_boundary(size, m: int) -> Boundary:
    props, walls, _ = _angle_parts(size)
    return _samples(walls, m, props.area, props.I2, props.I3, props.J)


def angle_axes(size) -> float:
    """The angle (radians) from the leg along b to d2, the first principal axis."""
    return _angle_parts(size)[2]


# --- rectangular hollow section ----------------------------------------------------------------


def _box_parts(size):
    h, b, t = size
    if not 2 * t < min(h, b):
        raise ValueError(f"box [h, b, t]: expected 2 t < h and 2 t < b, got {list(size)}")
    area = b * h - (b - 2 * t) * (h - 2 * t)
    i2 = (b * h**3 - (b - 2 * t) * (h - 2 * t) ** 3) / 12
    i3 = (h * b**3 - (h - 2 * t) * (b - 2 * t) ** 3) / 12
    bm, hm = b - t, h - t
    am = bm * hm
    j = 4 * am * am * t / (2 * (bm + hm))
    props = ShapeProperties("box", area, i2, i3, j, k2=b / (b + h), k3=h / (b + h))
    return props, bm, hm, am


def box_properties(size) -> ShapeProperties:
    """Rectangular hollow section [h, b, t]: height h along d3, width b along d2, wall t;
    A, I2, I3 exact; J = 4 A_m^2 t / p_m (Bredt, midline area and perimeter); shear factors
    h / (b + h) along d3 and b / (b + h) along d2 (EN 1993-1-1, 6.2.6)."""
    return _box_parts(size)[0]


def box_boundary(size, m: int) -> Boundary:
    """The walls counter-clockwise from the middle of the bottom wall; shear flow of V3 zero at
    the middle of the top and bottom walls, of V2 at the middle of the side walls (symmetry)."""
    props, bm, hm, am = _box_parts(size)
    t = size[2]
    corners = [(bm / 2, -hm / 2), (bm / 2, hm / 2), (-bm / 2, hm / 2), (-bm / 2, -hm / 2)]
    starts = [(0.0, -hm / 2), (bm / 2, 0.0), (0.0, hm / 2), (-bm / 2, 0.0)]
    walls = []
    for k in range(4):  # each wall in two halves meeting at its corner
        walls.append(Wall(starts[k], corners[k], t))
        walls.append(Wall(corners[k], starts[(k + 1) % 4], t))
    out = _samples(walls, m, props.area, props.I2, props.I3, props.J, closed=am)
    # the box's shear flows, closed by symmetry, at the midline points in _samples' order
    mids, dirs = [], []
    for w in walls:
        p0, p1 = np.asarray(w.p0), np.asarray(w.p1)
        line = p0 + np.outer(np.linspace(0.0, 1.0, m), p1 - p0)
        mids += [line, line]
        dirs.append(np.tile((p1 - p0) / np.linalg.norm(p1 - p0), (2 * m, 1)))
    cv2, cv3 = _box_flows(np.concatenate(mids), np.concatenate(dirs), bm, hm, props.I2, props.I3)
    return Boundary(out.x, out.cT, cv2, cv3)


def _box_flows(x, u, bm, hm, i2, i3):
    """Shear stress per unit V2, V3 at midline points x with wall directions u."""
    cv2, cv3 = np.zeros_like(x), np.zeros_like(x)
    horizontal = np.abs(u[:, 0]) > 0.5
    y, z = x[:, 0], x[:, 1]
    # V3: webs carry V3 Q / (I2 t) upwards with Q = t (bm/2)(hm/2) + t (hm^2/4 - z^2)/2 (per t);
    # top and bottom walls from their middle: -+ V3 hm y / (2 I2) along d2
    cv3[~horizontal, 1] = ((bm / 2) * (hm / 2) + (hm * hm / 4 - z[~horizontal] ** 2) / 2) / i2
    cv3[horizontal, 0] = -np.sign(z[horizontal]) * hm * y[horizontal] / (2 * i2)
    # V2: the same turned by 90 degrees
    cv2[horizontal, 0] = ((hm / 2) * (bm / 2) + (bm * bm / 4 - y[horizontal] ** 2) / 2) / i3
    cv2[~horizontal, 1] = -np.sign(y[~horizontal]) * bm * z[~horizontal] / (2 * i3)
    return cv2, cv3
