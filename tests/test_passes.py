"""The graph-rewriting passes one at a time, graph in -> nodes out (static/polyfill/compile/):
the siblings pass makes one mergedMatmul node carrying the concatenated constants, the attention
pass one fusedAttention node in place of matmul -> softmax -> matmul. The end-to-end step lists
and values of the same patterns are in tests/test_fusion*.py; here the nodes themselves.
"""
from __future__ import annotations

from tests.graph_runner import run_js

_BODY = """
const {reachableNodes} = await import('/polyfill/operand.js');
const {planFusion} = await import('/polyfill/compile/fusion.js');
const {planSiblings} = await import('/polyfill/compile/siblings.js');
const {planAttention} = await import('/polyfill/compile/attention.js');
const {planStoreViews} = await import('/polyfill/compile/views.js');
const {INTERNAL_OPERATORS} = await import('/polyfill/ops/internal.js');
const context = await navigator.ml.createContext();
const b = new MLGraphBuilder(context);
const x = b.input('x', {dataType: 'float32', shape: [2, 3, 4]});
const w = (n, k) => b.constant({dataType: 'float32', shape: [4, n]}, Float32Array.from({length: 4 * n}, (_, i) => k * 100 + i));
const bias = (n, k) => b.constant({dataType: 'float32', shape: [n]}, Float32Array.from({length: n}, (_, i) => -(k * 10 + i)));
const q = b.add(b.matmul(x, w(2, 1), {label: 'q'}), bias(2, 1));
const k = b.add(b.matmul(x, w(3, 2), {label: 'k'}), bias(3, 2));
const other = b.matmul(x, w(5, 3));  // no bias: not in the group with bias stages
const outs = [q, k, other];
let nodes = reachableNodes(outs);
let fusion = planFusion(nodes, outs);
const groups = planSiblings(nodes, fusion.tails);
const merged = [...new Set(groups.values())];
const m = merged[0];
const siblings = {count: merged.length, members: groups.size, op: m?.op, label: m?.label, inputIsX: m?.inputs[0] === x,
  K: m?.attrs.K, widths: m?.attrs.widths, weights: Array.from(new Float32Array(m.attrs.weights.buffer)),
  bias: Array.from(new Float32Array(m.attrs.bias.buffer)), lowered: typeof INTERNAL_OPERATORS[m?.op]?.lower,
  origins: m?.origins.map((o) => o.type + ':' + o.label)};

const b2 = new MLGraphBuilder(context);
const qq = b2.input('q', {dataType: 'float32', shape: [2, 5, 8]});
const kt = b2.input('kt', {dataType: 'float32', shape: [2, 8, 6]});
const v = b2.input('v', {dataType: 'float32', shape: [2, 6, 8]});
const y = b2.transpose(b2.matmul(b2.softmax(b2.mul(b2.matmul(qq, kt), b2.constant('float32', 0.5)), 2), v), {permutation: [1, 0, 2]});
nodes = reachableNodes([y]);
fusion = planFusion(nodes, [y]);
const views = planStoreViews(nodes, [y], fusion.tails);
const found = planAttention(nodes, [y], fusion, views);
const [[second, fa]] = [...found];
const attention = {count: found.size, op: fa.op, inputs: [fa.inputs[0] === qq, fa.inputs[1] === kt, fa.inputs[2] === v],
  output: fa.outputs[0] === y, secondIsMatmul: second.op, transpose: fa.attrs.transpose?.op,
  origins: fa.origins.map((o) => o.type), lowered: typeof INTERNAL_OPERATORS[fa.op]?.lower};
context.destroy();
return {siblings, attention};
"""


def test_siblings_and_attention_passes_emit_internal_nodes(webnn_page, server_url):
    r = run_js(webnn_page, server_url, _BODY)
    assert "ok" in r, r
    s, a = r["ok"]["siblings"], r["ok"]["attention"]
    assert s["count"] == 1 and s["members"] == 2, s
    assert s["op"] == "mergedMatmul" and s["label"] == "q+k" and s["inputIsX"] and s["lowered"] == "function"
    assert s["K"] == 4 and s["widths"] == [2, 3]
    # B's concatenated along N, row by row: row r is q's 2 columns then k's 3
    expected = []
    for r_ in range(4):
        expected += [100 + r_ * 2 + c for c in range(2)] + [200 + r_ * 3 + c for c in range(3)]
    assert s["weights"] == expected
    assert s["bias"] == [-10, -11, -20, -21, -22]
    assert s["origins"] == ["matmul:q", "add:", "matmul:k", "add:"]
    assert a["count"] == 1 and a["op"] == "fusedAttention" and a["lowered"] == "function"
    assert a["inputs"] == [True, True, True] and a["secondIsMatmul"] == "matmul"
    # the transpose after the second matmul is folded into the node's store: its output is y
    assert a["transpose"] == "transpose" and a["output"] is True
    assert a["origins"] == ["matmul", "mul", "softmax", "matmul", "transpose"]
