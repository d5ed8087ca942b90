"""Old module paths of rodsim, kept importable for a while after a move.

``import rodsim.results_reader`` (or ``from rodsim.results_reader import open_results``) keeps
working and warns once with a DeprecationWarning naming the new path; the module object is the
new one, so monkeypatching and identity checks see the same module. One exception: an old
module that names moved away before it moved itself (NAMES) is a stand-in, a copy of the new
module's names plus those: patch the new module, not the stand-in.
"""

import sys

# old dotted name -> new dotted name (0.x: moved in the "one room per concept" change)
MOVED = {
    "rodsim.results_format": "rodsim.results.layout",
    "rodsim.results_reader": "rodsim.results.reader",
    "rodsim.results_storage": "rodsim.results.storage",
    "rodsim.results_writer": "rodsim.results.writer",
    "rodsim.output_lock": "rodsim.results.lock",
    "rodsim.output_guard": "rodsim.results.guard",
    "rodsim.restart": "rodsim.results.restart",
    "rodsim.output": "rodsim.solvers.output",
    "rodsim.writers": "rodsim.results",
    "rodsim.writers.frame": "rodsim.results.frame",
    "rodsim.writers.vtk": "rodsim.results.vtk",
    "rodsim.writers.vtk_cells": "rodsim.results.vtk_cells",
    "rodsim.writers.mode_series": "rodsim.results.mode_series",
    "rodsim.cli_post": "rodsim.cli.post",
    "rodsim.cli_sweep": "rodsim.cli.sweep",
}


# names that left an old module for another before the old module itself moved: the old path
# gives them from there (rodsim.results_format.open_results, moved to the reader in 0.1.0)
NAMES = {
    "rodsim.results_format": (
        "rodsim.results.reader",
        ("open_results", "read_frame", "frame_count", "layout_version", "run_status",
         "RunStatus", "incomplete_warning", "quaternion_matrices"),
    ),
}  # fmt: skip


def _with_names(old: str, module):
    """A stand-in for module under its old name that also gives the names NAMES moved away."""
    import importlib
    import types
    import warnings

    there, names = NAMES[old]

    class Old(types.ModuleType):
        def __getattr__(self, name):
            if name in names:
                warnings.warn(
                    f"{old}.{name} is now {there}.{name}", DeprecationWarning, stacklevel=2
                )
                return getattr(importlib.import_module(there), name)
            return getattr(module, name)

    stand_in = Old(old, module.__doc__)
    stand_in.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    return stand_in


class _Alias:  # a loader (no importlib.abc: it costs 14 ms at every import of rodsim)
    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        import importlib
        import warnings

        warnings.warn(
            f"{spec.name} is now {self.new}; the old path will be removed",
            DeprecationWarning,
            stacklevel=2,  # the importing line (the import machinery's frames are skipped)
        )
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return _with_names(spec.name, module) if spec.name in NAMES else module

    def exec_module(self, module):
        if module.__name__ == self.spec.name:  # the import machinery set the alias's spec on it
            module.__spec__ = self.spec


class _Finder:  # a meta path finder
    def find_spec(self, name, path=None, target=None):
        new = MOVED.get(name)
        if new is None:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, _Alias(new))


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
