"""The mechanism check, modal damping, buckling's prestress, the load scaling of path following
and buckling, and the summary, held to the terms' hooks (rodsim.terms.contract, issue 34).

For each term and each of these hooks, a model holding only that term gives through the generic
code (rodsim.model.variants, mechanism, modal, case_summary) what the term's own hook gives: the
generic code calls the same hook on the same arrays, so they agree bit for bit. The hooks are
then held to the term's kernels:

- restraint: r^T K r along the unit rigid motions r equals the central second difference of
  the term's energy along the exact rigid motions exp(e (t, omega)) (e = 1e-4; at a
  stationary reference the curve's second-order part does no work): O(e^2) from the
  difference, so within 1e-6 of the term's stiffness scale (the same difference along a
  random unit motion); a term without the hook (rods, plates, links in a node's frame or
  along the chord: their energy is invariant under rigid motions) must show 0;
- damping_blocks: C v equals minus the term's damping forces at the reference for random rates
  (both exact and linear in the rates there; round-off: 1e-12 of the largest force);
- rate_damping: c (K + K^T) / 2 v equals minus the damping forces (the strain-rate damping is
  c times the material stiffness at the stress-free reference; complex-step K: 1e-9);
- prestressed: the prestressed term's forces at base equal its forces at state = base + delta
  (delta of 1e-6 of the size; first order: O(delta) = 1e-6 relative, tolerance 1e-4);
- scaled, dead, entry: the generic variants are the hook's arrays.

contract_failures() lists what a term lacks for these analyses; a deliberately incomplete term
fails it and the restraint check (the lead's TERMS-to-hooks test may call these functions)."""

import dataclasses

import numpy as np
import pytest
from conftest import SPAGHETTI_SECTION, plate_strip
from scipy.spatial.transform import Rotation

from rodsim import case_summary
from rodsim.case.load_terms import LoadRows
from rodsim.integrators import implicit, modal
from rodsim.model import connectors as mc
from rodsim.model import forces, mechanism, variants
from rodsim.model.assembly import build_model
from rodsim.model.loads import Gravity, NodalLoad, Pressure
from rodsim.model.plate import make_plates
from rodsim.model.supports import Support
from rodsim.terms import APPLIED, GROUND, INTERNAL, TERMS, supports

GROUP = "SO3xR3"
STEP = 1e-4  # e of the rigid-motion path
LOOSE = 1e-6  # of the term's stiffness scale: O(e^2) = 1e-8 for a term that does not restrain


def _rods():
    """Two rods (a bent one and a loose one), nodal loads (dead, follower, a moment), gravity,
    springs and dashpots in global and section axes, both dampings."""
    x0 = np.array([[0, 0, 0], [1, 0, 0], [2, 0.5, 0], [3, 1, 0.2], [0, 2, 0], [1, 2, 0]], float)
    rot0 = np.repeat(np.eye(3)[None], 6, axis=0)
    rot0[2:4] = Rotation.from_rotvec([0, 0, 0.4]).as_matrix()
    return build_model(
        x0,
        rot0,
        np.array([[0, 1], [1, 2], [2, 3], [4, 5]]),
        [SPAGHETTI_SECTION] * 4,
        loads=[
            NodalLoad(nodes=[3], force=(0.1, 0.2, 0.3), moment=(0.0, 0.5, 1.0)),
            NodalLoad(nodes=[2, 5], force=(0.0, -0.4, 0.2), follower=True),
        ],
        gravity=[Gravity((0.0, 0.0, -9.81))],
        supports=[
            Support(
                nodes=[0, 2],
                spring=(10.0, 20.0, 30.0),
                rotational_spring=(1.0, 2.0, 3.0),
                dashpot=(0.1, 0.2, 0.3),
                rotational_dashpot=(0.01, 0.02, 0.03),
            ),
            Support(
                nodes=[2, 4],
                spring=(5.0, 0.0, 7.0),
                rotational_spring=(0.0, 4.0, 0.0),
                dashpot=(1.0, 0.0, 2.0),
                rotational_dashpot=(0.5, 0.0, 0.0),
                frame="section",
            ),
        ],  # fmt: skip
        damping=(1e-2, 0.3),
    )


