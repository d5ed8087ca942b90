"""The per-frame datasets of a results file (docs/results.md "Datasets"), a row F each (the
file adds the frame axis in front): one row of the dataset table each
(rodsim.results.dataset.Dataset); the order is the order of creation in the file and of the
documentation. The mesh datasets: rodsim.results.table_mesh; the terms' own datasets and the
layout rule: rodsim.results.layout.
"""

from rodsim.results.dataset import PLATES, POINT_STRESS, ROD_STRESS, RODS
from rodsim.results.dataset import Dataset as _D
from rodsim.terms import TERMS

# the columns of energy/dissipated_by_term: the terms that can dissipate (viscous damping, or
# dissipation their state keeps), in the order of rodsim.terms.TERMS
DISSIPATING = tuple(
    t.name
    for t in TERMS
    if t.damping is not None or t.step_damping is not None or t.dissipated is not None
)
_LEDGER = "dynamic runs; NaN in equilibrium, path-following and modal frames"

FRAME_TABLE = (
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
