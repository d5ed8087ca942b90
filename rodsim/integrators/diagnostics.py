"""Energies, momenta and nodal velocities from the discrete Legendre transforms.

With spatial nodal momenta p, pi and lumped mass m_a and material inertia I_a:
K = sum |p_a|^2/(2 m_a) + 1/2 Pi_a.I_a^{-1} Pi_a, Pi_a = Lambda_a^T pi_a (docs/theory.md, "The
explicit scheme");
L = sum p_a, J = sum (pi_a + x_a x p_a) about the origin (docs/theory.md, "The explicit scheme".
"""

from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3


class Diagnostics(NamedTuple):
    """Scalars of one state: energies and total momenta."""

    kinetic: float
    internal: float
    external: float
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray

    @property
    def total(self) -> float:
        return self.kinetic + self.internal + self.external


@kernel
def _mat(arr, a):
    r = arr[a]
    return (r[0, 0], r[0, 1], r[0, 2], r[1, 0], r[1, 1], r[1, 2], r[2, 0], r[2, 1], r[2, 2])


@kernel
def kinetic_energy(mass, inertia, rot, p, pi):
    """Kinetic energy (scalar) of the nodal momenta."""
    k = 0.0
    for a in range(p.shape[0]):
        pa = (p[a, 0], p[a, 1], p[a, 2])
        big_pi = so3.matTvec(_mat(rot, a), (pi[a, 0], pi[a, 1], pi[a, 2]))
        k += 0.5 * so3.dot(pa, pa) / mass[a]
        if big_pi[0] != 0.0 or big_pi[1] != 0.0 or big_pi[2] != 0.0:
            k += 0.5 * so3.dot(big_pi, so3.solve3(_mat(inertia, a), big_pi))
    return k


@kernel
def nodal_velocities(mass, inertia, rot, p, pi, v, omega):
    """Spatial velocities v = p/m and angular velocities omega = Lambda I^{-1} Lambda^T pi
    (N,3), written into v and omega."""
    for a in range(p.shape[0]):
        r = _mat(rot, a)
        big_pi = so3.matTvec(r, (pi[a, 0], pi[a, 1], pi[a, 2]))
        w = so3.matvec(r, so3.solve3(_mat(inertia, a), big_pi))
        for k in range(3):
            v[a, k] = p[a, k] / mass[a]
            omega[a, k] = w[k]


def momenta(x, p, pi) -> tuple[np.ndarray, np.ndarray]:
    """Total linear momentum and angular momentum about the origin."""
    return p.sum(axis=0), (pi + np.cross(x, p)).sum(axis=0)


def diagnostics(model, state, internal: float, external: float) -> Diagnostics:
    """Energies and momenta of a state whose internal energy and external potential are known."""
    k = kinetic_energy(model.mass, model.inertia, state.rot, state.p, state.pi)
    lin, ang = momenta(state.x, state.p, state.pi)
    return Diagnostics(k, internal, external, lin, ang)
