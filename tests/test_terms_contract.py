"""The term contract held as code: every term of TERMS gives, through the generic sums of
rodsim.model.forces, what its own kernels give, and its hooks agree with what its forces do
(a term that couples nodes names the pairs, a term whose damping acts says it is damped, a
term with state accepts it). A deliberately incomplete term fails the checks.

Tolerances: the generic sums call the same kernels in the same order, so they must agree bit
for bit; the coupling check compares a force change with zero exactly (a node the perturbed
node does not reach through the term gets no change at all)."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from conftest import plate_strip, spaghetti
from numba import njit
from scipy.spatial.transform import Rotation

from rodsim.jit import kernel
from rodsim.model import forces
from rodsim.model.assembly import build_model
from rodsim.model.loads import Gravity, NodalLoad, Pressure
from rodsim.model.plate import make_plates
from rodsim.model.supports import Support
from rodsim.terms import INTERNAL, TERMS, Term


def _rod_model():
    m = spaghetti(4)
    base = build_model(
        m.x0,
        m.rot0,
        m.rods.conn,
        [_section()] * 4,
        loads=[NodalLoad(nodes=[4], force=(0.1, 0.2, 0.3), moment=(0.0, 0.5, 1.0))],
        gravity=[Gravity((0.0, 0.0, -9.81))],
        supports=[
            Support(
                nodes=[0, 2],
                spring=(10.0, 20.0, 30.0),
                rotational_spring=(1.0, 2.0, 3.0),
                dashpot=(0.1, 0.2, 0.3),
                rotational_dashpot=(0.01, 0.02, 0.03),
            )
        ],
        damping=(1e-2, 0.3),
    )
    return base


def _section():
    from conftest import SPAGHETTI_SECTION

    return SPAGHETTI_SECTION


def _plate_model():
    points, frames, conn, _ = plate_strip(3, 2, length=3.0, width=1.0)
    plates = make_plates(conn, points, frames, 1e5, 0.3, 0.05, 1.0)
    return build_model(
        points,
        frames,
        np.zeros((0, 2), dtype=np.int64),
        [],
        plates=plates,
        pressures=[Pressure(elements=np.arange(conn.shape[0]), value=2.0)],
        damping=(1e-2, 0.0),
    )


def _link_model():
    from test_term_hooks_modal import _links

    return _links()


MODELS = {"rods": _rod_model, "plates": _plate_model, "links": _link_model}


def _model_for(term: Term):
    """A model holding the term (every built-in term is in one of MODELS)."""
    for make in MODELS.values():
        model = make()
        if term.present(term.arrays(model)):
            return model
    pytest.skip(f"no sample model holds {term.name}")


def _configuration(model, seed=1):
    rng = np.random.default_rng(seed)
    n = model.n_nodes
    x = model.x0 + 0.05 * rng.standard_normal((n, 3))
    turns = Rotation.from_rotvec(0.1 * rng.standard_normal((n, 3))).as_matrix()
    rot = np.ascontiguousarray(np.einsum("nij,njk->nik", turns, model.rot0))
    quat = np.empty((n, 4))
    forces.quaternions(rot, quat, 0, n)
    return x, rot, quat


def _only(terms, name, alone=False):
    """ForceTerms where `name` is the only term of its role (the others of that role absent,
    None in the kernels); terms of other roles stay (a term may act through another one's
    arrays, pressure through the plates'), and a sum selecting the role leaves them out."""
    role = next(t.role for t in TERMS if t.name == name)
    values = []
    for field in forces.TERM_FIELDS:
        value = getattr(terms, field)
        t = next((t for t in TERMS if field in (t.name, t.name + "_state")), None)
        if field == "damped":
            value = True if value else None
        elif t is not None and field == t.name:
            other = t.name != name and (alone or t.role == role)
            drop = not t.present(value) or other
            value = None if drop else value
        values.append(value)
    return forces._new_terms(tuple(values))


@njit
def _generic_damping(terms, x, rot, quat, p, vel, omg, f, tau):
    forces.add_damping(terms, x, rot, quat, p, vel, omg, f, tau)


def _state(terms, t):
    return getattr(terms, t.name + "_state")


@pytest.mark.parametrize("term", [t for t in TERMS if t.forces is not None], ids=lambda t: t.name)
def test_generic_forces_are_the_terms_own(term):
    model = _model_for(term)
    x, rot, quat = _configuration(model)
    own, terms = term.arrays(model), model.terms
    f1, t1 = np.zeros_like(x), np.zeros_like(x)
    u1, v1 = forces._forces(_only(terms, term.name), x, rot, quat, 0.3, f1, t1, term.role)
    f2, t2 = np.zeros_like(x), np.zeros_like(x)
    u2, v2 = term.forces(own, _state(terms, term), terms, x, rot, quat, 0.3, f2, t2)
    assert np.array_equal(f1, f2) and np.array_equal(t1, t2)
    assert (u1, v1) == (u2, v2)
    assert np.any(f2 != 0.0) or np.any(t2 != 0.0)  # the sample exercises the term


@pytest.mark.parametrize("term", [t for t in TERMS if t.damping is not None], ids=lambda t: t.name)
def test_generic_damping_is_the_terms_own(term):
    model = _model_for(term)
    x, rot, quat = _configuration(model)
    rng = np.random.default_rng(2)
    vel, omg = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    p = model.mass[:, None] * vel
    own, terms = term.arrays(model), model.terms
    f1, t1 = np.zeros_like(x), np.zeros_like(x)
    _generic_damping(_only(terms, term.name, alone=True), x, rot, quat, p, vel, omg, f1, t1)
    f2, t2 = np.zeros_like(x), np.zeros_like(x)
    term.damping(own, _state(terms, term), terms, x, rot, quat, p, vel, omg, f2, t2)
    assert np.array_equal(f1, f2) and np.array_equal(t1, t2)


def coupling_failures(term: Term, model) -> list[str]:
    """What a term's hooks say against what its kernels do, on a model holding it: a list of
    failures (empty: the hooks agree)."""
    own, terms = term.arrays(model), model.terms
    state = getattr(terms, term.name + "_state", None)
    x, rot, quat = _configuration(model)
    out = []
    if term.forces is not None:
        # which nodes' forces move when node j moves: every such pair must be declared
        declared = set()
        if term.pairs is not None:
            for a, b in np.asarray(term.pairs(own, terms)).reshape(-1, 2):
                declared |= {(int(a), int(b)), (int(b), int(a))}
        f0, t0 = np.zeros_like(x), np.zeros_like(x)
        term.forces(own, state, terms, x, rot, quat, 0.3, f0, t0)
        for j in range(model.n_nodes):
            xj = x.copy()
            xj[j] += 1e-3
            f, t = np.zeros_like(x), np.zeros_like(x)
            term.forces(own, state, terms, xj, rot, quat, 0.3, f, t)
            moved = np.flatnonzero(np.any(f != f0, axis=1) | np.any(t != t0, axis=1))
            missing = [(int(i), j) for i in moved if i != j and (int(i), j) not in declared]
            if missing:
                out.append(f"pairs: node {j} moves the forces at nodes {missing} undeclared")
                break
    if term.damping is not None:
        rng = np.random.default_rng(3)
        vel, omg = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
        f, t = np.zeros_like(x), np.zeros_like(x)
        term.damping(own, state, terms, x, rot, quat, model.mass[:, None] * vel, vel, omg, f, t)
        acts = bool(np.any(f != 0.0) or np.any(t != 0.0))
        if acts and not (term.damped and term.damped(own, model.beta, model.alpha)):
            out.append("damped: its damping acts but the term says it is undamped")
        if acts and term.step_damping is None:
            out.append("step_damping: damped in the explicit scheme only")
    initial = term.initial_state(own) if term.initial_state is not None else None
    if initial is not None:
        if term.accept is None:
            out.append("accept: a term with state must accept it after a step")
        # reset and restart write a state back in place, field by field
        if not all(isinstance(v, np.ndarray) for v in initial):
            out.append("initial_state: every field of a term's state must be an array")
    return out


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.name)
def test_hooks_agree_with_the_kernels(term):
    model = _model_for(term)
    assert coupling_failures(term, model) == []


