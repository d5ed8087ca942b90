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

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from rodsim.errors import NumericalError
from rodsim.integrators import implicit
from rodsim.integrators import vi_residual as vr
from rodsim.model import plate, rod
from rodsim.model.loads import pack_loads
from rodsim.model.supports import pack_supports

RIGID = 1e-8  # |lambda| / max(diag K / diag M) below which a mode may be rigid
RIGID_SHAPE = 1e-6  # M-norm of a mode outside the rigid motions below which it is rigid
SYMMETRIC = 1e-9  # |K - K^T| / |K| below which K is taken as symmetric
# buckling about the reference: the size (displacement / model size, rotation) of the state
# whose stresses give K_G: its strains stand ~1e10 above round-off, its nonlinearity is ~1e-6
LINEAR_AMPLITUDE = 1e-6


@dataclass(frozen=True)
class Modes:
    """The lowest M modes about a state, by increasing |eigenvalue|.

    eigenvalue (M,) complex: lambda = omega^2 (1/time^2), real for a symmetric K;
    frequency (M,): sqrt(max(Re lambda, 0)) / (2 pi), cycles per time unit (Hz in SI);
    shape (M, N, 6): the mode (u, theta) per node in global axes, mass-normalised
    (phi^T M phi = 1; the real part for a complex mode); effective_mass (M, 6): the effective
    modal mass along x, y, z (mass) and about the global x, y, z axes through the origin
    (mass length^2), (phi^T M r)^2 for the rigid motion r; rigid (M,) bool; symmetric: K was
    symmetric (conservative loads); load: the load multiplier of the state; damping_ratio
    (M,): phi^T C phi / (2 omega) with rodsim's damping matrix (0 without damping, NaN for
    rigid modes)."""

    eigenvalue: np.ndarray
    frequency: np.ndarray
    shape: np.ndarray
    effective_mass: np.ndarray
    rigid: np.ndarray
    symmetric: bool
    load: float
    damping_ratio: np.ndarray | None = None


def damping_matrix(model, group: str) -> sp.csc_matrix:
    """C (6N, 6N): alpha M on the translations (mass-proportional damping), beta times the
    elements' material stiffness at the reference (strain-rate damping; docs/theory.md,
    "Damping") and the supports' dashpots at the reference (C_t on u, Lambda0 C_r Lambda0^T on
    theta: psi' = Lambda0^T omega at psi = 0), in spatial increments."""
    n = model.n_nodes
    blocks = np.zeros((n, 6, 6))
    blocks[:, :3, :3] = (model.alpha * model.mass)[:, None, None] * np.eye(3)
    s = model.supports
    np.add.at(blocks[:, :3, :3], s.node, s.c_t)
    np.add.at(blocks[:, 3:, 3:], s.node, np.einsum("sij,sjk,slk->sil", s.r0, s.c_r, s.r0))
    c = sp.block_diag(list(blocks), format="csc")
    if model.beta > 0.0:
        elastic = dataclasses.replace(
            model,
            loads=pack_loads(()),
            supports=pack_supports((), model.x0, model.rot0),
        )
        quat = np.empty((n, 4))
        implicit.quaternions(model.rot0, quat)
        k0, _ = matrices(elastic, group, model.x0, model.rot0, quat, 0.0)
        c = c + model.beta * (k0 + k0.T) * 0.5
    return sp.csc_matrix(c)


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
    sigma = -1e-9 * scale  # below zero: rigid modes (lambda = 0) factor too
    try:
        if len(free) <= max(2 * count, 12):  # tiny: dense (M-orthonormal where symmetric)
            k_dense, m_dense = kf.toarray(), mf.toarray()
            if symmetric:
                vals, vecs = la.eigh((k_dense + k_dense.T) * 0.5, m_dense)
            else:
                vals, vecs = la.eig(k_dense, m_dense)
        elif symmetric:
            vals, vecs = sla.eigsh(
                (kf + kf.T) * 0.5, k=count, M=mf, sigma=sigma, which="LM", v0=_start(len(free))
            )
        else:
            vals, vecs = sla.eigs(kf, k=count, M=mf, sigma=sigma, which="LM", v0=_start(len(free)))
    except (RuntimeError, sla.ArpackError) as exc:
        raise NumericalError(f"the eigensolver failed: {exc}") from None
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


@dataclass(frozen=True)
class Buckling:
    """Linear buckling about a state at load multiplier `load` (0: the reference): the load
    factors (M,) at which the tangent, extrapolated linearly in the load multiplier, is
    singular, lowest positive first, as multipliers of the case's loads (the preload
    included), and the buckling modes shape (M, N, 6) (u, theta) per node, scaled to a
    largest component of 1."""

    factor: np.ndarray
    shape: np.ndarray
    load: float = 0.0


