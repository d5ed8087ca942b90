"""output.fields (docs/results.md, "Choosing the datasets"): a run writes only the per-frame
datasets it keeps, does not recover stresses it does not keep, records its choice in the
`fields` attribute, and every reader says "not written: add it to output.fields" for a left-out
dataset; the estimates of `rodsim check` follow it and show the ParaView series' share."""

from pathlib import Path

import h5py
import meshio
import pytest
from click.testing import CliRunner

import rodsim
from rodsim import estimates, run
from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.results.frame import Unwritten
from rodsim.results.layout import ALWAYS_WRITTEN, CHOOSABLE, FRAME_DATASETS
from rodsim.solvers import output

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
FRAME = INPUTS / "frame" / "frame.yaml"  # rods with shaped sections: stresses recovered
SHORT = ("solver.t_end=0.002", "output.interval=0.0005")  # 5 frames
RESULTANTS = "[nodes/velocity, rods/force, rods/moment, rods/strain, rods/curvature]"


def _run(tmp_path, *overrides, vtk=False, name="r.h5"):
    prep = run.prepare(FRAME, (*SHORT, *overrides))
    out = tmp_path / name
    run.execute(prep, out, vtk=vtk, handle_signals=False)
    return prep, out


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_only_the_chosen_datasets_are_written(tmp_path):
    _, out = _run(tmp_path, f"output.fields={RESULTANTS}")
    chosen = {"nodes/velocity", "rods/force", "rods/moment", "rods/strain", "rods/curvature"}
    with h5py.File(out, "r") as f:
        assert list(f.attrs["fields"]) == [p for p in CHOOSABLE if p in chosen]
        for d in FRAME_DATASETS:
            assert (d.path in f) == (not d.choosable or d.path in chosen), d.path
        assert f.attrs["layout_minor"] >= 7


def test_the_default_writes_everything_as_before(tmp_path):
    _, out = _run(tmp_path)
    with h5py.File(out, "r") as f:
        assert set(f.attrs["fields"]) == set(CHOOSABLE)
        for path in ("nodes/velocity", "nodes/reaction_force", "rods/von_mises_max"):
            assert path in f


def test_groups_and_the_empty_list(tmp_path):
    _, out = _run(tmp_path, "output.fields=[rods/*]", name="rods.h5")
    _, none = _run(tmp_path, "output.fields=[]", name="none.h5")
    with h5py.File(out, "r") as f, h5py.File(none, "r") as g:
        assert "rods/von_mises_max" in f and "rods/force" in f and "nodes/velocity" not in f
        assert not [d.path for d in FRAME_DATASETS if d.choosable and d.path in g]
        for path in (*ALWAYS_WRITTEN, "time", "energy/total", "momentum/linear"):
            assert path in g  # always written


def test_stresses_left_out_are_not_recovered(tmp_path, monkeypatch):
    calls = []
    recover = output.stress_fields
    monkeypatch.setattr(output, "stress_fields", lambda *a: calls.append(1) or recover(*a))
    _run(tmp_path, f"output.fields={RESULTANTS}", name="a.h5")
    assert calls == []
    _run(tmp_path, name="b.h5")  # the default recovers them at every frame
    assert len(calls) == 5


@pytest.mark.parametrize(
    "fields, words",
    [
        ("[nodes/bogus]", ["output.fields[0]", "expected one of", "rods/von_mises_max"]),
        ("[rods/force, rods/force]", ["output.fields[1]", "listed twice"]),
        ("[rods/stress]", ["output.fields", "output.stresses: points"]),
        ("nodes/velocity", ["output.fields", "expected a list"]),
    ],
)
def test_invalid_fields_are_input_errors(tmp_path, fields, words):
    result = _cli("check", FRAME, "--set", f"output.fields={fields}")
    assert result.exit_code == 2, result.output
    for word in words:
        assert word in result.output


def test_fields_belong_to_the_case_not_a_step(tmp_path):
    case = next((INPUTS / "steps").glob("*.yaml"))  # a case with analysis steps
    result = _cli("check", case, "--set", "steps[0].output.fields=[]")
    assert result.exit_code == 2, result.output
    assert "case level" in result.output


