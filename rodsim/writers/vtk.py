"""ParaView series (docs/results.md, "The ParaView series"): ``<stem>.pvd`` and one ``.vtu`` per
frame in
``<stem>_vtk/``.

Rods are line cells, plates quad and triangle cells after them, in the order of the results
file. Point data: displacement, velocity, angular_velocity, reaction_force, reaction_moment,
d1, d2, d3. Cell data: rods force, moment (section frame), strain, curvature; plates
membrane, bending, shear (element basis); both: von_mises_max, utilisation (docs/stresses.md;
NaN where no stress is recovered). Every cell array covers all cells (zeros on the cells of
the other kind), so ParaView shows one array per name. An array whose dataset
`output.fields` leaves out (an Unwritten in the Frame) is not in the series either. The
.pvd index is rewritten atomically at most once a second and at the end, so an interrupted
run leaves a series ParaView can open.
"""

import errno
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import quoteattr

import meshio
import numpy as np

from rodsim.errors import ResourceError
from rodsim.writers.frame import Frame, Unwritten, share

log = logging.getLogger(__name__)

INDEX_BYTES_PER_FRAME = 160  # a DataSet line of the .pvd

ROD_CELL_DATA = {"force": 3, "moment": 3, "strain": 3, "curvature": 3}  # name -> width
PLATE_CELL_DATA = {"membrane": 3, "bending": 3, "shear": 2}
STRESS_CELL_DATA = ("von_mises_max", "utilisation")  # rod_<name> and plate_<name> of a Frame


def _or_zeros(a, like):
    return np.zeros_like(like) if a is None else a


def _cell_blocks(conn: np.ndarray, plates) -> list[tuple[str, np.ndarray]]:
    """meshio cell blocks: the rods as one line block (kept even when empty for a rod-only
    mesh, as before plates existed), then the plates as runs of quads and triangles in their
    own order, so cell k of the plates is plate k of the results file."""
    blocks = [("line", conn)] if len(conn) or plates is None or not len(plates) else []
    if plates is None or not len(plates):
        return blocks
    tri = plates[:, 3] == plates[:, 2]
    starts = np.flatnonzero(np.diff(tri.astype(np.int8), prepend=2))
    for a, b in zip(starts, [*starts[1:], len(plates)], strict=True):
        blocks.append(("triangle", plates[a:b, :3]) if tri[a] else ("quad", plates[a:b]))
    return blocks


def _split(values: np.ndarray, blocks: list) -> list[np.ndarray]:
    """Per-block pieces of an array over all cells (in block order)."""
    ends = np.cumsum([len(data) for _, data in blocks])[:-1]
    return np.split(values, ends)


def _cell_data(frame: Frame, n_rods: int, n_plates: int, blocks: list) -> dict:
    """name -> per-block arrays; each field on its own cells, zeros of its width elsewhere."""
    out = {}
    for name, width in ROD_CELL_DATA.items():
        if isinstance(getattr(frame, name), Unwritten):
            continue
        rods = _or_zeros(getattr(frame, name), np.zeros((n_rods, width)))
        out[name] = np.concatenate([rods, np.zeros((n_plates, width))]) if n_plates else rods
    for name, width in PLATE_CELL_DATA.items():
        if isinstance(getattr(frame, f"plate_{name}"), Unwritten):
            continue
        plates = _or_zeros(getattr(frame, f"plate_{name}"), np.zeros((n_plates, width)))
        if n_plates:
            out[name] = np.concatenate([np.zeros((n_rods, width)), plates])
    for name in STRESS_CELL_DATA:  # rods and plates in one array, NaN where not recovered
        rods, plates = (
            None if isinstance(v, Unwritten) else v
            for v in (getattr(frame, f"rod_{name}"), getattr(frame, f"plate_{name}"))
        )
        if rods is None and plates is None:
            continue
        rods = np.full(n_rods, np.nan) if rods is None else rods
        out[name] = np.concatenate([rods, np.full(n_plates, np.nan) if plates is None else plates])
    if not n_plates:  # rod-only: one block, the arrays as they are (files as before plates)
        return {name: [values] for name, values in out.items()}
    return {name: _split(values, blocks) for name, values in out.items()}


