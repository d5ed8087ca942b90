"""Free structures in equilibrium (docs/mechanisms.md): loads along a free rigid motion that
nothing balances are refused at once, self-equilibrated loads get holds that carry nothing,
and a mechanism that its loads restrain (a hanging cable) is solved."""

import numpy as np
import pytest

import rodsim
from rodsim.errors import CaseError

ROD = """
rodsim: 1
mesh:
  - rod: {{name: cable, from: [0, 0, 0], to: [1, 0, 0], elements: 20, up: [0, 0, 1],
           section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1.0e-3, EI: [1.0e-3, 1.0e-3], rhoA: 1,
      rhoI: [1.0e-4, 1.0e-4]}}
boundary: {boundary}
loads: {loads}
solver: {{analysis: equilibrium, equilibrium: {{load_steps: 1, tol: 1.0e-11}}}}
"""
RING = """
rodsim: 1
mesh:
  - arc: {{name: ring, center: [0, 0, 0], radius: 5, start: [5, 0, 0], normal: [0, 0, 1],
           angle: 360, elements: 80, section: ring}}
sections:
  ring: {{type: rod, EA: 3.0e4, GA: [3.0e4, 3.0e4], GJ: 7.0e3, EI: [7.0e3, 7.0e3], rhoA: 1,
         rhoI: [10, 10]}}
sets:
  east: {{near: [5, 0, 0]}}
  west: {{near: [-5, 0, 0]}}
  north: {{near: [0, 5, 0]}}
boundary: {boundary}
loads:
  - {{set: east, moment: [0, 800, 0]}}
  - {{set: west, moment: [0, -800, 0]}}
solver: {{analysis: equilibrium, equilibrium: {{load_steps: 4, tol: 1.0e-11}}}}
"""


def rod(boundary="[]", loads="[{set: cable.end, force: [0, 0, -1]}]"):
    return rodsim.case_from_yaml(ROD.format(boundary=boundary, loads=loads))


def test_a_free_rod_under_a_tip_force_is_refused_with_its_free_motions():
    with pytest.raises(CaseError) as err:
        rodsim.prepare(rod())
    assert err.value.key == "boundary"
    assert "no equilibrium: the part with node 0 is free (translation along e1, e2, e3 and " in (
        err.value.reason
    )
    assert "rotation about e1, e2, e3" in err.value.reason
    assert "net force (0, 0, -1) along its free translations" in err.value.reason


def test_only_the_free_motions_are_named():
    """Held in x and z at both ends, the rod slides along e2 and spins about its axis e1:
    a force along e2 is refused naming those two motions only."""
    case = rod(
        boundary="[{set: cable.start, fix: [ux, uz, rz]}, {set: cable.end, fix: [uz]}]",
        loads="[{set: cable.end, force: [0, 2, 0]}]",
    )
    with pytest.raises(CaseError) as err:
        rodsim.prepare(case)
    assert "is free (translation along e2 and rotation about e1: no support" in err.value.reason


def test_a_dead_couple_on_a_free_rotation_is_refused():
    """Pinned at one end, turned by a dead moment about e3 and nothing else: no position
    balances a couple that stays the same."""
    case = rod(
        boundary="[{set: cable.start, fix: [ux, uy, uz]}]",
        loads="[{set: cable.end, moment: [0, 0, 0.5]}]",
    )
    with pytest.raises(CaseError) as err:
        rodsim.prepare(case)
    assert "its loads are moments with a net moment along a free rotation" in err.value.reason


def test_a_free_ring_under_opposite_moments_is_solved_with_holds_that_carry_nothing():
    """The ring of inputs/ring with its moments at 800 in equilibrium: all six rigid motions
    free, the loads self-equilibrated. The automatic holds give the deformation that holding
    it at another node gives (pairwise distances to 1e-9 of the displacement, both solves at
    1e-11), and carry nothing (reactions below 1e-12 of the loads)."""
    free = rodsim.prepare(rodsim.case_from_yaml(RING.format(boundary="[]")))
    notes = [n for n in free.setup.mesh.notes if n.startswith("rigid motions held")]
    assert notes and "held at node" in notes[0] and "(ux, uy, uz, rx, ry, rz)" in notes[0]
    a = rodsim.run_in_memory(free.case)
    b = rodsim.run_in_memory(
        rodsim.case_from_yaml(RING.format(boundary="[{set: north, fix: all}]"))
    )
    pa, pb = a.position[-1], b.position[-1]
    da = np.linalg.norm(pa[:, None] - pa[None], axis=2)
    db = np.linalg.norm(pb[:, None] - pb[None], axis=2)
    moved = np.abs(pa - a.mesh.points).max()
    assert moved > 1.0  # a large deformation
    assert np.abs(da - db).max() <= 1e-9 * moved
    assert np.abs(a.reaction_moment[-1]).max() <= 1e-12 * 800
    assert np.abs(a.reaction_force[-1]).max() <= 1e-12 * 800


