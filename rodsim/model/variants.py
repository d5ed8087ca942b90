"""Variants of a model made term by term over TERMS: a term's arrays replaced or removed, the
model holding only some terms, its loads scaled or left with only their dead part.

The analyses that need a changed model (modal damping, buckling's prestress and load scaling,
path following, the mechanism check, the summary's load totals) make it here, through the
terms' hooks (rodsim.terms.contract): none of them names a term or reads its arrays. A hook
that returns a term's changed arrays is applied to the model as it stands after the terms
before it, so terms that share their arrays (the loads and the pressure share the packed
loads) each change only their own fields.
"""

import dataclasses

from rodsim.terms import APPLIED, TERMS


def with_arrays(model, term, arrays):
    """The model with `term`'s arrays replaced (its `place` hook, else Model.term_arrays)."""
    if term.place is not None:
        return term.place(model, arrays)
    return dataclasses.replace(model, term_arrays={**model.term_arrays, term.name: arrays})


def without(model, term):
    """The model without `term` (its `empty` arrays, or its entry of Model.term_arrays
    dropped); a term that has no forces (mass damping) stays: nothing to remove."""
    if term.empty is not None:
        return with_arrays(model, term, term.empty(term.arrays(model)))
    if term.forces is None or term.name not in model.term_arrays:
        return model
    rest = {k: v for k, v in model.term_arrays.items() if k != term.name}
    return dataclasses.replace(model, term_arrays=rest)


def holding(model, keep):
    """The model holding only the terms `keep` (names) of those with forces; the rest are
    removed term after term (without)."""
    for term in TERMS:
        if term.name not in keep and term.forces is not None:
            model = without(model, term)
    return model


def mapped(model, hook: str, *args, role: int = 0):
    """The model with every term that has `hook` (and, role given, whose role is in it)
    replaced by hook(arrays, *args), term after term in TERMS order."""
    for term in TERMS:
        change = getattr(term, hook)
        if change is not None and (not role or term.role & role):
            model = with_arrays(model, term, change(term.arrays(model), *args))
    return model


def scaled_loads(model, scale: float):
    """The model with its applied loads (forces, moments, gravity, pressure) times scale;
    prescribed motions unchanged (the APPLIED terms' `scaled`)."""
    return mapped(model, "scaled", scale, role=APPLIED)


def dead_loads(model):
    """The model with only the dead part of its applied loads (the APPLIED terms' `dead`:
    follower forces, moments and pressure, which turn with the structure or have no
    potential, set to zero; gravity kept)."""
    return mapped(model, "dead", role=APPLIED)


def entry_loads(model, rows):
    """The model with only the loads of one case `loads:` entry (the APPLIED terms' `entry`;
    rows: rodsim.case.load_terms.LoadRows), gravity left out."""
    return mapped(model, "entry", rows, role=APPLIED)


def prestressed(model, base, state, scale: float = 1.0):
    """The model with each term's reference strains shifted by scale times the change of its
    strain measures from the configuration base to state (each (x, rot); the terms'
    `prestressed`)."""
    return mapped(model, "prestressed", base, state, scale)
