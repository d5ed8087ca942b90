"""Physical dimensions of the case file's numbers, and units (docs/units.md).

Every number of the case schema (rodsim.case.v1) carries a dimension, written as a product of
the base names length, mass, time and force with integer powers, e.g. ``force/length^2`` or
``mass*length^2``; ``1`` is a pure number, ``angle`` an angle in radians and ``degree`` one in
degrees. Without a ``units:`` declaration numbers are taken as they are (consistent, but
unlabelled). With one (SI, mm-t-s, or three base units), a number may also be written as a
string with a unit, ``210 GPa`` or ``10 mm``; it is converted into the declared system, and a
unit of another dimension is an error naming the key.

pint (a units library with the SI prefixes and derived units) parses and converts; it is
imported only when a case declares units.
"""

import contextlib
import contextvars
import functools
import math
import re
from dataclasses import dataclass

from rodsim.errors import CaseError

# (length, mass, time) exponents of the base names; force = mass length / time^2
_BASE = {"length": (1, 0, 0), "mass": (0, 1, 0), "time": (0, 0, 1), "force": (1, 1, -2)}
_ANGLES = {"angle": "radian", "degree": "degree"}
_NAMES = {  # how a dimension reads in messages
    (0, 0, 0): "a pure number",
    (1, 0, 0): "a length",
    (0, 1, 0): "a mass",
    (0, 0, 1): "a time",
    (0, 0, -1): "a frequency",
    (1, 1, -2): "a force",
    (2, 1, -2): "a moment",
    (-1, 1, -2): "a stress",
    (0, 1, -2): "a force per length",
    (1, 0, -1): "a velocity",
    (1, 0, -2): "an acceleration",
    (-3, 1, 0): "a density",
    (-1, 1, 0): "a mass per length",
    (3, 1, -2): "a bending stiffness",
    (1, 1, 0): "a mass times length",
    (2, 1, 0): "a rotary inertia",
}
SYSTEMS = {"SI": ("m", "kg", "s"), "mm-t-s": ("mm", "t", "s")}


@functools.cache
def exponents(dim: str) -> tuple[int, int, int]:
    """(length, mass, time) powers of a dimension: 'force/length^2' -> (-1, 1, -2)."""
    if dim in ("1", *_ANGLES):
        return (0, 0, 0)
    total = [0, 0, 0]
    for sign, name, power in re.findall(r"([*/]?)\s*([a-z]+)(?:\^(-?\d+))?", dim):
        k = int(power or 1) * (-1 if sign == "/" else 1)
        total = [t + k * b for t, b in zip(total, _BASE[name], strict=True)]
    return tuple(total)


def describe(dim: str) -> str:
    """'force/length^2' -> 'a stress (force/length^2)'."""
    if dim in _ANGLES:
        return f"an angle ({_ANGLES[dim]}s)"
    if dim == "1":
        return "a pure number"
    name = _NAMES.get(exponents(dim), "a quantity")
    return f"{name} ({dim})"


@dataclass(frozen=True)
class UnitSystem:
    """The declared units: name (SI, mm-t-s or custom) and the three base units."""

    name: str
    length: str
    mass: str
    time: str

    def unit(self, dim: str) -> str:
        """The unit of dim in this system, as pint writes it: 'kilogram / meter ** 3'."""
        if dim in _ANGLES:
            return _ANGLES[dim]
        parts = [
            f"{base} ** {k}" for base, k in zip(self.bases(), exponents(dim), strict=True) if k
        ]
        return " * ".join(parts) or "dimensionless"

    def bases(self) -> tuple[str, str, str]:
        return (self.length, self.mass, self.time)

    def label(self, dim: str, moment: bool = False) -> str:
        """A short label of dim's unit for plots and `rodsim info`: 'N', 'MPa', 'N mm'; a
        moment's force*length in N m, not J."""
        return _label(self, dim, moment)

    def as_attribute(self) -> str:
        """The results file's `units` attribute: 'mm-t-s: length mm, mass t, time s'."""
        return f"{self.name}: length {self.length}, mass {self.mass}, time {self.time}"


_DECLARED: contextvars.ContextVar[UnitSystem | None] = contextvars.ContextVar(
    "rodsim_units", default=None
)


@contextlib.contextmanager
def declared(system: UnitSystem | None):
    """Numbers with units are converted into system while the case is checked."""
    token = _DECLARED.set(system)
    try:
        yield
    finally:
        _DECLARED.reset(token)


@functools.cache
def registry():
    import pint

    return pint.UnitRegistry()


def system(value, key: str = "units") -> UnitSystem:
    """The UnitSystem of a `units:` value: SI, mm-t-s, or {length: .., mass: .., time: ..}."""
    if isinstance(value, str) and value in SYSTEMS:
        return UnitSystem(value, *SYSTEMS[value])
    if isinstance(value, dict):
        extra = sorted(set(value) - {"length", "mass", "time"})
        missing = [k for k in ("length", "mass", "time") if k not in value]
        if extra or missing:
            what = f"unknown key {extra[0]!r}" if extra else f"missing key {missing[0]!r}"
            raise CaseError(f"{what}; expected the keys length, mass and time", key=key)
        units = []
        for base in ("length", "mass", "time"):
            unit = value[base]
            _check_unit(unit, base, f"{key}.{base}")
            units.append(unit)
        return UnitSystem("custom", *units)
    raise CaseError(
        f"expected SI, mm-t-s or a mapping {{length: .., mass: .., time: ..}}, got {value!r}",
        key=key,
    )


