"""The image-classification demo's GPU profile (``?profile=1``, profile_chart.js): after a
classification the page shows bar charts of GPU ms per operator type and per layer, drawn from
readProfile() of a context in profiling mode, with layers named by the manifest's outputs."""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent.parent / "server" / "models" / "generated" / "efficientnet-lite0" / "manifest.json"


def test_profile_chart_shows_operator_and_layer_bars(webnn_page, server_url):
    manifest = json.loads(MANIFEST.read_text())
    page = webnn_page
    page.goto(server_url + "/demos/image-classification/?runs=1&warmup=0&profile=1")
    page.wait_for_function("() => window.lastRun !== undefined || window.lastError !== undefined", timeout=180_000)
    assert page.evaluate("() => window.lastError") is None
    bars = page.evaluate("""() => ({
      type: [...document.querySelectorAll('#profile-by-type rect.bar')].map((r) => [r.dataset.key, Number(r.dataset.ms)]),
      layer: [...document.querySelectorAll('#profile-by-layer rect.bar')].map((r) => [r.dataset.key, Number(r.dataset.ms)]),
      profile: window.lastProfile})""")
    types = dict(bars["type"])
    assert "conv2d" in types and types["conv2d"] > 0, bars["type"]
    # a fused step (conv2d -> add -> clamp, compile/fusion.js) counts for its producer's type
    assert "gemm" in types, bars["type"]
    assert all(ms > 0 for _, ms in bars["type"]), bars["type"]
    # bars are sorted, the slowest first, and their sum is the profile's total
    assert [ms for _, ms in bars["type"]] == sorted((ms for _, ms in bars["type"]), reverse=True)
    profile = bars["profile"]
    assert abs(sum(types.values()) - profile["totalMs"]) < 1e-6 * max(1.0, profile["totalMs"])
    assert profile["runs"] == 1
    outputs = {op["outputs"] for op in manifest["operators"] if isinstance(op["outputs"], str)}
    assert 0 < len(bars["layer"]) <= 30
    assert all(key in outputs for key, _ in bars["layer"]), bars["layer"][:5]
    step_types = {o["type"] for s in profile["steps"] for o in s["operators"]}
    assert {op["op"] for op in manifest["operators"]} - {"reshape"} <= step_types
