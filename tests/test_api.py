"""The Python API (docs/python.md): cases from files, strings and dicts; runs in process and in
memory; Simulation stepping and controls; results read back. What `rodsim run` writes is the
reference: the API must reproduce it bit for bit."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import cli_run

import rodsim
from rodsim.case.load import parse_yaml
from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.results.layout import FRAME_DATASETS

ROOT = Path(__file__).resolve().parents[1]
SPAGHETTI = ROOT / "inputs" / "spaghetti" / "spaghetti.yaml"
ROLLUP = ROOT / "inputs" / "rollup" / "rollup.yaml"
FRAME = ROOT / "inputs" / "frame" / "frame.yaml"
RUNS = {  # case, overrides: one per solver
    "explicit": (SPAGHETTI, ["solver.t_end=0.5", "output.interval=0.1"]),
    "implicit": (SPAGHETTI, ["solver.scheme=implicit", "solver.dt=0.05", "solver.t_end=0.2"]),
    "equilibrium": (ROLLUP, ["solver.equilibrium.load_steps=3"]),
}

CANTILEVER = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 8, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 50, EI: [50, 50], rhoA: 1, rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, 0], moment: [0, 0, 0]}
solver: {t_end: 0.03, dt: 0.001}
output: {every: 10}
"""


def assert_same_results(a: rodsim.Results, b: rodsim.Results) -> None:
    """Every per-frame array and the mesh, bit for bit (NaN equal to NaN)."""
    for d in FRAME_DATASETS:
        x, y = getattr(a, d.source), getattr(b, d.source)
        assert (x is None) == (y is None), d.source
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=d.source, strict=True)
    for name, x in a.mesh._asdict().items():
        y = getattr(b.mesh, name)
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], strict=True)
        elif isinstance(x, tuple):
            assert x == y, name
        else:
            np.testing.assert_array_equal(x, y, err_msg=name, strict=True)


def stepped(sim: rodsim.Simulation) -> rodsim.Results:
    """The frames of `rodsim run`'s schedule, taken by stepping the Simulation: one less than
    a frame interval in one compiled call, then a single step (equilibrium: solve per load
    step)."""
    frames = [sim.frame()]
    if sim.kind == "equilibrium":
        for _ in range(sim.n_steps):
            sim.solve()
            frames.append(sim.frame())
        return sim.results(frames)
    every = sim.plan.steps_per_frame
    while sim.steps < sim.n_steps:
        n = min(every, sim.n_steps - sim.steps)
        sim.advance(n - 1)
        sim.step()
        frames.append(sim.frame())
    return sim.results(frames)


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_api_reproduces_rodsim_run_bit_for_bit(kind, tmp_path):
    case, overrides = RUNS[kind]
    res, out = cli_run(case, tmp_path, *overrides)
    assert res.exit_code == 0, res.output
    written = rodsim.read_results(out)
    assert written.status.complete
    assert written.n_frames >= 4
    in_memory = rodsim.run_in_memory(case, overrides=overrides)
    assert_same_results(in_memory, written)
    assert (in_memory.case, in_memory.overrides) == (written.case, written.overrides)
    sim = rodsim.Simulation(rodsim.load_case(case, overrides))
    assert sim.kind == kind
    assert_same_results(stepped(sim), written)


def test_run_case_writes_what_the_cli_writes(tmp_path):
    case, overrides = RUNS["explicit"]
    result = rodsim.run_case(case, tmp_path / "api.h5", overrides=overrides, vtk=False)
    res, out = cli_run(case, tmp_path, *overrides)
    assert result.frames == 6
    assert result.steps == 100
    assert_same_results(rodsim.read_results(result.path), rodsim.read_results(out))


def test_progress_reaches_the_end():
    calls = []
    rodsim.run_in_memory(
        SPAGHETTI, overrides=RUNS["explicit"][1], progress=lambda t, k, n: calls.append((t, k, n))
    )
    assert calls[-1] == (pytest.approx(0.5), 100, 100)


def test_results_frame_and_mesh():
    results = rodsim.run_in_memory(*RUNS["explicit"][:1], overrides=RUNS["explicit"][1])
    assert results.x is results.position
    assert results.x.shape == (6, 11, 3)
    frame = results.frame(5)
    assert frame.time == results.time[5]
    assert frame.total == results.total[5]
    np.testing.assert_array_equal(frame.position, results.position[5])
    np.testing.assert_allclose(frame.directors[0] @ frame.directors[0].T, np.eye(3), atol=1e-14)
    assert list(results.mesh.elements("beam")) == list(range(10))
    assert list(results.mesh.sets["beam.end"]) == [10]
    np.testing.assert_array_equal(results.displacement()[0], 0.0)


# --- cases from files, strings and dicts -------------------------------------------------------


def _same(a, b, where="model") -> None:
    """Models (dataclasses, named tuples, arrays) equal field by field, bit for bit."""
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where, strict=True)
    else:
        assert a == b, where


