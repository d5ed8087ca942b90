"""Stresses recovered from the section resultants (docs/stresses.md).

Rods: at the recovery points of each section's shape (rodsim.model.shapes), with (N, V2, V3)
the force and (T, M2, M3) the moment in the section frame (rods/force, rods/moment),

    sigma11 = N / A + M2 x3 / I2 - M3 x2 / I3,   (tau12, tau13) = T cT + V2 cV2 + V3 cV3,
    von Mises = sqrt(sigma11^2 + 3 (tau12^2 + tau13^2)).

Plates: at z = +h/2 (top, the d3 side), 0 and -h/2 of each element (Reissner-Mindlin, linear
through the thickness, parabolic transverse shear),

    sigma_ab(z) = N_ab / h + 12 M_ab z / h^3,   tau_a3(z) = 3 Q_a / (2 h) (1 - 4 z^2 / h^2),
    von Mises = sqrt(s11^2 + s22^2 - s11 s22 + 3 (s12^2 + t13^2 + t23^2)).

Utilisation: the largest von Mises stress of an element over its points (layers) divided by
its material's allowable stress. Elements without geometry (a section given by stiffnesses)
or without an allowable stress get NaN.
"""

from typing import NamedTuple

import numpy as np

from rodsim.jit import kernel


class StressTables(NamedTuple):
    """What the recovery needs, per section s (S of them) with K points each (NaN-padded):
    area, i2, i3, allowable (S,); x, c_t, c_v2, c_v3 (S,K,2) (a section_geometry.Boundary);
    rod_section (E,) int64 the section of each rod element (-1: none with geometry);
    plate_h, plate_allowable (P,) thickness and allowable stress of each plate; points: keep
    the rods' stresses at every recovery point (output.stresses: points), not only the
    largest von Mises stress."""

    area: np.ndarray
    i2: np.ndarray
    i3: np.ndarray
    allowable: np.ndarray
    x: np.ndarray
    c_t: np.ndarray
    c_v2: np.ndarray
    c_v3: np.ndarray
    rod_section: np.ndarray
    plate_h: np.ndarray
    plate_allowable: np.ndarray
    points: bool = False

    @property
    def n_points(self) -> int:
        return self.x.shape[1]


def stress_tables(
    sections, n_plates=0, plate_h=None, plate_allowable=None, points=False
) -> StressTables:
    """Tables of per-element RodSections (their geometry, rodsim.model.sections) and of
    n_plates plates (thickness and allowable stress; NaN where not given)."""
    unique = {}
    for sec in sections:
        if sec.geometry is not None:
            unique.setdefault(id(sec.geometry), sec.geometry)
    geoms = list(unique.values())
    index = {id(g): i for i, g in enumerate(geoms)}
    k = max((len(g.points.x) for g in geoms), default=0)
    s = len(geoms)
    tables = [np.full((s, k, 2), np.nan) for _ in range(4)]
    for i, g in enumerate(geoms):
        for table, values in zip(tables, g.points, strict=True):
            table[i, : len(values)] = values
    nan = float("nan")
    p = n_plates
    return StressTables(
        np.array([g.shape.area for g in geoms], dtype=float),
        np.array([g.shape.I2 for g in geoms], dtype=float),
        np.array([g.shape.I3 for g in geoms], dtype=float),
        np.array([nan if g.allowable is None else g.allowable for g in geoms], dtype=float),
        *tables,
        np.array(
            [-1 if sec.geometry is None else index[id(sec.geometry)] for sec in sections],
            dtype=np.int64,
        ),
        np.full(p, nan) if plate_h is None else np.asarray(plate_h, dtype=float),
        np.full(p, nan) if plate_allowable is None else np.asarray(plate_allowable, dtype=float),
        bool(points),
    )


