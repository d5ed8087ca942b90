"""The summary of a sweep (docs/sweeps.md, "The summary"): one row per run, its parameters, its
collected numbers, status, exit code, wall time, the rodsim version that ran it and whether it
was reused or is outdated, as ``summary.csv`` and ``summary.h5`` (the same table) in the
sweep's folder, each written whole through a temporary file.

summary.h5: attributes ``kind`` = "rodsim sweep summary", ``sweep`` (the sweep file's text),
``rodsim_version``; datasets ``run`` (R,) int64, ``name`` (R,) str, ``parameters/<key path>``
(R,) float64 (or str for values that are not numbers), ``results/<name>`` (R,) float64 (NaN
where the run has none), ``status`` (R,) str, ``exit_code`` (R,) int64, ``error`` (R,) str,
``wall_time`` (R,) float64 s, ``version`` (R,) str, ``reused``, ``outdated`` (R,) int64 0/1.
"""

import csv
import io
import math
import os
from pathlib import Path

import h5py
import numpy as np

from rodsim import __version__
from rodsim.errors import CaseError, ResourceError
from rodsim.results import guard as output_guard
from rodsim.results.guard import (
    SWEEP_KIND,
    is_sweep_csv,  # noqa: F401  (its place before)
)
from rodsim.results.guard import is_sweep_summary as is_summary
from rodsim.sweep.spec import COLUMNS

KIND = SWEEP_KIND
MARKER = ".rodsim-sweep"  # the first file a sweep writes in its folder: it is a sweep's
LOCK = ".sweep.lock"  # held by runner._only_sweep while a sweep writes the folder


def is_sweep_folder(path) -> bool:
    """A folder a rodsim sweep wrote: it holds the sweep's marker (.rodsim-sweep), its lock
    (.sweep.lock) or a summary.h5 of a sweep."""
    path = Path(path)
    return path.is_dir() and (
        (path / MARKER).is_file() or (path / LOCK).is_file() or is_summary(path / "summary.h5")
    )


def claim(folder: Path, file, key: str) -> None:
    """Make folder a sweep's, writing its marker, where it is new, empty or a sweep's already;
    CaseError (file: the sweep file, key: `output` or -o) before anything is written where it
    is another's, or where its summary files are not a sweep's (they would be replaced)."""
    folder = output_guard.check_folder(
        folder,
        is_sweep_folder,
        f"a rodsim sweep's folder (no {MARKER})",
        option=key,
        file=str(file),
    )
    for name, kind in (("summary.csv", "sweep table"), ("summary.h5", "sweep summary")):
        output_guard.check(folder / name, kind, option=key, file=str(file))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MARKER).touch()
    except OSError as exc:
        raise ResourceError(f"cannot make {folder}: {exc.strerror or exc}") from None


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def table(sweep, jobs, records) -> tuple[list[str], list[list]]:
    """(header, rows) of the summary."""
    keys, names = list(sweep.parameters), [q.name for q in sweep.collect]
    header = [*COLUMNS[:2], *keys, *names, *COLUMNS[2:]]
    rows = []
    for run, job, r in zip(sweep.runs, jobs, records, strict=True):
        rows.append(
            [
                r.index,
                job.name,
                *(run.values[k] for k in keys),
                *(r.values.get(n, math.nan) for n in names),
                r.status,
                r.exit_code,
                r.wall,
                r.version,
                int(r.reused),
                int(r.outdated),
                r.error,
            ]  # fmt: skip
        )
    return header, rows


def write(sweep, jobs, records) -> tuple[Path, Path]:
    """Write summary.csv and summary.h5 in the sweep's folder; return their paths."""
    header, rows = table(sweep, jobs, records)
    folder = sweep.output
    out_csv, out_h5 = folder / "summary.csv", folder / "summary.h5"
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for row in rows:  # the error's commas and line breaks would be fields to simple readers
        *head, error = row
        error = error.replace(",", ";").replace("\n", " ")
        writer.writerow([repr(v) if isinstance(v, float) else v for v in head] + [error])
    part = out_csv.with_name(".summary.csv.part")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        part.write_text(text.getvalue())
        os.replace(part, out_csv)
        part = out_h5.with_name(".summary.h5.part")
        with h5py.File(part, "w") as f:
            f.attrs["kind"] = KIND
            f.attrs["sweep"] = sweep.text
            f.attrs["rodsim_version"] = __version__
            columns = list(zip(*rows, strict=True)) if rows else [[] for _ in header]
            keys = list(sweep.parameters)
            names = [q.name for q in sweep.collect]
            for label, values in zip(header, columns, strict=True):
                if label in keys:
                    path = f"parameters/{label}"
                elif label in names:
                    path = f"results/{label}"
                else:
                    path = label
                _dataset(f, path, list(values), label)
        os.replace(part, out_h5)
    except OSError as exc:
        raise ResourceError(
            f"cannot write the summary in {folder}: {exc.strerror or exc}"
        ) from None
    finally:  # a failed write leaves no part behind (the one renamed is gone already)
        part.unlink(missing_ok=True)
    return out_csv, out_h5


def _dataset(f, path: str, values: list, label: str) -> None:
    if label in ("reused", "outdated", "exit_code", "run"):
        f.create_dataset(path, data=np.asarray(values, dtype=np.int64))
    elif all(_number(v) for v in values):
        f.create_dataset(path, data=np.asarray(values, dtype=np.float64))
    else:
        f.create_dataset(path, data=np.asarray([str(v) for v in values], dtype=h5py.string_dtype()))


def read(path) -> dict:
    """The summary.h5 of a sweep as {column: (R,) array}: run, name, parameters/<key>,
    results/<name>, status, ...; CaseError for a file that is not one."""
    path = Path(path)
    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("kind") != KIND:
                raise CaseError("not the summary.h5 of a rodsim sweep", file=str(path))
            out = {}

            def take(name, obj):
                if isinstance(obj, h5py.Dataset):
                    out[name] = obj.asstr()[()] if obj.dtype.kind == "O" else obj[()]

            f.visititems(take)
    except OSError as exc:
        raise CaseError(f"not a readable HDF5 file ({exc})", file=str(path)) from None
    return out
