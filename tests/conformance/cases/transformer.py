"""Conformance cases for the transformer patterns build() compiles specially (the family
``transformer``; case names ``fusion/<type>/views|attention|siblings/...``, built and checked
like tests/conformance/cases/fusion.py's chains, whose helpers they use).

Views (``fusion/<type>/views/...``, compile/views.js): transposes and reshapes that the matrix
kernels read through strides instead of a copy: the attention pattern Q K^T of a BERT encoder
(reshape -> transpose on both operands), the context product stored straight into its
transposed layout and merged back by a reshape, a transpose that is both a matmul operand and
an element-wise input (copied once for the latter), a reshape that merges non-contiguous
dimensions (copied), gemm of a transposed view with aTranspose / bTranspose.

Attention (``attention/``, compile/attention.js + ops/attention.js): matmul -> scale (div or mul)
[-> add mask] -> softmax over the last axis -> matmul (one step where the context's kernelOverrides.attention is on; the
family runs them unfused, the default, and tests/test_fusion_attention.py fused): with a mask holding -Inf
entries, a row of only -Inf, +Inf and NaN (those rows are NaN, as softmax defines them), the
BERT encoder's reshape/transpose views around it, broadcast batches of V, rows of 300 keys (several
tiles of keys), head sizes of real models (64, odd ones, and 80, which stays unfused), and the
softmax also a graph output (not fused).

Siblings (``siblings/``, compile/siblings.js): matmuls of one A with constant B's (+ constant
bias adds) as one product: a Q/K/V projection feeding attention, and a pair without bias whose
results are graph outputs (copied out of the merged product).

Split norms (``split-norm/``, compile/split_norm.js): a product (+ bias + residual add) read only
by a layerNormalization, whose step adds the product's partial sums itself where the product is
split along K (hardware adapters; tests/test_fusion.py forces the split): gemm with C + a
residual holding NaN, +Inf and -Inf (those rows are NaN) -> layerNormalization with scale and
bias; a 3-D matmul + bias + residual -> layerNormalization over axis 2; ORT's WebNN EP's
reshape -> gemm -> reshape -> add -> layerNormalization without scale and bias; and near misses
whose sum is also read by a relu, or is itself a graph output (the reduce step stays). K = 40
and dyadic data: the products are exact, the bound is layerNormalization's (tolerances.md).

Layer norms written out (``layer-norm/``, compile/layer_norm.js): reduceMean -> sub -> pow(d, 2)
or mul(d, d) -> reduceMean -> add epsilon -> sqrt -> div, or mul by its reciprocal -> [mul scale]
-> [add bias], as PyTorch exports nn.LayerNorm below ONNX opset 17, compiled as one
layerNormalization step that computes each stage as its operator does (float16 rounding of every
intermediate included), against the operator-by-operator float64 reference: PyTorch's order over
the last axis with rows holding NaN, +Inf, -Inf and one constant row; the reversed operand orders
with two normalized axes, a [4, 8] scale and a [1, 4, 8] bias; a rank-4 input without scale or bias
and epsilon 0 (its constant row is 0 / 0 = NaN); a matmul + bias + residual feeding it (the
product's partial sums added by the normalization where it is split, as for the spec's operator);
rows of about ±300 whose squares overflow float16 (there y is the bias alone, as the operators
compute it); RMS norms (no mean: ORT's WebNN EP's SimplifiedLayerNormalization, pow -> reduceMean
-> add -> sqrt -> div -> mul(scale, .), whose input, with a zero row, is also read by a residual
add; mul(x, x) with the reciprocal over two axes and float16 squares that overflow); and near
misses: a scale that varies along a row (the normalization fused, the scale and bias steps not),
the mean also a graph output or d also read by a relu (no layer norm; the rest is d's RMS norm),
and exponent 3 (not fused). Data: dyadic inputs over rows of 8 or 16 (exact means and squares),
dyadic scale and bias; the bound is layerNormalization's (float16: twice it, for a binary16 rounding of a normalized value of 2 to 4
that the float32 division or square root may round the other way, times a scale of up to 2).
"""
from __future__ import annotations

import numpy as np

from tests.conformance.cases.fusion import SEED, _op, _ulp, chain_case, dyadic, specials


