"""Conformance cases for the element-wise family: binary (§Element-wise binary operations),
logical (§Element-wise logical operations), unary (§Element-wise unary operations), the
activations (§clamp, §elu, §gelu, §hardSigmoid, §hardSwish, §leakyRelu, §linear, §prelu, §relu,
§sigmoid, §softplus, §softsign, §tanh) and quantizeLinear / dequantizeLinear.

Every operator runs with every data type its spec section allows, over ranks 0 to 5 (broadcasting
from rank 0 included), inputs and constants, with NaN, ±Inf, -0, rounding ties, integer
wrap-around and full-range 64-bit values. Expected values come from tests/reference/elementwise.py
(float64, or exact integers) rounded to the output type; bounds from tolerances.md.
"""
from __future__ import annotations

import math

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.reference import elementwise as ref

SEED = 20261130
ALL = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")
SIGNED = ("float32", "float16", "int64", "int32", "int8")
FLOATS = ("float32", "float16")

#: (tag, shape of a, shape of b): ranks 0 to 5, equal shapes and broadcasting
BINARY_SHAPES = [
    ("rank0", (), ()),
    ("rank1", (11,), (11,)),
    ("rank2-by-rank0", (3, 4), ()),
    ("rank3-by-rank1", (2, 3, 4), (4,)),
    ("rank4-bidirectional", (2, 1, 3, 5), (1, 4, 1, 5)),
    ("rank5-bidirectional", (2, 1, 3, 1, 2), (1, 2, 1, 4, 1)),
]
UNARY_SHAPES = [("rank0", ()), ("rank1", (13,)), ("rank3", (2, 3, 5)), ("rank5", (2, 1, 3, 2, 2))]
FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0]


def _floats(rng, shape, data_type, lo, hi, specials=(), ties=False):
    """Uniform floats in [lo, hi) of data_type, with specials (and .5 ties) at the front."""
    x = rng.uniform(lo, hi, shape).astype(np.float64)
    flat = x.reshape(-1)
    extra = list(specials) + ([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5] if ties else [])
    for i, v in enumerate(extra[: max(0, flat.size - 2)]):
        flat[i] = v
    with np.errstate(over="ignore"):
        return flat.reshape(shape).astype(ref.NUMPY[data_type])


def _ints(rng, shape, data_type, lo=None, hi=None):
    """Uniform integers of data_type in [lo, hi] (default: the whole range)."""
    tlo, thi = ref.INT_RANGE[data_type]
    lo, hi = tlo if lo is None else lo, thi if hi is None else hi
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=ref.NUMPY[data_type])


def _case(name, op, data_type, arrays, expected, out_type, options=None, const=(), args_extra=()):
    metric, value = ref.tolerance(op, out_type)
    names = list(arrays)
    inputs = {n: a for n, a in arrays.items() if n not in const}
    constants = {n: a for n, a in arrays.items() if n in const}
    return op_case(name, op, data_type, [operand(n) for n in names] + list(args_extra), options,
                   inputs=inputs, constants=constants, expected={"y": (expected, out_type)},
                   metric=metric, value=value)


# ----------------------------------------------------------------------------- binary

def _binary_inputs(rng, op, data_type, sa, sb):
    if data_type in FLOATS:
        if op == "pow":
            hi = 4.0 if data_type == "float16" else 10.0
            a = _floats(rng, sa, data_type, 0.25, hi, specials=[-2.0, 0.0, math.nan, math.inf])
            b = _floats(rng, sb, data_type, -3.0, 3.0, specials=[3.0, -1.0, 2.0, -0.5])
            return a, b
        span = 100.0 if data_type == "float32" else 20.0
        specials = FLOAT_SPECIALS if op != "div" else [math.nan, math.inf, 0.0, -0.0, 1.0]
        return (_floats(rng, sa, data_type, -span, span, specials),
                _floats(rng, sb, data_type, -span, span, specials[::-1]))
    if op == "pow":
        signed = ref.INT_RANGE[data_type][0] < 0
        return _ints(rng, sa, data_type, -5 if signed else 0, 7), _ints(rng, sb, data_type, 0, 9)
    a, b = _ints(rng, sa, data_type), _ints(rng, sb, data_type)
    if op == "div":
        b[b == 0] = 1
        if data_type in ("int8", "int32", "int64") and b.size > 1:
            b.reshape(-1)[0] = -1  # INT_MIN / -1 wraps when a holds the minimum
            a.reshape(-1)[0] = ref.INT_RANGE[data_type][0] if a.size == b.size else a.reshape(-1)[0]
    return a, b