def _check_unit(unit, dim: str, key: str) -> None:
    ureg = registry()
    if isinstance(unit, str):
        guard(unit, key)
    try:
        q = ureg.Quantity(1.0, unit) if isinstance(unit, str) else None
    except Exception:  # pint raises several kinds on a bad unit
        q = None
    if q is None or not q.check(f"[{dim}]"):
        raise CaseError(
            f"expected a unit of {dim} (e.g. m, mm, kg, t, s, ms), got {unit!r}", key=key
        )


def convert(text: str, dim: str, key: str) -> float:
    """A number written with a unit ('210 GPa'), in the declared system's unit of dim."""
    declared_system = _DECLARED.get()
    if declared_system is None:
        if not _has_unit(text, key):
            return text  # not a number with a unit: the caller says what it expected
        raise CaseError(
            f"{text!r} has a unit, but the case declares none: add `units: SI` (or mm-t-s, or "
            "{length: .., mass: .., time: ..}) at the top level to write numbers with units",
            key=key,
        )
    guard(text, key)
    ureg = registry()
    try:
        q = ureg.Quantity(text)
    except OverflowError:  # a float power beyond the float range, such as 1e300**2
        raise CaseError(_overflow(text), key=key) from None
    except Exception as exc:  # pint: UndefinedUnitError, DimensionalityError, syntax errors
        raise CaseError(f"expected a number with a unit, got {text!r} ({exc})", key=key) from None
    if not isinstance(q, ureg.Quantity):  # a bare number written as a string
        raise CaseError(f"expected a number, got the string {text!r}", key=key)
    target = ureg.Unit(declared_system.unit(dim))
    if _dimension(q.dimensionality) != _dimension(target.dimensionality):
        raise CaseError(f"expected {describe(dim)}, got {text!r} ({_what(q)})", key=key)
    try:
        value = float(_to(q, target).magnitude)
    except OverflowError:  # an integer magnitude too large for a float
        value = math.inf
    if not math.isfinite(value):
        raise CaseError(_overflow(text, declared_system.label(dim)), key=key)
    return value


def _to(q, target):
    """q in target; pint refuses when the exponents differ by round-off (m^-0.7 m^-0.2 m^-0.1
    is m^-0.9999999999999999), so such a q goes through the base units instead."""
    if q.dimensionality == target.dimensionality:
        return q.to(target)
    one = registry().Quantity(1.0, target).to_base_units()
    return q.to_base_units() / one.magnitude


# Limits on a number with a unit, checked in linear time before pint sees the text: pint
# evaluates powers exactly, so the 10 characters of '9**9**9 Pa' ask for a number of 370
# million digits (hours). The case's dimensions are integer powers up to 3 or so (a stress is
# kg m^-1 s^-2, a density kg m^-3), so exponents within +-10 and no power of a power lose
# nothing a case needs.
MAX_LENGTH = 100
MAX_EXPONENT = 10
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TOKENS = re.compile(
    rf"(?P<number>{_NUMBER})|(?P<name>[A-Za-z_]\w*)|(?P<power>\*\*)|(?P<open>\()|(?P<close>\))"
    r"|(?P<space>\s+)|(?P<other>.)"
)
# an exponent: a signed number, bare or in its own parentheses (pint writes m⁻¹ as m**(-1))
_EXPONENT = re.compile(rf"\s*\(\s*(?P<p>[-+]?\s*{_NUMBER})\s*\)|\s*(?P<b>[-+]?\s*{_NUMBER})")


def guard(text: str, key: str) -> None:
    """Refuse a number with a unit beyond the limits (docs/units.md, Limits): longer than
    MAX_LENGTH characters, an exponent that is not a plain number within +-MAX_EXPONENT, a
    power of a power, or a number beyond the float range. One pass over the text as pint will
    read it (pint's own preprocessing turns '^' and superscripts into '**')."""
    if len(text) > MAX_LENGTH:
        raise CaseError(
            f"expected a number with a unit of at most {MAX_LENGTH} characters, got one of "
            f"{len(text)}",
            key=key,
        )
    from pint.util import string_preprocessor

    pint_text = string_preprocessor(text)
    groups = [False]  # per open parenthesis: whether it holds a power
    after_power = False  # the last token ended a power, or a group that holds one
    pos = 0
    while pos < len(pint_text):
        m = _TOKENS.match(pint_text, pos)
        kind, token = m.lastgroup, m.group()
        pos = m.end()
        if kind == "space":
            continue
        if kind == "number" and not math.isfinite(float(token)):
            shown = token if len(token) <= 20 else f"{token[:20]}... ({len(token)} digits)"
            raise CaseError(
                f"expected numbers within the float range (about 1.8e308), got {shown} in "
                f"{text[:40]!r}",
                key=key,
            )
        if kind == "power":
            if after_power:
                raise CaseError(_power_message(text, "a power of a power"), key=key)
            e = _EXPONENT.match(pint_text, pos)
            if not e:
                raise CaseError(_power_message(text, "an exponent that is not a number"), key=key)
            exponent = (e.group("p") or e.group("b")).replace(" ", "")
            if abs(float(exponent)) > MAX_EXPONENT:
                raise CaseError(_power_message(text, f"the exponent {exponent}"), key=key)
            pos = e.end()
            groups[-1] = after_power = True
            continue
        after_power = False
        if kind == "open":
            groups.append(False)
        elif kind == "close" and len(groups) > 1:
            held = groups.pop()
            groups[-1] = groups[-1] or held
            after_power = held


