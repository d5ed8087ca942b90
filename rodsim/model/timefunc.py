"""Time functions: the dimensionless multipliers f(t) of loads and prescribed motions.

The case-file forms (docs/case_reference.md, ``time:``), with t in the user's time unit:

- ``{constant: v}``: f = v;
- ``{ramp: T}``: f = 0 for t <= 0, t / T on [0, T], 1 after (T > 0);
- ``{table: [[t0, v0], [t1, v1], ...]}``: piecewise linear through the points (strictly
  increasing times); v0 before t0 and 0 after the last time (f jumps to 0 there unless the last
  value is 0); at the last time itself f is the last value;
- ``{sine: {amplitude: A, frequency: w, phase: p}}``: f = A sin(2 pi w t + p), w in cycles per
  time unit, p in radians (optional, default 0);
- no ``time`` key: f = 1.

A :class:`TimeFunction` is plain data (an int kind, 3 parameters and a (k, 2) table) so numba
kernels can evaluate it: :func:`evaluate` for one function, :func:`pack` + :func:`evaluate_packed`
for many. :func:`kinks` gives the times where f is not smooth, so an integrator can step onto them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rodsim.jit import kernel

CONSTANT = 0  # params = (value, 0, 0)
RAMP = 1  # params = (T, 0, 0)
TABLE = 2  # params unused; the points are in table
SINE = 3  # params = (amplitude, frequency, phase)

_NAMES = {CONSTANT: "constant", RAMP: "ramp", TABLE: "table", SINE: "sine"}


@dataclass(frozen=True, eq=False)
class TimeFunction:
    """A time function as data for numba kernels.

    kind: CONSTANT, RAMP, TABLE or SINE. params: (3,) float64, meaning per kind (see the module
    constants). table: (k, 2) float64 rows (t, value) for TABLE, shape (0, 2) otherwise.
    The arrays are stored read-only, float64 and C-contiguous; values are validated here
    (ValueError; the case file's validator, rodsim.case.fields.TIME, keys it to the case).
    """

    kind: int
    params: np.ndarray
    table: np.ndarray

    def __post_init__(self) -> None:
        if self.kind not in _NAMES:
            raise ValueError(f"unknown time-function kind {self.kind!r}")
        object.__setattr__(self, "kind", int(self.kind))
        params = _frozen_array(self.params, (3,))
        table = _frozen_array(self.table, (-1, 2))
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "table", table)
        _validate(self.kind, params, table)

    def __call__(self, t: float) -> float:
        """f(t) as a Python float."""
        return value(self, t)

    def __eq__(self, other) -> bool:
        if not isinstance(other, TimeFunction):
            return NotImplemented
        return (
            self.kind == other.kind
            and np.array_equal(self.params, other.params)
            and np.array_equal(self.table, other.table)
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.params.tobytes(), self.table.tobytes()))

    def __repr__(self) -> str:
        name = _NAMES[self.kind]
        if self.kind == TABLE:
            return f"TimeFunction({name}={self.table.tolist()})"
        return f"TimeFunction({name}={self.params.tolist()})"


# --- constructors -----------------------------------------------------------------------------


def constant(v: float = 1.0) -> TimeFunction:
    """f(t) = v."""
    return TimeFunction(CONSTANT, np.array([v, 0.0, 0.0]), _no_table())


def ramp(duration: float) -> TimeFunction:
    """f(t) = clip(t / T, 0, 1) with T = duration > 0."""
    return TimeFunction(RAMP, np.array([duration, 0.0, 0.0]), _no_table())


def table(points) -> TimeFunction:
    """Piecewise-linear f through points (k, 2) = [(t, v), ...]; v0 before, 0 after the table."""
    return TimeFunction(TABLE, np.zeros(3), np.asarray(points, dtype=np.float64).reshape(-1, 2))


def sine(amplitude: float, frequency: float, phase: float = 0.0) -> TimeFunction:
    """f(t) = amplitude sin(2 pi frequency t + phase); frequency in cycles / time, phase in rad."""
    return TimeFunction(SINE, np.array([amplitude, frequency, phase]), _no_table())


# --- evaluation -------------------------------------------------------------------------------


def value(tf: TimeFunction, t: float) -> float:
    """f(t) as a Python float (wraps the numba kernel, so it is bit-identical to it)."""
    return float(evaluate(tf.kind, tf.params, tf.table, float(t)))


@kernel
def _evaluate_rows(kind, p0, p1, p2, table, lo, hi, t, ts):
    """f(t) of one function; its table is rows lo:hi of table (k, 2). No allocation. The
    smooth piece is the one at time ts (ts = t: f itself; else the extension of the piece
    at ts, see window_time)."""
    if kind == CONSTANT:
        return p0
    if kind == RAMP:
        if ts == t:
            return min(max(t / p0, 0.0), 1.0)
        return 0.0 if ts <= 0.0 else 1.0 if ts >= p0 else t / p0
    if kind == SINE:
        return p0 * math.sin(2.0 * math.pi * p1 * t + p2)
    if kind == TABLE:
        if ts > table[hi - 1, 0]:
            return 0.0
        if ts <= table[lo, 0]:
            return table[lo, 1]
        # bisection for the segment [table[a], table[b]] with table[a, 0] < ts <= table[b, 0]
        a = lo
        b = hi - 1
        while b - a > 1:
            mid = (a + b) // 2
            if table[mid, 0] < ts:
                a = mid
            else:
                b = mid
        t0 = table[a, 0]
        t1 = table[b, 0]
        s = (t - t0) / (t1 - t0)
        return (1.0 - s) * table[a, 1] + s * table[b, 1]
    raise ValueError("unknown time-function kind")


@kernel
def evaluate(kind, params, table, t):
    """f(t) for kind (int), params (3,) float64, table (k, 2) float64, t float. No allocation."""
    return _evaluate_rows(kind, params[0], params[1], params[2], table, 0, table.shape[0], t, t)


def no_window() -> np.ndarray:
    """A time window (2,) float64 that is not set (see window_time)."""
    return np.full(2, np.nan)


@kernel(inline="always")
def window_time(window, t):
    """The time whose smooth piece a packed function is evaluated with at time t: t itself,
    unless window (2,) holds a step [a, b] with no kink strictly inside (its entries are NaN
    otherwise), then the step's midpoint. So the stages of a composition scheme that lie
    outside their step (the order-4 triple jump's reach 0.35 h beyond both ends) see the
    smooth extension of the step's own piece, and the scheme keeps its order across a kink
    (docs/explicit_scheme.md, "Time steps and load kinks")."""
    if window[0] <= window[1]:
        return 0.5 * (window[0] + window[1])
    return t


def pack(functions: Sequence[TimeFunction]):
    """Many time functions as flat arrays for :func:`evaluate_packed`.

    Returns kinds (L,) int64, params (L, 3) float64, tables (T, 2) float64 (all tables
    concatenated) and offsets (L + 1,) int64: the table of function i is
    tables[offsets[i]:offsets[i + 1]].
    """
    n = len(functions)
    kinds = np.array([f.kind for f in functions], dtype=np.int64).reshape(n)
    params = np.array([f.params for f in functions], dtype=np.float64).reshape(n, 3)
    sizes = [f.table.shape[0] for f in functions]
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(sizes, dtype=np.int64)
    tables = np.ascontiguousarray(
        np.concatenate([f.table for f in functions] + [_no_table()], axis=0), dtype=np.float64
    )
    return kinds, params, tables, offsets


@kernel
def evaluate_packed(kinds, params, tables, offsets, i, t, window):
    """f_i(t) of function i of :func:`pack` output, on the smooth piece window_time(window, t)
    gives. No allocation."""
    ts = window_time(window, t)
    return _evaluate_rows(
        kinds[i],
        params[i, 0],
        params[i, 1],
        params[i, 2],
        tables,
        offsets[i],
        offsets[i + 1],
        t,
        ts,
    )


def kinks(tf: TimeFunction) -> np.ndarray:
    """Sorted (m,) float64 times where f is not smooth: 0 and T of a ramp, every table time
    (the last one is a jump to 0 unless its value is 0); empty for constant and sine."""
    if tf.kind == RAMP:
        return np.array([0.0, tf.params[0]])
    if tf.kind == TABLE:
        return tf.table[:, 0].copy()
    return np.zeros(0)


# --- validation -------------------------------------------------------------------------------


def _validate(kind: int, params: np.ndarray, table: np.ndarray) -> None:
    """Value checks shared by every way of building a TimeFunction."""
    name = _NAMES[kind]
    if kind == TABLE:
        if table.shape[0] == 0:
            raise ValueError("a table needs at least one [t, v] pair")
        for i in range(table.shape[0]):
            if not np.all(np.isfinite(table[i])):
                raise ValueError(f"row {i}: expected finite numbers, got {table[i].tolist()}")
            if i > 0 and not table[i, 0] > table[i - 1, 0]:
                raise ValueError(
                    f"row {i}: times must increase strictly, got t = {table[i, 0]:g} after "
                    f"t = {table[i - 1, 0]:g}"
                )
        return
    if not np.all(np.isfinite(params)):
        raise ValueError(f"{name}: expected finite numbers, got {params.tolist()}")
    if kind == RAMP and not params[0] > 0.0:
        raise ValueError(f"the ramp time must be > 0, got {params[0]:g}")


def _no_table() -> np.ndarray:
    return np.zeros((0, 2), dtype=np.float64)


def _frozen_array(a, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only C-contiguous float64 copy of a, reshaped; the copy keeps callers' arrays
    from aliasing the (immutable) function."""
    out = np.array(a, dtype=np.float64, order="C").reshape(shape)
    out.flags.writeable = False
    return out
