"""What acts on the structure in a case file: boundary conditions, loads, elastic supports,
point masses, the initial state and imperfections; their schema and typed settings
(rodsim.case.settings). The model builder (rodsim.case.model) turns them into model terms."""

from rodsim.case import settings
from rodsim.case.fields import (
    COUNT,
    DOFS,
    NAME,
    POINT,
    SET_NAME,
    TIME,
    at_least_one,
    exactly_one,
    nonnegative,
    vector,
)
from rodsim.case.initial_schema import SHAPE
from rodsim.case.schema import (
    Boolean,
    Constant,
    Either,
    Field,
    ListOf,
    Number,
    Path,
    Record,
    Tagged,
    Text,
    Vector,
    fail,
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
    rules=(at_least_one("displacement", "rotation"),),
    into=settings.Prescribe,
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
    rules=(exactly_one("fix", "prescribe"),),
    into=settings.Boundary,
)


# the keys of a nodal or distributed `loads:` entry that hold values (at least one is given;
# a load group's factor multiplies them: rodsim.case.load_terms)
LOAD_VALUES = (
    "force",
    "moment",
    "pressure",
    "edge_force",
    "line_force",
    "line_moment",
    "surface_force",
    "body_force",
)

GROUP = Field(
    "group",
    NAME,
    "the load group of this entry: its values are multiplied by the group's factor in "
    "`combination` (no group: factor 1)",
    optional=True,
)


def _section_frame_for_lines(data, path: Path):
    turned = ("line_force", "line_moment", "surface_force")
    if data["frame"] != "global" and all(data[k] is None for k in turned):
        raise fail(
            (*path, "frame"),
            "frame applies to line_force, line_moment and surface_force; this entry has none",
        )


_section_frame_for_lines.__doc__ = "frame: section needs line_force, line_moment or surface_force"

NODE_LOAD = Record(
    (
        Field(
            "set",
            SET_NAME,
            "node set: force and moment act at every node of it, the other loads on its "
            "elements (below)",
        ),
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
            "plates: pressure normal to the current (deformed) surface, per current area, "
            "positive towards the reference d3; always a follower load (`follower` does not "
            "apply); on the plate cells whose corners are all in the set",
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
        Field(
            "line_force",
            vector("force/length"),
            "rods: force per unit reference length along the rod elements whose two ends are "
            "in the set, lumped to their nodes (half an element each: the linear element's "
            "consistent load); dead, or follower with `follower: true` (fixed in the section "
            "frame)",
            optional=True,
        ),
        Field(
            "line_moment",
            vector("force"),
            "rods: moment per unit reference length along the same elements, lumped alike",
            optional=True,
        ),
        Field(
            "surface_force",
            vector("force/length^2"),
            "plates: force per unit reference area on the plate cells whose corners are all "
            "in the set (a traction: any direction, unlike pressure), lumped to the corners "
            "by the cells' consistent nodal areas; dead, or follower with `follower: true`",
            optional=True,
        ),
        Field(
            "body_force",
            vector("force/length^3"),
            "force per unit reference volume (global axes) on the rod elements and plate "
            "cells whose nodes are all in the set: times the rods' section area (a section "
            "with a shape) or the plates' thickness, lumped alike",
            optional=True,
        ),
        Field(
            "frame",
            Text(choices=("global", "section")),
            "axes of line_force, line_moment and surface_force: global, or each element's "
            "frame at the reference (rods: the section frame, d1 along the rod; plates: the "
            "cell's frame at each corner, d3 its normal)",
            default="global",
        ),
        Field("time", TIME, "time function (default: constant 1)", optional=True),
        GROUP,
    ),
    rules=(
        at_least_one(*LOAD_VALUES),
        _section_frame_for_lines,
    ),
    into=settings.NodeLoad,
)