def _index_text(entries, folder: str) -> str:
    lines = [
        '<?xml version="1.0"?>',
        '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
        "  <Collection>",
    ]
    for t, name in entries:
        ref = quoteattr(f"{folder}/{name}")
        lines.append(f'    <DataSet timestep="{float(t)!r}" group="" part="0" file={ref}/>')
    lines += ["  </Collection>", "</VTKFile>", ""]
    return "\n".join(lines)


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        share(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _reserve_file(path: Path, nbytes: int) -> None:
    """A file holding nbytes of disk, given up at the end to make room for the final index
    (zeros written where posix_fallocate is not supported)."""
    with open(path, "wb") as f:
        try:
            os.posix_fallocate(f.fileno(), 0, nbytes)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            f.write(bytes(nbytes))


def previous_series(pvd) -> tuple[Path, Path]:
    """(index, folder) where the series of an earlier run is kept while a new run writes."""
    pvd = Path(pvd)
    return pvd.with_name(pvd.stem + ".prev.pvd"), pvd.with_name(pvd.stem + ".prev_vtk")


def _keep_previous(pvd: Path, folder: Path) -> None:
    """Move an existing series aside (one generation), its index pointing at the new folder."""
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder")
    if not pvd.exists() and not folder.exists():
        return
    prev_pvd, prev_folder = previous_series(pvd)
    prev_pvd.unlink(missing_ok=True)
    if prev_folder.exists():
        shutil.rmtree(prev_folder)
    if folder.exists():
        os.replace(folder, prev_folder)
    if pvd.exists():
        try:
            entries = [(t, p.name) for t, p in read_pvd(pvd)]
        except Exception:  # noqa: BLE001 - not an index rodsim can read: drop it
            entries = []
        _write_atomic(prev_pvd, _index_text(entries, prev_folder.name))
        pvd.unlink()


class SeriesWriter:
    """Stream frames into a ParaView series next to ``pvd`` (a path ending in .pvd).
    write and close raise ResourceError when a write fails (the .vtu files written before
    and an index listing exactly them stay)."""

    def __init__(
        self,
        pvd,
        points: np.ndarray,
        conn: np.ndarray,
        plates=None,
        expected_frames: int = 1000,
        keep: int = 0,
    ):
        self.pvd = Path(pvd)
        self.folder = self.pvd.with_name(self.pvd.stem + "_vtk")
        self.points = np.asarray(points, dtype=float)
        conn = np.asarray(conn, dtype=np.int64).reshape(-1, 2)
        plates = None if plates is None else np.asarray(plates, dtype=np.int64).reshape(-1, 4)
        self.n_rods = len(conn)
        self.n_plates = 0 if plates is None else len(plates)
        self.cells = _cell_blocks(conn, plates)
        self.entries: list[tuple[float, str]] = []
        self.indexed = 0.0
        self.closed = False
        self.started = False
        self.expected_frames = expected_frames
        self.keep = keep  # a restart: the earlier series' first frames go on in this one
        # True: an existing series belongs to results that are not kept (an incomplete run
        # replaced while complete previous results stay): delete it instead of keeping it
        self.discard_existing = False
        self.reserve = self.folder / ".reserve"
        if self.folder.exists() and not self.folder.is_dir():  # refused before any frame
            raise ResourceError(
                f"{self.folder.name} is not a folder: cannot write the ParaView series",
                file=str(self.pvd),
            )

    def _start(self) -> None:
        """At the first frame: the earlier series aside, the folder, the index's reserve."""
        try:
            staged = self._stage_kept() if self.keep else []
            if self.discard_existing:
                self.pvd.unlink(missing_ok=True)
                if self.folder.is_dir():
                    shutil.rmtree(self.folder)
            _keep_previous(self.pvd, self.folder)
            self.folder.mkdir(parents=True)
            for t, path in staged:
                os.replace(path, self.folder / path.name)
                self.entries.append((t, path.name))
            if staged:
                staged[0][1].parent.rmdir()
            _reserve_file(self.reserve, 65536 + INDEX_BYTES_PER_FRAME * self.expected_frames)
        except OSError as exc:
            raise ResourceError(
                f"cannot write the ParaView series: {exc.strerror or exc}", file=str(self.pvd)
            ) from None
        self.started = True

    def _stage_kept(self) -> list:
        """The first `keep` frames of the existing series (a run continued from a restart
        state, docs/restart.md) linked (else copied) aside before that series is moved or
        deleted: [(time, staged path)]."""
        try:
            entries = read_pvd(self.pvd)[: self.keep]
        except Exception as exc:  # noqa: BLE001 - no index rodsim can read: none to carry
            entries = []
            log.debug("no earlier series to carry on (%s)", exc)
        stage = self.folder.with_name(f".{self.folder.name}.restart")
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir()
        staged = []
        for t, path in entries:
            if not path.is_file():
                break
            target = stage / path.name
            try:
                os.link(path, target)
            except OSError:
                shutil.copyfile(path, target)
            staged.append((t, target))
        if len(staged) < self.keep:
            log.warning(
                "the earlier ParaView series held %d of the %d frames kept; the series goes on "
                "from there (the results file holds them all)",
                len(staged),
                self.keep,
            )
        if not staged:
            stage.rmdir()
        return staged

    def _fail(self, what: Path, exc: OSError):
        n = len(self.entries)
        return ResourceError(
            f"writing {what.name} failed ({exc.strerror or exc}); the "
            f"{n} frame{'s' * (n != 1)} of the ParaView series written before "
            "are safe",
            file=str(what),
        )

    def write(self, frame: Frame) -> None:
        if not self.started:
            self._start()
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
        point_data = {k: v for k, v in point_data.items() if not isinstance(v, Unwritten)}
        cell_data = _cell_data(frame, self.n_rods, self.n_plates, self.cells)
        mesh = meshio.Mesh(frame.position, self.cells, point_data=point_data, cell_data=cell_data)
        tmp = self.folder / f".{name}.partial"
        try:
            mesh.write(tmp, file_format="vtu", binary=True, compression="zlib")
            os.replace(tmp, self.folder / name)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise self._fail(self.folder / name, exc) from None
        # the time since the start of the first analysis step: increasing over the steps
        t = frame.total_time if np.isfinite(frame.total_time) else frame.time
        self.entries.append((t, name))
        # rewriting the whole index per frame is quadratic in the frame count: at most once a
        # second (and at close), so an interrupted run's index lags by at most a second
        now = time.monotonic()
        if now - self.indexed >= 1.0:
            self._write_index()
            self.indexed = now

    def _write_index(self) -> None:
        try:
            _write_atomic(self.pvd, _index_text(self.entries, self.folder.name))
        except OSError as exc:
            raise self._fail(self.pvd, exc) from None

    def close(self, complete: bool = True) -> None:
        """Write the final index (in the reserve's room) and, if the run completed, delete
        the previous run's series. Nothing is written if no frame was (an earlier series
        stays as it was)."""
        if self.closed:
            return
        self.closed = True
        if not self.started:
            return
        self.reserve.unlink(missing_ok=True)
        self._write_index()
        if complete:
            prev_pvd, prev_folder = previous_series(self.pvd)
            try:
                prev_pvd.unlink(missing_ok=True)
                if prev_folder.is_dir():
                    shutil.rmtree(prev_folder)
            except OSError as exc:  # the new series is complete: only a leftover remains
                log.warning("could not delete the previous series %s: %s", prev_pvd, exc)

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(complete=kind is None)


def read_pvd(pvd) -> list[tuple[float, Path]]:
    """(time, vtu path) entries of a .pvd file."""
    import xml.etree.ElementTree as ET

    pvd = Path(pvd)
    root = ET.parse(pvd).getroot()
    return [(float(d.get("timestep")), pvd.parent / d.get("file")) for d in root.iter("DataSet")]
