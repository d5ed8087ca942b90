"""Where a sweep's runs execute (docs/sweeps.md, "Executors"): one small interface, submit(fn,
arg) -> future (with done() and result()), as_completed(futures), gather(futures) -> results,
close(cancel), and `workers`, over

- Serial: in this process, one after the other (``--workers 1``);
- LocalPool: a pool of worker processes on this machine (the default; ``--workers N``,
  default the number of cores), each run with one numba thread so that N runs use N cores;
- Dask: a Dask distributed cluster (``--dask local[:N]``: a LocalCluster of N worker
  processes of one thread, default the cores; ``--dask tcp://host:port``: a running
  scheduler, e.g. on a SLURM cluster through dask-jobqueue). Needs ``rodsim[dask]``.

Worker processes start fresh (spawn, not fork: numba and HDF5 are not fork-safe) and load the
kernels compiled before the fan-out from the shared cache folder.
"""

import concurrent.futures as cf
import multiprocessing
import os
import signal
import sys
import threading
import time

from rodsim.errors import CaseError


def cores() -> int:
    """The cores this process may use (its CPU affinity: a SLURM allocation, taskset)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Deferred:
    """A future of Serial: the call runs when it is first asked whether it is done, so that
    the sweep looks for a stop between two runs."""

    def __init__(self, fn, arg):
        self.fn, self.arg, self.future = fn, arg, None

    def done(self) -> bool:
        if self.future is None:
            self.future = cf.Future()
            try:
                self.future.set_result(self.fn(self.arg))
            except Exception as exc:  # noqa: BLE001 - handed to the caller through result()
                self.future.set_exception(exc)
        return True

    def result(self):
        self.done()
        return self.future.result()


class Serial:
    """Runs the submitted calls in this process, one after the other."""

    workers = 1

    def submit(self, fn, arg):
        return _Deferred(fn, arg)

    def as_completed(self, futures):
        return iter(futures)

    def gather(self, futures) -> list:
        return [f.result() for f in futures]

    def close(self, cancel: bool = False) -> None:
        pass


STOPPING = None  # a worker's event: set when the sweep stops (no new run starts)
GRACE = 10.0  # seconds a stopped worker has to end its run cleanly before it is killed
WATCH_EVERY = 0.5  # seconds between a worker's looks at its parent: gone within 5 s, at ~no cost
ORPHANED = 128 + 9  # a worker's exit status once its sweep is gone: as killed by SIGKILL
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _worker(stopping, parent: int) -> None:
    """A pool worker's start: one numba thread, a process group of its own, and death with the
    sweep's process `parent` (its pid, taken by the sweep: read here it could already be init's)."""
    global STOPPING
    os.environ["NUMBA_NUM_THREADS"] = "1"  # before the worker imports numba
    STOPPING = stopping
    # a process group of its own: a terminal's Ctrl-C reaches the sweep alone, which stops the
    # workers with one SIGTERM each (two signals would end a run without its final frame)
    os.setpgrp()
    # a SIGKILLed sweep cannot stop its workers: they would go on with the queued runs and hold
    # its output pipes (a caller reading them hangs). Linux kills them with it; the watchdog
    # covers the rest (no prctl, a signal lost to a thread's end). Parent gone already: go now.
    _die_with_parent()
    if os.getppid() != parent:
        os._exit(ORPHANED)
    threading.Thread(target=_watch, args=(parent,), name="rodsim-watchdog", daemon=True).start()


def _die_with_parent() -> None:
    """SIGKILL this process when the thread that made it ends (Linux: prctl PR_SET_PDEATHSIG);
    LocalPool makes its workers from one thread that lives as long as the pool."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl (another libc): the watchdog alone
        pass


def _watch(parent: int, every: float = WATCH_EVERY, exit=os._exit) -> None:
    """Exit(ORPHANED) once this process's parent is no longer `parent` (it died: the process is
    now init's or a subreaper's); a daemon thread of each worker."""
    while os.getppid() == parent:
        time.sleep(every)
    exit(ORPHANED)


