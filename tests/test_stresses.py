"""Stresses recovered from the resultants (issue 16, docs/stresses.md): the recovery points
against dense sampling of each section's boundary, the kernel against the formulas, and
cantilevers and a plate against strength of materials and Navier's solution."""

import math

import numpy as np
import pytest
from conftest import looked_at

import rodsim
from rodsim.model import shapes
from rodsim.model.sections import section_from_material
from rodsim.model.stress import plate_stresses, rod_stresses, stress_tables

SHAPES = [
    ("circle", 0.05),
    ("tube", (0.05, 0.04)),
    ("tube", (0.05, 0.0)),
    ("rectangle", (0.02, 0.01)),
    ("rectangle", (0.01, 0.03)),
    ("rectangle", (0.02, 0.02)),
    ("i_section", (0.3, 0.15, 0.0071, 0.0107)),  # IPE 300 without fillets
    ("box", (0.2, 0.1, 0.008)),
    ("channel", (0.2, 0.075, 0.0085, 0.0115)),  # UPN 200 without fillets
    ("angle", (0.1, 0.1, 0.01)),
    ("angle", (0.15, 0.075, 0.01)),
]
SEEDS = range(8)


def von_mises(b: shapes.Boundary, p: shapes.ShapeProperties, load) -> np.ndarray:
    """The formulas of docs/stresses.md on boundary samples b; load (N, V2, V3, T, M2, M3)."""
    n, v2, v3, t, m2, m3 = load
    sigma = n / p.area + m2 * b.x[:, 1] / p.I2 - m3 * b.x[:, 0] / p.I3
    tau = t * b.cT + v2 * b.cV2 + v3 * b.cV3
    return np.sqrt(sigma**2 + 3.0 * np.sum(tau**2, axis=1))


def random_load(seed: int, p: shapes.ShapeProperties, size) -> np.ndarray:
    """Resultants whose stresses are all of one order: N ~ A, M ~ I / c, T ~ J / c, V ~ A."""
    rng = np.random.default_rng(seed)
    c = max(np.ravel(size))
    scale = np.array([p.area, p.area, p.area, p.J / c, p.I2 / c, p.I3 / c])
    return scale * rng.normal(size=6)


@pytest.mark.parametrize(("kind", "size"), SHAPES)
def test_recovery_points_find_the_largest_stress_of_the_boundary(kind, size):
    """The maximum over the recovery points is within 1% (the issue's bound) of the maximum
    over the boundary sampled 50 times more densely; sampling error of a smooth maximum
    between points h apart is O(h^2): about 0.4% for the rectangle's 12 per side."""
    entry = shapes.SHAPES[kind]
    p = entry.properties(size)
    points = entry.boundary(size, entry.recovery)
    dense = entry.boundary(size, 50 * entry.recovery)
    for seed in SEEDS:
        load = random_load(seed, p, size)
        coarse, fine = von_mises(points, p, load).max(), von_mises(dense, p, load).max()
        assert coarse <= fine * (1 + 1e-12)  # the recovery points are on the boundary
        assert coarse >= 0.99 * fine, (seed, coarse / fine)


@pytest.mark.parametrize(("kind", "size"), SHAPES)
def test_the_kernel_evaluates_the_formulas(kind, size):
    """rod_stresses against von_mises above, on random resultants of 3 elements."""
    section = section_from_material(2e11, 0.3, 7850, {kind: size}, allowable=2.35e8)
    tables = stress_tables([section] * 3, points=True)
    p, b = section.geometry.shape, section.geometry.points
    loads = np.array([random_load(seed, p, size) for seed in range(3)])
    k = len(b.x)
    stress, vm = np.empty((3, k, 3)), np.empty((3, k))
    worst, util = np.empty(3), np.empty(3)
    rod_stresses(tables, loads[:, :3].copy(), loads[:, 3:].copy(), stress, vm, worst, util)
    for e in range(3):
        expected = von_mises(b, p, loads[e])
        np.testing.assert_allclose(vm[e], expected, rtol=1e-12)
        assert worst[e] == pytest.approx(expected.max(), rel=1e-12)
        assert util[e] == pytest.approx(expected.max() / 2.35e8, rel=1e-12)
        n, v2, v3, t, m2, m3 = loads[e]
        sigma = n / p.area + m2 * b.x[:, 1] / p.I2 - m3 * b.x[:, 0] / p.I3
        scale = expected.max()
        np.testing.assert_allclose(stress[e, :, 0], sigma, rtol=1e-12, atol=1e-14 * scale)
        tau = t * b.cT + v2 * b.cV2 + v3 * b.cV3
        np.testing.assert_allclose(stress[e, :, 1:], tau, rtol=1e-12, atol=1e-14 * scale)


