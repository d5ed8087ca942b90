"""A node id defined twice in a mesh file: at two points an error, at one point merged.

meshio 5.3.5 maps an id to its last definition and silently drops the first (checked below,
so that a meshio that changes this is noticed). The files are written here: a straight rod of
two line cells over the nodes 1 (0,0,0), 2 (1,0,0), 3 (2,0,0), with node 2 defined again at
the end of its block.
"""

import logging

import meshio
import numpy as np
import pytest
from click.testing import CliRunner

from rodsim import case_summary
from rodsim import run as runner
from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.mesh.node_ids import scan

CASE = """
rodsim: 1
mesh:
  - {{file: {file}, name: rod, section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1,
       rhoI: [10, 10]}}
solver: {{t_end: 1}}
"""


def msh22(again: str) -> str:
    return f"""$MeshFormat
2.2 0 8
$EndMeshFormat
$Nodes
4
1 0 0 0
2 1 0 0
3 2 0 0
2 {again}
$EndNodes
$Elements
2
1 1 2 1 1 1 2
2 1 2 1 1 2 3
$EndElements
"""


def msh40(again: str) -> str:
    return f"""$MeshFormat
4.0 0 8
$EndMeshFormat
$Nodes
1 4
1 1 0 4
1 0 0 0
2 1 0 0
3 2 0 0
2 {again}
$EndNodes
$Elements
1 2
1 1 1 2
1 1 2
2 2 3
$EndElements
"""


def msh41(again: str) -> str:
    """Two node blocks: the second defines node 2 again (tag on line 12, point on line 14)."""
    return f"""$MeshFormat
4.1 0 8
$EndMeshFormat
$Nodes
2 4 1 3
1 1 0 2
1
2
0 0 0
1 0 0
1 2 0 2
2
3
{again}
2 0 0
$EndNodes
$Elements
1 2 1 2
1 1 1 2
1 1 2
2 2 3
$EndElements
"""


def msh41_binary(again: str) -> bytes:
    """The nodes 1, 2, 3, 2 in one block, in Gmsh's binary MSH 4.1 (size_t = 8 bytes)."""

    def u(*v):
        return np.array(v, np.uint64).tobytes()

    def i(*v):
        return np.array(v, np.int32).tobytes()

    xyz = np.array([0, 0, 0, 1, 0, 0, 2, 0, 0, *map(float, again.split())], np.float64)
    return (
        b"$MeshFormat\n4.1 1 8\n"
        + i(1)
        + b"\n$EndMeshFormat\n$Nodes\n"
        + u(1, 4, 1, 3)
        + i(1, 1, 0)
        + u(4)
        + u(1, 2, 3, 2)
        + xyz.tobytes()
        + b"\n$EndNodes\n$Elements\n"
        + u(1, 2, 1, 2)
        + i(1, 1, 1)
        + u(2)
        + u(1, 1, 2, 2, 2, 3)
        + b"\n$EndElements\n"
    )


def inp(again: str) -> str:
    x, y, z = again.split()
    return f"""*HEADING
a rod
*NODE
1, 0.0, 0.0, 0.0
2, 1.0, 0.0, 0.0
3, 2.0, 0.0, 0.0
2, {x}, {y}, {z}
*ELEMENT, TYPE=B31
1, 1, 2
2, 2, 3
"""


# name, writer, the lines (or binary entries) of the two definitions of node 2
FORMATS = [
    ("rod.msh", msh22, ("line 7", "line 9")),
    ("rod40.msh", msh40, ("line 8", "line 10")),
    ("rod41.msh", msh41, ("line 10", "line 14")),
    ("rod41b.msh", msh41_binary, ("node entry 2 of $Nodes", "node entry 4 of $Nodes")),
    ("rod.inp", inp, ("line 5", "line 7")),
]
IDS = [f[0] for f in FORMATS]


def write_case(tmp_path, name, writer, again, extra=""):
    mesh = tmp_path / name
    text = writer(again)
    mesh.write_bytes(text) if isinstance(text, bytes) else mesh.write_text(text)
    case = tmp_path / "case.yaml"
    case.write_text(CASE.format(file=name) + extra)
    return case, mesh


@pytest.mark.parametrize(("name", "writer", "where"), FORMATS, ids=IDS)
def test_meshio_silently_keeps_the_last_definition(tmp_path, name, writer, where):
    """Why rodsim checks: meshio gives no error and connects the cells to the second point."""
    _, mesh = write_case(tmp_path, name, writer, "1 0.5 0")
    m = meshio.read(mesh, file_format="gmsh" if name.endswith(".msh") else None)
    lines = np.concatenate([c.data for c in m.cells if c.type == "line"])
    np.testing.assert_array_equal(m.points[lines[0, 1]], [1, 0.5, 0])
    assert scan(mesh).ids.tolist() in ([1, 2, 3, 2], [1, 2, 2, 3])


