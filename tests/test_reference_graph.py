"""tests.reference.graph: interpreting the JSON graph description with the float64 ops."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from tests.reference.graph import decode_operand, run_description


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()


DESCRIPTION = {
    "inputs": {"x": {"dataType": "float32", "shape": [1, 2]}},
    "constants": {
        "w": {"dataType": "float32", "shape": [3, 2], "bytes": _b64(np.array([[1, 0], [0, 1], [1, 1]], "<f4"))},
        "b": {"dataType": "float32", "shape": [3], "bytes": _b64(np.array([0.5, 0.5, -100], "<f4"))},
    },
    "operators": [
        {"op": "gemm", "args": [{"operand": "x"}, {"operand": "w"}],
         "options": {"c": {"operand": "b"}, "bTranspose": True}, "outputs": "y"},
        {"op": "clamp", "args": [{"operand": "y"}], "options": {"minValue": 0, "maxValue": 6}, "outputs": "z"},
        {"op": "concat", "args": [[{"operand": "z"}, {"operand": "x"}], 1], "outputs": "cat"},
        {"op": "reshape", "args": [{"operand": "cat"}, [5, 1]], "outputs": "out"},
    ],
    "outputs": ["z", "out"],
}


def test_run_description_values():
    result = run_description(DESCRIPTION, inputs={"x": np.array([[2.0, 7.0]], dtype=np.float32)})
    # y = [2.5, 7.5, -91] -> clamp -> [2.5, 6, 0]
    np.testing.assert_array_equal(result["z"], [[2.5, 6, 0]])
    np.testing.assert_array_equal(result["out"], [[2.5], [6], [0], [2], [7]])
    assert result["out"].dtype == np.float64
    assert set(result) == {"z", "out"}


def test_given_constants_override_inline_bytes():
    result = run_description(DESCRIPTION, constants={"b": np.zeros(3)}, inputs={"x": np.array([[1.0, 1.0]])})
    np.testing.assert_array_equal(result["z"], [[1, 1, 2]])


def test_inputs_from_inline_bytes():
    desc = {**DESCRIPTION, "inputs": {"x": {"dataType": "float32", "shape": [1, 2],
                                            "bytes": _b64(np.array([[1, 2]], "<f4"))}}}
    np.testing.assert_array_equal(run_description(desc)["z"], [[1.5, 2.5, 0]])


def test_decode_operand_types_and_offsets():
    blob = b"\0" * 4 + np.array([1, -2], "<i8").tobytes()
    spec = {"dataType": "int64", "shape": [2], "offset": 4, "byteLength": 16}
    np.testing.assert_array_equal(decode_operand(spec, blob), [1, -2])
    half = {"dataType": "float16", "shape": [1], "bytes": _b64(np.array([0.5], "<f2"))}
    assert decode_operand(half)[0] == 0.5


def test_errors():
    with pytest.raises(ValueError, match="shape"):
        run_description(DESCRIPTION, inputs={"x": np.ones((2, 1))})
    unknown = {**DESCRIPTION, "operators": [{"op": "fancyOp", "args": [{"operand": "x"}], "outputs": "y"}],
               "outputs": ["y"]}
    with pytest.raises(KeyError, match="fancyOp"):
        run_description(unknown, inputs={"x": np.ones((1, 2))})
