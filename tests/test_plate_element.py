"""The geometrically exact plate element (rodsim.model.plate): exact gradient, complex-step
safety, objectivity, patch tests, rigid modes, shear locking, drilling, mass and pressure.

Conventions: nodal rotations (3,3) with columns d1, d2, d3; spatial variations
delta Lambda = hat(theta) Lambda; kernel forces/moments are minus the energy gradient.

Tolerances.
- FD: central differences with EPS = 1e-6 on O(1) data (element sizes ~1, E ~ 1e3, h = 0.1,
  strains <= 0.3): truncation ~EPS^2 |U'''| and round-off ~1e-16 |U|/EPS are both <= 1e-9 of the
  force scale, so FD_TOL = 1e-7 relative leaves a margin of 100; a wrong term in the gradient
  (e.g. dropping the drilling moment, ~1e-3 of the forces) fails by >= 1e-5.
- ROUND = 1e-12 relative: two evaluations of the same O(1) quantity through ~1e3 flops.
- Linear patch tests by complex step (step 1e-30): exact derivatives, compared to ROUND.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from rodsim.model.plate import (
    CENTRE,
    assemble_plate_forces,
    element_stiffness,
    lumped_plate_inertia,
    make_plates,
    plate_fields,
    plate_max_frequencies,
    plate_resultant_forces,
    plate_strains,
    pressure_forces,
)

EPS = 1.0e-6
FD_TOL = 1.0e-7
ROUND = 1.0e-12
CS = 1.0e-30
E_MOD, NU, H, RHO = 1.0e3, 0.3, 0.1, 2.0

# --- independent numpy helpers ----------------------------------------------------------------


def hat(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def expm(a):
    """Rodrigues' formula."""
    t = np.linalg.norm(a)
    k = hat(a)
    if t < 1e-8:
        return np.eye(3) + k + 0.5 * k @ k
    return np.eye(3) + np.sin(t) / t * k + (1 - np.cos(t)) / t**2 * k @ k


def random_rotation(rng):
    return expm(rng.normal(size=3))


# the MacNeal–Harder distorted patch (0.24 x 0.12, four interior nodes), scaled by 5
PATCH_NODES = 5.0 * np.array(
    [
        [0, 0],
        [0.24, 0],
        [0.24, 0.12],
        [0, 0.12],
        [0.04, 0.02],
        [0.18, 0.03],
        [0.16, 0.08],
        [0.08, 0.08],
    ]
)
PATCH_QUADS = np.array([[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7], [4, 5, 6, 7]])


def patch(kind):
    """2D nodes (8,2) and connectivity of the distorted patch, quads or triangles."""
    if kind == "quad":
        return PATCH_NODES, PATCH_QUADS
    tris = [[q[0], q[1], q[2], q[2]] for q in PATCH_QUADS] + [
        [q[0], q[2], q[3], q[3]] for q in PATCH_QUADS
    ]
    return PATCH_NODES, np.array(tris)


def embed(xy, q):
    """Nodes in the plane spanned by q's first two columns; frames q (directors q e3)."""
    x = np.c_[xy, np.zeros(len(xy))] @ q.T
    return x, np.broadcast_to(q, (len(xy), 3, 3)).copy()


def grid(n, a=1.0, kind="quad"):
    """Square [0, a]^2 with n x n cells: quads, or each cell split in 2 triangles (alternating
    diagonals, so that the mesh has no preferred direction)."""
    s = np.linspace(0.0, a, n + 1)
    xy = np.array([(u, v) for v in s for u in s])
    cells = []
    for j in range(n):
        for i in range(n):
            c = [
                j * (n + 1) + i,
                j * (n + 1) + i + 1,
                (j + 1) * (n + 1) + i + 1,
                (j + 1) * (n + 1) + i,
            ]
            if kind == "quad":
                cells.append(c)
            elif (i + j) % 2 == 0:
                cells += [[c[0], c[1], c[2], c[2]], [c[0], c[2], c[3], c[3]]]
            else:
                cells += [[c[0], c[1], c[3], c[3]], [c[1], c[2], c[3], c[3]]]
    return xy, np.array(cells)