GRAVITY = Record(
    (
        Field("gravity", vector("length/time^2"), "acceleration of gravity (length/time^2)"),
        Field("time", TIME, "time function (default: constant 1)", optional=True),
        GROUP,
    ),
    into=settings.GravityLoad,
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
    rules=(at_least_one("spring", "rotational_spring", "dashpot", "rotational_dashpot"),),
    into=settings.Spring,
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
    ),
    into=settings.Foundation,
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
    into=settings.Mass,
)


def _profile_along(data, path: Path):
    if (data["along"] is None) != (data["profile"] is None):
        raise fail(path, "give along and profile together: profile is a function of along's s")


_profile_along.__doc__ = "along and profile come together"


INITIAL_FIELD = Record(
    (
        Field("set", SET_NAME, "node set whose nodes get these"),
        Field("velocity", vector("length/time"), "their velocity", optional=True),
        Field(
            "angular_velocity",
            vector("1/time"),
            "their sections' angular velocity (rad/time; a spin of each section, not a "
            "rigid rotation of the set)",
            optional=True,
        ),
        Field(
            "along",
            SET_NAME,
            "a rod part: the values are multiplied by profile(s), s the arc length from the "
            "part's start (its `from`, or its first node) along its reference",
            optional=True,
        ),
        Field(
            "profile",
            TIME,
            "the function of s (any time function, of s instead of t)",
            optional=True,
        ),
    ),
    rules=(at_least_one("velocity", "angular_velocity"), _profile_along),
    into=settings.InitialField,
)


def _from_or_motion(data, path: Path):
    moving = any(data[k] != (0.0, 0.0, 0.0) for k in ("velocity", "angular_velocity"))
    if data["from"] is not None and (moving or data["fields"]):
        raise fail(
            path,
            "give either from (a frame's positions, rotations and momenta) or velocity, "
            "angular_velocity and fields, not both",
        )
    if data["shape"] and data["from"] is not None:
        raise fail(
            (*path, "shape"),
            "give either from (a frame's positions, rotations and momenta) or shape, not both",
        )
    if data["shape"] and (moving or data["fields"]):
        raise fail(
            (*path, "shape"),
            "a shape starts at rest: give shape without velocity, angular_velocity and "
            "fields (to start a shape moving, run it and start from its frame with from)",
        )


_from_or_motion.__doc__ = (
    "from is not given with a velocity, angular velocity, fields or shape; shape not with "
    "velocity, angular velocity or fields"
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
        Field(
            "fields",
            ListOf(INITIAL_FIELD),
            "velocities and angular velocities of node sets, over the uniform ones (later "
            "entries over earlier ones)",
            default=(),
        ),
        Field(
            "from",
            Text(),
            "a results file of this case's mesh (relative to the case file): start from the "
            "positions, rotations and momenta of one of its frames (dynamic analyses)",
            optional=True,
        ),
        Field(
            "frame",
            Number(integer=True, dim="1"),
            "the frame of `from`, from 0; negative counts from the last complete frame",
            default=-1,
        ),
        Field(
            "shape",
            ListOf(SHAPE),
            "start from rest in a deformed shape, the reference staying stress-free "
            "(dynamic analyses, rods; later entries over earlier ones)",
            default=(),
        ),
    ),
    rules=(_from_or_motion,),
    into=settings.Initial,
)


IMPERFECTION = Record(
    (
        Field(
            "from",
            Text(),
            "results file of a modal or buckling analysis of this case's mesh (relative to "
            "the case file): its modes/ or buckling/ shapes",
        ),
        Field("mode", COUNT, "which mode, from 1"),
        Field(
            "amplitude",
            Number(dim="length"),
            "the largest nodal displacement of the seeded shape (negative: the mode flipped)",
        ),
        Field(
            "kind",
            Text(choices=("geometry", "displacement")),
            "geometry: the reference is moved by the shape, stress-free (an imperfect "
            "structure; any analysis); displacement: the perfect structure starts displaced "
            "by it (dynamic analyses)",
            default="geometry",
        ),
    ),
    doc="A mode of an earlier modal or buckling run seeded into this one (docs/modal.md, "
    '"Imperfections").',
    into=settings.Imperfection,
)
