"""Units (docs/units.md): the `units:` declaration, numbers written with units, their
dimensions, and the declared system in the results, `rodsim info` and plot axes."""

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import looked_at

from rodsim import api
from rodsim.case import units
from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.post import display_units, plots

CANTILEVER = """\
rodsim: 1
{units}
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [{length}, 0, 0], elements: 20, section: s}}
sections:
  s:
    type: rod
    material: {{E: {E}, nu: 0.3, rho: {rho}}}
    shape: {{circle: {radius}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, {force}]}}
solver: {{analysis: equilibrium, scheme: implicit, equilibrium: {{load_steps: 2, tol: 1.0e-12}}}}
output: {{vtk: false}}
"""

# a thick steel cantilever (1 m, radius 100 mm) under a tip load that bends it well beyond the
# linear range (40 MN: the tip drops 0.56 m). Thick, because a slender rod's solution is
# sensitive to round-off beyond 1e-12: its axial stiffness outweighs the bending one by
# (L/r)^2; measured, one ulp more in E moves the tip by 1.6e-10 (relative) at L/r = 50 and by
# 9e-14 at L/r = 10.
SI = dict(units="", length="1.0", E="2.1e11", rho="7850", radius="0.1", force="-4e7")
SI_STRINGS = dict(
    units="units: SI",
    length="1000 mm",
    E="210 GPa",
    rho="7850 kg/m^3",
    radius="100 mm",
    force="-40 MN",
)
MM_T_S = dict(
    units="units: mm-t-s", length="1000", E="210000", rho="7.85e-9", radius="100", force="-4e7"
)


def tip(fields: dict) -> np.ndarray:
    results = api.run_in_memory(api.case_from_yaml(CANTILEVER.format(**fields)))
    return results.position[-1, -1]


def test_one_cantilever_in_three_unit_systems():
    """The same tip position in metres whichever way the numbers are written: the three
    models are the same up to the round-off of scaling by powers of ten, and the solution's
    sensitivity to round-off is 1e-13 (one ulp of E moves the tip by 9e-14), so rel 1e-12
    holds (measured: SI with unit strings is identical, mm-t-s 5e-13)."""
    si, strings, mm = tip(SI), tip(SI_STRINGS), tip(MM_T_S)
    assert abs(si[2]) > 0.3  # a large deflection, not a linear one
    np.testing.assert_allclose(strings, si, rtol=1e-12, atol=1e-12 * abs(si[2]))
    np.testing.assert_allclose(mm / 1000.0, si, rtol=1e-12, atol=1e-12 * abs(si[2]))


def _error(text: str) -> str:
    with pytest.raises(CaseError) as exc:
        api.case_from_yaml(text)
    return str(exc.value)


def test_a_value_of_the_wrong_dimension_names_the_key():
    text = CANTILEVER.format(**{**SI_STRINGS, "E": "3 m"})
    message = _error(text)
    assert "sections.s.material.E" in message
    assert "expected a stress (force/length^2)" in message
    assert "'3 m' (a length)" in message


def test_the_command_line_exits_2_on_a_wrong_dimension(tmp_path):
    case = tmp_path / "case.yaml"
    case.write_text(CANTILEVER.format(**{**SI_STRINGS, "E": "3 m"}))
    res = CliRunner().invoke(main, ["check", str(case)])
    assert res.exit_code == 2
    assert "sections.s.material.E" in res.output


def test_units_need_a_declaration():
    message = _error(CANTILEVER.format(**{**SI_STRINGS, "units": ""}))
    assert "mesh[0].rod.to[0]" in message
    assert "declares none" in message


@pytest.mark.parametrize(
    "declaration, key",
    [
        ("units: imperial", "units"),
        ("units: {length: mm, mass: t}", "units"),
        ("units: {length: kg, mass: t, time: s}", "units.length"),
    ],
)
def test_bad_declarations_name_the_key(declaration, key):
    message = _error(CANTILEVER.format(**{**MM_T_S, "units": declaration}))
    assert f": {key}: " in f": {message}"


def test_an_unknown_unit_is_named():
    assert "'210 GPaa'" in _error(CANTILEVER.format(**{**SI_STRINGS, "E": "210 GPaa"}))


def test_a_custom_system_converts_into_its_base_units():
    fields = {**SI_STRINGS, "units": "units: {length: cm, mass: g, time: ms}"}
    data = api.case_from_yaml(CANTILEVER.format(**fields)).settings
    assert data.mesh[0].to[0] == pytest.approx(100.0)  # 1000 mm in cm
    # 210 GPa = 210e9 kg/(m s^2) = 210e9 * 1e3 g / (1e2 cm * 1e6 ms^2)
    assert data.sections["s"].material.E == pytest.approx(2.1e6, rel=1e-12)
    assert data.loads[0].force[2] == pytest.approx(-4e7 * 1e3 * 1e2 / 1e6, rel=1e-12)


def test_angles_and_degrees():
    """An arc's angle is in degrees, a sine's phase in radians: both accept either unit."""
    with units.declared(units.system("SI")):
        assert units.convert("0.5 rad", "degree", "k") == pytest.approx(0.5 * 180 / np.pi)
        assert units.convert("90 deg", "angle", "k") == pytest.approx(np.pi / 2)
        assert units.convert("10 Hz", "1/time", "k") == pytest.approx(10.0)


def test_the_declared_system_is_recorded_and_shown(tmp_path):
    case = tmp_path / "mm.yaml"
    case.write_text(CANTILEVER.format(**MM_T_S))
    out = tmp_path / "mm.h5"
    assert CliRunner().invoke(main, ["run", str(case), "-o", str(out), "-q"]).exit_code == 0
    with h5py.File(out, "r") as f:
        assert f.attrs["units"] == "mm-t-s: length mm, mass t, time s"
        assert plots._is_equilibrium(f)  # its x axis is the load multiplier, not time
    assert api.read_results(out).units == "mm-t-s: length mm, mass t, time s"
    info = CliRunner().invoke(main, ["info", str(out)]).output
    assert "units     mm-t-s: length mm, mass t, time s (force N, stress MPa, energy mJ)" in info
    check = CliRunner().invoke(main, ["check", str(case)]).output
    assert "units     mm-t-s: length mm, mass t, time s\n" in check
    system = units.from_attribute("mm-t-s: length mm, mass t, time s")
    label = display_units.axis_label
    assert label("energy", units.QUANTITIES["energy"], system) == "energy [mJ]"
    assert label("displacement.z", units.QUANTITIES["displacement"], system) == (
        "displacement.z [mm]"
    )
    assert label("time", units.QUANTITIES["time"], None) == "time"
    png = tmp_path / "tip.png"
    res = CliRunner().invoke(main, ["plot", str(out), "displacement.z@beam.end", "-o", str(png)])
    assert res.exit_code == 0, res.output
    looked_at(png, 1)


def test_si_labels():
    si = units.system("SI")
    assert [si.label(d) for d in ("force", "force/length^2", "force*length")] == ["N", "Pa", "J"]
    assert si.label("mass*length/time") == "m kg s^-1"
