"""Read a rodsim results file with h5py alone (docs/results.md, "Reading a results file").

``python docs/examples/read_results.py RESULTS.h5`` prints the layout, the frames, the largest
displacement, the current directors of node 0 and the final energy.
"""

import sys

import h5py
import numpy as np
from scipy.spatial.transform import Rotation


def summarise(path):
    with h5py.File(path, "r", locking=False) as f:  # locking=False: also while a run writes
        layout, minor = f.attrs["layout"], f.attrs.get("layout_minor", 0)
        if layout != 1:  # layout 2 would change what datasets mean: do not guess
            sys.exit(f"{path}: results layout {layout}, this script reads layout 1")
        used = ("time", "nodes/position", "nodes/rotation", "energy/total")
        n = min(f[name].shape[0] for name in used)  # frames complete in every dataset used
        t = f["time"][:n]
        u = f["nodes/position"][:n] - f["mesh/points"][()]  # (F, N, 3) displacements
        q = f["nodes/rotation"][n - 1]  # (N, 4) quaternions w, x, y, z of the last frame
        rotation = Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_matrix()  # scipy: x, y, z, w
        directors = rotation @ f["mesh/frames"][()]  # (N, 3, 3), columns d1 d2 d3
        energy = f["energy/total"][n - 1]
    norms = np.linalg.norm(u, axis=2)
    k, node = np.unravel_index(norms.argmax(), norms.shape)
    print(f"layout {layout}.{minor}: {n} frames, t = {t[0]:g} to {t[-1]:g}")
    print(f"largest displacement {norms[k, node]:.6g} at node {node}, t = {t[k]:g}")
    print(f"node 0 directors at t = {t[-1]:g}:\n{directors[0].round(6) + 0.0}")  # + 0: no -0
    print(f"total energy at t = {t[-1]:g}: {energy:.6g}")
    return {
        "frames": n,
        "max_displacement": norms[k, node],
        "directors": directors,
        "energy": energy,
    }


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: read_results.py RESULTS.h5")
    return summarise(argv[0])


if __name__ == "__main__":
    main()
