"""ParaView series (INTERFACE.md §4): ``<stem>.pvd`` and one ``.vtu`` per frame in
``<stem>_vtk/``.

Rods are line cells. Point data: displacement, velocity, angular_velocity, d1, d2, d3.
Cell data: force, moment (section frame), strain, curvature. The .pvd index is rewritten
atomically at most once a second and at the end, so an interrupted run leaves a series
ParaView can open.
"""

import os
import shutil
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import quoteattr

import meshio
import numpy as np

from rodsim.writers.frame import Frame, share


def _or_zeros(a, like):
    return np.zeros_like(like) if a is None else a


class SeriesWriter:
    """Stream frames into a ParaView series next to ``pvd`` (a path ending in .pvd)."""

    def __init__(self, pvd, points: np.ndarray, conn: np.ndarray):
        self.pvd = Path(pvd)
        self.folder = self.pvd.with_name(self.pvd.stem + "_vtk")
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        self.points = np.asarray(points, dtype=float)
        self.cells = [("line", np.asarray(conn, dtype=np.int64))]
        self.entries: list[tuple[float, str]] = []
        self.indexed = 0.0

    def write(self, frame: Frame) -> None:
        k = len(self.entries)
        name = f"{self.pvd.stem}_{k:06d}.vtu"
        d = frame.directors
        point_data = {
            "displacement": frame.position - self.points,
            "velocity": frame.velocity,
            "angular_velocity": frame.angular_velocity,
            "reaction_force": _or_zeros(frame.reaction_force, frame.position),
            "reaction_moment": _or_zeros(frame.reaction_moment, frame.position),
            "d1": np.ascontiguousarray(d[:, :, 0]),
            "d2": np.ascontiguousarray(d[:, :, 1]),
            "d3": np.ascontiguousarray(d[:, :, 2]),
        }
        cell_data = {
            "force": [frame.force],
            "moment": [frame.moment],
            "strain": [frame.strain],
            "curvature": [frame.curvature],
        }
        mesh = meshio.Mesh(frame.position, self.cells, point_data=point_data,
                           cell_data=cell_data)
        mesh.write(self.folder / name, file_format="vtu", binary=True, compression="zlib")
        self.entries.append((frame.time, name))
        # rewriting the whole index per frame is quadratic in the frame count: at most once a
        # second (and at close), so an interrupted run's index lags by at most a second
        now = time.monotonic()
        if now - self.indexed >= 1.0:
            self._write_index()
            self.indexed = now

    def _write_index(self) -> None:
        lines = ['<?xml version="1.0"?>',
                 '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
                 "  <Collection>"]
        for t, name in self.entries:
            ref = quoteattr(f"{self.folder.name}/{name}")
            lines.append(f'    <DataSet timestep="{float(t)!r}" group="" part="0" file={ref}/>')
        lines += ["  </Collection>", "</VTKFile>", ""]
        fd, tmp = tempfile.mkstemp(prefix=f".{self.pvd.name}.", dir=self.pvd.parent)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines))
        share(tmp)
        os.replace(tmp, self.pvd)

    def close(self) -> None:
        self._write_index()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_pvd(pvd) -> list[tuple[float, Path]]:
    """(time, vtu path) entries of a .pvd file."""
    import xml.etree.ElementTree as ET

    pvd = Path(pvd)
    root = ET.parse(pvd).getroot()
    return [(float(d.get("timestep")), pvd.parent / d.get("file"))
            for d in root.iter("DataSet")]
