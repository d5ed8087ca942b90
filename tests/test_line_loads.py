"""Distributed loads along rods (issue 18, docs/cases.md "Loads"): line_force and line_moment
per unit reference length, lumped half an element to each node, in global or section axes,
dead or follower; the summary's per-entry totals and the reaction after a run."""

import math

import numpy as np
import pytest
from click.testing import CliRunner

import rodsim
from rodsim.cli import main

CANTILEVER = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: {n}, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850}}, shape: {{rectangle: [0.05, 0.1]}}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
{loads}
solver: {{analysis: equilibrium}}
output: {{vtk: false}}
"""
Q, L = 1000.0, 2.0

RING = """
rodsim: 1
mesh:
  - arc: {name: ring, center: [0, 0, 0], radius: 5, start: [5, 0, 0], normal: [0, 0, 1],
          angle: 360, elements: 80, section: ring}
sections:
  ring: {type: rod, EA: 3.0e4, GA: [3.0e4, 3.0e4], GJ: 7.0e3, EI: [7.0e3, 7.0e3], rhoA: 1,
         rhoI: [10, 10]}
sets:
  east: {near: [5, 0, 0]}
  west: {near: [-5, 0, 0]}
  north: {near: [0, 5, 0]}
boundary:
  - {set: ring.all, fix: [uz, rx, ry]}
  - {set: east, fix: [uy]}
  - {set: west, fix: [uy]}
  - {set: north, fix: [ux]}
loads:
  - {set: ring.all, line_force: [0, 1.0, 0], frame: section, follower: true}
solver: {analysis: equilibrium}
output: {vtk: false}
"""


def _cantilever(loads: str, n: int = 40):
    return rodsim.case_from_yaml(CANTILEVER.format(n=n, loads=loads))


def test_uniform_load_on_a_cantilever_is_timoshenkos():
    """q = 1000 N/m on a 2 m steel cantilever (50 x 100 mm), 40 elements: the tip deflects by
    q L^4/(8 EI) + q L^2/(2 kGA) within 0.1% (measured 1e-6: the element is exact at its
    nodes for this load, the rest is geometric nonlinearity, (w/L)^2 ~ 1e-6), and the root
    reaction is q L (to the Newton tolerance)."""
    case = _cantilever(f"  - {{set: beam.all, line_force: [0, 0, {-Q}]}}")
    s = rodsim.prepare(case).setup.sections["s"]
    r = rodsim.run_in_memory(case)
    expected = Q * L**4 / (8 * s.EI2) + Q * L**2 / (2 * s.GA3)
    assert -r.position[-1, -1, 2] == pytest.approx(expected, rel=1e-3)
    reaction = r.reaction_force[-1].sum(axis=0)
    assert reaction == pytest.approx([0.0, 0.0, Q * L], abs=1e-9 * Q * L)


@pytest.mark.parametrize("n", [5, 40])
def test_the_total_is_the_load_per_length_times_the_length(n):
    """Whatever the mesh, line_force and line_moment add up to q L (and m L), and the moment
    of the force about the root is q L^2 / 2: half an element at each end node."""
    loads = f"  - {{set: beam.all, line_force: [0, 0, {-Q}], line_moment: [0, 0, 10.0]}}"
    model = rodsim.prepare(_cantilever(loads, n)).setup.model
    f, m = model.loads.force.sum(axis=0), model.loads.moment.sum(axis=0)
    assert f == pytest.approx([0.0, 0.0, -Q * L])
    assert m == pytest.approx([0.0, 0.0, 10.0 * L])
    arm = np.cross(model.x0[model.loads.node], model.loads.force).sum(axis=0)
    assert arm == pytest.approx([0.0, Q * L**2 / 2, 0.0])


@pytest.mark.parametrize("follower", ["true", "false"])
def test_a_ring_under_a_uniform_inward_load_shrinks_uniformly(follower):
    """A ring (R = 5, EA = 3e4, 80 elements) under q = 1 per unit length inward, given in
    the section frame (d2 points inward), following or dead, solved to a tolerance of 1e-12:
    the hoop force is q R, so it shrinks by q R^2 / EA within 1e-10 (exact for the polygon
    too: measured 1.2e-12) and stays circular to 1e-12 of R. The rigid motions are held
    without touching the shrinking: east and west in y, north in x (holding only east and
    north leaves a rigid rotation about (R, R) free, neutral under the following load and
    unstable under the dead one)."""
    text = RING.replace("follower: true", f"follower: {follower}")
    case = rodsim.case_from_yaml(text).with_overrides("solver.equilibrium.tol=1e-12")
    r = rodsim.run_in_memory(case)
    radius = np.linalg.norm(r.position[-1][:, :2], axis=1)
    assert 5.0 - radius.mean() == pytest.approx(1.0 * 5.0**2 / 3.0e4, rel=1e-10)
    assert np.ptp(radius) < 1e-12 * 5.0


def test_section_axes_turn_with_the_element():
    """frame: section on the ring: each node gets q h, pointing at the centre (the two halves
    of its elements, turned by their end frames); frame: global the same vector at every
    node."""
    model = rodsim.prepare(rodsim.case_from_yaml(RING)).setup.model
    f, x = model.loads.force, model.x0[model.loads.node]
    inward = -x / np.linalg.norm(x, axis=1)[:, None]
    h = 2 * 5.0 * math.sin(math.pi / 80)  # the chord of an element
    np.testing.assert_allclose(f, h * inward, atol=1e-12)
    plain = rodsim.case_from_yaml(RING.replace(", frame: section, follower: true", ""))
    g = rodsim.prepare(plain).setup.model.loads.force
    np.testing.assert_allclose(g, np.tile([0.0, h, 0.0], (80, 1)), atol=1e-12)


def test_follower_line_load_turns_with_the_nodes():
    """A follower line load on a cantilever (in the section frame: -d3) stays normal to the
    bent beam: at the deflected state the applied loads are the reference ones turned by each
    node's rotation, so their resultant is no longer vertical; the dead one stays vertical."""
    dead = f"  - {{set: beam.all, line_force: [0, 0, {-4.0e5}]}}"
    follower = dead.replace("]}", "], follower: true}")
    results = {}
    for name, loads in (("dead", dead), ("follower", follower)):
        case = _cantilever(loads, 20).with_overrides("solver.equilibrium.load_steps=4")
        results[name] = rodsim.run_in_memory(case).reaction_force[-1].sum(axis=0)
    assert abs(results["dead"][0]) < 1e-6 * abs(results["dead"][2])
    assert abs(results["follower"][0]) > 1e-2 * abs(results["follower"][2])


