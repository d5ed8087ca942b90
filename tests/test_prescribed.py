"""Prescribed displacements and rotations (boundary: prescribe) in the explicit scheme."""

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from rodsim.cli import main
from rodsim.results.reader import quaternion_matrices

BAR = """
rodsim: 1
mesh:
  - rod: {{name: bar, from: [0, 0, 0], to: [2, 0, 0], elements: 10, section: s, up: [0, 0, 1]}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1,
       rhoI: [0.1, 0.1]}}
boundary:
  - {{set: bar.start, fix: all}}
  - {{set: bar.end, prescribe: {prescribe}}}
solver: {{dt: auto, t_end: {t_end}}}
output: {{interval: {interval}, vtk: false}}
"""


def _run(tmp_path, prescribe: str, t_end: float, interval: float) -> Path:
    case = tmp_path / "bar.yaml"
    case.write_text(BAR.format(prescribe=prescribe, t_end=t_end, interval=interval))
    out = tmp_path / "bar.h5"
    res = CliRunner().invoke(main, ["run", str(case), "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


def test_slow_stretch_gives_the_static_axial_force(tmp_path):
    """The end is pulled by 0.01 along the axis over 20 s (the axial period is 0.04 s): the
    response is quasi-static, N = EA u / L = 50 in every element."""
    out = _run(tmp_path, "{displacement: [0.01, 0, 0], time: {ramp: 20}}", 21.0, 0.5)
    with h5py.File(out) as f:
        t = f["time"][()]
        end = f["mesh/sets/bar.end"][0]
        x = f["nodes/position"][:, end]
        np.testing.assert_allclose(x[:, 0], 2 + 0.01 * np.minimum(t / 20, 1), atol=1e-15)
        np.testing.assert_allclose(x[:, 1:], 0.0, atol=1e-15)
        np.testing.assert_allclose(f["rods/force"][-1, :, 0], 50.0, rtol=2e-3)
        # the velocity of the last step, exact for a ramp also at its ends t = 0 and t = 20
        v = f["nodes/velocity"][:, end, 0]
        np.testing.assert_allclose(v[t <= 20], 0.01 / 20, rtol=1e-9)
        np.testing.assert_allclose(v[t > 20], 0.0, atol=1e-15)
        np.testing.assert_array_equal(f["nodes/linear_momentum"][:, end], 0.0)


def test_prescribed_rotation_is_followed_exactly(tmp_path):
    """The end node turns about the rod axis by 0.3 sin(2 pi t) rad; its frame and angular
    velocity are those prescribed, and the rod twists: torque GJ phi / L at low frequency."""
    out = _run(
        tmp_path,
        "{rotation: [1, 0, 0], time: {sine: {amplitude: 0.3, frequency: 0.05}}}",
        5.0,
        0.25,
    )
    with h5py.File(out) as f:
        t = f["time"][()]
        end = f["mesh/sets/bar.end"][0]
        phi = 0.3 * np.sin(2 * math.pi * 0.05 * t)
        q = f["nodes/rotation"][:, end]
        np.testing.assert_allclose(q[:, 0], np.cos(phi / 2), atol=1e-14)
        np.testing.assert_allclose(q[:, 1], np.sin(phi / 2), atol=1e-14)
        np.testing.assert_allclose(q[:, 2:], 0.0, atol=1e-14)
        frames = quaternion_matrices(q) @ f["mesh/frames"][end]
        np.testing.assert_allclose(frames[:, :, 0], [[1, 0, 0]] * len(t), atol=1e-14)
        # angular velocity of the last step taken (forward over the first step at t = 0)
        w = f["nodes/angular_velocity"][:, end, 0]
        dt = f["solver/dt"][0]
        back = np.where(t > 0, t - dt, t + dt)
        rate = (
            0.3 * (np.sin(2 * math.pi * 0.05 * t) - np.sin(2 * math.pi * 0.05 * back)) / (t - back)
        )
        np.testing.assert_allclose(w, rate, rtol=1e-9, atol=1e-12)
        assert w[0] == pytest.approx(0.3 * 2 * math.pi * 0.05, rel=1e-3)
        # quasi-static twist: torque = GJ phi / L along the bar (period 20 s >> torsion period)
        torque = f["rods/moment"][-1, :, 0]
        assert torque == pytest.approx(np.full(10, 500 * phi[-1] / 2), rel=1e-2)


@pytest.mark.parametrize("scheme", ["explicit", "implicit"])
def test_prescribing_one_component_leaves_the_others_free(tmp_path, scheme):
    """`displacement: [null, 0.2, null]` holds only y on its path; x and z of the end stay
    free, so the bending end moves back along x (geometric shortening, x < 2), and only the
    y reaction is nonzero there."""
    case = tmp_path / "bar.yaml"
    case.write_text(
        BAR.format(
            prescribe="{displacement: [null, 0.2, null], time: {ramp: 2.0}}",
            t_end=2.0,
            interval=0.5,
        )
    )
    out = tmp_path / "bar.h5"
    res = CliRunner().invoke(
        main,
        [
            "run",
            str(case),
            "-o",
            str(out),
            "-q",
            "--set",
            f"solver.scheme={scheme}",
            "--set",
            "solver.dt=0.005" if scheme == "implicit" else "solver.safety=0.8",
        ],
    )
    assert res.exit_code == 0, res.output
    with h5py.File(out) as f:
        t = f["time"][:]
        end = f["nodes/position"][:, -1]
        reaction = f["nodes/reaction_force"][-1, -1]
    np.testing.assert_allclose(end[:, 1], 0.2 * np.minimum(t / 2.0, 1.0), atol=1e-14)
    assert end[-1, 0] < 2.0 - 1e-4
    assert reaction[1] != 0.0
    assert reaction[0] == 0.0
    assert reaction[2] == 0.0
