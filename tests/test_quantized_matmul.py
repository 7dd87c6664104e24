"""Quantized weights kept packed on the GPU (compile/quantized_matmul.js, ops/quantized_matmul.js,
ops/packed_weights.js): dequantizeLinear of constant int8/uint8 weights -> [reshape / slice /
transpose] -> matmul / gemm is one step whose loads of B dequantize the packed bytes.

The rewrite (which graphs become one quantizedMatmul step, and the near misses left alone), the
values of the fused products against float64 NumPy of the dequantized product (per-tensor,
per-axis and block-wise scales, with and without zero points, one row and several, K not a
multiple of the block or of the kernel's chunk, a bias add and an activation fused) on the
quantized matrix-vector kernel and on every matrix kernel forced, and the GPU bytes of the
weights (their packed size, no widened or dequantized copy).

Weights, scales and A are dyadic (scales powers of two, A multiples of 1/8, small sums), so every
product and sum is exact in float32 and the values must match whatever order a kernel adds in;
one case with non-power-of-two scales and sign-structured data checks the matmul bound (2K ULP).
"""
from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pytest

from tests.conformance.encode import graph_case, operand, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.graph_runner import run_js
from tests.test_ort_webnn_ep import _CAPTURE_GRAPHS

pytestmark = pytest.mark.shared_page

SEED = 20261205
INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15)}
NUMPY_INT = {"int8": np.int8, "uint8": np.uint8, "int4": np.int8, "uint4": np.uint8}


def _weights(values, data_type):
    """A tensor record of integer ``values``: 8-bit as is, 4-bit packed two a byte, low nibble
    first (Chromium's int4/uint4 layout)."""
    if data_type not in ("int4", "uint4"):
        return tensor(values, data_type)
    flat = (np.asarray(values).reshape(-1).astype(np.int64) & 0xF).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, 0)
    packed = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)
    return {"dataType": data_type, "shape": [int(d) for d in np.shape(values)],
            "bytes": base64.b64encode(packed.tobytes()).decode()}


def _op(op, args, out, **options):
    entry = {"op": op, "args": [operand(a) if isinstance(a, str) else a for a in args], "outputs": out}
    if options:
        entry["options"] = {k: operand(v) if k in ("c",) else v for k, v in options.items()}
    return entry


def _blockwise(values, shape):
    """``values`` (scale-shaped) repeated to ``shape`` (spec blockwise broadcasting)."""
    out = np.asarray(values)
    for d, n in enumerate(shape):
        out = np.repeat(out, n // out.shape[d], axis=d)
    return out


def _dyadic(rng, shape, scale=8):
    return (rng.integers(-scale, scale + 1, shape) / scale).astype(np.float32)


def _pow2_scales(rng, shape):
    return (2.0 ** -rng.integers(3, 7, shape)).astype(np.float32)


def quantized_case(tag, *, wtype, w, scale, zero=None, scale_const_shape=None, chain=(), a, product="matmul",
                   product_options=None, stages=(), arrays=None, metric="exact", value=0, outputs=("y",)):
    """A graph case: ``y = stages(product(a, chain(dequantizeLinear(w, scale, zero))))``.

    ``chain``: (op, args...) view operators on the dequantized value (reshape newShape, slice
    starts sizes, transpose); ``scale_const_shape``: the scale is a constant of that shape,
    reshaped to the dequantize's (as ORT's WebNN EP writes the scales); ``stages``: (op, other
    operand name or None, options) after the product, ``arrays`` holding their operands.
    """
    zero = np.zeros(scale.shape, w.dtype) if zero is None else zero
    constants = {"w": _weights(w, wtype), "z": _weights(zero, wtype)}
    operators = []
    if scale_const_shape:
        constants["s0"] = tensor(scale.reshape(scale_const_shape), "float32")
        operators.append(_op("reshape", ["s0", list(scale.shape)], "s"))
    else:
        constants["s"] = tensor(scale, "float32")
    operators.append(_op("dequantizeLinear", ["w", "s", "z"], "d0"))
    # float64 reference: (q - z) * s rounded once to float32, as dequantizeLinear
    x = ((w.astype(np.int64) - _blockwise(zero, w.shape).astype(np.int64)) * _blockwise(scale, w.shape)
         ).astype(np.float32).astype(np.float64)
    name = "d0"
    for i, (op, *args) in enumerate(chain):
        out = f"d{i + 1}"
        if op == "reshape":
            operators.append(_op("reshape", [name, list(args[0])], out))
            x = x.reshape(args[0])
        elif op == "slice":
            starts, sizes = args
            operators.append(_op("slice", [name, list(starts), list(sizes)], out))
            x = x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]
        else:
            operators.append(_op("transpose", [name], out))
            x = x.T
        name = out
    inputs = {"a": describe(a)}
    aa = a.astype(np.float64)
    opts = dict(product_options or {})
    if product == "gemm":
        ga = aa.T if opts.get("aTranspose") else aa
        gb = x.T if opts.get("bTranspose") else x
        y = opts.get("alpha", 1.0) * (ga @ gb)
        if "c" in opts:
            y = y + opts.get("beta", 1.0) * arrays[opts["c"]].astype(np.float64)
    else:
        y = aa @ x
    operators.append(_op(product, ["a", name], "p", **opts))
    y = y.astype(np.float32).astype(np.float64)
    prev = "p"
    for i, (op, other, options) in enumerate(stages):
        out = "y" if i == len(stages) - 1 else f"t{i}"
        operators.append(_op(op, [prev] + ([other] if other else []), out, **(options or {})))
        if op == "add":
            y = y + arrays[other].astype(np.float64)
        elif op == "relu":
            y = np.maximum(y, 0)
        elif op == "clamp":
            y = np.clip(y, options["minValue"], options["maxValue"])
        y = y.astype(np.float32).astype(np.float64)
        prev = out
    if not stages:
        operators[-1]["outputs"] = "y"
    for n, v in (arrays or {}).items():
        constants[n] = tensor(v, "float32")
    graph = {"inputs": inputs, "constants": constants, "operators": operators, "outputs": list(outputs)}
    return graph_case(f"quantized/{wtype}/{tag}", "dequantizeLinear", "float32", graph, {"a": tensor(a, "float32")},
                      {"y": tensor(y, "float32")}, "ULP" if metric == "ulp" else "ATOL", value)


