"""Profiling mode (static/polyfill/profiling.js, compile/step_timer.js): GPU time per compiled
step with the builder operators and labels each step came from.

SwiftShader offers "timestamp-query", so the mode runs here.
"""
from __future__ import annotations

import numpy as np

from tests.graph_runner import run_js
from tests.reference.pool_conv import conv2d

HELPERS = """
const {readProfile} = await import('/polyfill/profiling.js');
const {describeGraph} = await import('/polyfill/inspect.js');
// conv2d 'c1' -> relu (no label) -> add 'sum' with a second input; 1x3x10x6 input, 4 filters.
// c is an output too, so the conv stands alone and relu -> add fuse into one step.
const x = Float32Array.from({length: 3 * 10 * 6}, (_, i) => Math.sin(i * 0.37) * 2 - 0.3);
const w = Float32Array.from({length: 4 * 3 * 9}, (_, i) => Math.cos(i * 0.91) - 0.1);
const z = Float32Array.from({length: 4 * 10 * 6}, (_, i) => (i % 7) - 3.5);
const makeGraph = async (context) => {
  const b = new MLGraphBuilder(context);
  const input = b.input('x', {dataType: 'float32', shape: [1, 3, 10, 6]});
  const other = b.input('z', {dataType: 'float32', shape: [1, 4, 10, 6]});
  const filter = b.constant({dataType: 'float32', shape: [4, 3, 3, 3]}, w);
  const c = b.conv2d(input, filter, {padding: [1, 1, 1, 1], label: 'c1'});
  const y = b.add(b.relu(c), other, {label: 'sum'});
  const graph = await b.build({y, c});
  const t = {};
  t.x = await context.createTensor({dataType: 'float32', shape: [1, 3, 10, 6], writable: true});
  t.z = await context.createTensor({dataType: 'float32', shape: [1, 4, 10, 6], writable: true});
  t.y = await context.createTensor({dataType: 'float32', shape: [1, 4, 10, 6], readable: true});
  t.c = await context.createTensor({dataType: 'float32', shape: [1, 4, 10, 6], readable: true});
  context.writeTensor(t.x, x);
  context.writeTensor(t.z, z);
  const go = async () => {
    context.dispatch(graph, {x: t.x, z: t.z}, {y: t.y, c: t.c});
    return Array.from(new Float32Array(await context.readTensor(t.y)));
  };
  return {graph, go};
};
// Counts compute passes and timestampWrites encoded while `fn` runs.
const countPasses = async (fn) => {
  const begin = GPUCommandEncoder.prototype.beginComputePass;
  const counts = {passes: 0, timestamped: 0};
  GPUCommandEncoder.prototype.beginComputePass = function (desc) {
    counts.passes++;
    if (desc?.timestampWrites) counts.timestamped++;
    return begin.apply(this, arguments);
  };
  try { await fn(); } finally { GPUCommandEncoder.prototype.beginComputePass = begin; }
  return counts;
};
"""


def run(page, server_url, body):
    result = run_js(page, server_url, HELPERS + body)
    assert "ok" in result, f"JS failed: {result}"
    return result["ok"]


def reference():
    x = (np.sin(np.arange(180) * 0.37) * 2 - 0.3).astype(np.float32).astype(np.float64).reshape(1, 3, 10, 6)
    w = (np.cos(np.arange(108) * 0.91) - 0.1).astype(np.float32).astype(np.float64).reshape(4, 3, 3, 3)
    z = ((np.arange(240) % 7) - 3.5).reshape(1, 4, 10, 6)
    return np.maximum(conv2d(x, w, {"padding": [1, 1, 1, 1]}), 0) + z


