"""From a validated case and its mesh to the Model the integrators use.

Cross-references are resolved here, where the mesh is known: section names, node-set names,
gravity time functions. Errors name the case key that holds the bad reference.
"""

import difflib
from dataclasses import dataclass

import numpy as np

from rodsim.case.load import Case
from rodsim.case.schema import render, within
from rodsim.case.v1 import DOFS
from rodsim.errors import CaseError, Unavailable
from rodsim.mesh.assemble import Mesh, build_mesh, unknown_set_message
from rodsim.model import timefunc
from rodsim.model.assembly import Model, PointMass, build_model
from rodsim.model.loads import Gravity, NodalLoad
from rodsim.model.prescribed import Prescribed
from rodsim.model.sections import RodSection, section_from_material, section_from_resultants


@dataclass(frozen=True)
class Setup:
    """Everything run.py needs besides the solver settings."""

    case: Case
    mesh: Mesh
    model: Model
    sections: dict


def section(spec: dict, path) -> RodSection:
    """RodSection from a normalised rod-section entry."""
    try:
        if spec["material"] is not None:
            m = spec["material"]
            shape = {spec["shape"][0]: spec["shape"][1]}
            return section_from_material(m["E"], m["nu"], m["rho"], shape, spec["shear_factor"])
        return section_from_resultants(spec["EA"], spec["GA"], spec["GJ"], spec["EI"],
                                       spec["rhoA"], spec["rhoI"], spec["rhoJ"])
    except CaseError as exc:
        raise within(exc, path) from None


def time_function(spec, path, default: timefunc.TimeFunction | None = None
                  ) -> timefunc.TimeFunction:
    """TimeFunction of a normalised ``time:`` entry ((kind, value) or None -> default,
    constant 1 unless given)."""
    if spec is None:
        return timefunc.constant(1.0) if default is None else default
    kind, arg = spec
    raw = {kind: [list(p) for p in arg] if kind == "table" else arg}
    try:
        return timefunc.time_function_from_spec(raw)
    except CaseError as exc:
        raise within(exc, path) from None


def nodes_of(mesh: Mesh, name: str, path) -> np.ndarray:
    if name not in mesh.sets:
        raise CaseError(unknown_set_message(name, mesh.sets), key=render(path))
    nodes = mesh.sets[name]
    if len(nodes) == 0:
        raise CaseError(f"node set {name!r} is empty", key=render(path))
    return nodes


def _part_section_key(mesh: Mesh, data: dict, e: int):
    """The case key that gave element e its section name."""
    i = int(mesh.part[e])
    tag, spec = data["mesh"][i]
    if tag != "file":
        return ("mesh", i, tag, "section")
    name = mesh.section_names[mesh.section[e]]
    # a file part's name comes from its cell-set mapping, else from its default `section`
    cell_set = next((c for c, s in spec["sections"].items() if s == name), None)
    return ("mesh", i, "sections", cell_set) if cell_set is not None else ("mesh", i, "section")


def build(case: Case) -> Setup:
    """Mesh, sections, supports, loads and masses of a case, as a Model.

    In ``analysis: equilibrium`` time is the load multiplier: loads and prescribed motions
    without a time function are scaled by it (ramp over [0, 1])."""
    data = case.data
    static = data["solver"]["analysis"] == "equilibrium"
    default_time = timefunc.ramp(1.0) if static else None
    mesh = build_mesh(data["mesh"], data["sets"], case.resolve, data["merge_tolerance"])

    rod_sections = {}
    for e_first in np.unique(mesh.section, return_index=True)[1]:
        name = mesh.section_names[mesh.section[e_first]]
        key = _part_section_key(mesh, data, int(e_first))
        if name not in data["sections"]:
            close = difflib.get_close_matches(name, list(data["sections"]), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise CaseError(f"unknown section {name!r}{hint} (sections: "
                            f"{', '.join(data['sections']) or 'none'})", key=render(key))
        spec = data["sections"][name]
        if spec["type"] != "rod":
            raise CaseError(f"section {name!r} is a {spec['type']} section; rod elements need "
                            "type: rod", key=render(key))
        rod_sections[name] = section(spec, ("sections", name))
    per_element = [rod_sections[mesh.section_names[s]] for s in mesh.section]

    fixed = np.zeros((mesh.n_nodes, 6), dtype=bool)
    prescribed = []
    for i, bc in enumerate(data["boundary"]):
        nodes = nodes_of(mesh, bc["set"], ("boundary", i, "set"))
        if bc["fix"] is not None:
            dofs = DOFS if bc["fix"] == "all" else bc["fix"]
            for d in dofs:
                fixed[nodes, DOFS.index(d)] = True
        else:
            p = bc["prescribe"]
            prescribed.append(Prescribed(nodes, p["displacement"], p["rotation"],
                                         time_function(p["time"], ("boundary", i, "prescribe",
                                                                   "time"), default_time)))

    loads, gravity = [], []
    for i, (tag, spec) in enumerate(data["loads"]):
        tf = time_function(spec["time"], ("loads", i, "time"), default_time)
        if tag == "gravity":
            gravity.append(Gravity(spec["gravity"], tf))
            continue
        nodes = nodes_of(mesh, spec["set"], ("loads", i, "set"))
        if spec["pressure"] is not None:
            raise Unavailable("pressure acts on plates, which are not available in this version "
                            "of rodsim", key=render(("loads", i, "pressure")))
        loads.append(NodalLoad(nodes, spec["force"] or (0.0, 0.0, 0.0),
                               spec["moment"] or (0.0, 0.0, 0.0), spec["follower"], tf))
    if len({g.time for g in gravity}) > 1:
        raise CaseError("all gravity entries must share one time function (or combine them)",
                        key="loads")

    masses = []
    for i, m in enumerate(data["masses"]):
        nodes = nodes_of(mesh, m["set"], ("masses", i, "set"))
        j = m["inertia"]
        tensor = np.zeros((3, 3)) if j is None else (
            np.array(j, dtype=float) if isinstance(j[0], tuple) else np.diag(j))
        eig = np.linalg.eigvalsh(tensor)
        if eig.min() < -1e-12 * max(1.0, np.abs(tensor).max()):
            raise CaseError("expected a positive semi-definite inertia tensor, got principal "
                            f"values {', '.join(f'{v:.6g}' for v in eig)}",
                            key=render(("masses", i, "inertia")))
        masses.append(PointMass(nodes, m["mass"], tensor))

    model = build_model(mesh.points, mesh.frames, mesh.conn, per_element, fixed=fixed,
                        loads=loads, gravity=gravity, point_masses=masses,
                        end_frames=mesh.end_frames, prescribed=prescribed,
                        damping=(data["solver"]["damping"]["strain_rate"],
                                 data["solver"]["damping"]["mass"]))
    return Setup(case, mesh, model, rod_sections)

