"""Packed-weight sibling products (compile/siblings.js quantMember, ops/merged_matmul.js): MatMulNBits
products of one input as ORT's WebNN EP writes them (a decoder layer's q, k and v) become one
product over their concatenated packed weights, scales and zero points; each result is a column
range read in place. Values against float64 NumPy (dyadic data: exact in float32) for one row
(the packed matrix-vector kernel) and several (the tiled kernels), 4-bit zero points whose
concatenation straddles bytes, 8-bit without zero points, each product with a bias add (an
encoder's MatMulNBits + Add as onnxruntime's quantizer writes them: the biases concatenated too);
the step list."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.test_quantized_matmul import INT_RANGE, _op, _weights

pytestmark = pytest.mark.shared_page

SEED = 20261209


def siblings_case(tag, *, wtype, rows, widths, k=64, block=64, zero=True, bias=False):
    rng = np.random.default_rng(SEED + rows + len(widths))
    blocks = k // block
    a = (rng.integers(-8, 9, (1, rows, k)) / 8).astype(np.float32)
    lo, hi = INT_RANGE[wtype]
    constants, ops, expected = {}, [], {}
    for j, n in enumerate(widths):
        w = rng.integers(lo, hi + 1, (n, blocks, block))
        s = (2.0 ** -rng.integers(3, 7, (n * blocks,))).astype(np.float32)
        z = rng.integers(lo, hi + 1, (n, blocks, 1)) if zero else np.zeros((n, blocks, 1), np.int64)
        constants[f"w{j}"] = _weights(w, wtype)
        constants[f"s{j}"] = tensor(s, "float32")
        constants[f"z{j}"] = _weights(z, wtype)
        ops += [_op("reshape", [f"s{j}", [n, blocks, 1]], f"sr{j}"),
                _op("dequantizeLinear", [f"w{j}", f"sr{j}", f"z{j}"], f"d{j}"),
                _op("reshape", [f"d{j}", [n, k]], f"dr{j}"), _op("transpose", [f"dr{j}"], f"t{j}"),
                _op("matmul", ["a", f"t{j}"], f"p{j}" if bias else f"y{j}")]
        deq = ((w - z).astype(np.float64) * s.reshape(n, blocks, 1)).reshape(n, k)
        y = a.astype(np.float64) @ deq.T
        if bias:
            b = (rng.integers(-64, 65, n) / 16).astype(np.float32)
            constants[f"b{j}"] = tensor(b, "float32")
            ops.append(_op("add", [f"p{j}", f"b{j}"], f"y{j}"))
            y = y + b
        expected[f"y{j}"] = tensor(y, "float32")
    graph = {"inputs": {"a": describe(a)}, "constants": constants, "operators": ops, "outputs": list(expected)}
    return graph_case(f"quantized-siblings/{wtype}/{tag}", "matmul", "float32", graph, {"a": tensor(a, "float32")},
                      expected, "ATOL", 0)


def cases():
    return [siblings_case("uint4-one-row-odd-zero-points", wtype="uint4", rows=1, widths=[3, 5, 7]),
            siblings_case("uint4-rows", wtype="uint4", rows=5, widths=[24, 8, 8], block=32),
            siblings_case("int8-no-zero-point", wtype="int8", rows=1, widths=[16, 4], block=32, zero=False),
            siblings_case("uint4-rows-bias", wtype="uint4", rows=6, widths=[8, 8, 16], block=32, bias=True),
            siblings_case("int4-one-row-bias", wtype="int4", rows=1, widths=[5, 3], bias=True)]


@pytest.mark.parametrize("plan", ["own", "hardware"])
def test_packed_siblings_are_one_product(webnn_page, server_url, plan):
    tuning = {"adapterInfo": {"vendor": "nvidia", "architecture": "hopper", "description": "",
                              "isFallbackAdapter": False}} if plan == "hardware" else None
    cs = cases()
    results = run_cases(webnn_page, server_url, cs, tuning, steps=True)
    assert_all_pass(results)
    for c, r in zip(cs, results):
        members = len(c["graph"]["outputs"])
        # one product for every member (its step names them all), then each member's columns
        # copied out as its graph output (a step named by that member's matmul)
        biased = c["name"].endswith("-bias")
        assert r["steps"][0].count("matmul") == members and r["steps"][0].count("dequantizeLinear") == members, r["steps"]
        assert r["steps"][0].count("add") == (members if biased else 0), r["steps"]
        assert r["steps"][1:] == [["matmul"]] * members, (c["name"], r["steps"])
