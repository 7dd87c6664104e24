"""The fusion pass (compile/fusion.js) and the one epilogue (ops/epilogue.js): how many GPU
steps the benchmark models compile to, and the value of every fused pattern against float64
NumPy (NaN/±Inf in the fused operand, non-square shapes, float32 and float16, both conv
layouts) on the matrix kernels this adapter would not pick, including the cases where fusion
must not happen (with the kernels it picks, the same cases run as test_conformance.py's fusion
family). Fused attention: test_fusion_attention.py.

Step lists come from the compiled plan through describeGraph() (static/polyfill/inspect.js,
docs/profiling.md).
"""
from __future__ import annotations

import json

import numpy as np

import pytest

from server.models import convert
from tests.conformance.cases import fusion as fusion_cases
from tests.conformance.cases import transformer as transformer_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_runner import open_harness
from tools import bench_models

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

_MODEL_STEPS_JS = """
async ([name, overrides]) => {
  const {addToBuilder} = await import('/harness/graph_json.js');
  const {constantView} = await import('/demos/image-classification/model.js');
  const {describeGraph} = await import('/polyfill/inspect.js');
  const {configureContext} = await import('/polyfill/options.js');
  const manifest = await (await fetch(`/models/${name}/manifest.json`)).json();
  const weights = await (await fetch(`/models/${name}/${manifest.weights}`)).arrayBuffer();
  const context = await navigator.ml.createContext();
  configureContext(context, {tuning: overrides});
  try {
    const builder = new MLGraphBuilder(context);
    const operands = addToBuilder(builder, manifest, (n, spec) => constantView(weights, spec));
    const out = manifest.outputs[0];
    const graph = await builder.build({[out]: operands.get(out)});
    return describeGraph(graph).steps.map((s) => s.operators.map((o) => o.type));
  } finally {
    context.destroy();
  }
}
"""


def _model_steps(page, server_url, name, overrides=None):
    open_harness(page, server_url)
    return page.evaluate(_MODEL_STEPS_JS, [name, overrides])


@pytest.mark.parametrize("name, limit", [("efficientnet-lite0", 52), ("mobilenetv2", 56), ("bert-encoder", 18),
                                         ("bert-encoder-opset14", 18)])
