"""The term contract: what every physics that acts on the nodes gives the rest of rodsim.

A term is one module of rodsim.terms holding a `Term` record (its ``TERM``); rodsim.terms.TERMS
lists them in summation order. Schemes, analyses and output loop over TERMS and call the
record's hooks; none of them names a term or reads its arrays (docs/developer.md states the
contract and walks through adding the connectors term).

Kernel hooks are numba kernels (rodsim.jit.kernel). Their first three arguments are always

    own     the term's arrays (a NamedTuple of contiguous arrays; never None: a term absent
            from a model is left out of the compiled sums altogether),
    state   the term's state arrays (a NamedTuple; None for a term without state),
    terms   every term of the model (rodsim.model.forces.ForceTerms), for the shared fields
            rot0 (N,3,3), mass (N,), beta, alpha, and for a term that acts through another
            one's arrays (follower pressure on the plates).

Kernel hooks are generic over float64 and complex128 (the implicit Jacobian differentiates them
by complex step): branches, max and abs on real parts only.

Roles (`role`) say what a term's forces are for the support reactions and the load scaling:
INTERNAL (element forces: what the structure carries), APPLIED (loads: what path following and
buckling scale), GROUND (springs to the ground: part of the reactions). Whether a term derives
from a potential is separate (`conservative`): an APPLIED term may (gravity) or may not
(follower pressure), and so may an INTERNAL one (a plastic connector has an incremental one).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

INTERNAL = 1  # element forces: rods, plates, connectors
APPLIED = 2  # loads: nodal forces and moments, gravity, pressure
GROUND = 4  # elastic supports
ALL = INTERNAL | APPLIED | GROUND

ROLES = {"internal": INTERNAL, "applied": APPLIED, "ground": GROUND}


def _always(_arrays) -> bool:
    return True


class StepShare(NamedTuple):
    """A term's share in the explicit scheme's stable step (Term.stable_step), at the reference
    state: omega (E,) the top frequency (rad per time unit) of each of its elements against
    the element's own share of the lumped mass and inertia (Irons' bound; the strain-rate
    damping beta and the mass damping alpha act on these modes); node (S,) int64, omega2 (S,)
    (rad/time)^2 and rate (S,) (1/time): springs at nodes, the largest squared frequency of
    the term's stiffness at a node against the node's lumped mass and inertia, and the decay
    rate of its dashpots there (c / 2m). A node may appear once per term; rodsim.integrators.
    stable_step adds the terms' springs node by node (lambda_max(A + B) <= lambda_max(A) +
    lambda_max(B) in the mass metric) and raises the elements' frequencies by the stiffest.
    label: what one of its elements is called in messages ("rod element")."""

    omega: np.ndarray
    node: np.ndarray
    omega2: np.ndarray
    rate: np.ndarray
    label: str = "element"


def step_share(omega=None, node=None, omega2=None, rate=None, label="element") -> StepShare:
    """A StepShare, empty where not given (elements only, springs only, or none)."""
    none = np.zeros(0)
    return StepShare(
        none if omega is None else np.asarray(omega, dtype=float),
        np.zeros(0, dtype=np.int64) if node is None else np.asarray(node, dtype=np.int64),
        none if omega2 is None else np.asarray(omega2, dtype=float),
        none if rate is None else np.asarray(rate, dtype=float),
        label,
    )


@dataclass(frozen=True)
class Term:
    """One physics acting on the nodes. Required: name, role, arrays, forces; every other hook
    is optional (None: the term has no share in that scheme or analysis, which the contract
    test checks against what the term's arrays can do).

    Packing
      name        the term's field of ForceTerms and its key in State.terms and Inputs.
      role        INTERNAL | APPLIED | GROUND (see the module docstring).
      arrays      arrays(model) -> NamedTuple: the term's arrays on a model, empty when the
                  model has none (Python reads those; the kernels see None, see `present`).
      present     present(arrays) -> bool: whether the kernels get the arrays (else None and the
                  term is compiled out). Terms that are cheap to keep (the loads: their
                  windows are set every step) say always.

    Forces (kernels; own, state, terms first)
      forces      (own, state, terms, x, rot, quat, t, f, tau) -> (u, v): add the term's nodal
                  forces and spatial moments (N,3) at positions x (N,3), rotations rot (N,3,3),
                  quaternions quat (N,4), time (or load multiplier) t; u its stored energy, v its
                  external potential (gravity).
      forces_parallel  (own, state, terms, x, rot, quat, t, f, tau, work) -> (u, v): the same on
                  all cores, *overwriting* f, tau (its gather starts each node from zero), so
                  only the first term of TERMS may have one. work: the explicit workspace.
      damping     (own, state, terms, x, rot, quat, p, vel, omg, f, tau): add the damping forces
                  of the nodal velocities vel and angular velocities omg (N,3) (p = m vel).
      strains, make_strains(own, dtype), make_resultants(own, dtype), step_damping: the implicit
                  scheme's discrete damping: strains(own, state, terms, x, rot, quat, out) writes
                  the strain measures at a configuration into the term's buffer;
                  step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi,
                  h, se3, f, tau) adds the Lagrange-d'Alembert forces of the step (strains
                  `start` at g_k, `end` scratch at g_k+1, `res` resultant scratch).
      tangent     (own, state, terms, slots, x, rot, quat, t, k): add its tangent stiffness
                  K_ab = -d(f_a, tau_a)/d(u_b, theta_b) (6x6 blocks, spatial increments
                  delta x = u, delta Lambda = hat(theta) Lambda; material, geometric and load
                  stiffness) at (x, rot, quat, t) into k (B,6,6), the Jacobian's BSR blocks
                  (block rows = nodes), at the block indices `slots` (its tangent_slots). The
                  implicit Jacobian is assembled from these where every present term has one
                  (rodsim.integrators.vi_jacobian); else by complex step.
      step_damping_tangent  (own, state, terms, slots, start, end, res, x1, r1, q1, xb, rb,
                  qb, h, kbar, k1) -> bool: the blocks of its step_damping forces F_d (called
                  right after step_damping, whose strains `end` at g_k+1 and resultants `res`
                  it may read), K = -dF_d in spatial increments: the part through the
                  midpoint g_bar = (xb, rb, qb) (the geometric part at the viscous resultants,
                  chained through the midpoint map like tangent's K) into kbar, the part
                  through the end g_k+1 = (x1, r1, q1) (Bbar^T (beta/h) C B_1 for strain-rate
                  damping) into k1, both (B,6,6) at its tangent_slots; returns whether its
                  damping acts. The dynamic Jacobian is assembled analytically where every
                  damped term present has one (and a tangent; rodsim.integrators.
                  vi_jacobian_dynamic.damping_analytic); else by complex step. float64.
      tangent_slots  tangent_slots(arrays, terms, indptr, indices) -> int64 array: the block
                  indices its tangent writes, from the BSR structure (sorted column nodes per
                  row; rodsim.model.tangent_blocks.block_index).
      accept      (own, state, terms, x, rot, quat, t): update the term's state after a step
                  is accepted (never inside Newton iterations or a rejected adaptive step).
                  The energy its `forces` returns is that of the trial (a plastic link's
                  incremental potential, F_y dg included); frames report the committed
                  state's, evaluated again after the accept (dynamics._steps, the implicit
                  scheme's energies), so the ledger's dissipated work is not counted twice.
      damped      damped(arrays, beta, alpha) -> bool: whether its damping acts.

    Structure (Python hooks on the arrays Python reads)
      pairs       pairs(arrays, terms) -> (M,2) int64 node pairs its forces couple (the implicit
                  Jacobian's pattern; terms: the ForceTerms, for a term acting through another
                  one's arrays); None: a node only to itself.
      initial_state  initial_state(arrays) -> NamedTuple | None: the term's state at the start.
      fields      fields(arrays, x, rot, quat, with_energy, state=None) -> (dict of Frame
                  fields, stored energy at the term's committed state `state`).
      weight      weight(arrays, mass, t) -> (N,3) | None: the part of its forces that is
                  gravity (load totals report it apart).
      conservative  conservative(arrays) -> bool: whether its forces derive from a potential
                  at every configuration (dead loads, gravity, elastic springs).

    Explicit stable step, Newton round-off floor, free-body test
      stable_step  stable_step(arrays, model) -> StepShare: its element modes and its springs
                  at nodes at the reference state (rodsim.integrators.stable_step); None: it
                  adds no stiffness (loads, mass damping).
      roundoff    roundoff(arrays, size, length) -> float: the largest nodal force error per
                  unit relative round-off eps of one of its elements or entries, with
                  coordinates of size `size` and moments weighted by 1/length (the implicit
                  residual's norm): the Newton round-off floor is 10 eps sqrt(N) times the
                  largest over TERMS (rodsim.integrators.implicit.roundoff_floor). None: 0.
      window      (own, state, terms, a, b) kernel: the step [a, b] being taken (NaN: none) for
                  its time functions (rodsim.model.timefunc.window_time); the explicit scheme
                  sets it around every step of a composition.
      The free-body test needs no hook: a model restrains rigid motions where a component is
      fixed or a GROUND term is present (its springs hold the nodes to the ground).

    Mechanism check, modal analysis, buckling, path following, summary (Python hooks)
      place       place(model, arrays) -> Model: the model with the term's arrays replaced (the
                  inverse of `arrays`); None: they live in Model.term_arrays[name].
      empty       empty(arrays) -> arrays: its arrays with no entries (a model without it);
                  None: dropped from Model.term_arrays, or it cannot leave (no forces).
      restraint   restraint(arrays, nodes, motions) -> (6,6) | None: its stiffness at the
                  reference along the unit rigid motions motions (K,6,6) (the (u, theta) of 6
                  motions at nodes (K,), sorted) of one part, r^T K r, exact (no round-off
                  along motions it does not resist); None: none (rodsim.model.mechanism).
      bending     bending(arrays, labels, label, size) -> (B,): the bending stiffnesses
                  (force length^2) of its elements in the part `label` (labels (N,) per node)
                  of extent `size` (a plate's per width times size): the part's bending scale.
      damping_blocks  damping_blocks(arrays, model) -> (pairs (B,2), blocks (B,6,6)): its
                  damping matrix at the reference in spatial increments (u, theta): block
                  (a, b) = pairs[i] couples node b's rates to node a's forces (f = -C v).
      rate_damping  rate_damping(arrays, beta, alpha) -> float: c where its damping is c times
                  its tangent stiffness at the reference (strain-rate damping: beta); 0: none.
      prestressed  prestressed(arrays, base, state, scale) -> arrays: its reference strains
                  shifted by scale x the change of its strain measures from base to state
                  (each (x (N,3), rot (N,3,3))): buckling's geometric stiffness.
      scaled      scaled(arrays, scale) -> arrays: an APPLIED term's loads times scale
                  (prescribed motions and time functions unchanged): path following, buckling.
      dead        dead(arrays) -> arrays: an APPLIED term with only its dead forces (follower
                  forces, moments and pressure set to zero): the mechanism's stability test.
      entry       entry(arrays, rows) -> arrays: an APPLIED term with only the rows of one
                  case `loads:` entry (rows: rodsim.case.load_terms.LoadRows; gravity out).
      count       count(arrays) -> str | None: its size in the model summary ("4 rod
                  elements"; INTERNAL terms on the model line, GROUND ones on the supports
                  line); None: nothing to say.

    State, inputs and restart
      inputs      inputs(arrays) -> dict name -> array: the term's arrays a controller may write
                  between steps, in place (rodsim.state.Inputs: load values, gravity).
      A term's state (initial_state, moved on by accept) needs no further hook: State.terms
      copies it field by field, the restart group and Simulation.reset write it back in place,
      so its fields must be arrays (rodsim.state).

    Energy ledger (rodsim.integrators.ledger, docs/results.md "Energy ledger")
      loaded      loaded(arrays) -> bool: whether an APPLIED term applies any load (an entry,
                  even of zero value, which a controller may set): the explicit scheme then
                  compiles the ledger in. None: loaded when present.
      power_arrays  power_arrays(arrays, model) -> NamedTuple: the arrays `power` reads (the
                  term's own, not copies: a controller's writes must show).
      power       (arrays, nodes, x, rot, quat, t, p, pi) -> float kernel, arrays those of
                  power_arrays: the power of an APPLIED term's forces at (x, rot, t) on the
                  velocities of the momenta p, pi (N,3) (v = p/m, omega = Lambda I^-1
                  Lambda^T pi; nodes: the NodeArrays), free components only (nodes.fixed);
                  the explicit ledger calls it every step, with plain arrays because taking a
                  term's arrays out of ForceTerms costs a reference count per array (+0.3 us
                  a step for the loads). None: the ledger evaluates the forces and takes their
                  power node by node.
      dissipated  dissipated(arrays, state) -> float: the energy the term has dissipated so far
                  that its state keeps (plastic work), added to its column of the ledger. A
                  term's viscous damping needs no hook: the ledger takes the power of its
                  `damping` (explicit) and `step_damping` (implicit) forces.

    Output (rodsim.solvers.output, rodsim.results.layout)
      datasets    its datasets in the results file (docs/results.md "Datasets"): a tuple of
                  dicts, each the keywords of a rodsim.results.layout.Dataset but source and
                  present: path ("group/name" per frame, group its own; "mesh/name" once per
                  file), shape (per frame, without F; ints and the term's own size letter for
                  its entries, "C" the connectors), units, description, since (the
                  layout_minor that added it), dtype ("f8" unless "i8"), ragged (True: a
                  per-frame dataset whose rows change in number from frame to frame, its
                  first size letter those of the frame, e.g. contact pairs ("R", 2); stored
                  flat with <path>_end, docs/results.md "Ragged datasets", layout 1.10). Its
                  `fields` hook gives their values keyed by path (mesh ones too; a ragged
                  one's (n_k, ...) rows of the frame) whenever it is present; the writer, the
                  readers, output.fields and rodsim.Results take them from there
                  (Frame.terms, Results.terms, ResultsMesh.terms). None: no datasets.
    """

    name: str
    role: int
    arrays: Callable[[Any], Any]
    forces: Any
    present: Callable[[Any], bool] = _always
    forces_parallel: Any = None
    damping: Any = None
    strains: Any = None
    make_strains: Callable | None = None
    make_resultants: Callable | None = None
    step_damping: Any = None
    tangent: Any = None
    step_damping_tangent: Any = None
    tangent_slots: Callable | None = None
    accept: Any = None
    damped: Callable | None = None
    pairs: Callable | None = None
    initial_state: Callable | None = None
    fields: Callable | None = None
    weight: Callable | None = None
    conservative: Callable[[Any], bool] = _always
    # --- explicit stable step, Newton round-off floor, free-body test ---
    stable_step: Callable | None = None
    roundoff: Callable | None = None
    window: Any = None
    # --- mechanism check, modal analysis, buckling, path following ---
    place: Callable | None = None
    empty: Callable | None = None
    restraint: Callable | None = None
    bending: Callable | None = None
    damping_blocks: Callable | None = None
    rate_damping: Callable | None = None
    prestressed: Callable | None = None
    scaled: Callable | None = None
    dead: Callable | None = None
    entry: Callable | None = None
    count: Callable | None = None
    # --- state, inputs and restart ---
    inputs: Callable | None = None
    # --- energy ledger ---
    loaded: Callable | None = None
    power_arrays: Callable | None = None
    power: Any = None
    dissipated: Callable | None = None
    datasets: tuple | None = None
