"""Conformance cases for the data types: cast (spec §cast) between every pair of the eight
MLOperandDataTypes, tensors of every type through graph inputs, constants and outputs (packed
float16/int8/uint8 with odd element counts, rank 0 scalars, ranks up to 8), and 64-bit integer
arithmetic beyond 2^53.

Only behaviour the spec defines is here: float -> integer casts use in-range values (truncation);
out-of-range float -> integer results are implementation-defined and tested in tests/test_dtypes.py.
"""
from __future__ import annotations

import math

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.reference import elementwise as ref

SEED = 7_2026
ALL = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")
FLOATS = ("float32", "float16")

#: integer values worth casting (filtered to each source type's range)
INT_EDGES = [0, 1, -1, 2, 7, 127, 128, -128, -129, 255, 256, 1000, -1000, 32767, 65504, 65519, 65520, -65520,
             2 ** 24, 2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24) - 1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 2 ** 32,
             2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 62 + 12345, 2 ** 63 - 1, -(2 ** 63), 2 ** 64 - 1, 2 ** 63 + 1]


def _int_values(data_type):
    lo, hi = ref.INT_RANGE[data_type]
    return np.array([v for v in INT_EDGES if lo <= v <= hi], dtype=ref.NUMPY[data_type])


def _float_values(data_type, to):
    """Values of a float type whose cast to `to` the spec defines (in range for integer targets)."""
    if to in FLOATS:
        vals = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -1.5, 2.5, 1 / 3, 65504, 65519.9, 65520, -7e4,
                1e-8, 6e-8, 3e-5, 2 ** -24, 2 ** -25, 3.4e38, -1.2e-38, 123456.789]
    else:
        lo, hi = ref.INT_RANGE[to]
        cands = [0.0, -0.0, 0.5, -0.5, 0.99, 1.5, -1.5, 2.5, -2.99, 100.75, 127.9, -128.9, 255.9, -300.5,
                 65504.0, 1e6 + 0.5, -1e6 - 0.5, 2.0 ** 31 - 128, -(2.0 ** 31), 4.0e9, 2.0 ** 53, -(2.0 ** 60), 1.8e19]
        with np.errstate(over="ignore"):
            vals = [v for v in cands if lo - 1 < float(ref.NUMPY[data_type](v)) < hi + 1]
    with np.errstate(over="ignore"):
        return np.array(vals, np.float64).astype(ref.NUMPY[data_type])


def cast_cases():
    cases = []
    for src in ALL:
        for dst in ALL:
            x = _float_values(src, dst) if src in FLOATS else _int_values(src)
            for tag, arr, const in (("rank1", x, False), ("rank0", x[-1:].reshape(()), False),
                                    ("rank3-constant", np.resize(x, (3, 1, 5)), True)):
                name = f"cast/{src}-to-{dst}/{tag}"
                arrays = {"x": arr}
                cases.append(op_case(name, "cast", src, [operand("x"), dst], None,
                                     inputs={} if const else arrays, constants=arrays if const else {},
                                     expected={"y": (ref.cast(arr, dst), dst)}, metric="exact", value=0))
    return cases


#: shapes with odd element counts and ranks 0 to 8
ROUND_TRIP_SHAPES = [(), (1,), (3,), (5,), (7,), (2, 3), (3, 5, 7), (2, 1, 3, 1, 5), (1, 2, 1, 3, 1, 1, 3),
                     (3, 1, 1, 2, 1, 1, 1, 3)]


def _values(rng, data_type, shape):
    if data_type in FLOATS:
        if data_type == "float16":  # every kind of binary16 bit pattern: subnormals, Inf, NaN, -0
            bits = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
            flat = bits.reshape(-1)
            flat[: min(flat.size, 6)] = [0x0001, 0x8000, 0x7C00, 0x03FF, 0xFBFF, 0x7E00][: min(flat.size, 6)]
            return bits.view(np.float16)
        bits = rng.integers(0, 1 << 32, size=shape, dtype=np.uint32)
        bits[(bits & 0x7F800000) == 0] |= 0x00800000  # no float32 subnormals (WGSL may flush them)
        return bits.view(np.float32)
    lo, hi = ref.INT_RANGE[data_type]
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=ref.NUMPY[data_type])


def round_trip_cases(rng):
    """cast(x, its own type): graph input -> compute layout -> graph output, bit for bit."""
    cases = []
    for data_type in ALL:
        for k, shape in enumerate(ROUND_TRIP_SHAPES):
            x = _values(rng, data_type, shape)
            tag = f"rank{len(shape)}-" + "x".join(map(str, shape)) if shape else "rank0"
            const = k % 4 == 3
            arrays = {"x": x}
            cases.append(op_case(f"cast/{data_type}-to-{data_type}/round-trip-{tag}{'-constant' if const else ''}",
                                 "cast", data_type, [operand("x"), data_type], None,
                                 inputs={} if const else arrays, constants=arrays if const else {},
                                 expected={"y": (x, data_type)}, metric="exact", value=0))
    return cases