def test_file_string_and_dict_give_the_same_model():
    """The portal frame reads a mesh file relative to its folder."""
    overrides = ["solver.t_end=1", "loads[1].force=[1000, 0, 0]"]
    from_file = rodsim.load_case(FRAME, overrides)
    text = FRAME.read_text()
    from_text = rodsim.case_from_yaml(text, overrides, folder=FRAME.parent)
    from_dict = rodsim.case_from_dict(parse_yaml(text), overrides, folder=FRAME.parent)
    edited = rodsim.case_from_dict(from_file.to_dict(), folder=FRAME.parent, name="frame")
    reference = rodsim.prepare(from_file)
    for case in (from_text, from_dict, edited):
        assert case.settings == from_file.settings
        prep = rodsim.prepare(case)
        _same(prep.setup.model, reference.setup.model)
        assert prep.plan == reference.plan
    assert (from_text.label, from_dict.label, from_file.label) == ("<string>", "<dict>", str(FRAME))
    assert edited.path == FRAME.resolve()


def test_editing_the_dict_and_overrides_change_the_model():
    case = rodsim.load_case(SPAGHETTI)
    data = case.to_dict()
    data["sections"]["spaghetti"]["EA"] = np.float64(2.0e4)  # numpy values are taken as such
    data["loads"][0]["force"] = np.array([0.2, 0, 0])
    edited = rodsim.prepare(rodsim.case_from_dict(data, folder=SPAGHETTI.parent))
    assert edited.setup.model.rods.c1[0, 0] == 2.0e4
    np.testing.assert_array_equal(edited.setup.model.loads.force[0], [0.2, 0, 0])
    assert case.to_dict() == parse_yaml(SPAGHETTI.read_text())  # the case itself is unchanged
    more = case.with_overrides("solver.t_end=1").with_overrides("solver.dt=0.002")
    assert more.overrides == ("solver.t_end=1", "solver.dt=0.002")
    assert rodsim.prepare(more).plan.n_steps == 500
    assert rodsim.prepare(case, ["solver.t_end=1"]).overrides == ("solver.t_end=1",)


def test_check_prints_what_rodsim_check_prints():
    res = CliRunner().invoke(main, ["check", str(SPAGHETTI), "--set", "solver.t_end=2"])
    assert res.exit_code == 0
    text = rodsim.check(SPAGHETTI, ["solver.t_end=2"])
    assert res.output == text + "\nok\n"
    assert "t_end 2, dt 0.005" in text
    assert text.endswith("beam.all, beam.end, beam.start")


# --- errors ------------------------------------------------------------------------------------


def _error(fn, *args, **kwargs) -> CaseError:
    with pytest.raises(CaseError) as info:
        fn(*args, **kwargs)
    return info.value


def test_errors_name_the_source_and_the_key():
    data = rodsim.load_case(SPAGHETTI).to_dict()
    data["solver"]["dt"] = -1
    exc = _error(rodsim.case_from_dict, data)
    assert (exc.file, exc.key) == ("<dict>", "solver.dt")
    exc = _error(rodsim.case_from_dict, {"rodsim": 1, "title": object()})
    assert (exc.file, exc.key) == ("<dict>", "title")
    exc = _error(rodsim.case_from_yaml, "rodsim: 1\nmesh: [\n")
    assert exc.file == "<string>"
    assert exc.key.startswith("line ")
    exc = _error(rodsim.load_case, SPAGHETTI, ["loads[3].force=[1, 0, 0]"])
    assert (exc.file, exc.key) == (str(SPAGHETTI), "loads[3]")
    exc = _error(rodsim.load_case(SPAGHETTI).with_overrides, "solver.order=3")
    assert (exc.file, exc.key) == (str(SPAGHETTI), "solver.order")
    text = SPAGHETTI.read_text().replace("beam.end", "beam.tip")
    exc = _error(rodsim.prepare, rodsim.case_from_yaml(text, folder=SPAGHETTI.parent))
    assert (exc.file, exc.key) == ("<string>", "loads[0].set")


def test_control_errors_name_the_key():
    sim = rodsim.Simulation(rodsim.case_from_yaml(CANTILEVER))
    assert _error(sim.loads.__getitem__, 1).key == "loads[1]"
    assert _error(sim.loads.__getitem__, "beam.start").key == "loads"
    assert _error(sim.prescribed.__getitem__, 0).key == "boundary[0]"
    control = sim.loads["beam.end"]
    assert _error(setattr, control, "edge_force", (1, 0, 0)).key == "loads[0].edge_force"
    assert _error(setattr, control, "force", (1, 0)).key == "loads[0].force"
    assert _error(setattr, control, "moment", (np.nan, 0, 0)).key == "loads[0].moment"
    assert _error(setattr, sim, "gravity", "down").key == "gravity"
    assert _error(sim.solve).key == "solver.analysis"
    with pytest.raises(ValueError, match="read-only"):
        sim.state.x[0, 0] = 1.0


