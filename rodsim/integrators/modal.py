"""Natural modes about a state: the reference or an equilibrium (docs/modal.md).

About a configuration (x_a, Lambda_a) the motion is perturbed in spatial increments, a
displacement u_a and a rotation vector theta_a with Lambda = exp(hat(theta)) Lambda_a (the
Lie-group parametrisation of SO(3)xR3, in both groups). The tangent stiffness K is the
derivative of the static residual of the implicit scheme (rodsim.integrators.vi_residual,
complex-step exact) with respect to these increments, loads at their value at the state
included (stress stiffening, follower-load stiffness); the mass M is the lumped mass with the
rotary inertia Lambda J Lambda^T of each node. Fixed and prescribed components are removed.

    K phi = lambda M phi,   lambda = omega^2,   f = omega / (2 pi).

Conservative loads give a symmetric K: the lowest modes come from scipy's shift-invert Lanczos
(eigsh). Loads that are not conservative (follower forces, moments, pressure) give a
non-symmetric K: shift-invert Arnoldi (eigs), with complex eigenvalues where the structure
flutters. A mode is rigid when its shape is a rigid motion of the whole structure (its part
outside them below 1e-6 in the M-norm) and its |lambda| below 1e-8 of the largest nodal
stiffness-to-mass ratio.
"""

import math

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from rodsim.errors import CaseError, NumericalError
from rodsim.integrators import implicit
from rodsim.integrators import vi_residual as vr
from rodsim.model import mechanism, variants
from rodsim.results.modes import Buckling, Modes
from rodsim.terms import TERMS

RIGID = 1e-8  # |lambda| / max(diag K / diag M) below which a mode may be rigid
RIGID_SHAPE = 1e-6  # M-norm of a mode outside the rigid motions below which it is rigid
SYMMETRIC = 1e-9  # |K - K^T| / |K| below which K is taken as symmetric
# buckling about the reference: the size (displacement / model size, rotation) of the state
# whose stresses give K_G: its strains stand ~1e7 above round-off, its nonlinearity is ~1e-9,
# and it stays below the critical strain of columns up to L/r ~ 5e4
LINEAR_AMPLITUDE = 1e-9
RESCALES = 6  # load increments tried to reach it
# from a preload: grow the increment (at most to PRELOAD_DELTA of the loads) while the state
# moves less than PRELOAD_MOVE (its strain change then ~1e6 above round-off)
PRELOAD_MOVE, PRELOAD_DELTA = 1e-10, 1e-2


def damping_matrix(model, group: str) -> sp.csc_matrix:
    """C (6N, 6N) at the reference in spatial increments (u, theta), term after term of TERMS:
    each term's damping blocks (mass-proportional damping: alpha M on the translations; the
    supports' dashpots: C_t on u, Lambda0 C_r Lambda0^T on theta, psi' = Lambda0^T omega at
    psi = 0; a connector's dashpots couple its two nodes), then, for the terms whose damping
    is c times their stiffness (strain-rate damping: beta times the elements' material
    stiffness; docs/theory.md, "Damping"), c times the symmetric part of the tangent of the
    model holding only them (no loads, no supports)."""
    n = model.n_nodes
    blocks = np.zeros((n, 6, 6))
    coupled = []  # (pairs, blocks) between two nodes
    for term in TERMS:
        if term.damping_blocks is None:
            continue
        pairs, share = term.damping_blocks(term.arrays(model), model)
        own = pairs[:, 0] == pairs[:, 1]
        np.add.at(blocks, pairs[own, 0], share[own])
        if not own.all():
            coupled.append((pairs[~own], share[~own]))
    c = sp.block_diag(list(blocks), format="csc")
    for pairs, share in coupled:
        c = c + _pair_matrix(n, pairs, share)
    rates = {}  # coefficient c -> the terms damped by c times their stiffness
    for term in TERMS:
        if term.rate_damping is not None:
            coef = term.rate_damping(term.arrays(model), model.beta, model.alpha)
            if coef > 0.0:
                rates.setdefault(coef, []).append(term.name)
    for coef, names in rates.items():
        elastic = variants.holding(model, names)
        quat = np.empty((n, 4))
        implicit.quaternions(model.rot0, quat)
        k0, _ = matrices(elastic, group, model.x0, model.rot0, quat, 0.0)
        c = c + coef * (k0 + k0.T) * 0.5
    return sp.csc_matrix(c)


