"""``rodsim export --format xdmf``: an XDMF index of a results file (docs/running.md, "rodsim
export").

The index is a small XML file (XDMF 2, read by ParaView's and VTK's XDMF reader) that points
into the HDF5 file: no data is copied. One temporal collection per kind of element (rods:
polylines of 2 nodes; plates: quadrilaterals, a triangle's last node repeated), one grid per
frame at its total time (grid_times). A grid's geometry and fields are hyperslabs of frame k
of the per-frame datasets (nodes/position (F,N,3) -> [k, :, :]): every per-node dataset as
point data, every per-element dataset of that kind with one value or one vector per element
as cell data, named after the dataset (position, velocity, ..., force, moment, membrane, ...).

A term's ragged dataset of node pairs (R, 2) int64 (docs/results.md "Ragged datasets") is a
collection of its own, named after it: per frame a polyline grid of that frame's pairs (a
hyperslab of its rows; a frame without rows has no cells), with the other ragged datasets of
its group that have the same rows in every frame as cell data.
"""

import os
from pathlib import Path

import numpy as np

from rodsim.errors import CaseError
from rodsim.post.csv_export import PER_POINT
from rodsim.post.replace_file import write_whole
from rodsim.results import guard as output_guard
from rodsim.results.layout import FRAME_DATASETS, TERM_FRAME_DATASETS
from rodsim.results.reader import frame_count, open_results

KINDS = (
    ("rods", "mesh/rods", "Polyline", "rods/"),
    ("plates", "mesh/plates", "Quadrilateral", "plates/"),
)
# other sizes are vectors too: VTK's reader takes their components as they are (4: the
# rotation's quaternion) or pads 2 with a zero third (plates' shear Q1, Q2); as "Matrix" it
# would read all entries of a frame as one tuple
ATTRIBUTE = {1: "Scalar", 3: "Vector", 9: "Tensor"}
HEADER = '<?xml version="1.0" ?>'
# GEOMETRY_KEY. VTK's XDMF reader (vtkXdmfHeavyData) keys its cache of a grid's points by the
# text of the first child of the geometry's DataItem. A hyperslab's first child is a DataItem
# element, which has no text: the reader then prints "ERR| Cannot find DataItem element in
# geometry xml, no caching possible" for every grid it reads, and reads on. A comment naming
# the dataset and the frame, as that first child, is text that differs between frames: the
# reader is quiet and its cache holds the right frame's points (the data are read as before).


def _item(source: str, path: str, shape: tuple, number: str = "Float") -> str:
    dims = " ".join(map(str, shape))
    return (
        f'<DataItem Dimensions="{dims}" NumberType="{number}" Precision="8" '
        f'Format="HDF">{source}:/{path}</DataItem>'
    )


def _slab(source: str, path: str, k: int, n_frames: int, shape: tuple, key: bool = False) -> str:
    """Frame k of a per-frame dataset (F, *shape) as a hyperslab of shape `shape`; key: begin
    it with a comment naming the dataset and frame (see GEOMETRY_KEY)."""
    rank = len(shape) + 1
    start = " ".join([str(k)] + ["0"] * len(shape))
    stride = " ".join(["1"] * rank)
    count = " ".join(["1", *map(str, shape)])
    note = f"<!-- {path} frame {k} -->" if key else ""
    return (
        f'<DataItem ItemType="HyperSlab" Dimensions="{" ".join(map(str, shape))}" '
        f'Type="HyperSlab">{note}\n'
        f'  <DataItem Dimensions="3 {rank}" Format="XML">{start} {stride} {count}</DataItem>\n'
        f"  {_item(source, path, (n_frames, *shape))}\n</DataItem>"
    )


def _rows_slab(source: str, f, path: str, start: int, count: int, number: str = "Float") -> str:
    """Rows start to start + count of a ragged dataset's flat rows (total, *row)."""
    total, *row = f[path].shape
    rank = len(row) + 1
    first = " ".join([str(start)] + ["0"] * len(row))
    return (
        f'<DataItem ItemType="HyperSlab" Dimensions="{" ".join(map(str, (count, *row)))}" '
        f'Type="HyperSlab">\n'
        f'  <DataItem Dimensions="3 {rank}" Format="XML">{first} {" ".join(["1"] * rank)} '
        f"{' '.join(map(str, (count, *row)))}</DataItem>\n"
        f"  {_item(source, path, (total, *row), number)}\n</DataItem>"
    )


