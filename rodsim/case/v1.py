"""Case-file schema v1 (docs/case_reference.md), the single source of the case-file reference.

``CASE.check(data, ())`` validates a parsed YAML document and returns its typed, frozen
settings (rodsim.case.settings.CaseSettings): every optional key present (with its default or
None), vectors as tuples, time functions as TimeFunction. Mesh parts and node sets are in
rodsim.case.parts, sections in rodsim.case.sections, shared nodes in rodsim.case.fields.
Cross-references (section names, set names) are resolved when the model is built
(rodsim.case.model), where the mesh is known.
"""

import math
from dataclasses import dataclass

from rodsim.case import connectors, settings, units
from rodsim.case.conditions import BOUNDARY, IMPERFECTION, INITIAL, LOAD, MASS, SUPPORT
from rodsim.case.fields import (
    COUNT,
    DOFS,
    POSITIVE,
    at_most_one,
    nonnegative,
    positive,
)
from rodsim.case.parts import PART, SET
from rodsim.case.schema import (
    FILLED,
    Boolean,
    Constant,
    Either,
    Field,
    ListOf,
    MapOf,
    Number,
    Path,
    Record,
    Text,
    Vector,
    fail,
    render,
    show,
)
from rodsim.case.sections import SECTION
from rodsim.case.steps import step_record
from rodsim.model.rayleigh import rayleigh
from rodsim.registry import Registry
from rodsim.results.layout import FIELD_NAMES

__all__ = ["CASE", "DOFS", "declared_units"]

# --- solver and output --------------------------------------------------------------------------


# the analyses and the schemes of a dynamic one; each (analysis, scheme) is run by the solver
# rodsim.solvers.SOLVERS[settings.Solver.kind]
ANALYSES = Registry(
    "analysis",
    {
        "dynamic": "time integration by `scheme`",
        "equilibrium": "static equilibrium",
        "modal": "natural modes (`modal`, docs/modal.md)",
        "buckling": "linear buckling load factors and modes (`buckling`, docs/modal.md)",
    },
)
SCHEMES = Registry(
    "scheme",
    {
        "explicit": "Lie-group partitioned Runge-Kutta",
        "implicit": "Cayley variational integrator",
    },
)


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


def _adaptive_implicit(data, path: Path):
    a = data["adaptive"]
    implicit = data["scheme"] == "implicit" and data["analysis"] == "dynamic"
    if data["conserve_energy"] is True and not implicit:
        raise fail(
            (*path, "conserve_energy"),
            "energy-conserving steps are the implicit scheme's: expected scheme: implicit "
            "with analysis: dynamic, or conserve_energy: auto",
        )
    if a is None:
        return
    if not implicit:
        raise fail(
            (*path, "adaptive"),
            "adaptive steps are the implicit scheme's time steps: expected scheme: implicit "
            f"with analysis: dynamic, got scheme: {data['scheme']} with analysis: "
            f"{data['analysis']}",
        )
    if a.dt_min != "auto" and a.dt_max != "auto" and a.dt_min > a.dt_max:
        raise fail(
            (*path, "adaptive", "dt_min"),
            f"expected dt_min <= dt_max = {a.dt_max:g}, got {a.dt_min:g}",
        )


_adaptive_implicit.__doc__ = (
    "adaptive and conserve_energy: true are given with scheme: implicit, analysis: dynamic"
)

ADAPTIVE = Record(
    (
        Field(
            "tol",
            Number(ge=0, dim="1"),
            "local error tolerance: the RMS over nodes of a step's predictor-corrector "
            "difference h |xi - xi_p| (translations over the structure's size, rotations in "
            "radians); 0: no local error control",
            default=1e-3,
        ),
        Field(
            "energy_tol",
            Number(gt=0, dim="1"),
            "with conserve_energy: bound of the energy balance error summed over the run "
            "(kinetic plus elastic energy less the work of the loads and the damping), "
            "relative to the largest kinetic plus elastic energy so far; every step is solved "
            "again, or taken smaller, until the sum is within it (docs/implicit_scheme.md)",
            default=1e-4,
        ),
        Field(
            "dt_min",
            Either((Constant("auto"), positive("time"))),
            "smallest step: below it the run stops (exit 3); auto: 1e-6 x the first step",
            default="auto",
        ),
        Field(
            "dt_max",
            Either((Constant("auto"), positive("time"))),
            "largest step; auto: the frame interval",
            default="auto",
        ),
        Field(
            "grow",
            Number(gt=1, le=10, dim="1"),
            "the most a step grows over the one before",
            default=2.0,
        ),
    ),
    into=settings.AdaptiveSettings,
)


