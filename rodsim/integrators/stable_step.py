"""Stable time step of the explicit scheme from element eigenvalues and nodal springs.

Störmer–Verlet is stable for h omega_max <= 2. With lumped (diagonal) mass, the largest
eigenvalue of the assembled system is bounded by the largest element eigenvalue (Irons'
element eigenvalue bound), so dt_crit = 2 / max_e omega_max,e. Each term gives its share
(Term.stable_step, a rodsim.terms.contract.StepShare): the top frequency of each of its
elements against the element's own share of the lumped mass and rotary inertia (rods:
rodsim.model.rod_frequencies; plates: rodsim.model.plate), and the squared frequencies and
decay rates of its springs and dashpots at nodes (supports, connectors), which raise the bound
as step_limit explains (docs/theory.md, "Stable step"). Point masses only lower the
frequencies, so the estimate stays on the safe side. This module reads no term's arrays.
"""

import functools
from typing import NamedTuple

import numpy as np

from rodsim.integrators.explicit import COEFFICIENTS
from rodsim.terms import TERMS
from rodsim.terms.contract import StepShare


# a pure function of the order that takes ~0.1 s (4001 matrix products): once per order, not
# once per analysis step (10,000 steps checked in seconds, benchmarks/steps_check_scale.py)
@functools.cache
def composition_stability_factor(order: int) -> float:
    """Largest h omega (per full step) for which the composed Störmer–Verlet map of the
    harmonic oscillator stays stable, divided by 2 (1 for order 2, about 0.787 for order 4)."""
    coeffs = COEFFICIENTS[order]

    def stable(z: float) -> bool:
        m = np.eye(2)
        for c in coeffs:
            y = c * z
            m = np.array([[1 - y * y / 2, y], [-y * (1 - y * y / 4), 1 - y * y / 2]]) @ m
        return abs(np.trace(m)) <= 2.0

    zs = np.linspace(1e-6, 2.0, 4001)
    ok = np.array([stable(z) for z in zs])
    if ok.all():
        return 1.0
    lo, hi = zs[np.argmin(ok) - 1], zs[np.argmin(ok)]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if stable(mid) else (lo, mid)
    return lo / 2.0


# The explicit step has collapsed when something makes it this much smaller than the model
# would take without it (rodsim.integrators.planning warns, naming the cause and the fix): a
# tenth is well outside what mesh grading or a moderate damping ratio do (a 2% ratio at the
# top target frequency of a typical fit costs a few percent), and far inside the hundredfold
# falls that strain-rate damping fitted to high targets gives (docs/explicit_scheme.md).
COLLAPSE = 0.1


class StepLimit(NamedTuple):
    """The explicit scheme's stable step and what sets it. Steps are in time units, times the
    composition factor of the order: dt, the stable step (damping and springs at nodes
    included); undamped, the same without damping (strain rate, mass, dashpots); elastic, the
    elements alone (rods, plates: no springs at nodes); typical, the median element's own
    step; strain_rate and mass, dt with only the strain-rate damping, only the mass damping and
    dashpots. omega: the top frequency of the elements (rad per time unit); spring_omega: the
    stiffest node's springs' sqrt(k/m) (supports, connectors; 0: none); element: the element
    whose step is elastic, counted over the terms' elements in the order of TERMS (rod
    elements first, then plates; -1: none), of n_rods elements of the first term (the rods);
    what: that element by name ("rod element 3", "plate element 0"; "" none)."""

    dt: float
    undamped: float
    elastic: float
    typical: float
    strain_rate: float
    mass: float
    omega: float
    spring_omega: float
    element: int
    n_rods: int
    what: str = ""

    def collapse(self) -> str:
        """What makes the step collapse (fall below COLLAPSE times the step without it):
        'damping', 'supports' or 'element' (one element far stiffer or shorter than the
        median), checked in that order; '' if nothing does."""
        if self.dt < COLLAPSE * self.undamped:
            return "damping"
        # without elements (masses on springs alone) the springs are all there is to collapse
        if self.undamped < COLLAPSE * self.elastic < np.inf:
            return "supports"
        if self.elastic < COLLAPSE * self.typical:
            return "element"
        return ""


