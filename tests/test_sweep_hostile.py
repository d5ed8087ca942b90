"""rodsim sweep against hostile input (issue 33): a sweep writes only into a folder that is
new, empty or a sweep's; a run's name covers every file its case reads, an XDMF mesh's heavy
data too; collected names that the summary cannot hold faithfully are refused; and the check
of a sweep is linear and cheap per run (no YAML parse of the case per run)."""

import os
from pathlib import Path

import h5py
import meshio
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import small_cantilever, tree_bytes

from rodsim.cli import main
from rodsim.results import guard
from rodsim.sweep import spec, summary
from rodsim.sweep.spec import Collect, Sweep

SWEEP = """rodsim_sweep: 1
case: cant.yaml
parameters:
  loads[0].force[2]: [-1.0, -2.0]
collect:
{collect}
{output}"""
TIP = "  tip: {series: displacement.z@beam.end, reduce: final}"


def _files(folder: Path, collect: str = TIP, output: str = "", case: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cant.yaml").write_text(case or small_cantilever(solver="{analysis: equilibrium}"))
    path = folder / "sweep.yaml"
    path.write_text(SWEEP.format(collect=collect, output=output))
    return path


def _sweep(*args):
    return CliRunner().invoke(main, ["sweep", *map(str, args), "--workers", "1", "-q"])


@pytest.mark.parametrize("how", ["output", "-o"])
def test_a_sweep_never_writes_into_a_foreign_folder(tmp_path, how):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "summary.csv").write_text("their,own,table\n1,2,3\n")
    (victim / "notes.txt").write_text("keep me")
    work = tmp_path / "work"
    path = _files(work, output="output: ../victim\n" if how == "output" else "")
    before = tree_bytes(tmp_path)
    result = _sweep(path, *(["-o", victim] if how == "-o" else []))
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and f": {how}: " in result.output
    assert str(victim) in result.output and "not a rodsim sweep's folder" in result.output
    assert tree_bytes(tmp_path) == before  # nothing written, nothing replaced


def test_a_foreign_summary_in_a_sweeps_folder_is_not_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / summary.MARKER).write_text("")
    (out / "summary.h5").write_bytes(b"not an HDF5 file of a sweep")
    path = _files(tmp_path / "w")
    before = tree_bytes(tmp_path)
    result = _sweep(path, "-o", out)
    assert result.exit_code == 2, result.output
    assert str(out / "summary.h5") in result.output and ": -o: " in result.output
    assert tree_bytes(tmp_path) == before


def test_a_sweeps_folder_is_recognised_by_what_a_sweep_writes(tmp_path):
    assert not summary.is_sweep_folder(tmp_path / "none")
    assert not summary.is_sweep_folder(tmp_path)
    (tmp_path / summary.MARKER).write_text("")
    assert summary.is_sweep_folder(tmp_path)
    header = "run,name,p,tip," + ",".join(spec.COLUMNS[2:]) + "\n"
    (tmp_path / "summary.csv").write_text(header)
    assert guard.is_sweep_csv(tmp_path / "summary.csv")
    (tmp_path / "summary.csv").write_text("run,name,other\n")
    assert not guard.is_sweep_csv(tmp_path / "summary.csv")


def _xdmf(path: Path, length: float) -> None:
    """A straight rod of 4 line cells along x, its points in an uncompressed HDF5 file (so
    new numbers keep its size)."""
    x = np.linspace(0.0, length, 5)
    points = np.column_stack([x, np.zeros(5), np.zeros(5)])
    lines = np.array([[i, i + 1] for i in range(4)])
    mesh = meshio.Mesh(points, [("line", lines)])
    meshio.xdmf.write(path, mesh, data_format="HDF", compression=None)


XCASE = """rodsim: 1
mesh:
  - {file: beam.xdmf, name: beam, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
sets:
  tip: {near: [5, 0, 0]}
  root: {near: [0, 0, 0]}
boundary:
  - {set: root, fix: all}
loads:
  - {set: tip, force: [0, 0, -1.0]}
solver: {analysis: equilibrium}
output: {vtk: false}
"""


