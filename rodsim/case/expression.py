"""Formulas of the arc length in a case file (docs/cases.md, "Initial shapes"): `x(s)` as text,
parsed with Python's `ast` and evaluated with numpy over all nodes at once.

Only arithmetic is allowed: numbers, the names s (arc length), L (the part's length) and pi,
the operators + - * / ** and unary -, and the functions in FUNCTIONS. Nothing is looked up
in Python's namespace and no `eval` runs, so a case file cannot execute code through it.
"""

import ast
import math
from dataclasses import dataclass

import numpy as np

NAMES = ("s", "L", "pi")
FUNCTIONS = {
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "atan2": np.arctan2,
}
_TWO_ARGUMENTS = ("atan2",)
_OPERATORS = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.divide,
    ast.Pow: np.power,
}
MAX_LENGTH = 2000  # characters: a formula, not a program; also bounds the parser's recursion
# Operators and calls nested in one another (a sum of n terms is n - 1 deep): the evaluator
# recurses once per level (twice for a call), so this keeps it below Python's recursion limit
# (1000 frames, part of them taken by the caller) while no hand-written formula comes near it.
MAX_DEPTH = 200


@dataclass(frozen=True)
class Expression:
    """A checked formula: its text and parsed tree (evaluate with `evaluate`)."""

    text: str
    tree: ast.Expression


def allowed() -> str:
    """What a formula may contain, for messages and docs."""
    return (
        "numbers, s, L, pi, + - * / ** and the functions " + ", ".join(FUNCTIONS) + " (atan2 "
        "takes two arguments)"
    )


def parse(text) -> Expression:
    """The Expression of a formula; ValueError naming what is not allowed."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        text = repr(float(text))
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"expected a formula of s (a string), got {text!r}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expected a formula of at most {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        where = f" at column {exc.offset}" if getattr(exc, "offset", None) else ""
        raise ValueError(f"cannot parse formula {text!r}{where}: not a formula") from None
    depth = _depth(tree.body)
    if depth > MAX_DEPTH:
        raise ValueError(
            f"formula {_short(text)!r} nests deeper than {MAX_DEPTH} (operators and functions "
            f"within one another: {depth} levels)"
        )
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if id(node) not in calls:  # a function's name is checked with its call
            _check(node, text)
    return Expression(text, tree)


def _depth(root) -> int:
    """How many operators and calls lie within one another at most under root ("-s": 1,
    "sin(s*2)": 2), counted without recursion: the tree may be deeper than Python's recursion
    limit allows a recursive walk."""
    deepest, todo = 0, [(root, 0)]
    while todo:
        node, level = todo.pop()
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call)):
            level += 1
            deepest = max(deepest, level)
            todo.extend((child, level) for child in ast.iter_child_nodes(node))
    return deepest


def _short(text: str) -> str:
    """text for a message, its middle left out when it is long."""
    return text if len(text) <= 80 else f"{text[:40]}...{text[-20:]}"


def _check(node, text: str) -> None:
    if isinstance(node, (ast.Expression, ast.Load, *_OPERATORS, ast.USub, ast.UAdd)):
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _OPERATORS:
            raise ValueError(f"formula {text!r}: operator {_source(node, text)!r} is not allowed")
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ValueError(f"formula {text!r}: {_source(node, text)!r} is not allowed")
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ValueError(f"formula {text!r}: {node.value!r} is not a number")
        if not _finite(node.value):  # evaluated as float64: beyond 1.8e308 it is not a number
            raise ValueError(
                f"formula {_short(text)!r}: the constant {_short(_source(node, text))} is too "
                "large for a float (at most about 1.8e308)"
            )
        return
    if isinstance(node, ast.Name):
        if node.id not in NAMES:
            raise ValueError(f"formula {text!r}: unknown name {node.id!r}; expected {allowed()}")
        return
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name is not None and name not in FUNCTIONS:
            raise ValueError(f"formula {text!r}: unknown function {name!r}; expected {allowed()}")
        if name is None or node.keywords:
            raise ValueError(
                f"formula {text!r}: {_source(node, text)!r} is not a call of a function; "
                f"expected {allowed()}"
            )
        want = 2 if name in _TWO_ARGUMENTS else 1
        if len(node.args) != want or any(isinstance(a, ast.Starred) for a in node.args):
            raise ValueError(f"formula {text!r}: {name} takes {want} argument(s)")
        return
    raise ValueError(
        f"formula {text!r}: {_source(node, text)!r} is not allowed; expected {allowed()}"
    )


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer literal of more than 309 digits
        return False


def _source(node, text: str) -> str:
    return ast.get_source_segment(text.strip(), node) or type(node).__name__


def evaluate(expr: Expression, s: np.ndarray, length: float) -> np.ndarray:
    """The formula at every s (an array), with L = length; ValueError where it is not a
    finite number."""
    s = np.asarray(s, dtype=float)
    try:
        with np.errstate(all="ignore"):
            value = np.broadcast_to(_value(expr.tree.body, s, float(length)), s.shape)
    except (RecursionError, OverflowError) as exc:  # a last guard: parse refuses both causes
        raise ValueError(
            f"formula {_short(expr.text)!r} cannot be evaluated: "
            f"{'nested too deeply' if isinstance(exc, RecursionError) else 'a number overflows'}"
        ) from None
    bad = ~np.isfinite(value)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"formula {expr.text!r} is not a finite number at s = {s[k]:g}")
    return np.array(value, dtype=float)


def _value(node, s, length):
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id == "s":
            return s
        return length if node.id == "L" else math.pi
    if isinstance(node, ast.UnaryOp):
        v = _value(node.operand, s, length)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _value(node.left, s, length), _value(node.right, s, length)
        return _OPERATORS[type(node.op)](np.asarray(a, dtype=float), b)
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*(_value(a, s, length) for a in node.args))
    raise AssertionError(f"unchecked node {node!r}")  # parse refuses everything else
