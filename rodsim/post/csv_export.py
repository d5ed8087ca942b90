"""``rodsim export --format csv``: tables of a results file that a spreadsheet or pandas reads.

Three kinds of table (docs/running.md, "rodsim export"):

- a frame's nodes (one row per node), rod elements or plate elements (one row per element):
  every per-node or per-element dataset of the frame (docs/results.md) as columns, a vector
  split into its components, named QUANTITY.COMPONENT as `rodsim plot` names them
  (position.x, rotation.w, force.axial, moment.bending2, membrane.N11, ...); nodes also get
  displacement (position - mesh/points); elements their nodes, part and section;
- the envelope of such a table over every frame (one row per node or element): the least and
  largest value of each column and the frame each occurs at;
- a frame's entries of a term's per-frame datasets (table: the term's group, e.g.
  ``connectors``, or one of its datasets, e.g. ``connectors/force``): one row per entry, the
  group's datasets with the same rows as columns (the first dataset's: a ragged dataset's
  rows change from frame to frame, docs/results.md "Ragged datasets"), after the entry's
  index `row` and, for a fixed one, the term's mesh/<group> node pairs;
- a time history (one row per frame): every per-frame scalar and vector dataset (time, step,
  load_factor, total_time, energies, total momenta, solver counters) and the nodal
  quantities of the nodes of one set.

The first two lines are comments (``#``): what the table is, and the unit of each column: the
declared system's (``Pa``, ``N m``; display_units), its dimension without a declaration.
Numbers are written with 17 significant digits, so a table
read back gives the file's numbers bit for bit. pandas: ``pd.read_csv(path, comment="#")``.
"""

from pathlib import Path

import numpy as np

from rodsim.case import units
from rodsim.errors import CaseError
from rodsim.post import display_units, plots
from rodsim.post.plots import COMPONENTS
from rodsim.post.replace_file import write_whole
from rodsim.results import guard as output_guard
from rodsim.results.layout import FRAME_DATASETS, TERM_FRAME_DATASETS
from rodsim.results.reader import frame_count, open_results, ragged_rows

TABLES = ("nodes", "rods", "plates")
# per recovery point or per surface (docs/stresses.md): not one value per element
PER_POINT = ("rods/stress", "rods/von_mises", "plates/stress", "plates/von_mises")
GROUPS = {"nodes": "nodes/", "rods": "rods/", "plates": "plates/"}
SIZES = {"nodes": "N", "rods": "E", "plates": "P"}
XYZ = ("x", "y", "z")


def _components(name: str, n: int) -> tuple:
    """The component names of a quantity with n components (as rodsim plot names them)."""
    known = COMPONENTS.get(name)
    if known is not None and len(known) == n:
        return known
    return XYZ if n == 3 else tuple(str(i + 1) for i in range(n))


def _columns(name: str, values: np.ndarray, units: str, suffix: str = ""):
    """[(column name, unit, (R,) values)] of a (R,) or (R,C) array."""
    if values.ndim == 1:
        return [(name + suffix, units, values)]
    comps = _components(name, values.shape[1])
    return [(f"{name}.{c}{suffix}", units, values[:, i]) for i, c in enumerate(comps)]


def _frame_index(f, frame: int) -> int:
    n = frame_count(f)
    k = frame + n if frame < 0 else frame
    if n == 0:
        raise CaseError("the file holds no frame", key="--frame")
    if not 0 <= k < n:
        frames = "1 frame (0, or -1)" if n == 1 else f"{n} frames (0 to {n - 1}, or -{n} to -1)"
        raise CaseError(f"the file holds {frames}; got {frame}", key="--frame")
    return k


def _row_columns(f, table: str):
    """The columns that say what a row of a table of nodes, rods or plates is."""
    if table not in TABLES:
        groups = dict.fromkeys(d.path.partition("/")[0] for d in TERM_FRAME_DATASETS if d.path in f)
        known = ", ".join((*TABLES, *groups))
        raise CaseError(
            f"expected one of {known} (or a term's dataset), got {table!r}", key="--table"
        )
    rows = {"nodes": f["mesh/points"].shape[0]}
    rows["rods"] = f["mesh/rods"].shape[0] if "mesh/rods" in f else 0
    rows["plates"] = f["mesh/plates"].shape[0] if "mesh/plates" in f else 0
    if rows[table] == 0:
        raise CaseError(f"the results have no {table[:-1]} elements", key="--table")
    index = np.arange(rows[table])
    columns = [(table[:-1] if table != "nodes" else "node", "index", index)]
    if table == "nodes":
        columns += _columns("reference", f["mesh/points"][()], "length")
    else:
        mesh = "mesh/rods" if table == "rods" else "mesh/plates"
        conn = f[mesh][()]
        columns += [(f"node{i + 1}", "index", conn[:, i]) for i in range(conn.shape[1])]
        part, section = (
            ("rod_part", "rod_section") if table == "rods" else ("plate_part", "plate_section")
        )
        for label, key in (("part", part), ("section", section)):
            if f"mesh/{key}" in f:
                columns.append((label, "index", f[f"mesh/{key}"][()]))
    return columns