def stopping() -> bool:
    """In a worker: whether its sweep is being stopped."""
    return STOPPING is not None and STOPPING.is_set()


class LocalPool:
    """A pool of `workers` processes on this machine; restart() replaces a pool a dead
    worker broke. Every call reaches the pool through one thread of its own (`maker`): the
    pool starts its workers in the thread that submits, and Linux kills a worker when the
    thread that made it ends (the parent-death signal), which must be when the pool does."""

    def __init__(self, workers: int | None = None):
        self.workers = workers or cores()
        self.context = multiprocessing.get_context("spawn")
        self.event = self.context.Event()
        self.maker = cf.ThreadPoolExecutor(1, thread_name_prefix="rodsim-pool")
        self.pool = self._pool()
        self.generation = 0  # counts the pools: a broken one is replaced once

    def _pool(self):
        return cf.ProcessPoolExecutor(
            self.workers,
            mp_context=self.context,
            initializer=_worker,
            initargs=(self.event, os.getpid()),
        )

    def submit(self, fn, arg):
        return self.maker.submit(self.pool.submit, fn, arg).result()

    def as_completed(self, futures):
        return cf.as_completed(futures)

    def gather(self, futures) -> list:
        return [f.result() for f in futures]

    def restart(self, generation: int) -> None:
        """Replace the pool of that generation (a dead worker broke it), once."""
        if generation == self.generation:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._pool()
            self.generation += 1

    def close(self, cancel: bool = False) -> None:
        if cancel:  # no run starts; the running ones end cleanly on SIGTERM, or are killed
            self.event.set()
            processes = list(getattr(self.pool, "_processes", {}).values())
            self.pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            deadline = time.monotonic() + GRACE  # one grace for all of them
            for process in processes:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
                    process.join()
        self.pool.shutdown(wait=True, cancel_futures=cancel)
        self.maker.shutdown(wait=True)  # its workers have ended: the maker thread may too


class Dask:
    """A Dask distributed client: of a LocalCluster ('local' or 'local:N') or of a scheduler
    address ('tcp://host:port')."""

    def __init__(self, where: str):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise CaseError(
                'a Dask sweep needs dask.distributed: pip install "rodsim[dask]"', key="--dask"
            ) from None
        import logging

        for name in ("distributed", "tornado"):  # its chatter is not the user's news
            logging.getLogger(name).setLevel(logging.ERROR)
        self.cluster = None
        if where == "local" or where.startswith("local:"):
            count = where.partition(":")[2]
            try:
                n = int(count) if count else cores()
                if n < 1:
                    raise ValueError
            except ValueError:
                raise CaseError(
                    f"expected local or local:N (N >= 1), got {where!r}", key="--dask"
                ) from None
            self.cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
            self.client = Client(self.cluster)
        elif "://" in where:
            try:
                self.client = Client(where, timeout="30s")
            except OSError as exc:
                raise CaseError(
                    f"cannot reach the Dask scheduler {where}: {exc}", key="--dask"
                ) from None
        else:
            raise CaseError(
                f"expected local, local:N or tcp://host:port, got {where!r}", key="--dask"
            )
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        self.futures = []

    def submit(self, fn, arg):
        future = self.client.submit(fn, arg, pure=False)
        self.futures.append(future)
        return future

    def as_completed(self, futures):
        from dask.distributed import as_completed

        return as_completed(futures)

    def gather(self, futures) -> list:
        return self.client.gather(futures)

    def close(self, cancel: bool = False) -> None:
        if cancel:  # runs not started are dropped; a scheduler's running tasks end on their own
            self.client.cancel(self.futures, force=True)
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make(workers: int | None = None, dask: str | None = None):
    """The executor that --workers and --dask ask for."""
    if dask is not None:
        if workers is not None:
            raise CaseError(
                "--dask sets the workers itself: give it without --workers", key="--dask"
            )
        return Dask(dask)
    if workers is not None and workers < 1:
        raise CaseError(f"expected 1 worker or more, got {workers}", key="--workers")
    return Serial() if workers == 1 else LocalPool(workers)
