"""Reading mesh files with meshio: line cells become rod elements, triangle and quad cells
plates, sets become named sets.

meshio represents groups in several ways depending on the format, and all are accepted:
``cell_sets`` (Gmsh 4.1 physical groups of any dimension), the ``gmsh:physical`` tag named
through ``field_data`` (Gmsh 2.2), meshio's integer set encoding in VTU/XDMF, ``point_sets``.
Sets made of vertex cells are node sets; sets of line or surface cells are element sets (and
also node sets of their nodes). A node id that a .msh or .inp file defines twice is checked
first (rodsim.mesh.node_ids): at two points it is an error, at one point it is merged.
"""

import contextlib
import io
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rodsim.errors import CaseError
from rodsim.mesh.node_ids import check_node_ids

log = logging.getLogger(__name__)

LINE_TYPES = ("line",)
PLATE_TYPES = ("triangle", "quad")
TAG_NAMES = ("gmsh:physical", "CellEntityIds", "medit:ref", "cell_tags")


def _no_plates() -> np.ndarray:
    return np.zeros((0, 4), dtype=np.int64)


@dataclass(frozen=True)
class FileMesh:
    """points (N,3); lines (E,2) int64; element_sets name -> (k,) indices into lines;
    node_sets name -> (k,) node indices; plates (P,4) int64 triangle and quad cells in file
    order (triangles repeat their last node); plate_sets name -> (k,) indices into plates;
    merged_ids: the file's node ids it defines more than once at one point (one node each)."""

    points: np.ndarray
    lines: np.ndarray
    element_sets: dict = field(default_factory=dict)
    node_sets: dict = field(default_factory=dict)
    plates: np.ndarray = field(default_factory=_no_plates)
    plate_sets: dict = field(default_factory=dict)
    merged_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def read_mesh(path: Path, key: str, merge_tolerance: float | None = None) -> FileMesh:
    """Read a mesh file; CaseError (with key, the case key path of the file) if unusable.

    A node id defined twice is one node if its points are within merge_tolerance (length;
    default 1e-8 x the file's bounding-box diagonal, the distance at which rodsim merges the
    nodes of different parts anyway), else an error."""
    import meshio

    if not path.exists():
        raise CaseError(f"mesh file {str(path)!r} does not exist", key=key)
    if path.is_dir():
        raise CaseError(f"mesh file {str(path)!r} is a folder", key=key)
    if not any(path.name.lower().endswith(ext) for ext in meshio.extension_to_filetypes):
        raise CaseError(
            f"mesh file {str(path)!r} is of a type meshio cannot read; expected a "
            "mesh such as .msh, .vtu, .xdmf or .inp",
            key=key,
        )
    fmt = "gmsh" if path.suffix.lower() == ".msh" else None  # else meshio tries ANSYS first
    printed = io.StringIO()
    try:
        # meshio prints some read errors and its warnings instead of raising them: keep them
        # off the terminal and use them as the reason
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            mesh = meshio.read(path, file_format=fmt)
    except (Exception, SystemExit) as exc:  # meshio raises many types; a truncated .msh exits
        lines = [x.strip() for x in printed.getvalue().splitlines() if x.strip()]
        text = str(exc).strip() if not isinstance(exc, SystemExit) else ""
        reason = (text.splitlines() or lines or [type(exc).__name__])[0]
        raise CaseError(
            f"cannot read mesh file {str(path)!r}: {reason} (is the file complete "
            "and in the format its extension says?)",
            key=key,
        ) from None
    for line in printed.getvalue().splitlines():
        if line.strip():
            log.warning("%s: %s", path.name, line.strip())
    points = np.zeros((len(mesh.points), 3))
    if len(mesh.points):
        points[:, : mesh.points.shape[1]] = mesh.points
    if not np.all(np.isfinite(points)):
        raise CaseError(f"mesh file {str(path)!r} has non-finite coordinates", key=key)
    merged_ids = _merge_node_ids(mesh, path, key, points, merge_tolerance)

    kinds = _cell_kinds(mesh)
    unsupported = {t: n for t, n in kinds.items() if t not in (*LINE_TYPES, *PLATE_TYPES, "vertex")}
    if unsupported:
        found = ", ".join(f"{n} {t}" for t, n in unsupported.items())
        raise CaseError(
            f"mesh file {str(path)!r} has cells rodsim cannot use ({found}); "
            "expected 2-node line cells (rods), 3-node triangle and 4-node quad "
            "cells (plates)",
            key=key,
        )
    lines, line_at = _stacked(mesh, LINE_TYPES, 2)
    plates, plate_at = _stacked(mesh, PLATE_TYPES, 4)
    if not len(lines) and not len(plates):
        raise CaseError(
            f"mesh file {str(path)!r} has no line, triangle or quad cells; "
            "expected line cells for rods or surface cells for plates",
            key=key,
        )
    for conn in (lines, plates):
        if len(conn) and (conn.min() < 0 or conn.max() >= len(points)):
            raise CaseError(
                f"mesh file {str(path)!r} has cells referring to missing points", key=key
            )

    element_sets, plate_sets, node_sets = {}, {}, {}
    for name, per_block in _cell_sets(mesh).items():
        elems, faces, nodes = [], [], []
        for b, idx in enumerate(per_block):
            if idx is None or len(idx) == 0:
                continue
            idx = np.asarray(idx, dtype=np.int64)
            if b in line_at:
                elems.append(line_at[b] + idx)
            if b in plate_at:
                faces.append(plate_at[b] + idx)
            nodes.append(np.asarray(mesh.cells[b].data, dtype=np.int64)[idx].ravel())
        if elems:
            element_sets[name] = np.unique(np.concatenate(elems))
        if faces:
            plate_sets[name] = np.unique(np.concatenate(faces))
        if nodes:
            node_sets[name] = np.unique(np.concatenate(nodes))
    for name, idx in _point_sets(mesh).items():
        node_sets[name] = np.unique(idx)
    lines, element_sets = _first_copies(lines, element_sets)
    plates, plate_sets = _first_copies(plates, plate_sets)
    # HDF5 would read "/" in a set name as a group path (mesh/sets/<name>)
    element_sets, plate_sets, node_sets = (
        {k.replace("/", "_"): v for k, v in sets.items()}
        for sets in (element_sets, plate_sets, node_sets)
    )
    used = np.unique(np.concatenate([lines.ravel(), plates.ravel()]))
    return FileMesh(
        points, lines, element_sets, {**node_sets, "all": used}, plates, plate_sets, merged_ids
    )


