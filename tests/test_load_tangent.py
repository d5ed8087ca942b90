"""Load stiffness of follower pressure and follower nodal loads (rodsim.model.load_tangent)
against the derivatives of the load kernels (loads.plate_pressure, loads.external_forces).

Convention: delta x = u, delta Lambda = hat(theta) Lambda, K_ab = -d(f_a, tau_a)/d(u_b, theta_b).

Tolerances.
- CS_TOL = 1e-10 per 6x6 block, relative to the largest block: the complex step (step 1e-30) of
  the complex128 load kernels is exact to rounding, like the analytic blocks (a few dozen
  flops of O(1) data: measured ~1e-16).
- FD_TOL = 1e-7: central differences, step FD_STEP = 1e-5; the pressure forces are quadratic
  in x (exact central differences up to round-off ~1e-16 |f| / FD_STEP), the follower loads
  smooth in the rotation (truncation ~FD_STEP^2 |f|).
- ROUND = 1e-12: skew blocks and the symmetry of a closed surface's matrix (sums of the same
  terms in two orders).
"""

import numpy as np
import pytest
from test_plate_element import expm, hat

from rodsim.model import timefunc
from rodsim.model.load_tangent import add_follower_tangents, add_pressure_tangents, follower_slots
from rodsim.model.loads import (
    Gravity,
    NodalLoad,
    Pressure,
    external_forces,
    pack_loads,
    plate_pressure,
)
from rodsim.model.plate import make_plates
from rodsim.model.plate_tangent import plate_slots

CS = 1.0e-30
CS_TOL = 1.0e-10
FD_STEP = 1.0e-5
FD_TOL = 1.0e-7
ROUND = 1.0e-12
T = 1.4  # ramp(2.0): the multiplier is 0.7


def dense_pattern(n):
    return np.arange(0, n * n + 1, n), np.tile(np.arange(n), n)


def derivative(load, x, rot, how):
    """(N,N,6,6) -d load(x, rot)/d(u, theta), load -> (N,6), by complex step or central
    differences."""
    n = x.shape[0]
    out = np.zeros((n, n, 6, 6))
    for b in range(n):
        for j in range(6):
            e = np.eye(3)[j % 3]
            if how == "complex":
                xc = x.astype(complex)
                rc = rot.astype(complex)
                if j < 3:
                    xc[b, j] += 1j * CS
                else:
                    rc[b] += 1j * CS * hat(e) @ rot[b]
                out[:, b, :, j] = -load(xc, rc).imag / CS
                continue
            side = []
            for sign in (1.0, -1.0):
                xp = x.copy()
                rp = rot.copy()
                if j < 3:
                    xp[b, j] += sign * FD_STEP
                else:
                    rp[b] = expm(sign * FD_STEP * e) @ rot[b]
                side.append(load(xp, rp))
            out[:, b, :, j] = -(side[0] - side[1]) / (2.0 * FD_STEP)
    return out


def block_errors(k, ref):
    return np.abs(k - ref).max(axis=(2, 3)) / np.abs(ref).max()


def unfold(k):
    n = k.shape[0]
    return k.transpose(0, 2, 1, 3).reshape(6 * n, 6 * n)


# --- pressure ---------------------------------------------------------------------------------


def open_patch():
    """A warped quad and a triangle sharing an edge, deformed."""
    rng = np.random.default_rng(2)
    x0 = np.array(
        [[0, 0, 0], [1.2, 0.1, 0.15], [1.1, 0.9, -0.1], [-0.1, 1.0, 0.12], [2.0, 0.5, 0.1]]
    )
    conn = np.array([[0, 1, 2, 3], [1, 4, 2, 2]])
    rot0 = np.array([expm(0.2 * rng.normal(size=3)) for _ in range(5)])
    x = x0 @ np.diag([1.3, 0.8, 1.0]).T + 0.15 * rng.normal(size=x0.shape)
    return conn, x0, rot0, x


def closed_surface(kind):
    """A deformed closed surface, nodal directors pointing out: a cube of 6 quads or a
    tetrahedron of 4 triangles. Every face's pressure pushes outwards."""
    rng = np.random.default_rng(4)
    if kind == "cube":
        x0 = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
        conn = np.array(
            [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
        )
    else:
        x0 = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], float)
        conn = np.array([[0, 1, 2, 2], [0, 3, 1, 1], [0, 2, 3, 3], [1, 3, 2, 2]])
    rot0 = np.zeros((x0.shape[0], 3, 3))
    for a, p in enumerate(x0):
        d3 = p / np.linalg.norm(p)
        d1 = np.cross([0.3, 0.5, 0.8], d3)
        d1 /= np.linalg.norm(d1)
        rot0[a] = np.column_stack([d1, np.cross(d3, d1), d3])
    x = 1.2 * x0 + 0.2 * rng.normal(size=x0.shape)
    return conn, x0, rot0, x


def pressure_case(geom):
    conn, x0, rot0, x = open_patch() if geom == "open" else closed_surface(geom)
    pl = make_plates(conn, x0, rot0, 1.0e3, 0.3, 0.1, 1.0)
    every = np.arange(len(conn))
    # two entries add up; the open patch's pressure is not uniform (element 0 gets more), a
    # closed surface's is (else no volume potential, and no symmetry)
    pressures = [
        Pressure(every, 3.0, timefunc.ramp(2.0)),
        Pressure([0] if geom == "open" else every, -1.0),
    ]
    ld = pack_loads([], pressures=pressures)
    return ld, pl, x, rot0


