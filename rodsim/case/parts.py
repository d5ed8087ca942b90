"""The mesh parts and node sets of a case file: their schema, typed settings and the registry
PART_KINDS, which maps each part kind (the KEY of its settings class) to its schema and the
sizes it generates (for the memory estimate before meshing); rodsim.mesh.parts builds each
kind's mesh from its settings."""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from rodsim.case import settings
from rodsim.case.fields import DIRECTION, ELEMENTS, NAME, POINT, SET_NAME, pair, positive
from rodsim.case.schema import (
    Field,
    ListOf,
    MapOf,
    Number,
    OneOf,
    Path,
    Record,
    Tagged,
    Text,
    Vector,
    fail,
    show,
)
from rodsim.registry import Registry

# --- mesh parts ---------------------------------------------------------------------------------

_UP = Field(
    "up",
    DIRECTION,
    "direction of section axis d3 in the reference state "
    "(made orthogonal to the tangent); default: global z, or x for a near-vertical rod",
    optional=True,
)


def _rod_length(data, path: Path):
    # caught here, where the message can say what is wrong: the mesher only sees a bad tangent
    length = math.dist(data["from"], data["to"])
    if length == 0.0:
        raise fail(
            (*path, "to"),
            f"expected a point other than `from`, got {list(data['to'])} "
            "for both (the rod would have zero length)",
        )
    if not math.isfinite(length * length):  # the mesher squares lengths
        raise fail((*path, "to"), f"expected a rod length below 1e154, got {length:g}")


_rod_length.__doc__ = "`to` differs from `from`"

ROD_PART = Record(
    (
        Field("name", NAME, "part name; node sets <name>.start, <name>.end, <name>.all"),
        Field("from", POINT, "first node (length)"),
        Field("to", POINT, "last node (length)"),
        Field("elements", ELEMENTS, "number of elements (limited by memory, see the top)"),
        Field("section", NAME, "name of a rod section in `sections`"),
        _UP,
    ),
    doc="A straight rod of equal line elements.",
    rules=(_rod_length,),
    into=settings.RodPart,
)


def _arc_angle(data, path: Path):
    if data["angle"] == 0.0 or abs(data["angle"]) > 360.0:
        raise fail(
            (*path, "angle"),
            f"expected a non-zero angle of at most 360 degrees in magnitude, got {data['angle']:g}",
        )
    if abs(abs(data["angle"]) - 360.0) < 1e-9 and data["elements"] < 3:
        raise fail(
            (*path, "elements"), f"a closed ring needs at least 3 elements, got {data['elements']}"
        )


_arc_angle.__doc__ = "0 < |angle| <= 360; a closed ring (360) has at least 3 elements"

ARC_PART = Record(
    (
        Field("name", NAME, "part name; node sets <name>.start, <name>.end, <name>.all"),
        Field("center", POINT, "arc centre"),
        Field("radius", positive("length"), "radius (length)"),
        Field("start", POINT, "first node (projected onto the arc plane through the centre)"),
        Field("normal", DIRECTION, "arc plane normal; the arc turns right-handed about it"),
        Field("angle", Number(dim="degree"), "swept angle in degrees; 360 closes a ring"),
        Field("elements", ELEMENTS, "number of elements (limited by memory, see the top)"),
        Field("section", NAME, "name of a rod section in `sections`"),
        Field("up", DIRECTION, "direction of d3 (default: the arc normal)", optional=True),
    ),
    doc="A circular arc with a stress-free curved reference.",
    rules=(_arc_angle,),
    into=settings.ArcPart,
)


def _rectangle_axes(data, path: Path):
    # caught here, where the key path is known: the mesher could only say "e2"
    e1, e2 = data["e1"], data["e2"]
    cross = math.dist(
        (0.0, 0.0, 0.0),
        (
            e1[1] * e2[2] - e1[2] * e2[1],
            e1[2] * e2[0] - e1[0] * e2[2],
            e1[0] * e2[1] - e1[1] * e2[0],
        ),
    )
    if cross <= 1e-8 * math.dist((0.0, 0.0, 0.0), e1) * math.dist((0.0, 0.0, 0.0), e2):
        raise fail(
            (*path, "e2"), f"expected a direction not parallel to e1 = {list(e1)}, got {list(e2)}"
        )


_rectangle_axes.__doc__ = "e2 is not parallel to e1"

RECTANGLE_PART = Record(
    (
        Field(
            "name",
            NAME,
            "part name; node sets <name>.all, .boundary, the edges .x0 (= .left, "
            "along e2 through the origin), .x1 (= .right), .y0 (= .bottom, along e1 through the "
            "origin), .y1 (= .top), and the corners .corner00 (the origin), .corner10 (origin + "
            "a e1), .corner01 (origin + b e2), .corner11",
        ),
        Field("origin", POINT, "corner of the rectangle"),
        Field("size", pair("length"), "lengths [a, b] along e1 and e2"),
        Field(
            "elements",
            Vector(n=2, item=ELEMENTS),
            "elements [n1, n2] along e1 and e2 (limited by memory, see the top)",
        ),
        Field("section", NAME, "name of a plate section"),
        Field("e1", DIRECTION, "direction of the first side (normalised)", default=(1.0, 0.0, 0.0)),
        Field(
            "e2",
            DIRECTION,
            "direction of the second side, made orthogonal to e1",
            default=(0.0, 1.0, 0.0),
        ),
    ),
    doc="A flat plate origin + [0, a] e1 + [0, b] e2 of n1 x n2 equal quad cells; nodal frames "
    "d1 = e1, d2 = e2, d3 = e1 x e2 (the plate normal, the direction of pressure).",
    rules=(_rectangle_axes,),
    into=settings.RectanglePart,
)