def test_thin_walled_profiles_against_hand_formulas():
    """I 300 x 150 x 7.1 x 10.7: web shear at the neutral axis V Q / (I tw) with Q = b tf d/2 +
    tw d^2/8 (midline d = h - tf), torsion T tf / J on the flange faces; box 200 x 100 x 8:
    Bredt T / (2 A_m t), web shear at the neutral axis V (bm hm / 4 + hm^2 / 8) / I2; equal
    angle 100 x 100 x 10: principal moments 286.6 and 73.4 cm^4 (the leg-axes moments
    I = 176.0 cm^4 and product -103.3 cm^4 rotated by 45 degrees; catalogues with fillets give
    280 and 73)."""
    h, b, tw, tf = 0.3, 0.15, 0.0071, 0.0107
    p = shapes.SHAPES["i_section"].properties((h, b, tw, tf))
    bd = shapes.SHAPES["i_section"].boundary((h, b, tw, tf), 9)
    d = h - tf
    q = b * tf * d / 2 + tw * d * d / 8
    assert np.linalg.norm(bd.cV3, axis=1).max() == pytest.approx(q / (p.I2 * tw), rel=1e-12)
    assert np.linalg.norm(bd.cT, axis=1).max() == pytest.approx(tf / p.J, rel=1e-12)
    assert p.I2 == pytest.approx((b * h**3 - (b - tw) * (h - 2 * tf) ** 3) / 12, rel=1e-12)
    hb, bb, t = 0.2, 0.1, 0.008
    p = shapes.SHAPES["box"].properties((hb, bb, t))
    bd = shapes.SHAPES["box"].boundary((hb, bb, t), 9)
    bm, hm = bb - t, hb - t
    assert np.linalg.norm(bd.cT, axis=1) == pytest.approx(1 / (2 * bm * hm * t), rel=1e-12)
    web = (bm * hm / 4 + hm * hm / 8) / p.I2
    assert np.linalg.norm(bd.cV3, axis=1).max() == pytest.approx(web, rel=1e-12)
    p = shapes.SHAPES["angle"].properties((0.1, 0.1, 0.01))
    assert sorted([p.I2, p.I3]) == pytest.approx([73.4e-8, 286.6e-8], rel=2e-3)


def test_textbook_values_of_the_shapes():
    """Circle: tau = T r / J, 4 V / (3 A) on the neutral axis; rectangle 2:1: Saint-Venant's
    largest torsion stress T / (0.246 a b^2) (Timoshenko & Goodier, table in sec. 109, three
    digits) and 3 V / (2 A) on the neutral axis; thin tube: 2 V / A."""
    circle = shapes.SHAPES["circle"].boundary(1.0, 36)
    assert np.linalg.norm(circle.cT, axis=1) == pytest.approx(2.0 / math.pi, rel=1e-14)
    assert np.linalg.norm(circle.cV3, axis=1).max() == pytest.approx(4 / (3 * math.pi), rel=1e-14)
    rect = shapes.SHAPES["rectangle"].boundary((2.0, 1.0), 12)
    assert np.linalg.norm(rect.cT, axis=1).max() == pytest.approx(1 / (0.246 * 2.0), rel=2e-3)
    assert np.linalg.norm(rect.cV3, axis=1).max() == pytest.approx(1.5 / 2.0, rel=1e-14)
    thin = shapes.SHAPES["tube"].boundary((1.0, 0.99), 36)
    area = math.pi * (1 - 0.99**2)
    assert np.linalg.norm(thin.cV2, axis=1).max() * area == pytest.approx(2.0, rel=1e-2)


CANTILEVER = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [{length}, 0, 0], elements: {n}, section: s,
          up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850, allowable: 2.35e8}},
      shape: {{{shape}}}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, {force}], moment: [{torque}, 0, 0]}}
