"""A dynamic run started from a frame of an earlier results file of the same mesh
(`initial: {from: FILE, frame: K}`, docs/cases.md "Initial conditions"): its node positions,
rotations (its current nodal frames, the rotation from its reference times its reference
frames) and spatial momenta, as the integrators hold them. The earlier run's loads are not
carried over: this case's loads act from its own t = 0."""

import numpy as np

from rodsim.case.imperfection import SAME_MESH
from rodsim.errors import CaseError
from rodsim.results_reader import frame_count, open_results, read_frame

KEY = "initial"


def start_state(case, mesh):
    """(x, rot, p, pi) (N,3), (N,3,3), (N,3), (N,3) of the case's `initial.from`, or None."""
    init = case.settings.initial
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
    except CaseError as exc:
        if exc.key is not None:
            raise
        raise CaseError(f"{path}: {exc.reason}", key=f"{KEY}.from") from None
    points = mesh.points
    size = float(np.linalg.norm(np.ptp(points, axis=0))) or 1.0
    if reference.shape != points.shape or np.abs(reference - points).max() > SAME_MESH * size:
        raise CaseError(
            f"{path} is of another mesh ({len(reference)} nodes against this case's "
            f"{len(points)}, or nodes elsewhere): expected a results file of this case's mesh",
            key=f"{KEY}.from",
        )
    return (
        np.array(frame.position, dtype=float),
        np.array(frame.directors, dtype=float),
        np.array(frame.linear_momentum, dtype=float),
        np.array(frame.angular_momentum, dtype=float),
    )
