"""What ``rodsim render`` draws, as arrays (docs/render.md): the surfaces of the rods and plates
of a results file at a frame, and the values that colour them. No VTK here: rodsim.post.render
hands these arrays to pyvista.

Rods are prisms, one per element: its section's outline (mesh/section_outline, (x2, x3) along
d2, d3) placed at both end nodes in the current section frames R(q) Lambda0 (mesh/rod_frames),
closed by caps. Plates are solids of their thickness: each corner at x -+ h/2 d3, with d3 the
node's current director, R(q) times the d3 of mesh/frames (the mean normal at plate nodes).
A surface is (points (V,3), faces, the node of each point (V,), the element of each face);
faces in VTK's flat form [n, i0, ..., i(n-1), n, ...].
"""

from typing import NamedTuple

import numpy as np
from scipy.spatial.transform import Rotation

from rodsim.errors import CaseError
from rodsim.post.csv_export import PER_POINT
from rodsim.post.plots import COMPONENTS
from rodsim.results.layout import FRAME_DATASETS
from rodsim.results.reader import dataset, not_written

DEFAULT_RADIUS = 0.01  # of the model's size: rods of files without outlines (layout < 1.6)


class Surface(NamedTuple):
    """Topology of a drawn surface: faces (VTK flat form), node (V,) the mesh node each point
    sits at, element (C,) the rod or plate element of each face; place: how points are
    computed from a frame (rods_at, plates_at take it)."""

    faces: np.ndarray
    node: np.ndarray
    element: np.ndarray
    place: tuple


def matrices(q: np.ndarray) -> np.ndarray:
    """(N,3,3) rotation matrices of unit quaternions q (N,4) (w, x, y, z), scalar first."""
    return Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_matrix()


def triangles(polygon: np.ndarray) -> np.ndarray:
    """(K-2, 3) indices of a simple counter-clockwise polygon (K,2) cut into triangles by ear
    clipping (outlines are concave: I, channel, angle)."""
    left = list(range(len(polygon)))
    out = []
    while len(left) > 3:
        for j in range(len(left)):
            a, b, c = left[j - 1], left[j], left[(j + 1) % len(left)]
            pa, pb, pc = polygon[a], polygon[b], polygon[c]
            if _cross(pb - pa, pc - pb) <= 0:  # a reflex or flat corner is no ear
                continue
            others = [i for i in left if i not in (a, b, c)]
            if not any(_inside(polygon[i], pa, pb, pc) for i in others):
                out.append((a, b, c))
                left.pop(j)
                break
        else:  # round-off on a degenerate outline: take what is left as a fan
            out += [(left[0], left[k], left[k + 1]) for k in range(1, len(left) - 1)]
            left = left[:3]
            break
    out.append(tuple(left))
    return np.array(out, dtype=np.int64)


def _cross(u, v) -> float:
    return float(u[0] * v[1] - u[1] * v[0])


def _inside(p, a, b, c) -> bool:
    return _cross(b - a, p - a) >= 0 and _cross(c - b, p - b) >= 0 and _cross(a - c, p - c) >= 0


def _flat(cells: np.ndarray) -> np.ndarray:
    """VTK's flat form of cells (C, n) of one size."""
    return np.column_stack([np.full(len(cells), cells.shape[1]), cells]).ravel()


