"""The results of a modal or a buckling analysis (docs/modal.md): the records the analysis
(rodsim.integrators.modal) returns and the results file's modes/ and buckling/ groups hold."""

from dataclasses import dataclass

import numpy as np


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


@dataclass(frozen=True)
class Buckling:
    """Linear buckling about a state at load multiplier `load` (0: the reference): the load
    factors (M,) at which the tangent, with the geometric stiffness of added load linear in
    the load multiplier, is singular, lowest positive first, as multipliers of the case's
    loads (the preload included), and the buckling modes shape (M, N, 6) (u, theta) per
    node, scaled to a largest component of +1."""

    factor: np.ndarray
    shape: np.ndarray
    load: float = 0.0
