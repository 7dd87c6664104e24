"""transformers.js itself on the polyfill: the README's snippet, unmodified library, no network.

transformers.js 4.3.2's browser build (``static/harness/vendor/transformers.web.js``, installed by
``make setup`` through tools/npm_vendor.py) imports ``onnxruntime-web/webgpu`` and
``onnxruntime-common`` by bare name; the page maps both to the ONNX Runtime Web 1.30 the suite
vendors (``static/demos/bench-ort/vendor/ort.min.mjs``) with an import map, points ORT's wasm
files at that folder and lets transformers.js read models from ``/models/`` only.

The model folder is written here as a Hub BERT's is laid out: ``config.json``, ``tokenizer.json``
(a WordPiece tokenizer built with Hugging Face's ``tokenizers``: BERT normalizer and
pre-tokenizer, ``[CLS] … [SEP]``), ``tokenizer_config.json`` and ``onnx/model.onnx``: the
opset-14 BERT of tests/test_ort_hf_bert.py with the exporter's free input dimensions
(``batch_size``, ``sequence_length``), which ``freeDimensionOverrides`` fixes, as the README says.

``dtype: "q4"`` reads ``onnx/model_q4.onnx``: the same BERT with its 12 weight MatMuls made 4-bit
MatMulNBits (block 32, zero points) by onnxruntime's MatMulNBitsQuantizer, the tool transformers.js's
q4 files come from; ORT's WebNN EP writes each as a uint4 dequantizeLinear feeding a matmul, which
the polyfill computes from the packed weights (docs/quantization.md).

Checked: transformers.js's token ids equal the Python tokenizer's (padded to the sequence); ORT
hands the whole model to WebNN (one graph, CPU fallback disabled); ``last_hidden_state`` of two
sentences equals onnxruntime's CPU EP's on the same ids and the same model file within 1e-4; both
models compile to the same 24 steps. ``dtype: "q8"`` reads ``onnx/model_quantized.onnx``
(onnxruntime's quantize_dynamic: DynamicQuantizeLinear + MatMulInteger, as the Hub's quantized
files are): right values, one graph, 93 steps (docs/clients.md).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.graph_runner import run_js
from tests.test_ort_hf_bert import HEADS, HIDDEN, LAYERS, SEQ, VOCAB, hf_bert_model
from tests.test_ort_webnn_ep import _CAPTURE_GRAPHS, ATOL, VENDOR
from tools.bench_models import GENERATED
from tools.npm_vendor import HARNESS_VENDOR

NAME = "transformers-js-bert"
#: GPU steps of either model on SwiftShader's plan (tests/test_ort_hf_bert.py lists them)
STEPS = 24
#: the q8 model's (docs/clients.md: DynamicQuantizeLinear is still several steps)
Q8_STEPS = 93
SENTENCES = ["Hello WebNN, the polyfill runs shaders!", "A browser tab runs the model on the GPU."]
_WORDS = "hello webnn the a polyfill run shader in browser tab model on gpu text token".split()

_BODY = _CAPTURE_GRAPHS + """
const {describeGraph} = await import('/polyfill/inspect.js');
const map = document.createElement('script');
map.type = 'importmap';
map.textContent = JSON.stringify({imports: {'onnxruntime-web/webgpu': '/demos/bench-ort/vendor/ort.min.mjs',
                                            'onnxruntime-common': '/demos/bench-ort/vendor/ort.min.mjs'}});
document.head.append(map);
try {
  const ort = await import('onnxruntime-web/webgpu');
  ort.env.wasm.wasmPaths = '/demos/bench-ort/vendor/';
  ort.env.wasm.numThreads = 1;
  const {env, AutoTokenizer, AutoModel} = await import('/harness/vendor/transformers.web.js');
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = '/models/';
  // the README's snippet, with the CPU fallback disabled: a node ORT keeps fails the session
  const id = %(name)s;
  const tokenizer = await AutoTokenizer.from_pretrained(id);
  const model = await AutoModel.from_pretrained(id, {
    device: 'webnn-gpu', dtype: %(dtype)s,
    session_options: {freeDimensionOverrides: {batch_size: 1, sequence_length: %(seq)d},
                      extra: {session: {disable_cpu_ep_fallback: '1'}}},
  });
  const results = [];
  for (const text of %(sentences)s) {
    const inputs = tokenizer(text, {padding: 'max_length', max_length: %(seq)d, truncation: true});
    const {last_hidden_state} = await model(inputs);
    results.push({ids: Array.from(inputs.input_ids.data, Number), mask: Array.from(inputs.attention_mask.data, Number),
                  types: Array.from(inputs.token_type_ids.data, Number), dims: last_hidden_state.dims,
                  y: Array.from(last_hidden_state.data)});
  }
  await model.dispose();
  return {graphs: graphs.length, results,
          steps: graphs.map((g) => describeGraph(g).steps.map((s) => s.operators.map((o) => o.type)))};
} finally {
  MLGraphBuilder.prototype.build = build;
}
"""


def write_model_folder(folder):
    """The Hub-style folder of the module docstring; returns the Python tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    model = hf_bert_model(np.random.default_rng(20261207))
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        dims[0].dim_param, dims[1].dim_param = "batch_size", "sequence_length"
    (folder / "onnx" / "model.onnx").write_bytes(model.SerializeToString())
    (folder / "onnx" / "model_q4.onnx").write_bytes(quantized(model).SerializeToString())
    dynamic_quantized(folder / "onnx" / "model.onnx", folder / "onnx" / "model_quantized.onnx")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", "!", *_WORDS, "##s", "##ing", "##ed"]
    vocab += [f"unused{i}" for i in range(VOCAB - len(vocab))]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": SEQ, "pad_token": "[PAD]",
        "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "architectures": ["BertModel"], "hidden_size": HIDDEN, "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS, "intermediate_size": 2 * HIDDEN, "vocab_size": VOCAB,
        "max_position_embeddings": SEQ, "type_vocab_size": 2}))
    return tokenizer