def _reachable(rows, path: Path):
    if len(rows) > 2:
        raise fail(path, f"expected one or two [frequency, ratio] targets, got {len(rows)}")
    if any(f <= 0 for f, _ in rows):
        raise fail(path, "expected positive target frequencies")
    try:
        rayleigh(rows)
    except ValueError as exc:
        raise fail(path, str(exc)) from None


_reachable.__doc__ = "one or two targets that Rayleigh damping with alpha, beta >= 0 reaches"


def _fitted_or_given(data, path: Path):
    if data["ratios"] is not None and (data["strain_rate"] or data["mass"]):
        raise fail(
            path,
            "give either ratios (the coefficients are fitted to them) or strain_rate and mass",
        )


_fitted_or_given.__doc__ = "ratios are not given with strain_rate or mass"


def _eigen_settings(what: str, about: str, modes: int) -> Record:
    """solver.modal and solver.buckling: {modes, about}."""
    return Record(
        (
            Field("modes", COUNT, f"how many of the lowest {what}", default=modes),
            Field("about", Text(choices=("reference", "equilibrium")), about, default="reference"),
        ),
        into=settings.ModalSettings,
    )


PATH = Record(
    (
        Field(
            "method",
            Text(choices=("arc_length", "displacement")),
            "arc_length: steps of a given length in the displacements (Crisfield), through "
            "limit points and snap-backs; displacement: the displacement of `set` along "
            "`component` in equal steps to `to`",
        ),
        Field("set", Text(), "the node set (one node) whose displacement is followed"),
        Field(
            "component",
            Text(choices=("ux", "uy", "uz")),
            "the translation component of that node followed",
        ),
        Field(
            "to",
            Number(dim="length"),
            "the displacement (from the reference) at which the path ends; arc_length: once "
            "the component passes it",
        ),
        Field(
            "steps",
            COUNT,
            "displacement: the equal increments to `to`; arc_length: the most path steps",
            default=100,
        ),
        Field(
            "length",
            Either((Constant("auto"), positive("length"))),
            "arc_length: the first step's length in the displacements (auto: |to| / 50); "
            "later steps adapt to 5 Newton corrections, up to 10 times it "
            "(docs/path_following.md)",
            default="auto",
        ),
    ),
    into=settings.PathSettings,
)