# a two-node spring between the rod's ends, deliberately without its pairs and damped flag


@kernel
def _tether_forces(own, state, terms, x, rot, quat, t, f, tau):
    a, b = 0, x.shape[0] - 1
    u = 0.0
    for k in range(3):
        d = x[b, k] - x[a, k] - (terms.rot0[0, 0, 0] * 0.0 + own[k])
        f[a, k] += own[3] * d
        f[b, k] -= own[3] * d
        u += 0.5 * own[3] * d * d
    return u, 0.0


@kernel
def _tether_damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    a, b = 0, x.shape[0] - 1
    for k in range(3):
        c = 0.5 * (vel[b, k] - vel[a, k])
        f[a, k] += c
        f[b, k] -= c


def test_an_incomplete_term_fails_the_contract():
    model = MODELS["rods"]()
    gap = model.x0[-1] - model.x0[0]

    def tether(m):
        return np.array([*gap, 50.0])

    incomplete = Term(
        name="tether", role=INTERNAL, arrays=tether, forces=_tether_forces, damping=_tether_damping
    )
    failures = coupling_failures(incomplete, model)
    assert any(f.startswith("pairs:") for f in failures)
    assert any(f.startswith("damped:") for f in failures)
    assert any(f.startswith("step_damping:") for f in failures)
    complete = dataclasses.replace(
        incomplete,
        pairs=lambda own, terms: np.array([[0, model.n_nodes - 1]]),
        damped=lambda own, beta, alpha: True,
        step_damping=_tether_damping,  # any kernel: only its presence is checked here
    )
    assert coupling_failures(complete, model) == []


