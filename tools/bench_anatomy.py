"""Where a model's latency goes: the GPU's own time (pass timestamps) against the page's round
trip, for the whole plan, for its first k steps, with and without the input upload, per kernel
variant; headless, printing a table.

For each model (a generated manifest under /models/<name>/) and each kernel variant (the
context's ``kernelOverrides`` slot: ``default`` is the adapter's choice, ``nosplit`` forces
``{splitK: 1}``, so no matrix product is split along K; ``noattention`` / ``attention``
(``{attention: false / true}``) leave matmul -> softmax -> matmul unfused or fuse it
(compile/attention.js; fused by default on hardware adapters); ``split64`` and ``split256``
split towards 64 or 256 (``split32``: 32, ``split120``: 120) workgroups instead of 128, which
moves the 4-way band with it (to 48-63 and 192-255 workgroups; see ops/matmul_choice.js
splitCount()); ``near1`` /
``near2`` / ``near3`` split the products of 96-127 workgroups 1 (not at all), 2 or 3 ways
instead of 4 (``kernelOverrides.nearSplit``); ``ceil`` splits the products of under 64
workgroups into the fewest ranges that reach 128 workgroups, past it (the rule before
2026-12-04), not the most that stay within it; ``wide``: every tiled product in 128x128 tiles
(``kernelOverrides.matmul``: ``tiled128``), split by the same rule;
``attention-RxPxK`` runs the fused attention step in that kernel configuration (R query rows a
workgroup, P invocations a row, K keys a tile; ops/attention.js); ``NAME~2`` runs a variant
once more, later in the page, so that the host's drift shows) the page:

- encodes the plan's first k steps (k in ``--prefixes``, and all) in one compute pass with the
  pass's beginning/end timestamps, submits, and maps the 16 timestamp bytes (nudged as
  readTensor is): round trip (page clock) and GPU span per isolated run, means over ``--reps``;
- the same for the whole plan after ``writeTensor`` of the model's input (the upload);
- ``--reps`` whole plans back to back, one query pair each: GPU span per run and GPU time from
  first begin to last end per run against the wall time per run;
- on a second, ordinary context: writeTensor + dispatch + readTensor and dispatch + readTensor
  round trips (what tools.bench_ort calls latency), and back to back;
- once: the profiling mode's per-step GPU times (one pass per step), the 10 slowest steps.

It also times a bare 600 KB ``writeBuffer`` + 16-byte map against the map alone.

Page-clock times are means (Chromium's performance.now() is coarsened to 0.1 ms without
cross-origin isolation; the mean of many runs is not). The browser is configured as the test
suite's (``. /root/gpu/env.sh`` on the GPU host).

Usage::

    python -m tools.bench_anatomy [--models efficientnet-lite0,mobilenetv2,bert-encoder]
                                  [--prefixes 1,2,4,8,16,32] [--reps 40] [--variants default,nosplit]
                                  [--out bench-results/anatomy.json] [--timeout SECONDS]

Exit status: 0 when every case ran, 2 when the page failed (no adapter, no timestamp-query).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path("bench-results/anatomy.json")
VARIANTS = {"default": None, "nosplit": {"splitK": 1}, "noattention": {"attention": False}, "attention": {"attention": True}, "split64": {"splitGroups": 64},
            "split256": {"splitGroups": 256, "splitMinK": 32}, "split32": {"splitGroups": 32},
            "split120": {"splitGroups": 120}, "near1": {"nearSplit": 1}, "near2": {"nearSplit": 2}, "near3": {"nearSplit": 3},
            "ceil": {"splitRound": "ceil"},
            "wide": {"matmul": "tiled128"}}
#: the fused attention step's kernel configurations (ops/attention.js chooseAttentionConfig):
#: ``attention-RxPxK`` is R query rows a workgroup, P invocations a row, tiles of K keys
VARIANTS.update({f"attention-{r}x{p}x{k}": {"attentionConfig": {"rows": r, "perRow": p, "keys": k}}
                 for r, p, k in [(16, 8, 32), (8, 16, 32), (16, 16, 32), (4, 32, 32), (8, 32, 32), (8, 16, 64), (4, 16, 32)]})

_BODY = """
  const {describeGraph, encodeSteps} = await import('/polyfill/inspect.js');
  const {addToBuilder} = await import('/harness/graph_json.js');
  const device = hooks.device;
  if (!device.features.has('timestamp-query')) throw new Error('no timestamp-query on this adapter');
  const plain = await navigator.ml.createContext({powerPreference: 'high-performance', deviceType: 'gpu'});
  const mean = (xs) => xs.reduce((a, v) => a + v, 0) / xs.length;
  const median = (xs) => { const t = [...xs].sort((a, b) => a - b); return t[Math.floor(t.length / 2)]; };
  const summary = (xs) => ({mean: mean(xs), median: median(xs), min: Math.min(...xs), max: Math.max(...xs)});
  const qs = device.createQuerySet({type: 'timestamp', count: 2 * reps});
  const resolve = device.createBuffer({size: 16 * reps, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC});
  const read = device.createBuffer({size: 16 * reps, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST});
  const readStamps = async (n) => {
    await hooks.wait(read.mapAsync(GPUMapMode.READ, 0, n * 16));
    const stamps = Array.from(new BigUint64Array(read.getMappedRange(0, n * 16)), Number);
    read.unmap();
    return stamps;
  };
  // bare upload: 600 KB writeBuffer + 16-byte copy + map, against the copy + map alone
  const scratch = device.createBuffer({size: 602112, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC});
  const bytes = new Float32Array(602112 / 4).fill(0.5);
  const upload = {withWrite: [], mapOnly: []};
  for (let i = 0; i < 5 + reps; i++) {
    for (const w of [true, false]) {
      const t0 = performance.now();
      if (w) device.queue.writeBuffer(scratch, 0, bytes);
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(scratch, 0, read, 0, 16);
      device.queue.submit([enc.finish()]);
      await hooks.wait(read.mapAsync(GPUMapMode.READ, 0, 16));
      read.unmap();
      if (i >= 5) upload[w ? 'withWrite' : 'mapOnly'].push(performance.now() - t0);
    }
  }
  scratch.destroy();
  const result = {adapter: adapterInfo, upload: {withWriteMs: mean(upload.withWrite), mapOnlyMs: mean(upload.mapOnly)}, models: {}};
  for (const name of models) {
    const manifest = await (await fetch(`/models/${name}/manifest.json`)).json();
    const weights = new Uint8Array(await (await fetch(`/models/${name}/${manifest.weights}`)).arrayBuffer());
    const [inName, inSpec] = Object.entries(manifest.inputs)[0];
    const outName = manifest.outputs[0];
    const inData = new Float32Array(count(inSpec.shape)).fill(0.5);
    const perVariant = {};
    for (const [variant, overrides] of Object.entries(variants)) {
      const built = [];
      for (const ctx of [context, plain]) {
        tune(ctx, overrides ?? {});
        const b = new MLGraphBuilder(ctx);
        const operands = addToBuilder(b, manifest, (n, spec) => weights.slice(spec.offset, spec.offset + spec.byteLength));
        const graph = await b.build({[outName]: operands.get(outName)});
        tune(ctx, Object.fromEntries(Object.keys(overrides ?? {}).map((k) => [k, undefined])));
        const xt = await ctx.createTensor({dataType: inSpec.dataType, shape: inSpec.shape, writable: true});
        ctx.writeTensor(xt, inData);
        const yt = await ctx.createTensor({dataType: 'float32', shape: operands.get(outName).shape, readable: true});
        ctx.dispatch(graph, {[inName]: xt}, {[outName]: yt});
        await ctx.readTensor(yt);
        built.push({graph, xt, yt});
      }
      const [{graph, xt, yt}, real] = built;
      const n = describeGraph(graph).steps.length;
      const encodeRun = (encoder, q, k) => {
        const pass = encoder.beginComputePass({timestampWrites: {querySet: qs, beginningOfPassWriteIndex: q, endOfPassWriteIndex: q + 1}});
        encodeSteps(graph, pass, k);
        pass.end();
      };
      const isolated = async (k, withUpload) => {
        const lat = [];
        const span = [];
        for (let i = 0; i < 5 + reps; i++) {
          const t0 = performance.now();
          if (withUpload) context.writeTensor(xt, inData);
          const encoder = device.createCommandEncoder();
          encodeRun(encoder, 0, k);
          encoder.resolveQuerySet(qs, 0, 2, resolve, 0);
          encoder.copyBufferToBuffer(resolve, 0, read, 0, 16);
          device.queue.submit([encoder.finish()]);
          const [t1, t2] = await readStamps(1);
          if (i >= 5) { lat.push(performance.now() - t0); span.push((t2 - t1) / 1e6); }
        }
        return {k, roundTripMs: mean(lat), spanMs: mean(span), roundTrip: summary(lat)};
      };
      const prefixRows = [];
      for (const k of [...prefixes.filter((p) => p < n), n]) prefixRows.push(await isolated(k, false));
      const withUpload = await isolated(n, true);
      let t0 = performance.now();
      for (let r = 0; r < reps; r++) {
        const encoder = device.createCommandEncoder();
        encodeRun(encoder, 2 * r, n);
        if (r === reps - 1) {
          encoder.resolveQuerySet(qs, 0, 2 * reps, resolve, 0);
          encoder.copyBufferToBuffer(resolve, 0, read, 0, 16 * reps);
        }
        device.queue.submit([encoder.finish()]);
      }
      const stamps = await readStamps(reps);
      const wall = (performance.now() - t0) / reps;
      const spans = [];
      for (let r = 0; r < reps; r++) spans.push((stamps[2 * r + 1] - stamps[2 * r]) / 1e6);
      const busy = {spanMs: mean(spans), gpuMsPerRun: (stamps[2 * reps - 1] - stamps[0]) / 1e6 / reps, wallMsPerRun: wall};
      // the ordinary context: what bench_ort times
      const realRun = {withUpload: [], noUpload: [], noNudge: []};
      for (let i = 0; i < 5 + reps; i++) {
        for (const mode of Object.keys(realRun)) {
          configureContext(plain, {fastReadback: mode !== 'noNudge'});
          const t = performance.now();
          if (mode === 'withUpload') plain.writeTensor(real.xt, inData);
          plain.dispatch(real.graph, {[inName]: real.xt}, {[outName]: real.yt});
          await plain.readTensor(real.yt);
          if (i >= 5) realRun[mode].push(performance.now() - t);
        }
      }
      configureContext(plain, {fastReadback: true});
      // the same with the plan split into several submits (compile/plan.js submitSteps), interleaved
      const schedules = {one: undefined, s8: 8, s16: 16, doubling: 'doubling'};
      const bySchedule = Object.fromEntries(Object.keys(schedules).map((k) => [k, []]));
      for (let i = 0; i < 5 + reps; i++) {
        for (const [k, sched] of Object.entries(schedules)) {
          tune(plain, {submitSteps: sched});
          const t = performance.now();
          plain.dispatch(real.graph, {[inName]: real.xt}, {[outName]: real.yt});
          await plain.readTensor(real.yt);
          if (i >= 5) bySchedule[k].push(performance.now() - t);
        }
      }
      tune(plain, {submitSteps: undefined});
      t0 = performance.now();
      for (let r = 0; r < reps; r++) plain.dispatch(real.graph, {[inName]: real.xt}, {[outName]: real.yt});
      await plain.readTensor(real.yt);
      const realBatch = (performance.now() - t0) / reps;
      // the profiling mode's per-step times
      await profileSteps(graph);
      for (let i = 0; i < 5; i++) { context.dispatch(graph, {[inName]: xt}, {[outName]: yt}); await context.readTensor(yt); }
      const steps = (await profileSteps(graph)).sort((a, b) => b.ms - a.ms).slice(0, 10);
      perVariant[variant] = {steps: n, prefixes: prefixRows, withUpload, busy,
        real: {withUploadMs: mean(realRun.withUpload), noUploadMs: mean(realRun.noUpload), batchMsPerRun: realBatch,
          withUpload: summary(realRun.withUpload), noUpload: summary(realRun.noUpload), noNudge: summary(realRun.noNudge),
          schedules: Object.fromEntries(Object.entries(bySchedule).map(([k, xs]) => [k, summary(xs)]))},
        top: steps.map((s) => ({index: s.index, kernel: s.kernel, ops: s.operators.map((o) => o.type), ms: s.ms}))};
      for (const x of built) { x.graph.destroy(); x.xt.destroy(); x.yt.destroy(); }
    }
    result.models[name] = perVariant;
  }
  qs.destroy(); resolve.destroy(); read.destroy();
  plain.destroy();
  context.destroy();
  return result;
