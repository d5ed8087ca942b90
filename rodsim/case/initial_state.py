"""Initial states beyond a rigid motion of the reference (docs/cases.md "Initial
conditions"): velocity fields per node set and along a part (`initial.fields`), a deformed
shape at rest (`initial.shape`, rodsim.case.initial_shape), and a dynamic
run started from a frame of an earlier results file of the same mesh
(`initial: {from: FILE, frame: K}`): its node positions,
rotations (its current nodal frames, the rotation from its reference times its reference
frames) and spatial momenta, as the integrators hold them; where the file's restart state
(rodsim.restart) is that frame's, its raw arrays, bit for bit what that run held. The
earlier run's loads are not carried over: this case's loads act from its own t = 0."""

import numpy as np

from rodsim import restart
from rodsim.case.imperfection import check_same_mesh
from rodsim.errors import CaseError
from rodsim.model import timefunc
from rodsim.results_reader import frame_count, open_results, read_frame

KEY = "initial"


def start_state(case, mesh):
    """(x, rot, p, pi) (N,3), (N,3,3), (N,3), (N,3) of the case's `initial.from` or
    `initial.shape` (at rest), or None."""
    init = case.settings.initial
    if init.shape:
        return _shape_state(case, mesh)
    if init.from_ is None:
        return None
    if case.settings.solver.analysis != "dynamic":
        raise CaseError(
            "initial.from starts a dynamic analysis from a frame; an equilibrium, modal or "
            "buckling analysis starts from the reference (an imperfection seeds its shape: "
            "docs/modal.md)",
            key=f"{KEY}.from",
        )
    imperfection = case.settings.imperfection
    if imperfection is not None and imperfection.kind == "displacement":
        raise CaseError(
            "an initial displacement (imperfection kind: displacement) and initial.from both "
            "give the start: keep one",
            key=f"{KEY}.from",
        )
    path = case.resolve(init.from_)
    try:
        with open_results(path) as f:
            count = frame_count(f)
            k = init.frame if init.frame >= 0 else count + init.frame
            if not 0 <= k < count:
                raise CaseError(
                    f"expected a frame from {-count} to {count - 1} ({path} holds {count} "
                    f"complete frames), got {init.frame}",
                    key=f"{KEY}.frame",
                )
            reference = f["mesh/points"][()]
            frame = read_frame(f, k)
            raw = _restart_state(f, k)
    except CaseError as exc:
        if exc.key is not None:
            raise
        raise CaseError(f"{path}: {exc.reason}", key=f"{KEY}.from") from None
    check_same_mesh(path, reference, mesh.points, f"{KEY}.from")
    if raw is not None:  # the solver's own arrays: exactly the state that run left
        return restart.motion(raw)
    return (
        np.array(frame.position, dtype=float),
        np.array(frame.directors, dtype=float),
        np.array(frame.linear_momentum, dtype=float),
        np.array(frame.angular_momentum, dtype=float),
    )


def _shape_state(case, mesh):
    """The configuration of initial.shape at rest (rodsim.case.initial_shape)."""
    # imported here: initial_shape measures its parts with arc_lengths of this module
    from rodsim.case.initial_shape import configuration

    if case.settings.solver.analysis != "dynamic":
        raise CaseError(
            "initial.shape starts a dynamic analysis from a deformed shape; an equilibrium, "
            "modal or buckling analysis starts from the reference (its solver takes no other "
            "start; an imperfection seeds a shape: docs/modal.md)",
            key=f"{KEY}.shape",
        )
    imperfection = case.settings.imperfection
    if imperfection is not None and imperfection.kind == "displacement":
        raise CaseError(
            "an initial displacement (imperfection kind: displacement) and initial.shape both "
            "give the start: keep one",
            key=f"{KEY}.shape",
        )
    x, rot = configuration(case, mesh)
    return x, rot, np.zeros_like(x), np.zeros_like(x)


def _restart_state(f, k: int):
    """The restart state of frame k of an open results file (rodsim.restart), or None (it
    holds another frame's, or none)."""
    try:
        state = restart.read(f, "", KEY)
    except CaseError:
        return None
    return state if state.frame == k else None


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


def velocity_fields(case, mesh, nodes_of):
    """((N,3) velocities, (N,3) angular velocities) of the case's initial.fields over the
    uniform velocity and rigid spin, or None without fields; nodes_of(mesh, name, path) the
    nodes of a set."""
    init = case.settings.initial
    if not init.fields:
        return None
    x = mesh.points
    omega = np.broadcast_to(np.asarray(init.angular_velocity, dtype=float), x.shape).copy()
    velocity = np.asarray(init.velocity) + np.cross(omega, x - np.asarray(init.center))
    for i, field in enumerate(init.fields):
        path = (KEY, "fields", i)
        nodes = nodes_of(mesh, field.set, (*path, "set"))
        scale = np.ones(len(nodes))
        if field.along is not None:
            key = f"{KEY}.fields[{i}].along"
            s = arc_lengths(mesh, field.along, key)[nodes]
            if np.isnan(s).any():
                raise CaseError(
                    f"node {int(nodes[np.isnan(s)][0])} of set {field.set!r} is not on part "
                    f"{field.along!r}: the profile has no s there",
                    key=key,
                )
            scale = np.array([timefunc.value(field.profile, float(v)) for v in s])
        if field.velocity is not None:
            velocity[nodes] = scale[:, None] * np.asarray(field.velocity)
        if field.angular_velocity is not None:
            omega[nodes] = scale[:, None] * np.asarray(field.angular_velocity)
    return velocity, omega
