"""tools/export_onnx.py: the ONNX export of the model manifest computes what the manifest does.

Runs the exported EfficientNet-Lite0 in onnxruntime (CPU) and compares it with the float64
NumPy forward pass of the manifest (tests/reference/graph.py) on one random input. onnx and
onnxruntime are test dependencies; the generated model comes from ``make setup``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tests.reference.graph import load_manifest_constants, run_description
from tools.export_onnx import export

MANIFEST = Path(__file__).resolve().parents[1] / "server/models/generated/efficientnet-lite0/manifest.json"


@pytest.fixture(scope="module")
def reference():
    """(input, float64 NumPy probabilities) for one random 1x3x224x224 input in [-1, 1)."""
    manifest = json.loads(MANIFEST.read_text())
    x = np.random.default_rng(7).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)
    expected = run_description(manifest, load_manifest_constants(MANIFEST), {"input": x})["probabilities"]
    return x, expected


def _run_named(model_path: Path, feeds: dict, output: str) -> np.ndarray:
    """onnxruntime's (CPU EP) value of ``output`` for ``feeds``."""
    return ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).run([output], feeds)[0]


def _run(model_path: Path, x: np.ndarray) -> np.ndarray:
    return _run_named(model_path, {"input": x}, "probabilities")


def test_external_data_model_matches_reference(tmp_path, reference):
    """The default export references weights.bin at the manifest's offsets (no copy)."""
    for name in ("manifest.json", "weights.bin"):
        shutil.copyfile(MANIFEST.parent / name, tmp_path / name)  # onnx's checker refuses symlinks
    out = export(tmp_path / "manifest.json")
    assert out == tmp_path / "model.onnx"
    assert out.stat().st_size < 200_000  # the weights stay in weights.bin
    x, expected = reference
    got = _run(out, x)
    assert got.shape == (1, 1000) and got.dtype == np.float32
    assert np.max(np.abs(got - expected)) < 1e-4
    assert abs(float(got.sum()) - 1.0) < 1e-5


def test_embedded_model_matches_reference(tmp_path, reference):
    """--embed writes a self-contained model that computes the same."""
    out = export(MANIFEST, tmp_path / "embedded.onnx", embed=True)
    model = onnx.load(str(out))
    assert {n.op_type for n in model.graph.node} == {"Conv", "Clip", "Add", "AveragePool", "Reshape",
                                                      "Gemm", "Softmax"}
    x, expected = reference
    assert np.max(np.abs(_run(out, x) - expected)) < 1e-4


def test_external_model_must_sit_next_to_weights(tmp_path):
    with pytest.raises(ValueError, match="must lie next to"):
        export(MANIFEST, tmp_path / "model.onnx")


def _with_bert_ops(monkeypatch):
    """Let the float64 interpreter run erf, layerNormalization, sqrt and reduceMean too
    (tests/reference/normalization.py and reduce.py; math.erf elementwise), for the BERT-style
    encoders."""
    import math
    import types

    from tests.reference import graph, normalization, ops
    from tests.reference.reduce import reduce

    extended = types.SimpleNamespace(**{n: getattr(ops, n) for n in ops.OPERATORS})
    extended.erf = lambda x, options=None: np.vectorize(math.erf)(np.asarray(x, np.float64))
    extended.layerNormalization = lambda x, options=None: normalization.layerNormalization(x, options)
    extended.sqrt = lambda x, options=None: np.sqrt(np.asarray(x, np.float64))
    extended.reduceMean = lambda x, options=None: reduce("reduceMean", x, options)
    extended.OPERATORS = ops.OPERATORS | {"erf", "layerNormalization", "sqrt", "reduceMean"}
    monkeypatch.setattr(graph, "ops", extended)


@pytest.mark.parametrize("name", ["mobilenetv2", "bert-encoder", "bert-encoder-opset14"])
def test_bench_models_export_matches_reference(tmp_path, monkeypatch, name):
    """tools/bench_models.py: the random-weight manifests and their ONNX export compute the same
    (onnxruntime CPU against the float64 interpreter of the manifest, on the bench input)."""
    from tools.bench_models import INPUT_FILE, MODELS, generate

    _with_bert_ops(monkeypatch)
    manifest_path = generate(name, tmp_path)
    manifest = json.loads(manifest_path.read_text())
    (input_name, spec), = manifest["inputs"].items()
    x = np.fromfile(manifest_path.parent / INPUT_FILE, "<f4").reshape(spec["shape"])
    output = manifest["outputs"][0]
    expected = run_description(manifest, load_manifest_constants(manifest_path), {input_name: x})[output]
    session = ort.InferenceSession(str(manifest_path.parent / "model.onnx"), providers=["CPUExecutionProvider"])
    got = session.run([output], {input_name: x})[0]
    assert list(got.shape) == MODELS[name][1] == manifest["output"]["shape"]
    assert np.abs(expected).max() > 1  # not a vanishing signal
    assert np.max(np.abs(got - expected)) < 1e-4
    model = onnx.load(str(manifest_path.parent / "model.onnx"), load_external_data=False)
    ops_used = {n.op_type for n in model.graph.node}
    if name == "bert-encoder":
        assert {"MatMul", "Transpose", "Softmax", "Erf", "Div", "Mul", "LayerNormalization"} <= ops_used
    elif name == "bert-encoder-opset14":
        # the layer norms written out, at the opset whose ReduceMean takes axes as an attribute
        assert [o.version for o in model.opset_import] == [14]
        assert {"ReduceMean", "Sub", "Pow", "Sqrt", "Div"} <= ops_used and "LayerNormalization" not in ops_used
        assert all(len(n.input) == 1 for n in model.graph.node if n.op_type == "ReduceMean")
    else:
        assert {"Conv", "Clip", "Add", "GlobalAveragePool", "Gemm"} <= ops_used


@pytest.mark.parametrize("opset", [14, 18])
def test_reduce_mean_axes_at_either_side_of_opset_18(tmp_path, opset):
    """reduceMean's axes: an attribute below ONNX opset 18, an input from 18 on; pow and sqrt
    export too (a 3 x 4 input, mean over axis 1 kept, then sqrt(mean(x^2)))."""
    from tools.bench_models import GraphWriter

    g = GraphWriter()
    two = g.constant("two", np.array(2.0))
    sq = g.op("pow", [{"operand": "x"}, two], "sq")
    mean = g.op("reduceMean", [sq], "mean", {"axes": [1], "keepDimensions": True})
    g.op("sqrt", [mean], "y")
    (tmp_path / "weights.bin").write_bytes(g.weights())
    manifest = {"weights": "weights.bin", "inputs": {"x": {"dataType": "float32", "shape": [3, 4]}},
                "constants": g.constants, "operators": g.operators, "outputs": ["y"], "onnxOpset": opset,
                "output": {"name": "y", "dataType": "float32", "shape": [3, 1]}}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    out = export(path)
    assert [o.version for o in onnx.load(str(out)).opset_import] == [opset]
    x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    got = _run_named(out, {"x": x}, "y")
    np.testing.assert_allclose(got, np.sqrt(np.mean(x.astype(np.float64) ** 2, axis=1, keepdims=True)), rtol=1e-6)