FILE_PART = Record(
    (
        Field(
            "file",
            Text(),
            "path of a meshio-readable mesh (.msh v2/v4, .vtu, .xdmf, ...), "
            "relative to the case file",
        ),
        Field("name", NAME, "part name; node sets <name>.all and <name>.<point set>"),
        Field(
            "sections",
            MapOf(NAME, doc_key="CELL_SET"),
            "cell set (e.g. gmsh physical group) -> section name",
            default={},
        ),
        Field(
            "section",
            NAME,
            "section of the cells in no mapped cell set (a rod section for "
            "line cells, a plate section for triangles and quads)",
            optional=True,
        ),
        _UP,
    ),
    doc="Line cells of a mesh file are rod elements, triangle and quad cells plates; line cells "
    "on plate edges in no mapped cell set only name nodes. A node id (Gmsh node tag, "
    "Abaqus node number) defined twice is an error naming the id, both points and their "
    "lines if the points differ by more than `merge_tolerance` (default 1e-8 x the "
    "diagonal of the file's bounding box); within it, one node at the first definition "
    "(a warning and a note in the summary say so). Checked in Gmsh .msh (ASCII 2.2, 4.0, "
    "4.1, binary 4.1) and Abaqus .inp files, which must hold one `*NODE` block; other "
    "formats keep their last definition unchecked.",
    into=settings.FilePart,
)


class PartSizes(NamedTuple):
    """What a part generates: nodes, rod elements, plates, and the plate band width (the
    smaller side + 1; 0 without plates); None for a mesh file (not known before reading)."""

    nodes: int
    elements: int
    plates: int
    width: int


class PartKind(NamedTuple):
    """node: its schema Record (into: its settings class, whose KEY names the kind and NESTED
    says whether it is written as ``{kind: {...}}``, else the kind is a key of the mapping,
    like ``file:``); sizes: part -> PartSizes, or None where unknown before meshing."""

    node: Record
    doc: str
    sizes: Callable[[Any], PartSizes | None]


def _line_sizes(part) -> PartSizes:
    closed = isinstance(part, settings.ArcPart) and part.closed
    return PartSizes(part.elements + (0 if closed else 1), part.elements, 0, 0)


def _rectangle_sizes(part: settings.RectanglePart) -> PartSizes:
    n1, n2 = part.elements
    return PartSizes((n1 + 1) * (n2 + 1), 0, n1 * n2, min(n1, n2) + 1)


PART_KINDS = Registry(
    "mesh part",
    {
        kind.node.into.KEY: kind
        for kind in (
            PartKind(ROD_PART, "straight rod", _line_sizes),
            PartKind(ARC_PART, "circular arc", _line_sizes),
            PartKind(RECTANGLE_PART, "flat plate", _rectangle_sizes),
            PartKind(FILE_PART, "mesh file", lambda part: None),
        )
    },
)

PART = Tagged(tuple((name, k.node, k.node.into.NESTED, k.doc) for name, k in PART_KINDS))


def kind_of(part) -> tuple[str, PartKind]:
    """The registry entry of a part's settings."""
    return part.KEY, PART_KINDS[part.KEY]


# --- node sets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    """Two corners of an axis-aligned box, the lower one first."""

    def expected(self) -> str:
        return "two corners [[xmin, ymin, zmin], [xmax, ymax, zmax]]"

    def check(self, value, path: Path):
        if not isinstance(value, list) or len(value) != 2:
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        lo, hi = (POINT.check(corner, (*path, i)) for i, corner in enumerate(value))
        for axis, name in enumerate("xyz"):
            if lo[axis] > hi[axis]:
                raise fail(
                    path,
                    f"expected {self.expected()} (the lower corner first), got "
                    f"{name}min {lo[axis]:g} > {name}max {hi[axis]:g}",
                )
        return lo, hi


SET = OneOf(
    (
        ("near", POINT, "the node nearest a point"),
        ("box", Box(), "all nodes inside [[xmin, ymin, zmin], [xmax, ymax, zmax]]"),
        (
            "nodes",
            ListOf(Number(ge=0, le=2**62, integer=True, dim="1"), min_items=1),
            "node numbers (0-based, after merging; see `rodsim check`)",
        ),
        (
            "union",
            ListOf(SET_NAME, min_items=1),
            "all nodes of the named sets (parts' sets, or "
            "other `sets:` entries in any order; a cycle is an error)",
        ),
    ),
    into=settings.NodeSet,
)
