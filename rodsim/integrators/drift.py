"""The drift and kick of the explicit step, node by node (docs/theory.md, "The explicit
scheme"; rodsim.integrators.explicit composes them into steps).

SO3xR3: each node's rotation increment F = cay(2 f) solves the Lee–Leok–McClamroch equation
(F J_d - J_d F^T)^vee = h Lambda^T pi_bar by Newton on G(f) = y + y x f + (y.f) f - 2 I f.
SE3: each node solves the Lie-algebra equation (dcay^{-1}_{(q,v)})^T (I q, m v) = (h Pi, h P)
(rodsim.integrators.lavi), then moves by the SE(3) Cayley map and transports its angular
momentum. Fixed global components replace rows of the local Newton systems. Kicks add h/2 of
the forces to the free momentum components. The node loops take a node range lo:hi, so the
serial and the parallel step run the same compiled loop.
"""

from rodsim.integrators.lavi import (
    constrain_rows,
    lavi_jacobian,
    lavi_residual,
    solve_dense,
)
from rodsim.jit import either, kernel
from rodsim.lie import so3

# --- local rotation solve (SO3xR3) ----------------------------------------------------------


@kernel(inline="always")
def rotation_residual(inertia, f, y):
    """G(f) = y + y x f + (y.f) f - 2 I f (docs/theory.md, "The explicit scheme", Lee's Cayley
    form).

    G(f) = 0 with F = cay(2 f) is the Lee–Leok–McClamroch equation
    (F J_d - J_d F^T)^vee = y, J_d = tr(I)/2 - I, i.e. docs/theory.md, "The explicit scheme" with F
    = exp(theta):
    the same equation in a parametrisation where it is polynomial (no trigonometry)."""
    yf = so3.dot(y, f)
    yxf = so3.cross(y, f)
    i_f = so3.matvec(inertia, f)
    return (
        y[0] + yxf[0] + yf * f[0] - 2.0 * i_f[0],
        y[1] + yxf[1] + yf * f[1] - 2.0 * i_f[1],
        y[2] + yxf[2] + yf * f[2] - 2.0 * i_f[2],
    )


@kernel(inline="always")
def rotation_jacobian(inertia, f, y):
    """dG/df = hat(y) + (y.f) I3 + f y^T - 2 I (checked against finite differences)."""
    jac = so3.mat_axpy(-2.0, inertia, so3.hat(y))
    jac = so3.mat_axpy(1.0, so3.outer(f, y), jac)
    yf = so3.dot(y, f)
    return so3.mat_axpy(yf, so3.identity(), jac)


@kernel(inline="always")
def rotation_momentum(inertia, f):
    """The y for which f solves G(f) = 0: y = (I3 + hat f) 2 I f / (1 + |f|^2)."""
    i_f = so3.matvec(inertia, f)
    c = 2.0 / (1.0 + so3.dot(f, f))
    fxi = so3.cross(f, i_f)
    return (c * (i_f[0] + fxi[0]), c * (i_f[1] + fxi[1]), c * (i_f[2] + fxi[2]))


@kernel(inline="always")
def _unit_rows(m, fix):
    """m with row i replaced by e_i where fix[i]."""
    f0, f1, f2 = fix
    return (
        1.0 if f0 else m[0], 0.0 if f0 else m[1], 0.0 if f0 else m[2],
        0.0 if f1 else m[3], 1.0 if f1 else m[4], 0.0 if f1 else m[5],
        0.0 if f2 else m[6], 0.0 if f2 else m[7], 1.0 if f2 else m[8],
    )  # fmt: skip