def _plates():
    points, frames, conn, _ = plate_strip(3, 2, length=3.0, width=1.0)
    plates = make_plates(conn, points, frames, 1e5, 0.3, 0.05, 1.0)
    return build_model(
        points,
        frames,
        np.zeros((0, 2), dtype=np.int64),
        [],
        plates=plates,
        loads=[NodalLoad(nodes=[0], force=(0.0, 0.0, 1.0))],
        pressures=[Pressure(elements=np.arange(3), value=2.0)],
        damping=(1e-2, 0.0),
    )


def _links(prestress=False):
    """Two rods side by side joined by links of every kind, in both frames, with dashpots, the
    cable and the strut pre-tensioned (prestress: a stress-free reference without rotational
    springs, for the prestress check: their reference rotation is not shifted)."""
    x0 = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0.1], [1, 1.2, 0], [2, 1, 0]], float)
    rot0 = np.repeat(np.eye(3)[None], 6, axis=0)
    rot0[3:] = Rotation.from_rotvec([0.3, 0.1, 0.2]).as_matrix()
    k_r = (0.0, 0.0, 0.0) if prestress else (3.0, 2.0, 1.0)
    free = (None, None) if prestress else (1.0, 2.0)  # reference lengths 1.56, 1.41

    def link(a, b, kind, frame, **kw):
        kw.setdefault("stiffness", (7.0, 8.0, 9.0))
        return mc.Connector(np.array([a]), np.array([b]), kind=kind, frame=frame, **kw)

    items = [
        link(0, 3, "spring", "global", damping=(1.0, 2.0, 3.0), rotational_stiffness=k_r,
             rotational_damping=(0.1, 0.2, 0.3)),
        link(1, 4, "spring", "node", damping=(0.5, 1.0, 1.5), rotational_stiffness=k_r,
             rotational_damping=(0.3, 0.2, 0.1)),
        link(2, 5, "plastic", "node", yield_force=(1.0, 1.0, 1.0), damping=(0.2, 0.2, 0.2)),
        link(0, 4, "cable", "global", stiffness=(5.0, 0.0, 0.0), length=free[0]),
        link(1, 5, "strut", "global", stiffness=(5.0, 0.0, 0.0), length=free[1]),
    ]  # fmt: skip
    return build_model(
        x0,
        rot0,
        np.array([[0, 1], [1, 2], [3, 4], [4, 5]]),
        [SPAGHETTI_SECTION] * 4,
        term_arrays={"connectors": mc.pack_connectors(items, x0, rot0)},
    )


MODELS = {"rods": _rods, "plates": _plates, "links": _links}


def model_for(term):
    """A sample model holding the term."""
    for make in MODELS.values():
        model = make()
        if _holds(term, model):
            return model
    pytest.skip(f"no sample model holds {term.name}")


def _holds(term, model) -> bool:
    """Whether the model holds the term (an APPLIED term: applies a load)."""
    own = term.arrays(model)
    if term.role & APPLIED and term.loaded is not None:
        return term.loaded(own)
    return term.present(own)


def alone(model, term):
    """The model holding only `term` (of the terms with forces); no damping but the term's."""
    only = variants.holding(model, {term.name})
    keep = term.damping_blocks is not None and term.forces is None  # mass damping: alpha
    return dataclasses.replace(only, beta=only.beta if term.rate_damping else 0.0,
                               alpha=only.alpha if keep else 0.0)  # fmt: skip


def _quat(rot):
    quat = np.empty((rot.shape[0], 4))
    forces.quaternions(rot, quat, 0, rot.shape[0])
    return quat


def _energy(term, model, x, rot) -> float:
    terms = model.terms
    f, tau = np.zeros_like(x), np.zeros_like(x)
    own, state = getattr(terms, term.name), getattr(terms, term.name + "_state")
    return float(term.forces(own, state, terms, x, rot, _quat(rot), 0.0, f, tau)[0])


