"""Time series out of a results file, named as in ``rodsim plot``: ``WHAT[.COMPONENT][@SET]``.

- ``displacement.z@tip``, ``position.x@beam.end``: mean over the nodes of a node set;
- ``local_displacement.y@beam.end/beam.start``: displacement of SET seen from the section frame
  of a second set's node (the hub of a rotating beam): R^T (x - x_ref) - (X - X_ref);
- ``linear_momentum.x``, ``angular_momentum.norm``: totals (angular about the origin);
- ``energy.total`` (also kinetic, internal, external);
- ``reaction_force.y@support`` (also reaction_moment): the support reactions summed over a
  node set (the load a displacement-controlled point carries);
- ``load_multiplier``: the time dataset itself (equilibrium: lambda, which may turn back on a
  path followed past a limit point);
- ``frequency`` (a modal analysis' modes/frequency) and ``buckling_factor`` (a buckling
  analysis' buckling/factor): one value per mode against the mode number 1, 2, ... in place
  of time, so that ``reduce: at, at: 2`` is mode 2.

Components are x, y, z or norm; a leading ``-`` negates the series (a reference quoted as a
positive magnitude). For ``analysis: equilibrium`` the time is the load multiplier.

The reduction over space is the set's mean (positions, displacements) or sum (reactions)
unless ``over`` says another: ``max``, ``min``, ``absmax``, ``mean`` or ``sum`` of the values
of the set's nodes (displacement, position, velocity, angular_velocity, reaction_force,
reaction_moment) or of its elements (the rod quantities force, moment, strain, curvature with
the components of ``rodsim plot``, or norm; von_mises_max and utilisation of rods and plates;
the plate quantities membrane, bending, shear), which need ``over`` (docs/sweeps.md).
"""

import numpy as np

from rodsim.errors import CaseError
from rodsim.results.reader import frame_count, open_results, quaternion_matrices

_COMPONENTS = {"x": 0, "y": 1, "z": 2}
OVER = ("max", "min", "absmax", "mean", "sum")
_PER_NODE = ("displacement", "position", "velocity", "angular_velocity", "reaction_force",
             "reaction_moment")  # fmt: skip
_ELEMENT = {  # quantity -> (the datasets' group(s), component names)
    "force": (("rods",), ("axial", "shear2", "shear3")),
    "moment": (("rods",), ("torsion", "bending2", "bending3")),
    "strain": (("rods",), ("1", "2", "3")),
    "curvature": (("rods",), ("1", "2", "3")),
    "membrane": (("plates",), ("N11", "N22", "N12")),
    "bending": (("plates",), ("M11", "M22", "M12")),
    "shear": (("plates",), ("Q1", "Q2")),
    "von_mises_max": (("rods", "plates"), ()),
    "utilisation": (("rods", "plates"), ()),
}
_ENERGIES = ("total", "kinetic", "internal", "external")
# series of one value per mode (against the mode number): name -> (group, dataset)
_PER_MODE = {"frequency": ("modes", "frequency"), "buckling_factor": ("buckling", "factor")}
_ANALYSIS = {"modes": "analysis: modal", "buckling": "analysis: buckling"}


def _component(v: np.ndarray, comp: str, what: str) -> np.ndarray:
    if comp == "norm":
        return np.linalg.norm(v, axis=-1)
    if comp not in _COMPONENTS:
        raise CaseError(f"unknown component {comp!r} of {what}; expected x, y, z or norm")
    return v[..., _COMPONENTS[comp]]


def _nodes(f, name: str) -> np.ndarray:
    sets = f["mesh/sets"]
    if name not in sets:
        raise CaseError(f"no node set {name!r} in the results (sets: {', '.join(sorted(sets))})")
    return sets[name][()]


def parse(series: str) -> tuple[str, str, str | None, str | None]:
    """'local_displacement.y@a/b' -> ('local_displacement', 'y', 'a', 'b')."""
    head, _, where = series.partition("@")
    what, _, comp = head.partition(".")
    node_set, _, ref_set = where.partition("/")
    return what, comp or "norm", node_set or None, ref_set or None


def _over(values: np.ndarray, over: str) -> np.ndarray:
    """(F,) of (F,K) values reduced over K."""
    if over == "absmax":
        return np.abs(values).max(axis=1)
    return getattr(values, over)(axis=1)


def _spread(f, what: str, comp: str, node_set: str | None, n: int, over: str):
    """(F,) the values of a set's nodes or elements reduced by over."""
    if node_set is None:
        raise CaseError(f"{what} over a set needs one: {what}.{comp}@SET")
    nodes = _nodes(f, node_set)
    if what in _PER_NODE:
        if what != "displacement" and f"nodes/{what}" not in f:
            raise CaseError(f"the results file has no nodes/{what}")
        if what == "displacement":
            per = f["nodes/position"][:n][:, nodes] - f["mesh/points"][()][nodes]
        else:
            per = f[f"nodes/{what}"][:n][:, nodes]
        return _over(_component(per, comp, what), over)
    groups, names = _ELEMENT[what]
    parts = []
    for group in groups:
        if f"{group}/{what}" not in f:
            continue
        members = np.flatnonzero(np.isin(f[f"mesh/{group}"][()], nodes).all(axis=1))
        data = f[f"{group}/{what}"][:n][:, members]
        if names:
            if comp == "norm":
                data = np.linalg.norm(data, axis=-1)
            elif comp in names:
                data = data[..., names.index(comp)]
            else:
                raise CaseError(
                    f"unknown component {comp!r} of {what}; expected {', '.join(names)} or norm"
                )
        parts.append(data)
    values = np.concatenate(parts, axis=1) if parts else np.zeros((n, 0))
    if values.shape[1] == 0:
        raise CaseError(
            f"node set {node_set!r} has no element with {what} (all its nodes in the set)"
        )
    return _over(values, over)


