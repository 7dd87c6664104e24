"""A split product's reduce step added up by the normalization that reads it
(compile/split_norm.js, ops/matmul_kernels.js addSplitRead): values against float64 NumPy and
bit for bit against the unfused steps on the same kernels, with the split forced through the
context's tuning switches (SwiftShader never splits by default; hardware adapters split
products of few tiles). The step counts are tests/test_fusion.py's (test_split_norm_*,
test_encoder_split_*) and tests/test_ort_webnn_ep.py's.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.cases import transformer as transformer_cases
from tests.conformance.cases.fusion import dyadic
from tests.conformance.encode import to_type
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_batch import assert_bits, run_on_context
from tests.graph_runner import decode_tensor, encode_tensor
from tests.reference.normalization import instanceNormalization, layerNormalization
from tests.reference.ops import conv2d, gemm, matmul

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

#: the tiled kernel split along K in 3 ranges
SPLIT3 = {"matmul": "tiled", "splitK": 3}


def _split_norm_cases(data_type):
    return [c for c in transformer_cases.graph_cases() if "/split-norm/" in c["name"] and c["dataType"] == data_type]


@pytest.mark.parametrize("rows", ["invocation", "workgroup"])
def test_split_norm_values(webnn_page, server_url, rows):
    """The split-norm cases (NaN/±Inf in the residual: those rows NaN; float32 and float16; scale
    and bias present and absent) with the product split in 3, against float64 NumPy, with one
    invocation per row (the partial sums added in each pass) and one workgroup per row (the
    row staged in workgroup memory)."""
    cases = _split_norm_cases("float32") + _split_norm_cases("float16")
    assert_all_pass(run_cases(webnn_page, server_url, cases, {**SPLIT3, "rows": rows}))


def test_transformer_family_with_the_split_forced(webnn_page, server_url):
    """test_conformance's transformer family (views, attention, siblings, split norms; its
    float32 cases: the float16 rounding of the split read is test_split_norm_values's) with every
    tiled product split along K in 2 ranges."""
    cases = [c for c in transformer_cases.graph_cases() if c["dataType"] == "float32"]
    assert_all_pass(run_cases(webnn_page, server_url, cases, {"matmul": "tiled", "splitK": 2}))


_TWINS_JS = """
async (context, cases) => {
  const {addToBuilder, fromBase64, toBase64} = await import('/harness/graph_json.js');
  const {describeGraph} = await import('/polyfill/inspect.js');
  const out = [];
  for (const {description, inputs} of cases) {
    const builder = new MLGraphBuilder(context);
    const operands = addToBuilder(builder, description, (name, spec) => fromBase64(spec.bytes));
    const graph = await builder.build(Object.fromEntries(description.outputs.map((n) => [n, operands.get(n)])));
    const steps = describeGraph(graph).steps.map((st) => st.kernel);
    const tensors = {};
    for (const [name, spec] of Object.entries(description.inputs)) {
      tensors[name] = await context.createTensor({...spec, writable: true});
      context.writeTensor(tensors[name], fromBase64(inputs[name].bytes));
    }
    const results = {};
    for (const name of description.outputs) {
      const o = operands.get(name);
      results[name] = await context.createTensor({dataType: o.dataType, shape: o.shape, readable: true});
    }
    context.dispatch(graph, tensors, results);
    const y = results[description.outputs[0]];
    out.push({steps, y: {dataType: y.dataType, shape: [...y.shape], bytes: toBase64(await context.readTensor(y))}});
    graph.destroy();
  }
  return out;
}
"""


def _split_norm_graphs(rng, data_type, norm):
    """(description, inputs, float64 reference of the output) of a product split along K into
    a normalization, M = 37, N = 200, K = 300 (float16: dyadic data, exact products, so the
    reference rounds where the operators round; float32: uniform): ``gemm``: alpha 0.5, beta 2,
    C, a residual add, layerNormalization over axis 1 with scale and bias, NaN in a row of A and ±Inf in two
    rows of the residual; ``matmul``: a 3-D matmul + bias + residual, layerNormalization over
    axis 2 without scale and bias; ``instance``: a 4-D matmul [1, 3, 37, 300] x [300, 20] ->
    instanceNormalization (nchw: 37 x 20 per channel) with scale and bias; ``conv-nchw`` /
    ``conv-nhwc``: a pointwise conv2d 300 -> 20 channels over 5 x 8 with bias ->
    instanceNormalization (nhwc stores column-major: the reduce step stays)."""
    t = lambda a: to_type(a, data_type).astype(np.float64)  # noqa: E731
    # float16: dyadic (exact products, so the reference's float16 roundings are the kernels');
    # float32: inexact, so a different summation order would show in the bitwise comparison
    def data(shape, k=8):
        return dyadic(rng, shape, k) if data_type == "float16" else rng.uniform(-1, 1, shape) * 8 / k
    if norm == "gemm":
        a, b, c, r = data((37, 300)), data((300, 200), 16), data((200,), 4), data((37, 200)) * 2
        a[3, 7], r[10, 100], r[20, 0] = np.nan, np.inf, -np.inf
        scale, bias = rng.uniform(0.5, 1.2, 200), rng.uniform(-0.25, 0.25, 200)
        opts = {"scale": t(scale), "bias": t(bias), "axes": [1]}
        s = t(t(gemm(t(a), t(b), {"c": t(c), "alpha": 0.5, "beta": 2.0}, data_type)) + t(r))
        ref = layerNormalization(s, opts, data_type)
        inputs, constants = {"a": a, "r": r}, {"b": b, "c": c, "scale": scale, "bias": bias}
        operators = [
            {"op": "gemm", "args": [{"operand": "a"}, {"operand": "b"}],
             "options": {"c": {"operand": "c"}, "alpha": 0.5, "beta": 2.0}, "outputs": "g"},
            {"op": "add", "args": [{"operand": "g"}, {"operand": "r"}], "outputs": "s"},
            {"op": "layerNormalization", "args": [{"operand": "s"}],
             "options": {"axes": [1], "scale": {"operand": "scale"}, "bias": {"operand": "bias"}}, "outputs": "y"}]
    elif norm == "matmul":
        x, w, wb, r = data((2, 37, 300)), data((300, 200), 16), data((200,), 4), data((2, 37, 200))
        s = t(t(t(matmul(t(x), t(w))) + t(wb)) + t(r))
        ref = layerNormalization(s, {"axes": [2]}, data_type)
        inputs, constants = {"x": x, "r": r}, {"w": w, "wb": wb}
        operators = [
            {"op": "matmul", "args": [{"operand": "x"}, {"operand": "w"}], "outputs": "m"},
            {"op": "add", "args": [{"operand": "m"}, {"operand": "wb"}], "outputs": "p"},
            {"op": "add", "args": [{"operand": "r"}, {"operand": "p"}], "outputs": "s"},
            {"op": "layerNormalization", "args": [{"operand": "s"}], "options": {"axes": [2]}, "outputs": "y"}]
    elif norm in ("conv-nchw", "conv-nhwc"):
        layout = norm[5:]
        x, w, cb = data((1, 300, 5, 8)), data((20, 300, 1, 1), 16), data((20,), 4)
        if layout == "nhwc":
            x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        s = t(conv2d(t(x), t(w), {"bias": t(cb), "inputLayout": layout}))
        ref = instanceNormalization(s, {"layout": layout}, data_type)
        inputs, constants = {"x": x}, {"w": w, "cb": cb}
        operators = [
            {"op": "conv2d", "args": [{"operand": "x"}, {"operand": "w"}],
             "options": {"bias": {"operand": "cb"}, "inputLayout": layout}, "outputs": "s"},
            {"op": "instanceNormalization", "args": [{"operand": "s"}], "options": {"layout": layout}, "outputs": "y"}]
    else:
        x, w = data((1, 3, 37, 300)), data((300, 20), 16)
        scale, bias = rng.uniform(0.5, 1.2, 3), rng.uniform(-0.25, 0.25, 3)
        s = t(matmul(t(x), t(w)))
        ref = instanceNormalization(s, {"scale": t(scale), "bias": t(bias)}, data_type)
        inputs, constants = {"x": x}, {"w": w, "scale": scale, "bias": bias}
        operators = [
            {"op": "matmul", "args": [{"operand": "x"}, {"operand": "w"}], "outputs": "s"},
            {"op": "instanceNormalization", "args": [{"operand": "s"}],
             "options": {"scale": {"operand": "scale"}, "bias": {"operand": "bias"}}, "outputs": "y"}]
    description = {
        "inputs": {n: {"dataType": data_type, "shape": list(a.shape)} for n, a in inputs.items()},
        "constants": {n: encode_tensor(to_type(a, data_type)) for n, a in constants.items()},
        "operators": operators, "outputs": ["y"]}
    return description, {n: encode_tensor(to_type(a, data_type)) for n, a in inputs.items()}, ref


@pytest.mark.parametrize("rows, data_type", [("invocation", "float32"), ("workgroup", "float16")])
def test_split_norm_large_shapes(webnn_page, server_url, rows, data_type):
    """A product split in 3 along K = 300 into a normalization of its 37 x 200 rows (see
    _split_norm_graphs: gemm with alpha, beta, C, residual, scale and bias, NaN/±Inf rows;
    3-D matmul + bias + residual without scale and bias; 4-D matmul and pointwise conv2d + bias
    -> instanceNormalization) against float64 NumPy (layerNormalization's absolute bound for
    all; rows holding NaN or ±Inf are NaN), and bit for bit what the same kernels give with the
    sum also a graph output, which keeps the reduce step (the same f32 sums, epilogue and
    rounding), the one step fewer asserted; an nhwc pointwise conv2d stores column-major and
    keeps its reduce step. One data type per row path, the pairs test_split_norm_edge_values
    leaves out (so each path meets each type at a size beyond the conformance cases; those run
    both types on both paths in test_split_norm_values): 8-14 s of SwiftShader a pair."""
    rng = np.random.default_rng(15)
    cases, refs = [], []
    for norm in ("gemm", "matmul", "instance", "conv-nchw", "conv-nhwc"):
        description, inputs, ref = _split_norm_graphs(rng, data_type, norm)
        twin = {**description, "outputs": ["y", description["operators"][-2]["outputs"]]}
        cases += [{"description": description, "inputs": inputs}, {"description": twin, "inputs": inputs}]
        refs.append((norm, ref))
    out = run_on_context(webnn_page, server_url, _TWINS_JS, cases, {**SPLIT3, "pointwise": "tiled", "rows": rows})
    atol = 1 / 1024 if data_type == "float32" else 1 / 512
    for (norm, ref), fused, unfused in zip(refs, out[0::2], out[1::2]):
        assert "matmul_tiled_split" in fused["steps"], (norm, fused["steps"])
        kept = norm == "conv-nhwc"
        assert ("matmul_split_reduce" in fused["steps"]) is kept, (norm, fused["steps"])
        assert len(fused["steps"]) == len(unfused["steps"]) - (not kept) - (data_type == "float16"), (norm, fused, unfused)
        got = decode_tensor(fused["y"]).astype(np.float64)
        want = to_type(ref, data_type).astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (norm, np.argwhere(np.isnan(got) != np.isnan(want))[:5])
        if norm == "gemm":
            assert np.isnan(want[[3, 10, 20]]).all() and not np.isnan(np.delete(want, [3, 10, 20], 0)).any()
        finite = ~np.isnan(want)
        err = np.abs(got[finite] - want[finite]).max()
        assert err <= atol, (norm, err)
        assert_bits(decode_tensor(fused["y"]), decode_tensor(unfused["y"]))


def _edge_cases(data_type):
    """Split norms the transformer family leaves out: layerNormalization over both axes (with a
    full-shape scale), axes in reverse order, axis 0 only (per-row scale and bias), axes [0, 2]
    of a 3-D product, over the batch axis of a product with broadcast batches, rows of 2,048
    (the staged limit) and 2,500 (added again in each pass), gemm with aTranspose, bTranspose,
    alpha, beta and a C of [1, N], a per-row C, a scalar C, and a GELU chain (x * f(x)) between
    the product and the norm; dyadic data (exact products), float32 and float16."""
    from tests.conformance.cases.fusion import _op, chain_case

    rng = np.random.default_rng([7, 41])
    atol = 1 / 1024 if data_type == "float32" else 1 / 256
    norm = lambda x, y, **o: _op("layerNormalization", [x], y, **o)  # noqa: E731
    a = {"a": dyadic(rng, (6, 40)), "b": dyadic(rng, (40, 24), 16), "r": dyadic(rng, (6, 24)),
         "s6": rng.uniform(0.5, 2, 6), "s6x24": rng.uniform(0.5, 2, (6, 24)), "at": dyadic(rng, (40, 6)),
         "bt": dyadic(rng, (24, 40), 16), "c1": dyadic(rng, (1, 24)), "crow": dyadic(rng, (6, 1)), "c0": np.array(0.75),
         "x3": dyadic(rng, (2, 5, 40)), "s2x24": rng.uniform(0.5, 2, (2, 24)), "xb": dyadic(rng, (2, 1, 5, 40)),
         "wb": dyadic(rng, (3, 40, 24), 16), "sq": np.array([1.4142135]), "one": np.array([1.0]),
         "xr": dyadic(rng, (3, 40)), "w2048": dyadic(rng, (40, 2048), 16), "w2500": dyadic(rng, (40, 2500), 16)}
    mm = [_op("matmul", ["a", "b"], "m"), _op("add", ["m", "r"], "s")]
    cases = {
        "axes-0-1": (["a", "r"], mm + [norm("s", "y", axes=[0, 1], scale="s6x24")]),
        "axes-1-0": (["a", "r"], mm + [norm("s", "y", axes=[1, 0])]),
        "axis-0": (["a", "r"], mm + [norm("s", "y", axes=[0], scale="s6", bias="s6")]),
        "axes-0-2": (["x3"], [_op("matmul", ["x3", "b"], "m"), norm("m", "y", axes=[0, 2], scale="s2x24")]),
        "broadcast-batches-axis-1": (["xb"], [_op("matmul", ["xb", "wb"], "m"), norm("m", "y", axes=[1])]),
        "row-2048": (["xr"], [_op("matmul", ["xr", "w2048"], "m"), norm("m", "y", axes=[1])]),
        "row-2500": (["xr"], [_op("matmul", ["xr", "w2500"], "m"), norm("m", "y", axes=[1])]),
        "gemm-transposes-alpha-beta": (["at"], [_op("gemm", ["at", "bt"], "g", c="c1", aTranspose=True, bTranspose=True,
                                                    alpha=0.5, beta=-2.0), norm("g", "y", axes=[1])]),
        "gemm-row-c": (["a"], [_op("gemm", ["a", "b"], "g", c="crow", beta=2.0), norm("g", "y", axes=[1])]),
        "gemm-scalar-c": (["a"], [_op("gemm", ["a", "b"], "g", c="c0", beta=3.0), norm("g", "y", axes=[1])]),
        "gelu-chain": (["x3"], [_op("matmul", ["x3", "b"], "m"), _op("div", ["m", "sq"], "d"), _op("erf", ["d"], "e"),
                                _op("add", ["e", "one"], "p"), _op("mul", ["m", "p"], "g"), norm("g", "y", axes=[2])]),
    }
    return {name: chain_case(f"split-norm/edge-{name}", data_type, a, inputs, ops, ["y"], "ATOL", atol)
            for name, (inputs, ops) in cases.items()}


@pytest.mark.parametrize("rows, data_type", [("invocation", "float16"), ("workgroup", "float32")])
def test_split_norm_edge_values(webnn_page, server_url, rows, data_type):
    """_edge_cases with the product split in 3 against float64 NumPy: each norm adds the
    partial sums itself (product step + norm step). One data type per row path (the read of the
    partials and its float16 rounding are the same function in both; test_split_norm_values runs
    both types on both paths), which keeps the suite's time down."""
    cases = list(_edge_cases(data_type).values())
    results = run_cases(webnn_page, server_url, cases, {**SPLIT3, "rows": rows}, steps=True)
    for r in results:
        got = [st for st in r["steps"] if st]  # float16: the inputs' conversion steps list no operator
        c = next(c for c in cases if c["name"] == r["name"])
        assert len(got) == 2 + (c["dataType"] == "float16") and "layerNormalization" in got[1], (c["name"], got)
    assert_all_pass(results)


