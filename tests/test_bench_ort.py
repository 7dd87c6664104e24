"""tools/bench_ort.py's reporting: differences against onnxruntime, the table, the docs table rewrite.

No browser: a page result (``window.lastRun``) is written by hand with known outputs.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from tools import bench_ort
from tools.bench_ort import MARKERS, add_differences, format_tables, update_table


def _result(output: np.ndarray, **extra) -> dict:
    return {"setupMs": 12.0, "latency": {"medianMs": 3.5, "minMs": 3.0, "maxMs": 9.0, "timesMs": [3.0, 3.5, 9.0]},
            "batch": {"n": 4, "totalMs": 8.0, "perInferenceMs": 2.0, "inferencesPerS": 500.0},
            "calls": {"builds": 1, "dispatchesPerRun": 1},
            "output": base64.b64encode(output.astype("<f4").tobytes()).decode(), **extra}


def _run(outputs: dict[str, np.ndarray]) -> dict:
    return {"adapter": {"vendor": "nvidia"}, "ortVersion": "1.30.0", "browser": "156",
            "config": {"runs": 3, "warmup": 1, "batch": 4},
            "models": [{"model": "mobilenetv2", "inputShape": [1, 3, 224, 224], "operators": 100,
                        "runtimes": {name: _result(o) for name, o in outputs.items()}}]}


def test_differences_against_the_reference():
    ref = np.array([1.0, -2.0, 3.0], np.float32)
    run = _run({"builder": ref + np.float32(5e-4), "jsep": ref - np.float32(0.01)})
    assert not add_differences(run, {"mobilenetv2": ref})
    runtimes = run["models"][0]["runtimes"]
    assert runtimes["builder"]["maxAbsDiff"] == pytest.approx(5e-4, rel=1e-3) and runtimes["builder"]["agree"]
    assert runtimes["jsep"]["maxAbsDiff"] == pytest.approx(0.01, rel=1e-3) and not runtimes["jsep"]["agree"]
    assert "output" not in runtimes["builder"]
    table = format_tables(run)
    assert "| our MLGraphBuilder code | 3.50 (3.00–9.00) | 2.00 | 500.0 | 12 | 1, 1 | 0.0005 |" in table
    assert "0.01 (over tolerance)" in table
    assert "adapter: nvidia" in table


def test_the_float16_copy_has_the_float16_tolerance():
    """builder-fp16 (the model in float16) is held to its FP16_TOLERANCE, the others to the model's;
    its row says whether the products ran on the matrix units."""
    ref = np.array([1.0, -2.0, 3.0], np.float32)
    off = ref + np.float32(0.03)
    run = _run({"builder-fp16": off, "builder": off})
    run["models"][0]["runtimes"]["builder-fp16"]["matrixUnits"] = {"M": 16, "N": 8, "K": 16}
    assert not add_differences(run, {"mobilenetv2": ref})
    runtimes = run["models"][0]["runtimes"]
    assert runtimes["builder-fp16"]["agree"] and not runtimes["builder"]["agree"]
    assert runtimes["builder-fp16"]["tolerance"] == bench_ort.FP16_TOLERANCE["mobilenetv2"]
    assert ("| our builder code, the model in float16 (matrix units 16x8x16) | 3.50 (3.00–9.00) | 2.00 | 500.0 | 12 | 1, 1 | 0.03 |"
            in format_tables(run))
    run = _run({"builder-fp16": ref + np.float32(2 * bench_ort.FP16_TOLERANCE["mobilenetv2"])})
    run["models"][0]["runtimes"]["builder-fp16"]["matrixUnits"] = None
    assert not add_differences(run, {"mobilenetv2": ref})
    assert "| our builder code, the model in float16 (no matrix units) |" in format_tables(run)


def test_a_failed_runtime_fails_the_run():
    ref = np.zeros(3, np.float32)
    run = _run({"builder": ref})
    run["models"][0]["runtimes"]["webnn-ep"] = {"error": "NotSupportedError: nope"}
    assert not add_differences(run, {"mobilenetv2": ref})
    assert "| ORT-web WebNN EP on the polyfill | failed: NotSupportedError: nope |" in format_tables(run)
    run = _run({"builder": ref})
    assert add_differences(run, {"mobilenetv2": ref})


def test_doc_table_is_replaced_between_the_markers(tmp_path):
    ref = np.zeros(3, np.float32)
    run = _run({"builder": ref})
    add_differences(run, {"mobilenetv2": ref})
    readme = tmp_path / "performance.md"
    begin, end = MARKERS
    readme.write_text(f"intro\n{begin}\nold table\n{end}\noutro\n")
    update_table(run, readme)
    text = readme.read_text()
    assert "old table" not in text and text.startswith("intro\n") and text.endswith(f"{end}\noutro\n")
    assert "**mobilenetv2**" in text.split(begin)[1].split(end)[0]
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        update_table(run, readme)


def test_bert_base_is_generated_only_on_request(monkeypatch, tmp_path):
    """``python -m tools.bench_models`` without --model (what make setup runs) writes only the
    suite's small models and EfficientNet-Lite0's model.onnx / input.bin, so the benchmark's default
    models all exist after make setup; BERT-base (340 MB) is in the benchmark's model list, generated
    by it only when asked for."""
    from tools import bench_models, bench_ort

    (tmp_path / "manifest.json").write_text('{"operators": []}')
    (tmp_path / "weights.bin").write_bytes(b"")
    written, prepared = [], []
    monkeypatch.setattr(bench_models, "generate", lambda name, **kw: written.append(name) or tmp_path / "manifest.json")
    monkeypatch.setattr(bench_models, "prepare", lambda name, **kw: prepared.append(name) or tmp_path)
    assert bench_models.main([]) == 0
    assert written == list(bench_models.DEFAULT_MODELS) == ["mobilenetv2", "bert-encoder", "bert-encoder-opset14"]
    assert prepared == ["efficientnet-lite0"]
    assert set(bench_ort.DEFAULT_MODELS) <= set(bench_models.DEFAULT_MODELS) | set(bench_models.CONVERTED_MODELS)
    assert not {"bert-base", "bert-base-512", "bert-base-opset14"} & set(bench_ort.DEFAULT_MODELS)
    written.clear()
    assert bench_models.main(["--model", "bert-base-512"]) == 0 and written == ["bert-base-512"]
    assert {"bert-base", "bert-base-512", "bert-base-opset14"} <= set(bench_ort.MODELS) <= (
        set(bench_models.MODELS) | {"efficientnet-lite0"})
    # adding models changed no existing model's random stream
    assert bench_models.SEED_STREAM["bert-encoder"] == 0 and bench_models.SEED_STREAM["mobilenetv2"] == 1


def test_kernel_overrides_reach_the_page_and_the_table():
    """``--kernel-overrides`` goes to the page as JSON (bench.js merges it into every polyfill
    context's kernelOverrides slot), is named under the table, and must be a JSON object."""
    url = bench_ort.page_url("http://h", ["bert-base"], ["builder"], 3, 1, 4, False,
                             kernel_overrides='{"attention": false}')
    query = parse_qs(urlparse(url).query)
    assert json.loads(query["kernelOverrides"][0]) == {"attention": False}
    assert "kernelOverrides" not in parse_qs(urlparse(bench_ort.page_url("http://h", ["bert-base"], ["builder"],
                                                                      3, 1, 4, False)).query)
    run = _run({"builder": np.zeros(3, np.float32)})
    add_differences(run, {"mobilenetv2": np.zeros(3, np.float32)})
    run["config"]["kernelOverrides"] = {"attention": False}
    assert 'kernelOverrides {"attention": false}' in bench_ort.format_tables(run)
    with pytest.raises(SystemExit):
        bench_ort.main(["--kernel-overrides", "[1]", "--models", "bert-base"])


def test_completion_settings_reach_the_page_and_the_table():
    """``--completion`` goes to the page as JSON (bench.js assigns it to every polyfill context's
    completion settings), is named under the table, and must be a JSON object."""
    url = bench_ort.page_url("http://h", ["bert-base"], ["builder"], 3, 1, 4, False, completion='{"enabled": false}')
    assert json.loads(parse_qs(urlparse(url).query)["completion"][0]) == {"enabled": False}
    assert "completion" not in parse_qs(urlparse(bench_ort.page_url("http://h", ["bert-base"], ["builder"],
                                                                 3, 1, 4, False)).query)
    run = _run({"builder": np.zeros(3, np.float32)})
    add_differences(run, {"mobilenetv2": np.zeros(3, np.float32)})
    run["config"]["completion"] = {"intervalMs": 0.5}
    assert 'completion {"intervalMs": 0.5}' in bench_ort.format_tables(run)
    with pytest.raises(SystemExit):
        bench_ort.main(["--completion", "true", "--models", "bert-base"])


def test_context_slots_reach_the_page_and_the_table():
    """``--slots`` goes to the page as JSON (bench.js assigns it to every polyfill GPU context's
    slots, e.g. to turn off faultInReads / stageWrites), is named under the table, and must be a
    JSON object."""
    url = bench_ort.page_url("http://h", ["bert-base"], ["builder"], 3, 1, 4, False,
                             context_slots='{"faultInReads": false, "stageWrites": false}')
    assert json.loads(parse_qs(urlparse(url).query)["slots"][0]) == {"faultInReads": False, "stageWrites": False}
    assert "slots" not in parse_qs(urlparse(bench_ort.page_url("http://h", ["bert-base"], ["builder"], 3, 1, 4, False)).query)
    run = _run({"builder": np.zeros(3, np.float32)})
    add_differences(run, {"mobilenetv2": np.zeros(3, np.float32)})
    run["config"]["slots"] = {"stageWrites": False}
    assert 'context slots {"stageWrites": false}' in bench_ort.format_tables(run)
    with pytest.raises(SystemExit):
        bench_ort.main(["--slots", "[]", "--models", "bert-base"])


def test_dispatch_issue_rate_is_printed_for_webnn_runtimes():
    """Back-to-back runs of the WebNN runtimes report how fast the page called dispatch() (mean
    ms between calls, mean ms inside one); runtimes without them (ORT's own EPs) print nothing."""
    run = _run({"builder": np.zeros(3, np.float32), "webnn-ep": np.zeros(3, np.float32), "jsep": np.zeros(3, np.float32)})
    run["models"][0]["runtimes"]["builder"]["batch"].update(dispatchIntervalMs=0.2, inDispatchMs=0.05)
    run["models"][0]["runtimes"]["webnn-ep"]["batch"].update(dispatchIntervalMs=0.61, inDispatchMs=0.123)
    add_differences(run, {"mobilenetv2": np.zeros(3, np.float32)})
    text = format_tables(run)
    assert ("Back to back, the page called dispatch() (mean interval): builder every 0.20 ms (mean 0.05 ms "
            "inside it), webnn-ep every 0.61 ms (mean 0.12 ms inside it).") in text
    assert "jsep every" not in text
    del run["models"][0]["runtimes"]["builder"]["batch"]["dispatchIntervalMs"]
    del run["models"][0]["runtimes"]["webnn-ep"]["batch"]["dispatchIntervalMs"]
    assert "called dispatch()" not in format_tables(run)


def test_profile_printout_sorts_steps_and_sums_kernels():
    """--profile: the 10 slowest of all steps with their launch sizes, and the time per kernel."""
    steps = [{"index": i, "name": f"s{i}", "kernel": "matmul_tiled" if i % 2 else "layer_norm",
              "operators": [{"type": "matmul", "label": ""}], "workgroups": [i + 1, 1, 1], "workgroupSize": 256,
              "ms": 0.01 * (i + 1)} for i in range(12)]
    half = [dict(s, ms=s["ms"] / 2) for s in steps]
    run = {"models": [{"model": "bert-base", "profiles": {
        "builder": {"runs": 3, "totalMs": sum(s["ms"] for s in steps), "steps": steps},
        "builder-fp16": {"runs": 3, "totalMs": sum(s["ms"] for s in half), "steps": half}}},
        {"model": "mobilenetv2", "profiles": {"builder": {"skipped": "no module"}}}, {"model": "x"}]}
    lines = bench_ort.format_profiles(run).splitlines()
    assert lines[0] == "bert-base: top GPU steps of our builder path (3 runs, 0.78 ms in all, 12 steps)"
    assert lines[1].split()[:5] == ["#11", "0.120", "ms", "matmul_tiled", "[12x1x1"]
    assert len([ln for ln in lines[:12] if ln.startswith("  #")]) == 10 and "#0 " not in "\n".join(lines)
    # odd indices (2, 4, ..., 12 hundredths) are the matmuls: 0.42 of 0.78 ms
    assert lines[11] == "  per kernel: matmul_tiled 6x 0.420 ms (54%); layer_norm 6x 0.360 ms (46%)"
    assert lines[12] == "bert-base: top GPU steps of our builder path in float16 (3 runs, 0.39 ms in all, 12 steps)"
    assert lines[23] == "  per kernel: matmul_tiled 6x 0.210 ms (54%); layer_norm 6x 0.180 ms (46%)"
    assert lines[24] == "mobilenetv2: profile of our builder path skipped: no module"