def pressure_tangent(ld, pl, x, rot):
    n = x.shape[0]
    indptr, indices = dense_pattern(n)
    k = np.zeros((n * n, 6, 6))
    add_pressure_tangents(ld, pl, T, x, rot, plate_slots(pl, indptr, indices), k)
    return k.reshape(n, n, 6, 6)


def pressure_load(ld, pl):
    def load(x, rot):
        f = np.zeros_like(x)
        plate_pressure(ld, pl, T, x, rot, f)
        return np.concatenate([f, 0.0 * f], axis=1)

    return load


@pytest.mark.parametrize("geom", ["open", "cube", "tetrahedron"])
def test_pressure_matches_derivatives(geom):
    ld, pl, x, rot = pressure_case(geom)
    k = pressure_tangent(ld, pl, x, rot)
    load = pressure_load(ld, pl)
    assert block_errors(k, derivative(load, x, rot, "complex")).max() < CS_TOL
    assert block_errors(k, derivative(load, x, rot, "central")).max() < FD_TOL
    # only force rows and translation columns
    assert np.all(k[:, :, 3:, :] == 0.0) and np.all(k[:, :, :, 3:] == 0.0)


@pytest.mark.parametrize("geom", ["open", "cube", "tetrahedron"])
def test_pressure_structure(geom):
    """Every 3x3 block is skew (hat of p sum w N_a (N_b,1 phi_2 - N_b,2 phi_1)); the matrix
    is unsymmetric for an open surface and symmetric for a closed one (f = p dV/dx)."""
    ld, pl, x, rot = pressure_case(geom)
    k = pressure_tangent(ld, pl, x, rot)
    scale = np.abs(k).max()
    kuu = k[:, :, :3, :3]
    assert np.abs(kuu + np.swapaxes(kuu, 2, 3)).max() < ROUND * scale
    kk = unfold(k)
    asym = np.abs(kk - kk.T).max()
    if geom == "open":
        assert asym > 1.0e-2 * scale
    else:
        assert asym < ROUND * scale
    # a uniform translation changes no force
    assert np.abs(kuu.sum(axis=1)).max() < ROUND * scale


# --- follower nodal loads ---------------------------------------------------------------------


def nodal_case():
    rng = np.random.default_rng(9)
    n = 4
    loads = [
        NodalLoad(
            [0, 1],
            force=(1.0, 2.0, -3.0),
            moment=(0.5, -1.0, 2.0),
            follower=True,
            time=timefunc.ramp(2.0),
        ),  # fmt: skip
        NodalLoad([1], force=(-2.0, 0.5, 1.0), moment=(1.0, 1.0, 0.0), follower=True),
        NodalLoad([2, 3], force=[[1.0, 0.0, 2.0], [0.0, -1.0, 0.5]], moment=(0.0, 3.0, 1.0)),
        NodalLoad([3], force=(4.0, 4.0, 4.0), follower=True, time=timefunc.constant(0.0)),
    ]
    ld = pack_loads(loads, gravity=[Gravity((0.0, 0.0, -9.81))])
    x = rng.normal(size=(n, 3))
    rot0 = np.array([expm(rng.normal(size=3)) for _ in range(n)])
    rot = np.array([expm(rng.normal(size=3)) for _ in range(n)]) @ rot0
    mass = rng.uniform(1.0, 2.0, size=n)
    return ld, x, rot, rot0, mass


def external_load(ld, rot0, mass):
    def load(x, rot):
        f = np.zeros_like(x)
        tau = np.zeros_like(x)
        external_forces(ld, T, x, rot, rot0, mass, f, tau)
        return np.concatenate([f, tau], axis=1)

    return load


def test_follower_matches_derivatives():
    """Followers: K_aa = [[0, hat(f)], [0, hat(m)]]; dead loads, gravity and a follower at a
    zero multiplier add nothing (their derivative is zero)."""
    ld, x, rot, rot0, mass = nodal_case()
    n = x.shape[0]
    indptr, indices = dense_pattern(n)
    slots = follower_slots(ld, indptr, indices)
    assert np.array_equal(slots, np.where(ld.follower != 0, ld.node * (n + 1), -1))
    k = np.zeros((n * n, 6, 6))
    add_follower_tangents(ld, T, rot, rot0, slots, k)
    k = k.reshape(n, n, 6, 6)
    load = external_load(ld, rot0, mass)
    ref = derivative(load, x, rot, "complex")
    assert block_errors(k, ref).max() < CS_TOL
    assert block_errors(k, derivative(load, x, rot, "central")).max() < FD_TOL
    for a in range(n):
        for b in range(n):
            if a != b or a >= 2:  # nodes 2, 3 carry only dead (or zero) loads
                assert np.all(k[a, b] == 0.0) and np.all(ref[a, b] == 0.0)
    # the closed form: hat of the current follower force and moment, s Lambda Lambda0^T F
    q = np.einsum("nij,nkj->nik", rot, rot0)
    f0 = 0.7 * q[0] @ [1.0, 2.0, -3.0]
    m0 = 0.7 * q[0] @ [0.5, -1.0, 2.0]
    f1 = 0.7 * q[1] @ [1.0, 2.0, -3.0] + q[1] @ [-2.0, 0.5, 1.0]
    m1 = 0.7 * q[1] @ [0.5, -1.0, 2.0] + q[1] @ [1.0, 1.0, 0.0]
    for a, fa, ma in [(0, f0, m0), (1, f1, m1)]:
        expected = np.zeros((6, 6))
        expected[:3, 3:] = hat(fa)
        expected[3:, 3:] = hat(ma)
        assert np.abs(k[a, a] - expected).max() < ROUND * np.abs(expected).max()
