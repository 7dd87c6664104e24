"""Data types end to end: graph boundaries (packed float16/int8/uint8 <-> compute layout),
float16 rounding (exhaustive against NumPy), 64-bit integers beyond 2^53, the cast matrix with
our implementation-defined choices, ranks 0 to 8, constants and opSupportLimits.

Everything runs through the public API (builder -> build -> dispatch -> readTensor), so a
failure points at the boundaries (compile/boundary.js), the rounding (gpu/types.js F16_ROUND,
gpu/packing.js) or the kernels (ops/cast.js, gpu/int64.js).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.graph_batch import run_graphs
from tests.graph_runner import GraphError, open_harness
from tests.reference import elementwise as ref
from tests.tolerance import assert_exact

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

ALL = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")


def cast_graph(src, dst, shape, constant=None):
    """cast(x, dst) of an input x (or of a constant with inline bytes)."""
    import base64
    desc = {"inputs": {}, "constants": {}, "operators": [{"op": "cast", "args": [{"operand": "x"}, dst], "outputs": "y"}],
            "outputs": ["y"]}
    if constant is None:
        desc["inputs"]["x"] = {"dataType": src, "shape": list(shape)}
    else:
        desc["constants"]["x"] = {"dataType": src, "shape": list(shape),
                                  "bytes": base64.b64encode(np.ascontiguousarray(constant).tobytes()).decode()}
    return desc


def run_ok(page, url, cases):
    """run_graphs, failing on any GraphError."""
    results = run_graphs(page, url, cases)
    errors = [r for r in results if isinstance(r, GraphError)]
    assert not errors, errors[:3]
    return results


def bits_equal(actual: np.ndarray, expected: np.ndarray):
    """Bit-for-bit equality of two float arrays, NaN payloads included."""
    view = {2: np.uint16, 4: np.uint32}[actual.dtype.itemsize]
    a, e = actual.view(view), expected.view(view)
    bad = np.flatnonzero(a != e)
    assert bad.size == 0, f"{bad.size} of {a.size} differ, first at {bad[:5]}: got {a.reshape(-1)[bad[:5]]}, expected {e.reshape(-1)[bad[:5]]}"


# ------------------------------------------------------------------------- float16 rounding

def float16_neighbourhoods() -> np.ndarray:
    """float32 inputs around every binary16 value: the value, the midpoints to both neighbours
    (exact ties), one float32 ULP either side of each midpoint, and the overflow threshold."""
    h = np.arange(0, 0x7C00, dtype=np.uint16)  # every finite non-negative binary16
    v = h.view(np.float16).astype(np.float64)
    up = np.append(v[1:], 65520.0)  # the next binary16 (65520 = the tie with 2^16 for the last)
    mid = ((v + up) / 2).astype(np.float32)  # exact in float32
    cands = [v.astype(np.float32), mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(0))]
    pos = np.concatenate(cands + [np.array([65504, 65519.996, 65520, 65536, 1e5, 3.4028235e38, 2 ** -25, 2 ** -26, 1e-30],
                                           np.float32)])
    specials = np.array([np.inf, -np.inf, np.nan, -0.0], np.float32)
    specials = np.concatenate([specials, np.array([0x7FC00001, 0xFFC12345, 0x7F800001, 0x7FBFFFFF], np.uint32).view(np.float32)])
    return np.concatenate([pos, -pos, specials])


def test_float16_rounding_exhaustive(webnn_page, server_url):
    """f16_round (F16_ROUND) matches NumPy's round-to-nearest-even for every binary16 neighbourhood:
    ties to even, subnormals, overflow to Inf from 65520, -0, NaN stays NaN."""
    x = float16_neighbourhoods()
    [out] = run_ok(webnn_page, server_url, [(cast_graph("float32", "float16", x.shape), {"x": x})])
    y = out["y"]
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(y), nan)
    bits_equal(y[~nan], expected[~nan])
    assert x.size > 250_000


def test_float16_to_float32_every_pattern(webnn_page, server_url):
    """Widening every binary16 bit pattern (the input boundary) is exact, NaN payloads kept."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    results = run_ok(webnn_page, server_url, [
        (cast_graph("float16", "float32", x.shape), {"x": x}),
        (cast_graph("float16", "float16", x.shape), {"x": x}),
        (cast_graph("float16", "float16", (256, 256), constant=x), {}),
    ])
    bits_equal(results[0]["y"], x.astype(np.float32))
    bits_equal(results[1]["y"], x)  # input -> compute -> output boundary, every pattern
    bits_equal(results[2]["y"], x.reshape(256, 256))  # constants are widened on the CPU


# ------------------------------------------------------------------------- boundaries

