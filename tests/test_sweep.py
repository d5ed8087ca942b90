"""rodsim sweep (rodsim/sweep, docs/sweeps.md): the parameter space, the sweep file's checks,
runs through a local pool and a real Dask LocalCluster, resuming, failures, outdated runs,
and the summary against each run's own results file."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import cmdline

from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.sweep import executors, identity, space, spec, summary
from rodsim.sweep.runner import execute, run_sweep

CASE = """
rodsim: 1
title: cantilever
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 8, up: [0, 0, 1], section: bar}
sections:
  bar: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.02, 0.01]}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -100.0]}
solver: {analysis: equilibrium}
output: {vtk: false}
"""
SWEEP = """
rodsim_sweep: 1
case: cant.yaml
parameters:
  loads[0].force[2]: {linspace: [-100, -400, 4]}
  sections.bar.shape.rectangle[1]: [0.01, 0.02]
collect:
  tip: {series: displacement.z@beam.end, reduce: final}
  root_moment: {series: moment.bending2@beam.all, over: absmax, reduce: final}
"""


def _files(folder: Path, sweep: str = SWEEP, case: str = CASE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cant.yaml").write_text(case)
    (folder / "sweep.yaml").write_text(sweep)
    return folder / "sweep.yaml"


def _own_numbers(results: Path) -> tuple[float, float]:
    """The tip's final z displacement and the largest |bending2| of the last frame, read
    from a run's results file with h5py alone."""
    with h5py.File(results) as f:
        tip = int(f["mesh/sets/beam.end"][0])
        z = f["nodes/position"][-1, tip, 2] - f["mesh/points"][tip, 2]
        moment = np.abs(f["rods/moment"][-1, :, 1]).max()
    return float(z), float(moment)


def _check_summary(outcome, folder: Path) -> None:
    table = summary.read(outcome.h5)
    assert list(table["status"]) == ["complete"] * 8
    for i, name in enumerate(table["name"]):
        z, m = _own_numbers(folder / "runs" / f"{name}.h5")
        assert table["results/tip"][i] == z and table["results/root_moment"][i] == m
    csv = np.genfromtxt(outcome.csv, delimiter=",", names=True, dtype=None, encoding=None)
    assert np.array_equal(csv["tip"], table["results/tip"])  # the CSV is the same table


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    """The 8-run sweep through the default pool with two worker processes."""
    path = _files(tmp_path_factory.mktemp("pool"))
    return path, run_sweep(path, workers=2)


# --- the parameter space -------------------------------------------------------------------------


def test_a_grid_varies_the_last_parameter_fastest_and_zip_pairs():
    grid = space.runs({"a": [1, 2], "b": {"linspace": [0.0, 1.0, 3]}})
    assert [(r["a"], r["b"]) for r in grid] == [(1, 0), (1, 0.5), (1, 1), (2, 0), (2, 0.5), (2, 1)]
    assert space.runs({"a": [1, 2], "b": [3, 4]}, "zip") == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    assert space.values({"logspace": [1, 100, 3]}, "k") == pytest.approx([1, 10, 100])


def test_samples_are_seeded_and_lhs_fills_every_stratum():
    spec_ = {"a": {"between": [0, 1]}, "b": {"log_between": [1, 100]}}
    one = space.runs(spec_, "lhs", 10, seed=3)
    assert one == space.runs(spec_, "lhs", 10, seed=3) != space.runs(spec_, "lhs", 10, seed=4)
    a = np.array([r["a"] for r in one])
    assert sorted(np.floor(a * 10).astype(int)) == list(range(10))  # one sample per tenth
    b = np.log10([r["b"] for r in one])
    assert sorted(np.floor(b * 5).astype(int)) == list(range(10))
    rand = space.runs(spec_, "random", 50, seed=1)
    assert all(0 <= r["a"] <= 1 and 1 <= r["b"] <= 100 for r in rand)


@pytest.mark.parametrize(
    "params, combine, count, key, says",
    [
        ({"a": {"linspace": [0, 1, 0]}}, "grid", None, "parameters.a", "whole number of values"),
        ({"a": []}, "grid", None, "parameters.a", "an empty list"),
        ({"a": {"logspace": [0, 1, 3]}}, "grid", None, "parameters.a", "a, b > 0"),
        ({"a": [1, 2], "b": [1]}, "zip", None, "combine", "lists of one length"),
        ({"a": {"between": [1, 0]}}, "lhs", 4, "parameters.a", "low < high"),
        ({"a": {"between": [0, 1]}}, "lhs", None, "count", "needs a count"),
        ({"a": {"between": [0, 1]}}, "grid", None, "parameters.a", "a range to sample"),
    ],
)
def test_an_empty_or_malformed_space_is_refused(params, combine, count, key, says):
    with pytest.raises(CaseError, match=says) as exc:
        space.runs(params, combine, count)
    assert exc.value.key == key


