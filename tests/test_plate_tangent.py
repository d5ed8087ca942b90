"""The plate element's analytic spatial tangent (rodsim.model.plate_tangent) against the
derivatives of the force kernel it differentiates (plate_kernels.assemble_plate_forces).

Convention: delta x = u, delta Lambda = hat(theta) Lambda, K_ab = -d(f_a, tau_a)/d(u_b, theta_b).

Tolerances.
- CS_TOL = 1e-10 per 6x6 block, relative to the element's largest block: the complex step
  (step 1e-30) of the force kernel is exact to rounding, as is the analytic K; both are ~1e3
  flops of O(1) data (sizes ~1, E = 1e3, h = 0.2), so they differ by ~1e-15 (measured <= 7e-16).
  A missing or wrong term fails by far more: the smallest terms checked (the default drilling
  stiffness, 1e-4 G h) are ~1e-5 of the largest block.
- FD_TOL = 1e-7: central differences with step FD_STEP = 1e-5 on the same data; the forces are
  polynomials of degree <= 3 in (x, d), so the truncation is ~FD_STEP^2 |f'''| ~ 1e-10 and the
  round-off ~1e-16 |f| / FD_STEP ~ 1e-11 of the largest block.
- ROUND = 1e-12: symmetry of K at a stress-free configuration (two sums of the same terms).
"""

import numpy as np
import pytest
from test_plate_element import expm, hat

from rodsim.model.plate import assemble_plate_forces, make_plates
from rodsim.model.plate_tangent import add_plate_tangents, plate_slots
from rodsim.model.tangent_blocks import block_index

CS = 1.0e-30
CS_TOL = 1.0e-10
FD_STEP = 1.0e-5
FD_TOL = 1.0e-7
ROUND = 1.0e-12
E_MOD, NU, H, RHO = 1.0e3, 0.3, 0.2, 1.0

# --- numpy helpers ----------------------------------------------------------------------------


def dense_pattern(n):
    """A BSR pattern holding every (a, b) node pair: indptr, indices."""
    return np.arange(0, n * n + 1, n), np.tile(np.arange(n), n)


def analytic(pl, x, rot, pattern=None):
    """(N,N,6,6) K assembled by add_plate_tangents on a dense (or the given) pattern."""
    n = x.shape[0]
    indptr, indices = dense_pattern(n) if pattern is None else pattern
    k = np.zeros((indices.size, 6, 6))
    add_plate_tangents(pl, x, rot, plate_slots(pl, indptr, indices), k)
    out = np.zeros((n, n, 6, 6))
    for a in range(n):
        for p in range(indptr[a], indptr[a + 1]):
            out[a, indices[p]] = k[p]
    return out


def forces(pl, x, rot):
    f = np.zeros_like(x)
    tau = np.zeros_like(x)
    assemble_plate_forces(pl, x, rot, f, tau)
    return np.concatenate([f, tau], axis=1)


def complex_step(pl, x, rot):
    """(N,N,6,6) -d(f, tau)/d(u, theta) by complex step of the complex128 force kernel."""
    n = x.shape[0]
    out = np.zeros((n, n, 6, 6))
    for b in range(n):
        for j in range(6):
            xc = x.astype(complex)
            rc = rot.astype(complex)
            if j < 3:
                xc[b, j] += 1j * CS
            else:  # exp(i s hat(e)) R = R + i s hat(e) R + O(s^2), real O(s^2)
                rc[b] += 1j * CS * hat(np.eye(3)[j - 3]) @ rot[b]
            out[:, b, :, j] = -forces(pl, xc, rc).imag / CS
    return out


def central_differences(pl, x, rot):
    n = x.shape[0]
    out = np.zeros((n, n, 6, 6))
    for b in range(n):
        for j in range(6):
            side = []
            for sign in (1.0, -1.0):
                xp = x.copy()
                rp = rot.copy()
                if j < 3:
                    xp[b, j] += sign * FD_STEP
                else:
                    rp[b] = expm(sign * FD_STEP * np.eye(3)[j - 3]) @ rot[b]
                side.append(forces(pl, xp, rp))
            out[:, b, :, j] = -(side[0] - side[1]) / (2.0 * FD_STEP)
    return out


