"""The documented examples run and print what they promise (examples are tests)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from rodsim.results.layout import LAYOUT_MINOR

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_flying_spaghetti_example(capsys):
    out = _load("flying_spaghetti").main(["--t-end", "8"])
    assert np.allclose(out["linear_momentum"], [50, 0, 0], atol=1e-9)
    assert np.allclose(out["angular_momentum"], [0, 307.906840, 131.694177], atol=1e-5)
    # frames at t = 6, 7, 8 lie inside the band of docs/theory.md, "Benchmark data" (width 3.3e-3)
    assert out["energy_band"] < 3.3e-3
    assert "stable-step estimate" in capsys.readouterr().out


def test_read_results_example(tmp_path, capsys):
    """docs/examples/read_results.py (docs/results.md) reads a real result with h5py alone, and
    its code is the one the page shows."""
    from rodsim import run as runner
    from rodsim.results.reader import frame_count, open_results, read_frame

    case = Path(__file__).resolve().parents[1] / "inputs" / "spaghetti" / "spaghetti.yaml"
    prep = runner.prepare(case, ["solver.t_end=1", "output.interval=0.5"])
    result = runner.execute(prep, tmp_path / "s.h5", vtk=False)
    out = _load("read_results").main([str(result.path)])
    with open_results(result.path) as f:
        n = frame_count(f)
        last = read_frame(f, n - 1)
        u = f["nodes/position"][:n] - f["mesh/points"][()]
    assert out["frames"] == n == 3
    assert out["max_displacement"] == np.linalg.norm(u, axis=2).max() > 0.1
    np.testing.assert_allclose(out["directors"], last.directors, atol=1e-14)
    assert out["energy"] == last.total
    assert f"layout 1.{LAYOUT_MINOR}: 3 frames, t = 0 to 1" in capsys.readouterr().out
    doc = (EXAMPLES.parent / "results.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("```python\n")[1:]]
    example = (EXAMPLES / "read_results.py").read_text()
    assert any(len(b) > 500 and b in example for b in blocks)  # the page shows its code whole


def test_api_run_example(capsys):
    """docs/examples/api_run.py (docs/python.md): the free ring in memory and to a file."""
    out = _load("api_run").main(["--t-end", "2"])
    assert out["frames"] == 135
    assert out["same"]
    assert out["max_displacement"] == pytest.approx(0.0452073, abs=1e-7)  # docs/results.md
    assert max(out["momentum"]) < 1e-12
    assert out["band"] < 1e-3
    assert "135 frames; east node 0 moves at most 0.0452073" in capsys.readouterr().out


def test_api_sweep_example():
    """docs/examples/api_sweep.py: linear for small loads; Mattiasson's large deflection."""
    rows = _load("api_sweep").main(["--fractions", "0.01", "1"])["rows"]
    (_, w_small, linear, _), (_, w, _, u) = rows
    assert w_small == pytest.approx(linear, rel=1e-3)
    assert (w, -u) == (pytest.approx(0.49346, abs=2e-4), pytest.approx(0.16064, abs=2e-4))


def test_api_controller_example():
    """docs/examples/api_controller.py: the PID force holds the tip level (it would sag by
    1) and carries 3/8 of the weight."""
    out = _load("api_controller").main(["--t-end", "30"])
    assert abs(out["tip_z"]) < 0.01
    assert out["force"] == pytest.approx(1.5, abs=0.2)


def test_api_load_steps_example():
    """docs/examples/api_load_steps.py: the roll-up closes; half the moment, half a circle."""
    out = _load("api_load_steps").main([])
    np.testing.assert_allclose(out["full"], 0.0, atol=1e-6)
    np.testing.assert_allclose(out["half"], [0, 1 / np.sin(np.pi / 20), 0], atol=1e-6)
    np.testing.assert_allclose(out["moment"][:, 2], np.pi / 5, rtol=1e-9)


def test_python_md_shows_the_examples_code():
    """Each code block of docs/python.md that names an example holds that example's lines."""
    doc = (EXAMPLES.parent / "python.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("```python\n")[1:]]
    shown = 0
    for block in blocks:
        first, _, body = block.partition("\n")
        if first.startswith("# docs/examples/"):
            source = (EXAMPLES.parents[1] / first[2:].strip()).read_text()
            lines = [line.strip() for line in body.splitlines()]
            assert "\n".join(lines) in "\n".join(x.strip() for x in source.splitlines()), first
            shown += 1
    assert shown >= 4


def test_calibration_example():
    """docs/examples/calibrate_stiffness.py: the fitted E reproduces the measurement (brentq's
    tolerance), and is the steel's E / 1.03 to within the geometric nonlinearity of a 0.05 L
    deflection (the deflection is 1/E in the linear range; measured 0.014%)."""
    module = _load("calibrate_stiffness")
    out = module.main([])
    case = module.rodsim.load_case(module.CASE, module.SETTINGS)
    assert module.tip_deflection(case, out["E"]) == pytest.approx(out["measured"], rel=1e-8)
    assert out["E"] == pytest.approx(2.1e11 / 1.03, rel=1e-3)
    assert out["runs"] < 20
