"""Writing a results file (docs/results.md "Crash safety", docs/running.md): frames streamed
under the layout of rodsim.results_format, with the run's status, the previous results kept
until the run completes, and disk space reserved ahead of every frame.

Crash safety: the file is flushed after every frame, and the metadata cache keeps dirty
metadata in memory between flushes (evictions off), so the file on disk changes only at a
flush: a run killed at any point leaves every flushed frame readable. A kill during the
flush itself can leave the newest frame in some datasets only (their metadata is written one
by one); rodsim's readers use the shortest length (frame_count). (SWMR mode would guard the
flush itself too, but leaves a killed file flagged "open for write" that plain readers refuse
until h5clear is run; the earliest format has no such flag.)

Disk space: HDF5 cannot recover from a write that fails half-way (a full disk, a quota, a
file-size limit): metadata written in place may then point at data that never reached the
disk, and the file no longer opens. So before every frame the space that frame can take
(the new chunks it may start, at their worst-case compressed size, plus a margin for
metadata, the status and the close) is allocated beyond the file's end with
posix_fallocate. When that fails, nothing has been written for the frame: the run stops
with every earlier frame intact and the status set, in the space the previous reservation
left. The unused reservation is cut off at the end.

File size (docs/results.md "File size"): chunks grow with the run (chunk_frames), the chunk
indexes have small nodes (ISTORE_K), and with output.compression each compressed chunk
holds one frame, written once (MIN_COMPRESSED_FRAME says why).

The new file is written under a temporary name next to the target and renamed onto it when
the first frame is written; an existing results file is moved to ``<stem>.prev.h5`` then
(one generation: if that file is an incomplete run's and the ``.prev.h5`` a complete run's,
the complete one stays and the incomplete one goes) and deleted only when the new run
completes.
"""

import ctypes
import errno
import functools
import logging
import math
import os
import shutil
import socket
import tempfile
import time
from datetime import datetime
from pathlib import Path

import h5py
import numpy as np

from rodsim import __version__, restart
from rodsim.errors import ResourceError
from rodsim.integrators.modal import Buckling
from rodsim.mesh.assemble import Mesh
from rodsim.results_format import (
    FRAME_DATASETS,
    LAYOUT,
    LAYOUT_MINOR,
    MESH_DATASETS,
    Dataset,
    concrete_shape,
    is_present,
    sizes_of,
)
from rodsim.writers.frame import Frame, share

log = logging.getLogger(__name__)

# the modes/ group of a modal analysis (docs/results.md, "Modes"): M modes
MODE_DESCRIPTIONS = {
    "frequency": "(M,) natural frequency, cycles per time unit: sqrt(max(Re lambda, 0)) / 2 pi",
    "eigenvalue": "(M, 2) real and imaginary part of lambda = omega^2 (1/time^2)",
    "shape": "(M, N, 6) mass-normalised mode (u, theta) per node, global axes",
    "effective_mass": "(M, 6) effective modal mass along x, y, z and about the global axes",
    "rigid": "(M,) 1 for a rigid-body mode",
    "damping_ratio": "(M,) phi^T C phi / (2 omega) with the case's damping (NaN: rigid mode)",
}
# the buckling/ group of a buckling analysis (docs/results.md, "Buckling")
BUCKLING_DESCRIPTIONS = {
    "factor": "(M,) critical load factor: the multiple of the case's loads, lowest first",
    "shape": "(M, N, 6) buckling mode (u, theta) per node, global axes, largest component 1",
}

CHUNK_BYTES = 1 << 16
# Chunks are allocated whole, so the last, partly filled chunk of a dataset is file space
# without data: with the run's expected frames spread over at least this many chunks, that
# is at most 1/16 of the data (chunks of 64 KiB whatever the run made a 2-frame result of
# 41 nodes 0.99 MB for its 30 kB of data; of 1 MiB, 12.2 MB).
CHUNKS_PER_RUN = 16
# With compression a chunk holds one frame: a compressed chunk that is rewritten with more
# frames changes size and moves, and HDF5 may reuse its old place within the same flush,
# before the index pointing there is updated, so a kill during a flush could ruin earlier
# frames. Datasets whose frame is smaller than this stay uncompressed (in chunks of many
# frames): each chunk costs about 60 bytes of index, more than compression saves.
MIN_COMPRESSED_FRAME = 384
METADATA_MARGIN = 1 << 20  # bytes kept allocated beyond the data: metadata, status, close
# Entries per node of a dataset's chunk index (a B-tree, 2 K entries a node), whose nodes are
# allocated whole: HDF5's default K = 32 made every node 2 to 3 kB, and a small file's
# bookkeeping 84 to 100 kB (38 to 48 kB now). 16 entries hold the chunks of a run as planned
# (CHUNKS_PER_RUN) in one node of at most 0.8 kB.
ISTORE_K = 8
# errors of posix_fallocate meaning "not supported here", not "no space"
_UNSUPPORTED = {errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS, getattr(errno, "ENOTSUP", 95)}

