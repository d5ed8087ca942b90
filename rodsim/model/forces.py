"""The force terms of a model: the one place that lists what acts on the nodes.

Every integrator, the equilibrium solver, the energies, the support reactions and the output
get their forces here; none of them calls a rod, plate, load or support kernel directly. The
terms, in the order they are summed (the order is part of the results: floating-point sums are
not associative):

    term      kind      forces                                  energy     kernels (rodsim/model)
    rods      INTERNAL  Simo-Reissner elements                  strain     rod.py
    plates    INTERNAL  Reissner-Mindlin shells                 strain     plate_kernels.py
    pressure  APPLIED   follower pressure on plates             (none)     loads.py
    loads     APPLIED   nodal forces and moments, gravity       gravity's  loads.py
    supports  GROUND    springs to the ground, foundations      strain     supports.py

and the damping (Lagrange-d'Alembert) forces, added after them: rods' and plates' strain-rate
damping (beta), mass-proportional damping (alpha), the supports' dashpots.

The contract of a term (docs/developer.md walks through adding one):

- arrays: a NamedTuple of arrays, one field of ForceTerms; a model without the term has
  empty arrays in Python and None in the kernels' view (make_terms), so it never compiles the
  term's kernels;
- forces: a kernel adding its nodal forces and spatial moments (about the node) to f, tau (N,3)
  at positions x (N,3), rotations rot (N,3,3) and their quaternions quat (N,4), returning its
  energy; generic over float64 and complex128 (branches, max and abs on real parts only), so
  the implicit scheme's Jacobian differentiates it by complex step;
- damping, if any: the continuous form (nodal velocities, explicit scheme) and the discrete one
  (strains at the step's ends, applied at its midpoint, implicit scheme);
- node coupling: the node pairs its forces couple (coupled_pairs), from which the implicit
  Jacobian's sparsity pattern and colouring are built; a term whose coupling changes per step
  (contact) will return its current pairs and the pattern is rebuilt when they change;
- a stiffness bound for the explicit stable step (rodsim.integrators.stable_step);
- its kind: GROUND terms are part of the support reactions; INTERNAL and APPLIED ones are
  what the fixed supports react to.
"""

from typing import NamedTuple

import numpy as np
from numba.core import types as numba_types
from numba.experimental import structref

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model import plate_kernels, plate_viscous, rod, rod_viscous, supports
from rodsim.model.loads import external_forces, gravity_forces, plate_pressure

INTERNAL = 1  # element forces: rods, plates
APPLIED = 2  # loads: nodal forces and moments, gravity, pressure
GROUND = 4  # elastic supports
ALL = INTERNAL | APPLIED | GROUND


TERM_FIELDS = ("rods", "plates", "loads", "supports", "rot0", "mass", "beta", "alpha", "damped")


@structref.register
class ForceTermsType(numba_types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, numba_types.unliteral(typ)) for name, typ in fields)


class ForceTerms(structref.StructRefProxy):
    """Every force term of a model, as the kernels read it (Model.terms builds it once).

    rods, plates, loads, supports: the terms' arrays (NamedTuples; Python reads empty ones
    when a term is absent, the kernels None: make_terms); rot0
    (N,3,3) the reference frames (follower loads); mass (N,) lumped masses (gravity, alpha
    damping); beta (time) strain-rate and alpha (1/time) mass-proportional damping; damped:
    whether any damping force acts (beta, alpha or a dashpot).

    A numba StructRef, passed to kernels by reference: as a NamedTuple of its ~60 arrays,
    every kernel call and inlined helper taking it paid an atomic reference-count update per
    array (measured: +0.5 us per force evaluation, +17% on a 10-element explicit step).
    Python reads the same fields as attributes."""

    def __getattr__(self, name):
        try:
            return self.__dict__["_fields"][name]
        except KeyError:
            raise AttributeError(name) from None


structref.define_proxy(ForceTerms, ForceTermsType, list(TERM_FIELDS))


@kernel
def _new_terms(rods, plates, loads, supports_, rot0, mass, beta, alpha, damped):
    # a cached constructor: StructRefProxy's own compiles anew in every process (3 s)
    return ForceTerms(rods, plates, loads, supports_, rot0, mass, beta, alpha, damped)


class Strains(NamedTuple):
    """The terms' strain measures at one configuration (the implicit scheme's damping):
    rods gamma, omega (E,3); plates eps, kappa (P,4,3), gamma (P,4,2), drill (P,4);
    supports u, psi (S,3)."""

    rod_gamma: np.ndarray
    rod_omega: np.ndarray
    plate_eps: np.ndarray
    plate_kappa: np.ndarray
    plate_gamma: np.ndarray
    plate_drill: np.ndarray
    support_u: np.ndarray
    support_psi: np.ndarray