# --- the sweep file ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "parameters, key, says",
    [
        ("solver.equilibrium.load_stepz: [2, 3]", "parameters.solver.equilibrium.load_stepz",
         "load_stepz"),
        ("solver.equilibrium.load_steps: [2, 'many']", "parameters.solver.equilibrium.load_steps",
         "run 1 (solver.equilibrium.load_steps = \"many\")"),
        ("loads[0].force[2]: {linspace: [-1, -2, 0]}", "parameters.loads[0].force[2]",
         "whole number of values"),
        ("loads[4].force: [[0, 0, 1]]", "parameters.loads[4].force", "loads has 1 entry"),
    ],
)  # fmt: skip
def test_a_bad_sweep_file_is_exit_2_before_any_run(tmp_path, parameters, key, says):
    text = f"rodsim_sweep: 1\ncase: cant.yaml\nparameters:\n  {parameters}\n"
    path = _files(tmp_path, text)
    result = CliRunner().invoke(main, ["sweep", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}: {key}: " in result.output and says in result.output
    assert not (tmp_path / "sweep_sweep").exists()  # nothing ran, nothing was made


def test_an_unknown_key_of_the_sweep_file_is_refused(tmp_path):
    path = _files(tmp_path, SWEEP + "workerz: 3\n")
    result = CliRunner().invoke(main, ["sweep", str(path)])
    assert result.exit_code == 2 and "workerz: unknown key; expected one of" in result.output


def test_a_run_is_named_by_its_resolved_case_and_the_files_it_reads(tmp_path):
    """The same resolved case written in another key order has the same name; a mesh file's
    content changes it."""
    from rodsim.case.load import case_from_text

    a = case_from_text(CASE, tmp_path / "c.yaml", ["solver.dt=0.5", "loads[0].force[2]=-3.0"])
    b = case_from_text(CASE, tmp_path / "c.yaml", ["loads[0].force[2]=-3.0", "solver.dt=0.5"])
    c = case_from_text(CASE, tmp_path / "c.yaml", ["loads[0].force[2]=-3.00000001"])
    assert identity.run_hash(a) == identity.run_hash(b) != identity.run_hash(c)
    mesh = tmp_path / "m.msh"
    mesh.write_text("one")
    data = {"mesh": [{"file": "m.msh"}], "imperfection": {"from": "modes.h5"}}
    read = identity.files_read(data, tmp_path)
    assert read == [("m.msh", tmp_path / "m.msh"), ("modes.h5", tmp_path / "modes.h5")]

    class Reading:  # a case that reads m.msh
        folder = tmp_path

        def to_dict(self):
            return {"mesh": [{"file": "m.msh"}]}

    first = identity.run_hash(Reading())
    mesh.write_text("two")
    assert identity.run_hash(Reading()) != first
    mesh.write_text("one")
    assert identity.run_hash(Reading()) == first


# --- running -------------------------------------------------------------------------------------


def test_the_pool_summary_is_each_runs_own_numbers(pooled):
    path, outcome = pooled
    assert outcome.ran == 8
    _check_summary(outcome, path.parent / "sweep_sweep")
    table = summary.read(outcome.h5)
    tips = table["results/tip"].reshape(4, 2)  # load fastest-varying last: (load, height)
    # the stiff column (h = 0.02) bends by at most 0.05 L: Euler-Bernoulli's P L^3 / (3 E I),
    # I = b h^3 / 12, holds within the geometric nonlinearity of that deflection (1%); the
    # thin one bends by up to 0.34 L, far from linear, and is not compared
    loads = np.array([-100.0, -200.0, -300.0, -400.0])
    np.testing.assert_allclose(tips[:, 1], loads / (3 * 2.1e11 * 0.02 * 0.02**3 / 12), rtol=0.01)
    with h5py.File(path.parent / "sweep_sweep" / "runs" / f"{table['name'][0]}.h5") as f:
        assert f.attrs["sweep_run"] == table["name"][0]
        assert json.loads(f.attrs["resolved_case"])["loads"][0]["force"][2] == -100.0


def test_a_dask_local_cluster_gives_the_same_table(pooled, tmp_path):
    pytest.importorskip("dask.distributed", reason="a Dask sweep needs rodsim[dask]")
    path, pool = pooled
    executor = executors.make(dask="local:2")
    try:
        assert executor.workers == 2
        outcome = execute(spec.load(path, tmp_path / "dask"), executor)
    finally:
        executor.close()
    _check_summary(outcome, tmp_path / "dask")
    a, b = summary.read(pool.h5), summary.read(outcome.h5)
    assert np.array_equal(a["name"], b["name"]) and np.array_equal(
        a["results/tip"], b["results/tip"]
    )


def test_a_sweep_run_again_reuses_its_runs(pooled, tmp_path):
    """Two results removed: only those two run again; the others' files are untouched."""
    path, _ = pooled
    folder = tmp_path / "again"
    first = run_sweep(path, folder, workers=1)
    runs = sorted((folder / "runs").glob("*.h5"))
    for gone in runs[:2]:
        gone.unlink()
    stamps = {p: p.stat().st_mtime_ns for p in runs[2:]}
    second = run_sweep(path, folder, workers=1)
    assert (first.ran, second.ran) == (8, 2)
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    assert sum(r.reused for r in second.records) == 6
    assert [r.values for r in second.records] == [r.values for r in first.records]


def test_a_failing_run_is_recorded_and_the_others_go_on(tmp_path):
    """An unknown node set fails one run (exit 2, at build time); the others complete. Run
    again, it is not retried unless --retry-failed."""
    text = SWEEP.replace(
        "  sections.bar.shape.rectangle[1]: [0.01, 0.02]", "  loads[0].set: [beam.end, nowhere]"
    )
    path = _files(tmp_path, text)
    first = run_sweep(path, workers=1)
    status = [r.status for r in first.records]
    assert status == ["complete", "failed"] * 4
    bad = first.records[1]
    assert bad.exit_code == 2 and "nowhere" in bad.error
    assert run_sweep(path, workers=1).ran == 0
    result = CliRunner().invoke(main, ["sweep", str(path), "--workers", "1", "--retry-failed"])
    assert result.exit_code == 0 and "4 ran now" in result.output
    table = summary.read(tmp_path / "sweep_sweep" / "summary.h5")
    assert list(table["exit_code"]) == [0, 2] * 4 and np.isnan(table["results/tip"][1])


def test_runs_of_another_version_are_reused_but_flagged(tmp_path):
    path = _files(tmp_path, SWEEP.replace("{linspace: [-100, -400, 4]}", "[-100]"))
    run_sweep(path, workers=1)
    old = next((tmp_path / "sweep_sweep" / "runs").glob("*.h5"))
    with h5py.File(old, "a") as f:
        f.attrs["rodsim_version"] = "0.0.9"
    again = run_sweep(path, workers=1)
    assert again.ran == 0 and sum(r.outdated for r in again.records) == 1
    table = summary.read(again.h5)
    assert "0.0.9" in list(table["version"]) and 1 in list(table["outdated"])
    rerun = CliRunner().invoke(main, ["sweep", str(path), "--workers", "1", "--rerun-outdated"])
    assert "1 ran now" in rerun.output


SLOW = CASE.replace(
    "solver: {analysis: equilibrium}",
    "solver: {analysis: equilibrium, equilibrium: {load_steps: 60}}",
)


def _sweeping(path: Path, workers: int, files: int, new_session: bool = False):
    """`rodsim sweep` in a subprocess, once `files` results files are in its runs/ (or it
    ended)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", "sweep", str(path), "--workers", str(workers), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=new_session,
    )  # fmt: skip
    runs = path.parent / "sweep_sweep" / "runs"
    for _ in range(1200):
        if len(list(runs.glob("*.h5"))) >= files or proc.poll() is not None:
            break
        time.sleep(0.05)
    return proc


def test_an_interrupted_sweep_resumes_without_redoing_finished_runs(tmp_path):
    """SIGTERM while the sweep runs (in one process): exit 143, the summary of what finished;
    run again, only the rest runs."""
    path = _files(tmp_path, SWEEP, SLOW)
    proc = _sweeping(path, 1, 3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "sweep stopped by SIGTERM" in err and "run the sweep again to go on" in err
    table = summary.read(tmp_path / "sweep_sweep" / "summary.h5")
    finished = int(np.sum(table["status"] == "complete"))
    assert 1 <= finished < 8 and set(table["status"]) <= {"complete", "not run"}
    again = run_sweep(path, workers=1)
    assert again.ran == 8 - finished and all(r.status == "complete" for r in again.records)


def test_the_summary_plots_a_result_against_parameters(pooled, tmp_path):
    from conftest import looked_at

    path, outcome = pooled
    line = tmp_path / "line.png"
    res = CliRunner().invoke(
        main, ["plot", str(outcome.h5), "tip", "--against", "loads[0].force[2]", "-o", str(line)]
    )
    assert res.exit_code == 0, res.output
    looked_at(line, 2)  # a line per height
    heat = tmp_path / "heat.png"
    both = "loads[0].force[2],sections.bar.shape.rectangle[1]"
    res = CliRunner().invoke(
        main, ["plot", str(outcome.h5), "tip", "--against", both, "-o", str(heat)]
    )
    assert res.exit_code == 0, res.output
    from matplotlib.image import imread

    img = imread(heat)[:, :, :3]
    viridis_low = np.array([68, 1, 84]) / 255
    assert (np.abs(img - viridis_low).max(axis=2) < 0.05).sum() > 500  # the deepest tip's cell
    bad = CliRunner().invoke(main, ["plot", str(outcome.h5), "tip", "--against", "E"])
    assert bad.exit_code == 2 and "unknown parameter 'E'; the sweep varies" in bad.output


def test_the_progress_bar_speaks_only_to_a_terminal(monkeypatch, capsys):
    from rodsim.cli.sweep import Bar

    counts = {"total": 8, "done": 3, "failed": 1, "running": 2, "eta": 12.0}
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    Bar(True)(counts)
    assert "3 done, 1 failed, 2 running of 8, about 12 s left" in capsys.readouterr().err
    monkeypatch.setenv("CI", "true")
    Bar(True)(counts)
    assert capsys.readouterr().err == ""


def test_the_slurm_job_script_of_the_docs(tmp_path):
    """docs/examples/slurm_sweep.py's cluster: its job script, made by dask-jobqueue without
    a SLURM installation, asks SLURM for what the docs say and starts one-thread workers that
    share the kernel cache."""
    pytest.importorskip("dask_jobqueue", reason="the cluster how-to needs dask-jobqueue")
    import importlib.util

    where = Path(__file__).resolve().parents[1] / "docs" / "examples" / "slurm_sweep.py"
    loader = importlib.util.spec_from_file_location("slurm_sweep", where)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    script = module.job_script(cache=str(tmp_path / "cache"), host="127.0.0.1")
    for line in ("#SBATCH -p compute", "#SBATCH --cpus-per-task=1", "#SBATCH --mem=4G",
                 "#SBATCH -t 02:00:00", f"export RODSIM_CACHE_DIR={tmp_path / 'cache'}",
                 "export NUMBA_NUM_THREADS=1", "--nthreads 1"):  # fmt: skip
        assert line in script, line
    assert "distributed.cli.dask_worker" in script or "dask worker" in script


def test_workers_and_dask_are_one_or_the_other():
    with pytest.raises(CaseError, match="give it without --workers"):
        executors.make(2, "local:2")
    with pytest.raises(CaseError, match="expected local, local:N or tcp://host:port"):
        executors.make(dask="somewhere")
    pool = executors.LocalPool()
    try:
        assert pool.workers == executors.cores() == len(os.sched_getaffinity(0))
    finally:
        pool.close()


def test_a_scheduler_address_reaches_its_workers(pooled, tmp_path):
    """--dask tcp://HOST:PORT: the workers of a running scheduler (here a LocalCluster's)."""
    distributed = pytest.importorskip("dask.distributed", reason="needs rodsim[dask]")
    path, pool = pooled
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    try:
        executor = executors.make(dask=cluster.scheduler_address)
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        try:
            outcome = execute(spec.load(path, tmp_path / "tcp"), executor)
        finally:
            executor.close()
    finally:
        cluster.close()
    assert np.array_equal(
        summary.read(outcome.h5)["results/tip"], summary.read(pool.h5)["results/tip"]
    )


WARMUP = """
import json, sys
from rodsim.sweep import executors, spec
from rodsim.sweep.runner import execute
pool = executors.LocalPool(4)
try:
    out = execute(spec.load(sys.argv[1], sys.argv[2]), pool, warmup=sys.argv[3] == "1")
finally:
    pool.close()
print(json.dumps({"warm": out.compile_seconds, "workers": [r.compiled for r in out.records],
                  "tips": [r.values.get("tip") for r in out.records]}))
"""


@pytest.mark.slow
def test_four_workers_compiling_into_one_empty_cache_leave_it_valid(tmp_path):
    """No warm-up: four worker processes compile the kernels into one empty cache folder at
    once. A later sweep (a fresh process, fresh workers) compiles nothing and gets the same
    numbers. (tests/test_kernel_cache.py holds the locked index this relies on.)"""
    path = _files(tmp_path)
    env = {**os.environ, "RODSIM_CACHE_DIR": str(tmp_path / "cache")}

    def sweep(output, warm):
        args = [sys.executable, "-c", WARMUP, str(path), str(tmp_path / output), warm]
        done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    cold = sweep("cold", "0")
    assert cold["warm"] == 0 and sum(c > 0 for c in cold["workers"]) >= 2  # they compiled
    again = sweep("again", "1")
    assert again["warm"] == 0 and again["workers"] == [0.0] * 8
    assert again["tips"] == cold["tips"]


def test_a_number_is_one_value_however_it_is_written(tmp_path):
    from rodsim.case.load import case_from_text

    a = case_from_text(CASE, tmp_path / "c.yaml", ["loads[0].force=[0, 0, -700]"])
    b = case_from_text(CASE, tmp_path / "c.yaml", ["loads[0].force=[0.0, 0.0, -7.0e2]"])
    assert identity.run_hash(a)[0] == identity.run_hash(b)[0]


@pytest.mark.parametrize(
    "extra, key, says",
    [
        ("collect:\n  status: {series: energy.total, reduce: final}", "collect.status",
         "not one of the summary's columns"),
        ("collect:\n  v: {series: velocity.z@beam.end, reduce: max}", "collect.v.series",
         "velocity is a value per node or element: say over"),
        ("collect:\n  e: {series: energy.total, over: max, reduce: final}", "collect.e.series",
         "energy is not a value of a set's nodes or elements: no over"),
        ("collect:\n  s: {series: stress.z@beam.end, over: max, reduce: final}",
         "collect.s.series", "unknown series 'stress.z@beam.end'"),
        ("collect:\n  w: {series: energy.total, reduce: final, window: [2, 1]}",
         "collect.w.window", "expected t_from < t_to"),
        ("collect:\n  a: {series: energy.total, reduce: final, at: 1}", "collect.a.at",
         "at is for reduce: at or crossing"),
        ("seed: 3", "seed", "seed is for combine: random or lhs"),
    ],
)  # fmt: skip
def test_collect_and_seed_are_checked_from_the_file_alone(tmp_path, extra, key, says):
    path = _files(tmp_path, SWEEP.split("collect:")[0] + extra + "\n")
    result = CliRunner().invoke(main, ["sweep", str(path), "--check"])
    assert result.exit_code == 2, result.output
    assert f"{key}: " in result.output and says in result.output


def test_too_many_runs_and_a_loose_version_are_refused_at_once(tmp_path):
    huge = SWEEP.replace("{linspace: [-100, -400, 4]}", "{linspace: [-1, -2, 1000000000]}")
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["sweep", str(_files(tmp_path, huge)), "--check"])
    assert (
        result.exit_code == 2 and "2000000000 runs; a sweep holds at most 100000" in result.output
    )
    assert time.perf_counter() - started < 5
    loose = SWEEP.replace("rodsim_sweep: 1", "rodsim_sweep: true")
    result = CliRunner().invoke(main, ["sweep", str(_files(tmp_path, loose)), "--check"])
    assert (
        result.exit_code == 2 and "expected 1 (the sweep file's version), got True" in result.output
    )


