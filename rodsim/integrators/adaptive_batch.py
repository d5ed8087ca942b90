"""The adaptive implicit steps as one compiled call per batch of steps (docs/implicit_scheme.md,
"Adaptive steps"): predictor, Newton on the band LU of the analytic Jacobian, the energy
balance, the local error, acceptance and the next step's size, with no Python per step.

The steps are rodsim.integrators.adaptive's, operation for operation in the same order, so the
two paths give the same bits; the batch runs where the adaptive solve can: a banded Jacobian
assembled from the terms' tangents (Solver.kbuf, a band from banded.banded). Elsewhere (plates'
SuperLU, a term without a tangent) adaptive.advance_to takes the steps in Python.

Python still runs between batches: a stop request (a signal, which Python only acts on between
compiled calls) is checked every BATCH steps, and a step that falls below dt_min raises there.
"""

import math
import time

import numba
import numpy as np

from rodsim import kernel_cache
from rodsim.integrators import adaptive, banded, ledger_implicit, vi_newton
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.vi_jacobian_dynamic import dynamic_jacobian
from rodsim.integrators.vi_state import body_momenta
from rodsim.integrators.vi_step import prescribed_targets
from rodsim.jit import kernel, switch
from rodsim.model import forces as fterms

# steps a compiled call takes at most before Python checks for a stop request: about 20 ms
# of a 20-element rod's steps, 0.3 s of a 1000-element one's
BATCH = 64

# the controller's numbers, in and out of the kernel: ctl (float64), cnt (int64)
H, H_LAST, H_BEFORE, ENERGY_ERROR, ENERGY_MAX, KINETIC, INTERNAL, LIN_H, RESIDUAL = range(9)
KNOWN, ACCEPTED, REJECTED, FORMED, MAX_ITERATIONS = range(5)

# compile the batch kernel in this process when first needed (rodsim warmup, tests), rather
# than in a second one while the steps go on in Python (_ready)
COMPILE_HERE = False
LONG_AFTER = 5.0  # s of Python-driven steps after which a run's remaining time is projected
LONG = 60.0  # s: a run projected to step longer than this compiles the batch meanwhile

REACHED, PAUSED, TOO_SMALL = range(3)  # a batch's end: t_stop, BATCH steps, below dt_min
WHY = ("Newton did not converge", "local error", "energy balance")


def batchable(run, c: adaptive.Control) -> bool:
    """Whether the run's adaptive steps can be taken by the compiled batch."""
    return c.linear.band is not None and run.solver.kbuf is not None and run.ledger is not None


@kernel
def _with(sd, h, t, u0, conserve):
    """sd with the step h, load time t, u0 and conserve replaced (StepData._replace)."""
    return vr.StepData(
        sd.x, sd.rot, sd.quat, sd.mom, sd.strains, sd.target_x, sd.target_rot,
        sd.rot_prescribed, h, t, sd.mode, sd.se3, sd.dynamic, conserve, u0, sd.free_body,
    )  # fmt: skip


@kernel
def _strains(damped, terms, sd):
    if damped is None:
        return
    fterms.compute_strains(terms, sd.x, sd.rot, sd.quat, sd.strains)


@kernel
def _accept_terms(stateful, terms, x, rot, quat, t):
    """forces.accept_step: the terms' accept hooks where one has state (quat of rot)."""
    if stateful is None:
        return
    fterms.quaternions(rot, quat, 0, rot.shape[0])
    fterms.accept(terms, x, rot, quat, t)


@kernel
def _next_step(h_ctl, dt_max, t, t_stop, kinks):
    """adaptive._next_step: (h, whether it ends on a kink, the kink)."""
    h = min(h_ctl, dt_max)
    remaining = t_stop - t
    if h >= remaining * (1.0 - 1e-9):
        h = remaining
    elif 2.0 * h > remaining:
        h = 0.5 * remaining
    i = np.searchsorted(kinks, t * (1 + 1e-12) + 1e-300, side="right")
    if i < kinks.shape[0] and kinks[i] < t + h * (1.0 - 1e-9):
        return kinks[i] - t, True, kinks[i]
    return h, False, 0.0


