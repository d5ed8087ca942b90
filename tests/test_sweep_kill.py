"""SIGKILL to a pooled `rodsim sweep` (docs/sweeps.md, "Executors"): its workers die with it,
nobody holds its output pipes, and the sweep run again finishes the table of a serial sweep.
One trial of benchmarks/sweep_kill.py, which measures more."""

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from rodsim.sweep import executors

BENCH = Path(__file__).parents[1] / "benchmarks" / "sweep_kill.py"
spec = importlib.util.spec_from_file_location("sweep_kill", BENCH)
sweep_kill = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep_kill)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_sigkill_to_the_sweep_leaves_no_worker_and_the_rerun_finishes_its_table(tmp_path):
    """5 s: the parent-death signal acts at once; the workers' watchdog polls every 0.5 s."""
    serial = sweep_kill.reference(tmp_path)
    r = sweep_kill.trial(tmp_path / "trial", serial, limit=5.0)
    assert r["children"] >= 2  # the two workers (and the resource tracker)
    assert r["left"] == 0 and r["gone_s"] is not None, r
    assert r["pipes_s"] is not None, r  # read to their end: a capturing caller does not hang
    assert r["resumed_equal"], r["resume_stderr"]


def test_a_worker_whose_parent_is_gone_exits():
    """The watchdog alone (as on a system without a parent-death signal): a worker records its
    parent's pid; once its parent is another, it exits."""
    os_exit, ended = [], threading.Event()

    def exit_(code):
        os_exit.append(code)
        ended.set()

    watchdog = threading.Thread(
        target=executors._watch, args=(os.getpid() + 1, 0.01, exit_), daemon=True
    )  # a parent this process does not have: as if its own had died
    watchdog.start()
    assert ended.wait(5) and os_exit == [executors.ORPHANED]


def test_the_watchdog_keeps_a_worker_whose_parent_lives():
    calls = []
    watchdog = threading.Thread(
        target=executors._watch, args=(os.getppid(), 0.01, calls.append), daemon=True
    )
    watchdog.start()
    time.sleep(0.2)  # 20 polls
    assert watchdog.is_alive() and not calls


def test_a_pool_started_from_a_thread_that_ends_keeps_its_workers(tmp_path):
    """Linux sends the parent-death signal when the thread that made a worker ends: a pool
    whose first submit came from a short-lived thread still runs later calls."""
    pool = executors.LocalPool(2)
    try:
        first = []
        maker = threading.Thread(target=lambda: first.append(pool.submit(abs, -1).result()))
        maker.start()
        maker.join()
        assert first == [1]
        time.sleep(1.0)  # a worker killed with its maker thread would be gone by now
        assert pool.gather([pool.submit(abs, -v) for v in range(4)]) == [0, 1, 2, 3]
    finally:
        pool.close()


def test_the_pool_workers_keep_their_own_process_group():
    """A terminal's Ctrl-C reaches the sweep alone, which stops its workers itself."""
    pool = executors.LocalPool(1)
    try:
        pid, group = pool.submit(_pid_and_group, None).result()
        assert group == pid != os.getpgrp()
    finally:
        pool.close()


def _pid_and_group(_):
    return os.getpid(), os.getpgrp()