def _along(model, motion, e):
    """(x, rot) at x0 + e u, exp(e hat(theta)) Lambda0 for motion (N,6) = (u, theta)."""
    turn = Rotation.from_rotvec(e * motion[:, 3:]).as_matrix()
    return model.x0 + e * motion[:, :3], np.einsum("nij,njk->nik", turn, model.rot0)


def _part_motions(model):
    """(nodes, r (K,6,6)) the unit rigid motions of the part of node 0."""
    labels = mechanism.parts(model)
    nodes = np.flatnonzero(labels == labels[0])
    x = model.x0[nodes]
    size = float(np.linalg.norm(np.ptp(x, axis=0)))
    return nodes, mechanism.rigid_basis(x, x.mean(axis=0), size), labels, size


def _rigid(model, nodes, z, e):
    """(x, rot) after the exact rigid motion exp(e (t, omega)) of the part's nodes about its
    centroid c, z = (t, size omega) (the coefficients of rigid_basis)."""
    x0 = model.x0[nodes]
    c = x0.mean(axis=0)
    size = float(np.linalg.norm(np.ptp(x0, axis=0)))
    turn = Rotation.from_rotvec(e * z[3:] / size).as_matrix()
    x, rot = model.x0.copy(), model.rot0.copy()
    x[nodes] = c + (x0 - c) @ turn.T + e * z[:3]
    rot[nodes] = np.einsum("ij,njk->nik", turn, model.rot0[nodes])
    return x, rot


def _second(term, model, path) -> float:
    """(V(e) + V(-e) - 2 V(0)) / e^2 along path(e) -> (x, rot)."""
    v0 = _energy(term, model, model.x0, model.rot0)
    ends = [_energy(term, model, *path(e)) for e in (STEP, -STEP)]
    return (ends[0] + ends[1] - 2.0 * v0) / STEP**2


def restraint_failures(term, model) -> list[str]:
    """The term's stiffness along the rigid motions of a part, from its energy, against its
    restraint hook (none: zero)."""
    if term.forces is None or term.role & APPLIED:
        return []
    nodes, r, _, _ = _part_motions(model)
    rng = np.random.default_rng(5)
    motion = rng.standard_normal((model.n_nodes, 6)) / np.sqrt(6)
    scale = _second(term, model, lambda e: _along(model, motion, e))
    eye = np.eye(6)
    w = np.array(
        [[_second(term, model, lambda e, z=eye[i] + eye[j]: _rigid(model, nodes, z, e))
          for j in range(6)] for i in range(6)]
    )  # fmt: skip
    d = np.diag(w).copy() / 4.0  # the diagonal's motions are 2 e_i
    w = 0.5 * (w - d[:, None] - d[None, :])
    np.fill_diagonal(w, d)
    own = None if term.restraint is None else term.restraint(term.arrays(model), nodes, r)
    own = np.zeros((6, 6)) if own is None else own
    off = float(np.abs(w - own).max())
    if off > LOOSE * scale:
        return [f"restraint: the energy along rigid motions gives {w.round(9)}, the hook {own}"]
    return []


def own_damping(term, model) -> np.ndarray:
    """(6N, 6N) the term's damping matrix from its own hooks: its blocks, and c times the
    symmetric part of its tangent at the reference (rate_damping)."""
    n = model.n_nodes
    c = np.zeros((6 * n, 6 * n))
    if term.damping_blocks is not None:
        pairs, blocks = term.damping_blocks(term.arrays(model), model)
        for (a, b), blk in zip(pairs, blocks, strict=True):
            c[6 * a : 6 * a + 6, 6 * b : 6 * b + 6] += blk
    if term.rate_damping is not None:
        coef = term.rate_damping(term.arrays(model), model.beta, model.alpha)
        quat = np.empty((n, 4))
        implicit.quaternions(model.rot0, quat)
        k0 = modal.matrices(model, GROUP, model.x0, model.rot0, quat, 0.0)[0].toarray()
        c += coef * (k0 + k0.T) * 0.5
    return c


