"""Top frequencies of the rod elements, for the explicit scheme's stable step (rodsim.terms.rods
gives them to rodsim.integrators.stable_step; docs/theory.md, "Stable step").

Each element's omega_max comes from its 12x12 tangent stiffness at the reference state
(central differences of the exact internal-force kernel) against its own share of the lumped
mass and rotary inertia (Irons' element eigenvalue bound: the assembled system's top
eigenvalue is at most the largest element's). It captures the axial and shear wave limits
h/c, the shear-rotation cut-off sqrt(GA/rhoI) and bending/torsion, whichever governs.
"""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.model.rod import element_response, end_frames_of


@kernel
def _element_gradient(x1, x2, r1, r2, h, c1, c2, g0, w0, out):
    n, t1, t2 = element_response(x1, x2, r1, r2, h, c1, c2, g0, w0)[:3]
    for k in range(3):
        out[k] = -n[k]
        out[3 + k] = -t1[k]
        out[6 + k] = n[k]
        out[9 + k] = -t2[k]


@kernel
def element_stiffness(conn, length, c1, c2, gamma0, omega0, x, rot, eps_rel, out):
    """Tangent stiffness (E,12,12) by central differences of the exact gradient.

    DOF order per element: u1, theta1, u2, theta2 (spatial rotation variations). Column j is
    (g(q + e_j eps) - g(q - e_j eps)) / (2 eps) with eps = eps_rel * h (translations) or
    eps_rel (rotations)."""
    gp = np.zeros(12)
    gm = np.zeros(12)
    for e in range(conn.shape[0]):
        i = conn[e, 0]
        j = conn[e, 1]
        h = length[e]
        base_x = ((x[i, 0], x[i, 1], x[i, 2]), (x[j, 0], x[j, 1], x[j, 2]))
        base_r = (
            (
                rot[i, 0, 0],
                rot[i, 0, 1],
                rot[i, 0, 2],
                rot[i, 1, 0],
                rot[i, 1, 1],
                rot[i, 1, 2],
                rot[i, 2, 0],
                rot[i, 2, 1],
                rot[i, 2, 2],
            ),
            (
                rot[j, 0, 0],
                rot[j, 0, 1],
                rot[j, 0, 2],
                rot[j, 1, 0],
                rot[j, 1, 1],
                rot[j, 1, 2],
                rot[j, 2, 0],
                rot[j, 2, 1],
                rot[j, 2, 2],
            ),
        )
        c1e = (c1[e, 0], c1[e, 1], c1[e, 2])
        c2e = (c2[e, 0], c2[e, 1], c2[e, 2])
        g0e = (gamma0[e, 0], gamma0[e, 1], gamma0[e, 2])
        w0e = (omega0[e, 0], omega0[e, 1], omega0[e, 2])
        for col in range(12):
            node = col // 6
            kind = (col // 3) % 2
            comp = col % 3
            eps = eps_rel * h if kind == 0 else eps_rel
            for sign in (1.0, -1.0):
                d = (
                    sign * eps if comp == 0 else 0.0,
                    sign * eps if comp == 1 else 0.0,
                    sign * eps if comp == 2 else 0.0,
                )
                x1, x2 = base_x
                r1, r2 = base_r
                if kind == 0:
                    if node == 0:
                        x1 = so3.add(x1, d)
                    else:
                        x2 = so3.add(x2, d)
                else:
                    if node == 0:
                        r1 = so3.matmul(so3.exp(d), r1)
                    else:
                        r2 = so3.matmul(so3.exp(d), r2)
                _element_gradient(x1, x2, r1, r2, h, c1e, c2e, g0e, w0e, gp if sign > 0.0 else gm)
            for r in range(12):
                out[e, r, col] = (gp[r] - gm[r]) / (2.0 * eps)


# Elements per pass of the frequency computation: each element's 12x12 matrices and their
# temporaries take ~6 KB, which for a whole 1e6-element rod peaked at 5.8 GB, four times the
# model itself; in chunks the temporaries stay near 50 MB (rodsim.resources counts them in its
# baseline). Elements are independent: the result does not depend on the chunk size.
CHUNK = 8192


def element_max_frequencies(el, x0, rot0, rho_a, rho_i) -> np.ndarray:
    """omega_max (E,) (rad per time unit) of every element of el (RodElements) against its own
    lumped share of mass and inertia: rho_a (E,) mass and rho_i (E,3) rotary inertia per
    length, at the reference x0 (N,3), rot0 (N,3,3)."""
    ne = el.conn.shape[0]
    out = np.empty(ne)
    for lo in range(0, ne, CHUNK):
        part = slice(lo, lo + CHUNK)
        out[part] = _element_max_frequencies(el, x0, rot0, rho_a, rho_i, part)
    return out


def _element_max_frequencies(el, x0, rot0, rho_a, rho_i, part: slice) -> np.ndarray:
    """element_max_frequencies of the elements in `part`."""
    conn, length = el.conn[part], el.length[part]
    ne = conn.shape[0]
    k = np.zeros((ne, 12, 12))
    # each element on its own end frames (Lambda_a Q_ea: see RodElements.offset)
    ends = end_frames_of(conn, rot0, el.offset[part])
    own = np.arange(2 * ne, dtype=np.int64).reshape(ne, 2)
    element_stiffness(
        own,
        length,
        el.c1[part],
        el.c2[part],
        el.gamma0[part],
        el.omega0[part],
        np.ascontiguousarray(x0[conn].reshape(-1, 3)),
        np.ascontiguousarray(ends.reshape(-1, 3, 3)),
        1.0e-6,
        k,
    )
    k = 0.5 * (k + k.transpose(0, 2, 1))
    # to material rotation axes, where the element's inertia share is diagonal
    t = np.zeros((ne, 12, 12))
    eye = np.eye(3)
    for node in (0, 1):
        r = ends[:, node]
        t[:, 6 * node : 6 * node + 3, 6 * node : 6 * node + 3] = eye
        t[:, 6 * node + 3 : 6 * node + 6, 6 * node + 3 : 6 * node + 6] = r
    k = np.einsum("eji,ejk,ekl->eil", t, k, t)
    half = 0.5 * length
    diag = np.concatenate(
        [
            np.repeat((half * rho_a[part])[:, None], 3, axis=1),
            half[:, None] * rho_i[part],
        ],
        axis=1,
    )
    diag = np.concatenate([diag, diag], axis=1)
    s = 1.0 / np.sqrt(diag)
    a = s[:, :, None] * k * s[:, None, :]
    lam = np.linalg.eigvalsh(a)[:, -1]
    return np.sqrt(np.maximum(lam, 0.0))
