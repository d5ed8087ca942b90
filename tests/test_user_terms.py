"""User terms from Python (rodsim.user_term, docs/python.md "Your own force terms"): a spring
and dashpot to the ground written in Python gives what the built-in supports term gives with
the same stiffness and damping.

- Explicit scheme: bit for bit. The model has no connectors, so the user term, last in TERMS,
  is added to the nodal forces where the supports would be, and its arithmetic is the
  supports' (f -= K u with K = diag(k): the zero off-diagonal products add exact zeros).
- Implicit scheme and equilibrium: within the Newton tolerance. Each step (load step) is a
  Newton solve to tol relative to its own scale; two solves of the same equations differ by
  at most that, so |dx| <= tol L per step, errors of the stable scheme adding at most
  linearly over the steps.
- The complex-step tangent of a nonlinear user term matches central differences to their
  truncation error h^2 |f'''| / 6 (h = 1e-5 of a unit-size configuration: ~1e-10 relative).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from numba import typeof
from test_terms_contract import coupling_failures

import rodsim
from rodsim import kernel_cache
from rodsim.errors import ArgumentError
from rodsim.model import forces
from rodsim.terms import TERMS, user_tangent
from rodsim.terms import user as user_terms

ROOT = Path(__file__).resolve().parents[1]

CASE = """
rodsim: 1
title: cantilever on a spring and dashpot
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [4, 0, 0], elements: 8, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 50, EI: [50, 50], rhoA: 1, rhoI: [0.1, 0.1]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0.3, 0.2, -1.0]}
"""
K, C = 50.0, 0.5
SUPPORTS = f"""
supports:
  - {{set: beam.end, spring: [{K}, {K}, {K}], dashpot: [{C}, {C}, {C}]}}
