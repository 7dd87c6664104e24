"""One benchmark of every model x runtime: our MLGraphBuilder code (WebGPU and the CPU context),
ONNX Runtime Web's WebNN EP on this polyfill, ORT-web's JSEP WebGPU EP, its native WebGPU EP and
its wasm EP, headless, in one browser run (``make bench``); ``builder-fp16`` runs our builder
code on the same graph in float16 (held to FP16_TOLERANCE).

Serves the project (``create_app()`` on a free loopback port), opens ``/demos/bench-ort/`` once
(``?models=...&runtimes=...&runs=N&warmup=N&batch=N&profile=0|1&webnn=polyfill``), waits for the
page's ``window.lastRun``, compares every runtime's output with onnxruntime's (this Python, CPU
EP) on the same ``input.bin``, prints a table per model and writes all of it as JSON.

Per model x runtime: latency (input upload + run + read back; median/min/max of ``--runs`` after
``--warmup``, the runtimes alternating run by run), throughput (``--batch`` back-to-back runs, the
output left on the device, then one read back: inferences/s and ms per inference),
build/session time, graphs built and dispatches per run (MLGraphBuilder.prototype.build and
MLContext.prototype.dispatch are counted in the page; GPU steps for the polyfill's WebGPU graphs),
and the largest |output - onnxruntime CPU|. ``--profile`` also profiles our builder paths (float32, and
float16 where builder-fp16 runs; ``/polyfill/profiling.js``): the JSON keeps every step (ms, kernel, workgroups), the printout
shows the 10 slowest and the GPU time per kernel.

Models: by default the three ``make setup`` writes: ``efficientnet-lite0`` (trained weights,
converted), ``mobilenetv2`` and ``bert-encoder`` (random weights, ``tools/bench_models.py``); on
request also ``bert-base``, ``bert-base-512`` and ``bert-base-opset14`` (BERT-base with its layer
norms written out, model.onnx at opset 14), whose 340 MB of weights are generated on the first run
that asks for them (numpy + onnx, no download). Each gets ``model.onnx`` (``tools/export_onnx.py``)
and ``input.bin``. ``--install`` (or ``--install-only``, what ``make setup`` runs) fetches
onnxruntime-web with npm into ``static/demos/bench-ort/vendor/`` (git-ignored; only the files the
page loads) and ORT's wasm build into ``static/polyfill/vendor/ort/``.

The browser is configured like the test suite's (``tools.chromium.launch_options()``:
``$WEBNN_CHROMIUM``, ``$WEBNN_CHROMIUM_ARGS``). A run that finds no WebGPU adapter is retried in a
new browser (``--launches``); ``--runtimes cpu,wasm`` needs no adapter.

Usage::

    python -m tools.bench_ort [--models efficientnet-lite0,mobilenetv2,bert-encoder]
        [--runtimes builder,builder-fp16,webnn-ep,jsep,webgpu,cpu,wasm] [--runs 3] [--warmup 1] [--batch 4] [--profile]
        [--out bench-results/bench.json] [--doc [JSON]] [--install] [--timeout SECONDS]

``--doc`` rewrites the table of docs/performance.md (between ``<!-- bench-table:begin -->`` and
``<!-- bench-table:end -->``) from the JSON (``--out``'s, or the file given) without running.
Exit status: 0 when every runtime ran and agreed with onnxruntime within its model's tolerance,
1 when one disagreed or failed, 2 when the run itself failed.
"""


from __future__ import annotations

import argparse
import base64
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np

if __package__ in (None, ""):  # run as a file (python tools/...): the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.bench_page import adapter_line, run_page_retrying, write_run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "demos" / "bench-ort" / "vendor"
ORT_VERSION = "1.30.0"
#: ORT build name -> the files of onnxruntime-web's dist/ that the page loads for it
ORT_FILES = {
    "jsep": ("ort.min.mjs", "ort-wasm-simd-threaded.jsep.mjs", "ort-wasm-simd-threaded.jsep.wasm"),
    "webgpu": ("ort.webgpu.min.mjs", "ort-wasm-simd-threaded.asyncify.mjs",
               "ort-wasm-simd-threaded.asyncify.wasm"),
}
#: the CPU context's engine (static/polyfill/cpu/session.js): ORT's wasm-only build, in the polyfill's
#: own folder so that a copy of static/polyfill/ carries it
POLYFILL_VENDOR = ROOT / "static" / "polyfill" / "vendor" / "ort"
POLYFILL_ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
DEFAULT_OUT = Path("bench-results/bench.json")


