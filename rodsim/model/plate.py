"""Geometrically exact plate elements: construction, lumped inertia, element stiffness and the
stable-step frequencies; the kernels live in plate_kernels and are re-exported here.

Formulation, conventions and array shapes: see rodsim.model.plate_kernels. Nodal unknowns are
the rods' ones, x_a (3) and Lambda_a in SO(3) with columns (d1, d2, d3); d3 is the director
(reference: the plate normal), spatial moments with work tau_a . theta_a.

Drilling (issue 6): a small objective drilling stiffness, ``k_drill = drilling * G h`` with
``drilling = 1e-4`` by default, and a drilling inertia equal to the bending rotary inertia
(isotropic nodal inertia rho h^3/12 area/n). The drilling frequency, about
sqrt(4.8e-3 G/(rho h^2)), stays ~45x below the shear-rotation cut-off sqrt(~10 G/(rho h^2)), so
it does not set the explicit stable step. Flat plates: the linear response does not depend on
k_drill at all (drilling decouples). Faceted shells: the response moves linearly with k_drill,
by -1.7e-5 relative per 1e-3 G h on an 8x8 cylindrical panel (less on finer meshes), hence the
default 1e-4: results change < 2e-5 when k_drill is multiplied by 10 (tested).
"""

import numpy as np

from rodsim.model.plate_kernels import (
    CENTRE,
    TIE_DX,
    TIE_T,
    PlateElements,
    assemble_plate_forces,
    plate_fields,
    plate_resultant_forces,
    plate_strains,
    pressure_forces,
)

__all__ = [
    "CENTRE",
    "PlateElements",
    "assemble_plate_forces",
    "element_stiffness",
    "lumped_plate_inertia",
    "make_plates",
    "plate_fields",
    "plate_max_frequencies",
    "plate_resultant_forces",
    "plate_strains",
    "pressure_forces",
]

_G = 1.0 / np.sqrt(3.0)
# natural coordinates of the quadrature slots 0-3 and the centre (slot 4), weights of 0-3
_QUAD_PTS = np.array([[-_G, -_G], [_G, -_G], [_G, _G], [-_G, _G], [0.0, 0.0]])
_QUAD_W = np.ones(4)
_TRI_PTS = np.array(
    [[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3], [1 / 3, 1 / 3], [1 / 3, 1 / 3]]
)
_TRI_W = np.array([1 / 6, 1 / 6, 1 / 6, 0.0])
_QUAD_NODES = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_TRI_NODES = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])


def _shape(tri: bool, pts: np.ndarray):
    """N (n,4) and dN/dxi (n,4,2) at natural points pts (n,2); a triangle's slot 3 is 0."""
    n = pts.shape[0]
    if tri:
        r, s = pts[:, 0], pts[:, 1]
        sh = np.stack([1 - r - s, r, s, 0 * r], axis=1)
        d = np.zeros((n, 4, 2))
        d[:, :3, 0] = [-1.0, 1.0, 0.0]
        d[:, :3, 1] = [-1.0, 0.0, 1.0]
        return sh, d
    xb, eb = _QUAD_NODES[:, 0], _QUAD_NODES[:, 1]
    xi, eta = pts[:, :1], pts[:, 1:]
    sh = 0.25 * (1 + xb * xi) * (1 + eb * eta)
    d = np.stack([0.25 * xb * (1 + eb * eta), 0.25 * eb * (1 + xb * xi)], axis=2)
    return sh, d


def _assumed_shear(tri: bool, pts: np.ndarray) -> np.ndarray:
    """(n,2,4): natural shear (gamma_xi, gamma_eta) at pts from the tied values g_0..g_3."""
    a, b = pts[:, 0], pts[:, 1]
    out = np.zeros((pts.shape[0], 2, 4))
    if tri:  # Lee & Bathe 2004: e_rt = g0 + c s, e_st = g1 - c r, c = g1 - g0 - g3 + g2
        out[:, 0] = np.stack([1 - b, b, b, -b], axis=1)
        out[:, 1] = np.stack([a, 1 - a, -a, a], axis=1)
    else:  # MITC4: e_xi linear in eta between eta = -1, +1; e_eta linear in xi
        out[:, 0, 0], out[:, 0, 1] = (1 - b) / 2, (1 + b) / 2
        out[:, 1, 2], out[:, 1, 3] = (1 - a) / 2, (1 + a) / 2
    return out


