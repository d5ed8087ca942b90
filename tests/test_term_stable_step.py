"""The terms' shares in the explicit stable step, the Newton round-off floor and the free-body
test (Term.stable_step, Term.roundoff, the GROUND role; rodsim.integrators.stable_step,
rodsim.integrators.implicit), term by term through the generic code, and against what each
term's forces do.

stable_step_failures and roundoff_failures are the checks of a term against its own forces
(the contract test, tests/test_terms_contract.py, may call them for every term of TERMS):

- the stable step must bound the term's top frequency: lambda_max(M^-1 K) of its tangent
  stiffness K at the reference (central differences of its forces, step 1e-6: truncation
  ~1e-12 relative, round-off ~eps |f| / 1e-6 ~ 1e-10 relative) is at most (2 / undamped)^2
  of step_limit on a model holding the term. Tolerance 1e-6 relative: the rods' element
  frequencies are themselves central differences (test_stable_step.py: FD_TOL = 1e-7).
- the round-off floor must cover the term's round-off: the change of its forces under
  coordinate errors of round-off size (eps |x| per coordinate, eps per rotation; K d by
  central differences, linear in d) has a weighted residual norm below the floor. A term that
  adds stiffness and gives no hook fails both (a deliberately incomplete term below).
"""

import dataclasses
import math

import numpy as np
import pytest
from conftest import SPAGHETTI_SECTION, plate_strip
from scipy.linalg import eigh
from scipy.spatial.transform import Rotation

from rodsim.integrators import implicit
from rodsim.integrators.explicit import _set_window
from rodsim.integrators.stable_step import shares, step_limit
from rodsim.mesh.generate import straight_rod
from rodsim.model import forces
from rodsim.model.assembly import PointMass, build_model
from rodsim.model.connectors import Connector, pack_connectors
from rodsim.model.plate import make_plates
from rodsim.model.supports import Support
from rodsim.terms import APPLIED, TERMS, Term

pytestmark = pytest.mark.fast

FD_STEP = 1.0e-6
BOUND_TOL = 1.0e-6
EPS = np.finfo(float).eps


# --- sample models: each holds one term (or all of them) ----------------------------------------


def _rods():
    part = straight_rod([0, 0, 0], [6, 8, 0], 4, up=[0, 0, 1])
    return build_model(part.points, part.frames, part.conn, SPAGHETTI_SECTION)


def _plates():
    points, frames, conn, _ = plate_strip(3, 2, length=3.0, width=1.0)
    plates = make_plates(conn, points, frames, 1e5, 0.3, 0.05, 1.0)
    return build_model(points, frames, np.zeros((0, 2), dtype=np.int64), [], plates=plates)


def _masses(n, masses=None, inertia=None, rng=None):
    """n free point masses (no element) on a line, frames turned at random."""
    rng = np.random.default_rng(5) if rng is None else rng
    x0 = np.c_[np.arange(n, dtype=float), 0.3 * rng.standard_normal((n, 2))]
    rot0 = Rotation.from_rotvec(0.7 * rng.standard_normal((n, 3))).as_matrix()
    masses = np.linspace(1.0, 3.0, n) if masses is None else masses
    inertia = np.linspace(0.2, 0.5, n) if inertia is None else inertia
    pms = [
        PointMass(nodes=[a], mass=float(m), inertia=np.diag([j, 1.5 * j, 2.0 * j]))
        for a, (m, j) in enumerate(zip(masses, inertia, strict=True))
    ]
    return x0, rot0, pms


def _supports():
    x0, rot0, pms = _masses(3)
    sp = [
        Support(nodes=[0, 2], spring=(10.0, 20.0, 30.0), rotational_spring=(1.0, 2.0, 3.0)),
        Support(nodes=[2], spring=(5.0, 0.0, 7.0), dashpot=(0.1, 0.2, 0.3)),
    ]
    empty = np.zeros((0, 2), dtype=np.int64)
    return build_model(x0, rot0, empty, [], point_masses=pms, supports=sp)


CONNECTORS = (
    Connector(a=[0], b=[1], stiffness=(40.0, 10.0, 20.0), damping=(0.3, 0.1, 0.2)),
    Connector(
        a=[1],
        b=[2],
        frame="node",
        stiffness=(30.0, 50.0, 10.0),
        rotational_stiffness=(2.0, 1.0, 3.0),
        rotational_damping=(0.05, 0.0, 0.02),
    ),
    Connector(a=[2], b=[3], kind="cable", stiffness=(80.0, 0.0, 0.0), length=0.9),
    Connector(a=[0], b=[3], kind="strut", stiffness=(15.0, 0.0, 0.0), length=3.5),
    Connector(a=[3], b=[4], kind="plastic", stiffness=(60.0, 60.0, 60.0), yield_force=(1, 1, 1)),
)


