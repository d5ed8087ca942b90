"""Cross-section shapes: their area, second moments, torsion constant and shear factor, and the
stress-recovery coefficients along their boundary (docs/stresses.md).

Section coordinates (x2, x3) are along the section frame's d2, d3 (principal axes through the
centroid); lengths in the case's unit L. A shape's ``boundary(size, m)`` samples its outer
boundary: at each sample the point (x2, x3), and the shear stress there per unit torque T and
per unit shear force V2, V3, as vectors (tau12, tau13) in the section plane. The stress at a
sample under section resultants (N, V2, V3, T, M2, M3) is then (rodsim.model.stress)

    sigma11 = N / A + M2 x3 / I2 - M3 x2 / I3,
    (tau12, tau13) = T cT + V2 cV2 + V3 cV3,

and the recovery points of a shape are its boundary at the documented resolution ``m``; tests
compare their maximum von Mises stress with the boundary sampled densely.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from rodsim.model import polygon_section, thin_walled
from rodsim.model.section_geometry import Boundary, ShapeProperties
from rodsim.registry import Registry

# sum_{n odd} 1/n^5 = (1 - 2^-5) zeta(5); zeta(5) to double precision.
_ODD_INVERSE_FIFTH_POWERS = (31.0 / 32.0) * 1.0369277551433699263


# --- circles and tubes ------------------------------------------------------------------------


def _tube_boundary(ro: float, ri: float, n: int) -> Boundary:
    """n points on the outer circle at angles 2 pi k / n from d2, counter-clockwise about d1.

    Torsion (exact): tau = T ro / J along the tangent t = (-sin phi, cos phi). Shear force
    (Jourawski, Timoshenko & Gere, Mechanics of Materials, sec. 5.9): the mean shear stress
    across the chord at height y is V Q(y) / (I b(y)) with Q(y) = 2/3 ((ro^2 - y^2)^(3/2) -
    (ri^2 - y^2)_+^(3/2)) and b(y) = 2 (sqrt(ro^2 - y^2) - sqrt((ri^2 - y^2)_+)); at the
    boundary the stress is tangent and its component along V is that mean value.
    """
    phi = 2.0 * np.pi * np.arange(n) / n
    x = ro * np.column_stack([np.cos(phi), np.sin(phi)])
    t = np.column_stack([-np.sin(phi), np.cos(phi)])
    i = np.pi * (ro**4 - ri**4) / 4.0

    def mean_shear(y):  # V Q / (I b) per unit V
        outer = np.clip(ro * ro - y * y, 0.0, None)
        inner = np.clip(ri * ri - y * y, 0.0, None)
        q = (2.0 / 3.0) * (outer**1.5 - inner**1.5)
        b = 2.0 * (np.sqrt(outer) - np.sqrt(inner))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(b > 0.0, q / (i * np.where(b > 0.0, b, 1.0)), 0.0)

    def along(direction, y):
        along_v = t @ direction  # the tangent's component along V
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(np.abs(along_v) > 1e-12, mean_shear(y) / along_v, 0.0)
        return scale[:, None] * t

    c_t = (ro / (2.0 * i)) * t
    return Boundary(x, c_t, along(np.array([1.0, 0.0]), x[:, 0]), along([0.0, 1.0], x[:, 1]))


def _circle_properties(r: float) -> ShapeProperties:
    i = math.pi * r**4 / 4.0
    return ShapeProperties("circle", math.pi * r**2, i, i, 2.0 * i)


def _tube_properties(size) -> ShapeProperties:
    ro, ri = size
    if ro <= 0.0:
        raise ValueError(f"shape.tube[0]: outer radius must be > 0, got {ro}")
    if not 0.0 <= ri < ro:
        raise ValueError(f"shape.tube: inner radius must satisfy 0 <= ri < ro, got {ro}, {ri}")
    i = math.pi * (ro**4 - ri**4) / 4.0
    return ShapeProperties("tube", math.pi * (ro**2 - ri**2), i, i, 2.0 * i, ri / ro)


# --- rectangles -------------------------------------------------------------------------------


def rectangle_torsion_constant(width: float, height: float) -> float:
    """St-Venant torsion constant J = beta a b^3 of a solid rectangle (L^4).

    a = long side, b = short side, and the exact Fourier-series solution of the Prandtl stress
    function problem (Timoshenko & Goodier, Theory of Elasticity, 3rd ed., ch. 10, torsion of
    rectangular bars; also Roark's Formulas for Stress and Strain, table 10.7):

        beta = 1/3 (1 - 192/pi^5 (b/a) sum_{n odd} tanh(n pi a / (2 b)) / n^5).

    beta = 0.1406 for a square, -> 1/3 for a thin strip. The series is summed to double
    precision: tanh = 1 - (1 - tanh) splits it into the closed form sum 1/n^5 = 31/32 zeta(5)
    and a remainder that decays like exp(-n pi a / b), a handful of terms.
    """
    a, b = max(width, height), min(width, height)
    ratio = a / b
    remainder = 0.0
    n = 1
    while True:
        # 1 - tanh(x) = 2 e^{-2x} / (1 + e^{-2x}), written to avoid cancellation and overflow
        e = math.exp(-n * math.pi * ratio)
        term = 2.0 * e / (1.0 + e) / n**5
        remainder += term
        if term < 1.0e-18:
            break
        n += 2
    series = _ODD_INVERSE_FIFTH_POWERS - remainder
    beta = (1.0 - 192.0 / math.pi**5 / ratio * series) / 3.0
    return beta * a * b**3


_TERMS = 4000  # odd terms of the boundary series: tail < 1e-4 of the largest shear stress


def _torsion_shear(w: float, h: float, x: np.ndarray, vertical: np.ndarray) -> np.ndarray:
    """|grad Phi| / (G theta) at boundary points x (K,2) of the w x h rectangle, from the Prandtl
    stress function (Timoshenko & Goodier, sec. 109)

        Phi / (G theta) = w^2/4 - y^2 - sum_{n odd} 8 w^2 / (n pi)^3 (-1)^((n-1)/2)
                          cos(n pi y / w) cosh(n pi z / w) / cosh(n pi h / (2 w)),

    y = x2, z = x3; vertical: the points on the sides x2 = +-w/2 (else on x3 = +-h/2)."""
    n = np.arange(1, 2 * _TERMS, 2, dtype=float)
    k = n * np.pi / w
    sign = np.where(((n - 1) / 2) % 2 == 0, 1.0, -1.0)
    out = np.empty(len(x))
    # on z = +-h/2: d Phi / dz = -sum 8 w / (n pi)^2 sign cos(k y) tanh(k h / 2)
    y = x[~vertical, 0]
    terms = (8.0 * w / (n * np.pi) ** 2 * sign * np.tanh(k * h / 2.0))[None, :]
    out[~vertical] = np.abs(np.sum(terms * np.cos(np.outer(y, k)), axis=1))
    # on y = +-w/2: d Phi / dy = -w + sum 8 w / (n pi)^2 cosh(k z) / cosh(k h / 2)
    z = np.abs(x[vertical, 1])
    ratio = np.exp(np.outer(z - h / 2.0, k)) * (1.0 + np.exp(-2.0 * np.outer(z, k)))
    ratio /= 1.0 + np.exp(-k * h)[None, :]
    out[vertical] = np.abs(-w + np.sum(8.0 * w / (n * np.pi) ** 2 * ratio, axis=1))
    return out


def _rectangle_boundary(size, m: int) -> Boundary:
    """4 m points, m per side from each corner counter-clockwise (the corners and, for even m,
    the mid-sides among them), starting at (-w/2, -h/2).

    Torsion: the tangential stress of Saint-Venant's solution (_torsion_shear) per unit
    T = G theta J, along the counter-clockwise tangent. Shear force (Jourawski): 3 V / (2 A)
    (1 - 4 s^2 / d^2) along V on the two sides parallel to V (s the coordinate along V, d the
    side's length), 0 on the others."""
    w, h = size
    s = np.arange(m) / m
    corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    x = np.concatenate(
        [corners[c] + np.outer(s, corners[(c + 1) % 4] - corners[c]) for c in range(4)]
    )
    t = np.repeat(np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]), m, axis=0)
    vertical = np.repeat(np.array([False, True, False, True]), m)
    area = w * h
    c_t = (_torsion_shear(w, h, x, vertical) / rectangle_torsion_constant(w, h))[:, None] * t
    c_v2 = np.zeros_like(x)
    c_v3 = np.zeros_like(x)
    c_v2[~vertical, 0] = 1.5 / area * (1.0 - 4.0 * x[~vertical, 0] ** 2 / w**2)
    c_v3[vertical, 1] = 1.5 / area * (1.0 - 4.0 * x[vertical, 1] ** 2 / h**2)
    return Boundary(x, c_t, c_v2, c_v3)


