"""Where one inference's latency goes beyond its GPU work: a model's round trip (upload + run +
read back, what ``tools.bench_ort`` calls latency) against its parts, the modes interleaved run
by run on one ordinary context, headless, printing a table.

The page is cross-origin isolated (``?coi=1``), so ``performance.now()`` is fine-grained (about
5 us in Chromium, against 100 us otherwise). Each timed run starts after ``--gap-ms`` of idle page
(``make bench`` alternates four runtimes, so its GPU idles between two runs of one). Modes, for
each model (a generated manifest under /models/<name>/, ``tools.bench_ort.prepare_model``):

- ``full``: writeTensor(input) + dispatch + readTensor(output), the context as it is;
  ``full-nofault`` / ``full-nostage`` / ``full-old``: the same with readTensor's early page
  writes (host_memory.js, tuning switch ``faultInReads``), writeTensor's mapped upload buffers
  (gpu/pending_writes.js, tuning switch ``stageWrites``) or both turned off;
- ``stamped``: ``full`` with an empty timestamped compute pass submitted before and after the
  dispatch: the GPU's span from the first step's start to the last step's end in an isolated
  run, so that ``full`` minus it is what the host adds;
- ``one`` / ``one-stamped``: as ``full`` / ``stamped`` with the plan in one command buffer
  (tuning switch ``submitSteps``), against the default's split onto an idle queue;
- ``done``: writeTensor + dispatch + the queue's ``onSubmittedWorkDone`` (nudged): no read;
- ``i100``: ``full`` with the completion nudges at most 0.1 ms apart (0.25 ms by default);
  ``late-dense`` / ``early-late-dense``: ``full`` / ``early`` nudging at most 0.03 ms apart from
  0.3 ms before the fastest ``done`` so far (what predicting the queue's end would gain);
- ``early``: ``full`` encoded by hand: the input's writeBuffer and the plan's first 4 steps
  submitted, then (after a microtask, so that Blink has flushed them to the GPU process) the
  rest in command buffers of 8, 16... and the read: what deferring the encoding would gain;
- the floor: ``scope`` (pushErrorScope + popErrorScope: a GPU-process round trip without GPU
  work), ``idle-done`` (onSubmittedWorkDone of an empty queue), ``read4`` (readTensor of a
  4-byte tensor; ``read4-dense`` nudging every task, ``read4-off`` not at all), ``tiny`` (a
  one-step graph's dispatch + its 4-byte read);
- sizes: ``read`` (the model's output alone), ``read64k``, ``read1m`` (readTensor of 64 KiB /
  1 MiB); ``read1m-4x`` / ``read1m-16x`` (1 MiB through 4 / 16 staging buffers mapped at once),
  ``read1m-parts`` / ``read1m-steps`` (by hand, printed as parts: ``copy``, the ms from the map's
  resolution to the copy's end; getMappedRange, a first and a second ``slice`` of the mapped range, unmap, and a
  ``slice`` of an ordinary 1 MiB array); ``write1m`` (writeTensor of 1 MiB + a 4-byte read),
  ``write1m-raw`` (a bare writeBuffer), ``write1m-pieces`` (16 writeBuffers of 64 KiB),
  ``write1m-mapped`` (a MAP_WRITE buffer mapped ahead, filled and copied; its round trip
  includes mapping it again, its parts do not: ``fill``, and ``toRead`` up to the read's end),
  ``write1m-created`` (a new mappedAtCreation buffer per write);
- back to back: ``--batch`` dispatches and one read, per inference.

Usage::

    python -m tools.bench_latency [--models bert-base,bert-encoder] [--modes full,read4,...] [--reps 40]
                                  [--gap-ms 5] [--batch 30] [--out bench-results/latency.json] [--timeout SECONDS]

Exit status: 0 when every case ran, 2 when the page failed (no adapter, no timestamp-query).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path("bench-results/latency.json")
MODES = ["full", "stamped", "one", "one-stamped", "done", "read", "read4", "tiny", "early", "i100",
         "scope", "idle-done", "read4-dense", "read4-off", "read64k", "read1m", "late-dense", "early-late-dense",
         "read1m-4x", "read1m-16x", "read1m-parts", "write1m",
         "read1m-steps", "write1m-mapped", "write1m-pieces", "write1m-created", "write1m-raw",
         "full-nofault", "full-nostage", "full-old"]

#: The page function's body after tools.bench_page.PAGE_SETUP_JS; parameters [models, reps, gapMs, batch].
_BODY = """
  const {describeGraph, encodeSteps} = await import('/polyfill/inspect.js');
  const {tensorState} = await import('/polyfill/inspect.js');
  const {addToBuilder} = await import('/harness/graph_json.js');
  const device = hooks.device;
  if (!device.features.has('timestamp-query')) throw new Error('no timestamp-query on this adapter');
  const now = () => performance.now();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const qs = device.createQuerySet({type: 'timestamp', count: 2});
  const resolved = device.createBuffer({size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC});
  const stampRead = device.createBuffer({size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
  const beginStamp = () => {
    const e = device.createCommandEncoder();
    e.beginComputePass({timestampWrites: {querySet: qs, beginningOfPassWriteIndex: 0}}).end();
    device.queue.submit([e.finish()]);
  };
  const endStamp = () => {
    const e = device.createCommandEncoder();
    e.beginComputePass({timestampWrites: {querySet: qs, endOfPassWriteIndex: 1}}).end();
    e.resolveQuerySet(qs, 0, 2, resolved, 0);
    e.copyBufferToBuffer(resolved, 0, stampRead, 0, 16);
    device.queue.submit([e.finish()]);
    return hooks.wait(stampRead.mapAsync(GPUMapMode.READ)).then(() => {
      const [a, b] = new BigUint64Array(stampRead.getMappedRange());
      stampRead.unmap();
      return Number(b - a) / 1e6;
    });
  };
  // the one-step graph and a 4-byte tensor for the floor
  const tb = new MLGraphBuilder(context);
  const tinyGraph = await tb.build({y: tb.relu(tb.input('x', {dataType: 'float32', shape: [1]}))});
  const t4in = await context.createTensor({dataType: 'float32', shape: [1], writable: true});
  const t4 = await context.createTensor({dataType: 'float32', shape: [1], readable: true});
  context.writeTensor(t4in, new Float32Array([0.5]));
  const r64k = await context.createTensor({dataType: 'float32', shape: [16384], readable: true});
  const r1m = await context.createTensor({dataType: 'float32', shape: [262144], readable: true});
  const w1m = await context.createTensor({dataType: 'float32', shape: [262144], writable: true});
  const data1m = new Float32Array(262144).fill(0.25);
  const stagings = (n) => Array.from({length: n}, () => device.createBuffer({size: (1 << 20) / n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST}));
  const staged = {1: stagings(1), 4: stagings(4), 16: stagings(16)};
  const upStage = device.createBuffer({size: 1 << 20, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true});
  // the output's 1 MB read through n staging buffers mapped at once; returns the ms from the
  // last map's resolution to the copy's end (getMappedRange + slice)
  const readParts = async (n) => {
    const part = (1 << 20) / n;
    const e = device.createCommandEncoder();
    staged[n].forEach((b, i) => e.copyBufferToBuffer(tensorState(r1m).buffer, i * part, b, 0, part));
    device.queue.submit([e.finish()]);
    await Promise.all(staged[n].map((b) => hooks.wait(b.mapAsync(GPUMapMode.READ))));
    const t = now();
    const out = new Uint8Array(1 << 20);
    staged[n].forEach((b, i) => { out.set(new Uint8Array(b.getMappedRange()), i * part); b.unmap(); });
    return now() - t;
  };
  const result = {adapter: adapterInfo, crossOriginIsolated: Boolean(globalThis.crossOriginIsolated), models: {}};
  for (const name of models) {
    const manifest = await (await fetch(`/models/${name}/manifest.json`)).json();
    const weights = new Uint8Array(await (await fetch(`/models/${name}/${manifest.weights}`)).arrayBuffer());
    const [inName, inSpec] = Object.entries(manifest.inputs)[0];
    const outName = manifest.outputs[0];
    const inData = new Float32Array(count(inSpec.shape)).fill(0.5);
    const b = new MLGraphBuilder(context);
    const operands = addToBuilder(b, manifest, (n, spec) => weights.slice(spec.offset, spec.offset + spec.byteLength));
    const graph = await b.build({[outName]: operands.get(outName)});
    const xt = await context.createTensor({dataType: inSpec.dataType, shape: inSpec.shape, writable: true});
    const yt = await context.createTensor({dataType: 'float32', shape: operands.get(outName).shape, readable: true});
    const ins = {[inName]: xt};
    const outs = {[outName]: yt};
    context.writeTensor(xt, inData);
    context.dispatch(graph, ins, outs);
    await context.readTensor(yt);
    const stepCount = describeGraph(graph).steps.length;
    const encodeRange = (from, to) => {
      const e = device.createCommandEncoder();
      const pass = e.beginComputePass();
      encodeSteps(graph, pass, to, from);
      pass.end();
      device.queue.submit([e.finish()]);
    };
    const full = async () => { context.writeTensor(xt, inData); context.dispatch(graph, ins, outs); await context.readTensor(yt); };
    const stamped = async () => {
      context.writeTensor(xt, inData);
      beginStamp();
      context.dispatch(graph, ins, outs);
      const span = endStamp();
      await context.readTensor(yt);
      return span;
    };
    const withSlot = (key, value, f) => async () => {
      const old = configureContext(context).tuning[key]; tune(context, {[key]: value});
      try { return await f(); } finally { tune(context, {[key]: old}); }
    };
    let fastestDone = Infinity;
    const early = async () => {
      device.queue.writeBuffer(tensorState(xt).buffer, 0, inData);
      const n = stepCount;
      encodeRange(0, Math.min(4, n));
      await null;  // Blink's flush microtask was queued by the first call above: it runs first
      for (let from = 4, chunk = 8; from < n; from += chunk, chunk *= 2) encodeRange(from, Math.min(n, from + chunk));
      hooks.afterSubmit();
      await context.readTensor(yt);
    };
    const modeFns = {
      full,
      stamped,
      one: withSlot('submitSteps', 1e9, full),
      'full-nofault': withSlot('faultInReads', false, full),
      'full-nostage': withSlot('stageWrites', false, full),
      'full-old': withSlot('faultInReads', false, withSlot('stageWrites', false, full)),
      'one-stamped': withSlot('submitSteps', 1e9, stamped),
      done: async () => {
        const t0 = now();
        context.writeTensor(xt, inData);
        context.dispatch(graph, ins, outs);
        await hooks.wait(device.queue.onSubmittedWorkDone());
        fastestDone = Math.min(fastestDone, now() - t0);
      },
      read: async () => { await context.readTensor(yt); },
      read4: async () => { await context.readTensor(t4); },
      tiny: async () => { context.dispatch(tinyGraph, {x: t4in}, {y: t4}); await context.readTensor(t4); },
      early,
      i100: async () => {
        tune(context, {nudgeIntervalMs: 0.1});
        try { await full(); } finally { tune(context, {nudgeIntervalMs: undefined}); }
      },
      scope: async () => { device.pushErrorScope('validation'); await device.popErrorScope(); },
      'idle-done': async () => { await hooks.wait(device.queue.onSubmittedWorkDone()); },
      'read4-dense': async () => {
        tune(context, {nudgeIntervalMs: 0});
        try { await context.readTensor(t4); } finally { tune(context, {nudgeIntervalMs: undefined}); }
      },
      'read4-off': async () => {
        configureContext(context, {fastReadback: false});
        try { await context.readTensor(t4); } finally { configureContext(context, {fastReadback: true}); }
      },
      read64k: async () => { await context.readTensor(r64k); },
      read1m: async () => { await context.readTensor(r1m); },
      'late-dense': () => lateDense(full),
      'read1m-4x': async () => { await readParts(4); },
      'read1m-16x': async () => { await readParts(16); },
      'read1m-parts': async () => ({copy: await readParts(1)}),
      'read1m-steps': async () => {
        const b = staged[1][0];
        const e = device.createCommandEncoder();
        e.copyBufferToBuffer(tensorState(r1m).buffer, 0, b, 0, 1 << 20);
        device.queue.submit([e.finish()]);
        await hooks.wait(b.mapAsync(GPUMapMode.READ));
        const t0 = now(); const range = b.getMappedRange();
        const t1 = now(); const first = new Uint8Array(range).slice();
        const t2 = now(); const second = new Uint8Array(range).slice();
        const t3 = now(); b.unmap();
        const t4 = now(); first.slice();
        const t5 = now();
        return {getMappedRange: t1 - t0, firstCopy: t2 - t1, secondCopy: t3 - t2, unmap: t4 - t3, plainCopy: t5 - t4, check: second.length};
      },
      'write1m-raw': async () => { device.queue.writeBuffer(tensorState(w1m).buffer, 0, data1m); await context.readTensor(t4); },
      'write1m-pieces': async () => {
        const buf = tensorState(w1m).buffer;
        for (let i = 0; i < 16; i++) device.queue.writeBuffer(buf, i * 65536, data1m.buffer, i * 65536, 65536);
        await context.readTensor(t4);
      },
      'write1m-mapped': async () => {
        // a MAP_WRITE staging buffer mapped ahead (as a pool would keep it), filled, copied
        const t0 = now();
        new Uint8Array(upStage.getMappedRange()).set(new Uint8Array(data1m.buffer));
        const t1 = now();
        upStage.unmap();
        const e = device.createCommandEncoder();
        e.copyBufferToBuffer(upStage, 0, tensorState(w1m).buffer, 0, 1 << 20);
        device.queue.submit([e.finish()]);
        await context.readTensor(t4);
        const t2 = now();
        await upStage.mapAsync(GPUMapMode.WRITE);  // re-mapped for the next run, outside the timing of the next one
        return {fill: t1 - t0, toRead: t2 - t1};
      },
      'write1m-created': async () => {
        const b = device.createBuffer({size: 1 << 20, usage: GPUBufferUsage.COPY_SRC, mappedAtCreation: true});
        new Uint8Array(b.getMappedRange()).set(new Uint8Array(data1m.buffer));
        b.unmap();
        const e = device.createCommandEncoder();
        e.copyBufferToBuffer(b, 0, tensorState(w1m).buffer, 0, 1 << 20);
        device.queue.submit([e.finish()]);
        b.destroy();
        await context.readTensor(t4);
      },
      write1m: async () => { context.writeTensor(w1m, data1m); await context.readTensor(t4); },
      'early-late-dense': () => lateDense(early),
    };
    // nudges densely (at most every 0.03 ms) from 0.3 ms before the fastest 'done' so far until
    // the run ends: what a completion loop predicting the queue's end would gain
    async function lateDense(run) {
      const t0 = now(); let live = true;
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        if (!live) return;
        if (now() - t0 > fastestDone - 0.3) tune(context, {nudgeIntervalMs: 0.03});
        ch.port2.postMessage(0);
      };
      ch.port2.postMessage(0);
      try { await run(); } finally { live = false; tune(context, {nudgeIntervalMs: undefined}); ch.port1.close(); }
    }
    const times = Object.fromEntries(modes.map((m) => [m, []]));
    const spans = {stamped: [], 'one-stamped': []};
    const parts = {};
    for (let i = 0; i < 3; i++) for (const m of modes) await modeFns[m]();
    for (let i = 0; i < reps; i++) {
      for (const m of modes) {
        await sleep(gapMs);
        const t0 = now();
        const span = await modeFns[m]();
        times[m].push(now() - t0);
        if (typeof span === 'number') spans[m].push(span);
        else if (span && typeof span === 'object') {
          parts[m] ??= {};
          for (const [k, v] of Object.entries(span)) (parts[m][k] ??= []).push(v);
        }
      }
    }
    await sleep(gapMs);
    const t0 = now();
    for (let i = 0; i < batch; i++) context.dispatch(graph, ins, outs);
    await context.readTensor(yt);
    const batchMs = (now() - t0) / batch;
    result.models[name] = {steps: stepCount, times, spans, parts, batchMs};
    graph.destroy(); xt.destroy(); yt.destroy();
  }
  qs.destroy(); resolved.destroy(); stampRead.destroy();
  context.destroy();
  return result;
"""


def _stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"


def format_table(result: dict[str, Any]) -> str:
    """Markdown: per model, each mode's median (min–max) round trip and, for the stamped modes,
    the GPU span; then back to back."""
    from tools.bench_page import adapter_line

    lines = []
    for name, m in result["models"].items():
        lines += [f"**{name}** ({m['steps']} steps; back to back {m['batchMs']:.3f} ms/inference)", "",
                  "| mode | round trip median (min–max) ms | GPU span median (min–max) ms |", "|---|---:|---:|"]
        for mode, xs in m["times"].items():
            span = m["spans"].get(mode)
            lines.append(f"| {mode} | {_stats(xs)} | {_stats(span) if span else ''} |")
        for mode, ps in m.get("parts", {}).items():
            lines.append(f"{mode} parts (median ms): " + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in ps.items()))
        lines.append("")
    clock = "cross-origin isolated" if result["crossOriginIsolated"] else "page clock 0.1 ms-grained (not isolated)"
    lines.append(f"adapter: {adapter_line(result['adapter'])}; {clock}")
    return "\n".join(lines)


def bench(models: list[str], reps: int, gap_ms: float, batch: int, modes: list[str], timeout_s: float) -> dict[str, Any]:
    """Run the page in a fresh headless browser (a new one when no adapter appears)."""
    from tools.bench_ort import prepare_model
    from tools.bench_page import page_function, run_in_harness

    for name in models:
        prepare_model(name)
    body = f"const modes = {modes!r};" + _BODY
    return run_in_harness(page_function("[models, reps, gapMs, batch]", body), [models, reps, gap_ms, batch],
                          timeout_s, query="?coi=1")


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bert-base,bert-encoder")
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES)}")
    parser.add_argument("--reps", type=int, default=40, help="timed runs per mode (default 40)")
    parser.add_argument("--gap-ms", type=float, default=5.0, help="idle ms before each timed run (default 5)")
    parser.add_argument("--batch", type=int, default=30, help="back-to-back dispatches (default 30)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole page run")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown modes: {', '.join(unknown)}")
    from tools.bench_page import report

    return report(lambda: bench(args.models.split(","), args.reps, args.gap_ms, args.batch, modes, args.timeout),
                  format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
