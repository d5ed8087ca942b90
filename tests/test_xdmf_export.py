"""rodsim export --format xdmf (rodsim/post/xdmf_export.py): VTK's XDMF reader (ParaView's)
sees the results file's frames, points and fields, read from the HDF5 file itself."""

import subprocess
import sys

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from test_csv_export import PLATE, ROD, _run

from rodsim import api
from rodsim.cli import main
from rodsim.post.xdmf_export import export_xdmf

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
vtk = pytest.importorskip("vtk", reason="the XDMF check reads the index with VTK")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402

ROD_AND_PLATE = PLATE.replace(
    "mesh:\n",
    "mesh:\n  - rod: {name: post, from: [0, 0, 0], to: [0, 0, -1], elements: 3, up: [1, 0, 0], "
    "section: r}\n",
).replace(
    "sections:\n",
    "sections:\n  r: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, EI: [1, 1], rhoA: 1, "
    "rhoI: [1.0e-4, 1.0e-4]}\n",
)


def _read(index, k: int):
    """The blocks (UnstructuredGrid) VTK's XDMF reader gives at the k-th time, and the times."""
    reader = vtk.vtkXdmfReader()
    reader.SetFileName(str(index))
    reader.UpdateInformation()
    times = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    reader.UpdateTimeStep(times[k])
    out = reader.GetOutputDataObject(0)
    if out.IsA("vtkMultiBlockDataSet"):
        blocks = [out.GetBlock(i) for i in range(out.GetNumberOfBlocks())]
    else:
        blocks = [out]
    return blocks, times


def _array(data, name):
    return vtk_to_numpy(data.GetArray(name))


@pytest.fixture(scope="module")
def rod(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("xdmf"), ROD, "rod")


@pytest.mark.parametrize("k", [0, 3, 5])
def test_every_frame_reads_back_from_the_hdf5_file(rod, tmp_path, k):
    index = export_xdmf(rod, tmp_path / "sub" / "rod.xdmf")  # another folder: a relative path
    assert "rod.h5:/nodes/position" in index.read_text()
    (grid,), times = _read(index, k)
    with h5py.File(rod) as f:
        np.testing.assert_array_equal(times, f["time"][()])
        assert np.array_equal(vtk_to_numpy(grid.GetPoints().GetData()), f["nodes/position"][k])
        cells = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(-1, 2)
        np.testing.assert_array_equal(cells, f["mesh/rods"][()])
        for name in ("velocity", "rotation", "reaction_force"):
            assert np.array_equal(_array(grid.GetPointData(), name), f[f"nodes/{name}"][k])
        for name in ("force", "moment", "curvature"):
            assert np.array_equal(_array(grid.GetCellData(), name), f[f"rods/{name}"][k])


def test_rods_and_plates_are_two_blocks(tmp_path):
    out = _run(tmp_path, ROD_AND_PLATE, "both")
    index = export_xdmf(out)
    assert index == tmp_path / "both.xdmf"
    blocks, _ = _read(index, 1)
    assert len(blocks) == 2
    rods, plates = blocks
    with h5py.File(out) as f:
        assert plates.GetNumberOfCells() == f["mesh/plates"].shape[0]
        assert rods.GetNumberOfCells() == f["mesh/rods"].shape[0]
        for block in blocks:
            points = vtk_to_numpy(block.GetPoints().GetData())
            assert np.array_equal(points, f["nodes/position"][1])
        assert np.array_equal(_array(plates.GetCellData(), "membrane"), f["plates/membrane"][1])
        # two components (Q1, Q2): VTK reads an XDMF vector with a third, zero component
        shear = _array(plates.GetCellData(), "shear")
        assert np.array_equal(shear[:, :2], f["plates/shear"][1])
        assert not shear[:, 2].any()


def test_the_cli_writes_next_to_the_results_and_refuses_to_overwrite_them(rod):
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "xdmf"])
    assert result.exit_code == 0, result.output
    assert f"wrote {rod.with_suffix('.xdmf')}" in result.output
    before = rod.read_bytes()
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "xdmf", "-o", str(rod)])
    assert result.exit_code == 2 and "is the results file itself" in result.output
    assert rod.read_bytes() == before