def _rectangle_properties(size) -> ShapeProperties:
    w, h = size
    return ShapeProperties(
        "rectangle", w * h, w * h**3 / 12.0, h * w**3 / 12.0, rectangle_torsion_constant(w, h)
    )


# --- the registry -----------------------------------------------------------------------------


class Shape(NamedTuple):
    """properties(size) -> ShapeProperties (ValueError for dimensions no profile has);
    boundary(size, m) -> Boundary at resolution m; recovery: the m of the recovery points
    (docs/stresses.md lists them)."""

    properties: Callable[..., ShapeProperties]
    boundary: Callable[..., Boundary]
    recovery: int


SHAPES = Registry(
    "shape",
    {
        "rectangle": Shape(_rectangle_properties, _rectangle_boundary, 12),
        "circle": Shape(_circle_properties, lambda r, m: _tube_boundary(r, 0.0, m), 36),
        "tube": Shape(_tube_properties, lambda size, m: _tube_boundary(*size, m), 36),
        "i_section": Shape(thin_walled.i_section_properties, thin_walled.i_section_boundary, 9),
        "box": Shape(thin_walled.box_properties, thin_walled.box_boundary, 9),
        "channel": Shape(thin_walled.channel_properties, thin_walled.channel_boundary, 9),
        "angle": Shape(thin_walled.angle_properties, thin_walled.angle_boundary, 13),
        "polygon": Shape(polygon_section.polygon_properties, polygon_section.polygon_boundary, 0),
    },
)