def forces(pl, x, rot):
    f = np.zeros_like(x)
    tau = np.zeros_like(x)
    u = assemble_plate_forces(pl, x, rot, f, tau)
    return u, f, tau


def strains(pl, x, rot):
    npl = pl.conn.shape[0]
    out = (
        np.zeros((npl, 4, 3), x.dtype),
        np.zeros((npl, 4, 3), x.dtype),
        np.zeros((npl, 4, 2), x.dtype),
        np.zeros((npl, 4), x.dtype),
    )
    plate_strains(pl, x, rot, *out)
    return out


def deformed_state(kind, seed, curved=False):
    """A plate (patch in a random plane, optionally a faceted curved reference with tilted
    directors) and a large random deformation of it."""
    rng = np.random.default_rng(seed)
    xy, conn = patch(kind)
    x0, rot0 = embed(xy, random_rotation(rng))
    if curved:  # out-of-plane noise: non-planar (warped) quads, faceted triangles
        x0 = x0 + 0.1 * rng.normal(size=(len(x0), 1)) * rot0[:, :, 2]
        rot0 = np.array([expm(0.2 * rng.normal(size=3)) @ r for r in rot0])
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO)
    x = x0 + 0.15 * rng.normal(size=x0.shape)
    rot = np.array([expm(0.6 * rng.normal(size=3)) @ r for r in rot0])
    return pl, x0, rot0, x, rot


def global_stiffness(pl, x, rot, dofs):
    """Sparse tangent stiffness on the global dofs (node, component) -> index map ``dofs``
    (N,6) int (-1: not kept), assembled from the complex-step element stiffnesses."""
    k_el = element_stiffness(pl, x, rot)
    idx = dofs[pl.conn].reshape(len(pl.conn), 24)
    idx[pl.n_nodes_el == 3, 18:] = -1
    rows = np.repeat(idx[:, :, None], 24, axis=2)
    cols = np.repeat(idx[:, None, :], 24, axis=1)
    keep = (rows >= 0) & (cols >= 0)
    n = dofs.max() + 1
    return sp.coo_matrix((k_el[keep], (rows[keep], cols[keep])), shape=(n, n)).tocsc()


