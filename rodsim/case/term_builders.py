"""The builders of the terms whose arrays live in Model.term_arrays (rodsim.terms): each
takes (mesh, frames (N,3,3) the model's reference frames, the case's settings) and gives the
term's arrays, or None where the case has none. A new term adds one line here; the model
builder (rodsim.case.model) names no term."""

import numpy as np

from rodsim.case import connectors

BUILDERS = {
    "connectors": connectors.build,
}


def term_arrays(mesh, frames: np.ndarray, data) -> dict:
    """{term name: arrays} of the terms the case holds (Model.term_arrays)."""
    out = {}
    for name, build in BUILDERS.items():
        arrays = build(mesh, frames, data)
        if arrays is not None:
            out[name] = arrays
    return out