def install_ort(version: str = ORT_VERSION, vendor: Path = VENDOR, polyfill_vendor: Path = POLYFILL_VENDOR) -> None:
    """``npm install onnxruntime-web@version`` in a scratch folder; copy ORT_FILES into ``vendor``
    and POLYFILL_ORT_FILES (the CPU context's engine) into ``polyfill_vendor``.

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
        polyfill_vendor.mkdir(parents=True, exist_ok=True)
        for name in POLYFILL_ORT_FILES:
            shutil.copyfile(dist / name, polyfill_vendor / name)
        (polyfill_vendor / "VERSION").write_text(f"onnxruntime-web {version}\n", encoding="utf-8")



MODELS = ("efficientnet-lite0", "mobilenetv2", "bert-encoder", "bert-base", "bert-base-512", "bert-base-opset14")
#: what make bench runs: the models make setup writes (BERT-base's 340 MB are opt-in)
DEFAULT_MODELS = ("efficientnet-lite0", "mobilenetv2", "bert-encoder")
RUNTIMES = ("builder", "builder-fp16", "webnn-ep", "jsep", "webgpu", "cpu", "wasm")
RUNTIME_LABELS = {"builder": "our MLGraphBuilder code", "builder-fp16": "our builder code, the model in float16",
                  "webnn-ep": "ORT-web WebNN EP on the polyfill",
                  "jsep": "ORT-web WebGPU (JSEP)", "webgpu": "ORT-web native WebGPU EP",
                  "cpu": "our builder code, CPU context", "wasm": "ORT-web wasm EP"}
#: largest |runtime - onnxruntime CPU| accepted per model (float32 on GPUs, different summation order)
#: (BERT-base: 12 layers of float32 products with K up to 3072 between layer norms)
TOLERANCE = {"efficientnet-lite0": 1e-4, "mobilenetv2": 1e-3, "bert-encoder": 1e-3, "bert-base": 3e-3,
             "bert-base-512": 3e-3, "bert-base-opset14": 3e-3}
#: the same for the float16 copy of a model (binary16 rounding at every operator's output): about
#: 5x the differences docs/performance.md records; the default for models without a record
FP16_TOLERANCE = {"efficientnet-lite0": 0.005, "mobilenetv2": 0.04, "bert-encoder": 0.03, "bert-encoder-opset14": 0.03}
FP16_DEFAULT_TOLERANCE = 0.1


def tolerance(model: str, runtime: str) -> float:
    """The largest |output - onnxruntime CPU| accepted for ``runtime`` on ``model``."""
    if runtime == "builder-fp16":
        return FP16_TOLERANCE.get(model, FP16_DEFAULT_TOLERANCE)
    return TOLERANCE.get(model, 1e-3)
#: the document whose measured table --doc rewrites
DOC = ROOT / "docs" / "performance.md"
MARKERS = ("<!-- bench-table:begin -->", "<!-- bench-table:end -->")


def prepare_model(name: str) -> Path:
    """The folder of model ``name`` with manifest.json, weights.bin, model.onnx and input.bin
    (generated or exported when missing or stale: ``tools.bench_models.prepare``)."""
    from tools.bench_models import prepare

    return prepare(name)


def reference_output(folder: Path) -> np.ndarray:
    """onnxruntime (CPU EP) output of ``folder``'s model.onnx on its input.bin, flattened float32."""
    import onnxruntime

    from tools.bench_models import INPUT_FILE

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    (name, spec), = manifest["inputs"].items()
    x = np.fromfile(folder / INPUT_FILE, "<f4").reshape(spec["shape"])
    session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    return session.run([manifest["outputs"][0]], {name: x})[0].ravel()


