"""The results file format (docs/results.md): one table of datasets drives the HDF5 writer,
the readers and the documentation.

Layout versioning: ``layout`` is the major version, ``layout_minor`` counts additive changes
(new datasets, new attributes) to it. Readers ignore datasets they do not know and read a
missing optional dataset as absent, so files of any minor version read alike. A change of
shape or meaning of an existing dataset is a new major layout: it gets its own reader adapter
in ADAPTERS, and the adapters of older layouts stay, so that every file rodsim wrote keeps
reading.

Reading (layout adapters, run status): rodsim.results.reader; writing (crash safety, disk
space, run status): rodsim.results.writer and rodsim.results.storage.
"""

import sys
from typing import NamedTuple

from rodsim.mesh.assemble import Mesh
from rodsim.terms import TERMS

LAYOUT = 1
# 1: layout_minor itself and a description on every mesh dataset; 2: the run status
# attributes and solver/off_schedule; 3: the units attribute; 4: stresses, modes, buckling;
# 5: analysis steps (step, load_factor, total_time) and the restart/ group; 6: what rodsim render
# draws (mesh/rod_frames, mesh/section_outline, mesh/plate_thickness); 7: output.fields (the
# `fields` attribute; the datasets it leaves out are absent); 8: the energy ledger
# (energy/external_work, support_work, dissipated, dissipated_by_term, balance); 9: the terms'
# own datasets (Term.datasets: mesh/connectors, connectors/*)
LAYOUT_MINOR = 9

# when a dataset is in the file
ALWAYS = "always"
RODS = "rods"  # the mesh has rod elements (E > 0)
PLATES = "plates"  # the mesh has plates (P > 0)
ROD_STRESS = "rod stresses"  # rods, and sections with a shape (R > 0 recovery points)
POINT_STRESS = "point stresses"  # rod stresses, and output.stresses: points
TERM = "term"  # the model has the term that declares it (Dataset.term): Term.datasets

SETS = "mesh/sets"  # one dataset per node set, named after the set

# output.fields (docs/results.md, "Choosing the datasets"): the per-frame datasets of these
# groups may be left out, all but the nodes' positions and rotations (the motion itself, which
# every reader and the ParaView series draw). What else a frame holds (time, steps, energies,
# solver counters, total momenta) is a few scalars and always written.
# (and every per-frame dataset a term declares: its group, TERM_GROUPS, with GROUP/*)
CHOOSABLE_GROUPS = ("nodes", "rods", "plates")
ALWAYS_WRITTEN = ("nodes/position", "nodes/rotation")
FIELDS_ATTR = "fields"  # file attribute: the choosable datasets the run chose (layout 1.7)
POINT_STRESSES_ATTR = "point_stresses"  # file attribute: output.stresses: points (layout 1.7)


class Dataset(NamedTuple):
    """One dataset of the layout.

    path: HDF5 path; ``{name}`` stands for each key of a dict-valued source.
    shape: per frame for per-frame datasets (everything outside mesh/; the file adds the frame
    axis F in front), whole for mesh/ datasets: ints and the sizes N (nodes), E (rod
    elements), P (plate elements), K (nodes of the set).
    source: the Frame attribute (per-frame) or Mesh attribute (mesh/) written; "terms" for a
    term's dataset (Frame.terms[path]).
    units: in the case's own consistent units ("1": dimensionless, "index": 0-based).
    description: also the dataset's "description" attribute in the file.
    present: ALWAYS, RODS, PLATES, ROD_STRESS, POINT_STRESS, or TERM (term: the term's name).
    optional: readers accept files without it although it is written ALWAYS (it came after
    the first files of the layout); datasets added by a minor version must set it.
    dtype: f8 for every per-frame dataset but the flag solver/off_schedule (i8).
    names: Mesh attribute holding the names that an integer code indexes (attribute "names").
    since: the layout_minor that added an optional dataset (0: during layout 1.0).
    term: the rodsim.terms term that declares it (Term.datasets); None: the layout's own.
    """

    path: str
    shape: tuple
    source: str
    units: str
    description: str
    present: str = ALWAYS
    optional: bool = False
    dtype: str = "f8"
    names: str | None = None
    since: int = 0
    term: str | None = None

    @property
    def per_frame(self) -> bool:
        return not self.path.startswith("mesh/")

    @property
    def choosable(self) -> bool:
        """Whether output.fields may leave it out (CHOOSABLE_GROUPS, a term's own)."""
        group = self.path.partition("/")[0]
        ours = group in CHOOSABLE_GROUPS or self.term is not None
        return self.per_frame and ours and self.path not in ALWAYS_WRITTEN

    @property
    def may_be_absent(self) -> bool:
        return self.optional or self.present != ALWAYS

    @property
    def container(self) -> str:
        """What the file holds: the dataset, or the group of a family of named datasets."""
        return self.path.removesuffix("/{name}")