# --- exact gradient -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["quad", "tri"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("curved", [False, True])
def test_forces_are_minus_energy_gradient(kind, seed, curved):
    pl, _, _, x, rot = deformed_state(kind, seed, curved)
    _, f, tau = forces(pl, x, rot)
    fd_f = np.zeros_like(f)
    fd_t = np.zeros_like(tau)
    for a in range(x.shape[0]):
        for k in range(3):
            dx = np.zeros_like(x)
            dx[a, k] = EPS
            fd_f[a, k] = -(forces(pl, x + dx, rot)[0] - forces(pl, x - dx, rot)[0]) / (2 * EPS)
            rp, rm = rot.copy(), rot.copy()
            rp[a] = expm(EPS * np.eye(3)[k]) @ rot[a]
            rm[a] = expm(-EPS * np.eye(3)[k]) @ rot[a]
            fd_t[a, k] = -(forces(pl, x, rp)[0] - forces(pl, x, rm)[0]) / (2 * EPS)
    scale = max(np.abs(f).max(), np.abs(tau).max())
    assert np.abs(fd_f - f).max() <= FD_TOL * scale
    assert np.abs(fd_t - tau).max() <= FD_TOL * scale


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_resultant_forces_reproduce_internal_forces(kind):
    pl, _, _, x, rot = deformed_state(kind, 3, curved=True)
    _, f, tau = forces(pl, x, rot)
    eps, kap, gam, drill = strains(pl, x, rot)
    n = np.einsum("eij,esj->esi", pl.a_mat, eps)
    m = np.einsum("eij,esj->esi", pl.d_mat, kap)
    q = np.einsum("eij,esj->esi", pl.s_mat, gam)
    f2, tau2 = np.zeros_like(x), np.zeros_like(x)
    plate_resultant_forces(pl, x, rot, n, m, q, pl.kd * drill, f2, tau2)
    scale = np.abs(f).max()
    assert np.abs(f2 - f).max() <= ROUND * scale
    assert np.abs(tau2 - tau).max() <= ROUND * scale
    # energy = sum of weighted strain energy densities + drilling
    dens = 0.5 * (
        np.einsum("esi,esi->es", eps, n)
        + np.einsum("esi,esi->es", kap, m)
        + np.einsum("esi,esi->es", gam, q)
    )
    u = np.sum(pl.weight * dens) + 0.5 * np.sum(pl.kd * drill**2)
    assert u == pytest.approx(forces(pl, x, rot)[0], rel=ROUND)


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_complex_step_matches_central_differences(kind):
    pl, _, _, x, rot = deformed_state(kind, 4, curved=True)
    rng = np.random.default_rng(5)
    dx = rng.normal(size=x.shape)
    dth = rng.normal(size=x.shape)
    xc = x + 1j * CS * dx
    rc = rot + 1j * CS * np.einsum("nij,njk->nik", np.array([hat(t) for t in dth]), rot)
    _, fc, tc = forces(pl, xc, rc)
    # ... and through the resultant map with complex resultants
    eps, kap, gam, drill = strains(pl, xc, rc)
    n = np.einsum("eij,esj->esi", pl.a_mat, eps)
    m = np.einsum("eij,esj->esi", pl.d_mat, kap)
    q = np.einsum("eij,esj->esi", pl.s_mat, gam)
    fr, tr = np.zeros_like(xc), np.zeros_like(xc)
    plate_resultant_forces(pl, xc, rc, n, m, q, pl.kd * drill, fr, tr)

    def state(s):
        return x + s * dx, np.array([expm(s * t) @ r for t, r in zip(dth, rot, strict=True)])

    _, fp, tp = forces(pl, *state(EPS))
    _, fm, tm = forces(pl, *state(-EPS))
    scale = max(np.abs(fc.imag).max(), np.abs(tc.imag).max()) / CS
    for cs, fd in ((fc, fp - fm), (tc, tp - tm), (fr, fp - fm), (tr, tp - tm)):
        assert np.abs(cs.imag / CS - fd / (2 * EPS)).max() <= FD_TOL * scale


# --- objectivity and balance ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_objectivity_and_balance(kind):
    pl, x0, rot0, x, rot = deformed_state(kind, 6, curved=True)
    assert abs(forces(pl, x0, rot0)[0]) <= 1e-13  # stress-free faceted reference
    assert all(np.abs(s).max() <= 1e-13 for s in strains(pl, x0, rot0))
    rng = np.random.default_rng(7)
    q, c = random_rotation(rng), rng.normal(size=3)
    u, f, tau = forces(pl, x, rot)
    u2, _, _ = forces(pl, x @ q.T + c, np.einsum("ij,njk->nik", q, rot))
    assert u2 == pytest.approx(u, rel=ROUND)
    for s1, s2 in zip(
        strains(pl, x, rot), strains(pl, x @ q.T + c, np.einsum("ij,njk->nik", q, rot)), strict=True
    ):
        assert np.abs(s1 - s2).max() <= ROUND * np.abs(s1).max()
    scale = np.abs(f).max() * np.abs(x).max()
    assert np.abs(f.sum(axis=0)).max() <= ROUND * scale
    assert np.abs((tau + np.cross(x, f)).sum(axis=0)).max() <= ROUND * scale


# --- patch tests ------------------------------------------------------------------------------


def _voigt(t):
    return np.array([t[0, 0], t[1, 1], 2 * t[0, 1]])


