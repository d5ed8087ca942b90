"""The schema of a benchmark: ``benchmark.yaml`` (what to run and compare) and
``reference.json`` (every reference number with its source).

Every number a benchmark compares against is looked up by name in reference.json, so no
reference value lives in a spec or in code; a spec only says which series of the results is
reduced how, against which named value, with which tolerance and why.

Both files are described by the case file's schema nodes (rodsim.case.schema): SPEC and
REFERENCE check them (types, unknown keys with "did you mean", rules across keys) and generate
their reference, docs/validation/spec_reference.md (rodsim.validate.spec_reference). Names
that point from one file into the other (a value, a curve) are resolved afterwards, when the
typed Benchmark is built (rodsim.validate.loading). Every problem is one CaseError naming the
file and the key path (exit code 2), like a case file's.
"""

import difflib
import math
from dataclasses import dataclass

from rodsim.case import schema as s

SPEC_FILE = "benchmark.yaml"
TIERS = ("quick", "full")
REDUCTIONS = {
    "final": "the last value",
    "at": "the value at time `at` (linear between frames)",
    "max": "the largest value in the window",
    "min": "the smallest value in the window",
    "absmax": "the largest magnitude in the window",
    "mean": "the time average over the window (trapezoidal)",
    "band": "max - min over the window",
    "relband": "(max - min) / abs(mean) over the window: for a level without a reference",
    "drift": "the largest departure from the window's first value",
    "frequency": "the angular frequency of the strongest oscillation in the window (a "
    "least-squares fit of c + a cos wt + b sin wt, far finer than the FFT bin)",
    "curve_rms": "the RMS difference from `curve` at its points in the window, relative to "
    "the curve's largest magnitude there; compared against 0",
    "order": "the convergence order: `frequency` of each run of `h`, then the least-squares "
    "slope of log abs(f - exact) against log h",
    "crossing": "the first time abs(series) reaches the level `at`",
}
REDUCERS = tuple(REDUCTIONS)


# --- the nodes the spec needs beyond rodsim.case.schema ---------------------------------------


@dataclass(frozen=True)
class Prose:
    """Text that says something: a non-empty string, returned without surrounding blanks."""

    def expected(self) -> str:
        return "a non-empty string"

    def check(self, value, path: s.Path) -> str:
        if not isinstance(value, str) or not value.strip():
            raise s.fail(path, f"expected {self.expected()}, got {s.show(value)}")
        return s.Text().check(value, path).strip()  # Text refuses control characters


@dataclass(frozen=True)
class Override:
    """A ``--set`` assignment KEY=VALUE, applied to the benchmark's case file."""

    def expected(self) -> str:
        return "a KEY=VALUE override"

    def check(self, value, path: s.Path) -> str:
        if not isinstance(value, str) or "=" not in value:
            raise s.fail(path, f"expected {self.expected()}, got {s.show(value)}")
        return s.Text().check(value, path)


@dataclass(frozen=True)
class Window:
    """[t_from, t_to] -> (t_from, t_to); a null t_to is the end of the run (inf)."""

    def expected(self) -> str:
        return "[t_from, t_to] (t_to null: to the end)"

    def check(self, value, path: s.Path) -> tuple[float, float]:
        if not isinstance(value, list) or len(value) != 2:
            raise s.fail(path, f"expected {self.expected()}, got {s.show(value)}")
        lo = s.Number().check(value[0], (*path, 0))
        hi = math.inf if value[1] is None else s.Number().check(value[1], (*path, 1))
        if not hi > lo:
            raise s.fail(path, f"the window must end after it starts, got [{lo:g}, {hi:g}]")
        return (lo, hi)


