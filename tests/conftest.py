"""Shared model builders for the tests (the benchmark rods of docs/theory.md, "Benchmark data")."""

import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from rodsim.integrators import dynamics
from rodsim.mesh.generate import arc, straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad
from rodsim.model.sections import section_from_resultants

GROUPS = ["SO3xR3", "SE3"]

# The fast tier (`python -m pytest -q -m fast`, docs/developer.md "Test tiers"): a verdict in a
# few minutes on a fresh machine, where compiling kernels is most of a test's time. These
# modules check the case boundary, the Lie groups, sections, meshes, the rod element, the
# explicit scheme's invariants and the command line, and compile only the explicit rod
# kernels (measured: 301 s with an empty kernel cache on a loaded 2-core machine for these and
# test_estimates and test_progress, which compile plates and the validation suite and stay out).
FAST_MODULES = frozenset(
    {
        "test_assembly_loads",
        "test_case_errors",
        "test_case_load",
        "test_cli",
        "test_docs_self_contained",
        "test_examples",
        "test_explicit_invariants",
        "test_json_schema",
        "test_layers",
        "test_lie_so3",
        "test_mesh_files",
        "test_mesh_node_ids",
        "test_outlines",
        "test_output_paths",
        "test_plate_mesh",
        "test_registries",
        "test_results_format",
        "test_rod_element",
        "test_sections",
        "test_stable_step",
        "test_timefunc",
        "test_units",
    }
)


def small_cantilever(
    elements: int = 4,
    force: str = "[0, 0, -1]",
    solver: str = "{dt: auto, t_end: 1.0}",
    output: str = "{vtk: false}",
    title: str = "",
) -> str:
    """The case text of a small clamped rod (length 1, EI = 10) under a tip force, for the tests
    that need a quick case of their own (restart files, interrupts, argument checks)."""
    head = f"title: {title}\n" if title else ""
    return f"""rodsim: 1
{head}mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {elements}, section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: {force}}}
solver: {solver}
output: {output}
"""


def pytest_collection_modifyitems(config, items):
    """Marks the fast tier's tests `fast` (its slow ones stay out)."""
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1]
        if module in FAST_MODULES and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.fast)


SPAGHETTI_SECTION = section_from_resultants(
    EA=1e4, GA=[1e4, 1e4], GJ=500, EI=[500, 500], rhoA=1, rhoI=[10, 10]
)
# the corrected triangular pulse of docs/theory.md, "Benchmark data": 80 t, then 400 - 80 t, 0 after
# t = 5
SPAGHETTI_PULSE = timefunc.table([[0, 0], [2.5, 200], [5, 0]])


def spaghetti(n_elements: int = 10, fixed=None, loaded: bool = True):
    """Flying spaghetti 3D (Simo, Tarnow & Doblaré 1995) as set up in docs/theory.md, "Benchmark
    data"."""
    part = straight_rod([0, 0, 0], [6, 8, 0], n_elements, up=[0, 0, 1])
    loads = []
    if loaded:
        loads = [
            NodalLoad(
                nodes=[n_elements], force=(0.1, 0, 0), moment=(0, 0.5, 1.0), time=SPAGHETTI_PULSE
            )
        ]
    return build_model(
        part.points, part.frames, part.conn, SPAGHETTI_SECTION, loads=loads, fixed=fixed
    )


def free_ring(n_elements: int = 80):
    """Free elastic ring of docs/theory.md, "Benchmark data": r = 5, opposite moments ramped to 80
    in 1.5 s,
    then removed."""
    part = arc([0, 0, 0], 5.0, [5, 0, 0], [0, 0, 1], 360.0, n_elements)
    sec = section_from_resultants(
        EA=3e4, GA=[3e4, 3e4], GJ=7e3, EI=[7e3, 7e3], rhoA=1, rhoI=[10, 10]
    )
    ramp = timefunc.table([[0, 0], [1.5, 80]])
    half = n_elements // 2
    loads = [
        NodalLoad(nodes=[0], moment=(0, 1.0, 0), time=ramp),
        NodalLoad(nodes=[half], moment=(0, -1.0, 0), time=ramp),
    ]
    return build_model(part.points, part.frames, part.conn, sec, loads=loads)


def survives(model, dt, state=None, steps: int = 4000, kinetic_limit: float = 1e6) -> bool:
    """Whether the explicit scheme runs `steps` steps of size dt from `state` (default: at rest)
    without blowing up: no NumericalError and a kinetic energy below kinetic_limit."""
    from rodsim.errors import NumericalError

    try:
        run = dynamics.start(model, dt, state=state)
        dynamics.advance(run, steps)
    except NumericalError:
        return False
    return run.diagnostics().kinetic < kinetic_limit


def rod_forces(el, x, rot, f, tau) -> float:
    """Add the rod elements' forces and moments at (x, rot) to f, tau (N,3); return their
    energy (rodsim.model.rod.assemble_forces with the nodal quaternions it reads)."""
    from rodsim.model import rod

    quat = np.empty((x.shape[0], 4))
    rod.node_quaternions(rot, quat, 0, x.shape[0])
    return rod.assemble_forces(el, x, rot, quat, f, tau)