def test_line_load_from_python_replaces_the_case_value():
    """sim.loads[0].line_force = v lumps v as the case would: the same nodal loads."""
    case = _cantilever(f"  - {{set: beam.all, line_force: [0, 0, {-Q}], frame: section}}", 10)
    sim = rodsim.Simulation(case)
    assert sim.loads[0].line_force == pytest.approx([0.0, 0.0, -Q])
    sim.loads[0].line_force = [0.0, 0.0, -2 * Q]
    again = _cantilever(f"  - {{set: beam.all, line_force: [0, 0, {-2 * Q}], frame: section}}", 10)
    expected = rodsim.prepare(again).setup.model.loads.force
    np.testing.assert_array_equal(sim.model.loads.force, expected)
    with pytest.raises(rodsim.CaseError, match="line_moment"):
        sim.loads[0].line_moment = [0, 0, 1]  # a key the entry lacks


def test_summary_prints_each_entry_and_the_reaction(tmp_path):
    path = tmp_path / "c.yaml"
    loads = (
        f"  - {{set: beam.all, line_force: [0, 0, {-Q}]}}\n"
        "  - {set: beam.end, force: [0, 0, -500]}"
    )
    path.write_text(CANTILEVER.format(n=10, loads=loads))
    out = CliRunner().invoke(main, ["run", str(path)])
    assert out.exit_code == 0, out.output
    assert "  loads[0] on beam.all: force (0, 0, -2000), moment (0, 2000, 0)" in out.output
    assert "  loads[1] on beam.end: force (0, 0, -500), moment (0, 1000, 0)" in out.output
    reaction = [line for line in out.output.splitlines() if line.startswith("reaction")]
    assert reaction and "2500" in reaction[0]


@pytest.mark.parametrize(
    ("load", "key", "words"),
    [
        ("{set: beam.end, line_force: [0, 0, -1]}", "loads[0].set", "hold"),
        ("{set: beam.all, force: [0, 0, -1], frame: section}", "loads[0].frame", "line_force"),
        # was refused with a message about pressure (issue 33)
        (
            "{set: beam.all, surface_force: [0, 0, -1]}",
            "loads[0].set",
            "surface_force acts on plate elements",
        ),
    ],
)
def test_bad_line_loads_are_input_errors(tmp_path, load, key, words):
    path = tmp_path / "c.yaml"
    path.write_text(CANTILEVER.format(n=4, loads=f"  - {load}"))
    out = CliRunner().invoke(main, ["check", str(path)])
    assert out.exit_code == 2, out.output
    assert key in out.output and words in out.output


PLATE = """
rodsim: 1
mesh:
  - rectangle: {{name: p, origin: [0, 0, 0], size: [1, 0.5], elements: [8, 4], section: s}}
  - rod: {{name: r, from: [0, -0.2, 0], to: [1, -0.2, 0], elements: 8, section: bar, up: [0, 0, 1]}}
sections:
  s: {{type: plate, material: {{E: 7.0e10, nu: 0.3, rho: 2700}}, thickness: 0.01}}
  bar: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850}},
        shape: {{rectangle: [0.02, 0.02]}}}}
boundary:
  - {{set: p.x0, fix: all}}
  - {{set: r.start, fix: all}}
loads:
{loads}
solver: {{analysis: equilibrium}}
output: {{vtk: false}}
"""


def _plate(loads: str):
    return rodsim.case_from_yaml(PLATE.format(loads=loads))