def binary_cases(rng):
    cases = []
    for op in ("add", "sub", "mul", "div", "max", "min", "pow"):
        for data_type in ALL:
            for k, (tag, sa, sb) in enumerate(BINARY_SHAPES):
                a, b = _binary_inputs(rng, op, data_type, sa, sb)
                const = ("b",) if k % 3 == 2 else ()
                cases.append(_case(f"{op}/{data_type}/{tag}", op, data_type, {"a": a, "b": b},
                                   ref.binary(op, a, b, data_type), data_type, const=const))
    return cases


# ----------------------------------------------------------------------------- logical

def logical_cases(rng):
    cases = []
    picks = [BINARY_SHAPES[0], BINARY_SHAPES[3], BINARY_SHAPES[5]]
    for op in ("equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual"):
        for data_type in ALL:
            for tag, sa, sb in picks:
                if data_type in FLOATS:
                    a = _floats(rng, sa, data_type, -3, 3, [math.nan, math.inf, -0.0, 1.0]).round()
                    b = _floats(rng, sb, data_type, -3, 3, [1.0, math.inf, 0.0, math.nan]).round()
                else:
                    lo, hi = ref.INT_RANGE[data_type]
                    a, b = _ints(rng, sa, data_type, max(lo, -3), min(hi, 3)), _ints(rng, sb, data_type, max(lo, -3), min(hi, 3))
                    if a.size > 2:  # extremes of the type, compared with each other
                        a.reshape(-1)[:2] = [lo, hi]
                cases.append(_case(f"{op}/{data_type}/{tag}", op, data_type, {"a": a, "b": b},
                                   ref.logical(op, a, b), "uint8"))
    for op in ("logicalAnd", "logicalOr", "logicalXor"):
        for tag, sa, sb in picks:
            a, b = _ints(rng, sa, "uint8", 0, 3), _ints(rng, sb, "uint8", 0, 3)
            cases.append(_case(f"{op}/uint8/{tag}", op, "uint8", {"a": a, "b": b}, ref.logical(op, a, b), "uint8"))
    for tag, shape in UNARY_SHAPES[:3]:
        a = _ints(rng, shape, "uint8")
        cases.append(_case(f"logicalNot/uint8/{tag}", "logicalNot", "uint8", {"a": a}, ref.logical("logicalNot", a), "uint8"))
    for op in ("isNaN", "isInfinite"):
        for data_type in FLOATS:
            for tag, shape in (UNARY_SHAPES[0], UNARY_SHAPES[2]):
                a = _floats(rng, shape, data_type, -70000, 70000, [math.nan, math.inf, -math.inf, -0.0])
                cases.append(_case(f"{op}/{data_type}/{tag}", op, data_type, {"a": a}, ref.logical(op, a), "uint8"))
    return cases


# ----------------------------------------------------------------------------- unary / activations

