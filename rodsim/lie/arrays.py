"""Conversions between the tuple representation of rodsim.lie and NumPy arrays."""

import numpy as np


def m(a) -> tuple:
    """(3, 3) array-like -> row-major 9-tuple of floats."""
    return tuple(float(x) for x in np.asarray(a, dtype=float).reshape(9))


def v(a) -> tuple:
    """Array-like of n numbers -> n-tuple of floats."""
    return tuple(float(x) for x in np.asarray(a, dtype=float).ravel())


def as_matrix(t) -> np.ndarray:
    """Row-major 9-tuple -> (3, 3) array."""
    return np.asarray(t, dtype=float).reshape(3, 3)


def as_vector(t) -> np.ndarray:
    """Tuple -> 1-D array."""
    return np.asarray(t, dtype=float)