def test_new_heavy_data_of_an_xdmf_mesh_makes_new_runs(tmp_path):
    """The summary's tip x is the direct run's after the .h5 the .xdmf points to changed in
    place, same size and same mtime (the .xdmf itself unchanged)."""
    work = tmp_path / "w"
    path = _files(work, "  tip_x: {series: position.x@tip, reduce: final}", case=XCASE)
    _xdmf(work / "beam.xdmf", 1.0)
    heavy = next(work.glob("*.h5"))
    assert _sweep(path).exit_code == 0
    first = summary.read(work / "sweep_sweep" / "summary.h5")
    stat, size, xdmf = heavy.stat(), heavy.stat().st_size, (work / "beam.xdmf").read_bytes()
    with h5py.File(heavy, "r+") as f:  # the points, doubled in place
        (name,) = [k for k in f if f[k].shape == (5, 3)]
        f[name][...] = f[name][()] * 2.0
    os.utime(heavy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert heavy.stat().st_size == size and heavy.stat().st_mtime_ns == stat.st_mtime_ns
    assert (work / "beam.xdmf").read_bytes() == xdmf
    result = _sweep(path)
    assert result.exit_code == 0, result.output
    assert "2 ran now" in result.output
    again = summary.read(work / "sweep_sweep" / "summary.h5")
    assert set(again["name"]).isdisjoint(first["name"])
    direct = CliRunner().invoke(main, ["run", str(work / "cant.yaml"), "-o", str(tmp_path / "d.h5"),
                                       "--set", "loads[0].force[2]=-1.0", "-q"])  # fmt: skip
    assert direct.exit_code == 0, direct.output
    from rodsim.validate.measure import read_series

    _, x = read_series(tmp_path / "d.h5", "position.x@tip", None)
    assert again["results/tip_x"][0] == x[-1]  # the same file's number: exactly
    assert x[-1] > 1.5  # the doubled beam's tip (about 2: a small axial effect of the load)


@pytest.mark.parametrize(
    "name",
    [".", "..", '"a\\0b"', '"a\\nb"', "a/b"],
)
def test_a_collected_name_the_summary_cannot_hold_is_refused(tmp_path, name):
    path = _files(tmp_path, f"  {name}: {{series: displacement.z@beam.end, reduce: final}}")
    before = tree_bytes(tmp_path)
    result = _sweep(path)
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and "collect." in result.output
    assert tree_bytes(tmp_path) == before


def test_a_dotted_name_is_stored_faithfully(tmp_path):
    path = _files(tmp_path, "  tip.z: {series: displacement.z@beam.end, reduce: final}\n" + TIP)
    result = _sweep(path)
    assert result.exit_code == 0, result.output
    table = summary.read(tmp_path / "sweep_sweep" / "summary.h5")
    assert np.array_equal(table["results/tip.z"], table["results/tip"])
    assert not list((tmp_path / "sweep_sweep").glob("*.part"))


def test_a_failed_summary_write_leaves_no_part_file(tmp_path):
    """Two collected names one dataset cannot hold (as spec refuses): the write fails and
    leaves no .part file (and no summary.h5)."""
    sweep = Sweep(tmp_path / "s.yaml", "", tmp_path / "c.yaml", ("p",), (), tuple(
        Collect(n, "energy.total", "final") for n in ("x", "x")), tmp_path)  # fmt: skip
    with pytest.raises(ValueError):
        summary.write(sweep, [], [])
    assert not list(tmp_path.glob("*.part")) and not (tmp_path / "summary.h5").exists()


def test_the_check_parses_the_case_once_not_per_run(tmp_path, monkeypatch):
    """--check of a 40 x 25 grid: YAML is parsed a number of times independent of the run
    count (the case once or twice, the sweep file, a first run), never per run."""
    from rodsim.case import load

    path = _files(tmp_path)
    text = path.read_text().replace(
        "  loads[0].force[2]: [-1.0, -2.0]",
        "  loads[0].force[2]: {linspace: [-1, -2, 40]}\n"
        "  sections.s.EA: {logspace: [1e4, 1e5, 25]}",
    )
    path.write_text(text)
    calls = []
    real = load.parse_yaml
    monkeypatch.setattr(load, "parse_yaml", lambda *a, **k: calls.append(1) or real(*a, **k))
    result = CliRunner().invoke(main, ["sweep", str(path), "--check"])
    assert result.exit_code == 0, result.output
    assert "1000 runs" in result.output
    assert len(calls) < 20, len(calls)  # the old check: 6 per run
