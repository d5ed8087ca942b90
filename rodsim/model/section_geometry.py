"""The data of a cross-section shape (rodsim.model.shapes): its properties and the samples
of its boundary that stresses are recovered at."""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class ShapeProperties:
    """Geometric properties of a cross-section shape (lengths in the user's unit L).

    kind: the shape's name. area: A (L^2). I2 = int x3^2 dA and I3 = int x2^2 dA (L^4), second
    moments about d2 and d3. J: St-Venant torsion constant (L^4). m: inner/outer radius ratio
    of a tube (0 otherwise), used by Cowper's shear factor; k2, k3: shear factors along d2,
    d3 (GA = k G A) of thin-walled profiles, None where Cowper's value applies.
    """

    kind: str
    area: float
    I2: float
    I3: float
    J: float
    m: float = 0.0
    k2: float | None = None
    k3: float | None = None


class Boundary(NamedTuple):
    """Samples of a section's boundary, K of them: x (K,2) the points (x2, x3); cT, cV2, cV3
    (K,2) the shear stress vector (tau12, tau13) per unit T, V2, V3 (1/L^3, 1/L^2, 1/L^2)."""

    x: np.ndarray
    cT: np.ndarray  # noqa: N815
    cV2: np.ndarray  # noqa: N815
    cV3: np.ndarray  # noqa: N815
