"""The LLM rows of ``make bench``: GenAI-style int4 decoders through ORT-web's WebNN EP on this
polyfill, ORT-web's own WebGPU EP and its wasm EP, headless, in one browser run.

Serves the project (``create_app()`` on a free loopback port), opens
``/demos/bench-ort/llm.html`` once and waits for its ``window.lastRun``. Per model x runtime:
time to first token (the prompt's prefill, its logits read back), prefill tokens/s, decode
tokens/s over ``--new-tokens`` greedy steps (every step's logits read back), the weights file's
bytes and the GPU buffer bytes the runtime holds after loading (every ``createBuffer`` not yet
destroyed, counted in the page) and at its peak. The greedy tokens of the runtimes must agree
(and with onnxruntime's CPU EP in this Python, with ``--reference``). Prints a table and the
physical floor per model: the bytes a decode step must read (every MatMulNBits weight, scale and
zero point; the embedding's gather table is read one row at a time) over ``--bandwidth`` as a
tokens/s ceiling. Writes the JSON to ``--out``.

Models (``--models``, folders under server/models/generated/):

- ``tiny``: the test suite's tiny random decoder (``llm_model.write_tiny``, 4-bit), written on use;
- ``smollm2``: SmolLM2-135M-Instruct as ``make llm`` converts it (skipped, saying so, without it);
- ``qwen-shape``: a random int4 decoder of Qwen2.5-0.5B's shape (``tools/llm_random.py``, 545 MB),
  written on first use (about 15 s).

On a software adapter (the SwiftShader flags of ``tools/chromium.py``, i.e. ``$WEBNN_CHROMIUM_ARGS``
unset) the defaults shrink to a 16-token prompt, 8 decode steps and the tiny model alone (SmolLM2's
prefill of 256 rows takes minutes there), and the printout says so; elsewhere they are 128 and 128
on all three models.

Usage::

    python -m tools.bench_llm [--models tiny,smollm2,qwen-shape] [--runtimes webnn-ep,webgpu,wasm]
        [--prompt-tokens 128] [--new-tokens 128] [--max-length L] [--prefill-runs 1] [--bandwidth 4.8e12]
        [--reference] [--threads 1] [--tuning JSON [--tuning JSON ...]] [--interleave ROUNDS] [--profile]
        [--out bench-results/bench-llm.json] [--timeout SECONDS]

``--tuning`` more than once runs the WebNN EP once per switch set, in turn, in the same page
(rows ``webnn-ep``, ``webnn-ep#2``, …): on a GPU whose clock wanders between page runs only a
same-page comparison shows what a switch does (repeat the first set last to bracket drift).
``--interleave ROUNDS`` then times the runtimes' prefills alternately with all of them loaded (the
order reversed every round): the runs one after another give the later runtime a GPU whose clock
the earlier one raised, so only the interleaved times compare TTFT at the same GPU history.

Exit status: 0 when every runtime ran and the greedy tokens agreed, 1 when one failed or
disagreed, 2 when the run itself failed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.bench_page import adapter_line, run_page_retrying, write_run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "server" / "models" / "generated"
#: --models name -> folder under server/models/generated/
FOLDERS = {"tiny": "llm-tiny-bench", "smollm2": "smollm2-135m", "qwen-shape": "qwen-shape-int4"}
RUNTIMES = ("webnn-ep", "webgpu", "wasm")
RUNTIME_LABELS = {"webnn-ep": "ORT-web WebNN EP on the polyfill", "webgpu": "ORT-web WebGPU EP",
                  "wasm": "ORT-web wasm EP"}
#: (prompt tokens, decode steps, models) by default on a hardware GPU and on a software adapter
HARDWARE_DEFAULTS = (128, 128, "tiny,smollm2,qwen-shape")
SOFTWARE_DEFAULTS = (16, 8, "tiny")
#: memory bandwidth (bytes/s) by GPU, for --bandwidth
BANDWIDTHS = {"h200": 4.8e12, "h100": 3.35e12}
DEFAULT_OUT = Path("bench-results/bench-llm.json")


def software_adapter() -> bool:
    """Whether the browser is launched onto SwiftShader (``tools.chromium.launch_options()``)."""
    from tools.chromium import launch_options

    return any("swiftshader" in arg for arg in launch_options().get("args", []))


def prepare(name: str) -> Path | None:
    """The folder of model ``name``, written first when it is generated and missing; None for
    ``smollm2`` without ``make llm``."""
    folder = GENERATED / FOLDERS[name]
    if (folder / "genai_config.json").is_file() and (folder / "model.onnx.data").is_file():
        return folder
    if name == "tiny":
        from tools.llm_model import write_tiny

        write_tiny(folder, bits=4, ff=100)  # an even block count along every K (docs/text-generation.md)
    elif name == "qwen-shape":
        from tools.llm_random import write

        print(f"writing the random Qwen2.5-0.5B-shape int4 decoder into {folder} …", file=sys.stderr)
        write(folder)
    else:
        return None
    return folder


def decode_bytes(folder: Path, max_length: int) -> int:
    """Bytes of every initializer a MatMulNBits node reads (weights, scales, zero points): what
    one decode step must bring from memory at least."""
    import onnx

    model = onnx.load(str(folder / f"model-{max_length}.onnx"), load_external_data=False)
    sizes = {}
    for t in model.graph.initializer:
        external = {e.key: e.value for e in t.external_data}
        sizes[t.name] = int(external["length"]) if "length" in external else len(t.raw_data)
    names = {i for n in model.graph.node if n.op_type == "MatMulNBits" for i in n.input[1:] if i in sizes}
    return sum(sizes[n] for n in names)


def reference_tokens(folder: Path, max_length: int, prompt: list[int], new_tokens: int) -> list[int]:
    """onnxruntime's CPU EP, greedy: the prefill's token and one per decode step."""
    from tools.llm_reference import OrtDecoder

    return OrtDecoder(folder, max_length).generate(prompt, new_tokens + 1)


def page_url(base_url: str, models: list[str], runtimes: list[str], prompt: int, new: int,
             max_length: int | None, prefill_runs: int, threads: int, profile: bool = False,
             tuning: list[dict[str, Any]] | None = None, interleave: int = 0) -> str:
    params = {"models": ",".join(FOLDERS[m] for m in models), "runtimes": ",".join(runtimes), "prompt": prompt,
              "new": new, "prefillRuns": prefill_runs, "webnn": "polyfill", "threads": threads}
    if profile:
        params["profile"] = 1
    if tuning:
        params["tuning"] = json.dumps(tuning[0] if len(tuning) == 1 else tuning, separators=(",", ":"))
    if max_length:
        params["maxLength"] = max_length
    if interleave:
        params["interleave"] = interleave
    if threads > 1:
        params["coi"] = 1
    return f"{base_url}/demos/bench-ort/llm.html?{urlencode(params)}"


def add_agreement(run: dict[str, Any], references: dict[str, list[int]]) -> bool:
    """Per model: ``agree`` per runtime (its greedy tokens equal the first runtime's, or the
    reference's when there is one; ``agreeSteps`` the equal leading tokens), and of its interleaved
    prefills (each one's token the first of those); True when all ran and agreed."""
    ok = True
    for model in run["models"]:
        ran = {n: r for n, r in model["runtimes"].items() if "error" not in r}
        ok = ok and len(ran) == len(model["runtimes"])
        expected = references.get(model["model"])
        if expected is not None:
            model["referenceTokens"] = expected
        elif ran:
            expected = next(iter(ran.values()))["tokens"]
        for r in ran.values():
            same = 0
            while same < min(len(expected), len(r["tokens"])) and r["tokens"][same] == expected[same]:
                same += 1
            r["agreeSteps"], r["agree"] = same, r["tokens"] == expected
            ok = ok and r["agree"]
            if "interleaved" in r:
                inter = r["interleaved"]
                inter["agree"] = bool(inter["tokens"]) and all(t == expected[0] for t in inter["tokens"])
                ok = ok and inter["agree"]
        ok = ok and "interleavedError" not in model
    return ok


#: with this many prefill runs or more the table lists each one's TTFT and the last ones' median
CLOCK_RUNS = 5


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def runtime_label(name: str, r: dict[str, Any]) -> str:
    """The table's name of a run: the runtime's, and for one of several WebNN EP runs (``webnn-ep#2``)
    its number and tuning switches."""
    base, _, number = name.partition("#")
    label = RUNTIME_LABELS.get(base, base) + (f" #{number}" if number else "")
    if "tuning" in r:
        label += f" (tuning {json.dumps(r['tuning'], separators=(',', ':'))})"
    return label


def format_table(run: dict[str, Any]) -> str:
    """Markdown: a table of every model x runtime, then a floor line per model and the setup."""
    cfg = run["config"]
    lines = ["| model | runtime | TTFT ms (prefill rows) | prefill tokens/s | decode tokens/s | weights file MB "
             "| GPU MB after load (× file) | peak GPU MB | greedy tokens agree |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for model in run["models"]:
        for name, r in model["runtimes"].items():
            label = runtime_label(name, r)
            if "error" in r:
                lines.append(f"| {model['name']} | {label} | failed: {r['error'][:160]} | | | | | | |")
                continue
            gpu = (f"{_mb(r['gpuBytesAfterLoad'])} ({r['gpuBytesAfterLoad'] / r['weightFileBytes']:.2f}×)"
                   if name != "wasm" else "—")
            peak = _mb(r["gpuPeakBytes"]) if name != "wasm" else "—"
            agree = "yes" if r["agree"] else f"no: {r['agreeSteps']} of {len(r['tokens'])}"
            lines.append(f"| {model['name']} | {label} | {r['ttftMs']:.1f} ({r['prefillRows']}) | {r['prefillTokensPerS']:.1f} "
                         f"| {r['decodeTokensPerS']:.2f} | {_mb(r['weightFileBytes'])} | {gpu} | {peak} | {agree} |")
    lines.append("")
    for model in run["models"]:
        floor = model["floor"]
        lines.append(f"{model['name']}: floor {_mb(floor['bytesPerToken'])} MB read per decode token "
                     f"(MatMulNBits weights, scales, zero points) / {floor['bandwidth'] / 1e12:.2f} TB/s = "
                     f"{floor['tokensPerS']:,.0f} tokens/s at most"
                     + (" (a GPU's figure: this adapter is a software one, its timings say nothing about a GPU)"
                        if (run.get("adapter") or {}).get("isFallbackAdapter") else ""))
        ort = model["runtimes"].get("webgpu", {})
        # each WebNN EP run (several with repeated --tuning), named where there are several
        polyfills = {n: r for n, r in model["runtimes"].items() if n.startswith("webnn-ep")}
        for name, polyfill in polyfills.items():
            who = f"the polyfill ({runtime_label(name, polyfill)})" if len(polyfills) > 1 else "the polyfill"
            if "gpuBytesPrefillSession" in polyfill:
                largest = ", ".join(_mb(b["bytes"]) for b in polyfill["gpuLargestAfterLoad"][:6])
                lines.append(f"{model['name']}: {who} holds {_mb(polyfill['gpuBytesPrefillSession'])} MB after the "
                             f"prefill session, {_mb(polyfill['gpuBytesAfterLoad'])} MB after the decode session and the KV "
                             f"cache ({_mb(polyfill['cacheBytes'])} MB); largest buffers (MB): {largest}")
            if "contextCalls" in polyfill:
                c = polyfill["contextCalls"]
                lines.append(f"{model['name']}: {who}'s calls (host ms): " + "; ".join(
                    f"{phase} " + ", ".join(f"{n} {v['ms']:.2f} ({v['calls']:g}×)" for n, v in c[phase].items())
                    for phase in ("prefill", "decodeStep")))
        for name, r in model["runtimes"].items():
            times = r.get("ttftTimesMs") or []
            if len(times) >= CLOCK_RUNS:
                # back-to-back prefills raise a GPU's clock: the first ones are a user's first
                # prompt after idle, the last ones the kernel's rate at speed
                lines.append(f"{model['name']}: {runtime_label(name, r)} TTFT of the {len(times)} prefills in "
                             f"turn (ms): {', '.join(f'{t:.1f}' for t in times)}; median of the last {CLOCK_RUNS} "
                             f"{statistics.median(times[-CLOCK_RUNS:]):.1f}")
        lines += interleaved_lines(model)
        for name, r in model["runtimes"].items():
            if name.startswith("webnn-ep") and "decodeTokensPerS" in r and "decodeTokensPerS" in ort:
                lines.append(f"{model['name']}: decode {runtime_label(name, r)} / ORT-web WebGPU EP = "
                             f"{r['decodeTokensPerS'] / ort['decodeTokensPerS']:.2f}×; TTFT {r['ttftMs'] / ort['ttftMs']:.2f}×")
    lines += ["", f"prompt {cfg['prompt']} tokens, {cfg['new']} greedy decode steps after {int(cfg['warmup'])} warm-up "
              f"(prefill and 2 steps), TTFT the median of {cfg['prefillRuns']}; the WebNN EP's prefill runs the shortest "
              f"prefill graph that holds the prompt (its rows in brackets, the prompt padded), ORT's own loops the "
              f"prompt's rows; GPU MB: WebGPU buffers created and not destroyed "
              f"(weights, KV cache, pools); ORT-web {run.get('ortVersion')}; adapter: {adapter_line(run.get('adapter') or {})}"
              + (f"; Chromium {run['browser']}" if run.get("browser") else "")]
    if run.get("softwareDefaults"):
        lines.append("software adapter: the defaults are shrunk (prompt 16, 8 decode steps, the tiny model alone); "
                     "pass --models tiny,smollm2,qwen-shape --prompt-tokens 128 --new-tokens 128 for the full run")
    for skipped in run.get("skipped", []):
        lines.append(f"skipped {skipped}")
    return "\n".join(lines)


def interleaved_lines(model: dict[str, Any]) -> list[str]:
    """The interleaved prefills of a model (``--interleave``): each run's TTFTs and median, and the
    WebNN EP runs' median over ORT's WebGPU EP's."""
    name = model["name"]
    if "interleavedError" in model:
        return [f"{name}: interleaved prefills failed: {model['interleavedError']}"]
    runs = {n: r["interleaved"] for n, r in model["runtimes"].items() if "interleaved" in r}
    if not runs:
        return []
    rounds = len(next(iter(runs.values()))["ttftTimesMs"])
    lines = [f"{name}: interleaved TTFT ({rounds} rounds of one prefill each, the order reversed every round): " + "; ".join(
        f"{runtime_label(n, model['runtimes'][n])} median {r['ttftMs']:.1f} ms ({', '.join(f'{t:.1f}' for t in r['ttftTimesMs'])})"
        + ("" if r.get("agree", True) else " TOKENS DIFFER") for n, r in runs.items())]
    ort = runs.get("webgpu")
    for n, r in runs.items():
        if n.startswith("webnn-ep") and ort:
            lines.append(f"{name}: interleaved TTFT {runtime_label(n, model['runtimes'][n])} / ORT-web WebGPU EP = "
                         f"{r['ttftMs'] / ort['ttftMs']:.2f}×")
    return lines


def format_profiles(run: dict[str, Any]) -> str:
    """Per model and graph: steps, GPU ms per dispatch (profiled), the slowest steps and the
    kernels' and operators' shares."""
    lines = []
    for model in run["models"]:
        profile = model.get("profile") or {}
        if "graphs" not in profile:
            lines.append(f"\n{model['name']}: no profile: {profile.get('error') or profile.get('skipped')}")
            continue
        for g in profile["graphs"]:
            lines.append(f"\n{model['name']}, {g['rows']}-row graph: {g['steps']} steps, {g['totalMs']:.3f} GPU ms a dispatch "
                         f"(profiled, mean of {g['runs']})")
            for s in g["slowest"]:
                lines.append(f"  {s['ms']:8.3f} ms  #{s['index']:<4} {s['kernel']:<28} {'x'.join(map(str, s['workgroups']))}"
                             f"x{s['workgroupSize']}  {'+'.join(s['operators'])}")
            for key in ("byKernel", "byOperator"):
                lines.append(f"  {key}: " + ", ".join(f"{t['name']} {t['ms']:.3f} ({t['steps']})" for t in g[key][:8]))
    return "\n".join(lines)


def bench(models: list[str], runtimes: list[str], prompt: int, new: int, max_length: int | None, prefill_runs: int,
          threads: int, timeout_s: float, launches: int = 3, profile: bool = False,
          tuning: list[dict[str, Any]] | None = None, interleave: int = 0) -> dict[str, Any]:
    """Run the page once in a fresh headless browser; its ``window.lastRun`` plus ``browser``."""
    from playwright.sync_api import sync_playwright

    from server.app import create_app
    from tests.live_server import serve_in_thread

    with serve_in_thread(create_app()) as base_url, sync_playwright() as p:
        return run_page_retrying(p, page_url(base_url, models, runtimes, prompt, new, max_length, prefill_runs, threads, profile,
                                          tuning, interleave),
                                 timeout_s, launches, "bench-llm")


def _names(parser, value: str, known, option: str) -> list[str]:
    names = [n for n in value.split(",") if n]
    if not names or any(n not in known for n in names):
        parser.error(f"{option} takes a comma list of {', '.join(known)}; got {value!r}")
    return names


def _bandwidth(value: str) -> float:
    return BANDWIDTHS[value.lower()] if value.lower() in BANDWIDTHS else float(value)


def _tuning(text: str) -> dict[str, Any]:
    """--tuning: a JSON object (its switches are checked by the polyfill's createContext)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f'expected a JSON object of tuning switches, e.g. \'{{"splitK": 2}}\': {text!r}')
    return value


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_llm", description=__doc__.splitlines()[0])
    parser.add_argument("--models", help=f"comma list of {', '.join(FOLDERS)} (default: {HARDWARE_DEFAULTS[2]}; "
                                         f"{SOFTWARE_DEFAULTS[2]} on SwiftShader)")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES), help=f"comma list (default: all): {', '.join(RUNTIMES)}")
    parser.add_argument("--prompt-tokens", type=int, help="prompt length (default 128; 16 on SwiftShader)")
    parser.add_argument("--new-tokens", type=int, help="greedy decode steps (default 128; 8 on SwiftShader)")
    parser.add_argument("--max-length", type=int, help="the model-<L>.onnx graph (default: the smallest >= prompt + new)")
    parser.add_argument("--prefill-runs", type=int, default=1,
                        help=f"timed prefills, the median kept (default 1; from {CLOCK_RUNS} on each one is listed too)")
    parser.add_argument("--bandwidth", type=_bandwidth, default=BANDWIDTHS["h200"],
                        help="memory bandwidth in bytes/s for the floor, or h200 (4.8e12, the default) / h100 (3.35e12)")
    parser.add_argument("--reference", action="store_true",
                        help="also greedy-decode with onnxruntime's CPU EP here; the runtimes must equal it")
    parser.add_argument("--threads", type=int, default=1, help="wasm EP threads (more serves the page cross-origin isolated)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the page run")
    parser.add_argument("--launches", type=int, default=3, help="browser launches when no adapter is found")
    parser.add_argument("--tuning", type=_tuning, action="append", default=None,
                        help="JSON object of the polyfill's tuning switches for the WebNN EP's context (e.g. '{\"splitK\": 2}'); "
                             "given more than once, the WebNN EP runs once per object in the same page (webnn-ep, webnn-ep#2, …)")
    parser.add_argument("--interleave", type=int, default=0, metavar="ROUNDS",
                        help="then load every run together and time ROUNDS prefills of each, alternating, the order "
                             "reversed every round: a time to first token at the same GPU history for all")
    parser.add_argument("--profile", action="store_true",
                        help="then profile the polyfill's prefill and decode graphs (GPU ms per step) and print the slowest")
    args = parser.parse_args(argv)
    software = software_adapter()
    defaults = SOFTWARE_DEFAULTS if software else HARDWARE_DEFAULTS
    prompt = args.prompt_tokens or defaults[0]
    new = args.new_tokens or defaults[1]
    models = _names(parser, args.models or defaults[2], tuple(FOLDERS), "--models")
    runtimes = _names(parser, args.runtimes, RUNTIMES, "--runtimes")
    if args.interleave < 0:
        parser.error("--interleave takes a number of rounds >= 0")
    if (args.tuning or args.profile) and "webnn-ep" not in runtimes:
        parser.error("--tuning and --profile concern the webnn-ep runtime; add it to --runtimes")
    skipped, folders = [], {}
    try:
        for name in models:
            folder = prepare(name)
            if folder is None:
                skipped.append(f"{name}: no {GENERATED.relative_to(ROOT) / FOLDERS[name]}/ (run make llm first)")
            else:
                folders[name] = folder
        if not folders:
            raise FileNotFoundError("no model to run: " + "; ".join(skipped))
        run = bench(list(folders), runtimes, prompt, new, args.max_length, args.prefill_runs, args.threads, args.timeout,
                    args.launches, args.profile, args.tuning, args.interleave)
        references = {}
        for model in run["models"]:
            name = next(n for n in folders if FOLDERS[n] == model["model"])
            model["name"], folder = name, folders[name]
            floor = decode_bytes(folder, model["maxLength"])
            model["floor"] = {"bytesPerToken": floor, "bandwidth": args.bandwidth, "tokensPerS": args.bandwidth / floor}
            if args.reference:
                references[model["model"]] = reference_tokens(folder, model["maxLength"], model["prompt"], new)
    except Exception as exc:  # noqa: BLE001 - any failure of the run itself is exit status 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    run["skipped"], run["softwareDefaults"] = skipped, software and not (args.prompt_tokens or args.new_tokens or args.models)
    ok = add_agreement(run, references)
    print(format_table(run))
    if args.profile:
        print(format_profiles(run))
    write_run(run, args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