def run_to(model, dt, t_end, **kw):
    run = dynamics.start(model, dt, **kw)
    dynamics.advance(run, int(round(t_end / dt)))
    return run


@pytest.fixture(params=GROUPS)
def group(request):
    return request.param


def rotation_error(r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """Angle of r1^T r2 per node."""
    c = (np.einsum("nji,nji->n", r1, r2) - 1.0) / 2.0
    return np.arccos(np.clip(c, -1.0, 1.0))


def plate_strip(n1: int, n2: int, length: float = 12.0, width: float = 1.0, triangles=False):
    """(points, frames, conn, index) of a flat rectangular plate mesh in the xy-plane, quads
    (or each quad split into two triangles), frames d1 = x, d2 = y, d3 = z."""
    xs, ys = np.linspace(0, length, n1 + 1), np.linspace(0, width, n2 + 1)
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    points = np.c_[gx.ravel(), gy.ravel(), np.zeros(gx.size)]

    def index(i, j):
        return i * (n2 + 1) + j

    quads = [
        [index(i, j), index(i + 1, j), index(i + 1, j + 1), index(i, j + 1)]
        for i in range(n1)
        for j in range(n2)
    ]
    if triangles:
        conn = [t for a, b, c, d in quads for t in ([a, b, c, c], [a, c, d, d])]
    else:
        conn = quads
    frames = np.repeat(np.eye(3)[None], len(points), axis=0)
    return points, frames, np.array(conn, dtype=np.int64), index


def energies_keeping_momenta(
    run, advance, calls: int, steps: int, lin_tol: float, ang_tol: float
) -> list:
    """Advance `run` calls x steps steps, asserting after each call that the total linear and
    angular momenta equal the initial ones to lin_tol and ang_tol relative to their norms;
    return the total energies, the initial one first."""
    d0 = run.diagnostics()
    energies = [d0.total]
    for _ in range(calls):
        advance(run, steps)
        d = run.diagnostics()
        energies.append(d.total)
        np.testing.assert_allclose(
            d.linear_momentum,
            d0.linear_momentum,
            rtol=0,
            atol=lin_tol * np.linalg.norm(d0.linear_momentum),
        )
        np.testing.assert_allclose(
            d.angular_momentum,
            d0.angular_momentum,
            rtol=0,
            atol=ang_tol * np.linalg.norm(d0.angular_momentum),
        )
    return energies


def cli_run(case, tmp_path, *overrides):
    """`rodsim run CASE -o tmp_path/out.h5 -q --no-vtk --set ...`: (click result, results path)."""
    from click.testing import CliRunner

    from rodsim.cli import main

    out = tmp_path / "out.h5"
    args = ["run", str(case), "-o", str(out), "-q", "--no-vtk"]
    for o in overrides:
        args += ["--set", o]
    return CliRunner().invoke(main, args), out


def frames_in(path) -> int:
    """Complete frames of a results file another process may be writing (0: none yet)."""
    import h5py

    from rodsim.results.reader import frame_count

    try:
        with h5py.File(path, "r", locking=False) as f:
            return frame_count(f)
    except (OSError, KeyError):
        return 0


def interrupted(case, h5, after: int = 2, wait: float = 0.15, *args) -> None:
    """Run case into h5 and SIGTERM it `wait` seconds after `after` frames are on disk (a
    third of the way to the next frame: the stop then falls between two frames); args: more
    options of `rodsim run`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", "run", str(case), "-o", str(h5), "-q", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while frames_in(h5) < after:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.01)
    time.sleep(wait)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, "the run ended before the signal: make it longer"
    assert "SIGTERM" in err, err


# matplotlib's default line colours, in the order rodsim plot's curves take them
LINE_COLOURS = np.array(
    [[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189], [140, 86, 75]]
)


def looked_at(png, curves: int = 1) -> np.ndarray:
    """The picture of a plot, looked at: not blank (axes, labels and curves cover more than 0.5%
    of it) and the colours of its first `curves` curves there (in the curves or the legend's
    swatches, 20 pixels at least); returns it (H,W,3) in 0..255 to compare with another."""
    from matplotlib.image import imread

    img = np.round(imread(png)[:, :, :3] * 255).astype(int)
    assert (img < 240).any(axis=2).mean() > 0.005, f"{png} is blank"
    for colour in LINE_COLOURS[:curves]:
        near = np.abs(img - colour).max(axis=2) < 25
        assert near.sum() >= 20, f"{png} has no curve of colour {colour}"
    return img


def cmdline(proc) -> str:
    """The command line of a process, /proc/<pid> (empty once it is gone)."""
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def tree_bytes(folder) -> dict:
    """Every file under folder (recursively) and its bytes: a test compares it before and
    after a refused or guarded command to show no input or unrelated file changed."""
    from pathlib import Path

    folder = Path(folder)
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