def damping_failures(term, model) -> list[str]:
    """C of the term's hooks against its damping forces at the reference."""
    if term.damping is None:
        return []
    if term.damping_blocks is None and term.rate_damping is None:
        return ["damping_blocks/rate_damping: its damping is not in the modal damping matrix"]
    only = alone(model, term)
    terms = only.terms
    rng = np.random.default_rng(7)
    rates = rng.standard_normal((model.n_nodes, 6))
    f, tau = np.zeros((model.n_nodes, 3)), np.zeros((model.n_nodes, 3))
    own, state = getattr(terms, term.name), getattr(terms, term.name + "_state")
    x, rot = only.x0, only.rot0
    p = only.mass[:, None] * rates[:, :3]
    term.damping(own, state, terms, x, rot, _quat(rot), p, rates[:, :3], rates[:, 3:], f, tau)
    got = -(own_damping(term, only) @ rates.ravel()).reshape(-1, 6)
    want = np.concatenate([f, tau], axis=1)
    tol = (1e-9 if term.rate_damping else 1e-12) * max(np.abs(want).max(), 1e-300)
    if not np.abs(want).max() > 0.0 or np.abs(got - want).max() > tol:
        return [f"damping: -C v {got[:2]} against the damping forces {want[:2]}"]
    return []


def prestress_failures(term, model) -> list[str]:
    """The prestressed term's forces at base against its forces at base + delta."""
    if term.prestressed is None or term.forces is None:
        return []
    rng = np.random.default_rng(9)
    size = float(np.linalg.norm(np.ptp(model.x0, axis=0)))
    units = np.array([size] * 3 + [1.0] * 3)
    state = _along(model, rng.standard_normal((model.n_nodes, 6)) * units, 1e-6)
    base = (model.x0, model.rot0)
    pre = variants.with_arrays(model, term, term.prestressed(term.arrays(model), base, state, 1.0))

    def at(m, x, rot):
        terms = m.terms
        f, tau = np.zeros_like(x), np.zeros_like(x)
        own, st = getattr(terms, term.name), getattr(terms, term.name + "_state")
        term.forces(own, st, terms, x, rot, _quat(rot), 0.0, f, tau)
        return np.concatenate([f, tau], axis=1)

    f0, f1, fp = at(model, *base), at(model, *state), at(pre, *base)
    change = np.abs(f1 - f0).max()
    if not change > 0.0 or np.abs(fp - f1).max() > 1e-4 * change:
        return [f"prestressed: forces {fp[:2]} at base against {f1[:2]} at the state"]
    return []


def contract_failures(term) -> list[str]:
    """What a term lacks for the mechanism check, modal analysis, buckling, path following and
    the summary (the hooks these analyses cannot do without)."""
    out = []
    if term.forces is not None and term.place is not None and term.empty is None:
        out.append("empty: a model without it (modal damping, a model holding one term)")
    if term.role & APPLIED and term.forces is not None:
        out += [f"{h}: loads that path following and buckling scale" for h in ("scaled",)
                if getattr(term, h) is None]  # fmt: skip
        if term.dead is None:
            out.append("dead: the mechanism's stability test of the dead loads")
    if term.role & GROUND and term.forces is not None and term.restraint is None:
        out.append("restraint: a spring to the ground restrains rigid motions")
    if term.role & INTERNAL and term.forces is not None and term.prestressed is None:
        out.append("prestressed: its geometric stiffness in linear buckling")
    if term.role & (INTERNAL | GROUND) and term.forces is not None and term.count is None:
        out.append("count: its size in the model summary")
    if term.damping is not None and term.damping_blocks is None and term.rate_damping is None:
        out.append("damping_blocks or rate_damping: its share of the modal damping matrix")
    return out


# --- each hook through the generic code on a model holding only the term ---------------------


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.name)
def test_place_and_empty_are_the_inverse_of_arrays(term):
    model = model_for(term)
    own = term.arrays(model)
    placed = variants.with_arrays(model, term, own)
    assert term.arrays(placed) is own
    if term.forces is None:
        return
    gone = variants.without(model, term)
    assert not _holds(term, gone)
    for other in TERMS:  # the others keep their arrays (or, shared, what they hold)
        if other is term:
            continue
        a, b = other.arrays(model), other.arrays(gone)
        if a is own:  # loads and pressure share the packed loads
            assert _holds(other, gone) == _holds(other, model)
        elif _holds(other, model):  # (an absent term may give new empty arrays each time)
            assert a is b


