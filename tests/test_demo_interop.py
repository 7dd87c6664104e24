"""The buffer-sharing demo (/demos/interop/) and its benchmark command (tools/bench_interop.py):
the four ways to compute conv2d -> add -> relu agree with float64 NumPy and each other, the page's
automation contract (window.lastRun), its controls, and the printed table and JSON."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.tolerance import assert_abs

#: Odd sizes: a batch of 2, channels not a multiple of the app kernel's 4-channel steps, filters
#: not a multiple of its 8-channel blocks, height and width not multiples of its 16x16 tiles.
SHAPE, FILTERS = [2, 5, 19, 21], 11


def conv_add_relu_f64(x, w, b, r):
    """float64 reference: relu(conv2d(x, w, bias b, padding 1) + r); NCHW, OIHW."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for ky in range(3):
        for kx in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, ky:ky + h, kx:kx + wd], w[:, :, ky, kx])
    return np.maximum(y + b[None, :, None, None] + r, 0)


def open_demo(page, server_url, query):
    page.goto(f"{server_url}/demos/interop/?{query}")
    page.wait_for_function("() => window.lastRun !== undefined || window.lastError !== undefined")
    error = page.evaluate("() => window.lastError")
    assert not error, f"demo failed: {error}"


def test_app_conv2d_and_four_paths_agree_with_numpy(webnn_page, server_url):
    """The demo's first run on load sets window.lastRun; the four outputs match float64 NumPy
    within conv2d's 2*9*C ULP + add's 1 ULP (absolute, at the largest output: relu after an add
    can cancel to ~0, where ULPs vanish) and each other."""
    has_conv = webnn_page.goto(f"{server_url}/harness/") and webnn_page.evaluate(
        "async () => { await import('/polyfill/webnn.js'); return typeof MLGraphBuilder.prototype.conv2d === 'function'; }")
    if not has_conv:
        pytest.skip("MLGraphBuilder.conv2d is not implemented yet (ops/conv2d.js)")
    shape = ",".join(map(str, SHAPE))
    open_demo(webnn_page, server_url, f"shape={shape}&filters={FILTERS}&iterations=2&warmup=1")
    last = webnn_page.evaluate("() => window.lastRun")
    assert [v["id"] for v in last["variants"]] == ["app", "readback", "export", "graph"]
    for v in last["variants"]:
        assert 0 < v["minMs"] <= v["medianMs"] <= v["maxMs"], v
    assert last["agree"] and last["maxAbsDiff"] <= last["tolerance"]
    assert last["adapter"]["vendor"] and last["implementation"] == "polyfill"
    assert set(last["ratios"]) == {"readbackOverExport", "exportOverGraph"}

    run = webnn_page.evaluate(
        "(o) => window.interopDemo.run(o)",
        {"shape": SHAPE, "filters": FILTERS, "iterations": 1, "warmup": 0, "returnData": True})
    data = run["data"]
    n, c, h, wd = SHAPE
    x = np.array(data["x"], np.float32).reshape(SHAPE).astype(np.float64)
    w = np.array(data["w"], np.float32).reshape(FILTERS, c, 3, 3).astype(np.float64)
    b = np.array(data["b"], np.float32).astype(np.float64)
    r = np.array(data["r"], np.float32).reshape(n, FILTERS, h, wd).astype(np.float64)
    expected = conv_add_relu_f64(x, w, b, r)
    ulp = 2.0 ** (np.floor(np.log2(np.abs(expected).max())) - 23)
    atol = (2 * 9 * c + 1) * ulp
    for name, values in data["outputs"].items():
        actual = np.array(values, np.float32).reshape(expected.shape)
        assert_abs(actual, expected, atol, np.float32), name
    assert run["agree"]


def test_demo_controls_choose_size_and_iterations(webnn_page, server_url):
    """The page's controls are buttons (no <select>/<input>: those abort Chromium on a host without
    fonts); choosing shows as aria-pressed, and autorun=0 leaves window.lastRun unset."""
    webnn_page.goto(f"{server_url}/demos/interop/?autorun=0&size=medium&iterations=10")
    webnn_page.wait_for_function("() => window.interopDemo !== undefined || window.lastError !== undefined")
    assert webnn_page.evaluate("() => window.lastError") is None
    assert webnn_page.locator("select, input").count() == 0
    pressed = "() => [...document.querySelectorAll('[aria-pressed=true]')].map((b) => b.textContent)"
    assert webnn_page.evaluate(pressed) == ["medium", "10"]
    webnn_page.get_by_role("button", name="large").click()
    webnn_page.get_by_role("button", name="50").click()
    assert webnn_page.evaluate(pressed) == ["large", "50"]
    assert webnn_page.evaluate("() => window.lastRun") is None


# ----------------------------------------------------------------------------- bench tool


def test_bench_tool_table_and_json(tmp_path, monkeypatch, capsys):
    """tools/bench_interop.py prints the Markdown table with ratios and adapter, and writes the JSON."""
    from tools import bench_interop

    variants = [{"id": i, "name": f"{k} {i}", "medianMs": m, "minMs": m * 0.9, "maxMs": m * 1.5,
                 "p25Ms": m * 0.95, "p75Ms": m * 1.1} for k, (i, m) in
                enumerate([("app", 2.0), ("readback", 9.0), ("export", 3.0), ("graph", 2.8)], 1)]
    fake = {"config": {"shape": [1, 64, 224, 224], "filters": 64, "iterations": 50, "warmup": 5},
            "variants": variants, "maxAbsDiff": 1e-6, "tolerance": 1e-4, "agree": True,
            "ratios": {"readbackOverExport": 3.0, "exportOverGraph": 3.0 / 2.8},
            "expectations": {"exportAtLeast2xFasterThanReadback": True, "exportWithin1_2xOfGraph": True},
            "adapter": {"vendor": "nvidia", "architecture": "hopper", "device": "", "description": "H200"},
            "implementation": "polyfill"}
    monkeypatch.setattr(bench_interop, "bench", lambda *a, **k: dict(fake))
    out = tmp_path / "r" / "interop.json"
    assert bench_interop.main(["--size", "large", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| 3 export | 3.000 | 2.700 | 4.500 | 2.850-3.300 |" in printed
    assert "2/3 (readback / export) = 3.00" in printed and "3/4 (export / one graph) = 1.07" in printed
    assert "adapter: nvidia / hopper / H200" in printed
    written = json.loads(out.read_text())
    assert written["size"] == "large" and written["variants"][2]["medianMs"] == 3.0
    assert bench_interop.page_url("http://h:1", "small", 7, None) == "http://h:1/demos/interop/?size=small&iterations=7"
