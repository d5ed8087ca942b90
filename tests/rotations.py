"""Rotation helpers of the tangent tests (tests/test_*_tangent.py): matrices, hat, quaternion
product and the nodes' quaternions, in plain numpy."""

import numpy as np

from rodsim.lie import so3
from rodsim.lie.arrays import as_matrix
from rodsim.model import rod


def exp_matrix(v):
    """exp(hat(v)) as a (3,3) matrix."""
    return as_matrix(so3.exp(tuple(float(x) for x in v)))


def hat(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def qmul(p, q):
    """The quaternion product p q, scalar first."""
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def quats(rot):
    """The nodes' quaternions (N,4) of rotations rot (N,3,3), as the kernels take them."""
    quat = np.empty((rot.shape[0], 4))
    rod.node_quaternions(rot, quat, 0, rot.shape[0])
    return quat