def _merge_node_ids(mesh, path: Path, key: str, points: np.ndarray, merge_tolerance) -> np.ndarray:
    """The ids the file defines twice at one point (logged), CaseError if at two points. The
    cells and point sets of mesh then use the first definition of each (meshio's use the
    last), so the node keeps the place in the node order that its first definition gives it,
    and the later ones, unused, are dropped like any unused point."""
    size = float(np.linalg.norm(np.ptp(points, axis=0))) if len(points) else 0.0
    tol = 1e-8 * size if merge_tolerance is None else merge_tolerance
    merged = check_node_ids(path, key, tol, points)
    if merged is None:
        return np.zeros(0, dtype=np.int64)
    for block in mesh.cells:
        block.data = merged.first[np.asarray(block.data, dtype=np.int64)]
    mesh.point_sets = {
        k: merged.first[np.asarray(v, dtype=np.int64)] for k, v in (mesh.point_sets or {}).items()
    }
    more = f" (and {len(merged.ids) - 1} more ids)" if len(merged.ids) > 1 else ""
    log.warning(
        "%s: node %d is defined %d times at the same point (%s)%s; merged into one "
        "node each (within %.3g)",
        path.name,
        int(merged.ids[0]),
        len(merged.first_where),
        ", ".join(merged.first_where),
        more,
        tol,
    )
    return merged.ids


def _cell_kinds(mesh) -> dict:
    """cell type -> number of cells."""
    kinds: dict = {}
    for block in mesh.cells:
        kinds[block.type] = kinds.get(block.type, 0) + len(block.data)
    return kinds


def _stacked(mesh, types: tuple, width: int) -> tuple[np.ndarray, dict]:
    """The cells of the given types in file order as one (k, width) int64 array (narrower cells,
    triangles, padded by repeating their last node), and block index -> row offset."""
    rows, at, count = [], {}, 0
    for b, block in enumerate(mesh.cells):
        if block.type not in types:
            continue
        data = np.asarray(block.data, dtype=np.int64).reshape(len(block.data), -1)
        pad = np.repeat(data[:, -1:], width - data.shape[1], axis=1)
        rows.append(np.concatenate([data, pad], axis=1))
        at[b] = count
        count += len(data)
    if not rows:
        return np.zeros((0, width), dtype=np.int64), at
    return np.ascontiguousarray(np.concatenate(rows)), at