@kernel(inline="always")
def solve_rotation(inertia, y, fix, tol, max_iter):
    """Newton for G(f) = 0; rows i with fix[i] are replaced by f_i = 0.

    inertia: standard inertia 9-tuple in the frame of y and f; y = h pi_bar (3-tuple).
    Returns (f, iterations, converged); the rotation increment is cay(2 f).
    Initial guess (2 I)^{-1} y, exact to first order.
    """
    f = so3.scale(0.5, so3.solve3(inertia, y))
    f = (0.0 if fix[0] else f[0], 0.0 if fix[1] else f[1], 0.0 if fix[2] else f[2])
    # |r| <= tol |y| compared squared: no square root per iteration
    scale = tol * (so3.norm(y) + 1.0e-300)
    scale2 = scale * scale
    for it in range(max_iter + 1):
        r = rotation_residual(inertia, f, y)
        r = (0.0 if fix[0] else r[0], 0.0 if fix[1] else r[1], 0.0 if fix[2] else r[2])
        if so3.dot(r, r) <= scale2:
            return f, it, True
        if it == max_iter:
            break
        jac = _unit_rows(rotation_jacobian(inertia, f, y), fix)
        f = so3.sub(f, so3.solve3(jac, r))
    return f, max_iter, False


_mat_at = so3.mat_at  # the 3x3 block arr[a] as a row-major 9-tuple


@kernel(inline="always")
def _store_mat(arr, a, m):
    for i in range(3):
        for j in range(3):
            arr[a, i, j] = m[3 * i + j]


@kernel(inline="always")
def rotation_drift(rot, inertia, hpi, tol, max_iter):
    """Rotation update of a node with no fixed spin component: Lambda' = Lambda cay(2 f), f
    solving G(f) = 0 with y = Lambda^T h pi_bar (material frame).

    rot, inertia: row-major 9-tuples (inertia material, standard); hpi = h pi_bar (3-tuple).
    Returns (Lambda' 9-tuple, Newton iterations, converged)."""
    f, its, ok = solve_rotation(
        inertia, so3.matTvec(rot, hpi), (False, False, False), tol, max_iter
    )
    return so3.matmul(rot, so3.cay(so3.scale(2.0, f))), its, ok


@kernel
def rotation_drift_fixed(rot, inertia, hpi, fix, tol, max_iter):
    """Rotation update with the spin components fix (3 bools, global axes) held: solved in the
    spatial frame, Lambda' = cay(2 f) Lambda.

    Returns (Lambda', y, iterations, converged) with y = rotation_momentum(f) = h pi_bar
    including the reaction moment on the fixed components."""
    spatial = so3.matmulT(so3.matmul(rot, inertia), rot)
    f, its, ok = solve_rotation(spatial, hpi, fix, tol, max_iter)
    rot_new = so3.matmul(so3.cay(so3.scale(2.0, f)), rot)
    return rot_new, rotation_momentum(spatial, f), its, ok


@kernel
def _no_partial_drift(rot, inertia, hpi, fix, tol, max_iter):
    # never called: the switch is None only when no node has a partly held spin
    return rot, (0.0, 0.0, 0.0), 0, False


_partial_drift = either(_no_partial_drift, rotation_drift_fixed)  # switch: cfg.partial_spin


@kernel
def drift_so3_nodes(
    mass, inertia, fixed, x, rot, p, pi, f, tau, iters, tol, max_iter, h, lo, hi, partial
):
    """Half kick and drift of nodes lo <= a < hi on SO3xR3; iters[a] = Newton iterations
    (-1 on failure).

    Plain arrays and one loop per call: per-node calls taking arrays or named tuples cost
    atomic reference-count updates on every array, which dominated the drift."""
    for a in range(lo, hi):
        inv_m = 1.0 / mass[a]
        for k in range(3):
            if fixed[a, k]:
                p[a, k] = 0.0
            else:
                p[a, k] += 0.5 * h * f[a, k]
                x[a, k] += h * p[a, k] * inv_m
        fix = (fixed[a, 3], fixed[a, 4], fixed[a, 5])
        if fix[0] and fix[1] and fix[2]:
            for k in range(3):
                pi[a, k] = 0.0
            iters[a] = 0
            continue
        for k in range(3):
            pi[a, k] += 0.5 * h * tau[a, k]
        r = _mat_at(rot, a)
        hpi = (h * pi[a, 0], h * pi[a, 1], h * pi[a, 2])
        if not (fix[0] or fix[1] or fix[2]):
            r_new, its, ok = rotation_drift(r, _mat_at(inertia, a), hpi, tol, max_iter)
        else:
            r_new, y, its, ok = _partial_drift(
                partial, r, _mat_at(inertia, a), hpi, fix, tol, max_iter
            )
            # the reaction moment sets the fixed components: pi_bar = y(f)/h exactly
            for k in range(3):
                pi[a, k] = y[k] / h
        _store_mat(rot, a, r_new)
        iters[a] = its if ok else -1


