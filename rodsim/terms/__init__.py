"""Every physics that acts on the nodes, one module each, in summation order.

The order of TERMS is the order in which the terms' forces are added at a node (floating-point
sums are not associative: the order is part of the results). The contract: rodsim.terms.contract
and docs/developer.md.
"""

from rodsim.terms import connectors, loads, mass_damping, plates, pressure, rods, supports, user
from rodsim.terms.contract import ALL, APPLIED, GROUND, INTERNAL, Term

TERMS: tuple[Term, ...] = (
    rods.TERM,
    plates.TERM,
    pressure.TERM,
    loads.TERM,
    mass_damping.TERM,
    supports.TERM,
    connectors.TERM,
    *user.TERMS,  # user terms from Python, last (rodsim.terms.user)
)

__all__ = ["ALL", "APPLIED", "GROUND", "INTERNAL", "TERMS", "Term"]