def shape_properties(shape) -> ShapeProperties:
    """The properties of ``{kind: size}`` (one key): rectangle [w, h] (w along d2, h along d3):
    A = w h, I2 = w h^3 / 12, I3 = h w^3 / 12, J from rectangle_torsion_constant; circle r:
    A = pi r^2, I2 = I3 = pi r^4 / 4, J = pi r^4 / 2; tube [ro, ri]: A = pi (ro^2 - ri^2),
    I2 = I3 = pi (ro^4 - ri^4) / 4, J = pi (ro^4 - ri^4) / 2."""
    ((kind, size),) = shape.items()
    return SHAPES[kind].properties(size)


def recovery_points(shape) -> Boundary:
    """The recovery points of ``{kind: size}`` (docs/stresses.md)."""
    ((kind, size),) = shape.items()
    entry = SHAPES[kind]
    return entry.boundary(size, entry.recovery)


def cowper_shear_factor(kind: str, nu: float, m: float = 0.0) -> float:
    """Cowper's shear correction factor k (GA = k G A) for a shape kind and Poisson's ratio nu.

    Cowper, The shear coefficient in Timoshenko's beam theory, J. Appl. Mech. 33 (1966) 335-340:
    rectangle 10 (1 + nu) / (12 + 11 nu); circle 6 (1 + nu) / (7 + 6 nu); thick tube with
    m = ri / ro: 6 (1 + nu) (1 + m^2)^2 / ((7 + 6 nu) (1 + m^2)^2 + (20 + 12 nu) m^2), which is
    the circle at m = 0 and the thin tube 2 (1 + nu) / (4 + 3 nu) at m -> 1.
    """
    if kind == "rectangle":
        return 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)
    if kind == "circle":
        return 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)
    if kind == "tube":
        q = (1.0 + m * m) ** 2
        return 6.0 * (1.0 + nu) * q / ((7.0 + 6.0 * nu) * q + (20.0 + 12.0 * nu) * m * m)
    raise ValueError(f"no Cowper shear factor for shape {kind!r}")


def shear_factors(p: ShapeProperties, nu: float) -> tuple[float, float]:
    """(k2, k3): a profile's own (shear areas, ShapeProperties.k2, k3), else Cowper's."""
    if p.k2 is not None:
        return p.k2, p.k3
    k = cowper_shear_factor(p.kind, nu, p.m)
    return k, k