def _quantities(f, table: str):
    """(name, unit, values(k0, k1) -> (k1 - k0, R[, C]) array) of each per-row quantity of a
    table in the file, position followed by displacement."""
    out = []
    for d in FRAME_DATASETS:
        if not d.path.startswith(GROUPS[table]) or d.shape[:1] != (SIZES[table],):
            continue
        if d.path in PER_POINT or d.path not in f:
            continue
        name = d.path.removeprefix(GROUPS[table])
        out.append((name, d.units, lambda k0, k1, p=d.path: f[p][k0:k1]))
        if name == "position":
            points = f["mesh/points"][()]
            shift = lambda k0, k1, x=points: f["nodes/position"][k0:k1] - x  # noqa: E731
            out.append(("displacement", "length", shift))
    return out


def _term_datasets(f, table: str) -> list:
    """The per-frame datasets of a term table (see the module docstring), or [] where table
    names none the file has."""
    known = [d for d in TERM_FRAME_DATASETS if d.path in f]
    first = next((d for d in known if table in (d.path, d.path.partition("/")[0])), None)
    if first is None:
        return []
    group = first.path.partition("/")[0] + "/"
    rows = (first.ragged, first.shape[:1])
    return [d for d in known if d.path.startswith(group) and (d.ragged, d.shape[:1]) == rows]


def _term_table(f, datasets: list, k: int) -> list:
    """The columns of frame k of a term table: the entry's index, the term's node pairs (a
    fixed table whose group has its mesh/<group> of as many rows) and each dataset (declared
    with the first one's rows: CaseError where the file disagrees), flattened per row."""
    values = [(d, ragged_rows(f, d, k) if d.ragged else f[d.path][k]) for d in datasets]
    n = len(values[0][1])
    columns = [("row", "index", np.arange(n))]
    group = datasets[0].path.partition("/")[0]
    pairs = f.get(f"mesh/{group}")
    if not datasets[0].ragged and pairs is not None and pairs.shape[0] == n:
        columns += _columns("node", pairs[()], "index")
    for d, v in values:
        if len(v) != n:  # declared with the same rows: a file that disagrees is damaged
            raise CaseError(
                f"{d.path} has {len(v)} rows in frame {k}, {datasets[0].path} {n}: the file "
                "is damaged or was written by a faulty term",
                key="--table",
            )
        width = int(np.prod(v.shape[1:], dtype=np.int64))
        v = v.reshape(n, width) if v.ndim > 1 else v  # one value an entry: one column
        columns += _columns(d.path.partition("/")[2], v, d.units)
    return columns


def frame_table(f, table: str, frame: int):
    """(description, columns) of a frame's table of nodes, rods, plates or a term's entries
    (see the module docstring); columns: [(name, unit, (R,) values)]."""
    terms = _term_datasets(f, table) if table not in TABLES else []
    if terms:
        k = _frame_index(f, frame)
        return f"{table} of frame {k} ({_when(f, k)})", _term_table(f, terms, k)
    columns = _row_columns(f, table)
    k = _frame_index(f, frame)
    for name, unit, values in _quantities(f, table):
        columns += _columns(name, values(k, k + 1)[0], unit)
    return f"{table} of frame {k} ({_when(f, k)})", columns


CHUNK = 256  # frames read at a time: an envelope's memory does not grow with the run


def envelope_table(f, table: str):
    """(description, columns) of the envelope of a table over every frame: per row, for each
    column X of the frame table, X.min and X.max and the frames they occur at, X.min_frame and
    X.max_frame (the first such frame; NaN values are passed over, -1 where all are NaN)."""
    if table not in TABLES and _term_datasets(f, table):  # a term's rows may change
        raise CaseError(f"an envelope is of the {', '.join(TABLES)} only", key="--envelope")
    columns = _row_columns(f, table)
    n = frame_count(f)
    if n == 0:
        raise CaseError("the file holds no frame", key="--envelope")
    for name, unit, values in _quantities(f, table):
        low = high = None
        for k0 in range(0, n, CHUNK):
            chunk = values(k0, min(n, k0 + CHUNK))
            low = _extreme(low, chunk, k0, np.less)
            high = _extreme(high, chunk, k0, np.greater)
        for (label, u, lo), (_, _, lo_at), (_, _, hi), (_, _, hi_at) in zip(
            _columns(name, low[0], unit),
            _columns(name, low[1], "index"),
            _columns(name, high[0], unit),
            _columns(name, high[1], "index"),
            strict=True,
        ):
            columns += [(label + ".min", u, lo), (label + ".min_frame", "index", lo_at)]
            columns += [(label + ".max", u, hi), (label + ".max_frame", "index", hi_at)]
    return f"{table}, envelope over frames 0 to {n - 1}", columns


