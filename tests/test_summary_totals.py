"""Loads and point masses on one node add up, and the run summary shows the totals.

A rod of 2 elements from (0,0,0) to (2,0,0), rhoA 1 (nodal masses 0.5, 1, 0.5). The tip
(node 2) carries two loads and two point masses; a third load and a third point mass act on
both ends. Every number below is worked out by hand in the comments.
"""

import re

import numpy as np
import pytest
from click.testing import CliRunner

from rodsim import case_summary
from rodsim import run as runner
from rodsim.cli import main
from rodsim.model.forces import applied_loads, load_totals

CASE = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 2, section: s}
sections:
  s: {type: rod, EA: 1.0e6, GA: [1.0e6, 1.0e6], GJ: 1.0e3, EI: [1.0e3, 1.0e3], rhoA: 1,
      rhoI: [0.01, 0.01]}
sets:
  ends: {union: [beam.start, beam.end]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -1000]}
  - {set: beam.end, force: [0, 0, -1000], moment: [0, 0, 5]}
  - {set: ends, force: [10, 0, 0], time: {table: [[0, 0.5], [1, 1]]}}
  - {set: ends, force: [0, 4, 0], time: {ramp: 2}}
  - gravity: [0, 0, -10]
masses:
  - {set: beam.end, mass: 1.5}
  - {set: beam.end, mass: 2}
  - {set: ends, mass: 0.25}
solver: {t_end: 1.0e-3}
"""


@pytest.fixture()
def case(tmp_path):
    path = tmp_path / "totals.yaml"
    path.write_text(CASE)
    return path


def numbers(line: str, label: str) -> list[float]:
    """The numbers in the parenthesised vector after `label` in a summary line."""
    match = re.search(re.escape(label) + r" \(([^)]*)\)", line)
    assert match, f"{label!r} not in {line!r}"
    return [float(x) for x in match.group(1).split(",")]


def summary_line(text: str, label: str) -> str:
    return next(x for x in text.splitlines() if x.startswith(label))


def test_point_masses_on_one_node_add_to_the_rod_mass(case):
    m = runner.prepare(case).setup.model
    # rod: 0.5, 1, 0.5; tip + 1.5 + 2 + 0.25; root + 0.25
    np.testing.assert_allclose(m.mass, [0.75, 1.0, 4.25], rtol=1e-15)


def test_loads_on_one_node_add(case):
    m = runner.prepare(case).setup.model
    f, tau = applied_loads(m.terms, m.x0, m.rot0, 0.0)
    # tip at t = 0: 2 x -1000 in z, the table's 0.5 x 10 in x, the ramp's 0, its weight
    # 4.25 x -10; one moment (0, 0, 5)
    np.testing.assert_allclose(f[2], [5.0, 0.0, -2042.5], rtol=1e-15)
    np.testing.assert_allclose(tau[2], [0.0, 0.0, 5.0], rtol=1e-15)
    force, moment, weight = load_totals(m.terms, m.x0, m.rot0, 0.0)
    np.testing.assert_allclose(force, [10.0, 0.0, -2000.0], rtol=1e-15)
    # about the origin: (2, 0, 0) x (5, 0, -2000) = (0, 4000, 0), plus the tip moment
    np.testing.assert_allclose(moment, [0.0, 4000.0, 5.0], rtol=1e-15)
    np.testing.assert_allclose(weight, [0.0, 0.0, -60.0], rtol=1e-15)


def test_summary_shows_the_totals_at_t_0(case):
    text = case_summary.summary(runner.prepare(case))
    loads = summary_line(text, "loads ")
    assert loads.startswith("loads     5 entries; at t = 0: ")
    assert numbers(loads, "force") == [10, 0, -2000]
    assert numbers(loads, "moment about the origin") == [0, 4000, 5]
    assert numbers(loads, "gravity") == [0, 0, -60]
    assert (
        summary_line(text, "masses ")
        == "masses    total 6: structure 2, point masses 4 (3 entries)"
    )
    assert summary_line(text, "supports ") == "supports  1 nodes with fixed dofs"
    assert "mass 6" in summary_line(text, "model ")


def test_equilibrium_summary_shows_the_full_load(case):
    """In equilibrium time is the load multiplier: totals at 1, where untimed loads and
    gravity are full, the table gives 1 and the ramp over 2 gives 0.5."""
    prep = runner.prepare(case, ["solver.analysis=equilibrium"])
    loads = summary_line(case_summary.summary(prep), "loads ")
    assert "at load 1: " in loads
    assert numbers(loads, "force") == [20, 4, -2000]
    # (2, 0, 0) x (10, 2, -2000) = (0, 4000, 4), plus (0, 0, 5)
    assert numbers(loads, "moment about the origin") == [0, 4000, 9]
    assert numbers(loads, "gravity") == [0, 0, -60]


def test_check_prints_the_new_lines(case):
    res = CliRunner().invoke(main, ["check", str(case)])
    assert res.exit_code == 0, res.output
    assert "\nloads     5 entries; at t = 0: force (10, 0, -2000)" in res.output
    assert "\nmasses    total 6: structure 2, point masses 4 (3 entries)\n" in res.output
