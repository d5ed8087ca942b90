"""The results writer under faults (rodsim.results.writer, docs/running.md): the space of
every frame is reserved before it is written, a refused reservation leaves every earlier
frame readable with the status recorded, previous results are kept until a run completes,
and the ParaView series lists exactly its complete files."""

import dataclasses
import errno
import os
from pathlib import Path

import h5py
import numpy as np
import pytest
from test_results_format import random_frame, random_mesh

from rodsim import run, solvers
from rodsim.errors import ResourceError
from rodsim.results import storage as results_storage
from rodsim.results import vtk
from rodsim.results.reader import frame_count, open_results, read_frame, run_status
from rodsim.results.vtk import SeriesWriter, read_pvd
from rodsim.results.writer import COMPLETE, FAILED, ResultsWriter, previous_path


def frames(n, seed=1):
    rng = np.random.default_rng(seed)
    mesh = random_mesh(rng, True, True)
    return mesh, [random_frame(rng, mesh) for _ in range(n)]


def refuse_after(monkeypatch, calls: int, err=errno.ENOSPC):
    """posix_fallocate succeeds `calls` times, then fails with err."""
    real = os.posix_fallocate
    count = [0]

    def fallocate(fd, offset, length):
        count[0] += 1
        if count[0] > calls:
            raise OSError(err, os.strerror(err))
        real(fd, offset, length)

    monkeypatch.setattr(results_storage.os, "posix_fallocate", fallocate)


def test_a_refused_reservation_keeps_every_earlier_frame(tmp_path, monkeypatch):
    mesh, written = frames(6)
    path = tmp_path / "r.h5"
    refuse_after(monkeypatch, 4)  # the file's creation and frames 0, 1, 2
    w = ResultsWriter(path, mesh, "case", end_requested=5.0)
    with pytest.raises(ResourceError, match="no room for frame 3 .*3 frames written before"):
        for fr in written:
            w.write(fr)
    w.finish(FAILED, "ResourceError: disk full")
    with open_results(path) as f:
        assert frame_count(f) == 3
        status = run_status(f)
        for k in range(3):
            assert np.array_equal(read_frame(f, k).position, written[k].position)
    assert (status.state, status.detail) == (FAILED, "ResourceError: disk full")
    assert status.last_time == written[2].time
    assert status.end_requested == 5.0


def test_without_fallocate_the_free_space_is_checked(tmp_path, monkeypatch):
    mesh, written = frames(2)
    refuse_after(monkeypatch, 0, errno.EOPNOTSUPP)  # e.g. some network filesystems
    real = os.fstatvfs
    free = [1 << 40]

    class Full:
        def __init__(self, st):
            self.f_frsize, self.f_bavail = st.f_frsize, free[0] // st.f_frsize

    monkeypatch.setattr(results_storage.os, "fstatvfs", lambda fd: Full(real(fd)))
    w = ResultsWriter(tmp_path / "r.h5", mesh, "case")
    w.write(written[0])
    free[0] = 1000  # less than a frame's reservation
    with pytest.raises(ResourceError, match="no room for frame 1 .*No space left"):
        w.write(written[1])
    w.finish(FAILED)
    with open_results(tmp_path / "r.h5") as f:
        assert frame_count(f) == 1


def test_the_reservation_is_there_while_writing_and_cut_off_at_the_end(tmp_path):
    mesh, written = frames(3)
    path = tmp_path / "r.h5"
    with ResultsWriter(path, mesh, "case") as w:
        for fr in written:
            w.write(fr)
        allocated = w.file.id.get_filesize()  # HDF5's end of allocation while open
        # the next frame's room: at least the metadata margin beyond it
        reserved = path.stat().st_size
        assert reserved >= allocated + results_storage.METADATA_MARGIN
    # the close writes the status in place: the file ends near the data, not the reservation
    assert path.stat().st_size < allocated + 65536 < reserved
    with open_results(path) as f:
        assert f.attrs["status"] == COMPLETE
        assert frame_count(f) == 3


def test_previous_results_are_kept_until_a_run_completes(tmp_path):
    mesh, written = frames(2)
    path, prev = tmp_path / "r.h5", previous_path(tmp_path / "r.h5")
    assert prev == tmp_path / "r.prev.h5"
    path.write_bytes(b"old results")
    w = ResultsWriter(path, mesh, "case")
    w.finish(FAILED)  # no frame written: nothing moved
    assert path.read_bytes() == b"old results"
    assert not prev.exists()
    assert not list(tmp_path.glob(".*partial"))
    w = ResultsWriter(path, mesh, "case")
    w.write(written[0])
    assert prev.read_bytes() == b"old results"  # moved aside at the first frame
    w.finish(FAILED)
    assert prev.exists()
    assert w.kept_previous
    with ResultsWriter(path, mesh, "case") as w:
        w.write(written[1])
    assert not prev.exists()  # the complete run deleted it (one generation)


