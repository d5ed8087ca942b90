"""Every user error in a case is a CaseError `<file>: <key path>: <what was expected>`.

Each file in tests/cases/bad/ is tests/cases/good/base.yaml with one mistake. Its header says
what to expect: `# expect: <part of the message>` and `# key: <key path>` (empty when the error
concerns the whole file; for invalid YAML, the line and column stand in its place). A file with
`# set: KEY=VALUE` lines holds no case: the overrides are applied to the good base case
instead, as `rodsim run --set` does.
"""

from pathlib import Path

import pytest
from click.testing import CliRunner

from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.run import prepare

CASES = Path(__file__).parent / "cases"
BASE = CASES / "good" / "base.yaml"
BAD = sorted((CASES / "bad").glob("*.yaml"))


def header(path: Path) -> dict:
    """The `# name: value` lines at the top of a case file (`set` may repeat)."""
    out = {"set": []}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("# "):
            break
        name, sep, value = line[2:].partition(":")
        if sep and name in ("expect", "key", "set"):
            if name == "set":
                out["set"].append(value.strip())
            else:
                out[name] = value.strip()
    return out


def run_case(path: Path):
    """(case file given to rodsim, overrides, expected header) for one bad case."""
    h = header(path)
    assert h.get("expect"), f"{path.name} needs '# expect:' and '# key:' lines"
    assert "key" in h, f"{path.name} needs '# expect:' and '# key:' lines"
    return (BASE if h["set"] else path), h["set"], h


def test_the_corpus_is_large_enough():
    assert len(BAD) >= 40


def test_the_good_base_case_prepares():
    prep = prepare(str(BASE))
    assert prep.setup.model.n_elements == 4
    assert prep.plan.dt == 0.001


def test_a_merge_key_may_override_merged_keys():
    """`<<: *steel` then `EA:` is YAML's override, not a key given twice."""
    sections = prepare(str(CASES / "good" / "merge_key.yaml")).setup.sections
    assert sections["stiffer"].EA == 2.0e4
    assert sections["stiffer"].GJ == 500.0


def test_vtu_cell_sets_keep_their_names():
    """The VTU has an unnamed gmsh:physical tag and meshio's named set encoding: use the names."""
    prep = prepare(str(CASES / "good" / "vtu_cell_sets.yaml"))
    assert prep.setup.model.n_elements == 4 + 8


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_case_message(path):
    case, overrides, h = run_case(path)
    with pytest.raises(CaseError) as info:
        prepare(str(case), overrides)
    message = str(info.value)
    where = f"{case}: {h['key']}: " if h.get("key") else f"{case}: "
    assert message.startswith(where), f"{message!r} does not start with {where!r}"
    assert h["expect"] in message
    assert "\n" not in message


def cli(args: list[str]):
    """(result, stderr, stdout); before click 8.2 both streams are in result.output."""
    result = CliRunner().invoke(main, args)
    try:
        return result, result.stderr, result.stdout
    except ValueError:
        return result, result.output, ""


CLI_CASES = [
    "yaml_bad_indentation",
    "yaml_tab",
    "empty_file",
    "mesh_file_missing",
    "mesh_file_truncated",
    "unknown_set",
    "fix_unknown_dof",
    "set_bad_yaml_value",
    "output_compression_unknown",
    "output_compression_level",
]


@pytest.mark.parametrize("name", CLI_CASES)
def test_cli_prints_one_error_line_and_exits_2(name):
    case, overrides, h = run_case(CASES / "bad" / f"{name}.yaml")
    args = ["check", str(case)] + [a for o in overrides for a in ("--set", o)]
    result, err, out = cli(args)
    assert result.exit_code == 2, result.output
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {case}: " + (f"{h['key']}: " if h["key"] else ""))
    assert h["expect"] in lines[0]
    assert "Traceback" not in result.output
    assert out.strip() == ""  # nothing else on stdout either (meshio prints read errors)
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_check_of_the_good_base_case():
    result, err, _ = cli(["check", str(BASE)])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("ok")
    assert "error" not in err


def test_a_union_may_name_a_set_defined_after_it(tmp_path):
    """Node sets may refer to each other in any order (issue 13)."""
    text = BASE.read_text().replace("sets:\n", "sets:\n  both: {union: [tip, base2]}\n")
    text = text.replace("  base: {box:", "  base2: {near: [0, 0, 0]}\n  base: {box:")
    case = tmp_path / "order.yaml"
    case.write_text(text)
    sets = prepare(str(case)).setup.mesh.sets
    assert list(sets["both"]) == sorted({*sets["tip"], *sets["base2"]}) == [0, 4]
