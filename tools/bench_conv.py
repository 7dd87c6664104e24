"""Time conv2d kernels, one graph per layer, headless, and print a table.

The layers are EfficientNet-Lite0's 49 convolutions (shapes read from the converted model's
manifest when ``server/models/generated/efficientnet-lite0/manifest.json`` exists) plus a
1x32x112x112 3x3 convolution with 32 filters. Each layer is built once per pointwise kernel
(``auto``: the default choice; ``tiled`` in workgroup memory, also as ``tiled-nosplit``, never
split along K (ops/matmul_kernels.js); ``blocked`` in registers; other layers have one kernel) and
timed two ways after warm-up: *latency*, the median of dispatch + readTensor round trips, and
*throughput*, ``--batch`` dispatches then one readTensor, divided by ``--batch``. With
``--model`` the whole EfficientNet-Lite0 graph (real weights) is timed the same way.

The browser is configured as the test suite's (``$WEBNN_CHROMIUM``, ``$WEBNN_CHROMIUM_ARGS``,
``$WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS``; on the GPU host ``. /root/gpu/env.sh`` sets them).

Usage::

    python -m tools.bench_conv [--reps N] [--batch N] [--model] [--only NAME,...]
                               [--out bench-results/conv.json] [--timeout SECONDS] [--profile]

``--profile`` runs in the polyfill's profiling mode (one timestamped pass per step, so the times
include that cost) and prints the 10 slowest GPU steps over the layers, and of the model.

Exit status: 0 when every layer ran, 2 when the page failed (no adapter, error, timeout).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "server" / "models" / "generated" / "efficientnet-lite0" / "manifest.json"
DEFAULT_OUT = Path("bench-results/conv.json")
EXTRA_LAYERS = [{"name": "conv3x3-32x112x112-32", "x": [1, 32, 112, 112], "w": [32, 32, 3, 3],
                 "options": {"padding": [1, 1, 1, 1]}}]

#: The page function's body after tools.bench_page.PAGE_SETUP_JS; its parameters are [layers, reps, batch, model].
_BENCH_BODY = """
  // pointwise variants: the default choice, each matrix kernel forced, tiled also never split
  const POINTWISE = {auto: undefined, blocked: {pointwise: 'blocked'}, tiled: {pointwise: 'tiled'},
                     'tiled-nosplit': {pointwise: 'tiled', splitK: 1}};
  const {addToBuilder} = await import('/harness/graph_json.js');
  async function time(graph, inputs, outputs, out) {
    const {latency, batchMs} = await timeDispatches(graph, inputs, outputs, out, reps, batch);
    return {latency, throughputMs: batchMs / batch};
  }
  const rows = [];
  for (const layer of layers) {
    const pointwise = layer.w[2] === 1 && layer.w[3] === 1 && !(layer.options.strides ?? [1, 1]).some((s) => s !== 1);
    for (const kernel of pointwise ? Object.keys(POINTWISE) : ['default']) {
      tune(context, {pointwise: undefined, matmul: undefined, ...(pointwise ? POINTWISE[kernel] : {})});
      const b = new MLGraphBuilder(context);
      const x = b.input('x', {dataType: 'float32', shape: layer.x});
      const w = b.constant({dataType: 'float32', shape: layer.w}, new Float32Array(count(layer.w)).fill(0.01));
      const bias = b.constant({dataType: 'float32', shape: [layer.w[0]]}, new Float32Array(layer.w[0]));
      const y = b.conv2d(x, w, {...layer.options, bias});
      const graph = await b.build({y});
      const xt = await context.createTensor({dataType: 'float32', shape: layer.x, writable: true});
      const yt = await context.createTensor({dataType: 'float32', shape: y.shape, readable: true});
      context.writeTensor(xt, new Float32Array(count(layer.x)).fill(1));
      const t = await time(graph, {x: xt}, {y: yt}, yt);
      rows.push({name: layer.name, kernel, x: layer.x, w: layer.w, options: layer.options,
                 macs: count(y.shape) * layer.w[1] * layer.w[2] * layer.w[3], ...t, steps: await profileSteps(graph)});
      graph.destroy(); xt.destroy(); yt.destroy();
    }
  }
  tune(context, {pointwise: undefined, matmul: undefined});
  let modelRun = null;
  if (model) {
    const manifest = await (await fetch('/models/efficientnet-lite0/manifest.json')).json();
    const weights = new Uint8Array(await (await fetch('/models/efficientnet-lite0/' + manifest.weights)).arrayBuffer());
    const b = new MLGraphBuilder(context);
    // In profiling mode each operator is labelled with its output's name, so steps name their layer.
    const described = !profiling ? manifest : {...manifest, operators: manifest.operators.map((op) => (
      {...op, options: {...(op.options ?? {}), label: String(Array.isArray(op.outputs) ? op.outputs[0] : op.outputs)}}))};
    const operands = addToBuilder(b, described, (name, spec) => weights.slice(spec.offset, spec.offset + spec.byteLength));
    const t0 = performance.now();
    const graph = await b.build(Object.fromEntries(manifest.outputs.map((n) => [n, operands.get(n)])));
    const buildMs = performance.now() - t0;
    const [inName, inSpec] = Object.entries(manifest.inputs)[0];
    const xt = await context.createTensor({dataType: inSpec.dataType, shape: inSpec.shape, writable: true});
    context.writeTensor(xt, new Float32Array(count(inSpec.shape)).fill(0.5));
    const outs = {};
    for (const n of manifest.outputs) outs[n] = await context.createTensor({dataType: 'float32', shape: operands.get(n).shape, readable: true});
    const t = await time(graph, {[inName]: xt}, outs, outs[manifest.outputs[0]]);
    modelRun = {buildMs, ...t, steps: await profileSteps(graph)};
  }
  context.destroy();
  return {adapter: adapterInfo, rows, model: modelRun};