def _view_cases(rng, data_type):
    """Transposes / reshapes read or written by the matrix kernels through strides (exact data:
    dyadic products, the ULP bound is the product's)."""
    seq, heads, dim = 6, 2, 4
    hid = heads * dim
    q = specials(dyadic(rng, (1, seq, hid)) * 2)
    arrays = {"q": q, "k": dyadic(rng, (1, seq, hid)), "p": dyadic(rng, (1, heads, seq, seq), 4),
              "v": dyadic(rng, (1, seq, hid)), "w": dyadic(rng, (hid, 5), 16), "two": np.array([2.0])}
    split = [1, seq, heads, dim]
    cases = [chain_case("views/attention-scores", data_type, arrays, ["q", "k"], [
        _op("reshape", ["q", split], "qh"),
        _op("transpose", ["qh"], "qt", permutation=[0, 2, 1, 3]),
        _op("reshape", ["k", split], "kh"),
        _op("transpose", ["kh"], "kt", permutation=[0, 2, 3, 1]),
        _op("matmul", ["qt", "kt"], "s"),
        _op("div", ["s", "two"], "y"),
    ], ["y"], "ULP", _ulp(data_type, "div", base=2 * dim + 2))]
    cases.append(chain_case("views/attention-context-merge-dense", data_type, arrays, ["p", "v"], [
        _op("reshape", ["v", split], "vh"),
        _op("transpose", ["vh"], "vt", permutation=[0, 2, 1, 3]),
        _op("matmul", ["p", "vt"], "c"),
        _op("transpose", ["c"], "ct", permutation=[0, 2, 1, 3]),
        _op("reshape", ["ct", [1, seq, hid]], "cm"),
        _op("matmul", ["cm", "w"], "y"),
    ], ["y"], "ULP", 4 * (seq + hid) + 4))
    x = specials(dyadic(rng, (5, 7)) * 2)
    arrays = {"x": x, "b": dyadic(rng, (5, 3), 16)}
    cases.append(chain_case("views/transpose-matmul-and-relu", data_type, arrays, ["x"], [
        _op("transpose", ["x"], "xt"),
        _op("matmul", ["xt", "b"], "m"),
        _op("relu", ["xt"], "r"),
    ], ["m", "r"], "ULP", 12))
    arrays = {"x": dyadic(rng, (2, 3, 4)), "w": specials(dyadic(rng, (8, 5), 16))}
    cases.append(chain_case("views/reshape-needs-copy", data_type, arrays, ["x"], [
        _op("transpose", ["x"], "xt", permutation=[1, 0, 2]),
        _op("reshape", ["xt", [3, 8]], "xr"),
        _op("matmul", ["xr", "w"], "y"),
    ], ["y"], "ULP", 18))
    arrays = {"a": dyadic(rng, (9, 6)), "b": dyadic(rng, (6, 7), 16), "c": specials(dyadic(rng, (9, 7)))}
    cases.append(chain_case("views/gemm-transposed-views", data_type, arrays, ["a", "b"], [
        _op("transpose", ["a"], "at"),
        _op("transpose", ["b"], "bt"),
        _op("gemm", ["at", "bt"], "y", c="c", aTranspose=True, bTranspose=True),
    ], ["y"], "ULP", 14))
    return cases


