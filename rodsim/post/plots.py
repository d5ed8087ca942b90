"""``rodsim plot``: time-history PNGs of energies, momenta, the load factor or a quantity on a
node set, against time or against another curve (``--against``: a load-displacement plot).

QUANTITY@SET: a nodal quantity (position, displacement, velocity, angular_velocity,
linear_momentum, angular_momentum, rotation) on the nodes of SET, or a rod quantity (force,
moment, strain, curvature) on the elements whose two nodes are in SET; an optional component
after a dot selects one curve: x/y/z (nodal vectors), w/x/y/z (rotation), axial/shear2/shear3
(force), torsion/bending2/bending3 (moment), 1/2/3 (strain, curvature); or a plate quantity
(membrane, bending, shear) on the plates whose corners are all in SET, components
N11/N22/N12, M11/M22/M12, Q1/Q2; or a stress (von_mises_max, utilisation; docs/stresses.md)
of the rod and plate elements of SET.
"""

import textwrap
from pathlib import Path

import numpy as np

from rodsim.case import units
from rodsim.errors import CaseError
from rodsim.post import display_units
from rodsim.post.replace_file import save_picture
from rodsim.results.reader import dataset, frame_count, not_written, open_results

NODAL = (
    "position",
    "displacement",
    "velocity",
    "angular_velocity",
    "linear_momentum",
    "angular_momentum",
    "rotation",
)
RODS = ("force", "moment", "strain", "curvature")
PLATES = ("membrane", "bending", "shear")
STRESSES = ("von_mises_max", "utilisation")  # per element of rods and plates
COMPONENTS = {
    "rotation": ("w", "x", "y", "z"),
    "force": ("axial", "shear2", "shear3"),
    "moment": ("torsion", "bending2", "bending3"),
    "strain": ("1", "2", "3"),
    "curvature": ("1", "2", "3"),
    "membrane": ("N11", "N22", "N12"),
    "bending": ("M11", "M22", "M12"),
    "shear": ("Q1", "Q2"),
}
MAX_CURVES = 12
SCALARS = ("load_factor", "time", "total_time")  # per-frame datasets plotted as they are


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_results(path, what: str = "energy", output=None, against=None) -> Path:
    """Write the plot and return its path (default: <results-stem>_<what>.png, with
    _vs_<against>); against: the horizontal axis, one curve (_scalar; default time)."""
    path = Path(path)
    safe = what.replace("@", "_at_").replace("/", "_")
    if against:
        safe += "_vs_" + against.replace("@", "_at_").replace("/", "_")
    output = Path(output) if output else path.with_name(f"{path.stem}_{safe}.png")
    plt = _figure()
    fig = results_figure(path, what, against)
    try:
        return save_picture(fig, output, DPI, path)
    finally:
        plt.close(fig)


def results_figure(path, what: str = "energy", against=None):
    """The open matplotlib figure of plot_results (close it with matplotlib.pyplot.close)."""
    path = Path(path)
    plt = _figure()
    with open_results(path) as f:
        n = frame_count(f)
        stepped = "step" in f and len(np.unique(f["step"][:n])) > 1
        # analysis steps: each has its own time origin, the total time runs through them
        t = f["total_time"][:n] if stepped else f["time"][:n]
        system = display_units.system_of(f)
        xlabel = None
        if against:  # a load-displacement curve, say
            t, xlabel = _scalar(f, against, n, "--against", system)
        title = f.attrs.get("title", "") or path.stem
        fig, ax = plt.subplots(figsize=FIGSIZE, constrained_layout=True)
        if what == "energy":
            _energy(f, t, ax, n)
            ax.set_ylabel(display_units.axis_label("energy", "energy", system))
        elif what == "momentum":
            for q in ("linear", "angular"):
                data = f[f"momentum/{q}"][:n]
                for k, c in enumerate("xyz"):
                    ax.plot(t, data[:, k], label=f"{q} {c}", ls="-" if q == "linear" else "--")
            dim = units.QUANTITIES["momentum"]
            ax.set_ylabel(display_units.axis_label("total momentum", dim, system))
        elif what in SCALARS:
            ax.plot(t, _scalar(f, what, n, "WHAT", system)[0], label=what)
            ax.set_ylabel(what)
        else:
            _quantity(f, t, what, ax, n, system)
        if xlabel is not None:
            ax.set_xlabel(xlabel)
        else:
            ax.set_xlabel(time_label(f, system, stepped))
        fit_title(fig, ax, f"{title}: {what}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", ncol=2)
    return fig