def _power_message(text: str, what: str) -> str:
    return (
        f"expected powers with a plain number exponent within +-{MAX_EXPONENT} and no power of "
        f"a power (e.g. kg/m^3, kg m^-1 s^-2), got {what} in {text!r}"
    )


def _overflow(text: str, unit: str = "") -> str:
    into = f" (in {unit})" if unit else ""
    return f"expected a number within the float range (about 1.8e308){into}, got {text!r}"


def _has_unit(text: str, key: str) -> bool:
    """Whether text reads as a number with a known, dimensioned unit ('10 mm', not '1e4x')."""
    if not re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*[A-Za-z]", text):
        return False
    guard(text, key)  # pint would hang on '2 m**9**9**9' here as well
    ureg = registry()
    try:
        q = ureg.Quantity(text)
    except Exception:  # pint raises several kinds on what it cannot read
        return False
    return isinstance(q, ureg.Quantity) and not q.dimensionless


def _dimension(dims) -> tuple:
    """(length, mass, time) powers of a pint dimensionality, and the other dimensions it has
    (temperature, current, ...). A power within 1e-9 of an integer is that integer: pint adds
    written float exponents, so m^-0.7 m^-0.2 m^-0.1 is m^-0.9999999999999999, a length^-1 all
    the same (1e-9: far above the 1e-16 round-off of such sums, far below a real fraction)."""

    def power(p):
        return round(p) if abs(p - round(p)) < 1e-9 else p

    lmt = tuple(power(dims.get(f"[{d}]", 0)) for d in ("length", "mass", "time"))
    rest = {d: power(p) for d, p in dims.items() if d not in ("[length]", "[mass]", "[time]")}
    return lmt, tuple(sorted((d, p) for d, p in rest.items() if p))


def _what(q) -> str:
    """How q's dimension reads in a message: 'a stress', or pint's form where it is none of
    the named ones (a temperature in it, a fractional power)."""
    lmt, rest = _dimension(q.dimensionality)
    if rest or not all(isinstance(p, int) for p in lmt):
        return f"dimension {q.dimensionality}"
    return _NAMES.get(lmt, f"dimension {q.dimensionality}")


_NAMED = ("N", "kN", "mN", "J", "kJ", "mJ", "Pa", "kPa", "MPa", "GPa", "N*m", "N*mm", "kN*m")


def _label(units: UnitSystem, dim: str, moment: bool = False) -> str:
    if dim in _ANGLES:
        return "rad" if dim == "angle" else "deg"
    if dim == "1":
        return ""
    ureg = registry()
    base = ureg.Quantity(1.0, units.unit(dim))
    for name in sorted(_NAMED, key=lambda n: "*" not in n) if moment else _NAMED:
        named = ureg.Unit(name)
        if named.dimensionality == base.dimensionality:
            factor = base.to(named).magnitude
            if abs(factor - 1.0) < 1e-12:
                return name.replace("*", " ")
    pretty = [
        f"{u}^{k}" if k != 1 else u for u, k in zip(units.bases(), exponents(dim), strict=True) if k
    ]
    return " ".join(pretty)


def from_attribute(text: str) -> UnitSystem | None:
    """The UnitSystem of a results file's `units` attribute (UnitSystem.as_attribute); None
    for '' (no declaration) or text this version cannot read."""
    m = re.fullmatch(r"(.+): length (\S+), mass (\S+), time (\S+)", text or "")
    return UnitSystem(*m.groups()) if m else None


MOMENTS = ("moment", "reaction_moment")  # force*length in N m, not J

# The dimension of each quantity rodsim plot and rodsim info show (docs/results.md)
QUANTITIES = {
    "time": "time",
    "energy": "force*length",
    "momentum": "mass*length/time",
    "position": "length",
    "displacement": "length",
    "velocity": "length/time",
    "angular_velocity": "1/time",
    "linear_momentum": "mass*length/time",
    "angular_momentum": "mass*length^2/time",
    "rotation": "1",
    "force": "force",
    "moment": "force*length",
    "reaction_force": "force",
    "reaction_moment": "force*length",
    "strain": "1",
    "curvature": "1/length",
    "membrane": "force/length",
    "bending": "force",
    "shear": "force/length",
    "von_mises_max": "force/length^2",
    "utilisation": "1",
}