def _connectors(items=CONNECTORS, masses=None, inertia=None):
    n = 1 + max(int(max(np.max(c.a), np.max(c.b))) for c in items)
    x0, rot0, pms = _masses(n, masses, inertia)
    empty = np.zeros((0, 2), dtype=np.int64)
    arrays = {"connectors": pack_connectors(items, x0, rot0)}
    return build_model(x0, rot0, empty, [], point_masses=pms, term_arrays=arrays)


def _everything():
    """A rod (nodes 0-4) with supports, connectors along it and to a point mass (node 5)."""
    part = straight_rod([0, 0, 0], [6, 8, 0], 4, up=[0, 0, 1])
    x0 = np.r_[part.points, [[6.0, 9.0, 0.5]]]
    rot0 = np.r_[part.frames, Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()[None]]
    items = (
        Connector(
            a=[4], b=[5], frame="node", stiffness=(3e3, 1e3, 2e3), rotational_stiffness=(50,) * 3
        ),
        Connector(a=[0], b=[2], stiffness=(500.0, 800.0, 100.0)),
    )
    return build_model(
        x0,
        rot0,
        part.conn,
        SPAGHETTI_SECTION,
        point_masses=[PointMass(nodes=[5], mass=40.0, inertia=5.0 * np.eye(3))],
        supports=[Support(nodes=[2, 4], spring=(2e3, 1e3, 4e3), rotational_spring=(30,) * 3)],
        term_arrays={"connectors": pack_connectors(items, x0, rot0)},
    )


SAMPLES = {
    "rods": _rods,
    "plates": _plates,
    "supports": _supports,
    "connectors": _connectors,
}


def _model_for(term: Term):
    """A sample model holding the term; the terms without stiffness (applied loads, mass
    damping: no share in either bound) are checked on the rod, where the checks pass
    vacuously unless such a term is given forces that are not APPLIED."""
    return SAMPLES.get(term.name, _rods)()


# --- the term's forces, its tangent stiffness and the mass matrix -------------------------------


def _turned(rot, dtheta):
    """exp(hat(dtheta_a)) rot_a per node (spatial rotation variations)."""
    return np.ascontiguousarray(
        np.einsum("nij,njk->nik", Rotation.from_rotvec(dtheta).as_matrix(), rot)
    )


def term_forces(term: Term, model, x, rot) -> np.ndarray:
    """(N,6) forces and moments of one term alone at x, rot (t = 0)."""
    n = model.n_nodes
    quat = np.empty((n, 4))
    forces.quaternions(rot, quat, 0, n)
    f, tau = np.zeros((n, 3)), np.zeros((n, 3))
    terms = model.terms
    state = getattr(terms, term.name + "_state")
    term.forces(term.arrays(model), state, terms, x, rot, quat, 0.0, f, tau)
    return np.concatenate([f, tau], axis=1)


def _directional(term, model, dx, dtheta) -> np.ndarray:
    """K d (N,6): minus the change of the term's forces along (dx, dtheta) at the reference,
    by central differences."""
    h = FD_STEP
    x0, rot0 = model.x0, model.rot0
    plus = term_forces(term, model, x0 + h * dx, _turned(rot0, h * dtheta))
    minus = term_forces(term, model, x0 - h * dx, _turned(rot0, -h * dtheta))
    return -(plus - minus) / (2.0 * h)


def stiffness(term: Term, model) -> np.ndarray:
    """(6N, 6N) tangent stiffness of one term at the reference, symmetrised; dofs (x_a,
    theta_a) per node, theta spatial."""
    n = model.n_nodes
    k = np.zeros((6 * n, 6 * n))
    for col in range(6 * n):
        d = np.zeros((n, 6))
        d.flat[col] = 1.0
        k[:, col] = _directional(term, model, d[:, :3], d[:, 3:]).ravel()
    return 0.5 * (k + k.T)


def mass_matrix(model) -> np.ndarray:
    """(6N, 6N) lumped mass: m_a I and the spatial rotary inertia R J R^T per node."""
    n = model.n_nodes
    m = np.zeros((6 * n, 6 * n))
    for a in range(n):
        m[6 * a : 6 * a + 3, 6 * a : 6 * a + 3] = model.mass[a] * np.eye(3)
        r = model.rot0[a]
        m[6 * a + 3 : 6 * a + 6, 6 * a + 3 : 6 * a + 6] = r @ model.inertia[a] @ r.T
    return m


