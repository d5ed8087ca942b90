"""Adaptive and energy-conserving steps of the implicit scheme (docs/implicit_scheme.md,
"Adaptive steps" and "Energy-conserving steps")."""

from pathlib import Path

import h5py
import numpy as np
import pytest

import rodsim
from rodsim import api, sequence, solvers
from rodsim.errors import CaseError, NumericalError
from rodsim.integrators import adaptive, adaptive_batch, banded, implicit
from rodsim.integrators import vi_residual as vr
from rodsim.model import forces

ROOT = Path(__file__).resolve().parents[1]
VIOLENT = ROOT / "inputs" / "violent_pulse" / "violent_pulse.yaml"

CANTILEVER = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: {n}, up: [0, 0, 1], section: s}}
sections:
  s: {{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, EI: [1, 1], rhoA: 1,
      rhoI: [1.0e-4, 1.0e-4]}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, {peak}], time: {{table: [[0, 0], [0.1, 1], [0.2, 0]]}}}}
solver: {solver}
output: {{interval: {interval}, vtk: false}}
"""


def _case(tmp_path, solver, n=10, peak=-5, interval=0.05, name="case.yaml"):
    path = tmp_path / name
    path.write_text(CANTILEVER.format(n=n, peak=peak, solver=solver, interval=interval))
    return path


def _energy(h5):
    with h5py.File(h5) as f:
        return f["time"][()], f["energy/kinetic"][()] + f["energy/internal"][()]


@pytest.fixture(scope="module")
def violent(tmp_path_factory):
    out = tmp_path_factory.mktemp("violent") / "violent.h5"
    result = api.run_case(VIOLENT, out, vtk=False)
    prep = rodsim.prepare(rodsim.load_case(VIOLENT))
    return result, out, prep


def test_violent_pulse_runs_to_the_end_with_large_steps(violent):
    result, out, prep = violent
    with h5py.File(out) as f:
        time = f["time"][()]
        tip = f["nodes/position"][:, -1, :]
    assert time[-1] == pytest.approx(3.0, abs=1e-12)
    assert np.allclose(time, np.arange(len(time)) * 0.01, rtol=0, atol=1e-12)  # on the frames
    # the tip is thrown about 1.5 L: from x = L to behind the root
    assert tip[:, 0].min() < -0.4
    # the bound: a mean step at least 5x the explicit stable step
    mean_step = 3.0 / result.steps
    assert mean_step >= 5.0 * prep.plan.stable_dt


def test_violent_pulse_keeps_its_energy_and_momentum_balance(violent):
    _, out, prep = violent
    time, energy = _energy(out)
    after = time >= 0.2 - 1e-12  # the pulse is over: nothing works on the rod
    drift = np.abs(energy[after] - energy[after][0])
    e_max = energy.max()
    # every accepted step keeps the summed balance error within energy_tol x the largest
    # energy; the drift between two frames is the difference of two such sums
    tol = prep.case.settings.solver.adaptive.energy_tol
    assert drift.max() <= 2.0 * tol * e_max
    assert drift.max() <= 1e-3 * energy[after][0]  # the bound
    with h5py.File(out) as f:
        residual = f["solver/residual"][1:]
    tol = prep.case.settings.solver.newton.tol
    # momenta to the Newton tolerance, relative to the step's momenta and force impulse ...
    assert residual[1:].max() <= tol
    # ... but in the first frame, from rest, that reference is small and Newton stops at the
    # residual's round-off floor (implicit.roundoff_floor, 4.1e-9 x h here): at most the
    # floor over the least reference of a step from rest, h |F| >= h 1e-2 (the pulse's force
    # after its first step, 30 h / 0.1), i.e. 4.1e-7
    run = solvers.start(prep)
    assert residual[0] <= run.solver.floor / 1e-2


def test_conserving_step_makes_the_elastic_work_exact(tmp_path):
    """With conserve_energy the elastic forces' work over a step is -(U_k+1 - U_k) to
    round-off (vi_residual._conserving_forces), where the midpoint's is off by O(h^3)."""
    prep = rodsim.prepare(
        rodsim.load_case(_case(tmp_path, "{scheme: implicit, dt: 0.002, t_end: 0.4}", peak=-30))
    )
    run = solvers.start(prep)
    implicit.advance(run, 120)  # past the pulse: no loads
    m, st = run.model, run.state
    for conserve, bound in ((1, 1e-12), (0, None)):
        h = 0.004
        x, rot, quat = st.x.copy(), st.rot.copy(), run.quat.copy()
        mom = np.empty((m.n_nodes, 6))
        implicit.body_momenta(rot, st.p, st.pi, run.solver.se3, mom)
        u0 = forces.energies(m.terms, x, rot, run.time)[0]
        sd = implicit.step_data(
            run.solver, x, rot, quat, mom, h, run.time + h / 2, run.time + h, vr.DYNAMIC
        )._replace(conserve=conserve, u0=u0)
        xi = run.xi.copy()
        result, _ = run.solver.newton(sd, xi, 1e-12, 30, 1.0)
        assert result.converged
        w = vr.make_work(m.terms, m.n_nodes, np.float64)
        out, post = np.zeros((m.n_nodes, 6)), np.zeros((m.n_nodes, 6))
        vr.residual(m.nodes, m.terms, sd, xi, w, out, post)
        dx = w.x1 - x
        c = np.einsum("aij,aj->ai", rot, h * xi[:, 3:])
        work = np.sum(w.f * dx) + np.sum(w.tau * c)  # no loads: all elastic (+ correction)
        u1 = forces.energies(m.terms, w.x1, w.r1, run.time + h)[0]
        error = abs(work + (u1 - u0)) / u0
        if bound is not None:
            assert error <= bound
        else:  # the midpoint VI's own error, for contrast: far above round-off
            assert error > 1e3 * 1e-12