# the energy ledger's curves (docs/results.md, "Energy ledger"), where the file has them
LEDGER = (
    ("external_work", "external work"),
    ("support_work", "support work"),
    ("dissipated", "dissipated"),
)


def _energy(f, t, ax, n: int) -> None:
    """The energies (kinetic, internal, external potential, total) and the energy ledger:
    the work of the loads and of moving supports, the energy dissipated (each term's too
    where more than one dissipates) and the balance, dashed; a ledger curve that is all NaN
    (an equilibrium) or all 0 (nothing does that work) is left out."""
    for q in ("kinetic", "internal", "external", "total"):
        ax.plot(t, f[f"energy/{q}"][:n], label=q)
    for q, label in LEDGER:
        values = f[f"energy/{q}"][:n] if f"energy/{q}" in f else np.zeros(0)
        if np.any(np.isfinite(values) & (values != 0.0)):
            ax.plot(t, values, label=label)
    if "energy/dissipated_by_term" in f:
        by_term = f["energy/dissipated_by_term"][:n]
        names = ledger_columns(f, by_term.shape[1])
        used = [j for j in range(by_term.shape[1]) if np.any(np.nan_to_num(by_term[:, j]) != 0)]
        if len(used) > 1:
            for j in used:
                ax.plot(t, by_term[:, j], ls=":", label=f"dissipated by {names[j]}")
    if "energy/balance" in f and np.any(np.isfinite(f["energy/balance"][:n])):
        ax.plot(t, f["energy/balance"][:n], "k--", label="balance")


def ledger_columns(f, count: int) -> list[str]:
    """The names of energy/dissipated_by_term's columns, as its description lists them (a
    file from another version of rodsim may have other terms)."""
    text = str(f["energy/dissipated_by_term"].attrs.get("description", ""))
    names = text.partition("columns ")[2].partition(" (")[0].split(", ")
    return names if len(names) == count else [f"term {j}" for j in range(count)]


FIGSIZE = (8, 4.5)  # inches
DPI = 120


def time_label(f, system, stepped: bool) -> str:
    """The name of what a file's frames run over: the time, the total time through analysis
    steps, the load factor of an equilibrium, the arc length of a path (its `time`)."""
    if stepped:
        return display_units.axis_label("total time", "time", system) + ", steps in turn"
    if _is_path(f):  # path following: time is the arc length (docs/path_following.md)
        return display_units.axis_label("arc length of the path", "length", system)
    if _is_equilibrium(f):  # the load multiplier: docs/path_following.md's load factor
        return "load factor"
    return display_units.axis_label("time", "time", system)


def frame_label(f, k: int, system) -> str:
    """What frame k of a file is at, for a legend: 'load factor = 0.5' in an equilibrium or a
    path (whose time is the load multiplier or the arc length, not a time), 'total time = 1.5
    s' through analysis steps, 't = 0.01 s' otherwise."""
    n = frame_count(f)
    if "step" in f and len(np.unique(f["step"][:n])) > 1:
        unit = display_units.shown("time", system).unit
        return f"total time = {f['total_time'][k]:.6g} {unit}".rstrip()
    if _is_equilibrium(f):
        factor = f["load_factor"][k] if "load_factor" in f else f["time"][k]  # layout < 1.5
        return f"load factor = {factor:.6g}"
    unit = display_units.shown("time", system).unit
    return f"t = {f['time'][k]:.6g} {unit}".rstrip()


