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

import numpy as np
import pytest

from tests.conformance.encode import graph_case, operand, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.graph_runner import run_js

pytestmark = pytest.mark.shared_page

SEED = 20261205
INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255)}


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
    constants = {"w": tensor(w, wtype), "z": tensor(zero, wtype)}
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
    w = rng.integers(lo, hi + 1, (n, blocks, block)).astype(np.dtype(wtype))
    scale = _pow2_scales(rng, (n, blocks, 1))
    z = rng.integers(lo, hi + 1, (n, blocks, 1)).astype(np.dtype(wtype)) if zero else None
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


@pytest.mark.parametrize("kernel", ["blocked", "tiled", "tiled128", "gemv", "qgemv"])
def test_fused_values_on_every_matrix_kernel(webnn_page, server_url, kernel):
    """The packed loader in each matrix kernel's B loads (qgemv where its layout fits and M = 1,
    the kernel the adapter picks otherwise); tiled128 on the cases of several rows only (slow
    to compile on SwiftShader)."""
    cases = fused_cases()
    if kernel == "tiled128":
        cases = [c for c in cases if c["name"].endswith(("-m5", "-m6", "rounded-scales-m3"))]
    assert_all_pass(run_cases(webnn_page, server_url, cases, {"matmul": kernel}))


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
const {graphSlots} = await import('/polyfill/graph.js');
const context = await navigator.ml.createContext();
const b = new MLGraphBuilder(context);
const w = b.input('w', {dataType: 'uint8', shape: [8, 16]});
const s = b.constant({dataType: 'float32', shape: [8, 1]}, new Float32Array(8).fill(0.5));
const z = b.constant({dataType: 'uint8', shape: [8, 1]}, new Uint8Array(8).fill(3));
const a = b.input('a', {dataType: 'float32', shape: [1, 16]});
const y = b.matmul(a, b.transpose(b.dequantizeLinear(w, s, z)));
const graph = await b.build({y});
const steps = graphSlots(graph).plan.describeSteps().map((st) => st.operators.map((o) => o.type));
context.destroy();
return steps;
"""


def test_weights_that_are_inputs_stay_unfused(webnn_page, server_url):
    result = run_js(webnn_page, server_url, _INPUT_WEIGHTS_JS)
    assert "ok" in result, result
    assert ["dequantizeLinear"] in result["ok"], result["ok"]


_BYTES_JS = """
const {graphSlots} = await import('/polyfill/graph.js');
const context = await navigator.ml.createContext();
const [N, blocks, block] = [64, 4, 32];
const b = new MLGraphBuilder(context);
const w = b.constant({dataType: 'uint8', shape: [N, blocks, block]}, new Uint8Array(N * blocks * block).fill(7));
const s = b.reshape(b.constant({dataType: 'float32', shape: [N * blocks]}, new Float32Array(N * blocks).fill(0.25)), [N, blocks, 1]);
const z = b.constant({dataType: 'uint8', shape: [N, blocks, 1]}, new Uint8Array(N * blocks).fill(5));
const a = b.input('a', {dataType: 'float32', shape: [1, blocks * block]});
const y = b.matmul(a, b.transpose(b.reshape(b.dequantizeLinear(w, s, z), [N, blocks * block])));
const graph = await b.build({y});
const plan = graphSlots(graph).plan;
const constants = plan.values.filter((v) => v.kind === 'constant').map((v) => v.bytes).sort((x, y) => x - y);
const kernels = plan.describeSteps().map((st) => st.kernel);
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
    points (256 bytes); one quantized matrix-vector step; (7 - 5) * 0.25 * 128 = 64 each."""
    result = run_js(webnn_page, server_url, _BYTES_JS)
    assert "ok" in result, result
    got = result["ok"]
    assert got["constants"] == [256, 1024, 8192], got
    assert got["kernels"] == ["matmul_qgemv_qu8zu8"], got
    assert got["values"] == [64.0] * 64
