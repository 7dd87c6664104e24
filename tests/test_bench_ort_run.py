"""``python -m tools.bench_ort`` end to end on one small model: the CPU runtimes alone (the
command for machines without a GPU, which needs no adapter) and our builder code on WebGPU, each a
real headless run whose outputs must agree with onnxruntime's CPU EP. The tool runs as a user runs
it, in a process of its own (Playwright's sync API cannot start inside the suite's own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = "bert-encoder"  # written by make setup; 2 layers, 18 GPU steps


def _bench(tmp_path, runtimes: str) -> tuple[dict, str]:
    """The tool's JSON result's runtimes of MODEL, and what it printed."""
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, "-m", "tools.bench_ort", "--models", MODEL, "--runtimes", runtimes,
                           "--runs", "2", "--warmup", "0", "--batch", "2", "--timeout", "300", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    run = json.loads(out.read_text(encoding="utf-8"))
    (model,) = run["models"]
    assert model["model"] == MODEL and list(model["runtimes"]) == runtimes.split(",")
    for name, result in model["runtimes"].items():
        assert result["agree"], (name, result)
        assert result["latency"]["medianMs"] > 0 and result["batch"]["n"] == 2
    return model["runtimes"], done.stdout


def test_cpu_and_wasm_runtimes(tmp_path):
    """``--runtimes cpu,wasm``: our builder code on the CPU context (one dispatch per run, no GPU
    steps: its graph is an ONNX Runtime session) and ORT-web's wasm EP."""
    runtimes, printed = _bench(tmp_path, "cpu,wasm")
    assert runtimes["cpu"]["calls"] == {"builds": 1, "dispatchesPerRun": 1}
    assert "calls" in runtimes["wasm"] and runtimes["wasm"]["calls"]["dispatchesPerRun"] == 0
    assert "| our builder code, CPU context |" in printed and "| ORT-web wasm EP |" in printed


def test_builder_runtime(tmp_path):
    """``--runtimes builder``: our builder code on WebGPU, one graph, one dispatch a run, its plan's
    GPU steps counted."""
    runtimes, _ = _bench(tmp_path, "builder")
    calls = runtimes["builder"]["calls"]
    assert calls["builds"] == 1 and calls["dispatchesPerRun"] == 1 and calls["gpuSteps"] >= 1
