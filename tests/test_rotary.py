"""The rotary embedding as ORT's WebNN EP writes it for GroupQueryAttention (compile/rotary.js,
ops/rotary.js): reshape to [..., 2, half], split, the halves concatenated swapped, multiplied by
cos, sin and a sign constant, added: one rotaryEmbedding step. Values against float64 NumPy
rounded as the unfused float32 (or float16) operators round, in either operand order, with cos / sin gathered
at positions or given as inputs, a sign other than (-1, 1); and the near misses that stay unfused
(an intermediate read elsewhere, halves not swapped) with their values.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, operand, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.test_quantized_matmul import _op

pytestmark = pytest.mark.shared_page

SEED = 20261207
F32 = np.float32


def rotary_case(tag, *, heads=4, seq=3, half=8, positions=True, swap_operands=False, sign=(-1.0, 1.0),
                also_output=None, swapped_halves=True, dtype="float32"):
    """y = add(reshape(mul(xr, cos)), reshape(mul(mul(concat(split(xr) swapped), sin), sign))), every
    operand and operator of `dtype` (float16: each operator's value rounded to binary16)."""
    ft = np.dtype(dtype).type
    rng = np.random.default_rng(SEED + len(tag))
    x = rng.standard_normal((1, seq, heads, 2 * half)).astype(ft)
    table_len = 16
    cos_t = np.cos(rng.random((table_len, half)) * 6).astype(ft)
    sin_t = np.sin(rng.random((table_len, half)) * 6).astype(ft)
    pos = np.array([[5, 0, 15][:seq]], np.int64)
    constants = {"sign": tensor(np.array(sign, ft).reshape(1, 1, 2, 1), dtype)}
    inputs = {"x": describe(x)}
    feeds = {"x": tensor(x, dtype)}
    ops = [_op("reshape", ["x", [1, seq, heads, 2, half]], "xr")]
    if positions:
        constants["cos_t"] = tensor(cos_t, dtype)
        constants["sin_t"] = tensor(sin_t, dtype)
        inputs["pos"] = {"dataType": "int64", "shape": [1, seq]}
        feeds["pos"] = tensor(pos, "int64")
        ops += [_op("gather", ["cos_t", "pos"], "cg"), _op("gather", ["sin_t", "pos"], "sg"),
                _op("reshape", ["cg", [1, seq, 1, 1, half]], "cos"), _op("reshape", ["sg", [1, seq, 1, 1, half]], "sin")]
        cos = cos_t[pos[0]].reshape(1, seq, 1, 1, half)
        sin = sin_t[pos[0]].reshape(1, seq, 1, 1, half)
    else:
        cos = cos_t[:seq].reshape(seq, 1, 1, half)
        sin = sin_t[:seq].reshape(seq, 1, 1, half)
        inputs["cos"], inputs["sin"] = describe(cos), describe(sin)
        feeds["cos"], feeds["sin"] = tensor(cos, dtype), tensor(sin, dtype)
    order = (lambda a, b: [b, a]) if swap_operands else (lambda a, b: [a, b])
    ops += [_op("split", ["xr", 2], ["x1", "x2"], axis=3),
            _op("concat", [[operand(n) for n in (["x2", "x1"] if swapped_halves else ["x1", "x2"])], 3], "sw"),
            _op("mul", order("xr", "cos"), "a"), _op("mul", order("sw", "sin"), "b"),
            _op("mul", order("b", "sign"), "c"),
            _op("reshape", ["a", [1, seq, heads, 2 * half]], "ra"), _op("reshape", ["c", [1, seq, heads, 2 * half]], "rc"),
            _op("add", order("ra", "rc"), "y")]
    xr = x.reshape(1, seq, heads, 2, half).astype(np.float64)
    sw = np.concatenate([xr[..., 1:, :], xr[..., :1, :]] if swapped_halves else [xr[..., :1, :], xr[..., 1:, :]], axis=3)
    # each operator's value rounded to its type (float16: through f32, as the polyfill computes it)
    rt = lambda v: np.asarray(v, np.float64).astype(F32).astype(ft).astype(np.float64)  # noqa: E731
    cos, sin = np.asarray(cos, np.float64), np.asarray(sin, np.float64)
    a = rt(xr * cos)
    c = rt(rt(sw * sin) * np.array(sign, ft).astype(np.float64).reshape(1, 1, 2, 1))
    y = rt(a.reshape(x.shape) + c.reshape(x.shape))
    expected = {"y": tensor(y, dtype)}
    outputs = ["y"]
    if also_output:
        outputs.append(also_output)
        expected[also_output] = tensor({"a": a, "c": c}[also_output], dtype)
    graph = {"inputs": inputs, "constants": constants, "operators": ops, "outputs": outputs}
    return graph_case(f"rotary/{tag}", "add", dtype, graph, feeds, expected, "ATOL", 1e-6 if dtype == "float32" else 0)


def test_rotary_is_one_step(webnn_page, server_url):
    cases = [rotary_case("gqa-query"), rotary_case("key-2-heads", heads=2, half=16),
             rotary_case("operands-swapped", swap_operands=True), rotary_case("cos-sin-inputs", positions=False),
             rotary_case("other-sign", sign=(-0.5, 2.0)), rotary_case("one-position", seq=1),
             # float16 (a q4f16 model's): the step rounds each operator's value as the operators would
             rotary_case("float16", dtype="float16"), rotary_case("float16-other-sign", sign=(-0.5, 2.0), dtype="float16")]
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        rotary = [s for s in r["steps"] if "split" in s]
        assert rotary == [["split", "concat", "mul", "mul", "mul", "reshape", "reshape", "add"]], (c["name"], r["steps"])
        # float16: x's conversion from its tensor layout and y's into it (steps of their own)
        conversions = 2 if c["dataType"] == "float16" else 0
        assert len(r["steps"]) == (3 if "gather" in str(c["graph"]["operators"]) else 1) + conversions, (c["name"], r["steps"])


def rotary_pair_case(tag, *, regather=False, late_k=False):
    """A layer's q (4 heads) and k (2 heads) rotated with the same cos / sin (gathered once, or
    gathered again for k, which compile/cse.js shares) and sign: one rotaryEmbeddingPair step."""
    rng = np.random.default_rng(SEED + 99)
    seq, half, table_len = 3, 8, 16
    cos_t = np.cos(rng.random((table_len, half)) * 6).astype(F32)
    sin_t = np.sin(rng.random((table_len, half)) * 6).astype(F32)
    pos = np.array([[7, 1, 12]], np.int64)
    sign = (-1.0, 1.0)
    constants = {"sign": tensor(np.array(sign, F32).reshape(1, 1, 2, 1), "float32"),
                 "cos_t": tensor(cos_t, "float32"), "sin_t": tensor(sin_t, "float32")}
    inputs = {"pos": {"dataType": "int64", "shape": [1, seq]}}
    feeds = {"pos": tensor(pos, "int64")}
    expected = {}
    # both x's ready before the rotations, as a layer's q and k are (column ranges of one product)
    xs = {name: rng.standard_normal((1, seq, heads, 2 * half)).astype(F32) for name, heads in (("q", 4), ("k", 2))}
    ops = [_op("reshape", [name, [1, seq, x.shape[2], 2, half]], f"{name}r") for name, x in xs.items()
           if not (late_k and name == "k")]
    for name, heads, gathered in (("q", 4, ""), ("k", 2, "k" if regather else "")):
        if name == "q" or regather:
            ops += [_op("gather", ["cos_t", "pos"], f"cg{gathered}"), _op("gather", ["sin_t", "pos"], f"sg{gathered}"),
                    _op("reshape", [f"cg{gathered}", [1, seq, 1, 1, half]], f"cos{gathered}"),
                    _op("reshape", [f"sg{gathered}", [1, seq, 1, 1, half]], f"sin{gathered}")]
        x = xs[name]
        if late_k and name == "k":
            ops.append(_op("reshape", [name, [1, seq, heads, 2, half]], f"{name}r"))
        inputs[name] = describe(x)
        feeds[name] = tensor(x, "float32")
        ops += [_op("split", [f"{name}r", 2], [f"{name}1", f"{name}2"], axis=3),
                _op("concat", [[operand(f"{name}2"), operand(f"{name}1")], 3], f"{name}sw"),
                _op("mul", [f"{name}r", f"cos{gathered}"], f"{name}a"), _op("mul", [f"{name}sw", f"sin{gathered}"], f"{name}b"),
                _op("mul", [f"{name}b", "sign"], f"{name}c"),
                _op("reshape", [f"{name}a", [1, seq, heads, 2 * half]], f"{name}ra"),
                _op("reshape", [f"{name}c", [1, seq, heads, 2 * half]], f"{name}rc"),
                _op("add", [f"{name}ra", f"{name}rc"], f"{name}y")]
        cos = cos_t[pos[0]].reshape(1, seq, 1, 1, half).astype(np.float64)
        sin = sin_t[pos[0]].reshape(1, seq, 1, 1, half).astype(np.float64)
        xr = x.reshape(1, seq, heads, 2, half).astype(np.float64)
        sw = np.concatenate([xr[..., 1:, :], xr[..., :1, :]], axis=3)
        r32 = lambda v: np.asarray(v, np.float64).astype(F32).astype(np.float64)  # noqa: E731
        a = r32(xr * cos)
        c = r32(r32(sw * sin) * np.array(sign, np.float64).reshape(1, 1, 2, 1))
        expected[f"{name}y"] = tensor(r32(a.reshape(x.shape) + c.reshape(x.shape)), "float32")
    graph = {"inputs": inputs, "constants": constants, "operators": ops, "outputs": ["qy", "ky"]}
    return graph_case(f"rotary/{tag}", "add", "float32", graph, feeds, expected, "ATOL", 1e-6)


def test_a_layers_q_and_k_rotaries_are_one_step(webnn_page, server_url):
    """compile/rotary.js planRotaryPairs: q and k of one cos / sin (shared directly or through a
    repeated gather) rotate in one step whose operators are both groups'; with k's x computed
    after q's rotation they stay two steps."""
    cases = [rotary_pair_case("q-k-pair"), rotary_pair_case("q-k-pair-regathered", regather=True)]
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    group = ["split", "concat", "mul", "mul", "mul", "reshape", "reshape", "add"]
    for c, r in zip(cases, results):
        rotary = [s for s in r["steps"] if "split" in s]
        assert rotary == [group + group], (c["name"], r["steps"])
    late = rotary_pair_case("k-after-q", late_k=True)
    result = run_cases(webnn_page, server_url, [late], steps=True)
    assert_all_pass(result)
    assert [s for s in result[0]["steps"] if "split" in s] == [group, group], result[0]["steps"]


def test_near_misses_stay_unfused(webnn_page, server_url):
    cases = [rotary_case("a-also-output", also_output="a"), rotary_case("halves-not-swapped", swapped_halves=False)]
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert ["split"] in r["steps"], (c["name"], r["steps"])
