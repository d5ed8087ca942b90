"""Regenerate the meshio-written test meshes in this folder and summarise every mesh.

The Gmsh files are made from the .geo files with Gmsh 4.15.2 (PyPI wheel ``gmsh==4.15.2``),
run in this folder (see the header of each .geo):

    gmsh -1 lframe.geo -format msh22 -o lframe_v2.msh
    gmsh -1 lframe.geo -format msh41 -o lframe_v4.msh
    gmsh -2 triangles_only.geo -format msh41 -o triangles_only.msh
    gmsh -1 duplicate_nodes.geo -format msh41 -o duplicate_nodes.msh

duplicate_ids.msh and duplicate_ids.inp are written by hand (see README.md).

This script (meshio 5.3.5) then writes, from the points and line cells of lframe_v4.msh:

    lframe.vtu, lframe.xdmf + lframe.h5, lframe.inp, points_only.vtu,
    corrupt.msh, truncated_before_elements.msh

    python make_meshes.py            # rewrite the meshio-written files, then summarise all
    python make_meshes.py --summary  # only print what meshio.read returns for each file

See README.md for what each file contains and what meshio.read returns for it.
"""

import sys
from pathlib import Path

import meshio
import numpy as np

HERE = Path(__file__).resolve().parent

# physical tags of lframe.geo
LEG_A, LEG_B, ROOT = 1, 2, 3

FILES = [
    "lframe_v2.msh",
    "lframe_v4.msh",
    "lframe.vtu",
    "lframe.xdmf",
    "lframe.inp",
    "triangles_only.msh",
    "points_only.vtu",
    "corrupt.msh",
    "truncated_before_elements.msh",
    "duplicate_nodes.msh",
    "duplicate_ids.msh",
    "duplicate_ids.inp",
]


def lframe_from_gmsh():
    """Points and the single merged (8, 2) line block of lframe_v4.msh, plus leg masks."""
    m = meshio.read(HERE / "lframe_v4.msh")
    lines = np.concatenate([c.data for c in m.cells if c.type == "line"])
    tags = np.concatenate(
        [t for c, t in zip(m.cells, m.cell_data["gmsh:physical"], strict=True) if c.type == "line"]
    )
    return m.points, lines, tags


def write_lframe_vtu_xdmf(points, lines, tags):
    """VTU and XDMF cannot store cell_sets, point_sets or field_data (meshio drops them).

    The sets are therefore stored as data arrays, in two encodings:
      cell_data "gmsh:physical": Gmsh physical tag per line cell (leg_a = 1, leg_b = 2);
        the names are NOT in the file (field_data is not written by these writers);
      cell_data "leg_a-leg_b" and point_data "root": exactly what meshio's own
        Mesh.cell_sets_to_data() / Mesh.point_sets_to_data() produce (what meshio.write
        does by itself when given cell_sets/point_sets for these formats): the value is
        the index of the set in the "-"-joined key, -1 = in no set.
    """
    mesh = meshio.Mesh(
        points,
        [("line", lines)],
        cell_data={"gmsh:physical": [tags.astype(np.int64)]},
        cell_sets={
            "leg_a": [np.flatnonzero(tags == LEG_A)],
            "leg_b": [np.flatnonzero(tags == LEG_B)],
        },
        point_sets={"root": np.array([0])},
    )
    mesh.cell_sets_to_data()  # -> cell_data "leg_a-leg_b" = 0 for leg_a, 1 for leg_b
    mesh.point_sets_to_data()  # -> point_data "root" = 0 at node 0, -1 elsewhere
    # binary (zlib) VTU: ASCII VTU would round the points to 12 significant digits
    meshio.write(HERE / "lframe.vtu", mesh)
    # heavy data in lframe.h5 (same folder); uncompressed keeps the .h5 at ~5 KB (gzip: 16 KB)
    meshio.write(HERE / "lframe.xdmf", mesh, compression=None)


def write_lframe_inp(points, lines, tags):
    """Abaqus .inp: the one meshio format here whose cell_sets AND point_sets round-trip."""
    mesh = meshio.Mesh(
        points,
        [("line", lines[tags == LEG_A]), ("line", lines[tags == LEG_B])],
        cell_sets={
            "leg_a": [np.arange(4), np.array([], dtype=int)],
            "leg_b": [np.array([], dtype=int), np.arange(4)],
        },
        point_sets={"root": np.array([0])},
    )
    meshio.write(HERE / "lframe.inp", mesh)


def write_points_only():
    points = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    mesh = meshio.Mesh(points, [("vertex", np.array([[0], [1], [2]]))])
    meshio.write(HERE / "points_only.vtu", mesh, binary=False)


def write_corrupt():
    """Two truncated copies of lframe_v4.msh, failing in meshio.read in two different ways.

    corrupt.msh ends inside $Nodes, with the block header "0 2 0 1" whose node is missing:
    meshio.read raises a plain ValueError (not meshio.ReadError).
    truncated_before_elements.msh ends after $EndNodes: the gmsh reader raises
    meshio.ReadError("$Element section not found."), which meshio.read catches, prints,
    and then calls sys.exit(1): the caller sees SystemExit, which `except Exception` misses.
    """
    lines = (HERE / "lframe_v4.msh").read_text().splitlines(keepends=True)
    cut = lines.index("$Nodes\n") + 6
    (HERE / "corrupt.msh").write_text("".join(lines[:cut]))
    cut = lines.index("$EndNodes\n") + 1
    (HERE / "truncated_before_elements.msh").write_text("".join(lines[:cut]))
    for name, expected in [
        ("corrupt.msh", ValueError),
        ("truncated_before_elements.msh", SystemExit),
    ]:
        try:
            meshio.read(HERE / name)
        except expected:
            continue
        raise RuntimeError(f"{name}: meshio.read did not raise {expected.__name__}")


def summary(name):
    path = HERE / name
    print(f"== {name}")
    try:
        m = meshio.read(path)
    except BaseException as err:  # SystemExit included, see write_corrupt()
        print(f"   raises {type(err).__module__}.{type(err).__name__}: {err}")
        return

    def arr(a):
        return None if a is None else np.asarray(a).tolist()

    print(f"   points {m.points.shape} {m.points.dtype}")
    print(f"   cells  {[(c.type, len(c.data)) for c in m.cells]}")
    print(f"   cell_sets  { ({k: [arr(a) for a in v] for k, v in m.cell_sets.items()}) }")
    print(f"   point_sets { ({k: arr(v) for k, v in m.point_sets.items()}) }")
    print(f"   cell_data  { ({k: [arr(a) for a in v] for k, v in m.cell_data.items()}) }")
    print(f"   point_data { ({k: arr(v) for k, v in m.point_data.items()}) }")
    print(f"   field_data { ({k: arr(v) for k, v in m.field_data.items()}) }")


def main():
    if "--summary" not in sys.argv[1:]:
        points, lines, tags = lframe_from_gmsh()
        write_lframe_vtu_xdmf(points, lines, tags)
        write_lframe_inp(points, lines, tags)
        write_points_only()
        write_corrupt()
    for name in FILES:
        summary(name)


if __name__ == "__main__":
    main()
