"""Sparsity of the implicit scheme's Jacobian: the node graph of the elements, its block (BSR)
pattern and a distance-2 node colouring for the coloured complex-step differentiation
(rodsim.integrators.vi_residual.jacobian). Built once per model, in Python, from the node
pairs the force terms couple (rodsim.model.forces.coupled_pairs)."""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Pattern:
    """Block sparsity of the Jacobian and the distance-2 node colouring.

    indptr (N+1,), indices (B,): BSR structure (block rows = nodes); col_ptr (N+1,),
    col_rows (B,), col_blocks (B,): for node a, the rows b depending on it and the block
    index of (b, a); color_ptr, color_nodes: CSR list of the nodes of each colour."""

    indptr: np.ndarray
    indices: np.ndarray
    col_ptr: np.ndarray
    col_rows: np.ndarray
    col_blocks: np.ndarray
    color_ptr: np.ndarray
    color_nodes: np.ndarray

    @property
    def n_colors(self) -> int:
        return len(self.color_ptr) - 1


def node_neighbours(conn: np.ndarray, n_nodes: int) -> list[np.ndarray]:
    """Sorted closed neighbourhoods (the node and every node sharing an element with it)."""
    pairs = np.concatenate([conn, conn[:, ::-1], np.repeat(np.arange(n_nodes), 2).reshape(-1, 2)])
    graph = sp.coo_matrix(
        (np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n_nodes, n_nodes)
    ).tocsr()
    graph.sum_duplicates()
    graph.sort_indices()
    return [graph.indices[graph.indptr[a] : graph.indptr[a + 1]] for a in range(n_nodes)]


def distance2_colouring(neigh: list[np.ndarray]) -> np.ndarray:
    """Greedy colouring in which nodes of one colour have disjoint closed neighbourhoods."""
    n = len(neigh)
    color = np.full(n, -1, dtype=np.int64)
    for a in range(n):
        near = np.unique(np.concatenate([neigh[b] for b in neigh[a]]))
        used = set(color[near][color[near] >= 0].tolist())
        c = 0
        while c in used:
            c += 1
        color[a] = c
    return color


def make_pattern(conn: np.ndarray, n_nodes: int) -> Pattern:
    """Pattern of the node graph of elements conn (E,2) over n_nodes nodes."""
    neigh = node_neighbours(conn, n_nodes)
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(x) for x in neigh])
    indices = np.concatenate(neigh).astype(np.int64)
    # the pattern is symmetric: the rows depending on column a are a's neighbours
    col_rows = indices.copy()
    col_blocks = np.empty_like(indices)
    for a in range(n_nodes):
        for r in range(indptr[a], indptr[a + 1]):
            b = indices[r]
            row = indices[indptr[b] : indptr[b + 1]]
            col_blocks[r] = indptr[b] + np.searchsorted(row, a)
    color = distance2_colouring(neigh)
    order = np.argsort(color, kind="stable")
    color_ptr = np.zeros(color.max() + 2 if n_nodes else 1, dtype=np.int64)
    color_ptr[1:] = np.cumsum(np.bincount(color, minlength=len(color_ptr) - 1))
    return Pattern(
        indptr, indices, indptr.copy(), col_rows, col_blocks, color_ptr, order.astype(np.int64)
    )
