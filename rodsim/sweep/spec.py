"""The sweep file (docs/sweeps.md, "The sweep file"): read, checked, and every run's case
validated before any run starts. Errors are CaseError naming the sweep file, the key and what
was expected (exit 2).

    rodsim_sweep: 1
    case: cantilever.yaml                 # relative to the sweep file
    set: [solver.t_end=0.5]               # overrides of every run (optional)
    parameters:                           # key path (as --set) -> values
      loads[0].force[2]: {linspace: [-100, -500, 5]}
      sections.bar.shape.rectangle[1]: [0.005, 0.01]
    combine: grid                         # grid | zip | random | lhs (count, seed)
    collect:                              # name -> a number of each run
      tip: {series: displacement.z@beam.end, reduce: final}
    output: cantilever_sweep              # the folder (default: <sweep stem>_sweep)
"""

import json
from dataclasses import dataclass
from pathlib import Path

from rodsim.case.load import Case, case_from_text, parse_yaml
from rodsim.errors import CaseError
from rodsim.sweep import space
from rodsim.validate import measure
from rodsim.validate.measure import OVER

MAX_RUNS = 100_000  # more is not a sweep one machine or one summary table holds

KEYS = (
    "rodsim_sweep",
    "case",
    "set",
    "parameters",
    "combine",
    "count",
    "seed",
    "collect",
    "output",
)
# the summary's own columns, in its order (the parameters and collected numbers come after
# the first two): a collected number may not take their names
COLUMNS = ("run", "name", "status", "exit_code", "wall_time", "version", "reused", "outdated",
           "error")  # fmt: skip
REDUCE = ("final", "at", "max", "min", "absmax", "mean", "band", "drift", "frequency", "crossing")


@dataclass(frozen=True)
class Collect:
    """One collected number: series (rodsim.validate.measure), over (the reduction over a
    set, None: its default), reduce (over time), at (for at and crossing), window."""

    name: str
    series: str
    reduce: str
    over: str | None = None
    at: float | None = None
    window: tuple = (0.0, float("inf"))


@dataclass(frozen=True)
class Run:
    """One run: index (from 0), values {key path: value}, case (validated, overrides
    applied), overrides (the --set assignments of its parameters)."""

    index: int
    values: dict
    case: Case
    overrides: tuple


@dataclass(frozen=True)
class Sweep:
    path: Path
    text: str
    case_path: Path
    parameters: tuple
    runs: tuple
    collect: tuple
    output: Path


def _fail(file: Path, key: str, message: str) -> CaseError:
    return CaseError(message, file=str(file), key=key)


def assignment(key: str, value) -> str:
    """The --set assignment of a parameter value: JSON is YAML, and floats keep every digit."""
    return f"{key}={json.dumps(value)}"


def _collect(raw, file: Path) -> tuple:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise _fail(
            file, "collect", f"expected a mapping of names to {{series, reduce}}, got {raw!r}"
        )
    out = []
    for name, q in raw.items():
        key = f"collect.{name}"
        if not isinstance(name, str) or not name or "/" in name or name in COLUMNS:
            raise _fail(file, key, f"expected a name without '/', not one of the summary's "
                        f"columns ({', '.join(COLUMNS)}), got {name!r}")  # fmt: skip
        if not isinstance(q, dict):
            raise _fail(file, key, f"expected {{series: ..., reduce: ...}}, got {q!r}")
        unknown = sorted(set(q) - {"series", "reduce", "over", "at", "window"})
        if unknown:
            raise _fail(
                file, key, f"unknown key {unknown[0]!r}; expected series, reduce, over, at, window"
            )
        if not isinstance(q.get("series"), str) or not q["series"]:
            raise _fail(file, f"{key}.series", "expected a series such as displacement.z@beam.end")
        how = q.get("reduce")
        if how not in REDUCE:
            raise _fail(file, f"{key}.reduce", f"expected one of {', '.join(REDUCE)}, got {how!r}")
        over = q.get("over")
        if over is not None and over not in OVER:
            raise _fail(file, f"{key}.over", f"expected one of {', '.join(OVER)}, got {over!r}")
        at = q.get("at")
        if how in ("at", "crossing") and not space.is_real(at):
            raise _fail(file, f"{key}.at", f"reduce: {how} needs a number at, got {at!r}")
        if how not in ("at", "crossing") and at is not None:
            raise _fail(file, f"{key}.at", f"at is for reduce: at or crossing, not {how}")
        window = q.get("window", [0.0, None])
        if not (isinstance(window, list) and len(window) == 2 and space.is_real(window[0])
                and (window[1] is None or space.is_real(window[1]))):  # fmt: skip
            raise _fail(file, f"{key}.window", f"expected [t_from, t_to or null], got {window!r}")
        end = float("inf") if window[1] is None else float(window[1])
        if not float(window[0]) < end:
            raise _fail(file, f"{key}.window", f"expected t_from < t_to, got {window!r}")
        if how == "at" and "window" in q:
            raise _fail(file, f"{key}.window", "reduce: at takes the time itself: no window")
        try:
            measure.check_series(q["series"], over)
        except CaseError as exc:
            raise _fail(file, f"{key}.series", exc.reason) from None
        out.append(Collect(str(name), q["series"], how, over, at, (float(window[0]), end)))
    return tuple(out)


