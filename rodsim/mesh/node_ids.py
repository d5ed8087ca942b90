"""Node ids defined twice in a mesh file.

Gmsh .msh (node tags) and Abaqus .inp (node numbers) name their nodes by id. meshio 5.3.5
maps each id to its LAST definition and keeps the earlier ones as points that no cell uses,
so a file that defines one id twice at different points silently loses the first definition;
an Abaqus file with two *NODE blocks even loses the whole first block, and the elements read
before the second block then index its nodes. meshio does not return the ids, so this module
reads them from the file itself, the way meshio does (the same sections, blocks and order),
with the line of each node where the format has lines; read_mesh then refuses a conflict, or
points the cells at the first definition of an id repeated at one point.

Checked: Gmsh ASCII MSH 2.2, 4.0 and 4.1, binary MSH 4.1, Abaqus .inp (its main file, not
*INCLUDE files). Binary MSH 2.2 cannot hold a duplicate (meshio refuses any tags but 1..N);
other formats with node ids (Nastran, AVS-UCD) are not checked.
"""

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rodsim.errors import CaseError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodeTable:
    """The node definitions of a file in file order: ids (n,) int64, points (n,3) (length,
    missing coordinates 0) and lines (n,) int64, the 1-based line of each node's coordinates,
    0 in a binary file; blocks: the lines of the *NODE keywords of an Abaqus file."""

    ids: np.ndarray
    points: np.ndarray
    lines: np.ndarray
    blocks: tuple[int, ...] = ()


@dataclass(frozen=True)
class Merged:
    """Ids defined more than once at one point: ids (k,); for the first of them, the lines
    (or entry numbers, binary files) of its definitions; first (n,) int64: for every point
    of the file (meshio's order), the point of the first definition of its id."""

    ids: np.ndarray
    first_where: tuple[str, ...]
    first: np.ndarray


def check_node_ids(path: Path, key: str, tol: float, points: np.ndarray) -> Merged | None:
    """CaseError (naming the file, the id, both points and their lines) if a node id of a
    .msh or .inp file is defined twice at points farther apart than tol (length); the ids
    defined more than once within tol, or None if there are none. points (n,3): what meshio
    read, which must be the scanned definitions in file order. Formats without node ids, and
    files this scan cannot read, pass with a warning."""
    try:
        table = scan(path)
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        # meshio read the file, so a failure here is a layout this scan does not know
        log.warning("%s: node ids not checked for duplicates (%s)", path.name, exc)
        return None
    if table is None:
        return None
    if len(table.blocks) > 1:
        raise CaseError(
            f"mesh file {str(path)!r} has {len(table.blocks)} *NODE blocks (lines "
            f"{', '.join(map(str, table.blocks))}); rodsim reads Abaqus files with "
            "meshio, which keeps only the nodes of the last block: put all nodes in "
            "one *NODE block",
            key=key,
        )
    if len(table.ids) < 2:
        return None
    if not np.array_equal(table.points, points):
        log.warning(
            "%s: node ids not checked for duplicates (the scan found other points than meshio)",
            path.name,
        )
        return None
    return _duplicates(path, key, table, tol)


def scan(path: Path) -> NodeTable | None:
    """The NodeTable of a .msh or .inp file, None for other formats and binary MSH 2.2/4.0."""
    name = path.name.lower()
    if name.endswith(".msh"):
        return _gmsh(path.read_bytes())
    if name.endswith(".inp"):
        return _abaqus(path.read_text(encoding="latin-1"))
    return None


def describe(p) -> str:
    """A point as (x, y, z), each number in its shortest exact form."""
    return "(" + ", ".join(_number(v) for v in p) + ")"


def _number(v: float) -> str:
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s


def _where(table: NodeTable, k: int) -> str:
    line = int(table.lines[k])
    return f"line {line}" if line else f"node entry {k + 1} of $Nodes"