def test_reading_a_left_out_dataset_says_so(tmp_path):
    _, out = _run(tmp_path, f"output.fields={RESULTANTS}", vtk=True)
    r = rodsim.read_results(out)
    assert r.force.shape == (5, 26, 3)  # kept ones read as ever
    for use in (lambda: r.reaction_force[0], lambda: r.rod_von_mises_max.max()):
        with pytest.raises(CaseError, match="not written: add it to output.fields"):
            use()
    frame = r.frame(4)  # a frame of it still builds
    with pytest.raises(CaseError, match="nodes/angular_velocity not written"):
        frame.angular_velocity.sum()
    # the commands: a clear message and exit 2 for what is asked, the rest works
    sets = list(h5py.File(out, "r")["mesh/sets"])
    bad = _cli("plot", out, f"angular_velocity@{sets[0]}", "-o", tmp_path / "p.png")
    assert bad.exit_code == 2 and "nodes/angular_velocity not written" in bad.output
    bad = _cli("plot", out, f"von_mises_max@{sets[0]}", "-o", tmp_path / "p.png")
    assert bad.exit_code == 2 and "rods/von_mises_max not written" in bad.output
    assert _cli("plot", out, f"velocity@{sets[0]}", "-o", tmp_path / "p.png").exit_code == 0
    assert _cli("info", out).exit_code == 0
    for fmt in ("vtk", "xdmf"):
        assert _cli("export", out, "--format", fmt, "-o", tmp_path / fmt).exit_code == 0
    # the series of the run and of the export: the arrays of the datasets kept only
    for vtu in (tmp_path / "r_vtk" / "r_000004.vtu", tmp_path / "vtk" / "r_vtk" / "r_000004.vtu"):
        mesh = meshio.read(vtu)
        assert set(mesh.point_data) == {"displacement", "velocity", "d1", "d2", "d3"}
        assert set(mesh.cell_data) == {"force", "moment", "strain", "curvature"}


def test_a_restart_keeps_the_fields_of_its_file(tmp_path):
    _, out = _run(tmp_path, f"output.fields={RESULTANTS}")
    prep = run.prepare(FRAME, ("solver.t_end=0.003", "output.interval=0.0005"))
    with pytest.raises(CaseError, match="output.fields differs"):
        run.execute(prep, restart=out, vtk=False, handle_signals=False)
    with h5py.File(out, "r") as f:
        assert f["time"].shape[0] == 5  # the file as it was


# The size estimate's tolerance, as tests/test_estimates.py states it: residuals of the fitted
# HDF5 bookkeeping within 8 kB, 2% for the index of long runs.
ABSOLUTE, RELATIVE = 8_000, 0.02
# The ParaView series' estimate: the calibration (benchmarks/vtk_size.py) left series of 0.87
# to 1.43 times the estimate; how well zlib packs the arrays depends on the motion.
SERIES_LOW, SERIES_HIGH = 0.85, 1.45


@pytest.mark.parametrize("fields", [None, RESULTANTS, "[]"])
def test_the_estimates_follow_the_fields(tmp_path, fields):
    """The file's estimate for every choice; the series' for the choices the calibration
    covered (all datasets, a few): with none, its per-file constant over-counts (0.70)."""
    overrides = () if fields is None else (f"output.fields={fields}",)
    prep, out = _run(tmp_path, *overrides, vtk=True)
    size = estimates.results_size_of(prep)
    actual = out.stat().st_size
    assert abs(size.bytes - actual) <= ABSOLUTE + RELATIVE * actual, (size, actual)
    with h5py.File(out, "r") as f:  # the frame's data: the datasets written, no more
        per = [f[d.path] for d in FRAME_DATASETS if d.per_frame and d.path in f]
        assert size.frame_bytes == sum(ds.nbytes // ds.shape[0] for ds in per)
    if fields == "[]":
        return
    series = sum(p.stat().st_size for p in (tmp_path / "r_vtk").glob("*.vtu"))
    series += (tmp_path / "r.pvd").stat().st_size
    assert SERIES_LOW <= series / estimates.series_size_of(prep) <= SERIES_HIGH


def test_the_summary_shows_the_series_share():
    full = _cli("check", FRAME, *[a for o in SHORT for a in ("--set", o)])
    fewer = _cli("check", FRAME, "--set", "output.fields=[]", "--set", SHORT[0])
    line = next(x for x in full.output.splitlines() if x.startswith("results"))
    assert "+ ParaView series" in line, line
    assert full.exit_code == 0
    few = next(x for x in fewer.output.splitlines() if x.startswith("results"))
    assert few != line


def test_the_series_share_leaves_with_output_vtk_false():
    result = _cli("check", FRAME, "--set", "output.vtk=false")
    line = next(x for x in result.output.splitlines() if x.startswith("results"))
    assert "ParaView" not in line


# --- readers of files with datasets left out; datasets the model cannot have ----------------

ROD = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, material: {E: 1.0e6, nu: 0.3, rho: 1.0, allowable: 1.0e3},
      shape: {rectangle: [0.05, 0.05]}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -1.0e-3]}
