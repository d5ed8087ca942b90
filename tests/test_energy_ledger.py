"""The energy ledger (rodsim.integrators.ledger, docs/results.md "Energy ledger"): the work of
the loads and of moving supports and the energy each damping term dissipates, so that
balance = K + U + V - W - W_s + D stays at its start value to the scheme's accuracy."""

import dataclasses
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import cli_run, spaghetti

from rodsim import api
from rodsim.integrators import adaptive, dynamics, implicit, ledger
from rodsim.integrators.stable_step import stable_step
from rodsim.mesh.generate import straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import Gravity, NodalLoad
from rodsim.model.prescribed import Prescribed
from rodsim.model.sections import section_from_resultants
from rodsim.model.supports import Support
from rodsim.results import read_results
from rodsim.terms import TERMS

COLUMN = {name: j for j, name in enumerate(ledger.NAMES)}
ROOT = Path(__file__).resolve().parents[1]
SECTION = section_from_resultants(
    EA=1e4, GA=[1e4, 1e4], GJ=50, EI=[50, 50], rhoA=1, rhoI=[0.01, 0.01]
)


def _clamped(n):
    part = straight_rod([0, 0, 0], [1, 0, 0], n, up=[0, 0, 1])
    fixed = np.zeros((n + 1, 6), dtype=bool)
    fixed[0] = True
    return part, fixed


