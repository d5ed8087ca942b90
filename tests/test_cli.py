"""The rodsim command in-process: run, check, info, export, plot, --set, --quiet, exit codes."""

import importlib
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import looked_at

from rodsim.case import reference
from rodsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
SPAGHETTI = ROOT / "inputs" / "spaghetti" / "spaghetti.yaml"
SHORT = ["--set", "solver.t_end=0.5", "--set", "output.interval=0.1"]


def _err(res) -> str:
    return res.stderr if hasattr(res, "stderr") else res.output


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "s.h5"
    res = CliRunner().invoke(main, ["run", str(SPAGHETTI), "-o", str(out), *SHORT])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_run_prints_summary_then_results(results):
    out, text = results
    for expected in (
        "11 nodes, 10 rod elements",
        "explicit order 2, group SO3xR3",
        "dt 0.005 (0.506 x stable-step estimate 0.0098773)",
        "100 steps",
        "6 frames",
        str(out),
        str(out.with_suffix(".pvd")),
    ):
        assert expected in text, expected
    assert out.exists()
    assert out.with_suffix(".pvd").exists()


def test_run_quiet_prints_nothing(tmp_path):
    res = CliRunner().invoke(
        main, ["run", str(SPAGHETTI), "-o", str(tmp_path / "q.h5"), "-q", "--no-vtk", *SHORT]
    )
    assert res.exit_code == 0
    assert res.output == ""
    assert not (tmp_path / "q.pvd").exists()


def test_default_output_goes_next_to_the_case(tmp_path):
    case = tmp_path / "my case.yaml"
    case.write_text(SPAGHETTI.read_text())
    res = CliRunner().invoke(main, ["run", str(case), "-q", "--no-vtk", *SHORT])
    assert res.exit_code == 0, _err(res)
    assert (tmp_path / "my case.h5").exists()


def test_set_overrides_reach_the_file(tmp_path):
    out = tmp_path / "o.h5"
    res = CliRunner().invoke(
        main,
        [
            "run",
            str(SPAGHETTI),
            "-o",
            str(out),
            "-q",
            "--no-vtk",
            "--set",
            "solver.t_end=0.2",
            "--set",
            "output.every=10",
            "--set",
            "solver.group=SE3",
        ],
    )
    assert res.exit_code == 0, _err(res)
    with h5py.File(out) as f:
        assert f["time"][-1] == pytest.approx(0.2)
        assert f["time"].shape == (5,)
        assert "solver.group=SE3" in f.attrs["overrides"]


def test_check_reports_stable_step_and_sets():
    res = CliRunner().invoke(main, ["check", str(SPAGHETTI)])
    assert res.exit_code == 0
    assert "stable-step estimate 0.0098773" in res.output
    assert "beam.end" in res.output
    assert res.output.strip().endswith("ok")


def test_info(results):
    out, _ = results
    res = CliRunner().invoke(main, ["info", str(out)])
    assert res.exit_code == 0
    assert "Flying spaghetti 3D" in res.output
    assert "frames    6, time 0 to 0.5" in res.output
    assert "nodes/rotation (6, 11, 4)" in res.output


def test_export(results, tmp_path):
    out, _ = results
    res = CliRunner().invoke(main, ["export", str(out), "-o", str(tmp_path)])
    assert res.exit_code == 0
    assert (tmp_path / "s.pvd").exists()
    assert len(list((tmp_path / "s_vtk").glob("*.vtu"))) == 6


PLOTS = {  # WHAT: its number of curves
    "energy": 4,
    "momentum": 6,
    "displacement@beam.end": 3,
    "force.axial@beam.all": 2,
    "rotation.w@beam.start": 1,
}


@pytest.mark.parametrize("what", list(PLOTS))
def test_plot_writes_png(results, tmp_path, what):
    """The picture is looked at (tests/conftest.looked_at): not blank, every curve's colour
    there; another quantity gives another picture."""
    out, _ = results
    png = tmp_path / "p.png"
    res = CliRunner().invoke(main, ["plot", str(out), what, "-o", str(png)])
    assert res.exit_code == 0, _err(res)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = looked_at(png, PLOTS[what])
    other = "energy" if what != "energy" else "momentum"
    res = CliRunner().invoke(main, ["plot", str(out), other, "-o", str(tmp_path / "q.png")])
    assert (np.abs(img - looked_at(tmp_path / "q.png")).max(axis=2) > 40).sum() > 1000


