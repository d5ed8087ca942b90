"""Results as arrays: every per-frame quantity of a run stacked over the frames, read from a
results file (docs/results.md) or kept from a run in memory, alike.

The arrays are named after the fields of rodsim.results.frame.Frame, which is also what the
results file's dataset table (rodsim.results.layout.DATASETS) writes them from, so a
dataset ``nodes/position`` is ``Results.position`` whichever way the results came.
"""

import dataclasses
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rodsim.results.frame import Frame, Unwritten
from rodsim.results.layout import (
    FRAME_DATASETS,
    MESH_DATASETS,
    SETS,
    TERM_FRAME_DATASETS,
    concrete_shape,
    sizes_of,
)
from rodsim.results.modes import Buckling, Modes
from rodsim.results.reader import (
    LiveFileWarning,
    RunStatus,
    frame_count,
    is_live,
    layout_version,
    left_out,
    open_results,
    quaternion_matrices,
    read_frame,
    read_live,
    run_status,
    terms_v1,
    unwritten,
)

# Frame fields that may be None (no plates; files of layout 1.0 without reactions)
_OPTIONAL = {f.name for f in dataclasses.fields(Frame) if f.default is None}


class ResultsMesh(NamedTuple):
    """The mesh of a run (the file's mesh/ group), named as rodsim.mesh.assemble.Mesh names
    it: points (N,3) reference positions; frames (N,3,3) reference nodal frames, columns d1 d2
    d3; conn (E,2) rod element nodes; section, part (E,) indices into section_names and
    part_names; plates (P,4) plate element nodes (triangles repeat the last); plate_section,
    plate_part (P,); sets: set name -> sorted node indices (K,); stress_points (S,R,2) the
    stress recovery points (x2, x3) of each section name (R = 0 without stresses); end_frames
    (E,2,3,3) the reference section frames at the rod element ends (files before layout 1.6:
    the nodes' frames); section_outline (S,B,2) the outline of each section name (B = 0 in
    files before layout 1.6); plate_thickness (P,) (NaN in files before layout 1.6); terms:
    the mesh datasets of the model's terms by path ("mesh/connectors" (C,2) the node pairs
    of the connectors; empty without them, and in files before layout 1.9). Indices count
    from 0."""

    points: np.ndarray
    frames: np.ndarray
    conn: np.ndarray
    section: np.ndarray
    part: np.ndarray
    plates: np.ndarray
    plate_section: np.ndarray
    plate_part: np.ndarray
    sets: dict
    stress_points: np.ndarray
    end_frames: np.ndarray
    section_outline: np.ndarray
    plate_thickness: np.ndarray
    section_names: tuple
    part_names: tuple
    terms: dict = {}  # noqa: RUF012 - never written to: every ResultsMesh rodsim makes has its own

    def elements(self, part: str) -> np.ndarray:
        """The rod elements (indices into conn) of a part."""
        return np.flatnonzero(self.part == self.part_names.index(part))


