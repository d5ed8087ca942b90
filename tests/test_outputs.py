"""Results file (HDF5 layout v1) and ParaView series: written, read back and compared with the
integrator's own state; crash safety; replacing old results only after a successful start."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import meshio
import numpy as np
import pytest
from click.testing import CliRunner

from rodsim import api
from rodsim import run as runner
from rodsim.cli import main
from rodsim.integrators import dynamics
from rodsim.post.export import export_vtk
from rodsim.results.reader import quaternion_matrices
from rodsim.results.vtk import read_pvd

INPUTS = Path(__file__).resolve().parents[1] / "inputs"
SPAGHETTI = INPUTS / "spaghetti" / "spaghetti.yaml"

NODE_DATASETS = [
    "nodes/position",
    "nodes/rotation",
    "nodes/velocity",
    "nodes/angular_velocity",
    "nodes/linear_momentum",
    "nodes/angular_momentum",
]
ROD_DATASETS = ["rods/force", "rods/moment", "rods/strain", "rods/curvature"]
SCALAR_DATASETS = [
    "time",
    "energy/kinetic",
    "energy/internal",
    "energy/external",
    "energy/total",
    "solver/dt",
    "solver/iterations",
    "solver/residual",
]


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    """The spaghetti case to t = 1 with a frame every 20 steps, run through rodsim.run."""
    out = tmp_path_factory.mktemp("spaghetti") / "s.h5"
    prep = runner.prepare(SPAGHETTI, ["solver.t_end=1.0", "output.interval=0.1"])
    result = runner.execute(prep, out, vtk=True)
    return prep, result


def test_layout_v1_datasets_and_attributes(short_run):
    prep, result = short_run
    n, e, frames = 11, 10, 11
    assert result.frames == frames
    with h5py.File(result.path, "r") as f:
        assert f.attrs["layout"] == 1
        assert f.attrs["case"] == SPAGHETTI.read_text()
        assert f.attrs["title"] == "Flying spaghetti 3D"
        assert f.attrs["rodsim_version"]
        assert f["mesh/points"].shape == (n, 3)
        assert f["mesh/rods"].shape == (e, 2)
        assert f["mesh/rods"].dtype.kind == "i"
        assert sorted(f["mesh/sets"]) == ["beam.all", "beam.end", "beam.start"]
        assert list(f["mesh/sets/beam.end"][()]) == [10]
        for name in NODE_DATASETS:
            assert f[name].shape == (frames, n, 4 if name.endswith("rotation") else 3), name
            assert f[name].dtype == np.float64
        for name in ROD_DATASETS:
            assert f[name].shape == (frames, e, 3), name
        for name in SCALAR_DATASETS:
            assert f[name].shape == (frames,), name
        for name in ("momentum/linear", "momentum/angular"):
            assert f[name].shape == (frames, 3)
        np.testing.assert_allclose(f["time"][()], np.linspace(0, 1, frames), atol=1e-12)
        np.testing.assert_array_equal(f["nodes/position"][0], f["mesh/points"][()])
        np.testing.assert_array_equal(f["nodes/rotation"][0], np.tile([1.0, 0, 0, 0], (n, 1)))
        np.testing.assert_allclose(f["rods/strain"][0], 0.0, atol=1e-15)  # round-off
        total = sum(f[f"energy/{q}"][()] for q in ("kinetic", "internal", "external"))
        np.testing.assert_allclose(f["energy/total"][()], total, rtol=1e-15)


def test_results_match_the_integrator(short_run):
    """The file holds exactly the state the integrator reaches (same model, dt and steps)."""
    prep, result = short_run
    run = dynamics.start(prep.setup.model, prep.plan.dt)
    dynamics.advance(run, prep.plan.n_steps)
    d = run.diagnostics()
    with h5py.File(result.path, "r") as f:
        np.testing.assert_allclose(f["nodes/position"][-1], run.state.x, rtol=0, atol=1e-13)
        np.testing.assert_allclose(f["nodes/linear_momentum"][-1], run.state.p, atol=1e-13)
        np.testing.assert_allclose(f["momentum/angular"][-1], d.angular_momentum, atol=1e-12)
        np.testing.assert_allclose(f["energy/kinetic"][-1], d.kinetic, rtol=1e-13)
        # the quaternions reproduce the nodal frames: Lambda = R(q) Lambda0
        directors = quaternion_matrices(f["nodes/rotation"][-1]) @ f["mesh/frames"][()]
        np.testing.assert_allclose(directors, run.state.rot, atol=1e-14)
        # the written velocities carry the kinetic energy: 1/2 m v.v + 1/2 w.(Lambda I Lambda^T w)
        m = prep.setup.model
        v, w = f["nodes/velocity"][-1], f["nodes/angular_velocity"][-1]
        spatial = np.einsum("nij,njk,nlk->nil", run.state.rot, m.inertia, run.state.rot)
        kinetic = 0.5 * np.sum(m.mass * np.sum(v * v, axis=1)) + 0.5 * np.einsum(
            "ni,nij,nj->", w, spatial, w
        )
        assert kinetic == pytest.approx(f["energy/kinetic"][-1], rel=1e-12)


def test_section_forces_are_stiffness_times_strain(short_run):
    prep, result = short_run
    c1 = prep.setup.model.rods.c1
    c2 = prep.setup.model.rods.c2
    with h5py.File(result.path, "r") as f:
        # atol: round-off of Gamma - Gamma0 (|Gamma| ~ 1) times C1 ~ 1e4
        np.testing.assert_allclose(f["rods/force"][-1], c1 * f["rods/strain"][-1], atol=1e-11)
        np.testing.assert_allclose(f["rods/moment"][-1], c2 * f["rods/curvature"][-1], atol=1e-11)
        assert np.abs(f["rods/force"][-1]).max() > 1e-3  # the rod is actually loaded


def test_vtk_series_reads_back(short_run):
    prep, result = short_run
    entries = read_pvd(result.pvd)
    with h5py.File(result.path, "r") as f:
        assert [t for t, _ in entries] == pytest.approx(list(f["time"][()]), abs=1e-15)
        for k in (0, len(entries) - 1):
            m = meshio.read(entries[k][1])
            np.testing.assert_allclose(m.points, f["nodes/position"][k], atol=1e-15)
            np.testing.assert_array_equal(m.cells_dict["line"], f["mesh/rods"][()])
            np.testing.assert_allclose(
                m.point_data["displacement"],
                f["nodes/position"][k] - f["mesh/points"][()],
                atol=1e-15,
            )
            np.testing.assert_allclose(m.point_data["velocity"], f["nodes/velocity"][k])
            np.testing.assert_allclose(
                m.point_data["angular_velocity"], f["nodes/angular_velocity"][k]
            )
            directors = quaternion_matrices(f["nodes/rotation"][k]) @ f["mesh/frames"][()]
            for i in range(3):
                np.testing.assert_allclose(
                    m.point_data[f"d{i + 1}"], directors[:, :, i], atol=1e-14
                )
            np.testing.assert_allclose(m.cell_data["force"][0], f["rods/force"][k])
            np.testing.assert_allclose(m.cell_data["moment"][0], f["rods/moment"][k])


def test_export_reproduces_the_series(short_run, tmp_path):
    prep, result = short_run
    pvd, n = export_vtk(result.path, tmp_path)
    assert n == result.frames
    original = read_pvd(result.pvd)
    exported = read_pvd(pvd)
    assert [t for t, _ in exported] == [t for t, _ in original]
    a, b = meshio.read(original[-1][1]), meshio.read(exported[-1][1])
    for key in ("displacement", "velocity", "d1", "d2", "d3"):
        np.testing.assert_allclose(b.point_data[key], a.point_data[key], atol=1e-14)
    np.testing.assert_allclose(b.cell_data["force"][0], a.cell_data["force"][0])


def test_numerical_failure_keeps_frames_and_advises(tmp_path):
    out = tmp_path / "blowup.h5"
    res = CliRunner().invoke(
        main,
        [
            "run",
            str(SPAGHETTI),
            "-o",
            str(out),
            "--no-vtk",
            "--set",
            "solver.dt=0.02",
            "--set",
            "output.every=5",
        ],
    )
    assert res.exit_code == 3, res.output
    message = res.stderr if hasattr(res, "stderr") else res.output
    assert "stable-step estimate 0.00987" in message
    assert "dt = 0.02" in message
    assert "Traceback" not in message
    with h5py.File(out, "r") as f:
        k = f["time"].shape[0]
        assert k >= 2
        for name in NODE_DATASETS + ROD_DATASETS + SCALAR_DATASETS:
            assert f[name].shape[0] == k
            assert np.all(np.isfinite(f[name][()])) or name == "solver/residual"


def test_failed_start_keeps_old_results(tmp_path):
    out = tmp_path / "r.h5"
    out.write_bytes(b"old results")
    res = CliRunner().invoke(main, ["run", str(SPAGHETTI), "-o", str(out), "--set", "solver.dt=-1"])
    assert res.exit_code == 2
    assert out.read_bytes() == b"old results"
    assert [p.name for p in tmp_path.iterdir()] == ["r.h5"]  # no temporary left behind


# compressed: 40 elements, so that the per-node datasets are (41 x 24 bytes >= 384 a frame)
@pytest.mark.parametrize(
    "compression", [[], ["mesh[0].rod.elements=40", "solver.dt=auto", "output.compression=gzip"]]
)
def test_killed_run_leaves_a_readable_file(tmp_path, compression):
    """SIGKILL in the middle of a run: every frame flushed so far reads back consistently,
    with compression too (docs/results.md: compressed chunks are written once, whole)."""
    out = tmp_path / "killed.h5"
    more = [a for o in compression for a in ("--set", o)]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rodsim.cli",
            "run",
            str(SPAGHETTI),
            "-o",
            str(out),
            "-q",
            "--no-vtk",
            "--set",
            "solver.t_end=100000",
            "--set",
            "output.every=20",
            *more,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        frames = 0
        while frames < 5 and time.monotonic() < deadline:
            time.sleep(0.2)
            if out.exists():
                try:
                    with h5py.File(out, "r", locking=False) as f:
                        frames = f["time"].shape[0]
                except OSError:
                    pass
            assert proc.poll() is None, proc.stderr.read()
        assert frames >= 5
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    with h5py.File(out, "r") as f:
        # a kill during a flush may leave the newest frame in some datasets only
        lengths = {
            name: f[name].shape[0] for name in NODE_DATASETS + ROD_DATASETS + SCALAR_DATASETS
        }
        k = min(lengths.values())
        assert f["nodes/position"].compression == ("gzip" if compression else None)
        assert k >= 5
        assert max(lengths.values()) <= k + 1
        t = f["time"][:k]
        assert np.all(np.diff(t) > 0)
        for name in NODE_DATASETS + ROD_DATASETS:
            assert np.all(np.isfinite(f[name][:k]))
        np.testing.assert_allclose(f["momentum/linear"][:k, 1:], 0.0, atol=1e-12)
    res = CliRunner().invoke(main, ["info", str(out)])
    assert res.exit_code == 0
    assert f"frames    {k}," in res.output


def test_unwritable_output_is_an_io_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = CliRunner().invoke(main, ["run", str(SPAGHETTI), "-o", str(blocker / "r.h5"), "-q"])
    assert res.exit_code == 4
    message = res.stderr if hasattr(res, "stderr") else res.output
    assert f"cannot write results to {blocker / 'r.h5'}" in message


def test_failed_series_keeps_old_results(tmp_path):
    """The results writer has started when the ParaView folder turns out to be blocked: the
    old results stay, no temporary file is left, exit code 4 names the folder."""
    import h5py

    out = tmp_path / "r.h5"
    with h5py.File(out, "w") as f:  # what the output guard takes for earlier results
        f.attrs["layout"], f.attrs["rodsim_version"] = 1, "0"
    old = out.read_bytes()
    (tmp_path / "r_vtk").write_text("a file where the series folder should go")
    res = CliRunner().invoke(main, ["run", str(SPAGHETTI), "-o", str(out), "--vtk", "-q"])
    assert res.exit_code == 4
    assert "r_vtk" in (res.stderr if hasattr(res, "stderr") else res.output)
    assert out.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.h5", "r_vtk"]


@pytest.mark.parametrize(
    "overrides",
    [
        ["solver.t_end=1", "output.interval=0.3"],
        ["solver.t_end=1", "output.every=7"],
        ["solver.t_end=1", "solver.dt=0.003", "output.every=50"],
        ["solver.t_end=0.7"],
    ],
)
def test_the_last_frame_is_at_t_end(overrides):
    prep = runner.prepare(SPAGHETTI, overrides)
    p = prep.plan
    t_end = prep.case.settings.solver.t_end
    assert p.n_steps * p.dt == pytest.approx(t_end, rel=1e-14)
    assert p.dt <= max(
        0.8 * p.stable_dt,
        prep.case.settings.solver.dt if prep.case.settings.solver.dt != "auto" else 0,
    )
    interval = prep.case.settings.output.interval
    if interval is not None:
        assert p.steps_per_frame * p.dt <= interval * (1 + 1e-12)


ARC = """
rodsim: 1
mesh:
  - arc: {name: hook, center: [0, 0, 0], radius: 2.0, start: [2, 0, 0], normal: [0, 0, 1],
          angle: 90, elements: 12, section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 50, EI: [40, 30], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary:
  - {set: hook.start, fix: all}
loads:
  - {set: hook.end, force: [0, 0, 1.0], moment: [0, 0, 2.0]}
solver: {analysis: equilibrium, equilibrium: {load_steps: 2}}
"""


def test_curved_reference_strains_are_measured_from_the_reference():
    """rods/strain and rods/curvature are Gamma - Gamma0 and Omega - Omega0: zero at the
    stress-free curved reference (Omega0 = 1/R = 0.5 here), and C1, C2 times them under load
    (a second subtraction of Omega0 once gave -0.5 at rest)."""
    results = api.run_in_memory(api.case_from_yaml(ARC))
    c2 = np.array([50.0, 40.0, 30.0])
    assert np.abs(results.curvature[0]).max() == 0.0
    assert np.abs(results.strain[0]).max() < 1e-14  # round-off of the arc's chords
    # atol: round-off of Omega (|Omega| ~ 0.5) times C2 ~ 50
    np.testing.assert_allclose(results.moment[-1], c2 * results.curvature[-1], atol=1e-11)
    assert np.abs(results.moment[-1]).max() > 0.1  # the hook is actually bent