def _in_element_basis(pl, q, tensor):
    """Voigt components (P,3) of a symmetric 2D patch tensor in each element's basis."""
    c = np.einsum("eai,ij->eaj", pl.basis, q)[:, :, :2]  # (P, alpha, patch dir)
    return np.array([_voigt(ce @ tensor @ ce.T) for ce in c])


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_nonlinear_membrane_and_shear_patch(kind):
    """x = Q (G X) with a large 3x2 gradient G and the polar rotation (no drilling strain):
    constant eps = 1/2(G^T G - I); then constant director c != normal: gamma = G^T c."""
    rng = np.random.default_rng(8)
    q = random_rotation(rng)
    xy, conn = patch(kind)
    x0, rot0 = embed(xy, q)
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO)
    g = np.array([[1.3, 0.2], [-0.3, 0.8], [0.4, -0.5]])
    w = g @ np.linalg.inv(_sqrtm_spd(g.T @ g))  # polar factor: w^T g symmetric
    frame = np.c_[w, np.cross(w[:, 0], w[:, 1])]
    x = xy @ g.T @ q.T
    rot = np.broadcast_to(q @ frame, (len(xy), 3, 3)).copy()
    eps, kap, gam, drill = strains(pl, x, rot)
    nq = pl.n_nodes_el[0]
    expected = _in_element_basis(pl, q, 0.5 * (g.T @ g - np.eye(2)))
    assert np.abs(eps[:, :nq] - expected[:, None]).max() <= ROUND
    assert np.abs(kap[:, :nq]).max() <= ROUND
    assert np.abs(gam[:, :nq]).max() <= ROUND
    assert np.abs(drill[:, :nq]).max() <= ROUND
    ev = _voigt(0.5 * (g.T @ g - np.eye(2)))
    area = pl.area.sum()
    assert forces(pl, x, rot)[0] == pytest.approx(0.5 * area * ev @ pl.a_mat[0] @ ev, rel=ROUND)
    mem, ben, she = np.zeros((len(conn), 3)), np.zeros((len(conn), 3)), np.zeros((len(conn), 2))
    plate_fields(pl, x, rot, mem, ben, she)
    assert np.abs(mem - expected @ pl.a_mat[0].T).max() <= ROUND * E_MOD * H
    # constant director tilted about an in-plane axis: pure shear, no drilling strain
    tilt = q @ expm(np.array([0.3, -0.5, 0.0])) @ q.T
    rot = np.einsum("ij,njk->nik", tilt, rot0)
    eps, kap, gam, drill = strains(pl, x0, rot)
    c = q.T @ rot[0][:, 2]
    expected = np.einsum("eai,ij,j->ea", pl.basis, q, c)  # gamma = F^T c, element basis
    assert np.abs(gam[:, :nq] - expected[:, None]).max() <= ROUND
    assert np.abs(eps[:, :nq]).max() <= ROUND
    assert np.abs(kap[:, :nq]).max() <= ROUND
    gs = c[:2]
    assert forces(pl, x0, rot)[0] == pytest.approx(0.5 * area * gs @ pl.s_mat[0] @ gs, rel=ROUND)


