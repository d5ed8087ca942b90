"""The ParaView series' size against rodsim.estimates.vtk_size (`rodsim check`'s "ParaView
series" share): runs short versions of the cases in inputs/ with the series on, and prints
each series' bytes per frame, the raw array bytes of a frame and the estimate. --fit prints
the least-squares VTU_HEADER and VTU_RATIO of bytes = header + ratio x raw.

    python benchmarks/vtk_size.py [--fit]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

from rodsim import estimates
from rodsim import run as runner
from rodsim.results.layout import chosen_datasets

ROOT = Path(__file__).resolve().parents[1]
# (case, overrides): a few dozen frames each, long enough for the motion to fill the arrays
CASES = (
    ("inputs/ring/ring.yaml", ("solver.t_end=0.6",)),
    ("inputs/frame/frame.yaml", ("solver.t_end=0.02", "output.interval=0.0005")),
    ("inputs/plate/ss_plate.yaml", ()),
    ("inputs/spaghetti/spaghetti.yaml", ("solver.t_end=1",)),
    ("inputs/cantilever/cantilever.yaml", ("solver.t_end=0.03",)),
    (
        "inputs/frame/frame.yaml",
        ("solver.t_end=0.02", "output.interval=0.0005", "output.fields=[nodes/velocity]"),
    ),
)


def measure(case: str, overrides) -> tuple[float, int, int, int]:
    """(series bytes per frame, raw array bytes of a frame, frames, estimated series bytes)."""
    prep = runner.prepare(ROOT / case, overrides)
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.execute(prep, Path(tmp) / "r.h5", vtk=True, handle_signals=False)
        series = sum(p.stat().st_size for p in (Path(tmp) / "r_vtk").glob("*.vtu"))
        series += (Path(tmp) / "r.pvd").stat().st_size
    model = prep.setup.model
    stresses = model.stress is not None and (
        prep.setup.mesh.stress_points.shape[1] > 0 or model.n_plates > 0
    )
    chosen = chosen_datasets(prep.case.settings.output.fields)
    raw = estimates.vtk_raw_bytes(prep.setup.mesh, chosen, stresses)
    return series / result.frames, raw, result.frames, estimates.series_size_of(prep)


def main() -> None:
    rows = []
    for case, overrides in CASES:
        per, raw, frames, estimate = measure(case, overrides)
        rows.append((per, raw))
        actual = per * frames
        print(
            f"{case} {' '.join(overrides)}: {frames} frames, {per:.0f} B/frame, raw {raw} B, "
            f"series {actual / 1024:.1f} KiB, estimate {estimate / 1024:.1f} KiB "
            f"({estimate / actual:.3f})"
        )
    if "--fit" in sys.argv:
        per, raw = np.array(rows).T  # least relative error: each row divided by its bytes
        y = per - estimates.INDEX_BYTES_PER_FRAME
        a = np.column_stack([np.ones_like(raw), raw]) / y[:, None]
        (header, ratio), *_ = np.linalg.lstsq(a, np.ones_like(y), rcond=None)
        print(f"VTU_HEADER = {header:.0f}, VTU_RATIO = {ratio:.3f}")


if __name__ == "__main__":
    main()