#: op -> (data types, float32 range, float16 range, specials, ties)
UNARY_DOMAINS = {
    "abs": (SIGNED, (-100, 100), (-100, 100), FLOAT_SPECIALS, False),
    "neg": (SIGNED, (-100, 100), (-100, 100), FLOAT_SPECIALS, False),
    "sign": (SIGNED, (-10, 10), (-10, 10), FLOAT_SPECIALS, False),
    "ceil": (FLOATS, (-10, 10), (-10, 10), FLOAT_SPECIALS, True),
    "floor": (FLOATS, (-10, 10), (-10, 10), FLOAT_SPECIALS, True),
    "roundEven": (FLOATS, (-10, 10), (-10, 10), FLOAT_SPECIALS, True),
    "cos": (FLOATS, (-30, 30), (-30, 30), [math.nan, 0.0, 1000.0, -2000.5], False),
    "sin": (FLOATS, (-30, 30), (-30, 30), [math.nan, -0.0, 1000.0, -2000.5], False),
    "tan": (FLOATS, (-1.4, 1.4), (-1.4, 1.4), [math.nan, 0.0, 10.0, -20.0], False),
    "erf": (FLOATS, (-4, 4), (-4, 4), [math.nan, math.inf, -math.inf, 0.0], False),
    "exp": (FLOATS, (-80, 80), (-10, 10), [math.nan, math.inf, -math.inf, -0.0], False),
    "log": (FLOATS, (0.001, 1000), (0.001, 1000), [math.nan, math.inf, 0.0, -1.0], False),
    "reciprocal": (FLOATS, (0.05, 10), (0.05, 10), [math.nan, math.inf, 0.0, -0.0, -3.0], False),
    "sqrt": (FLOATS, (0, 1000), (0, 1000), [math.nan, math.inf, 0.0, -0.0, -1.0], False),
    "relu": (SIGNED, (-10, 10), (-10, 10), FLOAT_SPECIALS, False),
    "sigmoid": (FLOATS, (-40, 40), (-10, 10), [math.nan, math.inf, -math.inf, 0.0], False),
    "tanh": (FLOATS, (-8, 8), (-8, 8), [math.nan, math.inf, -math.inf, -0.0], False),
    "elu": (FLOATS, (-10, 10), (-10, 10), [math.nan, math.inf, -math.inf, 0.0], False),
    "gelu": (FLOATS, (-10, 10), (-6, 6), [math.nan, math.inf, -math.inf, 0.0], False),
    "hardSigmoid": (FLOATS, (-5, 5), (-5, 5), [math.nan, math.inf, -math.inf, 0.0], False),
    "hardSwish": (FLOATS, (-6, 6), (-6, 6), [math.nan, math.inf, -3.0, 3.0], False),
    "leakyRelu": (FLOATS, (-10, 10), (-10, 10), [math.nan, math.inf, -math.inf, -0.0], False),
    "linear": (FLOATS, (-10, 10), (-10, 10), [math.nan, math.inf, -math.inf, 0.0], False),
    "softplus": (FLOATS, (-30, 30), (-10, 10), [math.nan, math.inf, -math.inf, 0.0], False),
    "softsign": (FLOATS, (-10, 10), (-10, 10), [math.nan, 0.0, -0.0], False),
    "clamp": (ALL, (-10, 10), (-10, 10), [math.nan, math.inf, -math.inf, -0.0], False),
}
#: extra option sets per activation (the default options always run)
OPTIONS = {
    "elu": [{"alpha": 0.5}],
    "hardSigmoid": [{"alpha": 0.3, "beta": 0.25}],
    "leakyRelu": [{"alpha": 0.2}],
    "linear": [{"alpha": 2.5, "beta": -1.25}],
    "clamp": [{"minValue": -1.5, "maxValue": 2.25}, {"minValue": 0}, {"maxValue": 6}],
}
INT_CLAMP = {"int8": {"minValue": -100, "maxValue": 100}, "uint8": {"minValue": 10, "maxValue": 200},
             "int32": {"minValue": -(2 ** 30), "maxValue": 2 ** 30},
             "uint32": {"minValue": 7, "maxValue": 3_000_000_000},
             "int64": {"minValue": {"bigint": str(-(2 ** 60) - 1)}, "maxValue": {"bigint": str(2 ** 62 + 3)}},
             "uint64": {"minValue": {"bigint": str(2 ** 53 + 1)}, "maxValue": {"bigint": str(2 ** 63 + 5)}}}


def _plain_options(options):
    """JSON options -> Python values for the reference (bigint records -> int)."""
    return {k: int(v["bigint"]) if isinstance(v, dict) else v for k, v in options.items()}


