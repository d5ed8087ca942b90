"""Rods meeting at an angle (frames): each element keeps its own section axes at a shared node.

The element uses Lambda_a Q_ea at its ends (RodElements.offset); without that, the element
next to a corner would interpolate between the two legs' frames and mix axial and shear
stiffness. These tests would fail if the offsets were ignored.
"""

from pathlib import Path

import numpy as np
import pytest

from rodsim import run as runner
from rodsim.integrators import dynamics
from rodsim.model.rod import element_fields
from rodsim.terms.rods import element_max_frequencies

L_FRAME = """
rodsim: 1
mesh:
  - rod: {name: a, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s, up: [0, 0, 1]}
  - rod: {name: b, from: [1, 0, 0], to: [1, 1, 0], elements: 4, section: s, up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e3, GA: [1.0e6, 2.0e6], GJ: 50, EI: [20, 30], rhoA: 1, rhoI: [0.01, 0.02]}
loads:
  - set: b.end
    force: [0.3, 0, 0.2]
    moment: [0, 0.1, 0]
    time: {table: [[0, 0], [0.05, 1], [0.1, 0]]}
solver: {dt: auto, t_end: 0.1}
"""


@pytest.fixture
def lframe(tmp_path):
    case = tmp_path / "l.yaml"
    case.write_text(L_FRAME)
    return runner.prepare(case)


def _fields(model, x, rot):
    e = model.n_elements
    out = [np.empty((e, 3)) for _ in range(4)]
    element_fields(model.rods, x, rot, *out)
    return out[0] - model.rods.gamma0, out[1] - model.rods.omega0, out[2], out[3]


def test_corner_node_is_shared_with_offsets(lframe):
    mesh, model = lframe.setup.mesh, lframe.setup.model
    assert mesh.n_nodes == 9  # the corner node is merged
    assert model.rods.has_offset.sum() == 1  # only the first element of leg b
    np.testing.assert_allclose(_fields(model, model.x0, model.rot0)[0], 0.0, atol=1e-15)


def test_stretching_one_leg_is_pure_axial_strain(lframe):
    model = lframe.setup.model
    eps = 1e-3
    x = model.x0.copy()
    leg_b = lframe.setup.mesh.sets["b.all"]
    x[leg_b, 1] *= 1 + eps  # stretch b along its axis y, corner fixed at y = 0
    strain, curvature, force, _ = _fields(model, x, model.rot0)
    b = np.arange(4, 8)
    np.testing.assert_allclose(strain[b], [[eps, 0, 0]] * 4, atol=1e-14)
    np.testing.assert_allclose(force[b], [[1e3 * eps, 0, 0]] * 4, atol=1e-11)
    np.testing.assert_allclose(strain[:4], 0.0, atol=1e-15)
    np.testing.assert_allclose(curvature, 0.0, atol=1e-14)


def test_corner_element_frequency_matches_the_others(lframe):
    """With the element's own axes, all 8 equal elements have the same highest frequency."""
    omega = element_max_frequencies(lframe.setup.model)
    np.testing.assert_allclose(omega, omega[0], rtol=1e-6)


def test_corner_inertia_in_the_element_axes(lframe):
    """At the corner, each leg's half-element inertia diag(rhoJ, rhoI2, rhoI3) h/2 is added in
    that leg's own axes, expressed in the node's frame (the frame of leg a)."""
    model = lframe.setup.model
    corner = int(lframe.setup.mesh.sets["a.end"][0])
    h = 0.25
    own = np.diag([0.03, 0.01, 0.02]) * h / 2
    q = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])  # leg b's axes in leg a's frame
    np.testing.assert_allclose(model.inertia[corner], own + q @ own @ q.T, atol=1e-15)


def _after_pulse(model, dt, t_end):
    """Energies and momenta of a free L-frame from t = 0.1 (pulse over) to t_end."""
    run = dynamics.start(model, dt)
    dynamics.advance(run, round(0.1 / dt))
    energies, lin, ang = [], [], []
    while run.time < t_end - 1e-12:
        dynamics.advance(run, round(0.005 / dt))
        d = run.diagnostics()
        energies.append(d.total)
        lin.append(d.linear_momentum)
        ang.append(d.angular_momentum)
    return np.array(energies), np.array(lin), np.array(ang)


def test_free_frame_conserves_momenta_and_energy(lframe):
    """After the load pulse a free L-frame keeps its momenta to round-off, and its energy
    band shrinks as dt^2 (the forces are the exact gradient with offsets too)."""
    model = lframe.setup.model
    dt = 0.2 * lframe.plan.stable_dt
    dt = 0.005 / round(0.005 / dt)  # frames and the pulse end on the step grid
    bands = []
    for h in (dt, dt / 2):
        energies, lin, ang = _after_pulse(model, h, 0.3)
        np.testing.assert_allclose(lin, lin[:1].repeat(len(lin), 0), atol=1e-13)
        np.testing.assert_allclose(ang, ang[:1].repeat(len(ang), 0), atol=1e-13)
        bands.append(energies.max() - energies.min())
    assert np.abs(lin[0]).max() > 1e-4  # it does move
    assert 3.5 < bands[0] / bands[1] < 4.5


PORTAL_PARTS = """
rodsim: 1
mesh:
  - rod: {name: left, from: [0, 0, 0], to: [0, 0, 4], elements: 8, section: column, up: [0, 1, 0]}
  - rod: {name: beam, from: [0, 0, 4], to: [5, 0, 4], elements: 10, section: beam, up: [0, 1, 0]}
  - rod: {name: right, from: [5, 0, 0], to: [5, 0, 4], elements: 8, section: column,
          up: [0, 1, 0]}
sections:
  column: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {tube: [0.1, 0.09]}}
  beam: {type: rod, material: {E: 2.1e11, nu: 0.3, rho: 7850}, shape: {rectangle: [0.1, 0.2]}}
boundary:
  - {set: left.start, fix: all}
  - {set: right.start, fix: all}
solver: {t_end: 1}
"""


def test_gmsh_frame_matches_generated_parts(tmp_path):
    """The portal frame read from frame.msh equals the same frame built from rod parts."""
    from_file = runner.prepare(
        Path(__file__).resolve().parents[1] / "inputs" / "frame" / "frame.yaml"
    ).setup.model
    case = tmp_path / "parts.yaml"
    case.write_text(PORTAL_PARTS)
    from_parts = runner.prepare(case).setup.model
    assert from_parts.n_nodes == from_file.n_nodes == 27
    assert from_parts.fixed.sum() == from_file.fixed.sum() == 12
    # same physics: nodal masses and inertias, element frequencies (node order differs)
    order_file = np.lexsort(from_file.x0.T)
    order_parts = np.lexsort(from_parts.x0.T)
    np.testing.assert_allclose(from_parts.x0[order_parts], from_file.x0[order_file], atol=1e-10)
    np.testing.assert_allclose(from_parts.mass[order_parts], from_file.mass[order_file], rtol=1e-9)
    np.testing.assert_allclose(
        np.sort(element_max_frequencies(from_parts)),
        np.sort(element_max_frequencies(from_file)),
        rtol=1e-6,
    )
