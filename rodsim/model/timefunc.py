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
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rodsim.errors import CaseError
from rodsim.jit import kernel

CONSTANT = 0  # params = (value, 0, 0)
RAMP = 1  # params = (T, 0, 0)
TABLE = 2  # params unused; the points are in table
SINE = 3  # params = (amplitude, frequency, phase)

_NAMES = {CONSTANT: "constant", RAMP: "ramp", TABLE: "table", SINE: "sine"}
_KINDS = {name: kind for kind, name in _NAMES.items()}
_SINE_KEYS = ("amplitude", "frequency", "phase")


@dataclass(frozen=True, eq=False)
class TimeFunction:
    """A time function as data for numba kernels.

    kind: CONSTANT, RAMP, TABLE or SINE. params: (3,) float64, meaning per kind (see the module
    constants). table: (k, 2) float64 rows (t, value) for TABLE, shape (0, 2) otherwise.
    The arrays are stored read-only, float64 and C-contiguous; values are validated here
    (CaseError keyed by the kind name, e.g. ``"ramp"`` or ``"table[2]"``).
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


def time_function_from_spec(spec: Mapping | None) -> TimeFunction:
    """The TimeFunction of a case-file ``time:`` dict; None (no ``time`` key) is constant 1.

    Raises CaseError with a key relative to the ``time`` dict for an unknown or repeated kind,
    non-numbers (bool included), NaN/inf, a table that is not a list of [t, v] pairs or whose
    times do not strictly increase, and a ramp time T <= 0.
    """
    if spec is None:
        return constant(1.0)
    if not isinstance(spec, Mapping):
        raise CaseError(f"expected a mapping with one of {_expected()}, got {_type(spec)}")
    for key in spec:
        if key not in _KINDS:
            raise CaseError(
                f"unknown time function {key!r}; expected one of {_expected()}", key=str(key)
            )
    if len(spec) != 1:
        raise CaseError(f"expected exactly one of {_expected()}, got {', '.join(spec)}")
    ((name, arg),) = spec.items()
    if name == "constant":
        return constant(_number(arg, "constant"))
    if name == "ramp":
        return ramp(_number(arg, "ramp"))
    if name == "table":
        return table(_table_points(arg))
    return sine(*_sine_params(arg))


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
            raise CaseError("a table needs at least one [t, v] pair", key=name)
        for i in range(table.shape[0]):
            if not np.all(np.isfinite(table[i])):
                raise CaseError(
                    f"expected finite numbers, got {table[i].tolist()}", key=f"table[{i}]"
                )
            if i > 0 and not table[i, 0] > table[i - 1, 0]:
                raise CaseError(
                    f"times must increase strictly: t = {table[i, 0]} follows "
                    f"t = {table[i - 1, 0]}",
                    key=f"table[{i}]",
                )
        return
    if not np.all(np.isfinite(params)):
        raise CaseError(f"expected finite numbers, got {params.tolist()}", key=name)
    if kind == RAMP and not params[0] > 0.0:
        raise CaseError(f"the ramp time must be > 0, got {params[0]}", key=name)


def _table_points(arg) -> list[tuple[float, float]]:
    if not _is_list(arg):
        raise CaseError(f"expected a list of [t, v] pairs, got {_type(arg)}", key="table")
    points = []
    for i, pair in enumerate(arg):
        key = f"table[{i}]"
        if not _is_list(pair) or len(pair) != 2:
            raise CaseError(f"expected a pair [t, v], got {pair!r}", key=key)
        points.append((_number(pair[0], key), _number(pair[1], key)))
    if not points:
        raise CaseError("a table needs at least one [t, v] pair", key="table")
    return points


def _sine_params(arg) -> tuple[float, float, float]:
    if not isinstance(arg, Mapping):
        raise CaseError(
            f"expected a mapping {{amplitude, frequency, phase}}, got {_type(arg)}", key="sine"
        )
    for key in arg:
        if key not in _SINE_KEYS:
            raise CaseError(
                f"unknown key {key!r}; expected {', '.join(_SINE_KEYS)}", key=f"sine.{key}"
            )
    for key in ("amplitude", "frequency"):
        if key not in arg:
            raise CaseError(f"missing key {key!r}", key=f"sine.{key}")
    return (
        _number(arg["amplitude"], "sine.amplitude"),
        _number(arg["frequency"], "sine.frequency"),
        _number(arg.get("phase", 0.0), "sine.phase"),
    )


def _number(x, key: str) -> float:
    """A finite real number; bool is rejected although it is an int subclass."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise CaseError(f"expected a number, got {x!r} ({_type(x)})", key=key)
    v = float(x)
    if not math.isfinite(v):
        raise CaseError(f"expected a finite number, got {v}", key=key)
    return v


def _is_list(x) -> bool:
    return isinstance(x, (Sequence, np.ndarray)) and not isinstance(x, (str, bytes))


def _type(x) -> str:
    return type(x).__name__


def _expected() -> str:
    return ", ".join(_KINDS)


def _no_table() -> np.ndarray:
    return np.zeros((0, 2), dtype=np.float64)


def _frozen_array(a, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only C-contiguous float64 copy of a, reshaped; the copy keeps callers' arrays
    from aliasing the (immutable) function."""
    out = np.array(a, dtype=np.float64, order="C").reshape(shape)
    out.flags.writeable = False
    return out