def _pair_matrix(n: int, pairs: np.ndarray, blocks: np.ndarray) -> sp.csc_matrix:
    """(6N, 6N) holding the 6x6 blocks (B,6,6) at the node pairs (B,2) (repeats add up)."""
    i = (6 * pairs[:, 0])[:, None, None] + np.arange(6)[None, :, None]
    j = (6 * pairs[:, 1])[:, None, None] + np.arange(6)[None, None, :]
    i, j = np.broadcast_arrays(i, j)
    return sp.coo_matrix((blocks.ravel(), (i.ravel(), j.ravel())), shape=(6 * n, 6 * n)).tocsc()


def matrices(
    model, group: str, x, rot, quat, load: float, solver=None
) -> tuple[sp.csc_matrix, sp.csc_matrix]:
    """(K, M) (6N, 6N) in spatial increments (u, theta) per node, all components; solver: an
    implicit.Solver of the model to reuse (its sparsity pattern), else one is made."""
    solver = implicit.make_solver(model, group) if solver is None else solver
    n = model.n_nodes
    zero = np.zeros((n, 6))
    sd = implicit.step_data(solver, x, rot, quat, zero, 1.0, load, load, vr.STATIC)
    jac = solver.matrix(sd, zero)
    k = (jac @ implicit.spatial_columns(rot, sd.se3)).tocsc()
    mass = np.zeros((n, 6, 6))
    mass[:, :3, :3] = model.mass[:, None, None] * np.eye(3)
    mass[:, 3:, 3:] = np.einsum("nij,njk,nlk->nil", rot, model.inertia, rot)
    return k, sp.block_diag(list(mass), format="csc")


def _start(n: int) -> np.ndarray:
    """ARPACK's starting vector, the same on every run (its default is random): the same case
    gives the same modes to the last bit, and the same basis of a repeated eigenvalue."""
    return np.random.default_rng(0).standard_normal(n)


def rigid_motions(x: np.ndarray) -> np.ndarray:
    """(6N, 6): the unit rigid motions, translations along x, y, z and rotations about the
    global axes through the origin (u = e x position, theta = e)."""
    n = len(x)
    r = np.zeros((n, 6, 6))
    for i in range(3):
        e = np.eye(3)[i]
        r[:, :3, i] = e
        r[:, :3, 3 + i] = np.cross(e, x)
        r[:, 3:, 3 + i] = e
    return r.reshape(6 * n, 6)


ADVICE = (
    "check the sections' stiffness and mass (their units: E in Pa with lengths in m, "
    "density in kg/m^3) and the point masses; rodsim solves K phi = lambda M phi in float64"
)


