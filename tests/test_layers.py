"""The house holds to its plan (docs/developer.md, "The house: rooms and layers"): no import
climbs a layer, no circle of imports, the documented map is the code's, modules within their
line budget. The walker is tests/import_graph.py (ast only: nothing is imported)."""

import textwrap

import import_graph as ig
import pytest

BUDGET = 500  # lines per module (the project's rule: one concept per module, readable whole)


@pytest.fixture(scope="module")
def house():
    mods = ig.modules()
    return mods, ig.imports(mods), ig.layer_table(ig.DOC.read_text(encoding="utf-8"))


def test_no_import_climbs_a_layer(house):
    _, graph, table = house
    assert ig.violations(graph, table) == []


def test_no_circle_of_imports(house):
    _, graph, _ = house
    assert ig.cycles(graph) == []


def test_the_documented_map_is_the_code(house):
    mods, _, table = house
    documented = ig.documented_map(ig.DOC.read_text(encoding="utf-8"))
    assert documented == ig.house_map(mods, table), "run python tests/import_graph.py"


def test_every_room_of_the_table_exists(house):
    mods, _, table = house
    assert sorted(r for r in table if r not in mods) == []


def test_modules_within_the_line_budget(house):
    mods, _, _ = house
    long = {m: n for m, p in mods.items() if (n := len(p.read_text().splitlines())) > BUDGET}
    assert long == {}


def _tree(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return ig.modules(tmp_path / "pkg")


def test_the_walker_finds_climbs_and_circles_inside_functions(tmp_path):
    """The checks can fail: a lower module importing a higher one inside a function, and a
    circle closed by a function-level import, are both found."""
    mods = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def f():\n    from pkg.high import g\n    return g\n",
            "pkg/high.py": "from pkg import low\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/a.py": "import pkg.sub.b\n",
            "pkg/sub/b.py": "def h():\n    from pkg.sub import a\n",
        },
    )
    graph = ig.imports(mods)
    assert graph["pkg.low"] == {"pkg.high"} and graph["pkg.sub.b"] == {"pkg.sub.a"}
    table = {"pkg": 1, "pkg.low": 1, "pkg.high": 2, "pkg.sub": 2}
    assert ig.violations(graph, table) == ["pkg.low (layer 1) imports pkg.high (layer 2)"]
    assert sorted(ig.cycles(graph)) == [["pkg.high", "pkg.low"], ["pkg.sub.a", "pkg.sub.b"]]
    assert ig.violations(graph, {"pkg.sub": 2}) == [
        f"{m} is in no room of the layer table" for m in ("pkg", "pkg.high", "pkg.low")
    ]


def test_the_walker_reads_relative_imports_and_holds_a_package_init_to_its_lowest_room(
    tmp_path,
):
    """Importing pkg.case.records runs pkg/case/__init__.py first: an __init__ that imports
    the package's higher builders would pull them under the records' importers."""
    mods = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/mesh.py": "from pkg.case import records\n",
            "pkg/case/__init__.py": "from . import builder\n",
            "pkg/case/records.py": "",
            "pkg/case/builder.py": "from ..mesh import x\nfrom .records import y\n",
        },
    )
    graph = ig.imports(mods)
    assert graph["pkg.case"] == {"pkg.case.builder"}
    assert graph["pkg.case.builder"] == {"pkg.mesh", "pkg.case.records"}
    table = {"pkg": 1, "pkg.case.records": 1, "pkg.mesh": 2, "pkg.case": 3}
    assert ig.violations(graph, table) == ["pkg.case (layer 1) imports pkg.case.builder (layer 3)"]