# --- no module outside the terms names a term ------------------------------------------------

ROOT = Path(__file__).resolve().parents[1] / "rodsim"
TERM_KERNELS = (
    "rod",
    "rod_viscous",
    "plate_kernels",
    "plate_tangent",
    "plate_viscous",
    "supports",
    "loads",
    "load_tangent",
    "connectors",
    "rod_frequencies",
    "rod_tangent",  # the rods', supports' and connectors' tangent blocks (issue 36): their
    "support_tangent",  # own kernels
    "connector_tangent",
)
# modules that still read term arrays, each with the reason; the list may only shrink
ALLOWED = {
    "model/forces.py": "the generic sums (names no term; reads quaternions)",
    "model/assembly.py": "packs the model from the case (each term's packing: next step)",
}


def _offenders():
    import re

    kernels = "|".join(TERM_KERNELS)
    # a term's kernels or any lowercase helper of its modules; the records a case is packed
    # from (Support, NodalLoad: CapWords) and the packers (pack_*, make_*) are inputs, not
    # kernels
    imports = re.compile(
        rf"from rodsim\.model\.({kernels}) import (?!.*\b(pack_|make_))[^A-Z]"
        rf"|from rodsim\.model import .*\b({kernels})\b"
    )
    arrays = re.compile(
        r"(?<![\w.])((self|run|eq|m)\.)?(model|terms|m)\.(terms\.)?"
        r"(rods|plates|supports|loads)\b"
    )
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("terms/") or rel in ALLOWED:
            continue
        if rel.startswith("model/") and rel.split("/")[1][:-3] in (*TERM_KERNELS, "plate"):
            continue  # the terms' kernels themselves
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if imports.search(line) or arrays.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_module_outside_the_terms_reads_a_term():
    assert _offenders() == []
