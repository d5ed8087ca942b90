"""Natural modes (issue 17, docs/modal.md): against Euler-Bernoulli beams, bars and shafts,
free bodies, a beam under axial load about its equilibrium and Beck's follower-loaded column."""

import math

import numpy as np
import pytest
import scipy.linalg

import rodsim
from rodsim.integrators import implicit, modal

E, NU, RHO = 2.1e11, 0.3, 7850.0
W, H = 0.02, 0.01  # rectangle: width along d2, height along d3
A = W * H
I2, I3 = W * H**3 / 12, H * W**3 / 12  # about d2 (weak here), about d3

BEAM = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {n}, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850}}, shape: {{rectangle: [0.02, 0.01]}}}}
boundary:
{boundary}
loads:
{loads}
solver: {solver}
"""


CLAMPED = "  - {set: beam.start, fix: all}"


def _case(n=40, boundary=CLAMPED, loads="", solver="{t_end: 1}"):
    text = BEAM.format(n=n, boundary=boundary, loads=loads, solver=solver)
    text = text.replace("boundary:\n\n", "").replace("loads:\n\n", "")
    return rodsim.case_from_yaml(text)


def _modes(n=40, boundary=CLAMPED, loads="", solver="{t_end: 1}", **kw):
    return rodsim.modes(_case(n, boundary, loads, solver), **kw)


def _beam_frequency(beta_l: float, i: float) -> float:
    """Euler-Bernoulli: f = (beta L)^2 / (2 pi) sqrt(E I / (rho A L^4)), L = 1."""
    return beta_l**2 / (2 * math.pi) * math.sqrt(E * i / (RHO * A))


def test_cantilever_bending_axial_and_torsion():
    """40 elements: the first two bending modes in both planes against Euler-Bernoulli. Shear
    and rotary inertia lower them by about (beta r)^2 (1 + E/(k G)) / 2 (r the radius of
    gyration; 1.5e-3 for the second mode in the stiff plane, h/L = 0.02), the element by about
    (beta h_e)^2 / 12 (1.1e-3): 0.1% for the first, 0.5% for the second. The first axial mode
    (1/4L) sqrt(E/rho) and torsion (1/4L) sqrt(G J / (rho I_p)) within 0.5%."""
    m = _modes(count=16)
    f = m.frequency
    assert not m.rigid.any()
    assert m.symmetric
    for beta_l, tol in ((1.875104, 1e-3), (4.694091, 5e-3)):
        for i in (I2, I3):
            assert np.min(np.abs(f / _beam_frequency(beta_l, i) - 1)) < tol
    axial = math.sqrt(E / RHO) / 4
    g = E / (2 * (1 + NU))
    j = 0.2287 * W * H**3  # beta(2) of the Saint-Venant series, 4 digits
    torsion = math.sqrt(g * j / (RHO * (I2 + I3))) / 4
    assert np.min(np.abs(f / axial - 1)) < 5e-3
    assert np.min(np.abs(f / torsion - 1)) < 5e-3


def test_modes_are_mass_normalised_and_orthogonal():
    m = _modes(n=10, count=8)
    model = rodsim.prepare(_case(n=10)).setup.model
    quat = np.empty((model.n_nodes, 4))
    implicit.quaternions(model.rot0, quat)
    k, mass = modal.matrices(model, "SO3xR3", model.x0, model.rot0, quat, 0.0)
    phi = m.shape.reshape(len(m.frequency), -1).T
    np.testing.assert_allclose(phi.T @ mass @ phi, np.eye(8), atol=1e-9)
    lam = np.diag(m.eigenvalue.real)
    np.testing.assert_allclose(phi.T @ k @ phi, lam, atol=1e-9 * lam.max())


def test_a_free_beam_has_six_rigid_modes_and_all_its_mass():
    """Free-free: six rigid modes (f = 0, flagged), then (4.730)^2 of Euler-Bernoulli within
    0.2%; with every mode (a 3-element beam, 24 dofs) the effective masses add up to the
    model's mass along each axis and its moment of inertia about each axis through the origin
    (r^T M r: the modes are complete and M-orthonormal)."""
    m = _modes(boundary="", count=8)
    assert m.rigid[:6].all()
    assert not m.rigid[6:].any()
    assert m.frequency[6] == pytest.approx(_beam_frequency(4.730041, I2), rel=2e-3)
    small = _modes(n=3, boundary="", count=24)
    mass = RHO * A
    assert small.effective_mass[:, :3].sum(axis=0) == pytest.approx([mass] * 3, rel=1e-9)
    # about x: the rod's polar inertia; about y, z: the lumped masses m/6, m/3, m/3, m/6 at
    # x = 0, 1/3, 2/3, 1 (sum m_i x_i^2 = 19/54 m, not the continuous m/3) + the sections'
    polar = RHO * (I2 + I3)
    lumped = 19 / 54 * mass
    about = [polar, lumped + RHO * I2, lumped + RHO * I3]
    assert small.effective_mass[:, 3:].sum(axis=0) == pytest.approx(about, rel=1e-9)


PINNED = """  - {set: beam.start, fix: [ux, uy, uz, rx]}
  - {set: beam.end, fix: [uy, uz, rx]}"""


@pytest.mark.parametrize("axial", [-0.9, -0.5, 0.0, 1.0, 10.0, 100.0])
def test_axial_load_stiffens_or_softens_about_the_equilibrium(axial):
    """A pinned-pinned beam (80 elements) under an axial end force T = axial x P_E (tension
    > 0): about its equilibrium, f1 = (1/(2L)) sqrt((T + P_E) / (rho A)) within 0.2%, times
    1/sqrt(1 + T/EA): the geometrically exact beam stretches, lengthening the string and
    thinning its mass per length (T/EA = 8e-3 at 100 P_E, -0.41%)."""
    euler = math.pi**2 * E * I2
    load = f"  - {{set: beam.end, force: [{axial * euler}, 0, 0]}}"
    m = _modes(n=80, boundary=PINNED, loads=load, solver="{analysis: equilibrium}", count=1)
    tension = axial * euler
    f1 = math.sqrt((tension + euler) / (RHO * A)) / 2 / math.sqrt(1 + tension / (E * A))
    assert m.frequency[0] == pytest.approx(f1, rel=2e-3)
    assert m.load == 1.0


def test_cantilever_effective_masses():
    """The first three bending modes in one plane carry 61.3%, 18.8% and 6.5% of the mass
    (Euler-Bernoulli), within 0.5% of those shares."""
    m = _modes(count=6)
    share = m.effective_mass[:, 2] / (RHO * A)
    assert share[share > 1e-6][:3] == pytest.approx([0.6131, 0.1883, 0.0647], rel=5e-3)


def test_becks_column_flutters_at_its_critical_load():
    """Bisection on the follower force for the first complex pair: 20.05 EI/L^2 within 1%
    (20 elements: measured +0.65%)."""
    lo, hi = 15.0, 25.0
    for _ in range(8):
        mid = 0.5 * (lo + hi)
        load = f"  - {{set: beam.end, force: [{-mid * E * I2}, 0, 0], follower: true}}"
        m = _modes(n=20, loads=load, solver="{analysis: equilibrium}", count=4)
        pair = np.abs(m.eigenvalue[:2].imag).max() > 1e-6 * np.abs(m.eigenvalue[:2]).max()
        lo, hi = (lo, mid) if pair else (mid, hi)
    assert 0.5 * (lo + hi) == pytest.approx(20.05, rel=1e-2)


def test_becks_column_flutters():
    """A cantilever under a compressive follower tip force (Beck's column), modes about the
    compressed equilibrium: K is not symmetric; below the critical load 20.05 EI/L^2
    (Beck 1952; Bolotin, Nonconservative Problems of the Theory of Elastic Stability) the
    eigenvalues are real, above it the two lowest merge into a complex pair (flutter)."""
    ei = E * I2
    for factor, flutter in ((15.0, False), (25.0, True)):
        load = f"  - {{set: beam.end, force: [{-factor * ei}, 0, 0], follower: true}}"
        m = _modes(n=20, loads=load, solver="{analysis: equilibrium}", count=4)
        assert not m.symmetric
        complex_pair = np.abs(m.eigenvalue[:2].imag).max() > 1e-6 * np.abs(m.eigenvalue[:2]).max()
        assert complex_pair == flutter, (factor, m.eigenvalue[:2])


def test_analysis_modal_writes_the_modes(tmp_path):
    """`analysis: modal` (about the equilibrium of the axially loaded pinned beam): the file's
    modes/ group holds what rodsim.modes gives, after the equilibrium's frames; rodsim info
    prints the frequency table; a Simulation refuses (no steps)."""
    from click.testing import CliRunner

    from rodsim.cli import main

    euler = math.pi**2 * E * I2
    load = f"  - {{set: beam.end, force: [{2 * euler}, 0, 0]}}"
    solver = (
        "{analysis: modal, modal: {modes: 3, about: equilibrium}, equilibrium: {load_steps: 2}}"
    )
    case = _case(n=20, boundary=PINNED, loads=load, solver=solver)
    expected = rodsim.modes(case, count=3)
    result = rodsim.run_case(case, tmp_path / "m.h5")
    with __import__("h5py").File(result.path) as f:
        np.testing.assert_allclose(f["modes/frequency"][()], expected.frequency, rtol=1e-9)
        assert f["modes/shape"].shape == (3, 21, 6)
        assert f.attrs["status"] == "complete"
        assert f["time"].shape == (3,)  # load 0, 1/2, 1
        assert f["modes"].attrs["about"] == "equilibrium"
    f0 = _beam_frequency(math.pi, I2)
    assert expected.frequency[0] == pytest.approx(f0 * math.sqrt(3), rel=5e-3)
    out = CliRunner().invoke(main, ["info", str(result.path)])
    assert "modes     3 about the equilibrium (load 1)" in out.output
    assert f"{expected.frequency[0]:14.6g}" in out.output
    with pytest.raises(rodsim.CaseError, match="no steps"):
        rodsim.Simulation(case)


def test_simply_supported_plate_modes_are_kirchhoffs():
    """inputs/plate (1 x 1, h = 1e-3, 16 x 16 MITC4) about its reference: f_mn = pi/2 (m^2 +
    n^2) sqrt(D / (rho h)) (Leissa, Vibration of Plates, NASA SP-160, sec. 4.1) within 0.5%
    (measured -0.21% for (1, 1), -0.04% for the double (1, 2)), (2, 2) within 1%: the mesh's
    error grows as (wave number x element size)^2, 4 x that of (1, 1) (measured -0.84%); thin:
    shear is ~(h/a)^2."""
    m = rodsim.modes("inputs/plate/ss_plate.yaml", count=4, about="reference")
    d = 1e6 * 1e-3**3 / (12 * (1 - 0.3**2))
    unit = math.pi / 2 * math.sqrt(d / 1e-3)
    assert m.frequency[0] == pytest.approx(2 * unit, rel=5e-3)
    assert m.frequency[1:3] == pytest.approx([5 * unit] * 2, rel=5e-3)
    assert m.frequency[3] == pytest.approx(8 * unit, rel=1e-2)


@pytest.mark.parametrize(
    ("boundary", "effective_length"),
    [(CLAMPED, 2.0), (PINNED, 1.0)],  # a cantilever column: 2 L; pinned-pinned: L
)
def test_linear_buckling_factors_are_eulers(boundary, effective_length):
    """An axial compressive end force P0 = 1 kN: the lowest factors are the Euler loads
    pi^2 E I / (K L)^2 over P0, about the weak axis and then the strong one, within 0.5%
    (the element raises them by ~(pi h_e / K L)^2 / 12, shear lowers them by ~P/(k G A))."""
    load = "  - {set: beam.end, force: [-1000, 0, 0]}"
    case = _case(n=20, boundary=boundary, loads=load, solver="{analysis: equilibrium}")
    b = rodsim.buckling(case, count=2)
    euler = [math.pi**2 * E * i / effective_length**2 / 1000 for i in (I2, I3)]
    assert b.factor == pytest.approx(euler, rel=5e-3)
    weak = b.shape[0]
    assert np.abs(weak).max() == pytest.approx(1.0)  # scaled to a largest component of 1
    assert np.abs(weak[:, 1]).max() < 1e-6 * np.abs(weak[:, 2]).max()  # bends in z only


def test_linear_buckling_needs_an_equilibrium_case():
    with pytest.raises(rodsim.CaseError, match="load multiplier"):
        rodsim.buckling(_case())


def test_modal_damping_ratios_are_rayleighs():
    """alpha M (translations) + beta K: zeta = alpha / (2 omega) + beta omega / 2 (Rayleigh),
    within 1e-3 (alpha leaves the rotary inertia undamped: its share of a bending mode's
    kinetic energy is ~(beta r)^2 ~ 1e-4 here)."""
    solver = "{t_end: 1, damping: {mass: 2.0, strain_rate: 1.0e-4}}"
    m = rodsim.modes(_case(solver=solver), count=4)
    omega = 2 * math.pi * m.frequency
    assert m.damping_ratio == pytest.approx(2.0 / (2 * omega) + 1e-4 * omega / 2, rel=1e-3)
    assert np.all(_modes(count=2).damping_ratio == 0.0)  # no damping


def test_export_matrices_gives_the_modes(tmp_path):
    """rodsim export --matrices CASE: K, M, C and the DOF map in an .npz; the exported K and M
    give rodsim's frequencies, and C is alpha M on the translations (beta = 0)."""
    from click.testing import CliRunner

    from rodsim.cli import main
    from rodsim.post.matrices import load_matrices

    solver = "{t_end: 1, damping: {mass: 3.0}}"
    text = BEAM.format(n=10, boundary=CLAMPED, loads="", solver=solver)
    case = tmp_path / "beam.yaml"
    case.write_text(text.replace("loads:\n\n", ""))
    out = CliRunner().invoke(
        main, ["export", "--matrices", str(case), "-o", str(tmp_path / "m.npz")]
    )
    assert out.exit_code == 0, out.output
    d = load_matrices(tmp_path / "m.npz")
    free = d["free"]
    assert list(d["dof_component"][:6]) == ["ux", "uy", "uz", "rx", "ry", "rz"]
    assert d["dof_node"][6] == 1
    k, mass = d["K"][free][:, free].toarray(), d["M"][free][:, free].toarray()
    f = np.sqrt(scipy.linalg.eigh(k, mass, eigvals_only=True)[:3]) / (2 * math.pi)
    expected = rodsim.modes(rodsim.load_case(case), count=3).frequency
    np.testing.assert_allclose(f, expected, rtol=1e-9)
    translations = np.tile([1, 1, 1, 0, 0, 0], len(free) // 6).astype(bool)
    np.testing.assert_allclose(
        d["C"].diagonal(), np.where(translations, 3.0 * d["M"].diagonal(), 0.0), rtol=1e-12
    )


def test_each_mode_has_a_paraview_series(tmp_path):
    """<stem>_mode<k>.pvd: 24 frames over a period; at a quarter period the displacement is
    the mode scaled so that its largest nodal displacement is 10% of the model's size (1 m)."""
    import meshio

    from rodsim.writers.vtk import read_pvd

    case = _case(n=10, solver="{analysis: modal, modal: {modes: 2}}")
    result = rodsim.run_case(case, tmp_path / "beam.h5", vtk=True)
    expected = rodsim.modes(case, count=2)
    for k in (1, 2):
        entries = read_pvd(tmp_path / f"beam_mode{k}.pvd")
        assert len(entries) == 24
        quarter = meshio.read(entries[6][1]).point_data["displacement"]
        assert np.linalg.norm(quarter, axis=1).max() == pytest.approx(0.1, rel=1e-9)
        u = expected.shape[k - 1][:, :3]
        scale = 0.1 / np.linalg.norm(u, axis=1).max()
        np.testing.assert_allclose(np.abs(quarter), np.abs(scale * u), atol=1e-12)
    assert result.path.exists()


def test_rigid_modes_report_zero_and_arguments_are_checked():
    m = _modes(boundary="", count=7)
    assert np.all(m.frequency[m.rigid] == 0.0)
    with pytest.raises(rodsim.CaseError, match="reference or equilibrium"):
        _modes(about="foo")
    with pytest.raises(rodsim.CaseError, match="positive integer"):
        _modes(count=0)
    with pytest.raises(rodsim.NumericalError, match="no positive buckling factor"):
        rodsim.buckling(_case(n=4, solver="{analysis: equilibrium}"))


def test_the_lowest_eigenvalue_along_an_equilibrium_path():
    """solver.equilibrium.eigenvalue: the pinned beam compressed in 3 load steps to 0.75 P_E
    records omega^2 falling on a straight line (compression softens the bending stiffness
    linearly): it starts at the unloaded omega0^2 (rodsim.modes) within 1e-4 and reaches zero
    at the model's linear buckling load (rodsim.buckling) within 1e-3, itself Euler's within
    0.5%. The reference frame, and runs without the key, record NaN."""
    euler = math.pi**2 * E * I2
    load = f"  - {{set: beam.end, force: [{-0.75 * euler}, 0, 0]}}"
    solver = "{analysis: equilibrium, equilibrium: {load_steps: 3, eigenvalue: true}}"
    case = _case(n=20, boundary=PINNED, loads=load, solver=solver)
    lam = rodsim.run_in_memory(case).lowest_eigenvalue
    assert math.isnan(lam[0])
    slope, intercept = np.polyfit([0.25, 0.5, 0.75], lam[1:], 1)
    # straight to 1e-4: the axial shortening P / EA = 6e-5 bends the line that little
    line = np.polyval([slope, intercept], [0.25, 0.5, 0.75])
    np.testing.assert_allclose(line, lam[1:], rtol=1e-4)
    omega0_squared = rodsim.modes(_case(n=20, boundary=PINNED), count=1).eigenvalue[0].real
    assert intercept == pytest.approx(omega0_squared, rel=1e-4)
    critical = 0.75 * rodsim.buckling(case, count=1).factor[0]  # in units of P_E
    assert -intercept / slope == pytest.approx(critical, rel=1e-3)
    assert critical == pytest.approx(1.0, rel=5e-3)
    plain = rodsim.run_in_memory(_case(n=4, solver="{t_end: 0.001}"))
    assert np.isnan(plain.lowest_eigenvalue).all()


NARROW = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 40, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850}}, shape: {{rectangle: [0.01, 0.1]}}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, {force}]}}
solver: {{analysis: equilibrium, equilibrium: {{load_steps: {steps}, eigenvalue: true}}}}
"""


def test_lateral_torsional_buckling_on_the_path():
    """A narrow cantilever (10 x 100 mm, 2 m) under a tip load at the centroid. Timoshenko &
    Gere's linear P_cr = 4.013 sqrt(E I_weak G J) / L^2 = 2.108 kN ignores the deflection
    before buckling; with it, P_cr / sqrt((1 - E I_weak / E I_strong)(1 - G J / E I_strong))
    = 2.120 kN (Timoshenko & Gere, Theory of Elastic Stability, sec. 6.3). rodsim follows the
    large-deflection path to 2.13 kN in 43 steps: the lowest eigenvalue falls to zero at the
    linear extrapolation of its last two steps, 2.140 kN, within 1% of the corrected load
    (measured +0.96%; the run at 2.14 kN in 43 steps leaves the path for another branch).
    Linear buckling about the reference refuses this case (the loads turn the sections
    first)."""
    from rodsim.model.shapes import rectangle_torsion_constant

    g = E / (2 * (1 + NU))
    i_weak, i_strong = 0.1 * 0.01**3 / 12, 0.01 * 0.1**3 / 12
    gj = g * rectangle_torsion_constant(0.01, 0.1)
    p_cr = 4.013 * math.sqrt(E * i_weak * gj) / 4
    assert p_cr == pytest.approx(2108, rel=1e-3)
    corrected = p_cr / math.sqrt((1 - i_weak / i_strong) * (1 - gj / (E * i_strong)))
    path = rodsim.run_in_memory(rodsim.case_from_yaml(NARROW.format(force=-2130.0, steps=43)))
    loads = path.time[-2:] * 2130.0
    lam = path.lowest_eigenvalue[-2:]
    assert lam.min() > 0  # still stable at 2.13 kN
    crossing = loads[1] - lam[1] * (loads[1] - loads[0]) / (lam[1] - lam[0])
    assert crossing == pytest.approx(corrected, rel=1e-2)
    with pytest.raises(rodsim.NumericalError, match="turn the sections"):
        rodsim.buckling(rodsim.case_from_yaml(NARROW.format(force=-1000.0, steps=1)))


def test_a_long_fine_cantilever_has_no_rigid_mode():
    """10 m, 1000 elements: f1 = 8.355 Hz / 100 has lambda ~ 1e-12 of the stiffest element's
    stiffness-to-mass ratio (a threshold on lambda alone once called it rigid); its shape is
    no rigid motion, so it is elastic (within 0.1% of Euler-Bernoulli)."""
    text = BEAM.format(n=1000, boundary=CLAMPED, loads="", solver="{t_end: 1}")
    text = text.replace("to: [1, 0, 0]", "to: [10, 0, 0]").replace("loads:\n\n", "")
    m = rodsim.modes(rodsim.case_from_yaml(text), count=2)
    assert not m.rigid.any()
    assert m.frequency[0] == pytest.approx(_beam_frequency(1.875104, I2) / 100, rel=1e-3)


def test_cantilever_plate_is_leissas():
    """A square plate clamped along one edge (16 x 16 MITC4, h/a = 1e-3): omega a^2
    sqrt(rho h / D) = 3.492, 8.525, 21.43 (Leissa, Vibration of Plates, NASA SP-160, table
    4.30, nu = 0.3) within 1% (measured -0.7%, -0.6%, -0.9%: the mesh)."""
    text = """
