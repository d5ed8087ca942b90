"""``rodsim plot RESULTS QUANTITY@SET --along``: a quantity along a rod, against the arc length
of its reference configuration, at chosen frames, with the envelope over all frames
(docs/running.md, "rodsim plot").

The rod is the chain of the rod elements whose two nodes are in SET (a part's `all` set, say),
walked from an end (a ring: from its lowest-numbered element). Element quantities (force,
moment, strain, curvature) sit at the elements' midpoints, nodal ones (position,
displacement, velocity, ...) at the nodes; s is the sum of the reference element lengths.
"""

from pathlib import Path

import numpy as np

from rodsim.errors import CaseError
from rodsim.post import display_units, plots
from rodsim.post.plots import (
    COMPONENTS,
    DPI,
    FIGSIZE,
    NODAL,
    RODS,
    _elements_in,
    _figure,
    fit_title,
    node_set,
    pick,
)
from rodsim.post.replace_file import save_picture
from rodsim.results.reader import dataset, frame_count, open_results


class Along:
    """A diagram's data: s (K,) the arc length of the K positions, values (F, K, C) over
    every frame, components (C,) names, kind "element" or "node"."""

    def __init__(self, s, values, components, kind):
        self.s = s
        self.values = values
        self.components = components
        self.kind = kind


def chain(conn: np.ndarray, elems: np.ndarray, set_name: str):
    """(elements in chain order, their first nodes, the last node): the elements elems of
    conn (E,2) walked end to end. CaseError where they are not one chain."""
    sub = conn[elems]
    nodes, counts = np.unique(sub, return_counts=True)
    ends = nodes[counts == 1]
    if np.any(counts > 2) or len(ends) not in (0, 2):
        raise CaseError(
            f"the rod elements of node set {set_name!r} do not form one chain (it branches "
            "or has several pieces); --along needs one, e.g. a part's `all` set",
            key="plot",
        )
    at = {}
    for i, (a, b) in enumerate(sub):
        at.setdefault(int(a), []).append(i)
        at.setdefault(int(b), []).append(i)
    node = int(ends.min()) if len(ends) else int(sub[0, 0])
    order, firsts, used = [], [], set()
    for _ in range(len(sub)):
        nxt = [i for i in at[node] if i not in used]
        if not nxt:
            break
        i = min(nxt)
        used.add(i)
        order.append(i)
        firsts.append(node)
        a, b = (int(v) for v in sub[i])
        node = b if a == node else a
    if len(order) != len(sub):
        raise CaseError(
            f"the rod elements of node set {set_name!r} are in several pieces; --along needs "
            "one chain",
            key="plot",
        )
    return elems[order], np.array(firsts), node


def along(f, what: str, n: int) -> Along:
    """The data of a diagram of QUANTITY[.C]@SET along its rod (see the module docstring)."""
    if "@" not in what:
        raise CaseError(f"--along plots QUANTITY@SET, got {what!r}", key="plot")
    quantity, set_name = what.split("@", 1)
    name, _, component = quantity.partition(".")
    nodes = node_set(f, set_name, "plot")
    if name not in NODAL + RODS:
        raise CaseError(
            f"--along plots a nodal or rod quantity ({', '.join(NODAL + RODS)}), got {name!r}",
            key="plot",
        )
    elems = _elements_in(f, "rods", nodes, set_name)
    conn = f["mesh/rods"][()]
    points = f["mesh/points"][()]
    ordered, firsts, last = chain(conn, elems, set_name)
    path_nodes = np.append(firsts, last)
    lengths = np.linalg.norm(points[path_nodes[1:]] - points[path_nodes[:-1]], axis=1)
    s_nodes = np.concatenate([[0.0], np.cumsum(lengths)])
    if name in RODS:
        values = dataset(f, f"rods/{name}")[:n][:, ordered]
        s, kind = 0.5 * (s_nodes[:-1] + s_nodes[1:]), "element"
    else:
        if name == "displacement":
            values = f["nodes/position"][:n][:, path_nodes] - points[path_nodes]
        else:
            values = dataset(f, f"nodes/{name}")[:n][:, path_nodes]
        s, kind = s_nodes, "node"
    names = COMPONENTS.get(name, ("x", "y", "z"))
    picks = pick(name, component, names)
    return Along(s, values[:, :, picks], tuple(names[k] for k in picks), kind)


def _frames(spec: str, n: int) -> list[int]:
    """Frame indices of a --frames list '0,10,-1' (negative from the end)."""
    out = []
    for part in spec.split(","):
        try:
            k = int(part)
        except ValueError:
            raise CaseError(
                f"expected frame numbers like 0,10,-1, got {spec!r}", key="--frames"
            ) from None
        if not -n <= k < n:
            raise CaseError(f"the file holds {n} frames; got frame {k}", key="--frames")
        out.append(k % n)
    return out


def plot_along(path, what: str, output=None, frames: str = "-1", envelope: bool = False):
    """Write the diagram of QUANTITY@SET along its rod at the frames (a list '0,-1') and,
    with envelope, the band between its least and largest value over all frames; return
    (the PNG's path, the Along data, as stored: display units scale only the picture)."""
    path = Path(path)
    safe = what.replace("@", "_at_").replace("/", "_")
    output = Path(output) if output else path.with_name(f"{path.stem}_{safe}_along.png")
    plt = _figure()
    fig, data = along_figure(path, what, frames, envelope)
    try:
        return save_picture(fig, output, DPI, path), data
    finally:
        plt.close(fig)


def along_figure(path, what: str, frames: str = "-1", envelope: bool = False):
    """(the open matplotlib figure of plot_along, the Along data); close it with
    matplotlib.pyplot.close."""
    path = Path(path)
    plt = _figure()
    with open_results(path) as f:
        n = frame_count(f)
        if n == 0:
            raise CaseError("the file holds no frame", key="plot")
        data = along(f, what, n)
        picked = _frames(frames, n)
        title = f.attrs.get("title", "") or path.stem
        system = display_units.system_of(f)
        labels = {k: plots.frame_label(f, k, system) for k in picked}
    quantity = what.split("@", 1)[0]
    show = display_units.quantity_shown(quantity.partition(".")[0], system)
    values = data.values * show.factor  # a stress in MPa (display_units)
    fig, ax = plt.subplots(figsize=FIGSIZE, constrained_layout=True)
    style = "-" if data.kind == "node" else "-o"
    for j, comp in enumerate(data.components):
        if envelope:
            low, high = values[:, :, j].min(axis=0), values[:, :, j].max(axis=0)
            ax.fill_between(data.s, low, high, alpha=0.2, label=f"{comp} envelope".strip())
        for k in picked:
            ax.plot(data.s, values[k, :, j], style, ms=3, label=f"{comp} {labels[k]}".strip())
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xlabel(display_units.axis_label("arc length along the rod", "length", system))
    ax.set_ylabel(f"{quantity} [{show.unit}]" if show.unit else quantity)
    fit_title(fig, ax, f"{title}: {what} along the rod")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    return fig, data
