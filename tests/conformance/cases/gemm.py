"""Conformance cases for the matrix products: gemm and matmul (spec §gemm, §matmul).

Accuracy bound (tolerances.md): matmul 2K ULP, gemm 2K ULP plus 1 for each of alpha != 1, C
present, beta != 1. A ULP bound relative to each output only holds where the sum does not
cancel, so random data here is either sign-structured (all products of one output share a
sign; both inputs still hold negative values) or dyadic (multiples of 1/8 whose sums are exact
in float32, any signs).
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.graph_runner import data_type_of
from tests.reference.ops import gemm, matmul

SEED = 20261130


def no_cancel(rng, rows: int, k: int, cols: int, row_signs=True, col_signs=True):
    """a [rows, k], b [k, cols] float32 whose products for one output share one sign."""
    r = np.where(rng.random(rows) < 0.5, -1.0, 1.0) if row_signs else np.ones(rows)
    s = np.where(rng.random(cols) < 0.5, -1.0, 1.0) if col_signs else np.ones(cols)
    a = (rng.uniform(0.1, 1.0, (rows, k)) * r[:, None]).astype(np.float32)
    b = (rng.uniform(0.1, 1.0, (k, cols)) * s[None, :]).astype(np.float32)
    return a, b


def dyadic(rng, shape):
    """float32 multiples of 1/8 in [-2, 2]: their products and sums are exact in float32."""
    return (rng.integers(-16, 17, shape) / 8.0).astype(np.float32)


def _gemm_bound(k, options):
    extra = (options.get("alpha", 1.0) != 1.0) + ("c" in options) + ("c" in options and options.get("beta", 1.0) != 1.0)
    return 2 * k + int(extra)


def _gemm_case(name, a, b, c=None, const=(), **opts):
    """One gemm case; `const` names the operands passed as constants instead of inputs."""
    arrays = {"a": a, "b": b} | ({"c": c} if c is not None else {})
    options = dict(opts)
    if c is not None:
        options["c"] = operand("c")
    ref_opts = dict(opts) | ({"c": c} if c is not None else {})
    dt = data_type_of(a)
    with np.errstate(invalid="ignore"):
        expected = gemm(a, b, ref_opts, data_type=dt)
    k = a.shape[0] if opts.get("aTranspose") else a.shape[1]
    return op_case(
        f"gemm/{dt}/{name}", "gemm", dt, [operand("a"), operand("b")], options or None,
        inputs={n: v for n, v in arrays.items() if n not in const},
        constants={n: v for n, v in arrays.items() if n in const},
        expected={"y": (expected, dt)}, metric="ULP", value=_gemm_bound(k, opts | ({"c": 1} if c is not None else {})))


def _gemm_cases(rng):
    cases = []
    for m, k, n in [(1, 1, 1), (2, 3, 4), (5, 7, 9), (13, 17, 3), (3, 40, 2), (65, 18, 70), (64, 16, 64)]:
        for at in (False, True):
            for bt in (False, True):
                a, b = no_cancel(rng, m, k, n)
                a = np.ascontiguousarray(a.T) if at else a
                b = np.ascontiguousarray(b.T) if bt else b
                opts = {"aTranspose": True} if at else {}
                opts |= {"bTranspose": True} if bt else {}
                cases.append(_gemm_case(f"{m}x{k}x{n}-aT{int(at)}-bT{int(bt)}", a, b, **opts))
    # c broadcast to [M, N] from every allowed shape; alpha and beta; dyadic data with any signs
    m, k, n = 6, 11, 10
    for cshape in [(m, n), (n,), (1, n), (m, 1), (1, 1), (), (1,)]:
        a, b = dyadic(rng, (m, k)), dyadic(rng, (k, n))
        c = dyadic(rng, cshape)
        tag = "x".join(map(str, cshape)) or "scalar"
        cases.append(_gemm_case(f"c-{tag}", a, b, c))
        cases.append(_gemm_case(f"c-{tag}-alpha-beta", a, b, c, alpha=0.5, beta=-2.0))
    a, b = dyadic(rng, (66, 8)), dyadic(rng, (8, 68))
    cases.append(_gemm_case("vec4-aligned-c", a, b, dyadic(rng, (68,)), beta=0.5))
    cases.append(_gemm_case("vec4-aligned-aT-bT", np.ascontiguousarray(a.T), np.ascontiguousarray(b.T), aTranspose=True, bTranspose=True))
    a, b = dyadic(rng, (7, 5)), dyadic(rng, (5, 9))
    cases.append(_gemm_case("alpha-only", a, b, alpha=-1.5))
    cases.append(_gemm_case("beta-without-c", a, b, beta=3.0))
    cases.append(_gemm_case("alpha-zero", a, b, dyadic(rng, (9,)), alpha=0.0, beta=1.0))
    cases.append(_gemm_case("constants", a, b, dyadic(rng, (7, 9)), const=("b", "c"), aTranspose=False))
    a, b = dyadic(rng, (5, 7)), dyadic(rng, (9, 5))
    cases.append(_gemm_case("aT-bT-c-alpha", a, b, dyadic(rng, (1, 9)), aTranspose=True, bTranspose=True, alpha=0.25))
    # random (non-dyadic) data with c of one sign: positive, and all negative through alpha/beta
    a, b = no_cancel(rng, 9, 23, 12, row_signs=False, col_signs=False)
    c = rng.uniform(0.1, 1.0, (12,)).astype(np.float32)
    cases.append(_gemm_case("random-c-positive", a, b, c, alpha=1.7, beta=0.3))
    cases.append(_gemm_case("random-c-negative", a, b, c, alpha=-1.7, beta=-0.3))
    # skinny shapes: few rows (gemv kernels) and few columns (computed transposed)
    for m, k, n, bt in [(1, 130, 70, False), (1, 130, 70, True), (3, 65, 130, False), (4, 129, 5, True),
                        (2, 1, 33, True), (100, 37, 1, False), (90, 64, 3, True), (1, 5, 1, False)]:
        a, b = no_cancel(rng, m, k, n)
        b = np.ascontiguousarray(b.T) if bt else b
        cases.append(_gemm_case(f"skinny-{m}x{k}x{n}-bT{int(bt)}", a, b, **({"bTranspose": True} if bt else {})))
    # NaN and infinities propagate
    a, b = no_cancel(rng, 5, 6, 7, row_signs=False, col_signs=False)
    a[0, 1], a[2, 0], b[3, 4] = np.inf, np.nan, -np.inf
    cases.append(_gemm_case("nan-inf", a, b))
    a, b = no_cancel(rng, 1, 70, 9, row_signs=False, col_signs=False)
    a[0, 3] = np.nan
    cases.append(_gemm_case("nan-gemv", a, np.ascontiguousarray(b.T), bTranspose=True))
    return cases


def _matmul_case(name, a, b, const=()):
    arrays = {"a": a, "b": b}
    dt = data_type_of(a)
    with np.errstate(invalid="ignore"):
        expected = matmul(a, b)
    return op_case(
        f"matmul/{dt}/{name}", "matmul", dt, [operand("a"), operand("b")], None,
        inputs={n: v for n, v in arrays.items() if n not in const},
        constants={n: v for n, v in arrays.items() if n in const},
        expected={"y": (expected, dt)}, metric="ULP", value=2 * a.shape[-1])


def _batched(rng, batch_a, batch_b, m, k, n, exact=False):
    if exact:
        return dyadic(rng, (*batch_a, m, k)), dyadic(rng, (*batch_b, k, n))
    a, b = no_cancel(rng, m, k, n)
    sa = rng.uniform(0.5, 2.0, (*batch_a, 1, 1)).astype(np.float32)
    sb = rng.uniform(0.5, 2.0, (*batch_b, 1, 1)).astype(np.float32)
    return (a * sa).astype(np.float32), (b * sb).astype(np.float32)


def _matmul_cases(rng):
    cases = []
    for m, k, n in [(1, 1, 1), (2, 3, 4), (7, 5, 3), (33, 19, 65), (1, 200, 30), (30, 200, 1), (33, 20, 68), (70, 8, 132)]:
        cases.append(_matmul_case(f"{m}x{k}x{n}", *_batched(rng, (), (), m, k, n)))
    for ba, bb in [((3,), (3,)), ((2, 1), (3,)), ((), (2,)), ((4,), ()), ((2, 1, 3), (1, 2, 1)), ((1,), (1,)),
                   ((2, 1, 2, 1), (3, 1, 2)), ((5,), (1,))]:
        for m, k, n in [(5, 6, 4), (1, 40, 9), (17, 3, 2)]:
            tag = f"{list(ba)}x{list(bb)}-{m}x{k}x{n}".replace(" ", "")
            cases.append(_matmul_case(tag, *_batched(rng, ba, bb, m, k, n)))
    cases.append(_matmul_case("exact-batched-mixed-signs", *_batched(rng, (2, 3), (3,), 9, 21, 11, exact=True)))
    cases.append(_matmul_case("exact-batched-vec4-aligned", *_batched(rng, (2, 3), (3,), 9, 12, 16, exact=True)))
    cases.append(_matmul_case("constant-b", *_batched(rng, (2,), (), 4, 8, 6), const=("b",)))
    cases.append(_matmul_case("constant-a", *_batched(rng, (), (3,), 4, 8, 6), const=("a",)))
    a, b = _batched(rng, (2,), (2,), 4, 5, 6)
    a[1, 2, 3], b[0, 1, 1] = np.nan, np.inf
    cases.append(_matmul_case("nan-inf", a, b))
    return cases


def _float16_cases(rng):
    """float16 operands (computed in f32, rounded once to float16); bounds in float16 ULP."""
    h = lambda *arrays: [x.astype(np.float16) for x in arrays]  # noqa: E731
    cases = []
    for m, k, n, at, bt in [(5, 7, 9, False, False), (65, 18, 70, True, True), (1, 130, 70, False, True), (3, 40, 2, True, False)]:
        a, b = no_cancel(rng, m, k, n)
        a = np.ascontiguousarray(a.T) if at else a
        b = np.ascontiguousarray(b.T) if bt else b
        opts = ({"aTranspose": True} if at else {}) | ({"bTranspose": True} if bt else {})
        cases.append(_gemm_case(f"{m}x{k}x{n}-aT{int(at)}-bT{int(bt)}", *h(a, b), **opts))
    a, b, c = h(dyadic(rng, (6, 11)), dyadic(rng, (11, 10)), dyadic(rng, (10,)))
    cases.append(_gemm_case("c-alpha-beta", a, b, c, alpha=0.5, beta=-2.0))
    cases.append(_gemm_case("c-constant", a, b, c, const=("b", "c")))
    for ba, bb, m, k, n in [((3,), (3,), 5, 6, 4), ((2, 1), (3,), 17, 3, 2), ((), (2,), 1, 40, 9)]:
        cases.append(_matmul_case(f"{list(ba)}x{list(bb)}-{m}x{k}x{n}".replace(" ", ""), *h(*_batched(rng, ba, bb, m, k, n))))
    a, b = h(*_batched(rng, (2,), (2,), 4, 5, 6))
    a[1, 2, 3], b[0, 1, 1] = np.nan, np.inf
    cases.append(_matmul_case("nan-inf", a, b))
    return cases


def graph_cases() -> list[dict]:
    """gemm and matmul graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    return _gemm_cases(rng) + _matmul_cases(rng) + _float16_cases(rng)