def test_free_rod_keeps_both_momenta_with_the_energy_correction(tmp_path):
    """A free, spinning and translating rod: the correction has no resultant force or moment
    (vi_residual._without_rigid_motion), so the momenta stay to the Newton tolerance."""
    path = tmp_path / "free.yaml"
    path.write_text(
        """
rodsim: 1
mesh:
  - rod: {name: bar, from: [0, 0, 0], to: [1, 0, 0], elements: 8, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e3, GA: [1.0e3, 1.0e3], GJ: 1, EI: [1, 1], rhoA: 1,
      rhoI: [1.0e-3, 1.0e-3]}
initial: {velocity: [0.3, 0.1, 0.2], angular_velocity: [0.5, 2.0, 7.0]}
solver: {scheme: implicit, t_end: 1, adaptive: {tol: 1.0e-3, energy_tol: 1.0e-8}}
output: {interval: 0.05, vtk: false}
"""
    )
    out = tmp_path / "free.h5"
    api.run_case(path, out, vtk=False)
    with h5py.File(out) as f:
        lin, ang = f["momentum/linear"][()], f["momentum/angular"][()]
        time = f["time"][()]
    _, energy = _energy(out)
    scale = np.linalg.norm(ang[0])
    assert np.abs(lin - lin[0]).max() <= 1e-9 * np.linalg.norm(lin[0])
    assert np.abs(ang - ang[0]).max() <= 1e-9 * scale
    assert np.abs(energy - energy[0]).max() <= 2e-8 * energy.max()
    assert time[-1] == pytest.approx(1.0)


def test_steps_end_on_the_kinks_of_the_loads(tmp_path, monkeypatch):
    prep = rodsim.prepare(
        rodsim.load_case(_case(tmp_path, "{scheme: implicit, t_end: 0.3, adaptive: {tol: 1.0e-2}}"))
    )
    ends = []
    attempt = adaptive._attempt
    # the Python-driven steps, whose attempts can be watched (the compiled batches take the
    # same steps: test_adaptive_batch)
    monkeypatch.setattr(adaptive_batch, "batchable", lambda run, c: False)

    def recording(run, c, t, h):
        result = attempt(run, c, t, h)
        if result[0] is None:
            ends.append(t + h)
        return result

    monkeypatch.setattr(adaptive, "_attempt", recording)
    run = solvers.start(prep)
    implicit.advance(run, prep.plan.n_steps)
    for kink in (0.1, 0.2):  # the pulse's corners: a step ends on each
        assert np.min(np.abs(np.array(ends) - kink)) <= 1e-12
    assert run.time == pytest.approx(0.3, abs=1e-12)


