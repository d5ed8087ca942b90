"""The section outlines rodsim render draws (rodsim.model.outlines, docs/render.md): each is the
shape the stiffnesses and stresses are computed for, in the same section axes."""

import math

import numpy as np
import pytest

from rodsim.model import outlines
from rodsim.model.polygon_section import _second_moments
from rodsim.model.sections import section_from_resultants
from rodsim.model.shapes import recovery_points, shape_properties

SOLID = {
    "rectangle": [0.3, 0.5],
    "i_section": [0.4, 0.2, 0.012, 0.02],
    "channel": [0.3, 0.1, 0.01, 0.015],
    "angle": [0.12, 0.08, 0.01],
}


def moments(p):
    """(area, centroid (2,), int x3^2, int x2^2, int x2 x3) of a polygon about the origin's
    axes, from the polygon formulas of rodsim.model.polygon_section."""
    area, c, iyy, izz, iyz = _second_moments(np.asarray(p))
    # _second_moments gives them about the centroid: move back to the origin
    return area, c, izz + area * c[1] ** 2, iyy + area * c[0] ** 2, iyz + area * c[0] * c[1]


@pytest.mark.parametrize("kind", sorted(SOLID))
def test_a_solid_outline_has_the_area_centroid_and_principal_moments_of_its_shape(kind):
    """Straight-edged shapes are exact polygons: area, centroid at the origin and the second
    moments about d2, d3 (zero product) agree with the section's to round-off."""
    p = outlines.outline({kind: SOLID[kind]})
    props = shape_properties({kind: SOLID[kind]})
    area, c, i2, i3, i23 = moments(p)
    scale = props.area * max(props.I2, props.I3) ** 0.5
    assert area == pytest.approx(props.area, rel=1e-12)  # counter-clockwise: positive area
    assert np.abs(c).max() < 1e-12 * math.sqrt(props.area)
    assert i2 == pytest.approx(props.I2, rel=1e-10)
    assert i3 == pytest.approx(props.I3, rel=1e-10)
    assert abs(i23) < 1e-10 * scale


def test_a_polygon_section_is_drawn_in_the_axes_its_stiffness_is_computed_in():
    points = [[0, 0], [0.2, 0], [0.2, 0.05], [0.05, 0.05], [0.05, 0.3], [0, 0.3]][::-1]
    p = outlines.outline({"polygon": points})
    area, c, _, _, i23 = moments(p)
    assert area > 0 and np.abs(c).max() < 1e-14 and abs(i23) < 1e-16


def test_round_and_hollow_sections_are_drawn_by_their_outer_boundary():
    """A circle's 48-gon has the area of the circle times sin(2 pi/48) 48/(2 pi); a tube is its
    outer circle, a box its outer rectangle."""
    r = 0.05
    area = moments(outlines.outline({"circle": r}))[0]
    n = outlines.CIRCLE_POINTS
    assert area == pytest.approx(math.pi * r * r * math.sin(2 * math.pi / n) * n / (2 * math.pi))
    np.testing.assert_array_equal(
        outlines.outline({"tube": [r, 0.04]}), outlines.outline({"circle": r})
    )
    box = outlines.outline({"box": [0.3, 0.2, 0.01]})
    np.testing.assert_allclose(np.ptp(box, axis=0), [0.2, 0.3])


def test_a_section_given_by_stiffnesses_is_drawn_with_its_radii_of_gyration():
    """EA = E pi r^2 and EI = E pi r^4 / 4 give the circle of radius r; unequal EI give an
    ellipse with the semi-axis along d3 from EI2, along d2 from EI3."""
    e, r = 2e11, 0.03
    a, i = math.pi * r * r, math.pi * r**4 / 4
    round_rod = section_from_resultants(e * a, [1e9, 1e9], 1e5, [e * i, e * i], 1.0, [1e-3, 1e-3])
    p = outlines.section_outline(round_rod)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), r, rtol=1e-12)
    flat = section_from_resultants(e * a, [1e9, 1e9], 1e5, [4 * e * i, e * i], 1.0, [1, 1])
    np.testing.assert_allclose(np.ptp(outlines.section_outline(flat), axis=0), [2 * r, 4 * r])


STRAIGHT = {**SOLID, "box": [0.3, 0.2, 0.01], "polygon": [[0, 0], [0.2, 0], [0.05, 0.05], [0, 0.3]]}


def edge_distance(x, polygon) -> np.ndarray:
    """Distance (K,) of points x (K,2) from the edges of a closed polygon (M,2)."""
    a, b = np.asarray(polygon), np.roll(polygon, -1, axis=0)
    ab = b - a
    s = np.einsum("kmi,mi->km", x[:, None, :] - a[None], ab) / np.einsum("mi,mi->m", ab, ab)
    foot = a[None] + np.clip(s, 0.0, 1.0)[..., None] * ab[None]
    return np.linalg.norm(x[:, None, :] - foot, axis=2).min(axis=1)


@pytest.mark.parametrize("kind", sorted(STRAIGHT))
def test_every_corner_drawn_is_a_stress_recovery_point(kind):
    """The largest normal stress, linear over the section, is at a corner of the drawn shape:
    each corner is one of the recovery points (issue 32). Thin-walled points are built at the
    corners (round-off 1e-12 of the size); a polygon's are its mesh's boundary nodes, which keep
    its vertices to the mesher's round-off (1e-9 of the size)."""
    shape = {kind: STRAIGHT[kind]}
    corners, points = outlines.outline(shape), recovery_points(shape).x
    size = np.ptp(corners, axis=0).max()
    tolerance = (1e-9 if kind == "polygon" else 1e-12) * size
    gaps = np.linalg.norm(corners[:, None, :] - points[None], axis=2).min(axis=1)
    assert gaps.max() < tolerance


@pytest.mark.parametrize("kind", ["i_section", "channel", "angle", "box"])
def test_thin_walled_recovery_points_lie_on_the_drawn_boundary(kind):
    """The faces run to the profile's own corners, not past them into the air or short of
    them inside another wall: every point is on the outline (for a box, on its outer or its
    inner rectangle, the wall t inside it), to round-off."""
    size = STRAIGHT[kind]
    drawn = outlines.outline({kind: size})
    points = recovery_points({kind: size}).x
    distance = edge_distance(points, drawn)
    if kind == "box":
        h, b, t = size
        inner = outlines.outline({"rectangle": [b - 2 * t, h - 2 * t]})
        distance = np.minimum(distance, edge_distance(points, inner))
    assert distance.max() < 1e-12 * np.ptp(drawn, axis=0).max()