@dataclass(frozen=True, eq=False)
class Results:
    """The frames of a run as arrays: F frames, N nodes, E rod elements, P plate elements;
    units those of the case (docs/results.md gives each with its units and frame of
    reference). Per node (F,N,3) unless said: position, velocity, angular_velocity,
    linear_momentum, angular_momentum (spatial), rotation (F,N,4) quaternions (w, x, y, z)
    of the reference-to-current rotation, reaction_force, reaction_moment (None in files
    that lack them). Per rod element (F,E,3), in the section frame: force, moment, strain,
    curvature. Per plate element, None without plates: plate_membrane, plate_bending (F,P,3),
    plate_shear (F,P,2). A quantity whose dataset the run's output.fields left out is an
    rodsim.results.frame.Unwritten: using it raises CaseError ("not written: add it to
    output.fields"). Stresses (docs/stresses.md), None where the run has none: rod_stress
    (F,E,R,3), rod_von_mises (F,E,R), rod_von_mises_max, rod_utilisation (F,E); plate_stress
    (F,P,3,5), plate_von_mises (F,P,3), plate_von_mises_max, plate_utilisation (F,P). Per
    frame (F,): time (equilibrium: the load multiplier), kinetic,
    internal, external, total energies, dt, iterations, residual, off_schedule (int), step
    (int, the analysis step), load_factor, total_time (docs/steps.md);
    total_linear, total_angular (F,3) momenta; the energy ledger (docs/results.md, "Energy
    ledger"; None in files from before it): external_work, support_work, dissipated, balance
    (F,), dissipated_by_term (F,D). terms: the per-frame datasets of the model's terms by
    path (docs/results.md): "connectors/force", "connectors/moment", "connectors/elongation",
    "connectors/rotation", "connectors/slip" (F,C,3), "connectors/work" (F,C) (docs/
    connectors.md "Output"); empty without connectors and in files before layout 1.9;
    Unwritten where output.fields left one out; a ragged dataset (docs/results.md "Ragged
    datasets", layout 1.10) is a list of F arrays, frame k's rows (n_k, ...). mesh: the
    ResultsMesh; title, case (the case text), overrides (the --set assignments); path and
    status (rodsim.results.reader.RunStatus) for results read from a file, None for results
    kept in memory; modes and buckling: the result of a modal or buckling analysis
    (docs/modal.md), else None."""

    mesh: ResultsMesh
    time: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray
    reaction_force: np.ndarray | None
    reaction_moment: np.ndarray | None
    force: np.ndarray
    moment: np.ndarray
    strain: np.ndarray
    curvature: np.ndarray
    plate_membrane: np.ndarray | None
    plate_bending: np.ndarray | None
    plate_shear: np.ndarray | None
    rod_stress: np.ndarray | None
    rod_von_mises: np.ndarray | None
    rod_von_mises_max: np.ndarray | None
    rod_utilisation: np.ndarray | None
    plate_stress: np.ndarray | None
    plate_von_mises: np.ndarray | None
    plate_von_mises_max: np.ndarray | None
    plate_utilisation: np.ndarray | None
    kinetic: np.ndarray
    internal: np.ndarray
    external: np.ndarray
    total: np.ndarray
    dt: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    lowest_eigenvalue: np.ndarray
    off_schedule: np.ndarray
    step: np.ndarray
    load_factor: np.ndarray
    total_time: np.ndarray
    total_linear: np.ndarray
    total_angular: np.ndarray
    external_work: np.ndarray | None
    support_work: np.ndarray | None
    dissipated: np.ndarray | None
    dissipated_by_term: np.ndarray | None
    balance: np.ndarray | None
    title: str = ""
    case: str = ""
    overrides: tuple = ()
    path: Path | None = None
    status: RunStatus | None = None
    units: str = ""  # the `units` attribute: the declared unit system, or ""
    # a modal or buckling analysis' result (rodsim.integrators.modal.Modes, Buckling), or None
    modes: Modes | None = None
    buckling: Buckling | None = None
    terms: dict = field(default_factory=dict)

    @property
    def x(self) -> np.ndarray:
        """position (F,N,3): the current node positions."""
        return self.position

    @property
    def n_frames(self) -> int:
        return self.time.shape[0]

    def displacement(self) -> np.ndarray:
        """(F,N,3) position minus the reference position."""
        return self.position - self.mesh.points

    def directors(self, k: int) -> np.ndarray:
        """(N,3,3) the current nodal frames of frame k, columns d1 d2 d3."""
        return quaternion_matrices(self.rotation[k]) @ self.mesh.frames

    def frame(self, k: int) -> Frame:
        """Frame k as the output record of a run (rodsim.results.frame.Frame)."""
        values = {
            d.source: _item(getattr(self, d.source), k)
            for d in FRAME_DATASETS
            if d.source != "total"
        }
        values["off_schedule"] = int(values["off_schedule"])
        values["step"] = int(values["step"])
        terms = {p: _item(v, k) for p, v in self.terms.items()}
        values["terms"] = {**self.mesh.terms, **terms}
        return Frame(directors=self.directors(k), **values)


def _item(values, k: int):
    if values is None or isinstance(values, Unwritten):
        return values
    if isinstance(values, list):  # a ragged dataset's frames
        return values[k].copy()
    return float(values[k]) if values.ndim == 1 else values[k].copy()


