"""Hostile modal and buckling input (issue 33): a mechanism's buckling is refused, not
answered with round-off; an absurd stiffness scale gives modes, not a raw ARPACK error."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import tree_bytes

import rodsim
from rodsim.errors import CaseError

PENDULUM = """rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {elements}, section: s}}
sections:
  s: {{type: rod, EA: {ea}, GA: [{ga}, {ga}], GJ: {gj}, EI: [{ei}, {ei}], rhoA: 1,
      rhoI: [0.01, 0.01]}}
boundary:
  - {{set: beam.start, fix: {fix}}}
loads:
  - {{gravity: [0, 0, -9.81]}}
solver: {solver}
output: {{vtk: false}}
"""


def case(tmp_path, name="case.yaml", elements=20, scale=1.0, fix="[ux, uy, uz]", solver=None):
    solver = solver or "{analysis: buckling, buckling: {modes: 3}}"
    text = PENDULUM.format(
        elements=elements,
        ea=1e4 * scale,
        ga=1e4 * scale,
        gj=10 * scale,
        ei=10 * scale,
        fix=fix,
        solver=solver,
    )
    path = tmp_path / name
    path.write_text(text)
    return path


def rodsim_cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-c", "from rodsim.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("elements", [8, 20])  # dense (<= 64 free DOFs) and Lanczos
@pytest.mark.parametrize("command", ["check", "run"])
def test_buckling_of_a_pinned_pendulum_is_refused_before_anything_is_written(
    tmp_path, elements, command
):
    """A rod pinned at one end under gravity is a mechanism: its tangent is singular along
    the turn about its own axis (and, about the reference, its swing), so (K_T + mu K_G) phi
    = 0 holds there for every mu. The old code answered 1e-18 (Lanczos) or failed with a raw
    LAPACK message (dense): now exit 2, key boundary, nothing written."""
    path = case(tmp_path, elements=elements)
    before = tree_bytes(tmp_path)
    done = rodsim_cli(command, str(path), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert str(path) in done.stderr and "boundary" in done.stderr
    assert "linear buckling needs the structure held" in done.stderr
    assert "mechanism" in done.stderr
    assert tree_bytes(tmp_path) == before


def test_buckling_of_a_mechanism_from_python_is_a_case_error(tmp_path):
    """rodsim.buckling of an equilibrium case (no automatic holds: the pendulum is solved as
    it is) about the hanging state: the old code gave factors 3.5, 4.0, 4.5 for a structure
    in tension under its own weight, which cannot buckle."""
    path = case(tmp_path, solver="{analysis: equilibrium}")
    with pytest.raises(CaseError) as err:
        rodsim.buckling(str(path), about="equilibrium")
    assert err.value.key == "boundary" and "mechanism" in err.value.reason


def test_a_held_column_still_buckles(tmp_path):
    """The refusal is the mechanism's only: the same rod clamped hangs in tension under
    gravity (no positive factor, exit 3 as documented), and is not refused as a mechanism."""
    path = case(tmp_path, fix="all")
    done = rodsim_cli("check", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_modes_of_an_absurdly_stiff_structure_scale_exactly(tmp_path):
    """Every stiffness times 1e296 (EA 1e300): K phi = lambda M phi is homogeneous in K, so
    lambda scales by exactly 1e296 and the frequencies by 1e148. The old code stopped with
    the raw 'ARPACK error -9: Starting vector is zero' (its vectors underflowed); K and M
    are now scaled to order 1 before the shift-invert. Tolerance 1e-8: the Lanczos
    eigenvalues converge to ~1e-12 relative, both solves are of the same scaled matrices
    up to rounding of the scale factor."""
    modal = "{analysis: modal, modal: {modes: 4}}"
    base = rodsim.modes(str(case(tmp_path, "a.yaml", 8, fix="all", solver=modal)), count=4)
    big = rodsim.modes(
        str(case(tmp_path, "b.yaml", 8, scale=1e296, fix="all", solver=modal)), count=4
    )
    assert np.all(base.frequency > 0)
    np.testing.assert_allclose(big.frequency, base.frequency * 1e148, rtol=1e-8)


def test_an_overflowing_stiffness_is_a_numerical_error_with_advice(tmp_path):
    """EA = 1e308 x 1e4 overflows to inf in the case: refused (exit 2 by the section check,
    or exit 3 with advice by the eigensolver), never a raw ARPACK message or a traceback."""
    path = case(tmp_path, elements=8, scale=1e305, fix="all", solver="{analysis: modal}")
    before = tree_bytes(tmp_path)
    done = rodsim_cli("run", str(path), cwd=tmp_path)
    assert done.returncode in (2, 3), done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "ARPACK error" not in done.stderr
    if done.returncode == 2:
        assert tree_bytes(tmp_path) == before


def test_an_implicit_step_after_an_explicit_one_is_estimated_before_anything_runs(tmp_path):
    """The memory check takes the most demanding analysis step (rodsim.resources.most): an
    implicit step needs the Jacobian's blocks, which an explicit first step does not; it was
    estimated as explicit, and the run started writing."""
    from click.testing import CliRunner
    from conftest import small_cantilever

    from rodsim.cli import main

    text = small_cantilever(elements=50000, solver="{dt: auto, t_end: 1.0e-5}")
    text += "steps:\n  - name: one\n  - name: two\n    solver: {scheme: implicit, dt: 1.0e-6}\n"
    path = tmp_path / "case.yaml"
    path.write_text(text)
    before = tree_bytes(tmp_path)
    # 550 MiB: above this rod's explicit estimate (about 395 MiB), below its implicit one
    # (about 760 MiB, with the sparse Jacobian and its factors)
    for command in ("check", "run"):
        result = CliRunner().invoke(main, [command, str(path), "--max-memory", "550M"])
        assert result.exit_code == 4, result.output
        assert "implicit" in result.output and "--max-memory" in result.output
        assert tree_bytes(tmp_path) == before
    # the bound lies between the two: the explicit case alone fits
    alone = ["check", str(path), "--set", "steps=null", "--max-memory", "550M"]
    result = CliRunner().invoke(main, alone)
    assert result.exit_code == 0, result.output
