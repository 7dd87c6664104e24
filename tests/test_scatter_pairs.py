"""The paired-scatter pass (static/polyfill/compile/scatter_pairs.js): two scatterND nodes with the
same indices (directly, or through compile/cse.js's sharedValue of a repeated index computation),
inputs of one shape and updates of one shape, become one scatterNDPair node: one step with few
update slices, the copy, claim and write steps of both with more than the tuning switch
scatterSearchMax; a pair with other indices or a first output read before the second scatter
keep their own steps. Values against NumPy (updates read in place as slices of a wider operand
too): the last update of a repeated index wins, as the unpaired lowering writes it."""
from __future__ import annotations

import numpy as np
import pytest

from tests.graph_runner import run_js

_BODY = """
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext({polyfill: {tuning: {scatterSearchMax: %(max)d}}});
const b = new MLGraphBuilder(context);
const k = b.input('k', {dataType: 'float32', shape: [2, 5, 3]});
const v = b.input('v', {dataType: 'float32', shape: [2, 5, 3]});
const nk = b.input('nk', {dataType: 'float32', shape: [2, 2, 3]});
const nv = b.input('nv', {dataType: 'float32', shape: [2, 2, 3]});
const pos = b.input('pos', {dataType: 'int32', shape: [2, 2, 2]});
// the same index computation twice (cse makes the second a sharedValue of the first)
const at = () => b.add(pos, b.constant({dataType: 'int32', shape: [2]}, Int32Array.of(0, 1)));
const k2 = b.scatterND(k, at(), nk, {label: 'key'});
const v2 = b.scatterND(v, at(), nv, {label: 'value'});
// other indices (pos itself) and the same indices again: paired with each other; their updates
// the two halves of one wider operand (read through their strides)
const nkv = b.input('nkv', {dataType: 'float32', shape: [2, 2, 6]});
const o = b.scatterND(v, pos, b.slice(nkv, [0, 0, 3], [2, 2, 3]), {label: 'other'});
const o2 = b.scatterND(k, pos, b.slice(nkv, [0, 0, 0], [2, 2, 3]), {label: 'other again'});
// a first output read before the second scatter: kept apart
const early = b.scatterND(k, b.sub(pos, b.constant({dataType: 'int32', shape: [2]}, Int32Array.of(0, 0))), nk, {label: 'early'});
const reader = b.relu(early);
const late = b.scatterND(b.add(v, reader), b.sub(pos, b.constant({dataType: 'int32', shape: [2]}, Int32Array.of(0, 0))), nv, {label: 'late'});
const outs = {k2, v2, o, o2, early, late};
const graph = await b.build(outs);
const steps = describeGraph(graph).steps.filter((st) => st.operators.some((op) => op.type === 'scatterND'))
  .map((st) => st.operators.filter((op) => op.type === 'scatterND').map((op) => op.label).sort().join('+'));
const data = {
  k: Float32Array.from({length: 30}, (_, i) => i * 0.5 - 7),
  v: Float32Array.from({length: 30}, (_, i) => 3 - i * 0.25),
  nk: Float32Array.from({length: 12}, (_, i) => 100 + i),
  nv: Float32Array.from({length: 12}, (_, i) => -100 - i),
  nkv: Float32Array.from({length: 24}, (_, i) => 50 + i * 1.5),
  // batch 0: rows 1 and 3; batch 1: row 4 twice (the last wins); +[0, 1] by the graph
  pos: Int32Array.of(0, 0, 0, 2, 1, 3, 1, 3),
};
const shapes = {k: [2, 5, 3], v: [2, 5, 3], nk: [2, 2, 3], nv: [2, 2, 3], nkv: [2, 2, 6], pos: [2, 2, 2]};
const inputs = {};
for (const [name, values] of Object.entries(data)) {
  const dataType = name === 'pos' ? 'int32' : 'float32';
  inputs[name] = await context.createTensor({dataType, shape: shapes[name], writable: true});
  context.writeTensor(inputs[name], values);
}
const tensors = {};
for (const [name, op] of Object.entries(outs)) tensors[name] = await context.createTensor({dataType: 'float32', shape: op.shape, readable: true});
context.dispatch(graph, inputs, tensors);
const results = {};
for (const [name, t] of Object.entries(tensors)) results[name] = Array.from(new Float32Array(await context.readTensor(t)));
context.destroy();
return {steps, results, data: Object.fromEntries(Object.entries(data).map(([n, a]) => [n, Array.from(a)]))};
"""


def _scatter(x, idx, upd):
    y = x.copy()
    for i in np.ndindex(idx.shape[:-1]):
        y[tuple(idx[i])] = upd[i]
    return y


def _run(webnn_page, server_url, search_max):
    r = run_js(webnn_page, server_url, _BODY % {"max": search_max})
    assert "ok" in r, r
    got = r["ok"]
    d = {n: np.array(a, np.float64) for n, a in got["data"].items()}
    k, v = d["k"].reshape(2, 5, 3), d["v"].reshape(2, 5, 3)
    nk, nv, nkv = d["nk"].reshape(2, 2, 3), d["nv"].reshape(2, 2, 3), d["nkv"].reshape(2, 2, 6)
    pos = d["pos"].astype(np.int64).reshape(2, 2, 2)
    early = _scatter(k, pos, nk)
    expected = {"k2": _scatter(k, pos + [0, 1], nk), "v2": _scatter(v, pos + [0, 1], nv), "o": _scatter(v, pos, nkv[..., 3:]),
                "o2": _scatter(k, pos, nkv[..., :3]),
                "early": early, "late": _scatter(v + np.maximum(early, 0), pos, nv)}
    for name, want in expected.items():
        np.testing.assert_array_equal(np.array(got["results"][name]).reshape(want.shape), want, err_msg=name)
    return sorted(got["steps"])


