"""ONNX Runtime Web's WebNN execution provider as a real client of this polyfill.

The harness page (polyfill installed) wraps ``MLGraphBuilder.prototype.build`` and
``MLContext.prototype.dispatch`` to count calls, then loads onnxruntime-web (``ort.min.mjs``
from the git-ignored ``static/demos/bench-ort/vendor/``, installed by ``make setup``) and runs
the random-weight MobileNetV2 and the 2-layer BERT-style encoder, also with its layer norms
written out at ONNX opset 14 as PyTorch exports them (``tools/bench_models.py``:
manifest -> ``model.onnx``) through ``executionProviders: [{name: 'webnn', deviceType: 'gpu'}]``
with ORT's CPU fallback disabled, twice on the same input. The output must equal onnxruntime's
(Python, CPU EP) within 1e-4, ORT must have built exactly one WebNN graph (the whole model, no
partition left to another EP) and issue exactly one dispatch per run. The encoder's graph as
ORT's WebNN EP emits it must compile to as few GPU steps as our own builder code's (views,
sibling products and fused attention found in ORT's graph too; each written-out layer norm,
nine WebNN operators as ORT passes them on, one step: compile/layer_norm.js). ORT's
SimplifiedLayerNormalization (RMSNorm), which its WebNN EP writes out as six WebNN operators, is
one step too.
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

#: page JS: every MLGraph built from here on is pushed to `graphs` (`build` is the original method)
_CAPTURE_GRAPHS = """const graphs = [];
const build = MLGraphBuilder.prototype.build;
MLGraphBuilder.prototype.build = async function (...args) {
  const graph = await build.apply(this, args);
  graphs.push(graph);
  return graph;
};
"""

_BODY = """
const {countWebNNCalls, setUpOrt, ortVersion} = await import('/demos/bench-ort/runtimes.js');
const {describeGraph} = await import('/polyfill/inspect.js');
const overrides = %(overrides)s;
const adapterInfo = %(adapter_info)s;
if (overrides || adapterInfo) {
  // the contexts ORT creates get the tuning switches (forced kernels, as the op tests do) and / or
  // the adapterInfo switch (the plan of that adapter, run here on SwiftShader)
  const {configureContext} = await import('/polyfill/options.js');
  const create = navigator.ml.createContext;
  navigator.ml.createContext = async function (...args) {
    const context = await create.apply(this, args);
    configureContext(context, {tuning: {...overrides, ...(adapterInfo ? {adapterInfo} : {})}});
    return context;
  };
}
const counts = countWebNNCalls();
""" + _CAPTURE_GRAPHS + """const base = '/models/%(model)s/';
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
const steps = graphs.map((g) => describeGraph(g).steps.map((st) => st.operators.map((o) => o.type)));
await ort.release();
MLGraphBuilder.prototype.build = build;
if (overrides || adapterInfo) delete navigator.ml.createContext;
const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
let bin = '';
for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
return {builds: buildsAfterSession, totalBuilds: counts.builds, dispatchesPerRun, logits: btoa(bin),
        version: await ortVersion(), steps, dispatchStarts: counts.dispatchStarts, inDispatchMs: counts.inDispatchMs,
        dispatches: counts.dispatches};
"""


def _run_ort(page, server_url, name, overrides=None, adapter_info=None):
    """ORT's WebNN EP running model ``name`` on the polyfill (see _BODY): the model folder, and
    the run's counts, logits and each built graph's steps (operator types per step)."""
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web "
                    "(python -m tools.bench_ort --install)")
    model = generate(name).parent
    result = run_js(page, server_url, _BODY % {"input": INPUT_FILE, "runs": RUNS, "model": name,
                                               "overrides": json.dumps(overrides),
                                               "adapter_info": json.dumps(adapter_info)})
    return model, result


def _expected_logits(model):
    """onnxruntime's (Python, CPU EP) output of the model on the bench input."""
    import onnxruntime

    manifest = json.loads((model / "manifest.json").read_text())
    (input_name, spec), = manifest["inputs"].items()
    x = np.fromfile(model / INPUT_FILE, "<f4").reshape(spec["shape"])
    session = onnxruntime.InferenceSession(str(model / "model.onnx"), providers=["CPUExecutionProvider"])
    return session.run([manifest["outputs"][0]], {input_name: x})[0].ravel()


@pytest.mark.parametrize("name, max_steps", [("mobilenetv2", None), ("bert-encoder", 18), ("bert-encoder-opset14", 18)])
def test_ort_webnn_ep_runs_the_bench_models_on_the_polyfill(webnn_page, server_url, name, max_steps):
    """(the model folders are made by ``make setup``; regenerated when stale)"""
    model, result = _run_ort(webnn_page, server_url, name)
    assert "ok" in result, result
    got = result["ok"]
    assert got["version"] == "1.30.0"
    assert got["builds"] == 1 and got["totalBuilds"] == 1, got
    assert got["dispatchesPerRun"] == [1] * RUNS, got
    # the bench page's dispatch timing (runtimes.js countWebNNCalls): one start per call
    assert len(got["dispatchStarts"]) == got["dispatches"] == RUNS, got
    logits = np.frombuffer(base64.b64decode(got["logits"]), "<f4")
    manifest = json.loads((model / "manifest.json").read_text())
    expected = _expected_logits(model)
    assert logits.shape == expected.shape == (int(np.prod(manifest["output"]["shape"])),)
    assert np.abs(expected).max() > 1  # real outputs, not a zero vector
    print(name, len(got["steps"][0]), "steps:", got["steps"][0])
    if max_steps is not None:
        assert len(got["steps"][0]) <= max_steps, got["steps"]
    np.testing.assert_allclose(logits, expected, rtol=0, atol=ATOL)


