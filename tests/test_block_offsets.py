"""Block offsets of packed weights (compile/block_offsets.js): W[k, n] = scale * (q - zeroPoint)
+ O[floor(k / g), n] written as a quantized product plus the product of A's block sums with O
(how GGUF's Q4_1 blocks, d * q + m, reach WebNN through ORT's MatMulNBits) is one packed product
step with float zero points, on every matrix kernel; the near misses keep their steps.

A, the scales (powers of two) and the offsets are dyadic, so O / scale and every sum are exact:
the fused product equals float64 NumPy exactly; one case with non-dyadic values is held to the
matmul bound.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.encode import graph_case, tensor
from tests.conformance.family_helpers import assert_all_pass, describe, run_cases
from tests.test_quantized_matmul import INT_RANGE, NUMPY_INT, _dyadic, _op, _pow2_scales, _weights

pytestmark = pytest.mark.shared_page

SEED = 20261207


def offset_case(tag, rng, *, n, k, block=32, g=32, m_shape=(1,), wtype="uint4", members=1, dyadic=True,
                zero_scale=False):
    """``members`` products of one A, each ``add(matmul(a, transpose(reshape(dequantizeLinear(W)))),
    matmul(reduceSum(reshape(a, [..., K / g, g]), [last]), O))`` sharing the block sums (ORT's
    MatMulNBits layout: W [N, blocks, block], scales [N * blocks] reshaped to [N, blocks, 1])."""
    blocks = k // block
    lo, hi = INT_RANGE[wtype]
    a = _dyadic(rng, (*m_shape, k)) if dyadic else rng.uniform(-1, 1, (*m_shape, k)).astype(np.float32)
    constants, operators, expected = {}, [], {}
    operators.append(_op("reshape", ["a", [*m_shape, k // g, g]], "split"))
    operators.append(_op("reduceSum", ["split"], "sums", axes=[len(m_shape) + 1]))
    sums = a.astype(np.float64).reshape(*m_shape, k // g, g).sum(-1)
    outputs = []
    for i in range(members):
        w = rng.integers(lo, hi + 1, (n, blocks, block)).astype(NUMPY_INT[wtype])
        z = rng.integers(lo, hi + 1, (n, blocks, 1)).astype(NUMPY_INT[wtype])
        if dyadic:
            scale = _pow2_scales(rng, (n, blocks, 1))
            offsets = _dyadic(rng, (k // g, n), 4)
        else:
            scale = rng.uniform(0.01, 0.05, (n, blocks, 1)).astype(np.float32)
            offsets = rng.uniform(-0.3, 0.3, (k // g, n)).astype(np.float32)
        if zero_scale:
            scale[0, 0, 0] = 0
        constants.update({f"w{i}": _weights(w, wtype), f"z{i}": _weights(z, wtype),
                          f"s{i}": tensor(scale.reshape(-1), "float32"), f"o{i}": tensor(offsets, "float32")})
        operators += [_op("reshape", [f"s{i}", [n, blocks, 1]], f"sr{i}"),
                      _op("dequantizeLinear", [f"w{i}", f"sr{i}", f"z{i}"], f"d{i}"),
                      _op("reshape", [f"d{i}", [n, k]], f"dr{i}"),
                      _op("transpose", [f"dr{i}"], f"dt{i}"),
                      _op("matmul", ["a", f"dt{i}"], f"p{i}"),
                      _op("matmul", ["sums", f"o{i}"], f"q{i}"),
                      _op("add", [f"p{i}", f"q{i}"], f"y{i}")]
        deq = ((w.astype(np.int64) - z.astype(np.int64)) * scale.astype(np.float64)).astype(np.float32)
        y = a.astype(np.float64) @ deq.reshape(n, k).T.astype(np.float64) + sums @ offsets.astype(np.float64)
        expected[f"y{i}"] = tensor(y.astype(np.float32), "float32")
        outputs.append(f"y{i}")
    graph = {"inputs": {"a": describe(a)}, "constants": constants, "operators": operators, "outputs": outputs}
    metric, value = ("ATOL", 0) if dyadic else ("ULP", 4 * k)
    return graph_case(f"block-offsets/{wtype}/{tag}", "dequantizeLinear", "float32", graph,
                      {"a": tensor(a, "float32")}, expected, metric, value)


def folded_cases():
    rng = np.random.default_rng(SEED)
    return [
        offset_case("m1", rng, n=20, k=128),                        # decode: the quantized matrix-vector kernel
        offset_case("m1-3d", rng, n=20, k=96, m_shape=(1, 1)),       # ORT's [1, 1, K]
        offset_case("m5", rng, n=20, k=96, m_shape=(5,)),            # prefill rows: the tiled kernels
        offset_case("batched", rng, n=12, k=64, m_shape=(1, 3), wtype="int4"),
        offset_case("uint8-g64", rng, n=9, k=128, g=64, wtype="uint8", m_shape=(2,)),  # g a multiple of the block
        offset_case("block16", rng, n=9, k=64, block=16, g=16, m_shape=(1,)),
        offset_case("qkv-m1", rng, n=16, k=64, members=3),         # siblings: one merged product
        offset_case("qkv-m4", rng, n=16, k=64, members=3, m_shape=(4,)),
        offset_case("rounded-m3", rng, n=10, k=96, m_shape=(3,), dyadic=False),
        offset_case("rounded-m1", rng, n=10, k=96, dyadic=False),
    ]


def test_block_offsets_fold_into_one_step(webnn_page, server_url):
    """The offset product, the block sums and the add leave no step of their own: a single product
    is one step listing every operator; three siblings one merged step listing all of them (then
    a copy of each member's columns to its graph output, as for any merged product)."""
    cases = folded_cases()
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        members = len(c["graph"]["outputs"])
        ops = [o["op"] for o in c["graph"]["operators"]]
        if members == 1:
            assert sorted(r["steps"][0]) == sorted(ops), (c["name"], r["steps"])
        assert set(r["steps"][0]) == set(ops), (c["name"], r["steps"])
        assert r["steps"][0].count("add") == members and r["steps"][0].count("dequantizeLinear") == members
        assert r["steps"][1:] == ([["matmul"]] * members if members > 1 else []), (c["name"], r["steps"])


@pytest.mark.parametrize("kernel", ["blocked", "tiled", "gemv", "qgemv-split", "qgemv-split-shift"])
def test_block_offsets_on_every_matrix_kernel(webnn_page, server_url, kernel):
    """The folded cases forced onto each kernel (the serial matrix-vector kernel, SwiftShader's
    own for one row, runs in test_block_offsets_fold_into_one_step)."""
    overrides = {"matmul": kernel}
    if kernel.startswith("qgemv-split"):  # the kernel of hardware adapters, 4-bit read in place or shifted out
        overrides = {"matmul": "qgemv", "qgemvSerial": False, "qgemvConfig": {"unpack": "shift"} if kernel.endswith("shift") else None}
    assert_all_pass(run_cases(webnn_page, server_url, folded_cases(), overrides))


def _shared_copy_cases():
    """Folds next to CSE's shared copies (compile/cse.js), which must keep what they copy: the packed
    product also computed a second time as a graph output of its own, and two products whose
    offset constants hold the same bytes (one offset product, shared)."""
    rng = np.random.default_rng(SEED + 2)
    n, k, block = 8, 64, 32
    a = _dyadic(rng, (1, k))
    z = rng.integers(0, 16, (n, k // block, 1)).astype(np.uint8)
    s = _pow2_scales(rng, (n, k // block, 1))
    o = _dyadic(rng, (k // block, n), 4)
    ws = [rng.integers(0, 16, (n, k // block, block)).astype(np.uint8) for _ in range(2)]
    deq = [((w.astype(np.int64) - z) * s.astype(np.float64)).reshape(n, k) for w in ws]
    sums = a.astype(np.float64).reshape(1, -1, block).sum(-1)

    def chain(i, w):
        return [_op("reshape", ["s", [n, k // block, 1]], f"sr{i}"), _op("dequantizeLinear", [w, f"sr{i}", "z"], f"d{i}"),
                _op("reshape", [f"d{i}", [n, k]], f"dr{i}"), _op("transpose", [f"dr{i}"], f"dt{i}")]

    blocksums = [_op("reshape", ["a", [1, k // block, block]], "split"), _op("reduceSum", ["split"], "sums", axes=[2])]
    consts = {"w0": _weights(ws[0], "uint4"), "w1": _weights(ws[1], "uint4"), "z": _weights(z, "uint4"),
              "s": tensor(s.reshape(-1), "float32"), "o0": tensor(o, "float32"), "o1": tensor(o, "float32")}
    out = lambda y: tensor(y.astype(np.float32), "float32")  # noqa: E731
    a64 = a.astype(np.float64)
    twice = chain(0, "w0") + [_op("matmul", ["a", "dt0"], "y0")] + chain(1, "w0") + blocksums + [
        _op("matmul", ["a", "dt1"], "p"), _op("matmul", ["sums", "o0"], "q"), _op("add", ["p", "q"], "y")]
    equal = chain(0, "w0") + chain(1, "w1") + blocksums + [
        _op("matmul", ["a", "dt0"], "p0"), _op("matmul", ["a", "dt1"], "p1"), _op("matmul", ["sums", "o0"], "q0"),
        _op("matmul", ["sums", "o1"], "q1"), _op("add", ["p0", "q0"], "y0"), _op("add", ["p1", "q1"], "y")]
    cases = []
    for tag, ops, y0 in (("product-twice", twice, a64 @ deq[0].T), ("equal-offsets", equal, a64 @ deq[0].T + sums @ o)):
        graph = {"inputs": {"a": describe(a)}, "constants": consts, "operators": ops, "outputs": ["y0", "y"]}
        expected = {"y0": out(y0), "y": out(a64 @ deq[int(tag == "equal-offsets")].T + sums @ o)}
        cases.append(graph_case(f"block-offsets/uint4/{tag}", "dequantizeLinear", "float32", graph,
                                {"a": tensor(a, "float32")}, expected, "ATOL", 0))
    return cases


def test_shared_copies_are_kept(webnn_page, server_url):
    assert_all_pass(run_cases(webnn_page, server_url, _shared_copy_cases()))


def test_near_misses_keep_their_steps(webnn_page, server_url):
    """Offsets by blocks finer than the scale's (g 16 under blocks of 32), and a zero scale under
    a non-zero offset (no float zero point gives it): the reduceSum keeps its step, values right."""
    rng = np.random.default_rng(SEED + 1)
    cases = [offset_case("finer-than-scale", rng, n=8, k=64, block=32, g=16),
             offset_case("zero-scale", rng, n=8, k=64, zero_scale=True)]
    results = run_cases(webnn_page, server_url, cases, steps=True)
    assert_all_pass(results)
    for c, r in zip(cases, results):
        assert ["reduceSum"] in r["steps"], (c["name"], r["steps"])
