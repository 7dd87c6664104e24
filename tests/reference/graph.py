"""Interpret a JSON graph description (see notes/common.md) with the float64 ops.

The description has ``inputs`` and ``constants`` (name -> {dataType, shape,
and for data either ``offset``/``byteLength`` into a weights file or inline
base64 ``bytes``}), ``operators`` (each {op, args, options, outputs}) and
``outputs``. An argument or option written ``{"operand": name}`` is the value
of that operand; a list of such (concat) becomes a list of arrays.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from . import ops

#: MLOperandDataType -> little-endian NumPy dtype
DATA_TYPES = {
    "float32": "<f4", "float16": "<f2", "int32": "<i4", "uint32": "<u4",
    "int64": "<i8", "uint64": "<u8", "int8": "i1", "uint8": "u1",
}

#: ops whose scalar options the spec casts to the operand's dataType
_TAKES_DATA_TYPE = frozenset({"clamp", "gemm"})


def decode_operand(spec: Mapping[str, Any], blob: bytes | None = None) -> np.ndarray:
    """Decode one operand's data from its description.

    ``spec`` has ``dataType`` and ``shape`` and either ``bytes`` (base64 of
    little-endian raw data) or ``offset``/``byteLength`` into ``blob`` (the
    contents of weights.bin). Returns an array of the declared type and shape.
    """
    dtype = np.dtype(DATA_TYPES[spec["dataType"]])
    if "bytes" in spec:
        raw = base64.b64decode(spec["bytes"])
    elif blob is not None and "offset" in spec:
        raw = blob[spec["offset"]:spec["offset"] + spec["byteLength"]]
    else:
        raise KeyError("operand has neither 'bytes' nor 'offset' into a weights blob")
    return np.frombuffer(raw, dtype=dtype).reshape(spec["shape"])


def load_manifest_constants(manifest_path: str | Path) -> dict[str, np.ndarray]:
    """Read every constant of a model manifest from the weights file it names."""
    manifest_path = Path(manifest_path)
    manifest = json.loads(manifest_path.read_text())
    blob = (manifest_path.parent / manifest["weights"]).read_bytes()
    return {name: decode_operand(spec, blob) for name, spec in manifest["constants"].items()}


def _as_reference(array: np.ndarray) -> np.ndarray:
    """Float data becomes float64; integer data keeps its type."""
    array = np.asarray(array)
    return array.astype(np.float64) if array.dtype.kind == "f" else array


def _resolve(value: Any, env: Mapping[str, np.ndarray]) -> Any:
    """Replace ``{"operand": name}`` (also inside lists) by the operand's array."""
    if isinstance(value, dict) and set(value) == {"operand"}:
        return env[value["operand"]]
    if isinstance(value, list) and value and all(isinstance(v, dict) and set(v) == {"operand"} for v in value):
        return [env[v["operand"]] for v in value]
    return value


def run_description(desc: Mapping[str, Any], constants: Mapping[str, np.ndarray] | None = None,
                    inputs: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Evaluate the graph ``desc`` in float64 and return {output name: array}.

    ``constants`` and ``inputs`` map operand names to arrays (any numeric
    dtype; floats are promoted to float64). A constant or input missing from
    them is decoded from its inline ``bytes`` in ``desc``. Raises KeyError for
    an unknown operand or op, ValueError for shapes an op refuses.
    """
    constants, inputs = dict(constants or {}), dict(inputs or {})
    env: dict[str, np.ndarray] = {}
    data_types: dict[str, str] = {}
    for section, given in (("constants", constants), ("inputs", inputs)):
        for name, spec in desc.get(section, {}).items():
            array = given[name] if name in given else decode_operand(spec)
            if tuple(np.shape(array)) != tuple(spec["shape"]):
                raise ValueError(f"{section[:-1]} {name}: shape {np.shape(array)} != declared {spec['shape']}")
            env[name] = _as_reference(array)
            data_types[name] = spec["dataType"]
    for operator in desc["operators"]:
        if operator["op"] not in ops.OPERATORS:
            raise KeyError(f"no reference for operator {operator['op']!r}")
        fn = getattr(ops, operator["op"])
        args = [_resolve(arg, env) for arg in operator.get("args", [])]
        options = {key: _resolve(value, env) for key, value in operator.get("options", {}).items()}
        first = next((a["operand"] for a in operator.get("args", []) if isinstance(a, dict) and "operand" in a),
                     None)
        extra = {"data_type": data_types.get(first, "float32")} if operator["op"] in _TAKES_DATA_TYPE else {}
        result = fn(*args, options=options, **extra)
        names = operator["outputs"]
        if isinstance(names, str):
            names, result = [names], [result]
        for name, value in zip(names, result, strict=True):
            env[name] = value
            data_types[name] = data_types.get(first, "float32")
    return {name: env[name] for name in desc["outputs"]}