def _solve(kf, mf, count: int, symmetric: bool, scale: float):
    """(vals, vecs) of kf phi = lambda mf phi, the `count` of smallest |lambda| (dense when
    tiny). K and M are scaled to a largest entry of 1 first: shift-invert is invariant to it,
    and a stiffness of 1e300 (or a mass of 1e-300) no longer underflows ARPACK's vectors
    (its error -9, 'starting vector is zero'). Failures are NumericalErrors with advice."""
    sk, sm = abs(kf).max(), abs(mf).max()
    if not (np.isfinite(sk) and np.isfinite(sm) and np.all(np.isfinite(kf.data))):
        raise NumericalError(
            "the stiffness or mass matrix holds values that are not finite (they overflow "
            f"float64: largest stiffness entry {sk:.3g}, mass {sm:.3g}); " + ADVICE
        )
    if sk == 0.0 or sm == 0.0:
        raise NumericalError(
            f"the {'stiffness' if sk == 0.0 else 'mass'} matrix is zero: no modes; " + ADVICE
        )
    ratio = sk / sm  # lambda of the scaled problem times this is lambda
    kn, mn = (kf / sk).tocsc(), (mf / sm).tocsc()
    sigma = -1e-9 * scale / ratio  # below zero: rigid modes (lambda = 0) factor too
    try:
        if kn.shape[0] <= max(2 * count, 12):  # tiny: dense (M-orthonormal where symmetric)
            k_dense, m_dense = kn.toarray(), mn.toarray()
            if symmetric:
                vals, vecs = la.eigh((k_dense + k_dense.T) * 0.5, m_dense)
            else:
                vals, vecs = la.eig(k_dense, m_dense)
        elif symmetric:
            vals, vecs = sla.eigsh(
                (kn + kn.T) * 0.5, k=count, M=mn, sigma=sigma, which="LM", v0=_start(kn.shape[0])
            )
        else:
            vals, vecs = sla.eigs(
                kn, k=count, M=mn, sigma=sigma, which="LM", v0=_start(kn.shape[0])
            )
    except (RuntimeError, ValueError, np.linalg.LinAlgError, sla.ArpackError) as exc:
        # ArpackNoConvergence is an ArpackError
        raise NumericalError(
            f"the eigensolver failed ({exc}) on K and M with a stiffness-to-mass ratio of "
            f"{scale:.3g} (1/time^2) across {kn.shape[0]} free components; " + ADVICE
        ) from None
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.asarray(vals) * ratio
    if not np.all(np.isfinite(vals)):
        raise NumericalError(
            f"the eigenvalues overflow float64 (stiffness-to-mass ratio {ratio:.3g}); " + ADVICE
        )
    return vals, vecs


def modes(
    model, group: str, x, rot, quat, count: int, load: float = 0.0, solver=None, damping=True
) -> Modes:
    """The `count` lowest modes about the state (x, rot, quat) at load multiplier `load`;
    damping_ratio: phi^T C phi / (2 omega) with rodsim's damping (damping_matrix), NaN for
    rigid modes; damping=False leaves them None (and C unassembled). solver: see matrices."""
    k, m = matrices(model, group, x, rot, quat, load, solver)
    free = np.flatnonzero(~model.fixed.ravel())
    if len(free) == 0:
        raise NumericalError("every degree of freedom is fixed: the structure has no modes")
    kf, mf = k[free][:, free].tocsc(), m[free][:, free].tocsc()
    scale = float(np.max(np.abs(kf.diagonal()) / np.maximum(mf.diagonal(), 1e-300)))
    count = min(count, len(free) - 1) if len(free) > 1 else 1
    asym = abs(kf - kf.T).max() / max(abs(kf).max(), 1e-300)
    symmetric = asym <= SYMMETRIC
    vals, vecs = _solve(kf, mf, count, symmetric, scale)
    vals = np.asarray(vals, dtype=complex)
    if symmetric:
        vals = vals.real.astype(complex)
    order = np.argsort(np.abs(vals))[:count]
    vals, vecs = vals[order], np.real(vecs[:, order])
    norms = np.sqrt(np.einsum("ij,ij->j", vecs, mf @ vecs))
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    shapes = np.zeros((len(order), 6 * model.n_nodes))
    shapes[:, free] = vecs.T
    r = rigid_motions(x)
    gamma = shapes @ (m @ r)
    frequency = np.sqrt(np.maximum(vals.real, 0.0)) / (2.0 * math.pi)
    # rigid: a near-zero eigenvalue whose shape is a rigid motion (an elastic mode of a long,
    # finely meshed rod can be 1e-12 of the stiffest element's lambda)
    coeff = np.linalg.lstsq(r.T @ m @ r, gamma.T, rcond=None)[0]
    outside = shapes - (r @ coeff).T
    off = np.sqrt(np.abs(np.einsum("ij,ij->i", outside, (m @ outside.T).T)))
    rigid = (np.abs(vals) < RIGID * scale) & (off < RIGID_SHAPE)
    frequency = np.where(rigid, 0.0, frequency)
    ratio = None
    if damping:
        c = damping_matrix(model, group)
        modal_c = np.einsum("ij,ij->i", shapes, (c @ shapes.T).T)
        omega = 2.0 * math.pi * frequency
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(rigid | (omega == 0.0), np.nan, modal_c / (2.0 * omega))
    return Modes(
        eigenvalue=vals,
        frequency=frequency,
        shape=shapes.reshape(len(order), model.n_nodes, 6),
        effective_mass=gamma**2,
        rigid=rigid,
        symmetric=bool(symmetric),
        load=float(load),
        damping_ratio=ratio,
    )


