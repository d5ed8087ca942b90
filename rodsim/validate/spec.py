"""Loading a benchmark: ``benchmark.yaml`` (what to run and compare) and ``reference.json``
(every reference number with its source).

Every number a benchmark compares against is looked up by name in reference.json, so no
reference value lives in a spec or in code; a spec only says which series of the results is
reduced how, against which named value, with which tolerance and why. Problems are CaseError
naming the file and the key (exit code 2), like case files.
"""

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from rodsim.case.load import parse_yaml
from rodsim.errors import CaseError

SPEC = "benchmark.yaml"
REDUCERS = (
    "final",
    "at",
    "max",
    "min",
    "absmax",
    "mean",
    "band",
    "relband",
    "drift",
    "frequency",
    "curve_rms",
    "order",
    "crossing",
)
TIERS = ("quick", "full")
_SPEC_KEYS = {
    "number",
    "title",
    "case",
    "reference",
    "runs",
    "tiers",
    "quantities",
    "figure",
    "notes",
}
_QUANTITY_KEYS = {
    "name",
    "series",
    "reduce",
    "run",
    "window",
    "at",
    "reference",
    "scale",
    "tolerance",
    "reason",
    "curve",
    "h",
    "exact",
}
_FIGURE_KEYS = {"series", "curve", "ylabel", "kind"}


@dataclass(frozen=True)
class Curve:
    """A reference curve (e.g. digitised from a figure): x, y and where they come from."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    source: str
    uncertainty: str


@dataclass(frozen=True)
class Value:
    """A reference number and where it comes from (table, equation, digitised figure)."""

    value: float
    source: str
    uncertainty: str = ""


@dataclass(frozen=True)
class Quantity:
    """One compared number: ``series`` of run(s) reduced by ``reduce``, against ``reference``.

    The error is |computed - reference| / scale (scale defaults to |reference|) and passes when
    it is at most ``tolerance``. ``order`` reduces one series per run (``h``: run -> element
    size) to a frequency each and fits the slope of log|f - exact| against log h (``exact``
    names the exact frequency).
    """

    name: str
    series: str
    reduce: str
    reference: Value
    scale: float
    tolerance: float
    reason: str
    run: str = "main"
    window: tuple[float, float] = (0.0, math.inf)
    at: float | None = None
    curve: Curve | None = None
    h: tuple[tuple[str, float], ...] = ()
    exact: Value | None = None


@dataclass(frozen=True)
class Figure:
    kind: str  # "time": series against time (reference curve overlaid); "convergence"
    series: str
    curve: Curve | None
    ylabel: str


@dataclass(frozen=True)
class Benchmark:
    name: str
    folder: Path
    number: int
    title: str
    case: Path
    citation: tuple[str, ...]
    runs: dict = field(hash=False)  # run name -> overrides (tuple of KEY=VALUE)
    tiers: dict = field(hash=False)  # tier -> (overrides, run names)
    quantities: tuple[Quantity, ...]
    figure: Figure | None
    notes: str = ""

    def overrides(self, run: str, tier: str) -> tuple[str, ...]:
        """The --set overrides of a run in a tier: the run's own, then the tier's."""
        return tuple(self.runs[run]) + tuple(self.tiers[tier][0])

    def tier_runs(self, tier: str) -> tuple[str, ...]:
        return self.tiers[tier][1]


def _fail(msg: str, file: Path, key: str | None = None) -> CaseError:
    return CaseError(msg, file=str(file), key=key)


def _number(v, file, key, positive=False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _fail(f"expected a finite number, found {v!r}", file, key)
    if positive and v <= 0:
        raise _fail(f"expected a number > 0, found {v!r}", file, key)
    return float(v)


def _text(v, file, key) -> str:
    if not isinstance(v, str) or not v.strip():
        raise _fail("expected a non-empty text", file, key)
    return v.strip()


def _mapping(v, file, key, allowed: set) -> dict:
    if not isinstance(v, dict):
        raise _fail(f"expected a mapping, found {type(v).__name__}", file, key)
    unknown = sorted(set(v) - allowed)
    if unknown:
        raise _fail(
            f"unknown key {unknown[0]!r}; expected one of {', '.join(sorted(allowed))}", file, key
        )
    return v


def _overrides(v, file, key) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(s, str) and "=" in s for s in v):
        raise _fail("expected a list of KEY=VALUE overrides", file, key)
    return tuple(v)


def load_reference(path: Path) -> tuple[tuple[str, ...], dict, dict]:
    """(citation lines, values by name, curves by name) of a reference.json."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise _fail("no such reference file", path) from None
    except json.JSONDecodeError as exc:
        raise _fail(f"invalid JSON: {exc.msg}", path, f"line {exc.lineno}") from None
    data = _mapping(data, path, None, {"citation", "values", "curves", "notes"})
    cites = data.get("citation")
    if not isinstance(cites, list) or not cites or not all(isinstance(c, str) for c in cites):
        raise _fail("expected a non-empty list of full citations", path, "citation")
    values = {}
    for name, v in _mapping(
        data.get("values", {}), path, "values", set(data.get("values", {}) or {})
    ).items():
        key = f"values.{name}"
        v = _mapping(v, path, key, {"value", "source", "uncertainty"})
        values[name] = Value(
            _number(v.get("value"), path, key + ".value"),
            _text(v.get("source"), path, key + ".source"),
            str(v.get("uncertainty", "")),
        )
    curves = {}
    for name, c in (data.get("curves") or {}).items():
        key = f"curves.{name}"
        c = _mapping(c, path, key, {"file", "source", "uncertainty", "columns"})
        curves[name] = _load_curve(
            name,
            path.parent / _text(c.get("file"), path, key + ".file"),
            _text(c.get("source"), path, key + ".source"),
            _text(c.get("uncertainty"), path, key + ".uncertainty"),
        )
    return tuple(cites), values, curves


