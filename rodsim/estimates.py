"""What a run will take, estimated before it starts (``rodsim check``, ``rodsim run``): the
size of its results file and its wall time.

Results file: exact arithmetic where it can be (the data, the chunks the writer allocates
for the planned frames: rodsim.results.storage.chunk_frames) plus the HDF5 bookkeeping (object
headers, chunk indexes, groups), two constants fitted on 144 files of 7 to 600 nodes, 1 to
1000 frames and 1 to 30 node sets (``python benchmarks/estimates_calibrate.py --fit-size``),
whose residuals were -3.2 to +2.9 kB. With compression the frames take what their data
allows; the estimate is then the file without, an upper bound.

Run time: a cost table measured on one machine (STEP to PARALLEL below) times the plan's
steps and frames. Explicit runs come within 1.35x of the warm run on the examples, the
implicit scheme and equilibrium within 2x where they take about the Newton iterations
assumed (ITERATIONS); benchmarks/estimates.py compares them.
"""

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from rodsim.mesh.assemble import Mesh
from rodsim.resources import format_size
from rodsim.results.layout import MESH_DATASETS, chosen_datasets, is_present
from rodsim.results.restart import CONTROL
from rodsim.results.storage import ISTORE_K, chunk_frames, is_compressed
from rodsim.results.vtk import INDEX_BYTES_PER_FRAME
from rodsim.results.vtk_cells import PLATE_CELL_DATA, ROD_CELL_DATA
from rodsim.results.writer import frame_datasets

# HDF5 bookkeeping (fitted, see the docstring): each per-frame dataset (object header,
# description attribute, the first node of its chunk index; and a share of the file's own:
# superblock, groups, root attributes, which the 22 to 26 frame datasets of every file cannot
# tell apart from a constant) and each mesh dataset (object header, attributes).
FRAME_DATASET_BYTES = 1626
MESH_DATASET_BYTES = 394


@dataclass(frozen=True)
class ResultsSize:
    """The estimated results file: its bytes, for frames frames of frame_bytes data each;
    compressed: some datasets are compressed, and bytes is what the file would take
    without (an upper bound)."""

    bytes: int
    frames: int
    frame_bytes: int
    compressed: bool = False


def _index_bytes(chunks: int, rank: int) -> int:
    """Chunk index bytes beyond the first node (in FRAME_DATASET_BYTES): nothing up to one
    node's 2 K entries; past that the node splits, which costs about one and a half nodes
    more, and each further chunk its entry (key: size, filter mask, rank + 1 offsets; child
    address) in nodes about 3/4 full: 64 bytes a chunk of a 3-D dataset, as measured."""
    if chunks <= 2 * ISTORE_K:
        return 0
    key = 8 + 8 * (rank + 1)
    node = 24 + 2 * ISTORE_K * 8 + (2 * ISTORE_K + 1) * key
    return 3 * node // 2 + (chunks - 2 * ISTORE_K) * (key + 8) * 4 // 3


def _mesh_data(mesh: Mesh) -> tuple[int, int]:
    """(bytes, datasets) of the mesh/ datasets the writer writes for mesh."""
    data = count = 0
    for d in MESH_DATASETS:
        if not is_present(d, mesh):
            continue
        value = getattr(mesh, d.source)
        for item in value.values() if isinstance(value, dict) else [value]:
            data += np.asarray(item).size * 8
            count += 1
    return data, count


RESTART_DATASET_BYTES = 600  # header, description and share of the slot's attributes

# The ParaView series (rodsim.results.vtk): a .vtu per frame, its arrays zlib-compressed and
# base64-encoded by meshio, plus a line of the .pvd index. A frame's .vtu is VTU_HEADER bytes
# (XML, and the arrays' compression blocks) plus VTU_RATIO times its raw array bytes
# (vtk_raw_bytes), fitted for the least relative error by `python benchmarks/vtk_size.py --fit`
# on six runs of the cases in inputs/ (rods, plates, 27 to 289 nodes): the series written
# were 0.87 to 1.43 times the estimate. How well zlib packs depends on the data (zeros, as in
# planar motions, pack to almost nothing), which the estimate does not know.
VTU_HEADER = 5000
VTU_RATIO = 0.34


