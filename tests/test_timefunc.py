"""Time functions: values of each kind, the numba kernels (single and packed), kinks, errors."""

import math

import numpy as np
import pytest
from numba import njit

from rodsim.case.fields import TIME
from rodsim.errors import CaseError
from rodsim.model import timefunc as tfm
from rodsim.model.timefunc import (
    CONSTANT,
    RAMP,
    SINE,
    TABLE,
    TimeFunction,
    evaluate,
    evaluate_packed,
    kinks,
    no_window,
    pack,
    value,
)

TABLE_SPEC = {"table": [[0, 0], [2.5, 200], [5, 0]]}


def time_function_from_spec(spec):
    """The TimeFunction of a case file's `time:` value (None: no `time` key), validated."""
    return tfm.constant(1.0) if spec is None else TIME.check(spec, ())


def test_no_time_is_constant_one():
    f = time_function_from_spec(None)
    assert f.kind == CONSTANT
    assert [f(t) for t in (-1.0, 0.0, 3.7, 1e9)] == [1.0] * 4


def test_constant():
    f = time_function_from_spec({"constant": -2.5})
    assert value(f, 0.0) == -2.5
    assert value(f, 123.0) == -2.5
    assert kinks(f).shape == (0,)


def test_ramp():
    f = time_function_from_spec({"ramp": 2.0})
    assert f.kind == RAMP
    ts = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]
    assert [f(t) for t in ts] == [0.0, 0.0, 0.25, 0.5, 1.0, 1.0]
    np.testing.assert_array_equal(kinks(f), [0.0, 2.0])


def test_table_at_between_and_beyond_knots():
    f = time_function_from_spec(TABLE_SPEC)
    assert f.kind == TABLE
    assert [f(t) for t in (0.0, 2.5, 5.0)] == [0.0, 200.0, 0.0]  # at the knots
    assert f(1.0) == pytest.approx(80.0, rel=1e-15)
    assert f(3.75) == pytest.approx(100.0, rel=1e-15)
    assert f(-1.0) == 0.0
    assert f(5.0 + 1e-12) == 0.0
    assert f(100.0) == 0.0
    np.testing.assert_array_equal(kinks(f), [0.0, 2.5, 5.0])


def test_table_first_value_before_and_zero_after():
    f = time_function_from_spec({"table": [[1.0, 3.0], [2.0, 5.0], [4.0, 1.0], [5.0, 7.0]]})
    assert f(0.0) == 3.0
    assert f(1.0) == 3.0
    assert f(1.5) == pytest.approx(4.0)
    assert f(3.0) == pytest.approx(3.0)
    assert f(4.5) == pytest.approx(4.0)
    assert f(5.0) == 7.0
    assert f(5.0 + 1e-9) == 0.0  # the table ends with a jump to 0
    one = time_function_from_spec({"table": [[2.0, 4.0]]})
    assert (one(0.0), one(2.0), one(2.1)) == (4.0, 4.0, 0.0)


def test_table_many_points_matches_numpy_interp():
    t = np.sort(np.random.default_rng(0).uniform(0.0, 10.0, 40))
    v = np.random.default_rng(1).normal(size=40)
    f = tfm.table(np.column_stack([t, v]))
    ts = np.linspace(t[0], t[-1], 301)
    np.testing.assert_allclose([f(x) for x in ts], np.interp(ts, t, v), rtol=0, atol=1e-13)
    np.testing.assert_array_equal([f(x) for x in t], v)


def test_sine():
    f = time_function_from_spec({"sine": {"amplitude": 2.0, "frequency": 0.5, "phase": 0.25}})
    assert f.kind == SINE
    for t in (0.0, 0.3, 1.7):
        assert f(t) == pytest.approx(2.0 * math.sin(math.pi * t + 0.25), rel=1e-15)
    g = time_function_from_spec({"sine": {"amplitude": 1, "frequency": 1}})  # phase 0
    assert g(0.25) == pytest.approx(1.0)
    assert g(0.5) == pytest.approx(0.0, abs=1e-15)
    assert kinks(g).shape == (0,)


