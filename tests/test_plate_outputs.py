"""Plates in the results file and the ParaView series (docs/results.md-4): a mesh of rods,
quads and triangles written with random fields, read back and compared; export, info, plot."""

import h5py
import meshio
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import looked_at

from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.mesh.assemble import Mesh
from rodsim.post.export import export_vtk
from rodsim.post.plots import plot_results
from rodsim.results.frame import Frame
from rodsim.results.reader import open_results, read_frame
from rodsim.results.vtk import SeriesWriter, read_pvd
from rodsim.results.writer import ResultsWriter

# a 3 x 1 strip: quad, two triangles, quad (so the VTU holds the runs quad | tri tri | quad),
# stiffened by two rods along y = 0
POINTS = np.array(
    [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0], [3, 1, 0]], float
)
PLATES = np.array([[0, 1, 5, 4], [1, 2, 6, 6], [1, 6, 5, 5], [2, 3, 7, 6]])
RODS = np.array([[0, 1], [1, 2]])


def plate_mesh(rods=True) -> Mesh:
    conn = RODS if rods else np.zeros((0, 2), np.int64)
    e, p = len(conn), len(PLATES)
    return Mesh(
        POINTS,
        np.broadcast_to(np.eye(3), (8, 3, 3)).copy(),
        conn,
        np.broadcast_to(np.eye(3), (e, 2, 3, 3)).copy(),
        np.zeros(e, np.int64),
        ("tube", "deck"),
        np.zeros(e, np.int64),
        ("rib", "deck"),
        {"all": np.arange(8), "right": np.array([2, 3, 6, 7]), "bottom": np.arange(4)},
        PLATES,
        np.ones(p, np.int64),
        np.ones(p, np.int64),
        np.broadcast_to(np.eye(3), (p, 4, 3, 3)).copy(),
    )


def random_frame(rng, mesh: Mesh, t: float, plates=True) -> Frame:
    n, e, p = mesh.n_nodes, mesh.n_elements, mesh.n_plates
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    q[q[:, 0] < 0] *= -1

    def vec(k, w=3):
        return rng.normal(size=(k, w))

    return Frame(
        time=t,
        position=POINTS + 0.1 * vec(n),
        rotation=q,
        directors=np.broadcast_to(np.eye(3), (n, 3, 3)),
        velocity=vec(n),
        angular_velocity=vec(n),
        linear_momentum=vec(n),
        angular_momentum=vec(n),
        force=vec(e),
        moment=vec(e),
        strain=vec(e),
        curvature=vec(e),
        kinetic=1.0,
        internal=2.0,
        external=0.0,
        total_linear=vec(1)[0],
        total_angular=vec(1)[0],
        dt=0.1,
        iterations=1.0,
        residual=0.0,
        plate_membrane=vec(p) if plates else None,
        plate_bending=vec(p) if plates else None,
        plate_shear=vec(p, 2) if plates else None,
    )


@pytest.fixture(params=[True, False], ids=["rods+plates", "plates only"])
def written(request, tmp_path):
    """(mesh, frames, results path, pvd path): three random frames in both files."""
    rng = np.random.default_rng(6)
    mesh = plate_mesh(rods=request.param)
    frames = [random_frame(rng, mesh, t) for t in (0.0, 0.5, 1.0)]
    path, pvd = tmp_path / "r.h5", tmp_path / "r.pvd"
    with (
        ResultsWriter(path, mesh, "rodsim: 1\n", "plates") as w,
        SeriesWriter(pvd, mesh.points, mesh.conn, mesh.plates) as s,
    ):
        for fr in frames:
            w.write(fr)
            s.write(fr)
    return mesh, frames, path, pvd


def test_hdf5_plate_datasets_read_back(written):
    mesh, frames, path, _ = written
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["mesh/plates"][()], PLATES)
        assert f["mesh/plates"].dtype.kind == "i"
        assert list(f["mesh/plate_section"].attrs["names"]) == ["tube", "deck"]
        assert list(f["mesh/plate_part"].attrs["names"]) == ["rib", "deck"]
        np.testing.assert_array_equal(f["mesh/plate_section"][()], [1] * 4)
        assert ("mesh/rods" in f) == bool(mesh.n_elements)
        for name, width in (("membrane", 3), ("bending", 3), ("shear", 2)):
            assert f[f"plates/{name}"].shape == (3, 4, width)
            assert (
                f[f"plates/{name}"]
                .attrs["description"]
                .startswith(
                    {
                        "membrane": "membrane forces",
                        "bending": "bending moments",
                        "shear": "transverse shear",
                    }[name]
                )
            )
    with open_results(path) as f:
        for k, fr in enumerate(frames):
            back = read_frame(f, k)
            for name in ("plate_membrane", "plate_bending", "plate_shear", "position", "velocity"):
                np.testing.assert_array_equal(getattr(back, name), getattr(fr, name))
            if mesh.n_elements:
                np.testing.assert_array_equal(back.force, fr.force)