def vtk_raw_bytes(mesh: Mesh, chosen: frozenset | None = None, stresses: bool = False) -> int:
    """The raw bytes of one frame's .vtu arrays: points, cells and the point and cell arrays
    that output.fields keeps (chosen; None: all); stresses: the model recovers stresses (the
    von_mises_max and utilisation arrays)."""
    keep = chosen_datasets(None) if chosen is None else chosen
    n, e, p = mesh.n_nodes, mesh.n_elements, mesh.n_plates
    cells = e + p
    corners = 2 * e + int((mesh.plates[:, 3] != mesh.plates[:, 2]).sum()) + 3 * p
    point_arrays = 4 + sum(  # displacement, d1, d2, d3 always
        f"nodes/{name}" in keep
        for name in ("velocity", "angular_velocity", "reaction_force", "reaction_moment")
    )
    cell_values = sum(w for k, w in ROD_CELL_DATA.items() if f"rods/{k}" in keep) if e else 0
    if p:
        cell_values += sum(w for k, w in PLATE_CELL_DATA.items() if f"plates/{k}" in keep)
    if stresses:
        cell_values += sum(
            any(f"{g}/{k}" in keep for g in ("rods", "plates"))
            for k in ("von_mises_max", "utilisation")
        )
    # points and point arrays 3 float64 a node; connectivity and offsets int64, types int8
    return 8 * (3 * n * (1 + point_arrays) + corners + cells + cells * cell_values) + cells


def vtk_size(mesh: Mesh, frames: int, chosen=None, stresses: bool = False) -> int:
    """The bytes of the ParaView series of frames frames (.vtu files and .pvd index)."""
    per = VTU_HEADER + VTU_RATIO * vtk_raw_bytes(mesh, chosen, stresses) + INDEX_BYTES_PER_FRAME
    return int(frames * per)


