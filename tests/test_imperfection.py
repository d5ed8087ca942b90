"""Imperfections seeded from modes (issue 17, docs/modal.md "Imperfections"): a column's
post-buckling path against the elastica, a stress-free imperfect reference, a free vibration
in a mode at the modal frequency, and the errors a user meets."""

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.special
from click.testing import CliRunner

import rodsim
from rodsim.cli import main

COLUMN = """
rodsim: 1
mesh:
  - rod: {{name: c, from: [0, 0, 0], to: [1, 0, 0], elements: {n}, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, material: {{E: 2.1e11, nu: 0.3, rho: 7850}}, shape: {{rectangle: [0.02, 0.01]}}}}
boundary:
  - {{set: c.start, fix: all}}
loads:
  - {{set: c.end, force: [{force}, 0, 0]}}
{extra}
solver: {solver}
"""
EI = 2.1e11 * 0.02 * 0.01**3 / 12  # about d2: bending in z, the weak plane


def _write(tmp_path, name, n=40, force=-1.0, extra="", solver="{analysis: buckling}"):
    path = tmp_path / name
    path.write_text(COLUMN.format(n=n, force=force, extra=extra, solver=solver))
    return path


def _buckled(tmp_path, n=40):
    """(path of the buckling results, the first critical load of a 1 N end force)."""
    result = rodsim.run_case(_write(tmp_path, "b.yaml", n), tmp_path / "b.h5")
    with __import__("h5py").File(result.path) as f:
        return result.path, float(f["buckling/factor"][0])


def _elastica_deflection(ratio: float) -> float:
    """The tip deflection / L of the inextensible cantilever elastica at P = ratio P_cr:
    (2 K(m) / pi)^2 = ratio, delta / L = 2 sqrt(m) / K(m) (Timoshenko & Gere, sec. 2.7)."""
    m = scipy.optimize.brentq(lambda m: 2 * scipy.special.ellipk(m) / math.pi - ratio**0.5, 0, 0.99)
    return 2 * math.sqrt(m) / scipy.special.ellipk(m)


def test_a_seeded_column_follows_the_elastica(tmp_path):
    """A cantilever column at 1.1 P_cr (P_cr from its own buckling run), seeded with its first
    buckling mode at 1e-4 L: its tip deflects by the elastica's 0.5085 L within 0.5% (the
    imperfection, shear and extension each shift it by ~1e-4 relative, the 40-element mesh by
    ~(h_e / L)^2); unseeded, the solver finds only the unstable straight column past P_cr and
    stops with advice to seed an imperfection."""
    modes, p_cr = _buckled(tmp_path)
    assert p_cr == pytest.approx(math.pi**2 * EI / 4, rel=1e-3)
    ratio = 1.1
    solver = "{analysis: equilibrium, equilibrium: {load_steps: 20}}"
    seed = f"imperfection: {{from: {modes.name}, mode: 1, amplitude: 1.0e-4}}"
    seeded = _write(tmp_path, "s.yaml", force=-ratio * p_cr, extra=seed, solver=solver)
    r = rodsim.read_results(rodsim.run_case(seeded, tmp_path / "s.h5").path)
    expected = _elastica_deflection(ratio)
    assert expected == pytest.approx(0.50853, abs=1e-5)
    assert abs(r.position[-1, -1, 2]) == pytest.approx(expected, rel=5e-3)
    assert abs(r.mesh.points[-1, 2]) == pytest.approx(1e-4, rel=1e-12)  # the seeded tip
    straight = _write(tmp_path, "p.yaml", force=-ratio * p_cr, solver=solver)
    with pytest.raises(rodsim.NumericalError, match="seed an imperfection"):
        rodsim.run_case(straight, tmp_path / "p.h5")


