"""The schema of `initial.shape` (docs/cases.md, "Initial shapes"): a rod part started on an
arc, a helix, a polyline or formulas of its arc length, stretched or twisted, or every node
from a mesh file; the shapes themselves are made in rodsim.case.initial_shape."""

from rodsim.case import expression, settings
from rodsim.case.fields import DIRECTION, NAME, POINT, positive
from rodsim.case.schema import Either, Field, ListOf, Number, Path, Record, Tagged, Text, fail


def _nonzero(key: str):
    def rule(data, path: Path):
        if data[key] == 0.0:
            raise fail((*path, key), f"expected a non-zero {key}, got 0")

    rule.__doc__ = f"{key} is not 0"
    return rule


FORMULA = Either((Number(), Text()))


def _formulas(data, path: Path):
    for k in ("x", "y", "z"):
        try:
            expression.parse(data[k])
        except ValueError as exc:
            raise fail((*path, k), str(exc)) from None


_formulas.__doc__ = "each formula parses: " + expression.allowed()


def formulas(default) -> Record:
    """x, y, z formulas of s (required when default is None)."""
    return Record(
        tuple(
            Field(k, FORMULA, f"{k} component: a number or a formula of s, L, pi", default=default)
            if default is not None
            else Field(k, FORMULA, f"{k} component: a number or a formula of s, L, pi")
            for k in ("x", "y", "z")
        ),
        rules=(_formulas,),
        into=settings.Formulas,
    )


SHAPE_ARC = Record(
    (
        Field("center", POINT, "arc centre"),
        Field("radius", positive("length"), "radius"),
        Field("start", POINT, "where the part's start goes (projected onto the arc plane)"),
        Field("normal", DIRECTION, "arc plane normal; the arc turns right-handed about it"),
        Field("angle", Number(dim="degree"), "swept angle in degrees (not 0)"),
    ),
    rules=(_nonzero("angle"),),
    into=settings.ShapeArc,
)

SHAPE_HELIX = Record(
    (
        Field("center", POINT, "a point of the helix axis"),
        Field("axis", DIRECTION, "axis direction; the helix turns right-handed about it"),
        Field(
            "start",
            POINT,
            "where the part's start goes; its distance from the axis is the radius (not 0)",
        ),
        Field(
            "pitch",
            Number(dim="length"),
            "advance along the axis per turn (negative: a left-handed helix)",
        ),
        Field("turns", positive("1"), "number of turns"),
    ),
    into=settings.ShapeHelix,
)

CURVES = ("arc", "helix", "points", "position", "displacement")


def _one_curve(data, path: Path):
    given = [k for k in CURVES if data[k] is not None]
    if len(given) > 1:
        raise fail(path, f"give at most one of {', '.join(CURVES)}, got {', '.join(given)}")
    if given and data["stretch"] != 0.0:
        raise fail(
            (*path, "stretch"),
            f"stretch applies to the part's reference shape; with {given[0]} the shape "
            "itself sets the stretch (remove stretch)",
        )


_one_curve.__doc__ = f"at most one of {', '.join(CURVES)}; stretch only without them"

SHAPE_PART = Record(
    (
        Field("part", NAME, "a rod part (rod, arc, or a file part's line cells)"),
        Field(
            "arc",
            SHAPE_ARC,
            "start the part on this circular arc (nodes by their reference arc-length fraction)",
            optional=True,
        ),
        Field("helix", SHAPE_HELIX, "start the part on this helix (alike)", optional=True),
        Field(
            "points",
            ListOf(POINT, min_items=2),
            "start the part on this polyline (alike)",
            optional=True,
        ),
        Field(
            "position",
            formulas(None),
            "the position of the node at reference arc length s: x(s), y(s), z(s)",
            optional=True,
        ),
        Field(
            "displacement",
            formulas(0.0),
            "the displacement of the node at reference arc length s from its reference "
            "position: u(s) (components default 0)",
            optional=True,
        ),
        Field(
            "stretch",
            Number(gt=-1, dim="1"),
            "uniform axial strain of the reference shape (about the part's start node)",
            default=0.0,
        ),
        Field(
            "twist",
            Number(dim="1/length"),
            "twist per reference length (rad/length) about the new tangent, 0 at the start",
            default=0.0,
        ),
    ),
    rules=(_one_curve,),
    into=settings.ShapePart,
)

SHAPE_FILE = Record(
    (
        Field(
            "file",
            Text(),
            "mesh file (relative to the case file) of the case's nodes, same count and "
            "order: their positions; d1 d2 d3 point data, if all three are there, their "
            "rotations",
        ),
    ),
    into=settings.ShapeFile,
)

SHAPE = Tagged(
    (
        ("file", SHAPE_FILE, False, "every node from a mesh file"),
        ("part", SHAPE_PART, False, "a rod part on a curve, formulas of s, stretch, twist"),
    )
)
