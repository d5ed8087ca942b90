"""Formulas that pass parse also evaluate: what the evaluator cannot do (recurse past Python's
limit, convert a huge integer to a float) is refused by parse with a ValueError."""

import numpy as np
import pytest

from rodsim.case import expression

S = np.linspace(0.0, 1.0, 5)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("-" * 1990 + "s", f"nests deeper than {expression.MAX_DEPTH}"),  # under MAX_LENGTH
        # 2 levels a call, with fewer parentheses than Python's parser allows (200)
        ("sin(-" * 101 + "s" + ")" * 101, f"nests deeper than {expression.MAX_DEPTH}"),
        ("+".join(["s"] * (expression.MAX_DEPTH + 2)), "nests deeper than"),
        ("1" * 310 + "*s", "too large for a float"),  # 1e309 > the largest float64, 1.8e308
        ("s + 1e999", "too large for a float"),  # Python reads it as inf
    ],
)
def test_a_formula_the_evaluator_cannot_take_is_refused_by_parse(text, words):
    assert len(text) <= expression.MAX_LENGTH  # the length check alone does not catch it
    with pytest.raises(ValueError, match=words):
        expression.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "-" * expression.MAX_DEPTH + "s",
        "sin(-" * (expression.MAX_DEPTH // 2) + "s" + ")" * (expression.MAX_DEPTH // 2),
        "+".join(["s"] * (expression.MAX_DEPTH + 1)),
        "1" * 300 + "*s",  # 1.1e299: a float
    ],
)
def test_a_formula_at_the_limits_evaluates(text):
    value = expression.evaluate(expression.parse(text), S, 1.0)
    assert value.shape == S.shape and np.isfinite(value).all()


def test_evaluate_turns_recursion_and_overflow_into_value_errors():
    """The last guard, for trees that did not come through parse's checks."""
    deep = expression.Expression("deep", expression.ast.parse("-" * 1990 + "s", mode="eval"))
    with pytest.raises(ValueError, match="nested too deeply"):
        expression.evaluate(deep, S, 1.0)
    huge = expression.Expression("huge", expression.ast.parse("1" * 310 + "*s", mode="eval"))
    with pytest.raises(ValueError, match="a number overflows"):
        expression.evaluate(huge, S, 1.0)