@pytest.mark.parametrize("term", [t for t in TERMS if t.restraint], ids=lambda t: t.name)
def test_generic_restraint_is_the_terms_own(term):
    model = model_for(term)
    nodes, r, _, _ = _part_motions(model)
    own = term.restraint(term.arrays(model), nodes, r)
    generic = mechanism.support_work(alone(model, term), nodes, r)
    assert own is not None and np.any(own != 0.0)
    assert np.array_equal(generic, own)


@pytest.mark.parametrize("term", [t for t in TERMS if t.bending], ids=lambda t: t.name)
def test_generic_bending_scale_is_the_terms_own(term):
    model = model_for(term)
    _, _, labels, size = _part_motions(model)
    own = term.bending(term.arrays(model), labels, labels[0], size)
    generic = mechanism.bending_scale(alone(model, term), labels, 0, size)
    assert own.size and generic == own.max() / size**3


@pytest.mark.parametrize("term", [t for t in TERMS if t.damping_blocks], ids=lambda t: t.name)
def test_generic_damping_matrix_is_the_terms_blocks(term):
    model = model_for(term)
    only = alone(model, term)
    own = own_damping(dataclasses.replace(term, rate_damping=None), only)
    generic = modal.damping_matrix(only, GROUP).toarray()
    assert np.any(own != 0.0)
    assert np.array_equal(generic, own)


@pytest.mark.parametrize("term", [t for t in TERMS if t.rate_damping], ids=lambda t: t.name)
def test_generic_rate_damping_is_the_terms_stiffness(term):
    model = model_for(term)
    only = alone(model, term)
    coef = term.rate_damping(term.arrays(only), only.beta, only.alpha)
    quat = np.empty((model.n_nodes, 4))
    implicit.quaternions(only.rot0, quat)
    k0 = modal.matrices(only, GROUP, only.x0, only.rot0, quat, 0.0)[0]
    generic = modal.damping_matrix(only, GROUP).toarray()
    assert coef > 0.0
    assert np.array_equal(generic, (coef * (k0 + k0.T) * 0.5).toarray())


@pytest.mark.parametrize("term", [t for t in TERMS if t.prestressed], ids=lambda t: t.name)
def test_generic_prestress_is_the_terms_own(term):
    model = model_for(term)
    base = (model.x0, model.rot0)
    state = _along(model, np.random.default_rng(3).standard_normal((model.n_nodes, 6)), 1e-3)
    own = term.prestressed(term.arrays(model), base, state, 7.0)
    generic = term.arrays(variants.prestressed(alone(model, term), base, state, 7.0))
    assert all(np.array_equal(u, v) for u, v in zip(own, generic, strict=True))
    assert any(not np.array_equal(u, v) for u, v in zip(own, term.arrays(model), strict=True))


@pytest.mark.parametrize("hook", ["scaled", "dead", "entry"])
@pytest.mark.parametrize("term", [t for t in TERMS if t.role & APPLIED], ids=lambda t: t.name)
def test_generic_load_variants_are_the_terms_own(term, hook):
    model = alone(model_for(term), term)
    ld = term.arrays(model)  # the rows of one `loads:` entry: a nodal load and a pressure
    rows = LoadRows(np.arange(min(len(ld.node), 1)), np.zeros(0, int), np.zeros(0),
                    np.arange(1, min(len(ld.pressure_el), 2)))  # fmt: skip
    args = {"scaled": (0.37,), "dead": (), "entry": (rows,)}[hook]
    make = {"scaled": variants.scaled_loads, "dead": variants.dead_loads}
    make["entry"] = variants.entry_loads
    own = getattr(term, hook)(term.arrays(model), *args)
    generic = term.arrays(make[hook](model, *args))
    changed = [f for f, u, v in zip(own._fields, own, term.arrays(model), strict=True)
               if not _same(u, v)]  # fmt: skip
    assert changed, "the sample exercises the hook"
    assert all(_same(u, v) for u, v in zip(own, generic, strict=True))


