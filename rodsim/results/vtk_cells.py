"""The cells and cell data of a ParaView frame (docs/results.md, "The ParaView series"): rods
as a line block, plates as quad and triangle blocks after them in the results file's order,
then a line block per term that joins pairs of nodes (its mesh dataset "mesh/<term>" of shape
(L, 2): the connectors), then a line block per ragged pair dataset of a term (a ragged
per-frame dataset of integer node pairs (R, 2), its rows this frame's: docs/results.md
"Ragged datasets"), each cell array over all cells. A term's per-frame dataset that is no
cell data of such cells is the frame's field data."""

from xml.sax.saxutils import quoteattr

import numpy as np

from rodsim.results.frame import Frame, Unwritten
from rodsim.results.layout import TERM_FRAME_DATASETS

ROD_CELL_DATA = {"force": 3, "moment": 3, "strain": 3, "curvature": 3}  # name -> width
PLATE_CELL_DATA = {"membrane": 3, "bending": 3, "shear": 2}
STRESS_CELL_DATA = ("von_mises_max", "utilisation")  # rod_<name> and plate_<name> of a Frame


def or_zeros(a, like):
    return np.zeros_like(like) if a is None else a


def cell_blocks(conn: np.ndarray, plates) -> list[tuple[str, np.ndarray]]:
    """meshio cell blocks: the rods as one line block (kept even when empty for a rod-only
    mesh, as before plates existed), then the plates as runs of quads and triangles in their
    own order, so cell k of the plates is plate k of the results file."""
    blocks = [("line", conn)] if len(conn) or plates is None or not len(plates) else []
    if plates is None or not len(plates):
        return blocks
    tri = plates[:, 3] == plates[:, 2]
    starts = np.flatnonzero(np.diff(tri.astype(np.int8), prepend=2))
    for a, b in zip(starts, [*starts[1:], len(plates)], strict=True):
        blocks.append(("triangle", plates[a:b, :3]) if tri[a] else ("quad", plates[a:b]))
    return blocks


def _split(values: np.ndarray, blocks: list) -> list[np.ndarray]:
    """Per-block pieces of an array over all cells (in block order)."""
    ends = np.cumsum([len(data) for _, data in blocks])[:-1]
    return np.split(values, ends)


def links(frame: Frame) -> dict[str, np.ndarray]:
    """The node pairs of the terms that join two nodes, by term name: each "mesh/<term>"
    dataset of a frame's terms of shape (L, 2) and integer type, L > 0 (docs/results.md)."""
    out = {}
    for path, v in frame.terms.items():
        if not path.startswith("mesh/") or isinstance(v, Unwritten):
            continue
        v = np.asarray(v)
        if v.ndim == 2 and v.shape[1] == 2 and v.dtype.kind in "iu" and len(v):
            out[path[5:]] = v.astype(np.int64)
    return out


def _ragged() -> dict:
    return {d.path: d for d in TERM_FRAME_DATASETS if d.ragged}


def ragged_links(frame: Frame) -> dict[str, np.ndarray]:
    """This frame's node pairs of each ragged pair dataset of the frame's terms, by path (no
    rows: (0, 2))."""
    out = {}
    for path, d in _ragged().items():
        v = frame.terms.get(path)
        if v is not None and not isinstance(v, Unwritten) and d.shape[1:] == (2,):
            if d.dtype == "i8":
                out[path] = np.asarray(v, np.int64).reshape(-1, 2)
    return out


def _rows(v: np.ndarray) -> np.ndarray:
    """(rows, width): a dataset's entries flattened (no rows too)."""
    return v.reshape(v.shape[0], int(np.prod(v.shape[1:], dtype=np.int64)))


