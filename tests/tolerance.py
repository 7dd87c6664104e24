"""Compare browser outputs with float64 NumPy references, as tolerances.md prescribes.

* :func:`assert_ulp` -- ULP distance on bit patterns: the float64 reference is first
  rounded to the output type; float32 bits are read as int32 and float16 bits as
  uint16 and mapped onto one monotonic integer line, so +0 and -0 are the same
  point and neighbouring floats are 1 apart (also across zero and subnormals).
  NaN must meet NaN (any payload); an infinity must meet the same infinity exactly
  (never "1 ULP from the largest finite value").
* :func:`assert_abs` -- absolute difference (same NaN and infinity rules).
* :func:`assert_exact` -- identical values (integers), 0 ULP for floats.

Every assertion checks the dtype and the shape first (no broadcasting) and reports
how many elements failed, the worst one, and the first few by index.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

_FLOAT_BITS = {
    np.dtype(np.float32): (np.uint32, 0x7FFFFFFF, 31),
    np.dtype(np.float16): (np.uint16, 0x7FFF, 15),
}

_SHOWN = 8


def _check_dtype_shape(actual: np.ndarray, expected: np.ndarray, dtype: np.dtype) -> None:
    if actual.dtype != dtype:
        raise AssertionError(f"dtype mismatch: actual {actual.dtype}, expected {dtype}")
    if actual.shape != expected.shape:
        raise AssertionError(f"shape mismatch: actual {actual.shape}, expected {expected.shape}")


def round_to(expected: ArrayLike, dtype: DTypeLike) -> np.ndarray:
    """Round a float64 reference to ``dtype`` (overflow becomes +-Inf, silently)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(expected, dtype=np.float64).astype(dtype)


def ordered_bits(values: np.ndarray) -> np.ndarray:
    """Map float32/float16 values to int64 points on one monotonic line.

    Sign-magnitude bits become ``+magnitude`` / ``-magnitude``, so +0 and -0 both map
    to 0 and adjacent representable values differ by exactly 1.

    Raises:
        TypeError: ``values`` is neither float32 nor float16.
    """
    try:
        uint, magnitude_mask, sign_shift = _FLOAT_BITS[values.dtype]
    except KeyError:
        raise TypeError(f"ULP distance is defined here for float32 and float16, not {values.dtype}") from None
    bits = np.ascontiguousarray(values).view(uint).astype(np.int64)
    magnitude = bits & magnitude_mask
    return np.where((bits >> sign_shift) & 1 == 1, -magnitude, magnitude)


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Elementwise ULP distance between two arrays of the same float dtype (int64).

    NaN and infinity are not meaningful here; callers handle them separately.
    """
    return np.abs(ordered_bits(actual) - ordered_bits(expected))


def _special_mismatch(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Elements where NaN or infinity rules fail (True = mismatch)."""
    a_nan, e_nan = np.isnan(actual), np.isnan(expected)
    a_inf, e_inf = np.isinf(actual), np.isinf(expected)
    nan_bad = a_nan != e_nan
    inf_bad = (a_inf | e_inf) & ~(a_nan | e_nan) & (actual != expected)
    return nan_bad | inf_bad


def _report(kind: str, bound: str, bad: np.ndarray, actual: np.ndarray, expected: np.ndarray,
            measure: np.ndarray | None, worst: str) -> AssertionError:
    idx = np.argwhere(bad)
    lines = [f"{len(idx)} of {actual.size} elements exceed {kind} bound {bound} (worst {worst})"]
    for i in idx[:_SHOWN]:
        t = tuple(int(k) for k in i)
        extra = f", {kind} {measure[t]}" if measure is not None else ""
        lines.append(f"  at {t}: actual {actual[t]!r}, expected {expected[t]!r}{extra}")
    if len(idx) > _SHOWN:
        lines.append(f"  ... {len(idx) - _SHOWN} more")
    return AssertionError("\n".join(lines))


