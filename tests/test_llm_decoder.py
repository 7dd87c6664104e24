"""The text-generation page's decoder (static/demos/text-generation/decoder.js) on ORT-web's WebNN
EP over the polyfill, against onnxruntime's CPU EP (Python) on the same model.

The tiny random-weight GenAI-style decoder of tools/llm_model.py (2 layers, hidden 64, 4/2 heads,
GroupQueryAttention with rotary, MatMulNBits with K = 72 in the MLP's down product, an 8-bit
tied embedding) is written under server/models/generated/llm-tiny-<bits>/. Greedy decoding of 16
tokens from a fixed prompt must equal onnxruntime's token for token; ORT must build one WebNN
graph per session (prefill, decode: CPU fallback disabled) and each decode step must be one
dispatch and one readTensor (the logits only: the KV cache stays on the device); the mask
work ORT repeats in every layer is done once a graph. A q4f16 variant (float16 activations,
scales, norms, cache and logits) compiles to the same steps, plus the logits' packing.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.graph_runner import run_js
from tests.test_ort_webnn_ep import VENDOR
from tools.llm_model import write_tiny
from tools.llm_reference import OrtDecoder

REPO = Path(__file__).resolve().parent.parent
PROMPT = [5, 17, 42, 99, 3]
NEW_TOKENS = 16
MAX_LENGTH = 32

_BODY = """
const {describeGraph} = await import('/polyfill/inspect.js');
const counts = {reads: 0, dispatches: 0, builds: 0};
const read = MLContext.prototype.readTensor, dispatch = MLContext.prototype.dispatch;
const build = MLGraphBuilder.prototype.build;
MLContext.prototype.readTensor = function (...a) { counts.reads++; return read.apply(this, a); };
MLContext.prototype.dispatch = function (...a) { counts.dispatches++; return dispatch.apply(this, a); };
const graphs = [];
MLGraphBuilder.prototype.build = async function (...a) {
  counts.builds++;
  const graph = await build.apply(this, a);
  graphs.push(graph);
  return graph;
};
try {
  const ort = await import('/demos/bench-ort/vendor/ort.min.mjs');
  ort.env.wasm.numThreads = 1;
  const {Decoder} = await import('/demos/text-generation/decoder.js');
  const d = await Decoder.load(ort, '/models/%(name)s/', {maxLength: %(L)d, deviceType: '%(device)s'});
  const builds = counts.builds;
  const prompt = %(prompt)s;
  let logits = await d.prefill(prompt);
  const tokens = [], perStep = [];
  let pos = prompt.length;
  const argmax = (a) => a.reduce((best, v, i) => (v > a[best] ? i : best), 0);
  for (;;) {
    const t = argmax(logits);
    tokens.push(t);
    if (tokens.length === %(n)d) break;
    const before = {...counts};
    logits = await d.step(t, pos++);
    perStep.push([counts.reads - before.reads, counts.dispatches - before.dispatches]);
  }
  // the GroupQueryAttention mask's steps of each graph (cumulativeSum: one a layer as ORT writes it)
  const maskSteps = graphs.map((g) => describeGraph(g).steps
    .filter((st) => st.operators.some((o) => o.type === 'cumulativeSum')).length);
  await d.release();
  // the operators each fused attention step stands for
  const attention = graphs.flatMap((g) => describeGraph(g).steps.filter((st) => st.kernel === 'attention')
    .map((st) => st.operators.map((o) => o.type)));
  // the steps of the KV-cache updates (scatterND, two a layer) of each graph: the scatterNDs each holds
  const cacheSteps = graphs.map((g) => describeGraph(g).steps
    .filter((st) => st.operators.some((o) => o.type === 'scatterND'))
    .map((st) => st.operators.filter((o) => o.type === 'scatterND').length));
  // a prompt that fills a shorter graph exactly prefills through it; one more token takes the next
  const rowsAt = [16, 17, 31].map((n) => d.prefillRowsFor(n));
  // the steps of the rotaries (split of the halves, q and k a layer): the splits each holds
  const rotarySteps = graphs.map((g) => describeGraph(g).steps
    .filter((st) => st.operators.some((o) => o.type === 'split'))
    .map((st) => st.operators.filter((o) => o.type === 'split').length));
  // steps that add up block sums (reduceSum) outside a packed product, and packed products that do
  const sumSteps = graphs.map((g) => describeGraph(g).steps.filter((st) => st.operators.some((o) => o.type === 'reduceSum'))
    .map((st) => st.operators.some((o) => o.type === 'dequantizeLinear')));
  // conversion steps between the tensor layout and the compute layout (float16 graphs)
  const conversions = graphs.map((g) => describeGraph(g).steps.filter((st) => /^(un)?pack_float16$/.test(st.kernel)).length);
  return {conversions, sumSteps, tokens, builds, perStep, maskSteps, cacheSteps, rotarySteps, attention, prefillRows: d.prefillRows, rowsAt, graphs: graphs.length};
} finally {
  Object.assign(MLContext.prototype, {readTensor: read, dispatch});
  MLGraphBuilder.prototype.build = build;
}
"""


#: the contexts ORT creates compile as for an NVIDIA adapter: fused attention reading the shared
#: K/V heads of grouped-query attention from the cache (compile/attention.js), which SwiftShader's
#: own plan leaves unfused
_HARDWARE_PLAN = """
const {configureContext} = await import('/polyfill/options.js');
const createContext = navigator.ml.createContext;
navigator.ml.createContext = async function (...args) {
  const context = await createContext.apply(this, args);
  configureContext(context, {tuning: {adapterInfo: {vendor: 'nvidia', architecture: 'hopper', description: '', isFallbackAdapter: false}}});
  return context;
};
"""


@pytest.mark.parametrize("bits,plan", [(8, "own"), (4, "own"), (4, "hardware"), (4, "offsets"), (4, "float16-hardware")])
def test_greedy_generation_equals_onnxruntime_with_the_cache_on_the_device(webnn_page, server_url, bits, plan):
    """plan: the polyfill's own for SwiftShader or a hardware adapter's; `offsets`: the layers'
    products with block offsets and the default zero point (as the GGUF converter writes Q4_1);
    `float16`: a q4f16 decoder (float16 activations, scales, norms, KV cache and logits)."""
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    offsets = plan.startswith("offsets")
    float16 = plan.startswith("float16")
    name = f"llm-tiny-{bits}" + ("-offsets" if offsets else "") + ("-f16" if float16 else "")
    folder = REPO / "server" / "models" / "generated" / name
    # 4-bit: an even number of blocks along every K (ff 100 = 4 blocks of 32, not a multiple of
    # the block). ORT's WebNN EP hands a 4-bit zero point over as ONNX's bytes, each row padded to
    # whole bytes, under the shape [N, blocks, 1]: with an odd block count those bytes are not
    # the packed tensor the shape describes, and a conforming constant() refuses them. Block
    # offsets need whole blocks (ff 128).
    if offsets:
        write_tiny(folder, bits=4, ff=128, offsets=True, zero_points=False)
    else:
        write_tiny(folder, bits=bits, **({"ff": 100} if bits == 4 else {}), **({"dtype": "float16"} if float16 else {}))
    expected = OrtDecoder(folder, MAX_LENGTH).generate(PROMPT, NEW_TOKENS)
    assert len(set(expected)) > 8  # a varied continuation, not one repeated token
    body = (_HARDWARE_PLAN if plan.endswith("hardware") else "") + _BODY
    result = run_js(webnn_page, server_url, body % {"name": name, "L": MAX_LENGTH, "device": "gpu",
                                                     "prompt": json.dumps(PROMPT), "n": NEW_TOKENS})
    assert "ok" in result, result
    got = result["ok"]
    assert got["tokens"] == expected
    assert got["builds"] == 2, got  # one WebNN graph per session: nothing left to ORT's CPU EP
    assert got["perStep"] == [[1, 1]] * (NEW_TOKENS - 1), got["perStep"]
    # the attention mask ORT writes once a layer from the same inputs is computed once a graph
    # (compile/cse.js)
    # the 5-token prompt prefills through the 16-row graph (model-16.onnx) into the 32-row cache:
    # a third graph, built at the first prefill
    assert got["prefillRows"] == 16 and got["graphs"] == 3, got
    assert got["rowsAt"] == [16, 32, 32], got["rowsAt"]
    assert got["maskSteps"] == [1, 1, 1], got["maskSteps"]
    # a layer's key and value cache updates are one step (compile/scatter_pairs.js; ops/gather.js:
    # few update slices searched from each element)
    assert got["cacheSteps"] == [[2, 2]] * 3, got["cacheSteps"]
    # a layer's q and k rotaries are one step (compile/rotary.js planRotaryPairs)
    assert got["rotarySteps"] == [[2, 2]] * 3, got["rotarySteps"]
    # block offsets: the block sums and their product are part of the packed products (a layer's
    # q/k/v and gate/up share theirs), no step of their own (compile/block_offsets.js)
    if offsets:
        assert all(steps and all(steps) for steps in got["sumSteps"]), got["sumSteps"]
    else:
        assert got["sumSteps"] == [[]] * 3, got["sumSteps"]
    # a float16 model's KV cache is read and written in its tensor layout by the cache update's
    # step (ops/gather.js): the logits' packing is each graph's only conversion step
    assert got["conversions"] == ([1, 1, 1] if float16 else [0, 0, 0]), got["conversions"]
    if plan.endswith("hardware"):
        # one fused attention step a layer a graph, reading the K/V cache itself: the expands of
        # the shared heads (and K's transpose) are part of it, not steps of their own
        assert len(got["attention"]) == 6, got["attention"]
        for ops in got["attention"]:
            assert ops.count("expand") == 2 and "softmax" in ops, ops


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_long_prompt_prefills_through_the_cache_pairs_and_rotary_pairs(webnn_page, server_url, dtype):
    """A 40-token prompt prefills through the 64-row graph (128 update slices per cache write: the
    copy, claim and write steps, over scatterSearchMax) on a hardware adapter's plan: the tokens
    equal onnxruntime's, and a layer's K and V cache writes share their three steps and its q and k
    rotaries one step also there (the prompt's position range, 512 bytes, is one constant for every
    rotary: compile/cse.js compares constants by contents). float16 (q4f16): clear, claim and a
    last step writing the float16 caches in their tensor layout; the logits' packing each graph's
    only conversion step."""
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    name = "llm-tiny-4" + ("-f16" if dtype == "float16" else "")
    folder = REPO / "server" / "models" / "generated" / name
    write_tiny(folder, bits=4, ff=100, dtype=dtype)
    # float16: a prompt whose 8 greedy choices all lead the runner-up by 0.48 or more in
    # onnxruntime's logits (the float32 test's prompt has a near tie, 0.03 or two binary16 ULPs,
    # at its 7th, which float16 implementations that round differently may break either way)
    prompt = [(i * (41 if dtype == "float16" else 37) + 5) % 300 for i in range(40)]
    expected = OrtDecoder(folder, 64).generate(prompt, 8)
    result = run_js(webnn_page, server_url, _HARDWARE_PLAN + _BODY % {
        "name": name, "L": 64, "device": "gpu", "prompt": json.dumps(prompt), "n": 8})
    assert "ok" in result, result
    got = result["ok"]
    assert got["tokens"] == expected
    assert got["prefillRows"] == 64 and got["graphs"] == 2, got
    # the 64-row prefill graph, then the decode graph
    assert got["cacheSteps"] == [[2] * 6, [2, 2]], got["cacheSteps"]
    assert got["rotarySteps"] == [[2, 2], [2, 2]], got["rotarySteps"]
    assert got["conversions"] == ([1, 1] if dtype == "float16" else [0, 0]), got["conversions"]


def test_a_q4f16_decoder_on_the_cpu_context(webnn_page, server_url):
    """The q4f16 tiny decoder (float16 activations, scales, norms, cache and logits) on the CPU
    context (ONNX Runtime's wasm under WebNN): onnxruntime's greedy tokens, one WebNN graph per
    session, one dispatch and one read a step."""
    if not (VENDOR / "ort.min.mjs").is_file():
        pytest.fail(f"{VENDOR}/ort.min.mjs is missing: make setup installs onnxruntime-web")
    name = "llm-tiny-4-f16-cpu"
    folder = REPO / "server" / "models" / "generated" / name
    write_tiny(folder, bits=4, ff=100, dtype="float16")
    expected = OrtDecoder(folder, MAX_LENGTH).generate(PROMPT, NEW_TOKENS)
    result = run_js(webnn_page, server_url, _BODY % {"name": name, "L": MAX_LENGTH, "device": "cpu",
                                                     "prompt": json.dumps(PROMPT), "n": NEW_TOKENS})
    assert "ok" in result, result
    got = result["ok"]
    assert got["tokens"] == expected
    assert got["builds"] == 2 and got["perStep"] == [[1, 1]] * (NEW_TOKENS - 1), got