def block_errors(k, ref):
    """Per-block max |k - ref| relative to the largest |ref| block (N,N)."""
    scale = np.abs(ref).max()
    return np.abs(k - ref).max(axis=(2, 3)) / scale


# --- elements ---------------------------------------------------------------------------------

Q_GLOBAL = expm(np.array([0.4, -0.7, 0.3]))  # the elements lie in no coordinate plane


def frames(rng, n, tilt):
    """Nodal frames: a random in-plane turn (frames not along the element's lines) and a
    director tilted by up to `tilt` from e3."""
    out = np.zeros((n, 3, 3))
    for a in range(n):
        turn = expm(np.array([0.0, 0.0, rng.uniform(-1.0, 1.0)]))
        out[a] = expm(tilt * np.append(rng.normal(size=2), 0.0)) @ turn
    return out


def geometry(name):
    """conn (1,4), x0 (N,3), rot0 (N,3,3) of one element."""
    rng = np.random.default_rng(7)
    quad = np.array([[0.0, 0.0], [1.2, 0.1], [1.1, 0.9], [-0.1, 1.0]])
    tri = np.array([[0.0, 0.0], [1.1, 0.15], [0.3, 0.95]])
    if name.startswith("quad"):
        conn = np.array([[0, 1, 2, 3]])
        xy = quad
        z = np.array([0.0, 0.15, -0.1, 0.12])  # warped: no common plane
    else:
        conn = np.array([[0, 1, 2, 2]])
        xy = tri
        z = np.array([0.0, 0.1, -0.05])
    flat = name.endswith("flat")
    x0 = np.column_stack([xy, 0.0 * z if flat else z])
    # curved: nodal directors of a curved surface, so kappa0 and g0 are not zero
    rot0 = frames(rng, x0.shape[0], 0.0 if flat else 0.25)
    return conn, x0 @ Q_GLOBAL.T, np.einsum("ij,njk->nik", Q_GLOBAL, rot0)


def stressed(x0, rot0, seed=3):
    """A strongly stressed state: 30 % stretch, 20 % contraction, shear and a bending
    deflection in the element's plane, random nodal moves (~0.15) and nodal rotations (~0.5
    rad), so that membrane, bending, shear and drilling resultants are all large."""
    rng = np.random.default_rng(seed)
    n = x0.shape[0]
    local = x0 @ Q_GLOBAL
    grad = np.array([[1.3, 0.2, 0.0], [0.0, 0.8, 0.0], [0.0, 0.0, 1.0]])
    local = local @ grad.T
    local[:, 2] += 0.3 * local[:, 0] ** 2 - 0.2 * local[:, 0] * local[:, 1]
    x = local @ Q_GLOBAL.T + 0.15 * rng.normal(size=(n, 3))
    turn = np.array([expm(0.5 * rng.normal(size=3)) for _ in range(n)])
    return x, np.einsum("nij,njk->nik", turn, rot0)


GEOMETRIES = ["quad-flat", "quad-warped", "tri-flat", "tri-curved"]
DRILLING = [0.0, 1.0e-4, 1.0]  # none, the default, and large enough to dominate its blocks


def case(geom, state, drilling):
    conn, x0, rot0 = geometry(geom)
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO, drilling=drilling)
    x, rot = (x0, rot0) if state == "unstressed" else stressed(x0, rot0)
    return pl, x, rot


@pytest.mark.parametrize("drilling", DRILLING)
@pytest.mark.parametrize("state", ["unstressed", "stressed"])
@pytest.mark.parametrize("geom", GEOMETRIES)
def test_matches_complex_step(geom, state, drilling):
    pl, x, rot = case(geom, state, drilling)
    k = analytic(pl, x, rot)
    ref = complex_step(pl, x, rot)
    assert block_errors(k, ref).max() < CS_TOL
    if state == "stressed":  # the geometric and director parts are large: K is unsymmetric
        kk = k.transpose(0, 2, 1, 3).reshape(6 * x.shape[0], -1)
        assert np.abs(kk - kk.T).max() > 1.0e-3 * np.abs(kk).max()


