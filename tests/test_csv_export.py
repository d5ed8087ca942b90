"""rodsim export --format csv (rodsim/post/csv_export.py): tables that read back to the
results file's numbers bit for bit."""

from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from rodsim import api
from rodsim.cli import main
from rodsim.post.csv_export import export_csv

ROD = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 6, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, EI: [1, 1], rhoA: 1,
      rhoI: [1.0e-4, 1.0e-4]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 1, -2]}
solver: {t_end: 0.05}
output: {interval: 0.01, vtk: false}
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


def _run(tmp_path: Path, text: str, name: str) -> Path:
    case = tmp_path / f"{name}.yaml"
    case.write_text(text)
    out = tmp_path / f"{name}.h5"
    api.run_case(case, out, vtk=False)
    return out


def _read(path: Path):
    """(comment lines, header, (R,C) values) as a user reads it back with numpy."""
    lines = path.read_text().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    header = lines[len(comments)].split(",")
    values = np.loadtxt(path, delimiter=",", comments="#", skiprows=len(comments) + 1, ndmin=2)
    return comments, header, values


@pytest.fixture(scope="module")
def rod(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("rod"), ROD, "rod")


def test_node_table_reads_back_bit_for_bit(rod, tmp_path):
    path = export_csv(rod, tmp_path / "nodes.csv", "nodes", 3)
    comments, header, values = _read(path)
    with h5py.File(rod) as f:
        time = float(f["time"][3])
    assert f"rod.h5, nodes of frame 3 (time {time!r}); the case's consistent units" in comments[0]
    units = comments[1].removeprefix("# units: ").split(",")
    assert len(units) == len(header)
    assert units[header.index("velocity.y")] == "length/time"
    with h5py.File(rod) as f:
        column = {name: values[:, i] for i, name in enumerate(header)}
        np.testing.assert_array_equal(column["node"], np.arange(7))
        for q in ("position", "velocity", "reaction_force"):
            for i, c in enumerate("xyz"):
                assert np.array_equal(column[f"{q}.{c}"], f[f"nodes/{q}"][3][:, i]), q
        for i, c in enumerate("wxyz"):
            assert np.array_equal(column[f"rotation.{c}"], f["nodes/rotation"][3][:, i])
        u = f["nodes/position"][3] - f["mesh/points"][()]
        assert np.array_equal(column["displacement.z"], u[:, 2])


def test_rod_table_names_components_as_rodsim_plot(rod, tmp_path):
    path = export_csv(rod, tmp_path / "rods.csv", "rods", -1)
    _, header, values = _read(path)
    assert header[:5] == ["rod", "node1", "node2", "part", "section"]
    column = {name: values[:, i] for i, name in enumerate(header)}
    with h5py.File(rod) as f:
        np.testing.assert_array_equal(column["node1"], f["mesh/rods"][:, 0])
        assert np.array_equal(column["force.axial"], f["rods/force"][-1][:, 0])
        assert np.array_equal(column["moment.bending2"], f["rods/moment"][-1][:, 1])
        assert np.array_equal(column["curvature.3"], f["rods/curvature"][-1][:, 2])


@pytest.mark.parametrize("chunk", [256, 2])  # the frames in one read, or in three
def test_envelope_is_the_least_and_largest_over_the_frames(rod, tmp_path, monkeypatch, chunk):
    """Per element and per node: each column's min and max over all frames of the HDF5
    dataset, bit for bit, and the first frame each occurs at."""
    monkeypatch.setattr("rodsim.post.csv_export.CHUNK", chunk)
    _, header, values = _read(export_csv(rod, tmp_path / "e.csv", "rods", envelope=True))
    column = {name: values[:, i] for i, name in enumerate(header)}
    with h5py.File(rod) as f:
        m = f["rods/moment"][()][:, :, 1]  # (F, E) bending2
        u = f["nodes/position"][()][:, :, 2] - f["mesh/points"][()][:, 2]
    assert np.array_equal(column["moment.bending2.min"], m.min(axis=0))
    assert np.array_equal(column["moment.bending2.max"], m.max(axis=0))
    assert np.array_equal(column["moment.bending2.min_frame"], m.argmin(axis=0))
    assert np.array_equal(column["moment.bending2.max_frame"], m.argmax(axis=0))
    assert len(set(column["moment.bending2.max_frame"])) > 1 or m.shape[0] == 1
    _, header, values = _read(export_csv(rod, tmp_path / "n.csv", "nodes", envelope=True))
    column = {name: values[:, i] for i, name in enumerate(header)}
    assert np.array_equal(column["displacement.z.min"], u.min(axis=0))
    assert np.array_equal(column["displacement.z.max_frame"], u.argmax(axis=0))


def test_envelope_passes_over_nan(tmp_path):
    """utilisation without an allowable stress is NaN in every frame: -1 for its frames; a NaN
    in some frames only is passed over."""
    from rodsim.post.csv_export import _extreme

    chunk = np.array([[np.nan, 1.0, np.nan], [2.0, 0.5, np.nan], [1.0, np.nan, np.nan]])
    values, frames = _extreme(None, chunk, 10, np.greater)
    assert np.array_equal(values[:2], [2.0, 1.0]) and np.isnan(values[2])
    assert np.array_equal(frames, [11, 10, -1])