ODD_SHAPES = [(), (1,), (2,), (3,), (5,), (6,), (7,), (9,), (3, 3), (1, 5, 1, 3), (2, 1, 1, 1, 1, 3, 1, 1)]


@pytest.mark.parametrize("data_type", ["float16", "int8", "uint8"])
def test_packed_round_trips(webnn_page, server_url, data_type):
    """Packed types through input -> output and constant -> output for element counts that are not
    multiples of 2 or 4, rank 0 and rank 8: every element lands in its own bytes, none clobbered."""
    rng = np.random.default_rng(5)
    cases, expected = [], []
    for shape in ODD_SHAPES:
        if data_type == "float16":
            x = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16).view(np.float16)
        else:
            lo, hi = ref.INT_RANGE[data_type]
            x = rng.integers(lo, hi, size=shape, endpoint=True, dtype=ref.NUMPY[data_type])
        cases.append((cast_graph(data_type, data_type, shape), {"x": x}))
        cases.append((cast_graph(data_type, data_type, shape, constant=x), {}))
        expected += [x, x]
    for out, x in zip(run_ok(webnn_page, server_url, cases), expected):
        assert out["y"].shape == x.shape
        if data_type == "float16":
            bits_equal(out["y"], x)
        else:
            assert_exact(out["y"], x)


def test_all_int8_values_and_sign_extension(webnn_page, server_url):
    """All 256 int8/uint8 values widen with the right sign and narrow back (4 per word)."""
    i8 = np.arange(-128, 128, dtype=np.int8)
    u8 = np.arange(256, dtype=np.uint8)
    results = run_ok(webnn_page, server_url, [
        (cast_graph("int8", "int32", i8.shape), {"x": i8}),
        (cast_graph("uint8", "int32", u8.shape), {"x": u8}),
        (cast_graph("int32", "int8", (257,)), {"x": np.arange(-128, 129, dtype=np.int32)}),
        (cast_graph("int8", "uint8", (255,)), {"x": i8[:255]}),
    ])
    assert_exact(results[0]["y"], i8.astype(np.int32))
    assert_exact(results[1]["y"], u8.astype(np.int32))
    assert_exact(results[2]["y"], np.append(np.arange(-128, 128), -128).astype(np.int8))  # 128 wraps
    assert_exact(results[3]["y"], i8[:255].view(np.uint8))


def test_multiple_packed_outputs_and_scalar(webnn_page, server_url):
    """Several packed outputs of one graph, including a rank-0 one (shape [], not [1])."""
    desc = {"inputs": {"x": {"dataType": "float32", "shape": [5]}, "s": {"dataType": "float32", "shape": []}},
            "operators": [{"op": "cast", "args": [{"operand": "x"}, "float16"], "outputs": "h"},
                          {"op": "cast", "args": [{"operand": "x"}, "int8"], "outputs": "b"},
                          {"op": "cast", "args": [{"operand": "s"}, "uint8"], "outputs": "u"}],
            "outputs": ["h", "b", "u"]}
    x = np.array([1.5, -2.75, 100.25, -0.0, 65519], np.float32)
    [out] = run_ok(webnn_page, server_url, [(desc, {"x": x, "s": np.array(7.9, np.float32)})])
    bits_equal(out["h"], x.astype(np.float16))
    assert_exact(out["b"], np.array([1, -2, 100, 0, 127], np.int8))
    assert out["u"].shape == () and out["u"] == 7


# ------------------------------------------------------------------------- 64-bit integers

def test_int64_beyond_2_53(webnn_page, server_url):
    """int64/uint64 keep every bit through inputs, outputs, arithmetic, comparisons and casts."""
    a = np.array([2 ** 53 + 1, -(2 ** 53) - 3, 2 ** 63 - 1, -(2 ** 63), 1234567890123456789, -1], np.int64)
    b = np.array([2, 2 ** 32 + 7, -1, -1, 987654321, 2 ** 62 + 1], np.int64)
    u = a.view(np.uint64)
    v = b.view(np.uint64)
    binary = lambda op, dt: {"inputs": {"a": {"dataType": dt, "shape": [6]}, "b": {"dataType": dt, "shape": [6]}},  # noqa: E731
                             "operators": [{"op": op, "args": [{"operand": "a"}, {"operand": "b"}], "outputs": "y"}], "outputs": ["y"]}
    ops = ["add", "sub", "mul", "div", "max", "min", "pow", "equal", "greater", "lesserOrEqual"]
    cases = [(binary(op, "int64"), {"a": a, "b": b}) for op in ops] + [(binary(op, "uint64"), {"a": u, "b": v}) for op in ops]
    cases += [(cast_graph("int64", to, (6,)), {"x": a}) for to in ALL]
    results = run_ok(webnn_page, server_url, cases)
    for k, op in enumerate(ops):
        for off, (x, y, dt) in ((0, (a, b, "int64")), (len(ops), (u, v, "uint64"))):
            got = results[off + k]["y"]
            exp = ref.logical(op, x, y) if op in ("equal", "greater", "lesserOrEqual") else ref.binary(op, x, y, dt)
            assert_exact(got, exp)
    for k, to in enumerate(ALL):
        assert_exact(results[2 * len(ops) + k]["y"], ref.cast(a, to))
    assert results[0]["y"][0] == 2 ** 53 + 3  # a double would give 2^53 + 2