def assert_ulp(actual: np.ndarray, expected_f64: ArrayLike, ulp: int, dtype: DTypeLike) -> None:
    """Assert every element of ``actual`` is within ``ulp`` ULP of the reference.

    Args:
        actual: the computed output; must have dtype ``dtype``.
        expected_f64: the float64 reference (same shape); rounded to ``dtype`` first.
        ulp: the bound from tolerances.md (non-negative integer).
        dtype: np.float32 or np.float16.

    Raises:
        AssertionError: dtype/shape mismatch, a NaN/infinity mismatch, or an element
            more than ``ulp`` ULP away.
    """
    dtype = np.dtype(dtype)
    if ulp < 0:
        raise ValueError("ulp bound must be >= 0")
    actual = np.asarray(actual)
    expected = round_to(expected_f64, dtype)
    _check_dtype_shape(actual, expected, dtype)
    special = _special_mismatch(actual, expected)
    finite = np.isfinite(actual) & np.isfinite(expected)
    distance = np.where(finite, ulp_distance(actual, expected), 0)
    bad = special | (distance > ulp)
    if bad.any():
        worst = int(distance.max())
        measure = np.where(special, -1, distance)  # -1 marks a NaN/Inf mismatch
        raise _report("ULP", str(ulp), bad, actual, expected, measure,
                      f"{worst} ULP" + (", plus NaN/Inf mismatches (ULP -1)" if special.any() else ""))


def assert_abs(actual: np.ndarray, expected_f64: ArrayLike, atol: float, dtype: DTypeLike | None = None) -> None:
    """Assert ``|actual - expected| <= atol`` elementwise (NaN meets NaN, Inf exact).

    Args:
        actual: the computed output.
        expected_f64: the float64 reference, rounded to ``dtype`` (default: ``actual``'s).
        atol: absolute bound from tolerances.md (e.g. ``2**-10``).
        dtype: the required output dtype.

    Raises:
        AssertionError: dtype/shape mismatch, a NaN/Inf mismatch or an element too far.
    """
    actual = np.asarray(actual)
    dtype = np.dtype(dtype) if dtype is not None else actual.dtype
    expected = round_to(expected_f64, dtype)
    _check_dtype_shape(actual, expected, dtype)
    special = _special_mismatch(actual, expected)
    finite = np.isfinite(actual) & np.isfinite(expected)
    with np.errstate(invalid="ignore"):  # inf - inf in the non-finite lanes, masked out
        diff = np.where(finite, np.abs(actual.astype(np.float64) - expected.astype(np.float64)), 0.0)
    bad = special | (diff > atol)
    if bad.any():
        measure = np.where(special, np.nan, diff)  # nan marks a NaN/Inf mismatch
        raise _report("abs", repr(atol), bad, actual, expected, measure,
                      f"{float(diff.max())!r}" + (", plus NaN/Inf mismatches (abs nan)" if special.any() else ""))


def assert_exact(actual: np.ndarray, expected: ArrayLike, dtype: DTypeLike | None = None) -> None:
    """Assert ``actual`` equals ``expected`` exactly (0 ULP for floats, +0 == -0).

    Args:
        expected: exact values; for integer dtypes they must be representable in
            ``dtype`` (a value that does not survive the cast is a test bug).
        dtype: the required output dtype (default: ``actual``'s).

    Raises:
        AssertionError: dtype/shape mismatch or any differing element.
    """
    actual = np.asarray(actual)
    dtype = np.dtype(dtype) if dtype is not None else actual.dtype
    if dtype.kind == "f":
        assert_ulp(actual, expected, 0, dtype)
        return
    expected_raw = np.asarray(expected)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = expected_raw.astype(dtype)
        representable = np.array_equal(expected.astype(expected_raw.dtype), expected_raw)
    if not representable:
        raise ValueError(f"expected values are not exactly representable as {dtype}")
    _check_dtype_shape(actual, expected, dtype)
    bad = actual != expected
    if bad.any():
        raise _report("exact", "0", bad, actual, expected, None, "values differ")
