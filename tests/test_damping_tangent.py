"""The dynamic Jacobian with strain-rate damping and dashpots assembled analytically (the
terms' step_damping_tangent hooks, rodsim.integrators.vi_jacobian_dynamic) against the
complex-step Jacobian (vi_residual.jacobian, the oracle), block by block."""

import dataclasses

import numpy as np
import pytest
from conftest import GROUPS
from test_implicit import _busy_model, _deformed
from test_vi_jacobian_dynamic import _complex_blocks, _worst, runs_agree

from rodsim.integrators import implicit
from rodsim.integrators import vi_jacobian_dynamic as vjd
from rodsim.integrators import vi_residual as vr
from rodsim.model import forces
from rodsim.terms import mass_damping, plates

RNG = np.random.default_rng(3636)

# Both the analytic blocks and the complex step are exact to round-off: about 1e-15 of the
# largest entry of a block row (times the conditioning of the Cayley factors at |h xi| ~ 1).
# Each block is measured against the largest block of its block row, because one node's
# constraint rows (m/h) and its balance rows (K h^2/2 plus the damping's beta K h/2) differ
# by decades and an entry's round-off follows the largest terms summed into its row; an
# entry-wise relative error would divide round-off by blocks that are nearly zero (a dashpot
# block of a node far from it). 1e-10 is the bound.
TOL = 1e-10


def _case(group, scale, model, h=0.05):
    solver = implicit.make_solver(model, group)
    x, rot, quat = _deformed(model, RNG, 0.1)
    mom = RNG.normal(size=(model.n_nodes, 6))
    sd = implicit.step_data(solver, x, rot, quat, mom, h, 0.4, 0.4 + h / 2, vr.DYNAMIC)
    xi = RNG.normal(size=(model.n_nodes, 6)) * scale
    return solver, sd, xi


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("scale", [1.0, 0.05])
@pytest.mark.parametrize("damping", [(0.02, 0.3), (0.5, 0.0), (0.0, 0.0)])
def test_damped_dynamic_jacobian_matches_complex_step(group, scale, damping):
    """test_implicit's busy model (rods at an angle with end frames, a follower load, a dead
    moment, gravity, a pin with a free spin, a prescribed rotation, springs and dashpots in
    both frames) with strain-rate damping beta and mass damping alpha (damping), h = 0.05,
    xi normal of the scale, a deformed start: Solver.matrix, assembled from the terms'
    tangents and damping tangents, against the complex step, block by block."""
    model = _busy_model(damping=damping)
    solver, sd, xi = _case(group, scale, model)
    assert solver.kbuf is not None, "the damped model's Jacobian is analytic"
    data = solver.matrix(sd, xi).tobsr(blocksize=(6, 6))
    p = solver.pattern
    assert np.array_equal(data.indptr, p.indptr) and np.array_equal(data.indices, p.indices)
    assert np.any(solver.kbuf[1]), "the damping's end blocks were used"
    worst = _worst(data.data, _complex_blocks(solver, sd, xi), p)
    print(f"{group} scale {scale} damping {damping}: max relative block error {worst:.2e}")
    assert worst < TOL


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("scale", [1.0, 0.05])
@pytest.mark.parametrize("triangles", [False, True])
def test_damped_plate_jacobian_matches_complex_step(group, scale, triangles):
    """A clamped plate strip (quads or triangles, drilling stiffness) under follower pressure
    and a follower corner load with strain-rate damping beta = 0.05 and mass damping: the
    plates' step_damping_tangent through the whole dynamic Jacobian against the complex
    step."""
    from test_vi_jacobian import _plates

    model = dataclasses.replace(_plates(triangles), beta=0.05, alpha=0.2)
    solver, sd, xi = _case(group, scale, model)
    assert solver.kbuf is not None, "the damped plates' Jacobian is analytic"
    data = solver.matrix(sd, xi).tobsr(blocksize=(6, 6))
    p = solver.pattern
    assert np.any(solver.kbuf[1]), "the damping's end blocks were used"
    worst = _worst(data.data, _complex_blocks(solver, sd, xi), p)
    print(
        f"plates {group} scale {scale} triangles {triangles}: max relative block error {worst:.2e}"
    )
    assert worst < TOL


def test_damping_analytic_rule(monkeypatch):
    """Rods' and plates' strain-rate damping, dashpots and mass damping are analytic; a damped
    term without a step_damping_tangent keeps the complex step (its damped hook is asked only
    where the term is present)."""
    assert vjd.damping_analytic(_busy_model().terms)
    assert vjd.damping_analytic(_busy_model(damping=(0.0, 0.0)).terms)
    assert mass_damping.TERM.step_damping_tangent is None
    assert not forces.damping_analytic(_busy_model().terms)  # the mass damping alone has none
    from test_vi_jacobian import _plates

    plated = _plates(False)
    damped = forces.make_terms(dataclasses.replace(plated, beta=0.01))
    assert vjd.damping_analytic(damped)
    without = tuple(
        dataclasses.replace(t, step_damping_tangent=None) if t is plates.TERM else t
        for t in forces.TERMS
    )
    monkeypatch.setattr(forces, "TERMS", without)
    assert not vjd.damping_analytic(damped)  # damped plates without the hook: complex step
    assert vjd.damping_analytic(plated.terms)  # undamped plates
    assert vjd.damping_analytic(_busy_model().terms)  # damped, but no plates present


@pytest.mark.parametrize("group", GROUPS)
def test_damped_run_matches_complex_jacobian(group):
    """The damped busy model's 20 fixed steps: analytic and complex Jacobian agree
    (runs_agree)."""
    run = runs_agree(_busy_model(), group)
    assert np.any(run.solver.kbuf[1]), "the analytic damped Jacobian was used"
