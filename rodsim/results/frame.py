"""One output frame: every per-frame quantity of the results file, as arrays."""

import os
from dataclasses import dataclass, field

import numpy as np

from rodsim.errors import CaseError


class Unwritten:
    """Stands for a dataset the run did not write because `output.fields` (docs/results.md)
    left it out: in a Frame, in rodsim.results.Results and in frames read back from a file.
    Any use of its values (indexing, numpy, arithmetic, attributes such as shape) raises a
    CaseError saying so, rather than a TypeError about None far from the cause."""

    __slots__ = ("dataset", "file")

    def __init__(self, dataset: str, file: str | None = None):
        object.__setattr__(self, "dataset", dataset)
        object.__setattr__(self, "file", file)

    def error(self) -> CaseError:
        return CaseError(
            f"{self.dataset} not written: add it to output.fields and run the case again "
            "(docs/results.md)",
            file=self.file,
        )

    def _refuse(self, *args, **kwargs):
        raise self.error()

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and numpy probe dunders: a plain miss
            raise AttributeError(name)
        raise self.error()

    def __repr__(self) -> str:
        return f"Unwritten({self.dataset!r})"

    def __reduce__(self):
        return Unwritten, (self.dataset, self.file)

    __array_ufunc__ = None  # numpy defers to the operators below, which refuse


for _name in (
    "__getitem__ __iter__ __len__ __array__ __bool__ __float__ __neg__ __abs__ __add__ __radd__ "
    "__sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __pow__ __matmul__ __rmatmul__ "
    "__lt__ __le__ __gt__ __ge__"
).split():
    setattr(Unwritten, _name, Unwritten._refuse)


def written(value) -> bool:
    """Whether a Frame or Results value holds data: not None (the model has none) and not
    Unwritten (output.fields left it out)."""
    return value is not None and not isinstance(value, Unwritten)


@dataclass(frozen=True)
class Frame:
    """The state at one output time. N nodes, E rod elements; all float64.

    position (N,3); rotation (N,4) unit quaternions (w, x, y, z), w >= 0, of the
    reference-to-current rotation R = Lambda Lambda0^T; directors (N,3,3) current frames
    (columns d1 d2 d3); velocity, angular_velocity, linear_momentum, angular_momentum (N,3)
    spatial; force, moment, strain, curvature (E,3) in the section frame; energies and momenta
    totals; dt, iterations, residual of the step(s) leading to this frame; reaction_force,
    reaction_moment (N,3) spatial: what the supports exert on the nodes, in the supported
    components (zero elsewhere). Plates (P elements), None when the mesh has none (or the
    model does not compute them; written as zeros): plate_membrane (P,3) N11, N22, N12,
    plate_bending (P,3) M11, M22, M12, plate_shear (P,2) Q1, Q2 at the element centre in the
    element basis (per length). Stresses (rodsim.model.stress; None where not computed): rod_stress
    (E,K,3) sigma11, tau12, tau13 at the K recovery points, rod_von_mises (E,K),
    rod_von_mises_max and rod_utilisation (E,); plate_stress (P,3,5) s11, s22, s12, t13, t23 at
    the top, middle and bottom, plate_von_mises (P,3), plate_von_mises_max and
    plate_utilisation (P,). lowest_eigenvalue: equilibrium with solver.equilibrium.eigenvalue,
    the lowest eigenvalue omega^2 of the tangent (NaN otherwise). off_schedule: 1 for a frame
    written off the output schedule (the state when a signal stopped the run), else 0.
    step: the analysis step (0-based, docs/steps.md); load_factor: the multiplier of the
    step's loads (equilibrium: the load multiplier, dynamic: 1); total_time: the time since
    the start of the first step (an equilibrium step counts 1, a modal step 0); restart: the
    raw solver state of the frame (rodsim.results.restart), not a dataset of its own. A field whose
    dataset `output.fields` leaves out holds an Unwritten (any use raises CaseError).
    The energy ledger (rodsim.integrators.ledger, docs/results.md "Energy ledger"; None in
    files from before it, NaN in equilibrium, path and modal frames): external_work W,
    support_work W_s, dissipated D (the sum of dissipated_by_term (D,), one column per
    dissipating term, rodsim.integrators.ledger.NAMES), balance = kinetic + internal +
    external - W - W_s + D, which stays at its value at the start of the analysis step.
    terms: the datasets the model's terms declare (rodsim.terms.contract.Term.datasets,
    rodsim.results.layout.TERM_DATASETS), keyed by dataset path: per-frame ones
    ("connectors/force" (C,3), ...; Unwritten where output.fields leaves them out) and the
    term's mesh ones ("mesh/connectors" (C,2), the same in every frame, written once); empty
    where the model has no such term.
    """

    time: float
    position: np.ndarray
    rotation: np.ndarray
    directors: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray
    force: np.ndarray
    moment: np.ndarray
    strain: np.ndarray
    curvature: np.ndarray
    kinetic: float
    internal: float
    external: float
    total_linear: np.ndarray
    total_angular: np.ndarray
    dt: float
    iterations: float
    residual: float
    reaction_force: np.ndarray | None = None
    reaction_moment: np.ndarray | None = None
    plate_membrane: np.ndarray | None = None
    plate_bending: np.ndarray | None = None
    plate_shear: np.ndarray | None = None
    rod_stress: np.ndarray | None = None
    rod_von_mises: np.ndarray | None = None
    rod_von_mises_max: np.ndarray | None = None
    rod_utilisation: np.ndarray | None = None
    plate_stress: np.ndarray | None = None
    plate_von_mises: np.ndarray | None = None
    plate_von_mises_max: np.ndarray | None = None
    plate_utilisation: np.ndarray | None = None
    lowest_eigenvalue: float = float("nan")
    off_schedule: int = 0
    step: int = 0
    load_factor: float = float("nan")
    total_time: float = float("nan")
    external_work: float | None = None
    support_work: float | None = None
    dissipated: float | None = None
    dissipated_by_term: np.ndarray | None = None
    balance: float | None = None
    restart: object = None  # rodsim.results.restart.RestartState: written to the restart slots
    terms: dict = field(default_factory=dict)

    @property
    def total(self) -> float:
        return self.kinetic + self.internal + self.external


def share(path) -> None:
    """Give a file made by tempfile.mkstemp (owner-only) the permissions the umask allows, like
    any other file the user creates: results are meant to be read by others."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