def top_frequency2(terms_of: list[Term], model) -> float:
    """lambda_max(M^-1 K) of the terms' summed stiffness at the reference."""
    k = sum(stiffness(t, model) for t in terms_of)
    return float(eigh(k, mass_matrix(model), eigvals_only=True).max())


def _adds_stiffness(term: Term) -> bool:
    return term.forces is not None and not term.role & APPLIED


# --- the checks a term must pass (callable from the contract test) ------------------------------


def stable_step_failures(term: Term, model) -> list[str]:
    """What the term's stable-step share says against its forces, on a model holding it (a
    list of failures; empty: it agrees)."""
    out = []
    if term.stable_step is None:
        if _adds_stiffness(term):
            out.append("stable_step: its forces have a stiffness but it gives no share")
            # a model holding only the term: the generic step is then unbounded
            if top_frequency2([term], model) > 0.0:
                out.append("stable_step: the stable step does not bound its top frequency")
        return out
    share = term.stable_step(term.arrays(model), model)
    sizes = {len(share.node), len(share.omega2), len(share.rate)}
    if len(sizes) != 1:
        out.append(f"stable_step: node, omega2, rate of different sizes {sorted(sizes)}")
    if len(np.unique(share.node)) != len(share.node):
        out.append("stable_step: a node appears twice in its share")
    if np.any(share.omega < 0.0) or np.any(share.omega2 < 0.0) or np.any(share.rate < 0.0):
        out.append("stable_step: a negative frequency or decay rate")
    # the bound step_limit takes from this share alone (the generic sum of the shares:
    # test_generic_step_limit_is_the_terms_own_share)
    top2 = float(share.omega.max()) ** 2 if share.omega.size else 0.0
    bound2 = top2 + (float(share.omega2.max()) if share.omega2.size else 0.0)
    truth = top_frequency2([term], model)
    if not truth <= bound2 * (1.0 + BOUND_TOL):
        out.append(f"stable_step: top omega^2 {truth:.6g} above its bound {bound2:.6g}")
    return out


def roundoff_failures(term: Term, model, seed: int = 4) -> list[str]:
    """What the term's round-off share says against its forces, on a model holding it."""
    out = []
    extent = np.ptp(model.x0, axis=0)
    length = float(np.linalg.norm(extent)) or 1.0
    size = float(np.max(np.abs(model.x0))) + length
    own = term.arrays(model)
    scale = 0.0 if term.roundoff is None else term.roundoff(own, size, length)
    if term.roundoff is None and _adds_stiffness(term):
        out.append("roundoff: its forces have a stiffness but it gives no force scale")
    if not _adds_stiffness(term):
        return out
    # coordinate errors of round-off size: eps |x| per coordinate, eps per rotation component
    rng = np.random.default_rng(seed)
    n = model.n_nodes
    dx = size * rng.uniform(-1.0, 1.0, (n, 3))
    dtheta = rng.uniform(-1.0, 1.0, (n, 3))
    noise = EPS * _directional(term, model, dx, dtheta)
    norm = implicit.weighted_norm(noise, length)
    floor = 10.0 * EPS * math.sqrt(n) * scale
    if not norm <= floor:
        out.append(f"roundoff: a round-off residual {norm:.3g} above its floor {floor:.3g}")
    return out


# --- each term alone, through the generic code --------------------------------------------------


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.name)
def test_stable_step_bounds_each_terms_top_frequency(term):
    model = _model_for(term)
    assert stable_step_failures(term, model) == []


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.name)
def test_roundoff_floor_covers_each_terms_round_off(term):
    model = _model_for(term)
    assert roundoff_failures(term, model) == []


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_generic_step_limit_is_the_terms_own_share(name):
    """On a model holding only the term, step_limit gives what the term's hook gives: the top
    element frequency, the stiffest node's springs and dt = 2 / sqrt(omega_e^2 + omega_s^2);
    the other terms' shares are empty."""
    model = SAMPLES[name]()
    (term,) = [t for t in TERMS if t.name == name]
    share = term.stable_step(term.arrays(model), model)
    others = [s for n, s in shares(model) if n != name]
    assert all(s.omega.size == 0 and s.node.size == 0 for s in others)
    omega = share.omega[share.omega > 0.0]
    top = float(omega.max()) if omega.size else 0.0
    spring = float(share.omega2.max()) if share.omega2.size else 0.0
    assert top > 0.0 or spring > 0.0  # the sample exercises the hook
    limit = step_limit(model)
    assert limit.omega == top
    assert limit.spring_omega == math.sqrt(spring)
    assert limit.undamped == pytest.approx(2.0 / math.sqrt(top**2 + spring), rel=1e-14)
    if omega.size:
        assert limit.elastic == pytest.approx(2.0 / top, rel=1e-14)
        assert limit.what.startswith(share.label + " ")
    else:  # springs alone: no element, and nothing for the springs to collapse against
        assert (limit.elastic, limit.element, limit.what) == (np.inf, -1, "")
        assert limit.collapse() == ""


