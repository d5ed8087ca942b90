"""Natural modes (issue 17, docs/modal.md): against Euler-Bernoulli beams, bars and shafts,
free bodies, a beam under axial load about its equilibrium and Beck's follower-loaded column."""

import math

import numpy as np
import pytest
import scipy.io
import scipy.linalg
import scipy.optimize

import rodsim
from rodsim.integrators import implicit, modal
from rodsim.validate import theory

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
    (1/4L) sqrt(E A / rho A) and torsion (1/4L) sqrt(G J / rho J_p) with the section's own
    values within 0.1% (measured 6.4e-5 each); both are, to 1e-9, the lumped-mass bar's
    sin(x)/x times them, x = pi / (4 n) at n = 40 elements."""
    m = _modes(count=16)
    f = m.frequency
    assert not m.rigid.any()
    assert m.symmetric
    for beta_l, tol in ((1.875104, 1e-3), (4.694091, 5e-3)):
        for i in (I2, I3):
            assert np.min(np.abs(f / _beam_frequency(beta_l, i) - 1)) < tol
    s = rodsim.prepare(_case()).setup.sections["s"]
    x = math.pi / (4 * 40)
    for wave in (math.sqrt(s.EA / s.rhoA) / 4, math.sqrt(s.GJ / s.rhoJ) / 4):
        nearest = f[np.argmin(np.abs(f / wave - 1))]
        assert nearest == pytest.approx(wave, rel=1e-3)
        assert nearest == pytest.approx(wave * math.sin(x) / x, rel=1e-9)


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
    """Free-free, 160 elements: six rigid modes (f = 0, flagged), then (4.730)^2 of
    Euler-Bernoulli within 0.1% (measured -4.6e-4: shear and rotary inertia lower it by
    about (beta r)^2 (1 + E / kG) / 2 = 3.5e-4, the element by 1e-4); with every mode (a
    3-element beam, 24 dofs) the effective masses add up to the model's mass along each axis
    and its moment of inertia about each axis through the origin (r^T M r: the modes are
    complete and M-orthonormal)."""
    m = _modes(n=160, boundary="", count=8)
    assert m.rigid[:6].all()
    assert not m.rigid[6:].any()
    assert m.frequency[6] == pytest.approx(_beam_frequency(4.730041, I2), rel=1e-3)
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
    """A 5 m column (P_E / kGA <= 1.1e-5 and P_E / EA <= 3.3e-6: shear and extension
    negligible), 80 elements, an axial compressive end force P0 = 1 N: the lowest factors are
    the Euler loads pi^2 E I / (K L)^2 over P0, about the weak axis and then the strong one,
    within 0.1% (measured +6e-5 for the cantilever and +2.5e-4 pinned-pinned, about either
    axis: the element's O(h^2) stiffening)."""
    load = "  - {set: beam.end, force: [-1, 0, 0]}"
    case = _case(n=80, boundary=boundary, loads=load, solver="{analysis: equilibrium}")
    case = rodsim.case_from_yaml(case.text.replace("to: [1, 0, 0]", "to: [5, 0, 0]"))
    b = rodsim.buckling(case, count=2)
    euler = [math.pi**2 * E * i / (5 * effective_length) ** 2 for i in (I2, I3)]
    assert b.factor == pytest.approx(euler, rel=1e-3)
    weak = b.shape[0]
    assert weak.flat[np.abs(weak).argmax()] == 1.0  # scaled to a largest component of +1
    assert np.abs(weak[:, 1]).max() < 1e-6 * np.abs(weak[:, 2]).max()  # bends in z only


def test_analysis_buckling_writes_the_factors(tmp_path):
    """inputs/column/buckling.yaml (`analysis: buckling`): the file's buckling/ group holds
    what rodsim.buckling gives, the first factor is Euler's cantilever load over the 10 kN
    within 0.5% (20 elements; the I-section's shear), rodsim info prints the factors, each
    mode has a ParaView series; about the preloaded equilibrium (10 kN, below the critical
    20.5 kN) the factors agree within 1e-3 (measured 4.8e-5: a column does not deform before
    it buckles)."""
    from click.testing import CliRunner

    from rodsim.cli import main

    case = rodsim.load_case("inputs/column/buckling.yaml")
    expected = rodsim.buckling(case, count=3)
    result = rodsim.run_case(case, tmp_path / "b.h5", vtk=True)
    ei_weak = rodsim.prepare(case).setup.sections["ipe100"].EI3  # web along z: about d3
    euler = math.pi**2 * ei_weak / (4 * 2.0**2) / 1e4
    assert expected.factor[0] == pytest.approx(euler, rel=5e-3)
    with __import__("h5py").File(result.path) as f:
        np.testing.assert_allclose(f["buckling/factor"][()], expected.factor, rtol=1e-9)
        assert f["buckling/shape"].shape == (3, 21, 6)
        assert f["buckling"].attrs["about"] == "reference"
        assert f.attrs["status"] == "complete"
    out = CliRunner().invoke(main, ["info", str(result.path)])
    assert "buckling  3 modes about the reference (load 0)" in out.output
    assert f"{expected.factor[0]:.6g}" in out.output
    assert len(list(tmp_path.glob("b_buckling*.pvd"))) == 3
    pre = rodsim.run_case(case, tmp_path / "p.h5", overrides=["solver.buckling.about=equilibrium"])
    with __import__("h5py").File(pre.path) as f:
        assert f["buckling"].attrs["load"] == 1.0
        assert f["time"].shape == (2,)  # the equilibrium's frames: load 0 and 1
        np.testing.assert_allclose(f["buckling/factor"][()], expected.factor, rtol=1e-3)
    with pytest.raises(rodsim.CaseError, match="no steps"):
        rodsim.Simulation(case)


def test_buckling_about_a_preload_finds_the_nonlinear_critical_load():
    """The narrow cantilever of the lateral-torsional test: about a preload P0 (the tangent
    there, and the geometric stiffness of the stresses a load increment adds) the critical
    load holds the deflection before buckling, which raises it above the classical 2.108 kN
    (Timoshenko & Gere's correction: 2.120 kN). From P0 = 0.5, 0.8 and 0.95 of 2.120 kN it
    lies within 1% of the corrected load (measured +0.65%, +0.94%, +0.95%), above the
    classical one, and converges as P0 nears it: the estimates from 0.8 and 0.95 agree within
    1e-3 (measured 1e-4; the path's own critical point, test_lateral_torsional_buckling_
    linear_and_on_the_path, is 2.140 kN). A preload past the critical load is refused."""
    corrected, classical = 2120.0, 2108.0
    critical = {}
    for fraction in (0.5, 0.8, 0.95):
        p0 = fraction * corrected
        case = rodsim.case_from_yaml(NARROW.format(force=-p0, steps=int(40 * fraction)))
        b = rodsim.buckling(case, count=1, about="equilibrium")
        assert b.load == 1.0
        critical[fraction] = b.factor[0] * p0
        assert critical[fraction] == pytest.approx(corrected, rel=1e-2)
        assert critical[fraction] > classical * (1 + 1e-3)
    assert critical[0.8] == pytest.approx(critical[0.95], rel=1e-3)
    column = "validation/linear_buckling/case.yaml"  # P_cr = 1079.9 N at 40 elements
    with pytest.raises(rodsim.NumericalError, match="past a critical load"):
        rodsim.buckling(column, ["loads[0].force=[-1083, 0, 0]"], about="equilibrium")


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


def test_export_matrices_in_matrix_market_with_the_dashpots(tmp_path):
    """--format mtx: <stem>_K/M/C.mtx (read by scipy.io.mmread) equal the .npz matrices and
    <stem>_dofs.csv maps each row; the supports' dashpots are in C: a tip dashpot of 7 N s/m
    along z and a rotational one of 2 N m s about the section's d3 (= global z here) add to
    the tip's u_z and theta_z diagonal entries."""
    from click.testing import CliRunner

    from rodsim.cli import main
    from rodsim.post.matrices import load_matrices

    text = BEAM.format(n=4, boundary=CLAMPED, loads="", solver="{t_end: 1, damping: {mass: 3.0}}")
    text = text.replace("loads:\n\n", "") + (
        "supports:\n  - {set: beam.end, dashpot: [0, 0, 7.0], rotational_dashpot: [0, 0, 2.0], "
        "frame: section}\n"
    )
    case = tmp_path / "beam.yaml"
    case.write_text(text)
    run = CliRunner().invoke
    assert (
        run(main, ["export", "--matrices", str(case), "-o", str(tmp_path / "m.npz")]).exit_code == 0
    )
    out = run(
        main, ["export", "--matrices", str(case), "--format", "mtx", "-o", str(tmp_path / "k")]
    )
    assert out.exit_code == 0, out.output
    d = load_matrices(tmp_path / "m.npz")
    for name in ("K", "M", "C"):
        read = scipy.io.mmread(tmp_path / f"k_{name}.mtx").tocsr()
        np.testing.assert_array_equal(read.toarray(), d[name].toarray())
    rows = (tmp_path / "k_dofs.csv").read_text().splitlines()
    assert (
        rows[0] == "dof,node,component,free" and rows[1] == "0,0,ux,0" and rows[-1] == "29,4,rz,1"
    )
    tip = 6 * 4
    m_tip = d["M"].diagonal()[tip]
    assert d["C"][tip + 2, tip + 2] == pytest.approx(3.0 * m_tip + 7.0, rel=1e-12)
    assert d["C"][tip + 5, tip + 5] == pytest.approx(2.0, rel=1e-12)
    assert run(main, ["export", "--matrices", str(case), "--format", "vtk"]).exit_code == 2


def test_each_mode_has_a_paraview_series(tmp_path):
    """<stem>_mode<k>.pvd: 24 frames over a period; at a quarter period the displacement is
    the mode scaled so that its largest nodal displacement is 10% of the model's size (1 m)."""
    import meshio

    from rodsim.results.vtk import read_pvd

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


def test_lateral_torsional_buckling_linear_and_on_the_path():
    """A narrow cantilever (10 x 100 mm, 2 m, 40 elements) under a tip load at the centroid.
    Timoshenko & Gere's linear P_cr = 4.013 sqrt(E I_weak G J) / L^2 = 2.108 kN ignores the
    deflection before buckling: linear buckling about the reference (the classical problem,
    the stresses' geometric stiffness on the undeformed beam) gives it within 1% (measured
    +0.04%; +0.002% at 80 elements; the second factor is the second lateral-torsional mode).
    With the deflection, P_cr / sqrt((1 - E I_weak / E I_strong)(1 - G J / E I_strong)) =
    2.120 kN (Timoshenko & Gere, Theory of Elastic Stability, sec. 6.3). rodsim follows the
    large-deflection path to 2.13 kN in 43 steps: the lowest eigenvalue falls to zero at the
    linear extrapolation of its last two steps, 2.140 kN, within 1% of the corrected load
    (measured +0.96%; the run at 2.14 kN in 43 steps leaves the path for another branch)."""
    from rodsim.model.shapes import rectangle_torsion_constant

    g = E / (2 * (1 + NU))
    i_weak, i_strong = 0.1 * 0.01**3 / 12, 0.01 * 0.1**3 / 12
    gj = g * rectangle_torsion_constant(0.01, 0.1)
    p_cr = 4.013 * math.sqrt(E * i_weak * gj) / 4
    assert p_cr == pytest.approx(2108, rel=1e-3)
    linear = rodsim.buckling(rodsim.case_from_yaml(NARROW.format(force=-1000.0, steps=1)))
    assert linear.factor[0] * 1000.0 == pytest.approx(p_cr, rel=1e-2)
    lateral_twist = linear.shape[0]
    assert np.abs(lateral_twist[:, 1]).max() > 0 and np.abs(lateral_twist[:, 3]).max() > 0
    corrected = p_cr / math.sqrt((1 - i_weak / i_strong) * (1 - gj / (E * i_strong)))
    path = rodsim.run_in_memory(rodsim.case_from_yaml(NARROW.format(force=-2130.0, steps=43)))
    loads = path.time[-2:] * 2130.0
    lam = path.lowest_eigenvalue[-2:]
    assert lam.min() > 0  # still stable at 2.13 kN
    crossing = loads[1] - lam[1] * (loads[1] - loads[0]) / (lam[1] - lam[0])
    assert crossing == pytest.approx(corrected, rel=1e-2)


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


def test_stocky_cantilever_modes_are_timoshenkos():
    """L/r = 10 (a 0.1 x 0.3464 rectangle, bending in x-z with r = 0.1), 100 elements: the
    bending modes 1-3 in that plane within 0.1% of the roots of the Timoshenko frequency
    equation (rodsim.validate.theory) with the section's own EI, kGA, rho A and rho I
    (measured -2.3e-5, -5.0e-5, -1.4e-4, falling as h^2); Timoshenko lies 8.1%, 34% and 49%
    below Euler-Bernoulli there."""
    text = BEAM.format(n=100, boundary=CLAMPED, loads="", solver="{t_end: 1}")
    text = text.replace("loads:\n\n", "").replace("[0.02, 0.01]", f"[0.1, {0.1 * 12**0.5!r}]")
    case = rodsim.case_from_yaml(text)
    s = rodsim.prepare(case).setup.sections["s"]
    m = rodsim.modes(case, count=12)
    theta = np.linalg.norm(m.shape[:, :, 3:], axis=1)  # (M, 3)
    in_plane = theta[:, 1] > 0.99 * np.linalg.norm(theta, axis=1)  # turning about y
    section = {"L": 1.0, "EI": s.EI2, "rhoA": s.rhoA}
    reference = np.array(
        [
            theory.timoshenko_cantilever(**section, kGA=s.GA3, rhoI=s.rhoI2, mode=k)
            for k in (1, 2, 3)
        ]
    )
    euler = np.array([theory.euler_bernoulli_cantilever(**section, mode=k) for k in (1, 2, 3)])
    assert m.frequency[in_plane][:3] == pytest.approx(reference / (2 * math.pi), rel=1e-3)
    assert np.all(euler / reference - 1 > 0.02)


def test_damping_fitted_to_target_ratios():
    """solver.damping.ratios at modes 1 and 3 of the cantilever: the modal table reports those
    ratios there within 1e-3 (the rotary inertia, which mass damping leaves alone, carries
    ~1e-4 of a slender beam's kinetic energy); one target puts the Rayleigh curve's minimum
    there; unreachable targets and targets given with coefficients are input errors."""
    f = _modes(n=20, count=4).frequency.tolist()
    solver = f"{{t_end: 1, damping: {{ratios: [[{f[0]!r}, 0.02], [{f[2]!r}, 0.05]]}}}}"
    m = _modes(n=20, solver=solver, count=4)
    assert m.damping_ratio[[0, 2]] == pytest.approx([0.02, 0.05], rel=1e-3)
    one = _modes(n=20, solver=f"{{t_end: 1, damping: {{ratios: [[{f[0]!r}, 0.02]]}}}}", count=4)
    assert one.damping_ratio[0] == pytest.approx(0.02, rel=1e-3)
    assert np.all(one.damping_ratio[1:] > 0.02)
    with pytest.raises(rodsim.CaseError, match="between"):
        _case(solver="{t_end: 1, damping: {ratios: [[1, 0.01], [10, 0.5]]}}")
    with pytest.raises(rodsim.CaseError, match="either ratios"):
        _case(solver="{t_end: 1, damping: {mass: 1, ratios: [[1, 0.01]]}}")


def test_the_same_case_gives_the_same_modes():
    """ARPACK starts from a fixed vector: two runs give bit-identical frequencies and shapes,
    even for the degenerate bending pair of a square section (any basis of it would do, the
    same one every time is what a user comparing runs needs)."""
    text = BEAM.format(n=60, boundary=CLAMPED, loads="", solver="{t_end: 1}")
    case = rodsim.case_from_yaml(
        text.replace("loads:\n\n", "").replace("[0.02, 0.01]", "[0.01, 0.01]")
    )
    first, second = rodsim.modes(case, count=4), rodsim.modes(case, count=4)
    assert first.frequency[0] == pytest.approx(first.frequency[1], rel=1e-9)  # degenerate
    np.testing.assert_array_equal(first.frequency, second.frequency)
    np.testing.assert_array_equal(first.shape, second.shape)


def test_plate_buckling_under_uniaxial_compression():
    """A simply supported square plate (a = 1, h = 0.01, 16 x 16 MITC4) compressed along x by
    a uniform edge load (corner nodes half): N_cr = k pi^2 D / b^2 with k = (m + 1/m)^2 = 4
    for m = 1 half-wave (Timoshenko & Gere, sec. 9.2) within 1% (measured +0.48%, the mesh),
    the m = 2 factor 6.25 pi^2 D within 3% (measured +1.7%); the plates' strains carry the
    prestress of the classical problem."""
    n = 16
    text = f"""
rodsim: 1
mesh:
  - rectangle: {{name: p, origin: [0, 0, 0], size: [1, 1], elements: [{n}, {n}], section: s}}
sections:
  s: {{type: plate, material: {{E: 1.0e6, nu: 0.3, rho: 1.0}}, thickness: 0.01}}
sets:
  corners: {{union: [c0, c1]}}
  c0: {{near: [1, 0, 0]}}
  c1: {{near: [1, 1, 0]}}
  pin: {{near: [0, 0, 0]}}
boundary:
  - {{set: p.x0, fix: [ux, uz, rx, rz]}}
  - {{set: pin, fix: [uy]}}
  - {{set: p.x1, fix: [uz, rx, rz]}}
  - {{set: p.y0, fix: [uz, ry, rz]}}
  - {{set: p.y1, fix: [uz, ry, rz]}}
loads:
  - {{set: p.x1, force: [{-1 / n!r}, 0, 0]}}
  - {{set: corners, force: [{0.5 / n!r}, 0, 0]}}
solver: {{analysis: buckling}}
"""
    b = rodsim.buckling(rodsim.case_from_yaml(text), count=2)
    d = 1e6 * 0.01**3 / (12 * (1 - 0.3**2))
    assert b.factor[0] == pytest.approx(4 * math.pi**2 * d, rel=1e-2)
    assert b.factor[1] == pytest.approx(6.25 * math.pi**2 * d, rel=3e-2)


def test_prestressed_reference_strains():
    """The strain measures at the reference are the reference strains (rods and plates), so a
    model prestressed by its own reference is the model itself; prestressed by a state, its
    reference carries that state's strains."""
    from rodsim.model import plate, rod

    case = rodsim.case_from_yaml(
        BEAM.format(n=6, boundary=CLAMPED, loads="", solver="{t_end: 1}").replace("loads:\n\n", "")
    )
    model = rodsim.prepare(case).setup.model
    gamma, omega = rod.strains_at(model.rods, model.x0, model.rot0)
    np.testing.assert_allclose(gamma, model.rods.gamma0, atol=1e-15)
    np.testing.assert_allclose(omega, model.rods.omega0, atol=1e-15)
    sheet = rodsim.prepare("inputs/plate/ss_plate.yaml").setup.model
    strains = plate.strains_at(sheet.plates, sheet.x0, sheet.rot0)
    for value, reference in zip(
        strains,
        (sheet.plates.eps0, sheet.plates.kappa0, sheet.plates.g0, sheet.plates.w0),
        strict=True,
    ):
        np.testing.assert_allclose(value, reference, atol=1e-15)
    stretched = model.x0 * np.array([1.001, 1.0, 1.0])
    shifted = modal.prestressed(model, (model.x0, model.rot0), (stretched, model.rot0))
    np.testing.assert_allclose(
        model.rods.gamma0 - shifted.rods.gamma0, [[1e-3, 0, 0]] * 6, atol=1e-15
    )


@pytest.mark.parametrize("force", [1.0, 1.0e6])
def test_buckling_load_does_not_depend_on_the_size_of_the_loads(force):
    """The critical load factor x the load is the same critical load for a 1 N and a 1 MN end
    force on validation/linear_buckling's column (within 1e-6: the state whose stresses give
    the geometric stiffness is rescaled to a displacement of ~1e-6 of the model's size, so
    its strains stand above round-off and stay linear; at a fixed load multiplier of 1e-4 a
    1 N load on steel gave strains of 5e-13, and an error of 5e-3 at 1e-6)."""
    case = "validation/linear_buckling/case.yaml"
    reference = rodsim.buckling(case, ["loads[0].force=[-1000, 0, 0]"], count=1).factor[0] * 1000
    b = rodsim.buckling(case, [f"loads[0].force=[{-force!r}, 0, 0]"], count=1)
    assert b.factor[0] * force == pytest.approx(reference, rel=1e-6)


def test_both_groups_give_the_same_modes():
    """SO3xR3 and SE3 parametrise the same nodal configurations and the modes are taken in
    the same spatial increments: about the reference and about the bent equilibrium of
    inputs/cantilever_tip (tip rotation ~1 rad) the frequencies agree within 1e-8 (the
    equilibria agree to the Newton tolerance)."""
    for case in ("inputs/cantilever/cantilever.yaml", "inputs/cantilever_tip/cantilever_tip.yaml"):
        so3 = rodsim.modes(case, count=4).frequency
        se3 = rodsim.modes(case, ["solver.group=SE3"], count=4).frequency
        np.testing.assert_allclose(se3, so3, rtol=1e-8)


def test_rod_and_plate_modes_agree_with_the_explicit_scheme(tmp_path):
    """A cantilever plate strip (1 x 0.2 m, h = 20 mm, 10 x 2 MITC4) with a steel rod along
    one edge on the same nodes: the explicit scheme started in the first mode (kind:
    displacement, 1e-6 m) vibrates at the modal frequency within 1e-4 over 5 periods (measured
    ~1e-9 in a 50-period run): the mass and stiffness of rods and plates assembled together
    are those the time integration sees."""
    text = """
rodsim: 1
mesh:
  - rectangle: {name: p, origin: [0, 0, 0], size: [1, 0.2], elements: [10, 2], section: plate}
  - rod: {name: r, from: [0, 0, 0], to: [1, 0, 0], elements: 10, section: bar, up: [0, 0, 1]}
sections:
  plate: {type: plate, material: {E: 7.0e10, nu: 0.3, rho: 2700}, thickness: 0.02}
  bar: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.03, 0.03]}}
boundary:
  - {set: p.x0, fix: all}
"""
    (tmp_path / "m.yaml").write_text(text + "solver: {analysis: modal, modal: {modes: 1}}\n")
    with __import__("h5py").File(rodsim.run_case(tmp_path / "m.yaml", tmp_path / "m.h5").path) as f:
        f1 = float(f["modes/frequency"][0])
    seed = "imperfection: {from: m.h5, mode: 1, amplitude: 1.0e-6, kind: displacement}\n"
    solver = f"solver: {{t_end: {5 / f1!r}}}\noutput: {{interval: {1 / (25 * f1)!r}}}\n"
    (tmp_path / "d.yaml").write_text(text + seed + solver)
    r = rodsim.run_in_memory(rodsim.load_case(tmp_path / "d.yaml"))
    w = r.position[:, -1, 2] - r.mesh.points[-1, 2]
    w = w / abs(w[0])

    def wave(t, a, b, f):
        return a * np.cos(2 * np.pi * f * t) + b * np.sin(2 * np.pi * f * t)

    (_, _, fitted), _ = scipy.optimize.curve_fit(wave, r.time, w, p0=(1.0, 0.0, f1))
    assert fitted == pytest.approx(f1, rel=1e-4)


def test_results_carry_the_modes_and_the_buckling(tmp_path):
    """read_results and run_in_memory give a modal run's Modes and a buckling run's Buckling
    as the analysis computed them (the file's groups read back exactly); other runs have
    None."""
    case = _case(n=10, solver="{analysis: modal, modal: {modes: 3}}")
    computed = rodsim.modes(case, count=3)
    for r in (
        rodsim.read_results(rodsim.run_case(case, tmp_path / "m.h5").path),
        rodsim.run_in_memory(case),
    ):
        np.testing.assert_array_equal(r.modes.frequency, computed.frequency)
        np.testing.assert_array_equal(r.modes.eigenvalue, computed.eigenvalue)
        np.testing.assert_array_equal(r.modes.shape, computed.shape)
        assert r.buckling is None
    column = rodsim.load_case("inputs/column/buckling.yaml")
    factors = rodsim.buckling(column, count=3).factor
    for r in (
        rodsim.read_results(rodsim.run_case(column, tmp_path / "b.h5").path),
        rodsim.run_in_memory(column),
    ):
        np.testing.assert_allclose(r.buckling.factor, factors, rtol=1e-12)
        assert r.buckling.shape.shape == (3, 21, 6) and r.modes is None
    assert rodsim.run_in_memory(_case(n=4)).modes is None
