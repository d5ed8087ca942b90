"""The units a user reads: on the axes of ``rodsim plot``, in ``rodsim info`` and in the units
row of ``rodsim export --format csv`` (docs/units.md, "Units shown").

The rule:

- Without a ``units:`` declaration nothing is labelled or converted: rodsim cannot tell an SI
  case from an mm-t-s one, and a guess would be wrong by a factor of a million. The CSV's units
  row names each column's dimension (``force/length^2``), as docs/results.md does.
- With one, every number is shown in the declared system's unit (``N``, ``N m``, ``mJ``,
  ``mm``), except two, converted for display: stresses in MPa (SI's Pa are 1e6 times too small
  to read) and frequencies (cycles per time, modes/frequency) in Hz. Angular velocities are
  ``rad/s`` (per the system's time unit): an angular frequency is not a frequency.
- The results file and the CSV tables keep the declared system's numbers unchanged (the CSV's
  read back bit for bit); the CSV's units row names the declared system's unit of each column
  (a stress: ``Pa`` in SI, ``MPa`` in mm-t-s).
"""

from typing import NamedTuple

from rodsim.case import units
from rodsim.case.units import UnitSystem

STRESS = "force/length^2"
FREQUENCY = "cycles/time"  # modes/frequency: sqrt(lambda) / (2 pi)
ANGULAR = "angle/time"  # nodes/angular_velocity: radians per time
NOT_UNITS = ("index", "count")  # the CSV's row and counter columns: no dimension


class Shown(NamedTuple):
    """How a quantity is shown: unit, its label ('' for a pure number or no declaration); factor,
    the shown number per stored number."""

    unit: str
    factor: float


def system_of(f) -> UnitSystem | None:
    """The declared UnitSystem of an open results file, None without one."""
    raw = f.attrs.get("units", "")
    return units.from_attribute(raw.decode() if isinstance(raw, bytes) else str(raw))


def dimension(text: str) -> str:
    """A dimension as units.exponents reads it, from docs/results.md's spelling ('mass
    length/time', 'energy', 'force length/length')."""
    return text.replace("energy", "force*length").replace(" ", "*")


def quantity_dimension(name: str) -> str:
    """The dimension of a quantity rodsim plot names (units.QUANTITIES), an angular velocity
    ANGULAR."""
    if name == "angular_velocity":
        return ANGULAR
    return units.QUANTITIES.get(name, name)


def _factor(system: UnitSystem, dim: str, target: str) -> float:
    """The number of `target` units in one unit of dim in the system (pint)."""
    ureg = units.registry()
    return float(ureg.Quantity(1.0, system.unit(dim)).to(target).magnitude)


def _is_stress(dim: str) -> bool:
    return dim not in (FREQUENCY, ANGULAR) and units.exponents(dim) == units.exponents(STRESS)


def _label(system: UnitSystem, dim: str, moment: bool) -> str:
    """system.label (N, N m, MPa, mJ), with what it writes 'kg s^-2' or 'm kg s^-1' in a
    force's unit where that has a name ('N/m', 'N m^2') and else as 'kg m/s'."""
    label = system.label(dim, moment=moment)
    length, mass, time = units.exponents(dim)
    force = system.label("force")
    per = length - 1  # force * length^per
    if (mass, time) == (1, -2) and per not in (0, 1, -2) and "^" not in force:
        # a force per length (plate membrane forces) or times length^2 (bending stiffness)
        return f"{force} {system.length}^{per}" if per > 1 else _fraction(force, system, per)
    if "^-" not in label:
        return label
    powers = ((system.mass, mass), (system.length, length), (system.time, time))
    top = " ".join(_power(u, k) for u, k in powers if k > 0) or "1"
    bottom = [_power(u, -k) for u, k in powers if k < 0]
    return f"{top}/{bottom[0]}" if len(bottom) == 1 else f"{top}/({' '.join(bottom)})"


def _fraction(force: str, system: UnitSystem, per: int) -> str:
    """'N/m', 'N/m^3': a force per a power of length (per < 0)."""
    return f"{force}/{_power(system.length, -per)}"


def _power(unit: str, k: int) -> str:
    return unit if k == 1 else f"{unit}^{k}"


def shown(dim: str, system: UnitSystem | None, moment: bool = False) -> Shown:
    """How plots and rodsim info show a number of dimension dim (see the module docstring);
    moment: a force*length in N m, not J."""
    if system is None or dim in NOT_UNITS:
        return Shown("", 1.0)
    dim = dimension(dim)
    if dim == FREQUENCY:
        return Shown("Hz", _factor(system, "1/time", "Hz"))
    if dim == ANGULAR:
        return Shown(f"rad/{system.time}", 1.0)
    if _is_stress(dim):
        return Shown("MPa", _factor(system, STRESS, "MPa"))
    return Shown(_label(system, dim, moment), 1.0)


def stored(dim: str, system: UnitSystem | None, moment: bool = False) -> str:
    """The unit of the stored numbers of dimension dim, for the CSV's units row: the declared
    system's unit ('Pa', 'N m', 'rad/s', '1'); the dimension itself without a declaration."""
    if dim in NOT_UNITS:
        return dim
    if system is None:
        return dim.replace("cycles/", "1/").replace("angle/", "1/")
    dim = dimension(dim)
    if dim == FREQUENCY:
        hz = _factor(system, "1/time", "Hz")
        return "Hz" if abs(hz - 1.0) < 1e-12 else f"1/{system.time}"
    if dim == ANGULAR:
        return f"rad/{system.time}"
    return _label(system, dim, moment) or "1"


def axis_label(name: str, dim: str, system: UnitSystem | None, moment: bool = False) -> str:
    """'von_mises_max [MPa]', 'arc length [m]'; the name alone without a declaration or for a
    pure number."""
    unit = shown(dim, system, moment).unit
    return f"{name} [{unit}]" if unit else name


def quantity_shown(name: str, system: UnitSystem | None) -> Shown:
    """How plots show the rodsim plot quantity `name` (force, moment, von_mises_max, ...)."""
    return shown(quantity_dimension(name), system, moment=name in units.MOMENTS)