def _element_geometry(xe, d3e, tri):
    """Basis (P,2,3) and reference coordinates (P,4,2) of elements with nodes xe (P,4,3)."""
    if tri:
        nrm = np.cross(xe[:, 1] - xe[:, 0], xe[:, 2] - xe[:, 0])
        centroid = xe[:, :3].mean(axis=1)
    else:
        nrm = np.cross(xe[:, 2] - xe[:, 0], xe[:, 3] - xe[:, 1])
        centroid = xe.mean(axis=1)
    size = np.linalg.norm(nrm, axis=1)
    if not np.all(size > 0.0):
        raise ValueError(f"degenerate plate element (zero area) at index {np.argmin(size)}")
    nrm /= size[:, None]
    # e1 x e2 on the side of the reference directors: pressure and kappa signs follow d3
    flip = np.einsum("ei,ei->e", nrm, d3e.sum(axis=1)) < 0.0
    nrm[flip] *= -1.0
    e1 = xe[:, 1] - xe[:, 0]
    e1 -= np.einsum("ei,ei->e", e1, nrm)[:, None] * nrm
    e1 /= np.linalg.norm(e1, axis=1)[:, None]
    e2 = np.cross(nrm, e1)
    basis = np.stack([e1, e2], axis=1)
    xref = np.einsum("eai,eki->eak", xe - centroid[:, None], basis)
    return basis, xref


def _interpolation(xref, tri):
    """dn (P,5,4,2), shape (P,5,4), weight (P,4), dnn (P,4,4,2), shear_map (P,5,2,4)."""
    pts, wq, nodes = (_TRI_PTS, _TRI_W, _TRI_NODES) if tri else (_QUAD_PTS, _QUAD_W, _QUAD_NODES)

    def cartesian(p):
        sh, dxi = _shape(tri, p)
        jac = np.einsum("ebk,nba->enka", xref, dxi)  # J[k, a] = dX_k/dxi_a
        jinv = np.linalg.inv(jac)
        return sh, np.einsum("nba,enak->enbk", dxi, jinv), jac, jinv

    sh, dn, jac, jinv = cartesian(pts)
    _, dnn, jac_n, _ = cartesian(nodes)
    # node order clockwise about d3 (mirrored X, det J < 0) is fine; a sign change inside the
    # element (non-convex quad, folded triangle) is not
    det = np.linalg.det(np.concatenate([jac, jac_n], axis=1))
    if not np.all(det * np.sign(det[:, 4:5]) > 0.0):
        raise ValueError("plate element with a non-convex or degenerate reference shape")
    weight = wq * np.abs(np.linalg.det(jac[:, :4]))
    # gamma_cart = J^{-T} gamma_nat
    shear_map = np.einsum("enak,nal->enkl", jinv, _assumed_shear(tri, pts))
    shape = np.broadcast_to(sh, (xref.shape[0],) + sh.shape)
    return dn, shape, weight, dnn, shear_map


