"""Continuum reference for the 45-degree bend: the Simo-Reissner boundary-value problem solved by
shooting, independently of rodsim's finite elements.

With the dead tip force n = (0, 0, P) the stress resultant is n everywhere, and along the arc
length s (root tangent along x, arc turning towards +y or -y):

    x' = Lambda (E1 + C1^-1 Lambda^T n),   Lambda' = Lambda hat(K0 + C2^-1 Lambda^T m),
    m' = -x' x n,   x(0) = 0, Lambda(0) = I, m(L) = 0,

C1 = diag(EA, kGA, kGA), C2 = diag(GJ, EI, EI), K0 = (0, 0, +-1/R). scipy's solve_ivp (rtol
1e-11) integrates it; fsolve finds the root moment m(0), continuing in P. Run

    python validation/bend45/shooting.py

to print the tip displacements stored in reference.json (centre side +y, the case's axes).
tests/test_equilibrium.py uses the same function for rodsim's own convergence test.
"""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

RADIUS = 100.0
C1 = np.array([1e7, 4.16667e6, 4.16667e6])  # EA, kGA, kGA
C2 = np.array([8.333e5, 8.333e5, 8.333e5])  # GJ, EI, EI


def _hat(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def tip_displacements(loads, centre_side: float = 1.0) -> np.ndarray:
    """Tip displacements (len(loads), 3) for tip forces P along z; centre_side +1 puts the
    centre of the arc at (0, +R, 0), -1 at (0, -R, 0)."""
    length = RADIUS * np.pi / 4
    k0 = np.array([0.0, 0.0, centre_side / RADIUS])

    def rhs(_, y, n):
        lam = y[3:12].reshape(3, 3)
        xp = lam @ (np.array([1.0, 0, 0]) + lam.T @ n / C1)
        lp = lam @ _hat(k0 + lam.T @ y[12:15] / C2)
        return np.concatenate([xp, lp.ravel(), -np.cross(xp, n)])

    def shoot(m0, n):
        y0 = np.concatenate([np.zeros(3), np.eye(3).ravel(), m0])
        return solve_ivp(rhs, [0, length], y0, args=(n,), rtol=1e-11, atol=1e-11).y[:, -1]

    tip0 = RADIUS * np.array([np.sin(np.pi / 4), centre_side * (1 - np.cos(np.pi / 4)), 0.0])
    # continuation in P: levels every 50 plus the requested ones, each from the last root
    levels = np.union1d(np.arange(50.0, max(loads), 50.0), loads)
    m0, tips = np.zeros(3), {}
    for p in levels:
        n = np.array([0.0, 0.0, p])
        m0 = fsolve(lambda m, n=n: shoot(m, n)[12:15], m0, xtol=1e-12)
        tips[p] = shoot(m0, n)[:3] - tip0
    return np.array([tips[p] for p in loads])


if __name__ == "__main__":
    for p, u in zip((300.0, 450.0, 600.0), tip_displacements([300.0, 450.0, 600.0]), strict=True):
        print(
            f"P = {p:5.0f}: u = ({u[0]:.6f}, {u[1]:.6f}, {u[2]:.6f}), |u| = {np.linalg.norm(u):.6f}"
        )
