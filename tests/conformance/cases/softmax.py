"""Conformance cases for softmax(input, axis) (spec §softmax).

Accuracy bound (tolerances.md): 3N + 3 ULP, N the length of the softmax axis. Cases cover every
axis of ranks 1 to 5, rows short (one invocation per row) and long (one workgroup per row, longer
than the workgroup), inputs far from zero (the max subtraction keeps exp finite), -Inf entries,
rows of only -Inf, NaN and +Inf.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.graph_runner import data_type_of
from tests.reference.ops import softmax

SEED = 1130


def case(name, x, axis, const=False):
    """One softmax case over input x (float32) along axis."""
    arrays = {"x": x}
    dt = data_type_of(x)
    with np.errstate(invalid="ignore"):
        expected = softmax(x, axis)
    return op_case(
        f"softmax/{dt}/{name}", "softmax", dt, [operand("x"), axis], None,
        inputs={} if const else arrays, constants=arrays if const else {},
        expected={"y": (expected, dt)}, metric="ULP", value=3 * x.shape[axis] + 3)


def graph_cases() -> list[dict]:
    """softmax graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    rand = lambda *shape, scale=4.0: rng.uniform(-scale, scale, shape).astype(np.float32)  # noqa: E731
    cases = [case("rank1-7", rand(7), 0), case("rank1-1", rand(1), 0), case("rank1-300", rand(300), 0)]
    for shape in [(3, 5), (2, 3, 4, 5), (2, 1, 3, 2, 3), (4, 33), (5, 1)]:
        for axis in range(len(shape)):
            tag = "x".join(map(str, shape))
            cases.append(case(f"{tag}-axis{axis}", rand(*shape), axis))
    # long rows: longer than the workgroup, and along a strided axis
    cases.append(case("2x1000-axis1", rand(2, 1000), 1))
    cases.append(case("2x3000-axis1", rand(2, 3000), 1))
    cases.append(case("700x3-axis0", rand(700, 3), 0))
    cases.append(case("3x257x2-axis1", rand(3, 257, 2), 1))
    cases.append(case("1x1000-classifier", rand(1, 1000, scale=20.0), 1))
    cases.append(case("constant-input", rand(3, 40), 1, const=True))
    # far from zero: exp(x) would overflow without the max subtraction. Outputs stay normal
    # floats or underflow to exactly 0 (WGSL may flush subnormals): values lie within 20 of the
    # row max or more than 120 below it.
    def far(*shape):
        x = rng.uniform(-20, 0, shape) + rng.choice([300.0, 150.0, -300.0], size=shape[:-1] + (1,))
        x[rng.random(shape) < 0.3] -= 140.0
        return x.astype(np.float32)
    cases.append(case("large-values", far(4, 50), 1))
    cases.append(case("large-values-short", far(6, 9), 1))
    cases.append(case("equal-values", np.full((3, 64), 7.5, np.float32), 1))
    # special values, for both the short-row and the workgroup kernels
    for n in (8, 100):
        x = rand(5, n)
        x[0, 1] = -np.inf            # one -Inf among finite values -> 0 there
        x[1, :] = -np.inf            # a row of -Inf -> NaN (x - max = -Inf - -Inf)
        x[2, 3] = np.nan             # NaN -> the row is NaN
        x[3, 0] = np.inf             # +Inf -> NaN (Inf - Inf)
        cases.append(case(f"special-values-n{n}", x, 1))
    x = rand(4, 6, 10)
    x[:, 2, :] = -np.inf
    x[1, 2, 0] = 3.0
    cases.append(case("neg-inf-strided-axis", x, 1))
    # float16 (computed in f32, rounded once)
    cases.append(case("3x5-axis1", rand(3, 5).astype(np.float16), 1))
    cases.append(case("2x3x4x5-axis2", rand(2, 3, 4, 5).astype(np.float16), 2))
    cases.append(case("2x1000-axis1", rand(2, 1000).astype(np.float16), 1, const=True))
    x = rand(4, 40).astype(np.float16)
    x[0, 1], x[1, :], x[2, 3] = -np.inf, -np.inf, np.nan
    cases.append(case("special-values", x, 1))
    return cases


def _js(shape, axis, data_type="float32"):
    return (f"(builder) => builder.softmax(builder.input('x', {{dataType: '{data_type}', shape: {list(shape)}}}), "
            f"{axis}, {{label: 'L'}})")


def validation_cases() -> list[dict]:
    """softmax inputs the spec refuses: a TypeError naming the label."""
    bad = {
        "axis-equals-rank": _js([2, 3], 2),
        "axis-too-large": _js([2, 3, 4], 7),
        "rank-0": _js([], 0),
        "axis-negative": _js([2, 3], -1),
        "axis-nan": _js([2, 3], "NaN"),
        "axis-too-large-truncated": _js([2, 3], 2.5),
        "int32": _js([2, 3], 1, "int32"),
        "uint32": _js([2, 3], 1, "uint32"),
        "not-operand": "(builder) => builder.softmax([1, 2, 3], 0, {label: 'L'})",
    }
    return [validation_case(f"softmax/validation/{n}", "softmax", js, "TypeError", "L") for n, js in bad.items()]
