"""ONNX Runtime Web's WebNN execution provider as a real client of this polyfill.

The harness page (polyfill installed) wraps ``MLGraphBuilder.prototype.build`` and
``MLContext.prototype.dispatch`` to count calls, then loads onnxruntime-web (``ort.min.mjs``
from the git-ignored ``static/demos/bench-ort/vendor/``, installed by ``make setup``) and runs
the random-weight MobileNetV2 (``tools/bench_models.py``: manifest -> ``model.onnx``) through
``executionProviders: [{name: 'webnn', deviceType: 'gpu'}]`` with ORT's CPU fallback disabled,
twice on the same input. The logits must equal onnxruntime's (Python, CPU EP) within 1e-4, ORT
must have built exactly one WebNN graph (the whole model, no partition left to another EP) and
issue exactly one dispatch per run.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from tests.graph_runner import run_js
from tools.bench_models import INPUT_FILE, generate

REPO = Path(__file__).resolve().parent.parent
VENDOR = REPO / "static" / "demos" / "bench-ort" / "vendor"
#: |WebNN EP on the polyfill - onnxruntime CPU| bound on each logit (the brief's bound)
ATOL = 1e-4
RUNS = 2

_BODY = """
const {countWebNNCalls, setUpOrt, ortVersion} = await import('/demos/bench-ort/runtimes.js');
const counts = countWebNNCalls();
const base = '/models/mobilenetv2/';
const [manifest, weights, model, input] = await Promise.all([
  fetch(base + 'manifest.json').then((r) => r.json()),
  fetch(base + 'weights.bin').then((r) => r.arrayBuffer()),
  fetch(base + 'model.onnx').then((r) => r.arrayBuffer()),
  fetch(base + '%(input)s').then((r) => r.arrayBuffer()),
]);
const ort = await setUpOrt('webnn-ep', manifest, weights, new Uint8Array(model));
const buildsAfterSession = counts.builds;
const dispatchesPerRun = [];
let out;
for (let i = 0; i < %(runs)d; i++) {
  const before = counts.dispatches;
  out = await ort.run(new Float32Array(input));
  dispatchesPerRun.push(counts.dispatches - before);
}
await ort.release();
const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
let bin = '';
for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
return {builds: buildsAfterSession, totalBuilds: counts.builds, dispatchesPerRun, logits: btoa(bin),
        version: await ortVersion()};
"""


@pytest.fixture(scope="module")
def model():
    """The MobileNetV2 manifest folder (made by ``make setup``; regenerated when stale)."""
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web "
                    "(python -m tools.bench_ort --install)")
    return generate("mobilenetv2").parent


def test_ort_webnn_ep_runs_mobilenetv2_on_the_polyfill(webnn_page, server_url, model):
    import onnxruntime

    result = run_js(webnn_page, server_url, _BODY % {"input": INPUT_FILE, "runs": RUNS})
    assert "ok" in result, result
    got = result["ok"]
    assert got["version"] == "1.30.0"
    assert got["builds"] == 1 and got["totalBuilds"] == 1, got
    assert got["dispatchesPerRun"] == [1] * RUNS, got
    logits = np.frombuffer(base64.b64decode(got["logits"]), "<f4")
    manifest = json.loads((model / "manifest.json").read_text())
    x = np.fromfile(model / INPUT_FILE, "<f4").reshape(manifest["inputs"]["input"]["shape"])
    session = onnxruntime.InferenceSession(str(model / "model.onnx"), providers=["CPUExecutionProvider"])
    expected = session.run(["logits"], {"input": x})[0].ravel()
    assert logits.shape == expected.shape == (1000,)
    assert np.abs(expected).max() > 1  # real logits, not a zero vector
    np.testing.assert_allclose(logits, expected, rtol=0, atol=ATOL)
