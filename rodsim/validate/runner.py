"""Running a benchmark: every run of its tier through rodsim.run.prepare/execute (the path of
``rodsim run``), then every quantity reduced and compared.

Bad input or a numerical failure fails the benchmark's rows with a note.
"""

import logging
import math
import time as wallclock
from dataclasses import dataclass, field
from pathlib import Path

from rodsim.errors import CaseError, NumericalError, ResourceError
from rodsim.validate import compare
from rodsim.validate.benchmark import Benchmark, Quantity
from rodsim.validate.measure import read_series

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What a benchmark produced: table rows, its results files by run, wall time."""

    benchmark: Benchmark
    tier: str
    rows: tuple[compare.Comparison, ...]
    results: dict = field(hash=False)  # run -> results file
    wall: float = 0.0
    note: str = ""

    @property
    def status(self) -> str:
        states = {r.status for r in self.rows}
        for s in (compare.ERROR, compare.FAIL):
            if s in states:
                return s
        return compare.PASS


def run_case(case: Path, overrides, output: Path) -> Path:
    """One case through the normal path; returns the results file."""
    from rodsim import run as runner

    prep = runner.prepare(case, overrides)
    runner.execute(prep, output, vtk=False)
    return output


def _rows_for(bench: Benchmark, status: str, note: str) -> tuple[compare.Comparison, ...]:
    return tuple(
        compare.Comparison(
            bench.name, q.name, q.reference.value, math.nan, math.nan, q.tolerance, status, note
        )
        for q in bench.quantities
    )


def evaluate(bench: Benchmark, q: Quantity, results: dict) -> compare.Comparison:
    """Reduce and compare one quantity from the results files of the runs."""
    if q.reduce == "order":
        runs = [(r, h) for r, h in q.h if r in results]
        if len(runs) < 2:
            raise ValueError("fewer than two runs of the sequence in this tier")
        freqs = [
            compare.reduce(*read_series(results[r], q.series), "frequency", q.window)
            for r, _ in runs
        ]
        computed = compare.convergence_order([h for _, h in runs], freqs, q.exact.value)
        note = ", ".join(f"h={h:g}: {f:.7g}" for (_, h), f in zip(runs, freqs, strict=True))
    else:
        t, v = read_series(results[q.run], q.series)
        computed = compare.reduce(t, v, q.reduce, q.window, q.at, q.curve)
        note = ""
    error = compare.relative_error(computed, q.reference.value, q.scale)
    return compare.Comparison(
        bench.name,
        q.name,
        q.reference.value,
        computed,
        error,
        q.tolerance,
        compare.verdict(error, q.tolerance),
        note,
    )


def run_benchmark(bench: Benchmark, tier: str, workdir: Path) -> Outcome:
    """Run the tier's runs of a benchmark into workdir/<name>/ and compare."""
    started = wallclock.perf_counter()
    out = Path(workdir) / bench.name
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    try:
        for run in bench.tier_runs(tier):
            results[run] = run_case(bench.case, bench.overrides(run, tier), out / f"{run}.h5")
    except CaseError as exc:
        wall = wallclock.perf_counter() - started
        return Outcome(bench, tier, _rows_for(bench, compare.ERROR, str(exc)), {}, wall, str(exc))
    except NumericalError as exc:
        return Outcome(
            bench,
            tier,
            _rows_for(bench, compare.FAIL, f"numerical failure: {exc}"),
            results,
            wallclock.perf_counter() - started,
            str(exc),
        )
    except ResourceError as exc:  # a signal (Interrupted) stops the whole suite instead
        note = f"results incomplete: {exc}"
        return Outcome(
            bench,
            tier,
            _rows_for(bench, compare.ERROR, note),
            {},
            wallclock.perf_counter() - started,
            note,
        )
    rows = []
    for q in bench.quantities:
        if q.reduce != "order" and q.run not in results:
            continue  # a run of the full tier only
        try:
            rows.append(evaluate(bench, q, results))
        except (ValueError, CaseError) as exc:
            rows.append(
                compare.Comparison(
                    bench.name,
                    q.name,
                    q.reference.value,
                    math.nan,
                    math.nan,
                    q.tolerance,
                    compare.ERROR,
                    str(exc),
                )
            )
    return Outcome(bench, tier, tuple(rows), results, wallclock.perf_counter() - started)
