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
from tests.graph_runner import open_harness
from tests.reference.ops import gemm, matmul
from tests.tolerance import assert_ulp

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


_TILED_SKIP = re.compile(r"/(1x1x1|2x3x4|13x17x3|3x40x2|5x7x9)-aT(0-bT[01]|1-bT0)$|\]-1x40x9$"
                         r"|c-(1x1|1|scalar|6x1|10)(-alpha-beta)?$|skinny-(2x1x33|1x5x1|100x37x1)")


@pytest.mark.parametrize("kernel", [None, "blocked", "tiled", "tiled128", "gemv", "tiled-split"])
def test_graph_cases(webnn_page, server_url, kernel):
    """Every graph case within its ULP bound, with the kernel the adapter picks and with each
    matrix kernel forced (the context's tuning switches); tiled-split is the tiled kernel
    with K split three ways (where K allows) and the partial sums added by the reduce step (the
    128x128 kernel's split: test_split_k_wide_tiles)."""
    overrides = {"matmul": kernel} if kernel else None
    if kernel == "tiled-split":
        overrides = {"matmul": "tiled", "splitK": 3}
    cases = gemm_cases.graph_cases()
    if kernel == "tiled":  # every case but the small transposes, C broadcasts (the epilogue's,
        # run by every kernel) and M = 1 products that the other kernels cover: each tiled
        # variant takes 0.3-2 s to compile on SwiftShader
        cases = [c for c in cases if not _TILED_SKIP.search(c["name"])]
    elif kernel == "tiled128":  # slow on SwiftShader (3-4 s a variant): multi-tile transposes,
        # batches, NaN, C with vec4 loads (C, alpha and beta are store_y's, one text for every
        # matrix kernel: their other combinations run on the kernels above)
        cases = [c for c in cases if re.search(r"(65x18x70|64x16x64)-aT1-bT1|\[2,1,3\]-5x6|nan-inf|vec4-aligned-c|70x8", c["name"])]
    elif kernel == "tiled-split":  # the split's own paths are test_split_k's; here batches, C, NaN
        cases = [c for c in cases if re.search(r"\[2,1,3\]-5x6|c-6x10-alpha|nan-inf", c["name"])]
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


_SPLIT_JS = """
async ([a, b, c, splitK, kernel = 'tiled']) => {
  const {describeGraph} = await import('/polyfill/inspect.js');
  const context = await navigator.ml.createContext({polyfill: {tuning: {matmul: kernel, splitK}}});
  try {
    const builder = new MLGraphBuilder(context);
    const desc = (x) => ({dataType: 'float32', shape: x.shape});
    const A = builder.input('a', desc(a));
    const B = builder.input('b', desc(b));
    const C = builder.constant(desc(c), new Float32Array(c.data));
    const y = builder.relu(builder.gemm(A, B, {c: C, alpha: 0.5, beta: 2, bTranspose: true}));
    const graph = await builder.build({y});
    const kernels = describeGraph(graph).steps.map((s) => [s.kernel, s.operators.map((o) => o.type)]);
    const tensors = {};
    for (const [n, x] of [['a', a], ['b', b]]) {
      tensors[n] = await context.createTensor({...desc(x), writable: true});
      context.writeTensor(tensors[n], new Float32Array(x.data));
    }
    const out = await context.createTensor({dataType: 'float32', shape: [a.shape[0], b.shape[0]], readable: true});
    context.dispatch(graph, tensors, {y: out});
    return {kernels, y: Array.from(new Float32Array(await context.readTensor(out)))};
  } finally {
    context.destroy();
  }
}
"""


def _split_gemm(page, server_url, seed, m, k, n, split_k, kernel="tiled"):
    """relu(gemm(A, B^T, c, alpha 0.5, beta 2)) of no-cancel data [m, k] x [n, k]^T through
    _SPLIT_JS with tuning {matmul: kernel, splitK: split_k}: (the steps' kernels with
    their operators, Y as float32, the float64 NumPy reference)."""
    rng = np.random.default_rng(seed)
    a, bt = no_cancel(rng, m, k, n)  # one sign per output: relu keeps about half of them
    b = np.ascontiguousarray(bt.T)
    c = (rng.uniform(0.1, 1.0, n) * np.sign(a[0, 0] * bt[0])).astype(np.float32)
    enc = lambda x: {"shape": list(x.shape), "data": x.ravel().tolist()}
    open_harness(page, server_url)
    r = page.evaluate(_SPLIT_JS, [enc(a), enc(b), enc(c), split_k, kernel])
    want = np.maximum(gemm(a, b, {"c": c, "alpha": 0.5, "beta": 2.0, "bTranspose": True}), 0)
    return r["kernels"], np.array(r["y"], dtype=np.float32).reshape(want.shape), want


@pytest.mark.parametrize("split_k, k", [(4, 300), (7, 100)])
def test_split_k(webnn_page, server_url, split_k, k):
    """A tiled gemm split along K (forced through tuning.splitK: hardware adapters split
    products of few tiles) is two steps, partial products then the reduce step carrying alpha,
    beta * C and the fused relu, and equals float64 NumPy; K = 100 in 7 ranges leaves the last
    range short (16-deep ranges: 7 x 16 = 112 > 100)."""
    kernels, got, want = _split_gemm(webnn_page, server_url, 5, 70, k, 66, split_k)
    assert kernels == [["matmul_tiled_split", ["gemm", "relu"]], ["matmul_split_reduce", ["gemm", "relu"]]]
    assert_ulp(got, want, 2 * k + 2, np.float32)


@pytest.mark.parametrize("split_k", [1, 2])
def test_tile_bands(webnn_page, server_url, split_k):
    """The tiled kernels take their tiles in bands of 8 tile rows (matmul_tiled.js BAND): 581 rows
    are 10 tile rows of 64, a full band and a short one of 2 (the last only 5 rows deep), over 3
    tile columns, unsplit and split in 2, against float64 NumPy."""
    kernels, got, want = _split_gemm(webnn_page, server_url, 6, 581, 40, 130, split_k)
    assert kernels[0][0] == ("matmul_tiled" if split_k == 1 else "matmul_tiled_split"), kernels
    assert_ulp(got, want, 2 * 40 + 2, np.float32)


def test_split_k_wide_tiles(webnn_page, server_url):
    """The 128x128 kernel split along K (hardware adapters split products of 96-127 such tiles 4
    ways): 581 x 40 x 130 is 5 x 2 tiles, K = 40 in 3 ranges of 16 (the last 8 deep), partial
    products then the reduce step (alpha, beta * C, relu) adding 3 sums, against float64 NumPy."""
    kernels, got, want = _split_gemm(webnn_page, server_url, 7, 581, 40, 130, 3, "tiled128")
    assert kernels == [["matmul_tiled128_split", ["gemm", "relu"]], ["matmul_split_reduce", ["gemm", "relu"]]]
    assert_ulp(got, want, 2 * 40 + 2, np.float32)