def unary_cases(rng):
    cases = []
    for op, (types, r32, r16, specials, ties) in UNARY_DOMAINS.items():
        for data_type in types:
            option_sets = [None] + OPTIONS.get(op, [])
            if op == "clamp" and data_type not in FLOATS:
                option_sets = [INT_CLAMP[data_type], None]
            for k, (tag, shape) in enumerate(UNARY_SHAPES):
                options = option_sets[k % len(option_sets)]
                if data_type in FLOATS:
                    lo, hi = r32 if data_type == "float32" else r16
                    x = _floats(rng, shape, data_type, lo, hi, specials if shape else (), ties)
                else:
                    x = _ints(rng, shape, data_type)
                    if x.size > 2:
                        x.reshape(-1)[:2] = ref.INT_RANGE[data_type]  # wrap-around of abs/neg(INT_MIN)
                suffix = "" if options is None else "/options-" + "-".join(sorted(options))
                expected = ref.unary(op, x, data_type, _plain_options(options or {}))
                cases.append(_case(f"{op}/{data_type}/{tag}{suffix}", op, data_type, {"x": x}, expected, data_type,
                                   options=options, const=("x",) if k == 2 else ()))
    for data_type in SIGNED:
        for tag, sx, ss in (BINARY_SHAPES[0], BINARY_SHAPES[3], BINARY_SHAPES[4]):
            if data_type in FLOATS:
                x = _floats(rng, sx, data_type, -10, 10, [math.nan, -math.inf, -0.0])
                slope = _floats(rng, ss, data_type, -2, 2)
            else:
                x, slope = _ints(rng, sx, data_type), _ints(rng, ss, data_type, -3, 3)
            cases.append(_case(f"prelu/{data_type}/{tag}", "prelu", data_type, {"x": x, "slope": slope},
                               ref.prelu(x, slope, data_type), data_type))
    return cases


# ----------------------------------------------------------------------------- quantization

QUANT_SHAPES = [("rank0", (), ()), ("rank1-per-tensor", (12,), (1,)), ("rank2-per-axis", (4, 6), (4, 1)),
                ("rank3-blockwise", (2, 6, 4), (1, 3, 2)), ("rank4-per-channel", (1, 3, 2, 2), (1, 3, 1, 1))]


def quantize_cases(rng):
    cases = []
    for zp_type in ("uint8", "int8", "uint32", "int32"):
        lo, hi = ref.INT_RANGE[zp_type]
        for float_type in FLOATS:
            for tag, shape, sshape in QUANT_SHAPES[:4] if zp_type.endswith("32") else QUANT_SHAPES:
                scale = rng.uniform(0.05, 0.5, sshape).astype(float_type)
                zp = _ints(rng, sshape, zp_type, max(lo, -20), min(hi, 20))
                q = _ints(rng, shape, zp_type, max(lo, -300), min(hi, 300))
                cases.append(_case(f"dequantizeLinear/{zp_type}-to-{float_type}/{tag}", "dequantizeLinear", zp_type,
                                   {"x": q, "scale": scale, "zeroPoint": zp}, ref.dequantize_linear(q, scale, zp),
                                   float_type, const=("scale", "zeroPoint")))
                # dyadic scales make k/2 * scale exact: inputs on the rounding ties, and past saturation
                qscale = (rng.integers(3, 40, sshape) / 64).astype(float_type)
                x = (rng.integers(-400, 400, shape) * 0.5 * ref.blockwise_expand(qscale.astype(np.float64), shape))
                x = x.astype(float_type)
                if x.size > 3:
                    with np.errstate(over="ignore"):
                        x.reshape(-1)[:3] = [1e6, -1e6, math.nan]
                cases.append(_case(f"quantizeLinear/{float_type}-to-{zp_type}/{tag}", "quantizeLinear", float_type,
                                   {"x": x, "scale": qscale, "zeroPoint": zp}, ref.quantize_linear(x, qscale, zp),
                                   zp_type, const=("scale", "zeroPoint")))
    return cases


