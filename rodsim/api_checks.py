"""The Python API's argument checks, in one place (docs/python.md, "Argument checks").

Every public rodsim.Simulation and rodsim.controls method that takes a number checks it here
and raises rodsim.errors.ArgumentError naming the argument, before anything changes: a
refused call leaves the simulation as it was. Plain Python (no numpy): a controller sets a
load every step, and numpy's checks cost more than a step of a small model.
"""

import math
import numbers
import operator

from rodsim.errors import ArgumentError

# The step counters are int64 in the compiled kernels (the first step k0 and the count n of a
# call, and k0 + n): 2**62 steps keep them, and any sum of two of them, far from overflow.
MAX_STEPS = 2**62


def count(value, name: str, *, done: int = 0) -> int:
    """value as a step count n >= 0 with done + n <= MAX_STEPS; an int or a numpy integer,
    never a bool or a float (1.5 steps has no meaning, and 2.0 is likely a computed time)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentError(f"expected an integer number of steps, got {value!r}", key=name)
    n = operator.index(value)
    if n < 0:
        raise ArgumentError(f"expected an integer >= 0, got {n}", key=name)
    if done + n > MAX_STEPS:
        raise ArgumentError(
            f"{n} steps after the {done} taken exceed the step counter's limit 2**62", key=name
        )
    return n


def finite(value, name: str) -> float:
    """value as a finite float: an int, a float or a numpy scalar, never a bool or a string."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"expected a finite number, got {value!r}", key=name)
    x = float(value)
    if not math.isfinite(x):
        raise ArgumentError(f"expected a finite number, got {value!r}", key=name)
    return x


def finite_vector(value, name: str) -> tuple[float, float, float]:
    """value as three finite floats (a sequence or array of 3 numbers)."""
    try:
        x, y, z = (float(c) for c in value)
    except (TypeError, ValueError):
        raise ArgumentError(f"expected three numbers, got {value!r}", key=name) from None
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        raise ArgumentError(f"expected three finite numbers, got {value!r}", key=name)
    return x, y, z


def steps_to(t, time: float, dt: float, done: int, name: str = "t") -> int:
    """The steps from `time` to the step nearest t (0 if t is not ahead), within the step
    counter's limit."""
    t = finite(t, name)
    steps = (t - time) / dt
    if steps > MAX_STEPS - done:  # also catches inf from a finite t far away
        raise ArgumentError(
            f"t = {t!r} is {steps:.3g} steps of {dt:.3g} ahead, beyond the step counter's "
            "limit 2**62",
            key=name,
        )
    return max(0, round(steps))
