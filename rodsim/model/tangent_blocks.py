"""Where the terms' tangent blocks go in the implicit Jacobian: block indices in its BSR
structure (block rows = nodes; rodsim.integrators.sparsity builds it), for the terms'
tangent_slots hooks (rodsim.terms.contract)."""

import numpy as np


def block_index(indptr: np.ndarray, indices: np.ndarray, rows, cols) -> np.ndarray:
    """Block indices of the (rows, cols) node pairs (any equal shapes) in a BSR pattern
    (indptr (N+1,), indices sorted within each block row), int64 of the same shape; -1 where a
    row or column is negative. Raises ValueError if a pair is missing from the pattern."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    n = max(int(indices.max(initial=-1)), int(cols.max(initial=-1))) + 1
    # row-major keys are sorted over the whole pattern when each row's columns are sorted
    counts = np.diff(indptr)
    keys = np.repeat(np.arange(counts.size, dtype=np.int64), counts) * n + indices
    used = (rows >= 0) & (cols >= 0)
    want = rows * n + cols
    pos = np.searchsorted(keys, want)
    found = pos < keys.size
    found[found] = keys[pos[found]] == want[found]
    if np.any(used & ~found):
        bad = np.argwhere(used & ~found)[0]
        raise ValueError(
            f"block ({rows[tuple(bad)]}, {cols[tuple(bad)]}) is not in the sparsity pattern"
        )
    return np.where(used, pos, -1).astype(np.int64)