def test_two_scatters_of_the_same_indices_are_one_step(webnn_page, server_url):
    assert _run(webnn_page, server_url, 64) == ["early", "key+value", "late", "other+other again"]


def test_pairs_beyond_the_search_limit_share_their_three_steps(webnn_page, server_url):
    # 4 update slices each: over a limit of 2 a scatter takes a copy, a claim and a write step; a
    # pair takes the three for both
    assert _run(webnn_page, server_url, 2) == ["early"] * 3 + ["key+value"] * 3 + ["late"] * 3 + ["other+other again"] * 3


_F16_BODY = """
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext({polyfill: {tuning: {scatterSearchMax: %(max)d}}});
const b = new MLGraphBuilder(context);
const f16 = (shape) => ({dataType: 'float16', shape});
// 15 elements: the last word of the tensor layout holds one
const k = b.input('k', f16([1, 3, 5]));
const v = b.input('v', f16([1, 3, 5]));
// three update rows: rows 2, 0 and 2 again (the last one wins)
const nk = b.input('nk', f16([1, 3, 5]));
const nv = b.input('nv', f16([1, 3, 5]));
const pos = b.input('pos', {dataType: 'int32', shape: [1, 3, 2]});
const k2 = b.scatterND(k, pos, nk, {label: 'key'});
const v2 = b.scatterND(v, pos, nv, {label: 'value'});
// a reader of both outputs inside the graph (an LLM's attention), and of k itself
const s = b.add(k2, v2);
const r = b.relu(k);
const outs = {k2, v2, s, r};
const graph = await b.build(outs);
const kernels = describeGraph(graph).steps.map((st) => st.kernel);
const data = {
  k: [0, -0, 1.5, -2.25, Infinity, -Infinity, 2 ** -24, 65504, -1, 3, 4, 5, 6, 7, 0.5],
  v: Array.from({length: 15}, (_, i) => 10 - i * 0.75),
  nk: [100, 101, -0, 103, 2 ** -20, 7, 8, 9, 10, 11, -5, -6, -7, -8, -9],
  nv: Array.from({length: 15}, (_, i) => -100 - i), pos: [0, 2, 0, 0, 0, 2],
};
const shapes = {k: [1, 3, 5], v: [1, 3, 5], nk: [1, 3, 5], nv: [1, 3, 5], pos: [1, 3, 2]};
const inputs = {};
for (const [name, values] of Object.entries(data)) {
  const dataType = name === 'pos' ? 'int32' : 'float16';
  inputs[name] = await context.createTensor({dataType, shape: shapes[name], writable: true});
  context.writeTensor(inputs[name], dataType === 'int32' ? Int32Array.from(values) : Float16Array.from(values));
}
const tensors = {};
for (const [name, op] of Object.entries(outs)) tensors[name] = await context.createTensor({dataType: 'float16', shape: op.shape, readable: true});
context.dispatch(graph, inputs, tensors);
const results = {};
// binary16 bits: -0 and the infinities as they are
for (const [name, t] of Object.entries(tensors)) results[name] = Array.from(new Uint16Array(await context.readTensor(t)));
context.destroy();
return {kernels, results, data};
"""


@pytest.mark.parametrize("search_max", [64, 0])
def test_a_float16_cache_pair_reads_and_writes_the_tensor_layout(webnn_page, server_url, search_max):
    """float16 graph inputs scattered into graph outputs (a q4f16 LLM's KV cache): the step that
    writes the outputs reads the inputs' and writes the outputs' binary16 words (an odd element
    count too) besides the compute values the graph's other readers take: the search step of few
    update slices (a decode step's), or after the clear and claim steps (`search_max` 0: a
    prefill's); no conversion step for them, while the inputs read elsewhere (k by relu) and the
    other outputs keep theirs. Values bit for bit (-0, ±Inf, a subnormal)."""
    r = run_js(webnn_page, server_url, _F16_BODY % {"max": search_max})
    assert "ok" in r, r
    got = r["ok"]
    d = got["data"]
    k, v = np.array(d["k"], np.float16).reshape(1, 3, 5), np.array(d["v"], np.float16).reshape(1, 3, 5)
    nk, nv = np.array(d["nk"], np.float16).reshape(1, 3, 5), np.array(d["nv"], np.float16).reshape(1, 3, 5)
    pos = np.array(d["pos"]).reshape(1, 3, 2)
    k2, v2 = _scatter(k, pos, nk), _scatter(v, pos, nv)
    expected = {"k2": k2, "v2": v2, "s": (k2 + v2).astype(np.float16), "r": np.maximum(k, np.float16(0))}
    for name, want in expected.items():
        np.testing.assert_array_equal(np.array(got["results"][name], np.uint16), want.reshape(-1).view(np.uint16), err_msg=name)
    kernels = got["kernels"]
    if search_max:
        assert kernels.count("scatterND_search_pair_f16") == 1, kernels
    else:
        assert [k for k in kernels if k.startswith("scatter")] == ["scatter_clear", "scatterND_claim", "scatter_finish_pair_f16"], kernels
    # unpacked: k (for relu), nk, nv; packed: s, r (k2 and v2 by the scatter's step)
    assert kernels.count("unpack_float16") == 3 and kernels.count("pack_float16") == 2, kernels
