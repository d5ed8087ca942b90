"""The results may never overwrite an input of the run (issue 13, part): `-o` naming the case
file, a mesh file the case reads, or the run's own ParaView index is refused with exit 2
before anything is written."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rodsim.cli import main

INPUTS = Path(__file__).resolve().parents[1] / "inputs"


def _run(case: Path, output: Path):
    return CliRunner().invoke(main, ["run", str(case), "-o", str(output), "-q", "--no-vtk"])


@pytest.mark.parametrize("target", ["frame.yaml", "frame.msh", "results.pvd"])
def test_output_that_would_destroy_an_input_is_refused(tmp_path, target):
    for name in ("frame.yaml", "frame.msh"):
        shutil.copy(INPUTS / "frame" / name, tmp_path / name)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = _run(tmp_path / "frame.yaml", tmp_path / target)
    assert result.exit_code == 2, result.output
    assert "-o" in result.output
    assert "Traceback" not in result.output
    # nothing written, nothing changed
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
