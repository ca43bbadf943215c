"""The one integer check (fatnet.golden.checks): a bool is no integer, numpy integers
are taken unless refused, and the one-line error names the parameter and its range."""

from __future__ import annotations

import numpy as np
import pytest

from fatnet.golden.checks import check_int, is_integer
from fatnet.golden.errors import ParameterError


@pytest.mark.parametrize("value, numpy, want", [
    (3, True, True), (np.int64(3), True, True), (np.int64(3), False, False),
    (True, True, False), (np.bool_(True), True, False), (3.0, True, False),
    ("3", True, False), (None, True, False)])
def test_is_integer(value, numpy, want):
    assert is_integer(value, numpy) is want


def test_check_int_returns_a_python_int_in_range():
    got = check_int("steps", np.int32(4), 1, 8)
    assert got == 4 and type(got) is int


@pytest.mark.parametrize("value, high, what, message", [
    (0, None, None, "steps must be an integer >= 1, got 0"),
    (9, 8, None, "steps must be an integer in [1, 8], got 9"),
    (True, 8, None, "steps must be an integer in [1, 8], got True"),
    ("4", None, None, "steps must be an integer >= 1, got '4'"),
    (9, 8, "in [1, 8] (per cycle)", "steps must be in [1, 8] (per cycle), got 9"),
    (2.5, 8, "in [1, 8] (per cycle)", "steps must be an integer in [1, 8] (per cycle), got 2.5"),
])
def test_check_int_refuses_in_one_line(value, high, what, message):
    with pytest.raises(ParameterError) as e:
        check_int("steps", value, 1, high, what)
    assert str(e.value) == message


def test_check_int_can_refuse_numpy_integers():
    with pytest.raises(ParameterError) as e:
        check_int("steps", np.int64(4), 1, 8, numpy=False)
    assert str(e.value) == f"steps must be an integer in [1, 8], got {np.int64(4)!r}"
