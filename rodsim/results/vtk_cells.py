"""The cells and cell data of a ParaView frame (docs/results.md, "The ParaView series"): rods
as a line block, plates as quad and triangle blocks after them in the results file's order,
then a line block per term that joins pairs of nodes (its mesh dataset "mesh/<term>" of shape
(L, 2): the connectors), each cell array over all cells."""

import numpy as np

from rodsim.results.frame import Frame, Unwritten

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


def _link_data(frame: Frame, pairs: dict) -> dict:
    """ "<term>_<field>" -> (L, width) of each per-frame dataset of a linking term."""
    out = {}
    for path, v in frame.terms.items():
        name, _, field = path.partition("/")
        if name not in pairs or isinstance(v, Unwritten):
            continue
        v = np.asarray(v, dtype=float)
        if v.ndim >= 1 and v.shape[0] == len(pairs[name]):
            out[f"{name}_{field}"] = (name, v.reshape(len(v), -1))
    return out


def cell_data(frame: Frame, n_rods: int, n_plates: int, blocks: list, pairs: dict) -> dict:
    """name -> per-block arrays; each field on its own cells, zeros of its width elsewhere."""
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
    if not pairs and not n_plates:  # rod-only: one block, the arrays as they are
        return {name: [values] for name, values in out.items()}
    n_links = sum(len(p) for p in pairs.values())
    for name, values in out.items():  # the links' cells: zeros (stresses NaN)
        fill = np.nan if name in STRESS_CELL_DATA else 0.0
        out[name] = np.concatenate([values, np.full((n_links, *values.shape[1:]), fill)])
    n_mesh = n_rods + n_plates
    starts, at = {}, n_mesh
    for name, p in pairs.items():
        starts[name] = at
        at += len(p)
    for key, (name, v) in _link_data(frame, pairs).items():
        full = np.zeros((n_mesh + n_links, v.shape[1]))
        full[starts[name] : starts[name] + len(v)] = v
        out[key] = full[:, 0] if v.shape[1] == 1 else full
    return {name: _split(values, blocks) for name, values in out.items()}
