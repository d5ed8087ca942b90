"""Scalar functions that kernels can call with float64 or complex128 arguments.

The implicit integrator builds its Newton Jacobian by complex-step differentiation of the
residual (Squire & Trapp 1998; Martins, Sturdza & Alonso 2003): with a perturbation i*eps in
one unknown, Im R / eps is the exact derivative to round-off (no subtractive cancellation),
so the Jacobian is consistent with the residual whatever the residual contains. That needs
every function on the residual's path to be complex-analytic, with branches decided on real
parts. ``math.sqrt`` and ``math.atan2`` reject complex arguments, hence these overloads: on
float64 they compile to exactly the math-module call (the explicit kernels are unchanged), on
complex128 to an analytic continuation.
"""

import cmath
import math

from numba import types
from numba.extending import overload


def sqrt(x):
    """Square root (float or complex); usable only inside kernels."""
    raise NotImplementedError("rodsim.lie.scalar.sqrt is for numba kernels")


def atan2(y, x):
    """atan2 for real y, x; for complex ones its first-order complex-step continuation."""
    raise NotImplementedError("rodsim.lie.scalar.atan2 is for numba kernels")


@overload(sqrt, inline="always")
def _sqrt(x):
    if isinstance(x, types.Complex):
        return lambda x: cmath.sqrt(x)
    return lambda x: math.sqrt(x)


@overload(atan2, inline="always")
def _atan2(y, x):
    if isinstance(y, types.Complex) or isinstance(x, types.Complex):

        def impl(y, x):
            # Im parts are O(eps): atan2(y, x) + i (x dy - y dx)/(x^2 + y^2) is exact to O(eps^2)
            yr = y.real
            xr = x.real
            d = xr * xr + yr * yr
            return complex(math.atan2(yr, xr), (xr * y.imag - yr * x.imag) / d)

        return impl
    return lambda y, x: math.atan2(y, x)