_TOTALS = ("load_multiplier", "energy", "linear_momentum", "angular_momentum", *_PER_MODE)
_SET_MEAN = ("displacement", "position", "reaction_force", "reaction_moment")  # over: default
KNOWN = (*_TOTALS, "local_displacement", *_PER_NODE, *_ELEMENT)


def _components_of(what: str):
    """The components a series of `what` takes (None: any, it has one value)."""
    if what == "energy":
        return _ENERGIES
    if what in ("load_multiplier", *_PER_MODE):
        return ("norm",)  # no component: parse gives norm
    if what in _ELEMENT:
        names = _ELEMENT[what][1]
        return (*names, "norm") if names else ("norm",)
    return (*_COMPONENTS, "norm")


def check_series(series: str, over: str | None = None) -> None:
    """CaseError for a series (and over) that no results file can give, found from the text
    alone: an unknown quantity, a set quantity without its set, `over` where it means
    nothing or missing where it is needed."""
    what, comp, node_set, _ = parse(series.removeprefix("-"))
    if what not in KNOWN:
        raise CaseError(f"unknown series {series!r}; expected one of {', '.join(KNOWN)}")
    names = _components_of(what)
    if names is not None and comp not in names:
        raise CaseError(f"unknown component {comp!r} of {what}; expected {', '.join(names)}")
    if what in _TOTALS or what == "local_displacement":
        if over is not None:
            raise CaseError(f"{what} is not a value of a set's nodes or elements: no over")
        return
    if node_set is None:
        raise CaseError(f"{what} needs a node set: {what}.{comp}@SET")
    if over is None and what not in _SET_MEAN:
        raise CaseError(f"{what} is a value per node or element: say over: {', '.join(OVER)}")


def read_series(path, series: str, over: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(time, values) of a series of a results file; over: the reduction over the set's nodes
    or elements (module docstring; None: the set's mean, or sum for reactions)."""
    if series.startswith("-"):
        t, v = read_series(path, series[1:], over)
        return t, -v
    what, comp, node_set, ref_set = parse(series)
    if over is not None and over not in OVER:
        raise CaseError(f"expected over: one of {', '.join(OVER)}, got {over!r}")
    if over is None and (what in _ELEMENT or what in ("velocity", "angular_velocity")):
        raise CaseError(f"{what} is a value per node or element: say over: {', '.join(OVER)}")
    with open_results(path) as f:
        if what in _PER_MODE:
            group, dataset = _PER_MODE[what]
            if group not in f:
                raise CaseError(f"{path} has no {group}/ group: {what} needs {_ANALYSIS[group]}")
            values = f[f"{group}/{dataset}"][()]
            return np.arange(1.0, len(values) + 1.0), values
        n = frame_count(f)
        t = f["time"][:n]
        if over is not None and (what in _PER_NODE or what in _ELEMENT):
            return t, _spread(f, what, comp, node_set, n, over)
        if what == "load_multiplier":
            return t, t.copy()
        if what == "energy":
            if comp not in _ENERGIES:
                raise CaseError(f"unknown energy {comp!r}; expected one of {_ENERGIES}")
            return t, f[f"energy/{comp}"][:n]
        if what in ("linear_momentum", "angular_momentum"):
            return t, _component(f[f"momentum/{what.split('_')[0]}"][:n], comp, what)
        if what not in (
            "displacement",
            "position",
            "local_displacement",
            "reaction_force",
            "reaction_moment",
        ):
            raise CaseError(f"unknown series {series!r}; expected one of {', '.join(KNOWN)}")
        if node_set is None:
            raise CaseError(f"series {series!r} needs a node set: {what}.{comp}@SET")
        nodes = _nodes(f, node_set)
        if what.startswith("reaction"):
            if f"nodes/{what}" not in f:
                raise CaseError(f"{path} has no nodes/{what} (written by rodsim >= 0.2)")
            return t, _component(f[f"nodes/{what}"][:n][:, nodes].sum(axis=1), comp, what)
        x = f["nodes/position"][:n][:, nodes].mean(axis=1)
        x0 = f["mesh/points"][()][nodes].mean(axis=0)
        if what == "position":
            return t, _component(x, comp, what)
        if what == "displacement":
            return t, _component(x - x0, comp, what)
        if ref_set is None:
            raise CaseError(f"series {series!r} needs a reference set: {what}.{comp}@SET/REF")
        ref = _nodes(f, ref_set)[0]
        xr = f["nodes/position"][:n][:, ref]
        rot = quaternion_matrices(f["nodes/rotation"][:n][:, ref])
        rel0 = x0 - f["mesh/points"][()][ref]
        local = np.einsum("fji,fj->fi", rot, x - xr) - rel0
        return t, _component(local, comp, what)