def _attention_cases(rng, data_type):
    """Fused attention against the operator-by-operator float64 reference (ATOL: probabilities
    <= 1 times values <= 1, summed in f32; float16 rounds every intermediate as the operators do)."""
    atol = 2 ** -16 if data_type == "float32" else 2 ** -8
    mask = np.zeros((1, 1, 5, 7))
    mask[0, 0, 0, [1, 4]] = -np.inf
    mask[0, 0, 1, :] = -np.inf
    mask[0, 0, 2, 3] = np.inf
    mask[0, 0, 3, 6] = np.nan
    arrays = {"q": rng.uniform(-1, 1, (1, 2, 5, 4)), "k": rng.uniform(-1, 1, (1, 2, 4, 7)),
              "v": dyadic(rng, (1, 2, 7, 3)), "two": np.array([2.0]), "mask": mask}
    cases = [chain_case("attention/div-mask-softmax", data_type, arrays, ["q", "k", "v", "mask"], [
        _op("matmul", ["q", "k"], "s"),
        _op("div", ["s", "two"], "d"),
        _op("add", ["d", "mask"], "a"),
        _op("softmax", ["a", 3], "p"),
        _op("matmul", ["p", "v"], "y"),
    ], ["y"], "ATOL", atol)]
    seq, heads, dim = 6, 2, 4
    split = [1, seq, heads, dim]
    arrays = {n: rng.uniform(-1, 1, (1, seq, heads * dim)) for n in ("q", "k", "v")}
    arrays["sqrt"] = np.array([2.0])
    cases.append(chain_case("attention/bert-views", data_type, arrays, ["q", "k", "v"], [
        _op("reshape", ["q", split], "qh"),
        _op("transpose", ["qh"], "qt", permutation=[0, 2, 1, 3]),
        _op("reshape", ["k", split], "kh"),
        _op("transpose", ["kh"], "kt", permutation=[0, 2, 3, 1]),
        _op("reshape", ["v", split], "vh"),
        _op("transpose", ["vh"], "vt", permutation=[0, 2, 1, 3]),
        _op("matmul", ["qt", "kt"], "s"),
        _op("div", ["s", "sqrt"], "d"),
        _op("softmax", ["d", 3], "p"),
        _op("matmul", ["p", "vt"], "c"),
        _op("transpose", ["c"], "ct", permutation=[0, 2, 1, 3]),
        _op("reshape", ["ct", [1, seq, heads * dim]], "y"),
    ], ["y"], "ATOL", atol))
    arrays = {"q": rng.uniform(-1, 1, (2, 3, 4, 5)), "k": rng.uniform(-1, 1, (2, 3, 5, 6)),
              "v": dyadic(rng, (3, 6, 4)), "half": np.array([0.5])}
    cases.append(chain_case("attention/mul-broadcast-v", data_type, arrays, ["q", "k"], [
        _op("matmul", ["q", "k"], "s"),
        _op("mul", ["s", "half"], "d"),
        _op("softmax", ["d", 3], "p"),
        _op("matmul", ["p", "v"], "y"),
    ], ["y"], "ATOL", atol))
    arrays = {"q": rng.uniform(-1, 1, (1, 1, 9, 8)), "k": rng.uniform(-1, 1, (1, 1, 8, 300)),
              "v": dyadic(rng, (1, 1, 300, 5))}
    cases.append(chain_case("attention/long-rows", data_type, arrays, ["q", "k", "v"], [
        _op("matmul", ["q", "k"], "s"),
        _op("softmax", ["s", 3], "p"),
        _op("matmul", ["p", "v"], "y"),
    ], ["y"], "ATOL", atol))
    arrays = {"q": rng.uniform(-1, 1, (1, 3, 5)), "k": rng.uniform(-1, 1, (1, 5, 4)), "v": dyadic(rng, (1, 4, 2))}
    cases.append(chain_case("attention/unfused/softmax-is-output", data_type, arrays, ["q", "k", "v"], [
        _op("matmul", ["q", "k"], "s"),
        _op("softmax", ["s", 2], "p"),
        _op("matmul", ["p", "v"], "y"),
    ], ["p", "y"], "ATOL", atol))
    return cases


def _sibling_cases(rng, data_type):
    seq, heads, dim = 6, 2, 4
    hid = heads * dim
    split = [1, seq, heads, dim]
    arrays = {"x": rng.uniform(-1, 1, (1, seq, hid)), "two": np.array([2.0])}
    for n in "qkv":
        arrays[f"w{n}"] = dyadic(rng, (hid, hid), 16)
        arrays[f"b{n}"] = dyadic(rng, (hid,), 4)
    arrays["bv"] = specials(arrays["bv"], (np.inf,))
    ops = []
    for n, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        ops += [_op("matmul", ["x", f"w{n}"], f"m{n}"), _op("add", [f"m{n}", f"b{n}"], f"p{n}"),
                _op("reshape", [f"p{n}", split], f"h{n}"), _op("transpose", [f"h{n}"], f"t{n}", permutation=perm)]
    ops += [_op("matmul", ["tq", "tk"], "s"), _op("div", ["s", "two"], "d"), _op("softmax", ["d", 3], "p"),
            _op("matmul", ["p", "tv"], "c"), _op("transpose", ["c"], "ct", permutation=[0, 2, 1, 3]),
            _op("reshape", ["ct", [1, seq, hid]], "y")]
    atol = 2 ** -14 if data_type == "float32" else 2 ** -6
    cases = [chain_case("siblings/qkv-attention", data_type, arrays, ["x"], ops, ["y"], "ATOL", atol)]
    arrays = {"x": specials(dyadic(rng, (5, 7))), "w1": dyadic(rng, (7, 3), 16), "w2": dyadic(rng, (7, 5), 16)}
    cases.append(chain_case("siblings/outputs-no-bias", data_type, arrays, ["x"], [
        _op("matmul", ["x", "w1"], "y1"),
        _op("matmul", ["x", "w2"], "y2"),
    ], ["y1", "y2"], "ULP", 16))
    return cases


