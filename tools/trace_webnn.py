"""What a WebNN client calls per inference, and where its latency goes: our MLGraphBuilder code
against ONNX Runtime Web's WebNN EP on the same model, headless, in one browser run.

Two parts, on one page (``/harness/``, the polyfill installed):

1. **Call sequence**: one steady-state run (after ``--warmup``) of each runtime with every method of
   ML / MLContext / MLTensor / MLGraphBuilder / MLGraph and the WebGPU calls the polyfill makes
   underneath (GPUDevice.createBuffer, GPUQueue.submit / writeBuffer / onSubmittedWorkDone,
   GPUBuffer.mapAsync, ...) logged by ``static/demos/bench-ort/trace.js``: time from the run's
   start, nesting (a WebGPU call inside the WebNN call that made it), time inside the call and,
   for promises, to settlement.
2. **Latency by call pattern**: ``--runs`` round trips (upload + dispatch + read back, as
   ``tools.bench_ort`` times latency) of each pattern, alternating run by run:
   ``builder`` (writeTensor, dispatch and readTensor in one synchronous run, as runtimes.js does),
   ``builder-awaits`` (the same calls with a few ``await``s between them, as ORT's WebNN EP makes
   them: Blink then sends each call to the GPU process in a batch of its own) and ``webnn-ep``
   (ORT's session.run + getData), each with the polyfill's held writes off and on (the context
   slot ``deferWrites``, static/polyfill/gpu/pending_writes.js): ``/write-now`` and ``/held``.
   Per pattern: median (min–max) ms, and the medians of the phases: start -> writeTensor,
   writeTensor -> dispatch, dispatch -> readTensor, readTensor's settling, after it; and the
   completion nudges per run (gpu/completion.js).

Usage::

    python -m tools.trace_webnn [--model bert-encoder] [--runs 20] [--warmup 3] [--patterns ...]
                                [--held auto|on|off] [--out bench-results/trace-webnn.json]
                                [--timeout SECONDS] [--no-generate]

Models: those of ``tools.bench_ort`` (generated when missing). The browser is configured as the
test suite's (``. /root/gpu/env.sh`` on the GPU host). Exit status 0, or 2 when the page failed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_OUT = Path("bench-results/trace-webnn.json")
PATTERNS = ("builder/write-now", "builder/held", "builder-awaits/write-now", "builder-awaits/held",
            "webnn-ep/write-now", "webnn-ep/held")
PHASES = ("toWrite", "writeToDispatch", "dispatchToRead", "readSettle", "afterRead")

_SCRIPT = r"""
async ({model, runs, warmup, patterns, held}) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const {installTracer} = await import('/demos/bench-ort/trace.js');
  const {describeGraph, queueState} = await import('/polyfill/inspect.js');
  const {configureContext, contextInfo} = await import('/polyfill/options.js');
  const tune = (context, tuning) => configureContext(context, {tuning});
  const contexts = [];
  const create = ML.prototype.createContext;
  ML.prototype.createContext = async function (...args) {
    const context = await create.apply(this, args);
    contexts.push(context);
    return context;
  };
  const {setUpOrt, setUpBuilder} = await import('/demos/bench-ort/runtimes.js');
  const base = `/models/${model}/`;
  const get = (file) => fetch(base + file).then((r) => {
    if (!r.ok) throw new Error(`${base}${file}: HTTP ${r.status}`);
    return file.endsWith('.json') ? r.json() : r.arrayBuffer();
  });
  const [manifest, weights, onnx, inputBytes] = await Promise.all(['manifest.json', 'weights.bin', 'model.onnx', 'input.bin'].map(get));
  const input = new Float32Array(inputBytes);
  const builder = await setUpBuilder(manifest, weights);
  const ort = await setUpOrt('webnn-ep', manifest, weights, new Uint8Array(onnx));
  ML.prototype.createContext = create;
  const ortContext = contexts.find((c) => c !== builder.context);
  const info = contextInfo(builder.context).adapterInfo ?? {};
  const adapter = {vendor: info.vendor, architecture: info.architecture, device: info.device,
                   description: info.description, isFallbackAdapter: info.isFallbackAdapter};
  // our own tensors on the builder's context, for the patterns
  const g = describeGraph(builder.graph);
  const [[inName, inDesc]] = Object.entries(g.inputs);
  const [[outName, outDesc]] = Object.entries(g.outputs);
  const ctx = builder.context;
  const xt = await ctx.createTensor({...inDesc, writable: true});
  const yt = await ctx.createTensor({...outDesc, readable: true});
  const ticks = async () => { for (let i = 0; i < 3; i++) await Promise.resolve(); };
  const runners = {
    builder: async () => {
      ctx.writeTensor(xt, input);
      ctx.dispatch(builder.graph, {[inName]: xt}, {[outName]: yt});
      await ctx.readTensor(yt);
    },
    'builder-awaits': async () => {
      ctx.writeTensor(xt, input);
      await ticks();
      ctx.dispatch(builder.graph, {[inName]: xt}, {[outName]: yt});
      await ticks();
      await ctx.readTensor(yt);
    },
    'webnn-ep': () => ort.run(input),
  };
  const contextOf = {builder: ctx, 'builder-awaits': ctx, 'webnn-ep': ortContext};
  for (let i = 0; i < warmup; i++) { await builder.run(input); await ort.run(input); }

  // 1. the call sequence of one run of each runtime
  let tracer = installTracer({gpu: true});
  const calls = {};
  for (const [name, r] of [['builder', builder], ['webnn-ep', ort]]) {
    tune(contextOf[name], {deferWrites: held ?? undefined});
    await r.run(input);
    await sleep(20);
    tracer.take();
    const t0 = performance.now();
    await r.run(input);
    const ms = performance.now() - t0;
    await sleep(20);
    calls[name] = {ms, deferWrites: contextInfo(contextOf[name]).tuning.deferWrites ?? queueState(contextOf[name]).active,
                   entries: tracer.take().map((e) => ({...e, t: e.t - t0}))};
    tune(contextOf[name], {deferWrites: undefined});
  }
  tracer.uninstall();

  // 2. latency by pattern, alternating
  tracer = installTracer({gpu: false});
  const results = Object.fromEntries(patterns.map((p) => [p, {times: [], nudges: [], phases: {toWrite: [], writeToDispatch: [], dispatchToRead: [], readSettle: [], afterRead: []}}]));
  for (let i = 0; i < warmup + runs; i++) {
    for (const pattern of patterns) {
      const [runner, mode] = pattern.split('/');
      const nudgesSent = () => queueState(contextOf[runner]).nudges;
      tune(contextOf[runner], {deferWrites: mode === 'held'});
      const nudges = nudgesSent();
      tracer.take();
      const t0 = performance.now();
      await runners[runner]();
      const t1 = performance.now();
      const e = tracer.take();
      tune(contextOf[runner], {deferWrites: undefined});
      if (i < warmup) continue;
      const r = results[pattern];
      const find = (n) => e.find((x) => x.name === n);
      const w = find('MLContext.writeTensor'), d = find('MLContext.dispatch'), rd = find('MLContext.readTensor');
      r.times.push(t1 - t0);
      r.nudges.push(nudgesSent() - nudges);
      if (w && d && rd) {
        r.phases.toWrite.push(w.t - t0);
        r.phases.writeToDispatch.push(d.t - w.t);
        r.phases.dispatchToRead.push(rd.t - d.t);
        r.phases.readSettle.push(rd.settleMs ?? NaN);
        r.phases.afterRead.push(t1 - (rd.t + (rd.settleMs ?? 0)));
      }
    }
  }
  tracer.uninstall();
  xt.destroy(); yt.destroy();
  builder.release();
  await ort.release();
  return {adapter, model, runs, warmup, calls, patterns: results,
          hardware: (ortContext && queueState(ortContext)?.hardware) ?? null};
}
"""


def median(values: list[float]) -> float:
    """The median of ``values`` (NaN when empty)."""
    return statistics.median(values) if values else float("nan")


def format_report(run: dict[str, Any]) -> str:
    """The call sequences (one line per call, nested calls indented) and the pattern table."""
    from tools.bench_page import adapter_line

    lines = [f"model {run['model']}; adapter: {adapter_line(run.get('adapter') or {})}; "
             f"Chromium {run.get('browser', '?')}; {run['runs']} runs after {run['warmup']} warm-up", ""]
    for name, c in run["calls"].items():
        lines.append(f"**{name}**: one run, {c['ms']:.2f} ms (held writes {'on' if c['deferWrites'] else 'off'})")
        lines.append("```")
        for e in c["entries"]:
            if e.get("name") == "GPUDevice.createBindGroup":
                continue
            settle = f", settles {e['settleMs']:.2f}" if e.get("settleMs") is not None else ""
            lines.append(f"{e['t']:8.2f} ms {'  ' * e['depth']}{e['name']}({e['args'][:110]}) "
                         f"[{e['syncMs']:.2f} ms{settle}]" + (f" -> {e['result'][:50]}" if e.get("result") else ""))
        lines.append("```")
        lines.append("")
    lines += ["| pattern | latency median (min–max) ms | start→writeTensor | writeTensor→dispatch | "
              "dispatch→readTensor | readTensor settles | after | nudges/run |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in run["patterns"].items():
        t = r["times"]
        phases = " | ".join(f"{median(r['phases'][p]):.2f}" for p in PHASES)
        lines.append(f"| {name} | {median(t):.2f} ({min(t):.2f}–{max(t):.2f}) | {phases} | {median(r['nudges']):.0f} |")
    return "\n".join(lines)


def trace(model: str, runs: int, warmup: int, patterns: list[str], timeout_s: float,
          generate: bool = True, held: bool | None = None) -> dict[str, Any]:
    """Generate the model when missing or stale (unless ``generate`` is false: the served files as
    they are), run the page in a fresh headless browser, return its result. ``held``: the held
    writes for the call sequences (None: the context's default, on for hardware adapters)."""
    from tools.bench_ort import prepare_model
    from tools.bench_page import run_in_harness

    if generate:
        prepare_model(model)
    return run_in_harness(_SCRIPT, {"model": model, "runs": runs, "warmup": warmup, "patterns": patterns,
                                    "held": held}, timeout_s)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    from tools.bench_ort import MODELS
    from tools.bench_page import report

    parser = argparse.ArgumentParser(prog="python -m tools.trace_webnn", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bert-encoder", choices=MODELS)
    parser.add_argument("--runs", type=int, default=20, help="timed round trips per pattern (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--patterns", default=",".join(PATTERNS), help=f"comma list of {', '.join(PATTERNS)}")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole page run")
    parser.add_argument("--held", choices=("auto", "on", "off"), default="auto",
                        help="held writes in the call sequences (default auto: on for hardware adapters)")
    parser.add_argument("--no-generate", action="store_true",
                        help="use the model files under server/models/generated/ as they are")
    args = parser.parse_args(argv)
    patterns = [p for p in args.patterns.split(",") if p]
    if not patterns or any(p not in PATTERNS for p in patterns):
        parser.error(f"--patterns takes a comma list of {', '.join(PATTERNS)}")
    return report(lambda: trace(args.model, args.runs, args.warmup, patterns, args.timeout, not args.no_generate,
                                {"auto": None, "on": True, "off": False}[args.held]),
                  format_report, args.out)


if __name__ == "__main__":
    sys.exit(main())