def test_pyvista_reads_the_index_as_a_time_series(rod, tmp_path):
    pv = pytest.importorskip("pyvista", reason="pyvista reads the index with VTK")
    index = export_xdmf(rod, tmp_path / "rod.xdmf")
    reader = pv.get_reader(str(index))
    with h5py.File(rod) as f:
        assert reader.number_time_points == f["time"].shape[0]
        reader.set_active_time_point(4)
        mesh = reader.read()
        assert np.array_equal(mesh.points, f["nodes/position"][4])
        assert np.array_equal(mesh.point_data["angular_velocity"], f["nodes/angular_velocity"][4])
        assert np.array_equal(mesh.cell_data["strain"], f["rods/strain"][4])


READ_EVERY_FRAME = """
import sys
import pyvista as pv
reader = pv.get_reader(sys.argv[1])
for k in (*range(reader.number_time_points), 0):  # the first again: from the reader's cache
    reader.set_active_time_point(k)
    reader.read()
print("read", reader.number_time_points)
"""


def test_vtk_reads_the_index_without_error_lines(rod, tmp_path):
    """VTK's XDMF reader, through pyvista, in a process of its own (its logger writes to the
    process's standard error, past Python's): every frame is read, and it prints no ERR line
    (it did, twice per grid: "Cannot find DataItem element in geometry xml", as the first
    child of the hyperslab geometry had no text) and no warning."""
    pytest.importorskip("pyvista", reason="pyvista reads the index with VTK")
    index = export_xdmf(rod, tmp_path / "rod.xdmf")
    done = subprocess.run(
        [sys.executable, "-c", READ_EVERY_FRAME, str(index)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    with h5py.File(rod) as f:
        assert done.stdout.split() == ["read", str(f["time"].shape[0])]
    said = [line for line in done.stderr.splitlines() if "ERR" in line or "WARN" in line]
    assert said == [], "\n".join(said)


def test_analysis_steps_make_one_increasing_time_series(tmp_path):
    """Every frame of a case of steps is a time step of its own, at its total time (the
    hand-over between steps, at one total time, a float apart)."""
    case = ROOT / "inputs" / "steps" / "preload_gust.yaml"
    out = tmp_path / "steps.h5"
    api.run_case(case, out, vtk=False, overrides=("solver.t_end=0.02",))
    index = export_xdmf(out)
    with h5py.File(out) as f:
        n, total = f["time"].shape[0], f["total_time"][()]
        for k in (0, n // 2, n - 1):
            blocks, times = _read(index, k)
            assert len(times) == n
            assert np.all(np.diff(times) > 0)
            np.testing.assert_allclose(times, total, rtol=1e-15, atol=1e-300)
            points = vtk_to_numpy(blocks[0].GetPoints().GetData())
            assert np.array_equal(points, f["nodes/position"][k])


def test_an_existing_file_is_replaced_only_if_it_is_an_index(rod, tmp_path):
    other = tmp_path / "case.yaml"
    other.write_text("rodsim: 1\n")
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "xdmf", "-o", str(other)])
    assert result.exit_code == 2 and "exists and is not an XDMF index" in result.output
    assert other.read_text() == "rodsim: 1\n"
    index = tmp_path / "again.xdmf"
    for _ in range(2):  # an earlier index is replaced
        result = CliRunner().invoke(
            main, ["export", str(rod), "--format", "xdmf", "-o", str(index)]
        )
        assert result.exit_code == 0, result.output


def test_a_folder_that_cannot_hold_the_index_is_exit_4(rod, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a folder\n")
    target = blocker / "x.xdmf"
    result = CliRunner().invoke(main, ["export", str(rod), "--format", "xdmf", "-o", str(target)])
    assert result.exit_code == 4, result.output
    assert "cannot write" in result.output
