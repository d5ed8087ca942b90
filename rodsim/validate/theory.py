"""Closed-form and semi-analytic references the benchmarks compare against.

``timoshenko_cantilever`` solves Timoshenko's beam equations (Timoshenko 1921; the frequency
equation of the clamped-free beam as in Han, Benaroya & Wei 1999, J. Sound Vib. 225(5),
935-988) for the natural angular frequencies: with the deflection w and section rotation psi,

    kGA (w'' - psi') + rhoA w2 w = 0,    EI psi'' + kGA (w' - psi) + rhoI w2 psi = 0,

w = psi = 0 at the clamp, bending moment EI psi' = 0 and shear force kGA (w' - psi) = 0 at the
free end. The boundary-value problem is integrated as a first-order system with the matrix
exponential, and w is a root of the 2x2 determinant of the free-end conditions.

Run ``python -m rodsim.validate.theory`` to print the values stored in validation/timoshenko.
"""

import math

import numpy as np
from scipy.linalg import expm
from scipy.optimize import brentq

EULER_BERNOULLI_ROOTS = (1.8751040687119611, 4.694091132974175, 7.854757438237613)


def _free_end_determinant(
    w: float, L: float, EI: float, kGA: float, rhoA: float, rhoI: float
) -> float:
    # state y = (w, psi, w', psi'); y' = A y
    a = np.zeros((4, 4))
    a[0, 2] = a[1, 3] = 1.0
    a[2, 0] = -rhoA * w * w / kGA  # w'' = psi' - rhoA w^2 w / kGA
    a[2, 3] = 1.0
    a[3, 1] = kGA / EI - rhoI * w * w / EI  # psi'' = -(kGA/EI)(w' - psi) - rhoI w^2 psi / EI
    a[3, 2] = -kGA / EI
    m = expm(a * L)
    # clamp: w = psi = 0, so y(L) = m[:, 2:] @ (w'(0), psi'(0)); free end: psi' = 0, w' - psi = 0
    rows = np.array([m[3, 2:], m[2, 2:] - m[1, 2:]])
    scale = np.linalg.norm(rows[0]) * np.linalg.norm(rows[1])
    return float(np.linalg.det(rows) / scale)


def euler_bernoulli_cantilever(L: float, EI: float, rhoA: float, mode: int = 1) -> float:
    """Angular frequency of bending mode 1..3 of a clamped-free Euler-Bernoulli beam."""
    beta = EULER_BERNOULLI_ROOTS[mode - 1] / L
    return beta * beta * math.sqrt(EI / rhoA)


def timoshenko_cantilever(
    L: float, EI: float, kGA: float, rhoA: float, rhoI: float, mode: int = 1
) -> float:
    """Angular frequency of bending mode 1..3 of a clamped-free Timoshenko beam.

    Timoshenko's frequencies lie below the Euler-Bernoulli ones (shear and rotary inertia
    soften the beam), so the first `mode` roots of the frequency equation lie below the
    Euler-Bernoulli frequency of that mode: scanned up from near zero, the mode-th root is
    the one (in a stocky beam the next mode may also lie below it).
    """
    w_eb = euler_bernoulli_cantilever(L, EI, rhoA, mode)
    grid = np.linspace(1e-3 * w_eb, 1.0001 * w_eb, 400 * mode)
    vals = [_free_end_determinant(w, L, EI, kGA, rhoA, rhoI) for w in grid]
    roots = [
        (grid[i], grid[i + 1])
        for i in range(len(grid) - 1)
        if np.sign(vals[i]) != np.sign(vals[i + 1])
    ]
    if len(roots) < mode:
        raise ValueError(f"fewer than {mode} Timoshenko roots below the Euler-Bernoulli frequency")
    lo, hi = roots[mode - 1]
    return brentq(
        _free_end_determinant, lo, hi, args=(L, EI, kGA, rhoA, rhoI), xtol=1e-14, rtol=1e-15
    )


if __name__ == "__main__":  # the numbers stored in validation/timoshenko/reference.json
    args = dict(L=1.0, EI=1.0, kGA=1.0e3, rhoA=1.0, rhoI=1.0e-3)
    print(f"Timoshenko w1 = {timoshenko_cantilever(**args):.12g}")
    print(f"Euler-Bernoulli w1 = {euler_bernoulli_cantilever(1.0, 1.0, 1.0):.12g}")