@kernel
def drift_se3_nodes(
    mass, inertia, fixed, x, rot, p, pi, f, tau, lin, iters, tol, max_iter, h, lo, hi
):
    """Half kick, Lie-algebra drift on SE(3) with the Cayley map and coadjoint transport of
    nodes lo <= a < hi; iters[a] = Newton iterations (-1 on failure)."""
    for a in range(lo, hi):
        fx = (fixed[a, 0], fixed[a, 1], fixed[a, 2], fixed[a, 3], fixed[a, 4], fixed[a, 5])
        _kick_node(fx, p, pi, f, tau, a, h)
        if fx[0] and fx[1] and fx[2] and fx[3] and fx[4] and fx[5]:
            for k in range(3):
                p[a, k] = 0.0
                pi[a, k] = 0.0
            iters[a] = 0
            continue
        constrained = fx[0] or fx[1] or fx[2] or fx[3] or fx[4] or fx[5]
        r = _mat_at(rot, a)
        ine = _mat_at(inertia, a)
        m = mass[a]
        pbar = (p[a, 0], p[a, 1], p[a, 2])
        hpi = so3.scale(h, so3.matTvec(r, (pi[a, 0], pi[a, 1], pi[a, 2])))
        hp = so3.scale(h, so3.matTvec(r, pbar))
        q = so3.solve3(ine, hpi)
        v = so3.scale(1.0 / m, hp)
        its = -1
        for it in range(max_iter + 1):
            r_w, r_v = lavi_residual(ine, m, q, v, hpi, hp)
            lavi_jacobian(lin, a, ine, m, q, v)
            if constrained:
                constrain_rows(lin, a, r, fx, q, v, r_w, r_v)
            else:
                for k in range(3):
                    lin[a, k, 6] = r_w[k]
                    lin[a, 3 + k, 6] = r_v[k]
            solve_dense(lin, a, 6)
            dq = (lin[a, 0, 6], lin[a, 1, 6], lin[a, 2, 6])
            dv = (lin[a, 3, 6], lin[a, 4, 6], lin[a, 5, 6])
            q = so3.sub(q, dq)
            v = so3.sub(v, dv)
            # quadratic convergence: an update of relative size tol leaves an error ~ tol^2
            if so3.norm(dq) + so3.norm(dv) <= tol * (so3.norm(q) + so3.norm(v)) + 1.0e-300:
                its = it + 1
                break
        if constrained:
            r_w, r_v = lavi_residual(ine, m, q, v, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            pi_new = so3.scale(1.0 / h, so3.matvec(r, r_w))
            pbar = so3.scale(1.0 / h, so3.matvec(r, r_v))
            for k in range(3):
                pi[a, k] = pi_new[k]
                p[a, k] = pbar[k]
        dx = so3.matvec(r, so3.matvec(so3.i_minus_half_hat_inv(q), v))
        transport = so3.cross(dx, pbar)
        for k in range(3):
            x[a, k] += dx[k]
            pi[a, k] -= transport[k]
        _store_mat(rot, a, so3.matmul(r, so3.cay(q)))
        iters[a] = its


@kernel(inline="always")
def _kick_node(fx, p, pi, f, tau, a, h):
    """p += h/2 f, pi += h/2 tau on the free components (fx: 6 bools) of node a."""
    for k in range(3):
        if not fx[k]:
            p[a, k] += 0.5 * h * f[a, k]
        if not fx[3 + k]:
            pi[a, k] += 0.5 * h * tau[a, k]


@kernel
def kick_nodes(fixed, p, pi, f, tau, h, lo, hi):
    """Second half kick of the free components of nodes lo <= a < hi."""
    for a in range(lo, hi):
        fx = (fixed[a, 0], fixed[a, 1], fixed[a, 2], fixed[a, 3], fixed[a, 4], fixed[a, 5])
        _kick_node(fx, p, pi, f, tau, a, h)