def int64_cases():
    """64-bit arithmetic and comparisons beyond 2^53, where a float64 detour would be inexact."""
    cases = []
    big = [2 ** 53, 2 ** 53 + 1, 2 ** 62 + 3, 2 ** 63 - 1, -(2 ** 63), -(2 ** 53) - 1, 2 ** 32 + 1, 2 ** 32 - 1, 3, -7]
    other = [1, 1, 3, -1, -1, 2, 2 ** 32 - 1, 2 ** 32 + 1, 2 ** 61, 2]
    for data_type in ("int64", "uint64"):
        a = np.array([v % 2 ** 64 if data_type == "uint64" else v for v in big], dtype=object)
        b = np.array([v % 2 ** 64 if data_type == "uint64" else v for v in other], dtype=object)
        a = ref.from_ints(a, data_type)
        b = ref.from_ints(b, data_type)
        for op in ("add", "sub", "mul", "div", "max", "min"):
            cases.append(op_case(f"{op}/{data_type}/beyond-2^53", op, data_type, [operand("a"), operand("b")], None,
                                 inputs={"a": a, "b": b}, expected={"y": (ref.binary(op, a, b, data_type), data_type)},
                                 metric="exact", value=0))
        for op in ("equal", "greater", "lesser"):
            c = a.copy()
            c[1] = a[0]  # 2^53 + 1 vs 2^53: equal as doubles, not as integers
            cases.append(op_case(f"{op}/{data_type}/beyond-2^53", op, data_type, [operand("a"), operand("c")], None,
                                 inputs={"a": a, "c": c}, expected={"y": (ref.logical(op, a, c), "uint8")},
                                 metric="exact", value=0))
    return cases


def graph_cases() -> list[dict]:
    """Data-type graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    return cast_cases() + round_trip_cases(rng) + int64_cases()


def validation_cases() -> list[dict]:
    """Descriptors, constants and cast targets the spec rejects (int4 only as a cast target:
    Chromium accepts it in descriptors)."""
    v = validation_case
    cases = []
    for bad in ("float64", "bool", "int4", "Float32", ""):
        cases.append(v(f"cast/validation/target-{bad or 'empty'}", "cast",
                       f"(builder) => builder.cast(builder.input('x', {{dataType: 'float32', shape: [2]}}), '{bad}', {{label: 'K1'}})",
                       "TypeError", "K1"))
        if bad != "int4":  # a graph input may be int4 (Chromium's 4-bit types; tests/test_int4.py)
            cases.append(v(f"input/validation/data-type-{bad or 'empty'}", "input",
                           f"(builder) => builder.input('x', {{dataType: '{bad}', shape: [2]}})", "TypeError"))
    cases.append(v("cast/validation/operand-of-another-builder", "cast",
                   "(builder, context) => builder.cast(new MLGraphBuilder(context).input('x', {dataType: 'int8', shape: [3]}), 'float16', {label: 'K2'})",
                   "TypeError", "K2"))
    cases.append(v("cast/validation/builder-after-build", "cast",
                   "async (builder) => { const x = builder.input('x', {dataType: 'uint8', shape: [3]}); "
                   "await builder.build({y: builder.cast(x, 'int64')}); return builder.cast(x, 'float16'); }",
                   "InvalidStateError"))
    for dt, n_bytes, shape in (("float16", 4, [3]), ("int8", 4, [3]), ("uint8", 2, [3]), ("int64", 12, [2]), ("uint64", 8, [2, 1, 2])):
        cases.append(v(f"constant/validation/{dt}-byte-length", "constant",
                       f"(builder) => builder.constant({{dataType: '{dt}', shape: {shape}}}, new Uint8Array({n_bytes}))", "TypeError"))
    for dt, view in (("float16", "Float32Array(4)"), ("int8", "Uint16Array(4)"), ("int64", "Float64Array(8)"), ("uint8", "Int8Array(8)")):
        cases.append(v(f"constant/validation/{dt}-view-type", "constant",
                       f"(builder) => builder.constant({{dataType: '{dt}', shape: [8]}}, new {view})", "TypeError"))
    cases.append(v("input/validation/rank-9", "input",
                   "(builder) => builder.input('x', {dataType: 'int8', shape: [1, 1, 1, 1, 1, 1, 1, 1, 2]})", "TypeError"))
    cases.append(v("input/validation/zero-dimension", "input",
                   "(builder) => builder.input('x', {dataType: 'float16', shape: [2, 0]})", "TypeError"))
    cases.append(v("constant/validation/scalar-value-type", "constant",
                   "(builder) => builder.constant('int64', Symbol('seven'))", "TypeError"))
    return cases