rodsim: 1
mesh:
  - rectangle: {name: p, origin: [0, 0, 0], size: [1, 1], elements: [16, 16], section: s}
sections:
  s: {type: plate, material: {E: 1.0e6, nu: 0.3, rho: 1.0}, thickness: 0.001}
boundary:
  - {set: p.x0, fix: all}
solver: {t_end: 1}
"""
    m = rodsim.modes(rodsim.case_from_yaml(text), count=3)
    d = 1e6 * 1e-3**3 / (12 * (1 - 0.3**2))
    scaled = 2 * math.pi * m.frequency * math.sqrt(1e-3 / d)
    assert scaled == pytest.approx([3.492, 8.525, 21.43], rel=1e-2)


def test_slender_cantilever_modes_one_to_three():
    """L/r = 1000 (h = sqrt(12) mm, L = 1 m), 200 elements: bending modes 1-3 within 0.1% of
    the slender limit beta_n L = 1.87510, 4.69409, 7.85476 (shear and rotary inertia ~(beta
    r)^2 < 1e-4, the element (beta h_e)^2 / 12 < 1.3e-4)."""
    h = math.sqrt(12) * 1e-3
    text = BEAM.format(n=200, boundary=CLAMPED, loads="", solver="{t_end: 1}")
    text = text.replace("[0.02, 0.01]", f"[0.02, {h}]").replace("loads:\n\n", "")
    m = rodsim.modes(rodsim.case_from_yaml(text), count=8)
    weak = [k for k in range(8) if np.abs(m.shape[k, :, 2]).max() > np.abs(m.shape[k, :, 1]).max()]
    i2, area = 0.02 * h**3 / 12, 0.02 * h
    expected = [
        b**2 / (2 * math.pi) * math.sqrt(E * i2 / (RHO * area)) for b in (1.87510, 4.69409, 7.85476)
    ]
    assert m.frequency[weak[:3]] == pytest.approx(expected, rel=1e-3)