def _damped(omega, spring2, rate, alpha: float, beta: float) -> np.ndarray:
    """Stable steps (without the composition factor) of the element modes omega (E,) and the
    spring modes spring2 (S,) with their dashpot decay rates rate (S,), for mass damping alpha
    and strain-rate damping beta."""
    if spring2.size:
        # springs at nodes (supports, connectors) add a stiffness K_s: lambda_max(M^-1 (K_e +
        # K_s)) <= the elements' bound + the springs' largest k/m, so each element's top
        # frequency is raised by the stiffest spring and each spring's by the elements' top
        top2 = float(omega.max()) ** 2 if omega.size else 0.0
        omega = np.sqrt(omega**2 + spring2.max())
        # a spring mode decays at rate r = c/(2m) + alpha/2: the damped central-difference
        # limit 2/omega (sqrt(1 + xi^2) - xi) with xi = r/omega, written to hold at omega = 0
        r = rate + 0.5 * alpha
        spring_dt = 2.0 / (np.sqrt(spring2 + top2 + r * r) + r)
        spring_dt = spring_dt[np.isfinite(spring_dt)]
    else:
        spring_dt = np.zeros(0)
    # damping ratio of each element's top mode: beta omega / 2 (strain rate) + alpha/(2 omega)
    xi = 0.5 * beta * omega + 0.5 * alpha / omega
    dt = 2.0 / omega * (np.sqrt(1.0 + xi * xi) - xi)  # central difference with damping
    both = np.concatenate([dt, spring_dt])
    return both if both.size else np.array([np.inf])


def shares(model) -> list[tuple[str, StepShare]]:
    """(term name, StepShare) of every term of TERMS with a stable_step hook, in TERMS order."""
    return [(t.name, t.stable_step(t.arrays(model), model)) for t in TERMS if t.stable_step]


def _springs(parts: list[StepShare]):
    """(omega2, rate) (S,) per node of the terms' springs, each node's entries added term after
    term (the bound of a sum of stiffnesses: lambda_max(A + B) <= lambda_max(A) +
    lambda_max(B) in the mass metric; dashpots likewise), nodes ascending."""
    node = np.concatenate([np.zeros(0, dtype=np.int64), *(s.node for s in parts)])
    if not node.size:
        return np.zeros(0), np.zeros(0)
    nodes, slot = np.unique(node, return_inverse=True)
    omega2, rate = np.zeros(len(nodes)), np.zeros(len(nodes))
    np.add.at(omega2, slot, np.concatenate([s.omega2 for s in parts]))
    np.add.at(rate, slot, np.concatenate([s.rate for s in parts]))
    return omega2, rate


def step_limit(model, order: int = 2) -> StepLimit:
    """The stable step of the explicit scheme for the model's reference state and what sets it
    (StepLimit), from every term's share (Term.stable_step). Per element, the top frequency
    omega and its damping ratio xi = beta omega / 2 + alpha / (2 omega) give the
    central-difference limit 2/omega (sqrt(1 + xi^2) - xi); the smallest, times the
    composition factor of the order. Measured blow-up: 1.01-1.02x this estimate for the
    spaghetti rod with beta = 0, 1e-3, 1e-2 (tests/test_damping.py); for plates each element
    against its own mass share (the bound omega_max <= max_e omega_e): the assembled nodal
    masses gave an estimate 30% above the measured blow-up of a free plate strip, the element
    shares 3% (tests/test_plate_dynamics.py)."""
    parts = [s for _, s in shares(model)]
    omega = np.concatenate([np.zeros(0), *(s.omega for s in parts)])
    index = np.flatnonzero(omega > 0.0)
    omega = omega[index]
    spring2, rate = _springs(parts)
    alpha, beta = float(model.alpha), float(model.beta)
    factor = composition_stability_factor(order)
    steps = (
        _damped(omega, spring2, rate, alpha, beta),
        _damped(omega, spring2, 0.0 * rate, 0.0, 0.0),
        _damped(omega, spring2, 0.0 * rate, 0.0, beta),
        _damped(omega, spring2, rate, alpha, 0.0),
    )
    dt, undamped, strain_rate, mass = (float(s.min()) * factor for s in steps)
    own = 2.0 / omega * factor  # each element's undamped step
    element = int(index[np.argmax(omega)]) if omega.size else -1
    return StepLimit(
        dt,
        undamped,
        float(own.min()) if own.size else np.inf,
        float(np.median(own)) if own.size else np.inf,
        strain_rate,
        mass,
        float(omega.max()) if omega.size else 0.0,
        float(np.sqrt(spring2.max())) if spring2.size else 0.0,
        element,
        len(parts[0].omega) if parts else 0,
        _name(parts, element),
    )


def _name(parts: list[StepShare], element: int) -> str:
    """The element `element` of the terms' elements counted in order, by its term's label."""
    for s in parts:
        if 0 <= element < len(s.omega):
            return f"{s.label} {element}"
        element -= len(s.omega)
    return ""


def stable_step(model, order: int = 2) -> float:
    """Critical step of the explicit scheme for the model's reference state (step_limit)."""
    return step_limit(model, order).dt
