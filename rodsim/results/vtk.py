"""ParaView series (docs/results.md, "The ParaView series"): ``<stem>.pvd`` and one ``.vtu`` per
frame in ``<stem>_vtk/``.

Rods are line cells, plates quad and triangle cells after them, in the order of the results
file. Point data: displacement, velocity, angular_velocity, reaction_force, reaction_moment,
d1, d2, d3. Cell data: rods force, moment (section frame), strain, curvature; plates
membrane, bending, shear (element basis); both: von_mises_max, utilisation (docs/stresses.md;
NaN where no stress is recovered). Every cell array covers all cells (zeros on the cells of
the other kind), so ParaView shows one array per name. A term that joins pairs of nodes (its
mesh dataset "mesh/<term>" of shape (L, 2), the connectors' `mesh/connectors`) adds a line
block after them, one cell per pair, with its per-frame datasets "<term>/<field>" as cell
data "<term>_<field>" (zeros on the other cells; the other arrays zero, or NaN for the
stresses, on its cells). A ragged dataset of node pairs (R, 2) int64 of a term adds a line
block of this frame's pairs (none: no block), with its group's other ragged datasets of as
many rows as cell data "<group>_<field>" (every frame has the arrays). A term's per-frame
dataset no cells show is the frame's field data "<group>_<field>" (rows, width). An array
whose dataset `output.fields` leaves out (an Unwritten in the Frame) is not in the series
either. The .pvd index is rewritten atomically at most once a second and at the end, so an
interrupted run leaves a series ParaView can open.

rodsim moves and deletes only the files it writes: the frame files ``<stem>_NNNNNN.vtu``, its
``.reserve`` and ``.partial`` files and its staging folder; any other file in ``<stem>_vtk/``
stays. An existing ``.pvd`` is replaced only if rodsim wrote it (is_rodsim_pvd).
"""

import errno
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path
from xml.sax.saxutils import quoteattr

import meshio
import numpy as np

from rodsim.errors import CaseError, ResourceError
from rodsim.results import guard as output_guard
from rodsim.results.frame import Frame, Unwritten, share
from rodsim.results.pvd import (
    MARKER,
    frame_name,
    is_rodsim_pvd,  # noqa: F401  (documented here before)
)
from rodsim.results.vtk_cells import (
    add_field_data,
    cell_blocks,
    cell_data,
    field_data,
    link_data,
    links,
    or_zeros,
    ragged_links,
)

log = logging.getLogger(__name__)

INDEX_BYTES_PER_FRAME = 160  # a DataSet line of the .pvd

_WRITER = re.compile(r"<!-- written by host (\S*) pid (\d+) -->")


def _index_text(entries, folder: str) -> str:
    lines = [
        '<?xml version="1.0"?>',
        MARKER,
        # which process wrote the frames: a restart trusts the frame files of the run that
        # wrote its results file only (SeriesWriter.stage)
        f"<!-- written by host {socket.gethostname()} pid {os.getpid()} -->",
        '<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">',
        "  <Collection>",
    ]
    for t, name in entries:
        ref = quoteattr(f"{folder}/{name}")
        lines.append(f'    <DataSet timestep="{float(t)!r}" group="" part="0" file={ref}/>')
    lines += ["  </Collection>", "</VTKFile>", ""]
    return "\n".join(lines)


def refuse_foreign_index(pvd, key: str, advice: str) -> None:
    """CaseError (before anything is written) if the index <stem>.pvd or the previous
    series' <stem>.prev.pvd exists and rodsim did not write it: a series would replace it."""
    for path in (Path(pvd), previous_series(pvd)[0]):
        if path.is_symlink() and not path.exists():  # a dangling link: not rodsim's either
            raise CaseError(f"{path} is a link to nothing: {advice}", file=str(path), key=key)
        output_guard.check(path, "series", option=key, advice=advice)


def frame_files(folder: Path, stem: str) -> list[Path]:
    """The frame files <stem>_NNNNNN.vtu of a series folder (none if it is not a folder)."""
    if not folder.is_dir():
        return []
    name = frame_name(stem)
    return sorted(p for p in folder.iterdir() if name.fullmatch(p.name) and not p.is_dir())


def _remove_own(folder: Path, stem: str, frames: bool = True) -> None:
    """Delete what rodsim writes in a series folder: its frame files (frames), .reserve and
    .partial files; then the folder if that left it empty. Any other file stays."""
    if not folder.is_dir():
        return
    partial = re.compile(rf"\.{frame_name(stem).pattern}\.partial")
    for p in folder.iterdir():
        own = p.name == ".reserve" or partial.fullmatch(p.name)
        if (own or (frames and frame_name(stem).fullmatch(p.name))) and not p.is_dir():
            p.unlink(missing_ok=True)
    if frames and not any(folder.iterdir()):
        folder.rmdir()


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
    """Move an existing series aside (one generation): its frame files into <stem>.prev_vtk/,
    its index rewritten there to point at them. Other files in the folder stay where they
    are; of the generation before, only rodsim's files are deleted."""
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder")
    _remove_own(folder, pvd.stem, frames=False)  # a killed run's .reserve and .partial files
    frames = frame_files(folder, pvd.stem)
    if not pvd.exists() and not frames:
        return
    prev_pvd, prev_folder = previous_series(pvd)
    prev_pvd.unlink(missing_ok=True)
    _remove_own(prev_folder, pvd.stem)
    if frames:
        prev_folder.mkdir(exist_ok=True)
        for p in frames:
            os.replace(p, prev_folder / p.name)
    if pvd.exists():
        try:
            entries = [(t, p.name) for t, p in read_pvd(pvd)]
        except Exception:  # noqa: BLE001 - an index rodsim cannot read: list no frame
            entries = []
        _write_atomic(prev_pvd, _index_text(entries, prev_folder.name))
        pvd.unlink()


