"""Step-size planning: the time step, the number of steps and the output cadence of an analysis
from its solver and output settings and the model's stable-step estimate, with the checks that
refuse plans the integrators cannot carry out (too many steps, prescribed rotations the Cayley
update cannot follow). docs/case_reference.md describes the settings.
"""

import hashlib
import logging
import math
from dataclasses import dataclass

import numba
import numpy as np

from rodsim.errors import CaseError
from rodsim.integrators.stable_step import StepLimit, step_limit
from rodsim.model.prescribed import largest_rotation_step
from rodsim.terms import TERMS

log = logging.getLogger(__name__)

PARALLEL_FROM = 2000  # elements; below this the parallel step does not pay off (benchmarks/)
MAX_STEPS = 10**12


@dataclass(frozen=True)
class Plan:
    """Time stepping and output: dt, total steps, steps between frames, stable-step estimate.

    kind: explicit | implicit | equilibrium; t_end the simulated time at the end (the load
    multiplier 1 in equilibrium, where a step is a load step and dt the first pseudo-time
    step)."""

    dt: float
    n_steps: int
    steps_per_frame: int
    stable_dt: float
    parallel: bool
    kind: str = "explicit"
    t_end: float = 0.0
    first: float = 0.0  # adaptive implicit steps: the first step (dt is the frame interval)
    # the explicit step's collapse (collapse_warning): what makes the stable step fall by an
    # order of magnitude and the fix; '' when nothing does (the summary prints it)
    collapse: str = ""

    @property
    def n_frames(self) -> int:
        return 1 + math.ceil(self.n_steps / self.steps_per_frame)


def _fingerprint(model, order: int) -> bytes:
    """A digest of what step_limit reads of the model (the arrays of every term with a
    stable-step share, the reference, masses, damping): the analysis steps of a case build one
    model each, mostly the same."""
    h = hashlib.blake2b(repr((order, float(model.alpha), float(model.beta))).encode())
    parts = [_fields(t.arrays(model)) for t in TERMS if t.stable_step is not None]
    parts.append(
        {
            "x0": model.x0,
            "rot0": model.rot0,
            "m": model.mass,
            "j": model.inertia,
            "rho_a": model.rho_a,
            "rho_i": model.rho_i,
        }
    )
    for fields in parts:
        for name, value in fields.items():
            h.update(name.encode())
            if isinstance(value, np.ndarray):
                h.update(repr((value.dtype.str, value.shape)).encode())
                h.update(np.ascontiguousarray(value).tobytes())
            else:
                h.update(repr(value).encode())
    return h.digest()


def _fields(arrays) -> dict:
    """A term's arrays by field name (a NamedTuple's fields; one array: itself)."""
    return arrays._asdict() if hasattr(arrays, "_asdict") else {"arrays": arrays}


_LIMIT: list = [None]  # (fingerprint, StepLimit) of the last model planned


def _step_limit(model, order: int) -> StepLimit:
    """step_limit, reused when the model is the last one's (a case of 10,000 analysis steps
    on one mesh computes it once: benchmarks/steps_check_scale.py)."""
    key = _fingerprint(model, order)
    last = _LIMIT[0]
    if last is None or last[0] != key:
        last = (key, step_limit(model, order))
        _LIMIT[0] = last  # one assignment: threads see an old pair or a new one
    return last[1]