def link_data(frame: Frame, pairs: dict, ragged: dict) -> tuple[list, set]:
    """[(pairs (L, 2), {"<group>_<field>": (L, width)})] of each set of linking cells, and
    the paths they show: a term's fixed pairs with its fixed per-frame datasets of L rows, a
    ragged pair dataset with the other ragged datasets of its group of as many rows this
    frame."""
    kinds = _ragged()
    values = {
        p: np.asarray(v, dtype=float)
        for p, v in frame.terms.items()
        if not p.startswith("mesh/") and not isinstance(v, Unwritten)
    }
    sets, shown = [], set(ragged)
    for name, p in pairs.items():
        data = {}
        for path, v in values.items():
            group, _, field = path.partition("/")
            if group == name and path not in kinds and v.ndim >= 1 and v.shape[0] == len(p):
                data[f"{name}_{field}"] = _rows(v)
                shown.add(path)
        sets.append((p, data))
    for key, p in ragged.items():
        group = key.partition("/")[0]
        data = {}
        for path, v in values.items():
            if path in kinds and path not in ragged and path.startswith(group + "/"):
                if len(v) == len(p):
                    data[path.replace("/", "_")] = _rows(v)
                    shown.add(path)
        sets.append((p, data))
    return sets, shown


def field_data(frame: Frame, shown: set) -> dict:
    """ "<group>_<field>" -> (rows, width) of the frame's term datasets no cells show."""
    out = {}
    for path, v in frame.terms.items():
        if path.startswith("mesh/") or path in shown or isinstance(v, Unwritten):
            continue
        v = np.asarray(v, dtype=float)
        out[path.replace("/", "_")] = _rows(v) if v.ndim else v.reshape(1, 1)
    return out


def cell_data(frame: Frame, n_rods: int, n_plates: int, blocks: list, sets: list) -> dict:
    """name -> per-block arrays; each field on its own cells, zeros of its width elsewhere.
    sets: the linking cells after the mesh's with their data (_link_data), in block order."""
    out = {}
    for name, width in ROD_CELL_DATA.items():
        if isinstance(getattr(frame, name), Unwritten):
            continue
        rods = or_zeros(getattr(frame, name), np.zeros((n_rods, width)))
        out[name] = np.concatenate([rods, np.zeros((n_plates, width))]) if n_plates else rods
    for name, width in PLATE_CELL_DATA.items():
        if isinstance(getattr(frame, f"plate_{name}"), Unwritten):
            continue
        plates = or_zeros(getattr(frame, f"plate_{name}"), np.zeros((n_plates, width)))
        if n_plates:
            out[name] = np.concatenate([np.zeros((n_rods, width)), plates])
    for name in STRESS_CELL_DATA:  # rods and plates in one array, NaN where not recovered
        rods, plates = (
            None if isinstance(v, Unwritten) else v
            for v in (getattr(frame, f"rod_{name}"), getattr(frame, f"plate_{name}"))
        )
        if rods is None and plates is None:
            continue
        rods = np.full(n_rods, np.nan) if rods is None else rods
        out[name] = np.concatenate([rods, np.full(n_plates, np.nan) if plates is None else plates])
    if not sets and not n_plates:  # rod-only: one block, the arrays as they are
        return {name: [values] for name, values in out.items()}
    n_links = sum(len(p) for p, _ in sets)
    for name, values in out.items():  # the links' cells: zeros (stresses NaN)
        fill = np.nan if name in STRESS_CELL_DATA else 0.0
        out[name] = np.concatenate([values, np.full((n_links, *values.shape[1:]), fill)])
    at = n_rods + n_plates
    for p, data in sets:
        for key, v in data.items():
            full = np.zeros((n_rods + n_plates + n_links, v.shape[1]))
            full[at : at + len(v)] = v
            out[key] = full[:, 0] if v.shape[1] == 1 else full
        at += len(p)
    return {name: _split(values, blocks) for name, values in out.items()}


def add_field_data(path, data: dict) -> None:
    """Write data ("<group>_<field>" -> (rows, width)) into the .vtu at path as its field data
    (meshio reads field data but does not write it): ASCII arrays, each number as Python's
    repr writes it, which reads back exactly."""
    if not data:
        return
    arrays = "".join(
        f'<DataArray type="Float64" Name={quoteattr(name)} NumberOfTuples="{v.shape[0]}" '
        f'NumberOfComponents="{v.shape[1]}" format="ascii">'
        + (" ".join(repr(x) for x in v.ravel().tolist()) or " ")
        + "</DataArray>\n"
        for name, v in data.items()
    )
    with open(path, "rb") as f:
        text = f.read()
    grid = b"<UnstructuredGrid>\n"
    at = text.index(grid) + len(grid)
    with open(path, "wb") as f:
        f.write(text[:at] + f"<FieldData>\n{arrays}</FieldData>\n".encode() + text[at:])
