"""Every example in inputs/ runs through the CLI in a short variant, and its key numbers hold.

The full-length runs are the same commands without the --set overrides.
"""

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import free_ring, spaghetti

from rodsim import run as runner
from rodsim.cli import main
from rodsim.results import read_results

INPUTS = Path(__file__).resolve().parents[1] / "inputs"


def _run(case: str, tmp_path, *overrides) -> Path:
    out = tmp_path / (Path(case).stem + ".h5")
    args = ["run", str(INPUTS / case), "-o", str(out), "-q", "--no-vtk"]
    for o in overrides:
        args += ["--set", o]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.stderr if hasattr(res, "stderr") else res.output
    return out


@pytest.mark.parametrize(
    "case", sorted(p.relative_to(INPUTS).as_posix() for p in INPUTS.glob("*/*.yaml"))
)
def test_every_input_checks(case):
    res = CliRunner().invoke(main, ["check", str(INPUTS / case)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    "case, reference", [("spaghetti/spaghetti.yaml", spaghetti), ("ring/ring.yaml", free_ring)]
)
def test_case_builds_the_reference_model(case, reference):
    """The YAML cases build exactly the models the invariant tests use."""
    m = runner.prepare(INPUTS / case).setup.model
    r = reference()
    for name in ("x0", "rot0", "mass", "inertia", "fixed"):
        np.testing.assert_allclose(getattr(m, name), getattr(r, name), atol=1e-15, err_msg=name)
    for name in ("conn", "length", "c1", "c2", "gamma0", "omega0"):
        np.testing.assert_allclose(
            getattr(m.rods, name), getattr(r.rods, name), atol=1e-15, err_msg=name
        )
    for name in ("node", "force", "moment", "follower", "tf_kinds", "tf_params", "tf_tables"):
        np.testing.assert_array_equal(getattr(m.loads, name), getattr(r.loads, name), name)


def test_spaghetti_momenta_after_the_pulse(tmp_path):
    out = _run("spaghetti/spaghetti.yaml", tmp_path, "solver.t_end=6", "output.interval=0.5")
    with h5py.File(out) as f:
        t = f["time"][()]
        after = t >= 5.0
        np.testing.assert_allclose(
            f["momentum/linear"][after], [[50, 0, 0]] * after.sum(), atol=1e-10
        )
        np.testing.assert_allclose(
            f["momentum/angular"][-1], [0, 307.906840, 131.694177], atol=1e-5
        )  # an independent re-implementation's values (docs/theory.md), to their printed digits
        e = f["energy/total"][after]
        assert 720.90 < e.min()
        assert e.max() < 720.906  # the re-implementation's band (docs/theory.md)


def test_ring_momenta_stay_zero(tmp_path):
    out = _run("ring/ring.yaml", tmp_path, "solver.t_end=2.25", "output.interval=0.075")
    with h5py.File(out) as f:
        assert np.abs(f["momentum/linear"][()]).max() < 1e-12
        assert np.abs(f["momentum/angular"][()]).max() < 1e-11
        assert f["energy/internal"][-1] > 1.0  # the moments did bend it


def test_cantilever_vibrates_about_the_static_deflection(tmp_path):
    """Sudden gravity: the tip oscillates about q L^4/(8 EI) (+ shear q L^2/(2 kGA)) with the
    first-mode period 2 pi / (1.8751^2 sqrt(EI / (rho A L^4)))."""
    out = _run("cantilever/cantilever.yaml", tmp_path, "solver.t_end=0.26")
    e, i, rho, a, k, g = 7e10, 0.02 * 0.01**3 / 12, 2700.0, 2e-4, None, 9.81
    nu = 0.33
    k = 10 * (1 + nu) / (12 + 11 * nu)  # Cowper, rectangle
    q = rho * a * g
    static = q / (8 * e * i) + q / (2 * k * e / (2 * (1 + nu)) * a)
    period = 2 * math.pi / (1.875104**2 * math.sqrt(e * i / (rho * a)))
    with h5py.File(out) as f:
        t, z = f["time"][()], f["nodes/position"][:, -1, 2]
    d = z - z.mean()
    up = np.flatnonzero((d[:-1] < 0) & (d[1:] >= 0))
    crossings = t[up] - d[up] * (t[up + 1] - t[up]) / (d[up + 1] - d[up])
    assert len(crossings) >= 2
    measured = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    i0, i1 = up[0], up[-1]
    mean = -np.trapezoid(z[i0 : i1 + 1], t[i0 : i1 + 1]) / (t[i1] - t[i0])
    # 20 elements: O(h^2) discretisation error ~0.05 %; frames every period/120
    assert measured == pytest.approx(period, rel=3e-3)
    assert mean == pytest.approx(static, rel=5e-3)
    assert z.min() == pytest.approx(-2 * static, rel=0.05)  # dynamic amplification ~2


def test_frame_from_gmsh(tmp_path):
    """Portal frame read from a Gmsh MSH 4.1 file: the clamped bases stay put, the gust sways
    the frame along +x and the axially stiff beam makes both corners sway together."""
    out = _run("frame/frame.yaml", tmp_path, "solver.t_end=0.3", "output.interval=0.01")
    with h5py.File(out) as f:
        sets = {k: f["mesh/sets"][k][()] for k in f["mesh/sets"]}
        base = sets["frame.base"]
        assert len(base) == 2
        np.testing.assert_array_equal(
            f["nodes/position"][:, base],
            f["nodes/position"][:1, base].repeat(f["time"].shape[0], axis=0),
        )
        left = sets["frame.corner_left"][0]
        right = sets["frame.corner_right"][0]
        ux = f["nodes/position"][:, [left, right], 0] - f["mesh/points"][[left, right], 0]
        assert ux[-1].min() > 1e-4  # the gust pushed both corners along +x
        # the beam is axially stiff: both corners sway together
        np.testing.assert_allclose(ux[:, 0], ux[:, 1], atol=0.02 * np.abs(ux).max())


def test_rail_on_a_foundation_matches_hetenyi(tmp_path):
    """inputs/foundation/rail.yaml: the deflection under the wheel is P beta / (2k) within
    0.5% (beta L = 11.8: the finite length changes it by ~exp(-beta L / 2) = 0.3%)."""
    out = _run("foundation/rail.yaml", tmp_path)
    ei, k, p = 6.38e6, 5.0e7, 1.0e5
    beta = (k / (4 * ei)) ** 0.25
    with h5py.File(out) as f:
        z = f["nodes/position"][-1, :, 2]
        reaction = f["nodes/reaction_force"][-1]
    assert z.min() == pytest.approx(-p * beta / (2 * k), rel=5e-3)
    # sqrt(N) x the equilibrium tolerance 1e-8 x (loads + reactions ~ 2P), N = 121 nodes
    assert reaction.sum(axis=0) == pytest.approx([0, 0, p], abs=np.sqrt(121) * 1e-8 * 2 * p)


def test_preload_then_gust_then_modes(tmp_path):
    """inputs/steps/preload_gust.yaml: the dead-load sag, the gust's swing and the modes about
    the state left, against beam theory."""
    r = read_results(_run("steps/preload_gust.yaml", tmp_path))
    E, G, rho, b, h, L = 2.1e11, 2.1e11 / 2.6, 7850.0, 0.05, 0.1, 2.0
    area, weak, strong = b * h, h * b**3 / 12, b * h**3 / 12
    q = rho * area * 9.81
    # Timoshenko (k = 5/6) sag; 20 elements under lumped gravity: O(h^2) of the element, 0.3%
    sag = q * L**4 / (8 * E * strong) + q * L**2 / (2 * 5 / 6 * G * area)
    dead = r.step == 0
    assert -r.position[dead][-1, -1, 2] == pytest.approx(sag, rel=3e-3)
    assert list(r.load_factor[dead]) == [0.0, 0.5, 1.0]
    # a suddenly applied tip load: each mode peaks at twice its share of the static tip
    # deflection, so the peak is at most twice the static one and at least twice the first
    # mode's share (97.1% for a tip load), less the rest (2.9%) out of phase; the 2 ms frames
    # sample a 10 Hz peak within (pi / 50)^2 / 2 = 0.2%
    static = 1000 * L**3 / (3 * E * weak) + 1000 * L / (5 / 6 * G * area)
    gust = r.step == 1
    assert r.time[gust][0] == 0.0 and r.total_time[gust][0] == 1.0
    peak = r.position[gust][:, -1, 1].max()
    assert 2 * static * (0.971 - 0.029 - 0.002) <= peak <= 2 * static * 1.002
    # first bending mode about the weak axis: Euler-Bernoulli's 1.875^2, shear and rotary
    # inertia lower it by (r/L)^2 terms: 0.1% at L/r = 139
    first = 1.8751**2 / (2 * math.pi * L**2) * math.sqrt(E * weak / (rho * area))
    assert r.modes.frequency[0] == pytest.approx(first, rel=2e-3)
