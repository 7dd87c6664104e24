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

    python -m tools.bench_readback [--chains 1,25,100] [--reps N] [--force]
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
  const c = slots.completion;
  const hardware = c.hardware;
  if (force) c.hardware = true;
  const setMode = (mode) => { c.enabled = mode !== 'off'; if (mode !== 'off') c.nudge = mode; };
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
        const before = c.nudges;
        const t0 = performance.now();
        context.dispatch(graph, {x: xt}, {y: yt});
        await context.readTensor(yt);
        times[mode].push(performance.now() - t0);
        nudges[mode] += c.nudges - before;
      }
    }
    rows.push({n, times, nudges});
    graph.destroy(); xt.destroy(); yt.destroy();
  }
  context.destroy();
  return {adapter: adapterInfo, hardware, forced: force, rows};
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
    lines.append("")
    note = " (software adapter, loop forced on)" if result["forced"] and not result["hardware"] else ""
    lines.append("adapter: " + adapter_line(result["adapter"]) + note)
    return "\n".join(lines)


def bench(chains: list[int], reps: int, force: bool, timeout_s: float, launches: int = 3) -> dict[str, Any]:
    """Run the benchmark page in a fresh headless browser (a new one when no adapter appears)."""
    from tools.bench_page import page_function, run_in_harness

    body = f"const modes = {MODES!r};" + _BENCH_BODY
    return run_in_harness(page_function("[chains, reps, force]", body), [chains, reps, force], timeout_s, launches)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_readback", description=__doc__.splitlines()[0])
    parser.add_argument("--chains", default="1,25,100", help="dispatches per graph, comma-separated (default 1,25,100)")
    parser.add_argument("--reps", type=int, default=50, help="timed round trips per mode and chain (default 50)")
    parser.add_argument("--force", action="store_true", help="run the loop even on a software adapter")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole page run")
    args = parser.parse_args(argv)
    from tools.bench_page import report

    chains = [int(x) for x in args.chains.split(",")]
    return report(lambda: bench(chains, args.reps, args.force, args.timeout), format_table, args.out)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
