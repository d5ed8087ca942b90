"""Registries and typed settings (issue 15): every case-file name maps to one implementation,
the schema's lists of names come from the registries, and the validator gives frozen, typed
settings all the way down."""

import dataclasses
import itertools

import pytest

from rodsim import solvers
from rodsim.case import conditions, parts, sections, settings, v1
from rodsim.case import schema as s
from rodsim.case.load_terms import LOAD_BUILDERS
from rodsim.mesh import parts as mesh_parts
from rodsim.registry import Registry


def _records(node, under_into=False):
    """(record, typed by an enclosing OneOf's into) for every Record reachable from node."""
    if isinstance(node, s.Record):
        yield node, under_into
        for f in node.fields:
            yield from _records(f.node)
    elif isinstance(node, s.ListOf):
        yield from _records(node.item)
    elif isinstance(node, s.MapOf):
        yield from _records(node.value)
    elif isinstance(node, s.OneOf):
        for _, n, _ in node.options:
            yield from _records(n, node.into is not None)
    elif isinstance(node, s.Tagged):
        for _, n, _, _ in node.options:
            yield from _records(n)
    elif isinstance(node, (s.Either, sections.ByType)):
        for option in node.options:
            yield from _records(option[1] if isinstance(option, tuple) else option)


def test_every_record_of_the_case_gives_a_frozen_settings_class():
    found = list(_records(v1.CASE))
    assert len(found) > 20
    for record, converted in found:
        if converted:  # a time function's sine: TIME gives a TimeFunction of it
            continue
        assert record.into is not None, [f.name for f in record.fields]
        assert record.into.__dataclass_params__.frozen


def test_a_settings_class_must_match_its_record():
    @dataclasses.dataclass(frozen=True)
    class Two:
        a: float
        b: float

    fields = (s.Field("a", s.Number(), ""), s.Field("c", s.Number(), ""))
    with pytest.raises(TypeError, match="Two has attributes"):
        s.Record(fields, into=Two)


def test_settings_are_frozen():
    rod = {"name": "b", "from": [0, 0, 0], "to": [1, 0, 0], "elements": 2, "section": "s"}
    section = {"type": "rod", "EA": 1, "GA": [1, 1], "GJ": 1, "EI": [1, 1], "rhoA": 1}
    data = {
        "rodsim": 1,
        "mesh": [{"rod": rod}],
        "sections": {"s": {**section, "rhoI": [1, 1]}},
        "solver": {"t_end": 1},
    }
    case = v1.CASE.check(data, ())
    assert isinstance(case, settings.CaseSettings)
    assert isinstance(case.mesh[0], settings.RodPart)
    assert case.mesh[0].from_ == (0.0, 0.0, 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.solver.dt = 1.0
    assert case.solver.newton == settings.Newton(tol=1e-10, max_iter=25)  # FILLED defaults


def test_mesh_parts_come_from_their_registry():
    classes = [k.node.into for _, k in parts.PART_KINDS]
    assert len(set(classes)) == len(classes)  # kind_of can tell every part apart
    for name, kind in parts.PART_KINDS:
        assert parts.kind_of(_example(kind.node.into))[0] == name
    assert set(mesh_parts.BUILDERS) == set(classes)  # every part kind has a mesh builder


def _example(cls):
    """An instance of a settings class (its values do not matter here)."""
    return cls(**{f.name: None for f in dataclasses.fields(cls)})


def test_every_load_kind_has_a_model_builder():
    classes = {n.into for _, n, _, _ in conditions.LOAD.options}
    assert classes == set(LOAD_BUILDERS)


def test_every_analysis_and_scheme_has_a_solver():
    for analysis, scheme in itertools.product(v1.ANALYSES.names(), v1.SCHEMES.names()):
        solver = v1.SOLVER.check({"analysis": analysis, "scheme": scheme, "t_end": 1.0}, ())
        kind = solvers.SOLVERS[solver.kind]
        assert (kind.advance is None) == (analysis != "dynamic")  # only dynamics has steps
    assert set(solvers.SOLVERS.names()) == {*v1.SCHEMES.names(), "equilibrium", "modal", "buckling"}


def test_an_unknown_name_lists_the_valid_ones():
    registry = Registry("analysis", {"dynamic": 1, "equilibrium": 2})
    with pytest.raises(
        ValueError,
        match=r"unknown analysis 'equilibrum' \(did you mean "
        r"'equilibrium'\?\); expected one of dynamic, equilibrium",
    ):
        registry["equilibrum"]
