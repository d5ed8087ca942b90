"""Old module paths keep importing after a move (rodsim/moved.py), warning with the new path."""

import importlib
import subprocess
import sys

import pytest

from rodsim.moved import MOVED, NAMES


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_the_new_module_and_warns(old):
    """In a fresh interpreter (an import is cached per process): the module object is the new
    one (monkeypatching and isinstance see one module), and the warning names the new path."""
    new, parent = MOVED[old], old.rpartition(".")[0]
    probe = (
        "import warnings, importlib\n"
        "warnings.simplefilter('ignore')\n"
        # a moved parent (rodsim.writers) warns on its own, first
        + (f"importlib.import_module({parent!r})\n" if parent in MOVED else "")
        + "warnings.simplefilter('error', DeprecationWarning)\n"
        f"new = importlib.import_module({new!r})\n"
        "try:\n"
        f"    importlib.import_module({old!r})\n"
        "except DeprecationWarning as w:\n"
        "    print(w)\n"
        "warnings.simplefilter('ignore')\n"
        f"old = importlib.import_module({old!r})\n"
        "print(old is new, old.__name__, old.__spec__.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    warned, same = done.stdout.splitlines()
    assert warned == f"{old} is now {new}; the old path will be removed"
    if old in NAMES:  # a stand-in that also gives the names moved away before
        assert same == f"False {old} {old}"
    else:
        assert same == f"True {new} {new}"


def test_the_warning_points_at_the_users_import_and_shows_by_default(tmp_path):
    """Python shows a DeprecationWarning by default only where __main__ triggers it: the
    warning names the line of the user's script that imports the old path."""
    script = tmp_path / "script.py"
    script.write_text("import rodsim.results_reader\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{script}:1: DeprecationWarning: rodsim.results_reader is now" in done.stderr


def test_every_new_path_exists():
    for new in MOVED.values():
        importlib.import_module(new)


def test_names_moved_before_their_module_still_import_from_the_old_path():
    sys.modules.pop("rodsim.results_format", None)
    with pytest.warns(DeprecationWarning) as warned:
        from rodsim.results_format import DATASETS, open_results
    assert [str(w.message) for w in warned] == [
        "rodsim.results_format is now rodsim.results.layout; the old path will be removed",
        "rodsim.results_format.open_results is now rodsim.results.reader.open_results",
    ]
    assert open_results.__module__ == "rodsim.results.reader"
    from rodsim.results.layout import DATASETS as now

    assert DATASETS is now


def test_from_an_old_path_import_a_name():
    with pytest.warns(DeprecationWarning, match="rodsim.results.reader"):
        sys.modules.pop("rodsim.results_reader", None)
        from rodsim.results_reader import open_results
    assert open_results.__module__ == "rodsim.results.reader"