RUNNING, COMPLETE, INTERRUPTED, FAILED = "running", "complete", "interrupted", "failed"
# The restart state (rodsim.restart) of the latest frame is written at most once this many
# seconds of wall time, and when the run ends: its ~20 HDF5 operations cost 1.5 ms, more than
# a small frame's whole write (a 1001-frame run took 1.5x as long with one per frame)
RESTART_SECONDS = 1.0


def previous_path(path) -> Path:
    """Where the results a run replaces are kept until it completes: <stem>.prev.h5."""
    path = Path(path)
    return path.with_name(f"{path.stem}.prev{path.suffix or '.h5'}")


def chunk_frames(
    frame_bytes: int, expected_frames: int | None = None, compressed: bool = False
) -> int:
    """Frames per chunk of a frame dataset. Compressed: one. Otherwise at most about
    CHUNK_BYTES (at most 1024 frames, at least one), so appending a frame touches one chunk,
    the cache holds one, and a frame that starts new chunks needs at most that much room per
    dataset; and at most 1/CHUNKS_PER_RUN of the expected frames (rounded up), so that small
    runs get small chunks."""
    if compressed:
        return 1
    per = min(1024, CHUNK_BYTES // max(frame_bytes, 1))
    if expected_frames:
        per = min(per, -(-expected_frames // CHUNKS_PER_RUN))
    return max(1, per)


def is_compressed(frame_bytes: int, compression: str) -> bool:
    """Whether a frame dataset of frame_bytes per frame is compressed (MIN_COMPRESSED_FRAME)."""
    return compression != "none" and frame_bytes >= MIN_COMPRESSED_FRAME


def frame_layout(mesh: Mesh) -> list[tuple[Dataset, int]]:
    """The per-frame datasets of mesh's results file, with their bytes per frame."""
    sizes = sizes_of(mesh)
    return [
        (d, int(np.prod(concrete_shape(d.shape, sizes))) * np.dtype(d.dtype).itemsize)
        for d in FRAME_DATASETS
        if is_present(d, mesh)
    ]


@functools.cache
def _istore_k_setter():
    """HDF5's H5Pset_istore_k, which h5py does not wrap, from the library h5py's own
    extension is linked with (the loader searches an extension's dependencies for its
    symbols); None where it cannot be had."""
    try:
        setter = ctypes.CDLL(h5py.h5p.__file__).H5Pset_istore_k
    except (OSError, AttributeError) as exc:
        log.debug("H5Pset_istore_k not found (%s): HDF5's default chunk index nodes", exc)
        return None
    setter.argtypes = (ctypes.c_int64, ctypes.c_uint)  # hid_t is 64 bits since HDF5 1.10
    setter.restype = ctypes.c_int
    return setter


def _set_istore_k(fcpl, k: int) -> None:
    """Chunk index nodes of 2 k entries in files created with fcpl; where HDF5's function
    cannot be had the default stays (larger small files, nothing else: superblock version 1
    records k, and every HDF5 since 1.6 reads it)."""
    setter = _istore_k_setter()
    if setter is not None and setter(fcpl.id, k) < 0:
        log.debug("H5Pset_istore_k(%d) failed: HDF5's default chunk index nodes", k)


def _crash_safe_file(path: Path, chunk_bytes: int, create: bool = True) -> h5py.File:
    """A new HDF5 file whose metadata and raw data reach the disk only at a flush (see the
    docstring). chunk_bytes: the largest chunk of its frame datasets.

    The raw-data chunk cache of each dataset holds one chunk, the one being filled: frames
    are written once and never read back, so more only costs memory. HDF5 2.0's default,
    8 MiB per dataset, kept the last 8 chunks of every frame dataset until the file closed
    (on a 100-element rod, RSS grew 11 MB every 432 frames, up to about 100 MB); a chunk
    larger than the cache would go to the disk at once, before its flush."""
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST)  # h5py's default
    cache = list(fapl.get_cache())
    cache[2] = chunk_bytes
    fapl.set_cache(*cache)
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)  # h5py's default
    _set_istore_k(fcpl, ISTORE_K)
    if create:
        fid = h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fapl=fapl, fcpl=fcpl)
    else:  # an existing file continued (a restart)
        fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDWR, fapl=fapl)
    f = h5py.File(fid)
    config = f.id.get_mdc_config()
    config.evictions_enabled = False  # needs a fixed cache size
    config.incr_mode = 0  # H5C_incr__off
    config.decr_mode = 0  # H5C_decr__off
    config.flash_incr_mode = 0  # H5C_flash_incr__off
    f.id.set_mdc_config(config)
    return f


