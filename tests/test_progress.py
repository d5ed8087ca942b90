"""Progress of the long commands (rodsim/progress.py, docs/running.md "Progress of long
commands"): one line on standard error, rewritten in place, only on a terminal without CI set;
standard output stays what the command prints for good."""

import sys

import pytest
from click.testing import CliRunner
from test_render import CANTILEVER, _run

from rodsim import progress
from rodsim.cli import main


@pytest.fixture()
def terminal(monkeypatch):
    """Progress is shown (test_the_rule_is_a_terminal_without_ci checks when it is)."""
    monkeypatch.setattr(progress, "on_terminal", lambda: True)


def test_the_rule_is_a_terminal_without_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert progress.on_terminal()
    monkeypatch.setenv("CI", "true")
    assert not progress.on_terminal()
    monkeypatch.delenv("CI")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not progress.on_terminal()


@pytest.fixture()
def clock(monkeypatch):
    """A clock that moves only when told: now[0] seconds."""
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def test_a_count_draws_done_of_total_and_the_time_left(terminal, clock, capsys):
    count = progress.Count("frames")
    clock[0] += 7.0  # setting up does not count: the pace is from the first call
    count(0, 10)
    clock[0] += 4.0
    count(2, 10)  # 2 frames in 4 s: 8 left take 16 s
    count.close()
    err = capsys.readouterr().err
    assert f"\r{progress.bar(0.0)} 0/10 frames" in err
    assert f"\r{progress.bar(0.2)} 2/10 frames, about 16 s left" in err
    assert err.endswith("\n")


def test_a_count_is_silent_off_a_terminal_and_under_ci(monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    count = progress.Count("frames")
    count(0, 3)
    count(3, 3)
    count.close()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("CI", "true")
    count = progress.Count("frames")
    count(3, 3)
    count.close()
    assert capsys.readouterr().err == ""


def test_a_line_said_for_good_goes_above_the_bar(terminal, clock, capsys):
    count = progress.Count("benchmarks")
    count(0, 4)
    clock[0] += 3.0
    count(1, 4)
    count.say("running 2. ring (quick) ...")
    err = capsys.readouterr().err
    bar = f"{progress.bar(0.25)} 1/4 benchmarks, about 9 s left"
    # the bar blanked, the line, the bar again below it
    assert err.endswith(f"\r{' ' * len(bar)}\rrunning 2. ring (quick) ...\n{bar}")


def test_redraws_are_at_most_every_fifth_of_a_second_but_the_last(terminal, clock, capsys):
    count = progress.Count("frames")
    for k in range(50):  # 0.01 s apart: the first draws, then one in 20, and the last
        count(k, 50)
        clock[0] += 0.01
    count(50, 50)
    err = capsys.readouterr().err
    assert err.count("\r") == 4 and "\r" + progress.bar(1.0) + " 50/50 frames" in err


def test_the_time_left_reads_in_minutes_from_100_s():
    assert progress.left(12.2) == ", about 12 s left"
    assert progress.left(300.0) == ", about 5 min left"
    assert progress.left(None) == ""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("progress"), CANTILEVER, "cant")


def test_export_counts_its_frames_on_stderr_of_a_terminal(results, tmp_path, monkeypatch):
    """`rodsim export` (the ParaView series): every frame counted, the last n/n; standard
    output is the `wrote` line alone. Off a terminal, standard error stays empty."""
    import h5py

    with h5py.File(results) as f:
        n = f["time"].shape[0]
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    res = CliRunner().invoke(main, ["export", str(results), "-o", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    assert res.stdout == f"wrote {n} frames: {tmp_path / 'a' / 'cant.pvd'}\n"
    assert f"{progress.bar(1.0)} {n}/{n} frames" in res.stderr
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    res = CliRunner().invoke(main, ["export", str(results), "-o", str(tmp_path / "b")])
    assert res.exit_code == 0 and res.stderr == ""


def test_the_python_export_reports_each_frame(results, tmp_path):
    from rodsim.post.export import export_vtk

    calls = []
    _, n = export_vtk(results, tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(k, n) for k in range(n + 1)]


def test_validate_counts_its_benchmarks(monkeypatch):
    """The line of each benchmark as it starts stays (on any standard error); on a terminal
    the count of benchmarks done follows it."""
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    res = CliRunner().invoke(main, ["validate", "ring", "--quick"])
    assert res.exit_code == 0, res.output
    assert "running 10. ring (quick) ...\n" in res.stderr
    assert f"{progress.bar(1.0)} 1/1 benchmarks" in res.stderr
    assert "1 benchmarks: 1 passed" in res.stdout and "benchmarks, about" not in res.stdout
