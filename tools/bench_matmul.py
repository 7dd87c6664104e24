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
                                 [--shapes MxKxN,...] [--quantized S|KxN,...] [--rows M,...] [--only-shapes]
                                 [--data-types float32,float16]
                                 [--chain N] [--overrides JSON] [--rounds N] [--sustain MS] [--out bench-results/matmul.json]
                                 [--timeout SECONDS] [--profile]

``--shapes`` adds float32 matmuls [M, K] x [K, N] (e.g. BERT-base's 128x768x2304, or 4000x4000x4000
next to 4096^3); ``--only-shapes`` drops the built-in cases. ``--overrides`` adds variants: a JSON
list of ``kernelOverrides`` objects (e.g. ``[{"matmul": "tiled", "splitK": 2}]``), each timed on
every matrix case next to the ``--kernels``, labelled by its JSON; a member ``productPrecision``
sets that context option for the variant (``{"productPrecision": "float16"}``: float32 products
on the f16 matrix units).

``--data-types float32,float16`` times the cases with input operands in each data type (float16
products run on the GPU's matrix units where the device has them; ops/matmul_matrix_units.js).

``--quantized 4096,8192`` adds quantized products as ORT's WebNN EP writes ONNX MatMulNBits (int8
and int4 S x S weights, or K x N for a size KxN such as 896x4864, block-wise scales and zero
points: one quantizedMatmul step each) for a decode step (M = 1) and prefill (M = 128; ``--rows``
sets the Ms), each beside the float32 product of the same shape (its
B a constant too), with the GB/s of weights read (packed bytes for the quantized; with
``--profile`` also from the steps' GPU timestamps). For the H200 target:
``python -m tools.bench_matmul --quantized 4096,8192 --only-shapes --kernels auto --profile``
(``--quantized auto``: those sizes on a GPU, 256 and 512 on SwiftShader; ``make bench`` runs it so).

``--chain N`` adds, for each square ``--quantized`` size, N matrix-vector products in a row as one
graph (int8 and int4, each product's weights its own; flops and bytes count all N): a product's
time inside a plan, as in a decode step, without a one-step graph's dispatch and pass costs. Time
it without ``--profile`` (which gives each step a timestamped pass of its own).

``--sustain MS`` times each row once more after MS of back-to-back dispatches (a GPU lowers its
clocks when lightly loaded: a dispatch-and-read loop runs mostly at the low clock); with
``--profile`` its GPU ms are then that batch's.

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


def with_data_types(case_list: list[dict[str, Any]], data_types: list[str]) -> list[dict[str, Any]]:
    """Each case with inputs only (no constant or quantized B) once per data type, named with it
    where it is not float32; the other cases as they are."""
    out = []
    for c in case_list:
        if c.get("quant") or c.get("constB"):
            out.append(c)
            continue
        out += [c if t == "float32" else {**c, "name": f"{t} {c['name']}", "dataType": t} for t in data_types]
    return out


#: the block size of the quantized cases' block-wise scales (ONNX MatMulNBits' usual 32)
QUANT_BLOCK = 32


def quantized_cases(sizes: list[int | tuple[int, int]], rows=(1, 128)) -> list[dict[str, Any]]:
    """Products of A [M, K] with K x N quantized weights as ORT's WebNN EP writes MatMulNBits
    (W [N, K / 32, 32] int4 / int8 constant, scales [N, K / 32, 1], zero points, dequantize,
    reshape, transpose, matmul: one quantizedMatmul step), and the float32 product of the same
    shape (B a float32 constant, [K, N]) beside each, for M in ``rows`` (1: a decode step, 128:
    prefill); a size S is S x S, a pair (K, N) that shape. ``weightBytes``: the bytes of weights
    a product reads (packed for the quantized)."""
    out = []
    for size in sizes:
        k, n = size if isinstance(size, tuple) else (size, size)
        shape = f"{k}x{n}"
        for m in rows:
            label = "GEMV" if m == 1 else f"prefill M={m}"
            out.append({"name": f"fp32 {label} {shape}", "op": "matmul", "inputs": {"a": [m, k]},
                        "constB": [k, n], "flops": 2 * m * k * n, "weightBytes": 4 * k * n,
                        "matrix": True})
            for dtype, bits in (("int8", 8), ("uint4", 4)):
                out.append({"name": f"{dtype} {label} {shape}", "op": "matmul", "inputs": {"a": [m, k]},
                            "quant": {"dataType": dtype, "bits": bits, "n": n, "k": k, "block": QUANT_BLOCK},
                            "flops": 2 * m * k * n, "weightBytes": k * n * bits // 8, "matrix": True})
    return out


def chained_cases(sizes: list[int | tuple[int, int]], chain: int) -> list[dict[str, Any]]:
    """The quantized matrix-vector cases of quantized_cases for the square sizes, each as ``chain``
    products in a row, each product's weights its own, as one graph: the time a product takes
    inside a plan (a decode step's situation), without the per-dispatch and per-pass costs of a
    graph of one step. flops and weightBytes count all of them."""
    square = [s for s in sizes if not isinstance(s, tuple) or s[0] == s[1]]
    return [{**c, "name": f"{c['name']} x{chain} chained", "chain": chain, "flops": c["flops"] * chain,
             "weightBytes": c["weightBytes"] * chain} for c in quantized_cases(square, rows=(1,)) if c.get("quant")]


#: --quantized auto: the sizes on a hardware GPU and on a software adapter (SwiftShader)
AUTO_SIZES = ([4096, 8192], [256, 512])


def parse_sizes(text: str) -> list[int | tuple[int, int]] | str:
    """``"4096,896x4864"`` -> [4096, (896, 4864)] (S: S x S weights; KxN: that shape; multiples of
    32); ``"auto"`` stays (AUTO_SIZES)."""
    if text.strip() == "auto":
        return "auto"
    sizes = []
    for t in (t.strip() for t in text.split(",") if t.strip()):
        try:
            dims = tuple(int(d) for d in t.split("x"))
        except ValueError:
            dims = ()
        if len(dims) not in (1, 2) or any(d < 32 or d % QUANT_BLOCK for d in dims):
            raise argparse.ArgumentTypeError(f"{t!r}: a size is S or KxN, positive multiples of {QUANT_BLOCK}")
        sizes.append(dims[0] if len(dims) == 1 else dims)
    return sizes


def parse_sizes_any(text: str) -> list[int]:
    """``"1,128"`` -> [1, 128] (positive integers)."""
    try:
        sizes = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected positive integers, comma-separated")
    return sizes


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    """``"128x768x2304,4000x4000x4000"`` -> [(128, 768, 2304), (4000, 4000, 4000)].

    Raises:
        argparse.ArgumentTypeError: an item is not three positive integers joined by x.
    """
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        try:
            dims = [int(d) for d in item.lower().split("x")]
        except ValueError:
            dims = []
        if len(dims) != 3 or min(dims) < 1:
            raise argparse.ArgumentTypeError(f"shape {item!r}: expected MxKxN, three positive integers")
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


#: The page function's body after tools.bench_page.PAGE_SETUP_JS; its parameters are [cases, variants, reps, batch, sustain]
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
    const t = {latency, throughputMs: total / batch, readMs, gpuMs: Math.max(0, total - readMs) / batch};
    if (sustain > 0) {
      // back-to-back dispatches for `sustain` ms first (the GPU raises its clocks under load and
      // lowers them within a fraction of a second idle), then `batch` more, timed; in profiling
      // mode the steps' GPU time then covers those alone
      const t0 = performance.now();
      while (performance.now() - t0 < sustain) {
        for (let i = 0; i < 10; i++) context.dispatch(graph, inputs, outputs);
        await context.readTensor(out);
      }
      if (profiling) await readProfile(graph, {reset: true});
      const t1 = performance.now();
      for (let i = 0; i < batch; i++) context.dispatch(graph, inputs, outputs);
      await context.readTensor(out);
      t.sustainedMs = Math.max(0, performance.now() - t1 - readMs) / batch;
    }
    return t;
  }
  const rows = [];
  let previous = {};  // the switches the last variant set
  for (const c of cases) {
    for (const {label: kernel, overrides} of c.matrix ? variants : [{label: 'auto', overrides: null}]) {
      if ((c.quant || c.constB) && kernel !== 'auto' && !kernel.startsWith('{')) continue;  // the adapter's pick or --overrides
      const forced = overrides?.matmul ?? kernel;
      if ((forced === 'blocked' || forced === 'gemv') && c.flops > 2 * 1024 ** 3 && !info.isFallbackAdapter) continue;
      // a variant's productPrecision is the context option of that name, its other members tuning switches
      const {productPrecision = 'float32', ...switches} = overrides ?? {};
      configureContext(context, {productPrecision});
      tune(context, Object.fromEntries(Object.keys(previous).map((k) => [k, undefined]))); tune(context, switches); previous = switches;
      try {
      const b = new MLGraphBuilder(context);
      const ops = {};
      const dataType = c.dataType ?? 'float32';
      for (const [name, shape] of Object.entries(c.inputs)) ops[name] = b.input(name, {dataType, shape});
      const names = Object.keys(c.inputs);
      if (c.constB) {
        const data = new Float32Array(count(c.constB));
        for (let i = 0; i < data.length; i++) data[i] = ((i * 7919) % 1000) / 1000 - 0.5;
        ops.b = b.constant({dataType: 'float32', shape: c.constB}, data);
      }
      // ORT's WebNN EP's MatMulNBits: W [N, blocks, block], dequantize, reshape, transpose (the
      // j-th of a chain with weights of its own, so that no two share a constant)
      const quantizedB = (j) => {
        const {dataType, bits, n, k, block} = c.quant;
        const blocks = k / block;
        const w = new Uint8Array(n * k * bits / 8);
        for (let i = 0; i < w.length; i++) w[i] = (i * 7919 + j * 31) % 251;
        const scales = new Float32Array(n * blocks).fill(1 / 64);
        const zeros = new Uint8Array(Math.ceil(n * blocks * bits / 8)).fill(bits === 8 ? 3 : 0x88);
        const wq = b.constant({dataType, shape: [n, blocks, block]}, w);
        const s = b.reshape(b.constant({dataType: 'float32', shape: [n * blocks]}, scales), [n, blocks, 1]);
        const z = b.constant({dataType, shape: [n, blocks, 1]}, zeros);
        return b.transpose(b.reshape(b.dequantizeLinear(wq, s, z), [n, k]));
      };
      if (c.quant) ops.b = quantizedB(0);
      const positional = c.op === 'gemm' || c.op === 'matmul' ? [ops.a, ops.b] : [ops.x];
      const options = {...(c.options ?? {})};
      if (ops.c) options.c = ops.c;
      let y = b[c.op](...positional, ...(c.args ?? []), options);
      for (let j = 1; j < (c.chain ?? 1); j++) y = b.matmul(y, quantizedB(j));
      const graph = await b.build({y});
      const inputs = {};
      for (const name of names) {
        inputs[name] = await context.createTensor({dataType, shape: c.inputs[name], writable: true});
        const data = new Float32Array(count(c.inputs[name]));
        for (let i = 0; i < data.length; i++) data[i] = ((i * 7919) % 1000) / 1000 - 0.5;
        context.writeTensor(inputs[name], dataType === 'float16' ? new Float16Array(data) : data);
      }
      const yt = await context.createTensor({dataType, shape: y.shape, readable: true});
      const t = await time(graph, inputs, {y: yt}, yt);
      rows.push({name: c.name, kernel, flops: c.flops, weightBytes: c.weightBytes, ...t, steps: await profileSteps(graph)});
      graph.destroy(); yt.destroy(); Object.values(inputs).forEach((x) => x.destroy());
      } catch (e) {
        // a data type this build lacks (uint4 before int4 support): the row says so
        if (!c.quant) throw e;
        rows.push({name: c.name, kernel, error: `${e.name}: ${e.message}`});
      }
    }
  }
  tune(context, Object.fromEntries(Object.keys(previous).map((k) => [k, undefined])));
  context.destroy();
  return {adapter: adapterInfo, rows};
"""


def merge_rounds(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of one case and kernel label timed in several rounds (``--rounds``) as one row: the
    median of each time (latency samples pooled), ``rounds`` and the GPU ms of every round
    (``roundsMs``: timestamps in profiling mode, else readback-excluded time); the first round's
    steps. Rows with an error stay as they are."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["name"], r["kernel"]), []).append(r)
    out = []
    for group in groups.values():
        ok = [r for r in group if not r.get("error")]
        if len(ok) < 2:
            out.append(ok[0] if ok else group[0])
            continue
        per_round = [sum(st["ms"] for st in r["steps"]) if r.get("steps") else r["gpuMs"] for r in ok]
        merged = dict(ok[0])
        merged.update(latency=[x for r in ok for x in r["latency"]],
                      **{k: statistics.median(r[k] for r in ok) for k in ("throughputMs", "readMs", "gpuMs", "sustainedMs")
                         if all(k in r for r in ok)},
                      rounds=len(ok), roundsMs=per_round)
        if merged.get("steps"):
            med = statistics.median(per_round)
            merged["steps"] = [dict(st, ms=st["ms"] * med / per_round[0]) if per_round[0] else st for st in ok[0]["steps"]]
        out.append(merged)
    return out


def _sustained_cells(r: dict[str, Any], step_ms: float) -> str:
    """The sustained columns: ms a dispatch (the steps' GPU ms in profiling mode, which then cover
    the sustained batch alone) and the weights' GB/s at that rate."""
    if "sustainedMs" not in r:
        return " | |"
    ms = step_ms or r["sustainedMs"]
    gbs = f"{r['weightBytes'] / ms / 1e6:.1f}" if r.get("weightBytes") and ms else ""
    return f" {ms:.4f} | {gbs} |"


def format_table(result: dict[str, Any]) -> str:
    """Markdown table: one row per case and kernel, times in milliseconds (several rounds: their
    medians, and the range of the rounds' GPU ms)."""
    from tools.bench_page import adapter_line

    rows = merge_rounds(result["rows"])
    ranged = any(r.get("rounds") for r in rows)
    sustained = any("sustainedMs" in r for r in rows)
    lines = ["| case | kernel | latency median ms | throughput ms/dispatch | readback ms | per dispatch, readback excluded ms "
             "| GFLOP/s | weights GB/s | GPU ms (timestamps) | weights GB/s (timestamps) |" + (" rounds: GPU ms min–max |" if ranged else "")
             + (" sustained ms/dispatch | sustained weights GB/s |" if sustained else ""),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if ranged else "") + ("---:|---:|" if sustained else "")]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['name']} | {r['kernel']} | {r['error']} |||||||||" + ("|" if ranged else ""))
            continue
        gflops = f"{r['flops'] / r['gpuMs'] / 1e6:.1f}" if r["flops"] and r["gpuMs"] > 0 else ""
        wbytes = r.get("weightBytes")
        gbs = f"{wbytes / r['gpuMs'] / 1e6:.1f}" if wbytes and r["gpuMs"] > 0 else ""
        # profiling mode: the GPU time of the graph's steps from timestamp queries
        step_ms = sum(st["ms"] for st in r["steps"]) if r.get("steps") else 0
        ts = f"{step_ms:.4f}" if step_ms else ""
        ts_gbs = f"{wbytes / step_ms / 1e6:.1f}" if wbytes and step_ms else ""
        spread = f" {r['rounds']}: {min(r['roundsMs']):.4f}–{max(r['roundsMs']):.4f} |" if r.get("rounds") else (" |" if ranged else "")
        lines.append(f"| {r['name']} | {r['kernel']} | {statistics.median(r['latency']):.3f} | {r['throughputMs']:.3f} "
                     f"| {r['readMs']:.3f} | {r['gpuMs']:.3f} | {gflops} | {gbs} | {ts} | {ts_gbs} |" + spread
                     + (_sustained_cells(r, step_ms) if sustained else ""))
    lines.append("")
    lines.append("adapter: " + adapter_line(result["adapter"]))
    if any(r.get("steps") for r in rows):
        from tools.bench_page import top_steps_table

        lines += ["", top_steps_table([(f"{r['name']} {r['kernel']}", r["steps"]) for r in rows])]
    return "\n".join(lines)


def bench(case_list, kernels, reps: int, batch: int, timeout_s: float, launches: int = 3,
          profile: bool = False, overrides: list[dict[str, Any]] | None = None, rounds: int = 1,
          sustain: float = 0) -> dict[str, Any]:
    """Run the benchmark page in a fresh headless browser (a new one when no adapter appears);
    ``kernels`` and ``overrides``: see variants(), each matrix case timed with all of them in
    turn, ``rounds`` times over (A, B, A, B...: a GPU whose clocks wander then shows it in the
    spread rather than in one variant); ``profile``: in profiling mode, each row then has
    ``steps``; ``sustain``: ms of back-to-back dispatches before a further timed batch per row
    (``sustainedMs``; the steps' GPU ms then that batch's)."""
    from tools.bench_page import page_function, run_in_harness

    return run_in_harness(page_function("[cases, variants, reps, batch, sustain]", _BENCH_BODY, profile),
                          [case_list, variants(kernels, overrides) * rounds, reps, batch, sustain], timeout_s, launches)


def _non_negative(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected milliseconds >= 0")
    return value


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_matmul", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="timed round trips per case (default 20)")
    parser.add_argument("--batch", type=int, default=50, help="dispatches per throughput sample (default 50)")
    parser.add_argument("--max-size", type=int, default=4096, help="largest square matmul (default 4096)")
    parser.add_argument("--kernels", default=",".join(KERNELS), help=f"matrix kernels to time (default {','.join(KERNELS)})")
    parser.add_argument("--shapes", type=parse_shapes, default=[], help="extra matmuls MxKxN, comma-separated")
    parser.add_argument("--only-shapes", action="store_true", help="time only the --shapes (and --quantized) cases")
    parser.add_argument("--quantized", type=parse_sizes, default=[],
                        help="sizes S or KxN (e.g. 4096,896x4864; auto: 4096,8192 on a GPU, 256,512 on SwiftShader): "
                             "int8 and int4 S x S (K x N) weights, M of --rows, each beside the float32 product of the same shape")
    parser.add_argument("--data-types", default="float32",
                        help="data types of the cases with input operands, comma-separated: float32, float16 (default float32)")
    parser.add_argument("--rows", type=parse_sizes_any, default=[1, 128],
                        help="M of the --quantized cases (default 1,128: a decode step and a prefill)")
    parser.add_argument("--chain", type=int, default=0,
                        help="also time each square --quantized size's matrix-vector product as CHAIN products in "
                             "a row in one graph, weights of their own (figures for all of them)")
    parser.add_argument("--overrides", type=json.loads, default=[],
                        help="JSON list of kernelOverrides objects to time as further variants")
    parser.add_argument("--rounds", type=int, default=1,
                        help="time each matrix case's variants this many times in turn; the table gives medians and the range")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds for the whole page run")
    parser.add_argument("--profile", action="store_true",
                        help="profiling mode: print the 10 slowest GPU steps (times then include profiling)")
    parser.add_argument("--sustain", type=_non_negative, default=0,
                        help="ms of back-to-back dispatches per row before a further timed batch, the GPU's clocks "
                             "raised (column 'sustained ms'; with --profile the GPU ms are that batch's)")
    args = parser.parse_args(argv)
    from tools.bench_page import report

    if not isinstance(args.overrides, list) or not all(isinstance(o, dict) for o in args.overrides):
        parser.error("--overrides: expected a JSON list of objects")
    if args.chain < 0:
        parser.error("--chain: expected a count >= 0")
    if args.only_shapes and not (args.shapes or args.quantized):
        parser.error("--only-shapes needs --shapes or --quantized")
    if args.quantized == "auto":
        from tools.bench_llm import software_adapter

        args.quantized = AUTO_SIZES[1] if software_adapter() else AUTO_SIZES[0]
    data_types = [t.strip() for t in args.data_types.split(",") if t.strip()]
    if not data_types or any(t not in ("float32", "float16") for t in data_types):
        parser.error("--data-types: float32 and/or float16")
    case_list = with_data_types(([] if args.only_shapes else cases(args.max_size)) + shape_cases(args.shapes), data_types) \
        + quantized_cases(args.quantized, tuple(args.rows)) \
        + (chained_cases(args.quantized, args.chain) if args.chain > 1 else [])
    return report(lambda: bench(case_list, args.kernels.split(","), args.reps, args.batch, args.timeout,
                                profile=args.profile, overrides=args.overrides, rounds=args.rounds,
                                sustain=args.sustain),
                  format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