def results_size(
    mesh: Mesh,
    frames: int,
    compression: str = "none",
    text_bytes: int = 0,
    constants: tuple = (FRAME_DATASET_BYTES, MESH_DATASET_BYTES),
    chosen: frozenset | None = None,
) -> ResultsSize:
    """The results file of frames frames of mesh (text_bytes: the case text, title and
    overrides the file keeps; constants: the fitted bookkeeping bytes, which
    benchmarks/estimates_calibrate.py --fit-size varies; chosen: the datasets output.fields
    keeps, rodsim.results.layout.chosen_datasets, None: all)."""
    frame_dataset_bytes, mesh_dataset_bytes = constants
    total = text_bytes
    frame_bytes = 0
    compressed = False
    for d, per in frame_datasets(mesh, chosen):
        squeezed = is_compressed(per, compression)
        compressed |= squeezed
        c = chunk_frames(per, frames, squeezed)
        chunks = -(-frames // c)
        total += frame_dataset_bytes + chunks * c * per + _index_bytes(chunks, len(d.shape) + 1)
        frame_bytes += per
    data, count = _mesh_data(mesh)
    total += data + count * mesh_dataset_bytes
    return ResultsSize(int(total), frames, frame_bytes, compressed)


# --- run time -------------------------------------------------------------------------------

# The cost table, in seconds: measured by `python benchmarks/estimates_calibrate.py` with a
# warm numba cache on a 2-core AMD EPYC VM (x86_64, Python 3.11, numba 0.68, h5py 3.16 with
# HDF5 2.0), one thread, on straight rods of 10 to 1000 elements and square plates of 8 x 8 to
# 32 x 32 quads, and fitted by least squares. Other machines differ by their single-core
# speed, which the estimate does not know.
STEP = {  # one explicit time step: (fixed, per rod element, per plate element)
    (2, "SO3xR3"): (3.6e-6, 1.68e-7, 8.5e-7),
    (4, "SO3xR3"): (4.4e-6, 4.29e-7, 2.41e-6),
    (2, "SE3"): (3.6e-6, 6.09e-7, 1.85e-6),
}
# One Newton iteration (a sparse LU factorisation and solve) of an implicit time step or an
# equilibrium load step: (fixed, per rod element, c, a) with c P^a for P plate elements (the
# LU of a plate fills faster than its size grows; of a rod not).
NEWTON = {
    "implicit": (8.7e-4, 2.65e-5, 6.2e-5, 1.30),
    "equilibrium": (1.6e-3, 1.91e-5, 7.2e-5, 1.26),
}
# Newton iterations a step takes, which the case does not tell: the implicit scheme took 2 to
# 3 at the calibration's steps (larger steps take more); equilibrium took 2 (a nearly linear
# problem) to 8 per load step on the examples in inputs/, and a load step that needs
# pseudo-time continuation many more (the second of bend45: 61). Equilibrium estimates are
# the roughest: off by the ratio of the iterations taken to these.
ITERATIONS = {"implicit": 3, "equilibrium": 5}
# One adaptive implicit step (rodsim.integrators.adaptive: ~10 residual evaluations, a share
# of the Jacobians, rebalancing solves): fixed, per rod element, per plate element; measured
# on inputs/violent_pulse at 20, 80 and 320 elements (0.47, 1.1, 3.9 ms a step; plates: the
# rod's per-element cost times the explicit step's plate/rod ratio). How many steps the
# motion needs the case does not tell: the estimate takes a mean step of ADAPTIVE_RATIO x the
# explicit stable-step estimate (the violent pulse: 14).
ADAPTIVE_STEP = (2.5e-4, 1.13e-5, 5.7e-5)
ADAPTIVE_RATIO = 10.0
FRAME = (4.7e-3, 1.45e-6, 2.9e-6)  # writing a frame to the results file: fixed, per node, plate
VTK_FRAME = (2.4e-3, 4.8e-6, 0.5e-6)  # ... and to the ParaView series
# Compressing a frame: per compressed dataset, per compressed byte (gzip at level 4; lzf's
# figures are within the noise of two runs)
COMPRESS = {"gzip": (1.0e-4, 2.0e-8), "lzf": (3.5e-5, 1.0e-8)}
# Loading the compiled kernels from numba's cache, in the run (a fresh process): 0.11 to
# 0.16 s whatever the scheme; the first run on a machine compiles them instead (minutes).
START = 0.13
# The parallel explicit step (solver.parallel; from 2000 elements with 'auto') against one
# thread: 0.88 at 4000 elements on the 2-core VM. Threads that wait for a busy core make it
# much slower (64 times, measured while another job ran the test suite).
PARALLEL = 0.88


@dataclass(frozen=True)
class RunTime:
    """The estimated wall time of a run: seconds; kind, the cost table's row (the solver);
    steps, the part of the time steps (or Newton iterations), frames the part of writing."""

    seconds: float
    kind: str
    steps: float
    frames: float


def _cost(row: tuple, elements: int, plates: int) -> float:
    fixed, per_element, per_plate = row
    return fixed + per_element * elements + per_plate * plates


def _newton(kind: str, elements: int, plates: int) -> float:
    fixed, per_element, c, a = NEWTON[kind]
    return fixed + per_element * elements + (c * plates**a if plates else 0.0)


def _compressed(mesh: Mesh, compression: str, chosen=None) -> tuple[int, int]:
    """(datasets, bytes a frame) that compression compresses in the results of mesh."""
    squeezed = [b for _, b in frame_datasets(mesh, chosen) if is_compressed(b, compression)]
    return len(squeezed), sum(squeezed)


def run_time(prep) -> RunTime:
    """The wall time of the run of a prepared case (rodsim.run.Prepared), loading the kernels
    included, starting Python and building the model not (the time `rodsim run` reports in
    its `done` line)."""
    s, p, m = prep.case.settings.solver, prep.plan, prep.setup.model
    e, n_plates = m.n_elements, m.n_plates
    if p.kind == "explicit":
        order, group = int(s.order), s.group
        row = STEP.get((order, group))
        if row is None:  # order 4 on SE3: order 4's cost, SE3's extra
            se3 = _cost(STEP[(2, "SE3")], e, n_plates) / _cost(STEP[(2, "SO3xR3")], e, n_plates)
            per_step = _cost(STEP[(4, "SO3xR3")], e, n_plates) * se3
        else:
            per_step = _cost(row, e, n_plates)
        if p.parallel:
            per_step *= PARALLEL
        kind = f"explicit order {order}, {group}" + (", parallel" if p.parallel else "")
    elif p.kind == "implicit" and s.adaptive is not None:
        per_step = _cost(ADAPTIVE_STEP, e, n_plates)
        kind = f"implicit, adaptive steps, assumed {ADAPTIVE_RATIO:.3g} x the stable step"
    else:
        # modal, buckling: their equilibrium's steps
        row = "equilibrium" if p.kind in ("modal", "buckling") else p.kind
        per_step = ITERATIONS[row] * _newton(row, e, n_plates)
        kind = f"{p.kind}, ~{ITERATIONS[row]} Newton iterations a step"
    output = prep.case.settings.output
    per_frame = _cost(FRAME, m.n_nodes, n_plates) + (
        _cost(VTK_FRAME, m.n_nodes, n_plates) if output.vtk else 0.0
    )
    compression = output.compression.partition(":")[0]
    if compression != "none":
        per_dataset, per_byte = COMPRESS[compression]
        chosen = chosen_datasets(output.fields)
        datasets, data = _compressed(prep.setup.mesh, output.compression, chosen)
        per_frame += per_dataset * datasets + per_byte * data
    n_steps = p.n_steps
    if p.kind == "implicit" and s.adaptive is not None and math.isfinite(p.stable_dt):
        n_steps = max(p.n_steps, math.ceil(p.t_end / (ADAPTIVE_RATIO * p.stable_dt)))
    steps, frames = n_steps * per_step, p.n_frames * per_frame
    return RunTime(START + steps + frames, kind, steps, frames)


def results_size_of(prep) -> ResultsSize:
    """The results file of a prepared case (rodsim.run.Prepared)."""
    case = prep.case
    text = len(case.text.encode()) + len(case.settings.title.encode())
    text += len("\n".join(prep.overrides).encode())
    compression = case.settings.output.compression
    frames = sum(sp.plan.n_frames for _, sp in prep.steps) if prep.steps else prep.plan.n_frames
    chosen = chosen_datasets(case.settings.output.fields)
    size = results_size(prep.setup.mesh, frames, compression, text, chosen=chosen)
    steps = [sp for _, sp in prep.steps] if prep.steps else [prep]
    kinds = [
        "adaptive" if sp.case.settings.solver.adaptive is not None else sp.plan.kind for sp in steps
    ]
    return dataclasses.replace(size, bytes=size.bytes + restart_bytes(prep.setup.mesh, kinds))


def series_size_of(prep) -> int:
    """The ParaView series of a prepared case (rodsim.run.Prepared), as `rodsim run` writes it
    with output.vtk (docs/results.md, "The ParaView series")."""
    frames = sum(sp.plan.n_frames for _, sp in prep.steps) if prep.steps else prep.plan.n_frames
    model = prep.setup.model
    stresses = model.stress is not None and (
        prep.setup.mesh.stress_points.shape[1] > 0 or model.n_plates > 0
    )
    chosen = chosen_datasets(prep.case.settings.output.fields)
    return vtk_size(prep.setup.mesh, frames, chosen, stresses)


def restart_bytes(mesh: Mesh, kinds) -> int:
    """The restart/ group (rodsim.results.restart) of a run whose steps are of kinds (the solver
    kinds, "adaptive" for adaptive implicit steps): two slots of the largest state, their
    bookkeeping (RESTART_DATASET_BYTES per dataset) included. Adaptive steps also keep the
    Jacobian's 6x6 blocks, one per node and two per coupled node pair (rods: their elements;
    plates: at most 6 pairs per quad)."""
    n = mesh.n_nodes
    blocks = n + 2 * mesh.n_elements + 12 * mesh.n_plates
    # explicit: x, rot, p, pi and the forces f, tau the next step starts from
    per_node = {"explicit": 24, "implicit": 28, "equilibrium": 16, "buckling": 16, "modal": 16}
    per_node["adaptive"] = per_node["implicit"] + 6  # xi_before
    arrays = {"explicit": 7, "implicit": 7, "equilibrium": 3, "buckling": 3, "modal": 3}
    arrays["adaptive"] = 10
    # the energy (and the ledger's sums) as scalars
    extra = {"explicit": 2, "implicit": 2, "adaptive": 2 + 36 * blocks + len(CONTROL)}
    size = {k: 8 * (per_node[k] * n + extra.get(k, 0)) for k in per_node}
    kind = max(kinds, key=lambda k: size.get(k, 0))
    return 2 * (size[kind] + arrays[kind] * RESTART_DATASET_BYTES)


def format_duration(seconds: float) -> str:
    """0.31 s, 12 s, 4.5 min, 3.2 h: two significant digits, in the unit that reads best."""
    if seconds < 100:
        return f"{seconds:.2g} s"
    if seconds < 6000:
        return f"{seconds / 60:.2g} min"
    return f"{seconds / 3600:.2g} h"


def summary_lines(prep) -> list[str]:
    """The summary's results and run time lines, e.g.
    'results   about 7.3 MiB (301 frames x 24.9 KiB)' and
    'run time  about 2.2 s (explicit order 2, SO3xR3: steps 0.05 s, frames 2 s)'."""
    size = results_size_of(prep)
    output = prep.case.settings.output
    each = format_size(size.frame_bytes)
    results = (
        f"results   at most about {format_size(size.bytes)} ({size.frames} frames x {each} "
        f"before {output.compression.partition(':')[0]} compression)"
        if size.compressed
        else f"results   about {format_size(size.bytes)} ({size.frames} frames x {each})"
    )
    if output.vtk:  # the series' share, which the run writes beside the file by default
        series = series_size_of(prep)
        results += f" + ParaView series {format_size(series)}"
    if prep.steps:  # the analysis steps' times added up (docs/steps.md)
        times = [run_time(sp) for _, sp in prep.steps]
        t = RunTime(
            sum(x.seconds for x in times),
            " + ".join(dict.fromkeys(x.kind for x in times)),
            sum(x.steps for x in times),
            sum(x.frames for x in times),
        )
    else:
        t = run_time(prep)
    return [
        results,
        f"run time  about {format_duration(t.seconds)} ({t.kind}: steps "
        f"{format_duration(t.steps)}, frames {format_duration(t.frames)})",
    ]
