"""The benchmark suite: where it lives and which benchmarks a command line selects."""

from pathlib import Path

from rodsim.errors import CaseError
from rodsim.validate.benchmark import Benchmark
from rodsim.validate.loading import discover, load_benchmark


def default_root() -> Path:
    """validation/ next to the rodsim package (the checkout the package runs from)."""
    return Path(__file__).resolve().parents[2] / "validation"


def select(root, names=()) -> list[Benchmark]:
    """The named benchmarks (all when none), ordered by number; unknown names are a
    CaseError (exit code 2) that lists the valid ones."""
    root = Path(root) if root else default_root()
    found = discover(root)
    unknown = [n for n in names if n not in found]
    if unknown:
        raise CaseError(
            f"unknown benchmark {', '.join(unknown)}; valid names: {', '.join(found) or 'none'}",
            file=str(root),
        )
    benches = [load_benchmark(found[n]) for n in (names or found)]
    return sorted(benches, key=lambda b: b.number)