@pytest.mark.parametrize(
    "what, message",
    [
        ("bogus@beam.end", "unknown quantity 'bogus'"),
        ("displacement@nowhere", "unknown node set 'nowhere'"),
        ("force.sideways@beam.all", "unknown component 'sideways'"),
        ("stuff", "expected energy, momentum, load_factor or QUANTITY@SET"),
    ],
)
def test_plot_errors(results, what, message):
    out, _ = results
    res = CliRunner().invoke(main, ["plot", str(out), what])
    assert res.exit_code == 2
    assert message in _err(res)
    assert "Traceback" not in _err(res)


@pytest.mark.parametrize("command", ["info", "export", "plot"])
def test_not_a_results_file(tmp_path, command):
    bad = tmp_path / "bad.h5"
    bad.write_text("not hdf5")
    for path, message in (
        (bad, "not a readable HDF5 file"),
        (tmp_path / "none.h5", "no such results file"),
    ):
        res = CliRunner().invoke(main, [command, str(path)])
        assert res.exit_code == 2
        assert message in _err(res)


def test_case_reference_is_generated_from_the_schema():
    committed = (ROOT / "docs" / "case_reference.md").read_text()
    assert committed == reference.reference(), (
        "docs/case_reference.md is stale: python -m rodsim.case.reference > docs/case_reference.md"
    )


def test_progress_line_on_a_terminal(capsys):
    from rodsim.cli.run import Progress

    p = Progress(t_end=2.0, enabled=True)
    p(1.0, 500, 1000)
    p(2.0, 1000, 1000)
    p.done()
    err = capsys.readouterr().err
    assert "t = 2 / 2" in err
    assert "100%" in err
    assert "steps/s" in err
    assert "ETA 0:00" in err
    quiet = Progress(t_end=2.0, enabled=False)
    quiet(1.0, 500, 1000)
    quiet.done()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "name, words",
    [
        ("case.yaml", "expected a .png name"),
        ("r2.h5", "expected a .png name"),
        ("notes.png", "is not a PNG picture"),
    ],
)
def test_plot_does_not_overwrite_another_file(tmp_path, name, words):
    """`rodsim plot -o` onto a file that is not an earlier plot overwrote it (a .yaml or .h5
    name was an internal error; issue 33): exit 2, the file byte-identical."""
    target = tmp_path / name
    target.write_bytes(b"rodsim: 1\n")
    res = CliRunner().invoke(main, ["plot", str(tmp_path / "missing.h5"), "-o", str(target)])
    assert res.exit_code == 2, res.output
    assert words in res.output
    assert target.read_bytes() == b"rodsim: 1\n"


def test_help_lists_every_command_without_loading_the_numerics():
    """`python -m rodsim --help` lists the commands the group registers (rodsim/cli/group.py)
    and loads neither numpy, h5py nor numba: they load inside the commands."""
    out = subprocess.run(
        [sys.executable, "-m", "rodsim", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    listed = out.stdout.split("Commands:")[1].split()
    names = "check export info plot render run schema sweep validate warmup".split()
    assert names == [word for word in listed if word in names]
    code = (
        "import sys; from rodsim.cli import main; main(['--help'], standalone_mode=False); "
        "print([m for m in ('numpy', 'h5py', 'numba') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "[]", out


@pytest.mark.parametrize("old, new", [("cli_post", "post"), ("cli_sweep", "sweep")])
def test_the_old_command_modules_still_import(old, new, monkeypatch):
    monkeypatch.delitem(sys.modules, f"rodsim.{old}", raising=False)
    with pytest.warns(DeprecationWarning, match=f"rodsim.{old} is now rodsim.cli.{new}"):
        module = importlib.import_module(f"rodsim.{old}")
    assert module is importlib.import_module(f"rodsim.cli.{new}")