def test_a_window_bounds_every_reduction(tmp_path):
    """final in [0, 0.1] is the value at 0.1, not at the end of the run."""
    from rodsim import api
    from rodsim.sweep.spec import Collect
    from rodsim.sweep.work import collect
    from rodsim.validate.measure import read_series

    dynamic = CASE.replace("solver: {analysis: equilibrium}", "solver: {t_end: 0.02}")
    dynamic = dynamic.replace("output: {vtk: false}", "output: {interval: 0.002, vtk: false}")
    (tmp_path / "d.yaml").write_text(dynamic)
    out = api.run_case(tmp_path / "d.yaml", tmp_path / "d.h5", vtk=False).path
    t, v = read_series(out, "displacement.z@beam.end")
    q = Collect("w", "displacement.z@beam.end", "final", window=(0.0, 0.01))
    assert collect(out, [q])["w"] == v[np.argmin(np.abs(t - 0.01))] != v[-1]


def test_a_second_sweep_into_one_folder_is_refused(tmp_path):
    import fcntl

    path = _files(tmp_path)
    folder = tmp_path / "sweep_sweep"
    folder.mkdir()
    with open(folder / ".sweep.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = CliRunner().invoke(main, ["sweep", str(path), "--workers", "1"])
    assert result.exit_code == 4 and "another rodsim sweep writes" in result.output
    assert not list(folder.glob("runs/*.h5"))


def _children(pid: int) -> list[int]:
    """The pool's worker processes of a sweep (not multiprocessing's resource tracker)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return [c for c in out if "resource_tracker" not in cmdline(Path(f"/proc/{c}"))]


def test_sigterm_to_the_sweep_alone_stops_its_pool_promptly(tmp_path):
    """kill (or a batch system) signals the sweep's process only: the workers' runs stop, the
    queued ones do not start, the summary holds every run that completed."""
    path = _files(tmp_path, SWEEP, SLOW)
    proc = _sweeping(path, 2, 3)
    runs = tmp_path / "sweep_sweep" / "runs"
    proc.send_signal(signal.SIGTERM)
    signalled = time.perf_counter()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert time.perf_counter() - signalled < 5  # the runs' own clean stops, not their ends
    time.sleep(1.0)  # nothing goes on writing after the sweep has gone
    table = summary.read(tmp_path / "sweep_sweep" / "summary.h5")
    complete = set(table["name"][table["status"] == "complete"])
    written = set()
    for results in runs.glob("*.h5"):
        with h5py.File(results, "r", locking=False) as f:
            if f.attrs.get("status") == "complete":
                written.add(results.stem)
    assert written == complete and len(complete) < 8


def test_a_worker_killed_takes_no_other_run_with_it(tmp_path):
    """SIGKILL to one pool worker (out of memory, say): its run is tried once more on a new
    pool, and every run completes."""
    path = _files(tmp_path, SWEEP, SLOW)
    proc = _sweeping(path, 2, 2)
    workers = _children(proc.pid)
    assert workers, "no worker to kill"
    os.kill(workers[0], signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "8 runs: 8 complete, 0 failed" in out


@pytest.mark.parametrize("make", [executors.Serial, lambda: executors.LocalPool(2)])
def test_every_executor_has_the_one_interface(make):
    """submit, as_completed, gather and close: what a later ensemble needs of any executor."""
    executor = make()
    try:
        futures = [executor.submit(abs, v) for v in (-1, -2, -3)]
        assert sorted(f.result() for f in executor.as_completed(futures)) == [1, 2, 3]
        assert executor.gather(futures) == [1, 2, 3] and executor.workers >= 1
    finally:
        executor.close()


def test_a_misspelled_component_is_refused_before_any_run(tmp_path):
    text = SWEEP.replace("moment.bending2@beam.all", "moment.bendin2@beam.all")
    result = CliRunner().invoke(main, ["sweep", str(_files(tmp_path, text))])
    assert result.exit_code == 2 and "unknown component 'bendin2' of moment" in result.output
    assert not (tmp_path / "sweep_sweep").exists()


def test_one_resolved_case_twice_is_one_run_and_two_lines(tmp_path):
    """-100 and -100.0 are one value: one run; its line is shared, not 'reused'. A failed
    run's message goes to the CSV without commas."""
    text = SWEEP.replace("{linspace: [-100, -400, 4]}", "[-100, -100.0]").replace(
        "[0.01, 0.02]", "[0.01]"
    )
    outcome = run_sweep(_files(tmp_path, text), workers=1)
    assert outcome.ran == 1 and [r.reused for r in outcome.records] == [False, False]
    assert outcome.records[0].values == outcome.records[1].values
    broken = text.replace("beam.end, reduce: final", "beam.end, reduce: final}\n  "
                          "gone: {series: displacement.z@nowhere, reduce: final")  # fmt: skip
    outcome = run_sweep(_files(tmp_path / "b", broken), workers=1)
    header, line = outcome.csv.read_text().splitlines()[:2]
    assert "nowhere" in line and len(line.split(",")) == len(header.split(","))  # no quoted commas


def test_ctrl_c_to_the_process_group_stops_the_pool_without_tracebacks(tmp_path):
    path = _files(tmp_path, SWEEP, SLOW)
    proc = _sweeping(path, 2, 3, new_session=True)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "sweep stopped by SIGINT" in err