def _first_copies(conn: np.ndarray, sets: dict) -> tuple[np.ndarray, dict]:
    """Gmsh 2.2 writes an element once per physical group it belongs to: keep the first copy
    of each (same node set) and renumber the sets."""
    if len(conn) == 0:
        return conn, sets
    _, first, inverse = np.unique(
        np.sort(conn, axis=1), axis=0, return_index=True, return_inverse=True
    )
    if len(first) == len(conn):
        return conn, sets
    keep = np.sort(first)
    renumber = np.searchsorted(keep, first[inverse.ravel()])
    return (np.ascontiguousarray(conn[keep]), {k: np.unique(renumber[v]) for k, v in sets.items()})


def _cell_sets(mesh) -> dict:
    """name -> list (per cell block) of index arrays.

    In order of preference: ``cell_sets`` (Gmsh 4.1, Abaqus, ...); the Gmsh 2.2 physical tag
    ``gmsh:physical`` named by ``field_data``; meshio's own set encoding in VTU/XDMF (integer
    cell data keyed ``name1-name2-...`` holding the set index, -1 for none); another integer
    tag (named by field_data, else by its value).
    """
    sets = {k: list(v) for k, v in (mesh.cell_sets or {}).items() if not k.startswith("gmsh:")}
    if sets:
        return sets
    data = mesh.cell_data or {}
    names = {int(v[0]): k for k, v in (mesh.field_data or {}).items()}
    if "gmsh:physical" in data and names:  # unnamed (VTU, XDMF): the set encoding has names
        return _tagged(data["gmsh:physical"], names)
    for key, arrays in data.items():
        if key.startswith("gmsh:") or not _is_int(arrays):
            continue
        encoded = key.split("-")
        values = np.unique(np.concatenate([np.asarray(a).ravel() for a in arrays]))
        if values.min() >= -1 and values.max() < len(encoded):
            return _tagged(arrays, dict(enumerate(encoded)))
    for key in TAG_NAMES:
        if key in data and _is_int(data[key]):
            return _tagged(data[key], names)
    return {}


def _point_sets(mesh) -> dict:
    """name -> node indices, from point_sets or meshio's integer point-data set encoding."""
    sets = {k: np.asarray(v, dtype=np.int64) for k, v in (mesh.point_sets or {}).items()}
    for key, values in (mesh.point_data or {}).items():
        values = np.asarray(values)
        if key.startswith("gmsh:") or values.ndim != 1 or values.dtype.kind not in "iu":
            continue
        encoded = key.split("-")
        if values.min() >= -1 and values.max() < len(encoded):
            for i, name in enumerate(encoded):
                sets.setdefault(name, np.flatnonzero(values == i))
    return sets


def _is_int(arrays) -> bool:
    return all(np.asarray(a).dtype.kind in "iu" for a in arrays)


def _tagged(arrays, names: dict) -> dict:
    tags = [np.asarray(a).ravel() for a in arrays]
    sets = {}
    for value in np.unique(np.concatenate(tags)):
        if value < 0:
            continue
        name = names.get(int(value), str(int(value)))
        sets[name] = [np.flatnonzero(t == value) for t in tags]
    return sets


# <DataItem ... Format="HDF" ...> data.h5:/group/points </DataItem>; attributes in any order
_DATA_ITEM = re.compile(rb"<DataItem\b([^>]*)>([^<]*)</DataItem>", re.IGNORECASE)
_FORMAT = re.compile(rb"""\bFormat\s*=\s*["']([A-Za-z]+)["']""")
_INCLUDE = re.compile(rb"^\*\s*INCLUDE\b[^\n]*?=([^\n]*)$", re.IGNORECASE | re.MULTILINE)


POINTING = (".xdmf", ".xmf", ".inp")  # the mesh formats whose files name other files


def side_files(path: Path, text: bytes) -> list[Path]:
    """The files a mesh file points to, as meshio reads them: an XDMF file's HDF5 heavy data
    (relative to the .xdmf) and Binary data (as written: meshio opens it from the current
    folder); an Abaqus .inp's *INCLUDE files (from the current folder, else the .inp's)."""
    suffix = path.suffix.lower()
    out = []
    if suffix in POINTING[:2]:
        for attributes, body in _DATA_ITEM.findall(text):
            fmt = _FORMAT.search(attributes)
            kind = fmt.group(1).upper() if fmt else b"XML"
            name = body.strip().decode("utf-8", "replace")
            if kind == b"HDF" and ":" in name:
                out.append(path.parent / name.split(":")[0])
            elif kind == b"BINARY" and name:
                out.append(Path(name))
    elif suffix == ".inp":
        for name in _INCLUDE.findall(text):
            p = Path(name.strip().decode("utf-8", "replace"))
            out.append(p if p.exists() else path.parent / p)
    return out
