"""The common-subexpression pass (static/polyfill/compile/cse.js): a node computing what an
earlier one computes (same operator, attributes and inputs, earlier duplicates seen through)
becomes a sharedValue node of the earlier one's values, with no step; constants of equal bytes
up to 64 KiB are one input, larger ones only themselves; nodes whose attributes
differ only where their JSON text would not (±Infinity, -0) stay apart. Graph in -> nodes out,
then the values of the built graph against NumPy and its step list."""
from __future__ import annotations

import numpy as np

from tests.graph_runner import run_js

_BODY = """
const {reachableNodes} = await import('/polyfill/operand.js');
const {planCommonSubexpressions} = await import('/polyfill/compile/cse.js');
const {describeGraph} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
const b = new MLGraphBuilder(context);
const x = b.input('x', {dataType: 'float32', shape: [2, 6]});
const c = b.constant({dataType: 'float32', shape: [6]}, Float32Array.from([1, -2, 3, -4, 5, -6]));
const r1 = b.relu(b.add(x, c, {label: 'first'}));
const r2 = b.relu(b.add(x, c, {label: 'again'}));  // the same chain: both nodes shared
const other = b.relu(b.sub(x, c));                  // another operator: kept
const hi = b.clamp(x, {maxValue: Infinity});
const lo = b.clamp(x, {maxValue: -Infinity});       // differs only in the infinity's sign: kept
const zp = b.pad(x, [0, 1], [0, 0], {value: 0});
const zn = b.pad(x, [0, 1], [0, 0], {value: -0});   // differs only in the zero's sign: kept
const [s0] = b.split(x, 3, {axis: 1});
const [, , t2] = b.split(x, 3, {axis: 1});          // a multi-output node shared
const y = b.concat([s0, t2, b.mul(r2, hi)], 1);
// small constants are told apart by contents: two scalar 0.5 constants are one input
const h1 = b.mul(x, b.constant('float32', 0.5), {label: 'half'});
const h2 = b.mul(x, b.constant('float32', 0.5), {label: 'half again'});
const h3 = b.mul(x, b.constant('float32', 0.25), {label: 'quarter'});
// so are larger ones up to 64 KiB (a prefill's position range per rotary): equal bytes shared,
// equal length and other bytes kept apart
const range = (n, last) => Float32Array.from({length: n}, (_, i) => (i === n - 1 ? last : 1));
const mid = (last) => b.constant({dataType: 'float32', shape: [100]}, range(100, last));
const m1 = b.mul(x, b.reduceSum(mid(1), {keepDimensions: false}), {label: 'mid'});
const m2 = b.mul(x, b.reduceSum(mid(1), {keepDimensions: false}), {label: 'mid again'});
const m3 = b.mul(x, b.reduceSum(mid(2), {keepDimensions: false}), {label: 'mid other'});
// larger ones (over 64 KiB) only by identity
const wide = () => b.constant({dataType: 'float32', shape: [16385]}, new Float32Array(16385).fill(1));
const w1 = b.mul(x, b.reduceSum(wide(), {keepDimensions: false}), {label: 'wide'});
const w2 = b.mul(x, b.reduceSum(wide(), {keepDimensions: false}), {label: 'wide again'});
const outs = {r1, r2, other, hi, lo, zp, zn, y, h1, h2, h3, m1, m2, m3, w1, w2};
const nodes = reachableNodes(Object.values(outs));
const after = planCommonSubexpressions(nodes, Object.values(outs));
const shared = after.filter((n) => n.op === 'sharedValue').map((n) => n.label || n.origin.type);
const graph = await b.build(outs);
const steps = describeGraph(graph).steps.map((st) => st.operators.map((o) => o.type + ':' + o.label).join(','));
const xs = Float32Array.from({length: 12}, (_, i) => (i - 5) * 0.75);
const inT = await context.createTensor({dataType: 'float32', shape: [2, 6], writable: true});
context.writeTensor(inT, xs);
const results = {};
const tensors = {};
for (const [name, op] of Object.entries(outs)) {
  tensors[name] = await context.createTensor({dataType: 'float32', shape: op.shape, readable: true});
}
context.dispatch(graph, {x: inT}, tensors);
for (const [name, t] of Object.entries(tensors)) results[name] = Array.from(new Float32Array(await context.readTensor(t)));
context.destroy();
return {before: nodes.length, after: after.length, shared, steps, results, xs: Array.from(xs)};
"""


def test_repeated_computations_are_made_once(webnn_page, server_url):
    r = run_js(webnn_page, server_url, _BODY)
    assert "ok" in r, r
    got = r["ok"]
    # the second relu, split, multiplication by 0.5 and by the sum of the 400-byte constant become
    # sharedValue nodes of the first; the second add and reduceSum, read by nothing once their
    # readers are shared, are dropped; nothing else changes
    assert sorted(got["shared"]) == ["half again", "mid again", "relu", "split"], got["shared"]
    assert got["after"] == got["before"] - 2, (got["before"], got["after"])
    assert not any(":again" in s for s in got["steps"]), got["steps"]
    assert sum(s.startswith("split") for s in got["steps"]) <= 3, got["steps"]
    x = np.array(got["xs"], np.float64).reshape(2, 6)
    c = np.array([1, -2, 3, -4, 5, -6], np.float64)
    relu = np.maximum(x + c, 0)
    expected = {
        "r1": relu, "r2": relu, "other": np.maximum(x - c, 0), "hi": x, "lo": np.full_like(x, -np.inf),
        "zp": np.pad(x, ((0, 0), (1, 0))), "zn": np.pad(x, ((0, 0), (1, 0)), constant_values=-0.0),
        "y": np.concatenate([x[:, :2], x[:, 4:], relu * x], axis=1),
        "h1": x * 0.5, "h2": x * 0.5, "h3": x * 0.25, "m1": x * 100, "m2": x * 100, "m3": x * 101, "w1": x * 16385, "w2": x * 16385,
    }
    for name, want in expected.items():
        have = np.array(got["results"][name], np.float64).reshape(want.shape)
        np.testing.assert_array_equal(have, want.astype(np.float32), err_msg=name)
    # the pad by -0 keeps its sign (a shared pad by +0 would not)
    assert np.signbit(np.array(got["results"]["zn"]).reshape(2, 7)[:, 0]).all()
