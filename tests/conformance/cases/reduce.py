"""Conformance cases for the reductions, argMin/argMax and cumulativeSum.

Bounds (tolerances.md, N = elements reduced into one output): reduceSum, reduceL1,
reduceProduct N ULP; reduceMean N + 2; reduceL2 2N + 2; reduceSumSquare 2N; reduceLogSum N + 18;
reduceLogSumExp 2N + 18; reduceMax, reduceMin, argMin, argMax exact. cumulativeSum is not in
the table: it is a chain of additions, so its bound is that of reduceSum over the axis, N ULP.
Integer types are exact. Float data avoids cancellation where a ULP bound relative to the
result is meant (positive values for sums, values near 1 for products).
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.reference.reduce import argMax, argMin, cumulativeSum, reduce

SEED = 424242
DTYPE_NAMES = {np.float32: "float32", np.float16: "float16", np.int32: "int32", np.uint32: "uint32",
               np.int64: "int64", np.uint64: "uint64", np.int8: "int8", np.uint8: "uint8"}

BOUNDS = {
    "reduceL1": lambda n: n, "reduceL2": lambda n: 2 * n + 2, "reduceLogSum": lambda n: n + 18,
    "reduceLogSumExp": lambda n: 2 * n + 18, "reduceMax": lambda n: 0, "reduceMean": lambda n: n + 2,
    "reduceMin": lambda n: 0, "reduceProduct": lambda n: n, "reduceSum": lambda n: n,
    "reduceSumSquare": lambda n: 2 * n,
}

#: (shape, options) configurations every reduction runs
CONFIGS = [
    ((3, 4, 5), {}),
    ((3, 4, 5), {"axes": [1]}),
    ((3, 4, 5), {"axes": [0, 2], "keepDimensions": True}),
    ((2, 3, 4, 5), {"axes": [3, 1]}),
    ((2, 3, 4, 5), {"axes": [1, 2], "keepDimensions": True}),
    ((7,), {"axes": [0]}),
    ((), {}),
    ((3, 4), {"axes": []}),
    ((2, 300), {"axes": [1]}),
    ((300, 3), {"axes": [0], "keepDimensions": True}),
    ((2, 1, 3, 1, 2), {"axes": [0, 1, 3]}),
]


def _data(rng, op, shape):
    """float32 data suited to the op's bound."""
    if op == "reduceProduct":
        return rng.uniform(0.99, 1.01, shape).astype(np.float32) * np.where(rng.random(shape) < 0.2, -1, 1).astype(np.float32)
    if op in ("reduceSum", "reduceMean", "reduceLogSum"):
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)
    if op == "reduceLogSumExp":
        return rng.uniform(-10.0, 10.0, shape).astype(np.float32)
    return rng.uniform(-3.0, 3.0, shape).astype(np.float32)


def _count(shape, options):
    axes = options.get("axes")
    axes = range(len(shape)) if axes is None else axes
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def reduce_case(name, op, x, options, data_type=None):
    """A reduction case; integer inputs compare exactly."""
    data_type = data_type or DTYPE_NAMES[x.dtype.type]
    n = _count(x.shape, options)
    exact = data_type not in ("float32", "float16")
    return op_case(
        f"{op}/{data_type}/{name}", op, data_type, [operand("x")], options or None, inputs={"x": x},
        expected={"y": (reduce(op, x, options), data_type)},
        metric="exact" if exact else "ULP", value=0 if exact else BOUNDS[op](n))