def _series_times(f, n: int) -> np.ndarray:
    """The index times of a results file's first n frames, as SeriesWriter.write takes them
    from a Frame: total_time where the file has it (finite), else time."""
    t = np.asarray(f["time"][:n], dtype=float)
    if "total_time" in f:
        total = np.asarray(f["total_time"][:n], dtype=float)
        t = np.where(np.isfinite(total), total, t)
    return t


class SeriesWriter:
    """Stream frames into a ParaView series next to ``pvd`` (a path ending in .pvd).
    write and close raise ResourceError when a write fails (the .vtu files written before
    and an index listing exactly them stay). CaseError at once (nothing written) if an
    existing <stem>.pvd or <stem>.prev.pvd is not a rodsim series (key: the option naming it).

    keep, results: a restart (docs/restart.md) whose series starts with the first `keep`
    frames of the results file `results`; call stage() before that file is replaced."""

    def __init__(
        self,
        pvd,
        points: np.ndarray,
        conn: np.ndarray,
        plates=None,
        expected_frames: int = 1000,
        keep: int = 0,
        results=None,
        key: str = "-o",
        advice: str = "move it away or give another -o",
    ):
        self.pvd = Path(pvd)
        self.folder = self.pvd.with_name(self.pvd.stem + "_vtk")
        self.points = np.asarray(points, dtype=float)
        conn = np.asarray(conn, dtype=np.int64).reshape(-1, 2)
        plates = None if plates is None else np.asarray(plates, dtype=np.int64).reshape(-1, 4)
        self.n_rods = len(conn)
        self.n_plates = 0 if plates is None else len(plates)
        self.cells = cell_blocks(conn, plates)
        self.pairs: dict | None = None  # term name -> (L, 2): set by the first frame
        self.entries: list[tuple[float, str]] = []
        self.indexed = 0.0
        self.closed = False
        self.started = False
        self.expected_frames = expected_frames
        self.keep = keep  # a restart: the results file's first frames go on in this series
        self.results = None if results is None else Path(results)
        self.staged: list[tuple[float, str]] | None = None  # (time, name) in self.stage_folder
        self.stage_folder = self.folder.with_name(f".{self.folder.name}.restart")
        # True: an existing series belongs to results that are not kept (an incomplete run
        # replaced while complete previous results stay): delete it instead of keeping it
        self.discard_existing = False
        self.reserve = self.folder / ".reserve"
        refuse_foreign_index(self.pvd, key, advice)
        for folder in (self.folder, previous_series(self.pvd)[1]):
            if folder.is_symlink():  # its frames would be moved and deleted in the folder it names
                raise CaseError(
                    f"{folder} is a link: rodsim writes a series' frames only into a folder of "
                    f"its own; {advice}",
                    key=key,
                )
        if self.folder.exists() and not self.folder.is_dir():  # refused before any frame
            raise ResourceError(
                f"{self.folder.name} is not a folder: cannot write the ParaView series",
                file=str(self.pvd),
            )

    def _start(self) -> None:
        """At the first frame: the earlier series aside, the folder, the index's reserve."""
        staged = self.stage()
        try:
            if self.discard_existing:
                self.pvd.unlink(missing_ok=True)
                for p in frame_files(self.folder, self.pvd.stem):
                    p.unlink()
            _keep_previous(self.pvd, self.folder)
            self.folder.mkdir(parents=True, exist_ok=True)
            for t, name in staged:
                os.replace(self.stage_folder / name, self.folder / name)
                self.entries.append((t, name))
            _remove_own(self.stage_folder, self.pvd.stem)
            _reserve_file(self.reserve, 65536 + INDEX_BYTES_PER_FRAME * self.expected_frames)
        except OSError as exc:
            raise ResourceError(
                f"cannot write the ParaView series: {exc.strerror or exc}", file=str(self.pvd)
            ) from None
        self.started = True

    def stage(self) -> list[tuple[float, str]]:
        """A restart's kept frames, one .vtu per frame of the results file's first `keep`,
        made ready in a staging folder beside the series (the series itself untouched until
        the first new frame): [(time, name)]. The times are the results file's. A frame file
        of the existing series is linked (else copied) when the run that wrote the results
        file wrote it (its index names that process: the files are then that file's frames,
        written atomically); a frame without one (a run killed between the results file's
        frame and its .vtu, a series deleted or never written) is written from the results
        file, which holds every frame. The index is not read for the frames: after SIGKILL it
        lags by up to a second."""
        if self.staged is not None:
            return self.staged
        self.staged = []
        if not self.keep:
            return self.staged
        from rodsim.results.reader import open_results, read_frame

        stem = self.pvd.stem
        try:
            _remove_own(self.stage_folder, stem)  # a killed restart's leftovers
            self.stage_folder.mkdir(exist_ok=True)
            with open_results(self.results) as f:
                times = _series_times(f, self.keep)
                ours = self._wrote_frames_of(f)
                frames0 = f["mesh/frames"][()]
                for k, t in enumerate(times):
                    name = f"{stem}_{k:06d}.vtu"
                    source, target = self.folder / name, self.stage_folder / name
                    if ours and source.is_file() and not source.is_symlink():
                        try:
                            os.link(source, target)
                        except OSError:
                            shutil.copyfile(source, target)
                    else:
                        self._write_vtu(read_frame(f, k, frames0), target)
                    self.staged.append((float(t), name))
        except OSError as exc:
            raise ResourceError(
                f"cannot stage the kept frames of the ParaView series: {exc.strerror or exc}",
                file=str(self.pvd),
            ) from None
        return self.staged

    def _wrote_frames_of(self, f) -> bool:
        """Whether the existing series' frame files were written by the run that wrote the
        results file f: its index names that run's host and pid (the index is written at the
        run's first frame, after the frames of any other run were moved aside)."""
        try:
            with open(self.pvd, encoding="utf-8", errors="replace") as text:
                head = text.read(4096)
        except OSError:
            return False
        found = _WRITER.search(head)
        host, pid = f.attrs.get("host", ""), f.attrs.get("pid", -1)
        host = host.decode() if isinstance(host, bytes) else str(host)
        return bool(found) and found.group(1) == host and int(found.group(2)) == int(pid)

    def _fail(self, what: Path, exc: OSError):
        n = len(self.entries)
        return ResourceError(
            f"writing {what.name} failed ({exc.strerror or exc}); the "
            f"{n} frame{'s' * (n != 1)} of the ParaView series written before "
            "are safe",
            file=str(what),
        )

    def _write_vtu(self, frame: Frame, path: Path) -> None:
        """frame as a .vtu at path, written under a temporary name and renamed (OSError)."""
        d = frame.directors
        point_data = {
            "displacement": frame.position - self.points,
            "velocity": frame.velocity,
            "angular_velocity": frame.angular_velocity,
            "reaction_force": or_zeros(frame.reaction_force, frame.position),
            "reaction_moment": or_zeros(frame.reaction_moment, frame.position),
            "d1": np.ascontiguousarray(d[:, :, 0]),
            "d2": np.ascontiguousarray(d[:, :, 1]),
            "d3": np.ascontiguousarray(d[:, :, 2]),
        }
        point_data = {k: v for k, v in point_data.items() if not isinstance(v, Unwritten)}
        if self.pairs is None:  # the linking terms' cells, fixed by the first frame
            self.pairs = links(frame)
            self.cells += [("line", p) for p in self.pairs.values()]
        ragged = ragged_links(frame)  # this frame's pairs: a block where there are any
        cells = self.cells + [("line", p) for p in ragged.values() if len(p)]
        sets, shown = link_data(frame, self.pairs, ragged)
        mesh = meshio.Mesh(
            frame.position,
            cells,
            point_data=point_data,
            cell_data=cell_data(frame, self.n_rods, self.n_plates, cells, sets),
        )
        tmp = path.with_name(f".{path.name}.partial")
        try:
            mesh.write(tmp, file_format="vtu", binary=True, compression="zlib")
            add_field_data(tmp, field_data(frame, shown))
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def write(self, frame: Frame) -> None:
        if not self.started:
            self._start()
        name = f"{self.pvd.stem}_{len(self.entries):06d}.vtu"
        try:
            self._write_vtu(frame, self.folder / name)
        except OSError as exc:
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
        the previous run's series (its index and frame files; other files stay). Nothing is
        written if no frame was (an earlier series stays as it was; a restart's staged
        frames go), except for a restart that completed with no frame left to run (its state
        was the results file's last frame): its series is then the kept frames, exactly."""
        if self.closed:
            return
        if not self.started and complete and self.keep and self.stage():
            self._start()  # the lagging or damaged series of a killed run is mended
        self.closed = True
        if not self.started:
            try:
                _remove_own(self.stage_folder, self.pvd.stem)
            except OSError as exc:
                log.warning("could not delete %s: %s", self.stage_folder, exc)
            return
        self.reserve.unlink(missing_ok=True)
        self._write_index()
        if complete:
            prev_pvd, prev_folder = previous_series(self.pvd)
            try:
                prev_pvd.unlink(missing_ok=True)
                _remove_own(prev_folder, self.pvd.stem)
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
