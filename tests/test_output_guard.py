"""One output guard for every command that writes (rodsim.results.guard, docs/running.md
"Outputs"): a file the command reads, or an existing file that is not an earlier output of
the same kind, is refused with exit 2 naming the option, and every file in the folder stays
byte-identical; an earlier output of the kind is replaced."""

import shutil

import pytest
from click.testing import CliRunner
from conftest import small_cantilever, tree_bytes

from rodsim.cli import main
from rodsim.results import guard as output_guard

NOTES = b"my own notes, not rodsim's\n"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A case and its results, made once: the tests copy them into their own folder."""
    folder = tmp_path_factory.mktemp("guard")
    (folder / "case.yaml").write_text(small_cantilever())
    result = CliRunner().invoke(
        main, ["run", str(folder / "case.yaml"), "-o", str(folder / "r.h5"), "-q", "--no-vtk"]
    )
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture
def work(made, tmp_path):
    for name in ("case.yaml", "r.h5"):
        shutil.copy(made / name, tmp_path / name)
    return tmp_path


def _refused(work, args, *says):
    before = tree_bytes(work)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for text in says:
        assert text in result.output, result.output
    assert tree_bytes(work) == before


# command, its arguments given the folder, the foreign file's name, what the message says
FOREIGN = [
    ("schema", lambda w: ["schema", "-o", str(w / "notes.json")], "notes.json", "case schema"),
    ("plot", lambda w: ["plot", str(w / "r.h5"), "-o", str(w / "notes.png")], "notes.png", "PNG"),
    ("render", lambda w: ["render", str(w / "r.h5"), "-o", str(w / "a.gif")], "a.gif", "GIF"),
    (
        "export csv",
        lambda w: ["export", str(w / "r.h5"), "--format", "csv", "-o", str(w / "t.csv")],
        "t.csv",
        "CSV table",
    ),
    (
        "export xdmf",
        lambda w: ["export", str(w / "r.h5"), "--format", "xdmf", "-o", str(w / "v.xdmf")],
        "v.xdmf",
        "XDMF",
    ),
    (
        "export matrices npz",
        lambda w: ["export", "--matrices", str(w / "case.yaml"), "-o", str(w / "m.npz")],
        "m.npz",
        "matrices file",
    ),
    (
        "export matrices mtx",
        lambda w: [
            "export",
            "--matrices",
            str(w / "case.yaml"),
            "--format",
            "mtx",
            "-o",
            str(w / "m"),
        ],  # fmt: skip
        "m_K.mtx",
        "matrix of rodsim export",
    ),
]


@pytest.mark.parametrize("command, args, name, what", FOREIGN, ids=[f[0] for f in FOREIGN])
def test_a_foreign_file_is_never_replaced(work, command, args, name, what):
    """Was: schema, plot and export --matrices --format mtx overwrote it."""
    (work / name).write_bytes(NOTES)
    _refused(work, args(work), name, "exists and is not", what, "-o")


READS = [
    ("schema onto the case", lambda w: ["schema", "-o", str(w / "case.yaml")], "case schema"),
    ("plot onto the results", lambda w: ["plot", str(w / "r.h5"), "-o", str(w / "r.h5")], ".png"),
]


@pytest.mark.parametrize("label, args, says", READS, ids=[r[0] for r in READS])
def test_an_input_is_never_replaced(work, label, args, says):
    _refused(work, args(work), says)


def test_matrices_onto_the_case_file_write_the_npz_they_name(work):
    """Was: -o case.yaml wrote case.yaml.npz and said it wrote case.yaml."""
    before = (work / "case.yaml").read_bytes()
    result = CliRunner().invoke(
        main, ["export", "--matrices", str(work / "case.yaml"), "-o", str(work / "case.yaml")]
    )
    assert result.exit_code == 0 and result.output.strip().endswith("case.yaml.npz")
    assert (work / "case.yaml").read_bytes() == before


def test_an_earlier_output_is_replaced(work):
    """The guard recognises each kind's own files: writing twice is not refused."""
    for args in (
        ["schema", "-o", str(work / "s.json")],
        ["export", str(work / "r.h5"), "--format", "csv", "-o", str(work / "t.csv")],
        ["export", str(work / "r.h5"), "--format", "xdmf", "-o", str(work / "v.xdmf")],
        ["export", "--matrices", str(work / "case.yaml"), "-o", str(work / "m.npz")],
        ["export", "--matrices", str(work / "case.yaml"), "--format", "mtx", "-o", str(work / "m")],
        ["plot", str(work / "r.h5"), "-o", str(work / "p.png")],
    ):
        for _ in range(2):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0, (args, result.output)


@pytest.mark.parametrize("kind", sorted(output_guard.KINDS))
def test_no_kind_takes_a_text_file_or_an_empty_file_for_its_own(tmp_path, kind):
    for content in (NOTES, b""):
        (tmp_path / "x").write_bytes(content)
        assert not output_guard.KINDS[kind].ours(tmp_path / "x")