def rod_surface(conn: np.ndarray, section: np.ndarray, outline: np.ndarray, size: float):
    """The Surface of the rods: conn (E,2), section (E,) into outline (S,B,2) NaN-padded (B = 0
    or a NaN row: a tube of DEFAULT_RADIUS times the model's size)."""
    faces, node, element, groups, start = [], [], [], [], 0
    for s in np.unique(section):
        elems = np.flatnonzero(section == s)
        o = outline[s] if outline.shape[1] else np.zeros((0, 2))
        o = o[~np.isnan(o[:, 0])]
        if len(o) < 3:
            phi = 2.0 * np.pi * np.arange(24) / 24
            o = DEFAULT_RADIUS * size * np.column_stack([np.cos(phi), np.sin(phi)])
        b, m = len(o), len(elems)
        base = start + 2 * b * np.arange(m)[:, None]  # (m,1): end 0 at base, end 1 at base + b
        k = np.arange(b)
        sides = np.stack([k, (k + 1) % b, b + (k + 1) % b, b + k], axis=1)  # (b,4)
        cap = triangles(o)
        per = [sides, cap[:, ::-1], b + cap]  # the cap at end 0 faces -d1
        for cells in per:
            cells = (base[:, :, None] + cells[None]).reshape(-1, cells.shape[1])
            faces.append(_flat(cells))
            element.append(np.repeat(elems, len(cells) // m))
        node.append(np.repeat(conn[elems], b, axis=1).ravel())
        groups.append((elems, o))
        start += 2 * b * m
    return Surface(
        np.concatenate(faces), np.concatenate(node), np.concatenate(element), tuple(groups)
    )


def rods_at(surface: Surface, x, turns, end_frames, conn) -> np.ndarray:
    """(V,3) the points of the rod surface with nodes at x (N,3), turned by turns (N,3,3) from
    their reference section frames end_frames (E,2,3,3)."""
    out = []
    for elems, o in surface.place:
        frames = turns[conn[elems]] @ end_frames[elems]  # (m,2,3,3), columns d1 d2 d3
        p = x[conn[elems]][:, :, None, :] + (
            o[None, None, :, 0, None] * frames[:, :, None, :, 1]
            + o[None, None, :, 1, None] * frames[:, :, None, :, 2]
        )
        out.append(p.reshape(-1, 3))
    return np.concatenate(out) if out else np.zeros((0, 3))


def plate_surface(plates: np.ndarray, thickness: np.ndarray) -> Surface:
    """The Surface of the plates (P,4) (triangles repeat their last node), each a solid of its
    thickness (P,) between corners at -h/2 and +h/2 along d3; h 0 or NaN: the mid surface."""
    h = np.nan_to_num(np.asarray(thickness, dtype=float))
    faces, node, element, groups, start = [], [], [], [], 0
    for tri in (False, True):
        n = 3 if tri else 4
        for solid in (True, False):
            elems = np.flatnonzero(((plates[:, 3] == plates[:, 2]) == tri) & ((h > 0) == solid))
            if len(elems) == 0:
                continue
            m, k = len(elems), np.arange(n)
            rows = 2 * n if solid else n
            base = start + rows * np.arange(m)[:, None]
            if solid:  # bottom (reversed), top at n + k, and the sides
                sides = np.stack([k, (k + 1) % n, n + (k + 1) % n, n + k], axis=1)
                per = [k[None, ::-1], n + k[None], sides]
            else:
                per = [k[None]]
            for cells in per:
                cells = (base[:, :, None] + cells[None]).reshape(-1, cells.shape[1])
                faces.append(_flat(cells))
                element.append(np.repeat(elems, len(cells) // m))
            corners = plates[elems, :n]
            node.append((np.tile(corners, (1, 2)) if solid else corners).ravel())
            groups.append((elems, n, h[elems] if solid else None))
            start += rows * m
    return Surface(
        np.concatenate(faces), np.concatenate(node), np.concatenate(element), tuple(groups)
    )


def plates_at(surface: Surface, x, normals, plates) -> np.ndarray:
    """(V,3) the points of the plate surface with nodes at x (N,3), normals (N,3) the current
    d3 of every node."""
    out = []
    for elems, n, h in surface.place:
        corners = plates[elems, :n]
        if h is None:
            out.append(x[corners].reshape(-1, 3))
            continue
        offset = 0.5 * h[:, None, None] * normals[corners]
        out.append(np.concatenate([x[corners] - offset, x[corners] + offset], axis=1))
        out[-1] = out[-1].reshape(-1, 3)
    return np.concatenate(out) if out else np.zeros((0, 3))


# --- the colouring fields ----------------------------------------------------------------------


def _family(group: str, size: str) -> dict:
    """{name: component names} of the per-frame datasets of a group with one value or vector
    per node, rod or plate (docs/results.md): a dataset added to the layout is a field."""
    out = {}
    for d in FRAME_DATASETS:
        per_row = len(d.shape) == 1 or (len(d.shape) == 2 and isinstance(d.shape[1], int))
        one_value = d.path not in PER_POINT  # not per recovery point or plate surface
        if d.path.startswith(group) and d.shape[:1] == (size,) and per_row and one_value:
            width = d.shape[1] if len(d.shape) == 2 else 0
            known = COMPONENTS.get(d.path.removeprefix(group))
            xyz = ("x", "y", "z") if width == 3 else tuple(str(c + 1) for c in range(width))
            out[d.path.removeprefix(group)] = known if known else xyz
    return out


NODE_FIELDS = {"displacement": ("x", "y", "z"), **_family("nodes/", "N")}
ROD_FIELDS = _family("rods/", "E")  # force, moment, strain, curvature, the stress maxima
PLATE_FIELDS = _family("plates/", "P")  # membrane, bending, shear, the stress maxima
FIELDS = tuple(dict.fromkeys([*NODE_FIELDS, *ROD_FIELDS, *PLATE_FIELDS, "none"]))


class Field(NamedTuple):
    """A colouring field: name (the quantity), component ("" for the magnitude), where
    ("node", "rod", "plate" or "element": rods and plates), components (the names)."""

    name: str
    component: str
    where: str
    components: tuple


def parse_field(spec: str) -> Field:
    """QUANTITY[.C] of the docs' list (FIELDS); CaseError naming the valid ones."""
    name, dot, component = spec.partition(".")
    if dot and not component:
        raise CaseError(f"expected QUANTITY or QUANTITY.COMPONENT, got {spec!r}", key="--field")
    if name not in FIELDS:
        raise CaseError(
            f"unknown field {name!r}; expected one of {', '.join(FIELDS)}", key="--field"
        )
    names = NODE_FIELDS.get(name) or ROD_FIELDS.get(name) or PLATE_FIELDS.get(name) or ()
    if component and component not in names:
        raise CaseError(
            f"{name} has "
            + (f"components {', '.join(names)}" if names else "no components")
            + f"; got {spec!r}",
            key="--field",
        )
    if name in NODE_FIELDS or name == "none":
        where = "node"
    elif name in ROD_FIELDS and name in PLATE_FIELDS:
        where = "element"
    else:
        where = "rod" if name in ROD_FIELDS else "plate"
    return Field(name, component, where, names)


def reduce_field(values: np.ndarray, field: Field) -> np.ndarray:
    """One number per row of values (K, C): the component, else the norm (a rotation: its
    angle 2 acos |w|, rad)."""
    name, component = field.name, field.component
    if values.ndim == 1:
        return values
    if component:
        return values[:, field.components.index(component)]
    if name == "rotation":
        return 2.0 * np.arccos(np.clip(np.abs(values[:, 0]), 0.0, 1.0))
    return np.linalg.norm(values, axis=1)


def field_values(f, field: Field, k: int, position: np.ndarray):
    """(on nodes (N,) or None, on rod elements (E,) or None, on plates (P,) or None): the
    field at frame k of an open results file (position: the frame's, maybe scaled)."""
    name = field.name
    if name == "none":
        return None, None, None
    if field.where == "node":
        if name == "displacement":
            raw = position - f["mesh/points"][()]
        elif name == "position":
            raw = position
        else:
            raw = dataset(f, f"nodes/{name}")[k]
        return reduce_field(raw, field), None, None
    for group in ("rods", "plates"):  # the model has it but output.fields left it out
        if field.where in (group[:-1], "element") and not_written(f, f"{group}/{name}"):
            dataset(f, f"{group}/{name}")  # CaseError: not written
    rods = plates = None
    if field.where in ("rod", "element") and f"rods/{name}" in f:
        rods = reduce_field(f[f"rods/{name}"][k], field)
    if field.where in ("plate", "element") and f"plates/{name}" in f:
        plates = reduce_field(f[f"plates/{name}"][k], field)
    if rods is None and plates is None:
        raise CaseError(
            f"the results file has no {name} ("
            + {
                "rod": "it has no rod elements",
                "plate": "it has no plates",
                "element": "sections given by stiffnesses have no stresses: docs/stresses.md",
            }[field.where]
            + ")",
            key="--field",
        )
    return None, rods, plates