def _reduce_cases(rng):
    cases = []
    for op in BOUNDS:
        for shape, options in CONFIGS:
            tag = ("x".join(map(str, shape)) or "scalar") + "".join(
                f"-{k}{''.join(map(str, v)) if isinstance(v, list) else int(v)}" for k, v in options.items())
            cases.append(reduce_case(tag, op, _data(rng, op, shape), options))
    # far from zero: exp would overflow without subtracting the max
    x = rng.uniform(80.0, 100.0, (3, 40)).astype(np.float32)
    cases.append(reduce_case("large-values", "reduceLogSumExp", x, {"axes": [1]}))
    x = rng.uniform(80.0, 100.0, (3, 400)).astype(np.float32)
    cases.append(reduce_case("large-values-long", "reduceLogSumExp", x, {"axes": [1]}))
    # sums with any signs on dyadic values (exact in float32)
    x = (rng.integers(-64, 65, (4, 300)) / 16).astype(np.float32)
    for op in ("reduceSum", "reduceL1", "reduceSumSquare"):
        cases.append(reduce_case("dyadic-signed", op, x, {"axes": [1]}))
    # special values: NaN propagates, infinities, log of 0 and of negatives
    for n in (6, 300):
        x = rng.uniform(0.5, 2.0, (5, n)).astype(np.float32)
        x[0, 1] = np.nan
        x[1, 2] = np.inf
        x[2, 0] = -np.inf
        x[3, 3], x[3, 4] = np.inf, -np.inf
        for op in ("reduceSum", "reduceMax", "reduceMin", "reduceMean", "reduceProduct", "reduceL1", "reduceL2", "reduceLogSumExp"):
            cases.append(reduce_case(f"special-values-n{n}", op, x, {"axes": [1]}))
    x = rng.uniform(-3.0, 3.0, (4, 5)).astype(np.float32)
    x[0, :] = -np.inf
    x[1, :] = 0.0
    cases.append(reduce_case("all-neg-inf-and-zero-rows", "reduceLogSumExp", x, {"axes": [1]}))
    cases.append(reduce_case("zero-row", "reduceL2", x[1:], {"axes": [1]}))
    y = np.abs(x[1:]).astype(np.float32)
    y[1] = -y[1]
    cases.append(reduce_case("zero-and-negative-sums", "reduceLogSum", y, {"axes": [1]}))
    # integers: exact, wrapping not exercised
    for dt, lo, hi in (("int32", -50, 50), ("uint32", 0, 100)):
        x = rng.integers(lo, hi, (3, 4, 50)).astype(dt)
        for op in ("reduceSum", "reduceMax", "reduceMin", "reduceL1", "reduceSumSquare"):
            for options in ({"axes": [2]}, {"axes": [0, 1], "keepDimensions": True}, {}):
                cases.append(reduce_case("3x4x50" + "".join(f"-{k}" for k in options), op, x, options, dt))
        small = rng.integers(1 if dt == "uint32" else -3, 4, (4, 9)).astype(dt)
        cases.append(reduce_case("4x9", "reduceProduct", small, {"axes": [1]}, dt))
    # 64-bit integers: exact beyond 2^53 (sums of values near 2^40, extremes near 2^62, uint64 above 2^63)
    big = rng.integers(-2**40, 2**40, (3, 40)).astype(np.int64)
    for op in ("reduceSum", "reduceL1", "reduceMax", "reduceMin"):
        cases.append(reduce_case("3x40-large", op, big, {"axes": [1]}))
        cases.append(reduce_case("3x40-large-all", op, big, {}))
    ext = rng.integers(-2**62, 2**62, (4, 5)).astype(np.int64)
    ext[0, 0], ext[1, 1] = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    cases += [reduce_case("extremes", op, ext, {"axes": [1]}) for op in ("reduceMax", "reduceMin")]
    ub = rng.integers(0, 2**64 - 1, (4, 5), dtype=np.uint64)
    cases += [reduce_case("above-2^63", op, ub, {"axes": [1]}) for op in ("reduceMax", "reduceMin")]
    cases.append(reduce_case("3x40", "reduceSum", rng.integers(0, 2**50, (3, 40), dtype=np.uint64), {"axes": [1]}))
    small = rng.integers(-5, 6, (3, 11)).astype(np.int64)
    cases += [reduce_case("3x11", op, small, {"axes": [1]}) for op in ("reduceProduct", "reduceSumSquare")]
    cases.append(reduce_case("wrapping", "reduceProduct", np.full((2, 3), 2**31 + 7, np.int64), {"axes": [1]}))
    cases.append(reduce_case("3x11", "reduceProduct", rng.integers(1, 9, (3, 11), dtype=np.uint64), {"axes": [1]}))
    # 8-bit integers (max and min only)
    for dt, lo, hi in (("int8", -128, 128), ("uint8", 0, 256)):
        x = rng.integers(lo, hi, (5, 7)).astype(dt)
        cases += [reduce_case("5x7", op, x, {"axes": [1]}) for op in ("reduceMax", "reduceMin")]
    # float16: the same bounds in float16 ULP
    for op in BOUNDS:
        x16 = _data(rng, op, (3, 4, 5)).astype(np.float16)
        cases.append(reduce_case("3x4x5-axes-1-2", op, x16, {"axes": [1, 2]}))
        cases.append(reduce_case("2x300", op, _data(rng, op, (2, 300)).astype(np.float16), {"axes": [1]}))
    return cases


