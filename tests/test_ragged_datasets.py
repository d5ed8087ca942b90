"""Ragged per-frame datasets (docs/results.md "Ragged datasets", layout 1.10): a term declares
a fixed and a ragged dataset with one Term.datasets entry each; a short explicit run writes
them, and every reader and export reads them back frame by frame: rodsim.read_results,
read_frame, rodsim info, CSV, XDMF and the ParaView series.

The term is the loads term with a `fields` hook and datasets of its own, swapped into TERMS
for these tests only (probe_term): its kernels are the loads term's, so nothing compiles
again. Its values follow from the frame's positions alone, so each frame's can be computed
again from the positions read back and compared bit for bit: probe/height (N,) the nodes' z;
the ragged probe/pair_nodes (R, 2) the neighbouring nodes (i, i + 1) whose mean z is below
CUT, and probe/pair_force (R, 3) x[i+1] - x[i] of each: none at the start, more as the
cantilever bends down."""

import dataclasses
import sys

import h5py
import meshio
import numpy as np
import pytest
from conftest import small_cantilever

from rodsim import api
from rodsim.errors import CaseError
from rodsim.model import forces
from rodsim.post import csv_export, export, summary, xdmf_export
from rodsim.results import arrays, layout, read_results, reader, storage, vtk, vtk_cells, writer  # noqa: F401
from rodsim.results.reader import frame_count, open_results, read_frame
from rodsim.terms import TERMS

CUT = -0.004  # z below which a pair of neighbours counts
PROBE = (
    {
        "path": "probe/height",
        "shape": ("Q",),
        "units": "length",
        "description": "z of each node",
        "since": 10,
    },
    {
        "path": "probe/pair_nodes",
        "shape": ("R", 2),
        "units": "index",
        "description": "neighbouring nodes whose mean z is below the cut",
        "dtype": "i8",
        "since": 10,
        "ragged": True,
    },
    {
        "path": "probe/pair_force",
        "shape": ("R", 3),
        "units": "force",
        "description": "x[b] - x[a] of each pair",
        "since": 10,
        "ragged": True,
    },
)


def probe_values(x: np.ndarray) -> dict:
    z = x[:, 2]
    i = np.flatnonzero(z[:-1] + z[1:] < 2 * CUT)
    return {
        "probe/height": z.copy(),
        "probe/pair_nodes": np.stack([i, i + 1], axis=1).astype(np.int64),
        "probe/pair_force": x[i + 1] - x[i],
    }


def _fields(own, x, rot, quat, with_energy, state=None):
    return probe_values(x), 0.0


@pytest.fixture
def probe_term(monkeypatch):
    """TERMS with the probe: the loads term with its fields and datasets, in rodsim.model.
    forces (which calls the hooks) and in every table derived from the declarations
    (rodsim.results.layout.term_tables), wherever a module of rodsim holds one."""
    terms = tuple(
        dataclasses.replace(t, fields=_fields, datasets=PROBE) if t.name == "loads" else t
        for t in TERMS
    )
    tables = layout.term_tables(terms)
    before = {name: getattr(layout, name) for name in tables}
    for module in [m for n, m in sys.modules.items() if n.startswith("rodsim")]:
        for name, value in tables.items():
            if getattr(module, name, None) is before[name]:
                monkeypatch.setattr(module, name, value)
    monkeypatch.setattr(forces, "TERMS", terms)
    return tables


