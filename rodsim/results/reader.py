"""Reading results files (docs/results.md): one adapter per major layout (rodsim.results.layout
holds the dataset table and the versioning rules), frames as rodsim.results.frame.Frame, and
the run status a file records.

Reading a file a run is writing (docs/results.md "Reading during a run"): the writer flushes
each frame's raw data before the metadata that makes it part of the datasets (HDF5 flushes
the chunk caches, then the metadata cache), so a dataset's length never counts a row whose
data is not on disk, and the complete frames are those every per-frame dataset holds
(frame_count). But a reader parses the metadata lazily, over many reads, while the writer
rewrites it at every flush: a reader can meet a chunk index written after it read the
superblock ("addr overflow"), or a node half rewritten. Such a torn read raises; read_live
retries the whole read, from a fresh open, while the run holds its output lock.
"""

import dataclasses
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import h5py
import numpy as np

from rodsim.errors import CaseError
from rodsim.results.frame import Frame, Unwritten
from rodsim.results.layout import (
    ALWAYS,
    DATASETS,
    FRAME_DATASETS,
    PLATES,
    POINT_STRESS,
    POINT_STRESSES_ATTR,
    ROD_STRESS,
    RODS,
    TERM,
    TERM_DATASETS,
    TERM_FRAME_DATASETS,
    TERM_MESH_DATASETS,
    Dataset,
    concrete_shape,
    written_fields,
)


class Adapter(NamedTuple):
    """How rodsim reads one major layout: the required datasets a file lacks, its number of
    complete frames, and frame k as a Frame (directors from mesh/frames if given)."""

    missing: Callable[[h5py.File], list]
    count: Callable[[h5py.File], int]
    read: Callable[..., Frame]