def _extreme(best, chunk: np.ndarray, k0: int, better):
    """(values, frames) of the running extreme after a chunk (F, R[, C]) of frames from k0."""
    if best is None:
        best = (np.full(chunk.shape[1:], np.nan), np.full(chunk.shape[1:], -1, dtype=np.int64))
    values, frames = best
    for j, row in enumerate(chunk):
        take = ~np.isnan(row) & (np.isnan(values) | better(row, values))
        values = np.where(take, row, values)
        frames = np.where(take, k0 + j, frames)
    return values, frames


def _when(f, k: int) -> str:
    """'time 0.1', with the analysis step and total time in a file of steps."""
    text = f"time {float(f['time'][k])!r}"
    if len(np.atleast_1d(f.attrs.get("steps", []))) > 1 and "total_time" in f:
        text += f", step {int(f['step'][k]) + 1}, total_time {float(f['total_time'][k])!r}"
    return text


def history_table(f, node_set: str):
    """(description, columns) of the time history of a node set (see the module
    docstring)."""
    nodes = plots.node_set(f, node_set, "--history")
    n = frame_count(f)
    columns = [("frame", "index", np.arange(n))]
    points = f["mesh/points"][()]
    for d in FRAME_DATASETS:
        if d.path not in f:
            continue
        if d.shape == () or (len(d.shape) == 1 and isinstance(d.shape[0], int)):
            columns += _columns(d.path.replace("/", "."), f[d.path][:n], d.units)
    for d in FRAME_DATASETS:
        if not d.path.startswith("nodes/") or d.path not in f:
            continue
        name = d.path.removeprefix("nodes/")
        values = f[d.path][:n][:, nodes]  # (F,K,C)
        for j, node in enumerate(nodes):
            suffix = "" if len(nodes) == 1 else f"@{node}"
            columns += _columns(name, values[:, j], d.units, suffix)
            if name == "position":
                shift = values[:, j] - points[node]
                columns += _columns("displacement", shift, "length", suffix)
    return f"time history of node set {node_set} (nodes {', '.join(map(str, nodes))})", columns


def _with_units(f, columns, system):
    """The columns with the units row's entries (display_units.stored): the declared system's
    unit of each (`Pa`, `N m`, `rad/s`), or its dimension without a declaration; the per-frame
    `time`, `total_time` and `solver.dt` of an equilibrium are load multipliers (1), of a path
    arc lengths (docs/results.md)."""
    if plots._is_path(f):
        frame_time = "length"
    elif plots._is_equilibrium(f):
        frame_time = "1"
    else:
        frame_time = "time"
    out = []
    for name, dim, values in columns:
        base = name.split("@")[0].split(".")[0]
        if name in ("time", "total_time", "solver.dt"):
            dim = frame_time
        elif base == "angular_velocity":
            dim = display_units.ANGULAR
        moment = base in units.MOMENTS
        out.append((name, display_units.stored(dim, system, moment=moment), values))
    return out


HEADER = "# rodsim export: "


def write_csv(path: Path, description: str, columns) -> None:
    """The table: two comment lines (description; units), a header, one row per entry,
    written in one piece (rodsim.post.replace_file)."""
    names = [c[0] for c in columns]
    units = [c[1] for c in columns]
    data = np.column_stack([np.asarray(c[2]) for c in columns])
    integer = [np.issubdtype(np.asarray(c[2]).dtype, np.integer) for c in columns]
    formats = ["%d" if i else "%.17g" for i in integer]

    def lines():
        yield f"{HEADER}{description}\n"
        yield "# units: " + ",".join(units) + "\n"
        yield ",".join(names) + "\n"
        for row in data:
            yield ",".join(fmt % value for fmt, value in zip(formats, row, strict=True)) + "\n"

    write_whole(path, lines())


def export_csv(results, output=None, table="nodes", frame=-1, history=None, envelope=False) -> Path:
    """Write a frame's table (table: nodes, rods or plates; frame: its index, negative from
    the end), with envelope the table's envelope over all frames, or with history (a node
    set) the set's time history; return the path (default: next to the results file,
    <stem>_<table>_<frame>.csv, <stem>_<table>_envelope.csv or <stem>_<set>.csv)."""
    results = Path(results)
    try:
        with open_results(results) as f:
            if history is not None:
                description, columns = history_table(f, history)
                default = f"{results.stem}_{history}.csv"
            elif envelope:
                description, columns = envelope_table(f, table)
                default = f"{results.stem}_{table}_envelope.csv"
            else:
                description, columns = frame_table(f, table, frame)
                name = table.replace("/", "_")
                default = f"{results.stem}_{name}_{_frame_index(f, frame)}.csv"
            system = display_units.system_of(f)
            columns = _with_units(f, columns, system)
    except CaseError as exc:
        raise CaseError(exc.reason, file=str(results), key=exc.key) from None
    path = Path(output) if output is not None else results.parent / default
    output_guard.check(
        path, "csv", reads={results.resolve(): "the results file itself"}, file=str(results)
    )
    declared = system.as_attribute() if system is not None else ""
    units = f"; units of the case: {declared}" if declared else "; the case's consistent units"
    write_csv(path, f"{results.name}, {description}{units}", columns)
    return path