@pytest.fixture
def run(probe_term, tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text(small_cantilever(solver="{dt: auto, t_end: 0.3}", output="{interval: 0.05}"))
    out = tmp_path / "r.h5"
    api.run_case(case, out, vtk=False)
    return out


def test_a_ragged_declaration_is_one_entry_with_its_end(probe_term):
    by_path = {d.path: d for d in probe_term["TERM_FRAME_DATASETS"]}
    assert not by_path["probe/height"].ragged
    assert by_path["probe/pair_force"].ragged
    assert by_path["probe/pair_force"].end_path == "probe/pair_force_end"
    assert "probe/*" in probe_term["FIELD_NAMES"]
    bad = dataclasses.replace(TERMS[0], datasets=({**PROBE[1], "shape": (2,)},))
    with pytest.raises(ValueError, match="size letter"):
        layout.term_datasets((bad,))


def _expected(x: np.ndarray) -> dict:
    return probe_values(x)


def test_the_file_holds_flat_rows_and_ends(run):
    with h5py.File(run, "r") as f:
        assert f.attrs["layout_minor"] == 10
        x = f["nodes/position"][()]
        ends = f["probe/pair_force_end"][()]
        assert f["probe/pair_force"].attrs["frame_end"] == "probe/pair_force_end"
        rows = [len(_expected(xk)["probe/pair_nodes"]) for xk in x]
        np.testing.assert_array_equal(ends, np.cumsum(rows))
        assert rows[0] == 0 and len(set(rows)) >= 3, rows  # the rows change from frame to frame
        np.testing.assert_array_equal(f["probe/pair_nodes_end"][()], ends)
        flat = np.concatenate([_expected(xk)["probe/pair_force"] for xk in x])
        np.testing.assert_array_equal(f["probe/pair_force"][()], flat)
        np.testing.assert_array_equal(f["probe/height"][()], x[:, :, 2])
        assert f["probe/pair_nodes"].dtype == np.int64


def test_read_results_and_read_frame_give_each_frames_rows(run):
    r = read_results(run)
    assert r.n_frames == 7
    assert isinstance(r.terms["probe/pair_force"], list)
    with open_results(run) as f:
        for k in range(r.n_frames):
            want = _expected(r.position[k])
            fr = read_frame(f, k)
            for path, v in want.items():
                np.testing.assert_array_equal(r.terms[path][k], v, err_msg=f"{path} {k}")
                np.testing.assert_array_equal(fr.terms[path], v, err_msg=f"{path} {k}")
                np.testing.assert_array_equal(r.frame(k).terms[path], v)
            assert fr.terms["probe/pair_nodes"].dtype == np.int64
    memory = arrays.from_frames([r.frame(k) for k in range(r.n_frames)], r.mesh)
    for k in range(r.n_frames):
        np.testing.assert_array_equal(
            memory.terms["probe/pair_force"][k], r.terms["probe/pair_force"][k]
        )


def test_a_frame_counts_only_with_its_rows_and_its_end(run):
    """A kill during a flush can leave a frame's end without its rows, or its rows without
    their end: it is not a complete frame."""
    with h5py.File(run, "a") as f:
        ends = f["probe/pair_force_end"][()]
        n = len(ends)
        f["probe/pair_force"].resize(ends[-1] - 1, axis=0)
    with open_results(run) as f:
        assert frame_count(f) == n - 1
    with h5py.File(run, "a") as f:
        f["probe/pair_force"].resize(ends[-1], axis=0)
        f["probe/pair_nodes_end"].resize(n - 2, axis=0)
    with open_results(run) as f:
        assert frame_count(f) == n - 2
        assert len(read_results(run).terms["probe/pair_force"]) == n - 2


def test_info_lists_the_rows_a_frame(run):
    text = summary.describe(run)
    r = read_results(run)
    counts = [len(v) for v in r.terms["probe/pair_force"]]
    total = sum(counts)
    want = (
        f"probe/pair_force ({total}, 3) ragged: {min(counts)} to {max(counts)} rows a frame, "
        "frame k's end at probe/pair_force_end[k]"
    )
    assert want in text, text
    assert "probe/height (7, 5)" in text


def _csv(path):
    lines = path.read_text().splitlines()
    names = lines[2].split(",")
    data = [[float(x) for x in line.split(",")] for line in lines[3:]]
    return names, np.array(data).reshape(-1, len(names))


def test_csv_tables_of_the_fixed_and_the_ragged_datasets(run, tmp_path):
    r = read_results(run)
    for k in range(r.n_frames):
        want = _expected(r.position[k])
        out = csv_export.export_csv(run, tmp_path / f"p{k}.csv", table="probe/pair_force", frame=k)
        names, data = _csv(out)
        assert names == [
            "row",
            "pair_nodes.1",
            "pair_nodes.2",
            "pair_force.x",
            "pair_force.y",
            "pair_force.z",
        ]
        assert len(data) == len(want["probe/pair_nodes"])
        np.testing.assert_array_equal(data[:, 1:3], want["probe/pair_nodes"])
        np.testing.assert_array_equal(data[:, 3:], want["probe/pair_force"])
        out = csv_export.export_csv(run, tmp_path / f"h{k}.csv", table="probe", frame=k)
        names, data = _csv(out)
        assert names == ["row", "height"]
        np.testing.assert_array_equal(data[:, 1], want["probe/height"])
    with pytest.raises(Exception, match="envelope"):
        csv_export.export_csv(run, tmp_path / "e.csv", table="probe/pair_force", envelope=True)


def test_the_command_line_writes_a_terms_table(run, tmp_path):
    """rodsim export --format csv --table <group>/<name>: the same file as the function."""
    from click.testing import CliRunner

    from rodsim.cli import main

    k = read_results(run).n_frames - 1
    out = tmp_path / "cli.csv"
    args = ["export", str(run), "--format", "csv", "--table", "probe/pair_force", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--frame", str(k)])
    assert result.exit_code == 0, result.output
    same = csv_export.export_csv(run, tmp_path / "py.csv", table="probe/pair_force", frame=k)
    assert out.read_text() == same.read_text()


def test_the_paraview_series_has_each_frames_pairs_as_line_cells(run, tmp_path):
    pvd, n = export.export_vtk(run, tmp_path / "series")
    r = read_results(run)
    entries = vtk.read_pvd(pvd)
    assert len(entries) == n == r.n_frames
    e = len(r.mesh.conn)
    for k, (_, vtu) in enumerate(entries):
        want = _expected(r.position[k])
        mesh = meshio.read(vtu)
        lines = np.concatenate([c.data for c in mesh.cells if c.type == "line"])
        np.testing.assert_array_equal(lines[:e], r.mesh.conn)
        np.testing.assert_array_equal(lines[e:], want["probe/pair_nodes"])
        force = np.concatenate(mesh.cell_data["probe_pair_force"])
        np.testing.assert_array_equal(force[e:], want["probe/pair_force"])
        assert not force[:e].any()
        np.testing.assert_array_equal(mesh.field_data["probe_height"][:, 0], want["probe/height"])


def test_the_xdmf_index_has_a_collection_of_the_pairs(run, tmp_path):
    vtk_module = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy

    index = xdmf_export.export_xdmf(run, tmp_path / "r.xdmf")
    r = read_results(run)
    xml = index.read_text()
    assert '<Grid Name="probe/pair_nodes" GridType="Collection"' in xml
    reader_ = vtk_module.vtkXdmfReader()
    reader_.SetFileName(str(index))
    reader_.UpdateInformation()
    info = reader_.GetOutputInformation(0)
    times = info.Get(vtk_module.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    for k in range(r.n_frames):
        want = _expected(r.position[k])
        reader_.UpdateTimeStep(times[k])
        out = reader_.GetOutputDataObject(0)
        block = out.GetBlock(1)
        assert block.GetNumberOfCells() == len(want["probe/pair_nodes"])
        if not len(want["probe/pair_nodes"]):
            continue
        cells = vtk_to_numpy(block.GetCells().GetConnectivityArray()).reshape(-1, 2)
        np.testing.assert_array_equal(cells, want["probe/pair_nodes"])
        force = vtk_to_numpy(block.GetCellData().GetArray("pair_force"))
        np.testing.assert_array_equal(force, want["probe/pair_force"])


def test_a_restart_from_an_older_state_cuts_and_rewrites_the_ragged_rows(probe_term, tmp_path):
    """The restart slots of a short run hold frame 0 and its last frame; pointing `current`
    at frame 0's slot, the restart drops frames 1 on (the flat rows and their ends cut back
    to frame 0's) and writes them again: every probe dataset equal, bit for bit, to the
    uninterrupted run's (docs/restart.md: the explicit scheme continues bit for bit)."""
    case = tmp_path / "case.yaml"
    case.write_text(small_cantilever(solver="{dt: 0.001, t_end: 0.3}", output="{interval: 0.1}"))
    full, h5 = tmp_path / "full.h5", tmp_path / "r.h5"
    api.run_case(case, full, vtk=False)
    api.run_case(case, h5, vtk=False)
    with h5py.File(h5, "r+") as f:
        g = f["restart"]
        older = 1 - int(g.attrs["current"])
        assert g[f"slot{older}"].attrs["frame"] == 0
        g.attrs["current"] = older
    api.run_case(case, h5, vtk=False, restart=h5)
    with h5py.File(full, "r") as a, h5py.File(h5, "r") as b:
        names = [f"probe/{k}" for k in a["probe"]]
        assert sorted(names) == sorted(f"probe/{k}" for k in b["probe"])
        assert len(a["probe/pair_force_end"]) == 4 and a["probe/pair_force_end"][-1] > 0
        for name in names:
            assert a[name].dtype == b[name].dtype, name
            np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)


def test_ragged_rows_of_no_frames_and_from_the_end(tmp_path):
    """A file a kill left before its first complete frame has no rows to give (a list of
    none, as many as its frames); k = -1 is the last frame."""
    from rodsim.results.dataset import Dataset

    d = Dataset("probe/pair_force", ("R", 3), "probe", "force", "x", ragged=True)
    with h5py.File(tmp_path / "r.h5", "w") as f:
        f.create_dataset(d.path, data=np.arange(15.0).reshape(5, 3))
        f.create_dataset(d.end_path, data=np.array([0, 2, 5]))
        assert [len(r) for r in reader.ragged_rows(f, d, slice(0, 3))] == [0, 2, 3]
        assert reader.ragged_rows(f, d, slice(0, 0)) == []
        np.testing.assert_array_equal(reader.ragged_rows(f, d, -1), f[d.path][2:5])
        np.testing.assert_array_equal(reader.ragged_rows(f, d, 1), f[d.path][0:2])
        with pytest.raises(IndexError):
            reader.ragged_rows(f, d, 3)


def test_a_term_table_whose_rows_disagree_is_refused(run, tmp_path):
    """Two ragged datasets declared with the same rows (R) that differ in a frame: an error
    naming both, not a table with a column left out."""
    with h5py.File(run, "r+") as f:
        end = f["probe/pair_nodes_end"]
        end[-1] = end[-1] - 1
    with pytest.raises(CaseError, match="probe/pair_force has .* rows in frame"):
        csv_export.export_csv(run, tmp_path / "x.csv", table="probe/pair_nodes", frame=-1)
