"""Plate meshes (issue 6): generated rectangles, triangle/quad cells of meshio files (Gmsh 4.1
physical groups and VTU written here with meshio), nodal and plate frames, merging of rods
onto plate edges, degenerate cells."""

import meshio
import numpy as np
import pytest

from rodsim.case.v1 import CASE
from rodsim.errors import CaseError
from rodsim.mesh.assemble import build_mesh
from rodsim.mesh.generate import cell_frames, rectangle
from rodsim.mesh.read import read_mesh

DIM = {"vertex": 0, "line": 1, "triangle": 2, "quad": 2}
SECTIONS = """
sections:
  deck: {type: plate, material: {E: 1000000, nu: 0.3, rho: 1}, thickness: 0.1}
  tube: {type: rod, EA: 1, GA: [1, 1], GJ: 1, EI: [1, 1], rhoA: 1, rhoI: [1, 1]}
solver: {t_end: 1}
"""


def mesh_of(tmp_path, parts_yaml: str, sets_yaml: str = ""):
    """The Mesh of a case made of the given `mesh:` entries (validated by the schema)."""
    import yaml

    data = CASE.check(yaml.safe_load("rodsim: 1\nmesh:\n" + parts_yaml + sets_yaml + SECTIONS), ())
    return build_mesh(data.mesh, data.sets, lambda name: tmp_path / name, data.merge_tolerance)


def write_gmsh(path, points, blocks):
    """A Gmsh 4.1 ASCII file: blocks of (cell type, connectivity, physical group name), one
    entity and one physical group per block (a name may repeat: one group, several
    entities). Each node is put on the entity of the first block using it, as Gmsh puts it
    on the lowest-dimensional entity: list line blocks first (meshio cannot read it otherwise)."""
    tags, field_data, dim_tags = {}, {}, np.zeros((len(points), 2), dtype=np.int64)
    assigned = np.zeros(len(points), dtype=bool)
    physical, geometrical = [], []
    for entity, (kind, conn, name) in enumerate(blocks, start=1):
        tag = tags.setdefault(name, len(tags) + 1)
        field_data[name] = np.array([tag, DIM[kind]])
        physical.append(np.full(len(conn), tag))
        geometrical.append(np.full(len(conn), entity))
        nodes = np.unique(conn)
        new = nodes[~assigned[nodes]]
        dim_tags[new] = [DIM[kind], entity]
        assigned[nodes] = True
    mesh = meshio.Mesh(
        points,
        [(k, np.asarray(c)) for k, c, _ in blocks],
        cell_data={"gmsh:physical": physical, "gmsh:geometrical": geometrical},
        field_data=field_data,
        point_data={"gmsh:dim_tags": dim_tags},
    )
    mesh.write(path, file_format="gmsh", binary=False)


def original(fm) -> np.ndarray:
    """Node numbers of TILTED for the points of a file mesh (the Gmsh writer reorders
    nodes by entity)."""
    return np.array([int(np.flatnonzero(np.all(TILTED == p, axis=1))[0]) for p in fm.points])


def write_vtu(path, points, blocks):
    """A VTU file; the physical group names become meshio's cell-set encoding."""
    names = list(dict.fromkeys(name for _, _, name in blocks))
    sets = {
        n: [
            np.arange(len(c)) if name == n else np.zeros(0, dtype=np.int64) for _, c, name in blocks
        ]
        for n in names
    }
    meshio.Mesh(points, [(k, np.asarray(c)) for k, c, _ in blocks], cell_sets=sets).write(path)


WRITERS = {"msh": write_gmsh, "vtu": write_vtu}

# a 2 x 1 quad strip in the tilted plane z = x, node order counter-clockwise seen from +z
TILTED = np.array([[0, 0, 0], [1, 0, 1], [2, 0, 2], [0, 1, 0], [1, 1, 1], [2, 1, 2]], float)
QUADS = np.array([[0, 1, 4, 3], [1, 2, 5, 4]])
TRIANGLES = np.array([[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]])
TILTED_FRAME = np.column_stack([[1, 0, 1], [0, 1, 0], [-1, 0, 1]]) / np.array(
    [np.sqrt(2), 1, np.sqrt(2)]
)