def test_ort_encoder_split_products_fold_into_layer_norm(webnn_page, server_url):
    """ORT's encoder graph (gemm + reshape + residual add -> layerNormalization over axis 2 of a
    3-D input) with every tiled product split along K in 2 ranges (hardware adapters split the
    BERT products of few tiles): each of the 4 layer norms is one step with its product's
    reduce (no reduce step of its own): 26 steps, the 18 of test_ort_webnn_ep_runs_the_bench_models
    plus 12 split steps (6 products a layer) less 4 reduce steps, and the output still equals
    onnxruntime's."""
    model, result = _run_ort(webnn_page, server_url, "bert-encoder", {"matmul": "tiled", "splitK": 2})
    assert "ok" in result, result
    steps = result["ok"]["steps"][0]
    print(len(steps), "steps:", steps)
    norms = [st for st in steps if "layerNormalization" in st]
    assert len(norms) == 4 and all(st[0] in ("gemm", "matmul") and "add" in st for st in norms), norms
    assert len(steps) == 26, steps
    logits = np.frombuffer(base64.b64decode(result["ok"]["logits"]), "<f4")
    np.testing.assert_allclose(logits, _expected_logits(model), rtol=0, atol=ATOL)


#: an NVIDIA adapter's info (test_fusion.py test_split_choice_on_a_hardware_adapter): the plan
#: the H200 gets, built and run on SwiftShader
NVIDIA = {"vendor": "nvidia", "architecture": "", "description": "", "isFallbackAdapter": False}


@pytest.mark.parametrize("name, count", [("mobilenetv2", 72), ("bert-encoder", 18), ("bert-encoder-opset14", 18)])
def test_ort_models_in_the_hardware_plan(webnn_page, server_url, name, count):
    """ORT's graphs in the plan of a hardware adapter (its adapter info set on the SwiftShader
    contexts ORT creates): the encoder's attention fused (one step a layer), the products the
    adapter splits along K (the CNN's pointwise convolutions too) and the encoder's layer norms
    adding the partial sums, the tiled kernels; the step counts the README gives for the H200,
    and the output equals onnxruntime's as on SwiftShader's own plan."""
    model, result = _run_ort(webnn_page, server_url, name, adapter_info=NVIDIA)
    assert "ok" in result, result
    steps = result["ok"]["steps"][0]
    print(len(steps), "steps:", steps)
    assert len(steps) == count, steps
    if name.startswith("bert-encoder"):
        assert sum("softmax" in st for st in steps) == 2, steps
        assert all(st[0] == "matmul" and "matmul" in st[1:] for st in steps if "softmax" in st), steps
    logits = np.frombuffer(base64.b64decode(result["ok"]["logits"]), "<f4")
    np.testing.assert_allclose(logits, _expected_logits(model), rtol=0, atol=ATOL)


_RMS_BODY = """
const {describeGraph} = await import('/polyfill/inspect.js');
""" + _CAPTURE_GRAPHS + """try {
  const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
  ort.env.wasm.numThreads = 1;
  const [model, input] = await Promise.all(['model.onnx', 'input.bin'].map(
    (f) => fetch('/models/%(name)s/' + f).then((r) => r.arrayBuffer())));
  const session = await ort.InferenceSession.create(new Uint8Array(model), {
    executionProviders: [{name: 'webnn', deviceType: 'gpu'}], extra: {session: {disable_cpu_ep_fallback: '1'}}});
  const out = await session.run({x: new ort.Tensor('float32', new Float32Array(input), %(shape)s)});
  const y = await out.y.getData();
  await session.release();
  return {steps: graphs.map((g) => describeGraph(g).steps.map((s) => s.operators.map((o) => o.type))),
          y: Array.from(y)};
} finally {
  MLGraphBuilder.prototype.build = build;
}
"""


def test_ort_simplified_layer_norm_is_one_step(webnn_page, server_url):
    """ONNX Runtime's SimplifiedLayerNormalization (the RMSNorm of LLaMA-style decoders exported
    for it), which ORT's WebNN EP writes as pow -> reduceMean -> add -> sqrt -> div -> mul: two of
    them around a product and a residual add compile to three steps (compile/layer_norm.js: each
    RMS norm one step; nine steps unfused), and the output equals onnxruntime's CPU EP's."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    from tools.bench_models import GENERATED

    rng = np.random.default_rng(20261205)
    hidden, shape = 64, [1, 16, 64]
    weights = [numpy_helper.from_array(rng.uniform(0.5, 1.5, hidden).astype(np.float32), "w"),
               numpy_helper.from_array((rng.standard_normal((hidden, hidden)) / 8).astype(np.float32), "wq")]
    nodes = [helper.make_node("SimplifiedLayerNormalization", ["x", "w"], ["n"], axis=-1, epsilon=1e-6),
             helper.make_node("MatMul", ["n", "wq"], ["m"]), helper.make_node("Add", ["m", "x"], ["h"]),
             helper.make_node("SimplifiedLayerNormalization", ["h", "w"], ["y"], axis=-1, epsilon=1e-6)]
    graph = helper.make_graph(nodes, "rms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    folder = GENERATED / "ort-rms-norm"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    x.tofile(folder / "input.bin")
    result = run_js(webnn_page, server_url, _RMS_BODY % {"name": "ort-rms-norm", "shape": json.dumps(shape)})
    assert "ok" in result, result
    rms = ["pow", "reduceMean", "add", "sqrt", "div", "mul"]
    assert result["ok"]["steps"] == [[rms, ["matmul", "add"], rms]], result["ok"]["steps"]
    expected = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0].ravel()
    assert np.abs(expected).max() > 1
    np.testing.assert_allclose(np.array(result["ok"]["y"], np.float32), expected, rtol=0, atol=ATOL)
