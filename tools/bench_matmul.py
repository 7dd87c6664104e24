"""Time the matrix products, softmax, reductions and normalizations, one graph per case, and
print a table.

Cases: square matmuls (256 to 4096, or up to ``--max-size``), EfficientNet-Lite0's classifier
(gemm [1, 1280] x [1000, 1280]^T + c), a batched attention-sized matmul, softmax, reduceMean and
layerNormalization. Matrix products are timed with each matrix kernel forced (the context's
``kernelOverrides.matmul``: blocked, tiled, tiled128, gemv) and with the kernel the adapter
picks. Each case is timed two ways after warm-up: *latency*, the median of dispatch + readTensor
round trips, and *throughput*, ``--batch`` dispatches then one readTensor, divided by
``--batch``; the readback alone (median of 5 more readTensor calls) is then subtracted from the
batch time to estimate the time per dispatch with the queue kept busy (GFLOP/s use that).

The browser is configured as the test suite's (``$WEBNN_CHROMIUM``, ``$WEBNN_CHROMIUM_ARGS``,
``$WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS``; on the GPU host ``. /root/gpu/env.sh`` sets them).

Usage::

    python -m tools.bench_matmul [--reps N] [--batch N] [--max-size N] [--kernels a,b]
                                 [--shapes MxKxN,...] [--only-shapes] [--overrides JSON]
                                 [--out bench-results/matmul.json] [--timeout SECONDS] [--profile]

``--shapes`` adds float32 matmuls [M, K] x [K, N] (e.g. BERT-base's 128x768x2304, or 4000x4000x4000
next to 4096^3); ``--only-shapes`` drops the built-in cases. ``--overrides`` adds variants: a JSON
list of ``kernelOverrides`` objects (e.g. ``[{"matmul": "tiled", "splitK": 2}]``), each timed on
every matrix case next to the ``--kernels``, labelled by its JSON.

``--profile`` runs in the polyfill's profiling mode (one timestamped pass per step, so the times
include that cost) and prints the 10 slowest GPU steps over all cases.

Exit status: 0 when every case ran, 2 when the page failed (no adapter, error, timeout).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path("bench-results/matmul.json")
KERNELS = ["auto", "blocked", "tiled", "tiled128", "gemv"]


def shape_cases(shapes: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    """Matmul cases [M, K] x [K, N] for (M, K, N) triples."""
    return [{"name": f"matmul {m}x{k} . {k}x{n}", "op": "matmul", "inputs": {"a": [m, k], "b": [k, n]},
             "flops": 2 * m * k * n, "matrix": True} for m, k, n in shapes]


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """``"128x768x2304,4000x4000x4000"`` -> [(128, 768, 2304), (4000, 4000, 4000)].

    Raises:
        ValueError: an item is not three positive integers joined by x.
    """
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        dims = [int(d) for d in item.lower().split("x")]
        if len(dims) != 3 or min(dims) < 1:
            raise ValueError(f"shape {item!r}: expected MxKxN, three positive integers")
        out.append(tuple(dims))
    return out


def variants(kernels: list[str], overrides: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The kernel configurations timed per matrix case: {label, overrides} with overrides the
    context's kernelOverrides (None for the adapter's own choice, 'auto')."""
    out = [{"label": k, "overrides": None if k == "auto" else {"matmul": k}} for k in kernels]
    return out + [{"label": json.dumps(o, separators=(",", ":")), "overrides": o} for o in overrides or []]


def cases(max_size: int) -> list[dict[str, Any]]:
    """Benchmark cases: {name, op, inputs {name: shape}, args, options, flops, kernels?}."""
    out = []
    for n in (256, 512, 1024, 2048, 4096):
        if n <= max_size:
            out.append({"name": f"matmul {n}^3", "op": "matmul", "inputs": {"a": [n, n], "b": [n, n]},
                        "flops": 2 * n ** 3, "matrix": True})
    out.append({"name": "gemm classifier 1x1280 . 1000x1280^T + c", "op": "gemm",
                "inputs": {"a": [1, 1280], "b": [1000, 1280], "c": [1000]},
                "options": {"bTranspose": True}, "flops": 2 * 1280 * 1000, "matrix": True})
    out.append({"name": "matmul 12x[128x64 . 64x128]", "op": "matmul", "inputs": {"a": [12, 128, 64], "b": [12, 64, 128]},
                "flops": 2 * 12 * 128 * 64 * 128, "matrix": True})
    out.append({"name": "softmax 1x1000", "op": "softmax", "inputs": {"x": [1, 1000]}, "args": [1], "flops": 0})
    out.append({"name": "softmax 4096x1024", "op": "softmax", "inputs": {"x": [4096, 1024]}, "args": [1], "flops": 0})
    out.append({"name": "reduceMean 1x1280x7x7 axes 2,3", "op": "reduceMean", "inputs": {"x": [1, 1280, 7, 7]},
                "options": {"axes": [2, 3]}, "flops": 0})
    out.append({"name": "layerNormalization 512x768", "op": "layerNormalization", "inputs": {"x": [512, 768]},
                "options": {"axes": [1]}, "flops": 0})
    return out