"""


def format_table(result: dict[str, Any]) -> str:
    """Markdown: per model and variant, the prefix rows, the upload row, back to back, the real path."""
    from tools.bench_page import adapter_line

    up = result["upload"]
    lines = [f"bare 600 KB writeBuffer + map: {up['withWriteMs']:.3f} ms; map alone {up['mapOnlyMs']:.3f} ms", ""]
    for name, variants in result["models"].items():
        for variant, v in variants.items():
            lines.append(f"**{name}, {variant}** ({v['steps']} steps)")
            lines.append("")
            lines.append("| first k steps | round trip mean ms | median (min–max) | GPU span ms | gap (mean) ms |")
            lines.append("|---:|---:|---:|---:|---:|")
            for r in v["prefixes"] + [dict(v["withUpload"], k="all + writeTensor")]:
                t = r["roundTrip"]
                lines.append(f"| {r['k']} | {r['roundTripMs']:.3f} | {t['median']:.2f} ({t['min']:.2f}–{t['max']:.2f}) | "
                             f"{r['spanMs']:.3f} | {r['roundTripMs'] - r['spanMs']:.3f} |")
            b, r = v["busy"], v["real"]
            lines.append("")
            lines.append(f"back to back: span {b['spanMs']:.3f} ms, GPU {b['gpuMsPerRun']:.3f} ms / wall {b['wallMsPerRun']:.3f} ms per run; "
                         f"ordinary context: write+dispatch+read {r['withUploadMs']:.3f} ms (median {r['withUpload']['median']:.2f}, min {r['withUpload']['min']:.2f}), "
                         f"dispatch+read {r['noUploadMs']:.3f} ms (median {r['noUpload']['median']:.2f}, min {r['noUpload']['min']:.2f}; "
                         f"without nudges median {r['noNudge']['median']:.2f}, min {r['noNudge']['min']:.2f}), "
                         f"back to back {r['batchMsPerRun']:.3f} ms/run")
            lines.append("dispatch+read by submit schedule (median, min ms): " + ", ".join(
                f"{k} {t['median']:.2f}, {t['min']:.2f}" for k, t in r["schedules"].items()))
            lines.append("top steps (profiling mode): " + "; ".join(
                f"#{s['index']} {s['kernel']} [{', '.join(s['ops'])}] {s['ms']:.4f}" for s in v["top"]))
            lines.append("")
    lines.append("adapter: " + adapter_line(result["adapter"]))
    return "\n".join(lines)


def bench(models: list[str], prefixes: list[int], reps: int, variants: list[str], timeout_s: float) -> dict[str, Any]:
    """Run the page in a fresh headless browser (a new one when no adapter appears)."""
    from tools.bench_page import page_function, run_in_harness

    chosen = {v: VARIANTS[v.split("~", 1)[0]] for v in variants}
    return run_in_harness(page_function("[models, prefixes, reps, variants]", _BODY, profile=True),
                          [models, prefixes, reps, chosen], timeout_s)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_anatomy", description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="efficientnet-lite0,mobilenetv2,bert-encoder")
    parser.add_argument("--prefixes", default="1,2,4,8,16,32")
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--variants", default="default,nosplit",
                        help=f"of {', '.join(VARIANTS)}; NAME~2 runs NAME again (to see the host drift)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=400.0, help="seconds for the whole page run")
    args = parser.parse_args(argv)
    from tools.bench_page import report

    return report(lambda: bench(args.models.split(","), [int(x) for x in args.prefixes.split(",")], args.reps,
                                args.variants.split(","), args.timeout), format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