def prestressed(model, base, state, scale: float = 1.0):
    """The model with its reference strains shifted by scale times the change of the strain
    measures from the configuration base to state (each (x, rot); each term's `prestressed`:
    rods Gamma0, Omega0; plates eps0, kappa0, g0, w0): at base it then carries, on top of
    base's own strains, scale x that change. Its tangent at base is the one of base's
    stresses plus the geometric stiffness of the added ones, linear in them; the material
    stiffness is base's (docs/modal.md, "Buckling")."""
    return variants.prestressed(model, base, state, scale)


def scaled_loads(model, scale: float):
    """The model with its loads (forces, moments, gravity, pressure: each APPLIED term's
    `scaled`) times scale; prescribed motions unchanged."""
    return variants.scaled_loads(model, scale)


def _amplitude(x0, rot0, x, rot) -> float:
    """The size of a change of configuration: the largest of its nodal displacements over the
    model's size and its nodal rotations (rad)."""
    size = float(np.linalg.norm(np.ptp(x0, axis=0))) or 1.0
    cosines = (np.einsum("nij,nij->n", rot, rot0) - 1.0) / 2.0
    turn = float(np.arccos(np.clip(cosines, -1.0, 1.0)).max())
    return max(float(np.abs(x - x0).max()) / size, turn)


def _increment(solve, base, load: float, epsilon: float):
    """(state, delta): the equilibrium after a load increment delta x the case's loads from
    the base state at load multiplier `load`. solve(multiplier, scale): the equilibrium at
    the multiplier with the loads times scale, from base.

    From the reference (load 0) delta is rescaled until the state moves by about
    LINEAR_AMPLITUDE: its strains then stand ~1e7 above round-off (and above the equilibrium
    solver's absolute floor, under which a tiny load moves nothing) and stay linear in delta.
    From a preload (load 1) the increment must also stay below the critical load: delta
    grows from epsilon only while the state moves by less than PRELOAD_MOVE, up to
    PRELOAD_DELTA. Either shrinks where the increment reaches an unstable state."""

    def at(delta):
        # from the reference the multiplier itself scales (prescribed motions too) up to 1;
        # beyond it, and from a preload, the loads are scaled (time functions end at 1)
        if load == 0.0 and delta <= 1.0:
            return solve(delta, 1.0)
        return solve(1.0, load + delta)

    delta = epsilon
    for attempt in range(RESCALES):
        try:
            state = at(delta)
        except NumericalError:
            if attempt == RESCALES - 1:
                raise
            delta *= 1e-2  # the increment crossed a critical load (a near-critical preload)
            continue
        moved = _amplitude(base[0], base[1], state[0], state[1])
        if attempt == RESCALES - 1:
            break
        if load == 0.0 and not 0.1 < moved / LINEAR_AMPLITUDE < 10.0:
            # at most 1e4 up at a time: below the floor a step barely moves, and says little
            delta *= min(LINEAR_AMPLITUDE / moved, 1e4) if moved > 0.0 else 1e4
        elif load != 0.0 and moved < PRELOAD_MOVE and delta < PRELOAD_DELTA:
            delta = min(delta * 10.0, PRELOAD_DELTA)
        else:
            break
    return state, delta


