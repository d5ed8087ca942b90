"""The results format (rodsim/results/layout.py, docs/results.md): a write-read round trip of
every dataset in the style of meshio's tests, the layout versioning rule, refused files, and
the docs against the code's table."""

import dataclasses
import re
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.mesh.assemble import Mesh
from rodsim.post.summary import describe
from rodsim.results.frame import Frame
from rodsim.results.layout import (
    DATASETS,
    FRAME_DATASETS,
    LAYOUT_MINOR,
    SETS,
    concrete_shape,
    is_present,
    markdown_table,
    sizes_of,
)
from rodsim.results.reader import (
    frame_count,
    layout_version,
    open_results,
    quaternion_matrices,
    read_frame,
)
from rodsim.results.writer import ResultsWriter

DOC = Path(__file__).resolve().parents[1] / "docs" / "results.md"
FRAMES = 3
RECOVERY = 5  # stress recovery points per section


def table_entry(path: str):
    """The table's entry of a dataset path (every mesh/sets/<name> is the sets' entry); None
    for a dataset the table lacks."""
    pattern = SETS + "/{name}" if path.rpartition("/")[0] == SETS else path
    return next((d for d in DATASETS if d.path == pattern), None)


def random_mesh(rng, rods: bool, plates: bool) -> Mesh:
    """A mesh of random numbers: nothing in the format depends on the geometry."""
    n, e, p = 7, 4 if rods else 0, 3 if plates else 0

    def ints(rows, width=None, high=n):
        return rng.integers(0, high, size=(rows,) if width is None else (rows, width))

    return Mesh(
        points=rng.normal(size=(n, 3)),
        frames=rng.normal(size=(n, 3, 3)),
        conn=ints(e, 2),
        end_frames=rng.normal(size=(e, 2, 3, 3)),
        section=ints(e, high=2),
        section_names=("tube", "deck"),
        part=ints(e, high=3),
        part_names=("a", "b", "c"),
        sets={"all": np.arange(n), "tip": np.array([n - 1]), "none": np.zeros(0, np.int64)},
        plates=ints(p, 4),
        plate_section=ints(p, high=2),
        plate_part=ints(p, high=3),
        plate_frames=rng.normal(size=(p, 4, 3, 3)),
        stress_points=rng.normal(size=(2, RECOVERY if rods else 0, 2)),
        point_stresses=True,
        section_outline=rng.normal(size=(2, 5, 2)),
        plate_thickness=rng.uniform(size=p),
    )


def random_frame(rng, mesh: Mesh) -> Frame:
    """Random numbers in every Frame field the dataset table writes, generated from the table
    (a dataset added to it gets its values here without a change): 0 or 1 for the integer
    ones, rows of none for the rod fields of a mesh without rods; the rotations unit
    quaternions and the directors as the reader rebuilds them (they are not stored: rotation
    and mesh/frames are)."""
    sizes = sizes_of(mesh)
    fields = {f.name: f for f in dataclasses.fields(Frame)}
    values = {}
    for d in FRAME_DATASETS:
        field = fields.get(d.source)
        if field is None or d.term is not None:  # energy/total: Frame derives it
            continue
        shape = concrete_shape(d.shape, sizes)
        if not is_present(d, mesh):
            if field.default is dataclasses.MISSING:
                values[d.source] = np.zeros(shape)
            continue
        if d.dtype == "i8":
            v = rng.integers(0, 2, size=shape)
        else:
            v = rng.normal(size=shape)
        values[d.source] = v.item() if shape == () else v
    q = values["rotation"]
    q /= np.linalg.norm(q, axis=1)[:, None]
    values["directors"] = quaternion_matrices(q) @ mesh.frames
    return Frame(**values)


def write(path, rods=True, plates=True, seed=0):
    """(mesh, frames) written to path: FRAMES random frames."""
    rng = np.random.default_rng(seed)
    mesh = random_mesh(rng, rods, plates)
    frames = [random_frame(rng, mesh) for _ in range(FRAMES)]
    with ResultsWriter(path, mesh, "case: text\n", "random", ["a=1", "b=2"]) as w:
        for fr in frames:
            w.write(fr)
    assert w.frames == FRAMES
    return mesh, frames


