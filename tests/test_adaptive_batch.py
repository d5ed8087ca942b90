"""The adaptive implicit steps in compiled batches (rodsim.integrators.adaptive_batch): the
same steps as the Python-driven ones (rodsim.integrators.adaptive), bit for bit, on every
path the batch takes; stop requests between batches; dt_min; when a run compiles the batch."""

import time
from types import SimpleNamespace

import h5py
import numpy as np
import pytest
from test_adaptive import CANTILEVER

import rodsim
from rodsim import api, kernel_cache, solvers
from rodsim.errors import NumericalError
from rodsim.integrators import adaptive, adaptive_batch, implicit

# a cantilever whipped by a tip pulse (inputs/violent_pulse, shorter): energy-conserving
# steps, a kink in the load's time function
PULSE = CANTILEVER.format(
    n=8, peak=-30, solver="{scheme: implicit, t_end: 0.4, adaptive: {tol: 1.0e-3}}", interval=0.05
)

# two rods joined by a plastic connector (a term with state: the accept hooks), strain-rate
# and mass damping, gravity, a follower tip load and a prescribed rotation, on SE(3), without
# the energy correction
BUSY = """
rodsim: 1
mesh:
  - rod: {name: first, from: [0, 0, 0], to: [1, 0, 0], elements: 5, section: s, up: [0, 0, 1]}
  - rod: {name: second, from: [2, 0, 0], to: [1.01, 0, 0], elements: 5, section: s,
          up: [0, 0, 1]}
sections:
  s: {type: rod, EA: 1.0e5, GA: [1.0e5, 1.0e5], GJ: 50, EI: [50, 50], rhoA: 1.0,
      rhoI: [1.0e-3, 1.0e-3]}
boundary:
  - {set: first.start, fix: all}
  - {set: second.start, prescribe: {rotation: [0.3, 0, 0], time: {ramp: 0.5}}}
connectors:
  - {between: [first.end, second.end], kind: plastic, stiffness: 1.0e4, yield_force: 5,
     rotational_stiffness: [10, 10, 10]}
loads:
  - {set: first.end, force: [0, 10, -40], follower: true, time: {sine: {amplitude: 1,
     frequency: 3}}}
  - gravity: [0, 0, -9.81]
solver: {scheme: implicit, group: SE3, t_end: 0.3, conserve_energy: false,
         damping: {strain_rate: 1.0e-3, mass: 0.5}, adaptive: {tol: 1.0e-3}}
output: {interval: 0.05, vtk: false}
"""


def _outputs(path):
    """Every dataset of a results file: frames, energies, ledger and solver columns, and the
    restart slot written at the end (controller, held Jacobian, state; the other slot holds
    whichever frame the once-a-second restart writes last caught)."""
    found = {}
    with h5py.File(path) as f:
        last = f"restart/slot{f['restart'].attrs['current']}/"

        def keep(name, obj):
            if isinstance(obj, h5py.Dataset) and (name.startswith(last) or "restart" not in name):
                found[name.replace(last, "restart/")] = obj[()]

        f.visititems(keep)
    return found


def _case(tmp_path, text, name="case.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def compiled(monkeypatch):
    """The batch compiled in this process when first needed (as rodsim warmup does), not
    only for long runs, and the Python-driven steps refused: every step is the batch's."""
    monkeypatch.setattr(adaptive_batch, "COMPILE_HERE", True)

    def refused(*args, **kwargs):
        raise AssertionError("a Python-driven step where the batch should run")

    monkeypatch.setattr(adaptive, "advance_to", refused)
    return monkeypatch


def _python_path(monkeypatch):
    monkeypatch.undo()
    monkeypatch.setattr(adaptive_batch, "batchable", lambda run, c: False)


@pytest.mark.parametrize("text", [PULSE, BUSY], ids=["pulse", "busy"])
def test_batches_take_the_python_paths_steps_bit_for_bit(tmp_path, compiled, text):
    """The batch is adaptive._attempt and advance_to operation for operation: every frame,
    the steps, iterations and the energy ledger are equal to the last bit."""
    case = _case(tmp_path, text)
    prep = rodsim.prepare(rodsim.load_case(case))
    run = solvers.start(prep)
    assert adaptive_batch.batchable(run, run.control)  # the batch serves this case
    batch, python = tmp_path / "batch.h5", tmp_path / "python.h5"
    api.run_case(case, batch, vtk=False)
    _python_path(compiled)
    api.run_case(case, python, vtk=False)
    a, b = _outputs(batch), _outputs(python)
    assert a.keys() == b.keys()
    assert "restart/jacobian" in a and "energy/dissipated_by_term" in a
    for name in a:
        assert np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind == "f"), name
    with h5py.File(batch) as f:
        assert np.max(f["solver/iterations"][()]) > 1  # Newton worked: a real comparison


