"""What the browser's WebGPU adapter offers for float16 and matrix units, and what they run at.

For each flag set (the launch flags from ``tools.chromium.launch_options()``, then the same plus
each ``--variant``), in a fresh headless Chromium:

- the high-performance adapter's info, features and ``subgroupMatrixConfigs``
  (``chromium-experimental-subgroup-matrix``: component type, result type, M x N x K);
- whether a device with ``shader-f16`` can be made and an ``enable f16;`` shader runs, with its
  result checked;
- for every f16 subgroup-matrix configuration: a 4096^3 product (f16 operands, the
  configuration's result type) built on ``subgroupMatrixMultiplyAccumulate``, its values checked
  against a float64 reference on a sample of entries, and its GPU time from timestamp queries
  (median of ``--reps``) as TFLOP/s; the same for a plain f32 product of the same size as the
  baseline of that browser;
- with ``--bandwidth 32,1024``: streaming reads of buffers of those MiB (hashed words, then
  zeros), GB/s from timestamps, each read alone (read back after it) and 20 in one pass:
  what a memory-bound kernel can reach in this browser;
- with ``--gpu-page``, the text of ``chrome://gpu`` (Dawn's adapter toggles) into the JSON.

Run it where ``$WEBNN_CHROMIUM``/``$WEBNN_CHROMIUM_ARGS`` name the browser (the GPU host's
``env.sh`` sets them). Usage::

    python -m tools.gpu_features [--variant="--enable-dawn-features=vulkan_enable_f16_on_nvidia"]
                                 [--size 4096] [--reps 20] [--bandwidth MIB,...] [--no-products]
                                 [--gpu-page] [--timeout SECONDS] [--out FILE.json]

Prints one block per flag set and writes the whole result as JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Page function: the adapter's facts, the f16 check and the product timings (gpu_features_probe.js).
PROBE_JS = (Path(__file__).resolve().parent / "gpu_features_probe.js").read_text(encoding="utf-8")


@contextlib.contextmanager
def blank_page_server() -> Iterator[str]:
    """An empty page on 127.0.0.1 (a secure context for WebGPU), served from a thread: the probe
    needs nothing of the project's server, so it runs where only Playwright is installed."""
    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's API
            body = b"<!doctype html><title>gpu features</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def probe(extra_args: list[str], size: int, reps: int, gpu_page: bool, timeout_s: float,
          bandwidth: list[int] = (), products: bool = True) -> dict[str, Any]:
    """Run PROBE_JS in a fresh browser launched with the environment's flags plus ``extra_args``."""
    from playwright.sync_api import sync_playwright

    from tools.chromium import launch_options

    options = launch_options()
    options["args"] = list(options.get("args", [])) + extra_args
    result: dict[str, Any] = {"extraArgs": extra_args}
    with blank_page_server() as base_url, sync_playwright() as p:
        for _ in range(6):  # a fresh browser on some GPU hosts gets no adapter now and then
            browser = p.chromium.launch(headless=True, **options)
            try:
                page = browser.new_page()
                page.set_default_timeout(timeout_s * 1000)
                page.goto(base_url + "/")
                found = page.evaluate(PROBE_JS, {"size": size, "reps": reps, "bandwidth": list(bandwidth), "products": products})
                if found.get("adapter") is None:
                    continue
                result.update(found)
                result["browser"] = browser.version
                if gpu_page:
                    page.goto("chrome://gpu")
                    page.wait_for_timeout(3000)
                    result["chromeGpu"] = page.inner_text("body")
                return result
            finally:
                browser.close()
    result["adapter"] = None
    return result


def print_block(r: dict[str, Any]) -> None:
    print(f"== flags +{shlex.join(r['extraArgs']) or ' (none)'}  browser {r.get('browser', '?')}")
    a = r.get("adapter")
    if not a:
        print("   no WebGPU adapter")
        return
    print(f"   adapter: {a['vendor']} {a['architecture']} {a.get('description') or ''} fallback={a['isFallbackAdapter']}"
          f" subgroups {a.get('subgroupMinSize')}-{a.get('subgroupMaxSize')}")
    print(f"   features: {', '.join(r['features'])}")
    cfgs = [f"{c['componentType']}->{c['resultComponentType']} {c['M']}x{c['N']}x{c['K']}" for c in r["matrixConfigs"]]
    print(f"   subgroup matrix configurations: {', '.join(cfgs) or 'none'}")
    print(f"   shader-f16: {r.get('f16Shader')}")
    for b in r.get("bandwidth", []):
        print(f"   read {b['mib']} MiB ({b['fill']}): " + (f"error {b['error']}" if "error" in b else f"{b['ms']:.4f} ms = {b['gbps']:.1f} GB/s alone, "
                                                                                 f"{b['batchedMs']:.4f} ms = {b['batchedGbps']:.1f} GB/s 20 in a pass"))
    for prod in r.get("products", []):
        if "error" in prod:
            print(f"   {prod['name']}: error {prod['error']}")
        else:
            print(f"   {prod['name']}: {prod['ms']:.3f} ms = {prod['tflops']:.1f} TFLOP/s ({prod['timing']}),"
                  f" max sampled relative error {prod['maxRelError']:.2e}")
    if r.get("errors"):
        print(f"   device errors: {r['errors']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu_features", description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", default=[],
                        help="extra Chromium flags (shell words) for a second, third... browser")
    parser.add_argument("--size", type=int, default=4096, help="n of the n^3 products (multiple of 64)")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--bandwidth", default="", help="MiB sizes of streaming-read buffers to time, e.g. 32,1024")
    parser.add_argument("--no-products", action="store_true", help="skip the timed matrix products")
    parser.add_argument("--gpu-page", action="store_true", help="keep chrome://gpu's text in the JSON")
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results = []
    for extra in [""] + args.variant:
        r = probe(shlex.split(extra), args.size, args.reps, args.gpu_page, args.timeout,
                  [int(v) for v in args.bandwidth.split(",") if v], not args.no_products)
        print_block(r)
        results.append(r)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    return 0 if all(r.get("adapter") for r in results) else 2


if __name__ == "__main__":
    sys.exit(main())
