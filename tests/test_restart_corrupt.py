"""A corrupt restart state (docs/restart.md "How a restart runs"): checked as a whole before
any use, refused with exit 2 and "corrupt" in the message naming the file and the key, never
an abort or an internal error, the results file left byte for byte as it was; the same check
for `initial: {from: FILE}` where it starts from the restart state."""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import small_cantilever

from rodsim import api
from rodsim.cli import main

CASE = small_cantilever(
    force="[0, 0.3, -1]",
    solver="{dt: 0.001, t_end: 0.02}",
    output="{interval: 0.01, vtk: false}",
    title="corrupt restart",
)

FROM = CASE.replace("title: corrupt restart", "title: started from\ninitial: {from: r.h5}")


def _slot(f: h5py.File) -> h5py.Group:
    return f["restart"][f"slot{int(f['restart'].attrs['current'])}"]


def _replace(name, value):
    def corrupt(slot):
        data = value(slot)
        del slot[name]
        slot[name] = data  # written as h5py gives it: the type of value

    return corrupt


def _attribute(name, value):
    def corrupt(slot):
        slot.attrs[name] = value

    return corrupt


def _with_nan(name):
    def corrupt(slot):
        data = slot[name][()]
        data[1, 0] = np.nan
        slot[name][...] = data

    return corrupt


def _scaled(slot):
    slot["rot"][...] = 1.001 * slot["rot"][()]


# each corruption of the hostile-input campaign, and the words the refusal names it by
CORRUPTIONS = {
    "one node too few": (_replace("x", lambda s: s["x"][:-1]), "x has shape (4, 3)"),
    "rot one node too few": (_replace("rot", lambda s: s["rot"][:-1]), "rot has shape"),
    "dt NaN": (_attribute("dt", np.nan), "dt is nan"),
    "dt zero": (_attribute("dt", 0.0), "dt is 0.0"),
    "dt negative": (_attribute("dt", -0.001), "dt is -0.001"),
    "dt string": (_attribute("dt", "0.001"), "'dt' is '0.001', expected a number"),
    "every zero": (_attribute("every", 0), "every is 0"),
    "t0 NaN": (_attribute("t0", np.nan), "t0 is nan"),
    "t0 off its frame": (_attribute("t0", 0.5), "is not that of its frame"),
    "count negative": (_attribute("count", -3), "count is -3"),
    "positions NaN": (_with_nan("x"), "x holds NaN"),
    "momenta NaN": (_with_nan("p"), "p holds NaN"),
    "scaled rotations": (_scaled, "rot is not orthonormal"),
    "positions of integers": (_replace("x", lambda s: s["x"][()].astype(int)), "expected float64"),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A complete explicit run of a 4-element rod (3 frames) with its restart state."""
    folder = tmp_path_factory.mktemp("written")
    case = folder / "case.yaml"
    case.write_text(CASE)
    api.run_case(case, folder / "r.h5", vtk=False)
    return folder


def _corrupted(written: Path, tmp_path: Path, how) -> tuple[Path, Path]:
    for name in ("case.yaml", "r.h5"):
        shutil.copy(written / name, tmp_path / name)
    h5 = tmp_path / "r.h5"
    with h5py.File(h5, "r+") as f:
        how(_slot(f))
    return tmp_path / "case.yaml", h5


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# arrays of the wrong shape made the old code's kernels index past them (double free,
# SIGABRT): those run in a process of their own, so that an abort fails the test, not pytest
OWN_PROCESS = ("one node too few", "rot one node too few")


def _rodsim(*args, own_process: bool) -> tuple[int, str]:
    """(exit code, stdout and stderr) of the command line."""
    if own_process:
        res = subprocess.run(
            [sys.executable, "-m", "rodsim.cli", *map(str, args)], capture_output=True, text=True
        )
        return res.returncode, res.stdout + res.stderr
    res = CliRunner().invoke(main, list(map(str, args)))
    return res.exit_code, res.output


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_a_corrupt_restart_state_is_refused_before_use(written, tmp_path, name):
    how, words = CORRUPTIONS[name]
    case, h5 = _corrupted(written, tmp_path, how)
    before = _digest(h5)
    # a later end time: the run would take steps from the state
    code, out = _rodsim(
        "run", case, "--restart", h5, "--set", "solver.t_end=0.04", "-q",
        own_process=name in OWN_PROCESS,
    )  # fmt: skip
    assert code == 2, out
    assert "restart state (restart/) is corrupt" in out, out
    assert words in out, out
    assert "--restart" in out and str(h5) in out
    assert "Traceback" not in out
    assert _digest(h5) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml", "r.h5"]


def test_the_intact_state_still_continues(written, tmp_path):
    """The check refuses the corruptions only: the file as written continues."""
    case, h5 = _corrupted(written, tmp_path, lambda slot: None)
    res = CliRunner().invoke(
        main, ["run", str(case), "--restart", str(h5), "--set", "solver.t_end=0.04", "-q"]
    )
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("name", ["one node too few", "dt NaN", "scaled rotations"])
def test_initial_from_a_corrupt_restart_state_is_refused(written, tmp_path, name):
    how, words = CORRUPTIONS[name]
    _, h5 = _corrupted(written, tmp_path, how)
    case = tmp_path / "from.yaml"
    case.write_text(FROM)
    code, out = _rodsim(
        "run", case, "-o", tmp_path / "out.h5", "-q", own_process=name in OWN_PROCESS
    )
    assert code == 2, out
    assert "restart state (restart/) is corrupt" in out and words in out
    assert "initial.from" in out and str(h5) in out
    assert not (tmp_path / "out.h5").exists()
