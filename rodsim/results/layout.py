"""The results file format (docs/results.md): one table of datasets drives the HDF5 writer,
the readers and the documentation.

Layout versioning: ``layout`` is the major version, ``layout_minor`` counts additive changes
(new datasets, new attributes) to it. Readers ignore datasets they do not know and read a
missing optional dataset as absent, so files of any minor version read alike. A change of
shape or meaning of an existing dataset is a new major layout: it gets its own reader adapter
in ADAPTERS, and the adapters of older layouts stay, so that every file rodsim wrote keeps
reading.

Reading (layout adapters, run status): rodsim.results.reader; writing (crash safety, disk
space, run status): rodsim.results.writer and rodsim.results.storage.
"""

import sys

from rodsim.mesh.assemble import Mesh
from rodsim.results.dataset import (
    ALWAYS,
    ALWAYS_WRITTEN,
    CHOOSABLE_GROUPS,
    END_SUFFIX,
    FIELDS_ATTR,
    FRAME_END_ATTR,
    PLATES,
    POINT_STRESS,
    POINT_STRESSES_ATTR,
    ROD_STRESS,
    RODS,
    SETS,
    TERM,
    Dataset,
)
from rodsim.results.table_frames import DISSIPATING, FRAME_TABLE
from rodsim.results.table_mesh import MESH_TABLE
from rodsim.terms import TERMS

# the record, the table and the words they share live in rodsim.results.dataset, table_mesh
# and table_frames; most code imports them from here
__all__ = [
    "ALWAYS",
    "ALWAYS_WRITTEN",
    "CHOOSABLE_GROUPS",
    "DISSIPATING",
    "END_SUFFIX",
    "FIELDS_ATTR",
    "FRAME_END_ATTR",
    "PLATES",
    "POINT_STRESS",
    "POINT_STRESSES_ATTR",
    "ROD_STRESS",
    "RODS",
    "SETS",
    "TERM",
    "Dataset",
]

LAYOUT = 1
# 1: layout_minor itself and a description on every mesh dataset; 2: the run status
# attributes and solver/off_schedule; 3: the units attribute; 4: stresses, modes, buckling;
# 5: analysis steps (step, load_factor, total_time) and the restart/ group; 6: what rodsim render
# draws (mesh/rod_frames, mesh/section_outline, mesh/plate_thickness); 7: output.fields (the
# `fields` attribute; the datasets it leaves out are absent); 8: the energy ledger
# (energy/external_work, support_work, dissipated, dissipated_by_term, balance); 9: the terms'
# own datasets (Term.datasets: mesh/connectors, connectors/*); 10: ragged per-frame datasets
# of the terms (Term.datasets with ragged: the flat rows and <path>_end, the `frame_end`
# attribute; rodsim.results.dataset)
LAYOUT_MINOR = 10

# The order is the order of creation in the file and of the documentation.
DATASETS = MESH_TABLE + FRAME_TABLE
MESH_DATASETS = tuple(d for d in DATASETS if not d.per_frame)
FRAME_DATASETS = tuple(d for d in DATASETS if d.per_frame)


def term_datasets(terms=TERMS) -> tuple:
    """The datasets the terms declare (Term.datasets), in the order of terms: a term's
    per-frame datasets in a group of its own (its GROUP/* a name of output.fields), its mesh
    ones under mesh/. They are not in DATASETS: a Frame holds them in Frame.terms, keyed by
    path, and a file has them where the model has the term (TERM)."""
    out = []
    for t in terms:
        for spec in t.datasets or ():
            out.append(Dataset(source="terms", present=TERM, optional=True, term=t.name, **spec))
    taken = {d.path for d in DATASETS} | {d.path.partition("/")[0] for d in FRAME_DATASETS}
    for d in out:
        group = d.path.partition("/")[0]
        paths = (d.path, d.end_path) if d.ragged else (d.path,)
        if any(p in taken for p in paths) or (d.per_frame and group in taken):
            raise ValueError(f"term {d.term}: dataset {d.path} clashes with the layout's")
        if d.ragged and not (d.per_frame and d.shape and isinstance(d.shape[0], str)):
            raise ValueError(
                f"term {d.term}: ragged dataset {d.path} needs a per-frame shape "
                "whose first entry is its size letter"
            )
        taken.update(paths)
    return tuple(out)


def term_tables(terms=TERMS) -> dict:
    """The module's tables that follow from the terms' declarations, by name: what a test
    that adds a term of its own replaces (tests/test_ragged_datasets.py)."""
    every = term_datasets(terms)
    frame = tuple(d for d in every if d.per_frame)
    groups = tuple(dict.fromkeys(d.path.partition("/")[0] for d in frame))
    choosable = tuple(d.path for d in (*FRAME_DATASETS, *frame) if d.choosable)
    return {
        "TERM_DATASETS": every,
        "TERM_MESH_DATASETS": tuple(d for d in every if not d.per_frame),
        "TERM_FRAME_DATASETS": frame,
        # the groups of the terms' per-frame datasets (connectors/), in order
        "TERM_GROUPS": groups,
        "CHOOSABLE": choosable,
        # the names output.fields takes: each choosable dataset, and GROUP/* for all of a
        # group's
        "FIELD_NAMES": choosable + tuple(f"{g}/*" for g in (*CHOOSABLE_GROUPS, *groups)),
    }