class Resultants(NamedTuple):
    """Scratch for viscous resultants: rods n, m (E,3); plates n, m (P,4,3), q (P,4,2),
    r (P,4)."""

    rod_n: np.ndarray
    rod_m: np.ndarray
    plate_n: np.ndarray
    plate_m: np.ndarray
    plate_q: np.ndarray
    plate_r: np.ndarray


def make_terms(rods, plates, loads, supports_, rot0, mass, beta, alpha) -> ForceTerms:
    """ForceTerms with `damped` worked out.

    The kernels see an absent term as None (rods, plates and supports when a model has none,
    damped when false): a kernel branch on ``term is None`` is removed before typing
    (rodsim.jit), so a model compiles only the terms it has. beta and alpha stay numbers (a
    damped model compiles every damping kernel of its terms: fewer variants to compile).
    Python reads the values as given (empty arrays, False)."""
    dashpots = bool(np.any(supports_.c_t) or np.any(supports_.c_r))
    damped = bool(beta > 0.0 or alpha > 0.0 or dashpots)
    values = (rods, plates, loads, supports_, rot0, mass, float(beta), float(alpha), damped)
    present = (
        rods if rods.conn.shape[0] else None,
        plates if plates.conn.shape[0] else None,
        loads,
        supports_ if supports_.node.shape[0] else None,
        rot0,
        mass,
        float(beta),
        float(alpha),
        True if damped else None,
    )
    terms = _new_terms(*present)
    terms._fields = dict(zip(TERM_FIELDS, values, strict=True))  # what Python reads
    return terms


def make_strains(terms: ForceTerms, dtype=np.float64) -> Strains:
    e, p, s = terms.rods.conn.shape[0], terms.plates.conn.shape[0], terms.supports.node.shape[0]
    z = np.zeros
    return Strains(
        z((e, 3), dtype),
        z((e, 3), dtype),
        z((p, 4, 3), dtype),
        z((p, 4, 3), dtype),
        z((p, 4, 2), dtype),
        z((p, 4), dtype),
        z((s, 3), dtype),
        z((s, 3), dtype),
    )


def make_resultants(terms: ForceTerms, dtype=np.float64) -> Resultants:
    e, p = terms.rods.conn.shape[0], terms.plates.conn.shape[0]
    z = np.zeros
    return Resultants(
        z((e, 3), dtype),
        z((e, 3), dtype),
        z((p, 4, 3), dtype),
        z((p, 4, 3), dtype),
        z((p, 4, 2), dtype),
        z((p, 4), dtype),
    )


def coupled_pairs(terms: ForceTerms) -> np.ndarray:
    """(M,2) node pairs whose forces a term couples: the rods' ends and every pair of a plate's
    corners (the supports couple a node only to itself)."""
    pairs = [terms.rods.conn]
    pc = terms.plates.conn
    for i in range(4):
        for j in range(i + 1, 4):
            pairs.append(pc[:, [i, j]])
    return np.ascontiguousarray(np.concatenate(pairs).reshape(-1, 2), dtype=np.int64)


# --- forces ---------------------------------------------------------------------------------

quaternions = rod.node_quaternions  # quat[a] of rot[a] for lo <= a < hi: what the terms read


@kernel
def _plate_forces(plates, loads, x, rot, t, f, tau, select):
    """Add the plates' elastic forces (INTERNAL) and pressure (APPLIED); returns their
    energy. plates None: the model has none (the rest is compiled out)."""
    if plates is None:
        return 0.0
    u = 0.0
    if select & INTERNAL:
        u += plate_kernels.assemble_plate_forces(plates, x, rot, f, tau)
    if select & APPLIED:
        plate_pressure(loads, plates, t, x, rot, f)
    return u


@kernel
def _support_forces(springs, x, quat, f, tau, select):
    """Add the elastic supports' spring forces (GROUND); returns their energy. springs None:
    the model has none."""
    if springs is None:
        return 0.0
    if select & GROUND:
        return supports.support_forces(springs, x, quat, f, tau)
    return 0.0


@kernel(inline="always")
def _after_rods(terms, x, rot, quat, t, f, tau, select):
    """Add every term but the rods; returns (their energy, the external potential)."""
    u = _plate_forces(terms.plates, terms.loads, x, rot, t, f, tau, select)
    v = 0.0
    if select & APPLIED:
        v = external_forces(terms.loads, t, x, rot, terms.rot0, terms.mass, f, tau)
    u += _support_forces(terms.supports, x, quat, f, tau, select)
    return u, v


