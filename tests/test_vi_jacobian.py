"""The implicit Jacobian assembled from the terms' analytic tangent blocks
(rodsim.integrators.vi_jacobian) against the complex-step Jacobian, the test oracle
(vi_residual.jacobian), block by block."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import GROUPS, plate_strip
from test_implicit import _busy_model, _deformed
from test_term_hooks_modal import _links
from test_user_terms import STATIC, _ground

from rodsim.integrators import implicit
from rodsim.integrators import vi_residual as vr
from rodsim.model import forces
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad, Pressure
from rodsim.model.plate import make_plates
from rodsim.terms import user as user_terms

RNG = np.random.default_rng(5)

# The complex step is exact to round-off (no subtraction), the analytic blocks to round-off
# times the conditioning of the element formulas: both about 1e-15 of the largest entry of a
# block row; 1e-10 (the issue's bound) leaves five decades for the half-angle series' switch.
TOL = 1e-10


def _blocks_agree(solver, sd, xi):
    """Max over blocks of |J_analytic - J_complex| / (largest complex block of its block row)."""
    analytic = solver.matrix(sd, xi).tobsr(blocksize=(6, 6))
    oracle = dataclasses.replace(solver, slots=None).matrix(sd, xi).tobsr(blocksize=(6, 6))
    p = solver.pattern
    a = analytic.toarray().reshape(len(p.indptr) - 1, 6, -1, 6)
    o = oracle.toarray().reshape(len(p.indptr) - 1, 6, -1, 6)
    worst = 0.0
    for r in range(a.shape[0]):
        scale = max(np.abs(o[r, :, b, :]).max() for b in range(a.shape[2]))
        for b in range(a.shape[2]):
            err = np.abs(a[r, :, b, :] - o[r, :, b, :]).max()
            worst = max(worst, err / scale)
    return worst


def _plates(triangles):
    """A clamped plate strip (quads or triangles) under follower pressure and a follower
    corner force and moment."""
    points, frames, conn, _ = plate_strip(3, 2, length=3.0, width=1.0, triangles=triangles)
    fixed = np.zeros((len(points), 6), dtype=bool)
    fixed[:3] = True  # the edge x = 0, clamped
    return build_model(
        points,
        frames,
        np.zeros((0, 2), dtype=np.int64),
        [],
        plates=make_plates(conn, points, frames, 1e5, 0.3, 0.05, 1.0, drilling=1e-2),
        fixed=fixed,
        loads=[NodalLoad(nodes=[11], force=(0.2, 0.1, 1.0), moment=(0.0, 0.3, 0.0), follower=True)],
        pressures=[Pressure(elements=np.arange(3), value=2.0)],
    )


def _static(solver, model, scale):
    if scale:
        x, rot, quat = _deformed(model, RNG, scale)
    else:
        x, rot = model.x0, model.rot0
        quat = np.empty((model.n_nodes, 4))
        implicit.quaternions(rot, quat)
    zero = np.zeros((model.n_nodes, 6))
    return implicit.step_data(solver, x, rot, quat, zero, 1.0, 0.7, 0.7, vr.STATIC)


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("scale", [0.0, 0.05, 0.3])
def test_static_jacobian_matches_complex_step(group, scale):
    """Rods at an angle with end frames, a follower force and moment, a dead moment, gravity, a
    pin with a free spin, a prescribed rotation, supports in both frames: the equilibrium
    Newton matrix at Delta = 0 (unstressed, mildly and strongly deformed)."""
    model = _busy_model(damping=(0.0, 0.0))
    solver = implicit.make_solver(model, group)
    assert solver.slots is not None, "every term of this model has a tangent"
    sd = _static(solver, model, scale)
    assert _blocks_agree(solver, sd, np.zeros((model.n_nodes, 6))) < TOL


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("triangles", [False, True])
@pytest.mark.parametrize("scale", [0.0, 0.1])
def test_static_plate_jacobian_matches_complex_step(group, triangles, scale):
    """Plates (quads, triangles; drilling) with follower pressure and a follower corner load,
    clamped along an edge: unstressed and deformed."""
    model = _plates(triangles)
    solver = implicit.make_solver(model, group)
    assert solver.slots is not None
    sd = _static(solver, model, scale)
    assert _blocks_agree(solver, sd, np.zeros((model.n_nodes, 6))) < TOL


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("scale", [0.0, 0.05, 0.3])
def test_static_connector_jacobian_matches_complex_step(group, scale):
    """Two rods joined by connectors of every kind in both frames (test_term_hooks_modal's
    _links: springs global and node, plastic in node a's frame, a taut cable and strut;
    their dashpots do not enter the static Jacobian): at the reference, mildly and strongly
    deformed (the plastic link yields there, from the initial committed state)."""
    model = _links()
    solver = implicit.make_solver(model, group)
    assert solver.slots is not None, "every term of this model has a tangent"
    sd = _static(solver, model, scale)
    assert _blocks_agree(solver, sd, np.zeros((model.n_nodes, 6))) < TOL


def test_without_tangent_falls_back_to_complex_step():
    """A model with a term that has no tangent (a user term: a spring to the ground written
    in Python) keeps the complex step (no block slots)."""
    prep, term = _ground(STATIC, damping=None)
    model = user_terms.attach(prep.setup.model, [term])
    assert not forces.analytic_tangent(model.terms)
    assert implicit.make_solver(model, GROUPS[0]).slots is None
    assert forces.analytic_tangent(prep.setup.model.terms)  # without it: analytic


NO_COMPLEX = """
import sys
from numba.core.registry import CPUDispatcher
from rodsim.cli.group import main

main(["run", sys.argv[1], "-o", sys.argv[2], "--quiet"], standalone_mode=False)
typed = [
    (name, str(sig))
    for mod in list(sys.modules.values())
    if getattr(mod, "__name__", "").startswith("rodsim")
    for name, d in vars(mod).items()
    if isinstance(d, CPUDispatcher)
    for sig in d.signatures
]
assert len(typed) > 10, "the equilibrium ran compiled kernels"
print([t for t in typed if "complex" in t[1]])
"""


def test_equilibrium_compiles_no_complex_kernel(tmp_path):
    """An equilibrium of rods, a clamp and a tip load runs without a complex128 kernel: the
    complex step is neither compiled nor loaded (fresh process)."""
    case = Path(__file__).resolve().parents[1] / "inputs/cantilever_tip/cantilever_tip.yaml"
    out = subprocess.run(
        [sys.executable, "-c", NO_COMPLEX, str(case), str(tmp_path / "r.h5")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