def _sqrtm_spd(a):
    lam, v = np.linalg.eigh(a)
    return v @ np.diag(np.sqrt(lam)) @ v.T


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_linear_patch_membrane_bending_shear(kind):
    """Nodal values of the exact small-displacement field with constant membrane strain
    sym(G), curvature B and shear g: u = (G X, -1/2 X.B X + g.X), director tilt B X, drilling
    (G21 - G12)/2. The linearised strains (complex step) are reproduced exactly at every
    quadrature point (the quadratic w is exact for the MITC edge tying), and the quadratic
    energy 1/2 u.K u is the analytic one."""
    rng = np.random.default_rng(9)
    q = random_rotation(rng)
    xy, conn = patch(kind)
    x0, rot0 = embed(xy, q)
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO)
    gm = np.array([[0.3, -0.2], [0.5, -0.4]])
    b = np.array([[0.7, 0.25], [0.25, -0.35]])
    gs = np.array([0.15, -0.1])
    w = -0.5 * np.einsum("ni,ij,nj->n", xy, b, xy) + xy @ gs
    u = np.c_[xy @ gm.T, w] @ q.T
    tilt = np.c_[xy @ b.T, np.zeros(len(xy))]
    theta = np.cross([0.0, 0.0, 1.0], tilt)
    theta[:, 2] = 0.5 * (gm[1, 0] - gm[0, 1])
    theta = theta @ q.T
    xc = x0 + 1j * CS * u
    rc = rot0 + 1j * CS * np.einsum("nij,njk->nik", np.array([hat(t) for t in theta]), rot0)
    eps, kap, gam, drill = (s.imag / CS for s in strains(pl, xc, rc))
    nq = pl.n_nodes_el[0]
    want_e = _in_element_basis(pl, q, 0.5 * (gm + gm.T))
    want_k = _in_element_basis(pl, q, b)
    want_g = np.einsum("eai,ij,j->ea", pl.basis, q, np.r_[gs, 0.0])
    assert np.abs(eps[:, :nq] - want_e[:, None]).max() <= ROUND
    assert np.abs(kap[:, :nq] - want_k[:, None]).max() <= ROUND
    assert np.abs(gam[:, :nq] - want_g[:, None]).max() <= ROUND
    assert np.abs(drill[:, :nq]).max() <= ROUND
    dofs = np.arange(6 * len(xy)).reshape(-1, 6)
    k = global_stiffness(pl, x0, rot0, dofs)
    vec = np.c_[u, theta].ravel()
    ev, kv = _voigt(0.5 * (gm + gm.T)), _voigt(b)
    analytic = (
        0.5
        * pl.area.sum()
        * (ev @ pl.a_mat[0] @ ev + kv @ pl.d_mat[0] @ kv + gs @ pl.s_mat[0] @ gs)
    )
    assert 0.5 * vec @ (k @ vec) == pytest.approx(analytic, rel=1e-10)


# --- rigid modes --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_exactly_six_zero_energy_modes(kind):
    rng = np.random.default_rng(10)
    xy = np.array([[0.0, 0.0], [1.1, 0.1], [1.3, 0.9], [-0.2, 1.2]])
    conn = np.array([[0, 1, 2, 3]]) if kind == "quad" else np.array([[0, 1, 2, 2]])
    x0, rot0 = embed(xy, random_rotation(rng))
    pl = make_plates(conn, x0, rot0, E_MOD, NU, H, RHO)
    n = 24 if kind == "quad" else 18
    k = element_stiffness(pl, x0, rot0)[0, :n, :n]
    assert np.abs(k - k.T).max() <= 1e-12 * np.abs(k).max()
    lam = np.linalg.eigvalsh(k)
    assert np.all(np.abs(lam[:6]) <= 1e-12 * lam[-1])
    # the smallest deformation mode is the drilling one, ~1e-5 of the largest here
    assert np.all(lam[6:] >= 1e-7 * lam[-1])


# --- shear locking: thin plate under pressure --------------------------------------------------


def _navier_ss(n_terms=199):
    m = np.arange(1, n_terms + 1, 2)
    mm, nn = np.meshgrid(m, m)
    s = np.sin(mm * np.pi / 2) * np.sin(nn * np.pi / 2) / (mm * nn * (mm**2 + nn**2) ** 2)
    return 16.0 / np.pi**6 * s.sum()


CLAMPED_KIRCHHOFF = 0.00126532  # Taylor & Govindjee 2004 (T&W-K: 0.00126)


