"""Reading results files back: validation of the file, frames as rodsim.writers.frame.Frame."""

from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

from rodsim.errors import CaseError
from rodsim.writers.frame import Frame
from rodsim.writers.hdf5 import LAYOUT


@contextmanager
def open_results(path):
    """Open a results file read-only; CaseError if it is missing or not a rodsim file."""
    path = Path(path)
    if not path.exists():
        raise CaseError("no such results file", file=str(path))
    try:
        f = h5py.File(path, "r", locking=False)  # readable while a run writes it
    except OSError as exc:
        raise CaseError(f"not a readable HDF5 file ({exc})", file=str(path)) from None
    try:
        if f.attrs.get("layout") != LAYOUT or "time" not in f:
            raise CaseError(f"not a rodsim results file of layout {LAYOUT}", file=str(path))
        yield f
    finally:
        f.close()


def frame_count(f: h5py.File) -> int:
    """Frames every per-frame dataset holds completely. A run killed while flushing a frame
    can leave that frame in some datasets only (HDF5 writes their metadata one by one), so
    rodsim's readers use the shortest length."""
    lengths = []
    f.visititems(lambda name, obj: lengths.append(obj.shape[0])
                 if isinstance(obj, h5py.Dataset) and not name.startswith("mesh/") else None)
    return min(lengths) if lengths else 0


def quaternion_matrices(q: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions (w, x, y, z) -> (..., 3, 3) rotation matrices."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def read_frame(f: h5py.File, k: int, frames0=None) -> Frame:
    """Frame k of an open results file (directors rebuilt from rotation and mesh/frames;
    pass frames0 = mesh/frames when reading many frames)."""
    rot = f["nodes/rotation"][k]
    frames0 = f["mesh/frames"][()] if frames0 is None else frames0
    directors = quaternion_matrices(rot) @ frames0
    has_rods = "rods/force" in f
    e = f["mesh/rods"].shape[0] if has_rods else 0

    def rods(name):
        return f[name][k] if has_rods else np.zeros((e, 3))

    def plates(name):  # None, like a frame of a rod-only model
        return f[name][k] if name in f else None

    return Frame(
        time=float(f["time"][k]), position=f["nodes/position"][k], rotation=rot,
        directors=directors, velocity=f["nodes/velocity"][k],
        angular_velocity=f["nodes/angular_velocity"][k],
        linear_momentum=f["nodes/linear_momentum"][k],
        angular_momentum=f["nodes/angular_momentum"][k], force=rods("rods/force"),
        moment=rods("rods/moment"), strain=rods("rods/strain"),
        curvature=rods("rods/curvature"), kinetic=float(f["energy/kinetic"][k]),
        internal=float(f["energy/internal"][k]), external=float(f["energy/external"][k]),
        total_linear=f["momentum/linear"][k], total_angular=f["momentum/angular"][k],
        dt=float(f["solver/dt"][k]), iterations=float(f["solver/iterations"][k]),
        residual=float(f["solver/residual"][k]),
        reaction_force=f["nodes/reaction_force"][k] if "nodes/reaction_force" in f else None,
        reaction_moment=f["nodes/reaction_moment"][k] if "nodes/reaction_moment" in f else None,
        plate_membrane=plates("plates/membrane"), plate_bending=plates("plates/bending"),
        plate_shear=plates("plates/shear"),
    )  # fmt: skip
