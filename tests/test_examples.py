"""The documented examples run and print what they promise (examples are tests)."""

import importlib.util
from pathlib import Path

import numpy as np

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
    # frames at t = 6, 7, 8 lie inside the band of notes/seed_004 §6.1.4 (width 3.3e-3)
    assert out["energy_band"] < 3.3e-3
    assert "stable-step estimate" in capsys.readouterr().out


def test_render_snapshot_example(tmp_path):
    """docs/examples/render_snapshot.py renders a real result headless (docs/paraview.md)."""
    from rodsim import run as runner

    case = Path(__file__).resolve().parents[1] / "inputs" / "spaghetti" / "spaghetti.yaml"
    prep = runner.prepare(case, ["solver.t_end=1", "output.interval=0.5"])
    result = runner.execute(prep, tmp_path / "s.h5", vtk=True)
    png = _load("render_snapshot").main([str(result.pvd), "--time", "0", "0.5", "1",
                                         "--scalars", "moment.bending3",
                                         "-o", str(tmp_path / "s.png")])
    data = Path(png).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_read_results_example(tmp_path, capsys):
    """docs/examples/read_results.py (docs/results.md) reads a real result with h5py alone, and
    its code is the one the page shows."""
    from rodsim import run as runner
    from rodsim.results_format import frame_count, open_results, read_frame

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
    assert "layout 1.2: 3 frames, t = 0 to 1" in capsys.readouterr().out
    doc = (EXAMPLES.parent / "results.md").read_text()
    shown = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(shown) > 500 and shown in (EXAMPLES / "read_results.py").read_text()
