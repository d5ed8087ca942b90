"""Reading a results file while a run writes it (docs/results.md "Reading during a run"):
`rodsim info` and rodsim.read_results never fail on a torn read and never return a torn
frame (benchmarks/live_read.py runs the same checks for 1000 + 1000 reads)."""

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

from rodsim.errors import CaseError
from rodsim.results import reader as results_reader

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("live_read", ROOT / "benchmarks/live_read.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("live_read", module)
    spec.loader.exec_module(module)
    return module


def test_reads_during_a_run_never_fail_nor_tear(tmp_path):
    """50 `rodsim info` (2 of them child processes) and 50 read_results while a run writes a
    frame every step: no failure, and every frame read complete and equal to the finished
    file's. The readers before read_live failed 2-7% of such reads with HDF5's "addr
    overflow" (9 of 200 measured): all 100 reads would pass the old readers with a chance of
    about 1% (0.955^100)."""
    bench = _bench()
    tally = bench.live_reads(tmp_path, info=50, api=50, every_subprocess=25, elements=20,
                             run_seconds=600)  # fmt: skip
    assert tally.info == 50 and tally.api == 50 and tally.subprocesses == 2
    assert tally.failures == [], tally.failures[:5]
    assert tally.torn == [], tally.torn[:5]
    assert len(tally.seen) == 50 and max(n for n, _ in tally.seen) > 1


def test_read_results_warns_while_the_run_writes(tmp_path, monkeypatch):
    """A file whose run holds its lock (status running) reads with a LiveFileWarning naming
    the file and its complete frames; a finished file reads without one."""
    import rodsim

    bench = _bench()
    proc, path = bench.start_run(tmp_path, elements=4)
    try:
        with pytest.warns(results_reader.LiveFileWarning, match="still being written") as rec:
            live = rodsim.read_results(path)
    finally:
        proc.send_signal(bench.signal.SIGINT)
        proc.wait(60)
    # the LiveFileWarning: pytest.warns records every warning (a ResourceWarning of a file
    # another test left to the garbage collector may come first)
    message = str(next(w.message for w in rec if w.category is results_reader.LiveFileWarning))
    assert str(path) in message and f"{live.n_frames} frames" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", results_reader.LiveFileWarning)
        assert rodsim.read_results(path).n_frames >= live.n_frames


def _flaky(fails: int, error: Exception):
    calls = []

    def read(path):
        calls.append(path)
        if len(calls) <= fails:
            raise error
        return "read"

    return read, calls


def test_read_live_retries_while_the_lock_is_held(tmp_path, monkeypatch):
    """Torn reads are tried again from a fresh open while a run holds the lock."""
    path = tmp_path / "r.h5"
    path.write_bytes(b"")
    monkeypatch.setattr(results_reader, "is_live", lambda p: True)
    read, calls = _flaky(10, OSError("addr overflow"))
    assert results_reader.read_live(path, read) == "read" and len(calls) == 11


def test_read_live_gives_up_on_a_file_no_run_writes(tmp_path, monkeypatch):
    """Without a live run an error that stays is raised after RETRIES_ANYWAY more tries (the
    run may have ended just after tearing the read), and a missing file at once."""
    path = tmp_path / "r.h5"
    path.write_bytes(b"")
    monkeypatch.setattr(results_reader, "is_live", lambda p: False)
    read, calls = _flaky(100, CaseError("not a readable HDF5 file", file=str(path)))
    with pytest.raises(CaseError, match="not a readable"):
        results_reader.read_live(path, read)
    assert len(calls) == results_reader.RETRIES_ANYWAY + 1
    read, calls = _flaky(100, OSError("gone"))
    with pytest.raises(OSError):
        results_reader.read_live(tmp_path / "missing.h5", read)
    assert len(calls) == 1