# --- the generated rectangle --------------------------------------------------------------------


def test_rectangle_nodes_sets_and_connectivity():
    e1 = np.array([1.0, 1.0, 0.0]) / np.sqrt(2)
    g = rectangle([1, 2, 3], [2.0, 0.5], [4, 2], e1=[2, 2, 0], e2=[-1, 1, 0.5])
    e2 = np.array([-1.0, 1.0, 0.5]) - (np.array([-1.0, 1.0, 0.5]) @ e1) * e1  # Gram-Schmidt
    e2 /= np.linalg.norm(e2)
    assert g.points.shape == (15, 3)
    assert g.plates.shape == (8, 4)
    local = (g.points - [1, 2, 3]) @ np.column_stack([e1, e2, np.cross(e1, e2)])
    np.testing.assert_allclose(local[:, 2], 0.0, atol=1e-14)  # flat, in the e1-e2 plane
    s, t = local[:, 0], local[:, 1]
    close = np.isclose
    assert g.sets["left"].tolist() == g.sets["x0"].tolist() == np.flatnonzero(close(s, 0)).tolist()
    assert g.sets["right"].tolist() == np.flatnonzero(close(s, 2)).tolist()
    assert (
        g.sets["bottom"].tolist()
        == g.sets["y0"].tolist()
        == np.flatnonzero(close(t, 0, atol=1e-14)).tolist()
    )
    assert g.sets["top"].tolist() == g.sets["y1"].tolist() == np.flatnonzero(close(t, 0.5)).tolist()
    assert len(g.sets["boundary"]) == 12
    assert len(g.sets["all"]) == 15
    for name, (a, b) in {
        "corner00": (0, 0),
        "corner10": (2, 0),
        "corner01": (0, 0.5),
        "corner11": (2, 0.5),
    }.items():
        (k,) = g.sets[name]
        np.testing.assert_allclose(local[k, :2], [a, b], atol=1e-14)
    # every quad: 4 distinct nodes, area 0.5 x 0.25, normal along +e1 x e2 (counter-clockwise)
    assert all(len(set(q)) == 4 for q in g.plates.tolist())
    x = local[g.plates]
    area2 = np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 1])[:, 2]
    np.testing.assert_allclose(area2, 2 * 0.125, rtol=1e-12)
    np.testing.assert_allclose(
        g.frames,
        np.broadcast_to(np.column_stack([e1, e2, np.cross(e1, e2)]), (15, 3, 3)),
        atol=1e-15,
    )