def _head_cases(rng, data_type):
    """Attention at head sizes of real models: BERT's 64 (the fused kernel's largest: eight output
    columns an invocation), sizes that are not multiples of the kernel's 8 invocations a row, 37
    query rows (a partial block of 16) and 77 or 33 keys (a partial tile of 32), a broadcast
    additive mask with -Inf columns and one fully masked row, and a head size of 80, which the
    fused kernel leaves unfused."""
    atol = 2 ** -16 if data_type == "float32" else 2 ** -8
    cases = []
    for name, (heads, m, s, d, dv) in {"bert-head-64": (2, 37, 77, 64, 64), "odd-heads": (3, 21, 33, 40, 23),
                                       "head-80-unfused": (1, 9, 20, 80, 80)}.items():
        mask = np.zeros((1, 1, m, s))
        mask[..., :, [0, s // 2, s - 1]] = -np.inf
        mask[..., m // 3, :] = -np.inf
        arrays = {"q": rng.uniform(-1, 1, (1, heads, m, d)), "k": rng.uniform(-1, 1, (1, heads, d, s)),
                  "v": dyadic(rng, (1, heads, s, dv)), "scale": np.array([d ** -0.5]), "mask": mask}
        cases.append(chain_case(f"attention/{name}", data_type, arrays, ["q", "k", "v", "mask"], [
            _op("matmul", ["q", "k"], "s"),
            _op("mul", ["s", "scale"], "d"),
            _op("add", ["d", "mask"], "a"),
            _op("softmax", ["a", 3], "p"),
            _op("matmul", ["p", "v"], "y"),
        ], ["y"], "ATOL", atol))
    return cases


def _split_norm_cases(rng, data_type):
    atol = 1 / 1024 if data_type == "float32" else 1 / 512
    norm = lambda x, y, **o: _op("layerNormalization", [x], y, **o)  # noqa: E731
    arrays = {"a": dyadic(rng, (6, 40)), "b": dyadic(rng, (40, 24), 16), "c": dyadic(rng, (24,), 4),
              "r": specials(dyadic(rng, (6, 24)) * 2), "scale": rng.uniform(0.5, 2, 24), "bias": dyadic(rng, (24,))}
    gemm_add = [_op("gemm", ["a", "b"], "g", c="c"), _op("add", ["g", "r"], "s")]
    cases = [chain_case("split-norm/gemm-bias-residual-layernorm", data_type, arrays, ["a", "r"], gemm_add + [
        norm("s", "y", axes=[1], scale="scale", bias="bias")], ["y"], "ATOL", atol)]
    cases.append(chain_case("split-norm/unfused/sum-read-twice", data_type, arrays, ["a", "r"], gemm_add + [
        norm("s", "y", axes=[1], scale="scale", bias="bias"), _op("relu", ["s"], "z")], ["y", "z"], "ATOL", atol))
    cases.append(chain_case("split-norm/unfused/sum-is-output", data_type, arrays, ["a", "r"], gemm_add + [
        norm("s", "y", axes=[1])], ["y", "s"], "ATOL", atol))
    arrays = {"x": dyadic(rng, (2, 5, 40)), "w": dyadic(rng, (40, 24), 16), "wb": dyadic(rng, (24,), 4),
              "r": dyadic(rng, (2, 5, 24)) * 2, "scale": rng.uniform(-2, 2, 24), "bias": dyadic(rng, (24,))}
    cases.append(chain_case("split-norm/matmul-add-add-layernorm-3d", data_type, arrays, ["x", "r"], [
        _op("matmul", ["x", "w"], "m"), _op("add", ["m", "wb"], "p"), _op("add", ["p", "r"], "s"),
        norm("s", "y", axes=[2], scale="scale", bias="bias")], ["y"], "ATOL", atol))
    cases.append(chain_case("split-norm/ort-reshape-gemm-reshape-add-layernorm", data_type, arrays, ["x", "r"], [
        _op("reshape", ["x", [10, 40]], "x2"), _op("gemm", ["x2", "w"], "g", c="wb"),
        _op("reshape", ["g", [2, 5, 24]], "g3"), _op("add", ["r", "g3"], "s"),
        norm("s", "y", axes=[2])], ["y"], "ATOL", atol))
    return cases


def _layer_norm_ops(x, y, *, axes, square="pow", reciprocal=False, scale=None, bias=None, swap=False, center=True):
    """A layer normalization of ``x`` written out as PyTorch exports it (see the module comment),
    writing ``y``; ``swap`` reverses every commutative operand order; ``center=False``: the RMS
    norm (no mean: d is x itself), as ORT's WebNN EP writes SimplifiedLayerNormalization."""
    order = (lambda a, b: [b, a]) if swap else (lambda a, b: [a, b])  # noqa: E731
    mean = dict(axes=axes, keepDimensions=True)
    d = f"{y}.d" if center else x
    ops = [_op("reduceMean", [x], f"{y}.mean", **mean), _op("sub", [x, f"{y}.mean"], d)] if center else []
    if square == "pow":
        ops.append(_op("pow", [d, "two"], f"{y}.sq"))
    else:
        ops.append(_op("mul", [d, d], f"{y}.sq"))
    ops += [_op("reduceMean", [f"{y}.sq"], f"{y}.var", **mean), _op("add", order(f"{y}.var", "eps"), f"{y}.ve"),
            _op("sqrt", [f"{y}.ve"], f"{y}.sd")]
    last = y if scale is None and bias is None else f"{y}.n"
    if reciprocal:
        ops += [_op("reciprocal", [f"{y}.sd"], f"{y}.r"), _op("mul", order(d, f"{y}.r"), last)]
    else:
        ops.append(_op("div", [d, f"{y}.sd"], last))
    if scale is not None:
        ops.append(_op("mul", order(last, scale), y if bias is None else f"{y}.g"))
        last = f"{y}.g"
    if bias is not None:
        ops.append(_op("add", order(last, bias), y))
    return ops


def _layer_norm_cases(rng, data_type):
    atol = 1 / 1024 if data_type == "float32" else 1 / 256
    x = specials(dyadic(rng, (2, 5, 16)) * 2)
    x[1, 2, :] = 0.375
    arrays = {"x": x, "two": np.array([2.0]), "eps": np.array([1e-5]),
              "scale": dyadic(rng, (16,)) * 2, "bias": dyadic(rng, (16,))}
    cases = [chain_case("layer-norm/pytorch", data_type, arrays, ["x"], _layer_norm_ops(
        "x", "y", axes=[2], scale="scale", bias="bias"), ["y"], "ATOL", atol)]
    arrays = {"x": specials(dyadic(rng, (3, 4, 8)) * 2), "two": np.array([2.0]), "eps": np.array([1e-3]),
              "scale": dyadic(rng, (4, 8)) * 2, "bias": dyadic(rng, (1, 4, 8))}
    cases.append(chain_case("layer-norm/mul-square-reciprocal-swapped", data_type, arrays, ["x"], _layer_norm_ops(
        "x", "y", axes=[2, 1], square="mul", reciprocal=True, scale="scale", bias="bias", swap=True),
        ["y"], "ATOL", atol))
    x = dyadic(rng, (2, 3, 4, 8)) * 2
    x[0, 1, 2, :] = -0.5
    arrays = {"x": x, "two": np.array([2.0]), "eps": np.array([0.0])}
    cases.append(chain_case("layer-norm/rank4-no-scale-eps0", data_type, arrays, ["x"], _layer_norm_ops(
        "x", "y", axes=[3]), ["y"], "ATOL", atol))
    arrays = {"a": dyadic(rng, (6, 40)), "w": dyadic(rng, (40, 16), 16), "wb": dyadic(rng, (16,), 4),
              "r": specials(dyadic(rng, (6, 16)) * 2), "two": np.array([2.0]), "eps": np.array([1e-5]),
              "scale": dyadic(rng, (16,)) * 2, "bias": dyadic(rng, (16,))}
    cases.append(chain_case("layer-norm/matmul-bias-residual", data_type, arrays, ["a", "r"], [
        _op("matmul", ["a", "w"], "m"), _op("add", ["wb", "m"], "p"), _op("add", ["p", "r"], "s"),
        *_layer_norm_ops("s", "y", axes=[1], scale="scale", bias="bias")], ["y"], "ATOL", atol))
    x = specials(dyadic(rng, (5, 16)) * 2)
    arrays = {"x": x, "two": np.array([2.0]), "three": np.array([3.0]), "eps": np.array([1e-5]),
              "rows": dyadic(rng, (5, 1)) * 2, "bias": dyadic(rng, (16,))}
    cases.append(chain_case("layer-norm/scale-per-row", data_type, arrays, ["x"], _layer_norm_ops(
        "x", "y", axes=[1], scale="rows", bias="bias"), ["y"], "ATOL", atol))
    ops = _layer_norm_ops("x", "y", axes=[1])
    cases.append(chain_case("layer-norm/unfused/mean-is-output", data_type, arrays, ["x"], ops,
                            ["y", "y.mean"], "ATOL", atol))
    cases.append(chain_case("layer-norm/unfused/d-read-by-relu", data_type, arrays, ["x"],
                            ops + [_op("relu", ["y.d"], "z")], ["y", "z"], "ATOL", atol))
    cubed = [_op("pow", ["y.d", "three"], "y.sq") if o["outputs"] == "y.sq" else o for o in ops]
    cases.append(chain_case("layer-norm/unfused/exponent-3", data_type, arrays, ["x"], cubed, ["y"], "ATOL", atol))
    # rows of about ±300: in float16 their squares overflow to +Inf, so the variance is +Inf and
    # every y is 0 (+ bias), as the operators compute it one by one; float32 normalizes them
    x = dyadic(rng, (4, 8)) * 2
    x[1:3] *= 160
    arrays = {"x": x, "two": np.array([2.0]), "eps": np.array([1e-5]), "bias": dyadic(rng, (8,))}
    cases.append(chain_case("layer-norm/large-rows", data_type, arrays, ["x"], _layer_norm_ops(
        "x", "y", axes=[1], bias="bias"), ["y"], "ATOL", atol))
    # RMS norms: ORT's WebNN EP's SimplifiedLayerNormalization (pow, div, mul(scale, .)) on a
    # residual stream that is also read by the next residual add (a second output); and mul(x, x)
    # with the reciprocal, swapped operands, over two axes, float16 squares that overflow in a row
    x = specials(dyadic(rng, (2, 6, 16)) * 2)
    x[0, 3, :] = 0.0
    arrays = {"x": x, "two": np.array([2.0]), "eps": np.array([1e-6]), "scale": dyadic(rng, (16,)) * 2,
              "r": dyadic(rng, (2, 6, 16))}
    cases.append(chain_case("layer-norm/rms-ort-simplified", data_type, arrays, ["x", "r"], _layer_norm_ops(
        "x", "y", axes=[2], scale="scale", center=False, swap=True) + [_op("add", ["x", "r"], "z")],
        ["y", "z"], "ATOL", atol))
    x = dyadic(rng, (3, 4, 8)) * 2
    x[2, 1:3] *= 160
    arrays = {"x": x, "two": np.array([2.0]), "eps": np.array([1e-5]), "scale": dyadic(rng, (4, 8)) * 2}
    cases.append(chain_case("layer-norm/rms-mul-square-reciprocal", data_type, arrays, ["x"], _layer_norm_ops(
        "x", "y", axes=[1, 2], square="mul", reciprocal=True, scale="scale", center=False), ["y"], "ATOL", atol))
    return cases


def graph_cases() -> list[dict]:
    rng = np.random.default_rng([SEED, 2])
    heads = np.random.default_rng([SEED, 3])
    cases = []
    for data_type in ("float32", "float16"):
        cases += _view_cases(rng, data_type) + _attention_cases(rng, data_type) + _sibling_cases(rng, data_type)
        cases += _head_cases(heads, data_type)
    # a stream of their own: adding cases changes no earlier case's data
    rng = np.random.default_rng([SEED, 4])
    for data_type in ("float32", "float16"):
        cases += _split_norm_cases(rng, data_type)
    rng = np.random.default_rng([SEED, 5])
    for data_type in ("float32", "float16"):
        cases += _layer_norm_cases(rng, data_type)
    return cases
