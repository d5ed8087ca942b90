"""Case-file schema v1 (docs/case_reference.md), the single source of the case-file reference.

``CASE.check(data, ())`` validates a parsed YAML document and returns it normalised: every
optional key present (with its default or None), vectors as tuples, tagged entries as
(tag, data) pairs. Cross-references (section names, set names) are resolved when the model is
built (rodsim.run), where the mesh is known.
"""

import math
from dataclasses import dataclass
from typing import Any

from rodsim.case import units
from rodsim.case.schema import (
    Boolean,
    Constant,
    Either,
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
    render,
    show,
)

DOFS = ("ux", "uy", "uz", "rx", "ry", "rz")

POSITIVE = Number(gt=0, dim="1")
COUNT = Number(ge=1, le=1e8, integer=True, dim="1")
# no upper bound: the memory a model needs limits it, and rodsim.resources refuses a model
# whose estimate exceeds the memory available (exit code 4) before the mesh is generated
ELEMENTS = Number(ge=1, integer=True, dim="1")
NAME = Text(identifier=True)
SET_NAME = Text()  # a reference may be dotted: beam.end
POINT = Vector(item=Number(dim="length"))
DIRECTION = Vector(nonzero=True, item=Number(dim="1"))


def positive(dim: str) -> Number:
    return Number(gt=0, dim=dim)


def nonnegative(dim: str) -> Number:
    return Number(ge=0, dim=dim)


def pair(dim: str) -> Vector:
    """Two positive numbers of one dimension."""
    return Vector(n=2, item=positive(dim))


def vector(dim: str, **kw) -> Vector:
    """Three numbers of one dimension (global axes)."""
    return Vector(item=Number(dim=dim, ge=kw.pop("ge", None)), **kw)


def _exactly_one(*keys):
    def rule(data, path: Path):
        given = [k for k in keys if data[k] is not None]
        if len(given) != 1:
            raise fail(
                path,
                f"expected exactly one of {', '.join(keys)}, got "
                + (", ".join(given) if given else "none"),
            )

    rule.__doc__ = f"exactly one of {', '.join(keys)}"
    return rule


def _at_least_one(*keys):
    def rule(data, path: Path):
        if all(data[k] is None for k in keys):
            raise fail(path, f"expected at least one of {', '.join(keys)}")

    rule.__doc__ = f"at least one of {', '.join(keys)}"
    return rule


def _at_most_one(*keys):
    def rule(data, path: Path):
        given = [k for k in keys if data[k] is not None]
        if len(given) > 1:
            raise fail(path, f"give only one of {', '.join(keys)}, got {', '.join(given)}")

    rule.__doc__ = f"at most one of {', '.join(keys)}"
    return rule


# --- time functions -----------------------------------------------------------------------------

TIME = OneOf(
    (
        ("constant", Number(dim="1"), "constant multiplier v"),
        ("ramp", positive("time"), "0 to 1 linearly over T, then 1"),
        (
            "table",
            ListOf(Vector(n=2, dims=("time", "1")), min_items=1),
            "piecewise-linear [[t, v], ...], times strictly increasing; 0 after the last time",
        ),
        (
            "sine",
            Record(
                (
                    Field("amplitude", Number(dim="1"), "amplitude"),
                    Field("frequency", Number(dim="1/time"), "cycles per unit time"),
                    Field("phase", Number(dim="angle"), "phase (rad)", default=0.0),
                )
            ),
            "amplitude sin(2 pi frequency t + phase)",
        ),
    )
)

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
)

PART = Tagged(
    (
        ("rod", ROD_PART, True, "straight rod"),
        ("arc", ARC_PART, True, "circular arc"),
        ("rectangle", RECTANGLE_PART, True, "flat plate"),
        ("file", FILE_PART, False, "mesh file"),
    )
)

# --- sections -----------------------------------------------------------------------------------

MATERIAL = Record(
    (
        Field("E", positive("force/length^2"), "Young's modulus (force/length^2)"),
        Field("nu", Number(gt=-1, le=0.5, dim="1"), "Poisson's ratio"),
        Field("rho", positive("mass/length^3"), "density (mass/length^3)"),
    )
)

SHAPE = OneOf(
    (
        ("rectangle", pair("length"), "[width along d2, height along d3]"),
        ("circle", positive("length"), "radius"),
        ("tube", Vector(n=2, item=nonnegative("length")), "[outer radius, inner radius]"),
    )
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
        Field("shape", SHAPE, "solid cross-section shape", optional=True),
        Field(
            "shear_factor",
            Number(gt=0, le=1, dim="1"),
            "shear correction k (default: Cowper's value)",
            optional=True,
        ),
    ),
    doc="Rod section: resultant stiffnesses, or material and shape.",
    rules=(_rod_section_form,),
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

