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


# ----------------------------------------------------------------------------- URL parameters

#: Counts the page's WebGPU entry points (requestAdapter, and createBuffer on any device), so a test
#: can tell that a rejected URL or option created no GPU object.
COUNT_GPU_CALLS = """
window.gpuCalls = {requestAdapter: 0, createBuffer: 0};
if (navigator.gpu) {
  const requestAdapter = navigator.gpu.requestAdapter.bind(navigator.gpu);
  navigator.gpu.requestAdapter = (...a) => { window.gpuCalls.requestAdapter++; return requestAdapter(...a); };
  const createBuffer = GPUDevice.prototype.createBuffer;
  GPUDevice.prototype.createBuffer = function (...a) { window.gpuCalls.createBuffer++; return createBuffer.apply(this, a); };
}
"""

#: (query, a part of the message the page must show: numbers as numbers, other text quoted). The first three are the tester's reports:
#: a TypeError on toFixed, a raw createBuffer error, and a zero-size binding warning.
BAD_URLS = [
    ("iterations=0", "iterations must be an integer from 1 to 1000; got 0"),
    ("shape=a,b", 'shape must be 4 comma-separated integers N,C,H,W; got "a,b"'),
    ("shape=1,0,4,4", "shape C must be an integer from 1 to 1024; got 0"),
    ("shape=1,x,4,4", 'shape C must be an integer from 1 to 1024; got "x"'),
    ("shape=1,1,1,1,1", 'shape must be 4 comma-separated integers N,C,H,W; got "1,1,1,1,1"'),
    ("shape=1,-2,4,4", 'shape C must be an integer from 1 to 1024; got "-2"'),
    ("shape=64,1024,4096,4096", "shape 64×1024×4096×4096 has 1,099,511,627,776 elements, more than 16,777,216"),
    ("shape=1,1,4096,4096&filters=2", "the output 1×2×4096×4096 has 33,554,432 elements, more than 16,777,216"),
    ("shape=1,1,1,5000", "shape W must be an integer from 1 to 4096; got 5000"),
    ("iterations=2.5", 'iterations must be an integer from 1 to 1000; got "2.5"'),
    ("iterations=1e3", 'iterations must be an integer from 1 to 1000; got "1e3"'),
    ("iterations=", 'iterations must be an integer from 1 to 1000; got ""'),
    ("iterations=1001", 'iterations must be an integer from 1 to 1000; got 1001'),
    ("iterations=%205", 'iterations must be an integer from 1 to 1000; got " 5"'),
    ("warmup=-1", 'warmup must be an integer from 0 to 100; got "-1"'),
    ("filters=0", 'filters must be an integer from 1 to 1024; got 0'),
    ("size=huge", 'size must be one of small, medium, large; got "huge"'),
    ("autorun=yes", 'autorun must be 0 or 1; got "yes"'),
    ("iteration=5", 'unknown parameter "iteration" (accepted: size, shape, filters, iterations, warmup, autorun)'),
    ("iterations=5&iterations=6", "iterations is given 2 times; give it once"),
]


@pytest.mark.parametrize("query, message", BAD_URLS, ids=[q for q, _ in BAD_URLS])
def test_bad_url_parameter_is_reported_before_any_gpu_work(webnn_page, server_url, query, message):
    """A bad URL parameter stops the page with its message (window.lastError, a RangeError, and the
    status line), logs no console error or warning, and creates no GPU object: no requestAdapter."""
    console = []
    webnn_page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    webnn_page.add_init_script(COUNT_GPU_CALLS)
    webnn_page.goto(f"{server_url}/demos/interop/?{query}")
    webnn_page.wait_for_function("() => window.lastRun !== undefined || window.lastError !== undefined")
    error = webnn_page.evaluate("() => window.lastError")
    assert error["name"] == "RangeError" and message in error["message"], error
    status = webnn_page.locator("#status")
    assert message in status.text_content() and status.get_attribute("class") == "bad"
    assert webnn_page.evaluate("() => window.gpuCalls") == {"requestAdapter": 0, "createBuffer": 0}
    assert webnn_page.evaluate("() => window.interopDemo === undefined && window.lastRun === undefined")
    assert webnn_page.locator("#controls button:enabled").count() == 0
    assert [line for line in console if line.split(":")[0] in ("error", "warning")] == []