def page_url(base_url: str, models: list[str], runtimes: list[str], runs: int, warmup: int, batch: int,
             profile: bool, submit_steps: str | None = None, threads: int = 1,
             kernel_overrides: str | None = None, completion: str | None = None,
             context_slots: str | None = None) -> str:
    """The benchmark page URL (the parameters static/demos/bench-ort/bench.js reads); more than
    one thread makes the page cross-origin isolated (``coi=1``: COOP/COEP from the server)."""
    params = {"models": ",".join(models), "runtimes": ",".join(runtimes), "runs": runs, "warmup": warmup,
              "batch": batch, "profile": int(profile), "webnn": "polyfill", "threads": threads}
    if threads > 1:
        params["coi"] = 1
    if submit_steps:
        params["submitSteps"] = submit_steps
    if kernel_overrides:
        params["kernelOverrides"] = kernel_overrides
    if completion:
        params["completion"] = completion
    if context_slots:
        params["slots"] = context_slots
    query = urlencode(params)
    return f"{base_url}/demos/bench-ort/?{query}"


def add_differences(run: dict[str, Any], references: dict[str, np.ndarray]) -> bool:
    """Replace each runtime's ``output`` (base64) by ``maxAbsDiff`` against ``references`` and set
    ``agree``; returns True when every runtime ran and agreed."""
    ok = True
    for model in run["models"]:
        ref = references[model["model"]]
        model["tolerance"] = TOLERANCE.get(model["model"], 1e-3)
        for name, result in model["runtimes"].items():
            if "error" in result:
                ok = False
                continue
            got = np.frombuffer(base64.b64decode(result.pop("output")), "<f4")
            diff = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
            result["maxAbsDiff"] = diff
            result["tolerance"] = tolerance(model["model"], name)
            result["agree"] = diff <= result["tolerance"]
            ok = ok and result["agree"]
    return ok


def format_tables(run: dict[str, Any]) -> str:
    """Markdown: one table per model (a row per runtime), then the configuration and adapter."""
    cfg = run["config"]
    lines = []
    for model in run["models"]:
        lines += ["", f"**{model['model']}** ({'x'.join(map(str, model['inputShape']))} float32, "
                  f"{model['operators']} operators)", "",
                  "| runtime | latency median (min–max) ms | back-to-back ms/inference | inferences/s "
                  "| build/session ms | graphs built, dispatches/run (GPU steps) | max abs diff vs onnxruntime CPU |",
                  "|---|---:|---:|---:|---:|---|---:|"]
        for name, r in model["runtimes"].items():
            label = RUNTIME_LABELS.get(name, name)
            if name == "builder-fp16" and "matrixUnits" in r:  # where the polyfill's float16 products ran
                units = r["matrixUnits"]
                label += f" (matrix units {units['M']}x{units['N']}x{units['K']})" if units else " (no matrix units)"
            if "error" in r:
                lines.append(f"| {label} | failed: {r['error'][:120]} | | | | | |")
                continue
            lat, batch = r["latency"], r["batch"]
            calls = (f"{r['calls']['builds']}, {r['calls']['dispatchesPerRun']}"
                     if name in ("builder", "builder-fp16", "webnn-ep", "cpu") else "—")
            if r["calls"].get("gpuSteps"):
                calls += f" ({r['calls']['gpuSteps']} GPU steps)"
            diff = f"{r['maxAbsDiff']:.2g}" + ("" if r["agree"] else " (over tolerance)")
            lines.append(f"| {label} | {lat['medianMs']:.2f} ({lat['minMs']:.2f}–{lat['maxMs']:.2f}) "
                         f"| {batch['perInferenceMs']:.2f} | {batch['inferencesPerS']:.1f} | {r['setupMs']:.0f} "
                         f"| {calls} | {diff} |")
        issue = [f"{name} every {r['batch']['dispatchIntervalMs']:.2f} ms (mean {r['batch']['inDispatchMs']:.2f} ms inside it)"
                 for name, r in model["runtimes"].items() if "dispatchIntervalMs" in r.get("batch", {})]
        if issue:
            lines += ["", "Back to back, the page called dispatch() (mean interval): " + ", ".join(issue) + "."]
    browser = run.get("browser", "")
    lines += ["", f"{cfg['runs']} timed runs after {cfg['warmup']} warm-up, runtimes alternating; back-to-back: "
              f"{cfg['batch']} runs then one read; ORT-web {run.get('ortVersion') or '(not loaded)'}; cpu/wasm threads: {cfg.get('threads', 1)}; adapter: "
              f"{adapter_line(run.get('adapter') or {})}"
              + (f" (features: {', '.join(run['adapter']['features'])})" if (run.get('adapter') or {}).get('features') else "") + (f"; Chromium {browser}" if browser else "")
              + (f"; submitSteps {cfg['submitSteps']}" if cfg.get("submitSteps") else "")
              + (f"; kernelOverrides {json.dumps(cfg['kernelOverrides'])}" if cfg.get("kernelOverrides") else "")
              + (f"; completion {json.dumps(cfg['completion'])}" if cfg.get("completion") else "")
              + (f"; context slots {json.dumps(cfg['slots'])}" if cfg.get("slots") else "")]
    return "\n".join(lines).lstrip("\n")


