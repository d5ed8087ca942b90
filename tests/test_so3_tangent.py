"""Derivatives of the SO(3) Jacobians applied to a vector (rodsim.lie.so3_tangent), against a
complex step and central differences of an independent oracle, at angles from 0 to near pi,
on both sides of every series switch (rod.py's _SMALL = 1e-3 on the half angle, the 0.5
suggested in notes36.md §3, and so3_tangent.SERIES_T).

The oracle is the power series jl(v) = sum_k hat(v)^k/(k+1)! (entire, complex-analytic, no
branch) and jl^{-1} by a linear solve: so its complex step is exact to round-off at every angle,
0 included. Tolerances:
- complex step (h = 1e-30): both sides exact to round-off; the oracle sums ~40 terms of size
  <= e^t and the kernels ~50 flops, so CS_TOL = 1e-13 relative to the largest entry;
- central differences, step DX = 1e-6 on O(1) data: truncation DX^2 |f'''|/6 ~ 1e-12 and
  round-off eps |f| / DX ~ 2e-10, so FD_TOL = 1e-8;
- continuity across a switch: the two branches at the same angle (two adjacent floats) agree
  to SWITCH_TOL = 1e-14 relative (a few ulp of the largest entry).
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from rodsim.lie import so3_tangent as st

pytestmark = pytest.mark.fast

CS_H = 1e-30
CS_TOL = 1e-13
DX = 1e-6
FD_TOL = 1e-8
SWITCH_TOL = 1e-14
ANGLES = [0.0, 1e-9, 1e-4, 1e-3 - 1e-9, 1e-3 + 1e-9, 2e-3, 0.1, 0.5 - 1e-9, 0.5 + 1e-9, 1.0]
ANGLES += [st.SERIES_T - 1e-9, st.SERIES_T + 1e-9, 2.0, 3.1]
RNG = np.random.default_rng(36)
AXIS = RNG.normal(size=3)
AXIS /= np.linalg.norm(AXIS)
VEC = RNG.normal(size=3)


def _hat(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _jl(v):
    """jl(v) by its power series (works for complex v)."""
    x = _hat(v)
    out = np.zeros((3, 3), dtype=x.dtype)
    term = np.eye(3, dtype=x.dtype)
    for k in range(60):
        out = out + term / math.factorial(k + 1)
        term = term @ x
    return out


ORACLES = {
    "jl": lambda v, a: _jl(v) @ a,
    "jlT": lambda v, a: _jl(v).T @ a,
    "jl_invT": lambda v, a: np.linalg.solve(_jl(v).T, a.astype(v.dtype)),
    "jl_inv": lambda v, a: np.linalg.solve(_jl(v), a.astype(v.dtype)),
}
KERNELS = {
    "jl": lambda v, a: st.d_jl_apply(v, a),
    "jlT": lambda v, a: st.d_jlT_apply(v, a),
    "jl_invT": lambda v, a: st.d_jl_inv_apply(v, a, 1.0),
    "jl_inv": lambda v, a: st.d_jl_inv_apply(v, a, -1.0),
}


def _analytic(name, v, a):
    return np.array(KERNELS[name](tuple(map(float, v)), tuple(map(float, a)))).reshape(3, 3)


def _complex_step(name, v, a):
    out = np.empty((3, 3))
    for j in range(3):
        vc = v.astype(np.complex128)
        vc[j] += 1j * CS_H
        out[:, j] = ORACLES[name](vc, a).imag / CS_H
    return out


def _central(name, v, a):
    out = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = DX
        out[:, j] = (ORACLES[name](v + e, a) - ORACLES[name](v - e, a)) / (2 * DX)
    return out


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("t", ANGLES)
def test_derivative_matches_complex_step_and_differences(name, t):
    v = t * AXIS
    got = _analytic(name, v, VEC)
    scale = np.abs(got).max()
    assert np.abs(got - _complex_step(name, v, VEC)).max() <= CS_TOL * scale
    assert np.abs(got - _central(name, v, VEC)).max() <= FD_TOL * scale


@pytest.mark.parametrize("t", ANGLES)
def test_matrices_match_the_series(t):
    v = t * AXIS
    jl = _jl(v)
    assert np.allclose(np.array(st.jl_matrix(tuple(v))).reshape(3, 3), jl, rtol=0, atol=1e-15)
    inv = np.array(st.jl_inv_matrix(tuple(v))).reshape(3, 3)
    assert np.abs(inv - np.linalg.inv(jl)).max() <= 1e-14


@pytest.mark.parametrize("switch", [st.SERIES_T])
@pytest.mark.parametrize("name", list(KERNELS))
def test_continuous_across_the_series_switch(name, switch):
    """The series (below) and the closed form (at) the switch agree to a few ulp."""
    below = np.nextafter(switch, 0.0)
    lo = _analytic(name, below * AXIS, VEC)
    hi = _analytic(name, switch * AXIS, VEC)
    assert np.abs(lo - hi).max() <= SWITCH_TOL * np.abs(hi).max()
    c_lo = np.array(st.jl_coefficients(below) + st.jl_inv_coefficients(below))
    c_hi = np.array(st.jl_coefficients(switch) + st.jl_inv_coefficients(switch))
    assert np.all(np.abs(c_lo - c_hi) <= SWITCH_TOL * np.abs(c_hi))


def test_series_are_truncated_below_round_off():
    """The last series term kept is below 1e-17 of the sum at the switch (so truncation is
    invisible next to round-off), and the sums equal the exact rational series there."""
    t2 = Fraction(st.SERIES_T) ** 2
    for table in (st._B, st._C, st._DB, st._DC, st._E, st._DE):
        n = len(table) - 1
        total = sum(Fraction(c) * t2 ** (n - i) for i, c in enumerate(table))
        assert abs(Fraction(table[0]) * t2**n) <= 1e-17 * abs(total)
