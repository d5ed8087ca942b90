"""``rodsim export --matrices``: a case's stiffness, mass and damping matrices for users who do
their own dynamics (docs/modal.md, "Damping and matrices").

The matrices are those of the modal analysis (rodsim.integrators.modal) about the state its
`solver.modal.about` names (the reference unless the case asks for its equilibrium), over
every degree of freedom: node a's components 6a .. 6a + 5 are (u_x, u_y, u_z, theta_x,
theta_y, theta_z) in global axes. `free` marks those not fixed or prescribed.
"""

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rodsim import api
from rodsim.integrators import modal
from rodsim.solvers import modal_state

COMPONENTS = ("ux", "uy", "uz", "rx", "ry", "rz")


def export_matrices(case, output=None, overrides=()) -> Path:
    """Write K, M, C (CSR) and the DOF map to an .npz file; returns its path."""
    prep = api.prepare(case, overrides)
    s, model = prep.case.settings.solver, prep.setup.model
    # equilibrium, or modal about the equilibrium: the loaded state
    x, rot, quat, load = modal_state(prep, "equilibrium" if s.static else "reference")
    k, m = modal.matrices(model, s.group, x, rot, quat, load)
    c = modal.damping_matrix(model, s.group)
    path = Path(output) if output else prep.case.path.with_name(f"{prep.case.stem}_matrices.npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {"load": np.array(load)}
    for name, matrix in (("K", k), ("M", m), ("C", c)):
        csr = sp.csr_matrix(matrix)
        arrays |= {
            f"{name}_data": csr.data,
            f"{name}_indices": csr.indices,
            f"{name}_indptr": csr.indptr,
            f"{name}_shape": np.array(csr.shape),
        }
    n = model.n_nodes
    arrays["dof_node"] = np.repeat(np.arange(n), 6)
    arrays["dof_component"] = np.tile(np.array(COMPONENTS), n)
    arrays["free"] = ~model.fixed.ravel()
    np.savez(path, **arrays)
    return path


def load_matrices(path) -> dict:
    """The arrays of an export: K, M, C as scipy CSR matrices, and the DOF map."""
    with np.load(path) as f:
        out = {k: f[k] for k in f.files}
    for name in ("K", "M", "C"):
        parts = [out.pop(f"{name}_{p}") for p in ("data", "indices", "indptr", "shape")]
        out[name] = sp.csr_matrix(tuple(parts[:3]), shape=tuple(parts[3]))
    return out
