"""Matrix products on the GPU's f16 matrix units (ops/matmul_matrix_units.js): the context
option that puts float32 products there, and, where the device has the units (an adapter with
`shader-f16` and f16 subgroup-matrix configurations: an NVIDIA GPU under Chromium started with
`--enable-dawn-features=vulkan_enable_f16_on_nvidia`, docs/float16-nvidia.md), the values of
float16 and float32 products on them against float64 NumPy. Elsewhere (SwiftShader) those are
skipped with the reason.

Operands are multiples of 1/64 in [-2, 2] (exact in binary16), so every product and every sum
is exact in f32 and a float16 result must be the binary16 rounding of the exact sum, whatever
order the units add in: tiles cut at every edge, K split, batches, transposed operands, alpha,
beta and C, a fused activation.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.graph_runner import run_js

pytestmark = pytest.mark.shared_page

_OPTION_JS = """
const {configureContext, contextInfo} = await import('/polyfill/options.js');
const errors = [];
try { await navigator.ml.createContext({polyfill: {productPrecision: 'bfloat16'}}); } catch (e) { errors.push(e.name); }
const context = await navigator.ml.createContext({polyfill: {productPrecision: 'float16'}});
const made = contextInfo(context).productPrecision;
try { configureContext(context, {productPrecision: 'half', tuning: {splitK: 2}}); } catch (e) { errors.push(e.name); }
const kept = contextInfo(context);
const back = configureContext(context, {productPrecision: null}).productPrecision;
context.destroy();
return {errors, made, keptPrecision: kept.productPrecision, keptSplit: kept.tuning.splitK ?? null, back};
"""


def test_product_precision_option(webnn_page, server_url):
    """`polyfill.productPrecision` is 'float32' or 'float16' (TypeError otherwise, at
    createContext and configureContext, the latter changing nothing then; null: back to the
    default); contextInfo reads it."""
    result = run_js(webnn_page, server_url, _OPTION_JS)
    assert result.get("ok") == {"errors": ["TypeError", "TypeError"], "made": "float16", "keptPrecision": "float16",
                                "keptSplit": None, "back": "float32"}, result


# Each case: [name, A shape, B shape, options, tuning]; A and B of the case's data type, Y read
# back with the kernels of the plan.
_CASES = [
    ["bert ffn out, split", [128, 3072], [3072, 768], {}, {}],
    ["edges, no vec4", [100, 70], [70, 130], {}, {}],
    ["wide tiles at the edges", [130, 66], [66, 257], {}, {"matmul": "matrix128"}],
    ["8 subgroups a tile", [130, 66], [66, 257], {}, {"matmul": "matrix128", "matrixGrid": "4x2"}],
    ["batched", [3, 33, 40], [3, 40, 50], {}, {}],
    ["forced split", [64, 200], [200, 72], {}, {"splitK": 3}],
    ["gemm", [96, 80], [112, 80], {"bTranspose": True, "alpha": 0.5, "beta": 2}, {}],
    ["gemm, A transposed, wide tiles split", [1024, 130], [1024, 250], {"aTranspose": True, "alpha": 1, "beta": 1},
     {"matmul": "matrix128", "splitK": 3}],
    ["B broadcast over batches", [2, 3, 33, 40], [40, 50], {}, {}],
    # the adapter's other configurations (a case whose configuration it does not list runs tiled)
    # the kernel's shapes (matrixKernel): two copies of 16-deep slices; 64-deep slices with result
    # matrices stored two at a time and split tiles inside the product storing directly (the last
    # row of tiles does not: M = 130); two copies of slices and of four results at a time, wide
    # tiles split
    ["two copies, 16-deep slices", [130, 66], [66, 257], {}, {"matmul": "matrix128", "matrixKernel": {"depth": 16, "stages": 2}}],
    ["64-deep slices, direct split", [130, 200], [200, 192], {}, {"splitK": 3, "matrixKernel": {"depth": 64, "storeBatch": 2, "direct": True}}],
    ["gemm, two copies, batches of four", [1024, 130], [1024, 250], {"aTranspose": True, "alpha": 1, "beta": 1},
     {"matmul": "matrix128", "splitK": 3, "matrixKernel": {"stages": 2, "storeBatch": 4, "storeHalves": 2, "direct": True}}],
    ["configuration 16x8x16", [100, 70], [70, 130], {}, {"matrixConfig": "16x8x16"}],
    ["configuration 16x8x8, wide tiles", [130, 66], [66, 257], {}, {"matrixConfig": "16x8x8", "matmul": "matrix128"}],
]

_VALUES_JS = """
const {configureContext, contextInfo} = await import('/polyfill/options.js');
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext({polyfill: {productPrecision: args.precision}});
if (!contextInfo(context).matrixUnits) { context.destroy(); return null; }
const value = (i, salt) => ((((i + salt) * 7919) % 257) - 128) / 64;
const fill = (n, salt) => Float32Array.from({length: n}, (_, i) => value(i, salt));
const T = args.dataType;
const typed = (f) => (T === 'float16' ? new Float16Array(f) : f);
const out = [];
for (const [name, sa, sb, options, tuning] of args.cases) {
  configureContext(context, {tuning: {matmul: null, splitK: null, matrixGrid: null, matrixConfig: null, matrixKernel: null, ...tuning}});
  const listed = contextInfo(context).matrixUnits !== null;
  const b = new MLGraphBuilder(context);
  const a = b.input('a', {dataType: T, shape: sa});
  const w = b.input('b', {dataType: T, shape: sb});
  // gemm: C = [-1, 1, -1, ...] over the columns, then relu
  const columns = options.bTranspose ? sb[0] : sb[sb.length - 1];
  const c = b.constant({dataType: T, shape: [columns]}, typed(Float32Array.from({length: columns}, (_, i) => (i % 2 ? 1 : -1))));
  const y = name.startsWith('gemm') ? b.relu(b.gemm(a, w, {...options, c})) : b.matmul(a, w);
  const graph = await b.build({y});
  const count = (s) => s.reduce((x, d) => x * d, 1);
  const ha = fill(count(sa), 1), hb = fill(count(sb), 2);
  const ta = await context.createTensor({dataType: T, shape: sa, writable: true});
  const tb = await context.createTensor({dataType: T, shape: sb, writable: true});
  const ty = await context.createTensor({dataType: T, shape: y.shape, readable: true});
  context.writeTensor(ta, typed(ha));
  context.writeTensor(tb, typed(hb));
  context.dispatch(graph, {a: ta, b: tb}, {y: ty});
  const bytes = await context.readTensor(ty);
  const yv = T === 'float16' ? new Float16Array(bytes) : new Float32Array(bytes);
  out.push({name, listed, kernels: describeGraph(graph).steps.map((s) => s.kernel), y: Array.from(yv, (v) => (Number.isFinite(v) ? v : String(v)))});
  graph.destroy(); ta.destroy(); tb.destroy(); ty.destroy();
}
context.destroy();
return out;
"""


def _operand(shape, salt):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((((i + salt) * 7919) % 257) - 128) / 64).reshape(shape)


def _run(webnn_page, server_url, data_type, precision, cases):
    args = {"dataType": data_type, "precision": precision, "cases": cases}
    result = run_js(webnn_page, server_url, f"const args = {json.dumps(args)};\n{_VALUES_JS}")
    assert "ok" in result, result
    if result["ok"] is None:
        pytest.skip("the device has no f16 matrix units (shader-f16 and f16 subgroup-matrix configurations)")
    return result["ok"]


def _expect(name, sa, sb, options):
    """float64 NumPy of a case (gemm: relu(alpha * op(A) x op(B) + beta * C), C alternating -1, 1)."""
    a, b = _operand(sa, 1), _operand(sb, 2)
    if not name.startswith("gemm"):
        return np.matmul(a, b)
    a = a.T if options.get("aTranspose") else a
    b = b.T if options.get("bTranspose") else b
    c = np.where(np.arange(b.shape[1]) % 2, 1.0, -1.0)
    return np.maximum(0, options["alpha"] * a @ b + options["beta"] * c)


def test_float16_products_on_matrix_units(webnn_page, server_url):
    """float16 matmuls and gemms run the matrix kernel and give the binary16 rounding of the
    exact result (their sums are exact in f32 whatever the order)."""
    for (name, sa, sb, options, tuning), got in zip(_CASES, _run(webnn_page, server_url, "float16", "float32", _CASES)):
        assert any(k.startswith("matmul_matrix") for k in got["kernels"]) == got["listed"], (name, got["kernels"])
        if tuning.get("splitK"):
            assert "matmul_split_reduce" in got["kernels"], (name, got["kernels"])
        expect = _expect(name, sa, sb, options).astype(np.float16).astype(np.float64)
        y = np.asarray(got["y"], dtype=np.float64).reshape(expect.shape)
        np.testing.assert_array_equal(y, expect, err_msg=name)


_F32_CASES = [
    ["bert qkv", [128, 768], [768, 2304], {}, {}],
    ["edges", [37, 50], [50, 61], {}, {}],
]


def test_float32_products_with_float16_precision(webnn_page, server_url):
    """With productPrecision 'float16' float32 products run on the matrix units too: operands that
    binary16 holds give the exact product (sums in f32); the default context keeps them off, even
    where the tuning forces the matrix kernel."""
    for (name, sa, sb, _, _), got in zip(_F32_CASES, _run(webnn_page, server_url, "float32", "float16", _F32_CASES)):
        assert any(k.startswith("matmul_matrix") for k in got["kernels"]), (name, got["kernels"])
        expect = np.matmul(_operand(sa, 1), _operand(sb, 2))
        np.testing.assert_array_equal(np.asarray(got["y"]).reshape(expect.shape), expect, err_msg=name)
    plain = _run(webnn_page, server_url, "float32", "float32", _F32_CASES[1:] + [["forced", [37, 50], [50, 61], {}, {"matmul": "matrix"}]])
    for got in plain:
        assert not any(k.startswith("matmul_matrix") for k in got["kernels"]), (got["name"], got["kernels"])


_SHAPES_JS = """
const {matrixShader, matrixFits, MATRIX_KERNEL} = await import('/polyfill/ops/matmul_matrix_units.js');
const {declareIndexer} = await import('/polyfill/gpu/wgsl.js');
// matmul_kernels.js's common uniforms and store_y, reduced to what the text needs
const declareCommon = (shader, rank) => {
  for (const n of ['M', 'N', 'K', 'batches', 'a_base', 'a_sm', 'a_sk', 'b_base', 'b_sk', 'b_sn', 'y_base', 'y_sm', 'y_sn', 'y_bs']) shader.uniform(n);
  declareIndexer(shader, 'ab', rank); declareIndexer(shader, 'bb', rank);
  return '';
};
const storeY = () => 'fn store_y(v: f32, m: u32, n: u32, y0: u32) { Y[y0 + m * u_y_sm() + n * u_y_sn()] = v; }';
const unlimited = {maxComputeInvocationsPerWorkgroup: Infinity, maxComputeWorkgroupSizeX: Infinity, maxComputeWorkgroupStorageSize: Infinity};
const out = {bad: [], made: 0, refused: 0, barriers: {}};
// the kernel's shapes (tuning switch matrixKernel): the default, two copies of shallow slices,
// deep slices with batched result stores and direct split stores
const SHAPES = [{}, {depth: 16, stages: 2}, {depth: 64, storeBatch: 2, direct: true}, {stages: 2, storeBatch: 4, storeHalves: 2}];
for (const [M, N, K] of [[16, 16, 16], [16, 8, 16], [16, 8, 8], [8, 8, 8], [32, 8, 16]]) {
  for (const subgroupSize of [32, 64, 128]) {
    for (const rows of [1, 2, 4]) for (const cols of [1, 2, 4]) for (const wide of [false, true]) for (const shape of SHAPES) {
      const units = {M, N, K, subgroupSize, grid: {rows, cols}, ...MATRIX_KERNEL, ...shape};
      const tile = wide ? 128 : 64;
      for (const v of [{vecA: true, vecB: true}, {aKContiguous: false, bNContiguous: false, split: true}]) {
        const variant = {dataType: 'float16', batchRank: 1, hasC: false, aKContiguous: true, bNContiguous: true, vecA: false, vecB: false, ...v, wide, units};
        let source = null;
        try { source = matrixShader(variant, declareCommon, storeY).source(); } catch (e) {
          if (e.name !== 'RangeError' || matrixFits(tile, units, unlimited)) out.bad.push([M, N, K, subgroupSize, rows, cols, wide, `${e.name}: ${e.message}`]);
          out.refused++;
          continue;
        }
        out.made++;
        // barriers of the 128-wide kernel of 2 x 2 subgroups of 32 and 16x16 matrices (16 result matrices a subgroup)
        if (M === 16 && N === 16 && subgroupSize === 32 && rows === 2 && cols === 2 && wide) {
          out.barriers[`${JSON.stringify(shape)}${v.split ? ' split' : ''}`] = source.split('workgroupBarrier()').length - 1;
        }
        const size = Number(/@workgroup_size\\((\\d+)\\)/.exec(source)?.[1]);
        if (!matrixFits(tile, units, unlimited) || /NaNu|NaN[,;)]|Infinity|undefined|\\d\\.\\d+u\\b/.test(source) || size !== rows * cols * subgroupSize) {
          out.bad.push([M, N, K, subgroupSize, rows, cols, wide, source.match(/NaNu|NaN[,;)]|Infinity|undefined|\\d\\.\\d+u\\b/)?.[0] ?? `workgroup ${size}`]);
        }
      }
    }
  }
}
// the device limits decide: WebGPU's defaults hold the 64-wide kernel of 2 x 2 subgroups of 32, not the 128-wide one
const defaults = {maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupSizeX: 256, maxComputeWorkgroupStorageSize: 16384};
const units = {M: 16, N: 16, K: 16, subgroupSize: 32, grid: {rows: 2, cols: 2}, ...MATRIX_KERNEL};
out.defaults = [matrixFits(64, units, defaults), matrixFits(128, units, defaults), matrixFits(128, {...units, grid: {rows: 4, cols: 4}}, {...defaults, maxComputeWorkgroupStorageSize: 32768})];
return out;
"""


def test_kernel_text_for_every_configuration_and_grid(webnn_page, server_url):
    """Without a GPU: the matrix kernel's WGSL for every configuration shape x subgroup size x grid
    x tile x variant is either refused (RangeError, exactly where matrixFits says it does not exist)
    or whole (integer counts, no NaN, the workgroup the grid asks for); the kernel's shapes
    (matrixKernel) place their barriers as documented; and the device's limits decide which tiles
    a device holds."""
    result = run_js(webnn_page, server_url, _SHAPES_JS)
    assert "ok" in result, result
    got = result["ok"]
    assert got["bad"] == [] and got["made"] > 100 and got["refused"] > 20, [str(b) for b in got["bad"][:3]]
    assert got["defaults"] == [True, False, False], got["defaults"]
    # one barrier a staged slice with two copies, two with one; two per batch of result matrices (16
    # a subgroup), one with two copies of them, none after the last; the direct split stores add
    # none (their branch returns, the staged batches follow)
    assert got["barriers"] == {"{}": 2 + 31, "{} split": 2 + 31, '{"depth":16,"stages":2}': 1 + 31, '{"depth":16,"stages":2} split': 1 + 31,
                               '{"depth":64,"storeBatch":2,"direct":true}': 2 + 15, '{"depth":64,"storeBatch":2,"direct":true} split': 2 + 15,
                               '{"stages":2,"storeBatch":4,"storeHalves":2}': 1 + 4,
                               '{"stages":2,"storeBatch":4,"storeHalves":2} split': 1 + 4}, got["barriers"]
