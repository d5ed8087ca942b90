"""The typed benchmark: what rodsim.validate.loading builds from a checked ``benchmark.yaml``
and its ``reference.json``, and what the runner, the comparison and the report read.

Frozen dataclasses; every name of the files (a value, a curve, a run) is resolved here into
the object it names.
"""

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple


@dataclass(frozen=True)
class Curve:
    """A reference curve (e.g. digitised from a figure): x, y and where they come from."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    source: str
    uncertainty: str


@dataclass(frozen=True)
class Value:
    """A reference number and where it comes from (table, equation, digitised figure)."""

    value: float
    source: str
    uncertainty: str = ""


@dataclass(frozen=True)
class Quantity:
    """One compared number: ``series`` of run(s) reduced by ``reduce``, against ``reference``.

    The error is |computed - reference| / scale (scale defaults to |reference|) and passes when
    it is at most ``tolerance``. ``order`` reduces one series per run (``h``: run -> element
    size) to a frequency each and fits the slope of log|f - exact| against log h (``exact``
    names the exact frequency).
    """

    name: str
    series: str
    reduce: str
    reference: Value
    scale: float
    tolerance: float
    reason: str
    run: str = "main"
    window: tuple[float, float] = (0.0, math.inf)
    at: float | None = None
    curve: Curve | None = None
    h: tuple[tuple[str, float], ...] = ()
    exact: Value | None = None


@dataclass(frozen=True)
class Figure:
    kind: str  # "time": series against time (reference curve overlaid); "convergence"
    series: str
    curve: Curve | None
    ylabel: str


@dataclass(frozen=True)
class Run:
    """A run of the benchmark's case: its name and its --set overrides."""

    name: str
    overrides: tuple[str, ...]


@dataclass(frozen=True)
class Tier:
    """A tier (quick, full): overrides added to every run, and the runs it makes."""

    name: str
    overrides: tuple[str, ...]
    runs: tuple[str, ...]


@dataclass(frozen=True)
class Benchmark:
    name: str
    folder: Path
    number: int
    title: str
    case: Path
    citation: tuple[str, ...]
    runs: tuple[Run, ...]
    tiers: tuple[Tier, ...]
    quantities: tuple[Quantity, ...]
    figure: Figure | None
    notes: str = ""

    def overrides(self, run: str, tier: str) -> tuple[str, ...]:
        """The --set overrides of a run in a tier: the run's own, then the tier's."""
        return _named(self.runs, run).overrides + _named(self.tiers, tier).overrides

    def tier_runs(self, tier: str) -> tuple[str, ...]:
        return _named(self.tiers, tier).runs


def _named(items, name: str):
    return next(item for item in items if item.name == name)


class ReferenceFile(NamedTuple):
    """A reference.json: citation lines, values by name, curves by name."""

    citation: tuple[str, ...]
    values: dict
    curves: dict
