"""`rodsim warmup` and the "compiling kernels" message."""

import os
import subprocess
import sys
import time

import pytest
from numba import njit

from rodsim import warmup

CASE = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 3, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary: [{set: beam.start, fix: all}]
loads: [{set: beam.end, force: [0, 0, -1]}]
solver: {dt: 1.0e-4, t_end: 2.0e-3}
output: {vtk: false}
"""


def _rodsim(*args, cache=None):
    env = dict(os.environ)
    if cache is not None:
        env["RODSIM_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "rodsim.cli", *args], env=env, capture_output=True, text=True
    )


ADAPTIVE = "solver: {scheme: implicit, t_end: 0.05, adaptive: {tol: 1.0e-3}}"


@pytest.mark.parametrize("solver", [None, ADAPTIVE], ids=["explicit", "adaptive"])
def test_warmup_compiles_what_the_run_needs(tmp_path, solver):
    """After `rodsim warmup case.yaml` the case's run compiles nothing: warmup covers every
    kernel the run calls (the suite's own cache: cold or warm, the run after warmup must not
    compile), and a second warmup finds everything compiled. Adaptive implicit steps: their
    compiled batch too (rodsim.integrators.adaptive_batch), which the run then takes."""
    case = tmp_path / "case.yaml"
    case.write_text(
        CASE if solver is None else CASE.replace("solver: {dt: 1.0e-4, t_end: 2.0e-3}", solver)
    )
    out = _rodsim("warmup", str(case))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("kernel cache ")
    again = _rodsim("warmup", str(case))
    assert "already compiled" in again.stdout, again.stdout
    run = _rodsim("run", str(case), "-o", str(tmp_path / "a.h5"))
    assert run.returncode == 0, run.stderr
    assert "compiling kernels" not in run.stderr + run.stdout


def test_warmup_reports_the_cache_folder_and_bad_cases(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rodsim: 1\nmesh: 3\n")
    out = _rodsim("warmup", str(bad), cache=tmp_path / "cache")
    assert out.returncode == 2, out.stderr
    assert f"kernel cache {tmp_path / 'cache'}" in out.stdout
    assert "bad.yaml" in out.stderr
    assert "mesh" in out.stderr


@njit  # not cached: compiles in every process, so the test sees a compilation
def _fresh(x):
    return x + 1.0


def test_compile_message_piped_and_on_a_terminal(capsys, monkeypatch):
    """The run's display says "compiling kernels (first run only)" once when stderr is not a
    terminal, and a counting line on one; compile time is kept out of the step rate."""
    from rodsim import kernel_cache
    from rodsim.cli.run import Progress

    piped = Progress(1.0, enabled=False)
    with kernel_cache.watch(piped.compiling):
        _fresh(1.0)
        _fresh(1)  # a second compilation: still one line
    err = capsys.readouterr().err
    assert err == "compiling kernels (first run only) ...\n"
    assert piped.compile_seconds() > 0.0

    tty = Progress(1.0, enabled=True)
    tty.begin()
    with kernel_cache.watch(tty.compiling):
        _fresh(1.0j)
    err = capsys.readouterr().err
    assert err.startswith("\r  compiling kernels (first run only): ")
    assert "kernels," in err
    compiled = tty.compile_seconds(run_only=True)
    assert compiled > 0.0
    now = time.perf_counter()
    tty._show(0.5, 100, 200, now)
    shown = capsys.readouterr().err
    rate = float(shown.split("steps/s")[0].split()[-1])
    assert rate == pytest.approx(100 / (now - tty.start - compiled), rel=2e-3)  # 3 digits shown
    assert rate > 1.02 * 100 / (now - tty.start)  # compiling left out

    quiet = Progress(1.0, enabled=False, announce=False)
    with kernel_cache.watch(quiet.compiling):
        _fresh(True)
    assert capsys.readouterr().err == ""


def test_builtin_warmup_cases_validate(tmp_path):
    """Every built-in warmup case is a valid case file (rodsim check would accept it)."""
    from rodsim.run import prepare

    for name, (_, text) in warmup.BUILTIN.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        prep = prepare(path)
        assert prep.plan.n_steps >= 1, name
    kinds = {n: prepare(tmp_path / f"{n}.yaml").plan for n in warmup.BUILTIN}
    assert kinds["explicit-parallel"].parallel
    assert not kinds["explicit"].parallel
    assert kinds["implicit"].kind == "implicit"
    assert prepare(tmp_path / "implicit-adaptive.yaml").case.settings.solver.adaptive is not None
    assert kinds["plates"].kind == kinds["supports"].kind == "equilibrium"