def test_rectangle_part_through_the_schema(tmp_path):
    mesh = mesh_of(
        tmp_path,
        "  - rectangle: {name: p, origin: [0, 0, 0], size: [3, 2], "
        "elements: [3, 2], section: deck, e1: [0, 1, 0], e2: [0, 0, 1]}\n",
    )
    assert mesh.n_plates == 6
    assert mesh.n_elements == 0
    assert mesh.n_nodes == 12
    assert mesh.section_names == ("deck",)
    assert mesh.plate_section.tolist() == [0] * 6
    assert mesh.plate_part.tolist() == [0] * 6
    assert mesh.part_names == ("p",)
    np.testing.assert_allclose(mesh.points[mesh.sets["p.corner10"][0]], [0, 3, 0])
    np.testing.assert_allclose(mesh.points[mesh.sets["p.corner01"][0]], [0, 0, 2])
    axes = np.column_stack([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(mesh.frames, np.broadcast_to(axes, (12, 3, 3)))
    np.testing.assert_allclose(mesh.plate_frames, np.broadcast_to(axes, (6, 4, 3, 3)))
    assert {"p.left", "p.right", "p.top", "p.bottom", "p.boundary", "p.x0", "p.y1"} <= set(
        mesh.sets
    )


def test_rectangle_e2_parallel_to_e1_is_a_case_error(tmp_path):
    with pytest.raises(CaseError) as info:
        mesh_of(
            tmp_path,
            "  - rectangle: {name: p, origin: [0, 0, 0], size: [3, 2], "
            "elements: [3, 2], section: deck, e2: [2, 0, 0]}\n",
        )
    assert info.value.key == "mesh[0].rectangle.e2"


# --- meshio files -------------------------------------------------------------------------------


def test_cell_frames_follow_the_node_order():
    f = cell_frames(TILTED, np.array([[0, 1, 4, 3], [3, 4, 1, 0], [0, 1, 4, 4]]))
    np.testing.assert_allclose(f[0], TILTED_FRAME, atol=1e-15)
    np.testing.assert_allclose(f[2], TILTED_FRAME, atol=1e-15)  # a triangle: same plane
    np.testing.assert_allclose(f[1][:, 2], -TILTED_FRAME[:, 2], atol=1e-15)  # reversed order
    np.testing.assert_allclose(f[1][:, 1], -TILTED_FRAME[:, 1], atol=1e-15)  # d2 = d3 x d1
    # a plane normal to x: d1 is global y projected instead
    wall = np.array([[0, 0, 0], [0, 1, 0], [0, 1, 1], [0, 0, 1]], float)
    np.testing.assert_allclose(
        cell_frames(wall, np.array([[0, 1, 2, 3]]))[0],
        np.column_stack([[0, 1, 0], [0, 0, 1], [1, 0, 0]]),
        atol=1e-15,
    )
    for f_ in f:
        np.testing.assert_allclose(f_.T @ f_, np.eye(3), atol=1e-15)
        assert np.linalg.det(f_) == pytest.approx(1.0)


@pytest.mark.parametrize("fmt", ["msh", "vtu"])
@pytest.mark.parametrize("kind", ["quad", "triangle"])
def test_surface_file_round_trip(tmp_path, fmt, kind):
    cells = QUADS if kind == "quad" else TRIANGLES
    half = len(cells) // 2
    WRITERS[fmt](
        tmp_path / f"m.{fmt}",
        TILTED,
        [(kind, cells[:half], "inner"), (kind, cells[half:], "outer")],
    )
    fm = read_mesh(tmp_path / f"m.{fmt}", "mesh[0].file")
    assert fm.lines.shape == (0, 2)
    padded = cells if kind == "quad" else np.column_stack([cells, cells[:, 2]])
    np.testing.assert_array_equal(original(fm)[fm.plates], padded)
    assert fm.plate_sets["inner"].tolist() == list(range(half))
    assert fm.plate_sets["outer"].tolist() == list(range(half, len(cells)))
    assert sorted(original(fm)[fm.node_sets["outer"]]) == sorted(set(cells[half:].ravel()))

    mesh = mesh_of(
        tmp_path, f"  - file: m.{fmt}\n    name: s\n    sections: {{inner: deck, outer: tube}}\n"
    )
    assert mesh.n_plates == len(cells)
    assert mesh.n_elements == 0
    assert [mesh.section_names[s] for s in mesh.plate_section] == ["deck"] * half + [
        "tube"
    ] * half  # the model side checks the section type
    np.testing.assert_array_equal(original(mesh)[mesh.plates], padded)
    np.testing.assert_allclose(mesh.frames, np.broadcast_to(TILTED_FRAME, (6, 3, 3)), atol=1e-15)
    np.testing.assert_allclose(
        mesh.plate_frames, np.broadcast_to(TILTED_FRAME, (len(cells), 4, 3, 3)), atol=1e-15
    )
    assert mesh.sets["s.all"].tolist() == list(range(6))


@pytest.mark.parametrize("fmt", ["msh", "vtu"])
def test_mixed_lines_and_quads(tmp_path, fmt):
    """A stiffened strip in one file: the line cells lie on the quads' y = 0 edge."""
    lines = np.array([[0, 1], [1, 2]])
    WRITERS[fmt](tmp_path / f"m.{fmt}", TILTED, [("line", lines, "rib"), ("quad", QUADS, "deck")])
    fm = read_mesh(tmp_path / f"m.{fmt}", "mesh[0].file")
    np.testing.assert_array_equal(original(fm)[fm.lines], lines)
    np.testing.assert_array_equal(original(fm)[fm.plates], QUADS)
    assert fm.element_sets["rib"].tolist() == [0, 1]
    assert "rib" not in fm.plate_sets
    assert fm.plate_sets["deck"].tolist() == [0, 1]
    assert "deck" not in fm.element_sets

    mesh = mesh_of(
        tmp_path,
        f"  - file: m.{fmt}\n    name: s\n    sections: "
        "{rib: tube, deck: deck}\n    up: [0, 1, 0]\n",
    )
    assert (mesh.n_elements, mesh.n_plates, mesh.n_nodes) == (2, 2, 6)
    assert mesh.section_names == ("tube", "deck")
    assert mesh.section.tolist() == [0, 0]
    assert mesh.plate_section.tolist() == [1, 1]
    # nodes on the rib carry the rod frame (d1 the tangent, d3 = up), the others the plate's
    rod = np.column_stack([[1, 0, 1], [0, 0, 0], [0, 1, 0]]) / np.array([np.sqrt(2), 1, 1])
    rod[:, 1] = np.cross(rod[:, 2], rod[:, 0])
    rib = np.isin(original(mesh), [0, 1, 2])
    np.testing.assert_allclose(mesh.frames[rib], np.broadcast_to(rod, (3, 3, 3)), atol=1e-15)
    np.testing.assert_allclose(
        mesh.frames[~rib], np.broadcast_to(TILTED_FRAME, (3, 3, 3)), atol=1e-15
    )
    np.testing.assert_allclose(
        mesh.plate_frames, np.broadcast_to(TILTED_FRAME, (2, 4, 3, 3)), atol=1e-15
    )


def test_unmapped_surface_cells_need_a_default_section(tmp_path):
    write_gmsh(tmp_path / "m.msh", TILTED, [("quad", QUADS[:1], "a"), ("quad", QUADS[1:], "b")])
    with pytest.raises(CaseError, match=r"1 surface cells \(the first is cell 1\) are in no"):
        mesh_of(tmp_path, "  - file: m.msh\n    name: s\n    sections: {a: deck}\n")
    mesh = mesh_of(
        tmp_path, "  - file: m.msh\n    name: s\n    sections: {a: deck}\n    section: tube\n"
    )
    assert [mesh.section_names[s] for s in mesh.plate_section] == ["deck", "tube"]


def test_zero_area_cell_is_a_case_error(tmp_path):
    flat = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0]], float)
    meshio.Mesh(flat, [("triangle", np.array([[0, 1, 2]]))]).write(tmp_path / "m.vtu")
    with pytest.raises(CaseError, match="surface cell 0 of 'm.vtu' has zero area") as info:
        mesh_of(tmp_path, "  - file: m.vtu\n    name: s\n    section: deck\n")
    assert info.value.key == "mesh[0]"