def plan(case, model, n_elements: int) -> Plan:
    """dt and output cadence from the solver and output settings (see docs/case_reference)."""
    s, out = case.settings.solver, case.settings.output
    order = int(s.order)
    with np.errstate(all="ignore"):
        try:
            limit = _step_limit(model, order)
        except np.linalg.LinAlgError:
            limit = None
    stable = math.nan if limit is None else limit.dt
    if math.isnan(stable):
        raise CaseError(
            "the section properties are out of the representable range (the "
            "stable-step estimate is not a number)",
            key="sections",
        )
    if s.static or s.eigen is not None:
        h0 = s.dt if s.dt != "auto" else 10.0 * stable if math.isfinite(stable) else 1.0
        if not s.load_steps:  # modal or buckling about the reference: no steps, one frame
            return Plan(float(h0), 0, 1, float(stable), False, s.kind, 0.0)
        if s.equilibrium.path is not None:  # path following: its steps, its end unknown
            steps = int(s.equilibrium.path.steps)
            return Plan(float(h0), steps, 1, float(stable), False, s.kind, math.nan)
        n = int(s.equilibrium.load_steps)
        _check_cayley_steps(
            model, np.linspace(0.0, 1.0, n + 1), "load step", "solver.equilibrium.load_steps"
        )
        return Plan(float(h0), n, 1, float(stable), False, s.kind, 1.0)
    t_end = s.t_end
    implicit = s.scheme == "implicit"
    interval = out.interval
    if s.adaptive is not None:
        return _adaptive_plan(s, out, model, stable, t_end)
    given_interval = interval is not None
    if interval is None and out.every is None:
        interval = t_end / 100.0
    if s.dt == "auto":
        if not math.isfinite(stable):
            raise CaseError(
                "dt: auto needs a stable-step estimate, and the model has no "
                "elastic element; give dt",
                key="solver.dt",
            )
        raw = s.safety * stable
        _check_steps(t_end / raw)
        if interval is not None:  # shrink dt so frames fall on the interval and on t_end
            n_frames = max(1, math.ceil(t_end / interval * (1 - 1e-12)))
            per = max(1, math.ceil(t_end / n_frames / raw * (1 - 1e-12)))
            n_steps = n_frames * per
        else:
            n_steps = max(1, math.ceil(t_end / raw * (1 - 1e-12)))
        dt = t_end / n_steps
    else:
        _check_steps(t_end / s.dt)
        n_steps = max(1, math.ceil(t_end / s.dt * (1 - 1e-9)))
        dt = t_end / n_steps
        if abs(dt - s.dt) > 1e-9 * s.dt:
            log.warning(
                "dt %g does not divide t_end %g: using dt %.6g (%d steps)",
                s.dt,
                t_end,
                dt,
                n_steps,
            )
        if interval is not None:
            per = max(1, round(interval / dt))
            if given_interval and abs(per * dt - interval) > 1e-9 * interval:
                log.warning(
                    "output.interval %g is not a multiple of dt %g; frames every %d steps",
                    interval,
                    dt,
                    per,
                )
    if dt > stable and not implicit:
        log.warning(
            "dt %g is above the stable-step estimate %g: the explicit scheme will blow up",
            dt,
            stable,
        )
    if implicit and s.dt == "auto":
        log.info(
            "scheme: implicit with dt: auto takes the explicit stable step; give "
            "solver.dt to take the large steps the implicit scheme allows"
        )
    if interval is None:
        per = out.every
    collapse = "" if implicit else collapse_warning(limit, model, n_steps)
    if collapse:
        # the summary prints it: the CLI drops this record where it prints the summary
        log.warning("%s", collapse, extra={"in_summary": True})
    if s.parallel == "auto":
        parallel = n_elements >= PARALLEL_FROM and numba.config.NUMBA_NUM_THREADS > 1
    else:
        parallel = bool(s.parallel)
    if implicit:
        _check_cayley_steps(model, np.arange(n_steps + 1) * dt, "time step", "solver.dt")
    return Plan(
        float(dt),
        int(n_steps),
        int(min(per, n_steps)),
        float(stable),
        parallel and not implicit,
        s.kind,
        float(t_end),
        collapse=collapse,
    )


def collapse_warning(limit: StepLimit, model, n_steps: int) -> str:
    """The warning for an explicit step that collapses (StepLimit.collapse): the cause, by how
    much, and the fix; '' when the step does not collapse."""
    cause = limit.collapse()
    if not cause:
        return ""
    head = f"the explicit time step collapses ({n_steps} steps): "
    implicit = "or use solver.scheme: implicit with a given solver.dt (no stable-step limit)"
    if cause == "damping":
        text = (
            f"damping makes the stable step {limit.undamped / limit.dt:.3g}x smaller "
            f"({limit.dt:.3g} instead of {limit.undamped:.3g}). "
        )
        if limit.strain_rate <= limit.mass:
            zeta = 0.5 * model.beta * limit.omega
            return (
                head
                + text
                + (
                    f"Strain-rate (stiffness-proportional) damping, beta {model.beta:.3g}, damps "
                    f"the highest mode (omega {limit.omega:.3g} rad per time unit) with the ratio "
                    f"beta omega / 2 = {zeta:.3g}, and a mode damped by zeta is stable only for "
                    "dt <= (2 / omega) (sqrt(1 + zeta^2) - zeta) (docs/explicit_scheme.md). "
                    "Damp with mass damping instead (solver.damping.mass: alpha gives the ratio "
                    "alpha / (2 omega), largest on the low modes), give smaller ratios at the "
                    f"high frequencies of solver.damping.ratios, {implicit}"
                )
            )
        return (
            head
            + text
            + (
                f"Mass damping (alpha {model.alpha:.3g}) or the dashpots of the elastic supports "
                "damp a mode so strongly that its stable step falls: lower solver.damping.mass "
                f"or the dashpot coefficients, {implicit}"
            )
        )
    if cause == "supports":
        return head + (
            f"the elastic supports make the stable step {limit.elastic / limit.undamped:.3g}x "
            f"smaller ({limit.undamped:.3g} instead of {limit.elastic:.3g} for the elements "
            f"alone): the stiffest spring against its node's mass, sqrt(k / m) = "
            f"{limit.spring_omega:.3g} rad per time unit. Soften the support, hold the "
            f"degree of freedom with a boundary fix instead, {implicit}"
        )
    e = limit.element
    what = f"rod element {e}" if e < limit.n_rods else f"plate element {e - limit.n_rods}"
    return head + (
        f"{what} has a stable step {limit.typical / limit.elastic:.3g}x smaller than the "
        f"median element's ({limit.elastic:.3g} against {limit.typical:.3g}): it is much "
        f"shorter or stiffer than the others. Mesh it like its neighbours, {implicit}"
    )


