"""``rodsim warmup``: compile the kernels ahead of the first run (docs/running.md).

numba compiles a kernel for each kind of model it meets: the scheme (explicit, implicit,
equilibrium), the group, serial or parallel, and which force terms the model has (plates,
elastic supports, damping). With case files, warmup compiles exactly what those cases use (for
a cluster image or a sweep's workers, warm with the study's own case); without, it compiles
the common kinds below. Nothing is written but the kernel cache (rodsim.kernel_cache).
"""

import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rodsim import kernel_cache

log = logging.getLogger(__name__)

_ROD = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary: [{set: beam.start, fix: all}]
loads:
  - {set: beam.end, force: [0, 0, -1], moment: [0, 0, 0.1], time: {table: [[0, 0], [1, 1]]}}
  - gravity: [0, 0, -9.81]
"""

_PLATE = """
rodsim: 1
mesh:
  - rectangle: {name: p, origin: [0, 0, 0], size: [1, 1], elements: [2, 2], section: s}
sections:
  s: {type: plate, material: {E: 1.0e6, nu: 0.3, rho: 1.0}, thickness: 0.01}
boundary: [{set: p.x0, fix: all}]
loads: [{set: p.all, pressure: 1.0e-3}]
"""

_SUPPORTS = """
supports: [{foundation: beam.all, modulus: [1.0e3, 1.0e3, 1.0e3]}]
"""

# name: (what it covers, case text)
BUILTIN = {
    "explicit": ("rods, explicit SO3xR3", _ROD + "solver: {dt: 1.0e-4, t_end: 1.0e-3}\n"),
    "explicit-se3": (
        "rods, explicit SE3",
        _ROD + "solver: {group: SE3, dt: 1.0e-4, t_end: 1.0e-3}\n",
    ),
    "explicit-parallel": (
        "rods, explicit on all cores",
        _ROD + "solver: {parallel: true, dt: 1.0e-4, t_end: 1.0e-3}\n",
    ),
    "implicit": ("rods, implicit", _ROD + "solver: {scheme: implicit, dt: 1.0e-3, t_end: 0.01}\n"),
    "implicit-adaptive": (
        "rods, adaptive implicit",
        _ROD + "solver: {scheme: implicit, t_end: 0.01, adaptive: {tol: 1.0e-3}}\n",
    ),
    "equilibrium": ("rods, equilibrium", _ROD + "solver: {analysis: equilibrium}\n"),
    "supports": (
        "rods on elastic supports, equilibrium",
        _ROD + _SUPPORTS + "solver: {analysis: equilibrium}\n",
    ),
    "plates": ("plates, equilibrium", _PLATE + "solver: {analysis: equilibrium}\n"),
}


def warm(
    cases: list[str] | None = None,
    report: Callable[[str, float, int], None] | None = None,
) -> kernel_cache.Compiling:
    """Compile the kernels of the case files `cases` (default: the BUILTIN kinds). report(name,
    seconds, kernels) after each. Returns this process's compile totals. CaseError for a case
    file that does not validate."""
    from rodsim import run
    from rodsim.integrators import adaptive_batch

    # adaptive implicit steps: their compiled batch too, which a run compiles only when it is
    # long (rodsim.integrators.adaptive_batch._ready)
    adaptive_batch.COMPILE_HERE = True
    try:
        return _warm(run, cases, report)
    finally:
        adaptive_batch.COMPILE_HERE = False


def _warm(run, cases, report) -> kernel_cache.Compiling:
    with tempfile.TemporaryDirectory(prefix="rodsim-warmup-") as tmp:
        if cases:
            named = [(str(c), Path(c)) for c in cases]
        else:
            named = []
            for name, (_, text) in BUILTIN.items():
                path = Path(tmp) / f"{name}.yaml"
                path.write_text(text)
                named.append((name, path))
        for name, path in named:
            before = kernel_cache.compiling()
            seconds, kernels = before.seconds, before.kernels
            started = time.perf_counter()
            run.warm_up(run.prepare(path))
            after = kernel_cache.compiling()
            log.info("warmed %s in %.3g s", name, time.perf_counter() - started)
            if report:
                report(name, after.seconds - seconds, after.kernels - kernels)
    return kernel_cache.compiling()
