"""State and reset (docs/python.md, "State and reset"): Simulation.state() takes the whole
state, reset(s) starts again from it, and the steps after it are those of the run that gave
s, bit for bit, in the explicit, implicit (fixed and adaptive steps) and equilibrium solvers;
the restart group is written and read by walking the State (docs/restart.md)."""

from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import small_cantilever

import rodsim
from rodsim import api
from rodsim import state as states
from rodsim.errors import ArgumentError
from rodsim.results import restart

SINE = "{sine: {amplitude: 1, frequency: 3}}"
# a tip force with a time function: a run whose loads change while it steps
CASE = small_cantilever(elements=6, force=f"[0, 0.3, -1], time: {SINE}")
EXPLICIT = "solver={dt: 0.0001, t_end: 0.05}"
# strain-rate and mass damping: the explicit step's end forces carry damping forces from the
# mid-step momenta, which a recomputation at the state would not give (State.solver f, tau)
DAMPED = "solver={dt: 0.00005, t_end: 0.05, damping: {strain_rate: 0.0002, mass: 0.5}}"
IMPLICIT = "solver={scheme: implicit, dt: 0.002, t_end: 0.1}"
ADAPTIVE = "solver={scheme: implicit, t_end: 0.1, adaptive: {tol: 1.0e-4}}"
EQUILIBRIUM = "solver={analysis: equilibrium, equilibrium: {load_steps: 4}}"


def _sim(solver: str, *more) -> rodsim.Simulation:
    return rodsim.Simulation(rodsim.case_from_yaml(CASE, [solver, *more]))


def _now(sim) -> dict:
    """Everything a step leaves that the output reads, copied."""
    s = sim.state()
    frame = sim.frame()
    return {
        **{k: v.copy() for k, v in s.arrays().items()},
        "time": sim.time,
        "steps": sim.steps,
        "kinetic": frame.kinetic,
        "internal": frame.internal,
        "external": frame.external,
    }


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]), k  # bit for bit: the same operations


@pytest.mark.parametrize("solver", [EXPLICIT, DAMPED, IMPLICIT, ADAPTIVE], ids=lambda s: s[7:20])
def test_reset_then_n_steps_equals_the_run_that_gave_the_state(solver):
    sim = _sim(solver)
    sim.advance(7)
    s = sim.state()
    sim.advance(9)
    first = _now(sim)
    sim.advance(5)  # further on: the reset must undo these steps too
    sim.reset(s)
    assert (sim.time, sim.steps) == (s.time, s.count)
    sim.advance(9)
    _assert_same(_now(sim), first)


def test_adaptive_reset_restores_the_held_jacobian():
    """The adaptive controller's Jacobian is part of the state: after another one was formed
    and factorised (here: the held one scaled, as a Jacobian of another step), a reset
    factorises the stored one again, and the steps are those of the run that gave the state
    (a quasi-Newton iteration on another Jacobian converges to other last bits)."""
    from rodsim.integrators import vi_newton

    sim = _sim(ADAPTIVE)
    sim.advance(3)
    s = sim.state()
    held = s.solver["jacobian"].copy()
    assert np.isfinite(s.solver["control"][states.CONTROL.index("h_jacobian")])
    sim.advance(6)
    first = _now(sim)
    run = sim._solver
    run.solver.data[...] = 1.5 * held  # another Jacobian, factorised
    vi_newton.factorise(run.solver, run.control.linear)
    sim.reset(s)
    assert np.array_equal(run.solver.data, held)
    sim.advance(6)
    _assert_same(_now(sim), first)


def test_a_state_is_a_copy_and_the_views_stay_views():
    sim = _sim(EXPLICIT)
    s = sim.state()
    x = sim.state.x  # the live, read-only view
    sim.advance(3)
    assert not np.array_equal(s.x, x)  # the view moved, the State did not
    assert np.array_equal(x, sim.state().x)
    px, prot, pp, ppi = sim.state  # unpacks as the views it always was
    assert px is sim.state.x or np.shares_memory(px, x)
    assert s.kind == "explicit" and s.terms == {}
    # the explicit scheme's own: the forces the next step starts from, the energies, and the
    # energy ledger's sums where the run keeps one
    own = {k for k in s.solver if not k.startswith(states.LEDGER)}
    assert own == {"f", "tau", "energy"}