def _write_mesh(f: h5py.File, mesh: Mesh) -> None:
    for d in MESH_DATASETS:
        if not is_present(d, mesh):
            continue
        value = getattr(mesh, d.source)
        if isinstance(value, dict):
            f.require_group(d.container)  # readers list the sets: the group even when empty
        named = value.items() if isinstance(value, dict) else [(None, value)]
        for name, data in named:
            ds = f.create_dataset(d.path.format(name=name), data=np.asarray(data, d.dtype))
            ds.attrs["description"] = d.description
            if d.names:
                ds.attrs["names"] = list(getattr(mesh, d.names))


def compression_filters(compression: str) -> dict:
    """h5py's create_dataset keywords for output.compression: none, gzip, gzip:LEVEL (1-9)
    or lzf. The byte shuffle goes with either: it puts the bytes of equal significance of
    the float64s side by side, where the compressors find more repeats (a 301-frame ring:
    0.55 of the data with it, 0.60 without)."""
    name, _, level = compression.partition(":")
    if name == "none":
        return {}
    opts = {"compression": name, "shuffle": True}
    if name == "gzip":
        opts["compression_opts"] = int(level or 4)
    return opts


def _create_frame_dataset(
    f: h5py.File, d: Dataset, sizes: dict, expected_frames: int | None, compression: str
) -> h5py.Dataset:
    shape = concrete_shape(d.shape, sizes)
    frame_bytes = int(np.prod(shape)) * np.dtype(d.dtype).itemsize
    compressed = is_compressed(frame_bytes, compression)
    ds = f.create_dataset(
        d.path,
        shape=(0, *shape),
        maxshape=(None, *shape),
        dtype=d.dtype,
        chunks=(chunk_frames(frame_bytes, expected_frames, compressed), *shape),
        **(compression_filters(compression) if compressed else {}),
    )
    ds.attrs["description"] = d.description
    return ds


