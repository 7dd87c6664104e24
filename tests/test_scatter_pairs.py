"""The paired-scatter pass (static/polyfill/compile/scatter_pairs.js): two scatterND nodes with the
same indices (directly, or through compile/cse.js's sharedValue of a repeated index computation),
inputs of one shape and updates of one shape, become one scatterNDPair node: one step with few
update slices, the copy, claim and write steps of both with more than the tuning switch
scatterSearchMax; a pair with other indices or a first output read before the second scatter
keep their own steps. Values against NumPy (updates read in place as slices of a wider operand
too): the last update of a repeated index wins, as the unpaired lowering writes it."""
from __future__ import annotations

import numpy as np

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