def test_terms_springs_at_one_node_add_up():
    """Supports and connectors at the same nodes: each node's squared frequencies add (a bound
    on the sum of the two stiffnesses), and the bound holds for the assembled model."""
    model = _everything()
    parts = dict(shares(model))
    sup, con = parts["supports"], parts["connectors"]
    both = np.intersect1d(sup.node, con.node)
    assert both.size  # nodes 2 and 4 hold both
    per_node = {}
    for s in (sup, con):
        for a, w2 in zip(s.node, s.omega2, strict=True):
            per_node[int(a)] = per_node.get(int(a), 0.0) + w2
    limit = step_limit(model)
    assert limit.spring_omega == pytest.approx(math.sqrt(max(per_node.values())), rel=1e-15)
    assert max(per_node, key=per_node.get) in both  # the stiffest node holds both terms
    assert limit.spring_omega > math.sqrt(max(sup.omega2.max(), con.omega2.max()))
    stiff = [t for t in TERMS if _adds_stiffness(t)]
    truth = top_frequency2(stiff, model)
    assert truth <= (2.0 / limit.undamped) ** 2 * (1.0 + BOUND_TOL)


# --- the connectors' bound against the closed form ----------------------------------------------


def test_one_link_between_equal_masses_gives_the_exact_frequency():
    """A spring k between equal masses m oscillates at omega^2 = 2 k / m: the bound is exact."""
    k, m = 250.0, 2.0
    spring = Connector(a=[0], b=[1], stiffness=(k, 0.5 * k, 0.0))
    model = _connectors((spring,), masses=[m, m], inertia=[0.3, 0.3])
    assert step_limit(model).undamped == pytest.approx(2.0 / math.sqrt(2.0 * k / m), rel=1e-15)


@pytest.mark.parametrize("ratio", [1.0, 2.0, (1.0 + math.sqrt(2.0)) ** 2, 10.0, 1e4])
def test_one_link_bound_is_within_21_percent_of_the_exact_frequency(ratio):
    """omega^2 = k (1/m_a + 1/m_b); the bound k (1/sqrt(m_a) + 1/sqrt(m_b)) / sqrt(min m)
    is above it by (1 + r) / (1 + r^2), r = sqrt(m_a / m_b) <= 1: at most 1.2071 at r =
    sqrt(2) - 1 (mass ratio (1 + sqrt 2)^2), 1 at r = 1 and r -> 0."""
    k, m_a = 40.0, 1.0
    m_b = m_a * ratio
    model = _connectors((Connector(a=[0], b=[1], stiffness=(k, k, k)),), masses=[m_a, m_b])
    exact = k * (1.0 / m_a + 1.0 / m_b)
    bound = (2.0 / step_limit(model).undamped) ** 2
    r = math.sqrt(m_a / m_b)
    assert bound / exact == pytest.approx((1.0 + r) / (1.0 + r * r), rel=1e-14)
    assert 1.0 <= bound / exact <= 1.2072


def test_dashpot_decay_rate_is_the_links_c_over_2m():
    """A dashpot c between equal masses m: the relative motion decays at c (1/m + 1/m) / 2."""
    c, m = 0.8, 2.0
    link = Connector(a=[0], b=[1], stiffness=(10.0, 0, 0), damping=(c, 0.5 * c, 0.0))
    model = _connectors((link,), masses=[m, m], inertia=[0.3, 0.3])
    (share,) = [s for n, s in shares(model) if n == "connectors"]
    np.testing.assert_allclose(share.rate, 0.5 * c * 2.0 / m, rtol=1e-15)


# --- round-off floor and free-body test ---------------------------------------------------------