# the columns of energy/dissipated_by_term: the terms that can dissipate (viscous damping, or
# dissipation their state keeps), in the order of rodsim.terms.TERMS
DISSIPATING = tuple(
    t.name
    for t in TERMS
    if t.damping is not None or t.step_damping is not None or t.dissipated is not None
)
_LEDGER = "dynamic runs; NaN in equilibrium, path-following and modal frames"

_D = Dataset
# The order is the order of creation in the file and of the documentation.
DATASETS = (
    _D("mesh/points", ("N", 3), "points", "length", "reference node positions"),
    _D("mesh/frames", ("N", 3, 3), "frames", "1", "reference nodal frames, columns d1 d2 d3"),
    _D(
        "mesh/rods",
        ("E", 2),
        "conn",
        "index",
        "rod element connectivity (two node indices)",
        RODS,
        dtype="i8",
    ),
    _D(
        "mesh/rod_section",
        ("E",),
        "section",
        "index",
        "section of each rod element, an index into the names attribute",
        RODS,
        dtype="i8",
        names="section_names",
    ),
    _D(
        "mesh/rod_part",
        ("E",),
        "part",
        "index",
        "part of each rod element, an index into the names attribute",
        RODS,
        dtype="i8",
        names="part_names",
    ),
    _D(
        "mesh/plates",
        ("P", 4),
        "plates",
        "index",
        "plate connectivity going round the element; triangles repeat their last node",
        PLATES,
        dtype="i8",
    ),
    _D(
        "mesh/plate_section",
        ("P",),
        "plate_section",
        "index",
        "section of each plate element, an index into the names attribute (the rods' names)",
        PLATES,
        dtype="i8",
        names="section_names",
    ),
    _D(
        "mesh/plate_part",
        ("P",),
        "plate_part",
        "index",
        "part of each plate element, an index into the names attribute (the rods' names)",
        PLATES,
        dtype="i8",
        names="part_names",
    ),
    _D(
        SETS + "/{name}",
        ("K",),
        "sets",
        "index",
        "the sorted node indices of the node set",
        dtype="i8",
    ),
    _D(
        "mesh/stress_points",
        ("S", "R", 2),
        "stress_points",
        "length",
        "stress recovery points (x2, x3) of each section (index as mesh/rod_section), NaN for "
        "sections without a shape and beyond a section's own points (docs/stresses.md)",
        ROD_STRESS,
        optional=True,
        since=4,
    ),
    _D(
        "mesh/rod_frames",
        ("E", 2, 3, 3),
        "end_frames",
        "1",
        "reference section frames at the two ends of each rod element, columns d1 d2 d3 (they "
        "differ from mesh/frames where rods meet at an angle); current: R(q) times them",
        RODS,
        optional=True,
        since=6,
    ),
    _D(
        "mesh/section_outline",
        ("S", "B", 2),
        "section_outline",
        "length",
        "outer outline (x2, x3) of each section (index as mesh/rod_section), counter-clockwise, "
        "NaN-padded; a section given by stiffnesses: the ellipse of its radii of gyration; "
        "NaN for plate sections (docs/render.md)",
        RODS,
        optional=True,
        since=6,
    ),
    _D(
        "mesh/plate_thickness",
        ("P",),
        "plate_thickness",
        "length",
        "thickness of each plate element",
        PLATES,
        optional=True,
        since=6,
    ),
    _D("nodes/position", ("N", 3), "position", "length", "current node positions"),
    _D(
        "nodes/rotation",
        ("N", 4),
        "rotation",
        "1",
        "unit quaternions (w, x, y, z) of the reference-to-current section frame",
    ),
    _D("nodes/velocity", ("N", 3), "velocity", "length/time", "spatial velocity"),
    _D(
        "nodes/angular_velocity", ("N", 3), "angular_velocity", "1/time", "spatial angular velocity"
    ),
    _D(
        "nodes/linear_momentum",
        ("N", 3),
        "linear_momentum",
        "mass length/time",
        "spatial nodal linear momentum (discrete Legendre transform)",
    ),
    _D(
        "nodes/angular_momentum",
        ("N", 3),
        "angular_momentum",
        "mass length^2/time",
        "spatial nodal angular momentum about the node",
    ),
    _D(
        "nodes/reaction_force",
        ("N", 3),
        "reaction_force",
        "force",
        "force of the supports on the node: in fixed components minus the element forces "
        "and applied loads, elsewhere the elastic supports' force (0 without them)",
        optional=True,
    ),
    _D(
        "nodes/reaction_moment",
        ("N", 3),
        "reaction_moment",
        "force length",
        "moment of the supports on the node about the node: in fixed components minus the "
        "element moments and applied moments, elsewhere the elastic supports' moment",
        optional=True,
    ),
    _D(
        "rods/force",
        ("E", 3),
        "force",
        "force",
        "stress resultant in the section frame: axial, shear2, shear3",
        RODS,
    ),
    _D(
        "rods/moment",
        ("E", 3),
        "moment",
        "force length",
        "stress couple in the section frame: torsion, bending2, bending3",
        RODS,
    ),
    _D("rods/strain", ("E", 3), "strain", "1", "Gamma - Gamma0 in the section frame", RODS),
    _D(
        "rods/curvature",
        ("E", 3),
        "curvature",
        "1/length",
        "Omega - Omega0 in the section frame",
        RODS,
    ),
    _D(
        "rods/stress",
        ("E", "R", 3),
        "rod_stress",
        "force/length^2",
        "sigma11, tau12, tau13 at the recovery points of the element's section (its centre, "
        "section frame; NaN without a shape)",
        POINT_STRESS,
        optional=True,
        since=4,
    ),
    _D(
        "rods/von_mises",
        ("E", "R"),
        "rod_von_mises",
        "force/length^2",
        "von Mises stress at the recovery points",
        POINT_STRESS,
        optional=True,
        since=4,
    ),
    _D(
        "rods/von_mises_max",
        ("E",),
        "rod_von_mises_max",
        "force/length^2",
        "largest von Mises stress over the element's recovery points",
        ROD_STRESS,
        optional=True,
        since=4,
    ),
    _D(
        "rods/utilisation",
        ("E",),
        "rod_utilisation",
        "1",
        "von_mises_max / the material's allowable stress (NaN without one)",
        ROD_STRESS,
        optional=True,
        since=4,
    ),
    _D(
        "plates/membrane",
        ("P", 3),
        "plate_membrane",
        "force/length",
        "membrane forces per length N11, N22, N12 at the element centre, in the element basis",
        PLATES,
    ),
    _D(
        "plates/bending",
        ("P", 3),
        "plate_bending",
        "force length/length",
        "bending moments per length M11, M22, M12 at the element centre, in the element basis",
        PLATES,
    ),
    _D(
        "plates/shear",
        ("P", 2),
        "plate_shear",
        "force/length",
        "transverse shear forces per length Q1, Q2 at the element centre, in the element basis",
        PLATES,
    ),
    _D(
        "plates/stress",
        ("P", 3, 5),
        "plate_stress",
        "force/length^2",
        "s11, s22, s12, t13, t23 at the top (+h/2 along d3), middle and bottom of the element "
        "centre, element basis",
        PLATES,
        optional=True,
        since=4,
    ),
    _D(
        "plates/von_mises",
        ("P", 3),
        "plate_von_mises",
        "force/length^2",
        "von Mises stress at the top, middle and bottom",
        PLATES,
        optional=True,
        since=4,
    ),
    _D(
        "plates/von_mises_max",
        ("P",),
        "plate_von_mises_max",
        "force/length^2",
        "largest of plates/von_mises",
        PLATES,
        optional=True,
        since=4,
    ),
    _D(
        "plates/utilisation",
        ("P",),
        "plate_utilisation",
        "1",
        "von_mises_max / the material's allowable stress (NaN without one)",
        PLATES,
        optional=True,
        since=4,
    ),
    _D(
        "time",
        (),
        "time",
        "time",
        "simulated time (equilibrium: load multiplier; path following: the arc length "
        "travelled, a length)",
    ),
    _D(
        "step",
        (),
        "step",
        "index",
        "the analysis step of the frame (0-based; 0 in a case without steps); time starts "
        "from 0 in each step",
        optional=True,
        dtype="i8",
        since=5,
    ),
    _D(
        "load_factor",
        (),
        "load_factor",
        "1",
        "the multiplier of the step's loads: equilibrium the load multiplier, dynamic 1 (the "
        "loads' time functions act), modal and buckling the load the state is at",
        optional=True,
        since=5,
    ),
    _D(
        "total_time",
        (),
        "total_time",
        "time",
        "time since the start of the first step: each step's time added to the total of the "
        "steps before it (an equilibrium step counts 1, a modal or buckling step 0)",
        optional=True,
        since=5,
    ),
    _D("energy/kinetic", (), "kinetic", "energy", "kinetic energy"),
    _D(
        "energy/internal",
        (),
        "internal",
        "energy",
        "strain energy of the elements and the elastic supports",
    ),
    _D(
        "energy/external",
        (),
        "external",
        "energy",
        "potential of conservative loads (gravity), 0 otherwise",
    ),
    _D("energy/total", (), "total", "energy", "kinetic + internal + external"),
    _D(
        "energy/external_work",
        (),
        "external_work",
        "energy",
        "work of the applied loads since the start of the analysis step, beyond what their "
        "potential (energy/external) accounts for: the integral of their power plus "
        f"external(t) - external(t0); 0 for gravity alone ({_LEDGER})",
        optional=True,
        since=8,
    ),
    _D(
        "energy/support_work",
        (),
        "support_work",
        "energy",
        "work of the supports' reactions on prescribed motions since the start of the analysis "
        f"step (0 for supports that hold still; {_LEDGER})",
        optional=True,
        since=8,
    ),
    _D(
        "energy/dissipated",
        (),
        "dissipated",
        "energy",
        f"energy dissipated since the start of the analysis step, all terms ({_LEDGER})",
        optional=True,
        since=8,
    ),
    _D(
        "energy/dissipated_by_term",
        (len(DISSIPATING),),
        "dissipated_by_term",
        "energy",
        "energy dissipated since the start of the analysis step by each term, columns "
        + ", ".join(DISSIPATING)
        + f" ({_LEDGER})",
        optional=True,
        since=8,
    ),
    _D(
        "energy/balance",
        (),
        "balance",
        "energy",
        "kinetic + internal + external - external_work - support_work + dissipated: constant, "
        "its value at the start of the analysis step, to the scheme's accuracy "
        f"({_LEDGER})",
        optional=True,
        since=8,
    ),
    _D(
        "solver/dt",
        (),
        "dt",
        "time",
        "time step (adaptive implicit steps: the last step before the frame); equilibrium: "
        "the last pseudo-time step of the load step (inf when Newton "
        "alone converged); path following: the step's arc length",
    ),
    _D(
        "solver/iterations",
        (),
        "iterations",
        "count",
        "explicit: largest nodal rotation-solve iteration count since the previous frame; "
        "implicit: largest Newton iteration count of the steps since the previous frame "
        "(adaptive: a step's solves together); "
        "equilibrium: Newton iterations of the load step",
    ),
    _D(
        "solver/residual",
        (),
        "residual",
        "1",
        "explicit: NaN (no global residual; local solves converge to solver.rotation_tol); "
        "implicit: largest final Newton residual of the steps since the previous frame, "
        "relative to the step's momenta and impulse; equilibrium: final residual relative to "
        "loads plus reactions",
    ),
    _D(
        "solver/lowest_eigenvalue",
        (),
        "lowest_eigenvalue",
        "1/time^2",
        "equilibrium with solver.equilibrium.eigenvalue: the lowest eigenvalue omega^2 of the "
        "tangent about the state, rigid modes left out (it crosses zero at a critical point); "
        "NaN otherwise",
        optional=True,
        since=4,
    ),
    _D(
        "solver/off_schedule",
        (),
        "off_schedule",
        "1",
        "1 for a frame written off the output schedule: the state when a signal stopped the "
        "run (its last frame); 0 otherwise",
        optional=True,
        dtype="i8",
        since=2,
    ),
    _D("momentum/linear", (3,), "total_linear", "mass length/time", "total linear momentum"),
    _D(
        "momentum/angular",
        (3,),
        "total_angular",
        "mass length^2/time",
        "total angular momentum about the origin",
    ),
)
MESH_DATASETS = tuple(d for d in DATASETS if not d.per_frame)
FRAME_DATASETS = tuple(d for d in DATASETS if d.per_frame)


