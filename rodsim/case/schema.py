"""A small declarative schema: typed, strict validation of YAML data with key paths in errors.

Each node type is a frozen dataclass with ``check(value, path) -> normalised value`` and
``expected() -> str`` (a short phrase used in errors and in the generated reference). Records
reject unknown keys and fill defaults, so everything downstream sees complete, typed data.
Paths are tuples of keys and list indices, rendered as ``loads[1].time.table[2]``.

The case-file reference in docs/ is generated from these nodes (rodsim.case.reference), so the
documentation and the validator cannot drift apart.
"""

import dataclasses
import difflib
import keyword
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rodsim.case import units
from rodsim.errors import CaseError

Path = tuple[str | int, ...]
MISSING = object()
FILLED = object()  # a Field default: the sub-record with every default of its own


def attribute(key: str) -> str:
    """The attribute of a typed settings class that holds a key: `from` -> `from_`."""
    return key + "_" if keyword.iskeyword(key) else key


def keys_of(settings) -> dict:
    """A typed settings object (Record.into) as its case-file keys and values, one level."""
    return {
        f.name.removesuffix("_") if keyword.iskeyword(f.name[:-1]) else f.name: getattr(
            settings, f.name
        )
        for f in dataclasses.fields(settings)
    }


def render(path: Path) -> str:
    """('loads', 1, 'time') -> 'loads[1].time'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def fail(path: Path, message: str) -> CaseError:
    return CaseError(message, key=render(path) or None)


def within(exc: CaseError, path: Path) -> CaseError:
    """exc (raised with a key relative to path) with the full key path."""
    return type(exc)(exc.reason, key=render(path) + ("." + exc.key if exc.key else ""))


def show(value) -> str:
    """A value as the user wrote it, for error messages."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return f"a list of {len(value)}" if value else "an empty list"
    if _is_number(value):
        return repr(value)
    return f"{value} (a {type(value).__name__})"  # e.g. an unquoted date, which YAML converts


