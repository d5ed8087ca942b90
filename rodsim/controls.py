"""Changing a running model's loads and prescribed motions between steps (rodsim.Simulation).

A control writes into the simulation's Inputs (rodsim.state.Inputs): the arrays that the
compiled kernels read (the load terms' inputs, Term.inputs: nodal force and moment rows,
gravity, pressure; the prescribed motions' u and theta), in place: they are never replaced,
so the kernels see the new values at their next call and nothing is recompiled. Each control
owns the rows of one case entry (rodsim.case.model.LoadRows, Setup.motion_rows). A value set
replaces the entry's value as the case gives it; the entry's time function still multiplies it
(docs/python.md, "Loads and motions from Python").
"""

from collections.abc import Callable, Sequence

import numpy as np

from rodsim.api_checks import finite, finite_vector
from rodsim.case.fields import DOFS
from rodsim.case.load_terms import LoadRows
from rodsim.case.settings import GravityLoad
from rodsim.errors import ArgumentError, CaseError


def _span(rows: np.ndarray):
    """Consecutive rows as a slice (a basic index: assignments to it take a third of the
    time of an index array's), else the rows."""
    if len(rows) and np.array_equal(rows, np.arange(rows[0], rows[0] + len(rows))):
        return slice(int(rows[0]), int(rows[0]) + len(rows))
    return rows


def _spread(name: str, doc: str) -> property:
    """A distributed value of a load entry (rodsim.case.load_terms.DISTRIBUTED), in the
    entry's frame, before lumping."""
    return property(
        lambda self: self._spread_value(name),
        lambda self, value: self._set_spread(name, value),
        doc=doc + " (the entry's frame; before its time function)",
    )


class LoadControl:
    """The values of one `loads:` entry (not gravity: Simulation.gravity) at every node of its
    set: force and moment (global axes, reference state; follower loads turn with the node),
    edge_force (per length), line_force and line_moment (per length along rods),
    surface_force (per area of plates), body_force (per volume), pressure. Reading gives the
    value now in force (before its time function); setting one the entry lacks is a CaseError
    (give the case the key, with zeros, to control it). `changed` is called after every
    change."""

    def __init__(self, index: int, spec: dict, rows: LoadRows, loads: dict, changed: Callable):
        self.index = index
        self.set = spec.set
        self.follower = bool(spec.follower)
        self._rows = rows
        self._nodal_rows = _span(rows.nodal)
        self._loads = loads  # input name -> array: force, moment (K,3), pressure
        self._changed = changed
        # the values as the model applies them: times the entry's group factor
        factor = rows.factor
        self._edge_force = None if spec.edge_force is None else factor * np.array(spec.edge_force)
        # the distributed values as given (per length, area, volume), before lumping
        self._spread = {k: factor * np.array(getattr(spec, k)) for k in rows.distributed}

    def __repr__(self) -> str:
        return f"<LoadControl loads[{self.index}] on {self.set!r}>"

    def _key(self, name: str) -> str:
        return f"loads[{self.index}].{name}"

    def _nodal(self, name: str) -> np.ndarray:
        if len(self._rows.nodal) == 0:
            raise CaseError(
                f"this entry has neither force nor moment; give it {name}: [0, 0, 0] "
                "in the case to set it from Python",
                key=self._key(name),
            )
        return self._rows.nodal

    @property
    def force(self) -> np.ndarray:
        """(3,) force at each node of the set."""
        return self._loads["force"][self._nodal("force")[0]].copy()

    @force.setter
    def force(self, value) -> None:
        self._nodal("force")
        self._loads["force"][self._nodal_rows] = finite_vector(value, self._key("force"))
        self._changed()

    @property
    def moment(self) -> np.ndarray:
        """(3,) moment at each node of the set."""
        return self._loads["moment"][self._nodal("moment")[0]].copy()

    @moment.setter
    def moment(self, value) -> None:
        self._nodal("moment")
        self._loads["moment"][self._nodal_rows] = finite_vector(value, self._key("moment"))
        self._changed()

    @property
    def edge_force(self) -> np.ndarray:
        """(3,) force per length on the set's plate boundary edges."""
        if self._edge_force is None:
            self._missing("edge_force")
        return self._edge_force.copy()

    @edge_force.setter
    def edge_force(self, value) -> None:
        if self._edge_force is None:
            self._missing("edge_force")
        v = np.array(finite_vector(value, self._key("edge_force")))
        # as the case builds them: each node's edge length times the force per length
        self._loads["force"][self._rows.edge] = self._rows.edge_length[:, None] * v
        self._edge_force = v
        self._changed()

    line_force = _spread(
        "line_force", "(3,) force per unit reference length along the set's rod elements"
    )
    line_moment = _spread(
        "line_moment", "(3,) moment per unit reference length along the set's rod elements"
    )
    surface_force = _spread(
        "surface_force", "(3,) force per unit reference area on the set's plate cells"
    )
    body_force = _spread(
        "body_force", "(3,) force per unit reference volume on the set's rods and plates"
    )

    def _spread_value(self, name: str) -> np.ndarray:
        if name not in self._spread:
            self._missing(name)
        return self._spread[name].copy()

    def _set_spread(self, name: str, value) -> None:
        if name not in self._spread:
            self._missing(name)
        v = np.array(finite_vector(value, self._key(name)))
        rows, maps, target = self._rows.distributed[name]
        # lumped as the case lumps it (rodsim.mesh.distributed): each row's map times v
        self._loads[target][rows] = maps @ v
        self._spread[name] = v
        self._changed()

    @property
    def pressure(self) -> float:
        """Pressure on the set's plate elements."""
        if len(self._rows.pressure) == 0:
            self._missing("pressure")
        return float(self._loads["pressure"][self._rows.pressure[0]])

    @pressure.setter
    def pressure(self, value) -> None:
        if len(self._rows.pressure) == 0:
            self._missing("pressure")
        v = finite(value, self._key("pressure"))
        self._loads["pressure"][self._rows.pressure] = v
        self._changed()

    def _missing(self, name: str):
        raise CaseError(
            f"this entry has no {name}; give it {name} in the case to set it from Python",
            key=self._key(name),
        )


