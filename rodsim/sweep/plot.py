"""``rodsim plot SUMMARY.h5 RESULT --against P`` (a line per value of the other parameters) and
``--against P1,P2`` (a heat map): a sweep's collected number against its parameters
(docs/sweeps.md, "Plots"). Failed runs are left out."""

from pathlib import Path

import numpy as np

from rodsim.errors import CaseError
from rodsim.post.plots import _figure
from rodsim.post.replace_file import save_picture
from rodsim.sweep import summary

MAX_LINES = 12


def plot_sweep(path, result: str, against: str, output=None) -> Path:
    path = Path(path)
    table = summary.read(path)
    results = sorted(k.removeprefix("results/") for k in table if k.startswith("results/"))
    params = [k.removeprefix("parameters/") for k in table if k.startswith("parameters/")]
    if result not in results:
        raise CaseError(f"no result {result!r}; the sweep collected {', '.join(results) or 'none'}",
                        key="plot")  # fmt: skip
    axes = [a.strip() for a in (against or "").split(",") if a.strip()]
    if not 1 <= len(axes) <= 2:
        raise CaseError("give one parameter (a line) or two, P1,P2 (a heat map)",
                        key="--against")  # fmt: skip
    for a in axes:
        if a not in params:
            raise CaseError(f"unknown parameter {a!r}; the sweep varies {', '.join(params)}",
                            key="--against")  # fmt: skip
    ok = (table["status"] == "complete") & np.isfinite(table[f"results/{result}"])
    if not ok.any():
        raise CaseError(f"no complete run has a value of {result}", key="plot")
    y = table[f"results/{result}"][ok]
    cols = {p: table[f"parameters/{p}"][ok] for p in params}
    for a in axes:
        if cols[a].dtype.kind not in "fi":
            raise CaseError(f"parameter {a} is not a number", key="--against")
    safe = result + "_vs_" + "_".join(axes)
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in safe)
    output = Path(output) if output else path.with_name(f"{safe}.png")
    plt = _figure()
    fig, ax = plt.subplots(figsize=(8, 5), constrained_layout=True)
    others = [p for p in params if p not in axes]
    if len(axes) == 1:
        _lines(ax, cols, axes[0], others, y)
        ax.set_xlabel(axes[0])
        ax.set_ylabel(result)
        ax.grid(True, alpha=0.3)
    else:
        _heat(fig, ax, cols, axes, others, y, result)
    ax.set_title(f"{result} against {' and '.join(axes)} ({int(ok.sum())} runs)")
    try:
        return save_picture(fig, output, 120, path)
    finally:
        plt.close(fig)


def _lines(ax, cols, x_key, others, y) -> None:
    """One line per combination of the other parameters' values; samples (every combination
    once: random, lhs) as points."""
    groups = {}
    for i in range(len(y)):
        key = tuple(cols[o][i] for o in others)
        groups.setdefault(key, []).append(i)
    if others and all(len(rows) == 1 for rows in groups.values()):
        ax.plot(cols[x_key], y, "o", ms=4)
        return
    if len(groups) > MAX_LINES:
        raise CaseError(
            f"{len(groups)} combinations of the other parameters ({', '.join(others)}) would be "
            f"{len(groups)} lines; plot against two parameters, or sweep fewer values",
            key="--against",
        )
    for key, rows in groups.items():
        rows = np.array(rows)[np.argsort(cols[x_key][rows], kind="stable")]
        label = ", ".join(f"{o} = {v:g}" if isinstance(v, float) else f"{o} = {v}"
                          for o, v in zip(others, key, strict=True))  # fmt: skip
        ax.plot(cols[x_key][rows], y[rows], "-o", ms=4, label=label or None)
    if others:
        ax.legend(fontsize="small")


def _heat(fig, ax, cols, axes, others, y, result) -> None:
    """A grid of (P1, P2) drawn as cells; scattered samples as coloured points."""
    if any(len(np.unique(cols[o])) > 1 for o in others):
        raise CaseError(
            f"a heat map of {axes[0]} and {axes[1]} needs the other parameters fixed; "
            f"{', '.join(others)} vary",
            key="--against",
        )
    x, z = cols[axes[0]], cols[axes[1]]
    ux, uz = np.unique(x), np.unique(z)
    distinct = len(set(zip(x, z, strict=True))) == len(y)
    if distinct and len(ux) * len(uz) <= 2 * len(y):  # a grid, a failed run or so missing
        grid = np.full((len(uz), len(ux)), np.nan)
        grid[np.searchsorted(uz, z), np.searchsorted(ux, x)] = y
        image = ax.pcolormesh(_edges(ux), _edges(uz), grid, shading="flat")
    else:
        image = ax.scatter(x, z, c=y, s=40)
    fig.colorbar(image, ax=ax, label=result)
    ax.set_xlabel(axes[0])
    ax.set_ylabel(axes[1])


def _edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges around sorted centres (midpoints; the ends mirrored)."""
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    mid = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - mid[0]], mid, [2 * centres[-1] - mid[-1]]])
