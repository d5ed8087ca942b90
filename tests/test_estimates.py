"""Results files sized by their data, and the estimates `rodsim check` prints (rodsim.estimates,
docs/results.md "File size"): the size estimate against the file a run writes, the file
against its data, and the summary lines. The run-time estimate depends on the machine:
benchmarks/estimates.py compares it with runs; no test here times anything."""

import dataclasses
import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from test_results_format import random_frame, random_mesh

from rodsim import estimates, run
from rodsim.cli import main
from rodsim.results import storage as results_storage
from rodsim.results.storage import CHUNK_BYTES, CHUNKS_PER_RUN, chunk_frames
from rodsim.results.writer import ResultsWriter

INPUTS = Path(__file__).resolve().parents[1] / "inputs"

# The size estimate's tolerance: the fit of its bookkeeping constants left residuals of
# -3.2 to +2.9 kB on 144 random files (HDF5 allocates its metadata in blocks, which the fit
# averages), and a chunk index node more or less is under 1 kB; 2% covers the index of long
# runs, whose entries the estimate counts at an average fill.
ABSOLUTE, RELATIVE = 8_000, 0.02


def data_bytes(path) -> int:
    """The bytes of the data a results file holds: the sum of its datasets' nbytes."""
    total = 0

    def visit(_, obj):
        nonlocal total
        if isinstance(obj, h5py.Dataset):
            total += obj.nbytes

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return total


def assert_sized_by_its_data(path) -> None:
    """The contract of docs/results.md: at most 1.25x the data plus 100 kB."""
    size, data = path.stat().st_size, data_bytes(path)
    assert size <= 1.25 * data + 100_000, f"{size} bytes for {data} bytes of data"


@pytest.mark.parametrize(
    "case, overrides",
    [
        ("rollup/rollup.yaml", []),  # equilibrium, 5 frames of 11 nodes
        # the report of issue 14: a 2-frame static result of 41 nodes was 12.2 MB
        (
            "cantilever_tip/cantilever_tip.yaml",
            ["mesh[0].rod.elements=40", "solver.equilibrium.load_steps=1"],
        ),
        ("spaghetti/spaghetti.yaml", ["solver.t_end=2"]),  # explicit, 41 frames
        ("plate/ss_plate.yaml", []),  # plates
    ],
)
def test_the_size_estimate_is_the_file_a_run_writes(tmp_path, case, overrides):
    prep = run.prepare(INPUTS / case, overrides)
    estimate = estimates.results_size_of(prep)
    out = tmp_path / "r.h5"
    run.execute(prep, out, vtk=False, handle_signals=False)
    size = out.stat().st_size
    assert abs(estimate.bytes - size) <= ABSOLUTE + RELATIVE * size, (estimate, size)
    assert_sized_by_its_data(out)
    if prep.setup.model.n_nodes == 41:
        assert size < 200_000


def _mesh(rng, nodes: int, rods: bool, plates: bool):
    """A random mesh of about `nodes` nodes with rods and/or plates."""
    mesh = random_mesh(rng, rods, plates)
    e, p = (nodes - 1) if rods else 0, (nodes // 2) if plates else 0
    return dataclasses.replace(
        mesh,
        points=rng.normal(size=(nodes, 3)),
        frames=rng.normal(size=(nodes, 3, 3)),
        conn=rng.integers(0, nodes, (e, 2)),
        end_frames=rng.normal(size=(e, 2, 3, 3)),
        section=rng.integers(0, 2, e),
        part=rng.integers(0, 3, e),
        plates=rng.integers(0, nodes, (p, 4)),
        plate_section=rng.integers(0, 2, p),
        plate_part=rng.integers(0, 3, p),
        plate_frames=rng.normal(size=(p, 4, 3, 3)),
    )


@pytest.mark.parametrize("nodes, frames", [(7, 1), (7, 150), (41, 2), (60, 40), (400, 17)])
def test_every_file_is_its_data_and_a_little(tmp_path, nodes, frames):
    """Rods and plates together (the most datasets), frames of random numbers (nothing to
    compress), written through the writer as a run writes them."""
    rng = np.random.default_rng(nodes + frames)
    mesh = _mesh(rng, nodes, True, True)
    written = [random_frame(rng, mesh) for _ in range(2)]
    path = tmp_path / "r.h5"
    with ResultsWriter(path, mesh, "case text", expected_frames=frames) as w:
        for k in range(frames):
            w.write(written[k % 2])
    assert_sized_by_its_data(path)
    estimate = estimates.results_size(mesh, frames, text_bytes=len("case text"))
    size = path.stat().st_size
    assert abs(estimate.bytes - size) <= ABSOLUTE + RELATIVE * size, (estimate, size)


def test_chunks_grow_with_the_run_and_waste_at_most_a_sixteenth():
    for frame_bytes in (8, 24, 504, 2400, 70_000):
        for frames in range(1, 400):
            c = chunk_frames(frame_bytes, frames)
            allocated = math.ceil(frames / c) * c
            assert allocated - frames <= frames / CHUNKS_PER_RUN
            assert c == 1 or c * frame_bytes <= CHUNK_BYTES
    assert chunk_frames(984, 2) == 1  # the 41-node result of the report: a frame a chunk
    assert chunk_frames(8, None) == 1024  # frames unknown: as many as before


def test_the_chunk_index_nodes_are_small():
    """H5Pset_istore_k is found (through ctypes): without it every file is ~40 kB larger."""
    assert results_storage._istore_k_setter() is not None


def test_check_prints_the_estimates():
    res = CliRunner().invoke(main, ["check", str(INPUTS / "ring/ring.yaml")])
    assert res.exit_code == 0, res.output
    lines = {line[:10]: line for line in res.output.splitlines()}
    assert lines["results   "].startswith("results   about ")
    assert "(301 frames x 23.4 KiB)" in lines["results   "]  # with the energy ledger
    assert lines["run time  "].startswith("run time  about ")
    assert "explicit order 2, SO3xR3: steps " in lines["run time  "]
    gzip = CliRunner().invoke(
        main, ["check", str(INPUTS / "ring/ring.yaml"), "--set", "output.compression=gzip"]
    )
    assert "results   at most about " in gzip.output
    assert "before gzip compression)" in gzip.output


def test_durations_read_in_their_unit():
    assert estimates.format_duration(0.314) == "0.31 s"
    assert estimates.format_duration(45.0) == "45 s"
    assert estimates.format_duration(270.0) == "4.5 min"
    assert estimates.format_duration(11520.0) == "3.2 h"