def test_rod_only_files_have_no_plate_datasets(tmp_path):
    rng = np.random.default_rng(1)
    m = plate_mesh()
    rods_only = Mesh(
        *(
            getattr(m, k)
            for k in (
                "points",
                "frames",
                "conn",
                "end_frames",
                "section",
                "section_names",
                "part",
                "part_names",
                "sets",
            )
        )
    )
    assert rods_only.n_plates == 0
    assert rods_only.plates.shape == (0, 4)
    path = tmp_path / "r.h5"
    with ResultsWriter(path, rods_only, "rodsim: 1\n") as w:
        w.write(random_frame(rng, rods_only, 0.0, plates=False))
    with h5py.File(path, "r") as f:
        assert "plates" not in f
        assert "mesh/plates" not in f
        assert "mesh/plate_section" not in f
    with open_results(path) as f:
        assert read_frame(f, 0).plate_membrane is None


def test_missing_plate_fields_are_written_as_zeros(tmp_path):
    rng = np.random.default_rng(2)
    mesh = plate_mesh()
    with ResultsWriter(tmp_path / "r.h5", mesh, "rodsim: 1\n") as w:
        w.write(random_frame(rng, mesh, 0.0, plates=False))
    with h5py.File(tmp_path / "r.h5", "r") as f:
        assert not f["plates/shear"][()].any()
        assert f["plates/shear"].shape == (1, 4, 2)


def check_vtu(path, mesh: Mesh, fr: Frame) -> None:
    m = meshio.read(path)
    e = mesh.n_elements
    types = [b.type for b in m.cells]
    assert types == (["line"] if e else []) + ["quad", "triangle", "quad"]
    assert (
        np.concatenate([b.data for b in m.cells if b.type == "quad"]).tolist()
        == PLATES[[0, 3]].tolist()
    )
    assert m.cells_dict["triangle"].tolist() == PLATES[1:3, :3].tolist()
    if e:
        np.testing.assert_array_equal(m.cells_dict["line"], RODS)

    def whole(name):
        return np.concatenate(m.cell_data[name])

    for name, width in (("membrane", 3), ("bending", 3), ("shear", 2)):
        values = whole(name)
        assert values.shape == (e + 4, width)
        np.testing.assert_array_equal(values[e:], getattr(fr, f"plate_{name}"))
        assert not values[:e].any()
    for name in ("force", "moment", "strain", "curvature"):
        values = whole(name)
        assert values.shape == (e + 4, 3)
        np.testing.assert_array_equal(values[:e], getattr(fr, name))
        assert not values[e:].any()
    np.testing.assert_allclose(m.points, fr.position)
    np.testing.assert_allclose(m.point_data["displacement"], fr.position - POINTS)


def test_vtu_plate_cells_and_arrays(written):
    mesh, frames, _, pvd = written
    entries = read_pvd(pvd)
    assert [t for t, _ in entries] == [0.0, 0.5, 1.0]
    for (_, vtu), fr in zip(entries, frames, strict=True):
        check_vtu(vtu, mesh, fr)


def test_export_info_and_plot_of_a_plate_file(written, tmp_path):
    mesh, frames, path, _ = written
    pvd, n = export_vtk(path, tmp_path / "export")
    assert n == 3
    check_vtu(read_pvd(pvd)[-1][1], mesh, frames[-1])
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 0, res.output
    assert f"{mesh.n_elements} rod elements, 4 plate elements (2 quads, 2 triangles)" in res.output
    assert "plates/shear (3, 4, 2)" in res.output
    png = plot_results(path, "membrane.N12@right", tmp_path / "m.png")
    looked_at(png, 1)
    with pytest.raises(CaseError, match="no plate element has all corners in set"):
        plot_results(path, "shear.Q1@bottom", tmp_path / "x.png")


def test_rod_only_series_is_unchanged_by_an_empty_plate_block(tmp_path):
    """plates=None and plates of shape (0, 4) write the same bytes as before plates existed:
    one line block and the four rod arrays."""
    rng = np.random.default_rng(3)
    m = plate_mesh()
    fr = random_frame(rng, m, 0.0, plates=False)
    for name, plates in (("a", None), ("b", np.zeros((0, 4), np.int64))):
        with SeriesWriter(tmp_path / f"{name}.pvd", POINTS, RODS, plates) as s:
            s.write(fr)
    a = (tmp_path / "a_vtk" / "a_000000.vtu").read_bytes()
    assert a == (tmp_path / "b_vtk" / "b_000000.vtu").read_bytes()
    vtu = meshio.read(tmp_path / "a_vtk" / "a_000000.vtu")
    assert [b.type for b in vtu.cells] == ["line"]
    assert sorted(vtu.cell_data) == ["curvature", "force", "moment", "strain"]