def test_equilibrium_reset_then_solve_equals_the_solves_that_gave_it():
    sim = _sim(EQUILIBRIUM)
    sim.solve()
    s = sim.state()
    assert s.p is None and s.load == 0.25 and s.count == 1
    sim.solve()
    first = (sim.state.x.copy(), sim.state.rot.copy(), sim.time, sim.steps)
    sim.solve()
    sim.reset(s)
    assert (sim.time, sim.steps) == (0.25, 1)
    sim.solve()  # the next load step: 2/4
    again = (sim.state.x, sim.state.rot, sim.time, sim.steps)
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a, b)


def test_reset_with_the_inputs_of_the_state_replays_a_changed_load():
    """The inputs are not the state: a load set after the state was taken stays in force
    through reset(s); reset(s, s.inputs) puts the inputs back too, and the run then goes on
    as the one that gave s, bit for bit."""
    sim = _sim(EXPLICIT)
    tip = sim.loads["beam.end"]
    sim.advance(4)
    s = sim.state()
    sim.advance(6)
    first = _now(sim)
    tip.force = (0.0, 0.0, 5.0)
    sim.advance(6)
    sim.reset(s)  # the new force stays: the next step starts from its forces
    assert np.array_equal(tip.force, [0.0, 0.0, 5.0])
    sim.advance(6)
    changed = _now(sim)
    assert not np.array_equal(changed["x"], first["x"])
    sim.reset(s, s.inputs)
    assert np.array_equal(tip.force, [0.0, 0.3, -1.0])
    sim.advance(6)
    _assert_same(_now(sim), first)


def test_reset_refuses_a_state_of_another_case_and_changes_nothing():
    sim = _sim(EXPLICIT)
    sim.advance(2)
    before = sim.state()
    other = rodsim.Simulation(
        rodsim.case_from_yaml(small_cantilever(elements=5), [EXPLICIT])
    ).state()
    with pytest.raises(ArgumentError, match="another model"):
        sim.reset(other)
    with pytest.raises(ArgumentError, match="an implicit solver"):
        sim.reset(_sim(IMPLICIT).state())
    with pytest.raises(ArgumentError, match="expected a rodsim.State"):
        sim.reset(before.arrays())
    with pytest.raises(ArgumentError, match="inputs are of another case"):
        sim.reset(before, states.Inputs({}, {}))
    assert sim.steps == 2 and np.array_equal(sim.state.x, before.x)


# --- the restart group, walked from the State ---------------------------------------------


class _Slip:
    """A stand-in term state: the fields a term's `<name>_state` NamedTuple has."""

    _fields = ("slip", "count")

    def __init__(self, n: int):
        self.slip = np.zeros((n, 3))
        self.count = np.zeros(n, dtype=np.int64)


class _Terms:
    """A stand-in ForceTerms whose rods term has state (rodsim.state reads `<name>_state`)."""

    def __init__(self, n: int):
        self.rods_state = _Slip(n)


def test_a_term_state_goes_through_the_restart_group_without_a_list(tmp_path):
    """restart.write and read walk State.arrays(): a term's state fields land under
    terms/<term>/<field> with their own types, and come back into the model's arrays in
    place (check_terms first)."""
    n = 3
    live = _Terms(n)
    live.rods_state.slip[:] = np.arange(9.0).reshape(3, 3)
    live.rods_state.count[:] = [1, 0, 2]
    x = np.zeros((n, 3))
    rot = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()
    s = states.State("explicit", x, rot, x, x, dt=0.1, count=2, terms=states.term_states(live))
    raw = restart.of_state(s)
    assert set(raw.arrays) == {"x", "rot", "p", "pi", "terms/rods/slip", "terms/rods/count"}
    with h5py.File(tmp_path / "r.h5", "w") as f:
        restart.write(f, raw, 0)
        assert f["restart/slot0/terms/rods/count"].dtype == np.int64
        got = restart.check(restart.read(f, "r.h5", "--restart"), "r.h5", "--restart", n)
    fresh = _Terms(n)
    restart.check_terms(got, fresh, "r.h5", "--restart")
    states.restore_terms(fresh, got.state().terms)
    assert np.array_equal(fresh.rods_state.slip, live.rods_state.slip)
    assert np.array_equal(fresh.rods_state.count, live.rods_state.count)
    # a slot written again without the term (another step's kind) keeps no stale group
    with h5py.File(tmp_path / "r.h5", "a") as f:
        restart.write(f, restart.of_state(states.State("explicit", x, rot, x, x, dt=0.1)), 1)
        restart.write(f, restart.of_state(states.State("explicit", x, rot, x, x, dt=0.1)), 2)
        assert "terms" not in f["restart/slot0"] and "terms" not in f["restart/slot1"]


