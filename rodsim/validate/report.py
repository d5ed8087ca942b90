"""The validation table (terminal and Markdown) and the report: README.md plus one figure per
benchmark, reference and computed curves overlaid."""

import datetime
import math
from pathlib import Path

import numpy as np

from rodsim import __version__
from rodsim.errors import CaseError
from rodsim.post.replace_file import write_through, write_whole
from rodsim.validate import compare
from rodsim.validate.measure import read_series
from rodsim.validate.runner import Outcome

HEADER = ("benchmark", "quantity", "reference", "computed", "rel. error", "tolerance", "pass")
REGENERATE = "rodsim validate --quick --report docs/validation"


def _num(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6g}"


def rows(outcomes) -> list[tuple[str, ...]]:
    """Table cells, one row per compared quantity."""
    return [
        (
            r.benchmark,
            r.quantity,
            _num(r.reference),
            _num(r.computed),
            _num(r.error),
            _num(r.tolerance),
            r.status,
        )
        for o in outcomes
        for r in o.rows
    ]


def table(outcomes) -> str:
    """The fixed-width table printed by ``rodsim validate``."""
    cells = [HEADER, *rows(outcomes)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"  {o.benchmark.name}: {o.note}" for o in outcomes if o.note]
    notes += [
        f"  {r.benchmark}, {r.quantity}: {r.note}"
        for o in outcomes
        for r in o.rows
        if r.note and r.note != o.note
    ]
    return "\n".join(lines + (["notes:", *notes] if notes else []))


def summary(outcomes) -> str:
    counts = {
        s: sum(o.status == s for o in outcomes) for s in (compare.PASS, compare.FAIL, compare.ERROR)
    }
    wall = sum(o.wall for o in outcomes)
    return (
        f"{len(outcomes)} benchmarks: {counts[compare.PASS]} passed, "
        f"{counts[compare.FAIL] + counts[compare.ERROR]} failed ({wall:.1f} s)"
    )


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(outcome: Outcome, path: Path) -> Path | None:
    """One PNG per benchmark: computed series of every run, the reference curve on top (or,
    for a convergence study, |f - exact| against h on log axes)."""
    bench, fig_spec = outcome.benchmark, outcome.benchmark.figure
    if fig_spec is None or not outcome.results:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    if fig_spec.kind == "convergence":
        q = next(q for q in bench.quantities if q.reduce == "order")
        row = next((r for r in outcome.rows if r.quantity == q.name), None)
        runs = [(r, h) for r, h in q.h if r in outcome.results]
        freqs = [
            compare.reduce(*read_series(outcome.results[r], q.series), "frequency", q.window)
            for r, _ in runs
        ]
        h = np.array([h for _, h in runs])
        err = np.abs(np.array(freqs) - q.exact.value) / q.exact.value
        ax.loglog(h, err, "o-", label=f"rodsim (order {_num(row.computed) if row else '-'})")
        ax.loglog(
            h,
            err[-1] * (h / h[-1]) ** q.reference.value,
            "k--",
            label=f"slope {q.reference.value:g}",
        )
        ax.set_xlabel("element length h")
        ax.set_ylabel("relative frequency error")
    else:
        for run, res in outcome.results.items():
            t, v = read_series(res, fig_spec.series)
            ax.plot(t, v, label=f"rodsim ({run})" if len(outcome.results) > 1 else "rodsim")
        if fig_spec.curve is not None:
            c = fig_spec.curve
            ax.plot(c.x, c.y, "o", ms=3.5, mfc="none", color="k", label=f"reference ({c.name})")
        ax.set_xlabel("time")
        ax.set_ylabel(fig_spec.ylabel)
    ax.set_title(f"{bench.number}. {bench.title} ({outcome.tier} tier)")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize="small")
    try:
        write_through(path, lambda part: fig.savefig(part, dpi=110, format="png"))
    finally:
        plt.close(fig)
    return path


def _md_table(outcomes) -> list[str]:
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows(outcomes)]
    return out


def write_report(outcomes, folder, tier: str, command: str = REGENERATE) -> Path:
    """DIR/README.md with the table, then per benchmark its sources, tolerances and figure."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    today = datetime.date.today().isoformat()
    lines = [
        "# rodsim validation report",
        "",
        f"Tier: **{tier}**{' (coarser meshes, shorter runs; see each benchmark)' if tier == 'quick' else ''}."  # noqa: E501
        f" rodsim {__version__}, generated {today}. {summary(outcomes)}.",
        "",
        f"Regenerate with `{command}` (the full tier: drop `--quick`).",
        "",
        "relative error = |computed - reference| / scale, where scale is |reference| unless the",
        "benchmark says otherwise (exact zeros and invariants are measured against a stated",
        "scale).",
        "",
        *_md_table(outcomes),
        "",
    ]
    for o in outcomes:
        b = o.benchmark
        lines += [f"## {b.number}. {b.title} (`{b.name}`)", ""]
        lines += ["Sources:", ""] + [f"- {c}" for c in b.citation] + [""]
        if b.notes:
            lines += [b.notes.strip(), ""]
        if o.note:
            lines += [f"**Status: {o.status}.** {o.note}", ""]
        lines += [
            "| quantity | reference from | tolerance | why this tolerance |",
            "|---|---|---|---|",
        ]
        for q in b.quantities:
            src = q.reference.source + (
                f" ({q.reference.uncertainty})" if q.reference.uncertainty else ""
            )
            lines.append(f"| {q.name} | {src} | {q.tolerance:g} | {q.reason} |")
        lines.append("")
        fig = figure(o, folder / f"{b.name}.png")
        if fig is not None:
            lines += [f"![{b.title}]({fig.name})", ""]
        lines += [f"Wall time: {o.wall:.1f} s.", ""]
    path = folder / "README.md"
    write_whole(path, ["\n".join(lines)])
    return path


def check_folder(folder, benches) -> None:
    """CaseError (key --report) before any benchmark runs where the report would replace a
    file that is not an earlier report's: README.md not a rodsim validation report, a
    <benchmark>.png not a PNG (rodsim.results.guard)."""
    from rodsim.results import guard as output_guard

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CaseError(f"{folder} is a file: name a folder", key="--report")
    output_guard.check(folder / "README.md", "validation report", option="--report")
    for bench in benches:
        output_guard.check(folder / f"{bench.name}.png", "png", option="--report")