# --- sets, boundary conditions, loads, masses ---------------------------------------------------


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
    )
)

PRESCRIBE = Record(
    (
        Field(
            "displacement",
            Vector(nullable=True, item=Number(dim="length")),
            "displacement u: x = x0 + f(t) u; a null "
            "component is left free (e.g. [null, -1, null] prescribes only y)",
            optional=True,
        ),
        Field(
            "rotation",
            vector("angle"),
            "rotation vector theta (rad, global axes): Lambda = exp(f(t) theta) Lambda0",
            optional=True,
        ),
        Field("time", TIME, "time function f (default: constant 1)", optional=True),
    ),
    rules=(_at_least_one("displacement", "rotation"),),
)

BOUNDARY = Record(
    (
        Field("set", SET_NAME, "node set"),
        Field(
            "fix",
            Either((Constant("all"), ListOf(Text(choices=DOFS), min_items=1))),
            "all, or a list of " + " ".join(DOFS),
            optional=True,
        ),
        Field("prescribe", PRESCRIBE, "prescribed motion of every node of the set", optional=True),
    ),
    rules=(_exactly_one("fix", "prescribe"),),
)

NODE_LOAD = Record(
    (
        Field("set", SET_NAME, "node set; the load acts at every node of it"),
        Field("force", vector("force"), "force (global axes, reference state)", optional=True),
        Field(
            "moment", vector("force*length"), "moment (global axes, reference state)", optional=True
        ),
        Field(
            "follower",
            Boolean(),
            "rotate with the node instead of keeping a fixed direction",
            default=False,
        ),
        Field(
            "pressure",
            Number(dim="force/length^2"),
            "plates: pressure along the current director d3, always a "
            "follower load (`follower` does not apply); on the plate cells whose corners are all "
            "in the set",
            optional=True,
        ),
        Field(
            "edge_force",
            vector("force/length"),
            "plates: force per unit length (global axes) along the plate "
            "boundary edges whose two ends are in the set, lumped to their nodes (half an edge "
            "each); dead, or follower with `follower: true`",
            optional=True,
        ),
        Field("time", TIME, "time function (default: constant 1)", optional=True),
    ),
    rules=(_at_least_one("force", "moment", "pressure", "edge_force"),),
)

GRAVITY = Record(
    (
        Field("gravity", vector("length/time^2"), "acceleration of gravity (length/time^2)"),
        Field("time", TIME, "time function (default: constant 1)", optional=True),
    )
)

LOAD = Tagged(
    (
        ("set", NODE_LOAD, False, "nodal force and moment"),
        ("gravity", GRAVITY, False, "gravity on every mass"),
    )
)

FRAME = Field(
    "frame",
    Text(choices=("global", "section")),
    "axes of the per-direction values: "
    "global, or the node's reference section frame d1 d2 d3 (fixed in space)",
    default="global",
)

SPRING = Record(
    (
        Field("set", SET_NAME, "node set; every node of it gets the springs and dashpots"),
        Field(
            "spring",
            vector("force/length", ge=0),
            "translational stiffness per direction (force/length): f = -K (x - x0)",
            optional=True,
        ),
        Field(
            "rotational_spring",
            vector("force*length", ge=0),
            "rotational stiffness per direction (moment/radian) on psi = log(Lambda0^T Lambda)",
            optional=True,
        ),
        Field(
            "dashpot",
            vector("force*time/length", ge=0),
            "translational damping per direction (force/velocity)",
            optional=True,
        ),
        Field(
            "rotational_dashpot",
            vector("force*length*time", ge=0),
            "rotational damping per direction (moment x time/radian) on the rate of psi",
            optional=True,
        ),
        FRAME,
    ),
    rules=(_at_least_one("spring", "rotational_spring", "dashpot", "rotational_dashpot"),),
)

FOUNDATION = Record(
    (
        Field(
            "foundation",
            SET_NAME,
            "node set; the foundation acts on the rod elements whose "
            "two ends are in it, lumped to their nodes (half an element each)",
        ),
        Field(
            "modulus",
            vector("force/length^2", ge=0, nonzero=True),
            "foundation modulus per direction (force per length of rod per displacement)",
        ),
        Field(
            "damping",
            vector("force*time/length^2", ge=0),
            "viscous foundation per direction (force per length per velocity)",
            optional=True,
        ),
        FRAME,
    )
)

SUPPORT = Tagged(
    (
        ("set", SPRING, False, "springs and dashpots to the ground at every node of a set"),
        ("foundation", FOUNDATION, False, "elastic (Winkler) foundation along rods"),
    )
)

