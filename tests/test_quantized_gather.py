"""Quantized embedding tables kept packed on the GPU (compile/quantized_gather.js,
ops/quantized_gather.js): gather(dequantizeLinear(constant table, scale, zeroPoint), indices), as
ORT's WebNN EP writes ONNX GatherBlockQuantized, is one step that dequantizes only the gathered
elements; the whole table is never dequantized and stays its packed bytes on the GPU.

Values against float64 NumPy ((q - z) * s rounded once to the output type, as dequantizeLinear,
then gathered with gather's index rules: clamped, negative from the end): int8 / uint8 / int4 /
uint4 tables, odd element counts, block sizes 4-32, ranks 1-3, gather along every axis, int32 /
uint32 / int64 indices (negative and out of range), NaN / ±Inf scales, float16 scales, a scale
reshaped from a constant of another shape, two gathers of one table; and the near misses that keep
their dequantizeLinear step.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, operand, tensor
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_runner import run_js
from tests.test_quantized_matmul import INT_RANGE, _blockwise, _op, _weights

pytestmark = pytest.mark.shared_page

SEED = 20261206


def _gather_ref(x, idx, axis):
    """gather's reference: indices clamped to [-n, n - 1], negative counted from the end."""
    n = x.shape[axis]
    i = np.clip(np.asarray(idx, np.int64), -n, n - 1)
    return np.take(x, np.where(i < 0, i + n, i), axis=axis)