def test_tighter_tolerance_gives_a_smaller_error(tmp_path):
    """The local error control: the tip's position at the end against a fine explicit
    order-4 solution falls with tol (the controller's error is proportional to tol for a
    second-order scheme's h^3 local error: h ~ tol^(1/3), global error ~ h^2 ~ tol^(2/3))."""
    reference = tmp_path / "ref.h5"
    api.run_case(
        _case(tmp_path, "{order: 4, safety: 0.5, t_end: 0.6}", name="ref.yaml"),
        reference,
        vtk=False,
    )
    with h5py.File(reference) as f:
        tip = f["nodes/position"][-1, -1, :]
    errors = []
    for tol in (1e-2, 1e-4):
        out = tmp_path / f"a{tol}.h5"
        api.run_case(
            _case(
                tmp_path,
                f"{{scheme: implicit, t_end: 0.6, adaptive: {{tol: {tol}}}}}",
                name=f"a{tol}.yaml",
            ),
            out,
            vtk=False,
        )
        with h5py.File(out) as f:
            errors.append(np.linalg.norm(f["nodes/position"][-1, -1, :] - tip))
    assert errors[1] < 0.2 * errors[0]  # (1e-2)^(2/3) / (1e-4)^(2/3) = 21.5
    assert errors[1] < 1e-3


def test_a_step_below_dt_min_stops_with_advice(tmp_path):
    case = _case(
        tmp_path,
        "{scheme: implicit, t_end: 0.3, dt: 0.01, adaptive: {tol: 1.0e-12, dt_min: 0.001}}",
    )
    with pytest.raises(NumericalError, match="dt_min"):
        api.run_case(case, tmp_path / "x.h5", vtk=False)


@pytest.mark.parametrize(
    ("solver", "output", "key"),
    [
        ("{t_end: 1, adaptive: {tol: 0.01}}", "{interval: 0.1}", "solver.adaptive"),
        ("{scheme: implicit, t_end: 1, adaptive: {tol: 0.01}}", "{every: 10}", "output.every"),
        ("{t_end: 1, conserve_energy: true}", "{interval: 0.1}", "solver.conserve_energy"),
        (
            "{scheme: implicit, t_end: 1, adaptive: {dt_min: 0.1, dt_max: 0.01}}",
            "{interval: 0.1}",
            "solver.adaptive.dt_min",
        ),
    ],
)
def test_adaptive_settings_are_checked(tmp_path, solver, output, key):
    text = CANTILEVER.format(n=4, peak=-1, solver=solver, interval=0.1).replace(
        "output: {interval: 0.1, vtk: false}", f"output: {output}"
    )
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CaseError) as err:
        rodsim.prepare(rodsim.load_case(path))
    assert err.value.key == key


def test_superlu_and_band_solves_agree(tmp_path, monkeypatch):
    """Wide bands go to SuperLU (vi_newton._superlu_newton): the same steps to the Newton
    tolerance."""
    case = _case(tmp_path, "{scheme: implicit, t_end: 0.2, adaptive: {tol: 1.0e-3}}")
    a, b = tmp_path / "band.h5", tmp_path / "superlu.h5"
    api.run_case(case, a, vtk=False)
    monkeypatch.setattr(banded, "MAX_FLOPS", 0.0)
    api.run_case(case, b, vtk=False)
    with h5py.File(a) as fa, h5py.File(b) as fb:
        xa, xb = fa["nodes/position"][()], fb["nodes/position"][()]
    # both stop at the same residual tolerance; their step sequences may part where an
    # acceptance test is near its bound, so compare at the level of the local error (tol L)
    assert np.abs(xa - xb).max() <= 1e-3


def test_restart_with_a_later_end_time_continues_the_adaptive_steps(tmp_path):
    solver = "{scheme: implicit, t_end: 0.4, adaptive: {tol: 1.0e-3}}"
    case = _case(tmp_path, solver, peak=-30)
    full, part = tmp_path / "full.h5", tmp_path / "part.h5"
    api.run_case(case, full, vtk=False, overrides=("solver.t_end=0.8",))
    api.run_case(case, part, vtk=False)
    api.run_case(case, vtk=False, overrides=("solver.t_end=0.8",), restart=part)
    with h5py.File(full) as f, h5py.File(part) as g:
        assert g["time"][-1] == pytest.approx(0.8)
        # the controller's state and the Jacobian it holds are stored: bit for bit
        for name in ("nodes/position", "nodes/linear_momentum", "solver/dt", "energy/kinetic"):
            assert np.array_equal(f[name][()], g[name][()]), name