def test_roundoff_floor_counts_every_terms_scale():
    """10 eps sqrt(N) times the largest term scale; the supports' alone on a spring model (it
    was 0 before they counted), the largest of all on the full model."""
    for make in (_supports, _connectors, _everything):
        model = make()
        length = float(np.linalg.norm(np.ptp(model.x0, axis=0))) or 1.0
        size = float(np.max(np.abs(model.x0))) + length
        scales = [t.roundoff(t.arrays(model), size, length) for t in TERMS if t.roundoff]
        expected = 10.0 * EPS * math.sqrt(model.n_nodes) * max(scales)
        assert implicit.roundoff_floor(model, length) == expected > 0.0


def test_free_body_follows_the_ground_role():
    """Free masses joined by connectors are a free body (both momenta kept); a support
    (GROUND) or a fixed component restrains them."""
    free = _connectors()
    assert not implicit.restrained(free)
    held = dataclasses.replace(free, fixed=np.eye(free.n_nodes, 6, dtype=bool))
    assert implicit.restrained(held)
    assert implicit.restrained(_supports())
    assert not implicit.restrained(_rods()) and implicit.restrained(_everything())


def test_explicit_window_is_set_through_the_terms():
    """The explicit scheme's step window reaches every term with a window hook (the loads)."""
    model = _rods()
    windowed = [t for t in TERMS if t.window is not None]
    assert [t.name for t in windowed] == ["loads"]
    _set_window(None, model.terms, 1.5, 2.5)
    assert model.terms.loads.window.tolist() == [1.5, 2.5]
    _set_window(None, model.terms, math.nan, math.nan)
    assert np.isnan(model.terms.loads.window).all()


# --- a term without the hooks fails the checks --------------------------------------------------


def test_a_term_without_its_shares_fails():
    """The supports without stable_step and roundoff: the checks name both hooks."""
    (sup,) = [t for t in TERMS if t.name == "supports"]
    bare = dataclasses.replace(sup, stable_step=None, roundoff=None)
    model = _supports()
    failures = stable_step_failures(bare, model) + roundoff_failures(bare, model)
    assert any(f.startswith("stable_step:") for f in failures)
    assert any(f.startswith("roundoff:") for f in failures)
    # a share too small is caught too: the springs against ten times the masses
    weak = dataclasses.replace(
        sup, stable_step=lambda sp, m: sup.stable_step(sp, dataclasses.replace(m, mass=10 * m.mass))
    )
    assert any("above its bound" in f for f in stable_step_failures(weak, model))


def test_equilibrium_on_stiff_springs_stops_at_their_round_off():
    """A rod held by springs k = 1e9 at every node: their forces k u carry round-off ~ eps k
    |x| = 4e-6 per node (|x| <= 20), so Newton stalls at a relative residual 1.9e-8, above
    tol = 1e-8. With the supports' share in the floor (10 eps sqrt(13) k size = 1.4e-4) it
    stops there; without it (the rods' share alone, 1.7e-9) it ran 25 iterations and failed."""
    from rodsim.integrators import equilibrium
    from rodsim.model import timefunc
    from rodsim.model.loads import NodalLoad

    part = straight_rod([0, 0, 0], [6, 8, 0], 12, up=[0, 0, 1])
    k = 1e9
    model = build_model(
        part.points,
        part.frames,
        part.conn,
        SPAGHETTI_SECTION,
        supports=[Support(nodes=list(range(13)), spring=(k, k, k), rotational_spring=(1, 1, 1))],
        loads=[NodalLoad(nodes=[12], force=(3.0, -2.0, 50.0), time=timefunc.ramp(1.0))],
    )
    eq = equilibrium.start(model, "SO3xR3", h0=1.0, tol=1e-8)
    size, length = 8.0 + 10.0, 10.0  # max |x0| + the diagonal of the bounding box
    (rods,) = [t for t in TERMS if t.name == "rods"]
    rods_alone = 10.0 * EPS * math.sqrt(13) * rods.roundoff(rods.arrays(model), size, length)
    springs = 10.0 * EPS * math.sqrt(13) * (k * size + 1.0 / length)  # k_t |x| + k_r / L
    assert eq.solver.floor == pytest.approx(springs, rel=1e-14, abs=0.0)
    assert eq.solver.floor > 1e4 * rods_alone
    attempt = equilibrium.newton(eq, 1.0, 25)
    assert attempt.converged and attempt.iterations <= 5
    assert attempt.history[-1] > 1e-8  # stopped at the floor, not at the tolerance
