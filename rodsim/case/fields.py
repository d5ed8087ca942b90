"""Nodes shared by the case-file schema's modules (rodsim.case.v1, parts, sections): numbers of
a dimension, names, points, rules across keys, and time functions.

A time function (``time:``) is checked here and arrives as a rodsim.model.timefunc.TimeFunction;
the kinds are the registry TIME_KINDS.
"""

from collections.abc import Callable
from typing import Any, NamedTuple

from rodsim.case.schema import Field, ListOf, Number, OneOf, Path, Record, Text, Vector, fail
from rodsim.model import timefunc
from rodsim.registry import Registry

DOFS = ("ux", "uy", "uz", "rx", "ry", "rz")

POSITIVE = Number(gt=0, dim="1")
COUNT = Number(ge=1, le=1e8, integer=True, dim="1")
# no upper bound: the memory a model needs limits it, and rodsim.resources refuses a model
# whose estimate exceeds the memory available (exit code 4) before the mesh is generated
ELEMENTS = Number(ge=1, integer=True, dim="1")
NAME = Text(identifier=True)
SET_NAME = Text()  # a reference may be dotted: beam.end
POINT = Vector(item=Number(dim="length"))
DIRECTION = Vector(nonzero=True, item=Number(dim="1"))


def positive(dim: str) -> Number:
    return Number(gt=0, dim=dim)


def nonnegative(dim: str) -> Number:
    return Number(ge=0, dim=dim)


def pair(dim: str) -> Vector:
    """Two positive numbers of one dimension."""
    return Vector(n=2, item=positive(dim))


def vector(dim: str, **kw) -> Vector:
    """Three numbers of one dimension (global axes)."""
    return Vector(item=Number(dim=dim, ge=kw.pop("ge", None)), **kw)


def exactly_one(*keys):
    def rule(data, path: Path):
        given = [k for k in keys if data[k] is not None]
        if len(given) != 1:
            raise fail(
                path,
                f"expected exactly one of {', '.join(keys)}, got "
                + (", ".join(given) if given else "none"),
            )

    rule.__doc__ = f"exactly one of {', '.join(keys)}"
    return rule


def at_least_one(*keys):
    def rule(data, path: Path):
        if all(data[k] is None for k in keys):
            raise fail(path, f"expected at least one of {', '.join(keys)}")

    rule.__doc__ = f"at least one of {', '.join(keys)}"
    return rule


def at_most_one(*keys):
    def rule(data, path: Path):
        given = [k for k in keys if data[k] is not None]
        if len(given) > 1:
            raise fail(path, f"give only one of {', '.join(keys)}, got {', '.join(given)}")

    rule.__doc__ = f"at most one of {', '.join(keys)}"
    return rule


# --- time functions -----------------------------------------------------------------------------


def _increasing_times(rows, path: Path):
    for i in range(1, len(rows)):
        if not rows[i][0] > rows[i - 1][0]:
            raise fail(
                (*path, i),
                f"times must increase strictly, got t = {rows[i][0]:g} after "
                f"t = {rows[i - 1][0]:g}",
            )


class TimeKind(NamedTuple):
    node: Any
    doc: str
    make: Callable[[Any], timefunc.TimeFunction]


TIME_KINDS = Registry(
    "time function",
    {
        "constant": TimeKind(Number(dim="1"), "constant multiplier v", timefunc.constant),
        "ramp": TimeKind(positive("time"), "0 to 1 linearly over T, then 1", timefunc.ramp),
        "table": TimeKind(
            ListOf(Vector(n=2, dims=("time", "1")), min_items=1, rule=_increasing_times),
            "piecewise-linear [[t, v], ...], times strictly increasing; 0 after the last time",
            timefunc.table,
        ),
        "sine": TimeKind(
            Record(
                (
                    Field("amplitude", Number(dim="1"), "amplitude"),
                    Field("frequency", Number(dim="1/time"), "cycles per unit time"),
                    Field("phase", Number(dim="angle"), "phase (rad)", default=0.0),
                )
            ),
            "amplitude sin(2 pi frequency t + phase)",
            lambda s: timefunc.sine(s["amplitude"], s["frequency"], s["phase"]),
        ),
    },
)

TIME = OneOf(
    tuple((name, k.node, k.doc) for name, k in TIME_KINDS),
    into=lambda kind, value: TIME_KINDS[kind].make(value),
)
