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
points between (normal stress at the face, shear stress of the midline). A face runs to where
it meets the profile's boundary, not to the midline's end: at a junction the outer face goes on
by half the other wall's thickness (to the outer corner, the heel of an angle, the corner of a
box, the back of a channel) and the inner face stops half of it short (at the root). So every
corner of the profile is a recovery point, and as the normal stress is linear over the section
its largest value, at a corner, is found exactly. A face point beyond its midline's end takes
the shear flow of that end.
"""

import math
from typing import NamedTuple

import numpy as np

from rodsim.model.section_geometry import Boundary, ShapeProperties


class Wall(NamedTuple):
    """A midline segment from p0 to p1 (section coordinates) of thickness t; feeds: the walls
    whose end flows enter at p0 (open profiles). left, right: how far the face on the left of
    the direction p0 -> p1 (side +n, n = u turned +90 degrees) and the face on its right go on
    beyond p0 and p1, as (at p0, at p1): +t'/2 where an outer face turns round a corner into a
    wall of thickness t', -t'/2 where an inner face meets one, 0 at a free end."""

    p0: tuple
    p1: tuple
    t: float
    feeds: tuple = ()
    left: tuple = (0.0, 0.0)
    right: tuple = (0.0, 0.0)


class Faces(NamedTuple):
    """Face points of a set of walls (K of them): x (K,2) on the faces; mid (K,2) the midline
    point their shear flow is taken at (the face point's foot, clipped to the wall's ends);
    u (K,2) the wall's direction; q2, q3 (K,) the open-profile flows per unit V2, V3 there;
    side (K,) +1 on the left face, -1 on the right; t (K,) the wall's thickness."""

    x: np.ndarray
    mid: np.ndarray
    u: np.ndarray
    q2: np.ndarray
    q3: np.ndarray
    side: np.ndarray
    t: np.ndarray


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


def _faces(walls, m: int, i2: float, i3: float) -> Faces:
    """m points on each face of every wall, from end to end of the face (Wall.left, right),
    left face first; the open-profile shear flows integrated from the free ends."""
    parts = []
    end_flow = {}  # wall -> (q of unit V2, q of unit V3) at its end
    for k, w in enumerate(walls):
        p0, p1 = np.asarray(w.p0, float), np.asarray(w.p1, float)
        length = float(np.linalg.norm(p1 - p0))
        u = (p1 - p0) / length
        n = np.array([-u[1], u[0]])
        q_in = np.sum([end_flow[f] for f in w.feeds], axis=0) if w.feeds else np.zeros(2)
        for side, (ext0, ext1) in ((1.0, w.left), (-1.0, w.right)):
            along = np.linspace(-ext0, length + ext1, m)
            s = np.clip(along, 0.0, length)
            mid = p0 + np.outer(s, u)
            # int_0^s x t ds along the wall, x linear in s
            first = w.t * (p0[None, :] * s[:, None] + 0.5 * u[None, :] * s[:, None] ** 2)
            parts.append(
                (
                    p0 + np.outer(along, u) + side * 0.5 * w.t * n,
                    mid,
                    np.tile(u, (m, 1)),
                    q_in[0] - first[:, 0] / i3,
                    q_in[1] - first[:, 1] / i2,
                    np.full(m, side),
                    np.full(m, w.t),
                )
            )
        total = w.t * (p0 * length + 0.5 * u * length**2)
        end_flow[k] = q_in - np.array([total[0] / i3, total[1] / i2])
    return Faces(*(np.concatenate(a) for a in zip(*parts, strict=True)))


def _samples(walls, m: int, i2: float, i3: float, j: float) -> Boundary:
    """Boundary of an open profile's walls: m points per wall on each face; torsion in
    Saint-Venant strips, opposite on the two faces."""
    f = _faces(walls, m, i2, i3)
    c_t = (-f.side * f.t / j)[:, None] * f.u
    return Boundary(f.x, c_t, (f.q2 / f.t)[:, None] * f.u, (f.q3 / f.t)[:, None] * f.u)


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
    root, flange = (0.0, -tw / 2), (-tf / 2, -tf / 2)  # inner faces stop at the other wall
    walls = [
        Wall((-b / 2, d / 2), (0.0, d / 2), tf, right=root),  # top flange, tips to the web
        Wall((b / 2, d / 2), (0.0, d / 2), tf, left=root),
        Wall((0.0, d / 2), (0.0, -d / 2), tw, feeds=(0, 1), left=flange, right=flange),  # web
        Wall((-b / 2, -d / 2), (0.0, -d / 2), tf, left=root),  # bottom flange, from the tips
        Wall((b / 2, -d / 2), (0.0, -d / 2), tf, right=root),
    ]
    return props, walls


