"""Case-file schema v1 (docs/case_reference.md), the single source of the case-file reference.

``CASE.check(data, ())`` validates a parsed YAML document and returns its typed, frozen
settings (rodsim.case.settings.CaseSettings): every optional key present (with its default or
None), vectors as tuples, time functions as TimeFunction. Mesh parts and node sets are in
rodsim.case.parts, sections in rodsim.case.sections, the solver settings in
rodsim.case.solver_schema, the output settings in rodsim.case.output_schema, shared nodes in
rodsim.case.fields.
Cross-references (section names, set names) are resolved when the model is built
(rodsim.case.model), where the mesh is known.
"""

from dataclasses import dataclass

from rodsim.case import connectors, settings, units
from rodsim.case.conditions import BOUNDARY, IMPERFECTION, INITIAL, LOAD, MASS, SUPPORT
from rodsim.case.fields import DOFS, nonnegative
from rodsim.case.output_schema import OUTPUT, Compression
from rodsim.case.parts import PART, SET
from rodsim.case.schema import (
    FILLED,
    Constant,
    Field,
    ListOf,
    MapOf,
    Number,
    Path,
    Record,
    Text,
    render,
)
from rodsim.case.sections import SECTION
from rodsim.case.solver_schema import ANALYSES, SCHEMES, SOLVER
from rodsim.case.steps import step_record

# the solver and output records live in their own modules; their names stay importable here,
# where the rest of the code and the docs look for the case schema
__all__ = ["ANALYSES", "CASE", "DOFS", "SCHEMES", "SOLVER", "Compression", "declared_units"]


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


STEP = step_record(SOLVER, OUTPUT)
STEP_LIST = ListOf(STEP)

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
        Field("boundary", ListOf(BOUNDARY), "fixed and prescribed degrees of freedom", default=()),
        Field(
            "supports",
            ListOf(SUPPORT),
            "elastic supports: springs and dashpots to the ground, elastic foundations",
            default=(),
        ),
        Field("connectors", connectors.CONNECTORS, connectors.DOC, default=()),
        Field(
            "loads",
            ListOf(LOAD),
            "nodal, distributed (per length, area, volume) and gravity loads",
            default=(),
        ),
        Field(
            "combination",
            MapOf(Number(dim="1"), doc_key="GROUP"),
            "factors of the load groups, e.g. {G: 1.35, Q: 1.5} (any real number; a negative "
            "one reverses a group): each entry of a group is multiplied by its factor (every "
            "group of `loads` must be listed: 0 leaves one out); the combination is run as "
            "one nonlinear case, not superposed",
            optional=True,
        ),
        Field("masses", ListOf(MASS), "point masses with rotary inertia", default=()),
        Field(
            "initial",
            INITIAL,
            "initial conditions (default: at rest in the reference)",
            default=FILLED,
        ),
        Field(
            "imperfection",
            IMPERFECTION,
            "a mode shape seeded as an imperfect reference or an initial displacement",
            optional=True,
        ),
        Field("solver", SOLVER, "analysis and integrator settings"),
        Field(
            "output",
            OUTPUT,
            "frames and files",
            default=FILLED,
        ),
        Field(
            "steps",
            STEP_LIST,
            "a sequence of analysis steps, each from the state the one before left, in one "
            "results file; each step's solver, combination and output keys merge over the "
            "case's (docs/steps.md)",
            optional=True,
        ),
    ),
    doc="A rodsim case file, schema v1.",
    into=settings.CaseSettings,
)