@pytest.mark.parametrize(("name", "writer", "where"), FORMATS, ids=IDS)
def test_two_points_for_one_id_is_an_error(tmp_path, name, writer, where):
    case, mesh = write_case(tmp_path, name, writer, "1 0.5 0")
    with pytest.raises(CaseError) as info:
        runner.prepare(case)
    message = str(info.value)
    assert message.startswith(
        f"{case}: mesh[0].file: mesh file {str(mesh)!r} defines node 2 twice at different points: "
    )
    assert f"(1, 0, 0) on {where[0]} and (1, 0.5, 0) on {where[1]}" in message


@pytest.mark.parametrize(("name", "writer", "where"), FORMATS, ids=IDS)
def test_one_point_for_one_id_is_merged_and_said(tmp_path, caplog, name, writer, where):
    # 1e-12 off: round-off of a point written twice, far below 1e-8 x the mesh size (2)
    case, _ = write_case(tmp_path, name, writer, "1.000000000001 0 0")
    with caplog.at_level(logging.WARNING, logger="rodsim"):
        prep = runner.prepare(case)
    mesh = prep.setup.mesh
    assert mesh.n_nodes == 3
    assert mesh.conn.tolist() == [[0, 1], [1, 2]]
    assert prep.setup.model.mass.sum() == pytest.approx(2.0, rel=1e-12)
    warning = next(r.getMessage() for r in caplog.records if "node 2" in r.getMessage())
    assert f"node 2 is defined 2 times at the same point ({', '.join(where)})" in warning
    assert "merged" in warning
    assert (
        f"note      {name}: 1 node ids defined more than once at one point, merged"
        in case_summary.summary(prep)
    )


def test_the_tolerance_is_relative_to_the_mesh_size(tmp_path):
    """1e-6 apart on a mesh of size 2 is beyond 1e-8 x 2: an error; a merge_tolerance given
    in the case is used instead."""
    case, _ = write_case(tmp_path, "rod.msh", msh22, "1.000001 0 0")
    with pytest.raises(CaseError, match="defines node 2 twice"):
        runner.prepare(case)
    case.write_text(case.read_text() + "merge_tolerance: 1.0e-5\n")
    assert runner.prepare(case).setup.mesh.n_nodes == 3


def test_three_ids_twice_name_the_first_and_count_the_rest(tmp_path):
    mesh = tmp_path / "rod.inp"
    mesh.write_text(inp("1 0.5 0").replace("*ELEMENT", "1, 0, 1, 0\n3, 2, 1, 0\n*ELEMENT"))
    case = tmp_path / "case.yaml"
    case.write_text(CASE.format(file="rod.inp"))
    with pytest.raises(CaseError, match=r"defines node 1 twice .* \(and 2 more ids\)"):
        runner.prepare(case)


def test_two_abaqus_node_blocks_are_refused(tmp_path):
    """meshio keeps only the last *NODE block: the cells read before it would index its
    nodes (a silently wrong geometry)."""
    mesh = tmp_path / "rod.inp"
    mesh.write_text(
        "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n*ELEMENT, TYPE=B31\n1, 1, 2\n"
        "*NODE\n3, 2, 0, 0\n4, 3, 0, 0\n*ELEMENT, TYPE=B31\n2, 3, 4\n"
    )
    case = tmp_path / "case.yaml"
    case.write_text(CASE.format(file="rod.inp"))
    with pytest.raises(CaseError, match=r"mesh\[0\].file: .* has 2 \*NODE blocks \(lines 1, 6\)"):
        runner.prepare(case)


def test_the_command_exits_2_without_a_traceback(tmp_path):
    case, _ = write_case(tmp_path, "rod.msh", msh22, "1 0.5 0")
    res = CliRunner().invoke(main, ["check", str(case)])
    assert res.exit_code == 2
    err = res.stderr if hasattr(res, "stderr") else res.output
    assert "defines node 2 twice" in err
    assert "Traceback" not in err


def test_unique_ids_pass_unchanged(tmp_path):
    """The shipped L-frame files and the Gmsh file with coincident nodes of distinct ids."""
    from tests.test_mesh_files import MESHES

    for name in ("lframe_v2.msh", "lframe_v4.msh", "lframe.inp", "duplicate_nodes.msh"):
        table = scan(MESHES / name)
        assert len(np.unique(table.ids)) == len(table.ids), name