solver: {{analysis: equilibrium}}
output: {{vtk: false, stresses: points}}
"""


def _root(shape: str, force: float, torque: float, length=1.0, n=20):
    text = CANTILEVER.format(shape=shape, force=force, torque=torque, length=length, n=n)
    results = rodsim.run_in_memory(rodsim.case_from_yaml(text))
    return results, length * (1 - 0.5 / n)  # the root element's centre is h/2 from the root


def test_round_bar_root_stress_is_m_c_over_i():
    """A small tip load P on a round bar: the largest von Mises stress of the root element is
    M c / I with M = P (L - h/2) at its centre, within 0.5% (the shear stress at the top
    fibre is 0; elsewhere 4 V / (3 A) ~ 0.07% of M c / I here)."""
    r, force = 0.02, 10.0
    results, arm = _root(f"circle: {r}", force, 0.0)
    expected = force * arm * r / (math.pi * r**4 / 4)
    assert results.rod_von_mises_max[-1, 0] == pytest.approx(expected, rel=5e-3)
    assert results.rod_utilisation[-1, 0] == pytest.approx(expected / 2.35e8, rel=5e-3)


@pytest.mark.parametrize(
    ("shape", "top", "side"),
    [
        # (x2, x3) of the top fibre and of the side on the neutral axis, and the section values
        ("circle: 0.02", (0.0, 0.02), (0.02, 0.0)),
        ("rectangle: [0.04, 0.02]", (0.0, 0.01), None),
    ],
)
def test_cantilever_root_under_tip_load_and_torque(shape, top, side):
    """Tip load P along d3 and torque T: at the root element's centre M2 = -P (L - h/2) (the
    top fibre in compression), T, V3 = P. Strength of materials at the top fibre: sigma =
    M c / I, tau = the torsion stress there (circle T r / J; 2:1 rectangle's long side T /
    (0.246 a b^2), Timoshenko's 3 digits), no shear from V; at the circle's side on the
    neutral axis: sigma = 0, tau = T r / J -+ 4 V / (3 A)."""
    force, torque = 50.0, 40.0
    results, arm = _root(shape, force, torque)
    p = results.mesh.stress_points[0]
    vm = results.rod_von_mises[-1, 0]
    if shape.startswith("circle"):
        r = top[1]
        i, j, area = math.pi * r**4 / 4, math.pi * r**4 / 2, math.pi * r * r
        tau_t = torque * r / j
    else:
        a, b = 0.04, 0.02
        i, area = a * b**3 / 12, a * b
        tau_t = torque / (0.246 * a * b * b)
    sigma = force * arm * top[1] / i
    at_top = np.flatnonzero(np.all(np.isclose(p, top, atol=1e-12), axis=1))[0]
    assert vm[at_top] == pytest.approx(math.sqrt(sigma**2 + 3 * tau_t**2), rel=3e-3)
    assert results.rod_stress[-1, 0, at_top, 0] == pytest.approx(-sigma, rel=3e-3)
    v3 = results.force[-1, 0, 2]
    assert abs(v3) == pytest.approx(force, rel=1e-3)  # statics: the root carries the tip load
    if side is not None:
        # at (r, 0) torsion (counter-clockwise about d1) and the shear of V3 both point
        # along d3; at (-r, 0) they are opposite
        shear = 4 * v3 / (3 * area)
        for sign in (1, -1):
            at = np.flatnonzero(np.all(np.isclose(p, np.multiply(side, sign), atol=1e-12), axis=1))
            expected = math.sqrt(3) * abs(tau_t + sign * shear)
            assert vm[at[0]] == pytest.approx(expected, rel=3e-3)


def test_sections_given_by_stiffnesses_have_no_stresses():
    results = rodsim.run_in_memory(
        rodsim.load_case("inputs/spaghetti/spaghetti.yaml"), overrides=["solver.t_end=0.01"]
    )
    assert results.rod_von_mises_max is None
    assert results.mesh.stress_points.shape[1] == 0


def _navier_moments(q, a, nu, x, y, terms=199):
    """Mx, My of a simply supported a x a plate under pressure q at (x, y) (Timoshenko &
    Woinowsky-Krieger, Theory of Plates and Shells, sec. 30)."""
    mx = my = 0.0
    for m in range(1, terms + 1, 2):
        for n in range(1, terms + 1, 2):
            k = (m * m + n * n) / (a * a)
            c = 16 * q / (math.pi**4 * m * n * k * k) * math.sin(m * math.pi * x / a)
            c *= math.sin(n * math.pi * y / a)
            mx += c * (m * m + nu * n * n) / (a * a)
            my += c * (n * n + nu * m * m) / (a * a)
    return mx, my


def test_simply_supported_plate_surface_stress_is_navier():
    """inputs/plate (1 x 1, h = 1e-3, 16 x 16 MITC4, q = 1e-6, deflection 4.4e-5): the
    bending part of the surface stresses, (top - bottom) / 2 = 6 M / h^2, of the element next
    to the centre, at its centre (0.5 - 1/32, 0.5 - 1/32), equals Navier's within 1%
    (measured 0.32%: the O(h^2) error of the element's centre resultants on this mesh). The
    middle surface carries the membrane stress of the deflection's stretching, (w')^2 / 2
    ~ 1e-8 strain: 0.85% of the bending stress here, hence 2% between the faces."""
    results = rodsim.run_in_memory(rodsim.load_case("inputs/plate/ss_plate.yaml"))
    centres = results.mesh.points[results.mesh.plates].mean(axis=1)
    e = int(np.argmin(np.linalg.norm(centres[:, :2] - (0.5 - 1 / 32), axis=1)))
    mx, my = _navier_moments(1e-6, 1.0, 0.3, *centres[e, :2])
    h = 1e-3
    top, middle, bottom = results.plate_stress[-1, e]
    bending = (top - bottom) / 2
    assert abs(bending[0]) == pytest.approx(6 * mx / h**2, rel=1e-2)
    assert abs(bending[1]) == pytest.approx(6 * my / h**2, rel=1e-2)
    assert middle[:3] == pytest.approx((top[:3] + bottom[:3]) / 2, abs=1e-12)  # linear in z
    assert abs(middle[0]) < 2e-2 * abs(bending[0])
    assert results.plate_von_mises_max[-1, e] == pytest.approx(
        results.plate_von_mises[-1, e].max(), rel=1e-12
    )


def test_plate_kernel_formulas():
    """plate_stresses against sigma = N / h + 12 M z / h^3 and tau = 3 Q / (2 h) at the middle."""
    rng = np.random.default_rng(3)
    t = stress_tables([], 2, plate_h=np.array([0.1, 0.2]), plate_allowable=np.array([5.0, np.nan]))
    mem, bend, shear = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 2))
    stress, vm = np.empty((2, 3, 5)), np.empty((2, 3))
    worst, util = np.empty(2), np.empty(2)
    plate_stresses(t, mem, bend, shear, stress, vm, worst, util)
    for e, h in enumerate((0.1, 0.2)):
        for layer, z in enumerate((h / 2, 0.0, -h / 2)):
            np.testing.assert_allclose(stress[e, layer, :3], mem[e] / h + 12 * bend[e] * z / h**3)
        np.testing.assert_allclose(stress[e, 1, 3:], 1.5 * shear[e] / h)
        np.testing.assert_allclose(stress[e, [0, 2], 3:], 0.0, atol=1e-15)
        s11, s22, s12, t13, t23 = stress[e, 1]
        assert vm[e, 1] == pytest.approx(
            math.sqrt(s11**2 + s22**2 - s11 * s22 + 3 * (s12**2 + t13**2 + t23**2))
        )
    assert util[0] == pytest.approx(worst[0] / 5.0)
    assert math.isnan(util[1])


@pytest.mark.parametrize(
    ("shape", "c", "i"),
    [
        # outer fibre and I2 of an IPE 300 without fillets and of a 200 x 100 x 8 box
        ("i_section: [0.3, 0.15, 0.0071, 0.0107]", 0.15, (0.15 * 0.3**3 - 0.1429 * 0.2786**3) / 12),
        ("box: [0.2, 0.1, 0.008]", 0.1, (0.1 * 0.2**3 - 0.084 * 0.184**3) / 12),
    ],
)
def test_profile_cantilever_root_stress_is_m_c_over_i(shape, c, i):
    """A 4 m cantilever under a tip load: the root element's largest von Mises stress is the
    flange's M c / I with M at the element centre (the shear of V is 0 at the outer face and
    its flange-tip share is below 0.1% here), within 0.5%."""
    force = 2.0e4
    results, arm = _root(shape, -force, 0.0, length=4.0, n=16)
    assert results.rod_von_mises_max[-1, 0] == pytest.approx(force * arm * c / i, rel=5e-3)


RECT = ((-0.01, -0.005), (0.01, -0.005), (0.01, 0.005), (-0.01, 0.005))


def test_a_polygon_rectangle_is_the_rectangle():
    """The polygon path (sectionproperties' warping analysis, 400 cells) against the exact
    rectangle: I exact, J within 0.1% (measured 2.5e-5), the largest torsion stress within 0.5%
    (6e-4) and the largest von Mises stress of combined loads within 2% (the finite-element
    shear of V is the elasticity solution; Jourawski's mean is 0.8% lower for this 2:1 one)."""
    poly = shapes.SHAPES["polygon"]
    p, b = poly.properties(RECT), poly.boundary(RECT, 0)
    rect = shapes.SHAPES["rectangle"]
    r, rb = rect.properties((0.02, 0.01)), rect.boundary((0.02, 0.01), 12)
    assert (p.area, p.I2, p.I3) == pytest.approx((r.area, r.I2, r.I3), rel=1e-12)
    assert p.J == pytest.approx(r.J, rel=1e-3)
    tau = np.linalg.norm(b.cT, axis=1).max()
    assert tau == pytest.approx(np.linalg.norm(rb.cT, axis=1).max(), rel=5e-3)
    for seed in SEEDS:
        load = random_load(seed, r, (0.02, 0.01))
        assert von_mises(b, p, load).max() == pytest.approx(von_mises(rb, r, load).max(), rel=2e-2)


def test_a_polygon_is_moved_to_its_principal_axes():
    """An equal angle drawn as a polygon, shifted and turned, has the angle shape's principal
    moments (exact polygon formulas)."""
    t = 0.01
    legs = np.array([(0, 0), (0.1, 0), (0.1, t), (t, t), (t, 0.1), (0, 0.1)])
    turn = np.array([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]])
    drawn = tuple(map(tuple, legs @ turn.T + (1.0, 2.0)))
    p = shapes.SHAPES["polygon"].properties(drawn)
    a = shapes.SHAPES["angle"].properties((0.1, 0.1, t))
    assert sorted([p.I2, p.I3]) == pytest.approx(sorted([a.I2, a.I3]), rel=1e-12)
    x = shapes.SHAPES["polygon"].boundary(drawn, 0).x
    assert np.abs(x.mean(axis=0)).max() < 0.01  # about the centroid, not at (1, 2)


def test_polygon_cantilever_root_stress_is_m_c_over_i():
    """A 2:1 rectangle given as a polygon in a case file: the root's M c / I within 0.5%."""
    shape = "polygon: [[-0.02, -0.01], [0.02, -0.01], [0.02, 0.01], [-0.02, 0.01]]"
    results, arm = _root(shape, 10.0, 0.0)
    assert results.rod_von_mises_max[-1, 0] == pytest.approx(
        10.0 * arm * 0.01 / (0.04 * 0.02**3 / 12), rel=5e-3
    )


def test_polygon_without_sectionproperties_says_how_to_install(monkeypatch):
    from rodsim.model import polygon_section

    modules = __import__("sys").modules
    for name in [m for m in modules if m.split(".")[0] == "sectionproperties"] + [
        "sectionproperties"
    ]:
        monkeypatch.setitem(modules, name, None)
    polygon_section._analyse.cache_clear()
    with pytest.raises(ValueError, match=r'pip install "rodsim\[sections\]"'):
        shapes.SHAPES["polygon"].properties(((0, 0), (1, 0), (0, 1)))
    polygon_section._analyse.cache_clear()


def test_plot_of_utilisation_along_a_set(tmp_path):
    """rodsim plot utilisation@beam.all draws one curve per rod element of the set."""
    from rodsim.post.plots import plot_results

    text = CANTILEVER.format(shape="circle: 0.02", force=50.0, torque=0.0, length=1.0, n=4)
    case = tmp_path / "c.yaml"
    case.write_text(text)
    result = rodsim.run_case(case, tmp_path / "c.h5")
    out = plot_results(result.path, "utilisation@beam.all", tmp_path / "u.png")
    looked_at(out, 4)  # one curve per element
    with pytest.raises(rodsim.CaseError, match="no element of node set 'beam.end'"):
        plot_results(result.path, "von_mises_max@beam.end", tmp_path / "v.png")
    with pytest.raises(rodsim.CaseError, match="has no components"):
        plot_results(result.path, "utilisation.x@beam.all", tmp_path / "w.png")


# --- peaks at the true extreme fibres (issue 32) ----------------------------------------------
#
# The references below come from the sharp-cornered polygon of each profile, with the shoelace
# (Green's theorem) formulas written out here, not from rodsim's section code: the normal stress
# N / A + M2 x3 / I2 - M3 x2 / I3 is linear over the section, so its largest magnitude is at a
# vertex of the polygon. With every corner a recovery point the peak is exact: the tolerance
# 1e-9 is round-off of sums of a few dozen terms (the issue asks for 1%; the old points missed
# the corners by 1.7% to 8.3%).
EXACT = 1e-9


def origin_moments(p) -> tuple[float, np.ndarray, np.ndarray]:
    """(A, first moments (int y, int z), second moments [[int y^2, int y z], [int y z,
    int z^2]]) of a counter-clockwise polygon p (K,2) about the origin (shoelace sums)."""
    y, z = np.asarray(p, dtype=float).T
    y1, z1 = np.roll(y, -1), np.roll(z, -1)
    cross = y * z1 - y1 * z
    first = np.array([((y + y1) * cross).sum(), ((z + z1) * cross).sum()]) / 6
    yy = ((y * y + y * y1 + y1 * y1) * cross).sum() / 12
    zz = ((z * z + z * z1 + z1 * z1) * cross).sum() / 12
    yz = ((y * z1 + 2 * y * z + 2 * y1 * z1 + y1 * z) * cross).sum() / 24
    return cross.sum() / 2, first, np.array([[yy, yz], [yz, zz]])


def centroidal(outer, hole=None) -> tuple[float, np.ndarray, np.ndarray]:
    """(A, centroid, centroidal second-moment matrix) of a polygon less an optional hole."""
    area, first, second = origin_moments(outer)
    if hole is not None:
        a, f, s = origin_moments(hole)
        area, first, second = area - a, first - f, second - s
    c = first / area
    return area, c, second - area * np.outer(c, c)


def peak_von_mises(shape, force=(0.0, 0.0, 0.0), moment=(0.0, 0.0, 0.0)):
    """(largest von Mises stress over the recovery points, the section's ShapeProperties) of
    one rod element of ``shape`` under the section-frame resultants, through the kernel."""
    section = section_from_material(2e11, 0.3, 7850, shape)
    tables = stress_tables([section], points=True)
    k = tables.n_points
    stress, vm, worst, util = np.empty((1, k, 3)), np.empty((1, k)), np.empty(1), np.empty(1)
    rod_stresses(
        tables, np.array([force], float), np.array([moment], float), stress, vm, worst, util
    )
    return worst[0], section.geometry.shape


def angle_polygon(h, b, t):
    """Legs along +y (length b) and +z (length h) from the heel at the origin."""
    return np.array([(0, 0), (b, 0), (b, t), (t, t), (t, h), (0, h)], dtype=float)


def test_equal_angle_weak_axis_peak_is_at_the_heel():
    """Angle 100 x 100 x 10 bent about its minor principal axis: the peak is M v / I_min, v the
    heel's distance from that axis (pure normal stress: no shear force or torque)."""
    area, c, s = centroidal(angle_polygon(0.1, 0.1, 0.01))
    values, vectors = np.linalg.eigh(s)  # ascending: values[0] = I_min about the minor axis
    i_min, normal = values[0], vectors[:, 0]  # the stress grows along normal, off that axis
    v = abs((np.zeros(2) - c) @ normal)  # the heel, (0, 0)
    heel_governs = np.abs((angle_polygon(0.1, 0.1, 0.01) - c) @ normal).max()
    assert v == pytest.approx(heel_governs, rel=1e-12)
    m = 1.0e3
    p = shapes.SHAPES["angle"].properties((0.1, 0.1, 0.01))
    moment = (0.0, m, 0.0) if p.I2 < p.I3 else (0.0, 0.0, m)  # about the minor axis
    peak, props = peak_von_mises({"angle": [0.1, 0.1, 0.01]}, moment=moment)
    assert min(props.I2, props.I3) == pytest.approx(i_min, rel=EXACT)
    assert peak == pytest.approx(m * v / i_min, rel=EXACT)


def test_box_equal_biaxial_bending_peak_is_at_the_outer_corner():
    """Box 100 x 60 x 4 (h along d3, b along d2) under M2 = M3 = M: the corner's M c2 / I2 +
    M c3 / I3 with c2 = h / 2, c3 = b / 2."""
    h, b, t = 0.1, 0.06, 0.004

    def rectangle(w, d):
        return np.array([(-w / 2, -d / 2), (w / 2, -d / 2), (w / 2, d / 2), (-w / 2, d / 2)])

    _, _, s = centroidal(rectangle(b, h), rectangle(b - 2 * t, h - 2 * t))
    i2, i3 = s[1, 1], s[0, 0]  # int x3^2 about d2, int x2^2 about d3
    m = 1.0e3
    peak, _ = peak_von_mises({"box": [h, b, t]}, moment=(0.0, m, m))
    assert peak == pytest.approx(m * (h / 2) / i2 + m * (b / 2) / i3, rel=EXACT)


def channel_polygon(h, b, tw, tf):
    """The web's back at y = 0, flanges towards +y, z from -h/2 to h/2."""
    z = h / 2
    return np.array(
        [(0, -z), (b, -z), (b, -z + tf), (tw, -z + tf), (tw, z - tf), (b, z - tf), (b, z), (0, z)]
    )


def i_polygon(h, b, tw, tf):
    y, z, s = b / 2, h / 2, tw / 2
    half = [(-y, -z), (y, -z), (y, -z + tf), (s, -z + tf), (s, z - tf), (y, z - tf), (y, z)]
    return np.array([*half, (-y, z), (-y, z - tf), (-s, z - tf), (-s, -z + tf), (-y, -z + tf)])


@pytest.mark.parametrize(
    ("kind", "size", "polygon"),
    [
        ("channel", (0.2, 0.075, 0.0085, 0.0115), channel_polygon),  # UPN 200, no fillets
        ("i_section", (0.3, 0.15, 0.0071, 0.0107), i_polygon),  # IPE 300, no fillets
    ],
)
@pytest.mark.parametrize("signs", [(1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, -1)])
def test_profile_biaxial_bending_and_axial_force_peak_is_at_a_corner(kind, size, polygon, signs):
    """N, M2 and M3 each giving a stress sigma0 at the fibre farthest from its axis: the peak is
    the largest |N / A + M2 x3 / I2 - M3 x2 / I3| over the polygon's vertices (principal axes:
    both profiles are symmetric about d2). With tension and M3 > 0 a channel's peak is at the
    back of its web, which the old points, stopping at the web's midline, missed."""
    outline = polygon(*size)
    area, c, s = centroidal(outline)
    assert abs(s[0, 1]) < 1e-12 * s.max()  # symmetric: the axes are principal
    x = outline - c
    i2, i3 = s[1, 1], s[0, 0]
    sigma0 = 1.0e8
    n = signs[0] * sigma0 * area
    m2 = signs[1] * sigma0 * i2 / np.abs(x[:, 1]).max()
    m3 = signs[2] * sigma0 * i3 / np.abs(x[:, 0]).max()
    expected = np.abs(n / area + m2 * x[:, 1] / i2 - m3 * x[:, 0] / i3).max()
    peak, _ = peak_von_mises({kind: list(size)}, force=(n, 0.0, 0.0), moment=(0.0, m2, m3))
    assert peak == pytest.approx(expected, rel=EXACT)


def test_polygon_vertices_are_recovery_points_and_the_angle_peak_is_at_the_heel():
    """An equal angle given as a polygon: every vertex (in the principal axes) is a recovery
    point (the mesh keeps the polygon's vertices as boundary nodes; 1e-9 of the size allows the
    mesher's round-off), so weak-axis bending peaks at the heel, M v / I_min as above."""
    from rodsim.model import polygon_section

    legs = angle_polygon(0.1, 0.1, 0.01)
    drawn = tuple(map(tuple, legs))
    x = shapes.SHAPES["polygon"].boundary(drawn, 0).x
    vertices = polygon_section.principal(drawn)
    gaps = np.linalg.norm(x[None, :, :] - vertices[:, None, :], axis=2).min(axis=1)
    assert gaps.max() < 1e-9 * 0.1
    area, c, s = centroidal(legs)
    values, vectors = np.linalg.eigh(s)
    v = abs(c @ vectors[:, 0])
    p = shapes.SHAPES["polygon"].properties(drawn)
    m = 1.0e3
    moment = (0.0, m, 0.0) if p.I2 < p.I3 else (0.0, 0.0, m)
    peak, _ = peak_von_mises({"polygon": [list(q) for q in legs]}, moment=moment)
    # the vertex is found to 1e-9 of the size: the peak to 1e-9 relative (v ~ 0.04 > 0.1 / 3)
    assert peak == pytest.approx(m * v / values[0], rel=1e-8)


SPAN = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [{length}, 0, 0], elements: {n}, section: s,
          up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850}}, shape: {{circle: 0.02}}}}
