"""Writing a results file (docs/results.md "Crash safety", docs/running.md): frames streamed
under the layout of rodsim.results.layout, with the run's status, the previous results kept
until the run completes, and disk space reserved ahead of every frame.

Crash safety, disk space and file size: rodsim.results.storage, which holds the HDF5
mechanics (the crash-safe file, chunks, appending, space reservation).

The new file is written under a temporary name next to the target and renamed onto it when
the first frame is written; an existing results file is moved to ``<stem>.prev.h5`` then
(one generation: if that file is an incomplete run's and the ``.prev.h5`` a complete run's,
the complete one stays and the incomplete one goes) and deleted only when the new run
completes.
"""

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

from rodsim import __version__
from rodsim.errors import CaseError, ResourceError
from rodsim.mesh.assemble import Mesh
from rodsim.results import restart, storage
from rodsim.results.frame import Frame, share
from rodsim.results.layout import (
    CHOOSABLE,
    FIELDS_ATTR,
    FRAME_DATASETS,
    LAYOUT,
    LAYOUT_MINOR,
    MESH_DATASETS,
    POINT_STRESSES_ATTR,
    TERM_FRAME_DATASETS,
    TERM_MESH_DATASETS,
    concrete_shape,
    is_chosen,
    is_present,
    sizes_of,
    written_fields,
)
from rodsim.results.modes import Buckling

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

RUNNING, COMPLETE, INTERRUPTED, FAILED = "running", "complete", "interrupted", "failed"
# The restart state (rodsim.results.restart) of the latest frame is written at most once this many
# seconds of wall time, and when the run ends: its ~20 HDF5 operations cost 1.5 ms, more than
# a small frame's whole write (a 1001-frame run took 1.5x as long with one per frame)
RESTART_SECONDS = 1.0


def previous_path(path) -> Path:
    """Where the results a run replaces are kept until it completes: <stem>.prev.h5."""
    path = Path(path)
    return path.with_name(f"{path.stem}.prev{path.suffix or '.h5'}")


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


def frame_datasets(mesh: Mesh, chosen: frozenset | None = None) -> list:
    """(Dataset, bytes per frame) of the per-frame datasets a run writes: those of the mesh
    (rodsim.results.storage.frame_layout) that output.fields keeps (chosen:
    rodsim.results.layout.chosen_datasets; None: all)."""
    return [(d, b) for d, b in storage.frame_layout(mesh) if is_chosen(d, chosen)]


