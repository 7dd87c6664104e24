"""Random-weight benchmark models written as model manifests (+ ONNX via tools/export_onnx.py).

One description per model serves both sides of the benchmark: the manifest (JSON graph
description of MLGraphBuilder calls + weights.bin, the format of ``server/models``) is what our
own builder path runs (``static/harness/graph_json.js addToBuilder``), and
``tools/export_onnx.py`` turns the very same manifest into ``model.onnx`` (opset 17, initializers
as external data into the same weights.bin) for ONNX Runtime. No PyTorch, no download: the
weights are NumPy random numbers from a fixed seed, so any machine with numpy + onnx (the GPU
host included) regenerates identical files.

Models (folder under ``server/models/generated/``, git-ignored, served at ``/models/<name>/``):

Each folder also gets ``input.bin``: the benchmark's input (float32, seeded uniform [-1, 1)).
``efficientnet-lite0`` (converted by ``make setup``, trained weights) gets ``model.onnx`` and
``input.bin`` here too (:func:`prepare`), so the benchmark page's default models all exist after
``make setup``.

* ``mobilenetv2``: torchvision's MobileNetV2 configuration (inverted residuals, expansion 6,
  widths 32, 16, 24, 32, 64, 96, 160, 320, 1280; ReLU6 as clamp 0..6; batch norm folded into the
  convolutions; 3x3 padding 1), input ``input`` 1x3x224x224 NCHW, output ``logits`` 1x1000.
* ``bert-encoder``: a BERT-style encoder: 2 layers, sequence 128, hidden 256, 4 heads (64 each),
  FFN 1024; attention as matmul / transpose / div by 8 / softmax; GELU written as
  div(x, sqrt 2) -> erf -> add 1 -> mul x -> mul 0.5; post-attention and post-FFN
  layerNormalization (axes [2], epsilon 1e-12; ONNX LayerNormalization, opset 17). Input
  ``hidden`` 1x128x256 float32 (embeddings already looked up: no Gather of token ids), output
  ``output`` 1x128x256.
* ``bert-encoder-opset14`` / ``bert-base-opset14``: ``bert-encoder`` / ``bert-base`` (the same
  weights) with each layer norm written out as PyTorch exports nn.LayerNorm below ONNX opset 17
  (reduceMean -> sub -> pow 2 -> reduceMean -> add epsilon -> sqrt -> div -> mul scale -> add
  bias), ``model.onnx`` at opset 14: the graph ORT's WebNN EP hands the polyfill for the many
  transformer models exported that way (its own layer-norm fusion does not run for that EP).
* ``bert-base`` / ``bert-base-512``: the same encoder at BERT-base's size: 12 layers, hidden 768,
  12 heads (64 each), FFN 3072, sequence 128 / 512 (85 M parameters, 340 MB of float32 weights,
  the same weights for both: the embedding table is not part of it). Input ``hidden``
  1xSx768, output ``output`` 1xSx768. Generated only on request (``--model``, or
  ``tools/bench_ort.py`` when its run includes them): ``make setup`` and the test suite write
  only DEFAULT_MODELS.

Usage::

    python -m tools.bench_models [--model mobilenetv2,bert-encoder,bert-base,bert-base-512,efficientnet-lite0] [--force] [--no-onnx]

Idempotent: a model is rewritten only when a file is missing or older than this module.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Callable

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.models.convert import manifest_json  # noqa: E402
from server.models.efficientnet_lite0 import GraphWriter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "server" / "models" / "generated"
SEED = 20261201
#: the benchmark input (float32 little-endian, the input's shape) next to each manifest
INPUT_FILE = "input.bin"

#: torchvision MobileNetV2 inverted-residual settings: (expansion t, channels c, repeats n, stride s)
MOBILENETV2_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
MOBILENETV2_STEM, MOBILENETV2_HEAD, NUM_CLASSES = 32, 1280, 1000

BERT = {"layers": 2, "sequence": 128, "hidden": 256, "heads": 4, "ffn": 1024, "epsilon": 1e-12}
BERT_BASE = {"layers": 12, "sequence": 128, "hidden": 768, "heads": 12, "ffn": 3072, "epsilon": 1e-12}
BERT_BASE_512 = {**BERT_BASE, "sequence": 512}
#: the same encoders with their layer norms written out as ONNX opset 14 has them (model.onnx at opset 14)
OPSET14 = {"layerNorm": "decomposed", "onnxOpset": 14}


def _conv(g: GraphWriter, rng: np.random.Generator, x: dict, name: str, in_ch: int, out_ch: int, kernel: int,
          *, stride: int = 1, groups: int = 1, relu6: bool = True) -> dict:
    """conv2d (+ bias: batch norm folded) (+ clamp 0..6); He-scaled random filter, OIHW."""
    fan_in = in_ch // groups * kernel * kernel
    gain = 2.0 if relu6 else 1.0
    filt = rng.standard_normal((out_ch, in_ch // groups, kernel, kernel)) * math.sqrt(gain / fan_in)
    options: dict = {}
    if kernel > 1:
        pad = (kernel - 1) // 2
        options["padding"] = [pad, pad, pad, pad]
    if stride != 1:
        options["strides"] = [stride, stride]
    if groups != 1:
        options["groups"] = groups
    options["bias"] = g.constant(f"{name}.bias", rng.uniform(-0.1, 0.1, out_ch))
    y = g.op("conv2d", [x, g.constant(f"{name}.filter", filt)], name, options)
    if relu6:
        y = g.op("clamp", [y], f"{name}.relu6", {"minValue": 0, "maxValue": 6})
    return y


def mobilenetv2(rng: np.random.Generator) -> tuple[dict, bytes]:
    """The MobileNetV2 graph description and its weights (see the module docstring)."""
    g = GraphWriter()
    x = _conv(g, rng, {"operand": "input"}, "stem", 3, MOBILENETV2_STEM, 3, stride=2)
    channels = MOBILENETV2_STEM
    block = 0
    for t, c, n, s in MOBILENETV2_SETTINGS:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = channels * t
            name = f"block{block}"
            y = x
            if t != 1:
                y = _conv(g, rng, y, f"{name}.expand", channels, hidden, 1)
            y = _conv(g, rng, y, f"{name}.depthwise", hidden, hidden, 3, stride=stride, groups=hidden)
            y = _conv(g, rng, y, f"{name}.project", hidden, c, 1, relu6=False)
            if stride == 1 and channels == c:
                y = g.op("add", [x, y], f"{name}.residual")
            x, channels = y, c
            block += 1
    x = _conv(g, rng, x, "head", channels, MOBILENETV2_HEAD, 1)
    x = g.op("averagePool2d", [x], "pool")
    x = g.op("reshape", [x, [1, MOBILENETV2_HEAD]], "flatten")
    weight = g.constant("classifier.weight", rng.standard_normal((NUM_CLASSES, MOBILENETV2_HEAD)) / math.sqrt(MOBILENETV2_HEAD))
    bias = g.constant("classifier.bias", rng.uniform(-0.1, 0.1, NUM_CLASSES))
    g.op("gemm", [x, weight], "logits", {"c": bias, "bTranspose": True})
    description = {"inputs": {"input": {"dataType": "float32", "shape": [1, 3, 224, 224]}},
                   "constants": g.constants, "operators": g.operators, "outputs": ["logits"]}
    return description, g.weights()


def bert_encoder(rng: np.random.Generator, config: dict | None = None) -> tuple[dict, bytes]:
    """The BERT-style encoder graph description and its weights (see the module docstring);
    ``config`` (default BERT) gives layers, sequence, hidden, heads, ffn and epsilon."""
    cfg = BERT if config is None else config
    g = GraphWriter()
    seq, hid, heads, ffn = cfg["sequence"], cfg["hidden"], cfg["heads"], cfg["ffn"]
    head = hid // heads

    def dense(x: dict, name: str, n_in: int, n_out: int) -> dict:
        w = g.constant(f"{name}.weight", rng.standard_normal((n_in, n_out)) / math.sqrt(n_in))
        b = g.constant(f"{name}.bias", rng.uniform(-0.1, 0.1, n_out))
        return g.op("add", [g.op("matmul", [x, w], f"{name}.matmul"), b], name)

    def layer_norm(x: dict, name: str) -> dict:
        scale = g.constant(f"{name}.scale", rng.uniform(0.8, 1.2, hid))
        bias = g.constant(f"{name}.bias", rng.uniform(-0.1, 0.1, hid))
        if cfg.get("layerNorm") != "decomposed":
            return g.op("layerNormalization", [x], name,
                        {"scale": scale, "bias": bias, "axes": [2], "epsilon": cfg["epsilon"]})
        # as PyTorch exports nn.LayerNorm below ONNX opset 17
        mean = {"axes": [2], "keepDimensions": True}
        d = g.op("sub", [x, g.op("reduceMean", [x], f"{name}.mean", mean)], f"{name}.d")
        var = g.op("reduceMean", [g.op("pow", [d, two], f"{name}.sq")], f"{name}.var", mean)
        sd = g.op("sqrt", [g.op("add", [var, eps], f"{name}.var_eps")], f"{name}.sd")
        y = g.op("mul", [g.op("div", [d, sd], f"{name}.normalized"), scale], f"{name}.scaled")
        return g.op("add", [y, bias], name)

    if cfg.get("layerNorm") == "decomposed":
        two = g.constant("const.two", np.array(2.0))
        eps = g.constant("const.epsilon", np.array(cfg["epsilon"]))
    sqrt2 = g.constant("const.sqrt2", np.array(math.sqrt(2.0)))
    one = g.constant("const.one", np.array(1.0))
    half = g.constant("const.half", np.array(0.5))
    scale = g.constant("const.sqrt_head", np.array(math.sqrt(head)))
    x = {"operand": "hidden"}
    for layer in range(cfg["layers"]):
        p = f"layer{layer}"
        split = {}
        for part, perm in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3])):
            y = dense(x, f"{p}.{part}", hid, hid)
            y = g.op("reshape", [y, [1, seq, heads, head]], f"{p}.{part}.heads")
            split[part] = g.op("transpose", [y], f"{p}.{part}.t", {"permutation": perm})
        scores = g.op("matmul", [split["query"], split["key"]], f"{p}.scores")
        scores = g.op("div", [scores, scale], f"{p}.scores.scaled")
        probs = g.op("softmax", [scores, 3], f"{p}.probs")
        ctx = g.op("matmul", [probs, split["value"]], f"{p}.context")
        ctx = g.op("transpose", [ctx], f"{p}.context.t", {"permutation": [0, 2, 1, 3]})
        ctx = g.op("reshape", [ctx, [1, seq, hid]], f"{p}.context.merged")
        attn = dense(ctx, f"{p}.attention.output", hid, hid)
        h = layer_norm(g.op("add", [attn, x], f"{p}.attention.residual"), f"{p}.attention.norm")
        y = dense(h, f"{p}.ffn.in", hid, ffn)
        gelu = g.op("erf", [g.op("div", [y, sqrt2], f"{p}.gelu.div")], f"{p}.gelu.erf")
        gelu = g.op("add", [gelu, one], f"{p}.gelu.add")
        gelu = g.op("mul", [y, gelu], f"{p}.gelu.mul")
        gelu = g.op("mul", [gelu, half], f"{p}.gelu")
        y = dense(gelu, f"{p}.ffn.out", ffn, hid)
        x = layer_norm(g.op("add", [y, h], f"{p}.ffn.residual"), f"{p}.ffn.norm")
    g.operators[-1]["outputs"] = "output"
    description = {"inputs": {"hidden": {"dataType": "float32", "shape": [1, seq, hid]}},
                   "constants": g.constants, "operators": g.operators, "outputs": ["output"]}
    if "onnxOpset" in cfg:  # the opset tools/export_onnx.py writes model.onnx at
        description["onnxOpset"] = cfg["onnxOpset"]
    return description, g.weights()


#: model name -> (builder of (description, weights), output shape)
MODELS: dict[str, tuple[Callable[[np.random.Generator], tuple[dict, bytes]], list[int]]] = {
    "mobilenetv2": (mobilenetv2, [1, NUM_CLASSES]),
    "bert-encoder": (bert_encoder, [1, BERT["sequence"], BERT["hidden"]]),
    "bert-base": (lambda rng: bert_encoder(rng, BERT_BASE), [1, BERT_BASE["sequence"], BERT_BASE["hidden"]]),
    "bert-base-512": (lambda rng: bert_encoder(rng, BERT_BASE_512), [1, BERT_BASE_512["sequence"], BERT_BASE["hidden"]]),
    "bert-encoder-opset14": (lambda rng: bert_encoder(rng, {**BERT, **OPSET14}), [1, BERT["sequence"], BERT["hidden"]]),
    "bert-base-opset14": (lambda rng: bert_encoder(rng, {**BERT_BASE, **OPSET14}),
                          [1, BERT_BASE["sequence"], BERT_BASE["hidden"]]),
}
#: what ``make setup`` (no --model) writes: the suite's models; BERT-base's 340 MB only on request
DEFAULT_MODELS = ("mobilenetv2", "bert-encoder", "bert-encoder-opset14")
#: the random stream of each model (fixed, so adding a model changes no other model's weights;
#: the BERT-base variants share one: the same weights at two sequence lengths, and the opset-14
#: variants their model's: the same network written another way)
SEED_STREAM = {"bert-encoder": 0, "mobilenetv2": 1, "bert-base": 2, "bert-base-512": 2,
               "bert-encoder-opset14": 0, "bert-base-opset14": 2}


def bench_input(manifest: dict) -> np.ndarray:
    """The benchmark's input for a manifest: uniform [-1, 1) float32 of the input's shape from a
    fixed seed (the same for every model of that shape), written next to it as ``input.bin``."""
    spec = next(iter(manifest["inputs"].values()))
    return np.random.default_rng([SEED, 99]).uniform(-1, 1, spec["shape"]).astype(np.float32)


def generate(name: str, out_root: Path = GENERATED, *, force: bool = False, onnx: bool = True) -> Path:
    """Write ``manifest.json`` + ``weights.bin`` (and ``model.onnx`` unless ``onnx=False``) of model
    ``name`` into ``out_root/name``; returns the manifest path. Skips up-to-date files.

    Raises:
        KeyError: unknown model name; ImportError: ``onnx`` missing when ``onnx=True``.
    """
    build, out_shape = MODELS[name]
    folder = out_root / name
    manifest_path = folder / "manifest.json"
    wanted = [manifest_path, folder / "weights.bin", folder / INPUT_FILE] + ([folder / "model.onnx"] if onnx else [])
    stamp = Path(__file__).stat().st_mtime
    if not force and all(p.is_file() and p.stat().st_mtime > stamp for p in wanted):
        return manifest_path
    description, weights = build(np.random.default_rng([SEED, SEED_STREAM[name]]))
    output = description["outputs"][0]
    manifest = {"name": name, "source": {"generator": "tools/bench_models.py", "seed": SEED,
                                         "weights": "random (not trained)"},
                "weights": "weights.bin", "output": {"name": output, "dataType": "float32", "shape": out_shape},
                **description}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "weights.bin").write_bytes(weights)
    (folder / INPUT_FILE).write_bytes(bench_input(manifest).astype("<f4").tobytes())
    manifest_path.write_text(manifest_json(manifest), encoding="utf-8")
    if onnx:
        from tools.export_onnx import export

        export(manifest_path)
    return manifest_path


#: models converted by ``make setup`` (server/models/convert.py) that the benchmark also runs:
#: they get ``model.onnx`` and ``input.bin`` here
CONVERTED_MODELS = ("efficientnet-lite0",)


def prepare(name: str, out_root: Path = GENERATED) -> Path:
    """The folder of benchmark model ``name`` with manifest.json, weights.bin, model.onnx and
    input.bin: a generated model is (re)written by :func:`generate` when missing or stale; a
    converted one (CONVERTED_MODELS) gets model.onnx (``tools/export_onnx.py``) when it is missing
    or older than its manifest, and input.bin when missing.

    Raises:
        FileNotFoundError: a converted model's manifest is missing (``make setup`` writes it).
    """
    if name in MODELS:
        return generate(name, out_root).parent
    from tools.export_onnx import export

    manifest = out_root / name / "manifest.json"
    if not manifest.is_file():
        raise FileNotFoundError(f"{manifest} is missing: run make setup (python -m server.models.convert)")
    model = manifest.parent / "model.onnx"
    if not model.exists() or model.stat().st_mtime < manifest.stat().st_mtime:
        export(manifest, model)
    inp = manifest.parent / INPUT_FILE
    if not inp.exists():
        inp.write_bytes(bench_input(json.loads(manifest.read_text(encoding="utf-8"))).astype("<f4").tobytes())
    return manifest.parent


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.bench_models", description=__doc__.splitlines()[0])
    defaults = DEFAULT_MODELS + CONVERTED_MODELS
    parser.add_argument("--model", default=",".join(defaults),
                        help=f"comma-separated (default {','.join(defaults)}): {', '.join((*MODELS, *CONVERTED_MODELS))}")
    parser.add_argument("--force", action="store_true", help="rewrite even when up to date")
    parser.add_argument("--no-onnx", action="store_true", help="only the manifest and weights (no onnx package)")
    args = parser.parse_args(argv)
    for name in [m for m in args.model.split(",") if m]:
        if name not in MODELS and name not in CONVERTED_MODELS:
            parser.error(f"unknown model {name!r}; known: {', '.join((*MODELS, *CONVERTED_MODELS))}")
        if name in MODELS:
            folder = generate(name, force=args.force, onnx=not args.no_onnx).parent
        elif args.no_onnx:
            continue
        else:
            folder = prepare(name)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        print(f"{name}: {folder} ({len(manifest['operators'])} operators, "
              f"{(folder / 'weights.bin').stat().st_size} bytes of weights)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
