"""Numbers with units that would hang, overflow or be refused wrongly (docs/units.md, Limits
on numbers with units): `rodsim check` refuses them with exit code 2 naming the file and the
key, within seconds; a stress written in base units is the same stress as `210 GPa`."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rodsim import api

CASE = """\
rodsim: 1
units: SI
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1000 mm, 0, 0], elements: 4, section: s}}
sections:
  s:
    type: rod
    material: {{E: "{E}", nu: 0.3, rho: 7850 kg/m^3}}
    shape: {{circle: 10 mm}}
boundary:
  - {{set: beam.start, fix: all}}
solver: {{analysis: equilibrium}}
output: {{vtk: false}}
"""

HOSTILE = {
    "power of a power": "9**9**9 Pa",  # pint would compute 9^(9^9): hours
    "caret power of a power": "9^9^9 Pa",
    "superscript exponent": "9⁹⁹⁹⁹⁹⁹ Pa",
    "unit power of a power": "2 m**9**9**9",
    "huge integer": "1" + "0" * 400 + " Pa",  # OverflowError inside the conversion
    "number beyond float range": "1e999 Pa",
    "integer power beyond float range": "9" * 40 + "**10 Pa",
    "float power beyond float range": "1e300**2 Pa",
    "large exponent": "2 Pa*m^20/m^20",
}


def _check(tmp_path, E):  # noqa: N803
    path = tmp_path / "hostile.yaml"
    path.write_text(CASE.format(E=E), encoding="utf-8")
    # a hang must fail the test, not CI: 60 s is ten times what a check of this case takes
    # with a cold kernel cache
    done = subprocess.run(
        [str(Path(sys.executable).with_name("rodsim")), "check", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return path, done


@pytest.mark.parametrize("E", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_numbers_with_units_exit_2_naming_file_and_key(tmp_path, E):  # noqa: N803
    path, done = _check(tmp_path, E)
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(path) in done.stderr
    assert "sections.s.material.E: expected" in done.stderr
    assert "internal error" not in done.stderr


def _stiffness(E):  # noqa: N803
    prep = api.prepare(api.case_from_yaml(CASE.format(E=E)))
    section = prep.setup.sections["s"]
    return np.concatenate([section.C1, section.C2])


@pytest.mark.parametrize(
    "E",
    [
        "210e9 kg/(m*s**2)",
        "210e9 kg m^-1 s^-2",
        "210e9 kg m⁻¹ s⁻²",
        # pint adds written float exponents: m^-0.9999999999999999, refused before
        "210e9 kg m^-0.7 m^-0.2 m^-0.1 s^-2",
    ],
)
def test_a_stress_in_base_units_is_the_stress_in_gpa(E):  # noqa: N803
    """The same section stiffness as 210 GPa: the two conversions differ at most by the
    round-off of a few multiplications by powers of ten (rel 1e-15 a step), so rel 1e-14."""
    np.testing.assert_allclose(_stiffness(E), _stiffness("210 GPa"), rtol=1e-14)


def test_another_dimension_is_not_called_a_stress():
    """'210 GPa*K' has a temperature in it: refused, and its dimension not called a stress."""
    from rodsim.errors import CaseError

    with pytest.raises(CaseError) as exc:
        api.case_from_yaml(CASE.format(E="210 GPa*K"))
    assert "[temperature]" in str(exc.value)
    assert "(a stress)" not in str(exc.value)
