"""Directional derivatives of the per-node Cayley kinematics (rodsim.integrators.cayley) in
their point argument, at a fixed vector argument: what the analytic dynamic Jacobian
(rodsim.integrators.vi_jacobian_dynamic) needs to differentiate the momentum balance through
the step p = h xi.

Each ``*_jvp`` takes the point (w, v), a fixed argument y = (y_w, y_v) where the map is linear
in one, and a direction (dw, dv), and returns d/de F(w + e dw, v + e dv; y) at e = 0, as the
function it differentiates returns its value ((rotation, translation) 3-tuples, SE3 or
SO3xR3 by the flag). The maps are linear in y, so the derivative in y is the map itself.

Closed forms (derived for rodsim, checked against complex steps of cayley.py in
tests/test_vi_jacobian_dynamic.py). With S = sqrt(1 + |w|^2/4), g = 1/(1 + S), c = g^2/8 and
grad g = dg w, grad c = dc w (cayley._half_coefficients):

    dg  = -g^2/(4 S),   ddg = -g dg/(2 S) + g^2/(16 S^3)   (grad dg = ddg w),
    dc  = g dg/4,       ddc = (dg^2 + g ddg)/4              (grad dc = ddc w);

    half step:   s_w = g w,  s_v = v/2 + c u (SE3),  u = w x (w x v) = (w.v) w - |w|^2 v;
    translation: t = M^{-1} v, M = I - hat(w)/2:   dt = M^{-1} (dv + dw x t/2);
    Cayley:      cay(w + dw) = exp(hat(cay_jl(w) dw)) cay(w)  (rodsim.lie.so3.cay_jl);
    dcay^T:      D y = d (2 y - w x y), d = 2/(4 + |w|^2):   dd = -d^2 (w.dw);
    A^T y = y + w x y/2 + (w.y) w/4,  C^T y = y + w x y/2  (cayley.dtau_inv_transpose).

No term cancels (S >= 1, every coefficient is smooth at w = 0): no series is needed.
"""

# The public derivatives are compiled functions, not inlined: inlined into the node factors
# (rodsim.integrators.vi_jacobian_dynamic), which call each for six directions, they took
# 65 s to compile cold; called, LLVM still inlines what pays.

from rodsim.integrators import cayley
from rodsim.jit import kernel
from rodsim.lie import scalar, so3


@kernel(inline="always")
def half_second(w):
    """(g, dg, ddg, c, dc, ddc) of the Cayley square root at w (module docstring)."""
    big_s = scalar.sqrt(1.0 + 0.25 * so3.dot(w, w))
    g = 1.0 / (1.0 + big_s)
    dg = -0.25 * g * g / big_s
    ddg = -0.5 * g * dg / big_s + g * g / (16.0 * big_s * big_s * big_s)
    c = 0.125 * g * g
    dc = 0.25 * g * dg
    ddc = 0.25 * (dg * dg + g * ddg)
    return g, dg, ddg, c, dc, ddc


@kernel(inline="always")
def _wwv(w, v):
    """u = w x (w x v) = (w.v) w - |w|^2 v."""
    return so3.sub(so3.scale(so3.dot(w, v), w), so3.scale(so3.dot(w, w), v))


@kernel(inline="always")
def _wwv_jvp(w, v, dw, dv):
    """du of u = (w.v) w - |w|^2 v."""
    a = so3.add(so3.scale(so3.dot(w, v), dw), so3.scale(so3.dot(dw, v) + so3.dot(w, dv), w))
    return so3.sub(a, so3.add(so3.scale(2.0 * so3.dot(w, dw), v), so3.scale(so3.dot(w, w), dv)))


@kernel
def half_step_jvp(w, v, dw, dv, se3):
    """d s(p) of the Cayley square root (cayley.half_step) along (dw, dv):
    ds_w = g dw + dg (w.dw) w; ds_v = dv/2 (+ dc (w.dw) u + c du on SE3)."""
    g, dg, ddg, c, dc, ddc = half_second(w)
    wdw = so3.dot(w, dw)
    ds_w = so3.add(so3.scale(g, dw), so3.scale(dg * wdw, w))
    ds_v = so3.scale(0.5, dv)
    if se3:
        ds_v = so3.add(ds_v, so3.scale(dc * wdw, _wwv(w, v)))
        ds_v = so3.add(ds_v, so3.scale(c, _wwv_jvp(w, v, dw, dv)))
    return ds_w, ds_v


@kernel
def translation_jvp(w, v, dw, dv, se3):
    """d of cayley.translation: M^{-1} (dv + dw x t/2), t = M^{-1} v, on SE3; dv on SO3xR3."""
    if not se3:
        return dv
    m = so3.i_minus_half_hat_inv(w)
    t = so3.matvec(m, v)
    return so3.matvec(m, so3.add(dv, so3.scale(0.5, so3.cross(dw, t))))


