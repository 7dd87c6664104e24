"""Encoding of tensors and cases for the conformance suite.

A tensor travels as ``{"dataType": MLOperandDataType, "shape": [...], "bytes": base64}`` where
``bytes`` are the little-endian raw elements (float16 as IEEE binary16, int64 as 8 bytes), so NaN,
±Inf, -0, subnormals and 64-bit integers survive exactly.
"""
from __future__ import annotations

import numpy as np

from tests.graph_runner import DTYPES as NUMPY_DTYPES
from tests.graph_runner import decode_tensor as decode
from tests.graph_runner import encode_tensor


def to_type(values, data_type: str) -> np.ndarray:
    """Rounds float64 (or integer) reference values to ``data_type`` as the spec's cast does for
    floats (round to nearest even, overflow to ±Inf). Integers must already be in range."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values).astype(NUMPY_DTYPES[data_type])


#: The quiet NaN every expected float output is written with (float32 / float16 bit patterns).
CANONICAL_NAN = {"float32": np.uint32(0x7FC00000), "float16": np.uint16(0x7E00)}


def canonical_nans(encoded: dict) -> dict:
    """``encoded`` (a tensor record) with every float32/float16 NaN rewritten as
    :data:`CANONICAL_NAN`. Expected outputs go through this: WebNN leaves NaN's sign and payload
    open (the comparator only asks NaN to meet NaN), while NumPy's sign of a NaN such as
    ``log(-1)`` depends on the CPU's SIMD path (0xffc00000 on one machine, 0x7fc00000 on
    another), which would make the committed JSON differ by machine."""
    if encoded["dataType"] not in CANONICAL_NAN:
        return encoded
    values = decode(encoded)
    if not np.isnan(values).any():
        return encoded
    bits = values.view(CANONICAL_NAN[encoded["dataType"]].dtype).copy()
    bits[np.isnan(values)] = CANONICAL_NAN[encoded["dataType"]]
    return encode_tensor(bits.view(values.dtype))


def tensor(values, data_type: str, shape=None) -> dict:
    """Encodes ``values`` as a tensor record of ``data_type`` (cast with :func:`to_type`)."""
    arr = to_type(values, data_type)
    if shape is not None:
        arr = arr.reshape(shape)
    return encode_tensor(arr)


__all__ = ["NUMPY_DTYPES", "decode", "to_type", "tensor", "operand", "graph_case", "validation_case"]


def operand(name: str) -> dict:
    """An operand reference in a graph description."""
    return {"operand": name}


def graph_case(name: str, op: str, data_type: str, graph: dict, inputs: dict, expected: dict,
               metric: str, value: float) -> dict:
    """A graph case record: what static/conformance/runner.js builds, runs and compares."""
    return {
        "name": name,
        "op": op,
        "dataType": data_type,
        "graph": graph,
        "inputs": inputs,
        "expected": expected,
        "tolerance": {"metric": metric, "value": value},
    }


def validation_case(name: str, op: str, js: str, error: str, label: str | None = None) -> dict:
    """A validation case: ``js`` is ``(builder, context) => ...`` and must throw ``error``."""
    case = {"name": name, "op": op, "js": js, "error": error}
    if label is not None:
        case["label"] = label
    return case
