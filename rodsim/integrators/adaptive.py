"""Adaptive steps of the implicit Cayley VI (docs/implicit_scheme.md, "Adaptive steps").

Each step is predicted, solved, checked, and accepted or taken again smaller:

- predictor: the step velocity xi (a step's mean velocity, at its midpoint) extrapolated
  linearly from the last two steps' midpoints, xi_p = xi_j + (xi_j - xi_j-1) (h_j + h) /
  (h_j-1 + h_j); after a load kink, the last velocity;
- solve: rodsim.integrators.vi_newton (quasi-Newton on a held band LU, line search);
- energy (with conserve_energy): the step's balance delta = (K + U)_k+1 - (K + U)_k - W,
  with W the discrete work of the loads, the damping and the supports, is summed over the
  run; the energy-consistent correction of the step (vi_residual._conserving_forces) is
  aimed at the sum's negative, and the step is solved again (at most REBALANCE times) until
  the sum is within
  energy_tol of the largest K + U so far; a step that cannot get there is taken again at
  half its size;
- local error: err = h sqrt(sum m |dv|^2 + j |dw|^2 / sum m) / (tol L), dv, dw the
  predictor-corrector difference xi - xi_p (Milne's device), m, j the nodal masses and mean
  rotary inertias, L the structure's size: the mass-weighted RMS of the step's displacement
  error over L, rotations counted at the sections' radius of gyration;
- accept when err <= 1: the next step is h min(grow, SAFETY err^{-1/3}), held (not grown)
  when the step needed a new Jacobian or would grow by less than the Jacobian's
  REFRESH_RATIO; a Newton failure cuts the step to CUT h; below dt_min the run stops
  (NumericalError, exit 3).
"""

import math
from dataclasses import dataclass, field

import numpy as np

from rodsim.errors import NumericalError
from rodsim.integrators import ledger_implicit, vi_newton
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.diagnostics import kinetic_energy
from rodsim.integrators.vi_state import body_momenta, momenta_after, rotations
from rodsim.integrators.vi_step import step_data
from rodsim.jit import kernel
from rodsim.model import forces as fterms

SAFETY = 0.9  # of the step the error estimate allows
CUT = 0.25  # the step after a Newton failure, and the most a rejection shrinks it
REBALANCE = 2  # solves of a step again to bring its energy balance within energy_tol


@dataclass(frozen=True)
class Settings:
    """solver.adaptive, resolved: tol (local error), energy_tol (bound of the summed energy
    balance error relative to the largest energy, with conserve_energy), dt_min, dt_max
    (time), grow (the largest growth of a step), t_end (the run's end time)."""

    tol: float
    energy_tol: float
    dt_min: float
    dt_max: float
    grow: float = 2.0
    t_end: float = math.inf  # the run's end (rodsim.integrators.adaptive_batch: a long run?)


@dataclass
class Control:
    """The controller's state (saved with a restart): the next step h, the last two steps'
    sizes and velocities, the summed energy balance error, the largest energy, the step's
    start energy (K, U), and counters."""

    settings: Settings
    h: float
    h_last: float = 0.0
    h_before: float = 0.0
    xi_before: np.ndarray | None = None
    known: int = 0  # accepted steps behind the predictor (0, 1, 2)
    energy_error: float = 0.0
    energy_max: float = 0.0
    kinetic: float = 0.0
    internal: float = 0.0
    accepted: int = 0
    rejected: int = 0
    partial: float = 0.0  # the time past the last frame grid point (a stop between frames)
    linear: vi_newton.Linear | None = field(default=None, repr=False)
    work: vr.Work | None = field(default=None, repr=False)  # float64 scratch
    loads: vr.Work | None = field(default=None, repr=False)  # its f, tau: loads and damping
    scratch: "Scratch | None" = field(default=None, repr=False)
    # whether the steps run in compiled batches: None, a tuple while timing the steps or
    # compiling the batch kernel, then True or False (rodsim.integrators.adaptive_batch._ready)
    batch: object = field(default=None, repr=False)


