"""Stable time step of the explicit scheme from element eigenvalues.

Störmer–Verlet is stable for h omega_max <= 2. With lumped (diagonal) mass, the largest
eigenvalue of the assembled system is bounded by the largest element eigenvalue (Irons'
element eigenvalue bound), so dt_crit = 2 / max_e omega_max,e. Each element's omega_max comes
from its 12x12 tangent stiffness at the reference state (central differences of the exact
internal-force kernel) against its own share of the lumped mass and rotary inertia. This
captures the axial and shear wave limits h/c, the shear–rotation cut-off sqrt(GA/rhoI) and
bending/torsion, whichever governs (docs/theory.md, "Stable step"). Point masses only
lower the frequencies, so the estimate stays on the safe side. Elastic supports and dashpots
(rodsim.model.supports) raise the bound as stable_step explains.
"""

import functools
from typing import NamedTuple

import numpy as np

from rodsim.integrators.explicit import COEFFICIENTS
from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.plate import plate_max_frequencies
from rodsim.model.rod import element_response, end_frames_of
from rodsim.model.supports import support_frequencies


@kernel
def _element_gradient(x1, x2, r1, r2, h, c1, c2, g0, w0, out):
    n, t1, t2 = element_response(x1, x2, r1, r2, h, c1, c2, g0, w0)[:3]
    for k in range(3):
        out[k] = -n[k]
        out[3 + k] = -t1[k]
        out[6 + k] = n[k]
        out[9 + k] = -t2[k]


