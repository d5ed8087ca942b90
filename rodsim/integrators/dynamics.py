"""Driving the explicit integrator: initial state, stepping in chunks, status and diagnostics.

The kernels in rodsim.integrators.explicit do the work; this module owns the Python-side
bookkeeping so that run.py (and tests) can step a model frame by frame.
"""

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rodsim import kernel_cache
from rodsim.errors import NumericalError
from rodsim.integrators import explicit, ledger
from rodsim.integrators.diagnostics import Diagnostics, diagnostics
from rodsim.integrators.explicit import (
    COEFFICIENTS,
    GROUPS,
    Settings,
    StateArrays,
    make_workspace,
)
from rodsim.integrators.planning import next_split
from rodsim.integrators.stable_step import stable_step
from rodsim.jit import switch
from rodsim.model import forces
from rodsim.model.assembly import Model
from rodsim.model.prescribed import impose

log = logging.getLogger(__name__)


def initial_state(
    model: Model,
    velocity=(0, 0, 0),
    angular_velocity=(0, 0, 0),
    center=(0, 0, 0),
    configuration=None,
    rigid: bool = True,
):
    """The configuration (x (N,3), rot (N,3,3); default the reference) moving rigidly:
    v_a = v + omega x (x_a - c), spin omega; with rigid=False, velocity and angular_velocity
    are the nodes' own ((3,) or (N,3) each, no omega x (x_a - c) term).

    Momenta by the Legendre transform p = m v, pi = Lambda I Lambda^T omega (spatial); fixed
    components are zeroed (the supports hold them).
    """
    x, rot = (model.x0, model.rot0) if configuration is None else configuration
    x, rot = np.array(x, dtype=float), np.array(rot, dtype=float)
    v0 = np.asarray(velocity, dtype=float)
    w0 = np.broadcast_to(np.asarray(angular_velocity, dtype=float), x.shape)
    vel = v0 + np.cross(w0, x - np.asarray(center, dtype=float)) if rigid else v0
    p = model.mass[:, None] * np.broadcast_to(vel, x.shape)
    spatial_inertia = np.einsum("nij,njk,nlk->nil", rot, model.inertia, rot)
    pi = np.einsum("nij,nj->ni", spatial_inertia, w0)
    p[model.fixed[:, :3]] = 0.0
    pi[model.fixed[:, 3:]] = 0.0
    zeros = np.zeros_like(x)
    return StateArrays(x, rot, p, pi, zeros.copy(), zeros.copy())


@dataclass
class Explicit:
    """A running explicit integration: model, settings, state, time and counters."""

    model: Model
    settings: Settings
    state: StateArrays
    work: explicit.Workspace
    t0: float
    step: int = 0
    internal: float = 0.0
    external: float = 0.0
    max_iterations: int = 0
    mean_iterations: float = 0.0
    kernels: dict = field(default_factory=dict, repr=False)  # see _kernel
    # times where a load or prescribed motion is not smooth (Model.kinks): a step across one
    # is taken as sub-steps that end on it (planning.next_split)
    kinks: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    # the energy ledger (rodsim.integrators.ledger; None: nothing can do work, compiled out)
    ledger: "ledger.Ledger | None" = field(default=None, repr=False)
    # the step kernel compiling in a second process (kernel_cache.compile_ahead)
    ahead: "kernel_cache.Ahead | None" = field(default=None, repr=False)

    @property
    def time(self) -> float:
        return self.t0 + self.step * self.settings.dt

    def diagnostics(self) -> Diagnostics:
        return diagnostics(self.model, self.state, self.internal, self.external)


def start(
    model: Model,
    dt: float,
    *,
    order: int = 2,
    group: str = "SO3xR3",
    parallel: bool = False,
    state: StateArrays | None = None,
    t0: float = 0.0,
    tol: float = 1.0e-13,
    max_iter: int = 25,
    step: int = 0,
) -> Explicit:
    """Set up an explicit integration with forces evaluated at the initial state; step: the
    steps already taken from t0 (a restart: time t0 + step dt)."""
    if order not in COEFFICIENTS:
        raise ValueError(f"order must be one of {sorted(COEFFICIENTS)}, got {order}")
    if group not in GROUPS:
        raise ValueError(f"group must be one of {sorted(GROUPS)}, got {group!r}")
    spin = model.fixed[:, 3:].sum(axis=1)
    settings = Settings(
        float(dt),
        COEFFICIENTS[order],
        switch(GROUPS[group] == explicit.SE3),
        switch(parallel),
        tol,
        int(max_iter),
        switch(np.any((spin > 0) & (spin < 3))),
    )
    state = initial_state(model) if state is None else state
    if model.prescribed.node.shape[0] and not step:
        impose(model.prescribed, t0, model.x0, model.rot0, state.x, state.rot)
    run = Explicit(
        model,
        settings,
        state,
        make_workspace(model.n_nodes, model.n_elements),
        t0,
        step=int(step),
        kinks=np.asarray(model.kinks, dtype=float),
        ledger=ledger.explicit(model),
    )
    log.debug(
        "explicit %s order %d, dt %g, %d nodes, %d elements, parallel %s",
        group,
        order,
        dt,
        model.n_nodes,
        model.n_elements,
        parallel,
    )
    # the step kernel, the largest, compiles in a second process while this one compiles
    # the force evaluation and the ledger (a first run: kernel_cache.compile_ahead)
    args = (model.nodes, model.terms, run.state, run.settings, run.work, run.ledger)
    rest = (run.t0, 0, 0)
    run.ahead = kernel_cache.compile_ahead(
        [(explicit.advance, tuple(explicit.advance.typeof_pyval(a) for a in (*args, *rest)))]
    )
    refresh_forces(run)
    return run