def quantized(model):
    """`model` with its constant-weight MatMuls as 4-bit MatMulNBits (onnxruntime's quantizer)."""
    import logging

    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    config = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=False)
    quantizer = MatMulNBitsQuantizer(model, block_size=32, is_symmetric=False, algo_config=config)
    quantizer.process()
    out = quantizer.model.model
    assert sum(n.op_type == "MatMulNBits" for n in out.graph.node) == 6 * LAYERS
    return out


def dynamic_quantized(source, target):
    """`source` with its weight MatMuls as onnxruntime's quantize_dynamic writes them (uint8 weights,
    DynamicQuantizeLinear of the input, MatMulInteger, the scales' product): the Hub's
    ``model_quantized.onnx``, transformers.js's ``q8``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QUInt8)


@pytest.fixture(scope="module")
def model_folder():
    """The model folder (all three files), written once for the module's tests; its tokenizer."""
    for needed in (HARNESS_VENDOR / "transformers.web.js", VENDOR / "ort.min.mjs"):
        if not needed.is_file():
            pytest.fail(f"{needed} is missing: make setup installs it")
    folder = GENERATED / NAME
    return folder, write_model_folder(folder)


@pytest.mark.parametrize("dtype, file", [("fp32", "model.onnx"), ("q4", "model_q4.onnx"), ("q8", "model_quantized.onnx")])
def test_transformers_js_bert_through_the_polyfill(webnn_page, server_url, model_folder, dtype, file):
    import onnxruntime

    folder, tokenizer = model_folder
    result = run_js(webnn_page, server_url, _BODY % {
        "name": json.dumps(NAME), "dtype": json.dumps(dtype), "seq": SEQ, "sentences": json.dumps(SENTENCES)})
    assert "ok" in result, result
    got = result["ok"]
    assert got["graphs"] == 1, got["graphs"]
    steps = got["steps"][0]
    if dtype == "q8":
        # DynamicQuantizeLinear is several steps still (docs/clients.md); each MatMulInteger's
        # casts are stages of its product (compile/fusion.js roundTripStage)
        casts = sum(any(s[i:i + 3] == ["matmul", "cast", "cast"] for i in range(len(s))) for s in steps)
        assert len(steps) <= Q8_STEPS and casts == 6 * LAYERS, steps
    else:
        # the 4-bit model compiles to as many steps as the float one: each packed product one step
        # (dequantizeLinear inside the product), the q/k/v products with their biases one product
        assert len(steps) == STEPS and all("matmul" in s for s in steps if "dequantizeLinear" in s), steps
        assert sum("dequantizeLinear" in s for s in steps) == (4 * LAYERS if dtype == "q4" else 0), steps
    session = onnxruntime.InferenceSession(str(folder / "onnx" / file), providers=["CPUExecutionProvider"])
    for text, run in zip(SENTENCES, got["results"]):
        encoding = tokenizer.encode(text)
        n = len(encoding.ids)
        assert 0 < n < SEQ and encoding.ids.count(1) == 0, (text, encoding.tokens)  # no [UNK]: every word known
        assert run["ids"] == encoding.ids + [0] * (SEQ - n), (text, run["ids"])
        assert run["mask"] == [1] * n + [0] * (SEQ - n) and run["types"] == [0] * SEQ
        assert run["dims"] == [1, SEQ, HIDDEN]
        feeds = {"input_ids": run["ids"], "attention_mask": run["mask"], "token_type_ids": run["types"]}
        expected = session.run(None, {k: np.array([v], np.int64) for k, v in feeds.items()})[0].ravel()
        np.testing.assert_allclose(np.array(run["y"], np.float32), expected, rtol=0, atol=ATOL)