def test_model_step_counts(webnn_page, server_url, name, limit):
    """EfficientNet-Lite0 compiles to at most 52 GPU steps and our MobileNetV2 to at most 56
    (94 and 100 unfused): every conv2d's clamp and residual add ride in its step. The 2-layer
    BERT-style encoder compiles to 18 (66 operators; 32 before views, diamond chains and sibling
    products): per layer one Q/K/V product, the scores + scale, softmax, the context product
    (its transposes read and written through strides), the output projection + residual, layer
    norm, FFN in + GELU, FFN out + residual, layer norm (9 on a CPU adapter, which splits no
    product along K and leaves attention unfused; 7 with attention fused, as hardware adapters
    do, test_fusion_attention.py test_attention_is_one_step); so does the encoder whose layer
    norms are written out as ONNX opset 14 has them (98 operators; each layer norm one step). Every
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


def test_encoder_split_products_fold_into_layer_norm(webnn_page, server_url):
    """The 2-layer encoder (our builder code) with every tiled product split along K in 2
    ranges, as hardware adapters split BERT's products of few tiles: 26 steps, the 18 of
    test_model_step_counts plus a split step for each of its 12 products (Q/K/V, scores,
    context, output projection, FFN in and out per layer), less the 4 reduce
    steps that the layer norms after the output projection and the FFN out product (each +
    bias + residual) make unnecessary (each is then one step: the product's reduce, residual
    and normalization)."""
    bench_models.generate("bert-encoder", onnx=False)
    steps = _model_steps(webnn_page, server_url, "bert-encoder", {"matmul": "tiled", "splitK": 2})
    norms = [s for s in steps if "layerNormalization" in s]
    assert norms == [["matmul", "add", "add", "layerNormalization"]] * 4, steps
    assert len(steps) == 26, steps


_CASE_STEPS_JS = """
async ([casesJson, overrides]) => {
  const {addToBuilder, fromBase64} = await import('/harness/graph_json.js');
  const {describeGraph} = await import('/polyfill/inspect.js');
  const {configureContext} = await import('/polyfill/options.js');
  const context = await navigator.ml.createContext();
  configureContext(context, {tuning: overrides});
  const out = {};
  try {
    for (const c of JSON.parse(casesJson)) {
      const builder = new MLGraphBuilder(context);
      const operands = addToBuilder(builder, c.graph, (name, spec) => fromBase64(spec.bytes));
      const graph = await builder.build(Object.fromEntries(c.graph.outputs.map((n) => [n, operands.get(n)])));
      out[c.name] = describeGraph(graph).steps.map((s) => s.operators.map((o) => o.type));
      graph.destroy();
    }
  } finally {
    context.destroy();
  }
  return out;
}
"""


def _case_steps(page, server_url, cases, overrides=None):
    open_harness(page, server_url)
    return page.evaluate(_CASE_STEPS_JS, [json.dumps(cases), overrides])


def test_fused_cases_compile_to_one_step_each(webnn_page, server_url):
    """Every fused pattern of the conformance family is one step listing all its operators in
    order; a float16 graph adds only its boundary steps (inputs unpacked, the output packed)."""
    cases = [c for c in fusion_cases.graph_cases() if "/unfused/" not in c["name"] and "/views/" not in c["name"]
             and "/attention/" not in c["name"] and "/siblings/" not in c["name"] and c["dataType"] == "float32"]
    steps = _case_steps(webnn_page, server_url, cases)
    for c in cases:
        assert steps[c["name"]] == [[op["op"] for op in c["graph"]["operators"]]], (c["name"], steps[c["name"]])


def test_no_fusion_through_a_shared_or_output_intermediate(webnn_page, server_url):
    """An intermediate read by two branches that do not rejoin, or itself a graph output, keeps
    its own step and buffer: conv2d stands alone; only the relu -> add that reads it is one step."""
    cases = {c["name"].split("/")[-1]: c for c in fusion_cases.graph_cases()
             if "/unfused/" in c["name"] and c["dataType"] == "float32"}
    steps = _case_steps(webnn_page, server_url, list(cases.values()))
    assert steps[cases["intermediate-read-twice"]["name"]] == [["conv2d"], ["sigmoid"], ["relu", "add"]]
    assert steps[cases["intermediate-is-output"]["name"]] == [["conv2d"], ["clamp"]]


def _view_cases(data_type="float32"):
    return {c["name"].split("/")[-1]: c for c in transformer_cases.graph_cases()
            if "/views/" in c["name"] and c["dataType"] == data_type}


def test_views_fold_into_the_matrix_steps(webnn_page, server_url):
    """Transposes and reshapes read (or, after a matmul, written) by a matrix kernel through
    strides take no step of their own; the folded operators are listed in the kernel's step. A
    transpose with a non-matrix consumer, and a reshape merging non-contiguous dimensions, are
    one strided copy each."""
    cases = _view_cases()
    steps = _case_steps(webnn_page, server_url, list(cases.values()))
    got = {name: steps[c["name"]] for name, c in cases.items()}
    assert got["attention-scores"] == [["matmul", "div", "transpose", "transpose"]], got
    assert got["attention-context-merge-dense"] == [["matmul", "transpose", "transpose"], ["matmul"]], got
    assert got["transpose-matmul-and-relu"] == [["matmul", "transpose"], ["transpose"], ["relu"]], got
    assert got["reshape-needs-copy"] == [["transpose"], ["matmul"]], got
    assert got["gemm-transposed-views"] == [["gemm", "transpose", "transpose"]], got


@pytest.mark.parametrize("kernel", ["tiled", "tiled128", "gemv"])
def test_view_values_on_every_matrix_kernel(webnn_page, server_url, kernel):
    """The view and sibling cases (NaN/±Inf in the strided operand, float32 and float16) against
    float64 NumPy with each matrix kernel forced (the adapter's own pick runs them in test_conformance):
    strided A and B loads, the transposed store, vec4 loads refused for strided operands. (The
    tiled kernel split along K runs all of them, float32, in
    tests/test_split_norm.py::test_transformer_family_with_the_split_forced.)"""
    overrides = {"matmul": kernel}
    cases = list(_view_cases().values()) + list(_view_cases("float16").values())
    cases += [c for c in transformer_cases.graph_cases() if "/siblings/" in c["name"]]
    if kernel != "tiled":  # each variant compiles in 0.3-2 s on SwiftShader: the attention
        # layouts in float32 (float16 rounding is the shared epilogue's, checked on tiled)
        cases = [c for c in cases if "attention" in c["name"] and c["dataType"] == "float32"]
    assert_all_pass(run_cases(webnn_page, server_url, cases, overrides))


# The fusion family's values with the kernels the adapter picks (NaN/±Inf in the fused operands,
# float32 and float16, both layouts) are test_conformance.py::test_family[fusion]'s: the same
# cases, shipped (the staleness test keeps the files equal to tests/conformance/cases/fusion.py).


@pytest.mark.parametrize("overrides", [{"pointwise": "tiled"}, {"matmul": "tiled"}, {"matmul": "tiled128"},
                                       {"matmul": "gemv"}, {"pointwise": "tiled", "matmul": "tiled", "splitK": 3}])
def test_fused_cases_on_every_matrix_kernel(webnn_page, server_url, overrides):
    """The pointwise-conv and matrix cases on the kernels this adapter would not pick (the
    epilogue sits in each kernel's store_y; split along K, in the reduce step's); float32 only
    for tiled128 and the split, and on tiled128 one gemm and one batched matmul with a broadcast
    operand: the matrix kernels share one store_y and epilogue text (ops/matmul_kernels.js), so
    what is tiled128's own is the (row, column, batch) it stores at, which those two reach, with
    edge tiles; the other patterns (tanh, the diamonds) change only that shared text, run here on
    tiled, gemv and the split and by test_conformance on the adapter's pick (3-7 s of SwiftShader
    compiling each tiled128 variant)."""
    key = "pointwise" if "pointwise" in overrides else "gemm-|matmul-"
    cases = [c for c in fusion_cases.graph_cases() if any(k in c["name"] for k in key.split("|"))]
    assert len(cases) >= 4
    if overrides.get("matmul") == "tiled128" or "splitK" in overrides:
        # slow on SwiftShader; float16's rounding is the shared epilogue's, checked on the others
        cases = [c for c in cases if c["dataType"] == "float32"]
    if overrides.get("matmul") == "tiled128":
        cases = [c for c in cases if c["name"].endswith(("/gemm-skinny-max", "/matmul-batched-add-bias-gelu"))]
        assert len(cases) == 2, [c["name"] for c in cases]
    assert_all_pass(run_cases(webnn_page, server_url, cases, overrides))


def _split_norm_cases(data_type="float32"):
    return {c["name"].split("/split-norm/")[-1]: c for c in transformer_cases.graph_cases()
            if "/split-norm/" in c["name"] and c["dataType"] == data_type}


#: the context's tuning switches forcing the tiled kernel split along K in 3 ranges (hardware
#: adapters split products of few tiles; SwiftShader never does by default)
SPLIT3 = {"matmul": "tiled", "splitK": 3}


def test_split_norm_adds_the_partial_sums(webnn_page, server_url):
    """A split product (+ bias, + residual) read only by layerNormalization is the split step and
    the normalization's step, which lists the product's operators too (split steps + 1, not + 2);
    where the sum is also read by a relu the normalization also stores it, and where it is a graph
    output the reduce step stays. Unsplit
    (SwiftShader's own plan) the pattern changes nothing: the product step, then the norm. (The
    values of these and larger cases: tests/test_split_norm.py.)"""
    cases = _split_norm_cases()
    default = _case_steps(webnn_page, server_url, list(cases.values()))
    got = {name: default[c["name"]] for name, c in cases.items()}
    assert got["gemm-bias-residual-layernorm"] == [["gemm", "add"], ["layerNormalization"]], got
    steps = _case_steps(webnn_page, server_url, list(cases.values()), SPLIT3)
    got = {name: steps[c["name"]] for name, c in cases.items()}
    assert got["gemm-bias-residual-layernorm"] == [["gemm", "add"], ["gemm", "add", "layerNormalization"]], got
    assert got["matmul-add-add-layernorm-3d"] == [["matmul", "add", "add"],
                                                  ["matmul", "add", "add", "layerNormalization"]], got
    assert got["ort-reshape-gemm-reshape-add-layernorm"] == [["gemm", "reshape", "add"],
                                                             ["gemm", "reshape", "add", "layerNormalization"]], got
    # the sum also read by a relu: the normalization stores it as it adds the partials (`keep`)
    assert got["unfused/sum-read-twice"] == [["gemm", "add"], ["gemm", "add", "layerNormalization"], ["relu"]], got
    assert got["unfused/sum-is-output"] == [["gemm", "add"], ["gemm", "add"], ["layerNormalization"]], got


_HARDWARE_SPLIT_JS = """
async (widths) => {
  const {describeGraph} = await import('/polyfill/inspect.js');
  // the plan an NVIDIA H200 gets (splitCount and the kernel choice read the adapter info)
  const context = await navigator.ml.createContext({polyfill: {tuning: {
    adapterInfo: {vendor: 'nvidia', architecture: '', description: '', isFallbackAdapter: false}}}});
  const out = {};
  try {
    for (const n of widths) {
      const builder = new MLGraphBuilder(context);
      const a = builder.input('a', {dataType: 'float32', shape: [128, 768]});
      const b = builder.constant({dataType: 'float32', shape: [768, n]}, new Float32Array(768 * n));
      const graph = await builder.build({y: builder.matmul(a, b)});
      const {steps} = describeGraph(graph, {source: true});
      // the partial sums the reduce step adds: its split_value's additions
      const reduce = steps.find((s) => s.kernel === 'matmul_split_reduce');
      const adds = reduce ? (reduce.source.match(/s \\+= P\\[/g) ?? []).length : 0;
      out[n] = [steps.map((s) => s.kernel), adds];
      graph.destroy();
    }
  } finally {
    context.destroy();
  }
  return out;
}
"""


def test_split_choice_on_a_hardware_adapter(webnn_page, server_url):
    """On a hardware adapter (its adapter info given to a SwiftShader context) a 128 x 768 x N
    product of 64 x 64 tiles splits along K (partial products + reduce): N = 768 (24 workgroups)
    in 5 ranges (120 workgroups: no more than 128), N = 1536 (48) in 2, BERT-base's FFN-in (N =
    3072, 96) product in 4; its Q/K/V product (N = 2304, 72 workgroups) and N = 4096 (128) stay
    one step. The reduce step adds as many partial sums as there are ranges."""
    open_harness(webnn_page, server_url)
    got = webnn_page.evaluate(_HARDWARE_SPLIT_JS, [768, 1536, 2304, 3072, 4096])
    split = ["matmul_tiled_split", "matmul_split_reduce"]
    assert {n: kernels for n, (kernels, _) in got.items()} == {
        "768": split, "1536": split, "2304": ["matmul_tiled"], "3072": split, "4096": ["matmul_tiled"]}, got
    assert {n: adds for n, (_, adds) in got.items()} == {"768": 5, "1536": 2, "2304": 0, "3072": 4, "4096": 0}, got


def _round_trip_cases():
    """matmul -> cast to int32 -> cast back to float32 -> mul by a scale -> add a bias, as ORT's
    WebNN EP writes an ONNX MatMulInteger and the dynamic quantizer's rescaling: products with
    fractions of both signs (truncated toward zero, -0.x to +0), beyond int32's range both ways
    (saturated; 2^31 - 1 reads back as 2^31), NaN (to 0) and ±Inf; and the same chain whose int32
    value is also a graph output, where the casts keep their own steps."""
    from tests.conformance.encode import graph_case, operand, tensor
    from tests.conformance.family_helpers import describe

    rng = np.random.default_rng(20261208)
    a = rng.integers(-8, 9, (5, 6)) / 8
    a[1] *= 2.0 ** 30                       # |products| up to ~2^32: saturated
    a[2, 0], a[3, 1] = np.nan, np.inf
    b = rng.integers(-16, 17, (6, 7)) / 16
    scale, bias = np.float32(-0.375), (rng.integers(-8, 9, 7) / 4).astype(np.float32)
    with np.errstate(invalid="ignore"):
        m = (a @ b).astype(np.float32)
        t = np.where(np.isnan(m), 0.0, np.clip(np.trunc(m.astype(np.float64)), -2.0 ** 31, 2.0 ** 31 - 1))
    y = (t.astype(np.int64).astype(np.float32) * scale).astype(np.float32) + bias
    cases = []
    for tag, outputs in (("fused", ["y"]), ("int32-is-output", ["y", "i"])):
        graph = {"inputs": {"a": describe(a.astype(np.float32))},
                 "constants": {"b": tensor(b, "float32"), "s": tensor(np.array(scale), "float32"),
                               "c": tensor(bias, "float32")},
                 "operators": [{"op": "matmul", "args": [operand("a"), operand("b")], "outputs": "m"},
                               {"op": "cast", "args": [operand("m"), "int32"], "outputs": "i"},
                               {"op": "cast", "args": [operand("i"), "float32"], "outputs": "f"},
                               {"op": "mul", "args": [operand("f"), operand("s")], "outputs": "p"},
                               {"op": "add", "args": [operand("p"), operand("c")], "outputs": "y"}],
                 "outputs": outputs}
        expected = {"y": tensor(y, "float32")}
        if "i" in outputs:
            expected["i"] = tensor(t.astype(np.int32), "int32")
        cases.append(graph_case(f"fusion/float32/cast-round-trip/{tag}", "matmul", "float32", graph,
                                {"a": tensor(a.astype(np.float32), "float32")}, expected, "ULP", 2))
    return cases


def test_cast_round_trip_is_a_stage(webnn_page, server_url):
    """The two casts of _round_trip_cases are one stage of the product's step (trunc_i32_f), with
    the values of the casts one by one; an int32 value read elsewhere keeps them apart."""
    cases = _round_trip_cases()
    steps = _case_steps(webnn_page, server_url, cases)
    fused, apart = (steps[c["name"]] for c in cases)
    assert fused == [["matmul", "cast", "cast", "mul", "add"]], fused
    assert apart[0] == ["matmul"] and ["cast"] in apart, apart
    for overrides in (None, {"matmul": "tiled"}):
        assert_all_pass(run_cases(webnn_page, server_url, cases, overrides))


def _reduction_chain_cases():
    """reduceMax / reduceMin heading a chain, as ORT's DynamicQuantizeLinear computes a scale:
    reduceMax -> max with 0 -> sub (a scalar, or per row) -> div by 255, over all axes and over
    one axis (several rows: the epilogue's index is the row), NaN and ±Inf in the input; float32
    and float16 (each stage rounded)."""
    rng = np.random.default_rng(20261209)
    cases = []
    for data_type in ("float32", "float16"):
        x = fusion_cases.specials(fusion_cases.dyadic(rng, (6, 37)) * 4)
        x[4] = -np.abs(x[4]) - 1  # a row below 0: max(.., 0) picks 0
        for tag, options in (("all", {}), ("rows", {"axes": [1], "keepDimensions": True})):
            # the sub's other operand: a scalar, or one value a row (the epilogue indexes it by row)
            lo = np.array([-1.5]) if tag == "all" else fusion_cases.dyadic(rng, (6, 1)) * 3
            arrays = {"x": x, "lo": lo, "k": np.array(255.0), "e": np.array(0.125)}
            cases.append(fusion_cases.chain_case(f"reduce-max-chain-{tag}", data_type, arrays, ["x"], [
                fusion_cases._op("reduceMax", ["x"], "r", **options),
                fusion_cases._op("max", ["r", "e"], "m"),
                fusion_cases._op("sub", ["m", "lo"], "s"),
                fusion_cases._op("div", ["s", "k"], "y"),
            ], ["y"], "ULP", fusion_cases._ulp(data_type, "max", "sub", "div")))
            cases.append(fusion_cases.chain_case(f"reduce-min-chain-{tag}", data_type, arrays, ["x"], [
                fusion_cases._op("reduceMin", ["x"], "r", **options),
                fusion_cases._op("min", ["r", "e"], "y"),
            ], ["y"], "ULP", fusion_cases._ulp(data_type, "min")))
    return cases


@pytest.mark.parametrize("rows", ["invocation", "workgroup"])
def test_reduce_min_max_head_chains(webnn_page, server_url, rows):
    """Each chain of _reduction_chain_cases is one step (a float16 graph adds its input's
    unpacking and output's packing), with the operators' values one by one."""
    cases = _reduction_chain_cases()
    steps = _case_steps(webnn_page, server_url, cases, {"rows": rows})
    for c in cases:
        ops = [op["op"] for op in c["graph"]["operators"]]
        assert ops in steps[c["name"]] and len(steps[c["name"]]) <= 3, (c["name"], steps[c["name"]])
    assert_all_pass(run_cases(webnn_page, server_url, cases, {"rows": rows}))