def arg_case(name, op, x, axis, options=None):
    ref = (argMax if op == "argMax" else argMin)(x, axis, options)
    out_type = (options or {}).get("outputDataType", "int32")
    dt = DTYPE_NAMES[x.dtype.type]
    return op_case(f"{op}/{dt}/{name}", op, dt, [operand("x"), axis], options, inputs={"x": x},
                   expected={"y": (ref, out_type)}, metric="exact", value=0)


def _arg_cases(rng):
    cases = []
    for op in ("argMax", "argMin"):
        for shape in [(7,), (3, 4, 5), (2, 3, 1, 4)]:
            for axis in range(len(shape)):
                x = rng.uniform(-5, 5, shape).astype(np.float32)
                cases.append(arg_case(f"{'x'.join(map(str, shape))}-axis{axis}", op, x, axis))
        x = rng.uniform(-5, 5, (3, 4, 5)).astype(np.float32)
        cases.append(arg_case("keepDimensions", op, x, 1, {"keepDimensions": True}))
        cases.append(arg_case("int64-output", op, x, 2, {"outputDataType": "int64"}))
        cases.append(arg_case("long-row", op, rng.uniform(-5, 5, (3, 700)).astype(np.float32), 1))
        cases.append(arg_case("long-strided", op, rng.uniform(-5, 5, (600, 2)).astype(np.float32), 0))
        ties = np.round(rng.uniform(-2, 2, (4, 300))).astype(np.float32)
        cases.append(arg_case("ties-first-index", op, ties, 1))
        cases.append(arg_case("ties-first-index-short", op, ties[:, :9], 1))
        special = rng.uniform(-5, 5, (4, 8)).astype(np.float32)
        special[0, 3], special[0, 5] = np.nan, np.nan
        special[1, 2], special[2, 6] = np.inf, -np.inf
        cases.append(arg_case("nan-inf", op, special, 1))
        cases.append(arg_case("int32", op, rng.integers(-100, 100, (5, 6)).astype(np.int32), 1))
        cases.append(arg_case("uint32", op, rng.integers(0, 2**32 - 1, (5, 6), dtype=np.uint64).astype(np.uint32), 0))
        near = (2**60 + rng.integers(0, 4, (4, 9))).astype(np.int64)  # equal as float64, distinct as int64
        cases.append(arg_case("int64-beyond-2^53", op, near * np.where(rng.random((4, 1)) < 0.5, -1, 1), 1))
        cases.append(arg_case("uint64-above-2^63", op, rng.integers(2**63, 2**64 - 1, (3, 8), dtype=np.uint64), 1))
        cases.append(arg_case("int8", op, rng.integers(-128, 128, (3, 10)).astype(np.int8), 1))
        cases.append(arg_case("uint8", op, rng.integers(0, 256, (3, 10)).astype(np.uint8), 0, {"keepDimensions": True}))
        x16 = rng.uniform(-5, 5, (4, 33)).astype(np.float16)
        x16[2, 7] = np.nan
        cases.append(arg_case("float16", op, x16, 1, {"outputDataType": "int64"}))
    return cases


def cumsum_case(name, x, axis, options=None):
    dt = DTYPE_NAMES[x.dtype.type]
    exact = dt not in ("float32", "float16")
    return op_case(f"cumulativeSum/{dt}/{name}", "cumulativeSum", dt, [operand("x"), axis], options,
                   inputs={"x": x}, expected={"y": (cumulativeSum(x, axis, options), dt)},
                   metric="exact" if exact else "ULP", value=0 if exact else x.shape[axis])


def _cumsum_cases(rng):
    cases = []
    for shape in [(9,), (3, 4, 5), (300, 3), (3, 500)]:
        for axis in range(len(shape)):
            for opts in ({}, {"exclusive": True}, {"reversed": True}, {"exclusive": True, "reversed": True}):
                if shape[axis] == 3 and opts:
                    continue
                x = rng.uniform(0.1, 1.0, shape).astype(np.float32)
                tag = f"{'x'.join(map(str, shape))}-axis{axis}" + "".join(f"-{k}" for k in opts)
                cases.append(cumsum_case(tag, x, axis, opts or None))
    x = (rng.integers(-64, 65, (3, 200)) / 8).astype(np.float32)
    cases.append(cumsum_case("dyadic-signed", x, 1, {"reversed": True}))
    x = rng.uniform(0.1, 1.0, (2, 10)).astype(np.float32)
    x[0, 3], x[1, 5] = np.nan, np.inf
    cases.append(cumsum_case("nan-inf", x, 1))
    cases.append(cumsum_case("int32", rng.integers(-1000, 1000, (4, 300)).astype(np.int32), 1, {"exclusive": True}))
    cases.append(cumsum_case("uint32", rng.integers(0, 1000, (6, 5)).astype(np.uint32), 0, {"reversed": True}))
    cases.append(cumsum_case("int64", rng.integers(-2**55, 2**55, (3, 50)).astype(np.int64), 1, {"exclusive": True}))
    cases.append(cumsum_case("uint64", rng.integers(0, 2**58, (40, 3), dtype=np.uint64), 0, {"reversed": True}))
    cases.append(cumsum_case("float16", rng.uniform(0.1, 1.0, (3, 40)).astype(np.float16), 1))
    return cases