def test_a_folder_where_a_file_goes_is_refused(work):
    (work / "t.csv").mkdir()
    args = ["export", str(work / "r.h5"), "--format", "csv", "-o", str(work / "t.csv")]
    _refused(work, args, "is a folder")


@pytest.mark.parametrize("name, content", [("notes.txt", NOTES), ("mine.h5", NOTES)])
def test_a_run_never_replaces_a_file_that_is_not_rodsim_results(work, name, content):
    """Was: the file was moved to <stem>.prev.<suffix> and deleted when the run completed."""
    (work / name).write_bytes(content)
    args = ["run", str(work / "case.yaml"), "-o", str(work / name), "-q", "--no-vtk"]
    _refused(work, args, name, "is not a rodsim results file", "-o")


def test_a_foreign_hdf5_file_is_not_results(work):
    import h5py

    with h5py.File(work / "data.h5", "w") as f:
        f["x"] = [1.0, 2.0]
    args = ["run", str(work / "case.yaml"), "-o", str(work / "data.h5"), "-q", "--no-vtk"]
    _refused(work, args, "data.h5", "is not a rodsim results file")


def test_the_api_run_goes_through_the_same_guard(work):
    from rodsim import api
    from rodsim.errors import CaseError

    (work / "notes.txt").write_bytes(NOTES)
    before = tree_bytes(work)
    with pytest.raises(CaseError, match="is not a rodsim results file"):
        api.run_case(work / "case.yaml", work / "notes.txt", vtk=False)
    assert tree_bytes(work) == before


def test_a_run_replaces_its_own_results(work):
    args = ["run", str(work / "case.yaml"), "-o", str(work / "r.h5"), "-q", "--no-vtk"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output


def test_a_run_never_replaces_a_users_prev_h5(work):
    """Was: the earlier results were moved onto a user's r.prev.h5, deleted when the run
    completed."""
    (work / "r.prev.h5").write_bytes(NOTES)
    args = ["run", str(work / "case.yaml"), "-o", str(work / "r.h5"), "-q", "--no-vtk"]
    _refused(work, args, "r.prev.h5", "is not a rodsim results file", "move it away")


@pytest.mark.parametrize("along", [False, True])
def test_plot_never_replaces_a_users_file_under_its_default_name(work, along):
    """Was: without -o, `rodsim plot r.h5` wrote over a user's r_energy.png (a text file), and
    a folder of that name was an internal error."""
    args = ["plot", str(work / "r.h5"), "displacement.z@beam.all" if along else "energy"]
    name = "r_displacement.z_at_beam.all_along.png" if along else "r_energy.png"
    args += ["--along"] if along else []
    (work / name).write_bytes(NOTES)
    _refused(work, args, name, "is not a PNG picture")
    (work / name).unlink()
    (work / name).mkdir()
    _refused(work, args, name, "is a folder")


def test_a_validation_report_never_replaces_a_users_readme(tmp_path):
    """Refused before the benchmark runs (was: README.md and <name>.png overwritten)."""
    (tmp_path / "README.md").write_bytes(NOTES)
    args = ["validate", "--quick", "--report", str(tmp_path), "rollup"]
    _refused(tmp_path, args, "README.md", "is not a rodsim validation report", "--report")
    (tmp_path / "README.md").unlink()
    (tmp_path / "rollup.png").write_bytes(NOTES)
    _refused(tmp_path, args, "rollup.png", "is not a PNG picture")


def test_a_run_never_writes_over_the_data_of_its_xdmf_mesh(tmp_path):
    """An XDMF mesh's heavy data may be a rodsim results file (rodsim export --format xdmf
    points at it): -o onto it is refused as an input of the case, not taken for results."""
    import meshio
    import numpy as np

    from rodsim.case.load import load_case

    points = np.column_stack([np.linspace(0, 1, 5), np.zeros(5), np.zeros(5)])
    mesh = meshio.Mesh(points, [("line", np.array([[i, i + 1] for i in range(4)]))])
    meshio.xdmf.write(tmp_path / "beam.xdmf", mesh, data_format="HDF", compression=None)
    (data,) = tmp_path.glob("*.h5")
    case = tmp_path / "case.yaml"
    text = small_cantilever().replace(
        "  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s}",
        "  - {file: beam.xdmf, name: beam, section: s, up: [0, 0, 1]}",
    )
    text = text.replace("beam.start", "root").replace("beam.end", "tip")
    text += "sets:\n  root: {near: [0, 0, 0]}\n  tip: {near: [1, 0, 0]}\n"
    case.write_text(text)
    reads = output_guard.reads_of(load_case(case))
    assert reads[data.resolve()] == "a data file of the mesh file beam.xdmf"
    args = ["run", str(case), "-o", str(data), "-q", "--no-vtk"]
    _refused(tmp_path, args, "a data file of the mesh file beam.xdmf", "-o")