_TABLES = term_tables()
TERM_DATASETS = _TABLES["TERM_DATASETS"]
TERM_MESH_DATASETS = _TABLES["TERM_MESH_DATASETS"]
TERM_FRAME_DATASETS = _TABLES["TERM_FRAME_DATASETS"]
TERM_GROUPS = _TABLES["TERM_GROUPS"]
CHOOSABLE = _TABLES["CHOOSABLE"]
FIELD_NAMES = _TABLES["FIELD_NAMES"]


def chosen_datasets(names) -> frozenset:
    """The choosable dataset paths that output.fields names (GROUP/* expanded); names None
    (the key not given): every one of them."""
    if names is None:
        return frozenset(CHOOSABLE)
    out = set()
    for name in names:
        group = name.removesuffix("/*") + "/" if name.endswith("/*") else None
        out.update(p for p in CHOOSABLE if p == name or (group and p.startswith(group)))
    return frozenset(out)


def is_chosen(d: Dataset, chosen: frozenset | None) -> bool:
    """Whether output.fields keeps dataset d (chosen: chosen_datasets; None: everything)."""
    return not d.choosable or chosen is None or d.path in chosen


def written_fields(f) -> frozenset | None:
    """The choosable datasets a results file's run chose (its `fields` attribute), or None
    for a file from before output.fields (layout < 1.7), whose run wrote all it had."""
    if FIELDS_ATTR not in f.attrs:
        return None
    return frozenset(x.decode() if isinstance(x, bytes) else str(x) for x in f.attrs[FIELDS_ATTR])


def is_present(d: Dataset, mesh: Mesh) -> bool:
    stress = mesh.n_elements > 0 and mesh.stress_points.shape[1] > 0
    return {
        ALWAYS: True,
        RODS: mesh.n_elements > 0,
        PLATES: mesh.n_plates > 0,
        ROD_STRESS: stress,
        POINT_STRESS: stress and mesh.point_stresses,
    }[d.present]


def sizes_of(mesh) -> dict:
    """The size letters of a mesh's datasets (an assemble.Mesh or a results.ResultsMesh): N
    nodes, E rod elements, P plates, S sections, R stress recovery points per section, B
    points of the longest section outline."""
    return {
        "N": len(mesh.points),
        "E": len(mesh.conn),
        "P": len(mesh.plates),
        "S": len(mesh.section_names),
        "R": mesh.stress_points.shape[1],
        "B": mesh.section_outline.shape[1],
    }


def concrete_shape(shape: tuple, sizes: dict) -> tuple:
    """The shape with the size letters replaced by sizes[letter]."""
    return tuple(sizes[s] if isinstance(s, str) else s for s in shape)


# --- documentation ------------------------------------------------------------------------

_PRESENT_TEXT = {
    ALWAYS: "always",
    RODS: "with rod elements",
    PLATES: "with plates",
    ROD_STRESS: "with rod sections that have a shape",
    POINT_STRESS: "with rod sections that have a shape, and `output.stresses: points`",
}


def _shape_text(d: Dataset) -> str:
    if d.ragged:  # the rows of every frame, one after the other
        dims = (f"sum of {d.shape[0]}", *d.shape[1:])
    else:
        dims = ("F", *d.shape) if d.per_frame else d.shape
    return "(" + ", ".join(str(s) for s in dims) + ("," if len(dims) == 1 else "") + ")"


def markdown_table() -> str:
    """The dataset table of docs/results.md (``python -m rodsim.results.layout``)."""
    rows = [
        "| dataset | shape | type | units | in the file | description |",
        "|---|---|---|---|---|---|",
    ]
    for d in (*DATASETS, *TERM_DATASETS):
        kind = {"f8": "float64", "i8": "int64"}[d.dtype]
        lack = (
            f" (files before layout 1.{d.since} lack it)"
            if d.since
            else " (files of layout 1.0 may lack it)"
        )
        present = f"with {d.term}" if d.term else _PRESENT_TEXT[d.present]
        present += lack if d.optional else ""
        present += ", if `output.fields` keeps it" if d.choosable else ""
        path = d.path.replace("{name}", "<set>")
        ragged = f" (ragged: frame k's rows end at `{d.end_path}`[k])" if d.ragged else ""
        rows.append(
            f"| `{path}` | {_shape_text(d)} | {kind} | {d.units} | {present} | "
            f"{d.description}{ragged} |"
        )
        if d.ragged:
            rows.append(
                f"| `{d.end_path}` | (F,) | int64 | index | with `{path}` | the end of each "
                f"frame's rows in `{path}`: frame k's are rows end[k-1] to end[k] (from 0) |"
            )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
