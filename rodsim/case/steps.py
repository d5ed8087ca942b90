"""Analysis steps (docs/steps.md): a case's `steps:` list, each step's keys merged over the
case's, and each step's settings validated as a whole case would be.

A step holds `name`, `solver` (merged key by key, nested mappings too, over the case's
`solver`), `combination` (merged over the case's) and `output` (merged over the case's). A
step after the first starts from the state the step before it left: `initial` and an
imperfection of kind displacement belong to the first step only; a modal step after the
first is about that state (its `about` is not given), and buckling is a first step only.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rodsim.case import settings as cs
from rodsim.case.schema import Field, MapOf, Number, Record, Text, fail, render, show
from rodsim.errors import CaseError

KEY = "steps"
CASE_OUTPUT = ("vtk", "compression", "fields")  # the case's only: one file, one series
EXCLUSIVE = {"every": "interval", "interval": "every"}  # output keys: one replaces the other


@dataclass(frozen=True)
class Over:
    """A mapping of some of `record`'s keys, merged over the case's (checked when merged)."""

    record: Any
    what: str

    def expected(self) -> str:
        return f"a mapping of {self.what} keys"

    def check(self, value, path):
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        names = [f.name for f in self.record.fields]
        for key in value:
            if key not in names:
                raise fail(
                    (*path, str(key)), f"unknown key {key!r}; expected one of {', '.join(names)}"
                )
        return dict(value)


def step_record(solver, output) -> Record:
    """The record of one entry of `steps:` (solver and output: the case's records)."""
    return Record(
        (
            Field("name", Text(), "the step's name (default: `step K`, K from 1)", optional=True),
            Field(
                "solver",
                Over(solver, "`solver`"),
                "`solver` keys of this step, merged over the case's `solver` (nested mappings "
                "key by key)",
                default={},
            ),
            Field(
                "combination",
                MapOf(Number(dim="1"), doc_key="GROUP"),
                "load-group factors of this step, merged over the case's `combination`",
                optional=True,
            ),
            Field(
                "output",
                Over(output, "`output`"),
                "`output` keys of this step, merged over the case's `output`",
                default={},
            ),
        ),
        doc="One analysis step (docs/steps.md).",
        into=cs.Step,
    )


def _merge(base: dict, over: Mapping) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def merged(data: dict, raw: Mapping, index: int) -> dict:
    """The case data of step `index` (0-based): the case's keys (without `steps`) with the
    step's merged over them."""
    out = {k: v for k, v in data.items() if k != KEY}
    output = raw.get("output") or {}
    for key in CASE_OUTPUT:
        if key in output:
            raise fail(
                (KEY, index, "output", key),
                f"output.{key} is the case's (one results file, one series): give it at the "
                "case level",
            )
    for key in ("solver", "output"):
        if raw.get(key):
            out[key] = _merge(out.get(key) or {}, raw[key])
    for key, other in EXCLUSIVE.items():  # a step's `every` replaces the case's `interval`
        if key in output and isinstance(out.get("output"), Mapping):
            out["output"] = {k: v for k, v in out["output"].items() if k != other}
    if raw.get("combination"):
        out["combination"] = {**(out.get("combination") or {}), **raw["combination"]}
    if index == 0:
        return out
    out.pop("initial", None)  # a later step starts from the state the one before left
    imperfection = out.get("imperfection")
    if isinstance(imperfection, Mapping) and imperfection.get("kind") == "displacement":
        out.pop("imperfection")
    solver = dict(out.get("solver") or {})
    analysis = solver.get("analysis")
    path = (KEY, index, "solver")
    if analysis == "buckling":
        raise fail(
            (*path, "analysis"),
            "buckling is a first step only (about the reference or its own preload, "
            "solver.buckling.about); for the stiffness of a later state use a modal step",
        )
    if analysis == "modal":
        if raw.get("combination"):
            raise fail(
                (KEY, index, "combination"),
                "a modal step after the first is about the state and under the loads the "
                "step before left: it has no combination of its own",
            )
        if "about" in (raw.get("solver") or {}).get("modal", {}):
            raise fail(
                (*path, "modal", "about"),
                "a modal step after the first is about the state the step before it left: "
                "leave `about` out",
            )
        inherited = ((data.get("solver") or {}).get("modal") or {}).get("about", "reference")
        if inherited != "reference":
            raise fail(
                ("solver", "modal", "about"),
                f"the case's about: {inherited} would apply to modal step {index + 1}, which "
                "is about the state the step before it left: give `about` in a first modal "
                "step only",
            )
        solver["modal"] = {**(solver.get("modal") or {}), "about": "reference"}
        out["solver"] = solver
    return out


def rekeyed(exc: CaseError, raw: Mapping, index: int) -> CaseError:
    """An error in step `index`'s merged data, at the step's own key where the step gave it,
    else said to be in that step."""
    if exc.key:
        path = [int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", exc.key)]
        node = raw
        for part in path or ["-"]:
            if not isinstance(node, Mapping) or part not in node:
                break
            node = node[part]
        else:
            return CaseError(exc.reason, key=render((KEY, index, *path)))
    return CaseError(f"{exc.reason} (in step {index + 1})", key=exc.key)


def validate(data: dict, check, steps_node) -> tuple[Any, tuple]:
    """(settings of the first step, (Step, settings) of every step) of case data with
    `steps`: check(data) validates one step's merged data (rodsim.case.v1.CASE.check)."""
    raw_steps = data[KEY]
    steps = steps_node.check(raw_steps, (KEY,))
    if not steps:
        raise fail((KEY,), "expected at least one step (or leave `steps` out)")
    out = []
    for i, raw in enumerate(raw_steps):
        try:
            out.append(check(merged(data, raw, i)))
        except CaseError as exc:
            raise rekeyed(exc, raw, i) from None
    names = [s.name or f"step {i + 1}" for i, s in enumerate(steps)]
    if len(set(names)) < len(names):
        raise fail((KEY,), f"expected distinct step names, got {', '.join(names)}")
    if [s.solver.analysis for s in out].count("modal") > 1:
        raise fail((KEY,), "expected at most one modal step (the results file holds one modes/)")
    named = tuple(
        cs.Step(n, s.solver, s.combination, s.output) for n, s in zip(names, steps, strict=True)
    )
    return out[0], tuple(zip(named, out, strict=True))
