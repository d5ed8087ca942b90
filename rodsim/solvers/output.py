"""Output records: the one place that turns a model and a state into a Frame (the fields of the
results file and the ParaView series, docs/results.md): nodal kinematics and momenta, the force
terms' element fields and their own datasets (rodsim.model.forces.fields), the support reactions
(rodsim.model.forces.reactions), energies and the energy ledger (rodsim.integrators.ledger),
momenta and the solver's counters.
"""

import dataclasses
import math

import numpy as np

from rodsim.integrators import ledger
from rodsim.integrators.diagnostics import nodal_velocities
from rodsim.lie.arrays import relative_quaternions
from rodsim.model import forces
from rodsim.model.prescribed import prescribed_velocities
from rodsim.model.stress import stress_fields
from rodsim.results.frame import Frame, Unwritten
from rodsim.results.layout import (
    ALWAYS,
    FRAME_DATASETS,
    PLATES,
    POINT_STRESS,
    ROD_STRESS,
    RODS,
    TERM_FRAME_DATASETS,
    concrete_shape,
)

# the Frame fields of each choosable dataset (rodsim.results.layout), by group of what
# computes them: the element resultants (forces.fields), the stresses recovered from them
# (rodsim.model.stress, which costs as much as a third of a short run) and the reactions
_SOURCE = {d.path: d.source for d in FRAME_DATASETS if d.choosable}
_CHOOSABLE = tuple(d for d in FRAME_DATASETS if d.choosable)
_RESULTANTS = ("rods/force", "rods/moment", "rods/strain", "rods/curvature")
_RESULTANTS += ("plates/membrane", "plates/bending", "plates/shear")
_STRESSES = tuple(p for p in _SOURCE if p.startswith(("rods/", "plates/")) and p not in _RESULTANTS)
_REACTIONS = ("nodes/reaction_force", "nodes/reaction_moment")


# the rod fields a Frame must have, when no resultant is computed (output.fields: _frame
# makes them Unwritten)
_SKIPPED = {"force": None, "moment": None, "strain": None, "curvature": None}
# the Frame fields that are None where the model has none (the others: arrays with no rows)
_OPTIONAL = {f.name for f in dataclasses.fields(Frame) if f.default is None}


def _wants(chosen, paths) -> bool:
    return chosen is None or any(p in chosen for p in paths)


def _reactions(model, x, rot, t: float, vel=None, omega=None, chosen=None) -> dict:
    if not _wants(chosen, _REACTIONS):
        return {}
    rf, rm = forces.reactions(model.terms, model.fixed, x, rot, t, vel, omega)
    return {"reaction_force": rf, "reaction_moment": rm}


def _rotations(model, rot) -> np.ndarray:
    quat = np.empty((model.n_nodes, 4))
    relative_quaternions(rot, model.rot0, quat)
    return quat


def _fields(model, x, rot, with_energy: bool = False, chosen=None) -> dict:
    """The element fields of a state: resultants (rodsim.model.forces.fields) and the stresses
    recovered from them (rodsim.model.stress), when the model has stress tables, and the
    terms' own datasets ("terms", Frame.terms); chosen: the datasets output.fields keeps
    (rodsim.results.layout.chosen_datasets; None: all): the stresses are recovered only if
    one is kept, the resultants only if one of them or a stress is (or the energy is
    wanted); the terms' own datasets always (a few values per entry, and their mesh datasets
    go with every frame)."""
    stresses = model.stress is not None and _wants(chosen, _STRESSES)
    if not (with_energy or stresses or _wants(chosen, _RESULTANTS)):
        return forces.fields(model.terms, x, rot, own_only=True)
    out = forces.fields(model.terms, x, rot, with_energy)
    if stresses:
        out.update(stress_fields(model.stress, out))
    return out


def _has(model, d) -> bool:
    """rodsim.results.layout.is_present for a model: whether its results have dataset d."""
    stress = model.n_elements > 0 and model.stress is not None and model.stress.n_points > 0
    return {
        ALWAYS: True,
        RODS: model.n_elements > 0,
        PLATES: model.n_plates > 0,
        ROD_STRESS: stress,
        POINT_STRESS: stress and model.stress.points,
    }[d.present]