@kernel(inline="always")
def forces(terms, x, rot, quat, t, f, tau, select):
    """Overwrite f, tau (N,3) with the forces and moments of the terms of kinds `select`
    (INTERNAL | APPLIED | GROUND) at time t (equilibrium: the load multiplier). Returns
    (internal energy: elements and springs, external potential: gravity). Serial; generic over
    float64 and complex128."""
    f[:] = 0.0
    tau[:] = 0.0
    u = 0.0
    if select & INTERNAL:
        u = _rod_forces(terms.rods, x, rot, quat, f, tau)
    du, v = _after_rods(terms, x, rot, quat, t, f, tau, select)
    return u + du, v


@kernel
def _rod_forces(rods, x, rot, quat, f, tau):
    """Add the rod elements' forces; returns their energy. rods None: the model has none."""
    if rods is None:
        return 0.0
    return rod.assemble_forces(rods, x, rot, quat, f, tau)


@kernel
def _rod_forces_parallel(rods, x, rot, quat, f, tau, work):
    if rods is None:  # a plate model on all cores: the gather below starts f, tau from zero
        f[:] = 0.0
        tau[:] = 0.0
        return 0.0
    return rod.assemble_forces_parallel(
        rods, x, rot, quat, f, tau, work.elem, work.element_blocks, work.block_energy, True
    )


@kernel(inline="always")
def forces_parallel(terms, x, rot, quat, t, f, tau, work):
    """forces(..., ALL) with the rods assembled in parallel (float64). work: the rods' scratch
    (elem (E,2,6), element_blocks (B+1,), block_energy (B,); rodsim.integrators.explicit.
    Workspace). The gather starts each node from zero: no serial pass over f, tau."""
    u = _rod_forces_parallel(terms.rods, x, rot, quat, f, tau, work)
    du, v = _after_rods(terms, x, rot, quat, t, f, tau, ALL)
    return u + du, v


@kernel
def add_damping(terms, x, rot, quat, p, vel, omg, f, tau):
    """Add the damping forces of the rates vel, omg (N,3) (spatial velocities and angular
    velocities; p (N,3) the linear momenta m vel) to f, tau. They sum to zero force and moment
    (mass damping and dashpots excepted), so damping leaves a free body's momenta alone."""
    _viscous_damping(terms.beta, terms.rods, terms.plates, x, rot, quat, vel, omg, f, tau)
    _mass_damping(terms.alpha, p, f)
    _dashpots(terms.supports, quat, vel, omg, f, tau)


@kernel
def _viscous_damping(beta, rods, plates, x, rot, quat, vel, omg, f, tau):
    if not beta > 0.0:
        return
    _rod_damping(rods, x, rot, quat, vel, omg, beta, f, tau)
    _plate_damping(plates, x, rot, vel, omg, beta, f, tau)


@kernel
def _rod_damping(rods, x, rot, quat, vel, omg, beta, f, tau):
    if rods is None:
        return
    rod_viscous.damping_forces(rods, x, rot, quat, vel, omg, beta, f, tau)


@kernel
def _plate_damping(plates, x, rot, vel, omg, beta, f, tau):
    if plates is None:
        return
    plate_viscous.plate_damping_forces(plates, x, rot, vel, omg, beta, f, tau)


@kernel
def _mass_damping(alpha, p, f):
    if not alpha > 0.0:
        return
    for a in range(p.shape[0]):
        for k in range(3):
            f[a, k] -= alpha * p[a, k]


@kernel
def _dashpots(springs, quat, vel, omg, f, tau):
    if springs is None:
        return
    supports.support_damping_forces(springs, quat, vel, omg, f, tau)


@kernel
def strains(terms, x, rot, quat, out):
    """The strains the discrete damping needs (Strains out) at a configuration."""
    _viscous_strains(terms.beta, terms.rods, terms.plates, x, rot, quat, out)
    _support_strains(terms.supports, x, quat, out)


@kernel
def _viscous_strains(beta, rods, plates, x, rot, quat, out):
    if not beta > 0.0:
        return
    _rod_strains(rods, x, rot, quat, out)
    _plate_strains(plates, x, rot, out)


@kernel
def _rod_strains(rods, x, rot, quat, out):
    if rods is None:
        return
    rod_viscous.element_strains(rods, x, rot, quat, out.rod_gamma, out.rod_omega)