def _duplicates(path: Path, key: str, table: NodeTable, tol: float) -> Merged | None:
    order = np.argsort(table.ids, kind="stable")
    ids = table.ids[order]
    repeat = np.flatnonzero(ids[1:] == ids[:-1]) + 1
    if len(repeat) == 0:
        return None
    # each repeated definition against the first definition of its id
    first = np.maximum.accumulate(
        np.where(np.r_[True, ids[1:] != ids[:-1]], np.arange(len(ids)), 0)
    )
    a, b = order[first[repeat]], order[repeat]
    gap = np.linalg.norm(table.points[b] - table.points[a], axis=1)
    bad = np.flatnonzero(gap > tol)
    if len(bad):
        i, j = int(a[bad[0]]), int(b[bad[0]])
        others = len(np.unique(ids[repeat[bad]])) - 1
        more = f" (and {others} more ids)" if others else ""
        raise CaseError(
            f"mesh file {str(path)!r} defines node {int(table.ids[i])} twice at "
            f"different points: {describe(table.points[i])} on {_where(table, i)} "
            f"and {describe(table.points[j])} on {_where(table, j)}{more}; node ids "
            f"must be unique (a repeat within {tol:.3g} of the first is merged)",
            key=key,
        )
    merged = np.unique(ids[repeat])
    copies = np.flatnonzero(table.ids == merged[0])
    first_of = np.arange(len(ids))
    first_of[b] = a
    return Merged(merged, tuple(_where(table, int(k)) for k in copies), first_of)


# --- Gmsh ----------------------------------------------------------------------------------


def _gmsh(data: bytes) -> NodeTable | None:
    """Nodes of an MSH file: ASCII 2.2, 4.0, 4.1 and binary 4.1."""
    head = re.match(rb"\s*\$MeshFormat\s*\r?\n\s*(\S+)\s+(\d+)\s+(\d+)", data)
    if head is None:
        raise ValueError("no $MeshFormat header")
    version, binary, size_t = head.group(1).decode(), int(head.group(2)), int(head.group(3))
    # meshio's choice of reader: 4.0 by name, any other 4.x as 4.1, 2.x as 2.2
    layout = "4.0" if version == "4.0" else version.split(".")[0]
    start = re.search(rb"(?m)^\$Nodes\s*$", data)
    if start is None or layout not in ("2", "4.0", "4"):
        return None  # no nodes to check, or a version meshio refuses anyway
    after = data.index(b"\n", start.start()) + 1
    if binary:
        return _gmsh41_binary(data, after, size_t) if layout == "4" else None
    end = re.compile(rb"(?m)^\$EndNodes\s*$").search(data, after)
    body = data[after : end.start() if end else len(data)].decode("latin-1")
    tokens, lines = _tokens(body, data.count(b"\n", 0, after) + 1)
    return {"2": _gmsh22, "4.0": _gmsh40, "4": _gmsh41}[layout](tokens, lines)


def _tokens(text: str, first_line: int) -> tuple[list, list]:
    """Whitespace-separated tokens and the 1-based line of each."""
    tokens, lines = [], []
    for n, line in enumerate(text.splitlines(), start=first_line):
        words = line.split()
        tokens += words
        lines += [n] * len(words)
    return tokens, lines


def _table(tags: list, coords: list, lines: list, blocks: tuple = ()) -> NodeTable:
    return NodeTable(
        np.array(tags, dtype=np.int64),
        np.array(coords, dtype=float).reshape(-1, 3),
        np.array(lines, dtype=np.int64),
        blocks,
    )


def _gmsh22(tokens: list, lines: list) -> NodeTable:
    """count, then per node: tag x y z."""
    n = int(tokens[0])
    rows = np.arange(n) * 4 + 1
    return _table(
        [int(float(tokens[r])) for r in rows],
        [float(tokens[r + c]) for r in rows for c in (1, 2, 3)],
        [lines[r + 1] for r in rows],
    )


