"""The solver settings of a case file (`solver:`, docs/case_reference.md): the analyses and
schemes, time steps, damping, Newton, adaptive steps, equilibrium and path following, modal and
buckling. Checked into rodsim.case.settings.Solver."""

import math

from rodsim.case import settings
from rodsim.case.fields import COUNT, POSITIVE, nonnegative, positive
from rodsim.case.schema import (
    FILLED,
    Boolean,
    Constant,
    Either,
    Field,
    ListOf,
    Number,
    Path,
    Record,
    Text,
    Vector,
    fail,
)
from rodsim.model.rayleigh import rayleigh
from rodsim.registry import Registry

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
