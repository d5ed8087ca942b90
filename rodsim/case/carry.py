"""Loads carried from one analysis step into the next (docs/steps.md, "Loads across steps").

In a dynamic step every load acts with its time function of the step's own time (no time
function: 1), so a load left unchanged stays on. In an equilibrium step after the first, a
load entry without a time function goes linearly, over the step's load multiplier lambda,
from the value it had at the end of the step before to its value in this step:

    P(lambda) = ((1 - lambda) a_prev + lambda a) P,

a_prev its factor times its time function at the end of the step before (0 where the step
before was a modal analysis about the reference), a its factor in this step; so an unchanged
load stays on and a new one is ramped on. Prescribed motions without a time function are at
their full value in such a step. Entries with a time function of their own follow it, of
lambda, as in a single equilibrium analysis.
"""

import dataclasses

from rodsim.case.load_terms import group_factors
from rodsim.model import timefunc


def end_value(settings, end: float, spec) -> float:
    """A load entry's multiplier (its group's factor times its time function) at time `end`
    of the step with `settings` (None: no loads acted, 0)."""
    if settings is None:
        return 0.0
    tf = spec.time
    if tf is None:
        tf = timefunc.ramp(1.0) if settings.solver.static else timefunc.constant(1.0)
    factor = group_factors(settings).get(spec.group, 1.0)
    return factor * timefunc.value(tf, end)


def carried(settings, before, end: float):
    """The settings of an equilibrium step after the first, its loads going from those of the
    step before (settings `before` at its time `end`) to its own (see the module docstring)."""
    factors = group_factors(settings)
    loads = []
    for spec, old in zip(settings.loads, before.loads if before else settings.loads, strict=True):
        if spec.time is not None:
            loads.append(spec)
            continue
        start = end_value(before, end, old)
        table = timefunc.table([[0.0, start], [1.0, factors.get(spec.group, 1.0)]])
        loads.append(dataclasses.replace(spec, time=table, group=None))
    kept = {s.group for s in loads if s.group is not None}
    combination = settings.combination
    if combination is not None:
        combination = {g: v for g, v in combination.items() if g in kept} or None
    boundary = tuple(
        dataclasses.replace(
            b, prescribe=dataclasses.replace(b.prescribe, time=timefunc.constant(1.0))
        )
        if b.prescribe is not None and b.prescribe.time is None
        else b
        for b in settings.boundary
    )
    return dataclasses.replace(
        settings, loads=tuple(loads), combination=combination, boundary=boundary
    )