boundary:
  - {{set: beam.start, fix: {start}}}
  - {{set: beam.end, fix: {end}}}
loads:
  - {{set: beam.all, line_force: [0, {f2}, {f3}]}}
solver: {{analysis: equilibrium}}
output: {{vtk: false}}
"""
# supports: (fix at the start, fix at the end, the continuum moment per unit f x d1 as a function
# of x and L, the element's moment less the continuum's at its centre per unit h^2 f x d1)
SUPPORTS = {
    "simply supported": ("[ux, uy, uz, rx]", "[uy, uz]", lambda x, L: x * (L - x) / 2, -1 / 8),
    "clamped": ("all", "all", lambda x, L: (6 * L * x - 6 * x * x - L * L) / 12, -1 / 24),
}


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("supports", sorted(SUPPORTS))
def test_element_moment_under_a_distributed_load(supports, n):
    """A beam along d1 = x (d2 = y, d3 = z) under a uniform line force f = (0, f2, f3)
    (docs/stresses.md, "Element moments under a distributed load"); f x d1 = (f3, -f2) in
    (d2, d3). The continuum moment is M(x) = m(x) f x d1 with m = x (L - x) / 2 simply
    supported, (6 L x - 6 x^2 - L^2) / 12 clamped at both ends. Simply supported (statically
    determinate) each element's moment is the chord, the mean of its two nodes' M: h^2 / 8
    f x d1 (magnitude q h^2 / 8) short of M at its centre. Clamped, compatibility (zero end
    rotations, int M dx = 0) shifts every element by q h^2 / 12: the element's moment is the
    mean of M over it, M(x_c) - h^2 / 24 f x d1. The load is small (rotations ~ 2e-5:
    geometric effects ~ 4e-10); 1e-6 is 100 times the equilibrium solver's residual tolerance
    (1e-8)."""
    start, end, m, offset = SUPPORTS[supports]
    length, f2, f3 = 1.0, 7.0, -10.0
    text = SPAN.format(length=length, n=n, start=start, end=end, f2=f2, f3=f3)
    results = rodsim.run_in_memory(rodsim.case_from_yaml(text))
    h = length / n
    per_unit = np.array([f3, -f2])  # f x d1 in (d2, d3)

    def continuum(x):
        return np.outer(m(x, length), per_unit)

    nodes = np.arange(n + 1) * h
    element = results.moment[-1, :, 1:]
    atol = 1e-6 * length**2 * np.abs(per_unit).max() / 8  # of the largest moment, q L^2 / 8
    centre = continuum(nodes[:-1] + h / 2)
    np.testing.assert_allclose(element, centre + offset * h * h * per_unit, rtol=1e-6, atol=atol)
    if supports == "simply supported":
        at_nodes = continuum(nodes)
        chord = (at_nodes[:-1] + at_nodes[1:]) / 2
        np.testing.assert_allclose(element, chord, rtol=1e-6, atol=atol)
        gap = np.linalg.norm(centre - element, axis=1)
        np.testing.assert_allclose(gap, math.hypot(f2, f3) * h * h / 8, rtol=1e-6)
