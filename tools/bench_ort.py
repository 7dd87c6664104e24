"""Benchmark EfficientNet-Lite0 through the WebNN polyfill and ONNX Runtime Web (WebGPU) headless.

Serves the project (``create_app()`` on a free loopback port), opens
``/demos/bench-ort/?ort=<build>&runs=N&warmup=N&webnn=polyfill`` in headless Chromium through
Playwright once per ORT build, waits for the page's ``window.lastRun``, prints a table and writes
all runs as JSON. Both runtimes run the same network on the same random input in the same page;
one timed run is input upload + inference + output readback.

Before the first run: ``--install`` fetches ``onnxruntime-web@ORT_VERSION`` with npm and copies
the few files the page loads into ``static/demos/bench-ort/vendor/`` (git-ignored, never
committed), and ``model.onnx`` is made next to the manifest (``tools/export_onnx.py``) when it is
missing (needs the ``onnx`` package, the ``bench`` extra).

The browser is configured like the test suite's (``tools.chromium.launch_options()``); on the GPU
host ``. /root/gpu/env.sh`` sets it up (``shared/gpu-chrome/README.md``). A run that fails for
want of a WebGPU adapter is retried in a new browser (``--launches``).

Usage::

    python -m tools.bench_ort [--install] [--ort jsep,webgpu] [--runs 20] [--warmup 5]
                              [--out bench-results/ort.json] [--timeout SECONDS]

Builds: ``jsep`` = ``ort.min.mjs`` (the JSEP WebGPU execution provider), ``webgpu`` =
``ort.webgpu.min.mjs`` (the native WebGPU execution provider). Exit status: 0 when every run
finished and the two outputs agree within 1e-3, 1 when they disagree, 2 when a run failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

if __package__ in (None, ""):  # run as a file (python tools/...): the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.bench_page import adapter_line, run_page_retrying  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "demos" / "bench-ort" / "vendor"
MANIFEST = ROOT / "server" / "models" / "generated" / "efficientnet-lite0" / "manifest.json"
ORT_VERSION = "1.30.0"
#: ORT build name -> the files of onnxruntime-web's dist/ that the page loads for it
ORT_FILES = {
    "jsep": ("ort.min.mjs", "ort-wasm-simd-threaded.jsep.mjs", "ort-wasm-simd-threaded.jsep.wasm"),
    "webgpu": ("ort.webgpu.min.mjs", "ort-wasm-simd-threaded.asyncify.mjs",
               "ort-wasm-simd-threaded.asyncify.wasm"),
}
DEFAULT_OUT = Path("bench-results/ort.json")


def install_ort(version: str = ORT_VERSION, vendor: Path = VENDOR) -> None:
    """``npm install onnxruntime-web@version`` in a scratch folder; copy ORT_FILES into ``vendor``.

    Raises:
        FileNotFoundError: npm is not on PATH; subprocess.CalledProcessError: npm failed.
    """
    npm = shutil.which("npm")
    if not npm:
        raise FileNotFoundError("npm is not on PATH (needed once for --install)")
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", scratch,
                        f"onnxruntime-web@{version}"], check=True)
        dist = Path(scratch) / "node_modules" / "onnxruntime-web" / "dist"
        vendor.mkdir(parents=True, exist_ok=True)
        for name in sorted({f for files in ORT_FILES.values() for f in files}):
            shutil.copyfile(dist / name, vendor / name)
        (vendor / "VERSION").write_text(f"onnxruntime-web {version}\n", encoding="utf-8")


def ensure_model(manifest: Path = MANIFEST) -> Path:
    """``model.onnx`` next to ``manifest``, exported first when it is missing or older."""
    model = manifest.parent / "model.onnx"
    if not model.exists() or model.stat().st_mtime < manifest.stat().st_mtime:
        from tools.export_onnx import export

        export(manifest, model)
    return model


def page_url(base_url: str, build: str, runs: int, warmup: int) -> str:
    """The benchmark page URL for one ORT build (the parameters the page reads)."""
    query = urlencode({"ort": build, "runs": runs, "warmup": warmup, "webnn": "polyfill"})
    return f"{base_url}/demos/bench-ort/?{query}"


def format_table(runs: list[dict[str, Any]], browser: str = "") -> str:
    """The runs as a Markdown table (one WebNN and one ORT row per ORT build), then the adapter."""
    lines = ["| runtime | median ms | min ms | max ms | setup ms | max abs diff | top-1 |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for run in runs:
        label = {"jsep": "JSEP", "webgpu": "native WebGPU EP"}.get(run["ortBuild"], run["ortBuild"])
        w, o = run["webnn"], run["ort"]
        diff = f"{run['maxAbsDiff']:.2g}" + ("" if run["agree"] else " (DISAGREE)")
        lines.append(f"| WebNN polyfill ({run['implementation']}) | {w['medianMs']:.2f} | {w['minMs']:.2f} "
                     f"| {w['maxMs']:.2f} | build {w['buildMs']:.0f} | {diff} | {run['top1']['webnn']} |")
        lines.append(f"| ORT-web {run['ortVersion']} webgpu ({label}) | {o['medianMs']:.2f} | {o['minMs']:.2f} "
                     f"| {o['maxMs']:.2f} | session {o['sessionMs']:.0f} | | {run['top1']['ort']} |")
    first = runs[0]
    cfg = first["config"]
    lines += ["", f"{cfg['model']} {'x'.join(map(str, cfg['inputShape']))} float32, random input (seed "
              f"{cfg['seed']}); {cfg['runs']} timed runs (upload + run + readback, alternating) after "
              f"{cfg['warmup']} warm-up; tolerance {first['tolerance']:g}",
              f"adapter: {adapter_line(first.get('adapter') or {})}" + (f"; {browser}" if browser else "")]
    return "\n".join(lines)


def bench(builds: list[str], runs: int, warmup: int, timeout_s: float, launches: int = 3) -> list[dict[str, Any]]:
    """Run the page once per ORT build, each in a fresh headless browser (retrying a missing adapter).

    Returns:
        The pages' ``window.lastRun`` objects plus ``browser`` (version) and ``wallSeconds``.

    Raises:
        tools.bench_page.BenchError: every launch of some build failed; the last error is the message.
    """
    from playwright.sync_api import sync_playwright

    from server.app import create_app
    from tests.live_server import serve_in_thread

    with serve_in_thread(create_app()) as base_url, sync_playwright() as p:
        return [run_page_retrying(p, page_url(base_url, build, runs, warmup), timeout_s, launches, build)
                for build in builds]


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_ort", description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true",
                        help=f"npm install onnxruntime-web@{ORT_VERSION} into {VENDOR.relative_to(ROOT)} first")
    parser.add_argument("--install-only", action="store_true",
                        help="only install onnxruntime-web (what make setup runs), then exit")
    parser.add_argument("--ort", default="jsep,webgpu", help="comma-separated ORT builds: jsep, webgpu")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per runtime (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs per runtime first (default 5)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds to wait for each page run")
    parser.add_argument("--launches", type=int, default=3, help="browser launches when no adapter is found")
    args = parser.parse_args(argv)
    builds = [b for b in args.ort.split(",") if b]
    unknown = [b for b in builds if b not in ORT_FILES]
    if unknown or not builds:
        parser.error(f"--ort takes {', '.join(ORT_FILES)}; got {args.ort!r}")
    try:
        if args.install or args.install_only:
            install_ort()
            if args.install_only:
                print(f"installed onnxruntime-web {ORT_VERSION} into {VENDOR}")
                return 0
        missing = [f for b in builds for f in ORT_FILES[b] if not (VENDOR / f).exists()]
        if missing:
            raise FileNotFoundError(f"{VENDOR} lacks {', '.join(missing)}: run with --install once")
        ensure_model()
        runs = bench(builds, args.runs, args.warmup, args.timeout, args.launches)
    except Exception as exc:  # noqa: BLE001 - report any failure as exit status 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(format_table(runs, runs[0].get("browser", "")))
    for run in runs:
        for line in run.get("consoleErrors") or []:
            print(f"warning: browser console error ({run['ortBuild']}): {line}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"runs": runs}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if all(r["agree"] for r in runs) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