def test_volume_cells_are_refused(tmp_path):
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    meshio.Mesh(pts, [("tetra", np.array([[0, 1, 2, 3]]))]).write(tmp_path / "m.vtu")
    with pytest.raises(CaseError, match=r"cannot use \(1 tetra\).*4-node quad") as info:
        read_mesh(tmp_path / "m.vtu", "mesh[0].file")
    assert info.value.key == "mesh[0].file"


# --- merging rods and plates --------------------------------------------------------------------

RECT = (
    "  - rectangle: {name: deck, origin: [0, 0, 0], size: [2, 1], elements: [4, 2], "
    "section: deck}\n"
)
RIB = (
    "  - rod: {name: rib, from: [0, 0, 0], to: [2, 0, 0], elements: 4, section: tube, "
    "up: [0, -1, 0]}\n"
)


@pytest.mark.parametrize("rod_first", [False, True])
def test_rod_merged_onto_a_plate_edge(tmp_path, rod_first):
    mesh = mesh_of(tmp_path, RIB + RECT if rod_first else RECT + RIB)
    assert (mesh.n_nodes, mesh.n_elements, mesh.n_plates) == (15, 4, 8)
    edge = mesh.sets["deck.bottom"]
    assert mesh.sets["rib.all"].tolist() == edge.tolist()
    np.testing.assert_array_equal(np.sort(np.unique(mesh.conn)), edge)
    # the rib's nodes keep the rib's section frame whatever the part order; d3 = up = -y is
    # off the plate normal (+z), which the plate element takes up through plate_frames
    rib = np.column_stack([[1, 0, 0], [0, 0, 1], [0, -1, 0]])
    np.testing.assert_allclose(mesh.frames[edge], np.broadcast_to(rib, (5, 3, 3)), atol=1e-15)
    others = np.setdiff1d(np.arange(15), edge)
    np.testing.assert_allclose(mesh.frames[others], np.broadcast_to(np.eye(3), (10, 3, 3)))
    np.testing.assert_allclose(mesh.plate_frames, np.broadcast_to(np.eye(3), (8, 4, 3, 3)))
    assert mesh.section_names == (("tube", "deck") if rod_first else ("deck", "tube"))
    assert mesh.part_names[mesh.plate_part[0]] == "deck"
    assert mesh.part_names[mesh.part[0]] == "rib"
    # plate corners refer to the merged nodes: the first quad's bottom edge is the rib's first
    assert set(mesh.plates[0, :2]) == set(mesh.conn[0])