def _load_curve(name: str, path: Path, source: str, uncertainty: str) -> Curve:
    """A two-column CSV (header line, '#' comments allowed)."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        raise _fail("no such curve file", path) from None
    rows = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")][1:]
    try:
        pairs = [tuple(float(x) for x in ln.split(",")[:2]) for ln in rows]
    except ValueError:
        raise _fail("expected two numeric columns after the header", path) from None
    if len(pairs) < 2 or any(len(p) != 2 for p in pairs):
        raise _fail("expected at least two rows of two numbers", path)
    return Curve(name, tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), source, uncertainty)


def _lookup(table: dict, name, file, key, what: str):
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise _fail(f"{name!r} is not a {what} of reference.json (it has: {known})", file, key)
    return table[name]


def _window(v, file, key) -> tuple[float, float]:
    if v is None:
        return (0.0, math.inf)
    if not isinstance(v, list) or len(v) != 2:
        raise _fail("expected [t_from, t_to] (t_to may be null for the end)", file, key)
    lo = _number(v[0], file, key)
    hi = math.inf if v[1] is None else _number(v[1], file, key)
    if hi <= lo:
        raise _fail("the window must end after it starts", file, key)
    return (lo, hi)


def _quantity(q, i: int, file: Path, runs: dict, values: dict, curves: dict) -> Quantity:
    key = f"quantities[{i}]"
    q = _mapping(q, file, key, _QUANTITY_KEYS)
    for k in ("name", "series", "reduce", "tolerance", "reason"):
        if k not in q:
            raise _fail(f"missing key {k!r}", file, key)
    reduce = q["reduce"]
    if reduce not in REDUCERS:
        raise _fail(
            f"reduce must be one of {', '.join(REDUCERS)}, found {reduce!r}", file, key + ".reduce"
        )
    run = q.get("run", next(iter(runs)))  # order quantities use the runs named in h
    if run not in runs:
        raise _fail(f"no run {run!r} (runs: {', '.join(runs)})", file, key + ".run")
    curve = None
    if "curve" in q:
        curve = _lookup(curves, q["curve"], file, key + ".curve", "curve")
    exact, h = None, ()
    if reduce == "curve_rms":
        if curve is None:
            raise _fail("reduce: curve_rms needs curve", file, key)
        reference = Value(0.0, f"curve {curve.name}: {curve.source}", curve.uncertainty)
    else:
        if "reference" not in q:
            raise _fail("missing key 'reference' (a name in reference.json values)", file, key)
        reference = _lookup(values, q["reference"], file, key + ".reference", "value")
    if reduce == "order":
        h_map = _mapping(q.get("h"), file, key + ".h", set(runs))
        if len(h_map) < 2:
            raise _fail("order needs h for at least two runs", file, key + ".h")
        h = tuple((r, _number(v, file, f"{key}.h.{r}", positive=True)) for r, v in h_map.items())
        exact = _lookup(values, q.get("exact"), file, key + ".exact", "value")
    if reduce in ("at", "crossing") and "at" not in q:
        raise _fail(f"reduce: {reduce} needs at (a time; for crossing, the level)", file, key)
    scale_v = q.get("scale")
    if scale_v is None:
        scale = abs(reference.value)
    elif isinstance(scale_v, str):
        scale = abs(_lookup(values, scale_v, file, key + ".scale", "value").value)
    else:
        scale = _number(scale_v, file, key + ".scale", positive=True)
    if not scale > 0:
        raise _fail(
            "the reference is 0: give scale (what the error is relative to)", file, key + ".scale"
        )
    return Quantity(
        name=_text(q["name"], file, key + ".name"),
        series=_text(q["series"], file, key + ".series"),
        reduce=reduce,
        reference=reference,
        scale=scale,
        tolerance=_number(q["tolerance"], file, key + ".tolerance", positive=True),
        reason=_text(q["reason"], file, key + ".reason"),
        run=run,
        window=_window(q.get("window"), file, key + ".window"),
        at=None if "at" not in q else _number(q["at"], file, key + ".at"),
        curve=curve,
        h=h,
        exact=exact,
    )


def load_benchmark(folder) -> Benchmark:
    """Read and check ``folder/benchmark.yaml`` and the reference file it names."""
    folder = Path(folder)
    file = folder / SPEC
    try:
        text = file.read_text()
    except FileNotFoundError:
        raise _fail("no such benchmark spec", file) from None
    data = _mapping(parse_yaml(text, str(file)), file, None, _SPEC_KEYS)
    for k in ("number", "title", "case", "reference", "quantities"):
        if k not in data:
            raise _fail(f"missing key {k!r}", file)
    number = data["number"]
    if isinstance(number, bool) or not isinstance(number, int):
        raise _fail(f"expected an integer, found {number!r}", file, "number")
    case = folder / _text(data["case"], file, "case")
    if not case.is_file():
        raise _fail(f"no such case file {case}", file, "case")
    citation, values, curves = load_reference(folder / _text(data["reference"], file, "reference"))
    runs_v = data.get("runs") or {"main": []}
    if not isinstance(runs_v, dict):
        raise _fail("expected a mapping run name -> list of overrides", file, "runs")
    runs = {str(r): _overrides(o, file, f"runs.{r}") for r, o in runs_v.items()}
    tiers_v = _mapping(data.get("tiers") or {}, file, "tiers", set(TIERS))
    tiers = {}
    for tier in TIERS:
        t = _mapping(tiers_v.get(tier) or {}, file, f"tiers.{tier}", {"set", "runs"})
        names = tuple(t.get("runs") or runs)
        for r in names:
            if r not in runs:
                raise _fail(f"no run {r!r} (runs: {', '.join(runs)})", file, f"tiers.{tier}.runs")
        tiers[tier] = (_overrides(t.get("set"), file, f"tiers.{tier}.set"), names)
    qs = data["quantities"]
    if not isinstance(qs, list) or not qs:
        raise _fail("expected a non-empty list", file, "quantities")
    quantities = tuple(_quantity(q, i, file, runs, values, curves) for i, q in enumerate(qs))
    figure = None
    if data.get("figure") is not None:
        f = _mapping(data["figure"], file, "figure", _FIGURE_KEYS)
        kind = f.get("kind", "time")
        if kind not in ("time", "convergence"):
            raise _fail("kind must be time or convergence", file, "figure.kind")
        curve = _lookup(curves, f["curve"], file, "figure.curve", "curve") if "curve" in f else None
        figure = Figure(
            kind,
            str(f.get("series", quantities[0].series)),
            curve,
            str(f.get("ylabel", f.get("series", quantities[0].series))),
        )
    return Benchmark(
        folder.name,
        folder,
        number,
        _text(data["title"], file, "title"),
        case,
        citation,
        runs,
        tiers,
        quantities,
        figure,
        str(data.get("notes", "")),
    )


def discover(root) -> dict[str, Path]:
    """Benchmark folders of a suite root (those holding a benchmark.yaml), by name."""
    root = Path(root)
    if not root.is_dir():
        raise CaseError("no such validation suite folder", file=str(root))
    return {p.name: p for p in sorted(root.iterdir()) if (p / SPEC).is_file()}
