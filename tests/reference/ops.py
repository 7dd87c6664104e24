"""Float64 NumPy reference implementations of WebNN operators.

Each function is named after the ``MLGraphBuilder`` method, takes the method's
positional arguments as NumPy arrays / Python values and its options as a dict
keyed by the spec's dictionary member names (``MLConv2dOptions`` etc.), applies
the spec's defaults, and returns a float64 array (integer inputs stay integer
for the data-movement and binary ops). The spec is
the WebNN spec; section names are cited per function.
Shape errors raise ``ValueError`` (the polyfill raises ``TypeError``; the
reference only has to refuse to compute nonsense).

Where the spec text is self-contradictory the obvious intent is followed:
* clamp: the spec's prose defaults minValue to Infinity and maxValue to
  -Infinity (swapped); the reference uses -inf / +inf, i.e. no clamping.
* averagePool2d: elements in the padding (or past the input for "ceil"
  rounding) are excluded from the average, as in WPT and webnn-baseline.
"""

from __future__ import annotations

import numpy as np

# The conv2d / pool2d family lives in its own module; re-exported here so that
# callers use one namespace.
from .pool_conv import averagePool2d, conv2d, l2Pool2d, maxPool2d  # noqa: F401

#: the builder methods this module implements (the graph interpreter's registry)
OPERATORS = frozenset({
    "add", "sub", "mul", "div", "max", "min", "pow", "clamp", "relu", "sigmoid", "tanh",
    "conv2d", "averagePool2d", "l2Pool2d", "maxPool2d", "reshape", "transpose", "concat",
    "gemm", "matmul", "softmax",
})

FLOAT_TYPES = {"float32": np.float32, "float16": np.float16}


def as_float64(x) -> np.ndarray:
    """Return ``x`` as a float64 ndarray (a copy only when needed)."""
    return np.asarray(x, dtype=np.float64)


def _cast_scalar(value: float, data_type: str) -> float:
    """Cast an MLNumber to ``data_type`` (spec: "casting"), back as a Python float."""
    dtype = FLOAT_TYPES.get(data_type)
    return float(dtype(value)) if dtype is not None else float(value)


def _check_broadcastable(*shapes) -> tuple[int, ...]:
    """Bidirectional broadcast of ``shapes`` (numpy rule); ValueError if impossible."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"shapes {shapes} are not bidirectionally broadcastable") from None


# --- element-wise binary (spec: "Element-wise binary operations") ------------

def _binary(a, b, fn):
    """Apply ``fn`` with numpy broadcasting after checking the shapes."""
    a, b = np.asarray(a), np.asarray(b)
    _check_broadcastable(a.shape, b.shape)
    with np.errstate(all="ignore"):
        return fn(a, b)


def _to_float_or_int(a, b):
    """Promote to float64 unless both operands are integer arrays."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return a, b
    return as_float64(a), as_float64(b)


def _divide(a, b):
    """Division; integer types are truncated toward zero (spec: *div*)."""
    if a.dtype.kind in "iu":
        quotient = np.abs(a) // np.where(b == 0, 1, np.abs(b))
        return np.where(np.sign(a) * np.sign(b) < 0, -quotient, quotient)
    return a / b


def add(a, b, options=None):
    """a + b with broadcasting."""
    return _binary(*_to_float_or_int(a, b), np.add)


def sub(a, b, options=None):
    """a - b with broadcasting."""
    return _binary(*_to_float_or_int(a, b), np.subtract)


def mul(a, b, options=None):
    """a * b with broadcasting."""
    return _binary(*_to_float_or_int(a, b), np.multiply)


def div(a, b, options=None):
    """a / b with broadcasting; integers truncate toward zero."""
    return _binary(*_to_float_or_int(a, b), _divide)


def max(a, b, options=None):  # noqa: A001 - spec name
    """Element-wise maximum with broadcasting (NaN propagates)."""
    return _binary(*_to_float_or_int(a, b), np.maximum)


def min(a, b, options=None):  # noqa: A001 - spec name
    """Element-wise minimum with broadcasting (NaN propagates)."""
    return _binary(*_to_float_or_int(a, b), np.minimum)


def pow(a, b, options=None):  # noqa: A001 - spec name
    """a ** b with broadcasting (float64; negative base with fractional exponent -> NaN)."""
    return _binary(as_float64(a), as_float64(b), np.power)


# --- element-wise unary / activations -----------------------------------------

