"""A dynamic run started from a frame of an earlier results file (issue 18, part;
docs/cases.md "Initial conditions": `initial: {from, frame}`): continuing a run, a static
preload followed by dynamics, and the errors a user meets."""

import numpy as np
import pytest
from click.testing import CliRunner

import rodsim
from rodsim.cli import main

BEAM = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {n}, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e9, nu: 0.3, rho: 7850}}, shape: {{rectangle: [0.02, 0.01]}}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, -20.0]}}
{extra}
solver: {solver}
output: {{vtk: false, every: 100}}
"""


def _write(tmp_path, name, solver, extra="", n=10):
    path = tmp_path / name
    path.write_text(BEAM.format(n=n, extra=extra, solver=solver))
    return path


def test_a_run_continued_from_its_last_frame_follows_the_whole_run(tmp_path):
    """0.04 s in one run, and 0.02 s then 0.02 s more from its last frame, at the same dt:
    the same tip motion within 1e-12 of its size (the state is restored from the file's
    positions, quaternions and momenta; the quaternion round trip is the only difference)."""
    dt = 2.0e-6
    whole = _write(tmp_path, "w.yaml", f"{{dt: {dt}, t_end: 0.04}}")
    first = _write(tmp_path, "a.yaml", f"{{dt: {dt}, t_end: 0.02}}")
    rodsim.run_case(first, tmp_path / "a.h5")
    second = _write(tmp_path, "b.yaml", f"{{dt: {dt}, t_end: 0.02}}", "initial: {from: a.h5}")
    w = rodsim.run_in_memory(rodsim.load_case(whole))
    b = rodsim.run_in_memory(rodsim.load_case(second))
    assert b.time[0] == 0.0  # its own time origin
    tip_w, tip_b = w.position[:, -1], b.position[:, -1]
    np.testing.assert_allclose(tip_b[0], tip_w[len(w.time) // 2], rtol=0, atol=1e-15)
    swing = np.ptp(tip_w[:, 2])
    assert swing > 1e-3  # it moves
    np.testing.assert_allclose(tip_b[-1], tip_w[-1], rtol=0, atol=1e-12 * swing)


def test_a_static_preload_then_dynamics_starts_at_rest(tmp_path):
    """The equilibrium under the tip load, then a dynamic run from it under the same load:
    it stays where the equilibrium left it (to the Newton tolerance, 1e-8 relative) and at
    rest; doubling the load there makes it swing about the doubled equilibrium."""
    static = _write(tmp_path, "s.yaml", "{analysis: equilibrium}")
    rest = rodsim.run_case(static, tmp_path / "s.h5")
    equilibrium = rodsim.read_results(rest.path).position[-1]
    held = _write(tmp_path, "d.yaml", "{t_end: 0.01}", "initial: {from: s.h5, frame: -1}")
    r = rodsim.run_in_memory(rodsim.load_case(held))
    deflection = abs(equilibrium[-1, 2])
    assert np.abs(r.position - equilibrium).max() < 1e-7 * deflection
    assert np.abs(r.velocity).max() < 1e-6 * deflection / 0.01


@pytest.mark.parametrize(
    ("initial", "solver", "key", "words"),
    [
        ("{from: s.h5}", "{analysis: equilibrium}", "initial.from", "dynamic analysis"),
        ("{from: s.h5, frame: 7}", "{t_end: 1.0e-3}", "initial.frame", "from -2 to 1"),
        ("{from: nowhere.h5}", "{t_end: 1.0e-3}", "initial.from", "no such results file"),
        ("{from: other.h5}", "{t_end: 1.0e-3}", "initial.from", "another mesh"),
        ("{from: s.h5, velocity: [1, 0, 0]}", "{t_end: 1.0e-3}", "initial", "either from"),
        (
            "{from: s.h5, fields: [{set: beam.end, velocity: [1, 0, 0]}]}",
            "{t_end: 1.0e-3}",
            "initial",
            "either from",
        ),
    ],
)
def test_a_bad_start_is_an_input_error(tmp_path, initial, solver, key, words):
    rodsim.run_case(_write(tmp_path, "s.yaml", "{analysis: equilibrium}"), tmp_path / "s.h5")
    other = _write(tmp_path, "o.yaml", "{analysis: equilibrium}", n=12)
    rodsim.run_case(other, tmp_path / "other.h5")
    case = _write(tmp_path, "x.yaml", solver, f"initial: {initial}")
    out = CliRunner().invoke(main, ["check", str(case)])
    assert out.exit_code == 2, out.output
    assert key in out.output and words in out.output


def test_velocity_fields_per_set_and_along_a_part(tmp_path):
    """initial.fields: the tip set gets its own velocity over the uniform one; a profile
    along the beam (a table of s, the arc length from its start) scales the values node by
    node; a field's angular velocity spins the sections (pi = Lambda J Lambda^T omega)."""
    fields = (
        "initial:\n"
        "  velocity: [0, 0.5, 0]\n"
        "  fields:\n"
        "    - {set: beam.all, velocity: [0, 0, 2.0], along: beam,"
        " profile: {table: [[0, 0], [1, 1]]}}\n"
        "    - {set: beam.end, velocity: [0, 0, 3.0], angular_velocity: [4.0, 0, 0]}\n"
    )
    case = _write(tmp_path, "f.yaml", "{t_end: 1.0e-5}", fields)
    r = rodsim.run_in_memory(rodsim.load_case(case))
    v, x = r.velocity[0], r.mesh.points
    np.testing.assert_allclose(v[:-1, 2], 2.0 * x[:-1, 0], atol=1e-15)  # v = 2 s, s = x here
    assert v[0, 2] == 0.0  # the clamp is held
    np.testing.assert_allclose(v[-1], [0.0, 0.0, 3.0])  # the later field wins
    np.testing.assert_allclose(v[1:-1, 1], 0.0)  # the field replaced the uniform velocity
    np.testing.assert_allclose(r.angular_velocity[0][-1], [4.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(r.angular_velocity[0][:-1], 0.0, atol=1e-15)


@pytest.mark.parametrize(
    ("field", "key", "words"),
    [
        (
            "{set: beam.all, velocity: [1, 0, 0], along: rope, profile: {ramp: 1}}",
            "along",
            "no rod part",
        ),
        (
            "{set: beam.all, velocity: [1, 0, 0], profile: {ramp: 1}}",
            "initial.fields[0]",
            "together",
        ),
        ("{set: beam.all}", "initial.fields[0]", "at least one"),
    ],
)
def test_a_bad_velocity_field_is_an_input_error(tmp_path, field, key, words):
    case = _write(tmp_path, "x.yaml", "{t_end: 1.0e-3}", f"initial: {{fields: [{field}]}}")
    out = CliRunner().invoke(main, ["check", str(case)])
    assert out.exit_code == 2, out.output
    assert key in out.output and words in out.output


def test_a_start_from_a_file_still_running_warns(tmp_path, caplog):
    """A source file whose status says running (being written, or its run killed) was used
    without a word (issue 33): a warning names it; the start is its complete frames."""
    import h5py

    first = _write(tmp_path, "a.yaml", "{dt: 2.0e-6, t_end: 0.001}")
    rodsim.run_case(first, tmp_path / "a.h5")
    second = _write(tmp_path, "b.yaml", "{dt: 2.0e-6, t_end: 0.001}", "initial: {from: a.h5}")
    with caplog.at_level("WARNING", logger="rodsim.case.initial_state"):
        rodsim.run_in_memory(rodsim.load_case(second))
    assert "still running" not in caplog.text
    with h5py.File(tmp_path / "a.h5", "r+") as f:
        f.attrs["status"] = "running"
    with caplog.at_level("WARNING", logger="rodsim.case.initial_state"):
        rodsim.run_in_memory(rodsim.load_case(second))
    assert "a.h5 says its run is still running" in caplog.text