def _absent(d):
    """What a Frame holds for a dataset the model has none of: None, or (rod fields) an array
    with no rows."""
    if d.source in _OPTIONAL:
        return None
    return np.zeros(concrete_shape(d.shape, {"N": 0, "E": 0, "P": 0}))


def _frame(model, chosen, **values) -> Frame:
    """The Frame of values, those output.fields leaves out Unwritten (also where skipped):
    only the datasets the model has; one it cannot have (plates of a rod-only model, rod
    stresses without recovery points) is absent, as without output.fields."""
    if chosen is not None:
        for d in _CHOOSABLE:
            if d.path in chosen:
                continue
            values[d.source] = Unwritten(d.path) if _has(model, d) else _absent(d)
        terms = values.get("terms", {})
        for d in TERM_FRAME_DATASETS:  # all choosable; only those the model has are there
            if d.path in terms and d.path not in chosen:
                terms[d.path] = Unwritten(d.path)
    return Frame(**values)


def dynamic_frame(run, dt: float, chosen=None) -> Frame:
    """The Frame of a running integration (rodsim.integrators.dynamics.Explicit or
    rodsim.integrators.implicit.Implicit): velocities from the momenta (prescribed nodes: the
    velocity of their last step), energies and counters of the integration. chosen: the
    datasets output.fields keeps (None: all); the others are Unwritten, and not computed
    where that saves time (stresses, resultants, reactions)."""
    model, st = run.model, run.state
    n = model.n_nodes
    vel, omega = np.empty((n, 3)), np.empty((n, 3))
    nodal_velocities(model.mass, model.inertia, st.rot, st.p, st.pi, vel, omega)
    if model.prescribed.node.shape[0]:
        prescribed_velocities(model.prescribed, run.time, dt, vel, omega)  # of the last step
    diag = run.diagnostics()
    return _frame(
        model,
        chosen,
        time=run.time,
        position=st.x.copy(),
        rotation=_rotations(model, st.rot),
        directors=st.rot.copy(),
        velocity=vel,
        angular_velocity=omega,
        linear_momentum=st.p.copy(),
        angular_momentum=st.pi.copy(),
        kinetic=diag.kinetic,
        internal=diag.internal,
        external=diag.external,
        total_linear=np.asarray(diag.linear_momentum, dtype=float),
        total_angular=np.asarray(diag.angular_momentum, dtype=float),
        **ledger.values(run, diag.kinetic, diag.internal, diag.external),
        dt=dt,
        iterations=float(run.max_iterations),
        residual=getattr(run, "residual", math.nan),
        load_factor=1.0,
        total_time=run.time,
        **{**_SKIPPED, **_fields(model, st.x, st.rot, chosen=chosen)},
        **_reactions(model, st.x, st.rot, run.time, vel, omega, chosen),
    )


def static_frame(
    model, x, rot, load: float, step=None, lowest: float = math.nan, chosen=None
) -> Frame:
    """The Frame of an equilibrium state at load multiplier `load` (time = load, at rest);
    step: the rodsim.integrators.equilibrium.LoadStep that reached it (None: the reference);
    lowest: the lowest eigenvalue of the tangent there (NaN: not computed); chosen: the
    datasets output.fields keeps (None: all), the others Unwritten. Every field is computed
    all the same (docs/results.md: a load step's Newton solves cost far more)."""
    zeros = np.zeros((model.n_nodes, 3))
    out = _fields(model, x, rot, with_energy=True)
    internal = out.pop("energy")
    external = forces.external_potential(model.terms, x, rot, load)
    return _frame(
        model,
        chosen,
        time=load,
        position=x.copy(),
        rotation=_rotations(model, rot),
        directors=rot.copy(),
        velocity=zeros,
        angular_velocity=zeros,
        linear_momentum=zeros,
        angular_momentum=zeros,
        kinetic=0.0,
        internal=internal,
        external=external,
        total_linear=np.zeros(3),
        total_angular=np.zeros(3),
        **ledger.static_values(),
        dt=math.nan if step is None else step.h,  # inf: Newton
        iterations=0.0 if step is None else float(step.iterations),
        residual=0.0 if step is None else step.residual,
        lowest_eigenvalue=lowest,
        load_factor=load,
        total_time=load,
        **out,
        **_reactions(model, x, rot, load),
    )