def fit_title(fig, ax, text: str):
    """Set ax's title, broken at spaces onto more lines where a line would run into the 2%
    margins of the figure: a long case title with a long QUANTITY@SET ran off both edges and
    was cut. Measured as drawn: the constrained layout moves the axes, and the title centred
    over them, right of the y label."""
    title = ax.set_title(text)
    margin = 0.02 * fig.bbox.width
    chars = len(text)
    while chars > 8:
        fig.canvas.draw()
        box = title.get_window_extent()
        over = max(margin - box.x0, box.x1 - (fig.bbox.width - margin))
        if over <= 0.0:
            break
        # characters per line in proportion to the room, one fewer each time round
        chars = min(chars - 1, int(chars * (box.width - 2.0 * over) / box.width))
        title.set_text(textwrap.fill(text, max(chars, 8), break_long_words=True))
    return title


def _quantity(f, t, what: str, ax, n: int, system=None) -> None:
    name, quantity, data, labels, names, picks = _data(f, what, n)
    show = display_units.quantity_shown(name, system)
    for i, label in enumerate(labels):
        for k in picks:
            ax.plot(t, data[:, i, k] * show.factor, label=f"{label} {names[k]}".rstrip())
    ax.set_ylabel(f"{quantity} [{show.unit}]" if show.unit else quantity)


def _scalar(f, what: str, n: int, key: str, system=None):
    """(values (F,), label) of one curve: time, total_time, load_factor, or QUANTITY@SET
    with one component on one node or element (or their mean over the set), as shown
    (display_units: a stress in MPa)."""
    if what in SCALARS:
        return f[what][:n], what
    name, quantity, data, labels, names, picks = _data(f, what, n, mean=True)
    if len(picks) != 1:
        raise CaseError(
            f"expected one curve for {key}: give a component ({quantity}.{names[0]}@...), got "
            f"{what!r}",
            key="plot",
        )
    show = display_units.quantity_shown(name, system)
    unit = f" [{show.unit}]" if show.unit else ""
    return data[:, 0, picks[0]] * show.factor, f"{labels[0]} {what}{unit}"


def _data(f, what: str, n: int, mean: bool = False):
    """(name, quantity, data (F, K, C), labels (K), component names (C), picks) of
    QUANTITY@SET; mean: the set's mean when it has several nodes or elements."""
    if "@" not in what:
        raise CaseError(
            f"expected energy, momentum, load_factor or QUANTITY@SET, got {what!r}", key="plot"
        )
    quantity, set_name = what.split("@", 1)
    name, _, component = quantity.partition(".")
    nodes = node_set(f, set_name, "plot")
    if len(nodes) == 0:
        raise CaseError(f"node set {set_name!r} is empty", key="plot")
    if name in NODAL:
        if name == "displacement":
            data = f["nodes/position"][:n, nodes] - f["mesh/points"][()][nodes]
        else:
            data = dataset(f, f"nodes/{name}")[:n, nodes]  # CaseError if left out
        labels = [f"node {n}" for n in nodes]
    elif name in RODS or name in PLATES:
        elems = _elements_in(f, "rods" if name in RODS else "plates", nodes, set_name)
        data = dataset(f, f"{'rods' if name in RODS else 'plates'}/{name}")[:n, elems]
        labels = [f"element {e}" for e in elems]
    elif name in STRESSES:
        data, labels = _stresses(f, name, nodes, set_name, n)
    else:
        known = NODAL + RODS + PLATES + STRESSES
        raise CaseError(
            f"unknown quantity {name!r}; expected one of {', '.join(known)}", key="plot"
        )
    names = COMPONENTS.get(name, ("x", "y", "z") if data.shape[2] == 3 else ("",))
    picks = pick(name, component, names)
    if len(labels) * len(picks) > MAX_CURVES or (mean and len(labels) > 1):  # the set mean
        data = data.mean(axis=1, keepdims=True)
        labels = [f"mean of {len(labels)}"]
    return name, quantity, data, labels, names, picks


