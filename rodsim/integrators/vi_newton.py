"""The Newton iteration of the implicit scheme's adaptive steps (docs/implicit_scheme.md,
"Adaptive steps"): a quasi-Newton iteration on the VI residual (rodsim.integrators.
vi_residual) whose Jacobian is formed by coloured forward differences, factorised once as a
band LU (rodsim.integrators.banded; SuperLU where the band is wide) and kept over iterations
and steps, with Broyden's update and a backtracking line search.

`Linear` holds the factorised Jacobian; `solve` runs the iteration on one step, forming a new
Jacobian when the step's size moved by more than REFRESH_RATIO from the held one's, and once
more when the iteration stalls with a held one.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from rodsim.integrators import banded
from rodsim.integrators import vi_residual as vr
from rodsim.integrators.vi_jacobian_dynamic import dynamic_jacobian
from rodsim.jit import kernel
from rodsim.model import forces as fterms

CONTRACTION = 0.9  # an iteration contracting less than this: the held Jacobian is too old
REFRESH_RATIO = 1.25  # a step this much larger or smaller than the Jacobian's: a new one
LINE_SEARCH = 5  # halvings of a step before the iteration gives up
ARMIJO = 1.0e-4  # the sufficient decrease of ||R|| a step must give: (1 - ARMIJO step)


@dataclass
class Linear:
    """The Jacobian held: its band LU (band) or SuperLU (lu), the step h it was formed for
    (NaN: none yet), how many were formed; scratch (N,6) for the forward differences."""

    band: banded.Band | None
    base: np.ndarray = field(repr=False)
    lu: object = field(default=None, repr=False)
    h: float = math.nan
    formed: int = 0


def linear(solver) -> Linear:
    """A Linear for an implicit.Solver: banded if the band is narrow."""
    n = solver.model.n_nodes
    return Linear(banded.banded(solver.pattern, n), np.zeros((n, 6)))


@kernel
def weighted(rows, length):
    """sqrt(sum |force rows|^2 + sum |moment rows / length|^2) of (N,6) rows."""
    s = 0.0
    for a in range(rows.shape[0]):
        for k in range(3):
            s += rows[a, k] * rows[a, k]
            s += (rows[a, 3 + k] / length) ** 2
    return math.sqrt(s)


@kernel
def evaluate(m, terms, sd, xi, w, out, post, length):
    """The residual at xi into out (and post): its weighted norm."""
    vr.residual(m, terms, sd, xi, w, out, post)
    return weighted(out, length)


@kernel
def reference(m, terms, sd, w, length):
    """The Newton tolerance's scale: the larger of the step's momenta and the impulse h |F| of
    the forces at its start (supported components left out), weighted norms."""
    fterms.forces(terms, sd.x, sd.rot, sd.quat, sd.t, w.f, w.tau, fterms.ALL)
    s_f = 0.0
    s_m = 0.0
    for a in range(sd.x.shape[0]):
        for k in range(3):
            if not m.fixed[a, k]:
                s_f += w.f[a, k] ** 2
            if not m.fixed[a, 3 + k]:
                s_f += (w.tau[a, k] / length) ** 2
            s_m += sd.mom[a, k] ** 2 + (sd.mom[a, 3 + k] / length) ** 2
    return max(math.sqrt(s_m), abs(sd.h) * math.sqrt(s_f), 1e-300)


@kernel
def jacobian(
    m,
    terms,
    sd,
    xi,
    w,
    out,
    post,
    base,
    color_ptr,
    color_nodes,
    col_ptr,
    col_rows,
    col_blocks,
    data,
):
    """BSR blocks data (B,6,6) of d residual / d xi at xi by coloured forward differences in
    real arithmetic (rodsim.integrators.vi_residual.jacobian's pattern): 1 + 6 x colours
    residuals, each about 3x cheaper than a complex one. Accurate to ~1e-8 relative, which
    the modified Newton iteration, whose matrix is a step or more old anyway, does not feel."""
    vr.residual(m, terms, sd, xi, w, base, post)
    n = xi.shape[0]
    xp = xi.copy()
    big = 1.0
    for a in range(n):
        for k in range(6):
            big = max(big, abs(xi[a, k]))
    eps = 1.5e-8 * big
    for c in range(color_ptr.shape[0] - 1):
        for j in range(6):
            for q in range(color_ptr[c], color_ptr[c + 1]):
                xp[color_nodes[q], j] = xi[color_nodes[q], j] + eps
            vr.residual(m, terms, sd, xp, w, out, post)
            for q in range(color_ptr[c], color_ptr[c + 1]):
                a = color_nodes[q]
                xp[a, j] = xi[a, j]
                for r in range(col_ptr[a], col_ptr[a + 1]):
                    b = col_rows[r]
                    blk = col_blocks[r]
                    for i in range(6):
                        data[blk, i, j] = (out[b, i] - base[b, i]) / eps


@kernel
def newton(m, terms, sd, xi, w, out, post, ab, kl, ku, piv, order, length, target, floor, limit):
    """Quasi-Newton on the VI residual from xi (N,6), in place: Broyden's good update of the
    inverse of the Jacobian held as a band LU (ab, piv; order: the nodes' band positions),
    in Kelley's compact form (C. T. Kelley, Solving Nonlinear Equations with Newton's Method,
    SIAM 2003, 1.4 and 4.3): z = J0^{-1} R_k+1, z += s_j+1 (s_j . z) / |s_j|^2 for j < k,
    s_k+1 = -z / (1 + s_k . z / |s_k|^2). A full step that does not lower ||R|| by the Armijo
    factor is replaced by a backtracking line search along -J0^{-1} R, which also restarts
    the update. Converged: ||R|| <= target, or <= floor and stalled. Returns (status,
    iterations, norm): 0 converged, 1 slow (an iteration contracted by less than CONTRACTION:
    a new Jacobian may help), 2 failed (no descent, or not finite)."""
    n = xi.shape[0]
    size = 6 * n
    steps = np.zeros((limit + 1, size))  # the Broyden steps s_0..s_k (band order)
    sq = np.zeros(limit + 1)
    z = np.empty(size)
    trial = np.empty_like(xi)
    norm = evaluate(m, terms, sd, xi, w, out, post, length)
    last = math.inf
    k = 0  # steps in the update's memory
    for it in range(limit + 1):
        if not math.isfinite(norm):
            return 2, it, norm
        if norm <= target or (norm <= floor and norm > 0.1 * last):
            return 0, it, norm
        if it == limit:
            break
        if it > 1 and norm > CONTRACTION * last:
            return 1, it, norm
        for a in range(n):
            for i in range(6):
                z[6 * order[a] + i] = out[a, i]
        banded.solve(ab, kl, ku, piv, z)  # z = J0^{-1} R
        for j in range(k - 1):
            c = 0.0
            for r in range(size):
                c += steps[j, r] * z[r]
            c /= sq[j]
            for r in range(size):
                z[r] += c * steps[j + 1, r]
        denominator = 1.0
        if k > 0:
            c = 0.0
            for r in range(size):
                c += steps[k - 1, r] * z[r]
            denominator = 1.0 + c / sq[k - 1]
        if k >= limit or abs(denominator) < 1e-3:  # the update degenerates: restart it
            k = 0
            denominator = 1.0
            for a in range(n):
                for i in range(6):
                    z[6 * order[a] + i] = out[a, i]
            banded.solve(ab, kl, ku, piv, z)
        for r in range(size):
            z[r] = -z[r] / denominator
        step = 1.0
        new = math.inf
        for attempt in range(LINE_SEARCH):
            for a in range(n):
                for i in range(6):
                    trial[a, i] = xi[a, i] + step * z[6 * order[a] + i]
            new = evaluate(m, terms, sd, trial, w, out, post, length)
            if new <= (1.0 - ARMIJO * step) * norm:
                break
            if attempt == 0 and k > 0:  # the quasi-Newton step failed: J0's, restarted
                k = 0
                evaluate(m, terms, sd, xi, w, out, post, length)
                for a in range(n):
                    for i in range(6):
                        z[6 * order[a] + i] = out[a, i]
                banded.solve(ab, kl, ku, piv, z)
                for r in range(size):
                    z[r] = -z[r]
                continue
            step *= 0.5
        if not new <= (1.0 - ARMIJO * step) * norm:
            evaluate(m, terms, sd, xi, w, out, post, length)  # w, post back at xi
            return 2, it + 1, norm
        xi[:] = trial
        if step == 1.0:
            s2 = 0.0
            for r in range(size):
                steps[k, r] = z[r]
                s2 += z[r] * z[r]
            sq[k] = s2
            k += 1 if s2 > 0.0 else 0
        else:  # a damped step: the compact update assumes full ones
            k = 0
        last = norm
        norm = new
    return 1, limit, norm


def form(solver, lin: Linear, sd, xi, w, out, post) -> bool:
    """A new Jacobian at xi (without the energy correction, which couples every node) into
    solver.data, factorised; False if singular. Assembled from the terms' tangents where the
    solver can (Solver.kbuf), else by forward differences."""
    lin.formed += 1
    lin.h = sd.h
    p, m = solver.pattern, solver.model
    if solver.kbuf is not None:  # exact, from the terms' tangents (vi_jacobian_dynamic)
        solver.ready()
        dynamic_jacobian(
            m.nodes, m.terms, sd._replace(conserve=0), xi, w, solver.slots, p.indptr,
            p.indices, solver.kbuf, solver.data,
        )  # fmt: skip
        return factorise(solver, lin)
    jacobian(
        m.nodes, m.terms, sd._replace(conserve=0), xi, w, out, post, lin.base, p.color_ptr,
        p.color_nodes, p.col_ptr, p.col_rows, p.col_blocks, solver.data,
    )  # fmt: skip
    return factorise(solver, lin)


def factorise(solver, lin: Linear) -> bool:
    """Factorise the Jacobian held in solver.data (BSR blocks): band LU, or SuperLU; False
    if singular. Deterministic: a restart that stores solver.data factorises it again to the
    same LU."""
    p = solver.pattern
    if lin.band is None:
        n = 6 * solver.model.n_nodes
        matrix = sp.bsr_matrix((solver.data, p.indices, p.indptr), shape=(n, n)).tocsc()
        try:
            lin.lu = splu(matrix)
        except RuntimeError:
            lin.lu = None
            return False
        return True
    band = lin.band
    banded.fill(band.ab, band.kl, band.ku, band.order, solver.data, p.indptr, p.indices)
    return bool(banded.factor(band.ab, band.kl, band.ku, band.piv))


def solve(solver, lin: Linear, sd, xi, w, out, post, target, floor, limit):
    """The step's residual solved from xi, in place, to ||R|| <= target (or <= floor and
    stalled): (converged, a new Jacobian was formed, iterations). w (float64 Work), out, post
    (N,6): the residual's scratch, at xi on return."""
    fresh = False
    if not math.isfinite(lin.h) or not 1.0 / REFRESH_RATIO <= sd.h / lin.h <= REFRESH_RATIO:
        if not form(solver, lin, sd, xi, w, out, post):
            return False, True, 0
        fresh = True
    start = xi.copy()
    total = 0
    for _ in range(2):
        if lin.band is not None:
            band, m = lin.band, solver.model
            status, its, _ = newton(
                m.nodes, m.terms, sd, xi, w, out, post, band.ab, band.kl, band.ku, band.piv,
                band.order, solver.length, target, floor, limit,
            )  # fmt: skip
        else:
            status, its = _superlu_newton(solver, lin, sd, xi, w, out, post, target, floor, limit)
        total += its
        if status == 0:
            return True, fresh, total
        if fresh:
            return False, fresh, total
        xi[:] = start
        if not form(solver, lin, sd, xi, w, out, post):
            return False, True, total
        fresh = True
    return False, fresh, total


def _superlu_newton(solver, lin: Linear, sd, xi, w, out, post, target, floor, limit):
    """newton() with SuperLU for wide bands (plates), without the Broyden update, in Python."""
    s, m = solver, solver.model
    norm = evaluate(m.nodes, m.terms, sd, xi, w, out, post, s.length)
    last = math.inf
    for it in range(limit + 1):
        if not math.isfinite(norm):
            return 2, it
        if norm <= target or (norm <= floor and norm > 0.1 * last):
            return 0, it
        if it == limit or (it > 0 and norm > CONTRACTION * last) or lin.lu is None:
            return 1, it
        delta = lin.lu.solve(-out.ravel()).reshape(-1, 6)
        step, new = 1.0, math.inf
        for _ in range(LINE_SEARCH):
            new = evaluate(m.nodes, m.terms, sd, xi + step * delta, w, out, post, s.length)
            if new <= (1.0 - ARMIJO * step) * norm:
                break
            step *= 0.5
        if not new <= (1.0 - ARMIJO * step) * norm:
            evaluate(m.nodes, m.terms, sd, xi, w, out, post, s.length)
            return 2, it + 1
        xi += step * delta
        last, norm = norm, new
    return 1, limit