def _term_datasets() -> tuple:
    """The datasets the terms declare (Term.datasets), in the order of TERMS: a term's
    per-frame datasets in a group of its own (its GROUP/* a name of output.fields), its mesh
    ones under mesh/. They are not in DATASETS: a Frame holds them in Frame.terms, keyed by
    path, and a file has them where the model has the term (TERM)."""
    out = []
    for t in TERMS:
        for spec in t.datasets or ():
            out.append(Dataset(source="terms", present=TERM, optional=True, term=t.name, **spec))
    taken = {d.path for d in DATASETS} | {d.path.partition("/")[0] for d in FRAME_DATASETS}
    for d in out:
        group = d.path.partition("/")[0]
        if d.path in taken or (d.per_frame and group in taken):
            raise ValueError(f"term {d.term}: dataset {d.path} clashes with the layout's")
        taken.add(d.path)
    return tuple(out)


TERM_DATASETS = _term_datasets()
TERM_MESH_DATASETS = tuple(d for d in TERM_DATASETS if not d.per_frame)
TERM_FRAME_DATASETS = tuple(d for d in TERM_DATASETS if d.per_frame)
# the groups of the terms' per-frame datasets (connectors/), in order
TERM_GROUPS = tuple(dict.fromkeys(d.path.partition("/")[0] for d in TERM_FRAME_DATASETS))