def _ort_case(rng, tag, *, wtype="uint8", n, k, block, m_shape, zero=True, stages=(), arrays=None):
    """MatMulNBits as ORT's WebNN EP writes it: W [N, blocks, block], the scales a constant [N *
    blocks] reshaped to [N, blocks, 1], reshape [N, padded K], slice [N, K] when K is padded,
    transpose, matmul."""
    blocks = -(-k // block)
    lo, hi = INT_RANGE[wtype]
    w = rng.integers(lo, hi + 1, (n, blocks, block)).astype(NUMPY_INT[wtype])
    scale = _pow2_scales(rng, (n, blocks, 1))
    z = rng.integers(lo, hi + 1, (n, blocks, 1)).astype(NUMPY_INT[wtype]) if zero else None
    chain = [("reshape", (n, blocks * block))]
    if blocks * block != k:
        chain.append(("slice", (0, 0), (n, k)))
    chain.append(("transpose",))
    a = _dyadic(rng, (*m_shape, k))
    return quantized_case(tag, wtype=wtype, w=w, scale=scale, zero=z, scale_const_shape=(n * blocks,), chain=chain,
                          a=a, stages=stages, arrays=arrays)


def fused_cases():
    """Chains that must become one step."""
    rng = np.random.default_rng(SEED)
    cases = [
        # decode (M = 1): the quantized matrix-vector kernel; N not a multiple of its 8 columns
        _ort_case(rng, "ort-block32-m1", n=20, k=96, block=32, m_shape=(1,)),
        _ort_case(rng, "ort-block32-m1-3d", n=20, k=96, block=32, m_shape=(1, 1)),
        # K padded to the block (slice), K not a multiple of 4 (scalar A loads), a partial 16-byte chunk
        _ort_case(rng, "ort-k-padded-m1", n=12, k=90, block=32, m_shape=(1,)),
        # blocks shorter than the kernel's chunk (16 8-bit weights): one scale per word, or none fits
        _ort_case(rng, "ort-block8-m1", n=9, k=64, block=8, m_shape=(1,)),
        _ort_case(rng, "ort-block2-m1", n=9, k=20, block=2, m_shape=(1,)),
        _ort_case(rng, "ort-int8-no-zero-point-m1", wtype="int8", n=16, k=64, block=16, m_shape=(1,), zero=False),
        # several rows (prefill), batched A
        _ort_case(rng, "ort-block32-m5", n=20, k=96, block=32, m_shape=(5,)),
        _ort_case(rng, "ort-k-padded-batched", wtype="int8", n=12, k=90, block=32, m_shape=(2, 3)),
    ]
    cases += [
        # 4-bit: 32 weights a 16-byte chunk (one scale a chunk for blocks of 32, a word's for 8)
        _ort_case(rng, "ort-block32-m1", wtype="uint4", n=20, k=128, block=32, m_shape=(1,)),
        _ort_case(rng, "ort-k-padded-m1", wtype="uint4", n=12, k=90, block=32, m_shape=(1,)),
        _ort_case(rng, "ort-block8-m1", wtype="int4", n=9, k=64, block=8, m_shape=(1,)),
        _ort_case(rng, "ort-block16-odd-count-m1", wtype="uint4", n=3, k=16, block=16, m_shape=(1,)),
        _ort_case(rng, "ort-block32-m5", wtype="uint4", n=20, k=96, block=32, m_shape=(5,)),
        _ort_case(rng, "ort-no-zero-point-m3", wtype="int4", n=11, k=64, block=32, m_shape=(3,), zero=False),
    ]
    # bias add and an activation fused into the product's epilogue
    n, k = 24, 64
    arrays = {"bias": _dyadic(rng, (n,), 4)}
    for m in (1, 6):
        cases.append(_ort_case(rng, f"ort-bias-relu-m{m}", n=n, k=k, block=16, m_shape=(m,),
                               stages=[("add", "bias", None), ("relu", None, None)], arrays=arrays))
    # per-axis int8 (QDQ style): W [K, N] with a scale per output column, symmetric; no view
    w = rng.integers(-128, 128, (40, 20)).astype(np.int8)
    for m in (1, 7):
        cases.append(quantized_case(f"per-axis-kn-m{m}", wtype="int8", w=w, scale=_pow2_scales(rng, (1, 20)),
                                    a=_dyadic(rng, (m, 40))))
    # per-tensor uint8 with a zero point through gemm(bTranspose) with alpha, beta, C, then clamp
    w = rng.integers(0, 256, (10, 36)).astype(np.uint8)
    for m in (1, 5):
        arrays = {"c": _dyadic(rng, (10,), 4)}
        cases.append(quantized_case(f"per-tensor-gemm-m{m}", wtype="uint8", w=w, scale=np.array([[0.125]], np.float32),
                                    zero=np.array([[131]], np.uint8), a=_dyadic(rng, (m, 36)), product="gemm",
                                    product_options={"bTranspose": True, "alpha": 0.5, "beta": 2.0, "c": "c"},
                                    stages=[("clamp", None, {"minValue": -6.0, "maxValue": 6.0})], arrays=arrays))
    # non-power-of-two scales, sign-structured (no cancellation): the matmul bound, 2K ULP
    k = 64
    w = rng.integers(140, 256, (16, 2, 32)).astype(np.uint8)
    zero = np.full((16, 2, 1), 128, np.uint8)
    scale = rng.uniform(0.01, 0.03, (16, 2, 1)).astype(np.float32)
    for m in (1, 3):
        a = rng.uniform(0.1, 1.0, (m, k)).astype(np.float32)
        cases.append(quantized_case(f"rounded-scales-m{m}", wtype="uint8", w=w, scale=scale, zero=zero,
                                    chain=[("reshape", (16, 64)), ("transpose",)], a=a, metric="ulp", value=2 * k))
    return cases


def unfused_cases():
    """Near misses the rewrite must leave alone: {name: (case, expected steps)}."""
    rng = np.random.default_rng(SEED + 1)
    out = {}
    # the dequantized weights also read by another operator (a graph output here)
    w = rng.integers(0, 256, (8, 16)).astype(np.uint8)
    c = quantized_case("dequantized-also-output", wtype="uint8", w=w, scale=_pow2_scales(rng, (8, 1)),
                       chain=[("transpose",)], a=_dyadic(rng, (1, 16)))
    c["graph"]["outputs"] = ["y", "d0"]
    out["dequantized-also-output"] = c
    # the scale's blocks are not rectangles of B: W [2, 6, 4], scale [2, 3, 2], B = reshape [2, 24]
    w = rng.integers(-128, 128, (2, 6, 4)).astype(np.int8)
    out["blocks-not-rectangles"] = quantized_case("blocks-not-rectangles", wtype="int8", w=w,
                                                  scale=_pow2_scales(rng, (2, 3, 2)), chain=[("reshape", (2, 24))],
                                                  a=_dyadic(rng, (3, 2)))
    # a reshape merging dimensions that the transpose made non-contiguous
    w = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    out["reshape-not-a-view"] = quantized_case("reshape-not-a-view", wtype="int8", w=w, scale=_pow2_scales(rng, (4, 1)),
                                               chain=[("transpose",), ("reshape", (3, 8))], a=_dyadic(rng, (2, 3)))
    # the dequantized value as A, not B
    w = rng.integers(-128, 128, (3, 8)).astype(np.int8)
    c = quantized_case("dequantized-as-a", wtype="int8", w=w, scale=_pow2_scales(rng, (3, 1)), a=_dyadic(rng, (8, 3)))
    c["graph"]["operators"][-1]["args"] = [operand("d0"), operand("a")]
    out["dequantized-as-a"] = c
    return out


def _fix_dequantized_as_a(case):
    """The expected output of the dequantized-as-a case (A and B swapped), from its own constants."""
    from tests.conformance.encode import decode

    g = case["graph"]
    w = decode(g["constants"]["w"]).astype(np.int64)
    s = decode(g["constants"]["s"]).astype(np.float64)
    a = decode(case["inputs"]["a"]).astype(np.float64)
    y = (w * _blockwise(s, w.shape)).astype(np.float32).astype(np.float64) @ a
    case["expected"]["y"] = tensor(y.astype(np.float32), "float32")
    return case


def test_fused_products_are_one_step(webnn_page, server_url):
    """Every fused chain compiles to exactly one GPU step (no dequantize, reshape, slice or
    transpose step), listing the chain's operators, and computes the dequantized product."""
    cases = fused_cases()
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        ops = [o["op"] for o in c["graph"]["operators"]]
        assert r["steps"] == [ops], (c["name"], r["steps"])


#: shapes of the split matrix-vector kernel (ops/quantized_gemv.js): its default choice (loads of
#: 16 elements), all lanes on one column (K split across the workgroup) with one-word loads, one
#: column a group of 32 lanes with one-word loads 4 in flight, 8 columns a group (one load in
#: flight), and loads of 2 and 4 words (one scale a load where the blocks allow, else one a word);
#: 4-bit elements shifted out (unpack 'shift'; the default reads them in place); the value tests
#: of every matrix kernel run the first three and the default shape shifted, the long rows all
_GEMV_CONFIGS = {"qgemv-split": None, "qgemv-split-g1c1u1v1": {"groups": 1, "columns": 1, "unroll": 1, "vec": 1},
                 "qgemv-split-g8c1u4v1": {"groups": 8, "columns": 1, "unroll": 4, "vec": 1},
                 "qgemv-split-g2c8u1": {"groups": 2, "columns": 8, "unroll": 1},
                 "qgemv-split-g2c4u2v2": {"groups": 2, "columns": 4, "unroll": 2, "vec": 2},
                 "qgemv-split-g4c2u1v4": {"groups": 4, "columns": 2, "unroll": 1, "vec": 4},
                 "qgemv-split-shift": {"unpack": "shift"},
                 "qgemv-split-subgroup": {"reduce": "subgroup"},
                 "qgemv-split-g8c1u4v1-subgroup": {"groups": 8, "columns": 1, "unroll": 4, "vec": 1, "reduce": "subgroup"},
                 "qgemv-split-g8c2u2v2-prefetch": {"groups": 8, "columns": 2, "unroll": 2, "vec": 2, "prefetch": True},
                 "qgemv-split-g4c1u8v1-prefetch": {"groups": 4, "columns": 1, "unroll": 8, "vec": 1, "prefetch": True}}


@pytest.mark.parametrize("kernel", ["blocked", "tiled", "tiled128", "tiled128-split", "gemv", "qgemv", "qgemv-split",
                                    "qgemv-split-g1c1u1v1", "qgemv-split-g8c1u4v1", "qgemv-split-shift",
                                    "qgemv-split-subgroup"])
def test_fused_values_on_every_matrix_kernel(webnn_page, server_url, kernel):
    """The packed loader in each matrix kernel's B loads (qgemv where its layout fits and M = 1,
    the kernel the adapter picks otherwise; qgemv-split: its variant of hardware adapters, K
    split across the lanes of a column group, which SwiftShader does not pick, with its default
    loads and with one-word loads; the other shapes run on the long rows below); tiled128 on the
    cases of several rows only (slow to compile on SwiftShader), also split along K in 3 ranges
    (tiled128-split: packed prefill products of 128 rows take it on GPUs)."""
    cases = fused_cases()
    if kernel.startswith("tiled128"):
        cases = [c for c in cases if c["name"].endswith(("-m5", "-m6", "rounded-scales-m3"))]
    if kernel.startswith("qgemv-split"):
        overrides = {"matmul": "qgemv", "qgemvSerial": False, "qgemvConfig": _GEMV_CONFIGS[kernel]}
    elif kernel == "tiled128-split":
        overrides = {"matmul": "tiled128", "splitK": 3}
    else:
        overrides = {"matmul": kernel}
    assert_all_pass(run_cases(webnn_page, server_url, cases, overrides))


def _long_row_cases():
    """One-row products whose rows take several strides of the split matrix-vector kernel's loop:
    blocks that divide a stride (the scale index advanced by a constant) and blocks that do not
    (recomputed), with and without zero points, and a K that leaves a partial word."""
    rng = np.random.default_rng(SEED + 7)
    return [_ort_case(rng, "long-block32", wtype="uint4", n=6, k=4096, block=32, m_shape=(1,)),
            _ort_case(rng, "long-block48", wtype="int4", n=5, k=4128, block=48, m_shape=(1,)),
            _ort_case(rng, "long-block48-padded-no-zero-point", wtype="int4", n=5, k=1910, block=48,
                      m_shape=(1,), zero=False),
            _ort_case(rng, "long-block128", wtype="int8", n=7, k=1536, block=128, m_shape=(1,)),
            _ort_case(rng, "long-block40-padded", wtype="uint8", n=4, k=1190, block=40, m_shape=(1,)),
            _ort_case(rng, "long-block16-padded", wtype="int8", n=3, k=1201, block=16, m_shape=(1,))]


@pytest.mark.parametrize("config", list(_GEMV_CONFIGS))
def test_split_gemv_long_rows(webnn_page, server_url, config):
    overrides = {"matmul": "qgemv", "qgemvSerial": False, "qgemvConfig": _GEMV_CONFIGS[config]}
    assert_all_pass(run_cases(webnn_page, server_url, _long_row_cases(), overrides))


def _infinite_padded_block_case():
    """K padded to the block (ORT's slice) with the last block's scale +Inf in column 0: its
    elements in K are above the zero point and meet positive A (+Inf), its padding equals the
    zero point ((q - z) * Inf = NaN there). The padding is outside the product, so column 0 is
    +Inf, not NaN: a kernel loading whole words must drop the elements past K."""
    rng = np.random.default_rng(SEED + 11)
    n, k, block = 3, 90, 32
    w = rng.integers(0, 16, (n, 3, block)).astype(np.uint8)
    z = rng.integers(0, 16, (n, 3, 1)).astype(np.uint8)
    scale = _pow2_scales(rng, (n, 3, 1))
    z[0, 2, 0] = 3
    w[0, 2, :] = 3
    w[0, 2, :k - 64] = rng.integers(4, 16, k - 64)
    scale[0, 2, 0] = np.inf
    a = _dyadic(rng, (5, k))
    a[:, 64:] = rng.integers(1, 9, (5, k - 64)) / 8
    chain = [("reshape", (n, 3 * block)), ("slice", (0, 0), (n, k)), ("transpose",)]
    return quantized_case("infinite-padded-block", wtype="uint4", w=w, scale=scale, zero=z, scale_const_shape=(n * 3,),
                          chain=chain, a=a)


@pytest.mark.parametrize("kernel", ["blocked", "tiled", "tiled128"])
def test_padding_past_k_stays_out_of_the_product(webnn_page, server_url, kernel):
    from tests.conformance.encode import decode

    with np.errstate(invalid="ignore"):  # the padding's 0 * Inf in the reference, sliced away
        case = _infinite_padded_block_case()
    y = decode(case["expected"]["y"])
    assert np.isposinf(y[:, 0]).all() and np.isfinite(y[:, 1:]).all(), y
    assert_all_pass(run_cases(webnn_page, server_url, [case], {"matmul": kernel}))


def test_near_misses_stay_unfused(webnn_page, server_url):
    """Non-constant weights (below), a dequantized value with another reader, scale blocks that
    are not rectangles of B, a reshape that is no view, the dequantized value as A: the
    dequantizeLinear keeps its step, and the values are right."""
    cases = unfused_cases()
    cases["dequantized-as-a"] = _fix_dequantized_as_a(cases["dequantized-as-a"])
    # expected for the extra output d0 of the first case
    c = cases["dequantized-also-output"]
    from tests.conformance.encode import decode

    w = decode(c["graph"]["constants"]["w"]).astype(np.int64)
    s = decode(c["graph"]["constants"]["s"]).astype(np.float64)
    c["expected"]["d0"] = tensor((w * _blockwise(s, w.shape)).astype(np.float32), "float32")
    results = run_cases(webnn_page, server_url, list(cases.values()), steps=True)
    assert_all_pass(results)
    for (name, _), r in zip(cases.items(), results):
        assert ["dequantizeLinear"] in r["steps"], (name, r["steps"])


_INPUT_WEIGHTS_JS = """
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
const b = new MLGraphBuilder(context);
const w = b.input('w', {dataType: 'uint8', shape: [8, 16]});
const s = b.constant({dataType: 'float32', shape: [8, 1]}, new Float32Array(8).fill(0.5));
const z = b.constant({dataType: 'uint8', shape: [8, 1]}, new Uint8Array(8).fill(3));
const a = b.input('a', {dataType: 'float32', shape: [1, 16]});
const y = b.matmul(a, b.transpose(b.dequantizeLinear(w, s, z)));
const graph = await b.build({y});
const steps = describeGraph(graph).steps.map((st) => st.operators.map((o) => o.type));
context.destroy();
return steps;
"""


def test_weights_that_are_inputs_stay_unfused(webnn_page, server_url):
    result = run_js(webnn_page, server_url, _INPUT_WEIGHTS_JS)
    assert "ok" in result, result
    assert ["dequantizeLinear"] in result["ok"], result["ok"]


_BYTES_JS = """
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
const [N, blocks, block] = [64, 4, 32];
const b = new MLGraphBuilder(context);
const w = b.constant({dataType: 'uint8', shape: [N, blocks, block]}, new Uint8Array(N * blocks * block).fill(7));
const s = b.reshape(b.constant({dataType: 'float32', shape: [N * blocks]}, new Float32Array(N * blocks).fill(0.25)), [N, blocks, 1]);
const z = b.constant({dataType: 'uint8', shape: [N, blocks, 1]}, new Uint8Array(N * blocks).fill(5));
const a = b.input('a', {dataType: 'float32', shape: [1, blocks * block]});
const y = b.matmul(a, b.transpose(b.reshape(b.dequantizeLinear(w, s, z), [N, blocks * block])));
const graph = await b.build({y});
const plan = describeGraph(graph);
const constants = plan.constantBytes;
const kernels = plan.steps.map((st) => st.kernel);
const x = await context.createTensor({dataType: 'float32', shape: [1, blocks * block], writable: true});
const out = await context.createTensor({dataType: 'float32', shape: [1, N], readable: true});
context.writeTensor(x, new Float32Array(blocks * block).fill(1));
context.dispatch(graph, {a: x}, {y: out});
const values = Array.from(new Float32Array(await context.readTensor(out)));
context.destroy();
return {constants, kernels, values};
"""


def test_weights_take_their_packed_size_on_the_gpu(webnn_page, server_url):
    """A [64, 4, 32] uint8 weight constant of a decode product: the plan's constants are the
    packed bytes (8192, not 32768 widened or dequantized), the scales (256 f32) and the zero
    points (256 bytes); one quantized matrix-vector step (the variant of CPU adapters here);
    (7 - 5) * 0.25 * 128 = 64 each."""
    result = run_js(webnn_page, server_url, _BYTES_JS)
    assert "ok" in result, result
    got = result["ok"]
    assert got["constants"] == [256, 1024, 8192], got
    assert got["kernels"] == ["matmul_qgemv_serial_qu8zu8"], got  # SwiftShader's variant
    assert got["values"] == [64.0] * 64


def _matmul_nbits_model(folder, seq, bits=8):
    """A small ONNX graph of two MatMulNBits (com.microsoft) products as a quantized LLM layer
    writes them, x [1, seq, 112] -> MatMulNBits (N 96, block 32: K padded to 128, with zero points
    and a bias) -> Relu -> MatMulNBits (N 64, no zero points: the default) -> y; writes
    model.onnx and input.bin into ``folder`` and returns (x, the inputs' shape)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED + seq + bits)
    block = 32
    inits, nodes = [], []

    def product(name, a, out, k, n, zero, bias):
        blocks = -(-k // block)
        # 4 bits: two weights a byte, low nibble first; zero points packed likewise per column
        q = rng.integers(0, 256, (n, blocks, block * bits // 8)).astype(np.uint8)
        inits.append(numpy_helper.from_array(q, f"{name}_q"))
        inits.append(numpy_helper.from_array(rng.uniform(0.002, 0.02, n * blocks).astype(np.float32), f"{name}_s"))
        ins = [a, f"{name}_q", f"{name}_s"]
        if zero:
            z = (rng.integers(100, 156, n * blocks) if bits == 8
                 else rng.integers(0, 256, n * -(-blocks // 2)))
            inits.append(numpy_helper.from_array(z.astype(np.uint8), f"{name}_z"))
            ins.append(f"{name}_z")
        if bias:
            ins += [""] * (5 - len(ins)) + [f"{name}_b"]
            inits.append(numpy_helper.from_array(rng.uniform(-0.5, 0.5, n).astype(np.float32), f"{name}_b"))
        nodes.append(helper.make_node("MatMulNBits", ins, [out], domain="com.microsoft", K=k, N=n, bits=bits,
                                      block_size=block))

    # K 112: 4 blocks of 32 (padded to 128); an even count, as ORT's WebNN EP needs for 4-bit
    # zero points (it passes ONNX's per-column padded bytes on as one packed [N, blocks, 1] uint4)
    product("up", "x", "h", 112, 96, zero=True, bias=True)
    nodes.append(helper.make_node("Relu", ["h"], ["r"]))
    product("down", "r", "y", 96, 64, zero=False, bias=False)
    shape = [1, seq, 112]
    graph = helper.make_graph(nodes, "nbits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, 64])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    x.tofile(folder / "input.bin")
    return x, shape


_ORT_BODY = """
const {describeGraph} = await import('/polyfill/inspect.js');
const {countWebNNCalls} = await import('/demos/bench-ort/runtimes.js');
const counts = countWebNNCalls();
const buildsBefore = counts.builds;
""" + _CAPTURE_GRAPHS + """try {
  const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
  ort.env.wasm.numThreads = 1;
  const [model, input] = await Promise.all(['model.onnx', 'input.bin'].map(
    (f) => fetch('/models/%(name)s/' + f).then((r) => r.arrayBuffer())));
  const session = await ort.InferenceSession.create(new Uint8Array(model), {
    executionProviders: [{name: 'webnn', deviceType: 'gpu'}], extra: {session: {disable_cpu_ep_fallback: '1'}}});
  const builds = counts.builds - buildsBefore;
  const before = counts.dispatches;
  const out = await session.run({x: new ort.Tensor('float32', new Float32Array(input), %(shape)s)});
  const y = await out.y.getData();
  const dispatches = counts.dispatches - before;
  const plan = describeGraph(graphs[0]);
  const steps = plan.steps;
  const constantBytes = plan.constantBytes.reduce((n, bytes) => n + bytes, 0);
  await session.release();
  return {builds, dispatches, steps: steps.map((s) => s.operators.map((o) => o.type)),
          kernels: steps.map((s) => s.kernel), constantBytes, y: Array.from(y)};
} finally {
  MLGraphBuilder.prototype.build = build;
}
"""


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("seq", [1, 8])
def test_ort_matmul_nbits(webnn_page, server_url, seq, bits):
    """ONNX MatMulNBits (8 and 4 bits) through ORT-web's WebNN EP (CPU fallback disabled) on the
    polyfill: one WebNN graph, one dispatch, one step per product (the dequantize, its reshapes,
    the slice of the padded K and the transpose folded in; the bias add and the Relu in the
    first product's epilogue), the quantized matrix-vector kernel for the decode shape (seq 1),
    the weights' GPU bytes about their file size, and the output equal to onnxruntime's CPU EP
    within 1e-4."""
    import onnxruntime

    from tests.test_ort_webnn_ep import ATOL, VENDOR
    from tools.bench_models import GENERATED

    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    name = f"qmm/matmul-nbits{bits}-seq{seq}"
    folder = GENERATED / name
    x, shape = _matmul_nbits_model(folder, seq, bits)
    import json

    result = run_js(webnn_page, server_url, _ORT_BODY % {"name": name, "shape": json.dumps(shape)})
    assert "ok" in result, result
    got = result["ok"]
    assert got["builds"] == 1 and got["dispatches"] == 1, got
    assert len(got["steps"]) == 2, got["steps"]
    assert not any(st == ["dequantizeLinear"] for st in got["steps"]), got["steps"]
    assert got["steps"][0][-3:] == ["matmul", "add", "relu"] and "dequantizeLinear" in got["steps"][0], got["steps"]
    assert "dequantizeLinear" in got["steps"][1] and "transpose" in got["steps"][1], got["steps"]
    if seq == 1:
        assert all(k.startswith("matmul_qgemv") for k in got["kernels"]), got["kernels"]
    # packed weights 96*96 + 64*96 bytes, f32 scales, the first product's zero points and the
    # default zero point ORT writes for the second (128: kept, being non-zero), its bias
    weights = (96 * 128 + 64 * 96) * bits // 8
    print(bits, "bits: weights", weights, "bytes, GPU constants", got["constantBytes"], "bytes")
    assert weights <= got["constantBytes"] <= weights * (1.2 if bits == 8 else 1.35), got["constantBytes"]
    expected = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0].ravel()
    assert np.abs(expected).max() > 0.5
    np.testing.assert_allclose(np.array(got["y"], np.float32), expected, rtol=0, atol=ATOL)


#: a context whose plans are a hardware (NVIDIA) adapter's, and describeGraph
_NVIDIA_PLAN_JS = """
const {configureContext} = await import('/polyfill/options.js');
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
configureContext(context, {tuning: {adapterInfo: {vendor: 'nvidia', architecture: 'hopper', description: '',
  isFallbackAdapter: false}}});
"""

_SPLIT_JS = _NVIDIA_PLAN_JS + """
// [128, 256] x [256, 4096]: 2 x 64 tiles of 64 x 64, 128 workgroups
const kernels = async (packed) => {
  const b = new MLGraphBuilder(context);
  const a = b.input('a', {dataType: 'float32', shape: [128, 256]});
  let w;
  if (packed) {
    const q = b.constant({dataType: 'uint4', shape: [4096, 8, 32]}, new Uint8Array(4096 * 256 / 2).fill(0x5a));
    const s = b.constant({dataType: 'float32', shape: [4096, 8, 1]}, new Float32Array(4096 * 8).fill(0.5));
    const z = b.constant({dataType: 'uint4', shape: [4096, 8, 1]}, new Uint8Array(4096 * 8 / 2).fill(0x88));
    w = b.transpose(b.reshape(b.dequantizeLinear(q, s, z), [4096, 256]));
  } else {
    w = b.constant({dataType: 'float32', shape: [256, 4096]}, new Float32Array(256 * 4096).fill(0.5));
  }
  const graph = await b.build({y: b.matmul(a, w)});
  const out = describeGraph(graph).steps.map((st) => st.kernel);
  graph.destroy();
  return out;
};
const result = {packed: await kernels(true), float: await kernels(false)};
context.destroy();
return result;
"""


def test_packed_prefill_products_split_to_more_workgroups(webnn_page, server_url):
    """On a hardware adapter a product of 128 workgroups is not split along K when its B is
    float32 (SPLIT_GROUPS), and split with a reduce step when B is packed weights
    (PACKED_SPLIT_GROUPS: a prefill's products ran faster so)."""
    result = run_js(webnn_page, server_url, _SPLIT_JS)
    assert "ok" in result, result
    assert result["ok"]["float"] == ["matmul_tiled"], result["ok"]
    assert result["ok"]["packed"] == ["matmul_tiled_split_qu4zu4w", "matmul_split_reduce"], result["ok"]


_WIDE_JS = _NVIDIA_PLAN_JS + """
// [rows, K] x uint4 W [N columns, K] (blocks of 32): the kernels and workgroups of each step,
// under the tuning given
const steps = async (rows, tuning, N = 4096, K = 1024) => {
  configureContext(context, {tuning});
  const b = new MLGraphBuilder(context);
  const a = b.input('a', {dataType: 'float32', shape: [rows, K]});
  const q = b.constant({dataType: 'uint4', shape: [N, K / 32, 32]}, new Uint8Array(N * K / 2).fill(0x5a));
  const s = b.constant({dataType: 'float32', shape: [N, K / 32, 1]}, new Float32Array(N * K / 32).fill(0.5));
  const z = b.constant({dataType: 'uint4', shape: [N, K / 32, 1]}, new Uint8Array(N * K / 64).fill(0x88));
  const graph = await b.build({y: b.matmul(a, b.transpose(b.reshape(b.dequantizeLinear(q, s, z), [N, K])))});
  const out = describeGraph(graph).steps.map((st) => [st.kernel, st.workgroups.reduce((x, y) => x * y, 1)]);
  graph.destroy();
  return out;
};
// 128 rows, N = 4096, K = 1024: 32 tiles of 128 x 128, K enough for 16 splits (512 workgroups);
// N = 1024: 8 tiles, K = 2048 allows 32 splits (256), K = 1984 31 (248); N = 12288: 96 tiles,
// 128 x 128 also without the rule (WIDE_TILES)
const result = {wide: await steps(128, {packedWide: undefined}), rows64: await steps(64, {packedWide: undefined}),
  off: await steps(128, {packedWide: false}), reach: await steps(128, {packedWide: undefined}, 1024, 2048),
  short: await steps(128, {packedWide: undefined}, 1024, 1984),
  offWideTiles: await steps(128, {packedWide: false}, 12288, 1024)};
context.destroy();
return result;
"""


def test_packed_prefill_products_take_wide_tiles(webnn_page, server_url):
    """On a hardware adapter's plan a packed product of 128 rows whose 128 x 128 tiles, split
    along K, can reach 256 workgroups takes them and is split to 256 (each weight dequantized
    once for 128 rows; docs/packed-weights.md); with fewer rows, or `packedWide` false, it keeps
    the 64 x 64 tiles split to 1024 workgroups."""
    result = run_js(webnn_page, server_url, _WIDE_JS)
    assert "ok" in result, result
    got = result["ok"]
    assert got["wide"][0] == ["matmul_tiled128_split_qu4zu4w", 256] and got["wide"][1][0] == "matmul_split_reduce", got
    assert got["rows64"][0] == ["matmul_tiled_split_qu4zu4w", 1024], got
    assert got["off"][0] == ["matmul_tiled_split_qu4zu4w", 1024], got
    # the reach of 256 workgroups decides: exactly 256 takes the wide tiles, 248 not
    assert got["reach"][0] == ["matmul_tiled128_split_qu4zu4w", 256] and got["short"][0][0] == "matmul_tiled_split_qu4zu4w", got
    # switched off, tiles wide by their count alone split as other packed products (1024 workgroups)
    assert got["offWideTiles"][0] == ["matmul_tiled128_split_qu4zu4w", 960], got


_DECODE_JS = _NVIDIA_PLAN_JS + """
// [1, 2048] x W [2048 columns, 2048] (64 blocks of 32 along K), 4- and 8-bit
const kernel = async (dataType, bits) => {
  const b = new MLGraphBuilder(context);
  const a = b.input('a', {dataType: 'float32', shape: [1, 2048]});
  const q = b.constant({dataType, shape: [2048, 64, 32]}, new Uint8Array(2048 * 2048 * bits / 8).fill(0x5a));
  const s = b.constant({dataType: 'float32', shape: [2048, 64, 1]}, new Float32Array(2048 * 64).fill(0.5));
  // zero points 8 (4-bit) and 0 (8-bit: none bound)
  const z = b.constant({dataType, shape: [2048, 64, 1]}, new Uint8Array(2048 * 64 * bits / 8).fill(bits === 4 ? 0x88 : 0));
  const w = b.transpose(b.reshape(b.dequantizeLinear(q, s, z), [2048, 2048]));
  const graph = await b.build({y: b.matmul(a, w)});
  const out = describeGraph(graph).steps.map((st) => st.kernel);
  graph.destroy();
  return out;
};
const result = {uint4: await kernel('uint4', 4), int8: await kernel('int8', 8)};
context.destroy();
return result;
"""


def test_decode_products_load_16_elements_a_lane(webnn_page, server_url):
    """On a hardware adapter a one-row packed product runs the split matrix-vector kernel with
    loads of 16 elements (2 words of 4-bit, 4 of 8-bit), 4 in flight, 4-bit elements read in place
    (`m`) (ops/quantized_gemv.js chooseGemvConfig; docs/packed-weights.md has the measurements): for
    K = N = 2048, 64 lanes a column and 2 columns a group."""
    result = run_js(webnn_page, server_url, _DECODE_JS)
    assert "ok" in result, result
    assert result["ok"] == {"uint4": ["matmul_qgemv_g4c2u4v2m_qu4zu4"], "int8": ["matmul_qgemv_g4c2u4v4_qi8"]}, result["ok"]


_SUBGROUP_JS = """
const {configureContext} = await import('/polyfill/options.js');
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
configureContext(context, {tuning: {matmul: 'qgemv', qgemvSerial: false, qgemvConfig: {reduce: 'subgroup'}}});
const b = new MLGraphBuilder(context);
const a = b.input('a', {dataType: 'float32', shape: [1, 256]});
const q = b.constant({dataType: 'uint4', shape: [64, 8, 32]}, new Uint8Array(64 * 256 / 2).fill(0x5a));
const s = b.constant({dataType: 'float32', shape: [64, 8, 1]}, new Float32Array(64 * 8).fill(0.5));
const z = b.constant({dataType: 'uint4', shape: [64, 8, 1]}, new Uint8Array(64 * 8 / 2).fill(0x88));
const graph = await b.build({y: b.matmul(a, b.transpose(b.reshape(b.dequantizeLinear(q, s, z), [64, 256])))});
const out = describeGraph(graph).steps.map((st) => st.kernel);
context.destroy();
return out;
"""


def test_subgroup_reduction_is_taken_where_the_device_has_subgroups(webnn_page, server_url):
    """`qgemvConfig.reduce: 'subgroup'` on SwiftShader (subgroups of a fixed 4): the split kernel's
    lanes add their sums with subgroupAdd (its name's `s4`), which the value tests above run."""
    result = run_js(webnn_page, server_url, _SUBGROUP_JS)
    assert "ok" in result, result
    assert len(result["ok"]) == 1 and re.fullmatch(r"matmul_qgemv_g\d+c\d+u\d+v\d+ms4_qu4zu4", result["ok"][0]), result["ok"]
