"""``python -m tools.bench_llm`` end to end on the tiny random decoder: the WebNN EP on the
polyfill, ORT-web's WebGPU EP and its wasm EP in one headless page, with a few tokens. Every
runtime's greedy tokens must equal onnxruntime's CPU EP (``--reference``, this Python) and hence
each other's; the table is printed and the JSON holds the timings and GPU bytes; with ``--profile``
and ``--tuning``, the polyfill's graphs' steps under those switches. The tool runs as a user runs
it, in a process of its own (Playwright's sync API cannot start inside the suite's own).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tools.bench_llm import decode_bytes, prepare

ROOT = Path(__file__).resolve().parent.parent
PROMPT, NEW = 6, 5


def test_bench_llm_runtimes_agree_on_the_tiny_decoder(tmp_path):
    """Also ``--interleave 2``: the three runtimes' prefills timed in turn with all of them loaded,
    the second round in reverse order, each prefill's token the reference's first."""
    out = tmp_path / "bench-llm.json"
    done = subprocess.run([sys.executable, "-m", "tools.bench_llm", "--models", "tiny", "--prompt-tokens", str(PROMPT),
                           "--new-tokens", str(NEW), "--reference", "--bandwidth", "h100", "--timeout", "120",
                           "--interleave", "2", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    run = json.loads(out.read_text(encoding="utf-8"))
    (model,) = run["models"]
    reference = model["referenceTokens"]
    assert len(reference) == NEW + 1 and len(set(reference)) > 2  # a varied continuation
    assert list(model["runtimes"]) == ["webnn-ep", "webgpu", "wasm"]
    for name, r in model["runtimes"].items():
        assert "error" not in r, (name, r)
        assert r["tokens"] == reference, name
        assert r["ttftMs"] > 0 and r["decodeTokensPerS"] > 0 and r["prefillRows"] in (PROMPT, model["maxLength"])
        assert r["weightFileBytes"] == (prepare("tiny") / "model.onnx.data").stat().st_size
    # the WebNN EP's prefill runs the padded max_length rows; ORT's own loops the prompt's rows
    assert model["runtimes"]["webnn-ep"]["prefillRows"] == model["maxLength"] == 16
    assert model["runtimes"]["wasm"]["prefillRows"] == PROMPT
    # the polyfill holds at least the weights and its KV cache pairs on the GPU
    polyfill = model["runtimes"]["webnn-ep"]
    assert polyfill["gpuBytesAfterLoad"] >= polyfill["cacheBytes"] + decode_bytes(prepare("tiny"), 16)
    assert model["floor"]["bandwidth"] == 3.35e12
    assert model["floor"]["bytesPerToken"] == decode_bytes(prepare("tiny"), 16)
    assert "| tiny | ORT-web WebNN EP on the polyfill |" in done.stdout and "tiny: floor" in done.stdout
    assert model["interleavedOrder"] == ["webnn-ep", "webgpu", "wasm", "wasm", "webgpu", "webnn-ep"]
    for name, r in model["runtimes"].items():
        inter = r["interleaved"]
        assert inter["tokens"] == [reference[0]] * 2 and inter["agree"], name
        assert len(inter["ttftTimesMs"]) == 2 and abs(inter["ttftMs"] - sum(inter["ttftTimesMs"]) / 2) < 1e-9, name
    assert "tiny: interleaved TTFT (2 rounds of one prefill each, the order reversed every round): " \
           "ORT-web WebNN EP on the polyfill median" in done.stdout, done.stdout
    assert "tiny: interleaved TTFT ORT-web WebNN EP on the polyfill / ORT-web WebGPU EP = " in done.stdout, done.stdout


def test_bench_llm_profiles_the_polyfill_with_its_tuning(tmp_path):
    """``--profile`` profiles the polyfill's prefill and decode graphs (their steps' kernels) and the
    timed runs count the polyfill's calls; ``--tuning`` reaches the WebNN EP's context: with a
    scatterSearchMax of 1, a decode step's cache writes take the copy, claim and write steps. A
    second ``--tuning`` runs the WebNN EP again in the same page under its switches, as its own row."""
    out = tmp_path / "bench-llm.json"
    done = subprocess.run([sys.executable, "-m", "tools.bench_llm", "--models", "tiny", "--runtimes", "webnn-ep",
                           "--prompt-tokens", str(PROMPT), "--new-tokens", str(NEW), "--profile",
                           "--tuning", '{"scatterSearchMax": 1}', "--tuning", '{"scatterSearchMax": 1, "gatedPairs": false}',
                           "--timeout", "120", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    (model,) = json.loads(out.read_text(encoding="utf-8"))["models"]
    graphs = {g["rows"]: g for g in model["profile"]["graphs"]}
    assert sorted(graphs) == [1, model["runtimes"]["webnn-ep"]["prefillRows"]], graphs.keys()
    for g in graphs.values():
        assert g["runs"] > 0 and g["steps"] == sum(k["steps"] for k in g["byKernel"]) and g["totalMs"] > 0
    kernels = {k["name"] for k in graphs[1]["byKernel"]}
    assert "scatterND_claim" in kernels and not any(k.startswith("scatterND_search") for k in kernels), kernels
    calls = model["runtimes"]["webnn-ep"]["contextCalls"]
    # a decode step is one dispatch and one readTensor (the logits) of the polyfill
    assert calls["decodeStep"]["dispatch"]["calls"] == 1 and calls["decodeStep"]["readTensor"]["calls"] == 1, calls
    assert f"{model['name']}, 1-row graph:" in done.stdout and "'s calls (host ms)" in done.stdout
    runs = model["runtimes"]
    assert list(runs) == ["webnn-ep", "webnn-ep#2"], list(runs)
    assert runs["webnn-ep#2"]["tuning"] == {"scatterSearchMax": 1, "gatedPairs": False}
    assert runs["webnn-ep#2"]["tokens"] == runs["webnn-ep"]["tokens"] and runs["webnn-ep#2"]["agree"]
    # the second set reached its run's context: without gated pairs the gate+up products keep no
    # pairing buffer, so the plans differ in GPU bytes (the first set's are the same otherwise)
    assert runs["webnn-ep#2"]["gpuBytesAfterLoad"] != runs["webnn-ep"]["gpuBytesAfterLoad"], runs
    assert '| ORT-web WebNN EP on the polyfill #2 (tuning {"scatterSearchMax":1,"gatedPairs":false}) |' in done.stdout, done.stdout


def test_bench_llm_lists_each_prefill_from_five_runs():
    """With --prefill-runs 5 or more the printout lists every prefill's TTFT in turn and the last
    five's median (the GPU's clock rises over back-to-back prefills); with fewer, only the median.
    The bandwidth floor is said to be a GPU's figure when the adapter is a software one."""
    from tools.bench_llm import format_table

    def run(times, fallback=False):
        r = {"ttftMs": 20.0, "ttftTimesMs": times, "prefillRows": 128, "prefillTokensPerS": 6400.0,
             "decodeTokensPerS": 100.0, "weightFileBytes": 10**8, "gpuBytesAfterLoad": 1.1e8, "gpuPeakBytes": 1.2e8,
             "agree": True, "agreeSteps": 3, "tokens": [1, 2, 3]}
        return {"config": {"prompt": 128, "new": 2, "warmup": True, "prefillRuns": len(times)}, "ortVersion": "1.30.0",
                "adapter": {"vendor": "nvidia", "isFallbackAdapter": fallback},
                "models": [{"name": "m", "runtimes": {"webnn-ep": r},
                            "floor": {"bytesPerToken": 1e8, "bandwidth": 3.35e12, "tokensPerS": 33500.0}}]}

    text = format_table(run([40.0, 30.0, 20.0, 11.0, 10.0, 10.5, 9.0]))
    assert "m: ORT-web WebNN EP on the polyfill TTFT of the 7 prefills in turn (ms): 40.0, 30.0, 20.0, 11.0, 10.0, " \
           "10.5, 9.0; median of the last 5 10.5" in text, text
    assert "prefills in turn" not in format_table(run([40.0, 30.0, 20.0]))
    assert "a GPU's figure" not in text
    assert "tokens/s at most (a GPU's figure: this adapter is a software one" in format_table(run([9.0], fallback=True))
