"""Write the slit annular plate meshes of Sze, Liu & Lo (2004) test 3.3 as VTU files: radii 6
to 10, quads n_r x n_theta, the slit along the positive x axis. The two slit edges would
coincide and be merged into one, so the loaded edge ends DELTA = 1e-6 rad short of a full turn
(a gap of 1e-5 at most: far below any result digit); case.yaml selects the edges by boxes.

    python validation/sze_slit_annulus/make_mesh.py   # writes annulus_6x30.vtu, annulus_10x80.vtu
"""

from pathlib import Path

import meshio
import numpy as np

DELTA = 1.0e-6
HERE = Path(__file__).resolve().parent


def annulus(n_r: int, n_t: int, r_in: float = 6.0, r_out: float = 10.0) -> meshio.Mesh:
    r = np.linspace(r_in, r_out, n_r + 1)
    t = np.linspace(0.0, 2 * np.pi - DELTA, n_t + 1)
    rr, tt = np.meshgrid(r, t, indexing="ij")  # node (i, j): radius i, angle j
    points = np.c_[(rr * np.cos(tt)).ravel(), (rr * np.sin(tt)).ravel(), np.zeros(rr.size)]

    def node(i, j):
        return i * (n_t + 1) + j

    quads = np.array(
        [
            [node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)]
            for i in range(n_r)
            for j in range(n_t)
        ]
    )
    return meshio.Mesh(points, [("quad", quads)])


if __name__ == "__main__":
    for n_r, n_t in ((6, 30), (10, 80)):
        annulus(n_r, n_t).write(HERE / f"annulus_{n_r}x{n_t}.vtu")
