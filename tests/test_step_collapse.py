"""The explicit step's collapse (issue 32): when damping, a stiff support or one small element
makes the stable step fall by an order of magnitude, `rodsim check`, `rodsim run` and the Python
API say why and what to do (docs/running.md, "The explicit step collapses";
docs/explicit_scheme.md, "Damping and the stable step")."""

import logging
import math
import subprocess
import sys

import numpy as np
import pytest

import rodsim

# The case: a 1 m steel bar, clamped, with damping fitted to 2% at 8.35 and 52.3 Hz
# (docs/modal.md): beta 1.05e-4 s damps the top element mode (~1e6 rad/s) with zeta ~ 54.
BAR = """\
rodsim: 1
title: steel bar with fitted damping
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, section: bar, up: [0, 0, 1]}
sections:
  bar:
    type: rod
    material: {E: 2.1e11, nu: 0.3, rho: 7850}
    shape: {rectangle: [0.02, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - gravity: [0, 0, -9.81]
solver:
  t_end: 2.0e-6
  damping: {ratios: [[8.35, 0.02], [52.3, 0.02]]}
output: {vtk: false}
"""
UNDAMPED = ["solver.damping={strain_rate: 0, mass: 0}"]
HEAD = "the explicit time step collapses"


def _bar(tmp_path, text=BAR):
    path = tmp_path / "bar.yaml"
    path.write_text(text)
    return path


def _rodsim(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rodsim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def test_the_damped_step_follows_the_damped_oscillator_limit(tmp_path):
    """dt / dt_undamped = sqrt(1 + zeta^2) - zeta at the governing (top) element mode, zeta =
    beta omega / 2 + alpha / (2 omega): the formula docs/explicit_scheme.md states."""
    from rodsim.integrators.stable_step import COLLAPSE, step_limit

    model = rodsim.Simulation(_bar(tmp_path)).model
    limit = step_limit(model)
    omega = limit.omega
    zeta = 0.5 * model.beta * omega + 0.5 * model.alpha / omega
    # same formula, same floating-point inputs: equal up to a few roundings
    assert limit.dt / limit.undamped == pytest.approx(math.sqrt(1 + zeta**2) - zeta, rel=1e-12)
    assert limit.dt < COLLAPSE * limit.undamped
    assert limit.collapse() == "damping"
    assert step_limit(rodsim.Simulation(_bar(tmp_path), UNDAMPED).model).collapse() == ""


def test_check_warns_in_the_summary_and_exits_0(tmp_path):
    res = _rodsim("check", _bar(tmp_path), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().endswith("ok")
    lines = [line for line in res.stdout.splitlines() if HEAD in line]
    assert len(lines) == 1 and lines[0].startswith("warning   " + HEAD), res.stdout
    line = lines[0]
    # the cause with its numbers, and the three fixes
    assert "damping makes the stable step" in line and "x smaller" in line
    assert "solver.damping.mass" in line
    assert "solver.damping.ratios" in line
    assert "solver.scheme: implicit" in line
    assert HEAD not in res.stderr  # said once: the summary holds it
    quiet = _rodsim("check", _bar(tmp_path), "--set", UNDAMPED[0], cwd=tmp_path)
    assert quiet.returncode == 0 and HEAD not in quiet.stdout + quiet.stderr


def test_run_warns(tmp_path):
    case = _bar(tmp_path)
    res = _rodsim("run", case, "-o", tmp_path / "a.h5", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert [line for line in res.stdout.splitlines() if HEAD in line][0].startswith("warning   ")
    quiet = _rodsim("run", case, "-q", "-o", tmp_path / "b.h5", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    assert f"WARNING rodsim.integrators.planning: {HEAD}" in quiet.stderr


def test_the_python_api_warns(tmp_path, caplog):
    case = rodsim.case_from_yaml(BAR, folder=tmp_path)
    with caplog.at_level(logging.WARNING, logger="rodsim"):
        sim = rodsim.Simulation(case)
    said = [r for r in caplog.records if HEAD in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert sim.plan.collapse == said[0].getMessage()
    assert "solver.damping.mass" in sim.plan.collapse
    assert f"warning   {HEAD}" in rodsim.check(case)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="rodsim"):
        undamped = rodsim.Simulation(case, UNDAMPED)
    assert not [r for r in caplog.records if HEAD in r.getMessage()]
    assert undamped.plan.collapse == ""


def test_a_stiff_support_and_a_tiny_element_are_named(tmp_path):
    """The other causes: a spring whose sqrt(k/m) is far above the elements' top frequency, and
    one element much shorter than the rest (its step scales with its length or less)."""
    from rodsim.integrators.stable_step import step_limit

    sprung = BAR.replace(
        "loads:", "supports: [{set: beam.end, spring: [1.0e15, 1.0e15, 1.0e15]}]\nloads:"
    )
    sim = rodsim.Simulation(_bar(tmp_path, sprung), UNDAMPED)
    assert "the elastic supports make the stable step" in sim.plan.collapse
    limit = step_limit(sim.model)
    assert limit.collapse() == "supports"
    # the spring against the tip's mass alone bounds the step from above (it adds to omega^2)
    tip = sim.sets["beam.end"][0]
    assert limit.undamped <= 2.0 / math.sqrt(1.0e15 / sim.model.mass[tip]) * (1 + 1e-12)
    tiny = BAR.replace(
        "  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, section: bar, "
        "up: [0, 0, 1]}",
        "  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, section: bar, "
        "up: [0, 0, 1]}\n"
        "  - rod: {name: stub, from: [1, 0, 0], to: [1.0005, 0, 0], elements: 1, section: bar, "
        "up: [0, 0, 1]}",
    )
    sim = rodsim.Simulation(_bar(tmp_path, tiny), UNDAMPED)
    assert "rod element 20 has a stable step" in sim.plan.collapse, sim.plan.collapse
    assert np.isfinite(step_limit(sim.model).typical)