@kernel
def _plate_strains(plates, x, rot, out):
    if plates is None:
        return
    plate_kernels.plate_strains(
        plates, x, rot, out.plate_eps, out.plate_kappa, out.plate_gamma, out.plate_drill
    )


@kernel
def _support_strains(springs, x, quat, out):
    if springs is None:
        return
    supports.support_strains(springs, x, quat, out.support_u, out.support_psi)


@kernel
def add_step_damping(terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    """Add the implicit scheme's damping forces of a step of size h to f, tau: viscous
    resultants of the strain increments (strains `start` at g_k, `end` (scratch) at g_k+1 =
    x1, r1, q1) applied through the midpoint xb, rb, qb (a Lagrange-d'Alembert force
    orthogonal to rigid motions, so both momenta stay exact; docs/implicit_scheme.md), and mass
    damping -alpha m v of the step velocity xi[:, :3] (spatial; SE3: body, turned by the midpoint
    frame). res: resultant scratch. Generic over float64 and complex128."""
    _step_viscous(
        terms.beta, terms.rods, terms.plates, start, end, res, x1, r1, q1, xb, rb, qb, h, f, tau
    )
    _step_dashpots(terms.supports, start, end, x1, q1, qb, h, f, tau)
    _step_mass_damping(terms.alpha, terms.mass, xi, rb, se3, f)


@kernel
def _step_viscous(beta, el, plates, start, end, res, x1, r1, q1, xb, rb, qb, h, f, tau):
    if not beta > 0.0:
        return
    _step_rod_viscous(el, beta, start, end, res, x1, r1, q1, xb, rb, qb, h, f, tau)
    _step_plate_viscous(plates, beta, start, end, res, x1, r1, xb, rb, h, f, tau)


@kernel
def _step_rod_viscous(el, beta, start, end, res, x1, r1, q1, xb, rb, qb, h, f, tau):
    if el is None:
        return
    rod_viscous.element_strains(el, x1, r1, q1, end.rod_gamma, end.rod_omega)
    c = beta / h
    for e in range(el.conn.shape[0]):
        for k in range(3):
            res.rod_n[e, k] = c * el.c1[e, k] * (end.rod_gamma[e, k] - start.rod_gamma[e, k])
            res.rod_m[e, k] = c * el.c2[e, k] * (end.rod_omega[e, k] - start.rod_omega[e, k])
    rod_viscous.resultant_forces(el, xb, rb, qb, res.rod_n, res.rod_m, f, tau)


@kernel
def _step_plate_viscous(pl, beta, start, end, res, x1, r1, xb, rb, h, f, tau):
    if pl is None:
        return
    pe, pk, pg, pd = end.plate_eps, end.plate_kappa, end.plate_gamma, end.plate_drill
    plate_kernels.plate_strains(pl, x1, r1, pe, pk, pg, pd)
    c = 1.0 / h
    for e in range(pl.conn.shape[0]):
        for s in range(4):
            for k in range(3):
                pe[e, s, k] = c * (pe[e, s, k] - start.plate_eps[e, s, k])
                pk[e, s, k] = c * (pk[e, s, k] - start.plate_kappa[e, s, k])
            for k in range(2):
                pg[e, s, k] = c * (pg[e, s, k] - start.plate_gamma[e, s, k])
            pd[e, s] = c * (pd[e, s] - start.plate_drill[e, s])
    plate_viscous.viscous_resultants(
        pl, beta, pe, pk, pg, pd, res.plate_n, res.plate_m, res.plate_q, res.plate_r
    )
    plate_kernels.plate_resultant_forces(
        pl, xb, rb, res.plate_n, res.plate_m, res.plate_q, res.plate_r, f, tau
    )


@kernel
def _step_dashpots(sp, start, end, x1, q1, qb, h, f, tau):
    if sp is None:
        return
    supports.support_strains(sp, x1, q1, end.support_u, end.support_psi)
    supports.support_step_damping(
        sp, start.support_u, start.support_psi, end.support_u, end.support_psi, qb, h, f, tau
    )


@kernel
def _step_mass_damping(alpha, mass, xi, rb, se3, f):
    if not alpha > 0.0:
        return
    for a in range(f.shape[0]):
        c = alpha * mass[a]
        v = (xi[a, 0], xi[a, 1], xi[a, 2])
        if se3:
            v = so3.matvec(so3.mat_at(rb, a), v)
        for k in range(3):
            f[a, k] -= c * v[k]


# --- derived quantities (Python side) -------------------------------------------------------


def _serial(terms: ForceTerms, x, rot, t: float, select: int):
    f, tau, quat = np.zeros_like(x), np.zeros_like(x), np.empty((x.shape[0], 4))
    quaternions(rot, quat, 0, x.shape[0])
    u, v = forces(terms, x, rot, quat, float(t), f, tau, select)
    return f, tau, u, v


def energies(terms: ForceTerms, x, rot, t: float) -> tuple[float, float]:
    """(internal energy: elements and springs, external potential: gravity) at a state."""
    return _serial(terms, x, rot, t, ALL)[2:]


def external_potential(terms: ForceTerms, x, rot, t: float) -> float:
    """The potential of the conservative loads (gravity) at a state and time."""
    return _serial(terms, x, rot, t, APPLIED)[3]


def applied_loads(terms: ForceTerms, x, rot, t: float):
    """(f, tau) (N,3) of the applied loads (APPLIED terms) at a state and time."""
    return _serial(terms, x, rot, t, APPLIED)[:2]


def load_totals(terms: ForceTerms, x, rot, t: float):
    """Resultants of the applied loads at a state (x (N,3), rot (N,3,3)) and time t: (force
    (3,), moment about the origin (3,)) of the nodal, edge and pressure loads, and the force
    (3,) of gravity (its own, so that a node's loads are not lost in the round-off of its
    weight). Several loads on one node add, as in the kernels."""
    f, tau = applied_loads(terms, x, rot, t)
    g = gravity_forces(terms.loads, terms.mass, t)
    f -= g  # node by node, so that a node with no load but its weight gives exactly 0
    return f.sum(axis=0), (np.cross(x, f) + tau).sum(axis=0), g.sum(axis=0)


def reactions(terms: ForceTerms, fixed: np.ndarray, x, rot, t: float, vel=None, omg=None):
    """Forces and moments (N,3) the supports exert on the nodes: in fixed components minus the
    element forces and applied loads, elsewhere the elastic supports' springs and, at the
    nodal velocities vel and angular velocities omg (N,3) if given, their dashpots (a
    component both fixed and sprung: the two together supply minus the rest). The nodes'
    inertia and the elements' damping forces are not included."""
    f, tau = _serial(terms, x, rot, t, INTERNAL | APPLIED)[:2]
    if terms.supports.node.shape[0] == 0:
        return np.where(fixed[:, :3], -f, 0.0), np.where(fixed[:, 3:], -tau, 0.0)
    g, m = _serial(terms, x, rot, t, GROUND)[:2]
    if vel is not None:
        quat = np.empty((x.shape[0], 4))
        quaternions(rot, quat, 0, x.shape[0])
        supports.support_damping_forces(terms.supports, quat, vel, omg, g, m)
    return np.where(fixed[:, :3], -f, g), np.where(fixed[:, 3:], -tau, m)


def fields(terms: ForceTerms, x, rot, with_energy: bool = False) -> dict:
    """The terms' per-element output fields at a state, keyed by Frame attribute: rods force,
    moment (section resultants), strain, curvature (minus the reference strains), all (E,3) in
    the section frame; plates plate_membrane, plate_bending (P,3), plate_shear (P,2) at the
    element centres (absent without plates). with_energy: also "energy", the internal energy
    (elements and springs)."""
    el, pl = terms.rods, terms.plates
    e = el.conn.shape[0]
    gamma, kappa, force, moment = (np.empty((e, 3)) for _ in range(4))
    energy = rod.element_fields(el, x, rot, gamma, kappa, force, moment) if e else 0.0
    # element_fields gives Gamma - Gamma0 and Omega - Omega0 already
    out = {"force": force, "moment": moment, "strain": gamma, "curvature": kappa}
    p = pl.conn.shape[0]
    if p:
        out["plate_membrane"], out["plate_bending"] = np.empty((p, 3)), np.empty((p, 3))
        out["plate_shear"] = np.empty((p, 2))
        plate_kernels.plate_fields(
            pl, x, rot, out["plate_membrane"], out["plate_bending"], out["plate_shear"]
        )
    if with_energy:
        scratch = np.zeros_like(x), np.zeros_like(x)
        if p:
            energy += plate_kernels.assemble_plate_forces(pl, x, rot, *scratch)
        if terms.supports.node.shape[0]:
            quat = np.empty((x.shape[0], 4))
            quaternions(rot, quat, 0, x.shape[0])
            energy += supports.support_forces(terms.supports, x, quat, *scratch)
        out["energy"] = energy
    return out
