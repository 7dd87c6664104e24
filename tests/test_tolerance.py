"""Unit tests of tests/tolerance.py (pure Python, no browser).

Each bound is shown to both pass at the edge and fail just past it: a comparison
that cannot fail would make every op test meaningless.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.tolerance import assert_abs, assert_exact, assert_ulp, ulp_distance


def steps(x: float, n: int, dtype) -> np.ndarray:
    """``x`` moved ``n`` representable values up (down for negative n) in ``dtype``."""
    v = np.asarray(x, dtype=dtype)
    toward = np.asarray(np.inf if n > 0 else -np.inf, dtype=dtype)
    with np.errstate(over="ignore"):
        for _ in range(abs(n)):
            v = np.nextafter(v, toward)
    return v


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("x", [1.0, -3.5, 1e-3, 100.0])
def test_one_ulp_passes_and_two_ulp_fail_a_bound_of_one(dtype, x):
    expected = np.array([x], dtype=np.float64)
    one_off = np.array([steps(x, 1, dtype)], dtype=dtype)
    two_off = np.array([steps(x, -2, dtype)], dtype=dtype)
    assert_ulp(one_off, expected, 1, dtype)
    with pytest.raises(AssertionError, match=r"1 of 1 elements exceed ULP bound 1 \(worst 2 ULP"):
        assert_ulp(two_off, expected, 1, dtype)
    assert_ulp(two_off, expected, 2, dtype)


def test_exact_match_passes_zero_bound_and_one_ulp_fails_it():
    x = np.linspace(-2, 2, 7)
    assert_ulp(x.astype(np.float32), x, 0, np.float32)
    moved = x.astype(np.float32)
    moved[3] = steps(moved[3], 1, np.float32)
    with pytest.raises(AssertionError, match=r"at \(3,\)"):
        assert_ulp(moved, x, 0, np.float32)


def test_expected_is_rounded_to_the_output_type_first():
    # 1 + 2**-24 is exactly between two float32 values; the reference rounds to 1.0,
    # so an output of exactly 1.0 is 0 ULP away even though it differs in float64.
    assert_ulp(np.array([1.0], np.float32), np.array([1.0 + 2.0**-24]), 0, np.float32)
    # float16: 1 + 2**-11 rounds to 1.0 (ties to even)
    assert_ulp(np.array([1.0], np.float16), np.array([1.0 + 2.0**-11]), 0, np.float16)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_signed_zeros_are_equal(dtype):
    assert_ulp(np.array([-0.0, 0.0], dtype), np.array([0.0, -0.0]), 0, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_distance_across_zero_counts_both_sides(dtype):
    tiny = steps(0.0, 1, dtype)  # smallest positive subnormal
    assert ulp_distance(np.array([tiny]), np.array([-tiny])).item() == 2
    assert_ulp(np.array([-tiny], dtype), np.array([float(tiny)]), 2, dtype)
    with pytest.raises(AssertionError):
        assert_ulp(np.array([-tiny], dtype), np.array([float(tiny)]), 1, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_nan_must_meet_nan(dtype):
    assert_ulp(np.array([np.nan, 1.0], dtype), np.array([np.nan, 1.0]), 0, dtype)
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_ulp(np.array([1.0], dtype), np.array([np.nan]), 10**6, dtype)
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_ulp(np.array([np.nan], dtype), np.array([1.0]), 10**6, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_infinities_match_exactly(dtype):
    big = np.finfo(dtype).max
    assert_ulp(np.array([np.inf, -np.inf], dtype), np.array([np.inf, -np.inf]), 0, dtype)
    with pytest.raises(AssertionError):  # largest finite is "1 ULP" from inf on the bit line
        assert_ulp(np.array([big], dtype), np.array([np.inf]), 10**6, dtype)
    with pytest.raises(AssertionError):
        assert_ulp(np.array([np.inf], dtype), np.array([float(big)]), 10**6, dtype)
    with pytest.raises(AssertionError):
        assert_ulp(np.array([-np.inf], dtype), np.array([np.inf]), 10**6, dtype)


def test_reference_overflowing_the_output_type_becomes_infinity():
    assert_ulp(np.array([np.inf], np.float16), np.array([70000.0]), 0, np.float16)


def test_dtype_and_shape_are_checked():
    with pytest.raises(AssertionError, match="dtype mismatch"):
        assert_ulp(np.array([1.0], np.float64), np.array([1.0]), 0, np.float32)
    with pytest.raises(AssertionError, match="dtype mismatch"):
        assert_ulp(np.array([1.0], np.float16), np.array([1.0]), 0, np.float32)
    with pytest.raises(AssertionError, match="shape mismatch"):
        assert_ulp(np.ones((2, 1), np.float32), np.ones((1, 2)), 0, np.float32)
    with pytest.raises(AssertionError, match="shape mismatch"):  # no broadcasting
        assert_ulp(np.ones((2, 2), np.float32), np.ones(2), 0, np.float32)


def test_report_names_the_count_and_first_indices():
    actual = np.zeros((3, 4), np.float32)
    expected = np.zeros((3, 4))
    expected[1, 2] = 1.0
    expected[2, 3] = -1.0
    with pytest.raises(AssertionError) as info:
        assert_ulp(actual, expected, 5, np.float32)
    text = str(info.value)
    assert "2 of 12 elements" in text and "(1, 2)" in text and "(2, 3)" in text


@given(st.floats(width=32, allow_nan=False, allow_infinity=False), st.integers(0, 40))
def test_ulp_distance_counts_representable_steps_float32(x, n):
    moved = steps(x, n, np.float32)
    if not np.isfinite(moved):
        return
    d = ulp_distance(np.array([moved], np.float32), np.array([x], np.float32)).item()
    assert d == n
    assert_ulp(np.array([moved], np.float32), np.array([x]), n, np.float32)
    if n > 0:
        with pytest.raises(AssertionError):
            assert_ulp(np.array([moved], np.float32), np.array([x]), n - 1, np.float32)


@given(st.floats(width=16, allow_nan=False, allow_infinity=False), st.integers(0, 20))
def test_ulp_distance_counts_representable_steps_float16(x, n):
    moved = steps(x, -n, np.float16)
    if not np.isfinite(moved):
        return
    assert ulp_distance(np.array([moved], np.float16), np.array([x], np.float16)).item() == n


def test_assert_abs_bound_is_inclusive_and_tight():
    expected = np.array([0.5, -0.25])
    atol = 2.0**-10
    assert_abs((expected + atol).astype(np.float32), expected, atol)
    with pytest.raises(AssertionError, match="abs bound"):
        assert_abs((expected + 2 * atol).astype(np.float32), expected, atol)
    with pytest.raises(AssertionError, match="NaN/Inf"):
        assert_abs(np.array([np.nan], np.float32), np.array([0.0]), 1.0)
    assert_abs(np.array([np.nan, np.inf], np.float32), np.array([np.nan, np.inf]), 0.0)
    with pytest.raises(AssertionError, match="dtype mismatch"):
        assert_abs(np.array([0.0], np.float32), np.array([0.0]), 1.0, np.float16)


def test_assert_exact_on_integers_and_floats():
    assert_exact(np.array([1, -2, 3], np.int64), [1, -2, 3])
    assert_exact(np.array([2**40], np.int64), np.array([2**40]))
    with pytest.raises(AssertionError, match="1 of 3 elements"):
        assert_exact(np.array([1, -2, 4], np.int32), [1, -2, 3])
    with pytest.raises(AssertionError, match="dtype mismatch"):
        assert_exact(np.array([1], np.int32), [1], np.int64)
    with pytest.raises(ValueError, match="not exactly representable"):
        assert_exact(np.array([1], np.int32), [1.5])
    assert_exact(np.array([-0.0], np.float32), [0.0])
    with pytest.raises(AssertionError):
        assert_exact(np.array([steps(1.0, 1, np.float32)], np.float32), [1.0])
