"""Banded LU with partial pivoting for the implicit scheme's adaptive steps (numba).

The Jacobian of a rod model is a block matrix on the node graph (rodsim.integrators.sparsity);
ordered by reverse Cuthill-McKee its non-zeros lie in a narrow band: kl = ku = 6 (b + 1) - 1
for a node bandwidth b (b = 1 for a chain). A band LU (LAPACK's dgbtf2/dgbtrs algorithm,
Golub & Van Loan 4.3.5) then costs about n kl (kl + ku) flops and, called from a kernel,
nothing per call, where SuperLU from Python costs ~100 us per factorisation of a 20-element
rod. Where the band is wide (plates), banded() says so and the caller uses SuperLU.

Storage: LAPACK's band layout transposed, A[i, j] at ab[j, kl + ku + i - j], ab (n, 2 kl + ku
+ 1), entries 0..kl-1 of a row for the fill-in of the row interchanges: a column of the band
is a contiguous row of ab, so the elimination's inner loops run over contiguous memory (about
3x faster than LAPACK's layout held in C order).
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from rodsim.integrators.sparsity import Pattern
from rodsim.jit import kernel

MAX_FLOPS = 3.0e7  # above this a band factorisation costs more than SuperLU's


class Band(NamedTuple):
    """A band matrix and its LU: ab (n, 2 kl + ku + 1), piv (n,) int64; order (N,) int64 the
    position of each node in the band ordering; kl, ku the half-bandwidths."""

    ab: np.ndarray
    piv: np.ndarray
    order: np.ndarray
    kl: int
    ku: int


def banded(pattern: Pattern, n_nodes: int) -> Band | None:
    """The band storage of a pattern in reverse Cuthill-McKee node order, or None where its
    factorisation would cost more than MAX_FLOPS (the caller then uses SuperLU)."""
    if n_nodes == 0:
        return None
    rows = np.repeat(np.arange(n_nodes), np.diff(pattern.indptr))
    graph = sp.csr_matrix((np.ones(len(rows)), (rows, pattern.indices)), shape=(n_nodes, n_nodes))
    perm = reverse_cuthill_mckee(graph, symmetric_mode=True)
    order = np.empty(n_nodes, dtype=np.int64)
    order[perm] = np.arange(n_nodes)
    width = int(np.max(np.abs(order[rows] - order[pattern.indices]), initial=0))
    kl = 6 * (width + 1) - 1
    n = 6 * n_nodes
    if n * kl * 2 * kl > MAX_FLOPS:
        return None
    return Band(np.zeros((n, 3 * kl + 1)), np.zeros(n, dtype=np.int64), order, kl, kl)


@kernel
def fill(band_ab, kl, ku, order, data, indptr, indices):
    """Zero band_ab and put the BSR blocks data (B,6,6) (block rows indptr, columns indices,
    nodes in the model's order) into it in the band order."""
    band_ab[:] = 0.0
    kv = kl + ku
    for b in range(indptr.shape[0] - 1):
        for q in range(indptr[b], indptr[b + 1]):
            a = indices[q]
            for i in range(6):
                r = 6 * order[b] + i
                for j in range(6):
                    c = 6 * order[a] + j
                    band_ab[c, kv + r - c] = data[q, i, j]


@kernel
def factor(ab, kl, ku, piv):
    """LU with partial pivoting of the band matrix in ab, in place (dgbtf2). Returns False
    if a pivot is exactly zero (a singular matrix)."""
    n = ab.shape[0]
    kv = kl + ku
    ju = 0
    for j in range(n):
        km = min(kl, n - 1 - j)
        jp = 0
        big = abs(ab[j, kv])
        for i in range(1, km + 1):
            if abs(ab[j, kv + i]) > big:
                big = abs(ab[j, kv + i])
                jp = i
        piv[j] = j + jp
        if big == 0.0:
            return False
        ju = max(ju, min(j + ku + jp, n - 1))
        if jp != 0:
            for c in range(j, ju + 1):
                tmp = ab[c, kv + j - c]
                ab[c, kv + j - c] = ab[c, kv + j + jp - c]
                ab[c, kv + j + jp - c] = tmp
        inv = 1.0 / ab[j, kv]
        for i in range(1, km + 1):
            ab[j, kv + i] *= inv
        for c in range(j + 1, ju + 1):
            u = ab[c, kv + j - c]
            if u != 0.0:
                o = kv + j - c
                for i in range(1, km + 1):
                    ab[c, o + i] -= ab[j, kv + i] * u
    return True


@kernel
def solve(ab, kl, ku, piv, b):
    """Overwrite b (n,) with the solution of A x = b from factor's LU (dgbtrs)."""
    n = ab.shape[0]
    kv = kl + ku
    for j in range(n - 1):
        lm = min(kl, n - 1 - j)
        p = piv[j]
        if p != j:
            tmp = b[p]
            b[p] = b[j]
            b[j] = tmp
        bj = b[j]
        for i in range(1, lm + 1):
            b[j + i] -= ab[j, kv + i] * bj
    for j in range(n - 1, -1, -1):
        b[j] /= ab[j, kv]
        bj = b[j]
        for i in range(max(0, j - kv), j):
            b[i] -= ab[j, kv + i - j] * bj
