"""The assembled rod model: geometry, element data, lumped inertia, constraints and loads.

Lumping (docs/theory.md, "Lumped inertia", Gauss–Lobatto at the nodes): each element gives each of
its two
nodes half its mass ``rhoA h / 2`` and half its rotational inertia ``(h/2) diag(rhoJ, rhoI2,
rhoI3)`` in the section frame, which at a node is the nodal frame. Point masses add a mass and
an inertia tensor given in global axes at the reference state.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from rodsim.model import timefunc
from rodsim.model.forces import ForceTerms, make_terms
from rodsim.model.loads import (
    Gravity,
    LoadArrays,
    NodalLoad,
    Pressure,
    load_kinks,
    pack_loads,
)
from rodsim.model.plate import PlateElements, lumped_plate_inertia, make_plates
from rodsim.model.prescribed import (
    Prescribed,
    PrescribedArrays,
    pack_prescribed,
    prescribed_dofs,
)
from rodsim.model.rod import RodElements, make_elements
from rodsim.model.sections import RodSection
from rodsim.model.stress import StressTables, stress_tables
from rodsim.model.supports import Support, SupportArrays, pack_supports

NO_PLATES = make_plates(
    np.zeros((0, 4), dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), 1.0, 0.0, 1.0, 1.0
)


@dataclass(frozen=True)
class PointMass:
    """Mass and rotary inertia (3,3 in global axes at the reference state) at each of nodes."""

    nodes: np.ndarray
    mass: float
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


class NodeArrays(NamedTuple):
    """The nodes as the integrators' kernels read them (Model.nodes): mass (N,), inertia
    (N,3,3) material, fixed (N,6) bool, x0 (N,3), rot0 (N,3,3), prescribed motions (None
    when there are none: their kernels are then not compiled, rodsim.jit)."""

    mass: np.ndarray
    inertia: np.ndarray
    fixed: np.ndarray
    x0: np.ndarray
    rot0: np.ndarray
    prescribed: PrescribedArrays | None


@dataclass(frozen=True)
class Model:
    """Everything the integrators need, as contiguous float64/int64 arrays.

    x0 (N,3), rot0 (N,3,3) reference positions and nodal frames (columns d1, d2, d3);
    rods: element data; rho_a (E,), rho_i (E,3) = (rhoJ, rhoI2, rhoI3) per element;
    mass (N,), inertia (N,3,3) lumped nodal mass and material rotational inertia;
    fixed (N,6) bool for (ux, uy, uz, rx, ry, rz) in global axes (prescribed dofs included);
    loads and prescribed motions packed for kernels; kinks: times where a load or prescribed
    history is not smooth; beta (time) strain-rate and alpha (1/time) mass-proportional
    damping coefficients; plates: plate elements (none: conn (0,4)); supports: springs and
    dashpots to the ground (none: no entries); stress: the tables stresses are recovered with
    (rodsim.model.stress; None: no stresses). ``terms`` (rodsim.model.forces.ForceTerms) and
    ``nodes`` (NodeArrays) are what the kernels read, built once per model.
    """

    x0: np.ndarray
    rot0: np.ndarray
    rods: RodElements
    rho_a: np.ndarray
    rho_i: np.ndarray
    mass: np.ndarray
    inertia: np.ndarray
    fixed: np.ndarray
    loads: LoadArrays
    kinks: np.ndarray
    prescribed: PrescribedArrays = pack_prescribed(())
    beta: float = 0.0
    alpha: float = 0.0
    plates: PlateElements = NO_PLATES
    supports: SupportArrays = pack_supports((), np.zeros((0, 3)), np.zeros((0, 3, 3)))
    stress: StressTables | None = None
    # arrays of the terms that have no field of their own above, by Term.name (rodsim.terms)
    term_arrays: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def terms(self) -> ForceTerms:
        return make_terms(self)

    @cached_property
    def nodes(self) -> NodeArrays:
        prescribed = self.prescribed if self.prescribed.node.shape[0] else None  # rodsim.jit
        return NodeArrays(self.mass, self.inertia, self.fixed, self.x0, self.rot0, prescribed)

    @property
    def n_nodes(self) -> int:
        return self.x0.shape[0]

    @property
    def n_elements(self) -> int:
        return self.rods.conn.shape[0]

    @property
    def n_plates(self) -> int:
        return self.plates.conn.shape[0]


def lumped_inertia(conn, length, rot0, rho_a, rho_i, n_nodes, offset=None):
    """Nodal mass (N,) and material inertia (N,3,3) from Gauss–Lobatto lumping.

    offset (E,2,3,3): element section frame relative to the nodal frame at each end (see
    RodElements); the element's diagonal inertia share is rotated into the nodal frame.
    """
    mass = np.zeros(n_nodes)
    inertia = np.zeros((n_nodes, 3, 3))
    half = 0.5 * length
    for side in (0, 1):
        np.add.at(mass, conn[:, side], half * rho_a)
        diag = np.zeros((conn.shape[0], 3, 3))
        diag[:, [0, 1, 2], [0, 1, 2]] = half[:, None] * rho_i
        if offset is not None:
            q = offset[:, side]
            diag = np.einsum("eij,ejk,elk->eil", q, diag, q)
        np.add.at(inertia, conn[:, side], diag)
    return mass, inertia


def build_model(
    x0,
    rot0,
    conn,
    sections: RodSection | Sequence[RodSection],
    *,
    fixed=None,
    loads: Sequence[NodalLoad] = (),
    gravity: Sequence[Gravity] = (),
    point_masses: Sequence[PointMass] = (),
    end_frames=None,
    prescribed: Sequence[Prescribed] = (),
    damping: tuple[float, float] = (0.0, 0.0),
    plates: PlateElements | None = None,
    pressures: Sequence[Pressure] = (),
    supports: Sequence[Support] = (),
    plate_thickness=None,
    plate_allowable=None,
    stress_points: bool = False,
    term_arrays: Mapping[str, Any] | None = None,
) -> Model:
    """Assemble a Model. ``sections`` is one RodSection or one per element; ``fixed`` is None
    or an (N,6) boolean array; ``end_frames`` (E,2,3,3) the reference section frames at the
    element ends where they differ from the nodal frames ``rot0`` (corners of frames);
    ``damping`` (beta, alpha): viscous resultants beta C dstrain/dt and nodal forces -alpha m v;
    ``plates`` plate elements on the same nodes (their nodes' frames rot0 must be the plates'
    reference frames: d3 the director), ``pressures`` follower pressures on them; ``supports``
    springs and dashpots to the ground (rodsim.model.supports); plate_thickness,
    plate_allowable (P,): what the plates' stresses are recovered with (rodsim.model.stress;
    without a thickness the model recovers rod stresses only); stress_points: keep the rods'
    stresses at every recovery point, not only the largest; term_arrays: the arrays of terms
    without a field of their own (Model.term_arrays), by term name."""
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    rot0 = np.ascontiguousarray(rot0, dtype=np.float64)
    conn = np.ascontiguousarray(conn, dtype=np.int64).reshape(-1, 2)
    n, ne = x0.shape[0], conn.shape[0]
    per_element = [sections] * ne if isinstance(sections, RodSection) else list(sections)
    if len(per_element) != ne:
        raise ValueError(f"{len(per_element)} sections for {ne} elements")
    c1 = np.array([s.C1 for s in per_element]).reshape(ne, 3)
    c2 = np.array([s.C2 for s in per_element]).reshape(ne, 3)
    rho_a = np.array([s.rhoA for s in per_element], dtype=float)
    rho_i = np.array([[s.rhoJ, s.rhoI2, s.rhoI3] for s in per_element], dtype=float).reshape(ne, 3)
    rods = make_elements(conn, x0, rot0, c1, c2, end_frames)
    mass, inertia = lumped_inertia(conn, rods.length, rot0, rho_a, rho_i, n, rods.offset)
    plates = NO_PLATES if plates is None else plates
    if plates.conn.shape[0]:
        m_p, j_p = lumped_plate_inertia(plates, n_nodes=n)
        mass += m_p
        inertia += j_p
    for pm in point_masses:
        nodes = np.asarray(pm.nodes, dtype=np.int64).ravel()
        j = np.asarray(pm.inertia, dtype=float).reshape(3, 3)
        mass[nodes] += pm.mass
        # global-axes tensor at the reference -> material axes of each node
        inertia[nodes] += np.einsum("nji,jk,nkl->nil", rot0[nodes], j, rot0[nodes])
    if fixed is None:
        fixed = np.zeros((n, 6), dtype=bool)
    fixed = np.ascontiguousarray(fixed, dtype=bool).reshape(n, 6) | prescribed_dofs(prescribed, n)
    kinks = [load_kinks(loads, gravity, pressures)] + [timefunc.kinks(p.time) for p in prescribed]
    return Model(
        x0=x0,
        rot0=rot0,
        rods=rods,
        rho_a=rho_a,
        rho_i=rho_i,
        mass=mass,
        inertia=inertia,
        fixed=fixed,
        loads=pack_loads(loads, gravity, pressures),
        kinks=np.unique(np.concatenate(kinks)),
        prescribed=pack_prescribed(prescribed),
        beta=float(damping[0]),
        alpha=float(damping[1]),
        plates=plates,
        supports=pack_supports(supports, x0, rot0),
        stress=stress_tables(
            per_element, plates.conn.shape[0], plate_thickness, plate_allowable, stress_points
        ),
        term_arrays=dict(term_arrays or {}),
    )