def plate_centre_deflection(n, support, kind="quad", drill_factor=1.0, thickness=1e-3):
    """Linear centre deflection of a unit square plate under unit pressure, in units of
    q a^4/D, from the bending dofs (w, theta_x, theta_y) of the tangent at the reference."""
    xy, conn = grid(n, 1.0, kind)
    x0, rot0 = embed(xy, np.eye(3))
    pl = make_plates(conn, x0, rot0, 1.0e6, 0.3, thickness, 1.0, drilling=1e-4 * drill_factor)
    fixed = np.zeros((len(xy), 6), bool)
    on_x = np.isclose(xy[:, 0], 0.0) | np.isclose(xy[:, 0], 1.0)
    on_y = np.isclose(xy[:, 1], 0.0) | np.isclose(xy[:, 1], 1.0)
    fixed[on_x | on_y, 2] = True
    if support == "clamped":
        fixed[on_x | on_y, 3:5] = True
    else:  # hard simple support: the director does not tilt along the edge
        fixed[on_x, 3] = True
        fixed[on_y, 4] = True
    keep = np.zeros((len(xy), 6), bool)
    keep[:, 2:5] = ~fixed[:, 2:5]  # flat plate: bending decouples from (u, v, drilling)
    dofs = -np.ones((len(xy), 6), np.int64)
    dofs[keep] = np.arange(keep.sum())
    k = global_stiffness(pl, x0, rot0, dofs)
    f = np.zeros_like(x0)
    pressure_forces(pl, x0, rot0, np.ones(len(conn)), f)
    rhs = np.zeros(keep.sum())
    rhs[dofs[keep[:, 2], 2]] = f[keep[:, 2], 2]
    sol = spla.spsolve(k, rhs)
    centre = np.argmin(np.linalg.norm(xy - 0.5, axis=1))
    d = 1.0e6 * thickness**3 / (12 * (1 - 0.3**2))
    return sol[dofs[centre, 2]] * d


@pytest.mark.parametrize("support", ["simply_supported", "clamped"])
def test_no_shear_locking_converges_to_kirchhoff(support):
    exact = _navier_ss() if support == "simply_supported" else CLAMPED_KIRCHHOFF
    ns = np.array([4, 8, 16])
    err = np.array([abs(plate_centre_deflection(n, support) / exact - 1) for n in ns])
    order = -np.polyfit(np.log(ns), np.log(err), 1)[0]
    assert err[-1] < 0.01
    assert order == pytest.approx(2.0, abs=0.3)


@pytest.mark.parametrize("support", ["simply_supported", "clamped"])
def test_triangles_do_not_lock(support):
    """MITC3 is stiffer than MITC4 (its edge-tied shear leaves about as many constraints as
    bending dofs; Lee & Bathe 2004 report the same): it converges at order 2 at h/a = 1e-3,
    but needs 32x32 (2048 triangles) for 2%."""
    exact = _navier_ss() if support == "simply_supported" else CLAMPED_KIRCHHOFF
    ns = np.array([8, 16, 32])
    err = np.array([abs(plate_centre_deflection(n, support, "tri") / exact - 1) for n in ns])
    order = -np.polyfit(np.log(ns), np.log(err), 1)[0]
    assert err[-1] < 0.02
    assert order == pytest.approx(2.0, abs=0.3)


def test_drilling_stiffness_does_not_change_results():
    """Flat plate bending is decoupled from drilling in the linear tangent (exactly), so
    check the full 6-dof response of a faceted cylindrical panel under pressure."""
    w1 = plate_centre_deflection(8, "simply_supported", drill_factor=1.0, thickness=1e-2)
    w10 = plate_centre_deflection(8, "simply_supported", drill_factor=10.0, thickness=1e-2)
    assert abs(w10 / w1 - 1) < 1e-12
    d1, d10 = (_panel_deflection(f) for f in (1.0, 10.0))
    assert abs(d10 / d1 - 1) < 1e-4
    assert abs(d10 / d1 - 1) > 1e-8  # the panel does exercise the drilling stiffness


def _panel_deflection(drill_factor, n=8):
    """Crown deflection of a faceted cylindrical panel (radius 1, 40 degrees, length 1, h 0.01),
    straight edges clamped, under unit pressure; full 6-dof linear solve."""
    xy, conn = grid(n, 1.0)
    ang = np.deg2rad(40.0) * (xy[:, 0] - 0.5)
    x0 = np.c_[np.sin(ang), xy[:, 1], np.cos(ang)]
    rot0 = np.array([expm(np.array([0.0, a, 0.0])) for a in ang])
    pl = make_plates(conn, x0, rot0, 1.0e6, 0.3, 1e-2, 1.0, drilling=1e-4 * drill_factor)
    edge = np.isclose(xy[:, 0], 0.0) | np.isclose(xy[:, 0], 1.0)
    dofs = -np.ones((len(xy), 6), np.int64)
    dofs[~edge] = np.arange(6 * (~edge).sum()).reshape(-1, 6)
    k = global_stiffness(pl, x0, rot0, dofs)
    f = np.zeros_like(x0)
    pressure_forces(pl, x0, rot0, np.ones(len(conn)), f)
    sol = spla.spsolve(k, np.c_[f[~edge], 0 * f[~edge]].ravel()).reshape(-1, 6)
    crown = np.argmin(np.linalg.norm(xy - 0.5, axis=1))
    return sol[np.flatnonzero(~edge).tolist().index(crown), 2]