def chunk_bound(raw: int, compressed: bool) -> int:
    """File space one chunk of raw bytes can take. Both filters are optional ones, which
    store a chunk raw when it would grow, but the bound does not rely on it: LZF's worst
    case is 33/32 of its input plus a byte, deflate's smaller."""
    return raw + (raw // 32 + 64 if compressed else 0)


class _Appender:
    """One per-frame dataset and what appending a frame to it needs, worked out once: h5py's
    `ds.resize(k + 1); ds[k] = value` took 135 us a dataset (its selection machinery), the
    low-level calls take a fraction (a 1001-frame run of 29 datasets: 3.9 s of writing)."""

    def __init__(self, dataset: h5py.Dataset):
        self.dataset = dataset
        self.shape = dataset.shape[1:]
        self.dtype = dataset.dtype
        self.zeros = np.zeros(self.shape, dtype=self.dtype)
        self.memory = h5py.h5s.create_simple((1, *self.shape))
        self.start = (0,) * len(self.shape)
        self.rows = dataset.chunks[0]
        # file space that starting a new chunk can take (chunks are allocated whole)
        raw = self.dtype.itemsize * int(np.prod(dataset.chunks, dtype=np.int64))
        self.chunk_bytes = chunk_bound(raw, dataset.compression is not None)

    def append(self, k: int, value) -> None:
        """Write value (None: zeros) as row k, the dataset grown to k + 1 rows."""
        data = self.zeros if value is None else np.asarray(value, dtype=self.dtype)
        if data.shape != self.shape:  # a scalar for a model without that field: zeros
            data = np.broadcast_to(data, self.shape)
        data = np.ascontiguousarray(data)
        dsid = self.dataset.id
        dsid.set_extent((k + 1, *self.shape))
        space = dsid.get_space()
        space.select_hyperslab((k, *self.start), (1, *self.shape))
        dsid.write(self.memory, space, data)


def _bytes_for_frame(appenders, k: int) -> int:
    """File space that appending frame k can allocate: a new chunk in every dataset whose
    chunk k starts (chunks are allocated whole; a compressed chunk is written once, whole),
    plus the metadata margin."""
    return sum(a.chunk_bytes for a in appenders if k % a.rows == 0) + METADATA_MARGIN


def _reserve(f: h5py.File, nbytes: int) -> None:
    """Allocate nbytes beyond the end of f's allocated space (OSError ENOSPC, EDQUOT, EFBIG
    when they are not there). Where posix_fallocate is not supported, compare with the free
    space of the filesystem instead (it does not see quotas)."""
    fd = f.id.get_vfd_handle()
    end = f.id.get_filesize()  # HDF5's end of allocation, not the (reserved) file size
    try:
        os.posix_fallocate(fd, end, nbytes)
    except OSError as exc:
        if exc.errno not in _UNSUPPORTED:
            raise
        st = os.fstatvfs(fd)
        if st.f_bavail * st.f_frsize < nbytes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)) from None


def _trim(f: h5py.File) -> None:
    """Cut the unused reservation off an open, flushed results file: its end is HDF5's end
    of allocation (what a close writes after this extends the file as usual)."""
    os.ftruncate(f.id.get_vfd_handle(), f.id.get_filesize())


def _is_complete(path: Path) -> bool:
    """Whether path is a results file whose run completed (or from before run status)."""
    try:
        with h5py.File(path, "r", locking=False) as f:
            return str(f.attrs.get("status", COMPLETE)) == COMPLETE
    except (OSError, KeyError):
        return False


def _now() -> str:
    """Local time with its offset, to the millisecond (ISO 8601)."""
    return datetime.now().astimezone().isoformat(timespec="milliseconds")


