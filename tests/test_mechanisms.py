"""Free structures in equilibrium (docs/mechanisms.md): loads along a free rigid motion that
nothing balances are refused at once, self-equilibrated loads get holds that carry nothing,
and a mechanism that its loads restrain (a hanging cable) is solved."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import rodsim
from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.integrators import implicit, modal
from rodsim.model import mechanism

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


# --- restraint by elastic supports: the part's bending scale, not the elements' diagonal ------

RAIL = Path(__file__).resolve().parents[1] / "inputs" / "foundation" / "rail.yaml"
# the rail case's data: EI (vertical bending), foundation modulus k (vertical), wheel load P
RAIL_EI, RAIL_K, RAIL_P, RAIL_L = 6.38e6, 5.0e7, 1.0e5, 10.0
RAIL_BETA = (RAIL_K / (4 * RAIL_EI)) ** 0.25


def _rail_deflection(elements: int) -> float:
    """The rail's deflection under the wheel (its mid node) at equilibrium, from `rodsim
    check` (exit 0, as the issue's command line) and a solve in memory."""
    args = ["check", str(RAIL), "--set", f"mesh[0].rod.elements={elements}"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    r = rodsim.run_in_memory(RAIL, overrides=(f"mesh[0].rod.elements={elements}",))
    mid = elements // 2
    assert r.mesh.points[mid] == pytest.approx([RAIL_L / 2, 0, 0])
    return -(r.position[-1, mid, 2] - r.mesh.points[mid, 2])


@pytest.mark.parametrize("elements", [240, 400])
def test_a_finely_meshed_shear_rigid_rail_on_its_foundation_is_held_and_solves(elements):
    """Issue 32: at 240 elements (GA = 1e13) the check judged the foundation no restraint, as
    its threshold grew like GA / h times the node count, and refused the rail as an inverted
    pendulum. The foundation holds it: the mid deflection is Hetenyi's P beta / (2k) to the
    mesh's error plus the finite length's, and the 200-element one to the coarser mesh's
    error. Both errors are O((beta h)^2) (linear elements, foundation lumped to the nodes)
    with a constant below 1 (measured: 0.11 at 200 elements); the finite length changes the
    deflection by ~exp(-beta L / 2) = 0.3% and the same for every mesh."""
    w = _rail_deflection(elements)
    hetenyi = RAIL_P * RAIL_BETA / (2 * RAIL_K)
    mesh = (RAIL_BETA * RAIL_L / elements) ** 2
    assert w == pytest.approx(hetenyi, rel=mesh + np.exp(-RAIL_BETA * RAIL_L / 2))
    coarse = _rail_deflection(200)
    assert w == pytest.approx(coarse, rel=(RAIL_BETA * RAIL_L / 200) ** 2)


def test_a_negligible_foundation_holds_nothing():
    """1e-12 of the rail's foundation (k L^4 / EI ~ 1e-7, below the 1e-6 that restrains) is
    no support, at any mesh: the wheel load's net force has nothing to balance it."""
    soft = f"supports[0].modulus=[{1e7 * 1e-12}, {5e7 * 1e-12}, {5e7 * 1e-12}]"
    for elements in (120, 400):
        with pytest.raises(CaseError) as err:
            rodsim.prepare(RAIL, (f"mesh[0].rod.elements={elements}", soft))
        assert err.value.key == "boundary"
        assert err.value.reason.startswith(
            "no equilibrium: the part with node 0 is free (translation along e1, e2, e3 and "
            "rotation about e2, e3: no support holds it)"
        )


@pytest.mark.parametrize("factor, held", [(2.0, True), (0.5, False)])
def test_a_spring_restrains_from_1e_6_of_the_bending_scale(factor, held):
    """The rod (L = 1, EI = 1e-3: B / L^3 = 1e-3) may only translate along e3; a spring k
    along e3 at its end holds that translation when k >= 1e-6 B / L^3 = 1e-9 (docs), here
    at twice and half of it, whatever the elements' diagonal (EA / h = 2e5)."""
    case = rodsim.case_from_yaml(
        ROD.format(
            boundary="[{set: cable.all, fix: [ux, uy, rx, ry, rz]}]",
            loads="[{set: cable.end, force: [0, 0, -1.0e-9]}]",
        )
        + f"supports: [{{set: cable.end, spring: [0, 0, {factor * 1e-9}]}}]\n"
    )
    if held:
        rodsim.prepare(case)
    else:
        with pytest.raises(CaseError) as err:
            rodsim.prepare(case)
        assert "is free (translation along e3: no support holds it)" in err.value.reason


def test_the_supports_work_is_the_tangents_along_rigid_motions():
    """The supports' stiffness along the rigid motions, taken from the supports alone, is the
    model's tangent stiffness along them (the elements add 0): a skew rod on a foundation,
    with translational and rotational springs in its section frame. The elements' round-off
    along a rigid motion, ~ eps x their diagonal (EA / h = 4.4e4) x 11 nodes = 1e-10, is
    1.5e-13 of the supports' largest entry (694): checked to 100 times that."""
    case = rodsim.case_from_yaml(
        """
rodsim: 1
mesh:
  - rod: {name: r, from: [0, 0, 0], to: [1, 2, 0.5], elements: 10, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1.0, EI: [2.0, 3.0], rhoA: 1,
      rhoI: [1.0e-2, 1.0e-2]}
supports:
  - {foundation: r.all, modulus: [1, 20, 300]}
  - {set: r.end, spring: [5, 6, 7], rotational_spring: [8, 9, 10], frame: section}
solver: {analysis: equilibrium}
"""
    )
    model = rodsim.prepare(case).setup.model
    n = model.n_nodes
    nodes = np.arange(n)
    center = model.x0.mean(axis=0)
    size = float(np.linalg.norm(np.ptp(model.x0, axis=0)))
    r = mechanism.rigid_basis(model.x0, center, size)
    quat = np.empty((n, 4))
    implicit.quaternions(model.rot0, quat)
    k, _ = modal.matrices(model, "SO3xR3", model.x0, model.rot0, quat, 0.0)
    full = r.reshape(6 * n, 6)
    tangent = full.T @ (k @ full)
    exact = mechanism.support_work(model, nodes, r)
    assert np.linalg.eigvalsh(exact).min() > 0  # every rigid motion held
    assert np.abs(exact - tangent).max() <= 1.5e-11 * np.abs(exact).max()


@pytest.mark.parametrize("factor, held", [(2.0, True), (0.5, False)])
def test_a_plates_bending_scale_is_d_over_l_squared(factor, held):
    """A 1 x 1 plate (L = sqrt 2, D = E t^3 / (12 (1 - nu^2)): B / L^3 = D L / L^3 = D / 2)
    may only translate along e3; a spring along e3 at a corner holds it from 1e-6 D / 2."""
    d = 1.0e4 * 0.05**3 / (12 * (1 - 0.3**2))
    k = factor * 1e-6 * d / 2
    case = rodsim.case_from_yaml(
        f"""
rodsim: 1
mesh:
  - rectangle: {{name: deck, origin: [0, 0, 0], size: [1, 1], elements: [2, 2], section: p}}
sections:
  p: {{type: plate, material: {{E: 1.0e4, nu: 0.3, rho: 1.0}}, thickness: 0.05}}
sets:
  corner: {{near: [1, 1, 0]}}
boundary: [{{set: deck.all, fix: [ux, uy, rx, ry, rz]}}]
supports: [{{set: corner, spring: [0, 0, {k}]}}]
loads: [{{set: corner, force: [0, 0, {-k}]}}]
solver: {{analysis: equilibrium}}
"""
    )
    if held:
        rodsim.prepare(case)
    else:
        with pytest.raises(CaseError) as err:
            rodsim.prepare(case)
        assert "is free (translation along e3: no support holds it)" in err.value.reason
