"""From a validated case and its mesh to the Model the integrators use.

Cross-references are resolved here, where the mesh is known: section names, node-set names,
gravity time functions. Errors name the case key that holds the bad reference.
"""

import dataclasses
import difflib
from dataclasses import dataclass

import numpy as np

from rodsim.case.fields import DOFS
from rodsim.case.imperfection import seeded
from rodsim.case.initial_state import start_state, velocity_fields
from rodsim.case.load import Case
from rodsim.case.load_terms import LOAD_BUILDERS, LoadRows, Loads, group_factors, nodes_of
from rodsim.case.schema import render
from rodsim.case.sections import rod_section
from rodsim.case.settings import (
    CaseSettings,
    FilePart,
    Foundation,
    Mass,
    Spring,
    part_path,
)
from rodsim.case.term_builders import term_arrays
from rodsim.errors import CaseError
from rodsim.mesh.assemble import Mesh, build_mesh
from rodsim.mesh.plate_geometry import plate_node_frames
from rodsim.model import forces, mechanism, outlines, timefunc
from rodsim.model.assembly import Model, PointMass, build_model
from rodsim.model.plate import make_plates
from rodsim.model.prescribed import Prescribed
from rodsim.model.supports import Support, foundation_scale


@dataclass(frozen=True)
class Setup:
    """Everything run.py needs besides the solver settings; load_rows: LoadRows per `loads:`
    entry; motion_rows: for each `boundary:` entry that prescribes motion, by its index, its
    rows (K,) of the model's packed prescribed motions (rodsim.model.prescribed)."""

    case: Case
    mesh: Mesh
    model: Model
    sections: dict
    load_rows: tuple[LoadRows, ...] = ()
    motion_rows: dict = dataclasses.field(default_factory=dict)
    # imperfection kind displacement: (N, 6) (u, theta) the dynamics start displaced by
    displacement: np.ndarray | None = None
    # initial.from: (x, rot, p, pi) the dynamics start from (rodsim.case.initial_state)
    start: tuple | None = None
    # initial.fields: ((N,3) velocities, (N,3) angular velocities) of the nodes
    velocities: tuple | None = None
    # solver.equilibrium.path: (node, component) of the displacement followed
    path: tuple | None = None
    # the model without the holds of its free rigid motions (rodsim.model.mechanism), where
    # holds were added: a modal analysis about the equilibrium is of the free structure
    unheld: Model | None = None


def time_function(tf: timefunc.TimeFunction | None, default: timefunc.TimeFunction | None):
    """A load's or motion's time function: its own, else the default (ramp(1) in equilibrium,
    constant 1 in dynamics)."""
    if tf is not None:
        return tf
    return timefunc.constant(1.0) if default is None else default


def _part_section_key(mesh: Mesh, data: CaseSettings, e: int):
    """The case key that gave element e its section name."""
    i = int(mesh.part[e])
    spec = data.mesh[i]
    if not isinstance(spec, FilePart):
        return (*part_path(i, spec), "section")
    name = mesh.section_names[mesh.section[e]]
    # a file part's name comes from its cell-set mapping, else from its default `section`
    cell_set = next((c for c, s in spec.sections.items() if s == name), None)
    return ("mesh", i, "sections", cell_set) if cell_set is not None else ("mesh", i, "section")