"""
EXPLICIT = "solver: {t_end: 0.3, dt: 1.0e-3}\n"
IMPLICIT = "solver: {scheme: implicit, t_end: 0.5, dt: 2.0e-2}\n"
STATIC = "solver: {analysis: equilibrium, equilibrium: {load_steps: 2}}\n"


def spring(nodes, params, x, rot, quat, t, f, tau):
    """Springs k = params[i, 3] from nodes[i, 0] to the anchors params[i, :3]: as the supports
    kernel computes them (n = K u, f -= n, energy 1/2 u.n)."""
    e = 0.0
    for i in range(nodes.shape[0]):
        a = nodes[i, 0]
        k = params[i, 3]
        u0, u1, u2 = x[a, 0] - params[i, 0], x[a, 1] - params[i, 1], x[a, 2] - params[i, 2]
        n0, n1, n2 = k * u0, k * u1, k * u2
        f[a, 0] -= n0
        f[a, 1] -= n1
        f[a, 2] -= n2
        e += 0.5 * (u0 * n0 + u1 * n1 + u2 * n2)
    return e


def dashpot(nodes, params, x, rot, quat, vel, omg, f, tau):
    """Dashpots c = params[i, 4] at nodes[i, 0]: f -= c v."""
    for i in range(nodes.shape[0]):
        a = nodes[i, 0]
        for k in range(3):
            f[a, k] -= params[i, 4] * vel[a, k]


def _ground(solver: str, scale: float = 1.0, **options):
    """The tip's spring and dashpot as a user term, on the case's model."""
    prep = rodsim.prepare(rodsim.case_from_yaml(CASE + solver))
    tip = prep.setup.mesh.sets["beam.end"]
    x0 = prep.setup.model.x0[tip]
    params = np.column_stack([x0, np.full(len(tip), scale * K), np.full(len(tip), C)])
    options = {"stiffness": scale * K, "damping": dashpot, **options}
    term = rodsim.user_term(
        "tip", forces=spring, nodes=tip, params=params, role="ground", **options
    )
    return prep, term


def _pair(solver: str, **options):
    """(supports, user term) Simulations of one case."""
    prep, term = _ground(solver, **options)
    builtin = rodsim.Simulation(rodsim.case_from_yaml(CASE + SUPPORTS + solver))
    return builtin, rodsim.Simulation(prep, terms=[term])


def test_explicit_is_bit_for_bit_the_supports():
    a, b = _pair(EXPLICIT)
    assert a.dt == b.dt and a.n_steps == b.n_steps == 300
    for sim in (a, b):
        sim.advance(sim.n_steps)
    for x, y in zip(a.state, b.state, strict=True):
        assert np.array_equal(x, y)
    fa, fb = a.frame(), b.frame()
    assert np.abs(b.state.x - b.model.x0).max() > 1e-3  # it moved
    assert fa.internal == fb.internal and fa.kinetic == fb.kinetic
    assert np.array_equal(fa.reaction_force, fb.reaction_force)


def test_explicit_stable_step_is_the_supports():
    """With dt: auto the step is the supports' bit for bit where the stiffness is given (k/m
    at the tip, as theirs), and to round-off from the tangent by complex step without it."""
    solver = "solver: {t_end: 0.01}\n"
    sup = f"supports:\n  - {{set: beam.end, spring: [{K}, {K}, {K}]}}\n"
    a = rodsim.prepare(rodsim.case_from_yaml(CASE + sup + solver))
    case = rodsim.case_from_yaml(CASE + solver)
    given = rodsim.prepare(case, terms=[_ground(solver, damping=None)[1]])
    tangent = rodsim.prepare(case, terms=[_ground(solver, damping=None, stiffness=None)[1]])
    bare = rodsim.prepare(case)
    assert a.plan.stable_dt == given.plan.stable_dt < bare.plan.stable_dt  # the spring's share
    assert tangent.plan.stable_dt == pytest.approx(a.plan.stable_dt, rel=1e-14)


def test_implicit_within_the_newton_tolerance():
    a, b = _pair(IMPLICIT)
    for sim in (a, b):
        sim.advance(sim.n_steps)
    tol, size = 1e-10, 4.0  # solver.newton.tol (default), the cantilever's length
    dx = np.abs(a.state.x - b.state.x).max()
    assert dx <= a.n_steps * tol * size, dx
    assert np.abs(b.state.x - b.model.x0).max() > 1e-3


def test_equilibrium_within_the_newton_tolerance():
    a, b = _pair(STATIC, damping=None)
    for sim in (a, b):
        sim.solve()
        sim.solve()
    tol = 1e-8  # solver.equilibrium.tol (default), relative to the loads and reactions
    u = np.abs(a.state.x - a.model.x0).max()
    assert np.abs(a.state.x - b.state.x).max() <= 2 * tol * u
    assert b.frame().internal == pytest.approx(a.frame().internal, rel=1e-6)


def test_run_case_writes_the_supports_results(tmp_path):
    """rodsim.run_case(..., terms=[...]) writes the file the supports' run writes: every
    per-frame dataset equal (the dissipated energy in the user term's column of
    energy/dissipated_by_term instead of the supports')."""
    prep, term = _ground(EXPLICIT)
    a = rodsim.run_case(rodsim.case_from_yaml(CASE + SUPPORTS + EXPLICIT), tmp_path / "a.h5",
                        vtk=False)  # fmt: skip
    b = rodsim.run_case(prep, tmp_path / "b.h5", vtk=False, terms=[term])
    ra, rb = rodsim.read_results(a.path), rodsim.read_results(b.path)
    assert ra.n_frames == rb.n_frames > 2
    for name in ("position", "velocity", "reaction_force", "internal", "kinetic", "dissipated"):
        assert np.array_equal(getattr(ra, name), getattr(rb, name)), name
    assert ra.dissipated[-1] > 0.0


def test_modes_are_the_supports():
    """rodsim.modes with a user term: its tangent and its damping at the reference (complex
    step) are the supports' here (their analytic tangent), so are the modes and their
    damping ratios: both tangents are exact to round-off (1e-15 of the largest block), the
    modes then to round-off times the eigenproblem's conditioning (1e-10 leaves five
    decades)."""
    prep, term = _ground(IMPLICIT)
    a = rodsim.modes(rodsim.case_from_yaml(CASE + SUPPORTS + IMPLICIT), count=4)
    b = rodsim.modes(prep, count=4, terms=[term])
    np.testing.assert_allclose(b.frequency, a.frequency, rtol=1e-10)
    # an undamped mode's ratio is round-off (1e-32): compared against the largest one
    scale = a.damping_ratio.max()
    np.testing.assert_allclose(b.damping_ratio, a.damping_ratio, rtol=1e-10, atol=1e-10 * scale)
    assert np.all(b.damping_ratio > 0.0)


def test_another_function_reuses_the_compiled_scheme():
    """The compiled explicit step calls the user's function through its address: a second
    function of the same signature (a spring twice as stiff) compiles nothing of rodsim's
    and gives its own result, that of supports twice as stiff, bit for bit."""
    a, b = _pair(EXPLICIT)
    b.advance(10)
    prep, stiff = _ground(EXPLICIT, scale=2.0)
    before = kernel_cache.compiling().kernels
    c = rodsim.Simulation(prep, terms=[stiff])
    c.advance(10)
    assert kernel_cache.compiling().kernels == before
    twice = rodsim.Simulation(
        rodsim.case_from_yaml(
            CASE + SUPPORTS.replace(f"{K}, {K}, {K}", f"{2 * K}, {2 * K}, {2 * K}") + EXPLICIT
        )
    )
    twice.advance(10)
    assert np.array_equal(c.state.x, twice.state.x)
    assert not np.array_equal(c.state.x, b.state.x)


def test_a_model_without_user_terms_compiles_none():
    """A model without user terms has them None in the kernels' view (no code for them)."""
    prep = rodsim.prepare(rodsim.case_from_yaml(CASE + SUPPORTS + EXPLICIT))
    terms = prep.setup.model.terms
    kinds = typeof(terms).field_dict
    for t in user_terms.TERMS:
        assert t in TERMS and getattr(terms, t.name) == ()
        assert kinds[t.name] == typeof(None)
        assert not any(u is t for _, u in forces.present(typeof(terms), "forces"))


# --- a nonlinear internal term: its pairs and its tangent --------------------------------------


def link(nodes, params, x, rot, quat, t, f, tau):
    """A nonlinear link between nodes[i, 0] and nodes[i, 1]: V = k/4 (l^2 - L^2)^2 / L^2 with
    l the distance, L = params[i, 0], k = params[i, 1]; its forces are -dV/dx."""
    e = 0.0
    for i in range(nodes.shape[0]):
        a, b = nodes[i, 0], nodes[i, 1]
        big, k = params[i, 0], params[i, 1]
        d0, d1, d2 = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        s = (d0 * d0 + d1 * d1 + d2 * d2 - big * big) / (big * big)
        g = k * s
        f[a, 0] += g * d0
        f[a, 1] += g * d1
        f[a, 2] += g * d2
        f[b, 0] -= g * d0
        f[b, 1] -= g * d1
        f[b, 2] -= g * d2
        e += 0.25 * k * s * s * big * big
    return e


def _link_model():
    prep = rodsim.prepare(rodsim.case_from_yaml(CASE + EXPLICIT))
    model = prep.setup.model
    nodes = np.array([[0, 8], [2, 5]])
    lengths = np.linalg.norm(model.x0[nodes[:, 1]] - model.x0[nodes[:, 0]], axis=1)
    term = rodsim.user_term(
        "links", forces=link, nodes=nodes, params=np.column_stack([0.9 * lengths, [30.0, 70.0]])
    )
    return user_terms.attach(model, [term]), term


def test_the_hooks_agree_with_the_kernels():
    """The contract test's checks (tests/test_terms_contract.py): every node pair whose forces
    change together is declared (by default: the two nodes of each entry)."""
    model, _ = _link_model()
    t = next(t for t in TERMS if t.name == "user_internal")
    assert t.present(t.arrays(model))
    assert coupling_failures(t, model) == []
    assert {tuple(p) for p in t.pairs(t.arrays(model))} == {(0, 8), (2, 5)}


def test_complex_step_tangent_matches_finite_differences():
    model, _ = _link_model()
    entry = model.term_arrays["user_internal"][0]
    pairs, blocks = user_tangent.reference_blocks(entry, model, rates=False)
    n, h = model.n_nodes, 1e-5
    x0, rot0 = model.x0, model.rot0
    quat = np.empty((n, 4))
    forces.quaternions(rot0, quat, 0, n)

    def f_at(x):
        f, tau = np.zeros_like(x), np.zeros_like(x)
        user_terms.total((entry,), x, rot0, quat, 0.0, f, tau)
        return f

    for (b, a), block in zip(pairs, blocks, strict=True):
        for k in range(3):
            xp, xm = x0.copy(), x0.copy()
            xp[a, k] += h
            xm[a, k] -= h
            fd = -(f_at(xp)[b] - f_at(xm)[b]) / (2 * h)
            np.testing.assert_allclose(block[:3, k], fd, atol=1e-8 * np.abs(block).max())
    assert np.abs(blocks[:, :3, :3]).max() > 1.0  # the links are stiff at 0.9 L


# --- bad input: ArgumentError, named, without a traceback of numba's -------------------------


def _no_traceback(exc: pytest.ExceptionInfo) -> str:
    e = exc.value  # no chained numba error shown under it
    assert e.__cause__ is None and (e.__context__ is None or e.__suppress_context__)
    return str(exc.value)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"params": np.zeros((3, 2))}, "params must be (S, K) with S = 2"),
        ({"nodes": [0.5, 1.5]}, "nodes must be node indices"),
        ({"nodes": [[[1]]]}, "nodes must have the shape"),
        ({"role": "floor"}, "role must be one of internal, applied, ground"),
        ({"stiffness": [-1.0, 1.0]}, "stiffness must be finite and >= 0"),
        ({"forces": 3}, "forces must be a function"),
        ({"pairs": [[0, 1, 2]]}, "pairs must have the shape (P, 2)"),
    ],
)
def test_arguments_that_do_not_fit(options, words):
    given = {"forces": spring, "nodes": [1, 2], "params": np.zeros((2, 4)), **options}
    with pytest.raises(ArgumentError) as exc:
        rodsim.user_term("bad", **given)
    assert words in _no_traceback(exc)


