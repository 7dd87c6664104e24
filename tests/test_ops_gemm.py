"""gemm and matmul (spec §gemm, §matmul) in the browser against the float64 NumPy reference.

The systematic cases (every option, broadcast shapes, skinny and tiled kernels, NaN/Inf, the
validation errors) are the conformance cases of tests/conformance/cases/gemm.py, run here on one
context per test; tolerances are those of tolerances.md (see that module). The larger shapes
below would bloat the shipped case files, so they are generated here.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conformance.cases import gemm as gemm_cases
from tests.conformance.cases.gemm import no_cancel
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_batch import run_graphs
from tests.reference.ops import gemm, matmul
from tests.tolerance import assert_ulp


@pytest.mark.parametrize("kernel", [None, "blocked", "tiled", "tiled128", "gemv"])
def test_graph_cases(webnn_page, server_url, kernel):
    """Every graph case within its ULP bound, with the kernel the adapter picks and with each
    matrix kernel forced (the context's kernelOverrides slot)."""
    overrides = {"matmul": kernel} if kernel else None
    cases = gemm_cases.graph_cases()
    if kernel == "tiled128":  # slow on SwiftShader: the transposed layouts, batches, C and NaN
        cases = [c for c in cases if re.search(r"aT1-bT1|\[2,1,3\]-5x6|c-6x10-alpha|nan-inf|vec4|70x8|33x20", c["name"])]
    assert_all_pass(run_cases(webnn_page, server_url, cases, overrides))


def test_validation_cases(webnn_page, server_url):
    """Invalid ranks, shapes, data types and options throw a TypeError naming the label."""
    assert_all_pass(run_cases(webnn_page, server_url, gemm_cases.validation_cases()))


def _inputs(arrays):
    return {n: {"dataType": "float32", "shape": list(v.shape)} for n, v in arrays.items()}


def test_large_shapes(webnn_page, server_url):
    """The EfficientNet classifier (gemm [1, 1280] x [1000, 1280]^T + c[1000]), a tiled gemm of
    several tiles each way with both operands transposed, and a chain of two matmuls (the
    intermediate in a pooled buffer)."""
    rng = np.random.default_rng(11)
    a1, b1 = no_cancel(rng, 1, 1280, 1000)
    c1 = (rng.uniform(0.1, 1.0, 1000) * np.sign(a1[0, 0] * b1[0])).astype(np.float32)
    b1t = np.ascontiguousarray(b1.T)
    classifier = {
        "inputs": _inputs({"a": a1, "b": b1t, "c": c1}),
        "operators": [{"op": "gemm", "args": [{"operand": "a"}, {"operand": "b"}],
                       "options": {"c": {"operand": "c"}, "bTranspose": True}, "outputs": "y"}],
        "outputs": ["y"],
    }
    a2, b2 = no_cancel(rng, 130, 257, 141)
    a2t, b2t = np.ascontiguousarray(a2.T), np.ascontiguousarray(b2.T)
    tiled = {
        "inputs": _inputs({"a": a2t, "b": b2t}),
        "operators": [{"op": "gemm", "args": [{"operand": "a"}, {"operand": "b"}],
                       "options": {"aTranspose": True, "bTranspose": True, "alpha": 0.5}, "outputs": "y"}],
        "outputs": ["y"],
    }
    a3 = rng.uniform(0.1, 1, (3, 70, 130)).astype(np.float32)
    b3 = rng.uniform(0.1, 1, (130, 66)).astype(np.float32)
    c3 = rng.uniform(0.1, 1, (3, 66, 5)).astype(np.float32)
    chain = {
        "inputs": _inputs({"a": a3, "b": b3, "c": c3}),
        "operators": [
            {"op": "matmul", "args": [{"operand": "a"}, {"operand": "b"}], "outputs": "ab"},
            {"op": "matmul", "args": [{"operand": "ab"}, {"operand": "c"}], "outputs": "y"},
        ],
        "outputs": ["y"],
    }
    out = run_graphs(webnn_page, server_url, [
        (classifier, {"a": a1, "b": b1t, "c": c1}),
        (tiled, {"a": a2t, "b": b2t}),
        (chain, {"a": a3, "b": b3, "c": c3}),
    ])
    assert_ulp(out[0]["y"], gemm(a1, b1t, {"c": c1, "bTranspose": True}), 2 * 1280 + 1, np.float32)
    assert_ulp(out[1]["y"], gemm(a2t, b2t, {"aTranspose": True, "bTranspose": True, "alpha": 0.5}), 2 * 257 + 1, np.float32)
    assert_ulp(out[2]["y"], matmul(matmul(a3, b3), c3), 2 * 130 + 2 * 66, np.float32)
