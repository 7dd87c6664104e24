"""Norm prologues (compile/norm_prologue.js): an RMS normalization of one row written out as ORT
writes SimplifiedLayerNormalization (pow or mul, reduceMean, add, sqrt, div or reciprocal + mul,
mul by the scale) whose result only packed products read as A (a decode step's norm before the
q/k/v product and before the gate/up pair) has no step: the quantized matrix-vector kernel
normalizes A in its workgroup memory. Values against float64 NumPy on SwiftShader's serial kernel
and the split kernel of hardware adapters; where a reader cannot take the normalization over (a
float product, a graph output, more than one row, a row over NORM_MAX_K) it keeps its step.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conformance import family_helpers
from tests.conformance.encode import graph_case, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.test_gated_pairs import _packed
from tests.test_quantized_matmul import _dyadic, _op, _weights

pytestmark = pytest.mark.shared_page

SEED = 20261209
NORM_OPS = {"pow", "mul", "reduceMean", "add", "sqrt", "div", "reciprocal"}


def norm_case(tag, rng, *, k=64, rows=1, square="pow", reciprocal=False, readers=("q",), extra=None, dtype="float32"):
    """``y_i = reader_i(rmsnorm(x) * g)``: readers 'q' (a packed product), 'qkv' (three of them:
    siblings), 'pair' (a SwiGLU gate/up pair), 'float' (a float product); ``extra``: 'output'
    (the normalized row is a graph output too); ``dtype``: of every float operand (float16: a
    q4f16 model's, the scales too; the reference rounds each operator's value as it would)."""
    ft = np.dtype(dtype).type
    x = rng.uniform(-2, 2, (1, rows, k)).astype(ft)
    g = rng.uniform(0.5, 1.5, (k,)).astype(ft)
    consts = {"two": tensor(np.array(2, ft), dtype), "eps": tensor(np.array(1e-5, ft), dtype),
              "g": tensor(g, dtype)}
    ops = [_op("pow", ["x", "two"], "sq") if square == "pow" else _op("mul", ["x", "x"], "sq"),
           _op("reduceMean", ["sq"], "ms", axes=[2], keepDimensions=True), _op("add", ["ms", "eps"], "mse"),
           _op("sqrt", ["mse"], "rms")]
    if reciprocal:
        ops += [_op("reciprocal", ["rms"], "inv"), _op("mul", ["x", "inv"], "xn")]
    else:
        ops.append(_op("div", ["x", "rms"], "xn"))
    ops.append(_op("mul", ["xn", "g"], "h"))
    x64 = x.astype(np.float64)
    if dtype == "float32":
        h = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + np.float64(np.float32(1e-5))) * g
    else:
        rt = lambda v: np.asarray(v, np.float64).astype(np.float32).astype(ft).astype(np.float64)  # noqa: E731
        rms = rt(np.sqrt(rt(rt(rt(x64 ** 2).mean(-1, keepdims=True)) + np.float64(ft(1e-5)))))
        h = rt(rt(x64 * rt(1 / rms) if reciprocal else x64 / rms) * g.astype(np.float64))
    expected, outputs = {}, []
    for i, kind in enumerate(readers):
        if kind == "float":
            b = _dyadic(rng, (k, 12), 4)
            consts[f"fb{i}"] = tensor(b, "float32")
            ops.append(_op("matmul", ["h", f"fb{i}"], f"y{i}"))
            y = h @ b.astype(np.float64)
        elif kind == "pair":
            parts = []
            for t in ("g", "u"):
                chain, c, b = _packed(rng, f"{t}{i}", 12, k, 32, "uint4", True, dtype)
                ops += chain
                consts.update(c)
                parts.append(b)
            ops += [_op("matmul", ["h", f"bg{i}"], f"gt{i}"), _op("matmul", ["h", f"bu{i}"], f"up{i}"),
                    _op("sigmoid", [f"gt{i}"], f"sg{i}"), _op("mul", [f"sg{i}", f"gt{i}"], f"si{i}"),
                    _op("mul", [f"si{i}", f"up{i}"], f"y{i}")]
            gt, up = h @ parts[0], h @ parts[1]
            y = gt / (1 + np.exp(-gt)) * up
        else:
            chain, c, b = _packed(rng, str(i), 10 + i, k, 32, "uint4", True, dtype)
            ops += chain + [_op("matmul", ["h", f"b{i}"], f"y{i}")]
            consts.update(c)
            y = h @ b
        expected[f"y{i}"] = tensor(y.astype(ft), dtype)
        outputs.append(f"y{i}")
    if extra == "output":
        outputs.append("h")
        expected["h"] = tensor(h.astype(ft), dtype)
    graph = {"inputs": {"x": describe(x)}, "constants": consts, "operators": ops, "outputs": outputs}
    return graph_case(f"norm-prologue/{tag}", "layerNormalization", dtype, graph, {"x": tensor(x, dtype)},
                      expected, "ULP", 4 * k)


def absorbed_cases():
    rng = np.random.default_rng(SEED)
    return [norm_case("one-product", rng),
            norm_case("mul-square-reciprocal", rng, k=96, square="mul", reciprocal=True),
            norm_case("qkv", rng, readers=("q", "q", "q")),    # siblings: one merged product
            norm_case("gated-pair", rng, readers=("pair",)),
            norm_case("k-not-multiple-of-4", rng, k=66),
            # float16 (q4f16): the prologue rounds each stage as the normalization's step would;
            # siblings and the gated pair take float16 scales
            norm_case("float16", rng, dtype="float16"), norm_case("float16-qkv", rng, readers=("q", "q", "q"), dtype="float16"),
            norm_case("float16-gated-pair", rng, readers=("pair",), dtype="float16")]


def kept_cases():
    rng = np.random.default_rng(SEED + 1)
    return [norm_case("float-reader", rng, readers=("q", "float")),
            norm_case("graph-output", rng, extra="output"),
            norm_case("two-rows", rng, rows=2),
            norm_case("row-over-max", rng, k=2080)]


def _norm_steps(steps):
    return [s for s in steps if "reduceMean" in s]


@pytest.mark.parametrize("kernel", ["own", "qgemv-split"])
def test_norm_prologue_values_and_steps(webnn_page, server_url, kernel):
    """The absorbed norms leave no step of their own: each product step lists the normalization's
    operators with its own; the kept ones keep one normalization step; values right either way."""
    overrides = {"matmul": "qgemv", "qgemvSerial": False} if kernel == "qgemv-split" else None
    cases = absorbed_cases() + kept_cases()
    results = run_cases(webnn_page, server_url, cases, overrides, steps=True)
    assert_all_pass(results)
    absorbed = {c["name"] for c in absorbed_cases()}
    for c, r in zip(cases, results):
        norms = _norm_steps(r["steps"])
        if c["name"] in absorbed:
            assert all("matmul" in s for s in norms) and norms, (c["name"], r["steps"])
            assert all(NORM_OPS & set(s) >= {"reduceMean", "sqrt"} for s in norms), (c["name"], r["steps"])
            if "qkv" in c["name"]:  # the three products are one (compile/siblings.js), float16 scales too
                assert [s.count("dequantizeLinear") for s in norms] == [3], (c["name"], r["steps"])
        else:
            assert [s for s in norms if "matmul" not in s], (c["name"], r["steps"])


def test_the_tuning_switch_keeps_the_step(webnn_page, server_url):
    """normPrologue false: the absorbed cases keep their normalization step, values unchanged."""
    cases = absorbed_cases()[:2]
    results = run_cases(webnn_page, server_url, cases, {"normPrologue": False}, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert [s for s in _norm_steps(r["steps"]) if "matmul" not in s], (c["name"], r["steps"])


def test_a_device_of_the_default_limits_keeps_the_step_where_the_row_does_not_fit(webnn_page, server_url):
    """A context on a GPUDevice made with WebGPU's default limits (16 KiB of workgroup memory): a
    2048-element row beside 8 columns' partial sums does not fit, so the product binds the
    normalized row and the norm keeps its step; values right."""
    js = family_helpers._RUN_JS.replace(
        "const context = await navigator.ml.createContext();",
        "const adapter = await navigator.gpu.requestAdapter();"
        " const context = await navigator.ml.createContext(await adapter.requestDevice());")
    assert js != family_helpers._RUN_JS
    rng = np.random.default_rng(SEED + 2)
    cases = [norm_case("k2048", rng, k=2048), norm_case("k2048-pair", rng, k=2048, readers=("pair",))]
    family_helpers.open_harness(webnn_page, server_url)
    results = webnn_page.evaluate(js, [json.dumps(cases), {"qgemvSerial": False, "qgemvConfig": {"columns": 8}}, True, None])
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert [s for s in _norm_steps(r["steps"]) if "matmul" not in s], (c["name"], r["steps"])


def _selecting_case(k=64):
    """float16 norm -> a packed product whose column j picks h[j] (weight 1 at row j, 0 elsewhere,
    scale 1, zero point 0): y = h exactly, so the prologue's normalized row is seen bit for bit
    against float64 rounded to binary16 at every stage, as the normalization's own step rounds."""
    rng = np.random.default_rng(SEED + 2)
    x = rng.uniform(-2, 2, (1, 1, k)).astype(np.float16)
    g = rng.uniform(0.5, 1.5, (k,)).astype(np.float16)
    blocks = k // 32
    w = np.eye(k, dtype=np.uint8).reshape(k, blocks, 32)
    consts = {"two": tensor(np.array(2, np.float16), "float16"), "eps": tensor(np.array(1e-5, np.float16), "float16"),
              "g": tensor(g, "float16"), "w": _weights(w, "uint4"), "z": _weights(np.zeros((k, blocks, 1), np.uint8), "uint4"),
              "s": tensor(np.ones((k, blocks, 1), np.float16), "float16")}
    ops = [_op("pow", ["x", "two"], "sq"), _op("reduceMean", ["sq"], "ms", axes=[2], keepDimensions=True),
           _op("add", ["ms", "eps"], "mse"), _op("sqrt", ["mse"], "rms"), _op("div", ["x", "rms"], "xn"),
           _op("mul", ["xn", "g"], "h"), _op("dequantizeLinear", ["w", "s", "z"], "d"),
           _op("reshape", ["d", [k, k]], "dr"), _op("transpose", ["dr"], "b"), _op("matmul", ["h", "b"], "y")]
    rt = lambda v: np.asarray(v, np.float64).astype(np.float32).astype(np.float16).astype(np.float64)  # noqa: E731
    x64 = x.astype(np.float64)
    rms = rt(np.sqrt(rt(rt(rt(x64 ** 2).mean(-1, keepdims=True)) + np.float64(np.float16(1e-5)))))
    h = rt(rt(x64 / rms) * g.astype(np.float64))
    graph = {"inputs": {"x": describe(x)}, "constants": consts, "operators": ops, "outputs": ["y"]}
    return graph_case("norm-prologue/float16-bits", "layerNormalization", "float16", graph, {"x": tensor(x, "float16")},
                      {"y": tensor(h.astype(np.float16), "float16")}, "ULP", 0)


def test_a_float16_prologue_rounds_each_stage(webnn_page, server_url):
    results = run_cases(webnn_page, server_url, [_selecting_case()], {"matmul": "qgemv", "qgemvSerial": False}, steps=True)
    assert_all_pass(results)
    norms = _norm_steps(results[0]["steps"])
    assert norms and all("matmul" in s for s in norms), results[0]["steps"]