def test_a_geometric_imperfection_is_stress_free(tmp_path):
    """kind: geometry moves the reference by s phi (positions and frames, 1 mm at the tip):
    unloaded, the imperfect column is at rest with no section force, and its reference frames
    are turned by exp(hat(s theta))."""
    modes, _ = _buckled(tmp_path, n=10)
    seed = f"imperfection: {{from: {modes.name}, mode: 1, amplitude: -1.0e-3}}"
    case = _write(tmp_path, "g.yaml", n=10, force=0.0, extra=seed, solver="{t_end: 1.0e-3}")
    r = rodsim.run_in_memory(case)
    with __import__("h5py").File(modes) as f:
        phi = f["buckling/shape"][0]
    s = -1e-3 / np.linalg.norm(phi[:, :3], axis=1).max()
    np.testing.assert_allclose(r.mesh.points[:, 2], s * phi[:, 2], atol=1e-15)
    assert np.abs(r.force).max() < 1e-6  # N; 1e-3 L of bending would give ~1e2 N m moments
    assert np.abs(r.moment).max() < 1e-8
    # roundoff: EA eps_machine / m_node x t ~ 3e-11 m/s; a stressed 1 mm offset moves at ~1 m/s
    assert np.abs(r.velocity).max() < 1e-9
    d1 = r.mesh.frames[-1, :, 0]  # exp(hat(s theta)) e_x, theta about y: (cos, 0, -sin)
    assert d1 == pytest.approx([math.cos(s * phi[-1, 4]), 0.0, -math.sin(s * phi[-1, 4])])


def test_a_mode_displacement_vibrates_at_the_modal_frequency(tmp_path):
    """kind: displacement starts the explicit scheme in the first mode of a modal run of the
    same mesh (a 0.1 x 0.05 cantilever, L = 1, 20 elements, amplitude 1e-6 L): a sine fit of
    the tip deflection over 50 periods gives the modal frequency within 1e-4 (the scheme's
    period error is (omega dt)^2 / 24 ~ 7e-8, the amplitude's nonlinearity ~1e-12)."""
    text = COLUMN.replace("[0.02, 0.01]", "[0.1, 0.05]")  # one first mode: bending in z
    (tmp_path / "m.yaml").write_text(
        text.format(n=20, force=0.0, extra="", solver="{analysis: modal, modal: {modes: 1}}")
    )
    result = rodsim.run_case(tmp_path / "m.yaml", tmp_path / "m.h5")
    with __import__("h5py").File(result.path) as f:
        f1 = float(f["modes/frequency"][0])
    periods = 50
    seed = "imperfection: {from: m.h5, mode: 1, amplitude: 1.0e-6, kind: displacement}"
    solver = f"{{t_end: {periods / f1!r}}}\noutput: {{interval: {1 / (25 * f1)!r}}}"
    (tmp_path / "d.yaml").write_text(text.format(n=20, force=0.0, extra=seed, solver=solver))
    r = rodsim.run_in_memory(rodsim.load_case(tmp_path / "d.yaml"))
    tip = r.position[:, -1] - r.mesh.points[-1]
    w = tip[:, np.abs(tip).max(axis=0).argmax()]  # the mode's plane
    assert abs(w[0]) == pytest.approx(1e-6, rel=1e-9)

    def wave(t, a, b, f):
        return a * np.cos(2 * np.pi * f * t) + b * np.sin(2 * np.pi * f * t)

    scaled = w / abs(w[0])  # order 1: the fit's covariance is then estimable
    (_, _, fitted), _ = scipy.optimize.curve_fit(wave, r.time, scaled, p0=(1.0, 0.0, f1))
    assert r.time[-1] * fitted >= periods * (1 - 1e-3)
    assert fitted == pytest.approx(f1, rel=1e-4)


@pytest.mark.parametrize(
    ("seed", "key", "words"),
    [
        ("{from: b.h5, mode: 9, amplitude: 1.0e-3}", "imperfection.mode", "from 1 to 5"),
        ("{from: nowhere.h5, mode: 1, amplitude: 1.0e-3}", "imperfection.from", "cannot read"),
        ("{from: other.h5, mode: 1, amplitude: 1.0e-3}", "imperfection.from", "another mesh"),
        ("{from: b.h5, mode: 1, amplitude: 1.0e-3, kind: dis}", "imperfection.kind", "geometry"),
        (
            "{from: b.h5, mode: 1, amplitude: 1.0e-3, kind: displacement}",
            "imperfection.kind",
            "dynamic analysis",
        ),
    ],
)
def test_a_bad_imperfection_is_an_input_error(tmp_path, seed, key, words):
    """Each names the key and exits 2 in `rodsim check`."""
    _buckled(tmp_path, n=10)
    other = _write(tmp_path, "o.yaml", n=12, solver="{analysis: buckling}")
    rodsim.run_case(other, tmp_path / "other.h5")
    case = _write(tmp_path, "x.yaml", n=10, extra=f"imperfection: {seed}", solver="{t_end: 1}")
    if "displacement" in seed:
        case.write_text(case.read_text().replace("{t_end: 1}", "{analysis: equilibrium}"))
    out = CliRunner().invoke(main, ["check", str(case)])
    assert out.exit_code == 2, out.output
    assert key in out.output and words in out.output