def test_int64_unary_and_clamp_with_bigint(webnn_page, server_url):
    """abs/neg/sign/relu on int64 (INT64_MIN wraps) and clamp with bigint MLNumbers past 2^53."""
    x = np.array([-(2 ** 63), 2 ** 63 - 1, -(2 ** 53) - 1, 0, 5, -5], np.int64)
    unary = lambda op, options=None: {"inputs": {"x": {"dataType": "int64", "shape": [6]}},  # noqa: E731
                                      "operators": [{"op": op, "args": [{"operand": "x"}], "outputs": "y",
                                                     **({"options": options} if options else {})}], "outputs": ["y"]}
    lo, hi = -(2 ** 53) - 2, 2 ** 62 + 1
    cases = [(unary(op), {"x": x}) for op in ("abs", "neg", "sign", "relu")]
    cases.append((unary("clamp", {"minValue": {"bigint": str(lo)}, "maxValue": {"bigint": str(hi)}}), {"x": x}))
    results = run_ok(webnn_page, server_url, cases)
    for k, op in enumerate(("abs", "neg", "sign", "relu")):
        assert_exact(results[k]["y"], ref.unary(op, x, "int64"))
    assert_exact(results[4]["y"], np.clip(x, lo, hi))
    assert results[0]["y"][0] == -(2 ** 63)  # |INT64_MIN| wraps


@pytest.mark.parametrize("data_type", ["uint64", "int64"])
def test_clamp_64bit_with_number_bounds_beyond_2_32(webnn_page, server_url, data_type):
    """clamp on uint64/int64 with Number (not bigint) bounds past 2^32, e.g. maxValue
    5294967295 as ORT passes it: the bounds cast exactly (spec "cast" of an MLNumber) and the
    values clip to them; a non-integral bound rounds to nearest even first."""
    dt = np.dtype(data_type)
    x = np.array([0, 4294967295, 4294967296, 4294967300, 5294967295, 5294967296, 2 ** 62, 7], dt)
    if data_type == "int64":
        x[-1] = -(2 ** 40)
    graph = lambda options: {"inputs": {"x": {"dataType": data_type, "shape": [8]}},  # noqa: E731
                             "operators": [{"op": "clamp", "args": [{"operand": "x"}], "options": options, "outputs": "y"}],
                             "outputs": ["y"]}
    cases = [(graph({"minValue": 4294967297, "maxValue": 5294967295}), {"x": x}),
             (graph({"maxValue": 5294967295}), {"x": x}),
             (graph({"minValue": 4294967296.5, "maxValue": 2 ** 53}), {"x": x})]
    results = run_ok(webnn_page, server_url, cases)
    lowest = 0 if data_type == "uint64" else -(2 ** 63)
    assert_exact(results[0]["y"], np.clip(x, 4294967297, 5294967295).astype(dt))
    assert_exact(results[1]["y"], np.clip(x, lowest, 5294967295).astype(dt))
    assert_exact(results[2]["y"], np.clip(x, 4294967296, 2 ** 53).astype(dt))


# ------------------------------------------------------------------------- cast choices

def test_cast_float_to_int_out_of_range_saturates(webnn_page, server_url):
    """Implementation-defined (spec §cast): out-of-range float -> integer saturates, NaN -> 0."""
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 300.7, -300.7, -0.99, 4.3e9, -1.0], np.float32)
    with np.errstate(over="ignore"):
        cases = [(cast_graph(src, dst, x.shape), {"x": x.astype(src)}) for src in ("float32", "float16")
                 for dst in ALL[2:]]
    results = run_ok(webnn_page, server_url, cases)
    k = 0
    for src in ("float32", "float16"):
        for dst in ALL[2:]:
            with np.errstate(over="ignore"):
                assert_exact(results[k]["y"], ref.cast(x.astype(src), dst))
            k += 1
    assert list(run_ok(webnn_page, server_url, [(cast_graph("float32", "uint8", x.shape), {"x": x})])[0]["y"]) == \
        [0, 255, 0, 255, 0, 255, 0, 0, 255, 0]


