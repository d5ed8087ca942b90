"""The band LU of the adaptive implicit steps against a dense solve."""

import numpy as np
import pytest

from rodsim.integrators import banded
from rodsim.integrators.sparsity import make_pattern


def _chain(n_nodes):
    conn = np.stack([np.arange(n_nodes - 1), np.arange(1, n_nodes)], axis=1)
    return make_pattern(conn, n_nodes)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_band_lu_solves_like_a_dense_solve(seed):
    rng = np.random.default_rng(seed)
    n_nodes = 9
    pattern = _chain(n_nodes)
    # random blocks with small diagonals: partial pivoting is needed (no diagonal dominance)
    data = rng.standard_normal((len(pattern.indices), 6, 6))
    band = banded.banded(pattern, n_nodes)
    assert band.kl == 11  # node bandwidth 1 in a chain
    banded.fill(band.ab, band.kl, band.ku, band.order, data, pattern.indptr, pattern.indices)
    dense = np.zeros((6 * n_nodes, 6 * n_nodes))
    for b in range(n_nodes):
        for q in range(pattern.indptr[b], pattern.indptr[b + 1]):
            a = pattern.indices[q]
            r, c = 6 * band.order[b], 6 * band.order[a]
            dense[r : r + 6, c : c + 6] = data[q]
    rhs = rng.standard_normal(6 * n_nodes)
    assert banded.factor(band.ab, band.kl, band.ku, band.piv)
    x = rhs.copy()
    banded.solve(band.ab, band.kl, band.ku, band.piv, x)
    expected = np.linalg.solve(dense, rhs)
    # LU with partial pivoting is backward stable: the forward error is at most about
    # cond(A) eps |x| (times a modest growth factor, here 100)
    bound = 100 * np.linalg.cond(dense) * np.finfo(float).eps * np.abs(expected).max()
    assert np.abs(x - expected).max() <= bound


def test_singular_band_is_reported():
    pattern = _chain(3)
    band = banded.banded(pattern, 3)
    data = np.zeros((len(pattern.indices), 6, 6))
    banded.fill(band.ab, band.kl, band.ku, band.order, data, pattern.indptr, pattern.indices)
    assert not banded.factor(band.ab, band.kl, band.ku, band.piv)


def test_wide_bands_go_to_superlu():
    n = 120  # a complete graph: one band as wide as the matrix
    conn = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    assert banded.banded(make_pattern(conn, n), n) is None