CHOOSABLE = tuple(d.path for d in (*FRAME_DATASETS, *TERM_FRAME_DATASETS) if d.choosable)
# the names output.fields takes: each choosable dataset, and GROUP/* for all of a group's
FIELD_NAMES = CHOOSABLE + tuple(f"{g}/*" for g in (*CHOOSABLE_GROUPS, *TERM_GROUPS))


def chosen_datasets(names) -> frozenset:
    """The choosable dataset paths that output.fields names (GROUP/* expanded); names None
    (the key not given): every one of them."""
    if names is None:
        return frozenset(CHOOSABLE)
    out = set()
    for name in names:
        group = name.removesuffix("/*") + "/" if name.endswith("/*") else None
        out.update(p for p in CHOOSABLE if p == name or (group and p.startswith(group)))
    return frozenset(out)


def is_chosen(d: Dataset, chosen: frozenset | None) -> bool:
    """Whether output.fields keeps dataset d (chosen: chosen_datasets; None: everything)."""
    return not d.choosable or chosen is None or d.path in chosen


def written_fields(f) -> frozenset | None:
    """The choosable datasets a results file's run chose (its `fields` attribute), or None
    for a file from before output.fields (layout < 1.7), whose run wrote all it had."""
    if FIELDS_ATTR not in f.attrs:
        return None
    return frozenset(x.decode() if isinstance(x, bytes) else str(x) for x in f.attrs[FIELDS_ATTR])