def start(run, settings: Settings, h0: float) -> Control:
    """A controller for a running implicit.Implicit, its first step h0."""
    m = run.model
    c = Control(settings, float(min(max(h0, settings.dt_min), settings.dt_max)))
    c.xi_before = np.zeros_like(run.xi)
    c.linear = vi_newton.linear(run.solver)
    c.work = vr.make_work(m.terms, m.n_nodes, np.float64)
    c.loads = c.work._replace(f=np.zeros((m.n_nodes, 3)), tau=np.zeros((m.n_nodes, 3)))
    c.scratch = Scratch(run)
    st = run.state
    c.kinetic = kinetic_energy(m.mass, m.inertia, st.rot, st.p, st.pi)
    c.internal = fterms.energies(m.terms, st.x, st.rot, run.time)[0]
    c.energy_max = c.kinetic + c.internal
    return c


@kernel
def outside_work(m, terms, sd, xi, w, loads):
    """The discrete work done on the structure over the step from outside: by the loads and
    the damping at the step's midpoint (forces and moments at g_bar times the increments
    x_k+1 - x_k and the spatial Cayley vectors Lambda_k h xi_rot), and by the supports, whose
    reactions are minus the forces w.f, w.tau on the supported components (w: the residual's
    at the converged xi; the momenta of supported components are zero)."""
    fterms.forces(terms, w.xb, w.rb, w.qb, sd.t, loads.f, loads.tau, fterms.APPLIED)
    vr.step_damping(terms, sd, xi, loads)
    total = 0.0
    for a in range(xi.shape[0]):
        c = vr.spatial_increment(sd, xi, a)
        for k in range(3):
            dx = w.x1[a, k] - sd.x[a, k]
            total += loads.f[a, k] * dx + loads.tau[a, k] * c[k]
            if m.fixed[a, k]:
                total -= w.f[a, k] * dx
            if m.fixed[a, 3 + k]:
                total -= w.tau[a, k] * c[k]
    return total


@kernel
def end_energy(terms, w, t):
    """The elastic energy (elements and springs) at the step's end configuration."""
    return fterms.forces(terms, w.x1, w.r1, w.q1, t, w.f2, w.t2, vr.ELASTIC)[0]


@kernel
def predict(xi_last, xi_before, factor, xi):
    """xi = xi_last + factor (xi_last - xi_before): the linear extrapolation of the step
    velocities to the next step's midpoint (factor 0: the last velocity)."""
    for a in range(xi.shape[0]):
        for k in range(6):
            xi[a, k] = xi_last[a, k] + factor * (xi_last[a, k] - xi_before[a, k])


@kernel
def candidate(m, terms, sd, xi, guess, w, loads, post, x1, q1, rot1, p1, pi1):
    """The state at the end of a converged step into x1, q1, rot1, p1, pi1 and its checks:
    (kinetic energy, elastic energy, work of the loads, the damping and the supports over the
    step, sum m |v|^2 + j |omega|^2 of xi - guess with j the mean of the nodal rotary
    inertia's diagonal)."""
    n = xi.shape[0]
    for a in range(n):
        s = 0.0
        for k in range(4):
            s += w.q1[a, k] * w.q1[a, k]
        s = 1.0 / math.sqrt(s)
        for k in range(4):
            q1[a, k] = w.q1[a, k] * s
        for k in range(3):
            x1[a, k] = w.x1[a, k]
    rotations(q1, rot1)
    momenta_after(sd.rot, xi, post, sd.h, sd.se3, m.fixed, p1, pi1)
    k1 = kinetic_energy(m.mass, m.inertia, rot1, p1, pi1)
    u1 = end_energy(terms, w, sd.t)
    work = outside_work(m, terms, sd, xi, w, loads)
    num = 0.0
    for a in range(n):
        j = (m.inertia[a, 0, 0] + m.inertia[a, 1, 1] + m.inertia[a, 2, 2]) / 3.0
        for k in range(3):
            num += m.mass[a] * (xi[a, k] - guess[a, k]) ** 2
            num += j * (xi[a, 3 + k] - guess[a, 3 + k]) ** 2
    return k1, u1, work, num


