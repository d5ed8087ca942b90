"""Conversions of the implicit scheme's state: right-trivialised and spatial momenta, rotation
matrices and the solver's unit quaternions, and the momenta at the end of a VI step
(docs/theory.md, "The implicit Cayley variational integrator")."""

from rodsim.jit import kernel
from rodsim.lie import so3


@kernel
def momenta_after(rot, xi, post, h, se3, fixed, p, pi):
    """Spatial momenta at k+1 from mu - h W (N,6) right-trivialised at k: Ad_tau^T mapped by
    Lambda_k+1 = Lambda_k R_tau, i.e. pi = Lambda_k (y_w + y_v x a_tau), p = Lambda_k y_v (SE3);
    pi = Lambda_k y_w, p = y_v (SO3xR3). Supported components are zeroed (the support holds
    them), as in the explicit scheme."""
    for a in range(rot.shape[0]):
        r = so3.mat_at(rot, a)
        y_v = (post[a, 0], post[a, 1], post[a, 2])
        y_w = (post[a, 3], post[a, 4], post[a, 5])
        if se3:
            pw = (h * xi[a, 3], h * xi[a, 4], h * xi[a, 5])
            pv = (h * xi[a, 0], h * xi[a, 1], h * xi[a, 2])
            a_tau = so3.matvec(so3.i_minus_half_hat_inv(pw), pv)
            y_w = so3.add(y_w, so3.cross(y_v, a_tau))
            y_v = so3.matvec(r, y_v)
        y_w = so3.matvec(r, y_w)
        for k in range(3):
            p[a, k] = 0.0 if fixed[a, k] else y_v[k]
            pi[a, k] = 0.0 if fixed[a, 3 + k] else y_w[k]


@kernel
def body_momenta(rot, p, pi, se3, mom):
    """Right-trivialised momenta (N,6) (translation first) of spatial p, pi at rot."""
    for a in range(rot.shape[0]):
        r = so3.mat_at(rot, a)
        lin = (p[a, 0], p[a, 1], p[a, 2])
        if se3:
            lin = so3.matTvec(r, lin)
        ang = so3.matTvec(r, (pi[a, 0], pi[a, 1], pi[a, 2]))
        for k in range(3):
            mom[a, k] = lin[k]
            mom[a, 3 + k] = ang[k]


@kernel
def quaternions(rot, quat):
    """quat (N,4) = Spurrier quaternions of rot (N,3,3)."""
    for a in range(rot.shape[0]):
        q = so3.quat_from_matrix(so3.mat_at(rot, a))
        for k in range(4):
            quat[a, k] = q[k]


@kernel
def rotations(quat, rot):
    """rot (N,3,3) = rotation matrices of the unit quaternions quat (N,4)."""
    for a in range(quat.shape[0]):
        r = so3.matrix_from_quat((quat[a, 0], quat[a, 1], quat[a, 2], quat[a, 3]))
        for i in range(3):
            for j in range(3):
                rot[a, i, j] = r[3 * i + j]
