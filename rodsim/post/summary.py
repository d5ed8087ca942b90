"""``rodsim info``: what a results file holds."""

import h5py
import numpy as np

from rodsim.case import units
from rodsim.post import display_units, plots
from rodsim.results.layout import FRAME_END_ATTR
from rodsim.results.lock import holder
from rodsim.results.reader import frame_count, layout_version, open_results, run_status


def describe(path) -> str:
    with open_results(path) as f:
        t = f["time"][: frame_count(f)]
        n = f["mesh/points"].shape[0]
        e = f["mesh/rods"].shape[0] if "mesh/rods" in f else 0
        plates = f["mesh/plates"][()] if "mesh/plates" in f else np.zeros((0, 4), np.int64)
        triangles = int(np.count_nonzero(plates[:, 3] == plates[:, 2]))
        plate_text = (
            f", {len(plates)} plate elements ({len(plates) - triangles} quads, "
            f"{triangles} triangles)"
            if len(plates)
            else ""
        )
        major, minor = layout_version(f)
        fields = []
        f.visititems(
            lambda name, obj: (
                fields.append(_field(f, name, obj, len(t)))
                if isinstance(obj, h5py.Dataset) and not name.startswith("mesh/")
                else None
            )
        )
        lines = [
            f"file      {path}",
            f"title     {f.attrs.get('title', '')}",
            f"written   rodsim {f.attrs.get('rodsim_version', '?')}, layout {major}.{minor}",
            f"mesh      {n} nodes, {e} rod elements{plate_text}, sets: "
            + ", ".join(sorted(f["mesh/sets"].keys())),
            f"status    {run_status(f).text(holder(path))}",
        ]
        system = units.from_attribute(_text(f.attrs.get("units", "")))
        if system is not None:
            lines.insert(2, f"units     {system.as_attribute()} ({_derived(system)})")
        if len(t) == 0:
            return "\n".join([*lines, "frames    0 (the run wrote no frame)"])
        steps = _step_lines(f, len(t))
        if steps:  # each step has its own time origin: the total time runs through them
            t, span = f["total_time"][: len(t)], "total time"
        else:
            span, dim = _span(f)
        unit = _unit("time" if steps else dim, system)
        lines.append(f"frames    {len(t)}, {span} {t[0]:.6g} to {t[-1]:.6g}{unit}")
        lines += steps
        k = len(t) - 1
        lines.append(
            "final     energy{} kinetic {:.6g}, internal {:.6g}, external {:.6g}, "
            "total {:.6g}".format(
                _unit("energy", system),
                *(float(f[f"energy/{q}"][k]) for q in ("kinetic", "internal", "external", "total")),
            )
        )
        lin, ang = f["momentum/linear"][k], f["momentum/angular"][k]
        lines.append(
            f"          momentum linear{_unit('mass*length/time', system)} "
            f"{np.array2string(lin, precision=6)}, angular{_unit('mass*length^2/time', system)} "
            f"{np.array2string(ang, precision=6)}"
        )
        lines += _stress_lines(f, len(t), system)
        lines += _mode_lines(f, system) + _buckling_lines(f)
        if f.attrs.get("overrides"):
            lines.append(f"overrides {f.attrs['overrides']}")
        lines.append("fields    " + "\n          ".join(fields))
        return "\n".join(lines)


def _field(f, name: str, obj, n: int) -> str:
    """A dataset's line of the fields list: its path and shape; a ragged one's (docs/results.md
    "Ragged datasets") with the least and most rows a frame of the n complete frames."""
    end = obj.attrs.get(FRAME_END_ATTR)
    if end is None:
        return f"{name} {obj.shape}"
    end = end.decode() if isinstance(end, bytes) else str(end)
    rows = np.diff(f[end][:n], prepend=0) if end in f else np.zeros(0, np.int64)
    span = f"{rows.min()} to {rows.max()} rows a frame" if len(rows) else "no frame"
    return f"{name} {obj.shape} ragged: {span}, frame k's end at {end}[k]"


def _stress_lines(f, n: int, system=None) -> list[str]:
    """The envelope of the largest von Mises stress over the run and the most utilised element
    and frame, for rods and plates (docs/stresses.md); in MPa with a declared unit system
    (display_units)."""
    show = display_units.shown(display_units.STRESS, system)
    lines = []
    for kind, group in (("rod", "rods"), ("plate", "plates")):
        # output.fields may have kept either dataset without the other: show what exists
        datasets = ((f"{group}/von_mises_max", _largest), (f"{group}/utilisation", _most))
        parts = [text(f[path][:n], f, kind, show, system) for path, text in datasets if path in f]
        parts = [p for p in parts if p]
        if parts:
            lines.append(f"stress    {kind}s: " + "; ".join(parts))
    return lines


