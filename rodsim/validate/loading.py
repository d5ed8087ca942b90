"""Loading a benchmark folder of the validation suite: benchmark.yaml and reference.json
checked against their schema (rodsim.validate.spec) with errors naming the file and key
path, then resolved into the typed data model of rodsim.validate.benchmark (reference
values looked up, curves read, scales computed)."""

import json
import math
from pathlib import Path

from rodsim.case import schema as s
from rodsim.case.load import parse_yaml
from rodsim.errors import CaseError
from rodsim.validate.benchmark import (
    Benchmark,
    Curve,
    Figure,
    Quantity,
    ReferenceFile,
    Run,
    Tier,
    Value,
)
from rodsim.validate.spec import REFERENCE, SPEC, SPEC_FILE, TIERS, did_you_mean, run_names


def _validated(node, data, file: Path) -> dict:
    """data checked by node; its CaseError gets the file's name."""
    try:
        return node.check(data, ())
    except CaseError as exc:
        raise CaseError(exc.reason, file=str(file), key=exc.key) from None


def _lookup(table: dict, name: str, file: Path, path: s.Path, what: str):
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise CaseError(
            f"{name!r} is not a {what} of reference.json{did_you_mean(name, table)} "
            f"(it has: {known})",
            file=str(file),
            key=s.render(path),
        )
    return table[name]


def load_reference(path: Path) -> ReferenceFile:
    """The checked reference.json at path, its curves read from their CSV files."""
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, IsADirectoryError):
        raise CaseError("no such reference file", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise CaseError(
            f"invalid JSON: {exc.msg}", file=str(path), key=f"line {exc.lineno}"
        ) from None
    data = _validated(REFERENCE, data, path)
    values = {name: Value(**v) for name, v in (data["values"] or {}).items()}
    curves = {
        name: _load_curve(name, c, path, ("curves", name, "file"))
        for name, c in (data["curves"] or {}).items()
    }
    return ReferenceFile(tuple(data["citation"]), values, curves)


def _load_curve(name: str, c: dict, reference: Path, key: s.Path) -> Curve:
    """A two-column CSV (header line, '#' comments allowed)."""
    path = reference.parent / c["file"]
    try:
        lines = path.read_text().splitlines()
    except (FileNotFoundError, IsADirectoryError):
        raise CaseError(
            f"no such curve file {path}", file=str(reference), key=s.render(key)
        ) from None
    rows = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")][1:]
    try:
        pairs = [tuple(float(x) for x in ln.split(",")[:2]) for ln in rows]
    except ValueError:
        raise CaseError("expected two numeric columns after the header", file=str(path)) from None
    if len(pairs) < 2 or any(len(p) != 2 for p in pairs):
        raise CaseError("expected at least two rows of two numbers", file=str(path))
    xs, ys = zip(*pairs, strict=True)
    return Curve(name, xs, ys, c["source"], c["uncertainty"])


def _scale(q: dict, reference: Value, values: dict, file: Path, path: s.Path) -> float:
    """What the error of q is relative to (> 0)."""
    if q["scale"] is None:
        if reference.value == 0:
            raise CaseError(
                "the reference is 0: give scale (what the error is relative to)",
                file=str(file),
                key=s.render((*path, "scale")),
            )
        return abs(reference.value)
    if not isinstance(q["scale"], str):
        return q["scale"]
    scale = abs(_lookup(values, q["scale"], file, (*path, "scale"), "value").value)
    if scale == 0:
        raise CaseError(
            f"the value {q['scale']!r} is 0; a scale must be > 0",
            file=str(file),
            key=s.render((*path, "scale")),
        )
    return scale


def _quantity(q: dict, path: s.Path, first_run: str, refs: ReferenceFile, file: Path) -> Quantity:
    """The typed Quantity of checked data, its names resolved in the reference file."""
    curve = None
    if q["curve"] is not None:
        curve = _lookup(refs.curves, q["curve"], file, (*path, "curve"), "curve")
    if q["reduce"] == "curve_rms":
        reference = Value(0.0, f"curve {curve.name}: {curve.source}", curve.uncertainty)
    else:
        reference = _lookup(refs.values, q["reference"], file, (*path, "reference"), "value")
    exact = None
    if q["exact"] is not None:
        exact = _lookup(refs.values, q["exact"], file, (*path, "exact"), "value")
    return Quantity(
        name=q["name"],
        series=q["series"],
        reduce=q["reduce"],
        reference=reference,
        scale=_scale(q, reference, refs.values, file, path),
        tolerance=q["tolerance"],
        reason=q["reason"],
        run=q["run"] or first_run,
        window=q["window"] or (0.0, math.inf),
        at=q["at"],
        curve=curve,
        h=tuple((q["h"] or {}).items()),
        exact=exact,
    )


def load_benchmark(folder) -> Benchmark:
    """Read and check ``folder/benchmark.yaml`` and the reference file it names."""
    folder = Path(folder)
    file = folder / SPEC_FILE
    try:
        text = file.read_text()
    except FileNotFoundError:
        raise CaseError("no such benchmark spec", file=str(file)) from None
    data = _validated(SPEC, parse_yaml(text, str(file)), file)
    case = folder / data["case"]
    if not case.is_file():
        raise CaseError(f"no such case file {case}", file=str(file), key="case")
    refs = load_reference(folder / data["reference"])
    names = run_names(data)
    runs = tuple(Run(r, tuple((data["runs"] or {}).get(r, ()))) for r in names)
    tiers = tuple(
        Tier(t, tuple(data["tiers"][t]["set"]), tuple(data["tiers"][t]["runs"] or names))
        for t in TIERS
    )
    quantities = tuple(
        _quantity(q, ("quantities", i), names[0], refs, file)
        for i, q in enumerate(data["quantities"])
    )
    figure = None
    if data["figure"] is not None:
        f = data["figure"]
        series = f["series"] or quantities[0].series
        curve = None
        if f["curve"] is not None:
            curve = _lookup(refs.curves, f["curve"], file, ("figure", "curve"), "curve")
        figure = Figure(f["kind"], series, curve, f["ylabel"] or series)
    return Benchmark(
        folder.name,
        folder,
        data["number"],
        data["title"],
        case,
        refs.citation,
        runs,
        tiers,
        quantities,
        figure,
        data["notes"],
    )


def discover(root) -> dict[str, Path]:
    """Benchmark folders of a suite root (those holding a benchmark.yaml), by name."""
    root = Path(root)
    if not root.is_dir():
        raise CaseError("no such validation suite folder", file=str(root))
    return {p.name: p for p in sorted(root.iterdir()) if (p / SPEC_FILE).is_file()}
