"""Case loading details that the error corpus does not cover: overrides, YAML aliases, and
hostile YAML (alias bombs, deep nesting)."""

import time

import pytest

from rodsim.case.load import EXPANSION, MAX_DEPTH, case_from_text
from rodsim.errors import CaseError

ALIASED = """
rodsim: 1
mesh:
  - rod: {name: a, from: [0, 0, 0], to: [1, 0, 0], elements: 2, section: s1}
  - rod: {name: b, from: [1, 0, 0], to: [2, 0, 0], elements: 2, section: s2}
sections:
  s1: &sec {type: rod, EA: 1, GA: [1, 1], GJ: 1, EI: [1, 1], rhoA: 1, rhoI: [1, 1]}
  s2: *sec
solver: {t_end: 1}
"""


def test_set_changes_one_alias_copy_only(tmp_path):
    case = case_from_text(ALIASED, tmp_path / "c.yaml", ["sections.s2.EA=5"])
    assert case.settings.sections["s2"].EA == 5.0
    assert case.settings.sections["s1"].EA == 1.0


def test_set_every_replaces_interval(tmp_path):
    text = ALIASED + "output: {interval: 0.1}\n"
    case = case_from_text(text, tmp_path / "c.yaml", ["output.every=3"])
    assert case.settings.output.every == 3
    assert case.settings.output.interval is None


def _bomb(levels: int) -> str:
    """The 'billion laughs': each level a list of 9 aliases of the previous one, 9^levels
    values from a few hundred bytes."""
    lines = ["rodsim: 1", 'l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, levels + 1):
        lines.append(f"l{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_before_it_is_expanded(tmp_path):
    """9^9 = 3.9e8 values (4.9e8 with the lists) from 600 bytes: refused from the composed node
    graph, without building anything. The 1 s bound is ~100x the measured parse time, so it
    only fails if the document is expanded."""
    text = _bomb(8)
    assert len(text) < 700
    start = time.perf_counter()
    with pytest.raises(CaseError, match="aliases .* expand 30 values to 4.9e\\+08"):
        case_from_text(text, tmp_path / "bomb.yaml")
    assert time.perf_counter() - start < 1.0


def test_moderate_alias_use_is_accepted(tmp_path):
    """Expansion up to 10x the document plus 100000 values passes: a 9^4 = 6561-value bomb is
    read (and then refused only by the schema)."""
    assert 9**4 < EXPANSION[1]
    with pytest.raises(CaseError) as err:
        case_from_text(_bomb(3), tmp_path / "small.yaml")
    assert "unknown key 'l0'" in str(err.value)
    assert "expand" not in str(err.value)


def test_recursive_alias_is_refused(tmp_path):
    with pytest.raises(CaseError, match="recursive alias") as err:
        case_from_text("rodsim: 1\na: &a [1, *a]\n", tmp_path / "r.yaml")
    assert err.value.key == "line 2, column 4"


def test_deep_nesting_is_refused_with_its_line(tmp_path):
    """100000 nested lists would end in a RecursionError inside PyYAML's composer; the
    parser's flat events find the depth first."""
    text = "rodsim: 1\na: " + "[" * 100_000 + "]" * 100_000 + "\n"
    with pytest.raises(CaseError, match=f"nested deeper than {MAX_DEPTH} levels") as err:
        case_from_text(text, tmp_path / "deep.yaml")
    assert err.value.key == f"line 2, column {3 + MAX_DEPTH}"  # the top mapping is level 1