def test_term_states_that_do_not_fit_the_model_are_refused():
    n = 3
    x = np.zeros((n, 3))
    rot = np.broadcast_to(np.eye(3), (n, 3, 3)).copy()

    def raw(terms):
        return restart.of_state(states.State("explicit", x, rot, x, x, dt=0.1, terms=terms))

    good = states.term_states(_Terms(n))
    short = {"rods": {**good["rods"], "slip": np.zeros((n - 1, 3))}}
    nan = {"rods": {**good["rods"], "slip": np.full((n, 3), np.nan)}}
    cases = {
        "older file": (raw({}), _Terms(n), "holds no term states"),
        "a term the model lacks": (raw(good), object(), "which this case's model has not"),
        "a shape of another mesh": (raw(short), _Terms(n), "terms/rods/slip is float64 (2, 3)"),
        "NaN": (raw(nan), _Terms(n), "terms/rods/slip holds NaN"),
    }
    for name, (state, terms, words) in cases.items():
        with pytest.raises(rodsim.CaseError, match="--restart") as info:
            restart.check_terms(state, terms, "r.h5", "--restart")
        assert words in str(info.value), name


def test_a_damped_explicit_restart_is_bit_identical(tmp_path):
    """The explicit restart state holds the forces the next step starts from: with damping
    they carry the mid-step momenta's damping forces, which a recomputation at the state
    does not give (before layout 1.8 the continued run was off by ~1e-11)."""
    case = tmp_path / "case.yaml"
    case.write_text(
        small_cantilever(
            elements=6,
            force=f"[0, 0.3, -1], time: {SINE}",
            solver="{dt: 0.00005, t_end: 0.02, damping: {strain_rate: 0.0002, mass: 0.5}}",
            output="{interval: 0.01, vtk: false}",
        )
    )
    full, part = tmp_path / "full.h5", tmp_path / "part.h5"
    api.run_case(case, full, vtk=False, overrides=("solver.t_end=0.04",))
    api.run_case(case, part, vtk=False)
    api.run_case(case, vtk=False, overrides=("solver.t_end=0.04",), restart=part)
    a, b = rodsim.read_results(full), rodsim.read_results(part)
    assert np.array_equal(a.time, b.time)
    assert np.array_equal(a.position, b.position)
    assert np.array_equal(a.linear_momentum, b.linear_momentum)


def test_an_older_restart_state_without_the_forces_still_continues(tmp_path):
    """A results file of layout 1.7 has no f, tau, energy: the run computes them at the
    state, as before (undamped: the same bits)."""
    case = tmp_path / "case.yaml"
    case.write_text(
        small_cantilever(
            elements=6,
            force=f"[0, 0.3, -1], time: {SINE}",
            solver="{dt: 0.0001, t_end: 0.02}",
            output="{interval: 0.01, vtk: false}",
        )
    )
    full, part = tmp_path / "full.h5", tmp_path / "part.h5"
    api.run_case(case, full, vtk=False, overrides=("solver.t_end=0.04",))
    api.run_case(case, part, vtk=False)
    with h5py.File(part, "r+") as f:
        for slot in restart.SLOTS:
            for name in states.OPTIONAL:
                del f["restart"][slot][name]
    api.run_case(case, vtk=False, overrides=("solver.t_end=0.04",), restart=part)
    a, b = rodsim.read_results(full), rodsim.read_results(part)
    assert np.array_equal(a.position, b.position)
    # some of the three only: not an older file, a damaged one
    with h5py.File(part, "r+") as f:
        slot = f["restart"][f"slot{int(f['restart'].attrs['current'])}"]
        del slot["tau"]
    with pytest.raises(rodsim.CaseError, match="lacks tau"):
        api.run_case(case, vtk=False, overrides=("solver.t_end=0.06",), restart=part)