def section_spec(data: CaseSettings, name: str, kind: str, key):
    """The `sections:` entry `name`, which elements of kind rod | plate use (key: where in
    the case they name it)."""
    if name not in data.sections:
        close = difflib.get_close_matches(name, list(data.sections), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CaseError(
            f"unknown section {name!r}{hint} (sections: {', '.join(data.sections) or 'none'})",
            key=render(key),
        )
    spec = data.sections[name]
    if spec.type != kind:
        raise CaseError(
            f"section {name!r} is a {spec.type} section; {kind} elements need type: {kind}",
            key=render(key),
        )
    return spec


def _plates(mesh: Mesh, data: CaseSettings):
    """(PlateElements or None, nodal frames, {"h", "allowable"} (P,) each) of the mesh's plate
    cells (allowable NaN where the material gives none)."""
    n_plates = getattr(mesh, "n_plates", 0)
    if n_plates == 0:
        return None, mesh.frames, {"h": None, "allowable": None}
    values = {k: np.zeros(n_plates) for k in ("E", "nu", "rho", "h", "k", "allowable")}
    for s in np.unique(mesh.plate_section):
        name = mesh.section_names[s]
        where = np.flatnonzero(mesh.plate_section == s)
        spec = section_spec(data, name, "plate", ("mesh", int(mesh.plate_part[where[0]])))
        m = spec.material
        for k, v in (
            ("E", m.E),
            ("nu", m.nu),
            ("rho", m.rho),
            ("h", spec.thickness),
            ("k", spec.shear_factor),
            ("allowable", np.nan if m.allowable is None else m.allowable),
        ):
            values[k][where] = v
    frames = plate_node_frames(mesh.points, mesh.frames, mesh.plates)
    try:
        plates = make_plates(
            mesh.plates,
            mesh.points,
            frames,
            values["E"],
            values["nu"],
            values["h"],
            values["rho"],
            shear_factor=values["k"],
        )
    except np.linalg.LinAlgError:
        raise CaseError(
            "a plate element is degenerate (three corners on a line: a 180-degree corner)",
            key="mesh",
        ) from None
    except ValueError as exc:
        raise CaseError(f"a plate element cannot be used: {exc}", key="mesh") from None
    return plates, frames, {"h": values["h"], "allowable": values["allowable"]}


def _check_section_foundation(
    mesh: Mesh, frames: np.ndarray, nodes: np.ndarray, spec: Foundation, path
) -> None:
    """A foundation per direction of the section frame is lumped to its nodes in the nodes'
    frames: refuse one whose rods meet at an angle within the set (a node there carries
    elements of different section frames), unless it is the same in every direction."""
    values = [spec.modulus, spec.damping or (0.0, 0.0, 0.0)]
    if mesh.end_frames is None or all(len(set(v)) == 1 for v in values):
        return
    inside = np.flatnonzero(np.isin(mesh.conn, nodes).all(axis=1))
    for e in inside:
        for side in (0, 1):
            a = mesh.conn[e, side]
            if not np.allclose(mesh.end_frames[e, side], frames[a], atol=1e-9):
                raise CaseError(
                    f"the rods of this foundation meet at an angle at node {a}, "
                    "where a modulus per section direction has no single frame; "
                    "use frame: global, the same modulus in every direction, or "
                    "one foundation per straight part",
                    key=render(path),
                )


def elastic_supports(mesh: Mesh, frames: np.ndarray, data: CaseSettings) -> list[Support]:
    """Support entries of the case's `supports:` (springs at node sets, foundations lumped to
    the nodes of the rod elements they carry); frames: the nodes' reference frames."""
    out = []
    zero = (0.0, 0.0, 0.0)
    for i, spec in enumerate(data.supports):
        if isinstance(spec, Spring):
            nodes = nodes_of(mesh, spec.set, ("supports", i, "set"))
            out.append(
                Support(
                    nodes,
                    spec.spring or zero,
                    spec.rotational_spring or zero,
                    spec.dashpot or zero,
                    spec.rotational_dashpot or zero,
                    spec.frame,
                )
            )
            continue
        nodes = nodes_of(mesh, spec.foundation, ("supports", i, "foundation"))
        length = np.linalg.norm(mesh.points[mesh.conn[:, 1]] - mesh.points[mesh.conn[:, 0]], axis=1)
        if spec.frame == "section":
            _check_section_foundation(mesh, frames, nodes, spec, ("supports", i, "frame"))
        carried, share = foundation_scale(mesh.conn, length, nodes)
        if len(carried) == 0:
            raise CaseError(
                "a foundation acts on rod elements, and this set holds none (both "
                "ends of an element must be in the set)",
                key=render(("supports", i, "foundation")),
            )
        out.append(
            Support(
                carried,
                spec.modulus,
                dashpot=spec.damping or zero,
                frame=spec.frame,
                scale=share,
            )
        )
    return out


def _claim(owner: np.ndarray, entries: tuple, i: int, nodes: np.ndarray, dofs: list[int]):
    """Record that boundary entry i holds `dofs` of `nodes`; a dof that another entry already
    prescribes, or that one fixes and the other prescribes, is an error naming both (fixing a
    dof twice is harmless)."""
    for k in dofs:
        prev = owner[nodes, k]
        clash = (prev >= 0) & (
            (entries[i].fix is None) | np.array([entries[j].fix is None for j in prev])
        )
        if np.any(clash):
            j = int(prev[np.argmax(clash)])
            node = int(nodes[np.argmax(clash)])
            how = {True: "fixed", False: "prescribed"}
            raise CaseError(
                f"node {node}: {DOFS[k]} is {how[entries[j].fix is not None]} "
                f"by boundary[{j}] and {how[entries[i].fix is not None]} here; "
                "a degree of freedom takes one condition",
                key=render(("boundary", i)),
            )
        owner[nodes, k] = i


def case_mesh(case: Case) -> Mesh:
    """The global mesh of a case: its parts generated or read, merged, its sets named."""
    data = case.settings
    return build_mesh(data.mesh, data.sets, case.resolve, data.merge_tolerance)


def build(case: Case, mesh: Mesh | None = None) -> Setup:
    """Mesh, sections, supports, loads and masses of a case, as a Model; mesh: the case's
    mesh if already built (case_mesh), so that its size can be checked first.

    An imperfection (rodsim.case.imperfection) moves the mesh's reference or gives the
    initial displacement. In ``analysis: equilibrium`` time is the load multiplier: loads and
    prescribed motions without a time function are scaled by it (ramp over [0, 1])."""
    data = case.settings
    default_time = timefunc.ramp(1.0) if data.solver.static else None
    mesh = case_mesh(case) if mesh is None else mesh
    mesh, displacement = seeded(case, mesh)
    start = start_state(case, mesh)
    velocities = velocity_fields(case, mesh, nodes_of)
    rod_sections = _rod_sections(mesh, data)
    per_element = [rod_sections[mesh.section_names[s]] for s in mesh.section]
    plates, frames, plate_stress = _plates(mesh, data)
    fixed, prescribed, motion_rows = _boundary(mesh, data.boundary, default_time)
    area = [s.geometry.shape.area if s.geometry is not None else np.nan for s in per_element]
    thickness = plate_stress["h"] if plate_stress["h"] is not None else np.zeros(0)
    terms = Loads([], [], [], [], np.asarray(area, dtype=float), thickness)
    factors = group_factors(data)
    for i, spec in enumerate(data.loads):
        tf = time_function(spec.time, default_time)
        factor = factors.get(spec.group, 1.0)
        terms.rows.append(LOAD_BUILDERS[type(spec)](mesh, spec, tf, ("loads", i), terms, factor))
    if len({g.time for g in terms.gravity}) > 1:
        raise CaseError(
            "all gravity entries must share one time function (or combine them)", key="loads"
        )
    model = build_model(
        mesh.points,
        frames,
        mesh.conn,
        per_element,
        fixed=fixed,
        loads=terms.nodal,
        gravity=terms.gravity,
        point_masses=[_mass(mesh, m, ("masses", i)) for i, m in enumerate(data.masses)],
        end_frames=mesh.end_frames,
        prescribed=prescribed,
        damping=data.solver.damping.coefficients,
        plates=plates,
        pressures=terms.pressures,
        supports=elastic_supports(mesh, frames, data),
        plate_thickness=plate_stress["h"],
        plate_allowable=plate_stress["allowable"],
        stress_points=data.output.stresses == "points",
        term_arrays=term_arrays(mesh, frames, data),
    )
    path = _path_dof(mesh, data, model)
    notes, unheld = (), None
    if data.solver.static:  # an equilibrium: free rigid motions refused, held or solved
        n = data.solver.equilibrium.load_steps if data.solver.equilibrium.path is None else 1
        held = mechanism.settle(model, data.solver.group, [(i + 1) / n for i in range(n)])
        if held.refusal is not None:
            raise CaseError(held.refusal, key="boundary")
        if data.solver.analysis == "buckling" and held.notes:  # held or a mechanism
            raise CaseError(mechanism.buckling_refusal(held.notes), key="boundary")
        if np.any(held.fixed != model.fixed):
            unheld = model
            model = dataclasses.replace(model, fixed=held.fixed)
        notes = tuple(held.notes)
    # the mesh as the model sees it (HDF5 mesh/frames, ParaView directors): plate nodes carry
    # the plates' frames
    points = stress_points(mesh.section_names, rod_sections, model.stress.n_points)
    return Setup(
        case,
        dataclasses.replace(
            mesh,
            frames=frames,
            stress_points=points,
            section_outline=section_outlines(mesh.section_names, rod_sections),
            plate_thickness=thickness.copy(),  # apart from the model's, as rodsim.resources counts
            point_stresses=data.output.stresses == "points",
            notes=mesh.notes + notes,
        ),
        model,
        rod_sections,
        tuple(terms.rows),
        motion_rows,
        displacement,
        start,
        velocities,
        path,
        unheld,
    )


def _path_dof(mesh: Mesh, data, model) -> tuple | None:
    """(node, component) of solver.equilibrium.path (docs/path_following.md), or None;
    CaseError where the path cannot be followed (see the messages)."""
    spec = data.solver.equilibrium.path
    if spec is None:
        return None
    key = ("solver", "equilibrium", "path")
    if data.solver.analysis != "equilibrium":
        raise CaseError(
            f"path following is for analysis: equilibrium, not {data.solver.analysis}",
            key=render(key),
        )
    nodes = nodes_of(mesh, spec.set, (*key, "set"))
    if len(nodes) != 1:
        raise CaseError(
            f"expected a set of one node, whose displacement the path follows; {spec.set!r} has "
            f"{len(nodes)}",
            key=render((*key, "set")),
        )
    node, comp = int(nodes[0]), DOFS.index(spec.component)
    if model.fixed[node, comp]:
        raise CaseError(
            f"{spec.component} of node {node} ({spec.set}) is held by a boundary entry: the "
            "path must follow a free displacement",
            key=render((*key, "component")),
        )
    if spec.to == 0.0:
        raise CaseError("expected a non-zero end displacement", key=render((*key, "to")))
    f, tau = forces.applied_loads(model.terms, model.x0, model.rot0, 1.0)
    if not (np.any(f) or np.any(tau)):
        raise CaseError(
            "path following scales the case's loads, and they are zero at load multiplier 1",
            key="loads",
        )
    return node, comp


def stress_points(names, rod_sections: dict, k: int) -> np.ndarray:
    """(S,K,2) the recovery points (x2, x3) of each section name (NaN-padded; NaN for plate
    sections and for rod sections given by stiffnesses): the file's mesh/stress_points."""
    out = np.full((len(names), k, 2), np.nan)
    for i, name in enumerate(names):
        geometry = getattr(rod_sections.get(name), "geometry", None)
        if geometry is not None:
            out[i, : len(geometry.points.x)] = geometry.points.x
    return out


def section_outlines(names, rod_sections: dict) -> np.ndarray:
    """(S,B,2) the outline of each section name (NaN-padded, NaN for plate sections): the
    file's mesh/section_outline (rodsim.model.outlines)."""
    drawn = {name: outlines.section_outline(s) for name, s in rod_sections.items()}
    b = max((len(o) for o in drawn.values()), default=0)
    out = np.full((len(names), b, 2), np.nan)
    for i, name in enumerate(names):
        if name in drawn:
            out[i, : len(drawn[name])] = drawn[name]
    return out


def _rod_sections(mesh: Mesh, data: CaseSettings) -> dict:
    """section name -> RodSection, for the sections the rod elements use."""
    out = {}
    for e_first in np.unique(mesh.section, return_index=True)[1]:
        name = mesh.section_names[mesh.section[e_first]]
        spec = section_spec(data, name, "rod", _part_section_key(mesh, data, int(e_first)))
        try:
            out[name] = rod_section(spec)
        except ValueError as exc:  # the validator has checked it: a guard
            raise CaseError(str(exc), key=render(("sections", name))) from None
    return out


def _boundary(mesh: Mesh, entries: tuple, default_time):
    """(fixed (N, 6) bool, Prescribed per prescribing entry, rows of each such entry by
    index) of the `boundary:` entries."""
    fixed = np.zeros((mesh.n_nodes, 6), dtype=bool)
    prescribed = []
    motion_rows = {}  # rows in pack_prescribed's order: the entries', one per node of each
    owner = np.full((mesh.n_nodes, 6), -1)  # the boundary entry that holds each dof
    for i, bc in enumerate(entries):
        nodes = nodes_of(mesh, bc.set, ("boundary", i, "set"))
        held = bc.held_dofs(DOFS)
        _claim(owner, entries, i, nodes, held)
        if bc.fix is not None:
            fixed[np.ix_(nodes, held)] = True
            continue
        p = bc.prescribe
        motion_rows[i] = _next_rows(motion_rows, len(nodes))
        tf = time_function(p.time, default_time)
        prescribed.append(Prescribed(nodes, p.displacement, p.rotation, tf))
    return fixed, prescribed, motion_rows


def _mass(mesh: Mesh, m: Mass, path) -> PointMass:
    nodes = nodes_of(mesh, m.set, (*path, "set"))
    j = m.inertia
    if j is None:
        tensor = np.zeros((3, 3))
    else:
        tensor = np.array(j, dtype=float) if isinstance(j[0], tuple) else np.diag(j)
    eig = np.linalg.eigvalsh(tensor)
    if eig.min() < -1e-12 * max(1.0, np.abs(tensor).max()):
        raise CaseError(
            "expected a positive semi-definite inertia tensor, got principal "
            f"values {', '.join(f'{v:.6g}' for v in eig)}",
            key=render((*path, "inertia")),
        )
    return PointMass(nodes, m.mass, tensor)


def _next_rows(taken: dict, count: int) -> np.ndarray:
    """The `count` rows after those of the entries in taken (their rows, in order)."""
    first = sum(len(rows) for rows in taken.values())
    return np.arange(first, first + count)
