"""Rod sections: hand-computed values, Cowper factors, torsion constants and strict input checks."""

import math

import numpy as np
import pytest

from rodsim.case.sections import SECTION, rod_section
from rodsim.errors import CaseError
from rodsim.model.sections import (
    RodSection,
    section_from_material,
    section_from_resultants,
)
from rodsim.model.shapes import cowper_shear_factor, rectangle_torsion_constant, shape_properties

SPAGHETTI = {
    "type": "rod",
    "EA": 1.0e4,
    "GA": [1.0e4, 2.0e4],
    "GJ": 500,
    "EI": [300, 400],
    "rhoA": 1,
    "rhoI": [10, 20],
}
SQUARE = {
    "type": "rod",
    "material": {"E": 1.0e7, "nu": 0.0, "rho": 1.0},
    "shape": {"rectangle": [1, 1]},
}


def section_from_spec(spec):
    """The RodSection of a case-file section entry, through the case validator."""
    return rod_section(SECTION.check(spec, ()))


def _direct_beta(ratio: float, terms: int = 200_000) -> float:
    """beta(a/b) by brute-force summation of the series (tail < 1e-21)."""
    n = np.arange(1, 2 * terms, 2, dtype=float)
    series = np.sum(np.tanh(n * np.pi * ratio / 2.0) / n**5)
    return (1.0 - 192.0 / np.pi**5 / ratio * series) / 3.0


# --- values -----------------------------------------------------------------------------------


def test_resultant_section_fields_and_arrays():
    s = section_from_spec(SPAGHETTI)
    assert (s.EA, s.GA2, s.GA3, s.GJ, s.EI2, s.EI3) == (1e4, 1e4, 2e4, 500, 300, 400)
    assert (s.rhoA, s.rhoI2, s.rhoI3, s.rhoJ) == (1, 10, 20, 30)
    np.testing.assert_array_equal(s.C1, [1e4, 1e4, 2e4])
    np.testing.assert_array_equal(s.C2, [500, 300, 400])
    np.testing.assert_array_equal(s.inertia, np.diag([30.0, 10.0, 20.0]))
    assert s.C1.dtype == np.float64
    assert s.inertia.shape == (3, 3)
    assert all(type(getattr(s, k)) is float for k in ("EA", "GJ", "rhoA", "rhoJ"))


def test_explicit_rhoJ_overrides_the_polar_default():
    s = section_from_spec({**SPAGHETTI, "rhoJ": 7.5})
    assert s.rhoJ == 7.5
    assert section_from_resultants(1, (1, 1), 1, (1, 1), 1, (2, 3)).rhoJ == 5.0


def test_square_from_material():
    s = section_from_spec(SQUARE)
    g = 1.0e7 / 2.0
    assert s.EA == pytest.approx(1.0e7, rel=1e-15)
    assert s.EI2 == pytest.approx(1.0e7 / 12.0, rel=1e-15)
    assert s.EI3 == pytest.approx(1.0e7 / 12.0, rel=1e-15)
    assert s.GJ / g == pytest.approx(0.1406, abs=5e-5)  # beta of a square, a = b = 1
    assert s.GA2 == s.GA3 == pytest.approx(g * 10.0 / 12.0, rel=1e-15)  # Cowper, nu = 0
    assert s.rhoA == pytest.approx(1.0)
    assert s.rhoI2 == s.rhoI3 == pytest.approx(1.0 / 12.0)
    assert s.rhoJ == pytest.approx(1.0 / 6.0)


def test_rectangle_axes_follow_width_d2_height_d3():
    p = shape_properties({"rectangle": [2.0, 0.5]})  # width 2 along d2, height 0.5 along d3
    assert p.area == pytest.approx(1.0)
    assert p.I2 == pytest.approx(2.0 * 0.5**3 / 12.0)  # about d2: height cubed
    assert p.I3 == pytest.approx(0.5 * 2.0**3 / 12.0)
    assert p.J == pytest.approx(rectangle_torsion_constant(0.5, 2.0), rel=1e-15)


@pytest.mark.parametrize(
    ("ratio", "beta"), [(1.0, 0.1406), (1.5, 0.1958), (2.0, 0.2287), (4.0, 0.2808), (10.0, 0.3123)]
)
def test_rectangle_torsion_constant_tabulated(ratio, beta):
    # J = beta a b^3 with b = 1; beta from the classical table (Timoshenko & Goodier), 4 digits
    assert rectangle_torsion_constant(ratio, 1.0) / ratio == pytest.approx(beta, abs=6e-5)
    assert rectangle_torsion_constant(1.0, ratio) / ratio == pytest.approx(beta, abs=6e-5)


