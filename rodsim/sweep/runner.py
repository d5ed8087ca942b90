"""A sweep from its file to its summary (docs/sweeps.md): plan the runs, take what earlier
sweeps left, compile the kernels once, fan the rest out to an executor, and write the summary
table when they are done (or stopped). The one place that wires sweep file -> runs ->
executor -> summary.
"""

import contextlib
import dataclasses
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from rodsim import interrupts
from rodsim.errors import Interrupted, ResourceError
from rodsim.sweep import executors, identity, summary, work
from rodsim.sweep.spec import Sweep
from rodsim.sweep.work import COMPLETE, FAILED, STOPPED, Job, Record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What a sweep did: every run's Record (by index), the summary files, the seconds spent
    compiling kernels before the fan-out, and how many runs ran now."""

    records: tuple
    csv: object
    h5: object
    compile_seconds: float
    ran: int


def plan(sweep: Sweep) -> list[Job]:
    """One Job per run, named by identity.run_hash, its results in <output>/runs/."""
    folder = sweep.output / "runs"
    jobs = []
    for run in sweep.runs:
        name, resolved = (run.name, run.resolved) if run.name else identity.run_hash(run.case)
        jobs.append(
            Job(
                run.index,
                name,
                run.case.text,
                str(run.case.path),
                run.overrides,
                str(folder / f"{name}.h5"),
                sweep.collect,
                resolved,
            )
        )
    return jobs


def execute(
    sweep: Sweep,
    executor=None,
    *,
    retry_failed: bool = False,
    rerun_outdated: bool = False,
    warmup: bool = True,
    progress: Callable[[dict], None] | None = None,
) -> Outcome:
    """Run what the sweep still needs and write its summary; progress(counts) after each
    change, counts {total, done, failed, running, eta}. Interrupted on a signal, after the
    summary of the runs finished so far is written."""
    summary.claim(sweep.output, sweep.path, sweep.output_key)  # before anything is written
    try:
        (sweep.output / "runs").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResourceError(f"cannot make {sweep.output / 'runs'}: {exc.strerror or exc}") from None
    jobs = plan(sweep)
    records: dict[int, Record] = {}
    stop, compile_seconds, todo, first_of = 0, 0.0, [], {}
    own = executor is None
    with _only_sweep(sweep.output), interrupts.watch() as watch:
        for job in jobs:  # what earlier sweeps left, read under the folder's lock
            if job.name in first_of:  # the same resolved case twice: one run, two lines
                continue
            first_of[job.name] = job.index
            prev = work.earlier(job)
            rerun = prev is None or (prev.status == FAILED and retry_failed)
            if prev is not None and prev.status == COMPLETE and prev.outdated and rerun_outdated:
                rerun = True
            if rerun:
                todo.append(job)
            else:
                records[job.index] = prev
        executor = executor or executors.make()
        try:
            if todo and warmup:
                compile_seconds = _warm(todo)  # a signal meanwhile is acted on after it
            started = time.perf_counter()
            stop = watch.signal or _fan_out(executor, todo, records, progress, watch, started)
        finally:
            stop = stop or watch.signal
            with watch.deferred():  # a second signal waits for the summary
                if stop:  # the workers first: a run that ends meanwhile is in the summary
                    executor.close(cancel=True)
                    _finished_meanwhile(todo, records)
                done = _lines(jobs, records, first_of)
                csv, h5 = summary.write(sweep, jobs, done)
            if own and not stop:
                executor.close()
    if stop:
        import signal

        raise Interrupted(
            f"sweep stopped by {signal.Signals(stop).name}: "
            f"{sum(r.status in (COMPLETE, FAILED) for r in done)} of {len(jobs)} runs recorded "
            f"in {csv}; run the sweep again to go on",
            signal=stop,
        )
    return Outcome(tuple(done), csv, h5, compile_seconds, len(todo))


@contextlib.contextmanager
def _only_sweep(folder):
    """Hold the sweep's folder: a second sweep into it is refused (exit 4), since two would
    take each other's runs for failures."""
    import fcntl

    fd = os.open(folder / summary.LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResourceError(
                f"another rodsim sweep writes {folder}: wait for it, or give another -o"
            ) from None
        yield
    finally:
        os.close(fd)


def _finished_meanwhile(todo: list[Job], records: dict) -> None:
    """Record the runs of a stopped sweep that finished on disk before their workers ended
    but after the fan-out stopped looking: the summary then lists every complete results
    file of the sweep's runs."""
    for job in todo:
        if job.index not in records:
            found = work.earlier(job)
            if found is not None and found.status == COMPLETE and not found.outdated:
                records[job.index] = dataclasses.replace(found, reused=False)


def _warm(todo: list[Job]) -> float:
    """Compile the kernels of the first run to do, here, before the workers start: they then
    load them from the cache folder. The seconds it took (0 where all were cached)."""
    from rodsim import kernel_cache, run
    from rodsim.case.load import case_from_text

    job = todo[0]
    before = kernel_cache.compiling().seconds
    try:
        case = case_from_text(job.case_text, job.case_path, job.overrides, name=job.case_path)
        run.warm_up(run.prepare(case))
    except Exception as exc:  # noqa: BLE001 - the run itself will report it
        log.info("warm-up of run %d failed (%s): the workers compile", job.index, exc)
    return kernel_cache.compiling().seconds - before


def _fan_out(executor, todo, records, progress, watch, started) -> int:
    """Submit the jobs and record their Records as they finish; the signal that stopped it (a
    stop asked of this process, or a run stopped by one), 0 when all ran."""
    pending = {executor.submit(work.run_job, job): job for job in todo}
    generation = {f: getattr(executor, "generation", 0) for f in pending}
    ran, tries = 0, {}
    # counted as they come, not summed over every record at each one: linear in the runs
    count = {COMPLETE: 0, FAILED: 0}
    for r in records.values():
        count[r.status] = count.get(r.status, 0) + 1

    def tell():
        if progress is None:
            return
        done, failed = count[COMPLETE], count[FAILED]
        left = len(pending)
        per_run = (time.perf_counter() - started) / ran if ran else None  # wall, all workers
        eta = per_run * left if per_run else None
        progress({"total": len(records) + left, "done": done, "failed": failed,
                  "running": min(left, executor.workers), "eta": eta})  # fmt: skip

    tell()
    while pending:
        if watch.requested():
            return watch.signal
        future = next((f for f in pending if f.done()), None)
        if future is None:
            time.sleep(0.05)
            continue
        job = pending.pop(future)
        try:
            record = future.result()
        except Exception as exc:  # noqa: BLE001 - a worker died (killed, out of memory)
            if _broken(exc) and hasattr(executor, "restart") and tries.get(job.index, 0) < RETRIES:
                tries[job.index] = tries.get(job.index, 0) + 1  # its pool died: again
                executor.restart(generation.pop(future))  # a new pool, once per dead one
                resubmitted = executor.submit(work.run_job, job)
                pending[resubmitted] = job
                generation[resubmitted] = executor.generation
                continue
            error = f"the worker running it died ({type(exc).__name__}: {exc})"
            record = Record(job.index, job.name, FAILED, exit_code=1, error=error)
        if record.status == STOPPED:  # the run itself was stopped by a signal
            return record.exit_code - 128
        records[job.index] = record
        count[record.status] = count.get(record.status, 0) + 1
        ran += 1
        tell()
    return 0


# a run lost with its worker's pool runs again: it may only have shared the pool of the run that
# killed it (a dead worker breaks every run of its pool); a run that kills its worker every
# time goes down with the others of its pool at most this many times
RETRIES = 2


def _broken(exc: Exception) -> bool:
    from concurrent.futures.process import BrokenProcessPool

    return isinstance(exc, BrokenProcessPool)


def _lines(jobs, records, first_of) -> list:
    """Every job's Record in order; a repeated resolved case shares its first run's."""
    out = []
    for job in jobs:
        record = records.get(first_of[job.name])
        if record is None:
            record = Record(job.index, job.name, "not run", version="")
        elif record.index != job.index:
            record = dataclasses.replace(record, index=job.index, values=dict(record.values))
        out.append(record)
    return out


def run_sweep(
    path,
    output=None,
    *,
    workers: int | None = None,
    dask: str | None = None,
    retry_failed: bool = False,
    rerun_outdated: bool = False,
    progress: Callable[[dict], None] | None = None,
) -> Outcome:
    """rodsim sweep from Python (docs/sweeps.md): load the sweep file (output: its folder,
    default its own), check every run, run what is left on the executor workers/dask ask for
    (default: a pool of one process per core), write the summary."""
    from rodsim.sweep.spec import load

    sweep = load(path, output)
    executor = executors.make(workers, dask)
    try:
        return execute(sweep, executor, retry_failed=retry_failed,
                       rerun_outdated=rerun_outdated, progress=progress)  # fmt: skip
    finally:
        executor.close()