def refresh_forces(run: Explicit) -> None:
    """(f, tau) and the energies at the current state and time: what a step starts from. After
    loads were changed between steps, the next step then uses the new loads at both ends."""
    m = run.model
    args = (m.nodes, m.terms, run.state, run.work, run.ledger)
    rest = (float(run.time), run.settings.parallel)
    run.internal, run.external = _kernel(run, explicit.compute_forces, args, rest)(*rest)
    if run.ledger is not None:  # what the energy ledger's next step starts from
        ledger.refresh(run, lambda f, args, rest: _kernel(run, f, args, rest)(*rest))


def _kernel(run: Explicit, function, args: tuple, rest: tuple) -> Callable:
    """function(*args, *rest) compiled for these argument types, the arrays `args` bound (the
    run's own, bound again if replaced). Calling the compiled overload skips the dispatcher's
    typing of the ~30 arrays that the named tuples carry: a call of explicit.advance with
    n_steps = 0 took 10 us through the dispatcher, 2.4 us this way, against 27 us for one
    step of a 100-element rod (rodsim.Simulation.step calls it once per step)."""
    bound = run.kernels.get(function)
    if bound is None or not all(a is b for a, b in zip(bound.args, args, strict=True)):
        types = tuple(function.typeof_pyval(a) for a in (*args, *rest))
        bound = run.kernels[function] = functools.partial(function.compile(types), *args)
    return bound


def advance(run: Explicit, n_steps: int) -> None:
    """Advance n_steps steps; raise NumericalError with advice on failure. A step with a load
    kink inside it is taken as sub-steps that end on the kinks (planning.next_split;
    docs/explicit_scheme.md, "Time steps and load kinks")."""
    end = run.step + int(n_steps)
    while run.step < end:
        split = next_split(run.kinks, run.t0, run.settings.dt, run.step, end)
        k = end if split is None else split[0]
        if k > run.step:
            _steps(run, run.settings, run.t0, k - run.step)
        if split is not None:
            ends = [*split[1], run.t0 + (k + 1) * run.settings.dt]
            t = run.time
            for b in ends:
                _steps(run, run.settings._replace(dt=b - t), t, 1, count=False)
                t = b
            run.step += 1


def _steps(run: Explicit, cfg: Settings, t0: float, n: int, count: bool = True) -> None:
    """n steps of the kernel with settings cfg from time t0 (the run's grid, from its current
    step, when count: the run's step counter then advances)."""
    m = run.model
    args = (m.nodes, m.terms, run.state, cfg, run.work, run.ledger)
    rest = (float(t0), int(run.step) if count else 0, int(n))
    if run.ahead is not None:  # compiled in a second process: load it from the cache
        run.ahead.wait()
    done, status, u, v, max_its, sum_its = _kernel(run, explicit.advance, args, rest)(*rest)
    if count:
        run.step += done
    run.internal, run.external = u, v
    if forces.stateful(m.terms):  # u is the trial's incremental potential: U of the committed
        # state is it less what the accept moved into the terms' dissipated work (F_y dg)
        run.internal = forces.energies(m.terms, run.state.x, run.state.rot, run.time)[0]
    run.max_iterations = max(run.max_iterations, max_its)
    n_solves = max(done, 1) * cfg.coefficients.shape[0] * run.model.n_nodes
    run.mean_iterations = sum_its / n_solves
    if status == explicit.OK:
        return
    dt_crit = stable_step(run.model, len(run.settings.coefficients) + 1)
    ratio = run.settings.dt / dt_crit
    if ratio > 0.9:
        advice = (
            f"the step dt = {run.settings.dt:.6g} is {ratio:.3g}x the stable-step "
            f"estimate {dt_crit:.6g}; use dt <= {0.9 * dt_crit:.6g} (or dt: auto)"
        )
    else:  # the step is stable for the reference state: say so instead of blaming dt
        advice = (
            f"dt = {run.settings.dt:.6g} is only {ratio:.3g}x the stable-step estimate "
            f"{dt_crit:.6g}; check the loads, supports and section properties, or "
            f"reduce dt if the rod stiffens strongly as it deforms"
        )

    what = {
        explicit.NEWTON_FAILED: "the nodal rotation solve did not converge",
        explicit.NOT_FINITE: "the solution became non-finite (NaN or inf)",
    }[status]
    raise NumericalError(
        f"{what} at t = {run.time:.6g} (step {run.step}): {advice}", time=run.time, step=run.step
    )