@kernel
def ad_inv_transpose_jvp(rot, a, y_w, y_v, jd, da, se3):
    """d of cayley.ad_inv_transpose(rot, a, y) when rot moves by hat(jd) rot (jd = cay_jl(s_w)
    ds_w for rot = cay(s_w)) and a by da: (jd x R y_w + da x R y_v + a x (jd x R y_v),
    jd x R y_v) on SE3, (jd x R y_w, 0) on SO3xR3."""
    dry = so3.cross(jd, so3.matvec(rot, y_w))
    if not se3:
        return dry, (0.0 * dry[0], 0.0 * dry[0], 0.0 * dry[0])
    rv = so3.matvec(rot, y_v)
    drv = so3.cross(jd, rv)
    return so3.add(so3.add(dry, so3.cross(da, rv)), so3.cross(a, drv)), drv


@kernel
def dtau_transpose_jvp(w, v, y_w, y_v, dw, dv, se3):
    """d of cayley.dtau_transpose at fixed y. With y' = y_w - v x y_v/2 (SE3; y_w on
    SO3xR3) and out_w = d (2 y' - w x y'): dd (2 y' - w x y') + d (2 dy' - dw x y' - w x dy'),
    dy' = -dv x y_v/2; out_v = N^{-1} y_v, N = I + hat(w)/2: d out_v = -N^{-1} (dw x out_v)/2."""
    d = 2.0 / (4.0 + so3.dot(w, w))
    dd = -d * d * so3.dot(w, dw)
    zero = 0.0 * d
    yp = y_w
    dyp = (zero, zero, zero)
    dout_v = (zero, zero, zero)
    if se3:
        yp = so3.sub(y_w, so3.scale(0.5, so3.cross(v, y_v)))
        dyp = so3.scale(-0.5, so3.cross(dv, y_v))
        n_inv = so3.i_minus_half_hat_inv((-w[0], -w[1], -w[2]))
        out_v = so3.matvec(n_inv, y_v)
        dout_v = so3.scale(-0.5, so3.matvec(n_inv, so3.cross(dw, out_v)))
    a = so3.scale(dd, so3.sub(so3.scale(2.0, yp), so3.cross(w, yp)))
    b = so3.sub(so3.sub(so3.scale(2.0, dyp), so3.cross(dw, yp)), so3.cross(w, dyp))
    return so3.add(a, so3.scale(d, b)), dout_v


@kernel
def half_step_transpose_jvp(w, v, y_w, y_v, dw, dv, se3):
    """d of cayley.half_step_transpose (s'(p)^T y) at fixed y. SO3xR3: out_w = g y_w +
    dg (w.y_w) w, out_v = y_v/2. SE3 adds dc (u.y_v) w + c e1 to out_w and c e2 to out_v, with
    e1 = (w.v) y_v + (w.y_v) v - 2 (v.y_v) w (= (du/dw)^T y_v) and e2 = (w.y_v) w - |w|^2 y_v
    (= (du/dv)^T y_v)."""
    g, dg, ddg, c, dc, ddc = half_second(w)
    wdw = so3.dot(w, dw)
    wy = so3.dot(w, y_w)
    out_w = so3.scale(dg * wdw, y_w)
    out_w = so3.add(out_w, so3.scale(ddg * wdw * wy + dg * so3.dot(dw, y_w), w))
    out_w = so3.add(out_w, so3.scale(dg * wy, dw))
    zero = 0.0 * g
    out_v = (zero, zero, zero)
    if not se3:
        return out_w, out_v
    u = _wwv(w, v)
    uy = so3.dot(u, y_v)
    du = _wwv_jvp(w, v, dw, dv)
    wv = so3.dot(w, v)
    wyv = so3.dot(w, y_v)
    vyv = so3.dot(v, y_v)
    e1 = so3.sub(so3.add(so3.scale(wv, y_v), so3.scale(wyv, v)), so3.scale(2.0 * vyv, w))
    de1 = so3.add(
        so3.scale(so3.dot(dw, v) + so3.dot(w, dv), y_v),
        so3.add(so3.scale(so3.dot(dw, y_v), v), so3.scale(wyv, dv)),
    )
    de1 = so3.sub(de1, so3.add(so3.scale(2.0 * so3.dot(dv, y_v), w), so3.scale(2.0 * vyv, dw)))
    out_w = so3.add(out_w, so3.scale(ddc * wdw * uy + dc * so3.dot(du, y_v), w))
    out_w = so3.add(out_w, so3.scale(dc * uy, dw))
    out_w = so3.add(out_w, so3.add(so3.scale(dc * wdw, e1), so3.scale(c, de1)))
    e2 = so3.sub(so3.scale(wyv, w), so3.scale(so3.dot(w, w), y_v))
    de2 = so3.add(so3.scale(so3.dot(dw, y_v), w), so3.scale(wyv, dw))
    de2 = so3.sub(de2, so3.scale(2.0 * wdw, y_v))
    out_v = so3.add(so3.scale(dc * wdw, e2), so3.scale(c, de2))
    return out_w, out_v