#: what the profile printout calls each profiled runtime
PROFILED = {"builder": "our builder path", "builder-fp16": "our builder path in float16"}


def format_profiles(run: dict[str, Any], top: int = 10) -> str:
    """Per profiled model and builder runtime (float32, float16): its ``top`` slowest GPU steps and
    the GPU time per kernel (steps, ms, share of the total), slowest first; or why there is no
    profile."""
    lines = []
    for model in run["models"]:
        for runtime, profile in (model.get("profiles") or {}).items():
            lines += _profile_lines(model["model"], PROFILED.get(runtime, runtime), profile, top)
    return "\n".join(lines)


def _profile_lines(model: str, path: str, profile: dict[str, Any], top: int) -> list[str]:
    if "skipped" in profile:
        return [f"{model}: profile of {path} skipped: {profile['skipped']}"]
    total = profile["totalMs"]
    lines = [f"{model}: top GPU steps of {path} ({profile['runs']} runs, "
             f"{total:.2f} ms in all, {len(profile['steps'])} steps)"]
    for step in sorted(profile["steps"], key=lambda s: -s["ms"])[:top]:
        ops = ", ".join(o.get("label") or o.get("type", "?") for o in step.get("operators", []))
        groups = "x".join(str(g) for g in step.get("workgroups", [])) or "?"
        lines.append(f"  #{step['index']:<4} {step['ms']:8.3f} ms  {step['kernel']} [{groups} groups]  "
                     f"{step['name']}  [{ops}]")
    kernels: dict[str, list[float]] = {}
    for step in profile["steps"]:
        kernels.setdefault(step["kernel"], []).append(step["ms"])
    lines.append("  per kernel: " + "; ".join(
        f"{k} {len(v)}x {sum(v):.3f} ms ({100 * sum(v) / total if total else 0:.0f}%)"
        for k, v in sorted(kernels.items(), key=lambda kv: -sum(kv[1]))))
    return lines


def update_table(run: dict[str, Any], doc: Path = DOC) -> None:
    """Replace the text between MARKERS in ``doc`` by ``format_tables(run)``.

    Raises:
        ValueError: the markers are missing.
    """
    text = doc.read_text(encoding="utf-8")
    begin, end = MARKERS
    if begin not in text or end not in text:
        raise ValueError(f"{doc} lacks the markers {begin} ... {end}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{begin}\n{format_tables(run)}\n{end}{tail}", encoding="utf-8")


def bench(models: list[str], runtimes: list[str], runs: int, warmup: int, batch: int, profile: bool,
          timeout_s: float, launches: int = 3, submit_steps: str | None = None, threads: int = 1,
          kernel_overrides: str | None = None, completion: str | None = None,
          context_slots: str | None = None) -> dict[str, Any]:
    """Run the page once in a fresh headless browser (retrying a missing adapter); returns its
    ``window.lastRun`` plus ``browser`` and ``wallSeconds``."""
    from playwright.sync_api import sync_playwright

    from server.app import create_app
    from tests.live_server import serve_in_thread

    with serve_in_thread(create_app()) as base_url, sync_playwright() as p:
        return run_page_retrying(p, page_url(base_url, models, runtimes, runs, warmup, batch, profile, submit_steps, threads,
                                                     kernel_overrides, completion, context_slots),
                                 timeout_s, launches, "bench")