def _reference_strains(xe, rote, dn, dnn, shear_map, tri):
    """eps0, kappa0 (P,5,3), g0 (P,4), w0 (P,4) of the reference geometry (numpy; independent
    of the kernels, which must give zero strains there)."""
    d3 = rote[..., 2]
    f = np.einsum("ebi,esbk->eski", xe, dn)
    t = np.einsum("ebi,esbk->eski", d3, dn)
    ff = np.einsum("eski,esli->eskl", f, f)
    ft = np.einsum("eski,esli->eskl", f, t)
    eps0 = np.stack([0.5 * ff[..., 0, 0], 0.5 * ff[..., 1, 1], ff[..., 0, 1]], axis=-1)
    kappa0 = np.stack([ft[..., 0, 0], ft[..., 1, 1], ft[..., 0, 1] + ft[..., 1, 0]], axis=-1)
    typ = 0 if tri else 1
    p = np.einsum("kb,ebi->eki", TIE_DX[typ], xe)
    tt = np.einsum("kb,ebi->eki", TIE_T[typ], d3)
    g0 = np.einsum("eki,eki->ek", p, tt)
    fn = np.einsum("ebi,ecbk->ecki", xe, dnn)
    w0 = np.einsum("eci,eci->ec", rote[..., 1], fn[..., 0, :]) - np.einsum(
        "eci,eci->ec", rote[..., 0], fn[..., 1, :]
    )
    if tri:
        w0[:, 3] = 0.0
    return eps0, kappa0, g0, w0


def _fields_for(tri, xe, rote):
    d3e = rote[..., 2][:, :3] if tri else rote[..., 2]
    basis, xref = _element_geometry(xe, d3e, tri)
    if tri:
        xref[:, 3] = xref[:, 2]
    dn, shape, weight, dnn, shear_map = _interpolation(xref, tri)
    # drilling: differentiate phi at node c along its reference d1, d2 (projected on the
    # element plane), so that w_a measures only the skew (rotational) part of the in-plane
    # gradient relative to the nodal frame, whatever the angle between frame and element basis
    along = np.einsum("ecid,eai->ecda", rote[..., :2], basis)
    dnn = np.einsum("ecba,ecda->ecbd", dnn, along)
    refs = _reference_strains(xe, rote, dn, dnn, shear_map, tri)
    return basis, xref, dn, shape, weight, dnn, shear_map, refs


def make_plates(conn, x0, rot0, E, nu, thickness, rho, shear_factor=5.0 / 6.0, drilling=1.0e-4):
    """Plate element data from the reference geometry (stress-free).

    conn (P,4) int (triangles: conn[:, 3] == conn[:, 2]); x0 (N,3); rot0 (N,3,3) reference
    nodal frames (d3 the director, d1, d2 in the tangent plane); E, nu, thickness, rho scalars
    or (P,); drilling: k_drill = drilling * G h (see module docstring). Element node order must
    go round the element (quads convex). Raises ValueError for degenerate elements.
    """
    conn = np.ascontiguousarray(conn, dtype=np.int64).reshape(-1, 4)
    x0 = np.asarray(x0, dtype=np.float64)
    rot0 = np.asarray(rot0, dtype=np.float64)
    npl = conn.shape[0]
    tri = conn[:, 3] == conn[:, 2]
    par = [
        np.broadcast_to(np.asarray(v, dtype=np.float64), (npl,)).copy()
        for v in (E, nu, thickness, rho)
    ]
    young, poisson, h, dens = par
    arrays = {
        "basis": np.zeros((npl, 2, 3)),
        "xref": np.zeros((npl, 4, 2)),
        "dn": np.zeros((npl, 5, 4, 2)),
        "shape": np.zeros((npl, 5, 4)),
        "weight": np.zeros((npl, 4)),
        "dnn": np.zeros((npl, 4, 4, 2)),
        "shear_map": np.zeros((npl, 5, 2, 4)),
        "eps0": np.zeros((npl, 5, 3)),
        "kappa0": np.zeros((npl, 5, 3)),
        "g0": np.zeros((npl, 4)),
        "w0": np.zeros((npl, 4)),
    }
    names = ["basis", "xref", "dn", "shape", "weight", "dnn", "shear_map"]
    for is_tri in (False, True):
        sel = np.flatnonzero(tri == is_tri)
        if sel.size == 0:
            continue
        out = _fields_for(is_tri, x0[conn[sel]], rot0[conn[sel]])
        for name, val in zip(names, out[:7], strict=True):
            arrays[name][sel] = val
        for name, val in zip(["eps0", "kappa0", "g0", "w0"], out[7], strict=True):
            arrays[name][sel] = val
    n_nodes_el = np.where(tri, 3, 4).astype(np.int64)
    area = arrays["weight"].sum(axis=1)
    shear_mod = young / (2.0 * (1.0 + poisson))
    iso = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    iso = iso + poisson[:, None, None] * np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    iso[:, 2, 2] = 0.5 * (1.0 - poisson)
    c = young / (1.0 - poisson**2)
    a_mat = (c * h)[:, None, None] * iso
    d_mat = (c * h**3 / 12.0)[:, None, None] * iso
    s_mat = (shear_factor * shear_mod * h)[:, None, None] * np.eye(2)
    k_drill = drilling * shear_mod * h
    kd = np.repeat((k_drill * area / n_nodes_el)[:, None], 4, axis=1)
    kd[tri, 3] = 0.0
    fields = {
        "conn": conn,
        "n_nodes_el": n_nodes_el,
        **arrays,
        "a_mat": a_mat,
        "d_mat": d_mat,
        "s_mat": s_mat,
        "kd": kd,
        "k_drill": k_drill,
        "thickness": h,
        "area": area,
        "rho": dens,
    }
    return PlateElements(**{k: np.ascontiguousarray(fields[k]) for k in PlateElements._fields})


