"""One run of a sweep, as a worker process does it, and what it leaves (docs/sweeps.md, "Runs
and their files"): ``runs/<name>.h5``, the run's own results file, with the attributes
``sweep_run`` (the name) and ``resolved_case`` (the canonical resolved case, JSON); a failed
run also ``runs/<name>.failed.json`` (its error and exit code)."""

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import h5py

from rodsim import __version__
from rodsim.errors import CaseError, Interrupted, RodsimError
from rodsim.validate import compare
from rodsim.validate.measure import read_series

COMPLETE, FAILED, STOPPED = "complete", "failed", "interrupted"
WHOLE = (0.0, math.inf)  # the window of a whole run
KEPT = (2, 3)  # failures kept (not retried unless asked): bad input and numerical; resources
# (a full disk, another process on the file) and internal errors may pass: they run again


@dataclass(frozen=True)
class Job:
    """What a worker needs: the run's index and name, the base case's text and path, the
    run's overrides, its results file, the collected numbers (spec.Collect) and the canonical
    case."""

    index: int
    name: str
    case_text: str
    case_path: str
    overrides: tuple
    results: str
    collect: tuple
    resolved: str


@dataclass
class Record:
    """A run's line of the summary: status complete or failed, its collected values, exit
    code (0, or the failure's: 2 bad input, 3 numerical, 4 resources, 1 internal), error,
    wall time (s), the rodsim version that ran it, reused (from an earlier sweep), outdated
    (run by another rodsim version)."""

    index: int
    name: str
    status: str
    values: dict = field(default_factory=dict)
    exit_code: int = 0
    error: str = ""
    wall: float = math.nan
    version: str = __version__
    reused: bool = False
    outdated: bool = False
    compiled: float = 0.0  # seconds this run's process spent compiling kernels (not in the table)


def collect(results, quantities) -> dict:
    """{name: number} of a results file; CaseError naming the collected quantity."""
    out = {}
    for q in quantities:
        try:
            t, v = read_series(results, q.series, q.over)
            if q.window != WHOLE:  # every reduction sees the window only (`at` takes none)
                t, v = compare.windowed(t, v, q.window)
            out[q.name] = compare.reduce(t, v, q.reduce, WHOLE, q.at)
        except (CaseError, ValueError, KeyError, IndexError) as exc:
            reason = exc.reason if isinstance(exc, CaseError) else f"{type(exc).__name__}: {exc}"
            raise CaseError(reason, key=f"collect.{q.name}") from None
    return out


def failed_path(results) -> Path:
    return Path(results).with_suffix(".failed.json")


def run_job(job: Job) -> Record:
    """Run one job (in a worker): the case with its overrides to its results file, marked with
    its name and resolved case; its numbers collected. Never raises for the run's own failure:
    the Record says it."""
    import numba

    from rodsim.sweep import executors

    if executors.stopping():  # the sweep stops: this queued run does not start
        return Record(job.index, job.name, STOPPED, exit_code=143, error="not started")
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # one run on one core: a pool of N uses N
    try:
        return _run(job)
    finally:
        numba.set_num_threads(threads)  # a run in the caller's process leaves it as it was


def _run(job: Job) -> Record:
    from rodsim import api, kernel_cache
    from rodsim.case.load import case_from_text

    start, compiled0 = time.perf_counter(), kernel_cache.compiling().seconds
    failed_path(job.results).unlink(missing_ok=True)
    try:
        case = case_from_text(job.case_text, job.case_path, job.overrides, name=job.case_path)
        api.run_case(case, job.results, vtk=False)
        try:
            with h5py.File(job.results, "a") as f:
                f.attrs["sweep_run"] = job.name
                f.attrs["resolved_case"] = job.resolved
        except OSError as exc:  # a full disk, say: it may pass, the run runs again
            return _failed(job, 4, f"cannot mark {job.results}: {exc}", start)
    except Interrupted as exc:  # the sweep is being stopped: not a failure, run it again later
        return Record(job.index, job.name, STOPPED, exit_code=exc.exit_code, error=str(exc))
    except RodsimError as exc:
        return _failed(job, exc.exit_code, str(exc), start)
    except Exception as exc:  # a bug: recorded as exit 1, the sweep goes on
        return _failed(job, 1, f"internal error ({type(exc).__name__}: {exc})", start)
    wall = time.perf_counter() - start
    compiled = kernel_cache.compiling().seconds - compiled0
    try:  # the run is done whatever its numbers: a sweep run again collects them again
        values = collect(job.results, job.collect)
        return Record(job.index, job.name, COMPLETE, values, wall=wall, compiled=compiled)
    except CaseError as exc:
        return Record(job.index, job.name, FAILED, exit_code=2, error=str(exc), wall=wall)


def _failed(job: Job, code: int, error: str, start: float) -> Record:
    """The Record of a run that failed; a failure of its input or numerics (KEPT) is also kept
    beside its results (<name>.failed.json), so that a sweep run again does not retry it
    unless asked (--retry-failed)."""
    record = Record(job.index, job.name, FAILED, exit_code=code, error=error,
                    wall=time.perf_counter() - start)  # fmt: skip
    if code in KEPT:
        _write_failure(failed_path(job.results), record)
    return record


def _write_failure(path: Path, record: Record) -> None:
    part = path.with_name(path.name + ".part")
    text = {"error": record.error, "exit_code": record.exit_code, "version": record.version}
    part.write_text(json.dumps(text, indent=1))
    os.replace(part, path)


def earlier(job: Job) -> Record | None:
    """The Record of an earlier sweep's run of this job, from its files, or None where it
    must run: a complete results file of this name (its numbers collected again, so a
    changed `collect` needs no rerun), else a kept failure."""
    results, failed = Path(job.results), failed_path(job.results)
    try:
        with h5py.File(results, "r", locking=False) as f:
            complete = f.attrs.get("sweep_run") == job.name and f.attrs.get("status") == COMPLETE
            version = str(f.attrs.get("rodsim_version", ""))
            wall = _seconds(f.attrs.get("started", ""), f.attrs.get("finished", ""))
    except (OSError, KeyError):
        complete = False
    if complete:
        try:
            values = collect(results, job.collect)
        except CaseError as exc:
            return Record(job.index, job.name, FAILED, exit_code=2, error=str(exc), reused=True)
        return Record(job.index, job.name, COMPLETE, values, wall=wall, version=version,
                      reused=True, outdated=version != __version__)  # fmt: skip
    try:
        said = json.loads(failed.read_text())
        return Record(job.index, job.name, FAILED, exit_code=int(said["exit_code"]),
                      error=str(said["error"]), version=str(said.get("version", "")),
                      reused=True)  # fmt: skip
    except (OSError, ValueError, KeyError):
        return None


def _seconds(started: str, finished: str) -> float:
    """The wall time of a run from its results file's ISO 8601 times (NaN without them)."""
    from datetime import datetime

    try:
        return (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    except (TypeError, ValueError):
        return math.nan