class Scratch:
    """Arrays of one run's steps, allocated once: the step's data, the candidate state."""

    def __init__(self, run):
        m = run.model
        n = m.n_nodes
        self.out, self.post, self.mom = np.zeros((n, 6)), np.zeros((n, 6)), np.empty((n, 6))
        self.guess, self.xi = np.empty((n, 6)), np.empty((n, 6))
        self.target_x, self.target_rot = np.empty((n, 3)), np.empty((n, 3))
        self.flags = np.zeros(n, dtype=np.int64)
        self.strains = fterms.make_strains(m.terms)
        self.mass = max(float(np.sum(m.mass)), 1e-300)
        self.x1, self.q1 = np.empty((n, 3)), np.empty((n, 4))
        self.rot1, self.p1, self.pi1 = np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3))
        # rodsim.integrators.adaptive_batch's: the solve's start, the accept hooks' quaternions
        self.start, self.quat = np.empty((n, 6)), np.empty((n, 4))


def _step_data(run, c: Control, t: float, h: float) -> vr.StepData:
    """vi_step.step_data on the controller's scratch; the elastic energy the step starts
    from is offset by the run's summed energy balance error, which the energy-consistent
    correction then takes back (with conserve_energy)."""
    st, s, sc = run.state, run.solver, c.scratch
    body_momenta(st.rot, st.p, st.pi, s.se3, sc.mom)
    scratch = (sc.strains, sc.target_x, sc.target_rot, sc.flags)
    sd = step_data(s, st.x, st.rot, run.quat, sc.mom, h, t + 0.5 * h, t + h, vr.DYNAMIC, scratch)
    return sd._replace(
        conserve=int(run.conserve),
        u0=float(c.internal - c.energy_error),
        free_body=int(run.free_body),
    )


def _next_step(c: Control, t: float, t_stop: float, kinks: np.ndarray):
    """(h, the kink it ends on or None): the controller's step, ending exactly on t_stop (two
    equal steps rather than a sliver) and on the first kink inside it."""
    h = min(c.h, c.settings.dt_max)
    remaining = t_stop - t
    if h >= remaining * (1.0 - 1e-9):
        h = remaining
    elif 2.0 * h > remaining:
        h = 0.5 * remaining
    i = int(np.searchsorted(kinks, t * (1 + 1e-12) + 1e-300, side="right"))
    if i < kinks.shape[0] and kinks[i] < t + h * (1.0 - 1e-9):
        return float(kinks[i] - t), float(kinks[i])
    return h, None


def _attempt(run, c: Control, t: float, h: float):
    """Solve one step of size h from t into the scratch's candidate state: (why it failed or
    None, a new Jacobian was formed, iterations, (kinetic, elastic energy, work), the
    predictor-corrector difference's sum m |dv|^2 + j |dw|^2, the Newton target)."""
    s, m, sc = run.solver, run.model, c.scratch
    sd = _step_data(run, c, t, h)
    target = run.tol * vi_newton.reference(m.nodes, m.terms, sd, c.loads, s.length)
    factor = (c.h_last + h) / (c.h_before + c.h_last) if c.known >= 2 else 0.0
    predict(run.xi, c.xi_before, factor, sc.guess)
    sc.xi[:] = sc.guess
    fresh, its, left = False, 0, 0.0
    for again in range(1 + (REBALANCE if run.conserve else 0)):
        if again:  # the energy balance is off by `left`: aim the correction at it
            sd = sd._replace(u0=sd.u0 - left)
        ok, new, n = vi_newton.solve(
            s, c.linear, sd, sc.xi, c.work, sc.out, sc.post, target, s.floor * h, run.max_iter
        )
        fresh, its = fresh or new, its + n
        if not ok:
            return "Newton did not converge", fresh, its, None, 0.0, target
        k1, u1, work, num = candidate(
            m.nodes, m.terms, sd, sc.xi, sc.guess, c.work, c.loads, sc.post,
            sc.x1, sc.q1, sc.rot1, sc.p1, sc.pi1,
        )  # fmt: skip
        left = c.energy_error + k1 + u1 - c.kinetic - c.internal - work
        if not run.conserve or abs(left) <= c.settings.energy_tol * max(c.energy_max, k1 + u1):
            return None, fresh, its, (k1, u1, work), num, target
    return "energy balance", fresh, its, None, 0.0, target