def assert_frames_equal(back: Frame, written: Frame, skip=()) -> None:
    for field in dataclasses.fields(Frame):
        if field.name in skip or field.name == "restart":  # not a dataset: restart/ group
            continue
        a, b = getattr(back, field.name), getattr(written, field.name)
        assert (a is None and b is None) or np.array_equal(a, b), field.name


def dataset_paths(f: h5py.File) -> list:
    paths = []
    f.visititems(lambda name, obj: paths.append(name) if isinstance(obj, h5py.Dataset) else None)
    return paths


MODELS = pytest.mark.parametrize(
    "rods, plates",
    [(True, True), (True, False), (False, True)],
    ids=["rods+plates", "rods only", "plates only"],
)


@MODELS
def test_round_trip_of_every_frame_field(tmp_path, rods, plates):
    path = tmp_path / "r.h5"
    mesh, frames = write(path, rods, plates)
    with open_results(path) as f:
        assert frame_count(f) == FRAMES
        frames0 = f["mesh/frames"][()]
        for k, fr in enumerate(frames):
            assert_frames_equal(read_frame(f, k), fr)
            assert_frames_equal(read_frame(f, k, frames0), fr)


@MODELS
def test_every_dataset_of_the_file_is_in_the_table_and_holds_what_was_written(
    tmp_path, rods, plates
):
    path = tmp_path / "r.h5"
    mesh, frames = write(path, rods, plates)
    present = {
        "always": True,
        "rods": rods,
        "plates": plates,
        "rod stresses": rods,
        "point stresses": rods,
    }
    with h5py.File(path, "r") as f:
        assert f.attrs["layout"] == 1
        assert f.attrs["layout_minor"] == LAYOUT_MINOR
        assert f.attrs["units"] == ""  # no units declared
        assert f.attrs["case"] == "case: text\n"
        assert f.attrs["title"] == "random"
        assert f.attrs["overrides"] == "a=1\nb=2"
        assert sorted(f["mesh/sets"]) == ["all", "none", "tip"]
        for name in dataset_paths(f):
            d = table_entry(name)
            assert d is not None, f"{name} is in the file but not in the table"
            assert f[name].attrs["description"] == d.description, name
            if d.per_frame:
                expected = np.stack([getattr(fr, d.source) for fr in frames])
            else:
                expected = getattr(mesh, d.source)
                if isinstance(expected, dict):  # mesh/sets/<name>
                    expected = expected[name.rpartition("/")[2]]
            assert np.array_equal(f[name][()], expected), name
            assert f[name].dtype == np.dtype(d.dtype), name
            if d.names:
                assert list(f[name].attrs["names"]) == list(getattr(mesh, d.names))
        for d in DATASETS:
            assert (d.container in f) == present[d.present], d.path
            if d.per_frame and d.container in f:
                assert f[d.path].chunks[0] >= 1
                assert f[d.path].maxshape[0] is None


def test_the_table_writes_every_frame_field():
    """A Frame field missing from the table would silently not reach the file."""
    written = {d.source for d in FRAME_DATASETS}
    fields = {f.name for f in dataclasses.fields(Frame)}
    assert written == fields - {"directors", "restart", "terms"} | {"total"}
    assert len({d.path for d in DATASETS}) == len(DATASETS)


def test_unknown_datasets_and_a_newer_minor_version_read(tmp_path):
    """Layout 1.7, as a later rodsim might write: new datasets, a new attribute."""
    path = tmp_path / "r.h5"
    mesh, frames = write(path)
    with h5py.File(path, "a") as f:
        f.attrs["layout_minor"] = 7
        f.attrs["contact_model"] = "penalty"
        # one frame short, as a kill during the flush can leave it: the frame is complete in
        # every dataset this rodsim knows, so it reads
        f.create_dataset("contact/gap", data=np.ones((FRAMES - 1, 5)))
        f.create_dataset("mesh/contact_pairs", data=np.zeros((4, 2), np.int64))
    with open_results(path) as f:
        assert layout_version(f) == (1, 7)
        assert frame_count(f) == FRAMES
        for k, fr in enumerate(frames):
            assert_frames_equal(read_frame(f, k), fr)
    assert "layout 1.7" in describe(path)


