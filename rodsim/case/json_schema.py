"""The case file as a JSON Schema (draft 2020-12), generated from the validator's schema
(rodsim.case.v1), for editors that complete and check YAML: ``rodsim schema``; the committed
copy is docs/case.schema.json (a test keeps it current). docs/units.md says how to use it.

Every number carries its physical dimension (``x-dimension``, rodsim.case.units) and, where
units may be written, also accepts a string such as ``210 GPa``; rodsim itself checks what a
JSON Schema cannot (the unit's dimension, cross-key rules, names of sections and sets).
"""

import dataclasses
import json

from rodsim.case import parts, sections, steps, units, v1
from rodsim.case import schema as s
from rodsim.case.fields import POINT

_UNIT_STRING = {"type": "string", "pattern": r"^\s*[-+0-9.eE]+\s*\S.*$"}


def _number(node: s.Number) -> dict:
    out: dict = {"type": "integer" if node.integer else "number"}
    if node.gt is not None:
        out["exclusiveMinimum"] = node.gt
    if node.ge is not None:
        out["minimum"] = node.ge
    if node.le is not None:
        out["maximum"] = node.le
    if not node.dim:
        return out
    out["x-dimension"] = node.dim
    if node.dim == "1" or node.integer:
        return out
    return {
        "anyOf": [out, {**_UNIT_STRING, "description": f"{units.describe(node.dim)} with a unit"}],
        "x-dimension": node.dim,
    }


def _vector(node: s.Vector) -> dict:
    items = [node_schema(n) for n in node.items()]
    if node.nullable:
        items = [{"anyOf": [i, {"type": "null"}]} for i in items]
    return {"type": "array", "prefixItems": items, "minItems": node.n, "maxItems": node.n}


def _record(node: s.Record) -> dict:
    props = {}
    for f in node.fields:
        entry = {**node_schema(f.node), "description": f.doc}
        if not f.required and f.default is not s.MISSING:
            entry["default"] = _plain(node.filled(f, ()))
        props[f.name] = entry
    out = {"type": "object", "properties": props, "additionalProperties": False}
    required = [f.name for f in node.fields if f.required]
    if required:
        out["required"] = required
    if node.doc:
        out["description"] = node.doc
    return out


def _single_key(key: str, body: dict, doc: str) -> dict:
    return {
        "type": "object",
        "properties": {key: body},
        "required": [key],
        "additionalProperties": False,
        "description": doc,
    }


def node_schema(node) -> dict:
    """The JSON Schema of one validator node."""
    if isinstance(node, s.Number):
        return _number(node)
    if isinstance(node, s.Boolean):
        return {"type": "boolean"}
    if isinstance(node, s.Text):
        return (
            {"type": "string", "enum": list(node.choices)} if node.choices else {"type": "string"}
        )
    if isinstance(node, s.Vector):
        return _vector(node)
    if isinstance(node, s.ListOf):
        out = {"type": "array", "items": node_schema(node.item)}
        return {**out, "minItems": node.min_items} if node.min_items else out
    if isinstance(node, s.MapOf):
        return {"type": ["object", "null"], "additionalProperties": node_schema(node.value)}
    if isinstance(node, s.Record):
        return _record(node)
    if isinstance(node, s.OneOf):
        return {"oneOf": [_single_key(k, node_schema(n), d) for k, n, d in node.options]}
    if isinstance(node, s.Tagged):
        return {
            "oneOf": [
                _single_key(t, node_schema(n), d)
                if nested
                else {
                    **node_schema(n),
                    "required": sorted({t, *node_schema(n).get("required", [])}),
                }
                for t, n, nested, d in node.options
            ]
        }
    if isinstance(node, s.Either):
        return {"anyOf": [node_schema(o) for o in node.options]}
    if isinstance(node, s.Constant):
        return {"const": node.value}
    if isinstance(node, v1.Compression):
        return {"type": "string", "pattern": "^(none|gzip|gzip:[1-9]|lzf)$"}
    if isinstance(node, v1.Units):
        base = {"type": "string"}
        custom = {
            "type": "object",
            "properties": {k: base for k in ("length", "mass", "time")},
            "required": ["length", "mass", "time"],
            "additionalProperties": False,
        }
        return {"anyOf": [{"enum": sorted(units.SYSTEMS)}, custom]}
    if isinstance(node, parts.Box):
        corner = node_schema(POINT)
        return {"type": "array", "prefixItems": [corner, corner], "minItems": 2, "maxItems": 2}
    if isinstance(node, sections.ByType):
        return {"oneOf": [node_schema(n) for _, n in node.options]}
    if isinstance(node, steps.Over):  # some of the record's keys: none required
        out = node_schema(node.record)
        out.pop("required", None)
        return out
    raise TypeError(f"no JSON Schema for {type(node).__name__}")


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {k: _plain(v) for k, v in s.keys_of(value).items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def case_schema() -> dict:
    """The JSON Schema of a case file."""
    return {
        **node_schema(v1.CASE),
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "rodsim case file (schema v1)",
        "description": "Generated by `rodsim schema` from rodsim's validator (docs/units.md). "
        "x-dimension: the physical dimension of a number (length, mass, time, force; 1: a pure "
        "number; angle: radians; degree: degrees).",
    }


def text() -> str:
    return json.dumps(case_schema(), indent=2) + "\n"


if __name__ == "__main__":
    print(text(), end="")