def buckling(model, group: str, count: int, base, solve, epsilon: float = 1e-4) -> Buckling:
    """Linear buckling factors of the case's loads about the base state (x, rot, quat, load):
    the reference (load 0) or the preload (the equilibrium at load multiplier 1) (docs/
    modal.md, "Buckling"); solve(multiplier, scale) -> (x, rot, quat) the equilibrium at the
    multiplier with the loads times scale, from the base state.

    K_T is the tangent at the base state; K_G the change of the tangent per unit load
    multiplier from the stresses (and follower-load stiffness) a load increment adds, taken
    at the base configuration: the increment's strains per unit multiplier are added to the
    base state's (prestressed), so the material stiffness cancels exactly and nothing is
    lost to round-off whatever the loads' size. The factors solve (K_T + mu K_G) phi = 0,
    factor = load + mu, as -K_G phi = (1/mu) K_T phi; K_T must be positive definite (a
    supported structure below its critical load). About the reference this is the classical
    problem (K_material + lambda K_geometric) phi = 0 of the undeformed structure."""
    refusal = mechanism.buckling_check(model, group)  # K_T singular: artefacts, not factors
    if refusal is not None:
        raise CaseError(refusal, key="boundary")
    x0, rot0, quat0, load = base
    x0, rot0, quat0 = np.array(x0), np.array(rot0), np.array(quat0)
    loaded = scaled_loads(model, load) if load != 1.0 else model
    k0, _ = matrices(loaded, group, x0, rot0, quat0, 1.0)
    if load != 0.0:
        lowest = lowest_eigenvalue(model, group, x0, rot0, quat0, load)
        if not lowest > 0.0:
            raise NumericalError(
                f"the preload (load multiplier {load:g}) is at or past a critical load: the "
                f"tangent there is not positive definite (lowest omega^2 = {lowest:.6g}); "
                "lower the case's loads, or take the buckling about the reference"
            )
    (x, rot, _), delta = _increment(solve, (x0, rot0), load, epsilon)
    stressed = scaled_loads(prestressed(model, (x0, rot0), (x, rot), 1.0 / delta), load + 1.0)
    kt, _ = matrices(stressed, group, x0, rot0, quat0, 1.0)
    free = np.flatnonzero(~model.fixed.ravel())
    k0f = k0[free][:, free]
    kg = (kt - k0)[free][:, free]
    k0s = ((k0f + k0f.T) * 0.5).tocsc()
    kgs = ((kg + kg.T) * 0.5).tocsc()
    uncompressed = NumericalError(
        "no positive buckling factor: the loads compress nothing (no loads, or tension "
        "only), so no multiple of them buckles the structure"
    )
    if not np.any(kgs.data):  # no load moved anything
        raise uncompressed
    # K_G per unit multiplier of small loads is tiny beside K_T: scaled to it for the solver
    unit = abs(k0s).max() / abs(kgs).max()
    count = min(count, len(free) - 2)
    try:
        if len(free) <= 64:
            mu, vecs = la.eigh(-unit * kgs.toarray(), k0s.toarray())
        else:
            mu, vecs = sla.eigsh(-unit * kgs, k=count, M=k0s, which="LA", v0=_start(len(free)))
    except sla.ArpackNoConvergence as exc:
        # the largest of -K_G's eigenvalues are a cluster of zeros when nothing is compressed
        if not np.any(np.asarray(exc.eigenvalues) > 0.0):
            raise uncompressed from None
        raise NumericalError(
            f"linear buckling failed: the eigensolver did not converge ({exc})"
        ) from None
    except (RuntimeError, np.linalg.LinAlgError, sla.ArpackError) as exc:
        state = "reference" if load == 0.0 else f"preload (load multiplier {load:g})"
        raise NumericalError(
            f"linear buckling failed ({exc}): the tangent at the {state} must be positive "
            "definite (a supported structure, below its critical load)"
        ) from None
    positive = mu > 1e-12 * max(np.abs(mu).max(), 1e-300)
    if not positive.any():
        raise uncompressed
    order = np.argsort(-mu[positive])[:count]
    factors = load + unit / mu[positive][order]
    shapes = np.zeros((len(order), 6 * model.n_nodes))
    shapes[:, free] = vecs[:, positive][:, order].T
    # scaled by the largest component, sign included: the same shape on every run
    largest = shapes[np.arange(len(order)), np.abs(shapes).argmax(axis=1)]
    shapes /= largest[:, None]
    return Buckling(factors, shapes.reshape(len(order), model.n_nodes, 6), float(load))


def lowest_eigenvalue(model, group: str, x, rot, quat, load: float, solver=None) -> float:
    """The real part of the lowest eigenvalue lambda = omega^2 of the tangent about a state,
    rigid modes left out: positive on a stable path, zero at a critical point. Seven modes:
    six may be rigid."""
    found = modes(model, group, x, rot, quat, 7, load, solver, damping=False)
    elastic = found.eigenvalue[~found.rigid]
    return float(elastic[0].real) if len(elastic) else math.nan
