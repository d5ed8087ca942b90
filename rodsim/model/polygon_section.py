"""Arbitrary cross-sections: a polygon analysed by sectionproperties (an optional dependency,
``pip install "rodsim[sections]"``; docs/stresses.md, "Any section").

The polygon is given in any axes; rodsim moves it to its centroid and turns it to its
principal axes (exact polygon formulas), then sectionproperties (Van Cooten, a finite-element
warping analysis; https://sectionproperties.readthedocs.io) gives the torsion constant, the
shear areas and the stresses at the mesh's boundary nodes per unit torque and shear force.
Those boundary nodes are the recovery points. The mesh is constrained to the polygon's edges, so
every vertex is one of them: the normal stress is linear over the section, so its largest value
is at a vertex and the recovery finds it exactly (tests/test_outlines.py checks the vertices).
"""

import functools
import math

import numpy as np

from rodsim.model.section_geometry import Boundary, ShapeProperties

MESH_CELLS = 400  # triangles of about A / MESH_CELLS: J within 0.1% on a rectangle


def _second_moments(p: np.ndarray) -> tuple[float, np.ndarray, float, float, float]:
    """(A, centroid, int y^2, int z^2, int y z) of a simple polygon p (K,2), counter-clockwise
    (shoelace / Green's theorem)."""
    y, z = p[:, 0], p[:, 1]
    y1, z1 = np.roll(y, -1), np.roll(z, -1)
    cross = y * z1 - y1 * z
    area = cross.sum() / 2
    cy = ((y + y1) * cross).sum() / (6 * area)
    cz = ((z + z1) * cross).sum() / (6 * area)
    iyy = ((y * y + y * y1 + y1 * y1) * cross).sum() / 12 - area * cy * cy
    izz = ((z * z + z * z1 + z1 * z1) * cross).sum() / 12 - area * cz * cz
    iyz = ((y * z1 + 2 * y * z + 2 * y1 * z1 + y1 * z) * cross).sum() / 24 - area * cy * cz
    return area, np.array([cy, cz]), iyy, izz, iyz


def principal(points) -> np.ndarray:
    """The polygon's points (K,2) in its principal axes through the centroid, counter-clockwise;
    ValueError for fewer than 3 points or no area."""
    p = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(p) < 3:
        raise ValueError(f"polygon: expected at least 3 points, got {len(p)}")
    area, c, iyy, izz, iyz = _second_moments(p)
    if area < 0:
        p, area = p[::-1], -area
        area, c, iyy, izz, iyz = _second_moments(p)
    if not area > 0:
        raise ValueError("polygon: the points enclose no area")
    theta = 0.5 * math.atan2(2.0 * iyz, iyy - izz)
    rot = np.array([[math.cos(theta), math.sin(theta)], [-math.sin(theta), math.cos(theta)]])
    return (p - c) @ rot.T


@functools.lru_cache(maxsize=32)
def _analyse(points: tuple) -> tuple[ShapeProperties, Boundary]:
    try:
        import shapely
        from sectionproperties.analysis.section import Section
        from sectionproperties.pre.geometry import Geometry
    except ImportError:
        raise ValueError(
            'polygon sections need sectionproperties: pip install "rodsim[sections]"'
        ) from None
    p = principal(points)
    geometry = Geometry(shapely.Polygon(p))
    area = float(_second_moments(p)[0])
    geometry.create_mesh(mesh_sizes=[area / MESH_CELLS])
    section = Section(geometry)
    section.calculate_geometric_properties()
    section.calculate_warping_properties()
    i2, i3, _ = section.get_ic()  # int x3^2 (about d2), int x2^2
    as2, as3 = section.get_as()
    props = ShapeProperties(
        "polygon", area, float(i2), float(i3), float(section.get_j()), k2=as2 / area, k3=as3 / area
    )
    mesh = section.mesh
    boundary = np.unique(np.asarray(mesh["segments"]).ravel())
    x = np.asarray(mesh["vertices"])[boundary]
    coefficients = []
    for load in ({"mzz": 1.0}, {"vx": 1.0}, {"vy": 1.0}):
        s = section.calculate_stress(**load).get_stress()[0]
        coefficients.append(np.column_stack([s["sig_zx"], s["sig_zy"]])[boundary])
    order = np.argsort(np.arctan2(x[:, 1], x[:, 0]))  # counter-clockwise from -d2
    return props, Boundary(x[order], *(c[order] for c in coefficients))


def polygon_properties(points) -> ShapeProperties:
    """A, I2, I3 (principal, exact), J and shear factors (sectionproperties) of a polygon."""
    return _analyse(_key(points))[0]


def polygon_boundary(points, m: int) -> Boundary:
    """The boundary nodes of the mesh (m is not used: the mesh sets the points)."""
    return _analyse(_key(points))[1]


def _key(points) -> tuple:
    return tuple(tuple(float(v) for v in row) for row in np.asarray(points).reshape(-1, 2))