def strains_at(pl: PlateElements, x: np.ndarray, rot: np.ndarray):
    """(eps, kappa, g, w) the plates' strain measures at the configuration x (N,3), rot
    (N,3,3), as the reference ones eps0, kappa0, g0, w0 are computed (the strains the kernels
    see are these minus those)."""
    out = [np.zeros_like(a) for a in (pl.eps0, pl.kappa0, pl.g0, pl.w0)]
    tri = pl.conn[:, 3] == pl.conn[:, 2]
    for is_tri in (False, True):
        sel = np.flatnonzero(tri == is_tri)
        if sel.size == 0:
            continue
        conn = pl.conn[sel]
        strains = _reference_strains(
            x[conn], rot[conn], pl.dn[sel], pl.dnn[sel], pl.shear_map[sel], is_tri
        )
        for target, value in zip(out, strains, strict=True):
            target[sel] = value
    return tuple(out)


def lumped_plate_inertia(pl: PlateElements, rho=None, n_nodes: int | None = None):
    """Nodal mass (N,) and material inertia (N,3,3) in the nodal frame (d1, d2, d3).

    Each element gives each of its n nodes (4 or 3) the mass rho h area/n and the isotropic
    rotary inertia rho h^3/12 area/n about d1, d2 and, as the drilling inertia, about d3 (see
    the module docstring). rho (P,) or scalar defaults to the elements' rho; n_nodes defaults
    to the largest node index + 1.
    """
    rho = pl.rho if rho is None else np.broadcast_to(np.asarray(rho, float), pl.area.shape)
    if n_nodes is None:
        n_nodes = int(pl.conn.max()) + 1 if pl.conn.size else 0
    share = rho * pl.thickness * pl.area / pl.n_nodes_el
    rot_share = share * pl.thickness**2 / 12.0
    mass = np.zeros(n_nodes)
    inertia = np.zeros((n_nodes, 3, 3))
    for slot in range(4):
        on = pl.n_nodes_el > slot  # a triangle's slot 3 repeats its node 2
        nodes = pl.conn[on, slot]
        np.add.at(mass, nodes, share[on])
        np.add.at(inertia, nodes, rot_share[on, None, None] * np.eye(3))
    return mass, inertia


def _explode(pl: PlateElements, x, rot):
    """Each element on its own 4 nodes (node 4e + b): conn, x (4P,3), rot (4P,3,3)."""
    npl = pl.conn.shape[0]
    own = np.arange(4 * npl, dtype=np.int64).reshape(npl, 4)
    tri = pl.n_nodes_el == 3
    own[tri, 3] = own[tri, 2]
    return pl._replace(conn=own), x[pl.conn].reshape(-1, 3), rot[pl.conn].reshape(-1, 3, 3)


