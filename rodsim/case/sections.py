"""The `sections:` of a case file: their schema and typed settings, and the rod section
(rodsim.model.sections.RodSection) each rod section gives."""

from dataclasses import dataclass
from typing import Any

from rodsim.case import settings
from rodsim.case.fields import nonnegative, pair, positive
from rodsim.case.schema import (
    Constant,
    Field,
    ListOf,
    Number,
    OneOf,
    Path,
    Record,
    Vector,
    fail,
    show,
)
from rodsim.model.sections import RodSection, section_from_material, section_from_resultants
from rodsim.model.shapes import SHAPES

# --- sections -----------------------------------------------------------------------------------

MATERIAL = Record(
    (
        Field("E", positive("force/length^2"), "Young's modulus (force/length^2)"),
        Field("nu", Number(gt=-1, le=0.5, dim="1"), "Poisson's ratio"),
        Field("rho", positive("mass/length^3"), "density (mass/length^3)"),
        Field(
            "allowable",
            positive("force/length^2"),
            "yield or allowable stress: utilisation = max von Mises stress / allowable "
            "(docs/stresses.md)",
            optional=True,
        ),
    ),
    into=settings.Material,
)

# the dimensions of each shape of rodsim.model.shapes.SHAPES (docs/stresses.md)
_I = "[h, b, tw, tf]: height along d3, flange width along d2, web and flange thickness"
_SHAPE_SIZES = {
    "rectangle": (pair("length"), "[width along d2, height along d3]"),
    "circle": (positive("length"), "radius"),
    "tube": (Vector(n=2, item=nonnegative("length")), "[outer radius, inner radius]"),
    "i_section": (Vector(n=4, item=positive("length")), "I or H profile " + _I),
    "box": (Vector(n=3, item=positive("length")), "rectangular hollow [h, b, t] (wall t)"),
    "channel": (Vector(n=4, item=positive("length")), "channel " + _I + "; web on the -d2 side"),
    "angle": (Vector(n=3, item=positive("length")), "angle [h, b, t]: legs h, b; principal axes"),
    "polygon": (
        ListOf(Vector(n=2, item=Number(dim="length")), min_items=3),
        "any section: its outline [[x2, x3], ...] (needs rodsim[sections]); moved to its "
        "centroid and principal axes",
    ),
}
SHAPE = OneOf(
    tuple((name, *_SHAPE_SIZES[name]) for name in SHAPES.names()),
    into=settings.Shape,
)

_RESULTANTS = ("EA", "GA", "GJ", "EI", "rhoA", "rhoI")


def _rod_section_form(data, path: Path):
    res = [k for k in (*_RESULTANTS, "rhoJ") if data[k] is not None]
    mat = [k for k in ("material", "shape", "shear_factor") if data[k] is not None]
    if res and mat:
        raise fail(
            (*path, mat[0]),
            f"mixes the resultant form ({', '.join(res)}) with the "
            f"material form ({', '.join(mat)}); use one",
        )
    needed = ("material", "shape") if mat else _RESULTANTS
    for key in needed:
        if data[key] is None:
            raise fail(
                (*path, key),
                f"missing required key {key!r} (a rod section needs "
                f"{', '.join(_RESULTANTS)}, or material and shape)",
            )


_rod_section_form.__doc__ = "either EA, GA, GJ, EI, rhoA, rhoI (+ rhoJ) or material, shape"


def rod_section(spec: settings.RodSectionSettings) -> RodSection:
    """The RodSection of a rod section's settings (ValueError for values no section has)."""
    if spec.material is not None:
        m = spec.material
        shape = {spec.shape.kind: spec.shape.size}
        return section_from_material(m.E, m.nu, m.rho, shape, spec.shear_factor, m.allowable)
    return section_from_resultants(
        spec.EA, spec.GA, spec.GJ, spec.EI, spec.rhoA, spec.rhoI, spec.rhoJ
    )


ROD_SECTION = Record(
    (
        Field("type", Constant("rod"), "section type"),
        Field("EA", positive("force"), "axial stiffness (force)", optional=True),
        Field(
            "GA",
            pair("force"),
            "shear stiffnesses [GA2, GA3], shear correction included (force)",
            optional=True,
        ),
        Field(
            "GJ", positive("force*length^2"), "torsional stiffness (force length^2)", optional=True
        ),
        Field(
            "EI",
            pair("force*length^2"),
            "bending stiffnesses [EI2, EI3] about d2, d3 (force length^2)",
            optional=True,
        ),
        Field("rhoA", positive("mass/length"), "mass per length", optional=True),
        Field(
            "rhoI",
            pair("mass*length"),
            "rotary inertias [rho I2, rho I3] per length",
            optional=True,
        ),
        Field(
            "rhoJ",
            positive("mass*length"),
            "polar rotary inertia per length (default rhoI2 + rhoI3)",
            optional=True,
        ),
        Field("material", MATERIAL, "homogeneous isotropic material", optional=True),
        Field("shape", SHAPE, "cross-section shape (docs/stresses.md)", optional=True),
        Field(
            "shear_factor",
            Number(gt=0, le=1, dim="1"),
            "shear correction k (default: Cowper's value)",
            optional=True,
        ),
    ),
    doc="Rod section: resultant stiffnesses, or material and shape.",
    rules=(_rod_section_form,),
    into=settings.RodSectionSettings,
)

PLATE_SECTION = Record(
    (
        Field("type", Constant("plate"), "section type"),
        Field("material", MATERIAL, "homogeneous isotropic material"),
        Field("thickness", positive("length"), "plate thickness (length)"),
        Field(
            "shear_factor",
            Number(gt=0, le=1, dim="1"),
            "transverse shear factor",
            default=5.0 / 6.0,
        ),
    ),
    doc="Plate section: isotropic material and thickness (membrane E h/(1 - nu^2), bending "
    "E h^3/(12 (1 - nu^2)), shear k G h).",
    into=settings.PlateSectionSettings,
)


@dataclass(frozen=True)
class ByType:
    """A mapping whose ``type`` value picks the Record that checks it."""

    options: tuple[tuple[str, Any], ...]

    def expected(self) -> str:
        return "a mapping with type: " + " or ".join(k for k, _ in self.options)

    def check(self, value, path: Path):
        if not isinstance(value, dict):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        if "type" not in value:
            raise fail(
                (*path, "type"),
                "missing required key 'type' (expected "
                + " or ".join(k for k, _ in self.options)
                + ")",
            )
        for kind, node in self.options:
            if value["type"] == kind:
                return node.check(value, path)
        raise fail(
            (*path, "type"),
            "expected " + " or ".join(k for k, _ in self.options) + f", got {show(value['type'])}",
        )


SECTION = ByType((("rod", ROD_SECTION), ("plate", PLATE_SECTION)))