INERTIA = Either(
    (vector("mass*length^2", ge=0), Vector(item=Vector(item=Number(dim="mass*length^2"))))
)


def _inertia_shape(data, path: Path):
    j = data["inertia"]
    if j is None or not isinstance(j[0], tuple):
        return
    for a, b in ((0, 1), (0, 2), (1, 2)):
        if abs(j[a][b] - j[b][a]) > 1e-12 * max(1.0, abs(j[a][b]), abs(j[b][a])):
            raise fail(
                (*path, "inertia"),
                f"expected a symmetric 3x3 inertia tensor, got "
                f"[{a}][{b}] = {j[a][b]:g} but [{b}][{a}] = {j[b][a]:g}",
            )


_inertia_shape.__doc__ = "a 3x3 inertia must be symmetric"

MASS = Record(
    (
        Field("set", SET_NAME, "node set; the mass is added at every node of it"),
        Field("mass", nonnegative("mass"), "point mass"),
        Field(
            "inertia",
            INERTIA,
            "principal rotary inertias [J1, J2, J3] about global axes at "
            "the reference state, or a symmetric 3x3 tensor",
            optional=True,
        ),
    ),
    rules=(_inertia_shape,),
)

INITIAL = Record(
    (
        Field(
            "velocity",
            vector("length/time"),
            "uniform translational velocity",
            default=(0.0, 0.0, 0.0),
        ),
        Field(
            "angular_velocity",
            vector("1/time"),
            "rigid spin (rad/time) about `center`",
            default=(0.0, 0.0, 0.0),
        ),
        Field("center", POINT, "centre of the rigid spin", default=(0.0, 0.0, 0.0)),
    )
)

# --- solver and output --------------------------------------------------------------------------


def _step_count(data, path: Path):
    if data["t_end"] is None:
        if data["analysis"] == "dynamic":
            raise fail(
                (*path, "t_end"),
                "expected the end time t_end (a positive number) for analysis: dynamic",
            )
        return
    # a denormal dt (1e-320) makes t_end / dt overflow where the steps are counted
    if data["dt"] != "auto" and not math.isfinite(data["t_end"] / data["dt"]):
        raise fail(
            (*path, "dt"),
            f"expected a time step giving a finite number of steps up to "
            f"t_end = {data['t_end']:g}, got {data['dt']:g}",
        )


_step_count.__doc__ = "t_end is given for analysis: dynamic, and t_end / dt is finite"

SOLVER = Record(
    (
        Field(
            "analysis", Text(choices=("dynamic", "equilibrium")), "analysis type", default="dynamic"
        ),
        Field(
            "scheme",
            Text(choices=("explicit", "implicit")),
            "explicit: Lie-group partitioned Runge-Kutta; implicit: Cayley variational integrator",
            default="explicit",
        ),
        Field(
            "group", Text(choices=("SO3xR3", "SE3")), "nodal configuration group", default="SO3xR3"
        ),
        Field(
            "order", Either((Constant(2), Constant(4))), "explicit scheme order: 2 or 4", default=2
        ),
        Field(
            "dt",
            Either((Constant("auto"), positive("time"))),
            "time step, or auto = safety x the "
            "stable-step estimate (both schemes; give dt to take the large steps the implicit "
            "scheme allows); equilibrium: the first pseudo-time step (auto = 10 x the "
            "stable-step estimate)",
            default="auto",
        ),
        Field(
            "safety",
            Number(gt=0, le=1, dim="1"),
            "fraction of the stable step used by dt: auto",
            default=0.8,
        ),
        Field(
            "t_end",
            positive("time"),
            "end time (dynamic analysis; not used by equilibrium)",
            optional=True,
        ),
        Field(
            "damping",
            Record(
                (
                    Field(
                        "strain_rate",
                        nonnegative("time"),
                        "beta (time): viscous resultants beta C dstrain/dt "
                        "(objective: no work on rigid motions)",
                        default=0.0,
                    ),
                    Field(
                        "mass",
                        nonnegative("1/time"),
                        "alpha (1/time): nodal force -alpha m v (for supported "
                        "structures: it also damps rigid motion)",
                        default=0.0,
                    ),
                )
            ),
            "damping, both schemes (explicit: the stable step accounts for it; equilibrium "
            "uses its own pseudo-time damping)",
            default={"strain_rate": 0.0, "mass": 0.0},
        ),
        Field(
            "newton",
            Record(
                (
                    Field(
                        "tol",
                        POSITIVE,
                        "residual tolerance, relative to the step's momenta and force impulse",
                        default=1e-10,
                    ),
                    Field("max_iter", COUNT, "iterations before the step fails", default=25),
                )
            ),
            "implicit scheme Newton settings",
            default={"tol": 1e-10, "max_iter": 25},
        ),
        Field(
            "equilibrium",
            Record(
                (
                    Field(
                        "tol",
                        POSITIVE,
                        "residual tolerance, relative to the applied loads plus "
                        "the support reactions",
                        default=1e-8,
                    ),
                    Field(
                        "load_steps",
                        COUNT,
                        "load increments: the load multiplier ends step i at "
                        "i / load_steps; loads and prescribed motions without a time function are "
                        "scaled by it, with one they follow it as time",
                        default=1,
                    ),
                    Field("max_steps", COUNT, "pseudo-time steps per load step", default=10000),
                )
            ),
            "equilibrium settings",
            default={"tol": 1e-8, "load_steps": 1, "max_steps": 10000},
        ),
        Field(
            "parallel",
            Either((Constant("auto"), Boolean())),
            "use all cores; auto: from 2000 elements on",
            default="auto",
        ),
        Field(
            "rotation_tol",
            POSITIVE,
            "explicit scheme: tolerance of the nodal rotation solve",
            default=1e-13,
        ),
    ),
    rules=(_step_count,),
)