def clamp(input, options=None, data_type="float32"):
    """Spec "clamp": min(max(input, minValue), maxValue).

    ``options``: ``MLClampOptions`` {minValue, maxValue}; missing bounds do not
    clamp. Bounds are cast to ``data_type`` first, as the spec says. Raises
    ValueError when minValue > maxValue.
    """
    options = options or {}
    low = _cast_scalar(options.get("minValue", -np.inf), data_type)
    high = _cast_scalar(options.get("maxValue", np.inf), data_type)
    if low > high:
        raise ValueError(f"clamp: minValue {low} > maxValue {high}")
    x = as_float64(input)
    return np.minimum(np.maximum(x, low), high)


def relu(input, options=None):
    """Spec "relu": max(0, x)."""
    return np.maximum(as_float64(input), 0.0)


def sigmoid(input, options=None):
    """Spec "sigmoid": 1 / (exp(-x) + 1)."""
    with np.errstate(over="ignore"):
        return 1.0 / (np.exp(-as_float64(input)) + 1.0)


def tanh(input, options=None):
    """Spec "tanh": hyperbolic tangent."""
    return np.tanh(as_float64(input))


# --- data movement ----------------------------------------------------------------

def reshape(input, newShape, options=None):
    """Spec "reshape": same elements in row-major order, shape ``newShape`` (no -1)."""
    x = np.asarray(input)
    shape = tuple(int(d) for d in newShape)
    if any(d <= 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ValueError(f"reshape: cannot reshape {x.shape} to {shape}")
    return x.reshape(shape)


def transpose(input, options=None):
    """Spec "transpose": permute axes by ``permutation`` (default: reversed)."""
    x = np.asarray(input)
    perm = (options or {}).get("permutation")
    if perm is None:
        perm = list(range(x.ndim))[::-1]
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: bad permutation {perm} for rank {x.ndim}")
    return np.transpose(x, perm)


def concat(inputs, axis, options=None):
    """Spec "concat": join ``inputs`` (same rank, same dims except ``axis``) along ``axis``."""
    arrays = [np.asarray(x) for x in inputs]
    if not arrays or axis >= arrays[0].ndim:
        raise ValueError("concat: need inputs and axis < rank")
    first = arrays[0]
    for x in arrays[1:]:
        if x.ndim != first.ndim or any(
                x.shape[d] != first.shape[d] for d in range(x.ndim) if d != axis):
            raise ValueError(f"concat: shapes {[a.shape for a in arrays]} differ off axis {axis}")
    return np.concatenate(arrays, axis=axis)


# --- matrix products and softmax ------------------------------------------------

def gemm(a, b, options=None, data_type="float32"):
    """Spec "gemm": alpha * A' * B' + beta * C for 2-D ``a`` and ``b``.

    ``options``: ``MLGemmOptions`` {c, alpha=1, beta=1, aTranspose=false,
    bTranspose=false}; ``c`` must be unidirectionally broadcastable to [M, N].
    alpha and beta are cast to ``data_type`` as the spec says.
    """
    options = options or {}
    a, b = as_float64(a), as_float64(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("gemm: a and b must be 2-D")
    if options.get("aTranspose", False):
        a = a.T
    if options.get("bTranspose", False):
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm: inner dimensions {a.shape} x {b.shape} differ")
    alpha = _cast_scalar(options.get("alpha", 1.0), data_type)
    beta = _cast_scalar(options.get("beta", 1.0), data_type)
    result = alpha * (a @ b)
    if options.get("c") is not None:
        c = as_float64(options["c"])
        out_shape = (a.shape[0], b.shape[1])
        if _check_broadcastable(c.shape, out_shape) != out_shape:
            raise ValueError(f"gemm: c {c.shape} is not unidirectionally broadcastable to {out_shape}")
        result = result + beta * c
    return result


def matmul(a, b, options=None):
    """Spec "matmul": batched matrix product of tensors of rank >= 2.

    The batch dimensions (all but the last two) broadcast bidirectionally; the
    output shape is broadcast(batchA, batchB) + [rowsA, colsB]. Rank < 2 is
    refused (the spec requires at least 2-D inputs).
    """
    a, b = as_float64(a), as_float64(b)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError("matmul: inputs must be at least 2-D")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: {a.shape} x {b.shape} inner dimensions differ")
    _check_broadcastable(a.shape[:-2], b.shape[:-2])
    return np.matmul(a, b)


def softmax(input, axis, options=None):
    """Spec "softmax": exp(x - max) / sum(exp(x - max)) along ``axis`` (< rank)."""
    x = as_float64(input)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"softmax: axis {axis} out of range for rank {x.ndim}")
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)