def test_a_file_of_an_unknown_major_layout_is_refused(tmp_path):
    path = tmp_path / "future.h5"
    write(path)
    with h5py.File(path, "a") as f:
        f.attrs["layout"] = 99
    with pytest.raises(CaseError) as err:
        with open_results(path):
            pass
    message = str(err.value)
    assert str(path) in message
    assert "layout 99" in message
    assert "reads layout 1" in message
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 2
    assert "layout 99" in res.output
    assert "Traceback" not in res.output


def test_a_file_from_before_layout_minor_reads_as_minor_0(tmp_path):
    """As files were written before layout_minor existed (and before the reactions)."""
    path = tmp_path / "old.h5"
    mesh, frames = write(path)
    with h5py.File(path, "a") as f:
        del f.attrs["layout_minor"]
        del f["nodes/reaction_force"], f["nodes/reaction_moment"]
    with open_results(path) as f:
        assert layout_version(f) == (1, 0)
        assert frame_count(f) == FRAMES
        back = read_frame(f, 1)
    assert back.reaction_force is None
    assert back.reaction_moment is None
    assert_frames_equal(back, frames[1], skip=("reaction_force", "reaction_moment"))
    assert "layout 1.0" in describe(path)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda f: f.attrs.__delitem__("layout"), "not a rodsim results file"),
        (lambda f: f.attrs.__setitem__("layout", "one"), "not a rodsim results file"),
        (lambda f: f.__delitem__("nodes/position"), "missing nodes/position"),
        (lambda f: f.__delitem__("mesh/sets"), "missing mesh/sets"),
    ],
)
def test_damaged_files_are_input_errors_naming_the_file(tmp_path, damage, message):
    path = tmp_path / "r.h5"
    write(path)
    with h5py.File(path, "a") as f:
        damage(f)
    with pytest.raises(CaseError, match=re.escape(message)) as err:
        with open_results(path):
            pass
    assert err.value.file == str(path)


def test_a_killed_flush_counts_the_complete_frames_only(tmp_path):
    """A kill during a flush can leave the newest frame in some datasets only."""
    path = tmp_path / "r.h5"
    write(path)
    with h5py.File(path, "a") as f:
        f["energy/total"].resize(FRAMES - 1, axis=0)
    with open_results(path) as f:
        assert frame_count(f) == FRAMES - 1


def test_docs_table_is_generated_from_the_code():
    doc = DOC.read_text()
    assert markdown_table() in doc, (
        "docs/results.md is stale: paste the output of python -m rodsim.results.layout"
    )
    for d in DATASETS:
        assert f"| `{d.path.replace('{name}', '<set>')}` |" in doc, d.path


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise OSError("no VmRSS")


def test_the_writer_caches_one_chunk_per_dataset(tmp_path):
    """The chunk being filled, no more: HDF5 2.0's default cache (8 MiB per dataset) kept
    the last 8 chunks of every frame dataset, so the writer grew with the frames until it
    closed (benchmarks/soak.py: +11% RSS over 1000 frames of a 100-element rod)."""
    rng = np.random.default_rng(5)
    mesh = dataclasses.replace(
        random_mesh(rng, True, False),
        points=rng.normal(size=(2000, 3)),
        frames=rng.normal(size=(2000, 3, 3)),
    )
    frame = random_frame(rng, mesh)
    with ResultsWriter(tmp_path / "c.h5", mesh, "", "") as w:
        biggest = max(int(np.prod(ds.chunks)) * 8 for ds in w.datasets.values())
        assert w.file.id.get_access_plist().get_cache()[2] == biggest
        for _ in range(30):
            w.write(frame)
        if not Path("/proc/self/status").exists():
            return
        start = _rss_kb()
        for _ in range(300):  # a chunk per frame and node dataset (48 kB a frame)
            w.write(frame)
        grown = _rss_kb() - start
    # the default cache: up to 8 MiB more for each of the 8 node datasets (seen: 64 MB)
    assert grown < 8_000, f"RSS grew {grown} kB over 300 frames"