@pytest.mark.parametrize("ratio", [1.0, 1.3, 2.0, 5.0, 50.0, 1e4])
def test_rectangle_torsion_constant_matches_direct_series_and_approximation(ratio):
    b = 0.3
    j = rectangle_torsion_constant(b, ratio * b)
    assert j / (ratio * b * b**3) == pytest.approx(_direct_beta(ratio), rel=1e-13)
    r = 1.0 / ratio
    approx = (1.0 / 3.0 - 0.21 * r * (1.0 - r**4 / 12.0)) * ratio * b**4
    assert j == pytest.approx(approx, rel=5e-3)  # the approximation is good to ~0.3 %


def test_circle_from_material():
    r, e, nu, rho = 0.2, 2.0e11, 0.3, 7800.0
    s = section_from_material(e, nu, rho, {"circle": r})
    g = e / 2.6
    area, i = math.pi * r**2, math.pi * r**4 / 4.0
    k = 6.0 * 1.3 / (7.0 + 1.8)
    assert s.EA == pytest.approx(e * area, rel=1e-14)
    assert s.EI2 == s.EI3 == pytest.approx(e * i, rel=1e-14)
    assert s.GJ == pytest.approx(g * math.pi * r**4 / 2.0, rel=1e-14)
    assert s.GA2 == s.GA3 == pytest.approx(k * g * area, rel=1e-14)
    assert s.rhoJ == pytest.approx(rho * math.pi * r**4 / 2.0, rel=1e-14)


def test_tube_from_material():
    s = section_from_spec(
        {"type": "rod", "material": {"E": 10.0, "nu": 0.25, "rho": 2.0}, "shape": {"tube": [2, 1]}}
    )
    g = 10.0 / 2.5
    m2 = 0.25
    k = 6 * 1.25 * (1 + m2) ** 2 / ((7 + 1.5) * (1 + m2) ** 2 + (20 + 3) * m2)
    assert s.EA == pytest.approx(10.0 * 3.0 * math.pi)
    assert s.EI2 == s.EI3 == pytest.approx(10.0 * 15.0 * math.pi / 4.0)
    assert s.GJ == pytest.approx(g * 15.0 * math.pi / 2.0)
    assert s.GA2 == pytest.approx(k * g * 3.0 * math.pi)
    assert s.rhoI2 == pytest.approx(2.0 * 15.0 * math.pi / 4.0)
    assert s.rhoJ == pytest.approx(2.0 * 15.0 * math.pi / 2.0)


def test_solid_tube_is_a_circle():
    a = section_from_material(3.0, 0.3, 1.0, {"tube": [0.5, 0.0]})
    b = section_from_material(3.0, 0.3, 1.0, {"circle": 0.5})
    for name in ("EA", "GA2", "GJ", "EI2", "EI3", "rhoA", "rhoI2", "rhoJ"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-15)


def test_cowper_factors():
    assert cowper_shear_factor("rectangle", 0.0) == pytest.approx(10.0 / 12.0)
    assert cowper_shear_factor("rectangle", 0.3) == pytest.approx(13.0 / 15.3)
    assert cowper_shear_factor("circle", 0.0) == pytest.approx(6.0 / 7.0)
    assert cowper_shear_factor("circle", 0.5) == pytest.approx(9.0 / 10.0)
    assert cowper_shear_factor("tube", 0.3, 0.0) == pytest.approx(
        cowper_shear_factor("circle", 0.3)
    )
    # thin-walled limit m -> 1: 2 (1 + nu) / (4 + 3 nu)
    assert cowper_shear_factor("tube", 0.3, 1.0) == pytest.approx(2.6 / 4.9)


def test_user_shear_factor_overrides_cowper():
    s = section_from_spec({**SQUARE, "shear_factor": 0.5})
    assert s.GA2 == s.GA3 == pytest.approx(0.5 * 1.0e7 / 2.0)
    assert section_from_spec({**SQUARE, "shear_factor": 1}).GA2 == pytest.approx(5.0e6)


# --- errors -----------------------------------------------------------------------------------


def _key(spec) -> str | None:
    with pytest.raises(CaseError) as info:
        section_from_spec(spec)
    return info.value.key


