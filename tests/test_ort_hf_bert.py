"""A Hugging Face-style BERT through ONNX Runtime Web's WebNN EP on the polyfill.

transformers.js and most BERT-family ONNX files on the Hub come from PyTorch's exporter at opset 14
(optimum's default): int64 ``input_ids`` / ``attention_mask`` / ``token_type_ids``, three embedding
Gathers, the extended mask ``(1 - mask[:, None, None, :]) * float32 min`` added to the scores, the
attention as MatMul / Reshape / Transpose / Div / Add / Softmax, GELU as Erf, and every layer norm
written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add). The model here is that
graph, written with onnx.helper node for node as the exporter writes it (the layers checked
against transformers 5.25's BertModel exported by torch 2.13 with eager attention at opset 14; the
mask as transformers 4.x builds it, which is what the Hub's exports carry: 5.x builds it from
And / Where / Expand nodes whose shapes ORT cannot infer, so its WebNN EP leaves them and the
attention after them to ORT's CPU EP), small (2 layers, hidden 64, 4 heads, sequence 24, random
weights), so the test needs no download.

ORT must hand the whole graph to WebNN (no CPU fallback), the output must equal onnxruntime's CPU EP
within 1e-4 with a mask that hides the last tokens, and the graph must compile to as few steps as
the spec's operators would give: each layer norm one step (compile/layer_norm.js), attention one
step in the H200's plan.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.graph_runner import run_js
from tests.test_ort_webnn_ep import ATOL, NVIDIA, VENDOR, _CAPTURE_GRAPHS
from tools.bench_models import GENERATED

SEQ, HIDDEN, HEADS, FFN, LAYERS, VOCAB = 24, 64, 4, 128, 2, 50
NAME = "hf-bert-opset14"


def hf_bert_model(rng: np.random.Generator):
    """The ONNX ModelProto (opset 14) of the module docstring's BERT, random weights."""
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes = [], []

    def const(name, array, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(array, dtype), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def dense(x, name, n_in, n_out):
        w = const(f"{name}.weight", rng.standard_normal((n_in, n_out)) / np.sqrt(n_in))
        b = const(f"{name}.bias", rng.uniform(-0.1, 0.1, n_out))
        return node("Add", [b, node("MatMul", [x, w], f"{name}/MatMul")], f"{name}/Add")

    def layer_norm(x, name):
        mean = node("ReduceMean", [x], f"{name}/ReduceMean", axes=[-1])
        d = node("Sub", [x, mean], f"{name}/Sub")
        var = node("ReduceMean", [node("Pow", [d, const(f"{name}/two", 2.0)], f"{name}/Pow")],
                   f"{name}/ReduceMean_1", axes=[-1])
        sd = node("Sqrt", [node("Add", [var, const(f"{name}/eps", 1e-12)], f"{name}/Add")], f"{name}/Sqrt")
        y = node("Mul", [node("Div", [d, sd], f"{name}/Div"), const(f"{name}.weight", rng.uniform(0.8, 1.2, HIDDEN))],
                 f"{name}/Mul")
        return node("Add", [y, const(f"{name}.bias", rng.uniform(-0.1, 0.1, HIDDEN))], f"{name}/Add_1")

    head = HIDDEN // HEADS
    x = node("Add", [node("Gather", [const("word", rng.standard_normal((VOCAB, HIDDEN)) * 0.5), "input_ids"], "word/Gather"),
                     node("Gather", [const("type", rng.standard_normal((2, HIDDEN)) * 0.5), "token_type_ids"], "type/Gather")],
             "emb/Add")
    pos = node("Gather", [const("pos", rng.standard_normal((SEQ, HIDDEN)) * 0.5),
                          const("position_ids", np.arange(SEQ)[None], np.int64)], "pos/Gather")
    x = layer_norm(node("Add", [x, pos], "emb/Add_1"), "emb/LayerNorm")
    m = node("Unsqueeze", ["attention_mask", const("axis1", [1], np.int64)], "mask/Unsqueeze")
    m = node("Cast", [node("Unsqueeze", [m, const("axis2", [2], np.int64)], "mask/Unsqueeze_1")], "mask/Cast", to=1)
    mask = node("Mul", [node("Sub", [const("one", 1.0), m], "mask/Sub"), const("min", np.finfo(np.float32).min)],
                "mask/Mul")
    heads_shape = const("heads_shape", [1, SEQ, HEADS, head], np.int64)
    for i in range(LAYERS):
        p = f"layer.{i}"
        q, k, v = (node("Reshape", [dense(x, f"{p}/{n}", HIDDEN, HIDDEN), heads_shape], f"{p}/{n}/Reshape")
                   for n in ("query", "key", "value"))
        q = node("Transpose", [q], f"{p}/query/Transpose", perm=[0, 2, 1, 3])
        k = node("Transpose", [k], f"{p}/key/Transpose", perm=[0, 2, 3, 1])
        v = node("Transpose", [v], f"{p}/value/Transpose", perm=[0, 2, 1, 3])
        s = node("Div", [node("MatMul", [q, k], f"{p}/scores"), const(f"{p}/sqrt_d", np.sqrt(head))], f"{p}/Div")
        probs = node("Softmax", [node("Add", [s, mask], f"{p}/mask/Add")], f"{p}/Softmax", axis=-1)
        c = node("Transpose", [node("MatMul", [probs, v], f"{p}/context")], f"{p}/context/Transpose", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, const(f"{p}/merge", [1, SEQ, HIDDEN], np.int64)], f"{p}/context/Reshape")
        x = layer_norm(node("Add", [dense(c, f"{p}/attention.output", HIDDEN, HIDDEN), x], f"{p}/residual"),
                       f"{p}/attention.LayerNorm")
        h = dense(x, f"{p}/intermediate", HIDDEN, FFN)
        g = node("Erf", [node("Div", [h, const(f"{p}/sqrt2", np.sqrt(2.0))], f"{p}/gelu/Div")], f"{p}/gelu/Erf")
        g = node("Mul", [node("Mul", [h, node("Add", [g, const(f"{p}/one", 1.0)], f"{p}/gelu/Add")], f"{p}/gelu/Mul"),
                         const(f"{p}/half", 0.5)], f"{p}/gelu/Mul_1")
        x = layer_norm(node("Add", [dense(g, f"{p}/output", FFN, HIDDEN), x], f"{p}/output/residual"),
                       f"{p}/output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, [1, SEQ])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [1, SEQ, HIDDEN])]
    model = helper.make_model(helper.make_graph(nodes, "bert", ids, out, initializer=inits),
                              opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


_BODY = """
const {describeGraph} = await import('/polyfill/inspect.js');
const {configureContext} = await import('/polyfill/options.js');
const adapterInfo = %(adapter_info)s;
const create = navigator.ml.createContext;
navigator.ml.createContext = async function (...args) {
  const context = await create.apply(this, args);
  if (adapterInfo) configureContext(context, {tuning: {adapterInfo}});
  return context;
};
""" + _CAPTURE_GRAPHS + """try {
  const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
  ort.env.wasm.numThreads = 1;
  const model = await fetch('/models/%(name)s/model.onnx').then((r) => r.arrayBuffer());
  const session = await ort.InferenceSession.create(new Uint8Array(model), {
    executionProviders: [{name: 'webnn', deviceType: 'gpu'}], extra: {session: {disable_cpu_ep_fallback: '1'}}});
  const feeds = {};
  for (const [name, values] of Object.entries(%(feeds)s)) {
    feeds[name] = new ort.Tensor('int64', BigInt64Array.from(values, BigInt), [1, values.length]);
  }
  const y = await (await session.run(feeds)).last_hidden_state.getData();
  await session.release();
  return {steps: graphs.map((g) => describeGraph(g).steps.map((s) => s.operators.map((o) => o.type))),
          y: Array.from(y)};
} finally {
  MLGraphBuilder.prototype.build = build;
  delete navigator.ml.createContext;
}
"""


@pytest.mark.parametrize("plan, steps", [("swiftshader", 24), ("h200", 20)])
def test_hf_bert_through_ort_webnn_ep(webnn_page, server_url, plan, steps):
    """The whole opset-14 BERT is one WebNN graph of `steps` GPU steps: per layer the Q/K/V
    product, attention (scores + scale + mask, softmax and context: three steps on SwiftShader,
    one fused in the H200's plan), the output projection + residual, its layer norm, FFN in +
    GELU, FFN out + residual, its layer norm; before them the two embedding gathers (ORT folds the
    position gather into a constant), their sum, its layer norm and the mask (cast, then sub and
    mul). With the written-out layer norms unfused it was 49 / 47 steps. The last 5 of 24 tokens
    masked; the output equals onnxruntime's CPU EP's within 1e-4."""
    import onnxruntime

    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    folder = GENERATED / NAME
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(hf_bert_model(np.random.default_rng(20261205)).SerializeToString())
    rng = np.random.default_rng(7)
    feeds = {"input_ids": rng.integers(0, VOCAB, SEQ), "attention_mask": np.r_[np.ones(SEQ - 5), np.zeros(5)],
             "token_type_ids": np.r_[np.zeros(SEQ // 2), np.ones(SEQ - SEQ // 2)]}
    feeds = {k: v.astype(np.int64) for k, v in feeds.items()}
    result = run_js(webnn_page, server_url, _BODY % {
        "name": NAME, "adapter_info": json.dumps(NVIDIA if plan == "h200" else None),
        "feeds": json.dumps({k: v.tolist() for k, v in feeds.items()})})
    assert "ok" in result, result
    got = result["ok"]
    print(plan, [len(g) for g in got["steps"]], got["steps"])
    assert len(got["steps"]) == 1 and len(got["steps"][0]) == steps, got["steps"]
    norms = [s for s in got["steps"][0] if "reduceMean" in s]
    assert len(norms) == 1 + 2 * LAYERS and all(s.count("reduceMean") == 2 for s in norms), norms
    expected = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {k: v[None] for k, v in feeds.items()})[0].ravel()
    np.testing.assert_allclose(np.array(got["y"], np.float32), expected, rtol=0, atol=ATOL)
