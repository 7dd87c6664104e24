"""Benchmark the WebNN/WebGPU buffer-sharing experiment headless and print its table.

Serves the project (``create_app()`` on a free loopback port), opens
``/demos/interop/?size=...`` in headless Chromium through Playwright, waits for the page's
``window.lastRun``, prints the table and writes the run as JSON.

The browser is configured like the test suite's (``tools.chromium.launch_options()``):
``$WEBNN_CHROMIUM`` (else a system Chromium, else Playwright's), ``$WEBNN_CHROMIUM_ARGS``
(shell-split; default: the SwiftShader WebGPU flags) and ``$WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS``
(shell-split). On the GPU host, ``. /root/gpu/env.sh`` sets all three (see
``shared/gpu-chrome/README.md``). A fresh browser there sometimes gets no WebGPU adapter, so a
run that fails for want of an adapter is retried in a new browser (``--launches``).

Usage::

    python -m tools.bench_interop [--size small|medium|large] [--iterations N] [--warmup N]
                                  [--out bench-results/interop.json] [--timeout SECONDS]

Exit status: 0 when the run finished and the four results agree, 1 when they disagree,
2 when the run failed (no adapter, page error, timeout).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

if __package__ in (None, ""):  # run as a file (python tools/...): the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.bench_page import adapter_line, run_page_retrying  # noqa: E402

SIZES = ("small", "medium", "large")
DEFAULT_OUT = Path("bench-results/interop.json")


def page_url(base_url: str, size: str, iterations: int | None, warmup: int | None) -> str:
    """The demo URL for one run (parameters the page reads on load)."""
    params: dict[str, Any] = {"size": size}
    if iterations is not None:
        params["iterations"] = iterations
    if warmup is not None:
        params["warmup"] = warmup
    return f"{base_url}/demos/interop/?{urlencode(params)}"


def format_table(run: dict[str, Any]) -> str:
    """The run as a Markdown table, followed by the ratios, the agreement and the adapter line."""
    config = run["config"]
    n, c, h, w = config["shape"]
    lines = [
        f"conv2d 3x3 + bias -> add -> relu, input {n}x{c}x{h}x{w}, {config['filters']} filters, "
        f"float32; {config['iterations']} iterations after {config['warmup']} warm-up",
        "",
        "| variant | median ms | min ms | max ms | p25-p75 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for v in run["variants"]:
        lines.append(f"| {v['name']} | {v['medianMs']:.3f} | {v['minMs']:.3f} | {v['maxMs']:.3f} "
                     f"| {v['p25Ms']:.3f}-{v['p75Ms']:.3f} |")
    parts = run.get("breakdownMs") or {}
    if parts:
        lines += ["", "each stage alone, median ms (queue round trip included): "
                  + ", ".join(f"{k} {v:.3f}" for k, v in parts.items())]
    ratios = run["ratios"]
    exp = run["expectations"]
    lines += [
        "",
        f"2/3 (readback / export) = {ratios['readbackOverExport']:.2f} "
        f"(expected >= 2: {'holds' if exp['exportAtLeast2xFasterThanReadback'] else 'does NOT hold'})",
        f"3/4 (export / one graph) = {ratios['exportOverGraph']:.2f} "
        f"(expected <= 1.2: {'holds' if exp['exportWithin1_2xOfGraph'] else 'does NOT hold'})",
        f"results {'agree' if run['agree'] else 'DISAGREE'}: max |diff| {run['maxAbsDiff']:.3g} "
        f"(tolerance {run['tolerance']:.3g})",
        f"adapter: {adapter_line(run.get('adapter') or {})}; WebNN: {run.get('implementation', '?')}",
    ]
    return "\n".join(lines)


def bench(size: str, iterations: int | None, warmup: int | None, timeout_s: float,
          launches: int = 3) -> dict[str, Any]:
    """Run the experiment once in a fresh headless browser (retrying a missing adapter).

    Returns:
        The page's ``window.lastRun`` plus ``browser`` (version) and ``wallSeconds``.

    Raises:
        tools.bench_page.BenchError: every launch failed; the last error is the message.
    """
    from playwright.sync_api import sync_playwright

    from server.app import create_app
    from tests.live_server import serve_in_thread

    with serve_in_thread(create_app()) as base_url, sync_playwright() as p:
        return run_page_retrying(p, page_url(base_url, size, iterations, warmup), timeout_s, launches)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_interop", description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="small", help="preset size (default: small)")
    parser.add_argument("--iterations", type=int, help="timed iterations per variant (default: the preset's)")
    parser.add_argument("--warmup", type=int, help="untimed runs per variant first (default: the preset's)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds to wait for the page's run")
    parser.add_argument("--launches", type=int, default=3, help="browser launches when no adapter is found")
    args = parser.parse_args(argv)
    try:
        run = bench(args.size, args.iterations, args.warmup, args.timeout, args.launches)
    except Exception as exc:  # noqa: BLE001 - report any failure as exit status 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(format_table(run))
    for line in run.get("consoleErrors") or []:
        print(f"warning: browser console error: {line}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"size": args.size, **run}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if run["agree"] else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
