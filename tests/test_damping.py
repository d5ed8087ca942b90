"""Objective strain-rate damping and mass-proportional damping in the explicit scheme.

Both enter as Lagrange-d'Alembert forces: the viscous resultants beta C dstrain/dt go through
the transpose of the same strain map as the elastic ones, so they do no work on rigid
motions and exert no net force or moment (momenta of a free body are untouched).
"""

import dataclasses

import numpy as np
import pytest
from conftest import spaghetti, survives

from rodsim.integrators import dynamics
from rodsim.integrators.stable_step import stable_step
from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix
from rodsim.lie.arrays import m as mat
from rodsim.lie.arrays import v as vec
from rodsim.model import rod_viscous
from rodsim.model.rod import element_response, node_quaternions
from rodsim.model.rod_viscous import damping_forces

RNG = np.random.default_rng(7)


@kernel
def strain_rates(x1, x2, r1, r2, h, v1, v2, w1, w2):
    """The strain rates damping_forces uses, for rotation matrices r1, r2 (tuples)."""
    q = so3.quat_from_matrix(so3.matTmul(r1, r2))
    return rod_viscous._strain_rates(x1, x2, r1, q, h, v1, v2, w1, w2)


def _rot(v):
    return as_matrix(so3.exp(tuple(v)))


@pytest.mark.parametrize("trial", range(6))
def test_strain_rates_match_finite_differences(trial):
    """d/dt of the element strains along x_a + t v_a, exp(t hat w_a) Lambda_a."""
    x1 = RNG.normal(size=3)
    x2 = x1 + np.array([1.0, 0.2, -0.1]) + 0.1 * RNG.normal(size=3)
    r1 = _rot(RNG.normal(size=3))
    r2 = _rot(RNG.normal(size=3) * (0.3 if trial % 2 else 1.5)) @ r1
    v1, v2, w1, w2 = (RNG.normal(size=3) for _ in range(4))
    h, c, z = 1.1, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)

    def strains(t):
        out = element_response(
            tuple(x1 + t * v1),
            tuple(x2 + t * v2),
            mat(_rot(t * w1) @ r1),
            mat(_rot(t * w2) @ r2),
            h,
            c,
            c,
            z,
            z,
        )
        return np.array(out[4]), np.array(out[5])

    eps = 1e-6
    (gp, op), (gm, om) = strains(eps), strains(-eps)
    g_dot, o_dot = strain_rates(
        vec(x1), vec(x2), mat(r1), mat(r2), h, vec(v1), vec(v2), vec(w1), vec(w2)
    )
    # central difference: truncation ~eps^2, round-off ~1e-16/eps
    np.testing.assert_allclose(g_dot, (gp - gm) / (2 * eps), atol=1e-8)
    np.testing.assert_allclose(o_dot, (op - om) / (2 * eps), atol=1e-8)
    # objectivity: a rigid velocity field has zero strain rates
    w, v0 = RNG.normal(size=3), RNG.normal(size=3)
    g_dot, o_dot = strain_rates(
        vec(x1),
        vec(x2),
        mat(r1),
        mat(r2),
        h,
        vec(v0 + np.cross(w, x1)),
        vec(v0 + np.cross(w, x2)),
        vec(w),
        vec(w),
    )
    # round-off of O(|v| / h) ~ 1 quantities
    np.testing.assert_allclose(g_dot, 0.0, atol=1e-14)
    np.testing.assert_allclose(o_dot, 0.0, atol=1e-14)


def _bent_state(model):
    x = model.x0 + 0.05 * RNG.normal(size=model.x0.shape)
    rot = np.array([_rot(0.2 * RNG.normal(size=3)) @ r for r in model.rot0])
    vel, omg = RNG.normal(size=x.shape), RNG.normal(size=x.shape)
    quat = np.empty((len(x), 4))
    node_quaternions(rot, quat, 0, len(x))
    return x, rot, vel, omg, quat