solver: {analysis: equilibrium, scheme: implicit, equilibrium: {load_steps: 2}}
output: {vtk: false}
"""
PLATE = """
rodsim: 1
mesh:
  - rectangle: {name: deck, origin: [0, 0, 0], size: [1, 1], elements: [2, 2], section: p}
sections:
  p: {type: plate, material: {E: 1.0e4, nu: 0.3, rho: 1.0}, thickness: 0.05}
boundary:
  - {set: deck.x0, fix: all}
loads:
  - {set: deck.all, pressure: 0.01}
solver: {t_end: 0.01}
output: {interval: 0.005, vtk: false}
"""
# rods given by stiffnesses (no stress recovery points) on a plate
MIXED = """
rodsim: 1
mesh:
  - rectangle: {name: deck, origin: [0, 0, 0], size: [1, 1], elements: [2, 2], section: p}
  - rod: {name: rib, from: [0, 0, 0], to: [0, 1, 0], elements: 2, section: s, up: [0, 0, 1]}
sections:
  p: {type: plate, material: {E: 1.0e4, nu: 0.3, rho: 1.0}, thickness: 0.05}
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, EI: [1, 1], rhoA: 1,
      rhoI: [1.0e-4, 1.0e-4]}
boundary:
  - {set: deck.x0, fix: all}
loads:
  - {set: deck.all, pressure: 0.01}
solver: {t_end: 0.01}
output: {interval: 0.005, vtk: false}
"""


def _case(tmp_path, text: str, name: str, *overrides, vtk=False, memory=False):
    """Run a case text: (results path, its Results in memory (rodsim.run_in_memory) or None)."""
    case = tmp_path / f"{name}.yaml"
    case.write_text(text)
    out = tmp_path / f"{name}.h5"
    run.execute(run.prepare(case, overrides), out, vtk=vtk, handle_signals=False)
    return out, rodsim.run_in_memory(case, overrides=overrides) if memory else None


@pytest.mark.parametrize("kept", ["rods/von_mises_max", "rods/utilisation"])
def test_info_shows_the_stress_datasets_kept(tmp_path, kept):
    """rodsim info with one of von_mises_max and utilisation left out: the other's line."""
    out, _ = _case(tmp_path, ROD, "rod", f"output.fields=[{kept}]")
    result = _cli("info", out)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("stress    rods:"))
    assert ("largest von Mises" in line) == (kept == "rods/von_mises_max")
    assert ("most utilised" in line) == (kept == "rods/utilisation")


def test_along_a_left_out_dataset_says_so(tmp_path):
    out, _ = _case(tmp_path, ROD, "rod", "output.fields=[nodes/*]")
    result = _cli("plot", out, "--along", "moment@beam.all", "-o", tmp_path / "m.png")
    assert result.exit_code == 2, result.output
    assert "rods/moment not written: add it to output.fields" in result.output
    kept = _cli("plot", out, "--along", "velocity@beam.all", "-o", tmp_path / "v.png")
    assert kept.exit_code == 0, kept.output


