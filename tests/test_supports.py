"""Fixed degrees of freedom (global components of velocity and spin) on both groups."""

import numpy as np
from conftest import run_to, spaghetti

from rodsim.integrators import dynamics


def _fixed(spec: dict[int, str]) -> np.ndarray:
    names = ("ux", "uy", "uz", "rx", "ry", "rz")
    fixed = np.zeros((11, 6), dtype=bool)
    for node, dofs in spec.items():
        for d in dofs.split():
            fixed[node, names.index(d)] = True
    return fixed


def test_clamped_node_does_not_move(group):
    model = spaghetti(fixed=_fixed({0: "ux uy uz rx ry rz"}))
    run = run_to(model, 0.004, 4.0, group=group)
    assert np.array_equal(run.state.x[0], model.x0[0])
    assert np.array_equal(run.state.rot[0], model.rot0[0])
    assert np.abs(run.state.x[-1] - model.x0[-1]).max() > 0.5  # the tip does move


def test_hinge_rotates_only_about_its_global_axis(group):
    """Translations and rx, ry fixed: the node turns about global z only."""
    model = spaghetti(fixed=_fixed({0: "ux uy uz rx ry"}))
    run = run_to(model, 0.004, 4.0, group=group)
    assert np.allclose(run.state.x[0], model.x0[0], atol=1e-14)
    incr = run.state.rot[0] @ model.rot0[0].T
    assert np.allclose(incr @ [0, 0, 1], [0, 0, 1], atol=1e-12)
    angle = np.arctan2(incr[1, 0], incr[0, 0])
    assert abs(angle) > 1e-2  # it did turn
    assert np.allclose(run.state.pi[0, :2], 0.0, atol=1e-9 * np.abs(run.state.pi).max())


def test_roller_keeps_its_fixed_coordinate(group):
    model = spaghetti(fixed=_fixed({0: "uz", 10: "uz"}))
    run = run_to(model, 0.004, 4.0, group=group)
    assert np.allclose(run.state.x[[0, 10], 2], 0.0, atol=1e-13)
    assert np.abs(run.state.x[[0, 10], :2] - model.x0[[0, 10], :2]).max() > 1e-2


def test_pinned_rod_conserves_angular_momentum_about_the_pin_axis(group):
    """A rod pinned at the origin with a free spin about z: no load, so J_z is conserved
    (the pin reaction has no moment about an axis through the pin)."""
    model = spaghetti(fixed=_fixed({0: "ux uy uz"}), loaded=False)
    state = dynamics.initial_state(model, angular_velocity=(0.0, 0.3, 2.0))
    run = dynamics.start(model, 0.004, group=group, state=state)
    j0 = run.diagnostics().angular_momentum[2]
    dynamics.advance(run, 2000)
    j1 = run.diagnostics().angular_momentum[2]
    assert abs(j1 - j0) <= 1e-10 * abs(j0)