def _same(u, v) -> bool:
    """Bit for bit (NaN windows included)."""
    return u.shape == v.shape and u.dtype == v.dtype and u.tobytes() == v.tobytes()


@pytest.mark.parametrize("term", [t for t in TERMS if t.count], ids=lambda t: t.name)
def test_generic_counts_are_the_terms_own(term):
    model = model_for(term)
    own = term.count(term.arrays(model))
    assert own
    assert own in case_summary.counts(alone(model, term), term.role)
    assert own not in case_summary.counts(variants.without(model, term), term.role)


def test_summary_counts_every_term_in_order():
    """The model line's INTERNAL counts, the supports line's GROUND ones."""
    model = _links()
    assert case_summary.counts(model, INTERNAL) == ["4 rod elements", "5 connectors"]
    assert case_summary.counts(_rods(), GROUND) == ["3 on elastic supports"]
    assert case_summary.counts(_rods(), INTERNAL) == ["4 rod elements"]


# --- the hooks against the kernels ------------------------------------------------------------


@pytest.mark.parametrize("term", [t for t in TERMS if t.forces], ids=lambda t: t.name)
def test_restraint_is_the_energy_along_rigid_motions(term):
    assert restraint_failures(term, model_for(term)) == []


@pytest.mark.parametrize("term", [t for t in TERMS if t.damping], ids=lambda t: t.name)
def test_damping_matrix_is_the_damping_forces(term):
    assert damping_failures(term, model_for(term)) == []


def test_prestress_is_the_forces_of_the_change():
    for term, model in ((TERMS[0], _rods()), (TERMS[1], _plates())):
        assert prestress_failures(term, model) == []
    links = next(t for t in TERMS if t.name == "connectors")
    assert prestress_failures(links, _links(prestress=True)) == []


def test_links_join_parts_and_only_global_links_restrain():
    """The links join the two rods into one part; along its rigid motions only the global-axes
    spring resists, through its translational springs: k |omega x d0|^2 for a rotation, 0 for
    a translation (exactly)."""
    model = _links()
    labels = mechanism.parts(model)
    assert np.all(labels == 0)
    nodes, r, _, _ = _part_motions(model)
    links = next(t for t in TERMS if t.name == "connectors")
    w = links.restraint(links.arrays(model), nodes, r)
    assert np.all(w[:3] == 0.0) and np.all(w[:, :3] == 0.0)
    d0 = model.x0[3] - model.x0[0]
    for i in range(3):
        omega = r[0, 3:, 3 + i]  # the unit rotation's omega
        want = np.sum(np.array([7.0, 8.0, 9.0]) * np.cross(omega, d0) ** 2)
        assert w[3 + i, 3 + i] == pytest.approx(want, rel=1e-12)


def test_every_term_has_the_analyses_hooks():
    assert {t.name: contract_failures(t) for t in TERMS} == {t.name: [] for t in TERMS}


def test_an_incomplete_term_fails():
    """A spring to the ground without its restraint, damping blocks, count or empty: the
    contract check names each, and the energy along rigid motions shows the missing
    restraint."""
    bare = dataclasses.replace(
        supports.TERM, name="supports", restraint=None, damping_blocks=None, count=None, empty=None
    )
    assert len(contract_failures(bare)) == 4
    failures = restraint_failures(bare, _rods())
    assert failures and failures[0].startswith("restraint")
    assert damping_failures(bare, _rods())[0].startswith("damping_blocks")


