"""rodsim: structure-preserving finite elements for geometrically exact rods and plates.

The Python API (docs/python.md) is imported on first use, so that ``import rodsim`` stays
fast (numba and the kernels load only when a case is built):

    import rodsim
    case = rodsim.load_case("inputs/ring/ring.yaml", ["solver.t_end=2"])
    results = rodsim.run_in_memory(case)
    sim = rodsim.Simulation(case)
"""

__version__ = "0.1.0"

from rodsim import moved as _moved

_moved.install()  # old module paths (rodsim.results_reader, ...) keep importing

# name -> the module that defines it
_API = {
    "load_case": "rodsim.api",
    "case_from_yaml": "rodsim.api",
    "case_from_dict": "rodsim.api",
    "prepare": "rodsim.api",
    "check": "rodsim.api",
    "summary": "rodsim.api",
    "run_case": "rodsim.api",
    "run_in_memory": "rodsim.api",
    "modes": "rodsim.api",
    "buckling": "rodsim.api",
    "user_term": "rodsim.api",
    "read_results": "rodsim.results",
    "render": "rodsim.post.render",
    "run_sweep": "rodsim.sweep.runner",
    "Results": "rodsim.results",
    "Simulation": "rodsim.simulation",
    "State": "rodsim.simulation",
    "Inputs": "rodsim.simulation",
    "Case": "rodsim.case.load",
    "Frame": "rodsim.results.frame",
    "RodsimError": "rodsim.errors",
    "CaseError": "rodsim.errors",
    "ArgumentError": "rodsim.errors",
    "NumericalError": "rodsim.errors",
    "ResourceError": "rodsim.errors",
    "Interrupted": "rodsim.errors",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'rodsim' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(_API[name]), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__():
    return sorted(set(globals()) | set(_API))