def test_a_stop_between_frames_writes_the_state_there_and_goes_on_bit_for_bit(
    tmp_path, monkeypatch
):
    """A frame interval holds many adaptive steps: a stop request is acted on after the step
    (here batches of one step) it comes in, with an off-schedule frame at that time; the run
    continued from its restart state lands on the same frames as one never stopped."""
    monkeypatch.setattr(adaptive_batch, "BATCH", 1)
    case = rodsim.load_case(
        _case(tmp_path, "{scheme: implicit, t_end: 0.6, adaptive: {tol: 1.0e-3}}", peak=-30,
              interval=0.3)
    )  # fmt: skip
    prep = rodsim.prepare(case)
    never = list(solvers._dynamic_frames(prep, None, lambda: False))
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 40  # inside the first interval's steps

    stopped = list(solvers._dynamic_frames(prep, None, stop))
    last = stopped[-1]
    assert last.off_schedule == 1
    assert 0.0 < last.time < 0.3
    state = last.restart
    assert sequence.restart_time(state) == last.time
    resumed = list(solvers._dynamic_frames(prep, None, lambda: False, begin=state, resume=True))
    assert [f.time for f in resumed] == [f.time for f in never[1:]]
    for a, b in zip(resumed, never[1:], strict=True):
        assert np.array_equal(a.position, b.position)
        assert np.array_equal(a.linear_momentum, b.linear_momentum)


def test_a_moving_support_drives_the_structure_as_the_explicit_scheme_does(tmp_path):
    """Prescribed motion with adaptive, energy-conserving steps: the supports' work is in the
    energy balance and the correction leaves supported components alone."""
    text = CANTILEVER.format(n=10, peak=0, solver="{}", interval=0.05).replace(
        "  - {set: beam.start, fix: all}",
        "  - {set: beam.start, prescribe: {displacement: [0, 0, 0.2], rotation: [0, 0, 0], "
        "time: {sine: {amplitude: 1, frequency: 1}}}}",
    )
    results = {}
    for name, solver in (
        ("explicit", "{order: 4, safety: 0.5, t_end: 0.5}"),
        ("tol-3", "{scheme: implicit, t_end: 0.5, adaptive: {tol: 1.0e-3}}"),
        ("tol-5", "{scheme: implicit, t_end: 0.5, adaptive: {tol: 1.0e-5}}"),
    ):
        path = tmp_path / f"{name}.yaml"
        path.write_text(text.replace("solver: {}", f"solver: {solver}"))
        api.run_case(path, tmp_path / f"{name}.h5", vtk=False)
        with h5py.File(tmp_path / f"{name}.h5") as f:
            results[name] = f["nodes/position"][-1]
    loose, tight = (np.abs(results[k] - results["explicit"]).max() for k in ("tol-3", "tol-5"))
    # the error falls with tol (global ~ tol^(2/3): 21x for 100x), and at 1e-5 it is below
    # 0.5% of the root's 0.2 swing (measured 4.4e-3 and 1.7e-4)
    assert tight < 0.1 * loose
    assert tight < 1e-3


def test_conserving_fixed_steps_keep_a_free_rods_momenta(tmp_path):
    path = tmp_path / "free.yaml"
    path.write_text(
        """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 20, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, EI: [1, 1], rhoA: 1,
      rhoI: [1.0e-4, 1.0e-4]}
initial: {fields: [{set: beam.end, velocity: [0, 0, 8]}]}
solver: {scheme: implicit, t_end: 0.5, dt: 5.0e-3, conserve_energy: true}
output: {interval: 0.05, vtk: false}
"""
    )
    out = tmp_path / "free.h5"
    api.run_case(path, out, vtk=False)
    with h5py.File(out) as f:
        lin, ang = f["momentum/linear"][()], f["momentum/angular"][()]
    assert np.abs(lin - lin[0]).max() <= 1e-9 * np.linalg.norm(lin[0])
    assert np.abs(ang - ang[0]).max() <= 1e-9 * np.abs(ang).max()


def test_null_turns_adaptive_steps_off(tmp_path):
    case = _case(tmp_path, "{scheme: implicit, t_end: 0.1, adaptive: {tol: 1.0e-3}}")
    prep = rodsim.prepare(rodsim.load_case(case, ["solver.adaptive=null"]))
    assert prep.case.settings.solver.adaptive is None


def test_a_fixed_step_state_is_not_continued_with_adaptive_steps(tmp_path):
    case = _case(tmp_path, "{scheme: implicit, dt: 0.005, t_end: 0.2}")
    out = tmp_path / "fixed.h5"
    api.run_case(case, out, vtk=False)
    with pytest.raises(CaseError) as err:
        api.run_case(
            case,
            vtk=False,
            overrides=("solver.t_end=0.4", "solver.adaptive.tol=0.01"),
            restart=out,
        )
    assert err.value.key == "solver.adaptive"
