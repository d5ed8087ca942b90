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
from rodsim.model.loads import pack_loads
from rodsim.model.supports import pack_supports

RIGID = 1e-8  # |lambda| / max(diag K / diag M) below which a mode may be rigid
RIGID_SHAPE = 1e-6  # M-norm of a mode outside the rigid motions below which it is rigid
SYMMETRIC = 1e-9  # |K - K^T| / |K| below which K is taken as symmetric
PREBUCKLING_TURN = 1e-6  # rad per unit load multiplier above which buckling() refuses


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
    """C (6N, 6N): alpha M on the translations (mass-proportional damping) plus beta times the
    elements' material stiffness at the reference (strain-rate damping; docs/theory.md,
    "Damping"), in spatial increments. The supports' dashpots are not in it."""
    n = model.n_nodes
    c = sp.block_diag([np.diag([m, m, m, 0.0, 0.0, 0.0]) for m in model.alpha * model.mass])
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
            vals, vecs = sla.eigsh((kf + kf.T) * 0.5, k=count, M=mf, sigma=sigma, which="LM")
        else:
            vals, vecs = sla.eigs(kf, k=count, M=mf, sigma=sigma, which="LM")
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
    """Linear buckling about the reference: the load factors lambda (M,) at which K0 + lambda
    K_G is singular, lowest positive first, and the buckling modes shape (M, N, 6) (u, theta)
    per node, scaled to a largest displacement or rotation of 1."""

    factor: np.ndarray
    shape: np.ndarray


def buckling(model, group: str, count: int, state_at, epsilon: float = 1e-4) -> Buckling:
    """Linear buckling factors of the case's loads (docs/modal.md, "Buckling"): K0, the
    tangent at the reference without loads (material stiffness), and the geometric stiffness
    of the stresses under the loads, K_G = (K_T(epsilon) - K0) / epsilon from the tangent at
    the equilibrium at load multiplier epsilon (state_at(epsilon) -> (x, rot, quat));
    K0 phi = -lambda K_G phi solved as -K_G phi = (1/lambda) K0 phi (K0 positive definite:
    a supported structure). Valid for loads that do not turn the sections before buckling
    (columns, plates under in-plane loads); others are refused with advice."""
    x0, rot0, quat0 = state_at(0.0)
    k0, _ = matrices(model, group, x0, rot0, quat0, 0.0)
    x, rot, quat = state_at(epsilon)
    # the nodes' rotation per unit load: K_T(eps) then also holds the material stiffness
    # turned by the rotations, which is not geometric stiffness (a lateral-torsional case
    # came out at a fifth of its critical load): refuse rather than mislead
    cosines = (np.einsum("nij,nij->n", rot, rot0) - 1.0) / 2.0
    turn = float(np.arccos(np.clip(cosines, -1.0, 1.0)).max()) / epsilon
    if turn > PREBUCKLING_TURN:
        raise NumericalError(
            f"the loads turn the sections before the structure buckles ({turn:.3g} rad per "
            "unit load multiplier): linear buckling about the reference does not apply; follow "
            "the equilibrium path with solver.equilibrium.eigenvalue: true (docs/modal.md)"
        )
    kt, _ = matrices(model, group, x, rot, quat, epsilon)
    free = np.flatnonzero(~model.fixed.ravel())
    k0f = k0[free][:, free]
    kg = ((kt - k0)[free][:, free]) / epsilon
    k0s = ((k0f + k0f.T) * 0.5).tocsc()
    kgs = ((kg + kg.T) * 0.5).tocsc()
    count = min(count, len(free) - 2)
    try:
        if len(free) <= 64:
            mu, vecs = la.eigh(-kgs.toarray(), k0s.toarray())
        else:
            mu, vecs = sla.eigsh(-kgs, k=count, M=k0s, which="LA")
    except (RuntimeError, np.linalg.LinAlgError, sla.ArpackError) as exc:
        raise NumericalError(
            f"linear buckling failed ({exc}): the structure must be supported (K0 positive "
            "definite)"
        ) from None
    positive = mu > 1e-12 * max(np.abs(mu).max(), 1e-300)
    if not positive.any():
        raise NumericalError(
            "no positive buckling factor: the loads compress nothing (no loads, or tension "
            "only), so no multiple of them buckles the structure"
        )
    order = np.argsort(-mu[positive])[:count]
    factors = 1.0 / mu[positive][order]
    shapes = np.zeros((len(order), 6 * model.n_nodes))
    shapes[:, free] = vecs[:, positive][:, order].T
    shapes /= np.abs(shapes).max(axis=1, keepdims=True)
    return Buckling(factors, shapes.reshape(len(order), model.n_nodes, 6))


def lowest_eigenvalue(model, group: str, x, rot, quat, load: float, solver=None) -> float:
    """The real part of the lowest eigenvalue lambda = omega^2 of the tangent about a state,
    rigid modes left out: positive on a stable path, zero at a critical point. Seven modes:
    six may be rigid."""
    found = modes(model, group, x, rot, quat, 7, load, solver, damping=False)
    elastic = found.eigenvalue[~found.rigid]
    return float(elastic[0].real) if len(elastic) else math.nan
