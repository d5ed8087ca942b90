"""Initial shapes (docs/cases.md, "Initial shapes"; docs/theory.md, "Initial shapes"): a rod
started in a deformed configuration while its reference stays stress-free.

Positions come from a mesh file of the case's nodes, from a curve (arc, helix, polyline) or
formulas of the reference arc length s along a rod part, or from the part's reference
stretched. Rotations come from the file's d1 d2 d3, or are completed shear-free: each node's
reference frame is carried along the new centreline by discrete parallel transport
(`transported`), then twisted about the new tangent. The result, (x (N,3), rot (N,3,3)), is
the configuration the dynamics start from at rest (rodsim.case.initial_state.start_state).
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from rodsim.case import expression
from rodsim.case.settings import ShapeFile, ShapePart
from rodsim.errors import CaseError

# |cos| of the angle between two unit tangents beyond which they count as opposite (a hairpin
# within one element): 1 + cos below it leaves the minimal rotation without a defined axis
OPPOSITE = 1e-12
# a file's d1 d2 d3 are written in single precision by some writers (VTK float32: 6e-8
# relative); columns further than this from orthonormal are not a rotation
ORTHONORMAL = 1e-5

KEY = "initial"


def arc_lengths(mesh, part: str, key: str) -> np.ndarray:
    """(N,) the arc length of each node of a rod part from the part's start (its `.start`
    node set, else its first element's first node) along its reference elements; NaN for
    nodes off the part."""
    if part not in mesh.part_names:
        raise CaseError(
            f"no rod part {part!r}; expected one of {', '.join(mesh.part_names)}", key=key
        )
    elements = np.flatnonzero(mesh.part == mesh.part_names.index(part))
    if len(elements) == 0:
        raise CaseError(f"part {part!r} has no rod elements to measure along", key=key)
    conn = mesh.conn[elements]
    length = np.linalg.norm(mesh.points[conn[:, 1]] - mesh.points[conn[:, 0]], axis=1)
    start = mesh.sets.get(f"{part}.start")
    first = int(start[0]) if start is not None and len(start) else int(conn[0, 0])
    neighbours: dict[int, list[tuple[int, float]]] = {}
    for (a, b), h in zip(conn.tolist(), length.tolist(), strict=True):
        neighbours.setdefault(a, []).append((b, h))
        neighbours.setdefault(b, []).append((a, h))
    s = np.full(mesh.n_nodes, np.nan)
    s[first] = 0.0
    stack = [first]
    while stack:  # the part is a line or a tree: each node is reached once
        a = stack.pop()
        for b, h in neighbours.get(a, ()):
            if np.isnan(s[b]):
                s[b] = s[a] + h
                stack.append(b)
    return s


def configuration(case, mesh) -> tuple[np.ndarray, np.ndarray] | None:
    """(x (N,3), rot (N,3,3)) of the case's initial.shape entries, applied in order over the
    reference; None without any."""
    entries = case.settings.initial.shape
    if not entries:
        return None
    if getattr(mesh, "n_plates", 0):
        raise CaseError(
            "initial.shape starts rods; this case has plates (start a plate displaced "
            "with an imperfection of kind displacement, docs/modal.md)",
            key=f"{KEY}.shape",
        )
    x, rot = mesh.points.copy(), mesh.frames.copy()
    for i, entry in enumerate(entries):
        key = f"{KEY}.shape[{i}]"
        if isinstance(entry, ShapeFile):
            x, rot = _from_file(case, mesh, entry, key)
        else:
            _on_part(mesh, entry, key, x, rot)
    return np.ascontiguousarray(x), np.ascontiguousarray(rot)


# --- a mesh file of the case's nodes --------------------------------------------------------


def _from_file(case, mesh, entry: ShapeFile, key: str):
    """Positions of every node from the file; rotations from its d1 d2 d3, else completed
    along every rod part."""
    import meshio

    path = case.resolve(entry.file)
    if not path.is_file():
        raise CaseError(f"shape file {str(path)!r} does not exist", key=f"{key}.file")
    try:
        shape = meshio.read(path)
    except Exception as exc:  # meshio raises many types for unreadable files
        raise CaseError(
            f"cannot read shape file {str(path)!r}: {str(exc).strip() or type(exc).__name__} "
            "(expected a mesh file meshio reads: .vtu, .vtk, .msh, .xdmf, ...)",
            key=f"{key}.file",
        ) from None
    points = np.asarray(shape.points, dtype=float)
    if points.ndim != 2 or points.shape[1] not in (2, 3) or len(points) != mesh.n_nodes:
        raise CaseError(
            f"shape file {str(path)!r} has {len(points)} nodes, this case's mesh "
            f"{mesh.n_nodes}: expected the case's nodes in its order",
            key=f"{key}.file",
        )
    x = np.zeros((mesh.n_nodes, 3))
    x[:, : points.shape[1]] = points
    if not np.isfinite(x).all():
        raise CaseError(f"shape file {str(path)!r} has non-finite points", key=f"{key}.file")
    directors = [shape.point_data.get(d) for d in ("d1", "d2", "d3")]
    given = [d is not None for d in directors]
    if any(given) and not all(given):
        raise CaseError(
            f"shape file {str(path)!r} has point data "
            f"{', '.join(n for n, g in zip(('d1', 'd2', 'd3'), given, strict=True) if g)} "
            "only: expected d1, d2 and d3 together (the rotations) or none (completed "
            "shear-free)",
            key=f"{key}.file",
        )
    if all(given):
        return x, _rotations(np.stack(directors, axis=2), str(path), f"{key}.file")
    rot = mesh.frames.copy()
    for part in sorted({int(p) for p in mesh.part}):
        nodes, tree = _part_tree(mesh, mesh.part_names[part], f"{key}.file")
        rot[nodes] = transported(mesh.points, mesh.frames, x, tree)[nodes]
    return x, rot


def _rotations(d: np.ndarray, path: str, key: str) -> np.ndarray:
    """(N,3,3) rotations with columns d1 d2 d3, projected onto SO(3) (the nearest rotation)
    where they are orthonormal within ORTHONORMAL."""
    d = np.asarray(d, dtype=float)
    if d.shape[1:] != (3, 3) or not np.isfinite(d).all():
        raise CaseError(f"shape file {path!r}: expected d1, d2, d3 of 3 finite components", key=key)
    error = np.abs(np.einsum("nki,nkj->nij", d, d) - np.eye(3)).max(axis=(1, 2))
    det = np.linalg.det(d)
    bad = np.flatnonzero((error > ORTHONORMAL) | (det <= 0))
    if len(bad):
        raise CaseError(
            f"shape file {path!r}: d1, d2, d3 of node {int(bad[0])} are not a right-handed "
            f"orthonormal frame (|D^T D - I| = {error[bad[0]]:.2g})",
            key=key,
        )
    u, _, vt = np.linalg.svd(d)
    return u @ vt


# --- a rod part --------------------------------------------------------------------------------


def _on_part(mesh, entry: ShapePart, key: str, x: np.ndarray, rot: np.ndarray) -> None:
    """Move the nodes of one rod part into its shape (x, rot updated in place)."""
    nodes, tree = _part_tree(mesh, entry.part, f"{key}.part")
    s = tree.s[nodes]
    length = float(s.max())
    new = x.copy()
    reference = mesh.points[nodes]
    curve = _curve(entry, key)
    if curve is not None:
        if tree.branched:
            raise CaseError(
                f"part {entry.part!r} branches: a curve places an unbranched line (use "
                "position formulas of s instead)",
                key=f"{key}.part",
            )
        new[nodes] = curve(s / length)
    elif entry.position is not None:
        new[nodes] = _formulas(entry.position, s, length, f"{key}.position")
    elif entry.displacement is not None:
        new[nodes] = reference + _formulas(entry.displacement, s, length, f"{key}.displacement")
    else:
        start = mesh.points[tree.root]
        new[nodes] = start + (1.0 + entry.stretch) * (reference - start)
    turned = transported(mesh.points, mesh.frames, new, tree, key)
    if entry.twist != 0.0:
        turned = _twisted(turned, _tangents(new, tree, key), entry.twist * tree.s, nodes)
    x[nodes] = new[nodes]
    rot[nodes] = turned[nodes]


def _formulas(f, s: np.ndarray, length: float, key: str) -> np.ndarray:
    out = np.empty((len(s), 3))
    for j, k in enumerate(("x", "y", "z")):
        try:
            out[:, j] = expression.evaluate(expression.parse(getattr(f, k)), s, length)
        except ValueError as exc:
            raise CaseError(str(exc), key=f"{key}.{k}") from None
    return out


def _curve(entry: ShapePart, key: str) -> Callable[[np.ndarray], np.ndarray] | None:
    """The point at fraction f in [0, 1] of the entry's curve's length, or None."""
    if entry.arc is not None:
        return _arc(entry.arc, f"{key}.arc")
    if entry.helix is not None:
        return _helix(entry.helix, f"{key}.helix")
    if entry.points is not None:
        return _polyline(np.asarray(entry.points, dtype=float), f"{key}.points")
    return None


def _unit(v, key: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _radial(center, start, axis, key: str):
    """(unit axis, radial vector of start from the axis, its unit, the axis's normal to
    both)."""
    a = _unit(axis, key)
    r0 = np.asarray(start, dtype=float) - np.asarray(center, dtype=float)
    r0 = r0 - (r0 @ a) * a
    if np.linalg.norm(r0) <= 1e-12 * max(1.0, float(np.linalg.norm(start))):
        raise CaseError("the start point lies on the axis: expected a radius", key=f"{key}.start")
    e1 = r0 / np.linalg.norm(r0)
    return a, r0, e1, np.cross(a, e1)


def _arc(arc, key: str):
    _, _, e1, e2 = _radial(arc.center, arc.start, arc.normal, key)
    c = np.asarray(arc.center, dtype=float)  # the start is projected onto the plane through c

    def point(f):
        phi = np.deg2rad(arc.angle) * f
        return c + arc.radius * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2)

    return point


def _helix(helix, key: str):
    a, r0, e1, e2 = _radial(helix.center, helix.start, helix.axis, key)
    start, radius = np.asarray(helix.start, dtype=float), float(np.linalg.norm(r0))

    def point(f):
        phi = 2.0 * np.pi * helix.turns * f
        around = np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2
        return start - r0 + radius * around + (helix.pitch * helix.turns * f)[:, None] * a

    return point


def _polyline(p: np.ndarray, key: str):
    segment = np.linalg.norm(np.diff(p, axis=0), axis=1)
    if np.any(segment == 0.0):
        k = int(np.flatnonzero(segment == 0.0)[0])
        raise CaseError(f"points {k} and {k + 1} coincide: expected a polyline", key=key)
    along = np.concatenate([[0.0], np.cumsum(segment)])

    def point(f):
        t = f * along[-1]
        return np.column_stack([np.interp(t, along, p[:, j]) for j in range(3)])

    return point


# --- the part's nodes as a tree from its start, tangents and transported frames --------------


class Tree(NamedTuple):
    """A rod part's nodes as reached from its start: s (N,) reference arc length (NaN off the
    part), parent (N,) the node each was reached from (-1 for the root and off the part),
    order the part's nodes root first, each after its parent, elements (k,2) the part's
    elements oriented from parent to child, branched: some node has three or more."""

    s: np.ndarray
    parent: np.ndarray
    order: np.ndarray
    elements: np.ndarray
    branched: bool

    @property
    def root(self) -> int:
        return int(self.order[0])


def _part_tree(mesh, name: str, key: str) -> tuple[np.ndarray, Tree]:
    """(the part's nodes, its Tree); CaseError for a part that is not one open line or tree."""
    s = arc_lengths(mesh, name, key)
    conn = mesh.conn[mesh.part == mesh.part_names.index(name)]
    nodes = np.unique(conn)
    if np.isnan(s[nodes]).any():
        raise CaseError(f"part {name!r} is not connected: expected one rod", key=key)
    if len(conn) != len(nodes) - 1:
        raise CaseError(
            f"part {name!r} closes a loop: a shape is placed along an open rod", key=key
        )
    # oriented by s: in a tree each element joins a node to the one reached from it
    flip = s[conn[:, 0]] > s[conn[:, 1]]
    elements = np.where(flip[:, None], conn[:, ::-1], conn)
    parent = np.full(mesh.n_nodes, -1)
    parent[elements[:, 1]] = elements[:, 0]
    root = nodes[parent[nodes] < 0]
    order = np.concatenate([root, elements[np.argsort(s[elements[:, 1]], kind="stable"), 1]])
    degree = np.bincount(conn.ravel(), minlength=mesh.n_nodes)
    return nodes, Tree(s, parent, order, elements, bool(degree.max() > 2))


def _tangents(y: np.ndarray, tree: Tree, key: str = KEY) -> np.ndarray:
    """(N,3) unit tangents of positions y at the part's nodes: the normalised sum of the
    unit chords of the node's elements, each oriented along s; at an end (one element, unit
    chord c, its other node's tangent t) the mirror image of t in c, 2 (c.t) c - t, so that
    the chord bisects the element's two tangents as inside (exact on a circle, where a
    node's own chord would leave the end element sheared by a quarter of its angle). Zero
    off the part."""
    chord = y[tree.elements[:, 1]] - y[tree.elements[:, 0]]
    length = np.linalg.norm(chord, axis=1)
    if np.any(length == 0.0):
        a, b = tree.elements[int(np.flatnonzero(length == 0.0)[0])]
        raise CaseError(f"nodes {a} and {b} coincide in the shape: expected a rod", key=key)
    unit = chord / length[:, None]
    t = np.zeros_like(y)
    np.add.at(t, tree.elements[:, 0], unit)
    np.add.at(t, tree.elements[:, 1], unit)
    norm = np.linalg.norm(t[tree.order], axis=1)
    if np.any(norm < 1e-8):
        a = int(tree.order[int(np.argmin(norm))])
        raise CaseError(f"the shape folds back on itself at node {a} (a hairpin)", key=key)
    t[tree.order] /= norm[:, None]
    degree = np.bincount(tree.elements.ravel(), minlength=len(y))
    for end, other in ((0, 1), (1, 0)):
        # an element whose both nodes are ends (a part of one element) keeps its chord
        at = (degree[tree.elements[:, end]] == 1) & (degree[tree.elements[:, other]] > 1)
        c, near = unit[at], t[tree.elements[at, other]]
        t[tree.elements[at, end]] = 2.0 * np.einsum("ki,ki->k", c, near)[:, None] * c - near
    return t


def minimal_rotation(a: np.ndarray, b: np.ndarray, spare: np.ndarray) -> np.ndarray:
    """(k,3,3) the rotations taking unit vectors a to b (k,3) about a x b by the smallest
    angle (Rodrigues: I + hat(v) + hat(v)^2 / (1 + c), v = a x b, c = a.b); where b = -a,
    a half turn about spare (k,3), made normal to a."""
    v = np.cross(a, b)
    c = np.einsum("ki,ki->k", a, b)
    hat = np.zeros((len(a), 3, 3))
    hat[:, 0, 1], hat[:, 0, 2], hat[:, 1, 2] = -v[:, 2], v[:, 1], -v[:, 0]
    hat -= np.transpose(hat, (0, 2, 1))
    out = np.empty_like(hat)
    near = 1.0 + c > OPPOSITE
    out[near] = np.eye(3) + hat[near] + hat[near] @ hat[near] / (1.0 + c[near])[:, None, None]
    if (~near).any():
        n = spare[~near] - np.einsum("ki,ki->k", spare[~near], a[~near])[:, None] * a[~near]
        n /= np.linalg.norm(n, axis=1)[:, None]
        out[~near] = 2.0 * n[:, :, None] * n[:, None, :] - np.eye(3)
    return out


def transported(x0, frames, y, tree: Tree, key: str = KEY) -> np.ndarray:
    """(N,3,3) frames carried from the reference (x0, frames) to positions y along the tree:
    at the root R_r = Q(T0_r -> T_r); at a node b reached from a,
    R_b = Q(T_a -> T_b) R_a Q(T0_a -> T0_b)^T, and the frame R_b frames_b (Q the minimal
    rotation, T0, T the reference and new tangents). Off the part: the reference frames."""
    t0, t = _tangents(x0, tree, key), _tangents(y, tree, key)
    spare = frames[:, :, 2]  # d3: normal to a rod's reference tangent
    a, b = tree.parent[tree.order[1:]], tree.order[1:]
    step = minimal_rotation(t[a], t[b], frames[b, :, 2])  # one hairpin is refused above
    step0 = minimal_rotation(t0[a], t0[b], frames[b, :, 2])
    r = tree.root
    turn = np.repeat(np.eye(3)[None], len(x0), axis=0)
    turn[r] = minimal_rotation(t0[[r]], t[[r]], spare[[r]])[0]
    for k, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):  # once, at setup
        turn[j] = step[k] @ turn[i] @ step0[k].T
    out = frames.copy()
    out[tree.order] = turn[tree.order] @ frames[tree.order]
    return out


def _twisted(rot, tangent, angle, nodes) -> np.ndarray:
    """rot turned by angle (N,) about tangent (N,3) at nodes: exp(angle hat(t)) rot."""
    t, phi = tangent[nodes], angle[nodes]
    c, s = np.cos(phi)[:, None, None], np.sin(phi)[:, None, None]
    hat = np.zeros((len(nodes), 3, 3))
    hat[:, 0, 1], hat[:, 0, 2], hat[:, 1, 2] = -t[:, 2], t[:, 1], -t[:, 0]
    hat -= np.transpose(hat, (0, 2, 1))
    out = rot.copy()
    out[nodes] = (np.eye(3) + s * hat + (1.0 - c) * hat @ hat) @ rot[nodes]
    return out
