"""The mass-proportional damping term: nodal forces -alpha m v (docs/damping.md). Its arrays
are the lumped masses (N,); alpha is the model's (ForceTerms.alpha), checked at run time so
that a damped and an undamped model share their compiled kernels."""

import numpy as np

from rodsim.jit import kernel
from rodsim.lie import so3
from rodsim.terms.contract import INTERNAL, Term


def arrays(model):
    return model.mass


@kernel
def damping(own, state, terms, x, rot, quat, p, vel, omg, f, tau):
    alpha = terms.alpha
    if not alpha > 0.0:
        return
    for a in range(p.shape[0]):
        for k in range(3):
            f[a, k] -= alpha * p[a, k]


@kernel
def step_damping(own, state, terms, start, end, res, x1, r1, q1, xb, rb, qb, xi, h, se3, f, tau):
    """-alpha m v of the step velocity xi[:, :3] (spatial; SE3: body, turned by the midpoint
    frame)."""
    alpha = terms.alpha
    if not alpha > 0.0:
        return
    for a in range(f.shape[0]):
        c = alpha * own[a]
        v = (xi[a, 0], xi[a, 1], xi[a, 2])
        if se3:
            v = so3.matvec(so3.mat_at(rb, a), v)
        for k in range(3):
            f[a, k] -= c * v[k]


def damped(mass, beta, alpha) -> bool:
    return alpha > 0.0


def damping_blocks(mass, model):
    """alpha m_a on each node's translations."""
    n = mass.shape[0]
    blocks = np.zeros((n, 6, 6))
    blocks[:, :3, :3] = (model.alpha * mass)[:, None, None] * np.eye(3)
    nodes = np.arange(n, dtype=np.int64)
    return np.stack([nodes, nodes], axis=1), blocks


TERM = Term(
    name="mass_damping",
    role=INTERNAL,
    arrays=arrays,
    forces=None,
    damping=damping,
    step_damping=step_damping,
    damped=damped,
    damping_blocks=damping_blocks,
)