@kernel
def _form(m, terms, sd, xi, w, lin, ctl, cnt):
    """vi_newton.form with the analytic Jacobian, factorised in the band: False if singular."""
    ab, kl, ku, piv, order, data, slots, indptr, indices, kbuf = lin
    cnt[FORMED] += 1
    ctl[LIN_H] = sd.h
    dynamic_jacobian(
        m, terms, _with(sd, sd.h, sd.t, sd.u0, 0), xi, w, slots, indptr, indices, kbuf, data
    )
    banded.fill(ab, kl, ku, order, data, indptr, indices)
    return banded.factor(ab, kl, ku, piv)


@kernel
def _solve(m, terms, sd, xi, w, out, post, start, lin, ctl, cnt, num):
    """vi_newton.solve on the band: (converged, a new Jacobian was formed, iterations).
    num: (length, target, floor, limit)."""
    length, target, floor, limit = num
    ab, kl, ku, piv, order = lin[0], lin[1], lin[2], lin[3], lin[4]
    fresh = False
    lin_h = ctl[LIN_H]
    r = vi_newton.REFRESH_RATIO
    if not math.isfinite(lin_h) or not 1.0 / r <= sd.h / lin_h <= r:
        if not _form(m, terms, sd, xi, w, lin, ctl, cnt):
            return False, True, 0
        fresh = True
    start[:] = xi
    total = 0
    for _ in range(2):
        status, its, _norm = vi_newton.newton(
            m, terms, sd, xi, w, out, post, ab, kl, ku, piv, order, length, target, floor, limit
        )
        total += its
        if status == 0:
            return True, fresh, total
        if fresh:
            return False, fresh, total
        xi[:] = start
        if not _form(m, terms, sd, xi, w, lin, ctl, cnt):
            return False, True, total
        fresh = True
    return False, fresh, total