def node_set(f, set_name: str, key: str) -> np.ndarray:
    """The node indices (K,) of a set of a results file; CaseError (at key) naming the
    sets there is, for an unknown one."""
    sets = f["mesh/sets"] if "mesh/sets" in f else {}
    if set_name not in sets:
        names = ", ".join(sorted(sets)) or "none"
        raise CaseError(f"unknown node set {set_name!r} (sets: {names})", key=key)
    return np.asarray(sets[set_name][()], dtype=np.int64)


def pick(name: str, component: str, names: tuple) -> list[int]:
    """The indices of the components a QUANTITY.C names: [C's], or all without one;
    CaseError for an unknown one."""
    if not component:
        return list(range(len(names)))
    if names == ("",):
        raise CaseError(f"{name} has no components: write {name}@SET", key="plot")
    if component not in names:
        raise CaseError(
            f"unknown component {component!r} of {name}; expected one of {', '.join(names)}",
            key="plot",
        )
    return [names.index(component)]


def _stresses(f, name: str, nodes: np.ndarray, set_name: str, n: int):
    """(F, K, 1) values of a stress quantity on the rod and plate elements of a set, labels."""
    parts, labels = [], []
    for kind in ("rods", "plates"):
        if not_written(f, f"{kind}/{name}") and f"mesh/{kind}" in f:
            dataset(f, f"{kind}/{name}")  # CaseError: output.fields left it out
        if f"{kind}/{name}" not in f:
            continue
        elems = _members(f, kind, nodes)
        parts.append(f[f"{kind}/{name}"][:n, elems])
        labels += [f"{kind[:-1]} {e}" for e in elems]
    if not labels:
        raise CaseError(
            f"no element of node set {set_name!r} has {name} (rods given by stiffnesses have "
            "no stresses: docs/stresses.md)",
            key="plot",
        )
    return np.concatenate(parts, axis=1)[:, :, None], labels


def _members(f, kind: str, nodes: np.ndarray) -> np.ndarray:
    """The rod or plate elements of a file with all their nodes among `nodes`."""
    return np.flatnonzero(np.isin(f[f"mesh/{kind}"][()], nodes).all(axis=1))


def _elements_in(f, kind: str, nodes: np.ndarray, set_name: str) -> np.ndarray:
    """Rod or plate elements (kind "rods" or "plates") whose nodes are all in the set."""
    if f"mesh/{kind}" not in f:
        raise CaseError(f"the results file has no {kind[:-1]} elements", key="plot")
    elems = _members(f, kind, nodes)
    if len(elems) == 0:
        every = "both nodes" if kind == "rods" else "all corners"
        raise CaseError(f"no {kind[:-1]} element has {every} in set {set_name!r}", key="plot")
    return elems


def _is_equilibrium(f) -> bool:
    """Whether the file is of an equilibrium analysis (its `time` is the load multiplier):
    the analysis its case text and overrides give."""
    from rodsim.case.load import parse_yaml

    def text(key):
        raw = f.attrs.get(key, "")
        return raw.decode() if isinstance(raw, bytes) else str(raw)

    analysis = None
    try:
        analysis = (parse_yaml(text("case")) or {}).get("solver", {}).get("analysis")
    except (CaseError, AttributeError):  # no case text, or not a mapping
        pass
    for line in text("overrides").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "solver.analysis":
            analysis = value.strip()
    return analysis == "equilibrium"


def _is_path(f) -> bool:
    """Whether the file is of a path-following equilibrium (docs/path_following.md): an
    equilibrium whose load factor is not its time (the time is the arc length)."""
    n = frame_count(f)
    if n < 2 or "load_factor" not in f or not _is_equilibrium(f):
        return False
    return not np.allclose(f["load_factor"][:n], f["time"][:n])