def test_api_reset_example():
    """docs/examples/api_reset.py (docs/python.md, "State and reset"): the branch with the
    state's own inputs is the unbranched run, bit for bit; the branches start from the same
    state, so they differ by the response to the tip force alone, which is linear in it to
    within the geometric nonlinearity of a sag of 0.2 L (a few percent: 10% allowed)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "docs" / "examples" / "api_reset.py"
    spec = importlib.util.spec_from_file_location("api_reset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main([])
    assert out["same"]
    ends = out["ends"]
    assert ends[0.0] == out["straight"]  # the same force again: the same bits
    lift = ends[1.5] - ends[0.0]
    assert lift > 0 and abs(ends[0.75] - ends[0.0] - 0.5 * lift) < 0.1 * lift


# --- a term with state: the plastic connectors of inputs/connectors/slip_joint.yaml --------

SLIP_JOINT = Path(__file__).resolve().parents[1] / "inputs" / "connectors" / "slip_joint.yaml"
SCHEMES = {
    "explicit": ["solver.t_end=0.3", "output.vtk=false"],
    "implicit": ["solver.t_end=0.3", "solver.scheme=implicit", "solver.dt=0.002",
                 "output.vtk=false"],
}  # fmt: skip


@pytest.mark.parametrize("scheme", SCHEMES)
def test_reset_carries_the_plastic_slip(scheme):
    """The joint carries about half the tip force (60 N sin(4 pi t)) and slips beyond 20 N,
    from t ~ 0.06: at t = 0.1 the slip is under way, and it is part of the State; a reset
    undoes the slip of the steps after it, and the steps after the reset are those of the
    run, slip included, bit for bit."""
    sim = rodsim.Simulation(SLIP_JOINT, SCHEMES[scheme])
    sim.advance_to(0.1)
    s = sim.state()
    slip = s.terms["connectors"]["slip"]
    assert np.abs(slip).max() > 0  # the state that matters: the joint has slipped
    sim.advance_to(0.2)
    first = _now(sim)
    assert not np.array_equal(first["terms/connectors/slip"], slip)
    sim.reset(s)
    live = sim.model.terms.connectors_state  # the kernels' own arrays, written in place
    assert np.array_equal(live.slip, slip)
    sim.advance_to(0.2)
    _assert_same(_now(sim), first)


def test_a_restart_holding_plastic_connectors_is_bit_identical(tmp_path):
    """The connectors' slip goes through the restart group (terms/connectors/) without a
    line of restart code naming it: the continued run equals the uninterrupted one."""
    full, part = tmp_path / "full.h5", tmp_path / "part.h5"
    api.run_case(SLIP_JOINT, full, vtk=False, overrides=("solver.t_end=0.3",))
    api.run_case(SLIP_JOINT, part, vtk=False, overrides=("solver.t_end=0.15",))
    with h5py.File(part) as f:
        slot = f["restart"][f"slot{int(f['restart'].attrs['current'])}"]
        assert np.abs(slot["terms/connectors/slip"][()]).max() > 0
    api.run_case(SLIP_JOINT, vtk=False, overrides=("solver.t_end=0.3",), restart=part)
    a, b = rodsim.read_results(full), rodsim.read_results(part)
    assert np.array_equal(a.time, b.time)
    assert np.array_equal(a.position, b.position)
    assert np.array_equal(a.linear_momentum, b.linear_momentum)
    with h5py.File(full) as f, h5py.File(part) as g:
        last = [h["restart"][f"slot{int(h['restart'].attrs['current'])}"] for h in (f, g)]
        for name in ("slip", "alpha", "work"):
            assert np.array_equal(*(s[f"terms/connectors/{name}"][()] for s in last)), name