def i_section_properties(size) -> ShapeProperties:
    """I or H profile [h, b, tw, tf]: height h along d3, flange width b along d2, web and flange
    thickness; A, I2 = (b h^3 - (b - tw)(h - 2 tf)^3) / 12, I3 exact; J = (2 b tf^3 + (h - 2 tf)
    tw^3) / 3; shear factors from the web area (A - 2 b tf + tw tf) and 5/6 of the flanges'."""
    return _i_parts(size)[0]


def i_section_boundary(size, m: int) -> Boundary:
    props, walls = _i_parts(size)
    return _samples(walls, m, props.I2, props.I3, props.J)


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
    # the flanges' outer faces go on to the web's back (x2 = y), their inner faces stop at its
    # front; the web's back face goes on to the flanges' outer faces, its front face stops at
    # their inner faces
    back, front = (0.0, tw / 2), (0.0, -tw / 2)
    inner, outer = (-tf / 2, -tf / 2), (tf / 2, tf / 2)
    walls = [
        Wall((y + b, d / 2), (xw, d / 2), tf, left=front, right=back),  # top flange, tip to web
        Wall((xw, d / 2), (xw, -d / 2), tw, feeds=(0,), left=inner, right=outer),  # web
        Wall((y + b, -d / 2), (xw, -d / 2), tf, left=back, right=front),  # bottom flange
    ]
    return props, walls


def channel_properties(size) -> ShapeProperties:
    """Channel [h, b, tw, tf]: web of height h along d3 on the -d2 side, flanges of width b
    towards +d2, the centroid at the origin (shear centre offset ignored: docs/stresses.md)."""
    return _channel_parts(size)[0]


def channel_boundary(size, m: int) -> Boundary:
    props, walls = _channel_parts(size)
    return _samples(walls, m, props.I2, props.I3, props.J)


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
    heel, root = (0.0, t / 2), (0.0, -t / 2)  # outer faces to the heel, inner to the root
    walls = [
        Wall(principal((b, t / 2)), corner, t, left=heel, right=root),  # leg b, tip to corner
        Wall(principal((t / 2, h)), corner, t, left=root, right=heel),  # leg h, from its tip
    ]
    return props, walls, theta


def angle_properties(size) -> ShapeProperties:
    """Angle [h, b, t]: legs of length h and b, thickness t; d2, d3 are its principal axes
    (docs/stresses.md says where the legs are)."""
    return _angle_parts(size)[0]


def angle_boundary(size, m: int) -> Boundary:
    props, walls, _ = _angle_parts(size)
    return _samples(walls, m, props.I2, props.I3, props.J)


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
    """The walls counter-clockwise from the middle of the bottom wall, each side in two halves
    meeting at its corner; the outer faces go on to the outer corners, the inner faces stop at
    the inner ones. Torsion: Bredt, counter-clockwise on both faces; the shear flows closed by
    symmetry (zero at the middle of the walls across the force), at the face points' feet."""
    props, bm, hm, am = _box_parts(size)
    t = size[2]
    corners = [(bm / 2, -hm / 2), (bm / 2, hm / 2), (-bm / 2, hm / 2), (-bm / 2, -hm / 2)]
    starts = [(0.0, -hm / 2), (bm / 2, 0.0), (0.0, hm / 2), (-bm / 2, 0.0)]
    walls = []
    for k in range(4):  # counter-clockwise: the left face is the inner one
        walls.append(Wall(starts[k], corners[k], t, left=(0.0, -t / 2), right=(0.0, t / 2)))
        walls.append(
            Wall(corners[k], starts[(k + 1) % 4], t, left=(-t / 2, 0.0), right=(t / 2, 0.0))
        )
    f = _faces(walls, m, props.I2, props.I3)
    c_t = np.tile(1.0 / (2.0 * am * t), (len(f.x), 1)) * f.u
    cv2, cv3 = _box_flows(f.mid, f.u, bm, hm, props.I2, props.I3)
    return Boundary(f.x, c_t, cv2, cv3)


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
