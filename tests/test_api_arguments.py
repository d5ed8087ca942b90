"""The Python API's argument checks (issue 33; docs/python.md, "Argument checks"): a bad
count, time or load value raises rodsim.ArgumentError (a CaseError, ValueError and TypeError)
naming the argument, before anything changes, so that a following good call gives what a
run without the bad call gives, bit for bit."""

import math

import numpy as np
import pytest
from conftest import small_cantilever

import rodsim

CASE = small_cantilever()


@pytest.fixture(scope="module")
def prepared():
    return rodsim.prepare(rodsim.case_from_yaml(CASE))


@pytest.fixture(scope="module")
def reference(prepared):
    """The state after 3 steps with no bad call before them."""
    sim = rodsim.Simulation(prepared)
    sim.advance(3)
    return sim.state.x.copy(), sim.state.p.copy(), sim.time


def _check_refused(sim, call, argument: str):
    with pytest.raises(rodsim.ArgumentError) as info:
        call(sim)
    exc = info.value
    assert isinstance(exc, rodsim.CaseError) and isinstance(exc, ValueError)
    assert isinstance(exc, TypeError) and exc.exit_code == 2
    assert exc.key == argument and argument in str(exc)


BAD_ADVANCES = {
    "a float": (lambda s: s.advance(1.5), "n"),
    "an integral float": (lambda s: s.advance(2.0), "n"),
    "a numpy float": (lambda s: s.advance(np.float64(2.0)), "n"),
    "a bool": (lambda s: s.advance(True), "n"),
    "a string": (lambda s: s.advance("3"), "n"),
    "too many steps": (lambda s: s.advance(10**30), "n"),
    "past the counter": (lambda s: s.advance(2**62), "n"),  # after a step taken: 2**62 + 1
    "a NaN time": (lambda s: s.advance_to(float("nan")), "t"),
    "an infinite time": (lambda s: s.advance_to(math.inf), "t"),
    "a time too far": (lambda s: s.advance_to(1e300), "t"),
    "a string time": (lambda s: s.advance_to("1"), "t"),
    "a NaN force": (lambda s: setattr(s.loads[0], "force", [math.nan, 0, 0]), "loads[0].force"),
    "an infinite gravity": (lambda s: setattr(s, "gravity", [0, 0, -math.inf]), "gravity"),
}


@pytest.mark.parametrize("name", BAD_ADVANCES)
def test_bad_dynamic_argument_refused_and_harmless(prepared, reference, name):
    call, argument = BAD_ADVANCES[name]
    sim = rodsim.Simulation(prepared)
    sim.advance(1)
    _check_refused(sim, call, argument)
    assert sim.steps == 1
    sim.advance(2)  # the state and counters the bad call found: as the reference's
    x, p, t = reference
    assert sim.time == t
    np.testing.assert_array_equal(sim.state.x, x)
    np.testing.assert_array_equal(sim.state.p, p)


def test_integer_counts_accepted(prepared, reference):
    """numpy integers are integers: the same steps as ints."""
    sim = rodsim.Simulation(prepared)
    sim.advance(np.int64(1))
    sim.advance(np.int32(2))
    np.testing.assert_array_equal(sim.state.x, reference[0])


def test_negative_count_refused(prepared):
    sim = rodsim.Simulation(prepared)
    _check_refused(sim, lambda s: s.advance(-1), "n")
    assert sim.steps == 0


@pytest.mark.parametrize("load", [float("nan"), math.inf, "1", True])
def test_bad_load_multiplier_refused_at_once(load):
    """solve(nan) used to run Newton and 12 load-step cuts before failing."""
    sim = rodsim.Simulation(rodsim.case_from_yaml(CASE, ["solver.analysis=equilibrium"]))
    _check_refused(sim, lambda s: s.solve(load), "load")
    assert sim.steps == 0
    good = sim.solve(1.0)
    fresh = rodsim.Simulation(rodsim.case_from_yaml(CASE, ["solver.analysis=equilibrium"]))
    assert fresh.solve(1.0).residual == good.residual
    np.testing.assert_array_equal(sim.state.x, fresh.state.x)