def _largest(vm: np.ndarray, f, kind: str, show, system) -> str:
    """Where the largest von Mises stress of (F, elements) values is ("": none finite)."""
    if not np.isfinite(vm).any():
        return ""
    k, e = np.unravel_index(np.nanargmax(vm), vm.shape)
    unit = f" {show.unit}" if show.unit else ""
    return (
        f"largest von Mises {vm[k, e] * show.factor:.6g}{unit} at {kind} element {e}, "
        f"frame {k} ({plots.frame_label(f, k, system)})"
    )


def _most(util: np.ndarray, f, kind: str, show, system) -> str:
    """Where the largest utilisation of (F, elements) values is ("": none finite)."""
    if not np.isfinite(util).any():
        return ""
    k, e = np.unravel_index(np.nanargmax(util), util.shape)
    return f"most utilised: {kind} element {e}, frame {k}, utilisation {util[k, e]:.4g}"


def _mode_lines(f, system) -> list[str]:
    """The frequency table of a modal analysis (docs/modal.md); in Hz with a declared unit
    system (display_units)."""
    if "modes" not in f:
        return []
    g = f["modes"]
    show = display_units.shown(display_units.FREQUENCY, system)
    unit = f" [{show.unit}]" if show.unit else ""
    lines = [
        f"modes     {len(g['frequency'])} about the {_about(g)} "
        f"(load {float(g.attrs.get('load', 0.0)):.6g})",
        f"          mode  frequency{unit}  damping ratio  effective mass x, y, z",
    ]
    eig = g["eigenvalue"][()]
    ratios = g["damping_ratio"][()] if "damping_ratio" in g else np.full(len(eig), np.nan)
    for k, (freq, rigid) in enumerate(zip(g["frequency"][()], g["rigid"][()], strict=True)):
        note = "  rigid" if rigid else ""
        if eig[k, 1] != 0.0:
            note += f"  complex: lambda = {eig[k, 0]:.6g} {eig[k, 1]:+.6g}i (flutter)"
        mass = ", ".join(f"{m:.4g}" for m in g["effective_mass"][k, :3])
        shown = freq * show.factor
        lines.append(f"          {k + 1:4d}  {shown:14.6g}  {ratios[k]:13.4g}  {mass}{note}")
    return lines


def _buckling_lines(f) -> list[str]:
    """The load-factor table of a buckling analysis (docs/modal.md)."""
    if "buckling" not in f:
        return []
    g = f["buckling"]
    lines = [
        f"buckling  {len(g['factor'])} modes about the {_about(g)} "
        f"(load {float(g.attrs.get('load', 0.0)):.6g}); critical load = factor x the case's "
        "loads",
        "          mode  factor",
    ]
    lines += [f"          {k + 1:4d}  {v:.6g}" for k, v in enumerate(g["factor"][()])]
    return lines


def _unit(dim: str, system) -> str:
    """' [J]': the unit a number of dim is shown in (display_units), '' without one."""
    unit = display_units.shown(dim, system).unit
    return f" [{unit}]" if unit else ""


def _span(f) -> tuple[str, str]:
    """(name, dimension) of what a file's `time` is: the time, an equilibrium's load factor
    (its load multiplier, a pure number), a path's arc length."""
    if plots._is_path(f):
        return "arc length", "length"
    if plots._is_equilibrium(f):
        return "load factor", "1"
    return "time", "time"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _derived(system) -> str:
    """'force N, stress MPa, energy mJ' in a declared unit system."""
    dims = (("force", "force"), ("stress", "force/length^2"), ("energy", "force*length"))
    return ", ".join(f"{name} {system.label(dim)}" for name, dim in dims)


def _step_lines(f, n: int) -> list[str]:
    """One line per analysis step of a file with steps (docs/steps.md): its name, solver,
    frames and time span; nothing for a file of one analysis."""
    names = [_text(x) for x in f.attrs.get("steps", ())]
    if len(names) < 2 or "step" not in f:
        return []
    step, t = f["step"][:n], f["time"][:n]
    out = []
    for k, entry in enumerate(names):
        name, _, solver = entry.rpartition(": ")
        frames = np.flatnonzero(step == k)
        span = (
            f"frames {frames[0]} to {frames[-1]}, time {t[frames[0]]:.6g} to {t[frames[-1]]:.6g}"
            if len(frames)
            else "no frame"
        )
        out.append(f"step {k + 1:<4} {name}: {solver}, {span}")
    return out


def _about(group) -> str:
    """What a modes/ or buckling/ group is about, in words."""
    about = _text(group.attrs.get("about", ""))
    return "state the step before left" if about == "previous" else about
