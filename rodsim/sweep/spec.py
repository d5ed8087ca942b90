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

from rodsim.case.load import Case, parse_yaml
from rodsim.errors import CaseError
from rodsim.results.guard import SWEEP_COLUMNS
from rodsim.sweep import cases, identity, space
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
COLUMNS = SWEEP_COLUMNS  # summary.csv: run, name, parameters and values, then these
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
    applied), overrides (the --set assignments of its parameters), name and resolved (its
    identity: rodsim.sweep.identity.data_hash)."""

    index: int
    values: dict
    case: Case
    overrides: tuple
    name: str = ""
    resolved: str = ""


@dataclass(frozen=True)
class Sweep:
    path: Path
    text: str
    case_path: Path
    parameters: tuple
    runs: tuple
    collect: tuple
    output: Path
    output_key: str = "output"  # where the folder was named: `output` of the file, or -o


def _fail(file: Path, key: str, message: str) -> CaseError:
    return CaseError(message, file=str(file), key=key)


assignment = cases.assignment


def bad_name(name) -> str | None:
    """Why a collected number cannot be named so (None: it can): summary.h5 holds it as the
    dataset results/<name> and summary.csv as a header field, and either would lose or merge
    a name with a NUL (HDF5 ends a name there), a '/' (a group), '.' or '..' (the group
    itself, its parent), or a control character (a line break splits the CSV header)."""
    if not isinstance(name, str) or not name:
        return "expected a name (text)"
    if name in COLUMNS:
        return f"expected a name not one of the summary's columns ({', '.join(COLUMNS)})"
    if name in (".", ".."):
        return "'.' and '..' name the results group itself in summary.h5"
    for ch in name:
        if ch == "/" or ord(ch) < 0x20 or ord(ch) == 0x7F:
            return (
                f"a name without '/' (a group in summary.h5) or control characters (a NUL "
                f"ends a name in HDF5, a line break splits the CSV header); found {ch!r}"
            )
    return None


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
        why = bad_name(name)
        if why is not None:
            raise _fail(file, key, f"{why}, got {name!r}")
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
    collect = _collect(data.get("collect"), path)  # before the runs: it is quick to say
    try:
        builder = cases.Builder(case_text, case_path, tuple(base), tuple(parameters))
    except CaseError as exc:
        raise _fail(path, "set" if base else "case", _reason(exc, None, {})) from None
    runs = []
    for i, row in enumerate(rows):
        overrides = tuple(base) + tuple(assignment(k, v) for k, v in row.items())
        try:
            case, resolved = builder.build(row, overrides)
        except CaseError as exc:
            raise _fail(path, _blame(exc, row, base), _reason(exc, i, row)) from None
        name, text = identity.data_hash(resolved, case.folder)
        runs.append(Run(i, row, case, overrides, name, text))
    out = data.get("output", f"{path.stem}_sweep")
    if not isinstance(out, str) or not out:
        raise _fail(path, "output", f"expected a folder, got {out!r}")
    folder = Path(output).resolve() if output else (path.parent / out).resolve()
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
        "-o" if output else "output",
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


def _reason(exc: CaseError, i: int | None, row: dict) -> str:
    said = ", ".join(f"{k} = {json.dumps(v)}" for k, v in row.items())
    key = f" at {exc.key}" if exc.key else ""
    run = "" if i is None else f"run {i} ({said}): "
    return f"{run}the case{key}: {exc.reason}"
