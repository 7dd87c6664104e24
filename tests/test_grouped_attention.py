"""Grouped-query attention as ORT's WebNN EP writes GroupQueryAttention (compile/attention.js
sharedHeads): K and V are the cache's kvH heads expanded to the H query heads (reshape -> expand ->
reshape, K then transposed); the fused attention step reads the cache itself, query head h from
K/V head h / g, and the expands are no steps of their own. Values against float64 NumPy; near
misses (an expanded K read elsewhere) keep their expand steps, with the same values."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.test_quantized_matmul import _op

pytestmark = pytest.mark.shared_page

SEED = 20261208


def gqa_case(tag, *, heads=4, kv_heads=2, rows=3, length=5, d=8, expose_k=False):
    rng = np.random.default_rng(SEED + heads + rows)
    g = heads // kv_heads
    q = rng.standard_normal((1, heads, rows, d)).astype(np.float32)
    kc = rng.standard_normal((1, kv_heads, length, d)).astype(np.float32)
    vc = rng.standard_normal((1, kv_heads, length, d)).astype(np.float32)
    mask = np.where(rng.random((1, 1, rows, length)) < 0.2, -np.inf, 0).astype(np.float32)
    mask[..., 0] = 0  # every row keeps a key
    scale = np.float32(1 / np.sqrt(d))
    ops = [
        _op("reshape", ["kc", [1, kv_heads, 1, length, d]], "k1"), _op("expand", ["k1", [1, kv_heads, g, length, d]], "k2"),
        _op("reshape", ["k2", [1, heads, length, d]], "k3"), _op("transpose", ["k3"], "kt", permutation=[0, 1, 3, 2]),
        _op("reshape", ["vc", [1, kv_heads, 1, length, d]], "v1"), _op("expand", ["v1", [1, kv_heads, g, length, d]], "v2"),
        _op("reshape", ["v2", [1, heads, length, d]], "v3"),
        _op("matmul", ["q", "kt"], "s0"), _op("mul", ["s0", "scale"], "s1"), _op("add", ["s1", "mask"], "s2"),
        _op("softmax", ["s2", 3], "p"), _op("matmul", ["p", "v3"], "y"),
    ]
    k = np.repeat(kc.astype(np.float64), g, axis=1)
    v = np.repeat(vc.astype(np.float64), g, axis=1)
    s = (q.astype(np.float64) @ k.transpose(0, 1, 3, 2)) * float(scale) + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = p @ v
    outputs = ["y"]
    expected = {"y": tensor(y, "float32")}
    if expose_k:
        outputs.append("k3")
        expected["k3"] = tensor(k, "float32")
    graph = {"inputs": {"q": describe(q), "kc": describe(kc), "vc": describe(vc)},
             "constants": {"scale": tensor(np.array(scale), "float32"), "mask": tensor(mask, "float32")},
             "operators": ops, "outputs": outputs}
    feeds = {"q": tensor(q, "float32"), "kc": tensor(kc, "float32"), "vc": tensor(vc, "float32")}
    return graph_case(f"grouped-attention/{tag}", "matmul", "float32", graph, feeds, expected, "ATOL", 2e-6)


def test_grouped_attention_reads_the_cache(webnn_page, server_url):
    cases = [gqa_case("4-over-2"), gqa_case("6-over-2-one-row", heads=6, rows=1, length=9), gqa_case("8-over-1", heads=8, kv_heads=1)]
    results = run_cases(webnn_page, server_url, cases, {"attention": True}, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert len(r["steps"]) == 1, (c["name"], r["steps"])
        assert r["steps"][0].count("expand") == 2 and "softmax" in r["steps"][0], (c["name"], r["steps"])


def test_an_expanded_k_read_elsewhere_keeps_its_steps(webnn_page, server_url):
    [r] = run_cases(webnn_page, server_url, [gqa_case("k-exposed", expose_k=True)], {"attention": True}, steps=True)
    assert_all_pass([r])
    assert ["expand"] in r["steps"], r["steps"]