def element_stiffness(pl: PlateElements, x, rot, step: float = 1.0e-30) -> np.ndarray:
    """Tangent stiffness of every element (P,24,24) at (x, rot) by complex step of the forces:
    dofs (x_b, theta_b) per element node b = 0..3 (theta spatial: delta Lambda = hat(theta)
    Lambda); K = -d(f, tau)/d(x, theta). Triangles: node 3 rows/columns are zero."""
    ex, xe, re = _explode(pl, np.asarray(x, float), np.asarray(rot, float))
    npl = pl.conn.shape[0]
    k = np.zeros((npl, 24, 24))
    for b in range(4):
        for j in range(6):
            xc = xe.astype(complex)
            rc = re.astype(complex)
            nodes = ex.conn[:, b] if b < 3 else ex.conn[pl.n_nodes_el == 4, 3]
            if j < 3:
                xc[nodes, j] += 1j * step
            else:  # exp(i s hat e_j) R = R + i s hat(e_j) R + O(s^2) (real)
                w = np.zeros(3)
                w[j - 3] = step
                hat = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
                rc[nodes] += 1j * np.einsum("ij,njk->nik", hat, re[nodes])
            f = np.zeros_like(xc)
            tau = np.zeros_like(xc)
            assemble_plate_forces(ex, xc, rc, f, tau)
            col = (
                -np.concatenate(
                    [f.imag.reshape(npl, 4, 1, 3), tau.imag.reshape(npl, 4, 1, 3)], axis=2
                ).reshape(npl, 24)
                / step
            )
            k[:, :, 6 * b + j] = col
    k[pl.n_nodes_el == 3, 18:, :] = 0.0
    return k


def plate_max_frequencies(pl: PlateElements, x0, rot0, mass=None, inertia=None) -> np.ndarray:
    """Largest natural frequency (rad/time) of each free element (P,), for the explicit stable
    step (dt <= 2/omega_max of the assembled mesh <= ... since omega_max <= max_e omega_e).

    mass (N,), inertia (N,3,3) (material, nodal frame): default the element's own lumped share
    (lumped_plate_inertia of that element alone), which gives the conservative element bound;
    passing the assembled nodal arrays gives a less conservative estimate.
    """
    x0 = np.asarray(x0, float)
    rot0 = np.asarray(rot0, float)
    npl = pl.conn.shape[0]
    k = element_stiffness(pl, x0, rot0)
    if mass is None:
        share = pl.rho * pl.thickness * pl.area / pl.n_nodes_el
        m_el = np.repeat(share[:, None], 4, axis=1)
        j_el = (m_el * (pl.thickness**2 / 12.0)[:, None])[..., None, None] * np.eye(3)
    else:
        m_el = np.asarray(mass, float)[pl.conn]
        j_el = np.asarray(inertia, float)[pl.conn]
    # spatial rotary inertia R J R^T (the Hessian's rotation dofs are spatial)
    r = rot0[pl.conn]
    j_sp = np.einsum("ebij,ebjk,eblk->ebil", r, j_el, r)
    minv_half = np.zeros((npl, 24, 24))
    for b in range(4):
        minv_half[:, 6 * b : 6 * b + 3, 6 * b : 6 * b + 3] = np.eye(3) / np.sqrt(
            m_el[:, b, None, None]
        )
        lam, vec = np.linalg.eigh(j_sp[:, b])
        minv_half[:, 6 * b + 3 : 6 * b + 6, 6 * b + 3 : 6 * b + 6] = np.einsum(
            "eij,ej,ekj->eik", vec, 1.0 / np.sqrt(lam), vec
        )
    out = np.zeros(npl)
    for nd in (3, 4):
        sel = pl.n_nodes_el == nd
        if not np.any(sel):
            continue
        n = 6 * nd
        a = minv_half[sel, :n, :n] @ k[sel, :n, :n] @ minv_half[sel, :n, :n]
        lam = np.linalg.eigvalsh(0.5 * (a + np.swapaxes(a, 1, 2)))
        out[sel] = np.sqrt(np.maximum(lam[:, -1], 0.0))
    return out