def load(path, output=None) -> Sweep:
    """Read and check a sweep file and every run's case (nothing runs); output: the folder
    (-o, from the current folder), else the file's `output` (from the file's folder)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError("no such file", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"cannot read: {exc}", file=str(path)) from None
    data = parse_yaml(text, file=str(path))
    if not isinstance(data, dict):
        raise _fail(path, "", "expected a mapping (rodsim_sweep: 1, case: ..., parameters: ...)")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise _fail(path, unknown[0], f"unknown key; expected one of {', '.join(KEYS)}")
    version = data.get("rodsim_sweep")
    if type(version) is not int or version != 1:
        said = "nothing" if version is None else repr(version)
        raise _fail(path, "rodsim_sweep", f"expected 1 (the sweep file's version), got {said}")
    if not isinstance(data.get("case"), str):
        raise _fail(path, "case", "expected the base case file, relative to the sweep file")
    case_path = (path.parent / data["case"]).resolve()
    try:
        case_text = case_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _fail(path, "case", f"cannot read {case_path}: {exc.strerror or exc}") from None
    base = data.get("set") or []
    if not (isinstance(base, list) and all(isinstance(a, str) for a in base)):
        raise _fail(path, "set", f"expected a list of KEY=VALUE, got {base!r}")
    parameters = data.get("parameters")
    if not isinstance(parameters, dict) or not parameters:
        raise _fail(path, "parameters", "expected a mapping of key paths to values")
    seed = data.get("seed")
    if seed is not None and (type(seed) is not int or seed < 0):
        raise _fail(path, "seed", f"expected a whole number >= 0, got {seed!r}")
    if seed is not None and data.get("combine", "grid") not in ("random", "lhs"):
        raise _fail(path, "seed", "seed is for combine: random or lhs")
    try:
        size = space.size(parameters, data.get("combine", "grid"), data.get("count"))
        if size > MAX_RUNS:
            raise CaseError(f"{size} runs; a sweep holds at most {MAX_RUNS}", key="parameters")
        rows = space.runs(parameters, data.get("combine", "grid"), data.get("count"), seed or 0)
    except CaseError as exc:
        raise _fail(path, exc.key or "parameters", exc.reason) from None
    runs = []
    for i, row in enumerate(rows):
        overrides = tuple(base) + tuple(assignment(k, v) for k, v in row.items())
        try:
            case = case_from_text(case_text, case_path, overrides, name=str(case_path))
        except CaseError as exc:
            raise _fail(path, _blame(exc, row, base), _reason(exc, i, row)) from None
        runs.append(Run(i, row, case, overrides))
    out = data.get("output", f"{path.stem}_sweep")
    if not isinstance(out, str) or not out:
        raise _fail(path, "output", f"expected a folder, got {out!r}")
    folder = Path(output).resolve() if output else (path.parent / out).resolve()
    collect = _collect(data.get("collect"), path)
    clash = sorted(set(q.name for q in collect) & set(parameters))
    if clash:
        raise _fail(path, f"collect.{clash[0]}", "a collected number named as a parameter")
    return Sweep(
        path,
        text,
        case_path,
        tuple(parameters),
        tuple(runs),
        collect,
        folder,
    )


def _blame(exc: CaseError, row: dict, base) -> str:
    """The sweep file's key a case error comes from: the parameter whose key path it names,
    else the base overrides."""
    where = (exc.key or "").removeprefix("--set ")
    for key in row:
        if where == key or where.startswith(key + ".") or where.startswith(key + "["):
            return f"parameters.{key}"
    for key in row:  # a key path the case lacks names its first missing part
        if key.startswith(where) and where:
            return f"parameters.{key}"
    return "set" if base else "parameters"


def _reason(exc: CaseError, i: int, row: dict) -> str:
    said = ", ".join(f"{k} = {json.dumps(v)}" for k, v in row.items())
    key = f" at {exc.key}" if exc.key else ""
    return f"run {i} ({said}): the case{key}: {exc.reason}"