@kernel
def steps(
    m, terms, model, st, sd, sc, w, loads, lin, ld, flags, xi_run, xi_before, kinks, cfg, ctl,
    cnt, t, t_stop, batch,
):  # fmt: skip
    """Adaptive steps from t towards t_stop (a frame), at most `batch` of them, as
    adaptive.advance_to. Returns (REACHED | PAUSED | TOO_SMALL, the time reached, the index
    in WHY of the last rejection's cause).

    m: the nodes (NodeArrays); model: (prescribed, x0, rot0); st: (x, rot, quat, p, pi) the
    run's state, moved on in place; sd: StepData on the state and the step's scratch (its h,
    t, u0 replaced per step); sc: (guess, xi, out, post, x1, q1, rot1, p1, pi1, start, quat)
    scratch (N,6), (N,3), ...; w, loads: float64 Work (the residual's, the loads'); lin: (ab,
    kl, ku, piv, order, data, slots, indptr, indices, kbuf); ld: the energy ledger; flags:
    (damped, stateful) switches; xi_run, xi_before (N,6) the last two steps' velocities; cfg:
    (tol, energy_tol, dt_min, dt_max, grow, newton tol, floor, max_iter, length, total mass,
    se3, conserve); ctl, cnt: the controller's numbers (H.., KNOWN..), in place."""
    x, rot, quat, p, pi = st
    guess, xi, out, post, x1, q1, rot1, p1, pi1, start, qtmp = sc
    (
        tol,
        energy_tol,
        dt_min,
        dt_max,
        grow_max,
        newton_tol,
        floor,
        max_iter,
        length,
        mass,
        se3,
        conserve,
    ) = cfg
    damped, stateful = flags
    taken = 0
    why = 0
    while t_stop - t > 1e-12 * max(abs(t_stop), ctl[H]):
        if taken == batch:
            return PAUSED, t, why
        taken += 1
        h, on_kink, kink = _next_step(ctl[H], dt_max, t, t_stop, kinks)
        # the step's data (adaptive._step_data)
        body_momenta(rot, p, pi, se3, sd.mom)
        sd_k = _with(sd, h, t + 0.5 * h, ctl[INTERNAL] - ctl[ENERGY_ERROR], conserve)
        _strains(damped, terms, sd_k)
        prescribed_targets(
            model[0], t + h, model[1], model[2], x, rot, sd.target_x, sd.target_rot,
            sd.rot_prescribed,
        )  # fmt: skip
        # the attempt (adaptive._attempt)
        target = newton_tol * vi_newton.reference(m, terms, sd_k, loads, length)
        factor = 0.0
        if cnt[KNOWN] >= 2:
            factor = (ctl[H_LAST] + h) / (ctl[H_BEFORE] + ctl[H_LAST])
        adaptive.predict(xi_run, xi_before, factor, guess)
        xi[:] = guess
        num = (length, target, floor * h, max_iter)
        fresh, its, left = False, 0, 0.0
        failed = -1
        k1, u1, work, diff = 0.0, 0.0, 0.0, 0.0
        sd_a = sd_k
        rounds = 1 + (adaptive.REBALANCE if conserve else 0)
        for again in range(rounds):
            if again:
                sd_a = _with(sd_a, sd_a.h, sd_a.t, sd_a.u0 - left, sd_a.conserve)
            ok, new, n = _solve(m, terms, sd_a, xi, w, out, post, start, lin, ctl, cnt, num)
            fresh = fresh or new
            its += n
            if not ok:
                failed = 0
                break
            k1, u1, work, diff = adaptive.candidate(
                m, terms, sd_a, xi, guess, w, loads, post, x1, q1, rot1, p1, pi1
            )
            left = ctl[ENERGY_ERROR] + k1 + u1 - ctl[KINETIC] - ctl[INTERNAL] - work
            if not conserve or abs(left) <= energy_tol * max(ctl[ENERGY_MAX], k1 + u1):
                failed = -1
                break
            failed = 2
        cut = 0.0
        err = 0.0
        if failed >= 0:
            cut = adaptive.CUT if failed == 0 else 0.5
        else:
            if tol > 0.0 and cnt[KNOWN] >= 2:  # none without a predictor yet
                err = h * math.sqrt(diff / mass) / (tol * length)
            if err > 1.0:
                failed = 1
                cut = max(adaptive.CUT, adaptive.SAFETY * err ** (-1.0 / 3.0))
        if failed >= 0:  # adaptive._reject
            why = failed
            cnt[REJECTED] += 1
            ctl[H] = h * cut
            if ctl[H] < dt_min:
                return TOO_SMALL, t, why
            continue
        end = kink if on_kink else t + h
        ledger_implicit.implicit_step(ld, damped, m, terms, sd_k, xi, w.f, w.tau, end)
        x[:] = x1
        quat[:] = q1
        rot[:] = rot1
        p[:] = p1
        pi[:] = pi1
        _accept_terms(stateful, terms, x, rot, qtmp, end)
        xi_before[:] = xi_run
        xi_run[:] = xi
        ctl[H_BEFORE], ctl[H_LAST] = ctl[H_LAST], h
        cnt[KNOWN] = 0 if on_kink else min(cnt[KNOWN] + 1, 2)
        ctl[ENERGY_ERROR] += k1 + u1 - ctl[KINETIC] - ctl[INTERNAL] - work
        ctl[KINETIC], ctl[INTERNAL] = k1, u1
        ctl[ENERGY_MAX] = max(ctl[ENERGY_MAX], k1 + u1)
        cnt[ACCEPTED] += 1
        cnt[MAX_ITERATIONS] = max(cnt[MAX_ITERATIONS], its)
        norm = vi_newton.weighted(out, length)
        ctl[RESIDUAL] = max(ctl[RESIDUAL], norm / (target / newton_tol))
        t = end
        grow = grow_max
        if err > 0.0:
            grow = min(grow_max, adaptive.SAFETY * err ** (-1.0 / 3.0))
        if fresh or grow < vi_newton.REFRESH_RATIO:
            grow = min(grow, 1.0)
        ctl[H] = min(max(max(ctl[H], h) * grow, dt_min), dt_max)
    return REACHED, t_stop, why


def advance_to(run, c: adaptive.Control, t: float, t_stop: float, kinks, stop=None):
    """adaptive.advance_to (same steps, same results), in compiled batches of BATCH steps
    where batchable and the batch kernel is compiled (_ready); stop() is asked before each
    batch."""
    if c.batch is False or not batchable(run, c):  # decided: Python steps, no batch to set up
        return adaptive.advance_to(run, c, t, t_stop, kinks, stop)
    s, lin = run.solver, c.linear
    args = _arguments(run, c, kinks)
    ctl = np.array(
        [c.h, c.h_last, c.h_before, c.energy_error, c.energy_max, c.kinetic, c.internal,
         lin.h, run.residual]
    )  # fmt: skip
    cnt = np.array(
        [c.known, c.accepted, c.rejected, lin.formed, run.max_iterations], dtype=np.int64
    )
    if not _ready(c, (*args, ctl, cnt, float(t), float(t_stop), BATCH), t, c.settings.t_end):
        return adaptive.advance_to(run, c, t, t_stop, kinks, stop)
    s.ready()
    while True:
        if stop is not None and stop():
            return t, False
        status, t, why = steps(*args, ctl, cnt, float(t), float(t_stop), BATCH)
        c.h, c.h_last, c.h_before = float(ctl[H]), float(ctl[H_LAST]), float(ctl[H_BEFORE])
        c.energy_error, c.energy_max = float(ctl[ENERGY_ERROR]), float(ctl[ENERGY_MAX])
        c.kinetic, c.internal = float(ctl[KINETIC]), float(ctl[INTERNAL])
        lin.h, run.residual = float(ctl[LIN_H]), float(ctl[RESIDUAL])
        c.known, c.accepted, c.rejected = int(cnt[KNOWN]), int(cnt[ACCEPTED]), int(cnt[REJECTED])
        lin.formed, run.max_iterations = int(cnt[FORMED]), int(cnt[MAX_ITERATIONS])
        if status == REACHED:
            return t_stop, True
        if status == TOO_SMALL:
            raise adaptive.too_small(c, t, WHY[why])