@kernel
def rod_stresses(t, force, moment, stress, von_mises, worst, utilisation):
    """Fill worst, utilisation (E,) and, with t.points, stress (E,K,3) = (sigma11, tau12, tau13)
    and von_mises (E,K) at the recovery points, from force, moment (E,3) (section frame);
    t: StressTables."""
    keep = t.points
    for e in range(force.shape[0]):
        s = t.rod_section[e]
        worst[e] = np.nan
        utilisation[e] = np.nan
        if keep:
            for p in range(stress.shape[1]):
                for c in range(3):
                    stress[e, p, c] = np.nan
                von_mises[e, p] = np.nan
        if s < 0:
            continue
        n, v2, v3 = force[e, 0], force[e, 1], force[e, 2]
        tq, m2, m3 = moment[e, 0], moment[e, 1], moment[e, 2]
        top = 0.0
        for p in range(t.x.shape[1]):
            x2, x3 = t.x[s, p, 0], t.x[s, p, 1]
            if x2 != x2:  # padding
                continue
            sigma = n / t.area[s] + m2 * x3 / t.i2[s] - m3 * x2 / t.i3[s]
            t12 = tq * t.c_t[s, p, 0] + v2 * t.c_v2[s, p, 0] + v3 * t.c_v3[s, p, 0]
            t13 = tq * t.c_t[s, p, 1] + v2 * t.c_v2[s, p, 1] + v3 * t.c_v3[s, p, 1]
            vm = np.sqrt(sigma * sigma + 3.0 * (t12 * t12 + t13 * t13))
            if keep:
                stress[e, p, 0] = sigma
                stress[e, p, 1] = t12
                stress[e, p, 2] = t13
                von_mises[e, p] = vm
            top = max(top, vm)
        worst[e] = top
        utilisation[e] = top / t.allowable[s]


@kernel
def plate_stresses(t, membrane, bending, shear, stress, von_mises, worst, utilisation):
    """Fill stress (P,3,5) = (s11, s22, s12, t13, t23) at the top, middle and bottom, von_mises
    (P,3), worst, utilisation (P,) from the resultants per length (element basis)."""
    for e in range(membrane.shape[0]):
        h = t.plate_h[e]
        top = 0.0
        for layer in range(3):
            z = (0.5 - 0.5 * layer) * h
            s11 = membrane[e, 0] / h + 12.0 * bending[e, 0] * z / h**3
            s22 = membrane[e, 1] / h + 12.0 * bending[e, 1] * z / h**3
            s12 = membrane[e, 2] / h + 12.0 * bending[e, 2] * z / h**3
            shape = 1.5 / h * (1.0 - 4.0 * z * z / (h * h))
            t13 = shape * shear[e, 0]
            t23 = shape * shear[e, 1]
            vm = np.sqrt(
                s11 * s11 + s22 * s22 - s11 * s22 + 3.0 * (s12 * s12 + t13 * t13 + t23 * t23)
            )
            stress[e, layer, 0] = s11
            stress[e, layer, 1] = s22
            stress[e, layer, 2] = s12
            stress[e, layer, 3] = t13
            stress[e, layer, 4] = t23
            von_mises[e, layer] = vm
            top = max(top, vm)
        worst[e] = top
        utilisation[e] = top / t.plate_allowable[e]


def stress_fields(t: StressTables, fields: dict) -> dict:
    """Frame fields of the stresses, from the resultant fields of rodsim.model.forces.fields
    (force, moment; plate_membrane, plate_bending, plate_shear when there are plates)."""
    out = {}
    e, k = fields["force"].shape[0], t.n_points
    if e and k:
        kept = (e, k) if t.points else (0, 0)
        stress, von_mises = np.empty((*kept, 3)), np.empty(kept)
        out["rod_von_mises_max"] = np.empty(e)
        out["rod_utilisation"] = np.empty(e)
        rod_stresses(
            t,
            fields["force"],
            fields["moment"],
            stress,
            von_mises,
            out["rod_von_mises_max"],
            out["rod_utilisation"],
        )
        if t.points:
            out["rod_stress"], out["rod_von_mises"] = stress, von_mises
    if fields.get("plate_membrane") is not None:
        p = fields["plate_membrane"].shape[0]
        out["plate_stress"] = np.empty((p, 3, 5))
        out["plate_von_mises"] = np.empty((p, 3))
        out["plate_von_mises_max"] = np.empty(p)
        out["plate_utilisation"] = np.empty(p)
        plate_stresses(
            t,
            fields["plate_membrane"],
            fields["plate_bending"],
            fields["plate_shear"],
            out["plate_stress"],
            out["plate_von_mises"],
            out["plate_von_mises_max"],
            out["plate_utilisation"],
        )
    return out