def _cantilever(beta=0.0, alpha=0.0, dashpot=0.0, n=8):
    """A clamped rod of length 1 under gravity and a smooth tip force and dead moment (not
    conservative), sprung at its middle (a dashpot there where given)."""
    part, fixed = _clamped(n)
    sine = timefunc.sine(1.0, 1.5)
    tip = NodalLoad(nodes=[n], force=(0, 0, -5.0), moment=(0.3, 0, 0), time=sine)
    middle = Support(np.array([n // 2]), spring=(0, 0, 10.0), dashpot=(0, 0, dashpot))
    return build_model(
        part.points,
        part.frames,
        part.conn,
        SECTION,
        fixed=fixed,
        loads=[tip],
        gravity=[Gravity((0, 0, -9.81))],
        damping=(beta, alpha),
        supports=[middle],
    )


def _books(run) -> dict:
    d = run.diagnostics()
    return ledger.values(run, d.kinetic, d.internal, d.external)


def _history(run, advance, frames: int, per_frame: int):
    """(balance (F+1,), last ledger values) sampled every per_frame steps."""
    balance = [_books(run)["balance"]]
    for _ in range(frames):
        advance(run, per_frame)
        balance.append(_books(run)["balance"])
    return np.array(balance), _books(run)


def _explicit_band(model, dt, t_end, frames=20, **kw):
    run = dynamics.start(model, dt, **kw)
    per_frame = int(round(t_end / frames / dt))
    balance, books = _history(run, dynamics.advance, frames, per_frame)
    return np.max(np.abs(balance - balance[0])), books


def test_ledger_is_compiled_out_where_nothing_does_work():
    """No damping, load or prescribed motion: no ledger (the step compiles as before it), W =
    D = 0 and the balance is the total energy; a load or a damping brings it in."""
    free = spaghetti(loaded=False)
    run = dynamics.start(free, 0.01, state=dynamics.initial_state(free, velocity=(1, 0, 0)))
    dynamics.advance(run, 10)
    assert run.ledger is None
    books = _books(run)
    assert books["external_work"] == books["dissipated"] == books["support_work"] == 0.0
    assert books["balance"] == run.diagnostics().total
    assert ledger.explicit(spaghetti()) is not None  # a tip load
    assert ledger.explicit(dataclasses.replace(free, alpha=0.1)) is not None


def test_the_ledger_leaves_the_motion_bit_identical():
    """Keeping each damped term's forces apart must not change their sum at a node."""
    model = dataclasses.replace(spaghetti(), beta=1e-2, alpha=0.3)
    books, plain = dynamics.start(model, 0.003), dynamics.start(model, 0.003)
    plain.ledger = None
    dynamics.refresh_forces(plain)
    dynamics.advance(books, 300)
    dynamics.advance(plain, 300)
    assert books.ledger is not None
    for a, b in zip(books.state, plain.state, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize(
    "damping, group",
    [("strain_rate", "SO3xR3"), ("mass", "SO3xR3"), ("dashpot", "SO3xR3"), ("mass", "SE3")],
)
def test_explicit_balance_stays_in_a_second_order_band(damping, group):
    """Each damping on its own, with a non-conservative tip load and gravity: the balance's
    largest departure from its start falls ~4x when dt halves (O(dt^2): the conservative
    forces' trapezoid error and a bounded end term; a first-order error would halve it), and
    only the damping's own column dissipates (the others exactly 0). Measured ratios 3.97 to
    4.04 (SE3, whose drift transports the spin, too)."""
    kwargs = {"strain_rate": {"beta": 2e-4}, "mass": {"alpha": 1.0}, "dashpot": {"dashpot": 2.0}}
    model = _cantilever(**kwargs[damping])
    dt = 0.4 * stable_step(model)
    coarse, books = _explicit_band(model, dt, 1.0, group=group)
    fine, books_fine = _explicit_band(model, dt / 2, 1.0, group=group)
    assert 3.5 < coarse / fine < 4.6, (coarse, fine)
    # the band against the energy moved through the run: W
    assert coarse < 1e-3 * abs(books["external_work"])
    own = {"strain_rate": "rods", "mass": "mass_damping", "dashpot": "supports"}[damping]
    by_term = books["dissipated_by_term"]
    assert by_term[COLUMN[own]] > 0.0
    assert np.count_nonzero(by_term) == 1
    assert np.count_nonzero(books_fine["dissipated_by_term"]) == 1


def test_mass_damping_of_a_free_translation_dissipates_its_kinetic_energy():
    """A free rod translating at v0 with alpha and beta: v = v0 exp(-alpha t), so the mass
    damping dissipates M v0^2 (1 - exp(-2 alpha t)) / 2; the strain-rate damping does no work
    on a rigid motion (its column stays 0). The explicit scheme damps at the momentum lagged
    half a step: per step p <- p (1 - alpha dt), a rate off by alpha dt / 2 = 2.5e-4 relative,
    2 alpha t times that in the exponent: 1e-3 on the dissipated energy."""
    alpha, v0, t_end = 0.5, 2.0, 2.0
    model = dataclasses.replace(spaghetti(loaded=False), alpha=alpha, beta=1e-3)
    dt = 1e-3
    run = dynamics.start(model, dt, state=dynamics.initial_state(model, velocity=(v0, 0, 0)))
    dynamics.advance(run, int(round(t_end / dt)))
    books = _books(run)
    mass = model.mass.sum()
    expected = 0.5 * mass * v0**2 * (1 - np.exp(-2 * alpha * t_end))
    assert books["dissipated_by_term"][COLUMN["mass_damping"]] == pytest.approx(expected, rel=1e-3)
    start = 0.5 * mass * v0**2
    assert abs(books["dissipated_by_term"][COLUMN["rods"]]) < 1e-12 * start  # round-off
    # the kicks' exact split and the trapezoid differ by the end term dt^2/8 F.M^-1 F, here
    # (alpha dt)^2 / 4 K: 6e-8 of the start
    assert books["balance"] == pytest.approx(start, rel=1e-7)


def _implicit_band(model, dt, t_end, frames=20, **kw):
    run = implicit.start(model, dt, state=dynamics.initial_state(model), **kw)
    per_frame = max(1, int(round(t_end / frames / dt)))
    balance, books = _history(run, implicit.advance, frames, per_frame)
    return np.max(np.abs(balance - balance[0])), books, run


def test_implicit_balance_with_every_damping():
    """Fixed steps: the midpoint rule's O(dt^2) energy error, ~4x smaller at dt/2 (measured
    4.24 from dt = 0.005, 4.03 from 0.0025: steps where the excited modes are resolved), each
    damping's column converged to O(dt^2) (measured 3.5e-4 apart); energy-conserving adaptive
    steps: within energy_tol of the largest K + U (docs/implicit_scheme.md, "What the
    controller guarantees"), the dissipated energy within the local error tolerance of the
    fixed steps'."""
    model = _cantilever(beta=2e-4, alpha=1.0, dashpot=2.0)
    coarse, books, _ = _implicit_band(model, 0.0025, 1.0)
    fine, books_fine, run = _implicit_band(model, 0.00125, 1.0)
    assert 3.5 < coarse / fine < 4.6, (coarse, fine)
    for name in ("rods", "mass_damping", "supports"):
        j = COLUMN[name]
        assert books["dissipated_by_term"][j] > 0.0
        assert books_fine["dissipated_by_term"][j] == pytest.approx(
            books["dissipated_by_term"][j], rel=2e-3
        )
    tol = 1e-7
    settings = adaptive.Settings(1e-4, tol, 1e-8, 0.05)
    band, books_adaptive, run = _implicit_band(model, 0.05, 1.0, conserve=True, steps=settings)
    largest = run.control.energy_max
    assert band <= tol * largest * 1.01
    assert books_adaptive["dissipated"] == pytest.approx(books_fine["dissipated"], rel=2e-2)


SLIP = ROOT / "inputs" / "connectors" / "slip_joint.yaml"
K_SLIP = 1.0e4  # the joint's stiffness in slip_joint.yaml


def _slip_run(tmp_path, scheme: str, dt: float, *extra, every: float = 0.01) -> dict:
    """inputs/connectors/slip_joint.yaml to t = 0.3 (the joint slips from t ~ 0.1 on), frames
    every `every`: band (largest departure of energy/balance from its start), work (the plastic
    work), u and s (F,3) (the joint's elongation and slip)."""
    out = tmp_path / f"{scheme}-{dt:.6g}.h5"
    overrides = ("solver.t_end=0.3", f"output.interval={every}", f"solver.scheme={scheme}")
    api.run_case(SLIP, out, vtk=False, overrides=(*overrides, f"solver.dt={dt}", *extra))
    with h5py.File(out) as f:
        balance = f["energy/balance"][()]
        return {
            "band": float(np.abs(balance - balance[0]).max()),
            "work": float(f["connectors/work"][-1, 0]),
            "u": f["connectors/elongation"][:, 0, :],
            "s": f["connectors/slip"][:, 0, :],
        }


@pytest.mark.parametrize(
    "extra",
    [(), ("solver.damping.mass=2.0", "connectors[0].damping=[5, 5, 5]")],
    ids=["plastic", "plastic+dashpot+mass"],
)
def test_balance_with_a_plastic_connector(tmp_path, extra):
    """A slipping plastic connector (with a dashpot and mass damping too). Explicit: the
    balance's band falls 4x when dt halves (measured 4.01 and 4.00; bands 8.1e-8 and 6.4e-8
    against a plastic work of 0.12). A frame's internal energy is that of the committed
    state: the trial's incremental potential counts the step's F_y dg too, which the ledger
    books as dissipated, a first-order error (7.8e-5, halving with dt) before it was taken
    out. Implicit (fixed steps, 13x the explicit one): each yield onset or unloading is a
    jump k in the joint's stiffness inside a step, where the midpoint rule misses the energy
    of a piecewise-linear force by at most k du^2 / 8 (du the step's relative displacement),
    so the band is O(dt^2) but not monotone in dt (measured 3.9e-8, 1.5e-7, 3.4e-8 at dt
    4e-4, 2e-4, 1e-4): held to the sum of that bound over the kinks (2.5e-5 at dt 2e-4; the
    rods' smooth midpoint error is far below it). The schemes' plastic work agree to O(dt)
    of the slip's timing (measured 6.4e-4): held to 1e-3."""
    dt = api.prepare(api.load_case(SLIP)).plan.dt  # the case's dt: auto
    coarse = _slip_run(tmp_path, "explicit", dt, *extra)
    fine = _slip_run(tmp_path, "explicit", dt / 2, *extra)
    assert coarse["work"] > 0.1  # it slipped
    assert 3.5 < coarse["band"] / fine["band"] < 4.6, (coarse["band"], fine["band"])
    h = 2e-4
    run = _slip_run(tmp_path, "implicit", h, *extra, every=h)
    slipping = np.abs(np.diff(run["s"], axis=0)) > 0.0
    kinks = np.abs(np.diff(slipping.astype(int), axis=0)).sum()
    du = np.abs(np.diff(run["u"], axis=0)).max()
    assert kinks >= 2  # at least a yield onset and an unloading
    assert run["band"] <= kinks * K_SLIP * du**2 / 8, (run["band"], kinks, du)
    assert run["work"] == pytest.approx(coarse["work"], rel=1e-3)


def test_gravity_alone_does_no_external_work():
    """W counts the loads' work beyond their potential: gravity's is -dV, so W = 0 (the
    implicit scheme pairs the constant weight with the increments exactly: round-off)."""
    part, fixed = _clamped(6)
    model = build_model(
        part.points, part.frames, part.conn, SECTION, fixed=fixed, gravity=[Gravity((0, 0, -9.81))]
    )
    run = implicit.start(model, 0.01, state=dynamics.initial_state(model))
    implicit.advance(run, 50)
    books = _books(run)
    assert abs(books["external_work"]) < 1e-13 * abs(run.external)
    assert books["balance"] == pytest.approx(0.0, abs=1e-4 * abs(run.external))


def test_prescribed_motion_work_and_a_dashpot_on_it():
    """The tip pulled along x at constant speed V (x = x0 + V t), a dashpot c on it: the
    implicit scheme's discrete dashpot force c dx/h times the increment dx dissipates
    c V^2 t exactly (round-off); the support's work feeds the rest (stretch, waves,
    strain-rate damping), so the balance holds; the explicit scheme's in an O(dt^2) band."""
    speed, c, t_end = 0.01, 3.0, 0.5
    n = 8
    part, fixed = _clamped(n)
    # f(t) = t / 10 times u = 10 V: x = x0 + V t
    pull = Prescribed(
        np.array([n]), (10 * speed, None, None), time=timefunc.table([[0, 0], [10, 1]])
    )
    model = build_model(
        part.points,
        part.frames,
        part.conn,
        SECTION,
        fixed=fixed,
        prescribed=[pull],
        damping=(2e-4, 0.0),
        supports=[Support(np.array([n]), dashpot=(c, 0, 0))],
    )
    band, books, run = _implicit_band(model, 0.005, t_end)
    assert books["dissipated_by_term"][COLUMN["supports"]] == pytest.approx(
        c * speed**2 * t_end, rel=1e-9
    )
    assert books["support_work"] > books["dissipated"] > 0.0
    assert band < 1e-6 * books["support_work"]
    dt = 0.4 * stable_step(model)
    coarse, books = _explicit_band(model, dt, t_end)
    fine, _ = _explicit_band(model, dt / 2, t_end)
    assert books["support_work"] > 0.0
    assert coarse < 1e-3 * books["support_work"] and 3.0 < coarse / fine < 5.0, (coarse, fine)


def test_the_loads_power_hook_is_the_power_of_their_forces():
    """Term.power (the loads': dead and follower forces and moments, gravity) against the
    generic path (the evaluated forces dotted with the velocities), at random momenta and
    rotations, fixed components left out: equal to round-off."""
    rng = np.random.default_rng(3)
    n = 6
    part, fixed = _clamped(n)
    fixed[3, [1, 4]] = True
    loads = [
        NodalLoad(nodes=[n], force=(1, 2, 3), moment=(0.4, -0.5, 0.6), follower=True),
        NodalLoad(nodes=[3, 4], force=(-1, 0.5, 2), moment=(0.1, 0.2, 0.3)),
    ]
    model = build_model(
        part.points,
        part.frames,
        part.conn,
        SECTION,
        fixed=fixed,
        loads=loads,
        gravity=[Gravity((0.3, 0, -9.81), time=timefunc.ramp(2.0))],
    )
    state = dynamics.initial_state(model)
    rot = np.array([r @ _turn(rng.normal(size=3)) for r in state.rot])
    p, pi = rng.normal(size=(n + 1, 3)), rng.normal(size=(n + 1, 3))
    terms, quat = model.terms, np.empty((n + 1, 4))
    from rodsim.model.forces import quaternions

    quaternions(rot, quat, 0, n + 1)
    loads_term = next(t for t in TERMS if t.name == "loads")
    arrays = loads_term.power_arrays(terms.loads, model)
    hook = loads_term.power(arrays, model.nodes, state.x, rot, quat, 0.7, p, pi)
    f, tau = np.zeros((n + 1, 3)), np.zeros((n + 1, 3))
    loads_term.forces(terms.loads, None, terms, state.x, rot, quat, 0.7, f, tau)
    m = model.nodes
    generic = ledger._evaluated_power(m.mass, m.inertia, m.fixed, f, tau, rot, p, pi)
    assert hook == pytest.approx(generic, rel=1e-13)


def _turn(v):
    from rodsim.lie import so3
    from rodsim.lie.arrays import as_matrix

    return as_matrix(so3.exp(tuple(v)))


CASE = """rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 6, section: bar, up: [0, 0, 1]}
sections:
  bar: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 50, EI: [50, 50], rhoA: 1,
        rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
supports:
  - {set: beam.end, spring: [0, 0, 10], dashpot: [0, 0, 2]}
loads:
  - {set: beam.end, force: [0, 0, -5], time: {ramp: 0.05}}
solver: {dt: 2.0e-4, t_end: 0.1, damping: {strain_rate: 1.0e-4, mass: 0.5}}
output: {every: 50, vtk: false}
"""


def test_a_run_writes_the_ledger_and_plots_it(tmp_path):
    """rodsim run writes the ledger's datasets (docs/results.md), Results reads them, the
    energy plot draws them; an equilibrium's frames hold NaN."""
    from rodsim.post.plots import plot_results

    case = tmp_path / "case.yaml"
    case.write_text(CASE)
    result, out = cli_run(case, tmp_path)
    assert result.exit_code == 0, result.output
    r = read_results(out)
    assert r.dissipated_by_term.shape == (r.n_frames, len(ledger.NAMES))
    np.testing.assert_allclose(r.dissipated, r.dissipated_by_term.sum(axis=1))
    np.testing.assert_allclose(
        r.balance, r.total - r.external_work - r.support_work + r.dissipated, rtol=1e-12
    )
    assert np.ptp(r.balance) < 1e-3 * r.external_work[-1]
    for name in ("rods", "mass_damping", "supports"):
        assert r.dissipated_by_term[-1, COLUMN[name]] > 0.0
    with h5py.File(out) as f:
        description = f["energy/dissipated_by_term"].attrs["description"]
        assert "columns " + ", ".join(ledger.NAMES) + " (" in description
    assert plot_results(out, "energy").exists()
    result, out = cli_run(case, tmp_path, "solver.analysis=equilibrium")
    assert result.exit_code == 0, result.output
    assert np.all(np.isnan(read_results(out).balance))
    assert plot_results(out, "energy").exists()