def read_results(path) -> Results:
    """The results file at path (docs/results.md), its complete frames: CaseError if it is not
    a results file of a layout this rodsim reads. Readable while a run writes it: the frames
    complete when it was read, a read torn by the writer's flush tried again
    (rodsim.results.reader.read_live), and a LiveFileWarning saying the run is still writing."""
    results = read_live(path, _read_results)
    if results.status.state == "running" and is_live(path):
        last = results.status.last_time
        upto = "" if last is None else f", up to t = {last:.6g}"
        warnings.warn(
            f"{path} is still being written by a run: read the {results.n_frames} frames "
            f"complete so far{upto}",
            LiveFileWarning,
            stacklevel=2,
        )
    return results


def _read_results(path) -> Results:
    with open_results(path) as f:
        n = frame_count(f)
        if layout_version(f)[0] == 1:  # one read per dataset
            arrays = {d.source: _read(f, d, n) for d in FRAME_DATASETS}
            mesh_terms, terms = _split(terms_v1(f, slice(0, n)))
        else:  # a later layout: its adapter, frame by frame
            frames = [read_frame(f, k) for k in range(n)]
            arrays = _stack(frames, _sizes_of(f))
            mesh_terms, terms = _stack_terms(frames)
        attrs = {k: _text(f.attrs.get(k, "")) for k in ("title", "case", "overrides", "units")}
        return Results(
            _file_mesh(f)._replace(terms=mesh_terms),
            **arrays,
            terms=terms,
            title=attrs["title"],
            case=attrs["case"],
            overrides=tuple(attrs["overrides"].splitlines()),
            path=Path(path),
            status=run_status(f),
            units=attrs["units"],
            modes=_modes_of(f),
            buckling=_buckling_of(f),
        )


def _modes_of(f) -> Modes | None:
    """The modes/ group of a file (docs/results.md, "Modes") as Modes, or None."""
    if "modes" not in f:
        return None
    g = f["modes"]
    eigenvalue = g["eigenvalue"][()]
    return Modes(
        eigenvalue=eigenvalue[:, 0] + 1j * eigenvalue[:, 1],
        frequency=g["frequency"][()],
        shape=g["shape"][()],
        effective_mass=g["effective_mass"][()],
        rigid=g["rigid"][()].astype(bool),
        symmetric=bool(g.attrs.get("symmetric", 1)),
        load=float(g.attrs.get("load", 0.0)),
        damping_ratio=g["damping_ratio"][()] if "damping_ratio" in g else None,
    )


def _buckling_of(f) -> Buckling | None:
    """The buckling/ group of a file (docs/results.md, "Buckling") as Buckling, or None."""
    if "buckling" not in f:
        return None
    g = f["buckling"]
    return Buckling(g["factor"][()], g["shape"][()], float(g.attrs.get("load", 0.0)))


def from_frames(
    frames, mesh, title: str = "", case: str = "", overrides=(), units: str = "", eigen=None
) -> Results:
    """Results of frames (Frame) in memory; mesh: the run's rodsim.mesh.assemble.Mesh (as the
    results file would hold it) or a ResultsMesh; eigen: a modal or buckling analysis'
    result (Modes or Buckling), if any."""
    mesh = mesh if isinstance(mesh, ResultsMesh) else mesh_of(mesh)
    sizes = sizes_of(mesh)
    frames = list(frames)
    mesh_terms, terms = _stack_terms(frames)
    return Results(
        mesh._replace(terms=mesh_terms) if mesh_terms else mesh,
        **_stack(frames, sizes),
        terms=terms,
        title=title,
        case=case,
        overrides=tuple(overrides),
        units=units,
        modes=eigen if isinstance(eigen, Modes) else None,
        buckling=eigen if isinstance(eigen, Buckling) else None,
    )


def mesh_of(mesh) -> ResultsMesh:
    """The ResultsMesh of a rodsim.mesh.assemble.Mesh: what a results file stores of it."""
    values = {d.source: getattr(mesh, d.source) for d in MESH_DATASETS}
    values["sets"] = dict(mesh.sets)
    names = {"section_names": tuple(mesh.section_names), "part_names": tuple(mesh.part_names)}
    return ResultsMesh(**values, **names)