def _names(parser, value: str, known: tuple[str, ...], option: str) -> list[str]:
    names = [n for n in value.split(",") if n]
    if not names or any(n not in known for n in names):
        parser.error(f"{option} takes a comma list of {', '.join(known)}; got {value!r}")
    return names


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_ort", description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true",
                        help=f"npm install onnxruntime-web@{ORT_VERSION} into {VENDOR.relative_to(ROOT)} first")
    parser.add_argument("--install-only", action="store_true",
                        help="only install onnxruntime-web (what make setup runs), then exit")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help=f"comma list (default: {','.join(DEFAULT_MODELS)}): {', '.join(MODELS)}")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES), help=f"comma list (default: all): {', '.join(RUNTIMES)}")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per runtime (default 3; SwiftShader-sized)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs per runtime first (default 1)")
    parser.add_argument("--batch", type=int, default=4, help="back-to-back runs for the throughput (default 4)")
    parser.add_argument("--profile", action="store_true", help="profile our builder paths (builder, builder-fp16 where they run): the 10 slowest GPU steps and the time per kernel (every step in the JSON)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--doc", nargs="?", const="", metavar="JSON",
                        help=f"only rewrite {DOC.relative_to(ROOT)}'s table from JSON (default: --out's file)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the page run")
    parser.add_argument("--launches", type=int, default=3, help="browser launches when no adapter is found")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of the cpu and wasm runtimes (default 1; more serves the page cross-origin isolated)")
    parser.add_argument("--submit-steps", metavar="N|doubling",
                        help="set every polyfill context's submitSteps slot (compile/plan.js), a measuring knob")
    parser.add_argument("--kernel-overrides", metavar="JSON",
                        help="merge this object into every polyfill context's kernelOverrides slot "
                             "(e.g. '{\"attention\": false}'), a measuring knob")
    parser.add_argument("--completion", metavar="JSON",
                        help="assign this object to the settings of every polyfill context's completion slot "
                             "(gpu/completion.js, e.g. '{\"enabled\": false}'), a measuring knob")
    parser.add_argument("--slots", metavar="JSON",
                        help="assign this object to every polyfill GPU context's slots (e.g. "
                             "'{\"faultInReads\": false, \"stageWrites\": false}'), a measuring knob")
    args = parser.parse_args(argv)
    for option in ("kernel_overrides", "completion", "slots"):
        value = getattr(args, option)
        if value:
            try:
                if not isinstance(json.loads(value), dict):
                    raise ValueError
            except ValueError:
                parser.error(f"--{option.replace('_', '-')} takes a JSON object; got {value!r}")
    if args.doc is not None:
        source = Path(args.doc) if args.doc else args.out
        update_table(json.loads(source.read_text(encoding="utf-8")))
        print(f"updated {DOC.relative_to(ROOT)} from {source}")
        return 0
    models = _names(parser, args.models, MODELS, "--models")
    runtimes = _names(parser, args.runtimes, RUNTIMES, "--runtimes")
    try:
        if args.install or args.install_only:
            install_ort()
            if args.install_only:
                print(f"installed onnxruntime-web {ORT_VERSION} into {VENDOR}")
                return 0
        missing = [f for files in ORT_FILES.values() for f in files if not (VENDOR / f).exists()]
        if missing and set(runtimes) - {"builder", "builder-fp16", "cpu", "wasm"}:
            raise FileNotFoundError(f"{VENDOR} lacks {', '.join(missing)}: run with --install once")
        references = {name: reference_output(prepare_model(name)) for name in models}
        run = bench(models, runtimes, args.runs, args.warmup, args.batch, args.profile, args.timeout, args.launches,
                    args.submit_steps, args.threads, args.kernel_overrides, args.completion, args.slots)
    except Exception as exc:  # noqa: BLE001 - report any failure as exit status 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    ok = add_differences(run, references)
    print(format_tables(run))
    if args.profile:
        print()
        print(format_profiles(run))
    write_run(run, args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