def graph_cases() -> list[dict]:
    """Element-wise graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    return binary_cases(rng) + logical_cases(rng) + unary_cases(rng) + quantize_cases(rng)


# ----------------------------------------------------------------------------- validation

def _inp(name, data_type, shape):
    return f"builder.input('{name}', {{dataType: '{data_type}', shape: {list(shape)}}})"


def validation_cases() -> list[dict]:
    """Element-wise validation cases: wrong data types, shapes, foreign operands, bad options."""
    cases = []
    v = validation_case
    for op in ("add", "sub", "mul", "div", "max", "min", "pow", "equal", "greater", "lesserOrEqual"):
        cases.append(v(f"{op}/validation/data-type-mismatch", op,
                       f"(builder) => builder.{op}({_inp('a', 'float32', [2])}, {_inp('b', 'float16', [2])}, {{label: 'L1'}})",
                       "TypeError", "L1"))
        cases.append(v(f"{op}/validation/not-broadcastable", op,
                       f"(builder) => builder.{op}({_inp('a', 'float32', [2, 3])}, {_inp('b', 'float32', [4])}, {{label: 'L2'}})",
                       "TypeError", "L2"))
        cases.append(v(f"{op}/validation/operand-of-another-builder", op,
                       f"(builder, context) => {{ const other = new MLGraphBuilder(context); "
                       f"return builder.{op}({_inp('a', 'float32', [2])}, other.input('b', {{dataType: 'float32', shape: [2]}}), {{label: 'L3'}}); }}",
                       "TypeError", "L3"))
        cases.append(v(f"{op}/validation/builder-after-build", op,
                       f"async (builder) => {{ const a = {_inp('a', 'float32', [2])}; "
                       f"await builder.build({{y: builder.abs(a)}}); return builder.{op}(a, a); }}",
                       "InvalidStateError"))
    for op in ("logicalAnd", "logicalOr", "logicalXor"):
        cases.append(v(f"{op}/validation/not-uint8", op,
                       f"(builder) => builder.{op}({_inp('a', 'int8', [2])}, {_inp('b', 'int8', [2])}, {{label: 'L4'}})",
                       "TypeError", "L4"))
    cases.append(v("logicalNot/validation/not-uint8", "logicalNot",
                   f"(builder) => builder.logicalNot({_inp('a', 'float32', [2])}, {{label: 'L5'}})", "TypeError", "L5"))
    for op in ("isNaN", "isInfinite"):
        cases.append(v(f"{op}/validation/integer-input", op,
                       f"(builder) => builder.{op}({_inp('a', 'int32', [2])}, {{label: 'L6'}})", "TypeError", "L6"))
    unary_ops = ["ceil", "cos", "erf", "exp", "floor", "log", "reciprocal", "roundEven", "sin", "sqrt", "tan",
                 "sigmoid", "tanh", "elu", "gelu", "hardSigmoid", "hardSwish", "leakyRelu", "linear", "softplus", "softsign"]
    for k, op in enumerate(unary_ops):
        dt = ("int32", "uint8", "int64", "int8")[k % 4]
        cases.append(v(f"{op}/validation/data-type-{dt}", op,
                       f"(builder) => builder.{op}({_inp('x', dt, [2])}, {{label: 'U{k}'}})", "TypeError", f"U{k}"))
        cases.append(v(f"{op}/validation/operand-of-another-builder", op,
                       f"(builder, context) => builder.{op}(new MLGraphBuilder(context).input('x', {{dataType: 'float32', shape: [2]}}), {{label: 'W{k}'}})",
                       "TypeError", f"W{k}"))
        cases.append(v(f"{op}/validation/builder-after-build", op,
                       f"async (builder) => {{ const x = {_inp('x', 'float32', [2])}; "
                       f"await builder.build({{y: builder.neg(x)}}); return builder.{op}(x); }}", "InvalidStateError"))
    for op in ("abs", "neg", "sign", "relu"):
        for dt in ("uint8", "uint32", "uint64"):
            cases.append(v(f"{op}/validation/data-type-{dt}", op,
                           f"(builder) => builder.{op}({_inp('x', dt, [2])}, {{label: 'S1'}})", "TypeError", "S1"))
    for name, options in (("alpha-nan", "{alpha: NaN, label: 'A1'}"), ("alpha-infinite", "{alpha: Infinity, label: 'A1'}"),
                          ("alpha-string", "{alpha: 'x', label: 'A1'}")):
        for op in ("elu", "leakyRelu", "linear", "hardSigmoid"):
            cases.append(v(f"{op}/validation/{name}", op, f"(builder) => builder.{op}({_inp('x', 'float32', [2])}, {options})",
                           "TypeError", "A1"))
    cases.append(v("linear/validation/beta-nan", "linear",
                   f"(builder) => builder.linear({_inp('x', 'float32', [2])}, {{beta: NaN, label: 'A2'}})", "TypeError", "A2"))
    for dt, lo, hi in (("float32", "3", "1"), ("int32", "5", "-5"), ("uint8", "200", "100"),
                       ("int64", "10n", "9n"), ("float16", "1e5", "-1e5")):
        cases.append(v(f"clamp/validation/min-greater-than-max-{dt}", "clamp",
                       f"(builder) => builder.clamp({_inp('x', dt, [2])}, {{minValue: {lo}, maxValue: {hi}, label: 'C1'}})",
                       "TypeError", "C1"))
    cases.append(v("clamp/validation/min-symbol", "clamp",
                   f"(builder) => builder.clamp({_inp('x', 'float32', [2])}, {{minValue: Symbol('a'), label: 'C2'}})", "TypeError", "C2"))
    cases.append(v("clamp/validation/max-bigint-below-min", "clamp",
                   f"(builder) => builder.clamp({_inp('x', 'uint64', [2])}, {{minValue: 2n ** 60n, maxValue: 2n ** 59n, label: 'C3'}})", "TypeError", "C3"))
    cases.append(v("prelu/validation/slope-data-type", "prelu",
                   f"(builder) => builder.prelu({_inp('x', 'float32', [2])}, {_inp('s', 'float16', [2])}, {{label: 'P1'}})", "TypeError", "P1"))
    cases.append(v("prelu/validation/not-broadcastable", "prelu",
                   f"(builder) => builder.prelu({_inp('x', 'float32', [2, 3])}, {_inp('s', 'float32', [2])}, {{label: 'P2'}})", "TypeError", "P2"))
    cases.append(v("prelu/validation/uint8", "prelu",
                   f"(builder) => builder.prelu({_inp('x', 'uint8', [2])}, {_inp('s', 'uint8', [2])}, {{label: 'P3'}})", "TypeError", "P3"))
    q_in, q_s, q_z = _inp("x", "float32", [4, 6]), _inp("s", "float32", [2, 3]), _inp("z", "uint8", [2, 3])
    for name, js in (
        ("input-not-float", f"builder.quantizeLinear({_inp('x', 'int32', [4, 6])}, {q_s}, {q_z}, {{label: 'Q1'}})"),
        ("scale-type-differs", f"builder.quantizeLinear({q_in}, {_inp('s', 'float16', [2, 3])}, {q_z}, {{label: 'Q1'}})"),
        ("zero-point-float", f"builder.quantizeLinear({q_in}, {q_s}, {_inp('z', 'float32', [2, 3])}, {{label: 'Q1'}})"),
        ("rank-differs", f"builder.quantizeLinear({q_in}, {_inp('s', 'float32', [3])}, {_inp('z', 'uint8', [3])}, {{label: 'Q1'}})"),
        ("not-blockwise", f"builder.quantizeLinear({q_in}, {_inp('s', 'float32', [3, 4])}, {_inp('z', 'uint8', [3, 4])}, {{label: 'Q1'}})"),
        ("shapes-differ", f"builder.quantizeLinear({q_in}, {q_s}, {_inp('z', 'uint8', [2, 1])}, {{label: 'Q1'}})"),
    ):
        cases.append(v(f"quantizeLinear/validation/{name}", "quantizeLinear", f"(builder) => {js}", "TypeError", "Q1"))
    d_in = _inp("x", "int8", [4, 6])
    for name, js in (
        ("input-float", f"builder.dequantizeLinear({q_in}, {q_s}, {_inp('z', 'float32', [2, 3])}, {{label: 'D1'}})"),
        ("zero-point-type-differs", f"builder.dequantizeLinear({d_in}, {q_s}, {q_z}, {{label: 'D1'}})"),
        ("scale-not-float", f"builder.dequantizeLinear({d_in}, {_inp('s', 'int8', [2, 3])}, {_inp('z', 'int8', [2, 3])}, {{label: 'D1'}})"),
        ("not-blockwise", f"builder.dequantizeLinear({d_in}, {_inp('s', 'float32', [3, 5])}, {_inp('z', 'int8', [3, 5])}, {{label: 'D1'}})"),
    ):
        cases.append(v(f"dequantizeLinear/validation/{name}", "dequantizeLinear", f"(builder) => {js}", "TypeError", "D1"))
    return cases