def is_present(d: Dataset, mesh: Mesh) -> bool:
    stress = mesh.n_elements > 0 and mesh.stress_points.shape[1] > 0
    return {
        ALWAYS: True,
        RODS: mesh.n_elements > 0,
        PLATES: mesh.n_plates > 0,
        ROD_STRESS: stress,
        POINT_STRESS: stress and mesh.point_stresses,
    }[d.present]


def sizes_of(mesh) -> dict:
    """The size letters of a mesh's datasets (an assemble.Mesh or a results.ResultsMesh): N
    nodes, E rod elements, P plates, S sections, R stress recovery points per section, B
    points of the longest section outline."""
    return {
        "N": len(mesh.points),
        "E": len(mesh.conn),
        "P": len(mesh.plates),
        "S": len(mesh.section_names),
        "R": mesh.stress_points.shape[1],
        "B": mesh.section_outline.shape[1],
    }


def concrete_shape(shape: tuple, sizes: dict) -> tuple:
    """The shape with the size letters replaced by sizes[letter]."""
    return tuple(sizes[s] if isinstance(s, str) else s for s in shape)


# --- documentation ------------------------------------------------------------------------

_PRESENT_TEXT = {
    ALWAYS: "always",
    RODS: "with rod elements",
    PLATES: "with plates",
    ROD_STRESS: "with rod sections that have a shape",
    POINT_STRESS: "with rod sections that have a shape, and `output.stresses: points`",
}


