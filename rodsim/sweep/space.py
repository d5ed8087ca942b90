"""The parameter space of a sweep (docs/sweeps.md, "Parameters"): the values of each varied key
path and how they combine into runs. Pure functions; the ensembles of a later issue reuse them.

A parameter's values are an explicit list, ``{linspace: [a, b, n]}`` (n values from a to b,
evenly), ``{logspace: [a, b, n]}`` (n values from a to b, evenly in log: a geometric series,
a and b > 0) or, for sampled spaces, ``{between: [low, high]}`` (uniform) or
``{log_between: [low, high]}`` (log-uniform). Runs combine them as a full grid (every
combination, the last parameter varying fastest), zipped (the i-th value of each, lists of
one length) or as ``count`` seeded random or Latin-hypercube samples of the ranges.
"""

import math

import numpy as np

from rodsim.errors import CaseError

COMBINE = ("grid", "zip", "random", "lhs")
LISTED = ("linspace", "logspace")  # values given in full
SAMPLED = ("between", "log_between")  # ranges that random and lhs sample


def is_real(value) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _real(value, key: str) -> float:
    if not is_real(value):
        raise CaseError(f"expected a finite number, got {value!r}", key=key)
    return float(value)


def _count(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CaseError(f"expected a whole number of values >= 1, got {value!r}", key=key)
    return value


def _range(spec, kind: str, key: str, size: int):
    if not isinstance(spec, list) or len(spec) != size:
        form = "[a, b, n]" if size == 3 else "[low, high]"
        raise CaseError(f"{kind}: expected {form}, got {spec!r}", key=key)
    return [_real(v, key) for v in spec[:2]]


def values(spec, key: str) -> list:
    """The listed values of one parameter (a list, linspace or logspace); CaseError for an
    empty or malformed one (key: where in the sweep file)."""
    if isinstance(spec, list):
        if not spec:
            raise CaseError("expected at least one value, got an empty list", key=key)
        return list(spec)
    if isinstance(spec, dict) and len(spec) == 1:
        ((kind, arg),) = spec.items()
        if kind in LISTED:
            a, b = _range(arg, kind, key, 3)
            n = _count(arg[2], key)
            if kind == "logspace":
                if not (a > 0 and b > 0):
                    raise CaseError(f"logspace: expected a, b > 0, got {arg!r}", key=key)
                return [float(v) for v in np.geomspace(a, b, n)]
            return [float(v) for v in np.linspace(a, b, n)]
        if kind in SAMPLED:
            raise CaseError(
                f"{kind} is a range to sample: give combine: random or lhs with a count", key=key
            )
    raise CaseError(
        "expected a list of values, {linspace: [a, b, n]}, {logspace: [a, b, n]}, "
        f"{{between: [low, high]}} or {{log_between: [low, high]}}, got {spec!r}",
        key=key,
    )


def ranges(spec, key: str) -> tuple:
    """(low, high, log) of a sampled parameter."""
    if isinstance(spec, dict) and len(spec) == 1:
        ((kind, arg),) = spec.items()
        if kind in SAMPLED:
            low, high = _range(arg, kind, key, 2)
            if not low < high:
                raise CaseError(f"{kind}: expected low < high, got {arg!r}", key=key)
            if kind == "log_between" and not low > 0:
                raise CaseError(f"log_between: expected low > 0, got {arg!r}", key=key)
            return low, high, kind == "log_between"
    raise CaseError(
        f"combine: random and lhs sample ranges: expected {{between: [low, high]}} or "
        f"{{log_between: [low, high]}}, got {spec!r}",
        key=key,
    )


def size(parameters: dict, combine: str = "grid", count=None) -> int:
    """The number of runs, without making them (a grid's product, a zip's length, count)."""
    if combine in ("random", "lhs") or count is not None:
        return count if isinstance(count, int) and not isinstance(count, bool) else 0
    lengths = []
    for spec in parameters.values():
        if isinstance(spec, list):
            lengths.append(len(spec))
        elif isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in LISTED:
            arg = next(iter(spec.values()))
            n = arg[2] if isinstance(arg, list) and len(arg) == 3 else 0
            lengths.append(n if isinstance(n, int) and not isinstance(n, bool) else 0)
    if combine == "zip":
        return max(lengths, default=0)
    return math.prod(lengths)


def runs(parameters: dict, combine: str = "grid", count: int | None = None, seed: int = 0):
    """The runs of a sweep: a list of {key path: value}, in order (see the module docstring);
    parameters: key path -> spec. CaseError (key: parameters.KEY, combine, count) otherwise."""
    if combine not in COMBINE:
        raise CaseError(f"expected one of {', '.join(COMBINE)}, got {combine!r}", key="combine")
    keys = list(parameters)
    if not keys:
        raise CaseError("expected at least one parameter to vary", key="parameters")
    where = {k: f"parameters.{k}" for k in keys}
    if combine in ("random", "lhs"):
        n = _count(count, "count") if count is not None else None
        if n is None:
            raise CaseError(f"combine: {combine} needs a count of samples", key="count")
        bounds = [ranges(parameters[k], where[k]) for k in keys]
        if combine == "lhs":
            from scipy.stats import qmc

            unit = qmc.LatinHypercube(d=len(keys), seed=seed).random(n)
        else:
            unit = np.random.default_rng(seed).random((n, len(keys)))
        out = []
        for row in unit:
            run = {}
            for k, u, (low, high, log) in zip(keys, row, bounds, strict=True):
                v = (
                    math.exp(math.log(low) + u * math.log(high / low))
                    if log
                    else low + u * (high - low)
                )
                run[k] = float(v)
            out.append(run)
        return out
    if count is not None:
        raise CaseError(f"count is for combine: random or lhs, not {combine}", key="count")
    listed = {k: values(parameters[k], where[k]) for k in keys}
    if combine == "zip":
        lengths = {k: len(v) for k, v in listed.items()}
        if len(set(lengths.values())) > 1:
            said = ", ".join(f"{k}: {n}" for k, n in lengths.items())
            raise CaseError(f"zip needs lists of one length, got {said}", key="combine")
        return [dict(zip(keys, row, strict=True)) for row in zip(*listed.values(), strict=True)]
    grid = np.array(np.meshgrid(*[np.arange(len(listed[k])) for k in keys], indexing="ij"))
    index = grid.reshape(len(keys), -1).T
    return [{k: listed[k][i] for k, i in zip(keys, row, strict=True)} for row in index]