def _value(frame: Frame, d):
    """What frame holds for dataset d: a Frame field, or a term's (Frame.terms)."""
    return frame.terms.get(d.path) if d.term else getattr(frame, d.source)


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
        fields: frozenset | None = None,
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
        # the choosable datasets the run writes (output.fields), recorded in the file
        self.fields = frozenset(CHOOSABLE) if fields is None else frozenset(fields)
        # the terms' own datasets are made at the first frame, which holds them (Frame.terms):
        # the mesh does not know the terms (a continued file has them already)
        self.terms_made = resume is not None
        self.expected_frames, self.compression = expected_frames, compression
        if resume is not None:
            self._resume(*resume, case_text, overrides, extra_attrs, end_requested)
            return
        try:
            sizes = sizes_of(mesh)
            layout = frame_datasets(mesh, self.fields)
            chunk_bytes = max(
                storage.chunk_frames(b, expected_frames, storage.is_compressed(b, compression)) * b
                for _, b in layout
            )
            f = self.file = storage.crash_safe_file(self.tmp, chunk_bytes)
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
            f.attrs[FIELDS_ATTR] = [p for p in CHOOSABLE if p in self.fields]  # table order
            # output.stresses: points, which the readers need to tell a per-point stress left
            # out by output.fields from one the run never had
            f.attrs[POINT_STRESSES_ATTR] = bool(mesh.point_stresses)
            for k, v in (extra_attrs or {}).items():
                f.attrs[k] = v
            _write_mesh(f, mesh)
            self.datasets = {
                d: storage.create_frame_dataset(f, d, sizes, expected_frames, compression)
                for d, _ in layout
            }
            self.appenders = {d: storage.Appender(ds) for d, ds in self.datasets.items()}
            storage.reserve(f, storage.bytes_for_frame(self.appenders.values(), 0))
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
                self._same_fields(written_fields(f), int(f.attrs.get("layout_minor", 0)))
                chunk_bytes = max(
                    (
                        f[d.path].dtype.itemsize * int(np.prod(f[d.path].chunks))
                        for d in (*FRAME_DATASETS, *TERM_FRAME_DATASETS)
                        if d.path in f and f[d.path].chunks
                    ),
                    default=storage.CHUNK_BYTES,
                )
            f = self.file = storage.crash_safe_file(self.tmp, chunk_bytes, create=False)
            # the datasets the file has (a term's: where the model had it, and the layout)
            every = (*FRAME_DATASETS, *TERM_FRAME_DATASETS)
            self.datasets = {d: f[d.path] for d in every if d.path in f}
            for d in self.datasets:
                storage.resize_frames(f, d, keep)
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
            self.appenders = {d: storage.appender(f, d) for d in self.datasets}
            storage.reserve(f, storage.bytes_for_frame(self.appenders.values(), keep))
            f.flush()
        except BaseException as exc:
            self._abandon()
            if not isinstance(exc, OSError):
                raise
            raise ResourceError(
                f"cannot continue the results file: {exc.strerror or exc}", file=str(self.path)
            ) from None
        self.frames = keep

    def _same_fields(self, before: frozenset | None, minor: int) -> None:
        """A restart appends to the datasets the file has: CaseError unless output.fields
        keeps the same ones (a file from before output.fields has them all). Datasets of a
        later layout than the file's (minor) count as kept as now: the file has none of them
        and the restart writes none (a layout 1.8 file continued with connectors)."""
        before = frozenset(CHOOSABLE) if before is None else before
        later = {d.path for d in (*FRAME_DATASETS, *TERM_FRAME_DATASETS) if d.since > minor}
        before = (before - later) | (self.fields & later)
        if before != self.fields:
            added, dropped = sorted(self.fields - before), sorted(before - self.fields)
            change = "; ".join(
                f"{what} {', '.join(names)}"
                for what, names in (("adds", added), ("leaves out", dropped))
                if names
            )
            raise CaseError(
                f"output.fields differs from the run being continued ({change}): a restart "
                "writes the datasets its file has; give the fields of that run",
                file=str(self.path),
                key="output.fields",
            )

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
            if not self.terms_made:
                self._make_terms(frame.terms)
            values = [_value(frame, d) for d in self.appenders]
            storage.reserve(f, storage.bytes_for_frame(self.appenders.values(), k, values))
        except OSError as exc:
            raise ResourceError(
                f"no room for frame {k} ({exc.strerror or exc}); {self._safe()}",
                file=str(self.path),
            ) from None
        try:
            for appender, value in zip(self.appenders.values(), values, strict=True):
                appender.append(k, value)  # None (no plates): zeros; ragged: no rows
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

    def _make_terms(self, values: dict) -> None:
        """The datasets the model's terms declare (rodsim.results.layout.TERM_DATASETS), from
        the first frame's values (Frame.terms, keyed by path): the mesh ones written, the
        per-frame ones output.fields keeps created, their size letters (the term's entries)
        the values' sizes (a ragged one's first letter excepted: its rows change from frame
        to frame). A model without such terms gives none and writes none."""
        f = self.file
        for d in TERM_MESH_DATASETS:
            if d.path in values:
                ds = f.create_dataset(d.path, data=np.asarray(values[d.path], d.dtype))
                ds.attrs["description"] = d.description
        for d in TERM_FRAME_DATASETS:
            if d.path not in values or not is_chosen(d, self.fields):
                continue
            shape = np.shape(values[d.path])
            wrong = ValueError(f"{d.path}: values of shape {shape}, declared {d.shape}")
            if len(shape) != len(d.shape):
                raise wrong
            lead = 1 if d.ragged else 0  # a ragged one's first letter: this frame's rows only
            declared = zip(d.shape[lead:], shape[lead:], strict=True)
            sizes = {s: n for s, n in declared if isinstance(s, str)}
            if concrete_shape(d.shape[lead:], sizes) != shape[lead:]:
                raise wrong
            if d.ragged:
                made = storage.create_ragged_datasets(f, d, sizes, self.expected_frames, shape[0])
                self.datasets[d] = made[0]
                self.appenders[d] = storage.RaggedAppender(*made)
                continue
            ds = storage.create_frame_dataset(f, d, sizes, self.expected_frames, self.compression)
            self.datasets[d] = ds
            self.appenders[d] = storage.Appender(ds)
        self.terms_made = True

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
            storage.trim(f)
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
