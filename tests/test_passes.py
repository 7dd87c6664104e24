"""The graph-rewriting passes one at a time, graph in -> nodes out (static/polyfill/compile/):
fusion rewrites a producer into one carrying its stages (attrs.epilogue) and drops the stage
nodes; the store-view pass gives a matmul the transpose it stores for (attrs.transpose) and drops
the transpose; the split-norm pass marks a product with the normalization that adds its partial
sums (attrs.splitNorm); the siblings pass makes one mergedMatmul node carrying the concatenated
constants, the attention pass one fusedAttention node in place of matmul -> softmax -> matmul. The end-to-end step lists
and values of the same patterns are in tests/test_fusion*.py; here the nodes themselves.
"""
from __future__ import annotations

from tests.graph_runner import run_js

_PASSES = """
const {reachableNodes} = await import('/polyfill/operand.js');
const {fusionPass} = await import('/polyfill/compile/fusion.js');
const {storeViewPass} = await import('/polyfill/compile/views.js');
const {attentionPass} = await import('/polyfill/compile/attention.js');
const {siblingsPass} = await import('/polyfill/compile/siblings.js');
const {splitNormPass} = await import('/polyfill/compile/split_norm.js');
const {INTERNAL_OPERATORS} = await import('/polyfill/ops/internal.js');
// graph in -> node list out, through the named passes in PASSES order
const run = (outs, ...passes) => passes.reduce((g, pass) => pass(g, {tuning: {attention: true}}),
  {nodes: reachableNodes(outs), outputs: outs}).nodes;
const ops = (nodes) => nodes.map((n) => n.op);
const types = (origins) => origins.map((o) => o.type);
"""

_BODY = _PASSES + """
const context = await navigator.ml.createContext();
const b = new MLGraphBuilder(context);
const x = b.input('x', {dataType: 'float32', shape: [2, 3, 4]});
const w = (n, k) => b.constant({dataType: 'float32', shape: [4, n]}, Float32Array.from({length: 4 * n}, (_, i) => k * 100 + i));
const bias = (n, k) => b.constant({dataType: 'float32', shape: [n]}, Float32Array.from({length: n}, (_, i) => -(k * 10 + i)));
const q = b.add(b.matmul(x, w(2, 1), {label: 'q'}), bias(2, 1));
const k = b.add(b.matmul(x, w(3, 2), {label: 'k'}), bias(3, 2));
const other = b.matmul(x, w(5, 3));  // no bias: not in the group with bias stages
const outs = [q, k, other];
let nodes = run(outs, fusionPass, siblingsPass);
const m = nodes[0];
const siblings = {ops: ops(nodes), label: m.label, inputIsX: m.inputs[0] === x,
  K: m.attrs.K, widths: m.attrs.widths, weights: Array.from(new Float32Array(m.attrs.weights.buffer)),
  bias: Array.from(new Float32Array(m.attrs.bias.buffer)), lowered: typeof INTERNAL_OPERATORS[m.op]?.lower,
  origins: m.origins.map((o) => o.type + ':' + o.label), outs: m.attrs.members.map((mb) => outs.indexOf(mb.out))};

const b2 = new MLGraphBuilder(context);
const qq = b2.input('q', {dataType: 'float32', shape: [2, 5, 8]});
const kt = b2.input('kt', {dataType: 'float32', shape: [2, 8, 6]});
const v = b2.input('v', {dataType: 'float32', shape: [2, 6, 8]});
const y = b2.transpose(b2.matmul(b2.softmax(b2.mul(b2.matmul(qq, kt), b2.constant('float32', 0.5)), 2), v), {permutation: [1, 0, 2]});
nodes = run([y], fusionPass, storeViewPass, attentionPass);
const fa = nodes[0];
const attention = {ops: ops(nodes), inputs: [fa.inputs[0] === qq, fa.inputs[1] === kt, fa.inputs[2] === v],
  output: fa.outputs[0] === y, context: fa.attrs.context.op, transpose: fa.attrs.transpose?.op,
  scoresStages: ops(fa.attrs.scores.attrs.epilogue.map((st) => st.node)),
  origins: types(fa.origins), lowered: typeof INTERNAL_OPERATORS[fa.op]?.lower};
context.destroy();
return {siblings, attention};
"""