def test_a_dashpot_damps_the_mode_as_its_damping_ratio_says(tmp_path):
    """A tip dashpot (25 N s/m in z) is in rodsim's damping matrix C: the modal run reports
    zeta_1 = phi^T C phi / (2 omega_1) = 4.85e-3, and the explicit scheme started in that
    mode decays as exp(-zeta omega t) with that zeta within 1e-3 (measured 3e-6: the
    coupling of the non-proportional damping to other modes is O(zeta^2))."""
    text = COLUMN.replace("[0.02, 0.01]", "[0.1, 0.05]")
    text = text.replace("loads:\n  - {{set: c.end, force: [{force}, 0, 0]}}\n", "")
    dash = "supports:\n  - {set: c.end, dashpot: [0, 0, 25.0]}\n"
    modal = "{analysis: modal, modal: {modes: 1}}"
    (tmp_path / "m.yaml").write_text(text.format(n=20, extra=dash, solver=modal))
    with __import__("h5py").File(rodsim.run_case(tmp_path / "m.yaml", tmp_path / "m.h5").path) as f:
        f1, zeta = float(f["modes/frequency"][0]), float(f["modes/damping_ratio"][0])
    assert zeta == pytest.approx(4.85e-3, rel=1e-2)
    seed = "imperfection: {from: m.h5, mode: 1, amplitude: 1.0e-6, kind: displacement}\n"
    solver = f"{{t_end: {20 / f1!r}}}\noutput: {{interval: {1 / (25 * f1)!r}}}"
    (tmp_path / "d.yaml").write_text(text.format(n=20, extra=seed + dash, solver=solver))
    r = rodsim.run_in_memory(rodsim.load_case(tmp_path / "d.yaml"))
    w = r.position[:, -1, 2] - r.mesh.points[-1, 2]

    def decay(t, a, b, f, z):
        wd = 2 * np.pi * f * np.sqrt(1 - z**2)
        return np.exp(-z * 2 * np.pi * f * t) * (a * np.cos(wd * t) + b * np.sin(wd * t))

    scaled = w / abs(w[0])
    (_, _, _, fitted), _ = scipy.optimize.curve_fit(decay, r.time, scaled, p0=(1.0, 0, f1, zeta))
    assert fitted == pytest.approx(zeta, rel=1e-3)


def test_a_torsion_mode_cannot_seed_an_imperfection(tmp_path):
    """A pure torsion mode of a cantilever moves no node (its displacements are round-off):
    its amplitude, a largest displacement, cannot scale it (exit 2, imperfection.mode)."""
    modal = "{analysis: modal, modal: {modes: 8}}"
    stocky = COLUMN.replace("[0.02, 0.01]", "[0.2, 0.2]")  # L/a = 5: torsion among the lowest
    (tmp_path / "m.yaml").write_text(stocky.format(n=10, force=0.0, extra="", solver=modal))
    rodsim.run_case(tmp_path / "m.yaml", tmp_path / "m.h5")
    with __import__("h5py").File(tmp_path / "m.h5") as f:
        shapes = f["modes/shape"][()]
    torsion = [
        k
        for k, phi in enumerate(shapes)
        if np.abs(phi[:, :3]).max() < 1e-9 * np.abs(phi[:, 3:]).max()
    ]
    assert torsion, "the 8 lowest modes of the cantilever hold a torsion mode"
    seed = f"imperfection: {{from: m.h5, mode: {torsion[0] + 1}, amplitude: 1.0e-3}}"
    (tmp_path / "x.yaml").write_text(
        stocky.format(n=10, force=0.0, extra=seed, solver="{t_end: 1}")
    )
    out = CliRunner().invoke(main, ["check", str(tmp_path / "x.yaml")])
    assert out.exit_code == 2, out.output
    assert "imperfection.mode" in out.output and "moves no node" in out.output
