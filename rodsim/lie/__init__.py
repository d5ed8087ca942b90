"""Lie groups SO(3) and SE(3): maps, Jacobians and quaternions usable from numba kernels."""