def test_siblings_and_attention_passes_emit_internal_nodes(webnn_page, server_url):
    r = run_js(webnn_page, server_url, _BODY)
    assert "ok" in r, r
    s, a = r["ok"]["siblings"], r["ok"]["attention"]
    # the group takes the first member's place; the other member leaves the list
    assert s["ops"] == ["mergedMatmul", "matmul"], s
    assert s["label"] == "q+k" and s["inputIsX"] and s["lowered"] == "function" and s["outs"] == [0, 1]
    assert s["K"] == 4 and s["widths"] == [2, 3]
    # B's concatenated along N, row by row: row r is q's 2 columns then k's 3
    expected = []
    for r_ in range(4):
        expected += [100 + r_ * 2 + c for c in range(2)] + [200 + r_ * 3 + c for c in range(3)]
    assert s["weights"] == expected
    assert s["bias"] == [-10, -11, -20, -21, -22]
    assert s["origins"] == ["matmul:q", "add:", "matmul:k", "add:"]
    # one node in place of matmul, mul, softmax, matmul and the transpose
    assert a["ops"] == ["fusedAttention"] and a["lowered"] == "function", a
    assert a["inputs"] == [True, True, True] and a["context"] == "matmul" and a["scoresStages"] == ["mul"]
    # the transpose after the second matmul is folded into the node's store: its output is y
    assert a["transpose"] == "transpose" and a["output"] is True
    assert a["origins"] == ["matmul", "mul", "softmax", "matmul", "transpose"]


_REWRITES = _PASSES + """
const context = await navigator.ml.createContext();
const b = new MLGraphBuilder(context);
const f32 = (shape) => ({dataType: 'float32', shape});
const x = b.input('x', f32([3, 4]));
const w = b.constant(f32([4, 6]), new Float32Array(24).fill(0.5));
const r = b.input('r', f32([3, 6]));
// matmul -> add(residual) -> relu: one node, the stages on it
const fused = b.relu(b.add(b.matmul(x, w, {label: 'p'}), r), {label: 'act'});
let nodes = run([fused], fusionPass);
const fusion = {ops: ops(nodes), stages: ops(nodes[0].attrs.epilogue.map((st) => st.node)),
  other: nodes[0].attrs.epilogue[0].other === r, origins: types(nodes[0].origins), label: nodes[0].label};
// an intermediate that is a graph output keeps its own node
const shared = b.matmul(x, w);
nodes = run([shared, b.relu(shared)], fusionPass);
const kept = {ops: ops(nodes), epilogue: nodes.map((n) => Boolean(n.attrs.epilogue))};
// matmul -> transpose: the matmul stores in the transpose's layout
const a3 = b.input('a3', f32([2, 3, 4]));
const b3 = b.input('b3', f32([2, 4, 5]));
const t = b.transpose(b.matmul(a3, b3), {permutation: [1, 0, 2]});
nodes = run([t], fusionPass, storeViewPass);
const views = {ops: ops(nodes), transpose: nodes[0].attrs.transpose?.op, stores: nodes[0].attrs.transpose?.outputs[0] === t,
  origins: types(nodes[0].origins)};
// matmul -> add bias -> layerNormalization: the product carries its normalization
const bias = b.constant(f32([6]), new Float32Array(6).fill(1));
const ln = b.layerNormalization(b.add(b.matmul(x, w), bias), {axes: [1]});
nodes = run([ln], fusionPass, storeViewPass, attentionPass, siblingsPass, splitNormPass);
const split = {ops: ops(nodes), norm: nodes[0].attrs.splitNorm === nodes[1], stages: ops(nodes[0].attrs.epilogue.map((st) => st.node))};
// read twice: marked to keep the sum (the normalization stores it for the relu)
const twice = b.add(b.matmul(x, w), bias);
nodes = run([b.layerNormalization(twice, {axes: [1]}), b.relu(twice)], fusionPass, splitNormPass);
const kept2 = nodes.filter((n) => n.attrs.splitNorm).map((n) => n.attrs.splitNormKeep);
// a graph output: no mark
const out = b.add(b.matmul(x, w), bias);
nodes = run([b.layerNormalization(out, {axes: [1]}), out], fusionPass, splitNormPass);
const unsplit = nodes.filter((n) => n.attrs.splitNorm).length;
context.destroy();
return {fusion, kept, views, split, kept2, unsplit};
"""


def test_fusion_store_view_and_split_norm_passes_rewrite_nodes(webnn_page, server_url):
    r = run_js(webnn_page, server_url, _REWRITES)
    assert "ok" in r, r
    got = r["ok"]
    f = got["fusion"]
    assert f["ops"] == ["matmul"] and f["stages"] == ["add", "relu"] and f["other"], f
    assert f["origins"] == ["matmul", "add", "relu"] and f["label"] == "p", f
    assert got["kept"] == {"ops": ["matmul", "relu"], "epilogue": [False, False]}, got["kept"]
    v = got["views"]
    assert v == {"ops": ["matmul"], "transpose": "transpose", "stores": True, "origins": ["matmul", "transpose"]}, v
    s = got["split"]
    assert s == {"ops": ["matmul", "layerNormalization"], "norm": True, "stages": ["add"]}, s
    assert got["kept2"] == [True] and got["unsplit"] == 0, got