def test_the_busy_case_exercises_the_plastic_slip(tmp_path, compiled):
    """The accept hooks run in the batch: the plastic connector slips (its state moves)."""
    out = tmp_path / "busy.h5"
    api.run_case(_case(tmp_path, BUSY), out, vtk=False)
    with h5py.File(out) as f:
        slot = f"restart/slot{f['restart'].attrs['current']}"
        slip = f[f"{slot}/terms/connectors/slip"][()]
    assert np.max(np.abs(slip)) > 0.0


def test_a_stop_request_is_asked_between_batches(tmp_path, compiled):
    """stop() is asked before each batch of BATCH steps; a true answer ends the stepping where
    the last batch ended, between frames."""
    compiled.setattr(adaptive_batch, "BATCH", 3)
    prep = rodsim.prepare(rodsim.load_case(_case(tmp_path, PULSE)))
    run = solvers.start(prep)
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 4

    run.stop = stop
    implicit.advance(run, prep.plan.n_steps)
    c = run.control
    assert c.accepted + c.rejected == 4 * 3  # four batches of three steps, then the stop
    assert 0.0 < run.time < 0.05  # inside the first frame interval
    assert c.partial == run.time


def test_a_step_below_dt_min_stops_the_batch_with_advice(tmp_path, compiled):
    text = PULSE.replace(
        "adaptive: {tol: 1.0e-3}", "dt: 0.01, adaptive: {tol: 1.0e-12, dt_min: 0.001}"
    )
    with pytest.raises(NumericalError, match="dt_min = 0.001 at t = .*local error"):
        api.run_case(_case(tmp_path, text), tmp_path / "out.h5", vtk=False)


class _Child:
    """A stand-in for kernel_cache.Ahead."""

    done = False

    def finished(self):
        return self.done


def _compiling(monkeypatch, cached=False):
    """_ready's view of the cache and of compile_ahead, faked: (the forks asked, the child,
    the cache's answer)."""
    answer, forks, child = [cached], [], _Child()
    monkeypatch.setattr(kernel_cache, "cached", lambda dispatcher, types: answer[0])
    monkeypatch.setattr(kernel_cache, "compile_ahead", lambda jobs: forks.append(jobs) or child)
    monkeypatch.setattr(adaptive_batch, "LONG_AFTER", 0.01)
    return forks, child, answer


def test_a_long_run_compiles_the_batch_meanwhile_and_switches_to_it(monkeypatch):
    """Not in the cache: the Python steps go on; once they project a long run (LONG), the
    batch compiles in a second process, and the steps switch to it when that is done."""
    forks, child, answer = _compiling(monkeypatch)
    monkeypatch.setattr(adaptive_batch, "LONG", 1.0)
    c, args = SimpleNamespace(batch=None), (1.0, 2)
    assert not adaptive_batch._ready(c, args, 0.0, 100.0)
    time.sleep(0.02)
    # 0.02 s for 0.001 of 100: about 2000 s to go, longer than LONG
    assert not adaptive_batch._ready(c, args, 0.001, 100.0)
    assert len(forks) == 1 and forks[0][0][0] is adaptive_batch.steps
    assert not adaptive_batch._ready(c, args, 0.002, 100.0)  # the child at work
    child.done, answer[0] = True, True
    assert adaptive_batch._ready(c, args, 0.003, 100.0)
    assert c.batch is True and len(forks) == 1


def test_a_short_run_keeps_the_python_steps(monkeypatch):
    """A run projected to end sooner than LONG compiles nothing more; one cached uses the
    batch at once."""
    forks, _, _ = _compiling(monkeypatch)
    monkeypatch.setattr(adaptive_batch, "LONG", 1.0e9)
    c, args = SimpleNamespace(batch=None), (1.0, 2)
    assert not adaptive_batch._ready(c, args, 0.0, 100.0)
    time.sleep(0.02)
    assert not adaptive_batch._ready(c, args, 50.0, 100.0)
    assert c.batch is False and not forks
    _compiling(monkeypatch, cached=True)
    c = SimpleNamespace(batch=None)
    assert adaptive_batch._ready(c, args, 0.0, 100.0) and c.batch is True