SOLVER = Record(
    (
        Field(
            "analysis",
            Text(choices=ANALYSES.names()),
            "; ".join(f"{k}: {v}" for k, v in ANALYSES),
            default="dynamic",
        ),
        Field(
            "scheme",
            Text(choices=SCHEMES.names()),
            "; ".join(f"{k}: {v}" for k, v in SCHEMES),
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
            "scheme allows); adaptive implicit steps: the first step (auto = the stable-step "
            "estimate); equilibrium: the first pseudo-time step (auto = 10 x the "
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
                    Field(
                        "ratios",
                        ListOf(
                            Vector(n=2, item=Number(ge=0), dims=("1/time", "1")),
                            min_items=1,
                            rule=_reachable,
                        ),
                        "target modal damping ratios [[f1, zeta1]] or [[f1, zeta1], [f2, "
                        "zeta2]] (f in cycles per time unit): strain_rate and mass are fitted "
                        "to them (Rayleigh; one target puts the minimum of zeta(f) at f1; "
                        'docs/modal.md, "Damping"); then give neither',
                        optional=True,
                    ),
                ),
                rules=(_fitted_or_given,),
                into=settings.Damping,
            ),
            "damping, both schemes (explicit: the stable step accounts for it; equilibrium "
            "uses its own pseudo-time damping)",
            default=FILLED,
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
                ),
                into=settings.Newton,
            ),
            "implicit scheme Newton settings",
            default=FILLED,
        ),
        Field(
            "adaptive",
            ADAPTIVE,
            "implicit scheme: steps of varying size, cut on a Newton failure, a local error "
            "or an energy balance beyond its bound and regrown when Newton is easy "
            '(docs/implicit_scheme.md, "Adaptive steps"); dt is the first step and frames '
            "fall on output.interval",
            optional=True,
        ),
        Field(
            "conserve_energy",
            Either((Constant("auto"), Boolean())),
            "implicit scheme: make each step's elastic forces energy-consistent "
            '(docs/implicit_scheme.md, "Energy-conserving steps"); auto: with adaptive '
            "steps",
            default="auto",
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
                    Field(
                        "eigenvalue",
                        Boolean(),
                        "record at each load step the lowest eigenvalue omega^2 of the tangent "
                        "about the equilibrium (solver/lowest_eigenvalue; docs/modal.md): it "
                        "crosses zero at a critical point",
                        default=False,
                    ),
                    Field(
                        "path",
                        PATH,
                        "path following instead of load steps: the factor of the case's loads "
                        "is an unknown (docs/path_following.md)",
                        optional=True,
                    ),
                ),
                into=settings.EquilibriumSettings,
            ),
            "equilibrium settings",
            default=FILLED,
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
        Field(
            "modal",
            _eigen_settings(
                "modes",
                "the state the modes are about: the reference, or the equilibrium under the "
                "case's loads at load multiplier 1 (through the `equilibrium` load steps)",
                10,
            ),
            "analysis: modal settings",
            default=FILLED,
        ),
        Field(
            "buckling",
            _eigen_settings(
                "buckling modes (the lowest positive load factors)",
                "the state the linear buckling is about: the unloaded reference, or the "
                "pre-loaded equilibrium under the case's loads at load multiplier 1 (through "
                "the `equilibrium` load steps); the factors multiply the case's loads either way",
                5,
            ),
            "analysis: buckling settings",
            default=FILLED,
        ),
    ),
    rules=(_step_count, _adaptive_implicit),
    into=settings.Solver,
)


@dataclass(frozen=True)
class Compression:
    """output.compression: none, gzip, gzip:LEVEL or lzf (rodsim.results.storage)."""

    def expected(self) -> str:
        return "one of none, gzip, gzip:1 to gzip:9 (the level; gzip is gzip:4), lzf"

    def check(self, value, path: Path):
        name, colon, level = value.partition(":") if isinstance(value, str) else ("", "", "")
        if value in ("none", "gzip", "lzf") or (
            name == "gzip" and colon and level in tuple("123456789")
        ):
            return value
        raise fail(path, f"expected {self.expected()}, got {show(value)}")


def _unique_fields(names: tuple, path: Path) -> None:
    """output.fields names each dataset once (a repeat is most likely a typo for another)."""
    for i, name in enumerate(names):
        if name in names[:i]:
            raise fail((*path, i), f"{name} is listed twice")


# the per-point rod stresses, which only output.stresses: points computes
POINT_STRESS_FIELDS = ("rods/stress", "rods/von_mises")


def _point_stress_fields(values: dict, path: Path) -> None:
    """a per-point rod stress in output.fields needs output.stresses: points"""
    for name in values.get("fields") or ():
        if name in POINT_STRESS_FIELDS and values.get("stresses") != "points":
            raise fail(
                (*path, "fields"),
                f"{name} is written with output.stresses: points only (it is "
                f"{values.get('stresses')}): set it, or leave {name} out",
            )


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
        Field(
            "stresses",
            Text(choices=("max", "points")),
            "rod stresses written (docs/stresses.md): max, the largest von Mises stress and the "
            "utilisation of each element; points, also the stress at every recovery point",
            default="max",
        ),
        Field(
            "fields",
            ListOf(Text(choices=FIELD_NAMES), rule=_unique_fields),
            "the per-frame datasets written besides those always written (nodes/position, "
            "nodes/rotation, time, energies, momenta, solver counters): dataset names of "
            "docs/results.md, or nodes/*, rods/*, plates/* for a group's; [] for none. "
            "Stresses left out are not computed (default: every dataset; docs/results.md)",
            optional=True,
        ),
    ),
    rules=(at_most_one("every", "interval"), _point_stress_fields),
    into=settings.Output,
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