def _ragged_collections(f, source: str, n: int, times) -> list:
    """One temporal collection per ragged pair dataset of the file (see the docstring)."""
    ragged = [d for d in TERM_FRAME_DATASETS if d.ragged and d.path in f]
    out = []
    for d in ragged:
        if d.dtype != "i8" or d.shape[1:] != (2,):
            continue
        ends = f[d.end_path][:n]
        group = d.path.partition("/")[0] + "/"
        data = [
            e
            for e in ragged
            if e is not d and e.path.startswith(group) and np.array_equal(f[e.end_path][:n], ends)
        ]
        grids = []
        for k in range(n):
            start = int(ends[k - 1]) if k else 0
            rows = int(ends[k]) - start
            parts = [
                f'<Grid Name="{d.path} {k}" GridType="Uniform">',
                f'<Time Value="{float(times[k])!r}"/>',
                f'<Topology TopologyType="Polyline" NodesPerElement="2" NumberOfElements="{rows}">',
                _rows_slab(source, f, d.path, start, rows, "Int") if rows else "",
                "</Topology>",
                '<Geometry GeometryType="XYZ">',
                _slab(source, "nodes/position", k, n, (f["mesh/points"].shape[0], 3), key=True),
                "</Geometry>",
            ]
            for e in data if rows else ():
                shape = (rows, *f[e.path].shape[1:])
                name = e.path.removeprefix(group)
                parts.append(
                    _attribute(name, "Cell", _rows_slab(source, f, e.path, start, rows), shape)
                )
            parts.append("</Grid>")
            grids.append("\n".join(p for p in parts if p))
        out.append(
            f'<Grid Name="{d.path}" GridType="Collection" CollectionType="Temporal">\n'
            + "\n".join(grids)
            + "\n</Grid>"
        )
    return out


def _fields(f, prefix: str, size: int) -> list:
    """(name, dataset path, per-frame shape) of the per-frame datasets under prefix with one
    value or one small vector per entry (size entries)."""
    out = []
    for d in FRAME_DATASETS:
        if not d.path.startswith(prefix) or d.path in PER_POINT or d.path not in f:
            continue
        shape = f[d.path].shape[1:]
        if shape[:1] != (size,) or len(shape) > 2:
            continue
        out.append((d.path.removeprefix(prefix), d.path, shape))
    return out


def _attribute(name: str, center: str, slab: str, shape: tuple) -> str:
    kind = ATTRIBUTE.get(shape[1] if len(shape) == 2 else 1, "Vector")
    return (
        f'<Attribute Name="{name}" AttributeType="{kind}" Center="{center}">\n{slab}\n</Attribute>'
    )


def grid_times(f, n: int) -> np.ndarray:
    """The frames' times: total_time (the time across analysis steps; `time` in files from
    before steps), each at least the next float after the one before, so that the series is
    strictly increasing (the hand-over between two steps shares a total time)."""
    times = np.array(f["total_time"][:n] if "total_time" in f else f["time"][:n], dtype=float)
    for k in range(1, n):
        if not times[k] > times[k - 1]:
            times[k] = np.nextafter(times[k - 1], np.inf)
    return times


def xdmf_text(f, source: str) -> str:
    """The index of an open results file f whose HDF5 file the index names `source`."""
    n = frame_count(f)
    if n == 0:
        raise CaseError("the file holds no frame", key="--format")
    n_nodes = f["mesh/points"].shape[0]
    nodes = _fields(f, "nodes/", n_nodes)
    times = grid_times(f, n)
    collections = []
    for name, mesh, topology, prefix in KINDS:
        if mesh not in f or f[mesh].shape[0] == 0:
            continue
        conn = f[mesh].shape
        cells = _fields(f, prefix, conn[0])
        grids = []
        for k in range(n):
            parts = [
                f'<Grid Name="{name} {k}" GridType="Uniform">',
                f'<Time Value="{float(times[k])!r}"/>',
                f'<Topology TopologyType="{topology}" NodesPerElement="{conn[1]}" '
                f'NumberOfElements="{conn[0]}">',
                _item(source, mesh, conn, "Int"),
                "</Topology>",
                '<Geometry GeometryType="XYZ">',
                _slab(source, "nodes/position", k, n, (n_nodes, 3), key=True),
                "</Geometry>",
            ]
            for field, path, shape in nodes:
                parts.append(_attribute(field, "Node", _slab(source, path, k, n, shape), shape))
            for field, path, shape in cells:
                parts.append(_attribute(field, "Cell", _slab(source, path, k, n, shape), shape))
            parts.append("</Grid>")
            grids.append("\n".join(parts))
        collections.append(
            f'<Grid Name="{name}" GridType="Collection" CollectionType="Temporal">\n'
            + "\n".join(grids)
            + "\n</Grid>"
        )
    if not collections:
        raise CaseError("the results have no elements to index", key="--format")
    collections += _ragged_collections(f, source, n, times)
    body = "\n".join(collections)
    return f'{HEADER}\n<Xdmf Version="2.0">\n<Domain>\n{body}\n</Domain>\n</Xdmf>\n'


def export_xdmf(results, output=None) -> Path:
    """Write the XDMF index of a results file (default: <stem>.xdmf next to it); the index
    names the HDF5 file relative to its own folder. Returns its path."""
    results = Path(results)
    path = Path(output) if output is not None else results.with_suffix(".xdmf")
    reads = {results.resolve(): "the results file itself"}
    output_guard.check(path, "xdmf", reads=reads, file=str(results))
    source = os.path.relpath(results.resolve(), path.resolve().parent)
    try:
        with open_results(results) as f:
            text = xdmf_text(f, source)
    except CaseError as exc:
        raise CaseError(exc.reason, file=str(results), key=exc.key) from None
    write_whole(path, [text])
    return path
