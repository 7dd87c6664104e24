"""Prompt queue waits (static/polyfill/gpu/completion.js): the nudge loop that keeps readTensor
and the pool's onSubmittedWorkDone from waiting for Chromium's next completion poll.

On SwiftShader it must stay off by default; the tests force it on through the tuning switches
(static/polyfill/tuning.js: ``nudgeQueue: true``, a short ``nudgeCapMs``) and count nudges by wrapping
GPUQueue.prototype.submit / writeBuffer in the page.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.graph_runner import run_js
from tests.reference.pool_conv import conv2d

HELPERS = """
const {queueHooks, queueState} = await import('/polyfill/inspect.js');
const {configureContext} = await import('/polyfill/options.js');
// tunes `context` (static/polyfill/tuning.js switches)
const tune = (context, tuning) => configureContext(context, {tuning});
// the context's queue-wait counters (inspect.js queueState, read live) and its wait(promise)
const queue = (context) => new Proxy({wait: (p) => queueHooks(context).wait(p)},
  {get: (own, key) => (key in own ? own[key] : queueState(context)[key])});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Waits until the loop has no wait outstanding and no dispatch being tracked, or 10 s have
// passed: a busy CI host can take longer than any fixed sleep to finish the queue's work.
const settle = async (c) => {
  for (const end = performance.now() + 10000; (c.tracking || c.outstanding || c.running) && performance.now() < end;) await sleep(10);
};
// Counts nudges (queue.submit([]) and 16-byte writeBuffer calls) from now until stop().
const watchNudges = () => {
  const counts = {submitEmpty: 0, write16: 0};
  const submit = GPUQueue.prototype.submit, write = GPUQueue.prototype.writeBuffer;
  GPUQueue.prototype.submit = function (buffers) { if (buffers.length === 0) counts.submitEmpty++; return submit.apply(this, arguments); };
  GPUQueue.prototype.writeBuffer = function (buffer) { if (buffer.label === 'webnn:completion-nudge') counts.write16++; return write.apply(this, arguments); };
  counts.stop = () => { GPUQueue.prototype.submit = submit; GPUQueue.prototype.writeBuffer = write; };
  return counts;
};
// conv2d 1x3x9x7 (3x3 filter, 5 outputs) -> relu: a few dispatches and a readback.
const x = Float32Array.from({length: 3 * 9 * 7}, (_, i) => Math.sin(i * 0.7) * 3 - 0.5);
const w = Float32Array.from({length: 5 * 3 * 9}, (_, i) => Math.cos(i * 1.3) - 0.2);
const makeGraph = async (context) => {
  const b = new MLGraphBuilder(context);
  const input = b.input('x', {dataType: 'float32', shape: [1, 3, 9, 7]});
  const filter = b.constant({dataType: 'float32', shape: [5, 3, 3, 3]}, w);
  const y = b.relu(b.conv2d(input, filter, {padding: [1, 1, 1, 1]}));
  const graph = await b.build({y});
  const xt = await context.createTensor({dataType: 'float32', shape: [1, 3, 9, 7], writable: true});
  const yt = await context.createTensor({dataType: 'float32', shape: [1, 5, 9, 7], readable: true});
  context.writeTensor(xt, x);
  return async () => { context.dispatch(graph, {x: xt}, {y: yt}); return Array.from(new Float32Array(await context.readTensor(yt))); };
};
"""


def run(page, server_url, body):
    result = run_js(page, server_url, HELPERS + body)
    assert "ok" in result, f"JS failed: {result}"
    return result["ok"]


def conv_relu_reference(x, w):
    """float64 NumPy conv2d (NCHW, OIHW, padding 1) then relu."""
    return np.maximum(conv2d(x, w, {"padding": [1, 1, 1, 1]}), 0)


def inputs():
    x = (np.sin(np.arange(3 * 9 * 7) * 0.7) * 3 - 0.5).astype(np.float32).astype(np.float64).reshape(1, 3, 9, 7)
    w = (np.cos(np.arange(5 * 3 * 9) * 1.3) - 0.2).astype(np.float32).astype(np.float64).reshape(5, 3, 3, 3)
    return x, w


def test_off_by_default_on_swiftshader(webnn_page, server_url):
    """SwiftShader is a CPU adapter: no nudges while a read is pending, and the slot says so."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const c = queue(context);
      const go = await makeGraph(context);
      const counts = watchNudges();
      await go(); await go();
      await sleep(50);
      counts.stop();
      return {hardware: c.hardware, active: c.active, nudges: c.nudges, counts};
    """)
    assert r["hardware"] is False and r["active"] is False
    assert r["nudges"] == 0 and r["counts"]["submitEmpty"] == 0 and r["counts"]["write16"] == 0, r


@pytest.mark.parametrize("nudge", ["submit", "write"])
def test_forced_runs_while_reading_and_stops(webnn_page, server_url, nudge):
    """Forced on: nudges run while readTensor is pending, stop once nothing is waiting, and the
    results equal the loop-off results and the float64 reference."""
    r = run(webnn_page, server_url, f"""
      const context = await navigator.ml.createContext();
      const c = queue(context);
      const go = await makeGraph(context);
      const plain = await go();
      tune(context, {{nudgeQueue: true, nudge: '{nudge}'}});
      const counts = watchNudges();
      const pending = go();
      await new Promise((r) => setTimeout(r, 0));
      const runningWhilePending = c.running;
      const fast = await pending;
      await settle(c);  // the pool's onSubmittedWorkDone of the staging buffer settles too
      const afterSettle = {{...counts}};
      const outstandingAfter = c.outstanding;
      await sleep(60);
      counts.stop();
      return {{plain, fast, runningWhilePending, afterSettle, later: counts, outstandingAfter,
               runningAfter: c.running, nudges: c.nudges}};
    """)
    key = "submitEmpty" if nudge == "submit" else "write16"
    other = "write16" if nudge == "submit" else "submitEmpty"
    assert r["runningWhilePending"] is True
    assert r["afterSettle"][key] >= 1 and r["afterSettle"][other] == 0, r
    assert r["nudges"] == r["afterSettle"][key], r
    assert r["outstandingAfter"] == 0 and r["runningAfter"] is False
    assert r["later"][key] == r["afterSettle"][key], "nudges went on after every wait settled"
    assert r["fast"] == r["plain"]
    x, w = inputs()
    np.testing.assert_allclose(np.array(r["fast"]).reshape(1, 5, 9, 7), conv_relu_reference(x, w), rtol=1e-5, atol=1e-5)


def test_cap_stops_a_wait_that_never_settles(webnn_page, server_url):
    """A wait that never settles is nudged for capMs only; a new wait starts the loop again."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const c = queue(context);
      tune(context, {nudgeQueue: true, nudgeCapMs: 40});
      c.wait(new Promise(() => {}));
      await sleep(150);
      const stopped = {running: c.running, nudges: c.nudges, outstanding: c.outstanding};
      await sleep(100);
      const still = c.nudges;
      const go = await makeGraph(context);
      const before = c.nudges;
      const y = await go();
      return {stopped, still, before, after: c.nudges, y: y.length};
    """)
    assert r["stopped"]["running"] is False and r["stopped"]["outstanding"] == 1
    assert r["stopped"]["nudges"] > 0
    assert r["still"] == r["stopped"]["nudges"], "nudges went on past the cap"
    assert r["after"] > r["before"], "a new wait did not restart the loop"


def test_off_option_wins_over_forcing(webnn_page, server_url):
    """createContext({polyfill: {fastReadback: false}}) keeps the loop off even on a 'hardware'
    adapter; the default context of the same page is enabled."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext({polyfill: {fastReadback: false}});
      const c = queue(context);
      tune(context, {nudgeQueue: true});
      const go = await makeGraph(context);
      const counts = watchNudges();
      const y = await go();
      await sleep(30);
      counts.stop();
      const other = queue(await navigator.ml.createContext({polyfill: 7}));
      return {enabled: c.enabled, active: c.active, nudges: c.nudges, counts, n: y.length, otherEnabled: other.enabled};
    """)
    assert r["enabled"] is False and r["active"] is False
    assert r["nudges"] == 0 and r["counts"]["submitEmpty"] == 0 and r["counts"]["write16"] == 0
    assert r["n"] == 5 * 9 * 7 and r["otherEnabled"] is True


def test_destroy_stops_the_loop(webnn_page, server_url):
    """A lost context stops nudging at once, with a wait still outstanding."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const c = queue(context);
      tune(context, {nudgeQueue: true, nudge: 'write'});
      c.wait(new Promise(() => {}));
      await sleep(20);
      context.destroy();
      const at = c.nudges;
      await sleep(50);
      return {at, after: c.nudges, running: c.running, active: c.active};
    """)
    assert r["at"] > 0 and r["after"] == r["at"] and r["running"] is False and r["active"] is False


def test_configure_context_turns_it_off(webnn_page, server_url):
    """configureContext(context, {fastReadback: false}) (options.js, for createContext(gpuDevice)
    contexts) keeps a forced loop off."""
    r = run(webnn_page, server_url, """
      const device = await (await navigator.gpu.requestAdapter()).requestDevice();
      const context = await navigator.ml.createContext(device);
      const c = queue(context);
      tune(context, {nudgeQueue: true});
      const settings = configureContext(context, {fastReadback: false});
      const go = await makeGraph(context);
      await go();
      await sleep(20);
      return {settings, nudges: c.nudges, enabled: c.enabled};
    """)
    assert {k: r["settings"][k] for k in ("fastReadback", "profiling")} == {"fastReadback": False, "profiling": False}
    assert r["settings"]["tuning"]["nudgeQueue"] is True
    assert r["nudges"] == 0 and r["enabled"] is False


def test_plan_split_into_several_submits_computes_the_same(webnn_page, server_url):
    """The tuning switch ``submitSteps`` (compile/plan.js) splits a dispatch into one command
    buffer per n steps, so the GPU can start before the whole plan is recorded: one non-empty
    submit by default, one per step with n = 1, and the same numbers either way."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      // conv2d's output is a graph output too, so relu stays a step of its own (not fused):
      // two steps to split.
      const b = new MLGraphBuilder(context);
      const conv = b.conv2d(b.input('x', {dataType: 'float32', shape: [1, 3, 9, 7]}),
                            b.constant({dataType: 'float32', shape: [5, 3, 3, 3]}, w), {padding: [1, 1, 1, 1]});
      const graph = await b.build({y: b.relu(conv), c: conv});
      const desc = {dataType: 'float32', shape: [1, 5, 9, 7], readable: true};
      const xt = await context.createTensor({dataType: 'float32', shape: [1, 3, 9, 7], writable: true});
      const yt = await context.createTensor(desc), ct = await context.createTensor(desc);
      context.writeTensor(xt, x);
      const go = async () => { context.dispatch(graph, {x: xt}, {y: yt, c: ct}); return Array.from(new Float32Array(await context.readTensor(yt))); };
      const submit = GPUQueue.prototype.submit;
      let counted = 0;
      GPUQueue.prototype.submit = function (buffers) { if (buffers.length) counted++; return submit.apply(this, arguments); };
      const measure = async (n) => { tune(context, {submitSteps: n}); counted = 0; const out = await go(); return {out, submits: counted}; };
      const whole = await measure(undefined), one = await measure(1), two = await measure(2);
      GPUQueue.prototype.submit = submit;
      return {whole, one, two};
    """)
    x, w = inputs()
    want = conv_relu_reference(x, w)
    # readTensor's copy is one more submit each time.
    assert r["whole"]["submits"] == 2, r
    assert r["one"]["submits"] == 3 and r["two"]["submits"] == 2, r
    for k in ("whole", "one", "two"):
        np.testing.assert_allclose(np.array(r[k]["out"]).reshape(1, 5, 9, 7), want, rtol=1e-5, atol=1e-5)


CHAIN = ["neg", "exp", "sqrt", "log", "abs", "neg", "abs", "sqrt", "neg", "exp", "log", "neg", "abs", "neg"]


def test_idle_queue_splits_the_submit(webnn_page, server_url):
    """By default (``submitSteps`` unset) a dispatch onto a queue with none of our work outstanding
    is submitted in command buffers of 4, 8, 16... steps on hardware adapters (forced here), so the
    GPU starts while the rest is recorded; one right behind another (the queue busy, as back to
    back) is one command buffer; a software adapter, or a submitSteps number, gives one too. A
    chain of 14 element-wise ops, each a graph output (14 steps: 4 + 8 + 2 when split), every
    output read straight after the split dispatch and after the busy one, against float64 NumPy."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const c = queue(context);
      const b = new MLGraphBuilder(context);
      let v = b.input('x', {dataType: 'float32', shape: [4, 5]});
      const outs = {};
      for (const [i, op] of %s.entries()) { v = b[op](v); outs['y' + i] = v; }
      const graph = await b.build(outs);
      const xt = await context.createTensor({dataType: 'float32', shape: [4, 5], writable: true});
      const ts = {};
      for (const k of Object.keys(outs)) ts[k] = await context.createTensor({dataType: 'float32', shape: [4, 5], readable: true});
      context.writeTensor(xt, Float32Array.from({length: 20}, (_, i) => (i - 9.5) / 4));
      const submit = GPUQueue.prototype.submit;
      let counted = 0;
      GPUQueue.prototype.submit = function (buffers) { if (buffers.length) counted++; return submit.apply(this, arguments); };
      const submits = () => { counted = 0; context.dispatch(graph, {x: xt}, ts); return counted; };
      const readAll = async () => {
        const values = {};
        for (const k of Object.keys(ts)) values[k] = Array.from(new Float32Array(await context.readTensor(ts[k])));
        return values;
      };
      try {
        const software = submits();
        await readAll();
        tune(context, {nudgeQueue: true});
        await settle(c);
        const idle = submits();
        const split = await readAll();
        await settle(c);
        const first = submits();
        const busy = submits();
        const after = await readAll();
        await settle(c);
        tune(context, {submitSteps: 1e9});
        const forced = submits();
        tune(context, {submitSteps: undefined});
        await settle(c);
        return {software, idle, first, busy, forced, split, after};
      } finally {
        GPUQueue.prototype.submit = submit;
      }
    """ % json.dumps(CHAIN))
    assert r["software"] == 1 and r["idle"] == 3 and r["first"] == 3 and r["busy"] == 1 and r["forced"] == 1, r
    ops = {"neg": np.negative, "exp": np.exp, "sqrt": np.sqrt, "log": np.log, "abs": np.abs}
    v = (np.arange(20) - 9.5) / 4
    for i, op in enumerate(CHAIN):
        v = ops[op](v)
        for key in ("split", "after"):
            np.testing.assert_allclose(r[key][f"y{i}"], v, rtol=1e-5, atol=1e-6, err_msg=f"{key} y{i}")


def test_interval_spaces_the_nudges(webnn_page, server_url):
    """``intervalMs`` (0.25 ms by default; tools/bench_readback.py --intervals measures others):
    the loop still runs, but sends a nudge only when that long has passed since the previous one:
    with 0, one nudge per task, so a wait the test holds open for 20 ms gets many (a real read on
    SwiftShader may finish within a task or two, too few to count on); a huge interval sends none
    at all, for that wait and for reads, whose results are unchanged."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const c = queue(context);
      const go = await makeGraph(context);
      tune(context, {nudgeQueue: true});
      const defaultInterval = c.intervalMs;
      tune(context, {nudgeIntervalMs: 0});
      const held = async () => { const before = c.nudges; await c.wait(sleep(20)); return c.nudges - before; };
      const read = async () => { const before = c.nudges; const out = await go(); await sleep(30); return {n: c.nudges - before, out}; };
      const dense = await held();
      const denseRead = await read();
      tune(context, {nudgeIntervalMs: 1e9});
      const spacedHeld = await held();
      const spaced = await read();
      const spacedAgain = await read();
      return {defaultInterval, dense, denseRead: denseRead.n, spacedHeld, spaced: spaced.n, spacedAgain: spacedAgain.n,
              same: JSON.stringify(denseRead.out) === JSON.stringify(spaced.out)};
    """)
    assert r["defaultInterval"] == 0.25, r
    assert r["dense"] >= 3 and r["denseRead"] >= 1, r
    assert r["spacedHeld"] == 0 and r["spaced"] == 0 and r["spacedAgain"] == 0, r
    assert r["same"] is True


def test_dispatch_nudges_until_its_work_is_done(webnn_page, server_url):
    """Forced on, dispatch() alone (no readTensor) starts the loop until the queue has finished
    it, so the page's own onSubmittedWorkDone after a dispatch is prompt too; a burst of 20
    dispatches costs two onSubmittedWorkDone calls of ours (one pending, one more for the rest),
    and the loop stops once they settle. With fastReadback off, dispatch() waits on nothing."""
    r = run(webnn_page, server_url, """
      const context = await navigator.ml.createContext();
      const c = queue(context);
      const go = await makeGraph(context);
      await go();
      tune(context, {nudgeQueue: true});
      const done = GPUQueue.prototype.onSubmittedWorkDone;
      let ours = 0;
      GPUQueue.prototype.onSubmittedWorkDone = function () { ours++; return done.apply(this, arguments); };
      const counts = watchNudges();
      const b = new MLGraphBuilder(context);
      const graph = await b.build({y: b.relu(b.input('x', {dataType: 'float32', shape: [64]}))});
      const xt = await context.createTensor({dataType: 'float32', shape: [64], writable: true});
      const yt = await context.createTensor({dataType: 'float32', shape: [64], readable: true});
      await sleep(30);
      const base = {ours, nudges: c.nudges};
      context.dispatch(graph, {x: xt}, {y: yt});
      const one = {ours: ours - base.ours, tracking: c.tracking, running: c.running};
      await done.call(queueHooks(context).device.queue);
      await settle(c);
      const afterOne = {nudges: c.nudges - base.nudges, tracking: c.tracking, outstanding: c.outstanding, running: c.running};
      const before = ours;
      for (let i = 0; i < 20; i++) context.dispatch(graph, {x: xt}, {y: yt});
      await done.call(queueHooks(context).device.queue);  // the uncounted original
      await settle(c);
      const burst = {ours: ours - before, tracking: c.tracking, outstanding: c.outstanding};
      const off = await navigator.ml.createContext({polyfill: {fastReadback: false}});
      tune(off, {nudgeQueue: true});
      const b2 = new MLGraphBuilder(off);
      const g2 = await b2.build({y: b2.relu(b2.input('x', {dataType: 'float32', shape: [64]}))});
      const x2 = await off.createTensor({dataType: 'float32', shape: [64], writable: true});
      const y2 = await off.createTensor({dataType: 'float32', shape: [64], readable: true});
      await sleep(30);
      const beforeOff = ours;
      off.dispatch(g2, {x: x2}, {y: y2});
      const offCalls = ours - beforeOff;
      GPUQueue.prototype.onSubmittedWorkDone = done;
      counts.stop();
      return {one, afterOne, burst, offCalls};
    """)
    assert r["one"] == {"ours": 1, "tracking": True, "running": True}, r
    assert r["afterOne"]["nudges"] >= 1, r
    assert r["afterOne"]["tracking"] is False and r["afterOne"]["outstanding"] == 0 and r["afterOne"]["running"] is False, r
    assert r["burst"] == {"ours": 2, "tracking": False, "outstanding": 0}, r
    assert r["offCalls"] == 0, r
