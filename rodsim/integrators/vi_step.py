"""The data of one implicit step (rodsim.integrators.vi_residual.StepData): the start state,
the supported components' targets at the step's end, the strains the discrete damping starts
from; shared by the time steps (implicit, adaptive) and the static solves (equilibrium, path)."""

import numpy as np

from rodsim.integrators import vi_residual as vr
from rodsim.jit import kernel, switch
from rodsim.lie import so3
from rodsim.model import forces
from rodsim.model.timefunc import evaluate_packed


@kernel
def prescribed_targets(pa, t, x0, rot0, x, rot, target_x, target_rot, flags):
    """Targets of supported components at time t: target_x (N,3) = x (held) or the prescribed
    position; target_rot (N,3) the body Cayley increment from rot to the prescribed rotation,
    flags (N,) = 1 where a rotation is prescribed."""
    for a in range(x.shape[0]):
        flags[a] = 0
        for k in range(3):
            target_x[a, k] = x[a, k]
            target_rot[a, k] = 0.0
    for k in range(pa.node.shape[0]):
        f = evaluate_packed(
            pa.tf_kinds, pa.tf_params, pa.tf_tables, pa.tf_offsets, pa.tf[k], t, pa.window
        )
        a = pa.node[k]
        for i in range(3):
            if pa.translate[k, i]:
                target_x[a, i] = x0[a, i] + f * pa.u[k, i]
        if pa.rotate[k]:
            r = so3.matmul(
                so3.exp((f * pa.theta[k, 0], f * pa.theta[k, 1], f * pa.theta[k, 2])),
                so3.mat_at(rot0, a),
            )
            c = so3.cay_inv(so3.matTmul(so3.mat_at(rot, a), r))
            flags[a] = 1
            for i in range(3):
                target_rot[a, i] = c[i]


def step_data(
    solver,
    x,
    rot,
    quat,
    mom,
    h: float,
    t_load: float,
    t_target: float,
    mode: int,
    scratch: tuple | None = None,
) -> vr.StepData:
    """StepData for a solve (solver: an implicit.Solver) starting at (x, rot, quat) with
    momentum mom (N,6); supported components aim at their values at t_target. scratch:
    (strains, target_x, target_rot, flags) to fill instead of allocating (a run's steps reuse
    them)."""
    m = solver.model
    n = m.n_nodes
    if scratch is None:
        strains = forces.make_strains(m.terms)
        target_x, target_rot = np.empty((n, 3)), np.empty((n, 3))
        flags = np.zeros(n, dtype=np.int64)
    else:
        strains, target_x, target_rot, flags = scratch
    if mode == vr.DYNAMIC and m.terms.damped:
        forces.compute_strains(m.terms, x, rot, quat, strains)
    prescribed_targets(m.prescribed, t_target, m.x0, m.rot0, x, rot, target_x, target_rot, flags)
    return vr.StepData(
        x,
        rot,
        quat,
        mom,
        strains,
        target_x,
        target_rot,
        flags,
        float(h),
        float(t_load),
        int(mode),
        solver.se3,
        switch(mode == vr.DYNAMIC),
    )