def quaternion_matrices(q: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions (w, x, y, z) -> (..., 3, 3) rotation matrices."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def missing_v1(f: h5py.File) -> list:
    return [
        d.container
        for d in DATASETS
        if not d.may_be_absent and d.container not in f and not left_out(f, d)
    ]


def left_out(f: h5py.File, d: Dataset) -> bool:
    """Whether the run that wrote f left dataset d out by output.fields (layout 1.7): not
    chosen, and one the model has (a dataset the mesh cannot have reads as absent: None, or
    rod fields with no rows, as without output.fields)."""
    chosen = written_fields(f)
    return d.choosable and chosen is not None and d.path not in chosen and _has(f, d)


def _has(f: h5py.File, d: Dataset) -> bool:
    """rodsim.results.layout.is_present for the mesh a file stores: the writer writes
    mesh/rods, mesh/plates and mesh/stress_points exactly when the mesh has rods, plates and
    rod stress recovery points (RODS, PLATES, ROD_STRESS), and a term's mesh datasets (as
    every one it keeps) exactly when the model has the term (TERM)."""
    if d.present == TERM:
        return any(e.container in f for e in TERM_DATASETS if e.term == d.term)
    rods = "mesh/rods" in f
    stress = rods and "mesh/stress_points" in f and f["mesh/stress_points"].shape[1] > 0
    return {
        ALWAYS: True,
        RODS: rods,
        PLATES: "mesh/plates" in f,
        ROD_STRESS: stress,
        POINT_STRESS: stress and _point_stresses(f),
    }[d.present]


def _point_stresses(f: h5py.File) -> bool:
    """Whether the run that wrote f had output.stresses: points (its point_stresses attribute,
    or a point stress dataset in it)."""
    return (
        bool(f.attrs.get(POINT_STRESSES_ATTR, False))
        or "rods/stress" in f
        or ("rods/von_mises" in f)
    )


def unwritten(f: h5py.File, path: str) -> Unwritten:
    """The stand-in for a dataset of f that output.fields left out (any use: CaseError)."""
    return Unwritten(path, str(f.filename))


def not_written(f: h5py.File, path: str) -> bool:
    """Whether the per-frame dataset at path is absent from f because output.fields left it
    out (not because the model has none)."""
    d = next((d for d in (*FRAME_DATASETS, *TERM_FRAME_DATASETS) if d.path == path), None)
    return path not in f and d is not None and left_out(f, d)


def dataset(f: h5py.File, path: str) -> h5py.Dataset:
    """f[path]; CaseError naming the file where output.fields left the dataset out ("not
    written: add it to output.fields"), KeyError as h5py's where it is absent otherwise."""
    if not_written(f, path):
        raise unwritten(f, path).error()
    return f[path]


def count_v1(f: h5py.File) -> int:
    """Frames every known per-frame dataset holds completely (a kill during a flush can leave
    the newest frame in some of them only); datasets of a newer minor version do not count."""
    every = (*FRAME_DATASETS, *TERM_FRAME_DATASETS)
    lengths = [ragged_count(f, d) if d.ragged else f[d.path].shape[0] for d in every if d.path in f]
    return min(lengths) if lengths else 0


def ragged_count(f: h5py.File, d: Dataset) -> int:
    """Frames a ragged dataset holds completely (rodsim.results.dataset): those whose end is
    written and whose rows are all there (a kill during a flush may leave either without the
    other)."""
    if d.end_path not in f:
        return 0
    return int(np.searchsorted(f[d.end_path][()], f[d.path].shape[0], side="right"))


def ragged_rows(f: h5py.File, d: Dataset, k: int | slice):
    """Frame k's rows of a ragged dataset (n_k, ...); of a slice of frames (step 1), a list
    of them (none for no frames). k counts from the end where negative."""
    end = f[d.end_path]
    if isinstance(k, slice):
        frames = range(end.shape[0])[k]
        if not len(frames):
            return []
        ends = end[frames.start : frames.stop]
        start = int(end[frames.start - 1]) if frames.start else 0
        rows = f[d.path][start : int(ends[-1])]
        return np.split(rows, ends[:-1] - start)
    k = range(end.shape[0])[k]
    return f[d.path][int(end[k - 1]) if k else 0 : int(end[k])]


# Frame fields that default to None read as None when their dataset is absent; the others
# (the rod fields) as arrays with no rows, as a model without rod elements has. energy/total
# is no field: Frame derives it from the three energies.
_FRAME_DEFAULTS = {x.name: x.default for x in dataclasses.fields(Frame)}


def _absent(d: Dataset):
    default = _FRAME_DEFAULTS[d.source]
    if default is not dataclasses.MISSING:
        return default
    return np.zeros(concrete_shape(d.shape, {"N": 0, "E": 0, "P": 0}))


def _value_v1(f: h5py.File, d: Dataset, k: int):
    if d.path not in f and left_out(f, d):
        return unwritten(f, d.path)
    if d.may_be_absent and d.path not in f:
        return _absent(d)
    value = f[d.path][k]
    if d.shape == ():
        return float(value) if d.dtype == "f8" else int(value)
    return value


def terms_v1(f: h5py.File, k: int | slice) -> dict:
    """Frame.terms of frame k (or the frames of a slice): the terms' datasets the file has,
    keyed by path, mesh ones whole; Unwritten for one output.fields left out. A ragged
    dataset's: frame k's rows (n_k, ...), of a slice a list of each frame's."""
    out = {d.path: f[d.path][()] for d in TERM_MESH_DATASETS if d.path in f}
    for d in TERM_FRAME_DATASETS:
        if d.path in f:
            out[d.path] = ragged_rows(f, d, k) if d.ragged else f[d.path][k]
        elif left_out(f, d):
            out[d.path] = unwritten(f, d.path)
    return out


def read_v1(f: h5py.File, k: int, frames0=None) -> Frame:
    values = {d.source: _value_v1(f, d, k) for d in FRAME_DATASETS if d.source in _FRAME_DEFAULTS}
    frames0 = f["mesh/frames"][()] if frames0 is None else frames0
    directors = quaternion_matrices(values["rotation"]) @ frames0
    return Frame(directors=directors, terms=terms_v1(f, k), **values)


ADAPTERS = {1: Adapter(missing_v1, count_v1, read_v1)}


def layout_version(f: h5py.File) -> tuple[int, int]:
    """(layout, layout_minor); files from before layout_minor existed are minor 0."""
    return int(f.attrs["layout"]), int(f.attrs.get("layout_minor", 0))


def _adapter(f: h5py.File) -> Adapter:
    return ADAPTERS[int(f.attrs["layout"])]


def _check(f: h5py.File, path: Path) -> None:
    """CaseError unless f is a results file of a layout this rodsim reads."""
    layout, minor = f.attrs.get("layout"), f.attrs.get("layout_minor", 0)
    if not isinstance(layout, (int, np.integer)) or not isinstance(minor, (int, np.integer)):
        raise CaseError("not a rodsim results file (no integer layout attribute)", file=str(path))
    if int(layout) not in ADAPTERS:
        supported = ", ".join(str(v) for v in sorted(ADAPTERS))
        raise CaseError(
            f"results layout {layout} is not supported: this version of rodsim "
            f"reads layout {supported}; read it with a newer rodsim",
            file=str(path),
        )
    missing = ADAPTERS[int(layout)].missing(f)
    if missing:
        raise CaseError(
            f"not a complete results file of layout {layout}: missing " + ", ".join(missing),
            file=str(path),
        )


# What h5py raises when a read meets metadata the writer is rewriting ("addr overflow", a
# bad B-tree or object header signature, a symbol table it cannot iterate, a name not found).
TORN = (OSError, KeyError, RuntimeError, ValueError, IndexError, TypeError)
# A failed read is tried again this many times whatever the lock says (the run may have
# ended, and released its lock, just after the flush that tore the read) ...
RETRIES_ANYWAY = 2
# ... and while a live run holds the output lock, for up to this many seconds: one flush of
# a frame takes milliseconds, so a read torn this long is no torn read.
LIVE_RETRY_SECONDS = 10.0
FIRST_WAIT, LONGEST_WAIT = 0.002, 0.05  # seconds between tries, doubling


class LiveFileWarning(UserWarning):
    """rodsim.read_results read a file a run is still writing: its complete frames so far."""


def is_live(path) -> bool:
    """Whether a run holds the output lock of the results file at path (docs/running.md,
    "One run per output"): alive on this host, or on another host (which cannot be told)."""
    from rodsim.results.lock import holder

    h = holder(path)
    return h is not None and h.get("alive") is not False


def read_live(path, read: Callable):
    """read(path), which opens the results file and reads all it needs before closing it,
    tried again from a fresh open while a torn read (TORN, or the CaseError of a file whose
    metadata was being rewritten) may be the cause: RETRIES_ANYWAY times, and while a run
    holds the file's output lock for up to LIVE_RETRY_SECONDS. A missing file, or an error
    that stays, raises as read raised it."""
    start, wait, tries = time.monotonic(), FIRST_WAIT, 0
    while True:
        try:
            return read(path)
        except (CaseError, *TORN):
            tries += 1
            if not Path(path).exists():
                raise
            if tries > RETRIES_ANYWAY and (
                time.monotonic() - start > LIVE_RETRY_SECONDS or not is_live(path)
            ):
                raise
        time.sleep(wait)
        wait = min(2 * wait, LONGEST_WAIT)


def _open_checked(path: Path) -> h5py.File:
    try:
        f = h5py.File(path, "r", locking=False)  # readable while a run writes it
    except OSError as exc:
        raise CaseError(f"not a readable HDF5 file ({exc})", file=str(path)) from None
    try:
        _check(f, path)
    except BaseException:
        f.close()
        raise
    return f


@contextmanager
def open_results(path):
    """Open a results file read-only; CaseError if it is missing, not a rodsim file or of a
    layout this version cannot read. The opening is tried again while the file's metadata is
    being rewritten by a run (read_live); what the caller reads after it is not: read a live
    file through read_live to have every read retried."""
    path = Path(path)
    if not path.exists():
        raise CaseError("no such results file", file=str(path))
    f = read_live(path, _open_checked)
    try:
        yield f
    finally:
        f.close()


def frame_count(f: h5py.File) -> int:
    """Frames every per-frame dataset holds completely. A run killed while flushing a frame
    can leave that frame in some datasets only (HDF5 writes their metadata one by one), so
    rodsim's readers use the shortest length."""
    return _adapter(f).count(f)


def read_frame(f: h5py.File, k: int, frames0=None) -> Frame:
    """Frame k of a file opened by open_results (directors rebuilt from rotation and
    mesh/frames; pass frames0 = mesh/frames when reading many frames)."""
    return _adapter(f).read(f, k, frames0)


# --- run status ---------------------------------------------------------------------------


class RunStatus(NamedTuple):
    """What a results file says about the run that wrote it (layout 1.2; older files:
    state "unknown"). state: running (also a run killed without a chance to say so),
    complete, interrupted, failed or unknown; detail: the signal, or the error class and
    message; end_requested: t_end (equilibrium: load multiplier 1; analysis steps: the total
    time at their end); last_time: the time (analysis steps: total time) of the last complete
    frame (None: no frame)."""

    state: str
    detail: str
    end_requested: float
    last_time: float | None
    off_schedule: bool = False  # the last frame was written off the schedule (at a stop)
    host: str = ""
    pid: int = 0

    @property
    def complete(self) -> bool:
        return self.state in ("complete", "unknown")

    def text(self, holder: dict | None = None) -> str:
        """One line; holder: the output lock's content, which tells a live run from a
        killed one."""
        last = "no frame" if self.last_time is None else f"last frame t = {self.last_time:.6g}"
        of = f" of {self.end_requested:.6g}" if np.isfinite(self.end_requested) else ""
        if self.state == "complete":
            return "complete"
        if self.state == "interrupted":
            return f"interrupted by {self.detail}: {last}{of}" + (
                " (off-schedule)" if self.off_schedule else ""
            )
        if self.state == "failed":
            return f"failed ({self.detail}): {last}{of}"
        if self.state == "running":
            ours = holder and (holder.get("host"), holder.get("pid")) == (self.host, self.pid)
            if ours and holder.get("alive"):
                return f"running (pid {holder.get('pid')} on {holder.get('host')}): {last}{of}"
            return f"incomplete: still running or killed, {last}{of}"
        return "unknown (written before rodsim recorded the run status)"


def _text_attr(f: h5py.File, name: str) -> str:
    value = f.attrs.get(name, "")
    return value.decode() if isinstance(value, bytes) else str(value)


def run_status(f: h5py.File) -> RunStatus:
    """The run status of a file opened by open_results."""
    n = frame_count(f)
    # with analysis steps the end requested is the total time: so is the last frame's
    stepped = len(f.attrs.get("steps", ())) > 1 and "total_time" in f
    last = float(f["total_time" if stepped else "time"][n - 1]) if n else None
    if "status" not in f.attrs:
        return RunStatus("unknown", "", float("nan"), last)
    flag = "solver/off_schedule"
    off = bool(n and flag in f and f[flag].shape[0] >= n and f[flag][n - 1])
    return RunStatus(
        _text_attr(f, "status"),
        _text_attr(f, "status_detail"),
        float(f.attrs.get("end_requested", float("nan"))),
        last,
        off,
        _text_attr(f, "host"),
        int(f.attrs.get("pid", 0)),
    )


def incomplete_warning(path) -> str | None:
    """ "warning: ..." for a results file whose run did not complete, else None."""
    from rodsim.results.lock import holder

    with open_results(path) as f:
        status = run_status(f)
    if status.complete:
        return None
    return f"warning: {path} holds an incomplete run: {status.text(holder(path))}"
