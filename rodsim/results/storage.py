"""The HDF5 mechanics of a results file (docs/results.md "Crash safety" and "File size"): the
crash-safe file, the chunks of the per-frame datasets, appending a frame to them, and the disk
space reserved ahead of every frame. rodsim.results.writer writes results files with them.

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

Ragged datasets (rodsim.results.dataset): the flat rows grow by the frame's rows and their
<path>_end by one entry, in the same flush; a kill during the flush can leave the end without
its rows or the rows without their end, and the readers count a frame only where both are
there (rodsim.results.reader.count_v1). Their rows are never compressed: a chunk of rows is
filled over many frames, and a compressed chunk rewritten may move (MIN_COMPRESSED_FRAME).
"""

import ctypes
import errno
import functools
import logging
import os
from pathlib import Path

import h5py
import numpy as np

from rodsim.mesh.assemble import Mesh
from rodsim.results.layout import (
    FRAME_DATASETS,
    FRAME_END_ATTR,
    Dataset,
    concrete_shape,
    is_present,
    sizes_of,
)

log = logging.getLogger(__name__)

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


def crash_safe_file(path: Path, chunk_bytes: int, create: bool = True) -> h5py.File:
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


def create_frame_dataset(
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


class Appender:
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

    def new_bytes(self, k: int, value=None) -> int:
        """File space that appending row k can allocate: a new chunk where one starts."""
        return self.chunk_bytes if k % self.rows == 0 else 0

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


def create_ragged_datasets(
    f: h5py.File, d: Dataset, sizes: dict, expected_frames: int | None, first_rows: int
) -> tuple[h5py.Dataset, h5py.Dataset]:
    """A ragged dataset's flat rows and its <path>_end (rodsim.results.dataset). Chunks of
    rows sized as a frame dataset's with the first frame's rows as a frame, within the
    file's raw-data chunk cache (a larger chunk would reach the disk before its flush);
    the ends chunked as every per-frame scalar."""
    row = concrete_shape(d.shape[1:], sizes)
    row_bytes = max(int(np.prod(row)) * np.dtype(d.dtype).itemsize, 1)
    per_frame = max(first_rows, 1)
    cache = f.id.get_access_plist().get_cache()[2]
    rows = chunk_frames(row_bytes * per_frame, expected_frames) * per_frame
    rows = max(1, min(rows, CHUNK_BYTES // row_bytes, cache // row_bytes))
    data = f.create_dataset(
        d.path, shape=(0, *row), maxshape=(None, *row), dtype=d.dtype, chunks=(rows, *row)
    )
    data.attrs["description"] = d.description
    data.attrs[FRAME_END_ATTR] = d.end_path
    end = f.create_dataset(
        d.end_path,
        shape=(0,),
        maxshape=(None,),
        dtype="i8",
        chunks=(chunk_frames(8, expected_frames),),
    )
    end.attrs["description"] = (
        f"the end of each frame's rows in {d.path}: frame k's are rows end[k-1] to end[k] (from 0)"
    )
    return data, end


class RaggedAppender:
    """A ragged dataset's rows and ends (rodsim.results.dataset): appending frame k writes its
    rows after those of the frames before (none: nothing) and their end as entry k."""

    def __init__(self, data: h5py.Dataset, end: h5py.Dataset):
        self.dataset = data
        self.row = data.shape[1:]
        self.dtype = data.dtype
        self.ends = Appender(end)
        # a continued file (a restart) ends where its kept frames end
        self.total = int(end[end.shape[0] - 1]) if end.shape[0] else 0
        self.rows = data.chunks[0]
        raw = self.dtype.itemsize * int(np.prod(data.chunks, dtype=np.int64))
        self.chunk_bytes = chunk_bound(raw, False)

    def _rows(self, value) -> np.ndarray:
        if value is None:
            return np.zeros((0, *self.row), dtype=self.dtype)
        data = np.asarray(value, dtype=self.dtype)
        if data.shape[1:] != self.row or data.ndim != len(self.row) + 1:
            raise ValueError(
                f"{self.dataset.name}: a frame's rows of shape {data.shape}, rows of "
                f"{self.row} written before"
            )
        return np.ascontiguousarray(data)

    def new_bytes(self, k: int, value=None) -> int:
        """File space that appending frame k with rows value can allocate: the chunks its
        rows start, and the end's."""
        n = len(self._rows(value))
        started = -(-(self.total + n) // self.rows) - -(-self.total // self.rows)
        return started * self.chunk_bytes + self.ends.new_bytes(k)

    def append(self, k: int, value) -> None:
        """Write value's rows (None: none) after the rows so far, and their end as entry k."""
        data = self._rows(value)
        n = len(data)
        if n:
            dsid = self.dataset.id
            dsid.set_extent((self.total + n, *self.row))
            space = dsid.get_space()
            space.select_hyperslab((self.total, *(0,) * len(self.row)), (n, *self.row))
            dsid.write(h5py.h5s.create_simple((n, *self.row)), space, data)
        self.total += n
        self.ends.append(k, self.total)


def appender(f: h5py.File, d: Dataset):
    """The appender of per-frame dataset d of f: an Appender, or a ragged one's."""
    if d.ragged:
        return RaggedAppender(f[d.path], f[d.end_path])
    return Appender(f[d.path])


def resize_frames(f: h5py.File, d: Dataset, keep: int) -> None:
    """Cut per-frame dataset d of f to its first `keep` frames (a restart)."""
    if not d.ragged:
        f[d.path].resize(keep, axis=0)
        return
    end = f[d.end_path]
    end.resize(keep, axis=0)
    f[d.path].resize(int(end[keep - 1]) if keep else 0, axis=0)


def bytes_for_frame(appenders, k: int, values=None) -> int:
    """File space that appending frame k (values: each appender's, in order; None: not yet
    known, a ragged dataset counted with no rows) can allocate: a new chunk in every dataset
    whose chunk k starts (chunks are allocated whole; a compressed chunk is written once,
    whole), the chunks a ragged dataset's rows start, plus the metadata margin."""
    appenders = list(appenders)
    values = [None] * len(appenders) if values is None else list(values)
    return sum(a.new_bytes(k, v) for a, v in zip(appenders, values, strict=True)) + (
        METADATA_MARGIN
    )


def reserve(f: h5py.File, nbytes: int) -> None:
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


def trim(f: h5py.File) -> None:
    """Cut the unused reservation off an open, flushed results file: its end is HDF5's end
    of allocation (what a close writes after this extends the file as usual)."""
    os.ftruncate(f.id.get_vfd_handle(), f.id.get_filesize())