class MotionControl:
    """The prescribed motion of one `boundary:` entry with `prescribe:` at every node of its
    set: displacement u (3 components, None where the entry leaves one free; x = x0 + f(t) u)
    and rotation vector theta (rad, global axes; Lambda = exp(f(t) theta) Lambda0). A new value
    is reached at the end of the next step (the node moves to it over that step)."""

    def __init__(self, index: int, spec: dict, rows: np.ndarray, motions, amplitudes: dict):
        self.index = index
        self.set = spec.set
        self._rows = rows
        self._motions = motions  # the packed motions: which components are prescribed
        self._amplitudes = amplitudes  # Inputs.prescribed: u, theta (K,3), written

    def __repr__(self) -> str:
        return f"<MotionControl boundary[{self.index}] on {self.set!r}>"

    def _key(self, name: str) -> str:
        return f"boundary[{self.index}].prescribe.{name}"

    @property
    def displacement(self) -> tuple:
        """(ux, uy, uz), None for a component the entry leaves free."""
        a = self._rows[0]
        u, held = self._amplitudes["u"], self._motions.translate
        return tuple(float(u[a, i]) if held[a, i] else None for i in range(3))

    @displacement.setter
    def displacement(self, value: Sequence) -> None:
        held = self._motions.translate[self._rows[0]].astype(bool)
        key = self._key("displacement")
        if not hasattr(value, "__len__") or len(value) != 3:
            raise ArgumentError(
                f"expected three components (null where free), got {value!r}", key=key
            )
        given = np.array([c is not None for c in value])
        if np.any(given & ~held):
            free = ", ".join(DOFS[i] for i in np.flatnonzero(given & ~held))
            raise CaseError(f"the case leaves {free} free here; give None for it", key=key)
        u = finite_vector([0.0 if c is None else c for c in value], key)
        for i in np.flatnonzero(given):
            self._amplitudes["u"][self._rows, i] = u[i]

    @property
    def rotation(self) -> np.ndarray:
        """(3,) rotation vector theta."""
        self._rotating()
        return self._amplitudes["theta"][self._rows[0]].copy()

    @rotation.setter
    def rotation(self, value) -> None:
        self._rotating()
        self._amplitudes["theta"][self._rows] = finite_vector(value, self._key("rotation"))

    def _rotating(self) -> None:
        if not self._motions.rotate[self._rows[0]]:
            raise CaseError("this entry prescribes no rotation", key=self._key("rotation"))


class Controls:
    """Controls of a case's entries: [i] the entry loads[i] (or boundary[i]), ["set"] the one
    entry on that node set; iterating gives those that can be controlled."""

    def __init__(self, section: str, controls: dict, reasons: dict):
        self._section = section
        self._controls = controls  # entry index -> control
        self._reasons = reasons  # entry index -> why it has none

    def __len__(self) -> int:
        return len(self._controls)

    def __iter__(self):
        return iter(self._controls.values())

    def __getitem__(self, key):
        if isinstance(key, str):
            found = [c for c in self._controls.values() if c.set == key]
            if len(found) != 1:
                sets = sorted({c.set for c in self._controls.values()}) or ["none"]
                how = "several entries" if found else "no entry"
                raise CaseError(
                    f"{how} on node set {key!r} here (sets: {', '.join(sets)}); "
                    "give the entry's index",
                    key=self._section,
                )
            return found[0]
        if key in self._controls:
            return self._controls[key]
        where = f"{self._section}[{key}]"
        raise CaseError(self._reasons.get(key, "no such entry"), key=where)


def load_controls(data: dict, rows: Sequence[LoadRows], inputs, changed: Callable) -> Controls:
    """The LoadControl of every `loads:` entry but gravity; inputs: the simulation's
    rodsim.state.Inputs (the inputs of the load terms: nodal rows and pressure)."""
    # a `loads:` entry feeds the nodal loads term and the pressure term: its control writes both
    loads = {**inputs.terms["loads"], **inputs.terms["pressure"]}
    controls, reasons = {}, {}
    for i, (spec, r) in enumerate(zip(data.loads, rows, strict=True)):
        if isinstance(spec, GravityLoad):
            reasons[i] = "gravity: set Simulation.gravity"
        else:
            controls[i] = LoadControl(i, spec, r, loads, changed)
    return Controls("loads", controls, reasons)


def motion_controls(data: dict, rows: dict, motions, inputs) -> Controls:
    """The MotionControl of every `boundary:` entry that prescribes motion; motions: the
    model's packed prescribed motions, inputs: the simulation's rodsim.state.Inputs."""
    controls = {
        i: MotionControl(i, data.boundary[i], r, motions, inputs.prescribed)
        for i, r in rows.items()
    }
    reasons = {i: "fixed, not prescribed" for i in range(len(data.boundary)) if i not in rows}
    return Controls("boundary", controls, reasons)
