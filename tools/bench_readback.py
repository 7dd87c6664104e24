"""Time readTensor after short chains of tiny dispatches with each queue-nudge mode of
static/polyfill/gpu/completion.js, headless, and print a table.

For each chain length N (a graph of N dependent 1-element `relu`s: N dispatches in one pass) the
page times dispatch + readTensor round trips with the context's completion slot set to ``off``
(plain waiting, as {polyfill: {fastReadback: false}}), ``submit`` (queue.submit([]) per task, the
default) and ``write`` (a 16-byte writeBuffer per task), the modes interleaved run by run after
warm-up. On software adapters the loop never runs unless ``--force`` pretends a hardware one.

The browser is configured as the test suite's (``$WEBNN_CHROMIUM``, ``$WEBNN_CHROMIUM_ARGS``,
``$WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS``; on the GPU host ``. /root/gpu/env.sh`` sets them).

Usage::

    python -m tools.bench_readback [--chains 1,25,100] [--reps N] [--force] [--model]
                                   [--out bench-results/readback.json] [--timeout SECONDS]

Exit status: 0 when every case ran, 2 when the page failed (no adapter, error, timeout).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path("bench-results/readback.json")
MODES = ["off", "submit", "write"]

#: The page function's body after tools.bench_page.PAGE_SETUP_JS; its parameters are [chains, reps, force].
_BENCH_BODY = """
  const nudgesSent = () => queueState(context).nudges;
  const hardware = queueState(context).hardware;
  if (force) tune(context, {nudgeQueue: true});
  const setMode = (mode) => configureContext(context, {fastReadback: mode !== 'off', tuning: mode !== 'off' ? {nudge: mode} : {}});
  const rows = [];
  for (const n of chains) {
    const b = new MLGraphBuilder(context);
    let y = b.input('x', {dataType: 'float32', shape: [1]});
    for (let i = 0; i < n; i++) y = b.relu(y);
    const graph = await b.build({y});
    const xt = await context.createTensor({dataType: 'float32', shape: [1], writable: true});
    const yt = await context.createTensor({dataType: 'float32', shape: [1], readable: true});
    context.writeTensor(xt, new Float32Array([0.5]));
    const times = {off: [], submit: [], write: []};
    const nudges = {off: 0, submit: 0, write: 0};
    for (let i = 0; i < 5; i++) for (const mode of modes) { setMode(mode); context.dispatch(graph, {x: xt}, {y: yt}); await context.readTensor(yt); }
    for (let i = 0; i < reps; i++) {
      for (const mode of modes) {
        setMode(mode);
        const before = nudgesSent();
        const t0 = performance.now();
        context.dispatch(graph, {x: xt}, {y: yt});
        await context.readTensor(yt);
        times[mode].push(performance.now() - t0);
        nudges[mode] += nudgesSent() - before;
      }
    }
    rows.push({n, times, nudges});
    graph.destroy(); xt.destroy(); yt.destroy();
  }
  let model = null;
  if (withModel) {
    // EfficientNet-Lite0 from the generated manifest: the same modes, plus how long dispatch()
    // itself takes on the CPU (encode + submit) and the GPU work per inference (reps dispatches,
    // one read, divided by reps), so a latency gap can be told apart from CPU time.
    const {addToBuilder} = await import('/harness/graph_json.js');
    const manifest = await (await fetch('/models/efficientnet-lite0/manifest.json')).json();
    const weights = new Uint8Array(await (await fetch('/models/efficientnet-lite0/' + manifest.weights)).arrayBuffer());
    const b = new MLGraphBuilder(context);
    const operands = addToBuilder(b, manifest, (name, spec) => weights.slice(spec.offset, spec.offset + spec.byteLength));
    const graph = await b.build(Object.fromEntries(manifest.outputs.map((n) => [n, operands.get(n)])));
    const [inName, inSpec] = Object.entries(manifest.inputs)[0];
    const xt = await context.createTensor({dataType: inSpec.dataType, shape: inSpec.shape, writable: true});
    context.writeTensor(xt, new Float32Array(inSpec.shape.reduce((a, v) => a * v, 1)).fill(0.5));
    const outs = {};
    for (const n of manifest.outputs) outs[n] = await context.createTensor({dataType: 'float32', shape: operands.get(n).shape, readable: true});
    const out = outs[manifest.outputs[0]];
    const times = {off: [], submit: [], write: []};
    const cpu = {off: [], submit: [], write: []};
    const nudges = {off: 0, submit: 0, write: 0};
    for (let i = 0; i < 2; i++) for (const mode of modes) { setMode(mode); context.dispatch(graph, {[inName]: xt}, outs); await context.readTensor(out); }
    for (let i = 0; i < reps; i++) {
      for (const mode of modes) {
        setMode(mode);
        const before = nudgesSent();
        const t0 = performance.now();
        context.dispatch(graph, {[inName]: xt}, outs);
        cpu[mode].push(performance.now() - t0);
        await context.readTensor(out);
        times[mode].push(performance.now() - t0);
        nudges[mode] += nudgesSent() - before;
      }
    }
    // The same with the plan split into command buffers of n steps (context slot submitSteps).
    setMode('submit');
    const chunked = {};
    for (const n of submitSteps) {
      tune(context, {submitSteps: n});
      for (let i = 0; i < 2; i++) { context.dispatch(graph, {[inName]: xt}, outs); await context.readTensor(out); }
      chunked[n] = [];
      for (let i = 0; i < reps; i++) {
        const t0 = performance.now();
        context.dispatch(graph, {[inName]: xt}, outs);
        await context.readTensor(out);
        chunked[n].push(performance.now() - t0);
      }
    }
    tune(context, {submitSteps: undefined});
    // The submit nudge at least `ms` apart (completion.intervalMs), interleaved run by run.
    const spaced = {};
    const defaultInterval = queueState(context).intervalMs;
    for (const ms of intervals) spaced[ms] = [];
    for (let i = 0; i < 2; i++) for (const ms of intervals) { tune(context, {nudgeIntervalMs: ms}); context.dispatch(graph, {[inName]: xt}, outs); await context.readTensor(out); }
    for (let i = 0; i < reps; i++) {
      for (const ms of intervals) {
        tune(context, {nudgeIntervalMs: ms});
        const t0 = performance.now();
        context.dispatch(graph, {[inName]: xt}, outs);
        await context.readTensor(out);
        spaced[ms].push(performance.now() - t0);
      }
    }
    tune(context, {nudgeIntervalMs: undefined});
    const batch = reps;
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) context.dispatch(graph, {[inName]: xt}, outs);
    await context.readTensor(out);
    model = {times, cpu, nudges, chunked, spaced, gpuWorkMs: (performance.now() - t0) / batch};
    graph.destroy();
  }
  context.destroy();
  return {adapter: adapterInfo, hardware, forced: force, rows, model};
