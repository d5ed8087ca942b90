"""Results file, HDF5 layout v1 (INTERFACE.md §3), written frame by frame.

Crash safety: the file is flushed after every frame, and the metadata cache keeps dirty
metadata in memory between flushes (evictions off), so the file on disk changes only at a
flush: a run killed at any point leaves every flushed frame readable. A kill during the
flush itself can leave the newest frame in some datasets only (their metadata is written one
by one); rodsim's readers use the shortest length (rodsim.post.results.frame_count).
(SWMR mode would guard the flush itself too, but leaves a killed file flagged "open for
write" that plain readers refuse until h5clear is run; the earliest format has no such flag.)

The new file is written under a temporary name next to the target and replaces an existing
results file only once the first frame is written, so a run that fails to start never
clobbers old results.
"""

import logging
import os
import tempfile
from pathlib import Path

import h5py
import numpy as np

from rodsim import __version__
from rodsim.mesh.assemble import Mesh
from rodsim.writers.frame import Frame, share

log = logging.getLogger(__name__)

LAYOUT = 1

# dataset path -> (shape after the frame axis; "N" nodes, "E" elements), Frame attribute
NODE_FIELDS = {
    "nodes/position": ((3,), "position"),
    "nodes/rotation": ((4,), "rotation"),
    "nodes/velocity": ((3,), "velocity"),
    "nodes/angular_velocity": ((3,), "angular_velocity"),
    "nodes/linear_momentum": ((3,), "linear_momentum"),
    "nodes/angular_momentum": ((3,), "angular_momentum"),
    "nodes/reaction_force": ((3,), "reaction_force"),
    "nodes/reaction_moment": ((3,), "reaction_moment"),
}
ROD_FIELDS = {
    "rods/force": ((3,), "force"),
    "rods/moment": ((3,), "moment"),
    "rods/strain": ((3,), "strain"),
    "rods/curvature": ((3,), "curvature"),
}
PLATE_FIELDS = {
    "plates/membrane": ((3,), "plate_membrane"),
    "plates/bending": ((3,), "plate_bending"),
    "plates/shear": ((2,), "plate_shear"),
}
SCALARS = {
    "time": "time",
    "energy/kinetic": "kinetic",
    "energy/internal": "internal",
    "energy/external": "external",
    "energy/total": "total",
    "solver/dt": "dt",
    "solver/iterations": "iterations",
    "solver/residual": "residual",
}
TOTALS = {"momentum/linear": "total_linear", "momentum/angular": "total_angular"}

DESCRIPTIONS = {
    "time": "simulated time (equilibrium: load multiplier)",
    "nodes/position": "current node positions",
    "nodes/rotation": "unit quaternions (w, x, y, z) of the reference-to-current section frame",
    "nodes/velocity": "spatial velocity",
    "nodes/angular_velocity": "spatial angular velocity",
    "nodes/linear_momentum": "spatial nodal linear momentum (discrete Legendre transform)",
    "nodes/angular_momentum": "spatial nodal angular momentum about the node",
    "nodes/reaction_force": "force of the supports on the node (supported components; 0 "
                            "elsewhere): minus the internal and external nodal forces",
    "nodes/reaction_moment": "moment of the supports on the node about the node (supported "
                             "components; 0 elsewhere)",
    "rods/force": "stress resultant in the section frame: axial, shear2, shear3",
    "rods/moment": "stress couple in the section frame: torsion, bending2, bending3",
    "rods/strain": "Gamma - Gamma0 in the section frame",
    "rods/curvature": "Omega - Omega0 in the section frame",
    "plates/membrane": "membrane forces per length N11, N22, N12 at the element centre, in "
                       "the element basis",
    "plates/bending": "bending moments per length M11, M22, M12 at the element centre, in the "
                      "element basis",
    "plates/shear": "transverse shear forces per length Q1, Q2 at the element centre, in the "
                    "element basis",
    "energy/kinetic": "kinetic energy",
    "energy/internal": "strain energy",
    "energy/external": "potential of conservative loads (gravity), 0 otherwise",
    "energy/total": "kinetic + internal + external",
    "momentum/linear": "total linear momentum",
    "momentum/angular": "total angular momentum about the origin",
    "solver/dt": "time step; equilibrium: the last pseudo-time step of the load step (inf "
                 "when Newton alone converged)",
    "solver/iterations": "explicit: largest nodal rotation-solve iteration count since the "
                         "previous frame; implicit: largest Newton iteration count of the "
                         "steps since the previous frame; equilibrium: Newton iterations of "
                         "the load step",
    "solver/residual": "explicit: NaN (no global residual; local solves converge to "
                       "solver.rotation_tol); implicit: largest final Newton residual of the "
                       "steps since the previous frame, relative to the step's momenta and "
                       "impulse; equilibrium: final residual relative to loads plus "
                       "reactions",
}