class ResultsWriter:
    """Stream frames into a results file.

    ``with ResultsWriter(path, mesh, case_text, title) as w: w.write(frame)`` ends with status
    "complete", or "failed" if an exception leaves the block; ``finish(status, detail)`` sets
    another status. write raises ResourceError (exit 4) when the disk, a quota or a file-size
    limit refuses the frame; the frames before it stay readable.
    """

    def __init__(
        self,
        path,
        mesh: Mesh,
        case_text: str,
        title: str = "",
        overrides=(),
        extra_attrs=None,
        end_requested: float = float("nan"),
        expected_frames: int | None = None,
        compression: str = "none",
        resume: tuple[int, int] | None = None,
    ):
        self.path = Path(path)
        self.previous = previous_path(self.path)
        self.kept_previous = False
        self.dropped_incomplete = False  # an incomplete run's file replaced, not kept
        self.frames = 0
        self.replaced = False
        # the restart state of the latest frame not yet in the file (state, frame), and when
        # one was last written (time.monotonic): at most one a RESTART_SECONDS
        self.pending = None
        self.saved = -math.inf
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".partial", dir=self.path.parent
        )
        os.close(fd)
        share(tmp)
        self.tmp = Path(tmp)
        if resume is not None:
            self._resume(*resume, case_text, overrides, extra_attrs, end_requested)
            return
        try:
            sizes = sizes_of(mesh)
            chunk_bytes = max(
                chunk_frames(b, expected_frames, is_compressed(b, compression)) * b
                for _, b in frame_layout(mesh)
            )
            f = self.file = _crash_safe_file(self.tmp, chunk_bytes)
            f.attrs["rodsim_version"] = __version__
            f.attrs["layout"] = LAYOUT
            f.attrs["layout_minor"] = LAYOUT_MINOR
            f.attrs["case"] = case_text
            f.attrs["title"] = title
            f.attrs["units"] = ""  # the declared unit system (extra_attrs), docs/units.md
            f.attrs["overrides"] = "\n".join(overrides)
            f.attrs["status"] = RUNNING
            f.attrs["status_detail"] = ""
            f.attrs["end_requested"] = float(end_requested)
            f.attrs["started"] = _now()
            f.attrs["finished"] = ""
            f.attrs["host"] = socket.gethostname()
            f.attrs["pid"] = os.getpid()
            for k, v in (extra_attrs or {}).items():
                f.attrs[k] = v
            _write_mesh(f, mesh)
            self.datasets = {
                d: _create_frame_dataset(f, d, sizes, expected_frames, compression)
                for d, _ in frame_layout(mesh)
            }
            self.appenders = {d: _Appender(ds) for d, ds in self.datasets.items()}
            _reserve(f, _bytes_for_frame(self.appenders.values(), 0))
            f.flush()
        except BaseException as exc:  # no temporary left behind, whatever stopped it
            self._abandon()
            if not isinstance(exc, OSError):
                raise
            raise ResourceError(
                f"cannot write the results file: {exc.strerror or exc}", file=str(self.path)
            ) from None

    def _resume(self, keep: int, step: int, case_text, overrides, extra_attrs, end_requested):
        """Continue the results file at self.path (docs/restart.md): a copy of it, its
        first `keep` frames kept and the modes of analysis step `step` and later dropped
        (the run computes them again), is written under the temporary name and put in place
        at the first new frame like a new file (the original kept as <stem>.prev.h5 until
        the run completes), so a restart that fails before its first frame leaves the
        original untouched."""
        try:
            shutil.copyfile(self.path, self.tmp)
            with h5py.File(self.tmp, "r", locking=False) as f:
                chunk_bytes = max(
                    (
                        f[d.path].dtype.itemsize * int(np.prod(f[d.path].chunks))
                        for d in FRAME_DATASETS
                        if d.path in f and f[d.path].chunks
                    ),
                    default=CHUNK_BYTES,
                )
            f = self.file = _crash_safe_file(self.tmp, chunk_bytes, create=False)
            self.datasets = {d: f[d.path] for d in FRAME_DATASETS if d.path in f}
            for ds in self.datasets.values():
                ds.resize(keep, axis=0)
            previous = f.attrs.get("restarts", "")
            when = f"{_now()}: continued from frame {keep - 1}"
            f.attrs["restarts"] = f"{previous}\n{when}" if previous else when
            f.attrs["case"] = case_text
            f.attrs["overrides"] = "\n".join(overrides)
            f.attrs["status"] = RUNNING
            f.attrs["status_detail"] = ""
            f.attrs["end_requested"] = float(end_requested)
            f.attrs["finished"] = ""
            f.attrs["host"] = socket.gethostname()
            f.attrs["pid"] = os.getpid()
            f.attrs["layout_minor"] = max(int(f.attrs.get("layout_minor", 0)), LAYOUT_MINOR)
            for k, v in (extra_attrs or {}).items():
                f.attrs[k] = v
            for name in ("modes", "buckling"):
                if name in f and int(f[name].attrs.get("step", 0)) >= step:
                    del f[name]
            self.appenders = {d: _Appender(ds) for d, ds in self.datasets.items()}
            _reserve(f, _bytes_for_frame(self.appenders.values(), keep))
            f.flush()
        except BaseException as exc:
            self._abandon()
            if not isinstance(exc, OSError):
                raise
            raise ResourceError(
                f"cannot continue the results file: {exc.strerror or exc}", file=str(self.path)
            ) from None
        self.frames = keep

    def _abandon(self) -> None:
        try:
            if getattr(self, "file", None) is not None:
                self.file.close()
        except Exception:  # noqa: BLE001 - the file is being discarded anyway
            pass
        self.file = None
        self.tmp.unlink(missing_ok=True)

    def _safe(self) -> str:
        return f"{self.frames} frame{'s' * (self.frames != 1)} written before are safe" + (
            f"; the previous results are kept in {self.previous.name}" if self.kept_previous else ""
        )

    def write(self, frame: Frame) -> None:
        """Append one frame and flush it to disk."""
        k = self.frames
        f = self.file
        target = self.path if self.replaced else self.tmp
        try:
            _reserve(f, _bytes_for_frame(self.appenders.values(), k))
        except OSError as exc:
            raise ResourceError(
                f"no room for frame {k} ({exc.strerror or exc}); {self._safe()}",
                file=str(self.path),
            ) from None
        try:
            for d, appender in self.appenders.items():
                appender.append(k, getattr(frame, d.source))  # None (no plates): zeros
            f.flush()
        except OSError as exc:
            raise ResourceError(
                f"writing frame {k} of {target} failed ({exc}); {self._safe()}", file=str(self.path)
            ) from None
        if not self.replaced:
            try:
                self._replace()
            except OSError as exc:
                raise ResourceError(
                    f"cannot put the new results in place ({exc})", file=str(self.path)
                ) from None
        self.frames += 1
        if frame.restart is not None:
            self.pending = frame.restart, k
            if time.monotonic() - self.saved >= RESTART_SECONDS:
                self._save_restart()

    def _save_restart(self) -> None:
        """Write the latest frame's restart state into the restart/ slots (docs/restart.md)."""
        if self.pending is None:
            return
        state, k = self.pending
        try:
            restart.write(self.file, state, k)
        except OSError as exc:
            raise ResourceError(
                f"writing the restart state of frame {k} failed ({exc}); {self._safe()}",
                file=str(self.path),
            ) from None
        self.pending, self.saved = None, time.monotonic()

    def write_eigen(self, result, about: str, step: int = 0) -> None:
        """The result of a modal or buckling analysis (rodsim.integrators.modal.Modes or
        Buckling) as the group modes/ or buckling/ (docs/results.md, "Modes" and
        "Buckling"), after the frames."""
        if isinstance(result, Buckling):
            name, descriptions, attrs = "buckling", BUCKLING_DESCRIPTIONS, {}
            data = {"factor": result.factor, "shape": result.shape}
        else:
            name, descriptions = "modes", MODE_DESCRIPTIONS
            attrs = {"symmetric": int(result.symmetric)}
            data = {
                "frequency": result.frequency,
                "eigenvalue": np.column_stack([result.eigenvalue.real, result.eigenvalue.imag]),
                "shape": result.shape,
                "effective_mass": result.effective_mass,
                "rigid": result.rigid.astype(np.int64),
                "damping_ratio": result.damping_ratio,
            }
        f = self.file
        try:
            g = f.require_group(name)
            g.attrs["about"] = about
            g.attrs["load"] = float(result.load)
            g.attrs["step"] = int(step)
            g.attrs["frame"] = self.frames - 1
            for key, value in attrs.items():
                g.attrs[key] = value
            for key, value in data.items():
                ds = g.create_dataset(key, data=value)
                ds.attrs["description"] = descriptions[key]
            f.flush()
        except OSError as exc:
            raise ResourceError(
                f"writing the {name} failed ({exc}); {self._safe()}", file=str(self.path)
            ) from None

    def _replace(self) -> None:
        """Put the new file in place (the open handle follows the rename). The old one is
        kept aside as the previous results, unless it is an incomplete run's file and the
        previous results are complete: then the complete ones stay (never lose a result)."""
        if self.path.exists():
            if (
                self.previous.exists()
                and not _is_complete(self.path)
                and _is_complete(self.previous)
            ):
                self.path.unlink()
                self.dropped_incomplete = True
            else:
                os.replace(self.path, self.previous)
            self.kept_previous = True
        os.replace(self.tmp, self.path)
        self.replaced = True

    def finish(self, status: str, detail: str = "") -> None:
        """Record the final status, close the file and cut off the unused reservation. A
        complete run deletes the previous results; any other keeps them."""
        if self.file is None:
            return
        try:  # the last frame's state, whatever ended the run
            self._save_restart()
        except ResourceError as exc:
            log.warning("%s", exc)
        f, self.file = self.file, None
        try:
            f.attrs["status"] = status
            f.attrs["status_detail"] = detail
            f.attrs["finished"] = _now()
            f.flush()
            _trim(f)
        except OSError as exc:  # the frames stay readable; readers call it incomplete
            log.warning("could not record the status %s in %s: %s", status, self.path, exc)
        try:
            f.close()
        except OSError as exc:
            log.warning("closing %s: %s", self.path, exc)
        if not self.replaced:  # no frame written: an existing results file stays as it was
            self.tmp.unlink(missing_ok=True)
            return
        if status == COMPLETE:
            self.previous.unlink(missing_ok=True)
            self.kept_previous = False

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is None:
            self.finish(COMPLETE)
        else:
            self.finish(FAILED, f"{kind.__name__}: {exc}")
