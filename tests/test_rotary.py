"""The rotary embedding as ORT's WebNN EP writes it for GroupQueryAttention (compile/rotary.js,
ops/rotary.js): reshape to [..., 2, half], split, the halves concatenated swapped, multiplied by
cos, sin and a sign constant, added: one rotaryEmbedding step. Values against float64 NumPy
rounded as the unfused float32 operators round, in either operand order, with cos / sin gathered
at positions or given as inputs, a sign other than (-1, 1); and the near misses that stay unfused
(an intermediate read elsewhere, halves not swapped) with their values.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, operand, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.test_quantized_matmul import _op

pytestmark = pytest.mark.shared_page

SEED = 20261207
F32 = np.float32


def rotary_case(tag, *, heads=4, seq=3, half=8, positions=True, swap_operands=False, sign=(-1.0, 1.0),
                also_output=None, swapped_halves=True):
    """y = add(reshape(mul(xr, cos)), reshape(mul(mul(concat(split(xr) swapped), sin), sign)))."""
    rng = np.random.default_rng(SEED + len(tag))
    x = rng.standard_normal((1, seq, heads, 2 * half)).astype(F32)
    table_len = 16
    cos_t = np.cos(rng.random((table_len, half)) * 6).astype(F32)
    sin_t = np.sin(rng.random((table_len, half)) * 6).astype(F32)
    pos = np.array([[5, 0, 15][:seq]], np.int64)
    constants = {"sign": tensor(np.array(sign, F32).reshape(1, 1, 2, 1), "float32")}
    inputs = {"x": describe(x)}
    feeds = {"x": tensor(x, "float32")}
    ops = [_op("reshape", ["x", [1, seq, heads, 2, half]], "xr")]
    if positions:
        constants["cos_t"] = tensor(cos_t, "float32")
        constants["sin_t"] = tensor(sin_t, "float32")
        inputs["pos"] = {"dataType": "int64", "shape": [1, seq]}
        feeds["pos"] = tensor(pos, "int64")
        ops += [_op("gather", ["cos_t", "pos"], "cg"), _op("gather", ["sin_t", "pos"], "sg"),
                _op("reshape", ["cg", [1, seq, 1, 1, half]], "cos"), _op("reshape", ["sg", [1, seq, 1, 1, half]], "sin")]
        cos = cos_t[pos[0]].reshape(1, seq, 1, 1, half)
        sin = sin_t[pos[0]].reshape(1, seq, 1, 1, half)
    else:
        cos = cos_t[:seq].reshape(seq, 1, 1, half)
        sin = sin_t[:seq].reshape(seq, 1, 1, half)
        inputs["cos"], inputs["sin"] = describe(cos), describe(sin)
        feeds["cos"], feeds["sin"] = tensor(cos, "float32"), tensor(sin, "float32")
    order = (lambda a, b: [b, a]) if swap_operands else (lambda a, b: [a, b])
    ops += [_op("split", ["xr", 2], ["x1", "x2"], axis=3),
            _op("concat", [[operand(n) for n in (["x2", "x1"] if swapped_halves else ["x1", "x2"])], 3], "sw"),
            _op("mul", order("xr", "cos"), "a"), _op("mul", order("sw", "sin"), "b"),
            _op("mul", order("b", "sign"), "c"),
            _op("reshape", ["a", [1, seq, heads, 2 * half]], "ra"), _op("reshape", ["c", [1, seq, heads, 2 * half]], "rc"),
            _op("add", order("ra", "rc"), "y")]
    xr = x.reshape(1, seq, heads, 2, half).astype(np.float64)
    sw = np.concatenate([xr[..., 1:, :], xr[..., :1, :]] if swapped_halves else [xr[..., :1, :], xr[..., 1:, :]], axis=3)
    r32 = lambda v: np.asarray(v, np.float64).astype(F32).astype(np.float64)  # noqa: E731
    a = r32(xr * cos)
    c = r32(r32(sw * sin) * np.array(sign, np.float64).reshape(1, 1, 2, 1))
    y = r32(a.reshape(x.shape) + c.reshape(x.shape))
    expected = {"y": tensor(y, "float32")}
    outputs = ["y"]
    if also_output:
        outputs.append(also_output)
        expected[also_output] = tensor({"a": a, "c": c}[also_output], "float32")
    graph = {"inputs": inputs, "constants": constants, "operators": ops, "outputs": outputs}
    return graph_case(f"rotary/{tag}", "add", "float32", graph, feeds, expected, "ATOL", 1e-6)


def test_rotary_is_one_step(webnn_page, server_url):
    cases = [rotary_case("gqa-query"), rotary_case("key-2-heads", heads=2, half=16),
             rotary_case("operands-swapped", swap_operands=True), rotary_case("cos-sin-inputs", positions=False),
             rotary_case("other-sign", sign=(-0.5, 2.0)), rotary_case("one-position", seq=1)]
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        rotary = [s for s in r["steps"] if "split" in s]
        assert rotary == [["split", "concat", "mul", "mul", "mul", "reshape", "reshape", "add"]], (c["name"], r["steps"])
        assert len(r["steps"]) == (3 if "gather" in str(c["graph"]["operators"]) else 1), (c["name"], r["steps"])


def test_near_misses_stay_unfused(webnn_page, server_url):
    cases = [rotary_case("a-also-output", also_output="a"), rotary_case("halves-not-swapped", swapped_halves=False)]
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert ["split"] in r["steps"], (c["name"], r["steps"])