def did_you_mean(name, names) -> str:
    close = difflib.get_close_matches(str(name), list(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- benchmark.yaml -------------------------------------------------------------------------

NAME = s.Text(identifier=True)


def _at_given(q: dict, path: s.Path) -> None:
    """`reduce: at` and `reduce: crossing` need `at`"""
    if q["reduce"] in ("at", "crossing") and q["at"] is None:
        what = "the time" if q["reduce"] == "at" else "the level abs(series) reaches"
        raise s.fail((*path, "at"), f"missing key 'at': reduce: {q['reduce']} needs {what}")


def _reference_given(q: dict, path: s.Path) -> None:
    """`reduce: curve_rms` needs `curve`, every other reduction `reference`"""
    if q["reduce"] == "curve_rms" and q["curve"] is None:
        raise s.fail((*path, "curve"), "missing key 'curve': reduce: curve_rms needs it")
    if q["reduce"] != "curve_rms" and q["reference"] is None:
        raise s.fail(
            (*path, "reference"), "missing key 'reference' (a name in reference.json values)"
        )


def _order_given(q: dict, path: s.Path) -> None:
    """`reduce: order` needs `h` of two runs or more and `exact`, which only it takes"""
    if q["reduce"] != "order":
        for key in ("h", "exact"):
            if q[key] is not None:
                raise s.fail((*path, key), f"only reduce: order takes {key}")
        return
    if len(q["h"] or {}) < 2:
        raise s.fail((*path, "h"), "reduce: order needs h of at least two runs")
    if q["exact"] is None:
        raise s.fail((*path, "exact"), "missing key 'exact': reduce: order needs it")


QUANTITY = s.Record(
    (
        s.Field("name", Prose(), "what is compared, as the report's table names it"),
        s.Field(
            "series",
            Prose(),
            "the time series of the results, as `rodsim plot` names it: "
            "`WHAT[.COMPONENT][@SET[/SET]]`, a leading `-` negates it; WHAT is displacement, "
            "position, local_displacement (@SET/REF), reaction_force, reaction_moment (@SET), "
            "linear_momentum, angular_momentum, energy (.total, .kinetic, .internal, "
            ".external), load_multiplier, or, one value per mode against the mode number in "
            "place of time (`reduce: at, at: K` takes mode K), frequency (analysis: modal) "
            "and buckling_factor (analysis: buckling)",
        ),
        s.Field("reduce", s.Text(choices=REDUCERS), "how the series becomes a number (below)"),
        s.Field(
            "run",
            NAME,
            "the run reduced, a key of `runs` (absent: the first run; `order` uses `h`)",
            optional=True,
        ),
        s.Field(
            "window",
            Window(),
            "the part of the run reduced (absent: all of it)",
            optional=True,
        ),
        s.Field("at", s.Number(), "`at`: the time; `crossing`: the level", optional=True),
        s.Field(
            "reference",
            NAME,
            "the reference value, a key of `values` in reference.json (`curve_rms`: not used)",
            optional=True,
        ),
        s.Field(
            "scale",
            s.Either((s.Number(gt=0), NAME)),
            "what the error is relative to: a number, or a key of `values` (its magnitude); "
            "absent: the reference's magnitude, which must not be 0",
            optional=True,
        ),
        s.Field(
            "tolerance",
            s.Number(gt=0),
            "the largest relative error abs(computed - reference) / scale that passes",
        ),
        s.Field("reason", Prose(), "why this tolerance: from theory, a mesh study or a source"),
        s.Field("curve", NAME, "a reference curve, a key of `curves`", optional=True),
        s.Field(
            "h",
            s.MapOf(s.Number(gt=0), doc_key="RUN"),
            "`order`: the element size of each run of the sequence, by run name",
            optional=True,
        ),
        s.Field("exact", NAME, "`order`: the exact value, a key of `values`", optional=True),
    ),
    doc="One compared number: `series` of a run reduced by `reduce`, its error "
    "abs(computed - reference) / scale against `tolerance`.",
    rules=(_at_given, _reference_given, _order_given),
)

TIER = s.Record(
    (
        s.Field(
            "set",
            s.ListOf(Override()),
            "overrides of every run in this tier, after the run's own",
            default=(),
        ),
        s.Field(
            "runs",
            s.ListOf(NAME, min_items=1),
            "the runs of this tier, keys of `runs` (absent: all of them)",
            optional=True,
        ),
    ),
)
_ALL_RUNS = {"set": (), "runs": None}

FIGURE = s.Record(
    (
        s.Field(
            "kind",
            s.Text(choices=("time", "convergence")),
            "`time`: the series of every run against time; `convergence`: the error of the "
            "`order` quantity against h, with the expected slope",
            default="time",
        ),
        s.Field(
            "series", Prose(), "the series drawn (absent: the first quantity's)", optional=True
        ),
        s.Field("curve", NAME, "a reference curve drawn with it, a key of `curves`", optional=True),
        s.Field("ylabel", Prose(), "the label of the y axis (absent: the series)", optional=True),
    ),
    doc="The benchmark's figure in the report.",
)


def run_names(data: dict) -> tuple[str, ...]:
    return tuple(data["runs"] or ("main",))


def _runs_known(data: dict, path: s.Path) -> None:
    """every run named in `tiers` and in a quantity's `run` or `h` is a key of `runs`"""
    names = run_names(data)
    named = [
        ((*path, "tiers", t, "runs", i), r)
        for t in TIERS
        for i, r in enumerate(data["tiers"][t]["runs"] or ())
    ]
    for i, q in enumerate(data["quantities"]):
        named += [((*path, "quantities", i, "run"), q["run"])] if q["run"] else []
        named += [((*path, "quantities", i, "h", r), r) for r in q["h"] or {}]
    for where, run in named:
        if run not in names:
            raise s.fail(
                where, f"no run {run!r}{did_you_mean(run, names)} (runs: {', '.join(names)})"
            )


def _convergence_drawn(data: dict, path: s.Path) -> None:
    """`figure: {kind: convergence}` needs a quantity with `reduce: order`"""
    figure = data["figure"]
    if figure and figure["kind"] == "convergence":
        if not any(q["reduce"] == "order" for q in data["quantities"]):
            raise s.fail(
                (*path, "figure", "kind"), "kind: convergence needs a quantity with reduce: order"
            )


SPEC = s.Record(
    (
        s.Field("number", s.Number(integer=True, ge=1), "the benchmark's number (report order)"),
        s.Field("title", Prose(), "the title in the report"),
        s.Field(
            "case",
            Prose(),
            "the case file, relative to the benchmark's folder (run as `rodsim run` runs it)",
        ),
        s.Field(
            "reference", Prose(), "the reference file, relative to the folder: `reference.json`"
        ),
        s.Field(
            "runs",
            s.MapOf(s.ListOf(Override()), doc_key="RUN"),
            "runs of the case by name, each a list of `--set` overrides (absent: one run "
            "`main` without overrides)",
            optional=True,
        ),
        s.Field(
            "tiers",
            s.Record(
                (
                    s.Field("quick", TIER, "`rodsim validate --quick` (CI)", default=_ALL_RUNS),
                    s.Field("full", TIER, "`rodsim validate`", default=_ALL_RUNS),
                ),
                doc="What each tier runs: the same quantities, coarser or shorter for quick.",
            ),
            "the two tiers (absent: every run as it is, in both)",
            default={t: _ALL_RUNS for t in TIERS},
        ),
        s.Field("quantities", s.ListOf(QUANTITY, min_items=1), "the compared numbers"),
        s.Field("figure", FIGURE, "the figure of the report (absent: none)", optional=True),
        s.Field("notes", Prose(), "a paragraph for the report", default=""),
    ),
    rules=(_runs_known, _convergence_drawn),
)


# --- reference.json -------------------------------------------------------------------------

REFERENCE = s.Record(
    (
        s.Field("citation", s.ListOf(Prose(), min_items=1), "full citations of the sources"),
        s.Field(
            "values",
            s.MapOf(
                s.Record(
                    (
                        s.Field("value", s.Number(), "the number"),
                        s.Field(
                            "source",
                            Prose(),
                            "where it comes from: table, equation, exact invariant, digitised "
                            "figure, computation (with the command that repeats it)",
                        ),
                        s.Field("uncertainty", s.Text(), "how far it can be trusted", default=""),
                    ),
                    doc="A reference number.",
                )
            ),
            "the reference numbers by name",
            optional=True,
        ),
        s.Field(
            "curves",
            s.MapOf(
                s.Record(
                    (
                        s.Field(
                            "file",
                            Prose(),
                            "a CSV file beside reference.json: a header line, then rows x, y "
                            "(`#` comment lines allowed)",
                        ),
                        s.Field("source", Prose(), "where the curve comes from"),
                        s.Field("uncertainty", Prose(), "e.g. the digitising error"),
                    ),
                    doc="A reference curve (e.g. digitised from a figure).",
                )
            ),
            "reference curves by name",
            optional=True,
        ),
        s.Field("notes", Prose(), "anything a reader of the file should know", default=""),
    ),
)
