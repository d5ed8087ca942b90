"""Output records: the one place that turns a model and a state into a Frame (the fields of the
results file and the ParaView series, docs/results.md): nodal kinematics and momenta, the force
terms' element fields (rodsim.model.forces.fields), the support reactions
(rodsim.model.forces.reactions), energies, momenta and the solver's counters.
"""

import math

import numpy as np

from rodsim.integrators.diagnostics import nodal_velocities
from rodsim.lie.arrays import relative_quaternions
from rodsim.model import forces
from rodsim.model.prescribed import prescribed_velocities
from rodsim.model.stress import stress_fields
from rodsim.writers.frame import Frame


def _reactions(model, x, rot, t: float, vel=None, omega=None) -> dict:
    rf, rm = forces.reactions(model.terms, model.fixed, x, rot, t, vel, omega)
    return {"reaction_force": rf, "reaction_moment": rm}


def _rotations(model, rot) -> np.ndarray:
    quat = np.empty((model.n_nodes, 4))
    relative_quaternions(rot, model.rot0, quat)
    return quat


def _fields(model, x, rot, with_energy: bool = False) -> dict:
    """The element fields of a state: resultants (rodsim.model.forces.fields) and the stresses
    recovered from them (rodsim.model.stress), when the model has stress tables."""
    out = forces.fields(model.terms, x, rot, with_energy)
    if model.stress is not None:
        out.update(stress_fields(model.stress, out))
    return out


def dynamic_frame(run, dt: float) -> Frame:
    """The Frame of a running integration (rodsim.integrators.dynamics.Explicit or
    rodsim.integrators.implicit.Implicit): velocities from the momenta (prescribed nodes: the
    velocity of their last step), energies and counters of the integration."""
    model, st = run.model, run.state
    n = model.n_nodes
    vel, omega = np.empty((n, 3)), np.empty((n, 3))
    nodal_velocities(model.mass, model.inertia, st.rot, st.p, st.pi, vel, omega)
    if model.prescribed.node.shape[0]:
        prescribed_velocities(model.prescribed, run.time, dt, vel, omega)  # of the last step
    diag = run.diagnostics()
    return Frame(
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
        dt=dt,
        iterations=float(run.max_iterations),
        residual=getattr(run, "residual", math.nan),
        load_factor=1.0,
        total_time=run.time,
        **_fields(model, st.x, st.rot),
        **_reactions(model, st.x, st.rot, run.time, vel, omega),
    )


def static_frame(model, x, rot, load: float, step=None, lowest: float = math.nan) -> Frame:
    """The Frame of an equilibrium state at load multiplier `load` (time = load, at rest);
    step: the rodsim.integrators.equilibrium.LoadStep that reached it (None: the reference);
    lowest: the lowest eigenvalue of the tangent there (NaN: not computed)."""
    zeros = np.zeros((model.n_nodes, 3))
    out = _fields(model, x, rot, with_energy=True)
    internal = out.pop("energy")
    external = forces.external_potential(model.terms, x, rot, load)
    return Frame(
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
        dt=math.nan if step is None else step.h,  # inf: Newton
        iterations=0.0 if step is None else float(step.iterations),
        residual=0.0 if step is None else step.residual,
        lowest_eigenvalue=lowest,
        load_factor=load,
        total_time=load,
        **out,
        **_reactions(model, x, rot, load),
    )