def no_energy(nodes, params, x, rot, quat, t, f, tau):
    f[0, 0] += params[0, 0]  # returns nothing: no energy


def _python_helper(t):
    return t


def not_numba(nodes, params, x, rot, quat, t, f, tau):
    return _python_helper(t)  # a plain Python function: numba cannot call it


@pytest.mark.parametrize("fn", [no_energy, not_numba])
def test_a_function_that_does_not_compile(fn):
    with pytest.raises(ArgumentError) as exc:
        rodsim.user_term("bad", forces=fn, nodes=[1], params=[[1.0]])
    text = _no_traceback(exc)
    assert "user term 'bad': its forces function does not compile for float64" in text
    assert "(nodes, params, x, rot, quat, t, f, tau) -> energy" in text


def test_nodes_the_model_does_not_have():
    term = rodsim.user_term("far", forces=spring, nodes=[99], params=[[0, 0, 0, 1.0]])
    with pytest.raises(ArgumentError) as exc:
        rodsim.Simulation(rodsim.case_from_yaml(CASE + EXPLICIT), terms=[term])
    assert "nodes names node 99, and the model has 9 nodes" in _no_traceback(exc)
    with pytest.raises(ArgumentError, match="expected a user term"):
        rodsim.Simulation(rodsim.case_from_yaml(CASE + EXPLICIT), terms=[spring])


def test_undeclared_coupling_is_refused():
    """A term whose forces at one node move with another node it does not pair is refused
    (the implicit Jacobian would miss the coupling)."""
    model = rodsim.prepare(rodsim.case_from_yaml(CASE + EXPLICIT)).setup.model
    hidden = rodsim.user_term(
        "hidden", forces=link, nodes=[[0, 8]], params=[[1.0, 1.0]], pairs=[[0, 0]]
    )
    with pytest.raises(ArgumentError, match="change with a node its pairs do not couple to it"):
        user_terms.attach(model, [hidden])


# --- the documented example -------------------------------------------------------------------


def test_user_term_example(capsys):
    """docs/examples/user_term.py (docs/python.md): a tether written in Python holds the tip
    like the built-in supports term, bit for bit."""
    path = ROOT / "docs" / "examples" / "user_term.py"
    spec = importlib.util.spec_from_file_location("user_term_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.main([])
    assert out["same"]
    assert out["tip_z"] == pytest.approx(-0.027112, abs=1e-6)  # as docs/python.md prints
    assert "same as supports: True" in capsys.readouterr().out