@pytest.mark.parametrize(
    "text, fields, spec, path",
    [
        (ROD, "[rods/*]", "velocity", "nodes/velocity"),
        (ROD, "[nodes/*]", "von_mises_max", "rods/von_mises_max"),
        (PLATE, "[nodes/*]", "membrane", "plates/membrane"),
    ],
)
def test_render_field_left_out_says_so(tmp_path, text, fields, spec, path):
    from rodsim.post.render_scene import field_values, parse_field
    from rodsim.results.reader import open_results

    out, _ = _case(tmp_path, text, "case", f"output.fields={fields}")
    with open_results(out) as f, pytest.raises(CaseError, match=f"{path} not written"):
        field_values(f, parse_field(spec), 0, f["nodes/position"][0])


def test_datasets_the_model_cannot_have_read_as_absent(tmp_path):
    """Left out only where the mesh has the dataset: plates of a rod-only run None, rod fields
    of a plate-only run empty, rod stresses of stiffness-only rods absent (as without
    output.fields), both in memory and read back."""
    rod, kept = _case(tmp_path, ROD, "rod", "output.fields=[rods/*]", memory=True)
    for r in (kept, rodsim.read_results(rod)):
        assert r.plate_membrane is None and r.plate_von_mises_max is None
        assert r.rod_stress is None  # output.stresses: max has no point stresses
        assert isinstance(r.velocity, Unwritten)
    plate, kept = _case(tmp_path, PLATE, "plate", "output.fields=[plates/*]", memory=True)
    for r in (kept, rodsim.read_results(plate)):
        assert r.force.shape == (3, 0, 3) and r.rod_von_mises_max is None
        assert r.plate_membrane.shape == (3, 4, 3)
    mixed, kept = _case(tmp_path, MIXED, "mixed", "output.fields=[plates/*]", memory=True)
    for r in (kept, rodsim.read_results(mixed)):
        assert r.rod_von_mises_max is None and r.rod_utilisation is None
        assert isinstance(r.force, Unwritten)  # the rods have it
    result = _cli("plot", mixed, "von_mises_max@deck.all", "-o", tmp_path / "vm.png")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "solver",
    [
        "{analysis: equilibrium, scheme: implicit, equilibrium: {load_steps: 2}}",
        "{analysis: equilibrium, scheme: implicit, equilibrium: {path: {method: arc_length, "
        "set: beam.end, component: uz, to: -1.0e-4, steps: 2, length: 1.0e-4}}}",
        "{analysis: modal, modal: {modes: 1}}",
    ],
    ids=["load steps", "path", "modal"],
)
def test_static_frames_follow_the_fields(tmp_path, solver):
    """Equilibrium, path and modal runs: the ParaView series and the in-memory results hold
    the datasets kept only, as the results file does."""
    fields, solver = f"output.fields={RESULTANTS}", f"solver={solver}"
    _, kept = _case(tmp_path, ROD, "rod", fields, solver, vtk=True, memory=True)
    with pytest.raises(CaseError, match="rods/von_mises_max not written"):
        kept.rod_von_mises_max.max()
    with pytest.raises(CaseError, match="nodes/reaction_force not written"):
        kept.reaction_force[0]
    assert kept.force.shape[1:] == (4, 3)
    vtus = sorted((tmp_path / "rod_vtk").glob("rod_*.vtu"))
    assert vtus
    mesh = meshio.read(vtus[-1])
    assert set(mesh.point_data) == {"displacement", "velocity", "d1", "d2", "d3"}
    assert set(mesh.cell_data) == {"force", "moment", "strain", "curvature"}


@pytest.mark.parametrize("stresses", ["max", "points"])
def test_point_stresses_left_out_only_with_output_stresses_points(tmp_path, stresses):
    """rods/stress is a dataset of the model only with output.stresses: points; the file
    tells it from its case and overrides."""
    fields = "output.fields=[rods/von_mises_max]"
    out, _ = _case(tmp_path, ROD, "rod", fields, f"output.stresses={stresses}")
    r = rodsim.read_results(out)
    assert isinstance(r.rod_stress, Unwritten) == (stresses == "points")
    assert isinstance(r.rod_von_mises, Unwritten) == (stresses == "points")