def test_a_complete_previous_result_is_not_replaced_by_an_incomplete_one(tmp_path):
    """Run A completes, B fails (A kept as .prev), C starts: A stays, B's file goes."""
    mesh, written = frames(3)
    path, prev = tmp_path / "r.h5", tmp_path / "r.prev.h5"
    titles = iter("ABC")
    for status in (COMPLETE, FAILED, None):
        w = ResultsWriter(path, mesh, "case", next(titles))
        w.write(written[0])
        if status:
            w.finish(status)
    with open_results(prev) as f:
        assert f.attrs["title"] == "A"
    assert w.dropped_incomplete
    w.finish(FAILED)
    with open_results(prev) as f:  # C failed too: A is still the previous result
        assert f.attrs["title"] == "A"


def test_the_series_lists_exactly_its_complete_files(tmp_path, monkeypatch):
    mesh, written = frames(4)
    pvd = tmp_path / "r.pvd"
    with SeriesWriter(pvd, mesh.points, mesh.conn, mesh.plates) as s:
        s.write(written[0])
    real = vtk.meshio.Mesh.write
    calls = [0]

    def write(self, path, **kw):
        calls[0] += 1
        if calls[0] == 3:
            Path(path).write_bytes(b"half a file")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(self, path, **kw)

    monkeypatch.setattr(vtk.meshio.Mesh, "write", write)
    s = SeriesWriter(pvd, mesh.points, mesh.conn, mesh.plates)
    with pytest.raises(ResourceError, match="r_000002.vtu failed .*the 2 frames of the"):
        for fr in written:
            s.write(fr)
    s.close(complete=False)
    folder = tmp_path / "r_vtk"
    assert sorted(p.name for p in folder.iterdir()) == ["r_000000.vtu", "r_000001.vtu"]
    assert [p.name for _, p in read_pvd(pvd)] == ["r_000000.vtu", "r_000001.vtu"]
    prev = read_pvd(tmp_path / "r.prev.pvd")  # the earlier series, still readable
    assert [(t, p.parent.name) for t, p in prev] == [(written[0].total_time, "r.prev_vtk")]
    assert prev[0][1].exists()


def test_a_series_that_writes_no_frame_leaves_the_earlier_one_alone(tmp_path):
    mesh, written = frames(1)
    pvd = tmp_path / "r.pvd"
    with SeriesWriter(pvd, mesh.points, mesh.conn, mesh.plates) as s:
        s.write(written[0])
    before = pvd.read_text()
    s = SeriesWriter(pvd, mesh.points, mesh.conn, mesh.plates)
    s.close(complete=False)  # e.g. the run failed before its first frame
    assert pvd.read_text() == before
    assert (tmp_path / "r_vtk/r_000000.vtu").exists()
    assert not (tmp_path / "r.prev.pvd").exists()


