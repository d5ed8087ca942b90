"""Strain-rate (Kelvin–Voigt) damping of the plate elements, as for the rods
(rodsim.model.rod_viscous): viscous resultants beta A eps', beta D kappa', beta S gamma' (and
beta k_drill for the drilling measure) through the transpose of the strain map, a discrete
Lagrange–d'Alembert force that does no work on rigid motions (docs/theory.md, "Damping"), so a free
plate keeps both momenta.

Explicit scheme: the strain rates are the directional derivative of the strains along the nodal
velocities (v, spatial omega), taken by complex step, x + i e v, (I + i e hat omega) Lambda,
which is exact (the strains are analytic in x and Lambda; Im/e keeps first order only).
Implicit scheme: (strains(g_k+1) - strains(g_k)) / h at the midpoint (rodsim.integrators).

Arrays: N nodes, P plates; x, vel, omg (N,3), rot (N,3,3); strain arrays (P,4,3), (P,4,2),
(P,4) as plate_kernels.plate_strains.
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.model.plate_kernels import plate_resultant_forces, plate_strains

_STEP = 1.0e-30


@kernel
def viscous_resultants(pl, beta, deps, dkap, dgam, ddrill, n, m, q, r):
    """n = beta A deps, m = beta D dkap, q = beta S dgam, r = beta kd ddrill at every slot."""
    for e in range(pl.conn.shape[0]):
        for s in range(4):
            for i in range(3):
                a = 0.0 * deps[e, s, 0]
                b = 0.0 * deps[e, s, 0]
                for j in range(3):
                    a += pl.a_mat[e, i, j] * deps[e, s, j]
                    b += pl.d_mat[e, i, j] * dkap[e, s, j]
                n[e, s, i] = beta * a
                m[e, s, i] = beta * b
            for i in range(2):
                q[e, s, i] = beta * (
                    pl.s_mat[e, i, 0] * dgam[e, s, 0] + pl.s_mat[e, i, 1] * dgam[e, s, 1]
                )
            r[e, s] = beta * pl.kd[e, s] * ddrill[e, s]


@kernel
def plate_damping_forces(pl, x, rot, vel, omg, beta, f, tau):
    """Add the plates' strain-rate damping forces for nodal velocities vel and spatial angular
    velocities omg (N,3) to f, tau (N,3)."""
    npl = pl.conn.shape[0]
    if npl == 0 or beta == 0.0:
        return
    n_nodes = x.shape[0]
    xc = np.empty((n_nodes, 3), dtype=np.complex128)
    rc = np.empty((n_nodes, 3, 3), dtype=np.complex128)
    for a in range(n_nodes):
        for i in range(3):
            xc[a, i] = x[a, i] + 1j * _STEP * vel[a, i]
        w = (omg[a, 0], omg[a, 1], omg[a, 2])
        for j in range(3):
            c = (rot[a, 0, j], rot[a, 1, j], rot[a, 2, j])
            wc = (w[1] * c[2] - w[2] * c[1], w[2] * c[0] - w[0] * c[2], w[0] * c[1] - w[1] * c[0])
            for i in range(3):
                rc[a, i, j] = rot[a, i, j] + 1j * _STEP * wc[i]
    eps = np.zeros((npl, 4, 3), dtype=np.complex128)
    kap = np.zeros((npl, 4, 3), dtype=np.complex128)
    gam = np.zeros((npl, 4, 2), dtype=np.complex128)
    drl = np.zeros((npl, 4), dtype=np.complex128)
    plate_strains(pl, xc, rc, eps, kap, gam, drl)
    inv = 1.0 / _STEP
    n = np.zeros((npl, 4, 3))
    m = np.zeros((npl, 4, 3))
    q = np.zeros((npl, 4, 2))
    r = np.zeros((npl, 4))
    viscous_resultants(
        pl, beta, eps.imag * inv, kap.imag * inv, gam.imag * inv, drl.imag * inv, n, m, q, r
    )
    plate_resultant_forces(pl, x, rot, n, m, q, r, f, tau)