#: The page function's body after tools.bench_page.PAGE_SETUP_JS; its parameters are [cases, variants, reps, batch]
#: (variants: {label, overrides}, see variants()).
_BENCH_BODY = """
  async function time(graph, inputs, outputs, out) {
    const {latency, batchMs: total} = await timeDispatches(graph, inputs, outputs, out, reps, batch);
    const reads = [];
    for (let i = 0; i < 5; i++) {
      const t1 = performance.now();
      await context.readTensor(out);
      reads.push(performance.now() - t1);
    }
    reads.sort((x, y) => x - y);
    const readMs = reads[2];
    return {latency, throughputMs: total / batch, readMs, gpuMs: Math.max(0, total - readMs) / batch};
  }
  const rows = [];
  let previous = {};  // the switches the last variant set
  for (const c of cases) {
    for (const {label: kernel, overrides} of c.matrix ? variants : [{label: 'auto', overrides: null}]) {
      const forced = overrides?.matmul ?? kernel;
      if ((forced === 'blocked' || forced === 'gemv') && c.flops > 2 * 1024 ** 3 && !info.isFallbackAdapter) continue;
      tune(context, Object.fromEntries(Object.keys(previous).map((k) => [k, undefined]))); tune(context, overrides ?? {}); previous = overrides ?? {};
      const b = new MLGraphBuilder(context);
      const ops = {};
      for (const [name, shape] of Object.entries(c.inputs)) ops[name] = b.input(name, {dataType: 'float32', shape});
      const names = Object.keys(c.inputs);
      const positional = c.op === 'gemm' || c.op === 'matmul' ? [ops.a, ops.b] : [ops.x];
      const options = {...(c.options ?? {})};
      if (ops.c) options.c = ops.c;
      const y = b[c.op](...positional, ...(c.args ?? []), options);
      const graph = await b.build({y});
      const inputs = {};
      for (const name of names) {
        inputs[name] = await context.createTensor({dataType: 'float32', shape: c.inputs[name], writable: true});
        const data = new Float32Array(count(c.inputs[name]));
        for (let i = 0; i < data.length; i++) data[i] = ((i * 7919) % 1000) / 1000 - 0.5;
        context.writeTensor(inputs[name], data);
      }
      const yt = await context.createTensor({dataType: 'float32', shape: y.shape, readable: true});
      const t = await time(graph, inputs, {y: yt}, yt);
      rows.push({name: c.name, kernel, flops: c.flops, ...t, steps: await profileSteps(graph)});
      graph.destroy(); yt.destroy(); Object.values(inputs).forEach((x) => x.destroy());
    }
  }
  tune(context, Object.fromEntries(Object.keys(previous).map((k) => [k, undefined])));
  context.destroy();
  return {adapter: adapterInfo, rows};
"""


def format_table(result: dict[str, Any]) -> str:
    """Markdown table: one row per case and kernel, times in milliseconds."""
    from tools.bench_page import adapter_line

    lines = ["| case | kernel | latency median ms | throughput ms/dispatch | readback ms | per dispatch, readback excluded ms | GFLOP/s |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in result["rows"]:
        gflops = f"{r['flops'] / r['gpuMs'] / 1e6:.1f}" if r["flops"] and r["gpuMs"] > 0 else ""
        lines.append(f"| {r['name']} | {r['kernel']} | {statistics.median(r['latency']):.3f} | {r['throughputMs']:.3f} "
                     f"| {r['readMs']:.3f} | {r['gpuMs']:.3f} | {gflops} |")
    lines.append("")
    lines.append("adapter: " + adapter_line(result["adapter"]))
    if any(r.get("steps") for r in result["rows"]):
        from tools.bench_page import top_steps_table

        lines += ["", top_steps_table([(f"{r['name']} {r['kernel']}", r["steps"]) for r in result["rows"]])]
    return "\n".join(lines)


def bench(case_list, kernels, reps: int, batch: int, timeout_s: float, launches: int = 3,
          profile: bool = False, overrides: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Run the benchmark page in a fresh headless browser (a new one when no adapter appears);
    ``kernels`` and ``overrides``: see variants(); ``profile``: in profiling mode, each row then
    has ``steps``."""
    from tools.bench_page import page_function, run_in_harness

    return run_in_harness(page_function("[cases, variants, reps, batch]", _BENCH_BODY, profile),
                          [case_list, variants(kernels, overrides), reps, batch], timeout_s, launches)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_matmul", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="timed round trips per case (default 20)")
    parser.add_argument("--batch", type=int, default=50, help="dispatches per throughput sample (default 50)")
    parser.add_argument("--max-size", type=int, default=4096, help="largest square matmul (default 4096)")
    parser.add_argument("--kernels", default=",".join(KERNELS), help=f"matrix kernels to time (default {','.join(KERNELS)})")
    parser.add_argument("--shapes", type=parse_shapes, default=[], help="extra matmuls MxKxN, comma-separated")
    parser.add_argument("--only-shapes", action="store_true", help="time only the --shapes cases")
    parser.add_argument("--overrides", type=json.loads, default=[],
                        help="JSON list of kernelOverrides objects to time as further variants")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds for the whole page run")
    parser.add_argument("--profile", action="store_true",
                        help="profiling mode: print the 10 slowest GPU steps (times then include profiling)")
    args = parser.parse_args(argv)
    from tools.bench_page import report

    if not isinstance(args.overrides, list) or not all(isinstance(o, dict) for o in args.overrides):
        parser.error("--overrides: expected a JSON list of objects")
    if args.only_shapes and not args.shapes:
        parser.error("--only-shapes needs --shapes")
    case_list = ([] if args.only_shapes else cases(args.max_size)) + shape_cases(args.shapes)
    return report(lambda: bench(case_list, args.kernels.split(","), args.reps, args.batch, args.timeout,
                                profile=args.profile, overrides=args.overrides), format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
