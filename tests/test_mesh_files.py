"""Mesh files: every format of the L-frame gives the same model; sets, merging, selectors.

The files and what meshio returns for each are described in tests/data/meshes/README.md.
"""

from pathlib import Path

import numpy as np
import pytest

from rodsim import run as runner
from rodsim.mesh.read import read_mesh

MESHES = Path(__file__).resolve().parent / "data" / "meshes"
LEG_A = [[0, 3], [3, 4], [4, 5], [5, 1]]
LEG_B = [[1, 6], [6, 7], [7, 8], [8, 2]]
FORMATS = ["lframe_v2.msh", "lframe_v4.msh", "lframe.vtu", "lframe.xdmf", "lframe.inp"]

CASE = """
rodsim: 1
mesh:
  - file: {file}
    name: frame
    sections: {{leg_a: a, leg_b: b}}
    up: [0, 0, 1]
sections:
  a: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1,
       rhoI: [10, 10]}}
  b: {{type: rod, EA: 2.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 2,
       rhoI: [10, 10]}}
sets:
  corner: {{near: [1, 0, 0]}}
boundary:
  - {{set: {root}, fix: all}}
solver: {{t_end: 1}}
"""


@pytest.mark.parametrize("name", FORMATS)
def test_reader_finds_lines_and_sets(name):
    fm = read_mesh(MESHES / name, "mesh[0].file")
    np.testing.assert_array_equal(fm.lines, LEG_A + LEG_B)
    assert fm.points.shape == (9, 3)
    np.testing.assert_array_equal(fm.element_sets["leg_a"], [0, 1, 2, 3])
    np.testing.assert_array_equal(fm.element_sets["leg_b"], [4, 5, 6, 7])
    np.testing.assert_array_equal(fm.node_sets["leg_b"], [1, 2, 6, 7, 8])
    if name != "lframe.xdmf":  # meshio cannot write a vertex cell beside lines in XDMF
        np.testing.assert_array_equal(fm.node_sets["root"], [0])


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_builds_the_same_model(tmp_path, name):
    root = "frame.root" if name != "lframe.xdmf" else "root_box"
    text = CASE.format(file=MESHES / name, root=root)
    if root == "root_box":
        text = text.replace(
            "sets:\n", "sets:\n  root_box: {box: [[-0.1, -0.1, -0.1], [0.1, 0.1, 0.1]]}\n"
        )
    case = tmp_path / "c.yaml"
    case.write_text(text)
    setup = runner.prepare(case).setup
    m = setup.model
    assert m.n_nodes == 9
    assert m.n_elements == 8
    np.testing.assert_array_equal(m.rods.c1[:, 0], [1e4] * 4 + [2e4] * 4)
    assert m.mass.sum() == pytest.approx(1 * 1.0 + 2 * 1.0, rel=1e-12)
    np.testing.assert_array_equal(m.fixed[0], [True] * 6)
    assert m.fixed[1:].sum() == 0
    assert setup.mesh.sets["corner"].tolist() == [1]
    assert m.rods.has_offset.sum() == 1  # leg b's first element keeps its own axes


def test_duplicate_corner_nodes_are_merged(tmp_path):
    text = CASE.format(file=MESHES / "duplicate_nodes.msh", root="frame.root")
    case = tmp_path / "c.yaml"
    case.write_text(text)
    setup = runner.prepare(case).setup
    assert setup.model.n_nodes == 9  # 10 points, the two at (1, 0, 0) merged
    corner = setup.mesh.sets["corner"][0]
    assert (setup.mesh.conn == corner).sum() == 2  # both legs attach to it

    case.write_text(text.replace("rodsim: 1", "rodsim: 1\nmerge_tolerance: 0"))
    unmerged = runner.prepare(case).setup
    assert unmerged.model.n_nodes == 10


def test_parts_are_merged_and_named(tmp_path):
    case = tmp_path / "c.yaml"
    case.write_text("""
rodsim: 1
mesh:
  - rod: {name: a, from: [0, 0, 0], to: [1, 0, 0], elements: 2, section: s}
  - arc: {name: b, center: [1, 1, 0], radius: 1, start: [1, 0, 0], normal: [0, 0, 1],
          angle: 90, elements: 3, section: s}
sections:
  s: {type: rod, EA: 1, GA: [1, 1], GJ: 1, EI: [1, 1], rhoA: 1, rhoI: [1, 1]}
sets:
  everything: {union: [a.all, b.all]}
  right: {box: [[0.9, -0.1, -1], [2.1, 2, 1]]}
solver: {t_end: 1}
""")
    mesh = runner.prepare(case).setup.mesh
    assert mesh.n_nodes == 6
    assert mesh.sets["a.end"].tolist() == mesh.sets["b.start"].tolist() == [2]
    assert mesh.sets["everything"].tolist() == list(range(6))
    np.testing.assert_allclose(mesh.points[mesh.sets["b.end"][0]], [2, 1, 0], atol=1e-15)
    assert mesh.sets["right"].tolist() == [2, 3, 4, 5]
