"""Float64 / exact-integer NumPy references for the element-wise family and the data types.

Floating-point operators are evaluated in float64 on the (exactly widened) float32/float16 inputs;
the tests round the result to the output type (tolerances.md). Integer operators are evaluated on
Python integers (exact, any width) and wrapped to the output type, so int64/uint64 beyond 2^53 are
checked exactly. Each function cites the spec section it follows; where the spec leaves a result
implementation-defined, the polyfill's documented choice is what the reference computes (and the
docstring says so):

* integer div: truncation toward zero (spec); x / 0 = x (choice, as WGSL does for i32).
* integer pow with a negative exponent: truncated toward zero (1, +-1 for bases 1, -1; else 0).
* float -> integer cast out of range: saturation, NaN -> 0 (choice, as the spec's ConvertToInt).
* sign(NaN) = 0 (spec: "0 otherwise"); max/min/clamp/relu propagate NaN.
"""
from __future__ import annotations

import math

import numpy as np

NUMPY = {
    "float32": np.float32, "float16": np.float16, "int32": np.int32, "uint32": np.uint32,
    "int64": np.int64, "uint64": np.uint64, "int8": np.int8, "uint8": np.uint8,
}
FLOATS = ("float32", "float16")
INT_RANGE = {
    "int8": (-(2 ** 7), 2 ** 7 - 1), "uint8": (0, 2 ** 8 - 1),
    "int32": (-(2 ** 31), 2 ** 31 - 1), "uint32": (0, 2 ** 32 - 1),
    "int64": (-(2 ** 63), 2 ** 63 - 1), "uint64": (0, 2 ** 64 - 1),
}
BITS = {"int8": 8, "uint8": 8, "int32": 32, "uint32": 32, "int64": 64, "uint64": 64}

#: tolerances.md: op -> (metric, float32 bound, float16 bound); integer outputs are always exact
TOLERANCE = {
    **{op: ("ULP", 1, 1) for op in ("add", "sub", "mul", "prelu", "sqrt")},
    **{op: ("ULP", 2, 2) for op in ("div", "reciprocal", "linear", "hardSigmoid")},
    **{op: ("ULP", 0, 0) for op in (
        "relu", "max", "min", "clamp", "abs", "neg", "floor", "ceil", "roundEven", "sign", "cast",
        "equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual",
        "logicalAnd", "logicalOr", "logicalXor", "logicalNot", "isNaN", "isInfinite",
        "quantizeLinear", "dequantizeLinear")},
    "pow": ("ULP", 32, 2), "exp": ("ULP", 32, 1),
    **{op: ("ATOL", 2 ** -10, 2 ** -7) for op in ("cos", "sin", "tan", "erf")},
    "log": ("ATOL", 1 / 1024, 1 / 1024),
    "tanh": ("ULP", 16, 16), "sigmoid": ("ULP", 34, 10),
    **{op: ("ULP", 18, 18) for op in ("elu", "gelu", "softplus")},
    "hardSwish": ("ULP", 4, 4), "leakyRelu": ("ULP", 1, 2), "softsign": ("ULP", 3, 3),
}


def tolerance(op: str, output_type: str) -> tuple[str, float]:
    """(metric, bound) for op with that output type: "exact" for integer outputs."""
    if output_type not in FLOATS:
        return "exact", 0
    metric, f32, f16 = TOLERANCE[op]
    return metric, f32 if output_type == "float32" else f16


# --------------------------------------------------------------------------- integers

def wrap_int(value: int, data_type: str) -> int:
    """The lowest N bits of an integer, read as data_type (two's complement for signed)."""
    bits = BITS[data_type]
    v = int(value) & ((1 << bits) - 1)
    if INT_RANGE[data_type][0] < 0 and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def to_ints(array) -> np.ndarray:
    """An object array of Python ints (exact arithmetic at any width)."""
    return np.asarray(array).astype(object)


def from_ints(values, data_type: str) -> np.ndarray:
    """Wraps Python ints to data_type and returns a typed array."""
    arr = np.asarray(values, dtype=object)
    flat = [wrap_int(v, data_type) for v in arr.reshape(-1)]
    return np.array(flat, dtype=NUMPY[data_type]).reshape(arr.shape)


def _trunc_div(x: int, y: int) -> int:
    if y == 0:
        return x
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _int_pow(x: int, y: int, data_type: str) -> int:
    if y < 0:
        return 1 if x == 1 else (-1 if y % 2 else 1) if x == -1 else 0
    return pow(x, y, 1 << BITS[data_type])


_INT_BINARY = {
    "add": lambda x, y, t: x + y,
    "sub": lambda x, y, t: x - y,
    "mul": lambda x, y, t: x * y,
    "div": lambda x, y, t: _trunc_div(x, y),
    "max": lambda x, y, t: max(x, y),
    "min": lambda x, y, t: min(x, y),
    "pow": _int_pow,
}

_FLOAT_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "pow": np.power,
}