def _adaptive_plan(s, out, model, stable: float, t_end: float) -> Plan:
    """Adaptive implicit steps: the plan's step is the frame interval (one per frame), the
    controller's steps are inside it; the first is dt (auto: the stable-step estimate)."""
    if out.every is not None:
        raise CaseError(
            "output.every counts time steps, which adaptive steps do not fix: give "
            "output.interval (simulated time between frames)",
            key="output.every",
        )
    wanted = out.interval or t_end / 100.0
    n_frames = max(1, math.ceil(t_end / wanted * (1 - 1e-9)))
    interval = t_end / n_frames
    if out.interval is not None and abs(interval - out.interval) > 1e-9 * out.interval:
        log.warning(
            "output.interval %g does not divide t_end %g: frames every %.6g (%d frames)",
            out.interval,
            t_end,
            interval,
            n_frames + 1,
        )
    if s.dt != "auto":
        first = float(s.dt)
    elif math.isfinite(stable):
        first = float(stable)
    else:
        raise CaseError(
            "dt: auto needs a stable-step estimate, and the model has no elastic element; "
            "give dt (the first adaptive step)",
            key="solver.dt",
        )
    a = s.adaptive
    largest = interval if a.dt_max == "auto" else min(float(a.dt_max), interval)
    if a.dt_min != "auto":
        first = max(first, float(a.dt_min))
    n_check = max(1, math.ceil(t_end / largest))
    _check_cayley_steps(
        model, np.linspace(0.0, t_end, n_check + 1), "time step", "solver.adaptive.dt_max"
    )
    return Plan(
        interval, n_frames, 1, float(stable), False, s.kind, float(t_end), min(first, largest)
    )


# A kink closer than this (relative to dt) to a step boundary is on it: splitting the step there
# would add a sub-step of round-off size and nothing else.
ON_GRID = 1e-9


def next_split(kinks: np.ndarray, t0: float, dt: float, first: int, end: int):
    """The first step k (first <= k < end) of the grid t0 + k dt that a kink lies strictly
    inside, and the kinks inside it: (k, cuts), or None. The step is then taken as sub-steps
    between its ends and the cuts, so that no step integrates across a point where a load or
    a prescribed motion is not smooth (docs/explicit_scheme.md, "Time steps and load kinks"): a
    scheme of order p keeps order p, where a step across a kink would be locally O(h^2)
    (O(h) at a jump) and the global order would drop to 2 (1)."""
    i = int(np.searchsorted(kinks, t0 + first * dt, side="right"))
    while i < kinks.shape[0] and kinks[i] < t0 + end * dt:
        k = min(max(int(math.floor((kinks[i] - t0) / dt)), first), end - 1)
        if kinks[i] >= t0 + (k + 1) * dt and k + 1 < end:  # floor's round-off
            k += 1
        a, b = t0 + k * dt, t0 + (k + 1) * dt
        j = int(np.searchsorted(kinks, b - ON_GRID * dt, side="left"))
        cuts = [float(c) for c in kinks[i:j] if c > a + ON_GRID * dt]
        if cuts:
            return k, cuts
        i = max(j, i + 1)
    return None


def split_steps(kinks: np.ndarray, dt: float, n_steps: int) -> int:
    """How many of the n_steps steps of size dt from t = 0 are split at kinks."""
    count, k = 0, 0
    while (split := next_split(kinks, 0.0, dt, k, n_steps)) is not None:
        count += 1
        k = split[0] + 1
    return count


MAX_CAYLEY_STEP = 0.75 * math.pi  # the Cayley chart ends at pi; keep well inside it


def _check_cayley_steps(model, times: np.ndarray, what: str, key: str) -> None:
    """The implicit scheme moves a prescribed rotation by one Cayley increment per step, and
    cay^{-1} takes the short way round: more than MAX_CAYLEY_STEP per step is refused."""
    largest = largest_rotation_step(model.prescribed, times)
    if largest > MAX_CAYLEY_STEP:
        factor = math.ceil(largest / MAX_CAYLEY_STEP)
        hint = (
            f"use at least {factor * (len(times) - 1)} load steps"
            if key.endswith("steps")
            else f"use dt <= {(times[1] - times[0]) / factor:.6g}"
        )
        raise CaseError(
            f"a prescribed rotation turns by {largest:.3g} rad in one {what}, more "
            "than 3 pi/4: the implicit scheme's Cayley update cannot follow it "
            f"(it would go the short way round); {hint}",
            key=key,
        )


def _check_steps(n: float) -> None:
    if not n <= MAX_STEPS:
        raise CaseError(
            f"t_end / dt = {n:.3g} steps is more than {MAX_STEPS:.0e}; shorten t_end or enlarge dt",
            key="solver.t_end",
        )