def _kept_sum_cases(data_type):
    """A pre-norm residual stream (an LLM decoder's): the split product's sum with the residual is
    normalized and also read by the next residual add (and, in the second case, by a second
    normalization); the normalization stores the sum as it adds the partials (split_norm `keep`)."""
    from tests.conformance.cases.fusion import _op, chain_case

    rng = np.random.default_rng([7, 43])
    atol = 1 / 1024 if data_type == "float32" else 1 / 256
    a = {"a": dyadic(rng, (6, 40)), "b": dyadic(rng, (40, 24), 16), "r": dyadic(rng, (6, 24)),
         "r2": dyadic(rng, (6, 24)), "s24": rng.uniform(0.5, 2, 24)}
    head = [_op("matmul", ["a", "b"], "m"), _op("add", ["m", "r"], "s"),
            _op("layerNormalization", ["s"], "y", axes=[1], scale="s24")]
    cases = {"next-residual": head + [_op("add", ["s", "r2"], "y2")],
             "two-norms": head + [_op("add", ["s", "r2"], "y2"), _op("layerNormalization", ["s"], "y3", axes=[1])]}
    outputs = {"next-residual": ["y", "y2"], "two-norms": ["y", "y2", "y3"]}
    return [chain_case(f"split-norm/kept-{name}", data_type, a, ["a", "r", "r2"], ops, outputs[name], "ATOL", atol)
            for name, ops in cases.items()]


@pytest.mark.parametrize("rows, data_type", [("invocation", "float32"), ("workgroup", "float16")])
def test_split_norm_keeps_a_sum_read_elsewhere(webnn_page, server_url, rows, data_type):
    """_kept_sum_cases with the product split in 3: no reduce step; the normalization stores the
    sum its other readers read (values against float64 NumPy)."""
    cases = _kept_sum_cases(data_type)
    results = run_cases(webnn_page, server_url, cases, {**SPLIT3, "rows": rows}, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        got = [st for st in r["steps"] if st]
        assert not any(st == ["matmul", "add"] for st in got[1:]), (c["name"], got)  # no reduce step of its own
        assert "layerNormalization" in got[1] and "matmul" in got[1], (c["name"], got)