def test_two_plates_share_an_edge_and_sets_apply(tmp_path):
    second = (
        "  - rectangle: {name: flap, origin: [2, 0, 0], size: [1, 1], elements: [2, 2], "
        "section: deck, e1: [0, 0, 1]}\n"
    )
    sets = "sets:\n  hinge: {union: [deck.right, flap.left]}\n"
    mesh = mesh_of(tmp_path, RECT + second, sets)
    assert mesh.n_nodes == 15 + 9 - 3
    assert mesh.n_plates == 12
    assert mesh.sets["hinge"].tolist() == mesh.sets["deck.right"].tolist()
    # the hinge nodes carry the first plate's frame; the flap's own frame is in plate_frames
    np.testing.assert_allclose(
        mesh.frames[mesh.sets["hinge"]], np.broadcast_to(np.eye(3), (3, 3, 3))
    )
    flap = np.column_stack([[0, 0, 1], [0, 1, 0], [-1, 0, 0]])
    np.testing.assert_allclose(
        mesh.plate_frames[8:], np.broadcast_to(flap, (4, 4, 3, 3)), atol=1e-15
    )


def test_unmapped_lines_on_plate_edges_only_name_nodes(tmp_path):
    """A Gmsh physical curve on a plate's boundary names an edge (supports, loads); unmapped,
    it is no rod. Mapped to a section it is a stiffener; off the plate edges it still needs
    a section."""
    edge = np.array([[3, 4], [4, 5]])  # the y = 1 edge of the strip
    write_gmsh(tmp_path / "m.msh", TILTED, [("line", edge, "clamped"), ("quad", QUADS, "deck")])
    mesh = mesh_of(tmp_path, "  - file: m.msh\n    name: s\n    sections: {deck: deck}\n")
    assert (mesh.n_elements, mesh.n_plates) == (0, 2)
    np.testing.assert_allclose(mesh.points[mesh.sets["s.clamped"]][:, 1], 1.0)
    assert len(mesh.sets["s.clamped"]) == 3
    ribbed = mesh_of(
        tmp_path, "  - file: m.msh\n    name: s\n    sections: {deck: deck, clamped: tube}\n"
    )
    assert (ribbed.n_elements, ribbed.n_plates) == (2, 2)

    diagonal = np.array([[0, 4]])  # across the first quad, on no edge
    write_gmsh(tmp_path / "d.msh", TILTED, [("line", diagonal, "x"), ("quad", QUADS, "deck")])
    with pytest.raises(CaseError, match="1 line cells .the first is cell 0. are in no cell set"):
        mesh_of(tmp_path, "  - file: d.msh\n    name: s\n    sections: {deck: deck}\n")
