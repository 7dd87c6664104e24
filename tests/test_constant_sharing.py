"""Constants shared between the graphs of one context (gpu/constant_store.js): graphs whose
constants hold the same bytes (an LLM's prefill and decode graphs through ORT's WebNN EP) read one
GPU buffer. What must hold: every graph computes with its own constants' values, however they
are shared; a graph keeps working when another graph sharing its constants is destroyed; a
constant that differs in one byte is not shared; after the last graph is gone a new graph
uploads the bytes again."""
from __future__ import annotations

from tests.graph_runner import run_js

_BODY = """
const {sharedConstants} = await import('/polyfill/inspect.js');
const context = await navigator.ml.createContext();
const K = 256, N = 256;
const weights = (bump) => {
  const w = new Float32Array(K * N);
  for (let i = 0; i < w.length; i++) w[i] = ((i * 37) % 17) - 8;
  w[5] += bump;  // one element differs: another constant
  return w;
};
const build = async (bump) => {
  const b = new MLGraphBuilder(context);
  const x = b.input('x', {dataType: 'float32', shape: [1, K]});
  return b.build({y: b.matmul(x, b.constant({dataType: 'float32', shape: [K, N]}, weights(bump)))});
};
const xs = new Float32Array(K);
xs[0] = 1; xs[1] = 2;  // y[n] = w[0, n] + 2 w[1, n]
const run = async (graph) => {
  const x = await context.createTensor({dataType: 'float32', shape: [1, K], writable: true});
  const y = await context.createTensor({dataType: 'float32', shape: [1, N], readable: true});
  context.writeTensor(x, xs);
  context.dispatch(graph, {x}, {y});
  const out = new Float32Array(await context.readTensor(y));
  x.destroy(); y.destroy();
  return [out[0], out[5], out[200]];
};
const g1 = await build(0);
const g2 = await build(0);
const store = [sharedConstants(context)];
const g3 = await build(1000);
store.push(sharedConstants(context));
const got = {first: await run(g1), second: await run(g2), bumped: await run(g3)};
g1.destroy();
got.secondAfterFirstDestroyed = await run(g2);
g2.destroy();
g3.destroy();
store.push(sharedConstants(context));
const g4 = await build(0);
store.push(sharedConstants(context));
got.rebuilt = await run(g4);
context.destroy();
got.store = store;
return got;
"""


def test_graphs_of_a_context_share_equal_constants_safely(webnn_page, server_url):
    r = run_js(webnn_page, server_url, _BODY)
    assert "ok" in r, r
    got = r["ok"]

    def w(i):
        return ((i * 37) % 17) - 8

    expected = [w(n) + 2 * w(256 + n) for n in (0, 5, 200)]
    assert got["first"] == expected
    assert got["second"] == expected
    assert got["bumped"] == [expected[0], expected[1] + 1000, expected[2]]
    assert got["secondAfterFirstDestroyed"] == expected
    assert got["rebuilt"] == expected
    weights = 256 * 256 * 4
    # g1 and g2 share one buffer; g3's differs; none left once all are destroyed; g4 uploads again
    assert got["store"] == [{"buffers": 1, "bytes": weights}, {"buffers": 2, "bytes": 2 * weights},
                            {"buffers": 0, "bytes": 0}, {"buffers": 1, "bytes": weights}], got["store"]
