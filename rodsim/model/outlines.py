"""The outer outline of a rod's cross-section, as drawn by ``rodsim render`` (docs/render.md)
and stored as the results file's ``mesh/section_outline``.

An outline is a closed polygon (K, 2) of points (x2, x3) in section coordinates (along d2, d3,
the principal axes through the centroid, as rodsim.model.shapes places every shape),
counter-clockwise about d1, its last point not repeating the first. Hollow sections (tube,
box) are drawn by their outer boundary. A section given by its stiffnesses has no shape: it
is drawn as the ellipse with its radii of gyration, semi-axes a = 2 sqrt(EI3 / EA) along d2
and b = 2 sqrt(EI2 / EA) along d3 (a solid ellipse has I2 / A = b^2 / 4 and I3 / A = a^2 / 4,
so a circular rod given by stiffnesses is drawn at its own radius).
"""

import math

import numpy as np

from rodsim.model import polygon_section, thin_walled
from rodsim.registry import Registry

CIRCLE_POINTS = 48


def _ellipse(a: float, b: float) -> np.ndarray:
    phi = 2.0 * np.pi * np.arange(CIRCLE_POINTS) / CIRCLE_POINTS
    return np.column_stack([a * np.cos(phi), b * np.sin(phi)])


def _centred(p) -> np.ndarray:
    """A polygon (K,2) moved to put its area centroid at the origin."""
    p = np.asarray(p, dtype=float)
    q = np.roll(p, -1, axis=0)
    cross = p[:, 0] * q[:, 1] - q[:, 0] * p[:, 1]
    area = cross.sum() / 2.0
    centroid = ((p + q) * cross[:, None]).sum(axis=0) / (6.0 * area)
    return p - centroid


def _rectangle(size) -> np.ndarray:
    w, h = size
    return np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])


def _i_section(size) -> np.ndarray:
    h, b, tw, tf = size
    y, z, s = b / 2, h / 2, tw / 2
    half = [(-y, -z), (y, -z), (y, -z + tf), (s, -z + tf), (s, z - tf), (y, z - tf), (y, z)]
    return np.array([*half, (-y, z), (-y, z - tf), (-s, z - tf), (-s, -z + tf), (-y, -z + tf)])


def _box(size) -> np.ndarray:
    h, b, _ = size
    return _rectangle((b, h))


def _channel(size) -> np.ndarray:
    h, b, tw, tf = size
    z = h / 2
    legs = [(0, -z), (b, -z), (b, -z + tf), (tw, -z + tf), (tw, z - tf), (b, z - tf), (b, z)]
    return _centred([*legs, (0, z)])


def _angle(size) -> np.ndarray:
    h, b, t = size
    legs = _centred([(0, 0), (b, 0), (b, t), (t, t), (t, h), (0, h)])
    theta = thin_walled.angle_axes(size)  # the principal axes rodsim.model.thin_walled takes
    c, s = math.cos(theta), math.sin(theta)
    return legs @ np.array([[c, -s], [s, c]])


OUTLINES = Registry(
    "shape",
    {
        "rectangle": _rectangle,
        "circle": lambda r: _ellipse(r, r),
        "tube": lambda size: _ellipse(size[0], size[0]),
        "i_section": _i_section,
        "box": _box,
        "channel": _channel,
        "angle": _angle,
        "polygon": polygon_section.principal,
    },
)


def outline(shape) -> np.ndarray:
    """The outline (K,2) of ``{kind: size}`` (a case's ``shape:``), see the module docstring."""
    ((kind, size),) = shape.items()
    return np.ascontiguousarray(OUTLINES[kind](size), dtype=float)


def stiffness_outline(ea: float, ei2: float, ei3: float) -> np.ndarray:
    """The ellipse (K,2) drawn for a section given by its stiffnesses (module docstring)."""
    return _ellipse(2.0 * math.sqrt(ei3 / ea), 2.0 * math.sqrt(ei2 / ea))


def section_outline(section) -> np.ndarray:
    """The outline (K,2) of a rodsim.model.sections.RodSection: its shape's, else the
    ellipse of its stiffnesses."""
    if section.geometry is not None and section.geometry.outline is not None:
        return section.geometry.outline
    return stiffness_outline(section.EA, section.EI2, section.EI3)
