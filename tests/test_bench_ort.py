"""tools/bench_ort.py's reporting: differences against onnxruntime, the table, the README rewrite.

No browser: a page result (``window.lastRun``) is written by hand with known outputs.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from tools.bench_ort import MARKERS, add_differences, format_tables, update_readme


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


def test_a_failed_runtime_fails_the_run():
    ref = np.zeros(3, np.float32)
    run = _run({"builder": ref})
    run["models"][0]["runtimes"]["webnn-ep"] = {"error": "NotSupportedError: nope"}
    assert not add_differences(run, {"mobilenetv2": ref})
    assert "| ORT-web WebNN EP on the polyfill | failed: NotSupportedError: nope |" in format_tables(run)
    run = _run({"builder": ref})
    assert add_differences(run, {"mobilenetv2": ref})


def test_readme_table_is_replaced_between_the_markers(tmp_path):
    ref = np.zeros(3, np.float32)
    run = _run({"builder": ref})
    add_differences(run, {"mobilenetv2": ref})
    readme = tmp_path / "README.md"
    begin, end = MARKERS
    readme.write_text(f"intro\n{begin}\nold table\n{end}\noutro\n")
    update_readme(run, readme)
    text = readme.read_text()
    assert "old table" not in text and text.startswith("intro\n") and text.endswith(f"{end}\noutro\n")
    assert "**mobilenetv2**" in text.split(begin)[1].split(end)[0]
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        update_readme(run, readme)