@pytest.mark.parametrize("frame", ["global", "node"])
def test_two_masses_on_a_damped_link_have_the_closed_form_modes(frame):
    """Two free point masses m1, m2 (rotary inertia j) joined by a link with stiffness k and
    dashpot c per direction, rotational k_r and c_r: the relative translations vibrate at
    omega^2 = k / mu (mu = m1 m2 / (m1 + m2)) with the damping ratio c / (2 mu omega), the
    relative rotations at k_r (2 / j) with c_r (2 / j) / (2 omega) (exact linear algebra:
    1e-9; 11 of the 12 modes, the highest left out). In node a's frame the link's translation
    turns with node a: its rotation about an axis across the link then moves b, so only the
    translation along the link and the rotation about it keep these values there, and the
    node frame's link restrains no rigid motion (six rigid modes) where the global one resists
    the pair's turns across it (four: the translations and the turn about the link)."""
    from rodsim.model.assembly import PointMass

    m1, m2, j, k, c, k_r, c_r = 2.0, 3.0, 0.5, 20.0, 0.3, 7.0, 0.02
    x0 = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    rot0 = np.repeat(np.eye(3)[None], 2, axis=0)
    link = mc.Connector(np.array([0]), np.array([1]), frame=frame, stiffness=(k, k, k),
                        damping=(c, c, c), rotational_stiffness=(k_r, k_r, k_r),
                        rotational_damping=(c_r, c_r, c_r))  # fmt: skip
    model = build_model(
        x0, rot0, np.zeros((0, 2)), [],
        point_masses=[PointMass(np.array([0]), m1, j * np.eye(3)),
                      PointMass(np.array([1]), m2, j * np.eye(3))],
        term_arrays={"connectors": mc.pack_connectors([link], x0, rot0)},
    )  # fmt: skip
    quat = np.empty((2, 4))
    implicit.quaternions(rot0, quat)
    found = modal.modes(model, GROUP, x0, rot0, quat, 11)
    mu = m1 * m2 / (m1 + m2)
    w_t, w_r = np.sqrt(k / mu), np.sqrt(2.0 * k_r / j)
    zeta_t, zeta_r = c / (2.0 * mu * w_t), 2.0 * c_r / j / (2.0 * w_r)
    omega = 2.0 * np.pi * found.frequency
    relative = found.shape[:, 1, :3] - found.shape[:, 0, :3]
    along = np.abs(relative[:, 0]) if frame == "node" else np.linalg.norm(relative, axis=1)
    axial = np.flatnonzero(np.abs(omega / w_t - 1.0) < 1e-9)
    spins = np.flatnonzero(np.abs(omega / w_r - 1.0) < 1e-9)
    assert len(axial) == (3 if frame == "global" else 1) and np.all(along[axial] > 0.1)
    assert len(spins) == (2 if frame == "global" else 1)
    assert np.sum(found.rigid) == (4 if frame == "global" else 6)
    assert found.damping_ratio[axial] == pytest.approx(zeta_t, rel=1e-9)
    assert found.damping_ratio[spins] == pytest.approx(zeta_r, rel=1e-9)


def test_a_link_holds_a_part_to_a_held_one():
    """Rod 3-4-5 hangs on the clamped rod 0-1-2 by a link between nodes 2 and 3 (in node a's
    frame: it restrains no rigid motion of its own): one part, held by the clamp, so no free
    motion; without the link, rod 3-4-5 is a part of its own with six free motions."""
    x0 = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [2.5, 0, 0], [3.5, 0, 0], [4.5, 0, 0]], float)
    rot0 = np.repeat(np.eye(3)[None], 6, axis=0)
    fixed = np.zeros((6, 6), dtype=bool)
    fixed[0] = True
    link = mc.Connector(np.array([2]), np.array([3]), frame="node", stiffness=(1.0, 1.0, 1.0),
                        rotational_stiffness=(1.0, 1.0, 1.0))  # fmt: skip
    conn = np.array([[0, 1], [1, 2], [3, 4], [4, 5]])

    def model(links):
        arrays = {"connectors": mc.pack_connectors(links, x0, rot0)}
        return build_model(x0, rot0, conn, [SPAGHETTI_SECTION] * 4, fixed=fixed,
                           loads=[NodalLoad(nodes=[5], force=(0.0, 0.0, -1.0))],
                           term_arrays=arrays)  # fmt: skip

    joined = model([link])
    assert np.all(mechanism.parts(joined) == 0)
    assert mechanism.free_motions(joined, GROUP) == []
    apart = model([])
    assert list(mechanism.parts(apart)) == [0, 0, 0, 1, 1, 1]
    (loose,) = mechanism.free_motions(apart, GROUP)
    assert list(loose.nodes) == [3, 4, 5] and loose.basis.shape == (6, 6)
