"""Running a case from Python: load and check it, run it in memory and to a results file, and
read the results as arrays (docs/python.md).

The free ring of the README (inputs/ring): two opposite moments bend it and are removed at
t = 1.5; the loads are self-equilibrated, so both total momenta stay zero. Run:
python api_run.py [--t-end 2]
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np

import rodsim

CASE = Path(__file__).resolve().parents[2] / "inputs" / "ring" / "ring.yaml"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=2.0)
    args = parser.parse_args(argv)

    case = rodsim.load_case(CASE, [f"solver.t_end={args.t_end}"])  # as rodsim run --set
    prep = rodsim.prepare(case)  # validated and built once; CaseError if the case is wrong
    print(rodsim.summary(prep))  # as `rodsim run` prints it

    shown = []

    def progress(t, step, n_steps):  # after every compiled call: print every 25%
        if 4 * step // n_steps > len(shown):
            shown.append(t)
            print(f"  t = {t:.3f} ({100 * step / n_steps:.0f}%)")

    results = rodsim.run_in_memory(prep, progress=progress)  # no files
    east = results.mesh.sets["east"][0]  # a node set of the case: its node index
    u = np.linalg.norm(results.displacement()[:, east], axis=1)  # (F,) over the frames
    k = u.argmax()
    band = np.ptp(results.total[results.time > 1.5])  # energy after the loads are gone
    momentum = np.abs(results.total_linear).max(), np.abs(results.total_angular).max()
    print(
        f"{results.n_frames} frames; east node {east} moves at most {u[k]:.6g} (t = "
        f"{results.time[k]:.4g}); energy band after t = 1.5: {band:.3g}; largest total "
        f"momenta {momentum[0]:.3g}, {momentum[1]:.3g}"
    )

    with tempfile.TemporaryDirectory() as folder:  # the same run, written as rodsim run does
        written = rodsim.run_case(prep, Path(folder) / "ring.h5", vtk=False)
        from_file = rodsim.read_results(written.path)
    same = all(
        np.array_equal(getattr(results, name), getattr(from_file, name), equal_nan=True)
        for name in ("time", "position", "rotation", "force", "moment", "total")
    )
    print(
        f"{written.path.name}: {written.frames} frames, {written.steps} steps, status "
        f"{from_file.status.state}; the same arrays as in memory: {same}"
    )
    return {
        "frames": results.n_frames,
        "max_displacement": float(u[k]),
        "band": float(band),
        "momentum": momentum,
        "same": same,
    }


if __name__ == "__main__":
    main()
