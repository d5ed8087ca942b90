"""Imperfections: a case seeded with a mode of an earlier modal or buckling run of the same
mesh (docs/modal.md, "Imperfections").

The mode phi (N, 6), (u, theta) per node, is read from the results file's modes/shape or
buckling/shape and scaled to s phi so that its largest nodal displacement |s u_a| is the
amplitude's magnitude (the sign of the amplitude flips the mode). It is then applied as

- geometry: the reference itself is moved, x_a + s u_a and exp(hat(s theta_a)) Lambda_a (the
  nodal, element-end and plate-corner frames alike), so the imperfect structure is
  stress-free, as an imperfection in a mesh file would be; or
- displacement: the perfect structure starts displaced by it (dynamic analyses), stressed.
"""

import dataclasses

import h5py
import numpy as np
from scipy.spatial.transform import Rotation

from rodsim.case.settings import Imperfection
from rodsim.errors import CaseError

KEY = "imperfection"
# the mode's file must be of this mesh: its reference points within this fraction of the
# model's size of the case's (an imperfect reference is moved by much less than its size)
SAME_MESH = 1e-6
# a mode whose largest displacement is below this times its largest rotation times the model's
# size moves no node (a pure rotation: torsion)
MOVES_NOTHING = 1e-8


def _fail(message: str, key: str = KEY) -> CaseError:
    return CaseError(message, key=key)


def mode_shape(path, spec: Imperfection, points: np.ndarray) -> np.ndarray:
    """(N, 6) the seeded shape s phi of spec (from the results file at path) for a mesh with
    these reference points."""
    try:
        with h5py.File(path, "r") as f:
            groups = [g for g in ("buckling", "modes") if g in f]
            if not groups:
                raise _fail(
                    f"{path} holds no modes: expected the results of analysis: modal or buckling",
                    f"{KEY}.from",
                )
            shapes = f[f"{groups[0]}/shape"][()]
            reference = f["mesh/points"][()]
    except OSError as exc:
        raise _fail(f"cannot read the results file {path} ({exc})", f"{KEY}.from") from None
    if not 1 <= spec.mode <= len(shapes):
        raise _fail(
            f"expected a mode from 1 to {len(shapes)} ({path} holds {len(shapes)}), "
            f"got {spec.mode}",
            f"{KEY}.mode",
        )
    size = float(np.linalg.norm(np.ptp(points, axis=0))) or 1.0
    check_same_mesh(path, reference, points, f"{KEY}.from")
    phi = shapes[spec.mode - 1]
    largest = float(np.linalg.norm(phi[:, :3], axis=1).max())
    # a torsion mode's displacements are round-off of its rotations times the model's size
    if largest <= MOVES_NOTHING * size * float(np.abs(phi[:, 3:]).max()):
        raise _fail(
            f"mode {spec.mode} moves no node (a pure rotation): its amplitude, a largest "
            "displacement, cannot scale it",
            f"{KEY}.mode",
        )
    return phi * (spec.amplitude / largest)


def check_same_mesh(path, reference: np.ndarray, points: np.ndarray, key: str) -> None:
    """CaseError naming key unless the results file's reference points (its mesh/points) are
    this case's mesh: as many, each within SAME_MESH of the model's size."""
    size = float(np.linalg.norm(np.ptp(points, axis=0))) or 1.0
    if reference.shape != points.shape or np.abs(reference - points).max() > SAME_MESH * size:
        raise CaseError(
            f"{path} is of another mesh ({len(reference)} nodes against this case's "
            f"{len(points)}, or nodes elsewhere): expected a results file of this case's mesh",
            key=key,
        )


def _turned(frames: np.ndarray, turn: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """frames (..., 3, 3) at nodes (...) turned by their node's rotation turn (N, 3, 3)."""
    return np.ascontiguousarray(np.einsum("...ij,...jk->...ik", turn[nodes], frames))


def imperfect_mesh(mesh, shape: np.ndarray):
    """The mesh with its reference moved by shape (N, 6): positions, nodal frames, the rod
    elements' end frames and the plates' corner frames (a stress-free imperfection)."""
    turn = Rotation.from_rotvec(shape[:, 3:]).as_matrix()
    return dataclasses.replace(
        mesh,
        points=np.ascontiguousarray(mesh.points + shape[:, :3]),
        frames=np.ascontiguousarray(turn @ mesh.frames),
        end_frames=_turned(mesh.end_frames, turn, mesh.conn),
        plate_frames=_turned(mesh.plate_frames, turn, mesh.plates),
    )


def displaced(x0: np.ndarray, rot0: np.ndarray, shape: np.ndarray):
    """(x, rot) the reference displaced by shape (N, 6)."""
    turn = Rotation.from_rotvec(shape[:, 3:]).as_matrix()
    return x0 + shape[:, :3], turn @ rot0


def seeded(case, mesh):
    """(mesh, displacement) of a case and its perfect mesh: the imperfect mesh and None for
    kind geometry, the mesh and the initial displacement (N, 6) for kind displacement, the
    mesh and None without an imperfection."""
    spec = case.settings.imperfection
    if spec is None:
        return mesh, None
    if spec.kind == "displacement" and case.settings.solver.analysis != "dynamic":
        raise _fail(
            "an initial displacement seeds a dynamic analysis; an equilibrium, modal or "
            "buckling analysis starts from a reference: use kind: geometry (a stress-free "
            "imperfect reference)",
            f"{KEY}.kind",
        )
    shape = mode_shape(case.resolve(spec.from_), spec, mesh.points)
    if spec.kind == "geometry":
        return imperfect_mesh(mesh, shape), None
    return mesh, shape
