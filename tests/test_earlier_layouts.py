"""Every results file written before today's layout reads as it did (docs/results.md, "Layout
versions"): tests/data/layouts/ holds a file of each earlier layout minor that could still be
written (minor_N.h5.gz, gzip of the file as written: HDF5's object headers make the 3-frame
file 40 to 80 kB, its data 8 kB; minors 0 and 1 chunked by 1024 frames, 1.3 MB) with the
values read from it by h5py when it was written (minor_N.json: the commit that wrote it, its
frame count, times, positions and per-frame datasets); minor 0 has no layout_minor attribute
and reads as 1.0. tests/data/layouts/README.md says how they were made."""

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rodsim.post.summary import describe
from rodsim.results import read_results
from rodsim.results.reader import frame_count, layout_version, open_results, read_frame

DATA = Path(__file__).parent / "data" / "layouts"
FILES = sorted(DATA.glob("minor_*.h5.gz"), key=lambda p: int(p.name.split("_")[1].split(".")[0]))


@pytest.fixture(params=FILES, ids=lambda p: p.name.removesuffix(".h5.gz"))
def stored(request, tmp_path):
    path = tmp_path / request.param.name.removesuffix(".gz")
    with gzip.open(request.param, "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    written = json.loads(request.param.with_name(path.stem + ".json").read_text())
    return path, written


def test_there_is_a_file_of_each_earlier_minor():
    minors = {int(p.name.split("_")[1].split(".")[0]) for p in FILES}
    assert {0, 1, 2, 3, 4, 5, 6, 7, 9} <= minors, minors


def test_it_reads_as_written(stored):
    path, written = stored
    r = read_results(path)
    assert r.n_frames == written["frames"] == 3
    np.testing.assert_array_equal(r.time, written["time"])
    np.testing.assert_array_equal(r.position, np.array(written["position"]))
    with open_results(path) as f:
        assert layout_version(f) == tuple(written["layout"])
        assert frame_count(f) == written["frames"]
        for k in range(written["frames"]):
            fr = read_frame(f, k)
            np.testing.assert_array_equal(fr.position, written["position"][k])
            assert fr.time == written["time"][k]
            np.testing.assert_allclose(
                np.einsum("nij,nik->njk", fr.directors, fr.directors),
                np.broadcast_to(np.eye(3), fr.directors.shape),
                atol=1e-12,
            )
    assert r.status.complete
    assert f"layout 1.{written['layout'][1]}" in describe(path)


def test_the_fields_present_are_those_written(stored):
    """What each file lacks reads as absent, what it has as written."""
    path, written = stored
    datasets = set(written["datasets"])
    r = read_results(path)
    assert (r.reaction_force is not None) == ("nodes/reaction_force" in datasets)
    assert (r.balance is not None) == ("energy/balance" in datasets)
    assert (r.rod_von_mises_max is not None) == ("rods/von_mises_max" in datasets)
    assert r.force.shape == (3, 3, 3) and r.velocity.shape == (3, 4, 3)
    np.testing.assert_array_equal(r.step, 0)
    if "total_time" not in datasets:  # before analysis steps: one step from time 0
        np.testing.assert_array_equal(r.total_time, r.time)
    assert r.terms == {}  # no term datasets in a cantilever under gravity