"""


def format_table(result: dict[str, Any]) -> str:
    """Markdown table: per chain length, median (min-max) ms and nudges per read for each mode."""
    from tools.bench_page import adapter_line

    lines = ["| dispatches | " + " | ".join(f"{m} median (min–max) ms" for m in MODES) + " | nudges/read submit, write |",
             "|---:|" + "---:|" * (len(MODES) + 1)]
    for r in result["rows"]:
        cells = [f"{statistics.median(r['times'][m]):.3f} ({min(r['times'][m]):.3f}–{max(r['times'][m]):.3f})" for m in MODES]
        reps = len(r["times"]["off"])
        lines.append(f"| {r['n']} | " + " | ".join(cells)
                     + f" | {r['nudges']['submit'] / reps:.1f}, {r['nudges']['write'] / reps:.1f} |")
    m = result.get("model")
    if m:
        lines.append("")
        lines.append("EfficientNet-Lite0 (dispatch + readTensor) | " + " | ".join(
            f"{mode}: {statistics.median(m['times'][mode]):.3f} ms (dispatch() {statistics.median(m['cpu'][mode]):.3f} ms CPU)"
            for mode in MODES) + f" | GPU work {m['gpuWorkMs']:.3f} ms/inference")
        for n, times in m.get("chunked", {}).items():
            lines.append(f"EfficientNet-Lite0, submit nudge, one command buffer per {n} steps: "
                         f"{statistics.median(times):.3f} ms ({min(times):.3f}–{max(times):.3f})")
        for ms, times in m.get("spaced", {}).items():
            lines.append(f"EfficientNet-Lite0, submit nudges at least {ms} ms apart: "
                         f"{statistics.median(times):.3f} ms ({min(times):.3f}–{max(times):.3f})")
    lines.append("")
    note = " (software adapter, loop forced on)" if result["forced"] and not result["hardware"] else ""
    lines.append("adapter: " + adapter_line(result["adapter"]) + note)
    return "\n".join(lines)


def bench(chains: list[int], reps: int, force: bool, timeout_s: float, launches: int = 3,
          model: bool = False, submit_steps: tuple[int, ...] = (),
          intervals: tuple[float, ...] = ()) -> dict[str, Any]:
    """Run the benchmark page in a fresh headless browser (a new one when no adapter appears)."""
    from tools.bench_page import page_function, run_in_harness

    body = f"const modes = {MODES!r}; const submitSteps = {list(submit_steps)!r}; const intervals = {list(intervals)!r};" + _BENCH_BODY
    return run_in_harness(page_function("[chains, reps, force, withModel]", body), [chains, reps, force, model],
                          timeout_s, launches)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_readback", description=__doc__.splitlines()[0])
    parser.add_argument("--chains", default="1,25,100", help="dispatches per graph, comma-separated (default 1,25,100)")
    parser.add_argument("--reps", type=int, default=50, help="timed round trips per mode and chain (default 50)")
    parser.add_argument("--force", action="store_true", help="run the loop even on a software adapter")
    parser.add_argument("--model", action="store_true",
                        help="also time EfficientNet-Lite0 (make setup's generated manifest) in each mode")
    parser.add_argument("--submit-steps", default="",
                        help="with --model: also time command buffers of these many steps each, comma-separated")
    parser.add_argument("--intervals", default="",
                        help="with --model: also time the submit nudge spaced at least these many ms apart, comma-separated")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole page run")
    args = parser.parse_args(argv)
    from tools.bench_page import report

    chains = [int(x) for x in args.chains.split(",")]
    return report(lambda: bench(chains, args.reps, args.force, args.timeout, model=args.model,
                                 submit_steps=tuple(int(x) for x in args.submit_steps.split(",") if x),
                                 intervals=tuple(float(x) for x in args.intervals.split(",") if x)),
                  format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