# --- mass, pressure, frequencies -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_lumped_mass_and_inertia(kind):
    pl, *_ = deformed_state(kind, 11)
    mass, inertia = lumped_plate_inertia(pl, n_nodes=8)
    assert mass.sum() == pytest.approx(RHO * H * pl.area.sum(), rel=ROUND)
    assert np.trace(inertia, axis1=1, axis2=2).sum() == pytest.approx(
        3 * RHO * H**3 / 12 * pl.area.sum(), rel=ROUND
    )
    assert pl.area.sum() == pytest.approx(5.0**2 * 0.24 * 0.12, rel=ROUND)


@pytest.mark.parametrize("kind", ["quad", "tri"])
def test_pressure_total_force(kind):
    """Flat: p area along d3. Deformed: p times the vector area 1/2 sum over the boundary
    edges x_i x x_j (exact: boundary edges stay straight)."""
    pl, x0, rot0, x, rot = deformed_state(kind, 12)
    p = np.full(len(pl.conn), 3.0)
    f = np.zeros_like(x0)
    pressure_forces(pl, x0, rot0, p, f)
    assert np.abs(f.sum(axis=0) - 3.0 * pl.area.sum() * rot0[0][:, 2]).max() <= ROUND * 3
    f = np.zeros_like(x)
    pressure_forces(pl, x, rot, p, f)
    loop = [0, 1, 2, 3, 0]  # the patch's outer boundary, anticlockwise about d3
    vec = 0.5 * sum(np.cross(x[i], x[j]) for i, j in zip(loop[:-1], loop[1:], strict=True))
    assert np.abs(f.sum(axis=0) - 3.0 * vec).max() <= ROUND * 3 * np.abs(vec).max()
    fc = np.zeros(x.shape, complex)  # complex-safe
    pressure_forces(pl, x.astype(complex), rot.astype(complex), p, fc)
    assert np.abs(fc.real - f).max() == 0.0


def test_max_frequencies_match_generalised_eigenproblem():
    pl, x0, rot0, _, _ = deformed_state("quad", 13)
    om = plate_max_frequencies(pl, x0, rot0)
    k = element_stiffness(pl, x0, rot0)[0]
    share = RHO * H * pl.area[0] / 4
    m = np.diag(np.tile(np.r_[np.full(3, share), np.full(3, share * H**2 / 12)], 4))
    import scipy.linalg

    lam = scipy.linalg.eigh(0.5 * (k + k.T), m, eigvals_only=True)
    assert om[0] == pytest.approx(np.sqrt(lam[-1]), rel=1e-10)
    # the shear-rotation cut-off sqrt(k G h / (rho h^3/12)) bounds it from below
    assert om[0] >= np.sqrt(5 / 6 * E_MOD / 2.6 * 12 / (RHO * H**2))
    # assembled nodal masses are >= each element's share: lower, less conservative estimates
    mass, inertia = lumped_plate_inertia(pl)
    om_nodal = plate_max_frequencies(pl, x0, rot0, mass, inertia)
    assert np.all(om_nodal <= om * (1 + 1e-12))
    assert np.any(om_nodal < 0.9 * om)


def test_centre_slot_is_element_centre():
    pl, *_ = deformed_state("quad", 14)
    assert np.abs(np.einsum("esb->es", pl.shape[:, :CENTRE]) - 1).max() <= ROUND