def _without(spec, key):
    return {k: v for k, v in spec.items() if k != key}


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        (_without(SPAGHETTI, "GJ"), "GJ"),
        (_without(SPAGHETTI, "rhoI"), "rhoI"),
        (_without(SPAGHETTI, "type"), "type"),
        ({**SPAGHETTI, "type": "plate"}, "EA"),  # a plate section has no EA
        ({**SPAGHETTI, "EAA": 1.0}, "EAA"),
        ({**SPAGHETTI, "shear_factor": 0.8}, "shear_factor"),
        ({**SPAGHETTI, "material": SQUARE["material"]}, "material"),
        ({**SPAGHETTI, "GA": [1.0]}, "GA"),
        ({**SPAGHETTI, "EI": [1.0, 2.0, 3.0]}, "EI"),
        ({**SPAGHETTI, "rhoI": 5.0}, "rhoI"),
        ({**SPAGHETTI, "EI": "1, 2"}, "EI"),
        ({**SPAGHETTI, "EA": "1.0e4"}, "EA"),  # PyYAML reads 1.0e4 as a string
        ({**SPAGHETTI, "EA": True}, "EA"),
        ({**SPAGHETTI, "GJ": None}, "GJ"),
        ({**SPAGHETTI, "EA": float("nan")}, "EA"),
        ({**SPAGHETTI, "GA": [1.0, float("inf")]}, "GA[1]"),
        ({**SPAGHETTI, "EI": [0.0, 1.0]}, "EI[0]"),
        ({**SPAGHETTI, "rhoA": -1.0}, "rhoA"),
        ({**SPAGHETTI, "rhoI": [1.0, 0.0]}, "rhoI[1]"),
        ({**SPAGHETTI, "rhoJ": 0.0}, "rhoJ"),
        (_without(SQUARE, "shape"), "shape"),
        (_without(SQUARE, "material"), "material"),
        ({**SQUARE, "material": {"E": 1.0, "nu": 0.0}}, "material.rho"),
        ({**SQUARE, "material": {"E": 1.0, "nu": 0.0, "rho": 1.0, "G": 1.0}}, "material.G"),
        ({**SQUARE, "material": [1.0, 0.0, 1.0]}, "material"),
        ({**SQUARE, "material": {"E": 0.0, "nu": 0.0, "rho": 1.0}}, "material.E"),
        ({**SQUARE, "material": {"E": 1.0, "nu": 0.5001, "rho": 1.0}}, "material.nu"),
        ({**SQUARE, "material": {"E": 1.0, "nu": -1.0, "rho": 1.0}}, "material.nu"),
        ({**SQUARE, "material": {"E": 1.0, "nu": False, "rho": 1.0}}, "material.nu"),
        ({**SQUARE, "material": {"E": 1.0, "nu": 0.0, "rho": -2.0}}, "material.rho"),
        ({**SQUARE, "shape": {"square": 1.0}}, "shape.square"),
        ({**SQUARE, "shape": {"rectangle": [1, 1], "circle": 1.0}}, "shape"),
        ({**SQUARE, "shape": {}}, "shape"),
        ({**SQUARE, "shape": "rectangle"}, "shape"),
        ({**SQUARE, "shape": {"rectangle": [1.0]}}, "shape.rectangle"),
        ({**SQUARE, "shape": {"rectangle": [1.0, -1.0]}}, "shape.rectangle[1]"),
        ({**SQUARE, "shape": {"circle": [1.0]}}, "shape.circle"),
        ({**SQUARE, "shape": {"circle": 0.0}}, "shape.circle"),
        ({**SQUARE, "shape": {"tube": [1.0, 1.0]}}, "shape.tube"),
        ({**SQUARE, "shape": {"tube": [1.0, 2.0]}}, "shape.tube"),
        ({**SQUARE, "shape": {"tube": [1.0, -0.1]}}, "shape.tube[1]"),
        ({**SQUARE, "shape": {"tube": [0.0, 0.0]}}, "shape.tube"),
        ({**SQUARE, "shape": {"tube": [1.0, "a"]}}, "shape.tube[1]"),
        ({**SQUARE, "shear_factor": 0.0}, "shear_factor"),
        ({**SQUARE, "shear_factor": 1.2}, "shear_factor"),
        ({**SQUARE, "shear_factor": "0.8"}, "shear_factor"),
        ({**SQUARE, "rhoJ": 1.0}, "material"),
    ],
)
def test_spec_errors_name_the_key(spec, key):
    assert _key(spec) == key


def test_spec_without_either_form_or_not_a_mapping():
    assert _key({"type": "rod"}) == "EA"
    assert _key([1, 2]) is None


def test_rod_section_validates_its_fields():
    good = dict(EA=1.0, GA2=1.0, GA3=1.0, GJ=1.0, EI2=1.0, EI3=1.0, rhoA=1.0, rhoI2=1.0, rhoI3=1.0)
    assert RodSection(**good).rhoJ == 2.0
    for name, bad in [
        ("GA3", 0.0),
        ("rhoI2", -1.0),
        ("EI3", math.inf),
        ("rhoJ", math.nan),
        ("EA", True),
        ("rhoI3", None),
    ]:
        with pytest.raises(ValueError, match=f"^{name}: "):
            RodSection(**{**good, name: bad})


def test_rod_section_is_frozen_and_arrays_are_copies():
    s = section_from_spec(SPAGHETTI)
    with pytest.raises(AttributeError):
        s.EA = 2.0
    s.C1[0] = 0.0
    assert s.C1[0] == 1.0e4
