"""Initial states beyond a rigid motion of the reference (docs/cases.md "Initial
conditions"): velocity fields per node set and along a part (`initial.fields`), a deformed
shape at rest (`initial.shape`, rodsim.case.initial_shape), and a dynamic
run started from a frame of an earlier results file of the same mesh
(`initial: {from: FILE, frame: K}`): its node positions,
rotations (its current nodal frames, the rotation from its reference times its reference
frames) and spatial momenta, as the integrators hold them; where the file's restart state
(rodsim.results.restart) is that frame's, its raw arrays, bit for bit what that run held. The
earlier run's loads are not carried over: this case's loads act from its own t = 0."""

import logging

import numpy as np

from rodsim.case.imperfection import check_same_mesh
from rodsim.case.initial_shape import KEY, arc_lengths, configuration
from rodsim.errors import CaseError
from rodsim.model import timefunc
from rodsim.results import restart
from rodsim.results.reader import frame_count, open_results, read_frame, run_status

log = logging.getLogger(__name__)


def start_state(case, mesh):
    """(x, rot, p, pi) (N,3), (N,3,3), (N,3), (N,3) of the case's `initial.from` or
    `initial.shape` (at rest), or None."""
    init = case.settings.initial
    if init.shape:
        return _shape_state(case, mesh)
    if init.from_ is None:
        return None
    _dynamic_start(case, "from", "from a frame")
    path = case.resolve(init.from_)
    try:
        with open_results(path) as f:
            count = frame_count(f)
            if run_status(f).state == "running":
                log.warning(
                    "initial.from: %s says its run is still running (being written, or "
                    "killed): starting from its complete frames",
                    path,
                )
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
    _dynamic_start(case, "shape", "from a deformed shape")
    x, rot = configuration(case, mesh)
    return x, rot, np.zeros_like(x), np.zeros_like(x)


def _dynamic_start(case, key: str, how: str) -> None:
    """CaseError unless initial.<key> may start this case: a dynamic analysis (the equilibrium,
    modal and buckling solvers start from the reference) without an initial displacement."""
    if case.settings.solver.analysis != "dynamic":
        raise CaseError(
            f"initial.{key} starts a dynamic analysis {how}; an equilibrium, modal or "
            "buckling analysis starts from the reference (its solver takes no other start; "
            "an imperfection seeds a shape: docs/modal.md)",
            key=f"{KEY}.{key}",
        )
    imperfection = case.settings.imperfection
    if imperfection is not None and imperfection.kind == "displacement":
        raise CaseError(
            f"an initial displacement (imperfection kind: displacement) and initial.{key} "
            "both give the start: keep one",
            key=f"{KEY}.{key}",
        )


def _restart_state(f, k: int):
    """The restart state of frame k of an open results file (rodsim.results.restart), or None (it
    holds another frame's, or none)."""
    try:
        state = restart.read(f, f.filename, KEY)
    except CaseError as exc:
        if "corrupt" in exc.reason:  # a state the file has but cannot be used
            raise CaseError(exc.reason, key=f"{KEY}.from") from None
        return None
    if state.frame != k:
        return None
    # the same check as --restart's (rodsim.results.restart.check), against the file's own mesh
    # (the mesh is checked against the case's next)
    restart.check(state, f.filename, f"{KEY}.from", len(f["mesh/points"]), f["time"][()])
    return state


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
