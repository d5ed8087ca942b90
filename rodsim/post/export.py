"""``rodsim export``: the ParaView series of an existing results file."""

from pathlib import Path

import numpy as np

from rodsim.errors import ResourceError
from rodsim.results.reader import frame_count, open_results, read_frame
from rodsim.results.vtk import SeriesWriter, refuse_foreign_index


def export_vtk(results, folder=None, progress=None) -> tuple[Path, int]:
    """Write <stem>.pvd and <stem>_vtk/ into folder (default: next to the results file);
    progress(done, total): frames written of the total, at 0 and after each frame. CaseError
    (key -o), before anything is written, if an existing <stem>.pvd there is not a rodsim
    series; of an existing series only rodsim's files are replaced."""
    results = Path(results)
    out = Path(folder) if folder is not None else results.parent
    refuse_foreign_index(out / f"{results.stem}.pvd", "-o", ADVICE)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResourceError(f"cannot make the folder {out}: {exc.strerror or exc}") from None
    pvd = out / f"{results.stem}.pvd"
    try:
        return _write_series(results, pvd, progress or (lambda done, total: None))
    except OSError as exc:
        raise ResourceError(f"cannot write the series {pvd}: {exc.strerror or exc}") from None


ADVICE = "move it away or give another -o"


def _write_series(results: Path, pvd: Path, progress) -> tuple[Path, int]:
    with open_results(results) as f:
        points = f["mesh/points"][()]
        conn = f["mesh/rods"][()] if "mesh/rods" in f else np.zeros((0, 2), np.int64)
        plates = f["mesh/plates"][()] if "mesh/plates" in f else None
        frames0 = f["mesh/frames"][()]
        with SeriesWriter(pvd, points, conn, plates, advice=ADVICE) as series:
            n = frame_count(f)
            progress(0, n)
            for k in range(n):
                series.write(read_frame(f, k, frames0))
                progress(k + 1, n)
        return pvd, n