@kernel
def element_stiffness(conn, length, c1, c2, gamma0, omega0, x, rot, eps_rel, out):
    """Tangent stiffness (E,12,12) by central differences of the exact gradient.

    DOF order per element: u1, theta1, u2, theta2 (spatial rotation variations). Column j is
    (g(q + e_j eps) - g(q - e_j eps)) / (2 eps) with eps = eps_rel * h (translations) or
    eps_rel (rotations)."""
    gp = np.zeros(12)
    gm = np.zeros(12)
    for e in range(conn.shape[0]):
        i = conn[e, 0]
        j = conn[e, 1]
        h = length[e]
        base_x = ((x[i, 0], x[i, 1], x[i, 2]), (x[j, 0], x[j, 1], x[j, 2]))
        base_r = (
            (
                rot[i, 0, 0],
                rot[i, 0, 1],
                rot[i, 0, 2],
                rot[i, 1, 0],
                rot[i, 1, 1],
                rot[i, 1, 2],
                rot[i, 2, 0],
                rot[i, 2, 1],
                rot[i, 2, 2],
            ),
            (
                rot[j, 0, 0],
                rot[j, 0, 1],
                rot[j, 0, 2],
                rot[j, 1, 0],
                rot[j, 1, 1],
                rot[j, 1, 2],
                rot[j, 2, 0],
                rot[j, 2, 1],
                rot[j, 2, 2],
            ),
        )
        c1e = (c1[e, 0], c1[e, 1], c1[e, 2])
        c2e = (c2[e, 0], c2[e, 1], c2[e, 2])
        g0e = (gamma0[e, 0], gamma0[e, 1], gamma0[e, 2])
        w0e = (omega0[e, 0], omega0[e, 1], omega0[e, 2])
        for col in range(12):
            node = col // 6
            kind = (col // 3) % 2
            comp = col % 3
            eps = eps_rel * h if kind == 0 else eps_rel
            for sign in (1.0, -1.0):
                d = (
                    sign * eps if comp == 0 else 0.0,
                    sign * eps if comp == 1 else 0.0,
                    sign * eps if comp == 2 else 0.0,
                )
                x1, x2 = base_x
                r1, r2 = base_r
                if kind == 0:
                    if node == 0:
                        x1 = so3.add(x1, d)
                    else:
                        x2 = so3.add(x2, d)
                else:
                    if node == 0:
                        r1 = so3.matmul(so3.exp(d), r1)
                    else:
                        r2 = so3.matmul(so3.exp(d), r2)
                _element_gradient(x1, x2, r1, r2, h, c1e, c2e, g0e, w0e, gp if sign > 0.0 else gm)
            for r in range(12):
                out[e, r, col] = (gp[r] - gm[r]) / (2.0 * eps)


# Elements (plates) per pass of the frequency computations: each element's 12x12 matrices and
# their temporaries take ~6 KB (a plate's 24x24 ones ~30 KB), which for a whole 1e6-element rod
# peaked at 5.8 GB, four times the model itself; in chunks the temporaries stay near 50 MB
# (rodsim.resources counts them in its baseline). Elements are independent: the result does
# not depend on the chunk size.
CHUNK = 8192
PLATE_CHUNK = 2048


def element_max_frequencies(model) -> np.ndarray:
    """omega_max (E,) of every element against its own lumped share of mass and inertia."""
    ne = model.rods.conn.shape[0]
    out = np.empty(ne)
    for lo in range(0, ne, CHUNK):
        out[lo : lo + CHUNK] = _element_max_frequencies(model, slice(lo, lo + CHUNK))
    return out


def _element_max_frequencies(model, part: slice) -> np.ndarray:
    """element_max_frequencies of the elements in `part`."""
    el = model.rods
    conn, length = el.conn[part], el.length[part]
    ne = conn.shape[0]
    k = np.zeros((ne, 12, 12))
    # each element on its own end frames (Lambda_a Q_ea: see RodElements.offset)
    ends = end_frames_of(conn, model.rot0, el.offset[part])
    own = np.arange(2 * ne, dtype=np.int64).reshape(ne, 2)
    element_stiffness(
        own,
        length,
        el.c1[part],
        el.c2[part],
        el.gamma0[part],
        el.omega0[part],
        np.ascontiguousarray(model.x0[conn].reshape(-1, 3)),
        np.ascontiguousarray(ends.reshape(-1, 3, 3)),
        1.0e-6,
        k,
    )
    k = 0.5 * (k + k.transpose(0, 2, 1))
    # to material rotation axes, where the element's inertia share is diagonal
    t = np.zeros((ne, 12, 12))
    eye = np.eye(3)
    for node in (0, 1):
        r = ends[:, node]
        t[:, 6 * node : 6 * node + 3, 6 * node : 6 * node + 3] = eye
        t[:, 6 * node + 3 : 6 * node + 6, 6 * node + 3 : 6 * node + 6] = r
    k = np.einsum("eji,ejk,ekl->eil", t, k, t)
    half = 0.5 * length
    diag = np.concatenate(
        [
            np.repeat((half * model.rho_a[part])[:, None], 3, axis=1),
            half[:, None] * model.rho_i[part],
        ],
        axis=1,
    )
    diag = np.concatenate([diag, diag], axis=1)
    s = 1.0 / np.sqrt(diag)
    a = s[:, :, None] * k * s[:, None, :]
    lam = np.linalg.eigvalsh(a)[:, -1]
    return np.sqrt(np.maximum(lam, 0.0))


def plate_frequencies(plates, x0, rot0) -> np.ndarray:
    """plate_max_frequencies (P,) of every plate against its own mass share, PLATE_CHUNK plates
    at a time (every PlateElements field is per plate)."""
    n = plates.conn.shape[0]
    out = np.empty(n)
    for lo in range(0, n, PLATE_CHUNK):
        part = plates._replace(**{f: v[lo : lo + PLATE_CHUNK] for f, v in plates._asdict().items()})
        out[lo : lo + PLATE_CHUNK] = plate_max_frequencies(part, x0, rot0)
    return out


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
    composition factor of the order: dt, the stable step (damping and supports included);
    undamped, the same without damping (strain rate, mass, dashpots); elastic, the rod and
    plate elements alone; typical, the median element's own step; strain_rate and mass, dt
    with only the strain-rate damping, only the mass damping and dashpots. omega: the top
    frequency of the elements (rad per time unit); spring_omega: the stiffest elastic
    support's sqrt(k/m) (0: none); element: the element whose step is elastic (rod elements
    first, then plates; -1: none), of n_rods rod elements."""

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

    def collapse(self) -> str:
        """What makes the step collapse (fall below COLLAPSE times the step without it):
        'damping', 'supports' or 'element' (one element far stiffer or shorter than the
        median), checked in that order; '' if nothing does."""
        if self.dt < COLLAPSE * self.undamped:
            return "damping"
        if self.undamped < COLLAPSE * self.elastic:
            return "supports"
        if self.elastic < COLLAPSE * self.typical:
            return "element"
        return ""


def _damped(omega, spring2, rate, alpha: float, beta: float) -> np.ndarray:
    """Stable steps (without the composition factor) of the element modes omega (E,) and the
    spring modes spring2 (S,) with their dashpot decay rates rate (S,), for mass damping alpha
    and strain-rate damping beta."""
    if spring2.size:
        # elastic supports add a stiffness K_s: lambda_max(M^-1 (K_e + K_s)) <= the elements'
        # bound + the supports' largest k/m, so each element's top frequency is raised by the
        # stiffest spring and each spring's by the elements' top frequency
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


def step_limit(model, order: int = 2) -> StepLimit:
    """The stable step of the explicit scheme for the model's reference state and what sets it
    (StepLimit). Per element, the top frequency omega and its damping ratio xi = beta omega /
    2 + alpha / (2 omega) give the central-difference limit 2/omega (sqrt(1 + xi^2) - xi); the
    smallest, times the composition factor of the order. Measured blow-up: 1.01-1.02x this
    estimate for the spaghetti rod with beta = 0, 1e-3, 1e-2 (tests/test_damping.py)."""
    omega = element_max_frequencies(model) if model.n_elements else np.zeros(0)
    if model.n_plates:
        # each element against its own mass share (the bound omega_max <= max_e omega_e): the
        # assembled nodal masses gave an estimate 30% above the measured blow-up of a free
        # plate strip, the element shares 3% (tests/test_plate_dynamics.py)
        omega = np.concatenate([omega, plate_frequencies(model.plates, model.x0, model.rot0)])
    index = np.flatnonzero(omega > 0.0)
    omega = omega[index]
    sp = model.supports
    if sp.node.shape[0]:
        spring2, rate = support_frequencies(sp, model.mass, model.inertia)
    else:
        spring2 = rate = np.zeros(0)
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
    return StepLimit(
        dt,
        undamped,
        float(own.min()) if own.size else np.inf,
        float(np.median(own)) if own.size else np.inf,
        strain_rate,
        mass,
        float(omega.max()) if omega.size else 0.0,
        float(np.sqrt(spring2.max())) if spring2.size else 0.0,
        int(index[np.argmax(omega)]) if omega.size else -1,
        int(model.n_elements),
    )


def stable_step(model, order: int = 2) -> float:
    """Critical step of the explicit scheme for the model's reference state (step_limit)."""
    return step_limit(model, order).dt