def test_history_of_a_set_has_every_frame(rod, tmp_path):
    path = export_csv(rod, tmp_path / "tip.csv", history="beam.end")
    _, header, values = _read(path)
    column = {name: values[:, i] for i, name in enumerate(header)}
    with h5py.File(rod) as f:
        tip = int(f["mesh/sets/beam.end"][0])
        assert np.array_equal(column["time"], f["time"][()])
        assert np.array_equal(column["energy.kinetic"], f["energy/kinetic"][()])
        assert np.array_equal(column["momentum.linear.y"], f["momentum/linear"][:, 1])
        assert np.array_equal(column["position.z"], f["nodes/position"][:, tip, 2])
        u = f["nodes/position"][:, tip, 0] - f["mesh/points"][tip, 0]
        assert np.array_equal(column["displacement.x"], u)


def test_a_set_of_several_nodes_names_each_node(rod, tmp_path):
    path = export_csv(rod, tmp_path / "all.csv", history="beam.all")
    _, header, _ = _read(path)
    assert "position.x@0" in header and "velocity.z@6" in header


def test_plate_table(tmp_path):
    plate = _run(tmp_path, PLATE.replace("rho: 1.0}", "rho: 1.0, allowable: 100}"), "plate")
    path = export_csv(plate, tmp_path / "plates.csv", "plates", -1)
    _, header, values = _read(path)
    assert header[:7] == ["plate", "node1", "node2", "node3", "node4", "part", "section"]
    # the von Mises stress of the three surfaces is per point, not per element: left out
    assert header[-2:] == ["von_mises_max", "utilisation"]
    assert not any(name.startswith("von_mises.") for name in header)
    column = {name: values[:, i] for i, name in enumerate(header)}
    with h5py.File(plate) as f:
        assert np.array_equal(column["membrane.N11"], f["plates/membrane"][-1][:, 0])
        assert np.array_equal(column["shear.Q2"], f["plates/shear"][-1][:, 1])


def test_cli_writes_next_to_the_results_by_default(rod):
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "csv", "--frame", "2"])
    assert result.exit_code == 0, result.output
    path = rod.parent / "rod_nodes_2.csv"
    assert path.exists() and f"wrote {path}" in result.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--format", "csv", "--history", "tipp"],
            "rod.h5: --history: unknown node set 'tipp' (sets: beam.all",
        ),
        (["--format", "csv", "--frame", "99"], "holds 6 frames (0 to 5, or -6 to -1); got 99"),
        (["--format", "csv", "--table", "plates"], "--table: the results have no plate elements"),
        (
            ["--format", "csv", "--table", "contact"],
            "--table: expected one of nodes, rods, plates (or a term's dataset), got 'contact'",
        ),
        (["--table", "rods"], "--table is for --format csv"),
        (["--format", "csv", "--history", "beam.end", "--frame", "1"], "without --table"),
        (["--format", "csv", "--set", "solver.t_end=1"], "--set is for --matrices"),
        (["--format", "csv", "--envelope", "--frame", "1"], "give it without --frame"),
        (["--envelope"], "--envelope is for --format csv"),
    ],
)
def test_cli_refuses_what_it_cannot_write(rod, tmp_path, args, words):
    result = CliRunner().invoke(main, ["export", str(rod), "-o", str(tmp_path / "x.csv"), *args])
    assert result.exit_code == 2, result.output
    assert words in result.output


STRESSED = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850, allowable: 2.35e8},
      shape: {circle: 0.01}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -10]}
solver: {analysis: equilibrium}
output: {vtk: false}
"""


def test_rod_table_has_the_stress_maxima_not_the_points(tmp_path):
    out = _run(tmp_path, STRESSED, "stressed")
    path = export_csv(out, tmp_path / "rods.csv", "rods", -1)
    _, header, values = _read(path)
    assert header[-2:] == ["von_mises_max", "utilisation"]
    assert not any(name.startswith(("von_mises.", "stress")) for name in header)
    with h5py.File(out) as f:
        assert np.array_equal(values[:, -1], f["rods/utilisation"][-1])


def test_the_results_file_is_never_overwritten(rod):
    before = rod.read_bytes()
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "csv", "-o", str(rod)])
    assert result.exit_code == 2, result.output
    assert "is the results file itself" in result.output
    assert rod.read_bytes() == before


def test_a_failed_write_keeps_the_old_file_and_is_exit_4(rod, tmp_path, monkeypatch):
    target = tmp_path / "keep.csv"
    target.write_text("# rodsim export: an earlier table\n")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "replace", full)  # the table fails as a full disk would
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "csv", "-o", str(target)])
    assert result.exit_code == 4, result.output
    assert "cannot write" in result.output and "No space left" in result.output
    assert target.read_text() == "# rodsim export: an earlier table\n"
    assert list(tmp_path.iterdir()) == [target]  # no partial file left


def test_matrices_take_no_csv_options(tmp_path):
    case = tmp_path / "c.yaml"
    case.write_text(ROD)
    result = CliRunner().invoke(main, ["export", "--matrices", str(case), "--table", "rods"])
    assert result.exit_code == 2, result.output
    assert "--table is for --format csv, not --matrices" in result.output


def test_an_existing_file_is_replaced_only_if_it_is_a_table(rod, tmp_path):
    other = tmp_path / "notes.csv"
    other.write_text("my own notes\n")
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "csv", "-o", str(other)])
    assert result.exit_code == 2 and "is not a CSV table of rodsim export" in result.output
    assert other.read_text() == "my own notes\n"