def _shape_text(d: Dataset) -> str:
    dims = ("F", *d.shape) if d.per_frame else d.shape
    return "(" + ", ".join(str(s) for s in dims) + ("," if len(dims) == 1 else "") + ")"


def markdown_table() -> str:
    """The dataset table of docs/results.md (``python -m rodsim.results.layout``)."""
    rows = [
        "| dataset | shape | type | units | in the file | description |",
        "|---|---|---|---|---|---|",
    ]
    for d in (*DATASETS, *TERM_DATASETS):
        kind = {"f8": "float64", "i8": "int64"}[d.dtype]
        lack = (
            f" (files before layout 1.{d.since} lack it)"
            if d.since
            else " (files of layout 1.0 may lack it)"
        )
        present = f"with {d.term}" if d.term else _PRESENT_TEXT[d.present]
        present += lack if d.optional else ""
        present += ", if `output.fields` keeps it" if d.choosable else ""
        path = d.path.replace("{name}", "<set>")
        rows.append(
            f"| `{path}` | {_shape_text(d)} | {kind} | {d.units} | {present} | {d.description} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())


_MOVED = ("open_results", "read_frame", "frame_count", "layout_version", "run_status")
_MOVED += ("RunStatus", "incomplete_warning", "quaternion_matrices")


def __getattr__(name: str):
    # the readers moved to rodsim.results.reader (0.x); old imports keep working for a while
    if name in _MOVED:
        import warnings

        from rodsim.results import reader as results_reader

        warnings.warn(
            f"rodsim.results.layout.{name} is now rodsim.results.reader.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(results_reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
