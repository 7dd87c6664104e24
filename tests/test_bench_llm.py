"""``python -m tools.bench_llm`` end to end on the tiny random decoder: the WebNN EP on the
polyfill, ORT-web's WebGPU EP and its wasm EP in one headless page, with a few tokens. Every
runtime's greedy tokens must equal onnxruntime's CPU EP (``--reference``, this Python) and hence
each other's; the table is printed and the JSON holds the timings and GPU bytes. The tool runs as a
user runs it, in a process of its own (Playwright's sync API cannot start inside the suite's own).
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
    out = tmp_path / "bench-llm.json"
    done = subprocess.run([sys.executable, "-m", "tools.bench_llm", "--models", "tiny", "--prompt-tokens", str(PROMPT),
                           "--new-tokens", str(NEW), "--reference", "--bandwidth", "h100", "--timeout", "120",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=240)
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
