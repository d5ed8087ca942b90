"""The implicit residual's Jacobian assembled from the terms' tangent stiffness blocks.

Every term with a ``tangent`` hook (rodsim.terms.contract) adds its spatial tangent stiffness
K_ab = -d(f_a, tau_a)/d(u_b, theta_b) (6x6 blocks; delta x = u, delta Lambda = hat(theta)
Lambda; material, geometric and load stiffness) into the Jacobian's BSR blocks. This module
applies what is the same for all terms: the chain rule from the spatial increments to the
unknowns of the residual (rodsim.integrators.vi_residual) and the rows of the supported
components (docs/implicit_scheme.md, "The Jacobian"). It compiles in float64 only: where every
term present has a tangent, no force kernel is compiled in complex128.

Statics at Delta = 0 (the equilibrium Newton iteration, the stability test, the modal
stiffness). The residual is R_a = -(f_a, tau_a) at g = g_k tau(Delta), with
x = x_k + T_a translation(Delta), T_a = I on SO3xR3 and Lambda_a on SE3, and
Lambda = Lambda_k cay(Delta_w). At Delta = 0, cay'(0) = I and translation'(0) = I, so
u_b = T_b dDelta_v and theta_b = Lambda_b dDelta_w, and

    J_ab = dR_a/dDelta_b = K_ab diag(T_b, Lambda_b).

A supported component's row is its constraint (vi_residual._constraint_rows): a held position
component k gives the row e_k^T T_a, a held rotation component the row k of Lambda_a (the
spatial Cayley increment Lambda_a Delta_w), a prescribed rotation the row e_k (the body
increment against its target), all on the node's own block.
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.model import forces


@kernel
def _diagonal(indptr, indices, a):
    for r in range(indptr[a], indptr[a + 1]):
        if indices[r] == a:
            return r
    return -1


@kernel
def stiffness(terms, sd, slots, data):
    """data (B,6,6) = K, the terms' spatial tangent stiffness blocks at sd.x, sd.rot,
    sd.quat and load multiplier sd.t (no constraint rows): the stability test's matrix."""
    data[:] = 0.0
    forces.add_tangents(terms, slots, sd.x, sd.rot, sd.quat, sd.t, data)


@kernel
def static_jacobian(m, terms, sd, slots, indptr, indices, data):
    """data (B,6,6) = dR/dDelta at Delta = 0 of the static residual (module docstring) at the
    configuration sd.x (N,3), sd.rot (N,3,3), sd.quat (N,4) and load multiplier sd.t; slots:
    the terms' block indices (rodsim.model.forces.tangent_slots); (indptr, indices) the BSR
    structure (block rows = nodes). m: the nodes (fixed (N,6), the supported components)."""
    stiffness(terms, sd, slots, data)
    se3 = sd.se3 == 1
    n = sd.x.shape[0]
    col = np.zeros(3)
    for a in range(n):
        for r in range(indptr[a], indptr[a + 1]):
            b = indices[r]
            for i in range(6):
                if se3:
                    for j in range(3):
                        col[j] = (
                            data[r, i, 0] * sd.rot[b, 0, j]
                            + data[r, i, 1] * sd.rot[b, 1, j]
                            + data[r, i, 2] * sd.rot[b, 2, j]
                        )
                    for j in range(3):
                        data[r, i, j] = col[j]
                for j in range(3):
                    col[j] = (
                        data[r, i, 3] * sd.rot[b, 0, j]
                        + data[r, i, 4] * sd.rot[b, 1, j]
                        + data[r, i, 5] * sd.rot[b, 2, j]
                    )
                for j in range(3):
                    data[r, i, 3 + j] = col[j]
        if not (
            m.fixed[a, 0]
            or m.fixed[a, 1]
            or m.fixed[a, 2]
            or m.fixed[a, 3]
            or m.fixed[a, 4]
            or m.fixed[a, 5]
        ):
            continue
        d = _diagonal(indptr, indices, a)
        for k in range(6):
            if not m.fixed[a, k]:
                continue
            for r in range(indptr[a], indptr[a + 1]):
                for j in range(6):
                    data[r, k, j] = 0.0
            if k < 3:
                for j in range(3):
                    data[d, k, j] = sd.rot[a, k, j] if se3 else (1.0 if j == k else 0.0)
            elif sd.rot_prescribed[a]:
                data[d, k, k] = 1.0
            else:
                for j in range(3):
                    data[d, k, 3 + j] = sd.rot[a, k - 3, j]
