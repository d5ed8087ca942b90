"""The mesh/ datasets of a results file (docs/results.md "Datasets"), written once: one row
of the dataset table each (rodsim.results.dataset.Dataset); the order is the order of
creation in the file and of the documentation. The per-frame datasets:
rodsim.results.table_frames; the layout rule over both: rodsim.results.layout.
"""

from rodsim.results.dataset import PLATES, ROD_STRESS, RODS, SETS
from rodsim.results.dataset import Dataset as _D

MESH_TABLE = (
    _D("mesh/points", ("N", 3), "points", "length", "reference node positions"),
    _D("mesh/frames", ("N", 3, 3), "frames", "1", "reference nodal frames, columns d1 d2 d3"),
    _D(
        "mesh/rods",
        ("E", 2),
        "conn",
        "index",
        "rod element connectivity (two node indices)",
        RODS,
        dtype="i8",
    ),
    _D(
        "mesh/rod_section",
        ("E",),
        "section",
        "index",
        "section of each rod element, an index into the names attribute",
        RODS,
        dtype="i8",
        names="section_names",
    ),
    _D(
        "mesh/rod_part",
        ("E",),
        "part",
        "index",
        "part of each rod element, an index into the names attribute",
        RODS,
        dtype="i8",
        names="part_names",
    ),
    _D(
        "mesh/plates",
        ("P", 4),
        "plates",
        "index",
        "plate connectivity going round the element; triangles repeat their last node",
        PLATES,
        dtype="i8",
    ),
    _D(
        "mesh/plate_section",
        ("P",),
        "plate_section",
        "index",
        "section of each plate element, an index into the names attribute (the rods' names)",
        PLATES,
        dtype="i8",
        names="section_names",
    ),
    _D(
        "mesh/plate_part",
        ("P",),
        "plate_part",
        "index",
        "part of each plate element, an index into the names attribute (the rods' names)",
        PLATES,
        dtype="i8",
        names="part_names",
    ),
    _D(
        SETS + "/{name}",
        ("K",),
        "sets",
        "index",
        "the sorted node indices of the node set",
        dtype="i8",
    ),
    _D(
        "mesh/stress_points",
        ("S", "R", 2),
        "stress_points",
        "length",
        "stress recovery points (x2, x3) of each section (index as mesh/rod_section), NaN for "
        "sections without a shape and beyond a section's own points (docs/stresses.md)",
        ROD_STRESS,
        optional=True,
        since=4,
    ),
    _D(
        "mesh/rod_frames",
        ("E", 2, 3, 3),
        "end_frames",
        "1",
        "reference section frames at the two ends of each rod element, columns d1 d2 d3 (they "
        "differ from mesh/frames where rods meet at an angle); current: R(q) times them",
        RODS,
        optional=True,
        since=6,
    ),
    _D(
        "mesh/section_outline",
        ("S", "B", 2),
        "section_outline",
        "length",
        "outer outline (x2, x3) of each section (index as mesh/rod_section), counter-clockwise, "
        "NaN-padded; a section given by stiffnesses: the ellipse of its radii of gyration; "
        "NaN for plate sections (docs/render.md)",
        RODS,
        optional=True,
        since=6,
    ),
    _D(
        "mesh/plate_thickness",
        ("P",),
        "plate_thickness",
        "length",
        "thickness of each plate element",
        PLATES,
        optional=True,
        since=6,
    ),
)