def _arguments(run, c: adaptive.Control, kinks) -> tuple:
    """steps()'s arguments up to cfg: the run's arrays, held (no copies)."""
    s, m, st, sc, lin = run.solver, run.model, run.state, c.scratch, c.linear
    band, cfg = lin.band, c.settings
    sd = vr.StepData(
        st.x, st.rot, run.quat, sc.mom, sc.strains, sc.target_x, sc.target_rot, sc.flags,
        0.0, 0.0, vr.DYNAMIC, s.se3, switch(True), int(run.conserve), 0.0, int(run.free_body),
    )  # fmt: skip
    return (
        m.nodes,
        m.terms,
        (m.prescribed, m.x0, m.rot0),
        (st.x, st.rot, run.quat, st.p, st.pi),
        sd,
        (sc.guess, sc.xi, sc.out, sc.post, sc.x1, sc.q1, sc.rot1, sc.p1, sc.pi1, sc.start,
         sc.quat),
        c.work,
        c.loads,
        (band.ab, band.kl, band.ku, band.piv, band.order, s.data, s.slots, s.pattern.indptr,
         s.pattern.indices, s.kbuf),
        run.ledger,
        (switch(m.terms.damped), switch(fterms.stateful(m.terms))),
        run.xi,
        c.xi_before,
        kinks,
        (cfg.tol, cfg.energy_tol, cfg.dt_min, cfg.dt_max, cfg.grow, run.tol, s.floor,
         run.max_iter, s.length, sc.mass, s.se3, int(run.conserve)),
    )  # fmt: skip


def _ready(c: adaptive.Control, args: tuple, t: float, t_end: float) -> bool:
    """Whether steps() can be called for these arguments without compiling it here.

    Compiling the batch kernel takes about 30 s (2-core VM), longer than many runs. It is
    used where it is in the kernel cache (rodsim warmup puts it there: COMPILE_HERE). Where it
    is not, the steps go on in Python (the same steps), and a run whose remaining steps, at
    the rate of its first LONG_AFTER seconds, would take longer than LONG compiles it in a
    forked process meanwhile (kernel_cache.compile_ahead) and switches when that is done.
    c.batch: None (not asked), ("timing", wall clock, compile seconds, t, types) where the
    Python steps began,
    ("compiling", Ahead, types), or True/False (decided)."""
    if isinstance(c.batch, bool):
        return c.batch
    if c.batch is None:
        types = tuple(numba.typeof(a) for a in args)
        c.batch = COMPILE_HERE or kernel_cache.cached(steps, types) or ("timing", *_now(t), types)
        return c.batch is True
    if c.batch[0] == "timing":
        _, wall, compiled, start, types = c.batch
        # the steps' own time: a first run compiles the Python steps' kernels meanwhile
        spent = time.perf_counter() - wall - (kernel_cache.compiling().seconds - compiled)
        if spent >= LONG_AFTER and t > start:
            ahead = None
            if spent * (t_end - t) / (t - start) > LONG:
                ahead = kernel_cache.compile_ahead([(steps, types)])
            # a short run, or no second process: the Python steps finish the run
            c.batch = False if ahead is None else ("compiling", ahead, types)
        return False
    _, ahead, types = c.batch
    if not ahead.finished():
        return False
    c.batch = kernel_cache.cached(steps, types)  # False: the child failed
    return c.batch


def _now(t: float) -> tuple:
    return time.perf_counter(), kernel_cache.compiling().seconds, t