def prestressed(model, x: np.ndarray, rot: np.ndarray, scale: float = 1.0):
    """The model whose reference configuration carries scale times the strains of the state
    (x, rot) (their change from the reference): its reference strains shifted by them (rods:
    Gamma0, Omega0; plates: eps0, kappa0, g0, w0), so that the strain measures at the
    reference, less the shifted ones, are scale (state's - reference's). Its tangent at the
    reference is the material stiffness of the undeformed structure plus the geometric
    stiffness of those stresses, linear in them (docs/modal.md, "Buckling")."""
    gamma, omega = rod.strains_at(model.rods, x, rot)
    r = model.rods
    rods = r._replace(
        gamma0=r.gamma0 - scale * (gamma - r.gamma0), omega0=r.omega0 - scale * (omega - r.omega0)
    )
    p = model.plates
    if p.conn.shape[0]:
        eps, kappa, g, w = plate.strains_at(p, x, rot)
        p = p._replace(
            eps0=p.eps0 - scale * (eps - p.eps0),
            kappa0=p.kappa0 - scale * (kappa - p.kappa0),
            g0=p.g0 - scale * (g - p.g0),
            w0=p.w0 - scale * (w - p.w0),
        )
    return dataclasses.replace(model, rods=rods, plates=p)


def _amplitude(x0, rot0, x, rot) -> float:
    """The size of a state's departure from the reference: the largest of its nodal
    displacements over the model's size and its nodal rotations (rad)."""
    size = float(np.linalg.norm(np.ptp(x0, axis=0))) or 1.0
    cosines = (np.einsum("nij,nij->n", rot, rot0) - 1.0) / 2.0
    turn = float(np.arccos(np.clip(cosines, -1.0, 1.0)).max())
    return max(float(np.abs(x - x0).max()) / size, turn)


def buckling(
    model, group: str, count: int, state_at, load: float = 0.0, epsilon: float = 1e-4
) -> Buckling:
    """Linear buckling factors of the case's loads about the equilibrium at load multiplier
    `load` (docs/modal.md, "Buckling"), state_at(s) -> (x, rot, quat) the equilibrium at s.
    The factors solve (K_T + mu K_G) phi = 0, factor = load + mu, as -K_G phi = (1/mu) K_T
    phi (K_T positive definite: a supported structure below its critical load).

    About the reference (load 0), the classical problem: K_T is the material stiffness and
    K_G the geometric stiffness of the stresses at load multiplier 1, extrapolated linearly
    from the equilibrium at a small multiplier (epsilon, rescaled so that the state moves by
    about LINEAR_AMPLITUDE, at most 1) and taken at the undeformed reference (prestressed;
    prebuckling deformations left out, as in the textbook formulas); at multiplier 1, not
    epsilon, so that K_G is not lost to round-off beside K_T whatever the loads' size. About
    a preload, K_T = K_T(load) and K_G = dK_T/ds by a
    backward difference over epsilon along the path (time functions may end at 1): the
    extrapolation also holds the change of the material stiffness with the deformation, and
    tends to the nonlinear critical point as the preload approaches it."""
    x0, rot0, quat0 = (np.array(a) for a in state_at(load))
    k0, _ = matrices(model, group, x0, rot0, quat0, load)
    other = load + epsilon if load == 0.0 else load - epsilon
    x, rot, quat = state_at(other)
    if load == 0.0:  # the stresses at multiplier 1 on the reference
        amplitude = _amplitude(x0, rot0, x, rot)
        if amplitude > 0.0 and not 0.1 < amplitude / LINEAR_AMPLITUDE < 10.0:
            # the state's strains must stand above round-off and stay linear
            other = min(1.0, other * LINEAR_AMPLITUDE / amplitude)
            x, rot, quat = state_at(other)
        stressed = prestressed(model, x, rot, 1.0 / other)
        other = 1.0
        kt, _ = matrices(stressed, group, x0, rot0, quat0, other)
    else:
        kt, _ = matrices(model, group, x, rot, quat, other)
    free = np.flatnonzero(~model.fixed.ravel())
    k0f = k0[free][:, free]
    kg = ((kt - k0)[free][:, free]) / (other - load)
    k0s = ((k0f + k0f.T) * 0.5).tocsc()
    kgs = ((kg + kg.T) * 0.5).tocsc()
    count = min(count, len(free) - 2)
    try:
        if len(free) <= 64:
            mu, vecs = la.eigh(-kgs.toarray(), k0s.toarray())
        else:
            mu, vecs = sla.eigsh(-kgs, k=count, M=k0s, which="LA", v0=_start(len(free)))
    except (RuntimeError, np.linalg.LinAlgError, sla.ArpackError) as exc:
        state = "reference" if load == 0.0 else f"preload (load multiplier {load:g})"
        raise NumericalError(
            f"linear buckling failed ({exc}): the tangent at the {state} must be positive "
            "definite (a supported structure, below its critical load)"
        ) from None
    positive = mu > 1e-12 * max(np.abs(mu).max(), 1e-300)
    if not positive.any():
        raise NumericalError(
            "no positive buckling factor: the loads compress nothing (no loads, or tension "
            "only), so no multiple of them buckles the structure"
        )
    order = np.argsort(-mu[positive])[:count]
    factors = load + 1.0 / mu[positive][order]
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
