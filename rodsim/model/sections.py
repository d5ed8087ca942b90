"""Rod cross-sections: resultant stiffnesses and inertias per unit length.

Conventions (): the section frame is (d1, d2, d3) with d1 the rod tangent and d2, d3
principal axes of the section; section coordinates are (x2, x3) along (d2, d3). The stored energy
per length is 1/2 Gamma.C1 Gamma + 1/2 Omega.C2 Omega with C1 = diag(EA, GA2, GA3) and
C2 = diag(GJ, EI2, EI3); EI2 is the bending stiffness about d2 (I2 = int x3^2 dA), EI3 about d3
(I3 = int x2^2 dA). The material rotational inertia per length is diag(rhoJ, rhoI2, rhoI3).

Units are the user's own but consistent: with force F, length L and mass M, EA and GA are in F,
EI and GJ in F L^2, rhoA in M / L and rhoI, rhoJ in M L.

Bad values raise ValueError naming the quantity (``"GA[1]: must be > 0, got -1"``); the case
file's validator (rodsim.case.sections) has checked case input before, and keys any error to
the section's path.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from rodsim.model import outlines
from rodsim.model.section_geometry import Boundary, ShapeProperties
from rodsim.model.shapes import (
    recovery_points,
    shape_properties,
    shear_factors,
)


@dataclass(frozen=True)
class SectionGeometry:
    """What stresses are recovered from (docs/stresses.md): the shape's properties (A, I2, I3)
    and its recovery points; allowable: the material's allowable stress (None: not given);
    outline (K,2): the outer boundary drawn by rodsim render (rodsim.model.outlines)."""

    shape: ShapeProperties
    points: Boundary
    allowable: float | None = None
    outline: np.ndarray | None = None


@dataclass(frozen=True)
class RodSection:
    """Resultant section properties of a rod, per unit length, in the section frame.

    EA, GA2, GA3: axial and shear stiffnesses (force); GA includes the shear correction factor.
    GJ: torsional stiffness (force x length^2), J the St-Venant torsion constant.
    EI2, EI3: bending stiffnesses about d2 and d3 (force x length^2).
    rhoA: mass per length. rhoI2 = rho int x3^2 dA, rhoI3 = rho int x2^2 dA: rotary inertias
    about d2 and d3 per length. rhoJ: polar mass moment per length (rotational inertia about
    d1); defaults to rhoI2 + rhoI3 (perpendicular-axis theorem).

    Every value must be finite and positive: an explicit Lie-group integrator divides by the
    rotary inertias, so a massless rotation is not representable. geometry: the shape and its
    stress recovery points, for a section made of a material and a shape; None for one given
    by its stiffnesses (it has no stresses).
    """

    EA: float
    GA2: float
    GA3: float
    GJ: float
    EI2: float
    EI3: float
    rhoA: float
    rhoI2: float
    rhoI3: float
    rhoJ: float | None = None
    geometry: SectionGeometry | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.rhoJ is None:
            # Fill the default first so the loop below validates it like any other field;
            # the sum is only meaningful once both summands are known to be numbers.
            i2 = _positive(self.rhoI2, "rhoI2")
            i3 = _positive(self.rhoI3, "rhoI3")
            object.__setattr__(self, "rhoJ", i2 + i3)
        for f in fields(self):
            if f.name != "geometry":
                object.__setattr__(self, f.name, _positive(getattr(self, f.name), f.name))

    @property
    def C1(self) -> np.ndarray:  # noqa: N802
        """(3,) float64: diag(EA, GA2, GA3), the translational (force) stiffness."""
        return np.array([self.EA, self.GA2, self.GA3], dtype=np.float64)

    @property
    def C2(self) -> np.ndarray:  # noqa: N802
        """(3,) float64: diag(GJ, EI2, EI3), the rotational (moment) stiffness."""
        return np.array([self.GJ, self.EI2, self.EI3], dtype=np.float64)

    @property
    def inertia(self) -> np.ndarray:
        """(3, 3) float64: diag(rhoJ, rhoI2, rhoI3), material rotational inertia per length."""
        return np.diag(np.array([self.rhoJ, self.rhoI2, self.rhoI3], dtype=np.float64))


# --- constructors -----------------------------------------------------------------------------


def section_from_resultants(EA, GA, GJ, EI, rhoA, rhoI, rhoJ=None) -> RodSection:  # noqa: N803
    """Section from resultant properties, as in the resultant form of a case file.

    GA = (GA2, GA3), EI = (EI2, EI3), rhoI = (rhoI2, rhoI3) are pairs; rhoJ defaults to
    rhoI2 + rhoI3. Units: see the module docstring.
    """
    ga2, ga3 = _positive_pair(GA, "GA")
    ei2, ei3 = _positive_pair(EI, "EI")
    ri2, ri3 = _positive_pair(rhoI, "rhoI")
    return RodSection(
        EA=_positive(EA, "EA"),
        GA2=ga2,
        GA3=ga3,
        GJ=_positive(GJ, "GJ"),
        EI2=ei2,
        EI3=ei3,
        rhoA=_positive(rhoA, "rhoA"),
        rhoI2=ri2,
        rhoI3=ri3,
        rhoJ=None if rhoJ is None else _positive(rhoJ, "rhoJ"),
    )


def section_from_material(E, nu, rho, shape, shear_factor=None, allowable=None) -> RodSection:  # noqa: N803
    """Section of a homogeneous, isotropic, linear-elastic material and a solid shape.

    E: Young's modulus (force / L^2); nu: Poisson's ratio in (-1, 0.5]; rho: density (M / L^3);
    G = E / (2 (1 + nu)). shape: ``{kind: size}`` of a shape of rodsim.model.shapes.SHAPES
    (``rectangle: [width, height]``, width along d2, height along d3; ``circle: r``; ``tube:
    [ro, ri]``; the profiles and ``polygon``, docs/stresses.md). shear_factor: k in (0, 1]
    along both d2 and d3; default the shape's own (Cowper's value for the solid shapes, the
    shear areas of profiles: rodsim.model.shapes.shear_factors). allowable: the material's
    allowable stress for the utilisation (None: not given).

    Returns EA = E A, GA2 = k2 G A, GA3 = k3 G A, GJ = G J (St-Venant), EI2 = E I2, EI3 = E I3,
    rhoA = rho A, rhoI2 = rho I2, rhoI3 = rho I3, rhoJ = rho (I2 + I3) (polar: the rotational
    inertia of the section about d1, which differs from rho J for non-circular sections);
    geometry: the shape, its recovery points and the allowable stress (None: not given).
    """
    e = _positive(E, "material.E")
    poisson = _number(nu, "material.nu")
    if not -1.0 < poisson <= 0.5:
        raise ValueError(_at("material.nu", f"Poisson's ratio must be in (-1, 0.5], got {poisson}"))
    density = _positive(rho, "material.rho")
    props = shape_properties(shape)
    if shear_factor is None:
        k2, k3 = shear_factors(props, poisson)
    else:
        k2 = k3 = _number(shear_factor, "shear_factor")
        if not 0.0 < k2 <= 1.0:
            raise ValueError(_at("shear_factor", f"shear_factor must be in (0, 1], got {k2}"))
    g = e / (2.0 * (1.0 + poisson))
    return RodSection(
        EA=e * props.area,
        GA2=k2 * g * props.area,
        GA3=k3 * g * props.area,
        GJ=g * props.J,
        EI2=e * props.I2,
        EI3=e * props.I3,
        rhoA=density * props.area,
        rhoI2=density * props.I2,
        rhoI3=density * props.I3,
        rhoJ=density * (props.I2 + props.I3),
        geometry=SectionGeometry(props, recovery_points(shape), allowable, outlines.outline(shape)),
    )


# --- strict value checks ----------------------------------------------------------------------


def _kind(value) -> str:
    return type(value).__name__


def _number(value, key: str) -> float:
    """A finite real number; bool is rejected although it is an int subclass."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(_at(key, f"expected a number, got {value!r} ({_kind(value)})"))
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(_at(key, f"expected a finite number, got {x}"))
    return x


def _positive(value, key: str) -> float:
    x = _number(value, key)
    if x <= 0.0:
        raise ValueError(_at(key, f"must be > 0, got {x}"))
    return x


def _pair(value, key: str) -> tuple[float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ValueError(_at(key, f"expected a list of 2 numbers, got {value!r}"))
    if len(value) != 2:
        raise ValueError(_at(key, f"expected a list of 2 numbers, got {len(value)}"))
    return _number(value[0], f"{key}[0]"), _number(value[1], f"{key}[1]")


def _positive_pair(value, key: str) -> tuple[float, float]:
    x, y = _pair(value, key)
    return _positive(x, f"{key}[0]"), _positive(y, f"{key}[1]")


def _at(key: str, message: str) -> str:
    return f"{key}: {message}"
