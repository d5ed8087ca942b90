"""Many runs' cases from one base case, in time linear in the runs and cheap per run
(docs/sweeps.md, "Limits"): the case text is parsed once (and the sweep's `set` applied
once), each run's parameter values are put into a copy of that data, and each top-level
section of the case a parameter touches is validated once per distinct value of it; the
sections no parameter touches keep the base case's validated value. The result is the Case
that case_from_text would give for the same text and overrides (the same settings, the same
errors: a run whose data fails is validated again the ordinary way, for its message).

A section's check depends only on its value and the case's unit system (the Record of
rodsim.case.v1.CASE checks its fields one by one, then builds CaseSettings, which checks
across them, for every run). A parameter under `units` or `steps`, or a case with `steps`,
makes every run validated whole (case_from_text)."""

import json
import math
from pathlib import Path

from rodsim.case import load, steps, units, v1
from rodsim.case.load import Case, apply_override, case_from_text, parse_yaml, split_key
from rodsim.case.schema import attribute
from rodsim.errors import CaseError


def _exact(value) -> bool:
    """A value that YAML reads back as itself from its JSON (so it needs no parsing): a finite
    float (its repr), an int, a bool, null. (Strings, lists and mappings are parsed.)"""
    if value is None or isinstance(value, bool | int):
        return True
    return isinstance(value, float) and math.isfinite(value)


class Builder:
    """Case(overrides) of one base case: build(values) for a run's {key path: value}."""

    def __init__(self, text: str, path: Path, base: tuple, keys: tuple):
        self.text, self.path, self.base, self.keys = text, Path(path), tuple(base), tuple(keys)
        self.name, self.where = str(path), Path(path).resolve()
        try:  # what is wrong here, case_from_text says for each run, as it always did
            data = load._unshared(parse_yaml(text, file=self.name))
            for assignment in base:
                apply_override(data, assignment)
            self.paths = {k: split_key(k) for k in keys}
        except (CaseError, ValueError, TypeError, AttributeError):
            data, self.paths = None, {}
        data = data if isinstance(data, dict) else None
        self.data = data
        touched = {p[0] for p in self.paths.values()}
        self.whole = data is None or (
            "units" in touched or steps.KEY in touched or data.get(steps.KEY) is not None
        )  # fmt: skip
        self.touched = tuple(f for f in v1.CASE.fields if f.name in touched)
        self.parsed: dict[str, object] = {}  # a parameter value's JSON -> the YAML it reads as
        self.checked: dict[tuple, object] = {}  # (section, its JSON) -> its validated value
        self.fixed = None  # the untouched sections' validated values, from the first valid run
        self.system = None  # the case's unit system (`units` is no parameter: one for all)

    def _value(self, value):
        if _exact(value):
            return value
        text = json.dumps(value)
        if text not in self.parsed:
            self.parsed[text] = parse_yaml(text)
        return load._unshared(self.parsed[text])

    def data_of(self, values: dict) -> dict:
        """The run's resolved data (Case.to_dict): the base's with the values put in."""
        data = load._unshared(self.data)
        for key, value in values.items():
            if not _put(data, self.paths[key], self._value(value)):
                apply_override(data, assignment(key, value))  # its own error, or its way
        return data

    def build(self, values: dict, overrides: tuple) -> tuple[Case, dict]:
        """(the run's Case, its resolved data); CaseError as case_from_text gives it."""
        if not self.whole:
            try:
                data = self.data_of(values)
                if self.fixed is not None:
                    settings = self._settings(data)
                    return Case(self.where, self.text, settings, overrides, self.name), data
            except (CaseError, ValueError, TypeError):
                pass  # the ordinary way: its own message, or a case after all
        case = case_from_text(self.text, self.path, overrides, name=self.name)
        data = case.to_dict()
        if self.fixed is None and not self.whole:  # its untouched sections serve every run
            self.system = v1.declared_units(data)
            self.fixed = {f.name: getattr(case.settings, attribute(f.name)) for f in v1.CASE.fields}
        return case, data

    def _settings(self, data: dict):
        if set(data) != set(self.data) or not isinstance(data, dict):
            raise ValueError("keys changed")  # a parameter added a top-level key: whole
        out = dict(self.fixed)
        for f in self.touched:
            if f.name not in data:
                raise ValueError("missing")
            value = data[f.name]
            key = (f.name, json.dumps(value))
            if key not in self.checked:
                with units.declared(self.system):
                    if value is None and f.optional:
                        self.checked[key] = None
                    else:
                        self.checked[key] = f.node.check(value, (f.name,))
            out[f.name] = self.checked[key]
        for rule in v1.CASE.rules:
            rule(out, ())
        return v1.CASE.into(**{attribute(k): v for k, v in out.items()})


def assignment(key: str, value) -> str:
    """The --set assignment of a parameter value: JSON is YAML, and floats keep every digit."""
    return f"{key}={json.dumps(value)}"


def _put(data, path: list, value) -> bool:
    """Set data at a key path as apply_override does where every step of it is there; False
    where it is not (apply_override then creates it or says what is wrong)."""
    node = data
    for part in path[:-1]:
        if isinstance(part, str) and isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(part, int) and isinstance(node, list) and part < len(node):
            node = node[part]
        else:
            return False
    last = path[-1]
    if isinstance(last, str) and isinstance(node, dict):
        node[last] = value
        if path[:-1] == ["output"] and last in steps.EXCLUSIVE:
            node.pop(steps.EXCLUSIVE[last], None)
        return True
    if isinstance(last, int) and isinstance(node, list) and last < len(node):
        node[last] = value
        return True
    return False