@kernel
def dtau_inv_transpose_jvp(w, v, y_w, y_v, dw, dv, se3):
    """d of cayley.dtau_inv_transpose at fixed y: d(A^T y_w) = dw x y_w/2 + ((dw.y_w) w +
    (w.y_w) dw)/4; SE3 adds dv x C^T y_v/2 + v x (dw x y_v)/4 to out_w, and out_v moves by
    dw x y_v/2 (SO3xR3: out_v = y_v, fixed)."""
    out_w = so3.add(
        so3.scale(0.5, so3.cross(dw, y_w)),
        so3.scale(0.25, so3.add(so3.scale(so3.dot(dw, y_w), w), so3.scale(so3.dot(w, y_w), dw))),
    )
    if not se3:
        zero = 0.0 * out_w[0]
        return out_w, (zero, zero, zero)
    c_v = so3.add(y_v, so3.scale(0.5, so3.cross(w, y_v)))
    dc_v = so3.scale(0.5, so3.cross(dw, y_v))
    out_w = so3.add(out_w, so3.scale(0.5, so3.add(so3.cross(dv, c_v), so3.cross(v, dc_v))))
    return out_w, dc_v


@kernel
def balance_map(w, v, g_w, g_v, se3):
    """Q(p) g = Ad^T g - (d^R tau_p)^{-T} s'(p)^T (d^R tau_s)^T Ad^T g, Ad^T = Ad_{sigma^{-1}}^T,
    sigma = tau(s(p)): the forces' share of the balance (cayley module docstring: P_k = mu + h
    Q(p) F), the same chain as vi_residual._node_balance; linear in g."""
    s_w, s_v = cayley.half_step(w, v, se3)
    z_w, z_v = cayley.ad_inv_transpose(
        so3.cay(s_w), cayley.translation(s_w, s_v, se3), g_w, g_v, se3
    )
    y_w, y_v = cayley.dtau_transpose(s_w, s_v, z_w, z_v, se3)
    y_w, y_v = cayley.half_step_transpose(w, v, y_w, y_v, se3)
    ww, wv = cayley.dtau_inv_transpose(w, v, y_w, y_v, se3)
    return so3.sub(z_w, ww), so3.sub(z_v, wv)


@kernel
def balance_map_jvp(w, v, g_w, g_v, dw, dv, se3):
    """d/dp of Q(p) g (balance_map) along (dw, dv) at fixed g: the chain rule through each
    factor, each linear in its vector argument."""
    s_w, s_v = cayley.half_step(w, v, se3)
    ds_w, ds_v = half_step_jvp(w, v, dw, dv, se3)
    sig = so3.cay(s_w)
    a = cayley.translation(s_w, s_v, se3)
    da = translation_jvp(s_w, s_v, ds_w, ds_v, se3)
    jd = so3.matvec(so3.cay_jl(s_w), ds_w)
    z_w, z_v = cayley.ad_inv_transpose(sig, a, g_w, g_v, se3)
    dz_w, dz_v = ad_inv_transpose_jvp(sig, a, g_w, g_v, jd, da, se3)
    y_w, y_v = cayley.dtau_transpose(s_w, s_v, z_w, z_v, se3)
    e_w, e_v = dtau_transpose_jvp(s_w, s_v, z_w, z_v, ds_w, ds_v, se3)
    f_w, f_v = cayley.dtau_transpose(s_w, s_v, dz_w, dz_v, se3)
    dy_w, dy_v = so3.add(e_w, f_w), so3.add(e_v, f_v)
    e_w, e_v = half_step_transpose_jvp(w, v, y_w, y_v, dw, dv, se3)
    f_w, f_v = cayley.half_step_transpose(w, v, dy_w, dy_v, se3)
    y_w, y_v = cayley.half_step_transpose(w, v, y_w, y_v, se3)
    dy_w, dy_v = so3.add(e_w, f_w), so3.add(e_v, f_v)
    e_w, e_v = dtau_inv_transpose_jvp(w, v, y_w, y_v, dw, dv, se3)
    f_w, f_v = cayley.dtau_inv_transpose(w, v, dy_w, dy_v, se3)
    return so3.sub(dz_w, so3.add(e_w, f_w)), so3.sub(dz_v, so3.add(e_v, f_v))