def test_every_problem_of_a_url_is_listed(webnn_page, server_url):
    """All problems at once, so one reload fixes them."""
    webnn_page.goto(f"{server_url}/demos/interop/?iterations=0&warmup=x&shape=1,0,4,4")
    webnn_page.wait_for_function("() => window.lastError !== undefined")
    message = webnn_page.evaluate("() => window.lastError.message")
    assert message == ('invalid URL parameters: shape C must be an integer from 1 to 1024; got 0; '
                       'iterations must be an integer from 1 to 1000; got 0; '
                       'warmup must be an integer from 0 to 100; got "x"')


def test_page_documents_the_accepted_ranges(webnn_page, server_url):
    """The #parameters section lists every parameter the page reads with its range, and the limits
    it states are params.js's; boundary values (output exactly 2^24 elements) parse to numbers."""
    webnn_page.goto(f"{server_url}/demos/interop/?autorun=0&size=large&iterations=1000&warmup=0")
    webnn_page.wait_for_function("() => window.interopDemo !== undefined || window.lastError !== undefined")
    assert webnn_page.evaluate("() => window.lastError") is None
    terms = webnn_page.locator("#parameters dt").all_text_contents()
    assert terms == ["size=small | medium | large", "shape=N,C,H,W", "filters=integer", "iterations=integer",
                     "warmup=integer", "autorun=0 | 1"]
    text = webnn_page.locator("#parameters").text_content()
    for part in ["N 1 to 64, C 1 to 1024, H 1 to 4096, W 1 to 4096", "at most 16,777,216 (2^24) elements",
                 "output channels O, 1 to 1024", "1 to 1000", "untimed runs of each variant first, 0 to 100",
                 "large (1×64×224×224, 64 filters, 50 iterations after 5 warm-up)"]:
        assert part in text, part
    parsed = webnn_page.evaluate("""async () => (await import('/demos/interop/params.js')).parseUrlParameters(
        new URLSearchParams('shape=64,1,16,16&filters=1024&iterations=1&warmup=100&autorun=0'))""")
    assert parsed == {"size": "custom", "shape": [64, 1, 16, 16], "filters": 1024, "iterations": 1,
                      "warmup": 100, "autorun": False}


def test_run_rejects_options_out_of_range_before_any_gpu_buffer(webnn_page, server_url):
    """window.interopDemo.run() checks its options like the URL: shape [1, 0, 4, 4] rejects with a
    RangeError before a buffer is created (no 'Binding size is zero' warning), shown on the page."""
    console = []
    webnn_page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    webnn_page.add_init_script(COUNT_GPU_CALLS)
    webnn_page.goto(f"{server_url}/demos/interop/?autorun=0")
    webnn_page.wait_for_function("() => window.interopDemo !== undefined || window.lastError !== undefined")
    assert webnn_page.evaluate("() => window.lastError") is None
    before = webnn_page.evaluate("() => window.gpuCalls.createBuffer")
    for options, message in [
        ({"shape": [1, 0, 4, 4]}, "shape C must be an integer from 1 to 1024; got 0"),
        ({"iterations": 0}, "iterations must be an integer from 1 to 1000; got 0"),
        ({"shape": [1, 2, 4], "filters": 1.5}, "shape must be 4 integers N,C,H,W; got 3 values; filters must be"),
    ]:
        error = webnn_page.evaluate(
            "(o) => window.interopDemo.run(o).then(() => null, (e) => ({name: e.name, message: e.message}))", options)
        assert error["name"] == "RangeError" and message in error["message"], (options, error)
        assert message in webnn_page.locator("#status").text_content()
    assert webnn_page.evaluate("() => window.gpuCalls.createBuffer") == before
    assert [line for line in console if line.split(":")[0] in ("error", "warning")] == []


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