@dataclass(frozen=True)
class Compression:
    """output.compression: none, gzip, gzip:LEVEL or lzf (rodsim.results_writer)."""

    def expected(self) -> str:
        return "one of none, gzip, gzip:1 to gzip:9 (the level; gzip is gzip:4), lzf"

    def check(self, value, path: Path):
        name, colon, level = value.partition(":") if isinstance(value, str) else ("", "", "")
        if value in ("none", "gzip", "lzf") or (
            name == "gzip" and colon and level in tuple("123456789")
        ):
            return value
        raise fail(path, f"expected {self.expected()}, got {show(value)}")


OUTPUT = Record(
    (
        Field("every", COUNT, "steps between frames", optional=True),
        Field(
            "interval",
            positive("time"),
            "simulated time between frames (default: t_end / 100)",
            optional=True,
        ),
        Field("vtk", Boolean(), "also write the ParaView series", default=True),
        Field(
            "compression",
            Compression(),
            "compression of the results file's frames: gzip "
            "(any HDF5 reader) or lzf (faster, h5py only); docs/results.md",
            default="none",
        ),
    ),
    rules=(_at_most_one("every", "interval"),),
)


@dataclass(frozen=True)
class Units:
    """The `units:` declaration (rodsim.case.units): gives a UnitSystem."""

    def expected(self) -> str:
        return "SI, mm-t-s, or a mapping {length: UNIT, mass: UNIT, time: UNIT}"

    def check(self, value, path: Path):
        return units.system(value, render(path))


def declared_units(data) -> "units.UnitSystem | None":
    """The unit system a case document declares (checked), before the rest is checked."""
    if isinstance(data, dict) and data.get("units") is not None:
        return Units().check(data["units"], ("units",))
    return None


CASE = Record(
    (
        Field("rodsim", Constant(1, "schema version"), "schema version"),
        Field("title", Text(), "free text", default=""),
        Field(
            "units",
            Units(),
            "the unit system of the numbers; with it, numbers may be written with units "
            "(`210 GPa`, `10 mm`) and are converted into it; docs/units.md",
            optional=True,
        ),
        Field("mesh", ListOf(PART, min_items=1), "the parts of the structure"),
        Field("sections", MapOf(SECTION), "named sections"),
        Field("sets", MapOf(SET), "extra named node sets", default={}),
        Field(
            "merge_tolerance",
            nonnegative("length"),
            "nodes of different parts closer than this are "
            "merged (default: 1e-8 x the model size), and so are two definitions of one node "
            "id in a mesh file (default: 1e-8 x the file's size)",
            optional=True,
        ),
        Field("boundary", ListOf(BOUNDARY), "fixed and prescribed degrees of freedom", default=[]),
        Field(
            "supports",
            ListOf(SUPPORT),
            "elastic supports: springs and dashpots to the ground, elastic foundations",
            default=[],
        ),
        Field("loads", ListOf(LOAD), "nodal loads and gravity", default=[]),
        Field("masses", ListOf(MASS), "point masses with rotary inertia", default=[]),
        Field(
            "initial",
            INITIAL,
            "initial conditions (default: at rest in the reference)",
            default={"velocity": (0.0,) * 3, "angular_velocity": (0.0,) * 3, "center": (0.0,) * 3},
        ),
        Field("solver", SOLVER, "analysis and integrator settings"),
        Field(
            "output",
            OUTPUT,
            "frames and files",
            default={"every": None, "interval": None, "vtk": True, "compression": "none"},
        ),
    ),
    doc="A rodsim case file, schema v1.",
)