def gather_case(tag, *, ttype, table, scale, zero, indices, itype="int32", axis=0, out_type="float32",
                scale_const_shape=None, extra_gather=None, dq_also_output=False):
    """``y = gather(dequantizeLinear(table, scale, zero), indices, axis)`` (and ``y2``, a second
    gather of the same dequantized table with ``extra_gather`` indices)."""
    constants = {"t": _weights(table, ttype), "z": _weights(zero, ttype)}
    operators = []
    if scale_const_shape:
        constants["s0"] = tensor(scale.reshape(scale_const_shape), out_type)
        operators.append(_op("reshape", ["s0", list(scale.shape)], "s"))
    else:
        constants["s"] = tensor(scale, out_type)
    operators.append(_op("dequantizeLinear", ["t", "s", "z"], "d"))
    operators.append(_op("gather", ["d", "i"], "y", axis=axis))
    s64 = np.asarray(scale, np.float64) if out_type == "float32" else scale.astype(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore"):
        x = ((table.astype(np.int64) - _blockwise(zero, table.shape).astype(np.int64)) * _blockwise(s64, table.shape))
    x = x.astype(np.float32).astype(np.float16 if out_type == "float16" else np.float32).astype(np.float64)
    inputs = {"i": {"dataType": itype, "shape": list(np.shape(indices))}}
    feeds = {"i": tensor(indices, itype)}
    expected = {"y": tensor(_gather_ref(x, indices, axis), out_type)}
    outputs = ["y"]
    if extra_gather is not None:
        operators.append(_op("gather", ["d", "i2"], "y2", axis=axis))
        inputs["i2"] = {"dataType": itype, "shape": list(np.shape(extra_gather))}
        feeds["i2"] = tensor(extra_gather, itype)
        expected["y2"] = tensor(_gather_ref(x, extra_gather, axis), out_type)
        outputs.append("y2")
    if dq_also_output:
        expected["d"] = tensor(x, out_type)
        outputs.append("d")
    graph = {"inputs": inputs, "constants": constants, "operators": operators, "outputs": outputs}
    return graph_case(f"quantized-gather/{ttype}/{tag}", "gather", out_type, graph, feeds, expected, "ATOL", 0)


def _table(rng, ttype, shape):
    lo, hi = INT_RANGE[ttype]
    return rng.integers(lo, hi + 1, shape).astype(np.int64)


def _scales(rng, shape):
    return (2.0 ** -rng.integers(2, 9, shape)).astype(np.float32)


def fused_cases():
    rng = np.random.default_rng(SEED)
    cases = []
    # an LLM embedding as ORT writes GatherBlockQuantized: [vocab, hidden], blocks along hidden
    for ttype, (v, h, block) in {"uint8": (37, 48, 16), "int8": (29, 64, 32), "uint4": (19, 40, 8), "int4": (23, 36, 4)}.items():
        blocks = h // block
        table = _table(rng, ttype, (v, h))
        zero = _table(rng, ttype, (v, blocks))
        idx = np.array([[0, v - 1, 5, -1, -v, 3 * v, -7 * v]])
        cases.append(gather_case(f"embedding-{v}x{h}-block{block}", ttype=ttype, table=table, scale=_scales(rng, (v, blocks)),
                                 zero=zero, indices=idx))
    # odd element count, int64 indices, the scale a reshape of a flat constant (ORT's MatMulNBits style)
    table = _table(rng, "uint4", (7, 9))
    cases.append(gather_case("odd-count-int64", ttype="uint4", table=table, scale=_scales(rng, (7, 1)),
                             zero=_table(rng, "uint4", (7, 1)), indices=np.array([6, -2, 0, 9, -100]), itype="int64",
                             scale_const_shape=(7,)))
    # rank 3, gather along the middle axis, blocks along two axes, uint32 indices
    table = _table(rng, "int4", (3, 5, 8))
    cases.append(gather_case("rank3-axis1", ttype="int4", table=table, scale=_scales(rng, (3, 5, 2)),
                             zero=_table(rng, "int4", (3, 5, 2)), indices=np.array([[4, 0], [2, 9]]), itype="uint32", axis=1))
    # rank 1 (per-tensor scale), a scalar index
    table = _table(rng, "int8", (13,))
    cases.append(gather_case("rank1-scalar-index", ttype="int8", table=table, scale=np.array([0.375], np.float32),
                             zero=np.array([-3]), indices=np.array(-4)))
    # NaN / ±Inf scales (and q == z under an infinite scale: NaN)
    table = _table(rng, "uint8", (4, 8))
    table[1, :4] = 10
    scale = np.array([[np.nan, 0.5], [np.inf, -np.inf], [0.25, 1e-3], [3.0, -0.125]], np.float32)
    zero = np.array([[1, 2], [10, 3], [200, 0], [255, 128]])
    cases.append(gather_case("nan-inf-scales", ttype="uint8", table=table, scale=scale, zero=zero,
                             indices=np.array([[3, 0, 1, 2, 1]])))
    # float16 scales and output
    table = _table(rng, "int8", (6, 32))
    cases.append(gather_case("float16", ttype="int8", table=table, scale=(rng.random((6, 2)) * 0.1 + 0.01).astype(np.float32),
                             zero=_table(rng, "int8", (6, 2)), indices=np.array([5, 0, 2]), out_type="float16"))
    # two gathers of one table (a prefill and a decode row, say): both rewritten, no dequantize left
    table = _table(rng, "uint4", (10, 16))
    cases.append(gather_case("two-gathers", ttype="uint4", table=table, scale=_scales(rng, (10, 1)),
                             zero=_table(rng, "uint4", (10, 1)), indices=np.array([1, 2, 3]), extra_gather=np.array([[9]])))
    return cases


def test_gathers_of_packed_tables_are_one_step(webnn_page, server_url):
    """Each gather of a dequantized packed table is one step naming the dequantize (and the
    scale's reshape) it absorbed; the values are the dequantized table's gathered rows. (A
    float16 output adds its packing step at the graph boundary, as any float16 output.)"""
    cases = fused_cases()
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        ops = [o["op"] for o in c["graph"]["operators"]]
        absorbed = [op for op in ops if op != "gather"]
        expected = [absorbed + ["gather"]] * ops.count("gather")
        if c["name"].endswith("float16"):
            expected.append(["gather"])  # the float16 output's packing step at the graph boundary
        assert r["steps"] == expected, (c["name"], r["steps"])


def test_near_misses_keep_their_dequantize(webnn_page, server_url):
    """A dequantized table that is also a graph output keeps its dequantizeLinear step (and the
    values stay right)."""
    rng = np.random.default_rng(SEED + 1)
    table = _table(rng, "int8", (5, 8))
    case = gather_case("dequantized-also-output", ttype="int8", table=table, scale=_scales(rng, (5, 2)),
                       zero=_table(rng, "int8", (5, 2)), indices=np.array([4, 1]), dq_also_output=True)
    [result] = run_cases(webnn_page, server_url, [case], steps=True)
    assert_all_pass([result])
    assert ["dequantizeLinear"] in result["steps"], result["steps"]


_BYTES_JS = """
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
const [V, H, block] = [1000, 64, 32];
const b = new MLGraphBuilder(context);
const t = b.constant({dataType: 'uint4', shape: [V, H]}, new Uint8Array(V * H / 2).fill(0x97));
const s = b.constant({dataType: 'float32', shape: [V, H / block]}, new Float32Array(V * H / block).fill(0.5));
const z = b.constant({dataType: 'uint4', shape: [V, H / block]}, new Uint8Array(V * H / block / 2).fill(0x88));
const i = b.input('i', {dataType: 'int32', shape: [1, 3]});
const y = b.gather(b.dequantizeLinear(t, s, z), i);
const graph = await b.build({y});
const constants = describeGraph(graph).constantBytes;
const x = await context.createTensor({dataType: 'int32', shape: [1, 3], writable: true});
const out = await context.createTensor({dataType: 'float32', shape: [1, 3, H], readable: true});
context.writeTensor(x, new Int32Array([7, 999, -1]));
context.dispatch(graph, {i: x}, {y: out});
const values = Array.from(new Float32Array(await context.readTensor(out)));
context.destroy();
return {constants, values};
"""


def test_tables_take_their_packed_size_on_the_gpu(webnn_page, server_url):
    """A [1000, 64] uint4 table: the plan's constants are the packed table (32,000 bytes, not
    256,000 widened or dequantized), the scales (2,000 f32) and the packed zero points (1,000
    bytes); element pairs 0x97 are 7 then 9, less the zero point 8, times 0.5."""
    result = run_js(webnn_page, server_url, _BYTES_JS)
    assert "ok" in result, result
    got = result["ok"]
    assert got["constants"] == [1008, 8000, 32000], got
    assert got["values"] == [-0.5, 0.5] * (3 * 64 // 2)


_PAST_QUARTER_JS = """
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext({deviceType: 'gpu'});
const adapter = await navigator.gpu.requestAdapter();
const binding = Math.min(adapter.limits.maxStorageBufferBindingSize, adapter.limits.maxBufferSize);
const [K, block] = [896, 32];
const blocks = K / block;
// enough rows that the float32 table passes a quarter of the binding limit
const N = Math.floor(binding / 4 / (4 * K)) + 64;
const q = new Uint8Array(N * K);
for (let r = 0; r < N; r++) for (let c = 0; c < K; c++) q[r * K + c] = (r * 7 + c * 13) & 255;
const s = new Float32Array(N * blocks);
const z = new Uint8Array(N * blocks);
for (let r = 0; r < N; r++) {
  for (let k = 0; k < blocks; k++) {
    s[r * blocks + k] = 2 ** -((r + k) % 7 + 2);
    z[r * blocks + k] = (r * 3 + k * 5) & 255;
  }
}
const b = new MLGraphBuilder(context);
const table = b.dequantizeLinear(b.constant({dataType: 'uint8', shape: [N, K]}, q),
  b.constant({dataType: 'float32', shape: [N, blocks]}, s), b.constant({dataType: 'uint8', shape: [N, blocks]}, z));
const rows = [0, 1, N >> 1, N - 1, -1];
const y = b.gather(table, b.input('i', {dataType: 'int32', shape: [rows.length]}));
const graph = await b.build({y});
const {steps, constantBytes} = describeGraph(graph);
const i = await context.createTensor({dataType: 'int32', shape: [rows.length], writable: true});
const out = await context.createTensor({dataType: 'float32', shape: [rows.length, K], readable: true});
context.writeTensor(i, new Int32Array(rows));
context.dispatch(graph, {i}, {y: out});
const values = Array.from(new Float32Array(await context.readTensor(out)));
const limit = context.opSupportLimits().maxTensorByteLength;
context.destroy();
return {N, K, binding, limit, tableShape: table.shape, steps: steps.map((st) => st.operators.map((o) => o.type)), constantBytes, values};
"""


def test_table_dequantized_past_a_quarter_of_the_binding_limit(webnn_page, server_url):
    """ORT's GatherBlockQuantized embedding as its WebNN EP writes it, dequantizeLinear of the whole
    uint8 table then gather, where the float32 table is more than a quarter of the device's binding
    limit (the most any operand could take while every type had the widened 8-bit types' limit;
    Qwen2.5-0.5B's [151936, 896] on a 2 GiB binding is such a table). The builder accepts the
    float32 operand (it fits maxTensorByteLength), build() gathers the packed rows and never
    allocates it, and the rows are right. The table is [N, 896] with N just past that quarter: on
    SwiftShader (1 GiB binding) 74,962 rows, 67 MB of uint8 made in the page, a 269 MB float32
    operand that exists only in the builder."""
    result = run_js(webnn_page, server_url, _PAST_QUARTER_JS)
    assert "ok" in result, result
    got = result["ok"]
    n, k, binding = got["N"], got["K"], got["binding"]
    assert got["tableShape"] == [n, k]
    assert n * k * 4 > binding // 4 and n * k * 4 <= got["limit"], got["limit"]
    assert got["steps"] == [["dequantizeLinear", "gather"]], got["steps"]
    # the packed table, its scales and zero points; nothing of the float32 table's size
    assert max(got["constantBytes"]) < n * k + 64, got["constantBytes"]
    rows = np.array([0, 1, n // 2, n - 1, n - 1])
    cols = np.arange(k)
    q = (rows[:, None] * 7 + cols[None, :] * 13) & 255
    block = cols // 32
    s = 2.0 ** -((rows[:, None] + block[None, :]) % 7 + 2)
    z = (rows[:, None] * 3 + block[None, :] * 5) & 255
    expected = ((q - z) * s).astype(np.float32)
    np.testing.assert_array_equal(np.array(got["values"], np.float32).reshape(len(rows), k), expected)