def test_packed_equals_unpacked():
    functions = [
        time_function_from_spec(None),
        time_function_from_spec(TABLE_SPEC),
        time_function_from_spec({"ramp": 0.5}),
        time_function_from_spec({"table": [[1, 2]]}),
        time_function_from_spec({"sine": {"amplitude": 3, "frequency": 2, "phase": 1}}),
        time_function_from_spec({"table": [[0, 1], [1, -1], [2, 1], [3, 0]]}),
    ]
    kinds, params, tables, offsets = pack(functions)
    assert kinds.dtype == np.int64
    assert kinds.shape == (6,)
    assert params.dtype == np.float64
    assert params.shape == (6, 3)
    assert tables.shape == (8, 2)
    assert offsets.tolist() == [0, 0, 3, 3, 4, 4, 8]
    for i, f in enumerate(functions):
        for t in np.linspace(-1.0, 6.0, 57):
            assert evaluate_packed(kinds, params, tables, offsets, i, t, no_window()) == value(f, t)


def test_pack_empty():
    kinds, params, tables, offsets = pack([])
    assert kinds.shape == (0,)
    assert params.shape == (0, 3)
    assert tables.shape == (0, 2)
    assert offsets.tolist() == [0]


@njit
def _sum_over_time(kind, params, table, ts):
    total = 0.0
    for t in ts:
        total += evaluate(kind, params, table, t)
    return total


@njit
def _sum_packed(kinds, params, tables, offsets, t, window):
    total = 0.0
    for i in range(kinds.shape[0]):
        total += evaluate_packed(kinds, params, tables, offsets, i, t, window)
    return total


def test_kernels_callable_from_njit():
    f = time_function_from_spec(TABLE_SPEC)
    ts = np.array([1.0, 2.5, 3.75, 6.0])
    assert _sum_over_time(f.kind, f.params, f.table, ts) == pytest.approx(80 + 200 + 100)
    packed = pack([f, time_function_from_spec({"ramp": 4.0})])
    assert _sum_packed(*packed, 1.0, no_window()) == pytest.approx(80.0 + 0.25)


def test_time_function_data_is_frozen_and_comparable():
    f = time_function_from_spec({"ramp": 2.0})
    assert f == tfm.ramp(2.0)
    assert hash(f) == hash(tfm.ramp(2.0))
    assert f != tfm.ramp(3.0)
    assert f != tfm.constant(2.0)
    assert f.params.flags.c_contiguous
    assert not f.params.flags.writeable
    assert f.table.shape == (0, 2)
    with pytest.raises(ValueError):
        f.params[0] = 5.0
    with pytest.raises(AttributeError):
        f.kind = CONSTANT
    with pytest.raises(ValueError):
        TimeFunction(7, np.zeros(3), np.zeros((0, 2)))


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"linear": 1.0}, "linear"),
        ({}, None),
        ({"ramp": 1.0, "constant": 2.0}, None),
        ([1.0], None),
        ({"constant": "1"}, "constant"),
        ({"constant": True}, "constant"),
        ({"constant": float("nan")}, "constant"),
        ({"ramp": 0.0}, "ramp"),
        ({"ramp": -1.0}, "ramp"),
        ({"ramp": float("inf")}, "ramp"),
        ({"ramp": [1.0]}, "ramp"),
        ({"table": 3.0}, "table"),
        ({"table": "0 1"}, "table"),
        ({"table": []}, "table"),
        ({"table": [[0, 0], [1, 1], [1, 2]]}, "table[2]"),
        ({"table": [[0, 0], [2, 1], [1, 2]]}, "table[2]"),
        ({"table": [[0, 0], [1]]}, "table[1]"),
        ({"table": [[0, 0], [1, 2, 3]]}, "table[1]"),
        ({"table": [[0, 0], 1.0]}, "table[1]"),
        ({"table": [[0, 0], [1, None]]}, "table[1][1]"),
        ({"table": [[0, 0], [1, float("nan")]]}, "table[1][1]"),
        ({"table": [[False, 0], [1, 1]]}, "table[0][0]"),
        ({"sine": 1.0}, "sine"),
        ({"sine": {"amplitude": 1.0}}, "sine.frequency"),
        ({"sine": {"frequency": 1.0}}, "sine.amplitude"),
        ({"sine": {"amplitude": 1.0, "frequency": 1.0, "period": 2.0}}, "sine.period"),
        ({"sine": {"amplitude": 1.0, "frequency": "1 Hz"}}, "sine.frequency"),
        ({"sine": {"amplitude": 1.0, "frequency": 1.0, "phase": math.inf}}, "sine.phase"),
    ],
)
def test_spec_errors_name_the_key(spec, key):
    with pytest.raises(CaseError) as info:
        time_function_from_spec(spec)
    assert info.value.key == key


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="ramp time"):
        tfm.ramp(0.0)
    with pytest.raises(ValueError, match="row 1: times must increase"):
        tfm.table([[0.0, 1.0], [0.0, 2.0]])
