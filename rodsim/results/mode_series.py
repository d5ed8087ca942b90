"""ParaView series that animate the modes of a modal or buckling analysis (docs/modal.md): one
``<stem>_mode<k>.pvd`` (``<stem>_buckling<k>.pvd``) per mode k (1-based), next to the run's
own series, with FRAMES frames
over one period: the state the modes are about, displaced by a sin(2 pi j / FRAMES) times the
mode (positions x + s u, rotations exp(s theta) Lambda), with a the amplitude that makes the
largest nodal displacement of the mode 10% of the model's size (the diagonal of its
bounding box)."""

import dataclasses
import math
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from rodsim.results.frame import Frame
from rodsim.results.modes import Buckling
from rodsim.results.vtk import SeriesWriter

FRAMES = 24
AMPLITUDE = 0.1  # of the model's size


def write_mode_series(pvd: Path, mesh, state: Frame, modes) -> list[Path]:
    """The series of every mode (a rigid one moves rigidly); pvd: the run's own series;
    modes: rodsim.integrators.modal.Modes or Buckling."""
    kind = "buckling" if isinstance(modes, Buckling) else "mode"
    size = float(np.linalg.norm(np.ptp(mesh.points, axis=0))) or 1.0
    written = []
    for k, shape in enumerate(modes.shape):
        u, theta = shape[:, :3], shape[:, 3:]
        largest = float(np.linalg.norm(u, axis=1).max()) or float(np.abs(theta).max()) or 1.0
        a = AMPLITUDE * size / largest
        path = pvd.with_name(f"{pvd.stem}_{kind}{k + 1}.pvd")
        with SeriesWriter(
            path, mesh.points, mesh.conn, plates=mesh.plates, expected_frames=FRAMES
        ) as series:
            for j in range(FRAMES):
                s = a * math.sin(2.0 * math.pi * j / FRAMES)
                turn = Rotation.from_rotvec(s * theta).as_matrix()
                series.write(
                    dataclasses.replace(
                        state,
                        time=j / FRAMES,
                        position=state.position + s * u,
                        directors=turn @ state.directors,
                    )
                )
        written.append(path)
    return written
