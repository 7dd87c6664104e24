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
    """A graph case record (see /work/notes or tests/conformance/README)."""
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
