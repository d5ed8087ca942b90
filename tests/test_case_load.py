"""Case loading details that the error corpus does not cover: overrides and YAML aliases."""

from rodsim.case.load import case_from_text

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
    assert case.data["sections"]["s2"]["EA"] == 5.0
    assert case.data["sections"]["s1"]["EA"] == 1.0


def test_set_every_replaces_interval(tmp_path):
    text = ALIASED + "output: {interval: 0.1}\n"
    case = case_from_text(text, tmp_path / "c.yaml", ["output.every=3"])
    assert case.data["output"]["every"] == 3 and case.data["output"]["interval"] is None
