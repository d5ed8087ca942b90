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
"""

import numpy as np

from rodsim.errors import CaseError
from rodsim.results_reader import frame_count, open_results, quaternion_matrices

_COMPONENTS = {"x": 0, "y": 1, "z": 2}
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


def read_series(path, series: str) -> tuple[np.ndarray, np.ndarray]:
    """(time, values) of a series of a results file."""
    if series.startswith("-"):
        t, v = read_series(path, series[1:])
        return t, -v
    what, comp, node_set, ref_set = parse(series)
    with open_results(path) as f:
        if what in _PER_MODE:
            group, dataset = _PER_MODE[what]
            if group not in f:
                raise CaseError(f"{path} has no {group}/ group: {what} needs {_ANALYSIS[group]}")
            values = f[f"{group}/{dataset}"][()]
            return np.arange(1.0, len(values) + 1.0), values
        n = frame_count(f)
        t = f["time"][:n]
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
            raise CaseError(
                f"unknown series {series!r}; expected displacement, position, "
                "local_displacement, reaction_force, reaction_moment, "
                "linear_momentum, angular_momentum, energy, frequency or buckling_factor"
            )
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