def test_profile_names_operators_and_times_steps(webnn_page, server_url):
    """Steps map to the builder operators and labels; times are positive; runs counts
    dispatches; reset starts afresh; one timestamped pass per step; results unchanged."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext({polyfill: {profiling: true}});
      const {graph, go} = await makeGraph(context);
      const empty = await readProfile(graph);
      let y;
      const counts = await countPasses(async () => { y = await go(); await go(); y = await go(); });
      const p = await readProfile(graph);
      const again = await readProfile(graph, {reset: true});
      const afterReset = await readProfile(graph);
      await go();
      const one = await readProfile(graph);
      return {empty, p, again: again.runs, afterReset, one: one.runs, counts, y,
              stepCount: describeGraph(graph).steps.length};
    """)
    p = r["p"]
    assert r["empty"]["runs"] == 0 and r["empty"]["totalMs"] == 0
    assert p["runs"] == 3 and r["again"] == 3
    assert r["afterReset"]["runs"] == 0 and all(s["ms"] == 0 for s in r["afterReset"]["steps"])
    assert r["one"] == 1
    steps = p["steps"]
    assert len(steps) == r["stepCount"]
    assert [s["index"] for s in steps] == list(range(len(steps)))
    ops = [[(o["type"], o["label"]) for o in s["operators"]] for s in steps]
    # conv2d c1 (a graph output, so nothing fuses into it), then relu and add 'sum' fused into
    # one step (compile/fusion.js) that lists both operators, the producer first.
    assert ops == [[("conv2d", "c1")], [("relu", ""), ("add", "sum")]], ops
    assert steps[0]["name"] == "c1"
    # launch sizes: the fused element-wise step runs one invocation per output element (240)
    assert all(len(s["workgroups"]) == 3 and min(s["workgroups"]) >= 1 for s in steps), steps
    ws = steps[1]["workgroupSize"]
    assert steps[1]["workgroups"] == [-(-240 // ws), 1, 1], steps[1]
    assert all(isinstance(s["ms"], (int, float)) and s["ms"] > 0 for s in steps), steps
    assert abs(p["totalMs"] - sum(s["ms"] for s in steps)) < 1e-9
    assert r["counts"] == {"passes": 3 * len(steps), "timestamped": 3 * len(steps)}
    np.testing.assert_allclose(np.array(r["y"]).reshape(1, 4, 10, 6), reference(), rtol=1e-5, atol=1e-5)


def test_output_copy_and_boundary_steps_name_the_producer(webnn_page, server_url):
    """A float16 output's packing step names its producer; an output that must be copied too;
    the float16 input's unpacking step names none."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext({polyfill: {profiling: true}});
      const b = new MLGraphBuilder(context);
      const h = b.input('h', {dataType: 'float16', shape: [2, 3]});
      const t = b.tanh(h, {label: 'th'});
      const xi = b.input('x', {dataType: 'float32', shape: [5]});
      const e = b.exp(xi, {label: 'ex'});
      const graph = await b.build({t, e, e2: e});
      return (await readProfile(graph)).steps.map((s) => ({name: s.name, ops: s.operators}));
    """)
    by_ops = [tuple((o["type"], o["label"]) for o in s["ops"]) for s in r]
    assert () in by_ops  # unpack float16 input h
    assert by_ops.count((("tanh", "th"),)) == 2, r  # tanh, then the packing of output t
    assert by_ops.count((("exp", "ex"),)) == 2, r  # exp, then the copy for the second output
    assert len(r) == 5


def test_profiling_off_throws_and_adds_no_timestamps(webnn_page, server_url):
    """Without the option: readProfile rejects with TypeError, a dispatch is one pass with no
    timestampWrites; a non-graph is a TypeError too."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const {graph, go} = await makeGraph(context);
      const counts = await countPasses(go);
      const errors = [];
      for (const arg of [graph, {}, undefined]) {
        try { await readProfile(arg); errors.push('no error'); } catch (e) { errors.push(`${e.constructor.name}: ${e.message}`); }
      }
      return {counts, errors, profiled: describeGraph(graph).profiled};
    """)
    assert r["counts"] == {"passes": 1, "timestamped": 0}
    assert r["profiled"] is False
    assert r["errors"][0].startswith("TypeError: readProfile: profiling is off"), r["errors"]
    assert all(e.startswith("TypeError: readProfile: argument is not an MLGraph") for e in r["errors"][1:]), r["errors"]


def test_configure_context_profiles_a_gpu_device_context(webnn_page, server_url):
    """createContext(gpuDevice) starts with profiling off; configureContext() turns it on for
    graphs built afterwards (the device must have timestamp-query), and rejects a non-context."""
    r = run(webnn_page, server_url, """
      const {configureContext} = await import('/polyfill/options.js');
      const adapter = await navigator.gpu.requestAdapter();
      const device = await adapter.requestDevice({requiredFeatures: ['timestamp-query']});
      const context = await navigator.ml.createContext(device);
      const before = await makeGraph(context);
      let offError = null;
      try { await readProfile(before.graph); } catch (e) { offError = e.name; }
      const settings = configureContext(context, {profiling: true});
      const {graph, go} = await makeGraph(context);
      await go();
      const p = await readProfile(graph);
      let badError = null;
      try { configureContext({}, {profiling: true}); } catch (e) { badError = e.name; }
      return {offError, settings, runs: p.runs, steps: p.steps.length, badError};
    """)
    assert r["offError"] == "TypeError"
    assert {k: r["settings"][k] for k in ("fastReadback", "profiling")} == {"fastReadback": True, "profiling": True}
    assert r["runs"] == 1 and r["steps"] == 2
    assert r["badError"] == "TypeError"