def test_a_cable_pinned_at_one_end_swings_down_under_gravity():
    """A mechanism its load restrains: pinned at one end, the horizontal cable hangs down,
    stretched by its weight: tip at -(L + rho A g L^2 / (2 EA)) (bending stiffness 1e-3 of
    the weight's moment: a straight vertical cable)."""
    case = rod(
        boundary="[{set: cable.start, fix: [ux, uy, uz]}]",
        loads="[{gravity: [0, 0, -9.81]}]",
    )
    prep = rodsim.prepare(case)
    assert any(n.startswith("mechanism: the part") for n in prep.setup.mesh.notes)
    tip = rodsim.run_in_memory(case).position[-1, -1]
    assert tip == pytest.approx([0, 0, -(1 + 9.81 / (2 * 1.0e4))], abs=1e-8)


def test_dynamics_and_modes_of_a_free_structure_are_not_checked():
    """The checks are an equilibrium's: a free rod's dynamics and its modes about the
    reference run (six rigid modes at zero frequency)."""
    case = rod()
    rodsim.prepare(case, ("solver.analysis=dynamic", "solver.t_end=0.01"))
    modes = rodsim.modes(case, ("solver.analysis=modal",), count=8, about="reference")
    assert int(modes.rigid.sum()) == 6


@pytest.mark.parametrize(
    "boundary, loads, words",
    [
        # an inverted pendulum: pinned at its foot, pushed toward the pin at its tip
        (
            "[{set: cable.start, fix: [ux, uy, uz]}]",
            "[{set: cable.end, force: [-1, 0, 0]}]",
            "no stable equilibrium",
        ),
        # a free bar under dead compression: it turns away from its line
        (
            "[]",
            "[{set: cable.end, force: [-1, 0, 0]}, {set: cable.start, force: [1, 0, 0]}]",
            "no stable equilibrium",
        ),
        # balanced at load 1 but not at load 1/2 on the way (load_steps: 2)
        (
            "[]",
            "[{set: cable.end, force: [0, 0, -1], time: {table: [[0, 0], [0.5, 1], [1, 0]]}}]",
            "no equilibrium",
        ),
    ],
)
def test_loads_balanced_only_at_first_order_or_only_at_the_end_are_refused(boundary, loads, words):
    case = rod(boundary, loads)
    with pytest.raises(CaseError) as err:
        rodsim.prepare(case, ("solver.equilibrium.load_steps=2",))
    assert err.value.key == "boundary" and err.value.reason.startswith(words)


def test_a_free_bar_in_tension_is_held_and_stretches_by_fl_over_ea():
    """The stable counterpart of the bar in compression: held, stretched by F L / EA."""
    case = rod(
        loads="[{set: cable.end, force: [100, 0, 0]}, {set: cable.start, force: [-100, 0, 0]}]"
    )
    r = rodsim.run_in_memory(case)
    length = np.linalg.norm(r.position[-1, -1] - r.position[-1, 0])
    assert length == pytest.approx(1 + 100 / 1.0e4, rel=1e-9)


def test_a_mechanism_solved_as_it_is_keeps_its_free_translations_held():
    """A free rod turned by a couple of forces (+z at the start, -z at the tip): it swings to
    the line of the forces about a held node, which stays put, instead of drifting off."""
    case = rod(loads="[{set: cable.start, force: [0, 0, 1]}, {set: cable.end, force: [0, 0, -1]}]")
    prep = rodsim.prepare(case)
    note = next(n for n in prep.setup.mesh.notes if n.startswith("mechanism"))
    assert "its free translations held at node 10 (ux, uy, uz)" in note
    r = rodsim.run_in_memory(case)
    # held to the equilibrium's constraint tolerance, 1e-12 of the model's size
    assert np.abs(r.position[-1, 10] - r.mesh.points[10]).max() <= 1e-10
    chord = r.position[-1, -1] - r.position[-1, 0]
    assert abs(chord[0]) < 1e-6 and chord[2] < -0.99  # along the forces' line, tip down


def test_modes_about_a_held_equilibrium_are_the_free_structures_and_buckling_is_refused():
    ring = rodsim.case_from_yaml(RING.format(boundary="[]"))
    modes = rodsim.modes(ring, count=8, about="equilibrium")
    assert (modes.frequency[:6] < 1e-4).all() and modes.frequency[6] > 0.5  # six rigid modes
    tension = rod(
        loads="[{set: cable.end, force: [1, 0, 0]}, {set: cable.start, force: [-1, 0, 0]}]"
    )
    with pytest.raises(CaseError) as err:
        rodsim.prepare(tension, ("solver.analysis=buckling",))
    assert "linear buckling needs the structure held" in err.value.reason


def test_a_mechanism_that_cannot_balance_is_named_as_the_likely_cause():
    """Pinned at one end with a tip force 1 and a dead moment 2 > F L: no position balances
    it; the failed load step names the mechanism."""
    case = rod(
        "[{set: cable.start, fix: [ux, uy, uz]}]",
        "[{set: cable.end, force: [0, 0, -1], moment: [0, 2, 0]}]",
    )
    with pytest.raises(rodsim.NumericalError) as err:
        rodsim.run_in_memory(case, overrides=("solver.equilibrium.max_steps=30",))
    assert "likely cause: the structure is a mechanism" in str(err.value)