def test_cast_int_to_float_rounds_to_nearest_even(webnn_page, server_url):
    """Integers with more than 24 significant bits round to nearest even (never through f64)."""
    vals = [2 ** 24 + 1, 2 ** 24 + 3, 2 ** 25 + 2, 2 ** 25 + 6, 2 ** 31 - 1, -(2 ** 31), 2 ** 53 + 1,
            2 ** 63 - 1, -(2 ** 63) + 1, (2 ** 24 + 1) * 2 ** 30, 65519, 65520, -65520, 2049, 2051]
    i64 = np.array(vals, np.int64)
    i32 = np.array([v for v in vals if -(2 ** 31) <= v < 2 ** 31], np.int32)
    u32 = np.array([v for v in vals if 0 <= v < 2 ** 32] + [2 ** 32 - 1, 2 ** 32 - 129], np.uint32)
    u64 = np.array([v for v in vals if v >= 0] + [2 ** 64 - 1, 2 ** 64 - 2 ** 40 - 1], np.uint64)
    cases, expected = [], []
    for x in (i64, i32, u32, u64):
        for to in ("float32", "float16"):
            cases.append((cast_graph(x.dtype.name, to, x.shape), {"x": x}))
            expected.append(ref.cast(x, to))
    for out, e in zip(run_ok(webnn_page, server_url, cases), expected):
        bits_equal(out["y"], e)


# ------------------------------------------------------------------------- ranks, limits

def test_ranks_0_to_8_broadcasting(webnn_page, server_url):
    """Binary broadcasting over every rank from 0 to 8, packed and 64-bit types included."""
    rng = np.random.default_rng(8)
    cases, expected = [], []
    for rank in range(9):
        shape_a = tuple(int(d) for d in rng.integers(1, 4, rank))
        shape_b = tuple(1 if rng.random() < 0.5 else d for d in shape_a)[rank // 2:]
        for dt in ("float16", "int8", "uint64"):
            lo, hi = (-100, 100) if dt != "uint64" else (0, 100)
            a = rng.integers(lo, hi, shape_a).astype(dt)
            b = rng.integers(lo, hi, shape_b).astype(dt)
            desc = {"inputs": {"a": {"dataType": dt, "shape": list(shape_a)}, "b": {"dataType": dt, "shape": list(shape_b)}},
                    "operators": [{"op": "add", "args": [{"operand": "a"}, {"operand": "b"}], "outputs": "y"}], "outputs": ["y"]}
            cases.append((desc, {"a": a, "b": b}))
            expected.append(ref.binary("add", a, b, dt).astype(dt) if dt != "float16" else (a.astype(np.float64) + b).astype(np.float16))
    for out, e in zip(run_ok(webnn_page, server_url, cases), expected):
        assert out["y"].shape == e.shape
        assert_exact(out["y"], e)


def test_op_support_limits_data_types(webnn_page, server_url):
    """opSupportLimits() claims all eight types and Chromium's int4/uint4 for graph I/O and what
    each op's table allows (the 4-bit types in detail: tests/test_int4.py)."""
    open_harness(webnn_page, server_url)
    limits = webnn_page.evaluate("""async () => {
      const ctx = await navigator.ml.createContext();
      const l = ctx.opSupportLimits();
      const pick = (k) => l[k];
      const out = {input: l.input, constant: l.constant, output: l.output,
                   add: pick('add'), equal: pick('equal'), abs: pick('abs'), cast: pick('cast'), exp: pick('exp'),
                   logicalNot: pick('logicalNot'), prelu: pick('prelu'), clamp: pick('clamp'),
                   quantizeLinear: pick('quantizeLinear'), dequantizeLinear: pick('dequantizeLinear')};
      ctx.destroy();
      return out;
    }""")
    for key in ("input", "constant", "output"):
        assert sorted(limits[key]["dataTypes"]) == sorted(ALL + ("int4", "uint4"))
        assert limits[key]["rankRange"] == {"min": 0, "max": 8}
    assert sorted(limits["add"]["a"]["dataTypes"]) == sorted(ALL)
    assert limits["equal"]["output"]["dataTypes"] == ["uint8"]
    assert sorted(limits["abs"]["input"]["dataTypes"]) == sorted(["float32", "float16", "int64", "int32", "int8"])
    assert sorted(limits["cast"]["output"]["dataTypes"]) == sorted(ALL)
    assert limits["exp"]["input"]["dataTypes"] == ["float32", "float16"]
    assert limits["logicalNot"]["a"]["dataTypes"] == ["uint8"]
    assert set(limits["prelu"]) == {"input", "slope", "output"}
    assert sorted(limits["clamp"]["input"]["dataTypes"]) == sorted(ALL)
    assert sorted(limits["quantizeLinear"]["zeroPoint"]["dataTypes"]) == sorted(["uint8", "int8", "uint32", "int32", "int4", "uint4"])
    assert limits["dequantizeLinear"]["output"]["dataTypes"] == ["float32", "float16"]