def advance_to(run, c: Control, t: float, t_stop: float, kinks: np.ndarray, stop=None):
    """Adaptive steps from t to exactly t_stop (a frame), each ending on the kinks of the
    loads' time functions it meets: (the time reached, whether it is t_stop). stop() true
    ends the stepping after the step it is asked in; NumericalError when the step falls
    below dt_min."""
    s, st, cfg, sc = run.solver, run.state, c.settings, c.scratch
    while t_stop - t > 1e-12 * max(abs(t_stop), c.h):
        if stop is not None and stop():
            return t, False
        h, kink = _next_step(c, t, t_stop, kinks)
        why, fresh, its, energies, num, target = _attempt(run, c, t, h)
        if why is not None:
            _reject(c, h, CUT if why.startswith("Newton") else 0.5, t, why)
            continue
        err = h * math.sqrt(num / sc.mass) / (cfg.tol * s.length) if cfg.tol > 0.0 else 0.0
        if c.known < 2:  # no predictor yet: no estimate
            err = 0.0
        if err > 1.0:
            _reject(c, h, max(CUT, SAFETY * err ** (-1.0 / 3.0)), t, "local error")
            continue
        k1, u1, work = energies
        if run.ledger is not None:  # the step's work and dissipation, from its start state
            end = t + h if kink is None else kink
            sd = _step_data(run, c, t, h)
            ledger_implicit.accept(run, sd, sc.xi, c.work.f, c.work.tau, end)
        st.x[:] = sc.x1
        run.quat[:] = sc.q1
        st.rot[:] = sc.rot1
        st.p[:] = sc.p1
        st.pi[:] = sc.pi1
        fterms.accept_step(run.model.terms, st.x, st.rot, t + h if kink is None else kink)
        c.xi_before[:] = run.xi
        run.xi[:] = sc.xi
        c.h_before, c.h_last = c.h_last, h
        c.known = 0 if kink is not None else min(c.known + 1, 2)
        c.energy_error += k1 + u1 - c.kinetic - c.internal - work
        c.kinetic, c.internal = k1, u1
        c.energy_max = max(c.energy_max, k1 + u1)
        c.accepted += 1
        run.max_iterations = max(run.max_iterations, its)
        norm = vi_newton.weighted(sc.out, s.length)
        run.residual = max(run.residual, norm / (target / run.tol))
        t = t + h if kink is None else kink
        grow = min(cfg.grow, SAFETY * err ** (-1.0 / 3.0)) if err > 0.0 else cfg.grow
        if fresh or grow < vi_newton.REFRESH_RATIO:  # hold the Jacobian's step
            grow = min(grow, 1.0)
        # a step shortened to land on a frame or a kink: grow from the controller's step
        c.h = min(max(max(c.h, h) * grow, cfg.dt_min), cfg.dt_max)
    return t_stop, True


def _reject(c: Control, h: float, factor: float, t: float, why: str) -> None:
    c.rejected += 1
    c.h = h * factor
    if c.h < c.settings.dt_min:
        raise too_small(c, t, why)


def too_small(c: Control, t: float, why: str) -> NumericalError:
    """The error of a step below dt_min at t, rejected for `why`."""
    return NumericalError(
        f"the adaptive implicit step fell below solver.adaptive.dt_min = "
        f"{c.settings.dt_min:.3g} at t = {t:.6g} ({why}): lower dt_min, loosen "
        "solver.adaptive.tol or energy_tol, or check the loads (a jump) and the model "
        "(a blow-up)",
        time=t,
    )