def _stack(frames: list, sizes: dict) -> dict:
    """Per-frame values of the frames stacked: {Frame field: (F, ...) array or None}."""
    out = {}
    for d in FRAME_DATASETS:
        values = [getattr(frame, d.source) for frame in frames]
        if values and isinstance(values[0], Unwritten):  # output.fields left it out
            out[d.source] = values[0]
        elif d.source in _OPTIONAL and (not values or values[0] is None):
            out[d.source] = None
        elif values:
            out[d.source] = np.asarray(values, dtype=d.dtype)
        else:
            out[d.source] = np.zeros((0, *concrete_shape(d.shape, sizes)), dtype=d.dtype)
    return out


def _split(terms: dict) -> tuple[dict, dict]:
    """Frame.terms-like values by path: (the mesh datasets, the per-frame ones)."""
    mesh = {p: v for p, v in terms.items() if p.startswith("mesh/")}
    return mesh, {p: v for p, v in terms.items() if p not in mesh}


def _stack_terms(frames: list) -> tuple[dict, dict]:
    """The terms' datasets of frames (Frame.terms): (ResultsMesh.terms, the first frame's;
    Results.terms, the per-frame ones stacked (F, ...), Unwritten as the frames hold it)."""
    if not frames:
        return {}, {}
    mesh, first = _split(frames[0].terms)
    declared = {d.path: d for d in TERM_FRAME_DATASETS}
    out = {}
    for p, v in first.items():
        values = [fr.terms[p] for fr in frames]
        if isinstance(v, Unwritten):
            out[p] = v
        elif declared[p].ragged:  # rows that change in number: a list, as read from a file
            out[p] = [np.asarray(x, declared[p].dtype) for x in values]
        else:
            out[p] = np.asarray(values, declared[p].dtype)
    return mesh, out


def _sizes_of(f) -> dict:
    sizes = {"N": f["mesh/points"].shape[0], "E": 0, "P": 0, "S": 0, "R": 0, "B": 0}
    if "mesh/stress_points" in f:
        sizes["S"], sizes["R"] = f["mesh/stress_points"].shape[:2]
    if "mesh/rods" in f:
        sizes["E"] = f["mesh/rods"].shape[0]
    if "mesh/plates" in f:
        sizes["P"] = f["mesh/plates"].shape[0]
    return sizes


def _read(f, d, n: int):
    """The first n frames of a per-frame dataset; an absent one as a frame without it reads:
    None, or arrays with no rows (rod fields of a mesh without rods)."""
    if d.path in f:
        return f[d.path][:n]
    if left_out(f, d):  # output.fields left it out: using it raises CaseError
        return unwritten(f, d.path)
    if d.source in _BEFORE_STEPS:  # a file from before analysis steps: one step
        return _BEFORE_STEPS[d.source](f, n)
    if d.source in _OPTIONAL:
        return None
    return np.zeros((n, *concrete_shape(d.shape, {**_sizes_of(f), "E": 0})), dtype=d.dtype)


# what a file written before layout 1.5 holds of the step datasets: one step from time 0
_BEFORE_STEPS = {
    "step": lambda f, n: np.zeros(n, dtype=np.int64),
    "load_factor": lambda f, n: np.full(n, np.nan),
    "total_time": lambda f, n: f["time"][:n],
}


def _file_mesh(f) -> ResultsMesh:
    values, names = {}, {}
    for d in MESH_DATASETS:
        if d.path.startswith(SETS):
            group = f[SETS] if SETS in f else {}
            values["sets"] = {name: group[name][()] for name in group}
        elif d.path in f:
            values[d.source] = f[d.path][()]
            if d.names:
                names[d.names] = tuple(_text(x) for x in f[d.path].attrs.get("names", ()))
        else:  # a mesh without rods or without plates, a run without stresses
            empty = {"E": 0, "P": 0, "S": len(names.get("section_names", ())), "R": 0, "B": 0}
            values[d.source] = np.zeros(concrete_shape(d.shape, empty), dtype=d.dtype)
    if "mesh/rod_frames" not in f and len(values["conn"]):  # before layout 1.6: the nodes'
        values["end_frames"] = values["frames"][values["conn"]]
    if "mesh/plate_thickness" not in f:
        values["plate_thickness"] = np.full(len(values["plates"]), np.nan)
    return ResultsMesh(
        **values,
        section_names=names.get("section_names", ()),
        part_names=names.get("part_names", ()),
    )


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