def test_damping_forces_dissipate_and_balance():
    """sum f.v + tau.w = -(dissipated power) <= 0; sum f = 0 and sum (tau + x f) = 0."""
    model = spaghetti()
    x, rot, vel, omg, quat = _bent_state(model)
    f, tau = np.zeros_like(x), np.zeros_like(x)
    power = damping_forces(model.rods, x, rot, quat, vel, omg, 0.01, f, tau)
    assert power > 0
    work = np.sum(f * vel) + np.sum(tau * omg)
    assert work == pytest.approx(-power, rel=1e-12)
    np.testing.assert_allclose(f.sum(axis=0), 0.0, atol=1e-12 * np.abs(f).max())
    np.testing.assert_allclose(
        (tau + np.cross(x, f)).sum(axis=0), 0.0, atol=1e-12 * np.abs(tau).max()
    )
    # rigid motion: no force at all
    w, v0 = RNG.normal(size=3), RNG.normal(size=3)
    f[:], tau[:] = 0.0, 0.0
    damping_forces(
        model.rods, x, rot, quat, v0 + np.cross(w, x), np.tile(w, (len(x), 1)), 0.01, f, tau
    )
    assert np.abs(f).max() < 1e-12
    assert np.abs(tau).max() < 1e-12


def test_free_rod_loses_energy_keeps_momenta(group):
    """Spaghetti with beta = 1e-3 after the pulse: energy decreases frame by frame, both
    momenta stay constant to 1e-10 relative (SO3xR3 and SE3)."""
    model = dataclasses.replace(spaghetti(), beta=1e-3)
    dt = 0.005
    run = dynamics.start(model, dt, group=group)
    dynamics.advance(run, 1000)  # t = 5, the pulse is over
    d0 = run.diagnostics()
    energies = [d0.total]
    for _ in range(20):
        dynamics.advance(run, 100)
        d = run.diagnostics()
        energies.append(d.total)
        np.testing.assert_allclose(
            d.linear_momentum, d0.linear_momentum, atol=1e-10 * np.linalg.norm(d0.linear_momentum)
        )
        np.testing.assert_allclose(
            d.angular_momentum,
            d0.angular_momentum,
            atol=1e-10 * np.linalg.norm(d0.angular_momentum),
        )
    assert np.all(np.diff(energies) < 0)
    assert energies[-1] < energies[0] - 1.0  # visibly damped
    # the rigid part of the energy, |L|^2 / 2m, is never dissipated
    assert energies[-1] > 50.0**2 / (2 * 10.0)


def test_mass_damping_decays_rigid_translation():
    """alpha damps rigid translation: L(t) = L0 exp(-alpha t) (to O(alpha dt))."""
    alpha = 0.5
    model = dataclasses.replace(spaghetti(loaded=False), alpha=alpha)
    state = dynamics.initial_state(model, velocity=(1.0, -2.0, 0.5))
    run = dynamics.start(model, 0.005, state=state)
    lin0 = run.diagnostics().linear_momentum
    dynamics.advance(run, 400)
    lin = run.diagnostics().linear_momentum
    np.testing.assert_allclose(lin, lin0 * np.exp(-alpha * 2.0), rtol=2e-3)


@pytest.mark.parametrize("beta", [1e-3, 1e-2])
def test_damped_stable_step_predicts_blow_up(beta):
    """The step at which the damped spaghetti blows up lies within 1.0-1.1x the estimate
    2/omega (sqrt(1 + xi^2) - xi), xi = beta omega / 2 (it shrinks as beta grows)."""
    model = dataclasses.replace(spaghetti(), beta=beta)
    estimate = stable_step(model)
    assert estimate < stable_step(spaghetti())

    assert survives(model, 1.0 * estimate)
    assert not survives(model, 1.1 * estimate)


def test_case_damping_reaches_the_model_and_the_step():
    from pathlib import Path

    from rodsim import run as runner

    case = Path(__file__).resolve().parents[1] / "inputs" / "spaghetti" / "spaghetti.yaml"
    prep = runner.prepare(
        case, ["solver.damping.strain_rate=0.01", "solver.damping.mass=0.2", "solver.dt=auto"]
    )
    model = prep.setup.model
    assert (model.beta, model.alpha) == (0.01, 0.2)
    assert prep.plan.stable_dt == pytest.approx(stable_step(model), rel=1e-12)
    assert prep.plan.stable_dt < 0.5 * stable_step(spaghetti())