def _did_you_mean(key, names) -> str:
    close = [n for n in names if n.lower() == str(key).lower()]  # Gj for GJ
    close = close or difflib.get_close_matches(str(key), list(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Number:
    """A finite real number with optional bounds (gt: >, ge: >=, le: <=); integer: whole.
    dim: its physical dimension (rodsim.case.units: 'force/length^2', '1', 'angle', ...);
    a number of a dimension may be written with a unit when the case declares `units:`."""

    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    integer: bool = False
    dim: str = ""

    def expected(self) -> str:
        kind = "an integer" if self.integer else "a number"
        bounds = [f"> {self.gt:g}" if self.gt is not None else ""]
        bounds += [f">= {self.ge:g}" if self.ge is not None else ""]
        bounds += [f"<= {self.le:g}" if self.le is not None else ""]
        bounds = [b for b in bounds if b]
        return f"{kind} {' and '.join(bounds)}" if bounds else kind

    def check(self, value, path: Path):
        if isinstance(value, str) and self.dim and not self.integer:
            value = units.convert(value, self.dim, render(path))
        if not _is_number(value):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer too large for a float
            raise fail(
                path, f"expected a finite number, got an integer of {len(str(value))} digits"
            ) from None
        if not finite:
            raise fail(path, f"expected a finite number, got {value}")
        if self.integer and value != int(value):
            raise fail(path, f"expected {self.expected()}, got {value}")
        too_low = (self.gt is not None and not value > self.gt) or (
            self.ge is not None and not value >= self.ge
        )
        if too_low or (self.le is not None and not value <= self.le):
            raise fail(path, f"expected {self.expected()}, got {value:g}")
        return int(value) if self.integer else float(value)


@dataclass(frozen=True)
class Boolean:
    def expected(self) -> str:
        return "true or false"

    def check(self, value, path: Path):
        if not isinstance(value, bool):
            raise fail(path, f"expected true or false, got {show(value)}")
        return value


@dataclass(frozen=True)
class Text:
    """A string; with choices, one of them; with identifier, a name without dots, slashes (an
    HDF5 path separator in mesh/sets) or spaces."""

    choices: tuple[str, ...] = ()
    identifier: bool = False

    def expected(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        return "a name (letters, digits, _ or -)" if self.identifier else "a string"

    def check(self, value, path: Path):
        if not isinstance(value, str):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        # control characters (a NUL from a "\0" escape, say) break HDF5 names and attributes;
        # free text may keep tabs and line breaks, names nothing of the kind
        allowed = "" if self.identifier else "\t\n\r"
        bad = next((c for c in value if (c < " " or c == "\x7f") and c not in allowed), None)
        if bad is not None:
            raise fail(
                path,
                f"expected {self.expected()} without control characters, got "
                f"{value!r} (character #x{ord(bad):04x})",
            )
        if self.choices and value not in self.choices:
            raise fail(path, f"expected {self.expected()}, got {value!r}")
        if self.identifier and (not value or any(c in value for c in "./ \t\n[]")):
            raise fail(path, f"expected {self.expected()}, got {value!r}")
        return value


@dataclass(frozen=True)
class Vector:
    """A list of n numbers (default 3), as a tuple of floats; nonzero: not all zero;
    nullable: entries may be null (None), not all of them."""

    n: int = 3
    nonzero: bool = False
    item: Number = Number()
    nullable: bool = False
    dims: tuple[str, ...] = ()  # per entry, when they differ (a table row [t, v])

    def items(self) -> tuple:
        """The node of each entry."""
        if not self.dims:
            return (self.item,) * self.n
        return tuple(replace(self.item, dim=d) for d in self.dims)

    def expected(self) -> str:
        each = self.item.expected().split(" ", 2)
        items = "numbers" if len(each) < 3 else f"{each[1]}s {each[2]}"
        return (
            f"a list of {self.n} {items}"
            + (" or null (not all null)" if self.nullable else "")
            + (", not all zero" if self.nonzero else "")
        )

    def check(self, value, path: Path):
        if not isinstance(value, list) or len(value) != self.n:
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        if self.nullable and all(v is None for v in value):
            raise fail(path, f"expected {self.expected()}, got only nulls")
        out = tuple(
            None if (self.nullable and v is None) else node.check(v, (*path, i))
            for i, (v, node) in enumerate(zip(value, self.items(), strict=True))
        )
        if self.nonzero and not any(out):
            raise fail(path, f"expected {self.expected()}, got {list(out)}")
        return out


@dataclass(frozen=True)
class ListOf:
    """A list of items of one node type; rule: a function (items, path) run on the checked
    items, for checks across them."""

    item: Any
    min_items: int = 0
    rule: Callable | None = field(default=None, compare=False)

    def expected(self) -> str:
        if self.min_items == 1:
            return "a non-empty list"
        return f"a list of at least {self.min_items} entries" if self.min_items else "a list"

    def check(self, value, path: Path):
        if not isinstance(value, list):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        if len(value) < self.min_items:
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        out = tuple(self.item.check(v, (*path, i)) for i, v in enumerate(value))
        if self.rule is not None:
            self.rule(out, path)
        return out


@dataclass(frozen=True)
class MapOf:
    """A mapping from names (identifiers) to values of one node type."""

    value: Any
    doc_key: str = "NAME"

    def expected(self) -> str:
        return "a mapping of names"

    def check(self, value, path: Path):
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        out = {}
        for key, item in value.items():
            Text(identifier=True).check(key, (*path, str(key)))
            out[key] = self.value.check(item, (*path, key))
        return out


@dataclass(frozen=True)
class Field:
    """One key of a Record: its node, default (MISSING = required) and documentation."""

    name: str
    node: Any
    doc: str
    default: Any = MISSING
    optional: bool = False  # may be absent without a default (value None)

    @property
    def required(self) -> bool:
        return self.default is MISSING and not self.optional


@dataclass(frozen=True)
class Record:
    """A mapping with a fixed set of keys; unknown keys are errors; defaults are filled in.

    ``rules`` are functions (data, path) run after the fields, for checks across keys.
    ``into``: a frozen dataclass (rodsim.case.settings) with one attribute per key (see
    :func:`attribute`), which check returns instead of a dict; a ValueError it raises becomes
    an error at this record's key path.
    """

    fields: tuple[Field, ...]
    doc: str = ""
    rules: tuple[Callable, ...] = field(default=(), compare=False)
    into: Any = field(default=None, compare=False)

    def __post_init__(self):
        if self.into is not None:
            have = {f.name for f in dataclasses.fields(self.into)}
            want = {attribute(f.name) for f in self.fields}
            if have != want:
                raise TypeError(
                    f"{self.into.__name__} has attributes {sorted(have)}, its record keys "
                    f"{sorted(want)}"
                )

    def defaults(self) -> dict:
        """The record as it is when every key is left out (its keys all have defaults)."""
        return {f.name: self.filled(f, ()) for f in self.fields}

    def filled(self, f: Field, path: Path):
        if f.default is FILLED:
            return f.node.check({}, (*path, f.name))
        return None if f.default is MISSING else f.default

    def expected(self) -> str:
        return "a mapping with keys " + ", ".join(f.name for f in self.fields)

    def check(self, value, path: Path):
        if not isinstance(value, Mapping):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        names = [f.name for f in self.fields]
        for key in value:
            if key not in names:
                raise fail(
                    (*path, str(key)),
                    f"unknown key {key!r}{_did_you_mean(key, names)}; "
                    f"expected one of {', '.join(names)}",
                )
        out = {}
        for f in self.fields:
            if f.name in value and value[f.name] is None and f.optional:
                out[f.name] = None  # an optional key given as null: as if absent
            elif f.name in value:
                out[f.name] = f.node.check(value[f.name], (*path, f.name))
            elif f.required:
                raise fail((*path, f.name), f"missing required key {f.name!r}")
            else:
                out[f.name] = self.filled(f, path)
        for rule in self.rules:
            rule(out, path)
        if self.into is None:
            return out
        try:
            return self.into(**{attribute(k): v for k, v in out.items()})
        except ValueError as exc:
            raise fail(path, str(exc)) from None


@dataclass(frozen=True)
class OneOf:
    """A mapping with exactly one key out of several, ``{kind: body}``; gives (kind, body), or
    ``into(kind, body)`` when into is given (a ValueError it raises is an error at the kind)."""

    options: tuple[tuple[str, Any, str], ...]  # (key, node, doc)
    into: Any = field(default=None, compare=False)

    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _, _ in self.options)

    def expected(self) -> str:
        return "a mapping with exactly one of " + ", ".join(self.keys())

    def check(self, value, path: Path):
        if not isinstance(value, Mapping) or len(value) != 1:
            got = ", ".join(map(str, value)) if isinstance(value, Mapping) else show(value)
            raise fail(path, f"expected {self.expected()}, got {got or 'an empty mapping'}")
        ((kind, body),) = value.items()
        for key, node, _ in self.options:
            if key == kind:
                checked = node.check(body, (*path, kind))
                if self.into is None:
                    return kind, checked
                try:
                    return self.into(kind, checked)
                except ValueError as exc:
                    raise fail((*path, kind), str(exc)) from None
        raise fail(
            (*path, str(kind)),
            f"unknown key {kind!r}{_did_you_mean(kind, self.keys())}; "
            "expected one of " + ", ".join(self.keys()),
        )


@dataclass(frozen=True)
class Tagged:
    """A mapping whose variant is chosen by which tag key it contains; gives what the variant's
    node gives (a typed record: its class tells the variant).

    nested=True: the mapping is ``{tag: body}`` and body is checked; otherwise the whole mapping
    is checked by the variant's Record (which has the tag among its fields).
    """

    options: tuple[tuple[str, Any, bool, str], ...]  # (tag, node, nested, doc)

    def tags(self) -> tuple[str, ...]:
        return tuple(t for t, _, _, _ in self.options)

    def expected(self) -> str:
        return "a mapping with one of the keys " + ", ".join(self.tags())

    def check(self, value, path: Path):
        if not isinstance(value, Mapping):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        found = [t for t in self.tags() if t in value]
        if len(found) != 1:
            got = ", ".join(map(str, value)) or "an empty mapping"
            raise fail(path, f"expected {self.expected()} (exactly one), got {got}")
        tag = found[0]
        for t, node, nested, _ in self.options:
            if t != tag:
                continue
            if nested:
                if len(value) != 1:
                    extra = next(k for k in value if k != tag)
                    raise fail(
                        (*path, str(extra)),
                        f"unknown key {extra!r} beside {tag!r}; the part's keys go inside {tag}:",
                    )
                return node.check(value[tag], (*path, tag))
            return node.check(value, path)
        raise AssertionError("unreachable")


@dataclass(frozen=True)
class Either:
    """The first of several alternative nodes that accepts the value."""

    options: tuple[Any, ...]

    def expected(self) -> str:
        return " or ".join(o.expected() for o in self.options)

    def check(self, value, path: Path):
        errors = []
        for node in self.options:
            try:
                return node.check(value, path)
            except CaseError as exc:
                errors.append(exc)
        # An option that failed inside the value (fix[2], inertia[0][1]) matched its shape, so
        # its error says what is wrong; the one that got furthest wins, on a tie the later one.
        here = render(path)
        inner = [
            (_progress(e.key), i, e)
            for i, e in enumerate(errors)
            if e.key and e.key.startswith(here) and len(e.key) > len(here)
        ]
        if inner:
            raise max(inner, key=lambda x: x[:2])[2]
        raise fail(path, f"expected {self.expected()}, got {show(value)}")


def _progress(key: str) -> tuple:
    """How far into a value an error key points: depth, then list positions ('a[2].b' > 'a[1]')."""
    steps = re.findall(r"\[(\d+)\]|[^.\[\]]+", key)
    return len(steps), [int(s) if s else -1 for s in steps]


@dataclass(frozen=True)
class Constant:
    """Exactly one value (a schema version, a section type)."""

    value: Any
    label: str = ""  # what the value is, for the message: "schema version"

    def expected(self) -> str:
        shown = repr(self.value) if isinstance(self.value, str) else str(self.value)
        return f"{self.label} {shown}" if self.label else shown

    def check(self, value, path: Path):
        if value != self.value or isinstance(value, bool) != isinstance(self.value, bool):
            raise fail(path, f"expected {self.expected()}, got {show(value)}")
        return value