def graph_cases() -> list[dict]:
    """Reduction, argMin/argMax and cumulativeSum graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    return _reduce_cases(rng) + _arg_cases(rng) + _cumsum_cases(rng)


def _x(shape, data_type="float32"):
    return f"builder.input('x', {{dataType: '{data_type}', shape: {list(shape)}}})"


def validation_cases() -> list[dict]:
    """Inputs the spec refuses: a TypeError naming the label."""
    bad = {
        "reduceSum/validation/axis-out-of-range": f"(builder) => builder.reduceSum({_x([2, 3])}, {{axes: [2], label: 'L'}})",
        "reduceSum/validation/duplicate-axes": f"(builder) => builder.reduceSum({_x([2, 3])}, {{axes: [1, 1], label: 'L'}})",
        "reduceSum/validation/negative-axis": f"(builder) => builder.reduceSum({_x([2, 3])}, {{axes: [-1], label: 'L'}})",
        "reduceSum/validation/axes-not-sequence": f"(builder) => builder.reduceSum({_x([2, 3])}, {{axes: 1, label: 'L'}})",
        "reduceMax/validation/axes-on-scalar": f"(builder) => builder.reduceMax({_x([])}, {{axes: [0], label: 'L'}})",
        "reduceMean/validation/int32": f"(builder) => builder.reduceMean({_x([2, 3], 'int32')}, {{label: 'L'}})",
        "reduceL2/validation/uint32": f"(builder) => builder.reduceL2({_x([2, 3], 'uint32')}, {{label: 'L'}})",
        "reduceLogSum/validation/int32": f"(builder) => builder.reduceLogSum({_x([2, 3], 'int32')}, {{label: 'L'}})",
        "reduceLogSumExp/validation/int32": f"(builder) => builder.reduceLogSumExp({_x([2, 3], 'int32')}, {{label: 'L'}})",
        "reduceProduct/validation/int8": f"(builder) => builder.reduceProduct({_x([2, 3], 'int8')}, {{label: 'L'}})",
        "reduceL1/validation/uint8": f"(builder) => builder.reduceL1({_x([2, 3], 'uint8')}, {{label: 'L'}})",
        "reduceSumSquare/validation/axis-too-large": f"(builder) => builder.reduceSumSquare({_x([2, 3])}, {{axes: [0, 5], label: 'L'}})",
        "reduceMin/validation/not-operand": "(builder) => builder.reduceMin(3, {label: 'L'})",
        "argMax/validation/axis-equals-rank": f"(builder) => builder.argMax({_x([2, 3])}, 2, {{label: 'L'}})",
        "argMax/validation/scalar-input": f"(builder) => builder.argMax({_x([])}, 0, {{label: 'L'}})",
        "argMin/validation/output-float32": f"(builder) => builder.argMin({_x([2, 3])}, 0, {{outputDataType: 'float32', label: 'L'}})",
        "argMin/validation/output-uint32": f"(builder) => builder.argMin({_x([2, 3])}, 0, {{outputDataType: 'uint32', label: 'L'}})",
        "argMin/validation/negative-axis": f"(builder) => builder.argMin({_x([2, 3])}, -1, {{label: 'L'}})",
        "cumulativeSum/validation/axis-equals-rank": f"(builder) => builder.cumulativeSum({_x([2, 3])}, 2, {{label: 'L'}})",
        "cumulativeSum/validation/scalar-input": f"(builder) => builder.cumulativeSum({_x([])}, 0, {{label: 'L'}})",
        "cumulativeSum/validation/int8": f"(builder) => builder.cumulativeSum({_x([4], 'int8')}, 0, {{label: 'L'}})",
        "cumulativeSum/validation/negative-axis-wraps": f"(builder) => builder.cumulativeSum({_x([4])}, -1, {{label: 'L'}})",
    }
    return [validation_case(name, name.split("/")[0], js, "TypeError", "L") for name, js in bad.items()]