def _gmsh40(tokens: list, lines: list) -> NodeTable:
    """blocks nodes; per block: entity dim parametric n, then per node: tag x y z."""
    blocks, pos = int(tokens[0]), 2
    tags, coords, where = [], [], []
    for _ in range(blocks):
        n = int(tokens[pos + 3])
        pos += 4
        for _ in range(n):
            tags.append(int(tokens[pos]))
            coords += [float(t) for t in tokens[pos + 1 : pos + 4]]
            where.append(lines[pos + 1])
            pos += 4
    return _table(tags, coords, where)


def _gmsh41(tokens: list, lines: list) -> NodeTable:
    """blocks nodes min max; per block: dim entity parametric n, n tags, n (x y z)."""
    blocks, pos = int(tokens[0]), 4
    tags, coords, where = [], [], []
    for _ in range(blocks):
        if int(tokens[pos + 2]):
            raise ValueError("parametric nodes")
        n = int(tokens[pos + 3])
        pos += 4
        tags += [int(t) for t in tokens[pos : pos + n]]
        pos += n
        coords += [float(t) for t in tokens[pos : pos + 3 * n]]
        where += lines[pos : pos + 3 * n : 3]
        pos += 3 * n
    return _table(tags, coords, where)


def _gmsh41_binary(data: bytes, pos: int, size_t: int) -> NodeTable:
    """The binary $Nodes section: size_t header, per block 3 int32 and a size_t count, then
    the tags (size_t) and the coordinates (float64), native byte order as meshio reads it."""
    st = np.dtype(f"u{size_t}")
    blocks, total = (int(v) for v in np.frombuffer(data, st, 2, pos))
    pos += 4 * size_t
    tags, coords = [], []
    for _ in range(blocks):
        parametric = int(np.frombuffer(data, np.int32, 3, pos)[2])
        if parametric:
            raise ValueError("parametric nodes")
        n = int(np.frombuffer(data, st, 1, pos + 12)[0])
        pos += 12 + size_t
        tags.append(np.frombuffer(data, st, n, pos).astype(np.int64))
        pos += n * size_t
        coords.append(np.frombuffer(data, np.float64, 3 * n, pos).reshape(n, 3))
        pos += 24 * n
    ids = np.concatenate(tags) if tags else np.zeros(0, np.int64)
    if len(ids) != total or not data[pos : pos + 12].strip().startswith(b"$EndNodes"):
        raise ValueError("the binary $Nodes section does not end where its counts say")
    points = np.concatenate(coords) if coords else np.zeros((0, 3))
    return NodeTable(ids, points, np.zeros(len(ids), dtype=np.int64))


# --- Abaqus --------------------------------------------------------------------------------


def _keyword(line: str) -> str:
    """The keyword of a keyword line as meshio's Abaqus reader reads it ('NODE', ...); ''
    for a data line (meshio would also take a data line `node, ...` between the keywords it
    skips for a *NODE: no real file has one)."""
    if not line.startswith("*"):
        return ""
    return line.partition(",")[0].strip().replace("*", "").upper()


def _abaqus(text: str) -> NodeTable:
    """The nodes of the *NODE blocks: a data line is `id, x[, y[, z]]`; a block ends at the
    next line starting with '*' (a comment line too, as in meshio's reader)."""
    lines = text.splitlines()
    blocks, tags, coords, where = [], [], [], []
    k = 0
    while k < len(lines):
        if lines[k].startswith("**") or _keyword(lines[k]) != "NODE":
            k += 1
            continue
        blocks.append(k + 1)
        k += 1
        while k < len(lines) and not lines[k].startswith("*"):
            if lines[k].strip():
                fields = lines[k].strip().split(",")
                tags.append(int(fields[0]))
                coords += ([float(x) for x in fields[1:]] + [0.0, 0.0, 0.0])[:3]
                where.append(k + 1)
            k += 1
    return _table(tags, coords, where, tuple(blocks))