def test_a_second_signal_waits_for_the_frame_being_written():
    import signal

    from rodsim import interrupts

    with interrupts.watch() as w:
        os.kill(os.getpid(), signal.SIGTERM)
        assert w.requested()
        assert w.name == "SIGTERM"
        steps = []
        with pytest.raises(KeyboardInterrupt):
            with w.deferred():
                os.kill(os.getpid(), signal.SIGTERM)  # the second: not inside the block
                steps.append("written")
        assert steps == ["written"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored


def test_chunks_of_steps_last_about_a_tenth_of_a_second():
    assert solvers.next_chunk(1, 30.0) == 1  # the first call compiled: stay small
    assert solvers.next_chunk(10, 1e-4) == 40  # fast: grow by at most 4x per call
    assert solvers.next_chunk(1000, 0.5) == int(1000 / 0.5 * solvers.CHUNK_SECONDS)  # slow: shrink
    assert solvers.next_chunk(1, 5.0) == 1


def test_an_equilibrium_stopped_mid_load_step_ends_with_its_iterate(tmp_path):
    root = Path(__file__).parents[1]
    prep = run.prepare(root / "inputs/rollup/rollup.yaml", ["solver.equilibrium.load_steps=2"])
    asked = [0]

    def stop():  # true from the 4th question on: inside the first load step's iterations
        asked[0] += 1
        return asked[0] > 3

    out = list(solvers.SOLVERS["equilibrium"].frames(prep, None, stop))
    assert [fr.off_schedule for fr in out] == [0, 1]
    last = out[-1]
    assert last.time == 0.5  # the load multiplier the step was heading for
    assert last.residual > prep.case.settings.solver.equilibrium.tol  # not converged
    assert np.all(np.isfinite(last.position))


def test_the_status_line_says_off_schedule_only_when_the_last_frame_is():
    from rodsim.results.reader import RunStatus

    stopped_on_a_frame = RunStatus("interrupted", "SIGTERM", 10.0, 5.0, False)
    assert stopped_on_a_frame.text() == "interrupted by SIGTERM: last frame t = 5 of 10"
    assert (
        RunStatus("interrupted", "SIGINT", 10.0, 5.5, True).text().endswith("of 10 (off-schedule)")
    )
    # a lock of another run (another pid) does not make this file "running"
    killed = RunStatus("running", "", 10.0, 2.0, False, "h", 7)
    alive_other = {"host": "h", "pid": 8, "alive": True}
    assert killed.text(alive_other).startswith("incomplete: still running or killed")
    assert killed.text({"host": "h", "pid": 7, "alive": True}).startswith("running (pid 7 on h)")


def _big_mesh(rng, nodes=60):
    """Rods and plates large enough that the per-node datasets are compressed (>= 384 bytes a
    frame) while the scalars are not."""
    mesh = random_mesh(rng, True, True)
    e, p = nodes - 1, nodes // 2
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


def _smooth(frame, k):
    """The frame with smooth fields on a grid of 1/64: few mantissa bits, so compressible (as
    the zeros and exact values in simulation results are)."""

    def field(a):
        if a is None or np.ndim(a) == 0:
            return a
        wave = np.sin(0.01 * k + np.arange(np.size(a)).reshape(np.shape(a)) / 50.0)
        return np.round(64.0 * wave) / 64.0

    skip = ("off_schedule", "directors")
    fields = [f.name for f in dataclasses.fields(frame) if f.name not in skip]
    return dataclasses.replace(frame, **{name: field(getattr(frame, name)) for name in fields})


@pytest.mark.parametrize("compression", ["gzip", "gzip:9", "lzf"])
def test_compressed_results_read_back_identical(tmp_path, compression):
    rng = np.random.default_rng(3)
    mesh = _big_mesh(rng)
    written = [_smooth(random_frame(rng, mesh), k) for k in range(12)]
    paths = {}
    for c in ("none", compression):
        paths[c] = tmp_path / f"{c.replace(':', '')}.h5"
        with ResultsWriter(paths[c], mesh, "case", expected_frames=12, compression=c) as w:
            for fr in written:
                w.write(fr)
    with open_results(paths["none"]) as plain, open_results(paths[compression]) as packed:
        assert frame_count(packed) == 12
        for k in range(12):
            for field in ("position", "rotation", "force", "plate_shear", "time", "residual"):
                a, b = getattr(read_frame(plain, k), field), getattr(read_frame(packed, k), field)
                assert np.array_equal(a, b), (k, field)
        for name in _datasets(packed):
            assert np.array_equal(plain[name][()], packed[name][()]), name
        big = packed["nodes/position"]
        assert big.compression == compression.partition(":")[0]
        assert big.shuffle
        assert big.chunks[0] == 1  # each chunk written once, whole (docs/results.md)
        assert packed["time"].compression is None  # 8 bytes a frame: not worth an index entry
        assert _frame_storage(packed) < 0.5 * _frame_storage(plain)


def _datasets(f) -> list:
    names = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return names


def _frame_storage(f) -> int:
    """File bytes allocated to the per-frame datasets."""
    return sum(f[n].id.get_storage_size() for n in _datasets(f) if not n.startswith("mesh/"))


@pytest.mark.parametrize("compression", ["none", "gzip", "lzf"])
def test_the_reservation_bounds_what_every_frame_allocates(tmp_path, monkeypatch, compression):
    """Random numbers, which compression cannot shrink (the worst case), and more frames than
    planned, so that chunks of many frames start again and again: every frame's new chunks
    fit the chunk part of the space reserved before it, and all it allocates the whole."""
    rng = np.random.default_rng(4)
    mesh = _big_mesh(rng, nodes=30)
    written = [random_frame(rng, mesh) for _ in range(3)]
    reserved = []
    real = results_storage.reserve

    def reserve(f, nbytes):
        reserved.append((f.id.get_filesize(), _frame_storage(f), nbytes))
        real(f, nbytes)

    monkeypatch.setattr(results_storage, "reserve", reserve)
    path = tmp_path / "r.h5"
    with ResultsWriter(path, mesh, "", expected_frames=20, compression=compression) as w:
        for k in range(45):
            w.write(written[k % 3])
            end, stored, nbytes = reserved[-1]
            chunks = nbytes - results_storage.METADATA_MARGIN
            grown = _frame_storage(w.file) - stored
            assert grown <= chunks, (k, grown, chunks)
            assert w.file.id.get_filesize() - end <= nbytes
