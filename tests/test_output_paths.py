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


CANTILEVER = """rodsim: 1
title: a small cantilever
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 2, EI: [2, 2], rhoA: 1, rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -1]}
solver: {t_end: 0.002, dt: 0.0005}
"""


def test_output_that_would_destroy_the_file_a_run_starts_from_is_refused(tmp_path):
    """`initial: {from: r.h5}` with `-o r.h5` replaced the file the run starts from (issue 33):
    refused like -o onto the case, with the source file byte-identical."""
    first = tmp_path / "first.yaml"
    first.write_text(CANTILEVER)
    assert _run(first, tmp_path / "r.h5").exit_code == 0
    second = tmp_path / "second.yaml"
    second.write_text(CANTILEVER + "initial: {from: r.h5}\n")
    before = (tmp_path / "r.h5").read_bytes()
    result = _run(second, tmp_path / "r.h5")
    assert result.exit_code == 2, result.output
    assert "initial.from" in result.output and "-o" in result.output
    assert (tmp_path / "r.h5").read_bytes() == before
    assert _run(second, tmp_path / "r2.h5").exit_code == 0  # another -o runs