"""


def layers_from_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    """EfficientNet-Lite0's conv2d layers as {name, x, w, options} (input shapes inferred in NCHW)."""
    if not path.is_file():
        return []
    manifest = json.loads(path.read_text())
    shapes = {name: spec["shape"] for name, spec in manifest["inputs"].items()}
    layers = []
    for op in manifest["operators"]:
        args = [a["operand"] for a in op["args"] if isinstance(a, dict) and "operand" in a]
        x = shapes.get(args[0]) if args else None
        if op["op"] == "conv2d":
            w = manifest["constants"][args[1]]["shape"]
            options = {k: v for k, v in op.get("options", {}).items() if k != "bias"}
            pads, strides = options.get("padding", [0, 0, 0, 0]), options.get("strides", [1, 1])
            out = [x[0], w[0], (x[2] + pads[0] + pads[1] - w[2]) // strides[0] + 1,
                   (x[3] + pads[2] + pads[3] - w[3]) // strides[1] + 1]
            layers.append({"name": op["outputs"], "x": x, "w": w, "options": options})
            shapes[op["outputs"]] = out
        elif x is not None and isinstance(op["outputs"], str):
            shapes[op["outputs"]] = x  # clamp/add keep the shape; later ops are not convs
    return layers


def format_table(result: dict[str, Any]) -> str:
    """Markdown table: one row per layer and kernel, medians in milliseconds."""
    from tools.bench_page import adapter_line

    lines = ["| layer | kernel | input | filter | MMAC | latency median ms | throughput ms/dispatch | GMAC/s |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    rows_end = len(lines) + len(result["rows"])
    for r in result["rows"]:
        median = statistics.median(r["latency"])
        lines.append(f"| {r['name']} | {r['kernel']} | {'x'.join(map(str, r['x']))} | {'x'.join(map(str, r['w']))} "
                     f"| {r['macs'] / 1e6:.1f} | {median:.3f} | {r['throughputMs']:.3f} "
                     f"| {r['macs'] / r['throughputMs'] / 1e6:.1f} |")
    lines.insert(rows_end, "")
    for kernel in ("auto", "blocked", "tiled", "tiled-nosplit"):
        total = sum(r["throughputMs"] for r in result["rows"] if r["kernel"] in (kernel, "default"))
        lines.append(f"sum of throughput times with pointwise={kernel}: {total:.2f} ms")
    if result.get("model"):
        m = result["model"]
        lines.append(f"EfficientNet-Lite0 whole graph: latency median {statistics.median(m['latency']):.3f} ms, "
                     f"throughput {m['throughputMs']:.3f} ms/inference, build {m['buildMs']:.0f} ms")
    lines.append("adapter: " + adapter_line(result["adapter"]))
    from tools.bench_page import top_steps_table

    if any(r.get("steps") for r in result["rows"]):
        lines += ["", "layers: " + top_steps_table([(f"{r['name']} {r['kernel']}", r["steps"]) for r in result["rows"]])]
    if result.get("model") and result["model"].get("steps"):
        lines += ["", "EfficientNet-Lite0: " + top_steps_table([("efficientnet-lite0", result["model"]["steps"])])]
    return "\n".join(lines)


def bench(layers, reps: int, batch: int, model: bool, timeout_s: float, launches: int = 3,
          profile: bool = False) -> dict[str, Any]:
    """Run the benchmark page in a fresh headless browser (a new one when no adapter appears);
    ``profile``: in profiling mode, each row (and the model) then has ``steps``."""
    from tools.bench_page import page_function, run_in_harness

    return run_in_harness(page_function("[layers, reps, batch, model]", _BENCH_BODY, profile), [layers, reps, batch, model],
                          timeout_s, launches)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_conv", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="timed round trips per layer (default 20)")
    parser.add_argument("--batch", type=int, default=20, help="dispatches per throughput sample (default 20)")
    parser.add_argument("--model", action="store_true", help="also time the whole EfficientNet-Lite0 graph")
    parser.add_argument("--only", help="comma-separated layer names")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds for the whole page run")
    parser.add_argument("--profile", action="store_true",
                        help="profiling mode: print the 10 slowest GPU steps (times then include profiling)")
    args = parser.parse_args(argv)
    layers = layers_from_manifest() + EXTRA_LAYERS
    if args.only:
        wanted = set(args.only.split(","))
        layers = [layer for layer in layers if layer["name"] in wanted]
    from tools.bench_page import report

    return report(lambda: bench(layers, args.reps, args.batch, args.model, args.timeout, profile=args.profile),
                  format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