def _input(name, shape, data_type="float32"):
    return f"builder.input('{name}', {{dataType: '{data_type}', shape: {list(shape)}}})"


def _gemm_js(sa, sb, options="", ta="float32", tb="float32"):
    return f"(builder) => builder.gemm({_input('a', sa, ta)}, {_input('b', sb, tb)}, {{label: 'L'{options}}})"


def _matmul_js(sa, sb, ta="float32", tb="float32"):
    return f"(builder) => builder.matmul({_input('a', sa, ta)}, {_input('b', sb, tb)}, {{label: 'L'}})"


def validation_cases() -> list[dict]:
    """gemm and matmul inputs the spec refuses, each a TypeError naming the label."""
    gemm_bad = {
        "a-rank-3": _gemm_js([2, 3, 4], [4, 5]),
        "b-rank-1": _gemm_js([3, 4], [4]),
        "a-rank-0": _gemm_js([], [4, 5]),
        "inner-mismatch": _gemm_js([3, 4], [5, 6]),
        "inner-mismatch-aTranspose": _gemm_js([3, 4], [4, 6], ", aTranspose: true"),
        "inner-mismatch-bTranspose": _gemm_js([3, 4], [4, 6], ", bTranspose: true"),
        "c-not-broadcastable": _gemm_js([3, 4], [4, 5], f", c: {_input('c', [3])}"),
        "c-rank-3": _gemm_js([3, 4], [4, 5], f", c: {_input('c', [1, 3, 5])}"),
        "c-larger-than-output": _gemm_js([3, 4], [4, 5], f", c: {_input('c', [6, 5])}"),
        "c-data-type": _gemm_js([3, 4], [4, 5], f", c: {_input('c', [5], 'int32')}"),
        "a-int32": _gemm_js([3, 4], [4, 5], ta="int32", tb="int32"),
        "b-data-type": _gemm_js([3, 4], [4, 5], tb="uint32"),
        "alpha-nan": _gemm_js([3, 4], [4, 5], ", alpha: NaN"),
        "beta-infinity": _gemm_js([3, 4], [4, 5], ", beta: Infinity"),
        "c-not-operand": _gemm_js([3, 4], [4, 5], ", c: 1"),
        "foreign-operand": "(builder, context) => { const other = new MLGraphBuilder(context); "
                           "return builder.gemm(other.input('a', {dataType: 'float32', shape: [2, 2]}), "
                           f"{_input('b', [2, 2])}, {{label: 'L'}}); }}",
    }
    matmul_bad = {
        "a-rank-1": _matmul_js([4], [4, 5]),
        "b-rank-1": _matmul_js([3, 4], [4]),
        "a-rank-0": _matmul_js([], [4, 5]),
        "inner-mismatch": _matmul_js([3, 4], [5, 6]),
        "batch-not-broadcastable": _matmul_js([2, 3, 4], [3, 4, 5]),
        "batch-not-broadcastable-rank-4": _matmul_js([2, 2, 3, 4], [3, 1, 4, 5]),
        "a-int32": _matmul_js([3, 4], [4, 5], ta="int32", tb="int32"),
        "data-type-mismatch": _matmul_js([3, 4], [4, 5], tb="float16"),
        "b-not-operand": "(builder) => builder.matmul(" + _input("a", [2, 2]) + ", [[1, 2], [3, 4]], {label: 'L'})",
    }
    cases = [validation_case(f"gemm/validation/{n}", "gemm", js, "TypeError", "L") for n, js in gemm_bad.items()]
    cases += [validation_case(f"matmul/validation/{n}", "matmul", js, "TypeError", "L") for n, js in matmul_bad.items()]
    return cases