def _write_plate_mesh(g: h5py.Group, mesh: Mesh) -> None:
    """mesh/plates, mesh/plate_section and mesh/plate_part (names as attributes, the same
    section list as the rods')."""
    g.create_dataset("plates", data=mesh.plates)
    g["plates"].attrs["description"] = ("plate connectivity going round the element; "
                                        "triangles repeat their last node")
    g.create_dataset("plate_section", data=mesh.plate_section)
    g["plate_section"].attrs["names"] = list(mesh.section_names)
    g.create_dataset("plate_part", data=mesh.plate_part)
    g["plate_part"].attrs["names"] = list(mesh.part_names)


class ResultsWriter:
    """Stream frames into a results file; use as a context manager.

    ``with ResultsWriter(path, mesh, case_text, title) as w: w.write(frame)``.
    """

    def __init__(self, path, mesh: Mesh, case_text: str, title: str = "", overrides=(),
                 extra_attrs=None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".partial",
                                   dir=self.path.parent)
        os.close(fd)
        share(tmp)
        self.tmp = Path(tmp)
        self.frames = 0
        self.replaced = False
        n, e, npl = mesh.n_nodes, mesh.n_elements, mesh.n_plates
        f = h5py.File(self.tmp, "w")
        config = f.id.get_mdc_config()
        config.evictions_enabled = False  # needs a fixed cache size
        config.incr_mode = 0  # H5C_incr__off
        config.decr_mode = 0  # H5C_decr__off
        config.flash_incr_mode = 0  # H5C_flash_incr__off
        f.id.set_mdc_config(config)
        self.file = f
        f.attrs["rodsim_version"] = __version__
        f.attrs["layout"] = LAYOUT
        f.attrs["case"] = case_text
        f.attrs["title"] = title
        f.attrs["overrides"] = "\n".join(overrides)
        for k, v in (extra_attrs or {}).items():
            f.attrs[k] = v
        g = f.create_group("mesh")
        g.create_dataset("points", data=mesh.points)
        g.create_dataset("frames", data=mesh.frames)
        g["frames"].attrs["description"] = "reference nodal frames, columns d1 d2 d3"
        if e:
            g.create_dataset("rods", data=mesh.conn)
            g.create_dataset("rod_section", data=mesh.section)
            g["rod_section"].attrs["names"] = list(mesh.section_names)
            g.create_dataset("rod_part", data=mesh.part)
            g["rod_part"].attrs["names"] = list(mesh.part_names)
        if npl:
            _write_plate_mesh(g, mesh)
        sets = g.create_group("sets")
        for name, nodes in mesh.sets.items():
            sets.create_dataset(name, data=np.asarray(nodes, dtype=np.int64))
        self.datasets = {}
        for name, (shape, _) in NODE_FIELDS.items():
            self._create(name, (n, *shape))
        for name, (shape, _) in ROD_FIELDS.items():
            if e:
                self._create(name, (e, *shape))
        for name, (shape, _) in PLATE_FIELDS.items():
            if npl:
                self._create(name, (npl, *shape))
        for name in SCALARS:
            self._create(name, ())
        for name in TOTALS:
            self._create(name, (3,))
        f.flush()

    def _create(self, name: str, shape: tuple) -> None:
        size = int(np.prod(shape)) * 8 if shape else 8
        chunk_frames = max(1, min(1024, (1 << 20) // size))
        ds = self.file.create_dataset(name, shape=(0, *shape), maxshape=(None, *shape),
                                      dtype="f8", chunks=(chunk_frames, *shape))
        ds.attrs["description"] = DESCRIPTIONS[name]
        self.datasets[name] = ds

    def write(self, frame: Frame) -> None:
        """Append one frame and flush it to disk."""
        k = self.frames
        values = {name: getattr(frame, attr) for name, (_, attr) in NODE_FIELDS.items()}
        values |= {name: getattr(frame, attr) for name, (_, attr) in ROD_FIELDS.items()}
        values |= {name: getattr(frame, attr) for name, (_, attr) in PLATE_FIELDS.items()}
        values |= {name: getattr(frame, attr) for name, attr in SCALARS.items()}
        values |= {name: getattr(frame, attr) for name, attr in TOTALS.items()}
        for name, ds in self.datasets.items():
            ds.resize(k + 1, axis=0)
            ds[k] = 0.0 if values[name] is None else values[name]
        self.file.flush()
        self.frames += 1
        if not self.replaced:
            os.replace(self.tmp, self.path)  # the open handle follows the renamed file
            self.replaced = True

    def close(self) -> None:
        if self.file is None:
            return
        self.file.close()
        self.file = None
        if not self.replaced:
            self.tmp.unlink(missing_ok=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

