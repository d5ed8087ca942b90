"""`rodsim schema` and docs/case.schema.json (rodsim.case.json_schema): the committed file is
the generated one, every case file of the repository is valid against it, and invalid cases
are rejected by both the JSON Schema and rodsim."""

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from rodsim import api
from rodsim.case import json_schema
from rodsim.case.load import parse_yaml
from rodsim.cli import main
from rodsim.errors import CaseError

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "docs" / "case.schema.json"


def case_files() -> list[Path]:
    """Every case file (a YAML document with `rodsim:`) in inputs/ and validation/."""
    found = []
    for folder in ("inputs", "validation"):
        for path in sorted((ROOT / folder).rglob("*.yaml")):
            data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
            if isinstance(data, dict) and "rodsim" in data:
                found.append(path)
    return found


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_the_generated_one():
    assert SCHEMA.read_text(encoding="utf-8") == json_schema.text()


def test_rodsim_schema_writes_it(tmp_path):
    out = tmp_path / "case.schema.json"
    res = CliRunner().invoke(main, ["schema", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8") == json_schema.text()
    assert CliRunner().invoke(main, ["schema"]).output == json_schema.text()
    again = CliRunner().invoke(main, ["schema", "-o", str(out)])  # an earlier schema: replaced
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize("name", ["case.yaml", "results.h5"])
def test_rodsim_schema_does_not_overwrite_another_file(tmp_path, name):
    """`rodsim schema -o case.yaml` (or a results file) overwrote it (issue 33): exit 2, the
    file byte-identical."""
    target = tmp_path / name
    target.write_bytes(b"rodsim: 1\ntitle: mine\n")
    res = CliRunner().invoke(main, ["schema", "-o", str(target)])
    assert res.exit_code == 2, res.output
    assert "is not a case schema" in res.output
    assert target.read_bytes() == b"rodsim: 1\ntitle: mine\n"


def test_every_case_file_is_valid(validator):
    files = case_files()
    assert len(files) >= 20  # inputs/ and the validation benchmarks
    for path in files:
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]
        assert not errors, (path, errors[:3])


def test_numbers_carry_their_dimension():
    props = json_schema.case_schema()["properties"]
    solver = props["solver"]["properties"]
    assert solver["t_end"]["x-dimension"] == "time"
    assert solver["safety"]["x-dimension"] == "1"
    # a number with a dimension may be written with a unit
    assert {"type": "number", "exclusiveMinimum": 0, "x-dimension": "time"} in solver["t_end"][
        "anyOf"
    ]


SPAGHETTI = ROOT / "inputs" / "spaghetti" / "spaghetti.yaml"


@pytest.mark.parametrize(
    "override",
    [
        "solver.scheme=sideways",  # not a valid name
        "solver.t_end=-1",  # out of bounds
        "output.vtk=3",  # wrong type
        "loads[0].force=[1, 2]",  # a vector of 2
        "solver.dtt=0.1",  # unknown key
    ],
)
def test_invalid_cases_are_rejected_by_both(validator, override):
    with pytest.raises(CaseError):
        api.load_case(SPAGHETTI, [override])
    data = parse_yaml(SPAGHETTI.read_text(encoding="utf-8"), str(SPAGHETTI))
    key, value = override.split("=", 1)
    target, *path = key.replace("[", ".").replace("]", "").split(".")
    node = data[target]
    for part in path[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    node[path[-1]] = parse_yaml(value)
    assert list(validator.iter_errors(data)), override