def binary(op: str, a: np.ndarray, b: np.ndarray, data_type: str) -> np.ndarray:
    """Spec §Element-wise binary operations, broadcast NumPy-style.

    Returns float64 values for float types, a wrapped typed array for integer types.
    """
    if data_type in FLOATS:
        with np.errstate(all="ignore"):
            return _FLOAT_BINARY[op](np.asarray(a, np.float64), np.asarray(b, np.float64))
    fn = np.frompyfunc(lambda x, y: _INT_BINARY[op](x, y, data_type), 2, 1)
    return from_ints(fn(to_ints(a), to_ints(b)), data_type)


_COMPARE = {
    "equal": np.equal, "notEqual": np.not_equal, "greater": np.greater,
    "greaterOrEqual": np.greater_equal, "lesser": np.less, "lesserOrEqual": np.less_equal,
}


def logical(op: str, a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Spec §Element-wise logical operations: uint8 0/1 (NaN compares false, notEqual true)."""
    with np.errstate(all="ignore"):
        if op in _COMPARE:
            ints = np.asarray(a).dtype.kind in "iu"
            x, y = (to_ints(a), to_ints(b)) if ints else (np.asarray(a, np.float64), np.asarray(b, np.float64))
            r = _COMPARE[op](x, y)
        elif op == "logicalAnd":
            r = (np.asarray(a) != 0) & (np.asarray(b) != 0)
        elif op == "logicalOr":
            r = (np.asarray(a) != 0) | (np.asarray(b) != 0)
        elif op == "logicalXor":
            r = (np.asarray(a) != 0) ^ (np.asarray(b) != 0)
        elif op == "logicalNot":
            r = np.asarray(a) == 0
        elif op == "isNaN":
            r = np.isnan(np.asarray(a, np.float64))
        elif op == "isInfinite":
            r = np.isinf(np.asarray(a, np.float64))
        else:
            raise KeyError(op)
    return np.asarray(r, dtype=bool).astype(np.uint8)


# --------------------------------------------------------------------------- unary / activations

def _gelu(x):
    erfc = np.frompyfunc(lambda v: math.erfc(-v / math.sqrt(2)) if not math.isnan(v) else math.nan, 1, 1)
    with np.errstate(all="ignore"):
        return 0.5 * x * np.asarray(erfc(x), dtype=np.float64)


def _erf(x):
    return np.asarray(np.frompyfunc(lambda v: math.erf(v) if not math.isnan(v) else math.nan, 1, 1)(x), dtype=np.float64)


_FLOAT_UNARY = {
    "abs": np.abs, "ceil": np.ceil, "cos": np.cos, "erf": _erf, "exp": np.exp, "floor": np.floor,
    "log": np.log, "neg": np.negative, "reciprocal": lambda x: 1.0 / x, "roundEven": np.rint,
    "sin": np.sin, "sign": lambda x: np.where(np.isnan(x), 0.0, np.sign(x)), "sqrt": np.sqrt,
    "tan": np.tan,
    # activations
    "relu": lambda x: np.where(x < 0, 0.0, x),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "gelu": _gelu,
    "hardSwish": lambda x: x * np.where(x + 3 > 6, 6.0, np.where(x + 3 < 0, 0.0, x + 3)) / 6.0,
    "softplus": lambda x: np.logaddexp(0.0, x),
    "softsign": lambda x: x / (1.0 + np.abs(x)),
}

#: spec option defaults (MLEluOptions, MLHardSigmoidOptions, MLLeakyReluOptions, MLLinearOptions)
DEFAULTS = {"elu": {"alpha": 1.0}, "hardSigmoid": {"alpha": 0.2, "beta": 0.5},
            "leakyRelu": {"alpha": 0.01}, "linear": {"alpha": 1.0, "beta": 0.0}}


def cast_number(value, data_type: str):
    """Spec "cast" of an MLNumber: floats rounded (float16/float32), integers clamped then rounded half even."""
    if data_type == "float32":
        return float(np.float32(value))
    if data_type == "float16":
        return float(np.float16(value))
    lo, hi = INT_RANGE[data_type]
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return lo if value < 0 else hi
        value = round(min(max(value, lo), hi))  # Python round: half to even
    return int(min(max(int(value), lo), hi))


def unary(op: str, x: np.ndarray, data_type: str, options: dict | None = None) -> np.ndarray:
    """Spec §Element-wise unary operations and the single-input activations (§elu, §gelu, ...).

    Options are cast to data_type as the spec's steps do. Returns float64 for float types, a
    wrapped typed array for integer types (abs, neg, sign, relu, clamp).
    """
    options = {**DEFAULTS.get(op, {}), **(options or {})}
    if data_type not in FLOATS:
        ints = to_ints(x)
        if op == "clamp":
            lo = cast_number(options.get("minValue", -math.inf), data_type)
            hi = cast_number(options.get("maxValue", math.inf), data_type)
            fn = lambda v: min(max(v, lo), hi)  # noqa: E731
        else:
            fn = {"abs": abs, "neg": lambda v: -v, "sign": lambda v: (v > 0) - (v < 0),
                  "relu": lambda v: max(v, 0)}[op]
        return from_ints(np.frompyfunc(fn, 1, 1)(ints), data_type)
    v = np.asarray(x, np.float64)
    p = {k: cast_number(val, data_type) for k, val in options.items() if k != "label"}
    with np.errstate(all="ignore"):
        if op == "clamp":
            lo, hi = p.get("minValue", -math.inf), p.get("maxValue", math.inf)
            return np.where(v < lo, lo, np.where(v > hi, hi, v))
        if op == "elu":
            return np.where(v < 0, p["alpha"] * np.expm1(v), v)
        if op == "hardSigmoid":
            t = p["alpha"] * v + p["beta"]
            return np.where(t > 1, 1.0, np.where(t < 0, 0.0, t))
        if op == "leakyRelu":
            return np.where(v < 0, p["alpha"] * v, v)
        if op == "linear":
            return p["alpha"] * v + p["beta"]
        return _FLOAT_UNARY[op](v)


def prelu(x: np.ndarray, slope: np.ndarray, data_type: str) -> np.ndarray:
    """Spec §prelu: max(0, x) + slope * min(0, x), broadcast."""
    if data_type in FLOATS:
        xv, sv = np.asarray(x, np.float64), np.asarray(slope, np.float64)
        with np.errstate(all="ignore"):
            return np.where(xv < 0, sv * xv, xv)
    fn = np.frompyfunc(lambda a, s: a * s if a < 0 else a, 2, 1)
    return from_ints(fn(to_ints(x), to_ints(slope)), data_type)


# --------------------------------------------------------------------------- cast

def int_to_float32(n: int) -> float:
    """An integer rounded to the nearest float32 (ties to even), exactly."""
    if n == 0:
        return 0.0
    m = abs(n)
    shift = max(0, m.bit_length() - 24)
    if shift:
        q, r = divmod(m, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        m = q << shift
    return float(np.float32(math.copysign(float(m), n)))


def cast(x: np.ndarray, to: str) -> np.ndarray:
    """Spec §cast from x's dtype to `to`: values as the output's typed array (exact).

    int -> int: lowest N bits; int -> float: nearest even; float -> float: nearest even;
    float -> int: truncation toward zero, saturated, NaN -> 0 (our implementation-defined choice).
    """
    x = np.asarray(x)
    if x.dtype.kind == "f":
        if to in FLOATS:
            with np.errstate(over="ignore"):
                return x.astype(np.float64).astype(NUMPY[to])
        lo, hi = INT_RANGE[to]

        def conv(v):
            if math.isnan(v):
                return 0
            if math.isinf(v):
                return lo if v < 0 else hi
            return min(max(math.trunc(v), lo), hi)
        return np.array([conv(float(v)) for v in x.reshape(-1)], dtype=NUMPY[to]).reshape(x.shape)
    ints = [int(v) for v in x.reshape(-1)]
    if to == "float32":
        return np.array([int_to_float32(v) for v in ints], np.float32).reshape(x.shape)
    if to == "float16":
        with np.errstate(over="ignore"):
            return np.array([float(v) if abs(v) < 2 ** 60 else math.copysign(2.0 ** 60, v) for v in ints],
                            np.float64).astype(np.float16).reshape(x.shape)
    return np.array([wrap_int(v, to) for v in ints], dtype=NUMPY[to]).reshape(x.shape)


# --------------------------------------------------------------------------- quantization

def blockwise_expand(t: np.ndarray, shape) -> np.ndarray:
    """Spec "blockwise broadcasting": repeat each element shape[d] / t.shape[d] times along d."""
    out = np.asarray(t)
    for d, n in enumerate(shape):
        out = np.repeat(out, n // out.shape[d], axis=d)
    return out


def dequantize_linear(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """Spec §dequantizeLinear: (x - zeroPoint) * scale, float64 (the difference is exact)."""
    s = blockwise_expand(np.asarray(scale, np.float64), x.shape)
    z = blockwise_expand(zero_point, x.shape).astype(np.int64)
    return (x.astype(np.int64) - z).astype(np.float64) * s


def quantize_linear(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """Spec §quantizeLinear: saturate(roundEven(x / scale) + zeroPoint) in zeroPoint's type.

    ``x / scale`` is the spec's div() in the input's type (its emulation is
    roundEven(div(input, scale))), so the quotient is rounded to float32 / float16 (NumPy's IEEE
    division) before roundEven, as in ONNX's QuantizeLinear; roundEven, the zeroPoint's addition
    and the saturation are exact (float64).
    """
    x = np.asarray(x)
    s = blockwise_expand(np.asarray(scale, x.dtype), x.shape)
    z = blockwise_expand(zero_point, x.shape).astype(np.float64)
    lo, hi = INT_RANGE[zero_point.dtype.name]
    with np.errstate(all="ignore"):
        q = np.rint((x / s).astype(np.float64)) + z
    q = np.where(np.isnan(q), z, q)
    return np.clip(q, lo, hi).astype(zero_point.dtype)