@pytest.mark.parametrize("geom", GEOMETRIES)
def test_matches_central_differences(geom):
    pl, x, rot = case(geom, "stressed", 1.0)
    k = analytic(pl, x, rot)
    assert block_errors(k, central_differences(pl, x, rot)).max() < FD_TOL


@pytest.mark.parametrize("geom", GEOMETRIES)
def test_symmetric_when_stress_free(geom):
    """At the reference, and after a rigid motion of it, the stresses vanish and so do the
    geometric and director parts: K = sum B^T C B is symmetric (and not zero)."""
    conn, x0, rot0 = geometry(geom)
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO, drilling=1.0)
    q = expm(np.array([1.0, 2.0, -0.5]))
    for x, rot in [(x0, rot0), (x0 @ q.T + 0.3, np.einsum("ij,njk->nik", q, rot0))]:
        n = x.shape[0]
        kk = analytic(pl, x, rot).transpose(0, 2, 1, 3).reshape(6 * n, 6 * n)
        assert np.abs(kk).max() > 1.0
        assert np.abs(kk - kk.T).max() < ROUND * np.abs(kk).max()
        # rigid motions are in its null space: translations, and (omega x x, omega)
        for j in range(3):
            e = np.eye(3)[j]
            for mode in (
                np.tile(np.append(e, 0.0 * e), n),
                np.hstack([np.cross(e, x), np.tile(e, (n, 1))]).ravel(),
            ):
                assert np.abs(kk @ mode).max() < ROUND * np.abs(kk).max() * np.abs(x).max() * 10


def patch():
    """Two quads and two triangles on a curved, warped surface, sharing nodes (numbered out of
    order), stressed."""
    rng = np.random.default_rng(11)
    xy = np.array([[0, 0], [1, 0], [2, 0.1], [0, 1], [1.1, 0.9], [2, 1], [0.9, 1.8]], dtype=float)
    x0 = np.column_stack([xy, 0.2 * xy[:, 0] ** 2 - 0.1 * xy[:, 1] ** 2])
    conn = np.array([[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 6, 6], [4, 5, 6, 6]])
    perm = rng.permutation(7)
    conn = perm[conn]
    x0 = x0[np.argsort(perm)]
    rot0 = frames(rng, 7, 0.2)
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO, drilling=0.5)
    x, rot = stressed(x0, rot0, seed=5)
    return pl, x, rot


def test_patch_on_a_sparse_pattern():
    """Assembly through plate_slots on the mesh's own sparsity (node pairs sharing an element):
    shared nodes add up, and the pattern holds every block the forces couple."""
    pl, x, rot = patch()
    n = x.shape[0]
    pairs = set()
    for e in range(pl.conn.shape[0]):
        nodes = pl.conn[e, : pl.n_nodes_el[e]]
        pairs |= {(a, b) for a in nodes for b in nodes}
    rows = [sorted(b for a, b in pairs if a == r) for r in range(n)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows)
    k = analytic(pl, x, rot, (indptr, indices))
    ref = complex_step(pl, x, rot)
    assert block_errors(k, ref).max() < CS_TOL
    outside = [(a, b) for a in range(n) for b in range(n) if (a, b) not in pairs]
    assert outside and all(np.all(ref[a, b] == 0.0) for a, b in outside)


def test_slots():
    pl, x, rot = patch()
    n = x.shape[0]
    indptr, indices = dense_pattern(n)
    slots = plate_slots(pl, indptr, indices)
    tri = pl.n_nodes_el == 3
    assert slots.dtype == np.int64 and slots.shape == (4, 4, 4)
    assert np.all(slots[tri, 3, :] == -1) and np.all(slots[tri, :, 3] == -1)
    nodes = pl.conn[~tri]
    assert np.array_equal(slots[~tri], nodes[:, :, None] * n + nodes[:, None, :])
    assert np.array_equal(block_index(indptr, indices, [2, -1], [5, 3]), [2 * n + 5, -1])
    with pytest.raises(ValueError, match="not in the sparsity pattern"):
        plate_slots(pl, np.arange(n + 1), np.arange(n))  # the diagonal only