def test_surface_force_totals_and_section_axes():
    """surface_force on the plate (1 x 0.5 m) adds up to p A with its moment about the root,
    whatever the mesh; in the cells' frame (d3 the normal, here z) [0, 0, p] is the global
    [0, 0, p]."""
    p = 300.0
    model = rodsim.prepare(_plate(f"  - {{set: p.all, surface_force: [0, 0, {-p}]}}")).setup.model
    f = model.loads.force.sum(axis=0)
    assert f == pytest.approx([0.0, 0.0, -p * 0.5])
    arm = np.cross(model.x0[model.loads.node], model.loads.force).sum(axis=0)
    assert arm == pytest.approx([-p * 0.5 * 0.25, p * 0.5 * 0.5, 0.0])
    local = f"  - {{set: p.all, surface_force: [0, 0, {-p}], frame: section}}"
    turned = rodsim.prepare(_plate(local)).setup.model.loads.force
    np.testing.assert_allclose(turned, model.loads.force, atol=1e-12)


def test_corner_areas_are_the_consistent_ones():
    """On a distorted quadrilateral the corners' integral N_a dA (2 x 2 Gauss, exact) add up
    to its area and differ from a quarter each; a triangle's are a third."""
    from rodsim.mesh.distributed import corner_areas

    points = np.array([[0, 0, 0], [2, 0, 0], [3, 2, 0], [0, 1, 0]], dtype=float)
    quad = corner_areas(points, np.array([[0, 1, 2, 3]]))[0]
    assert quad.sum() == pytest.approx(3.5)  # the shoelace area
    # the same integrals by a 400 x 400 midpoint rule on the bilinear map (error ~1e-6)
    s = (np.arange(400) + 0.5) / 200 - 1
    xi, eta = np.meshgrid(s, s, indexing="ij")
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]])
    shape = [0.25 * (1 + xi * c[0]) * (1 + eta * c[1]) for c in corners]
    dx_dxi = sum(
        0.25 * c[0] * (1 + eta * c[1]) * p[0] for c, p in zip(corners, points, strict=True)
    )
    dx_deta = sum(
        0.25 * c[1] * (1 + xi * c[0]) * p[0] for c, p in zip(corners, points, strict=True)
    )
    dy_dxi = sum(
        0.25 * c[0] * (1 + eta * c[1]) * p[1] for c, p in zip(corners, points, strict=True)
    )
    dy_deta = sum(
        0.25 * c[1] * (1 + xi * c[0]) * p[1] for c, p in zip(corners, points, strict=True)
    )
    jac = np.abs(dx_dxi * dy_deta - dx_deta * dy_dxi) * (2 / 400) ** 2
    reference = [float((n * jac).sum()) for n in shape]
    assert quad == pytest.approx(reference, rel=1e-5)
    assert np.ptp(quad) > 0.2  # not a quarter each
    tri = corner_areas(points, np.array([[0, 1, 2, 2]]))[0]
    assert tri == pytest.approx([2 / 3, 2 / 3, 2 / 3, 0.0])


def test_a_body_force_of_rho_g_is_gravity():
    """body_force [0, 0, -rho g] on a rod and on a plate (each of one material) weighs
    rho g times its volume, and together they deflect the structure as gravity does (the
    lumped masses are the lumped volumes times rho; within 1e-10 m of a 1e-4 m deflection,
    the Newton tolerance)."""
    g = 9.81
    for part, rho in (("r.all", 7850.0), ("p.all", 2700.0)):
        body = _plate(f"  - {{set: {part}, body_force: [0, 0, {-rho * g!r}]}}")
        b = rodsim.prepare(body).setup.model.loads
        weight = rho * g * (0.02 * 0.02 * 1.0 if part == "r.all" else 0.01 * 0.5)
        assert b.force.sum(axis=0) == pytest.approx([0.0, 0.0, -weight])
    both = (
        f"  - {{set: r.all, body_force: [0, 0, {-7850 * g!r}]}}\n"
        f"  - {{set: p.all, body_force: [0, 0, {-2700 * g!r}]}}"
    )
    deflected = rodsim.run_in_memory(_plate(both)).position[-1]
    weighed = rodsim.run_in_memory(_plate("  - gravity: [0, 0, -9.81]")).position[-1]
    np.testing.assert_allclose(deflected, weighed, rtol=0, atol=1e-10)  # Newton: 1e-8 x 1e-4 m


def test_body_force_needs_a_section_area(tmp_path):
    material = "material: {{E: 2.1e11, nu: 0.3, rho: 7850}}, shape: {{rectangle: [0.05, 0.1]}}"
    stiffness = "EA: 1.0e6, GA: [1.0e6, 1.0e6], GJ: 1.0, EI: [1.0, 1.0], rhoA: 1, rhoI: [1, 1]"
    text = CANTILEVER.replace(material, stiffness)
    path = tmp_path / "c.yaml"
    path.write_text(text.format(n=4, loads="  - {set: beam.all, body_force: [0, 0, -1]}"))
    out = CliRunner().invoke(main, ["check", str(path)])
    assert out.exit_code == 2, out.output
    assert "loads[0].set" in out.output and "give it a shape" in out.output