# --- controls ----------------------------------------------------------------------------------


def _with(text: str, **replace) -> str:
    for old, new in replace.items():
        text = text.replace(old.replace("_", " "), new)
    return text


@pytest.mark.parametrize("kind", ["explicit", "implicit", "equilibrium"])
def test_a_load_set_from_python_equals_the_same_load_in_the_case(kind):
    """Set before the first step, a force, a moment and gravity give the results of a case
    that holds them (equilibrium: no gravity, which the case would ramp; docs/python.md)."""
    solver = {
        "explicit": "solver: {t_end: 0.03, dt: 0.001}",
        "implicit": "solver: {t_end: 0.03, dt: 0.01, scheme: implicit}",
        "equilibrium": "solver: {analysis: equilibrium, equilibrium: {load_steps: 2}}",
    }
    base = CANTILEVER.replace("solver: {t_end: 0.03, dt: 0.001}", solver[kind])
    force, moment, gravity = (0.5, -1.0, 3.0), (0.0, 0.2, 0.1), (0.0, 0.0, -9.81)
    loaded = base.replace(
        "force: [0, 0, 0], moment: [0, 0, 0]", f"force: {list(force)}, moment: {list(moment)}"
    )
    if kind != "equilibrium":
        loaded = loaded.replace("loads:\n", f"loads:\n  - gravity: {list(gravity)}\n")
    reference = rodsim.run_in_memory(rodsim.case_from_yaml(loaded))
    sim = rodsim.Simulation(rodsim.case_from_yaml(base))
    sim.loads[0].force = force
    sim.loads["beam.end"].moment = np.array(moment)
    if kind != "equilibrium":
        sim.gravity = gravity
    np.testing.assert_array_equal(sim.loads[0].force, force)
    assert_same_results(stepped(sim), reference)


def test_a_load_set_between_steps_acts_over_the_whole_next_step():
    """A free rod: a dead force F set after 10 steps changes the total momentum by exactly
    dt F in the next step (both half kicks; the forces of the step's start are recomputed)."""
    sim = rodsim.Simulation(
        rodsim.case_from_yaml(
            CANTILEVER.replace("boundary:\n  - {set: beam.start, fix: all}\n", "")
        )
    )
    sim.advance(10)
    before = sim.state.p.sum(axis=0)
    sim.loads[0].force = (0.0, 2.0, -3.0)
    sim.step()
    np.testing.assert_allclose(
        sim.state.p.sum(axis=0) - before, [0, 2e-3, -3e-3], rtol=1e-12, atol=1e-15
    )
    sim.loads[0].force = (0.0, 0.0, 0.0)
    before = sim.state.p.sum(axis=0)
    sim.advance(5)
    np.testing.assert_allclose(sim.state.p.sum(axis=0), before, atol=1e-15)


def test_controls_change_the_simulation_only():
    """Two Simulations of one prepared case: loads set in one reach neither the other nor the
    prepared case (which rodsim.run_case may run again)."""
    prep = rodsim.prepare(rodsim.case_from_yaml(CANTILEVER))
    a, b = rodsim.Simulation(prep), rodsim.Simulation(prep)
    a.loads[0].force = (1.0, 2.0, 3.0)
    a.gravity = (0.0, 0.0, -1.0)
    for model in (b.model, prep.setup.model):
        np.testing.assert_array_equal(model.loads.force, 0.0)
        np.testing.assert_array_equal(model.loads.gravity, 0.0)
    np.testing.assert_array_equal(a.model.loads.force[0], [1, 2, 3])
    assert a.model.terms.loads.force is a.model.loads.force  # what the kernels read


def test_prescribed_motion_from_python():
    text = CANTILEVER.replace(
        "  - {set: beam.start, fix: all}\n",
        "  - {set: beam.start, fix: all}\n"
        "  - {set: beam.end, prescribe: {displacement: [null, null, 0]}}\n",
    )
    sim = rodsim.Simulation(rodsim.case_from_yaml(text))
    motion = sim.prescribed["beam.end"]
    assert motion.displacement == (None, None, 0.0)
    motion.displacement = (None, None, 0.01)
    assert sim.state.x[8, 2] == 0.0  # reached at the end of the next step
    sim.step()
    assert sim.state.x[8, 2] == 0.01
    assert sim.state.p[8, 2] == 0.0
    assert (
        _error(setattr, motion, "displacement", (0.1, None, 0.01)).key
        == "boundary[1].prescribe.displacement"
    )
    assert _error(getattr, motion, "rotation").key == "boundary[1].prescribe.rotation"


def test_import_rodsim_loads_no_numba():
    code = "import sys, rodsim; print('numba' in sys.modules, callable(rodsim.load_case))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.split() == ["False", "True"]
