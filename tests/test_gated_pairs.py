"""Gated pairs (compile/gated_pairs.js): two products of one A where one's fused stages read the
other's result (a SwiGLU MLP: mul(mul(sigmoid(gate), gate), up)) are one product whose B
interleaves both products' columns; each store site applies the epilogue with the other
product's value in hand. Values against float64 NumPy on every matrix kernel (the quantized
matrix-vector kernels store pairs themselves: one step; the others store the raw product for a
reduce step that pairs: two); the near misses keep both products.

A and the weights are dyadic, so the products are exact; the stages (sigmoid) are held to a
bound in ULP far below what a wrong pairing (gate and up swapped, a column off) moves.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.graph_runner import run_js
from tests.test_quantized_matmul import _NVIDIA_PLAN_JS, INT_RANGE, NUMPY_INT, _dyadic, _op, _pow2_scales, _weights

pytestmark = pytest.mark.shared_page

SEED = 20261208
#: what the stages of a pair may differ from float64 by, in ULP of float32 / float16
ULP = {"float32": 64, "float16": 16}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _packed(rng, tag, n, k, block, wtype, zero, scale_type="float32"):
    """ORT's MatMulNBits chain for one product (scales, so the dequantized B, of `scale_type`):
    ops, constants, the float64 [K, N] B."""
    blocks = -(-k // block)
    lo, hi = INT_RANGE[wtype]
    w = rng.integers(lo, hi + 1, (n, blocks, block)).astype(NUMPY_INT[wtype])
    z = rng.integers(lo, hi + 1, (n, blocks, 1)).astype(NUMPY_INT[wtype]) if zero else np.zeros((n, blocks, 1), NUMPY_INT[wtype])
    s = _pow2_scales(rng, (n, blocks, 1))
    consts = {f"w{tag}": _weights(w, wtype), f"z{tag}": _weights(z, wtype), f"s{tag}": tensor(s, scale_type)}
    ops = [_op("dequantizeLinear", [f"w{tag}", f"s{tag}", f"z{tag}"], f"d{tag}"),
           _op("reshape", [f"d{tag}", [n, blocks * block]], f"dr{tag}")]
    last = f"dr{tag}"
    if blocks * block != k:
        ops.append(_op("slice", [last, [0, 0], [n, k]], f"ds{tag}"))
        last = f"ds{tag}"
    ops.append(_op("transpose", [last], f"b{tag}"))
    b = ((w.astype(np.int64) - z) * s.astype(np.float64)).reshape(n, -1)[:, :k].T
    return ops, consts, b


def pair_case(tag, rng, *, n, k, m_shape=(1,), wtype="uint4", block=32, zero=True, form="silu", float_type=None,
              extra_output=False, other_input=False):
    """``y = silu(a x G) * (a x U)`` (form 'silu', as ORT writes SiLU: mul(sigmoid(g), g)) or
    ``y = (a x U) - relu(a x G)`` ('sub': the pair's value the first operand). ``float_type``:
    constant float B's of that type instead of packed ones. ``extra_output``: U's product is a
    graph output too; ``other_input``: U reads another input (both near misses)."""
    dtype = float_type or "float32"
    a = _dyadic(rng, (*m_shape, k))
    inputs = {"a": describe(a.astype(np.float16) if dtype == "float16" else a)}
    feeds = {"a": tensor(a, dtype)}
    ops, consts, bs = [], {}, []
    for t in ("g", "u"):
        if float_type:
            b = _dyadic(rng, (k, n), 4).astype(np.float64)
            consts[f"b{t}"] = tensor(b.astype(np.float32), dtype)
        else:
            chain, c, b = _packed(rng, t, n, k, block, wtype, zero)
            ops += chain
            consts.update(c)
        bs.append(b)
    a2 = a
    if other_input:
        a2 = _dyadic(rng, (*m_shape, k))
        inputs["a2"] = describe(a2.astype(np.float16) if dtype == "float16" else a2)
        feeds["a2"] = tensor(a2, dtype)
    ops += [_op("matmul", ["a", "bg"], "g"), _op("matmul", ["a2" if other_input else "a", "bu"], "u")]
    g = a.astype(np.float64) @ bs[0]
    u = a2.astype(np.float64) @ bs[1]
    if form == "silu":
        ops += [_op("sigmoid", ["g"], "sg"), _op("mul", ["sg", "g"], "silu"), _op("mul", ["silu", "u"], "y")]
        y = _sigmoid(g) * g * u
    else:
        ops += [_op("relu", ["g"], "rg"), _op("sub", ["u", "rg"], "y")]
        y = u - np.maximum(g, 0)
    outputs = ["y", "u"] if extra_output else ["y"]
    expected = {"y": tensor(y.astype(np.float32), dtype)}
    if extra_output:
        expected["u"] = tensor(u.astype(np.float32), dtype)
    graph = {"inputs": inputs, "constants": consts, "operators": ops, "outputs": outputs}
    return graph_case(f"gated-pair/{float_type or wtype}/{tag}", "matmul", dtype, graph, feeds, expected, "ULP", ULP[dtype])


def paired_cases():
    rng = np.random.default_rng(SEED)
    return [
        pair_case("m1", rng, n=24, k=128),                             # decode: the quantized matrix-vector kernel
        pair_case("m1-3d", rng, n=20, k=96, m_shape=(1, 1)),            # ORT's [1, 1, K]
        pair_case("m5", rng, n=20, k=96, m_shape=(5,)),                 # prefill rows
        pair_case("m3-sub", rng, n=12, k=64, m_shape=(3,), form="sub"),
        pair_case("int8-m1", rng, n=9, k=128, wtype="int8", zero=False),
        pair_case("k-padded-m2", rng, n=7, k=72, m_shape=(1, 2)),       # K not a multiple of the block
        pair_case("block15-m1", rng, n=6, k=45, block=15, wtype="uint4"),  # odd 4-bit rows
        pair_case("m4", rng, n=16, k=64, m_shape=(4,), float_type="float32"),
        pair_case("m1", rng, n=16, k=64, float_type="float32"),
        pair_case("m6", rng, n=10, k=32, m_shape=(2, 3), float_type="float16"),
    ]


def near_misses():
    rng = np.random.default_rng(SEED + 1)
    return [pair_case("u-also-output", rng, n=12, k=64, m_shape=(1,), extra_output=True),
            pair_case("u-of-another-a", rng, n=12, k=64, m_shape=(3,), other_input=True)]


#: the paired cases the quantized matrix-vector kernels read (one row, each column's packed row
#: starting on a 16-byte chunk): one step; the others two
ONE_STEP = {"gated-pair/uint4/m1", "gated-pair/uint4/m1-3d", "gated-pair/int8/int8-m1"}


def _products(steps):
    return [s for s in steps if "matmul" in s]


def test_gated_pairs_are_one_product(webnn_page, server_url):
    """SwiftShader's own plan: one-row packed pairs one step (the serial matrix-vector kernel);
    other pairs the raw product and the pairing reduce step, each listing both products."""
    cases = paired_cases()
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        ops = [o["op"] for o in c["graph"]["operators"]]
        # float16 adds the input's and output's layout conversions (compile/boundary.js)
        assert len(_products(r["steps"])) == (1 if c["name"] in ONE_STEP else 2), (c["name"], r["steps"])
        for step in _products(r["steps"]):
            assert step.count("matmul") == 2 and sorted(set(step)) == sorted(set(ops)), (c["name"], r["steps"])


@pytest.mark.parametrize("kernel", ["tiled", "gemv", "split", "qgemv-split"])
def test_gated_pairs_on_every_matrix_kernel(webnn_page, server_url, kernel):
    """The paired cases forced onto each kernel: tiled (raw product + pairing reduce), the same split
    along K in 3 ranges (partial products + a reduce that adds and pairs), gemv, and the split
    quantized matrix-vector kernel (one step)."""
    overrides = {"matmul": kernel}
    if kernel == "split":
        overrides = {"matmul": "tiled", "splitK": 3}
    if kernel == "qgemv-split":
        overrides = {"matmul": "qgemv", "qgemvSerial": False}
    results = run_cases(webnn_page, server_url, paired_cases(), overrides, steps=True)
    assert_all_pass(results)
    if kernel == "qgemv-split":
        steps = {c["name"]: len(_products(r["steps"])) for c, r in zip(paired_cases(), results)}
        assert all(steps[name] == 1 for name in ONE_STEP), steps


@pytest.mark.parametrize("switch", [None, {"gatedPairs": False}])
def test_near_misses_keep_both_products(webnn_page, server_url, switch):
    """U's result also a graph output, or U reading another A: two product steps, values right; the
    tuning switch gatedPairs false keeps every pair two products."""
    cases = near_misses() + (paired_cases()[:2] if switch else [])
    results = run_cases(webnn_page, server_url, cases, switch, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert len(_products(r["steps"])) == 2 and all(s.count("matmul") == 1 for s in _products(r["steps"])), (c["name"], r["steps"])


_WIDE_PAIR_JS = _NVIDIA_PLAN_JS + """
// [256, 64] x two uint4 W [3072 columns, 64]: each product alone 2 x 24 tiles of 128 x 128, under
// WIDE_TILES (96); the pair's 6,144 columns would make 96
const b = new MLGraphBuilder(context);
const a = b.input('a', {dataType: 'float32', shape: [256, 64]});
const product = (fill) => {
  const q = b.constant({dataType: 'uint4', shape: [3072, 2, 32]}, new Uint8Array(3072 * 64 / 2).fill(fill));
  const s = b.constant({dataType: 'float32', shape: [3072, 2, 1]}, new Float32Array(3072 * 2).fill(0.5));
  const z = b.constant({dataType: 'uint4', shape: [3072, 2, 1]}, new Uint8Array(3072).fill(0x88));
  return b.matmul(a, b.transpose(b.reshape(b.dequantizeLinear(q, s, z), [3072, 64])));
};
const g = product(0x5a);
const graph = await b.build({y: b.mul(b.mul(b.sigmoid(g), g), product(0x3c))});
const kernels = describeGraph(graph).steps.map((st) => st.kernel);
graph.destroy();
context.destroy();
return kernels;
"""


def test_gated_pair_takes_the_tile_of_its_halves(webnn_page, server_url):
    """On a hardware adapter's plan a 256-row pair whose halves each take 64 x 64 tiles takes them
    too, not the 128 x 128 tiles its doubled column count alone would choose (whose split partial
    sums took 4x the memory of each half's: docs/performance.md)."""
    result = run_js(webnn_page, server_url, _WIDE_PAIR_JS)
    assert "ok" in result, result
    kernels = result["ok"]
    assert [k for k in kernels if k.startswith("matmul")] == ["matmul_tiled_split_qu4zu4w", "matmul_pair_reduce"], kernels
