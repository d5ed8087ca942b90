"""``rodsim export --matrices``: a case's stiffness, mass and damping matrices for users who do
their own dynamics (docs/modal.md, "Damping and matrices").

The matrices are those of the modal analysis (rodsim.integrators.modal) about the state its
`solver.modal.about` names (the reference unless the case asks for its equilibrium), over
every degree of freedom: node a's components 6a .. 6a + 5 are (u_x, u_y, u_z, theta_x,
theta_y, theta_z) in global axes. `free` marks those not fixed or prescribed.
"""

from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from rodsim import api
from rodsim.integrators import modal
from rodsim.post.replace_file import write_through, write_whole
from rodsim.results import guard as output_guard
from rodsim.solvers import modal_state

COMPONENTS = ("ux", "uy", "uz", "rx", "ry", "rz")


FORMATS = ("npz", "mtx")


def _targets(path: Path, fmt: str) -> list:
    """(output_guard kind, path) of each file an export writes."""
    if fmt == "npz":
        return [("npz", path)]
    stem = path.with_suffix("")
    mtx = [("mtx", stem.with_name(f"{stem.name}_{name}.mtx")) for name in "KMC"]
    return [*mtx, ("dofs", stem.with_name(f"{stem.name}_dofs.csv"))]


def export_matrices(case, output=None, overrides=(), fmt: str = "npz") -> list[Path]:
    """Write K, M, C and the DOF map; returns the paths written. npz: one .npz file (CSR
    arrays, read back by load_matrices; default <case stem>_matrices.npz); mtx: Matrix Market
    files <stem>_K.mtx, <stem>_M.mtx, <stem>_C.mtx (coordinate real general) and the DOF map
    <stem>_dofs.csv (dof, node, component, free), stem from output (its suffix dropped) or
    <case stem>_matrices."""
    if fmt not in FORMATS:
        raise ValueError(f"expected a format of {', '.join(FORMATS)}, got {fmt!r}")
    prep = api.prepare(case, overrides)
    default = prep.case.path.with_name(f"{prep.case.stem}_matrices.npz")
    path = Path(output) if output else default
    if fmt == "npz" and path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")  # the name numpy writes: say it, guard it
    targets = _targets(path, fmt)
    reads, case_file = output_guard.reads_of(prep.case), str(prep.case.path)
    for kind, target in targets:  # before the matrices, which may take an equilibrium
        output_guard.check(target, kind, reads=reads, file=case_file)
    s, model = prep.case.settings.solver, prep.setup.model
    # equilibrium, or modal or buckling about the equilibrium: the loaded state
    x, rot, quat, load = modal_state(prep, "equilibrium" if s.load_steps else "reference")
    k, m = modal.matrices(model, s.group, x, rot, quat, load)
    c = modal.damping_matrix(model, s.group)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = model.n_nodes
    node, component = np.repeat(np.arange(n), 6), np.tile(np.array(COMPONENTS), n)
    free = ~model.fixed.ravel()
    matrices = {"K": k, "M": m, "C": c}
    if fmt == "mtx":
        stem = path.with_suffix("")
        written = []
        for (name, matrix), (_, target) in zip(matrices.items(), targets, strict=False):
            comment = f"rodsim {name} about load multiplier {load:g}; DOF map {stem.name}_dofs.csv"
            coo = sp.coo_matrix(matrix)
            write_through(
                target, lambda part, c=coo, t=comment: _mmwrite(part, c, t)
            )  # one piece each: a failed write leaves what was there
            written.append(target)
        dofs = targets[-1][1]
        rows = [f"{i},{node[i]},{component[i]},{int(free[i])}" for i in range(6 * n)]
        write_whole(dofs, ["dof,node,component,free\n" + "\n".join(rows) + "\n"])
        return [*written, dofs]
    arrays = {"load": np.array(load)}
    for name, matrix in matrices.items():
        csr = sp.csr_matrix(matrix)
        arrays |= {
            f"{name}_data": csr.data,
            f"{name}_indices": csr.indices,
            f"{name}_indptr": csr.indptr,
            f"{name}_shape": np.array(csr.shape),
        }
    arrays |= {"dof_node": node, "dof_component": component, "free": free}
    write_through(path, lambda part: _savez(part, arrays))
    return [path]


def _mmwrite(part: Path, matrix, comment: str) -> None:
    with open(part, "wb") as f:  # a file object: mmwrite would add .mtx to a name
        scipy.io.mmwrite(f, matrix, comment=comment, field="real")


def _savez(part: Path, arrays: dict) -> None:
    with open(part, "wb") as f:  # a file object: numpy would add .npz to a name
        np.savez(f, **arrays)


def load_matrices(path) -> dict:
    """The arrays of an export: K, M, C as scipy CSR matrices, and the DOF map."""
    with np.load(path) as f:
        out = {k: f[k] for k in f.files}
    for name in ("K", "M", "C"):
        parts = [out.pop(f"{name}_{p}") for p in ("data", "indices", "indptr", "shape")]
        out[name] = sp.csr_matrix(tuple(parts[:3]), shape=tuple(parts[3]))
    return out
