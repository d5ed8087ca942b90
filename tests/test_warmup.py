"""`rodsim warmup` and the "compiling kernels" message, in a kernel cache of their own."""

import os
import subprocess
import sys

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


def _rodsim(cache, *args):
    env = {**os.environ, "RODSIM_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "rodsim.cli", *args], env=env, capture_output=True, text=True
    )


def test_warmup_compiles_what_the_run_needs(tmp_path):
    """After `rodsim warmup case.yaml` the case's run compiles nothing: warmup covers every
    kernel the run calls. A run of another kind (SE3) then compiles its own kernels and says
    so, once, on standard error (piped here), and the done line reports the compile time."""
    case = tmp_path / "case.yaml"
    case.write_text(CASE)
    cache = tmp_path / "cache"
    out = _rodsim(cache, "warmup", str(case))
    assert out.returncode == 0, out.stderr
    assert f"kernel cache {cache}" in out.stdout
    assert "compiled" in out.stdout and "already compiled" not in out.stdout
    again = _rodsim(cache, "warmup", str(case))
    assert "already compiled" in again.stdout, again.stdout

    run = _rodsim(cache, "run", str(case), "-o", str(tmp_path / "a.h5"))
    assert run.returncode == 0, run.stderr
    assert "compiling kernels" not in run.stderr + run.stdout
    assert "(first run only)" not in run.stdout

    se3 = _rodsim(
        cache, "run", str(case), "-o", str(tmp_path / "b.h5"), "--set", "solver.group=SE3"
    )
    assert se3.returncode == 0, se3.stderr
    assert se3.stderr.count("compiling kernels (first run only) ...") == 1, se3.stderr
    done = next(line for line in se3.stdout.splitlines() if line.startswith("done"))
    assert "compiling kernels" in done and "(first run only)" in done


def test_builtin_warmup_cases_validate(tmp_path):
    """Every built-in warmup case is a valid case file (rodsim check would accept it)."""
    from rodsim.run import prepare

    for name, (_, text) in warmup.BUILTIN.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        prep = prepare(path)
        assert prep.plan.n_steps >= 1, name
    kinds = {n: prepare(tmp_path / f"{n}.yaml").plan for n in warmup.BUILTIN}
    assert kinds["explicit-parallel"].parallel and not kinds["explicit"].parallel
    assert kinds["implicit"].kind == "implicit"
    assert kinds["plates"].kind == kinds["supports"].kind == "equilibrium"
