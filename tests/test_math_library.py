"""One WGSL math library (static/polyfill/gpu/math.js) with one NaN/Inf semantics.

Static checks: no polyfill module but gpu/math.js (and gpu/int64.js, the 64-bit integer emulation,
whose float -> int64 casts test NaN on the bits) defines a WGSL helper named like a MATH helper,
calls a WGSL builtin transcendental or square root, or tests NaN on the bits; and the relu /
sigmoid / tanh expressions live only in ops/activations.js. Each check is also run on the
duplicates it replaced (rows.js's FLOAT_HELPERS, recurrent_kernels.js's own activation table), so
it is shown to catch them.

Value checks, in the browser against float64 NumPy (tests/reference/), for the kernels that now
take their math from MATH: GRU/LSTM gates (relu / sigmoid / tanh from ops/activations.js) with NaN,
±Inf and large pre-activations; softmax, reduceLogSumExp, layer and instance normalization with
NaN, ±Inf and magnitudes where exp(x) overflows (or underflows) even in float64, float32 and
float16, with one invocation and with one workgroup per row. Bounds are tolerances.md's (softmax
3N + 3 ULP, reduceLogSumExp 2N + 18 ULP, layerNormalization 1/1024 | 1/512 absolute,
instanceNormalization 840 | 8400 ULP; recurrent operators: the bound of the operators they
decompose into, as in tests/conformance/cases/recurrent.py, at the scale of the finite outputs).
NaN must meet NaN and an infinity the same infinity.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.conformance.encode import operand
from tests.conformance.family_helpers import assert_all_pass, op_case, run_cases
from tests.graph_runner import data_type_of, decode_tensor
from tests.reference.normalization import instanceNormalization, layerNormalization
from tests.reference.ops import softmax
from tests.reference.recurrent import gru, gruCell, lstm, lstmCell

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

ROOT = Path(__file__).resolve().parent.parent / "static" / "polyfill"
MATH_JS = "gpu/math.js"
#: Modules allowed to hold float bit tests: the library itself and the int64 emulation.
LIBRARIES = {MATH_JS, "gpu/int64.js"}

# --------------------------------------------------------------------------------------------
# static checks


def math_helper_names() -> list[str]:
    """The keys of `export const MATH = {...}` in gpu/math.js."""
    text = (ROOT / MATH_JS).read_text()
    body = text[text.index("export const MATH = {"):]
    body = body[:body.index("\n};")]
    return re.findall(r"^  ([A-Za-z_][A-Za-z0-9_]*): \{", body, re.M)


def base_name(name: str) -> str:
    """A helper name without its type suffix (_f, _ff, _f16, _f32, _acc): is_nan_f and is_nan,
    exp_f and exp_acc, nan_f and nan_f32 are the same helper."""
    return re.sub(r"_(f|ff|f16|f32|acc)$", "", name)


WGSL_FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
#: JS block and line comments (not `://` in URLs); WGSL comments inside template strings go too.
COMMENT = re.compile(r"/\*.*?\*/|(?<![:\\])//[^\n]*", re.S)
#: WGSL builtins whose driver precision is loose (Vulkan: exp/log/pow 3 + 2|x| ULP, tanh from
#: exp, sqrt from inverseSqrt ...) or whose NaN/Inf behaviour is unspecified; a call not preceded
#: by `.` (so `Math.exp(` in JS is not one).
LOOSE_BUILTIN = re.compile(
    r"(?<![.\w])(exp|exp2|log|log2|pow|sqrt|inverseSqrt|tanh|sinh|cosh|asinh|acosh|atanh|sin|cos|tan|ldexp)\s*\(")
#: The NaN test on the bits: |bits| > the bits of +Inf.
NAN_BITS = re.compile(r"0x7fffffffu\s*\)?\s*>\s*0x7f800000u")
#: An activation table entry for relu / sigmoid / tanh (a key followed by a WGSL string or an object).
ACTIVATION_ENTRY = re.compile(r"\b(relu|sigmoid|tanh)\s*:\s*['\"`{]")


def violations(module: str, text: str, names: list[str]) -> list[str]:
    """What `text` (the source of polyfill module `module`) does that only gpu/math.js may."""
    found = []
    taken = {base_name(n) for n in names}
    if module not in LIBRARIES:
        for m in WGSL_FN.finditer(text):
            if m.group(1) in names or base_name(m.group(1)) in taken:
                found.append(f"{module}: defines WGSL fn {m.group(1)} (gpu/math.js has {m.group(1)} or its twin)")
        if NAN_BITS.search(text):
            found.append(f"{module}: tests NaN on the bits (use is_nan_f)")
    if module != MATH_JS:
        for m in LOOSE_BUILTIN.finditer(COMMENT.sub("", text)):
            found.append(f"{module}: calls the WGSL builtin {m.group(1)}() (use gpu/math.js)")
    if module != "ops/activations.js":
        for m in ACTIVATION_ENTRY.finditer(COMMENT.sub("", text)):
            found.append(f"{module}: has its own {m.group(1)} activation (use ACTIVATIONS of ops/activations.js)")
    return found


def test_math_names_are_found():
    names = math_helper_names()
    assert len(names) > 30
    assert {"is_nan_f", "exp_f", "log_f", "max_nan_f", "tanh_f", "sigmoid_f", "clamp_nan_f"} <= set(names)


def test_no_module_duplicates_the_math_library():
    """No polyfill module redefines a MATH helper (under its name or a suffix twin such as
    exp_acc for exp_f), calls a loose WGSL builtin, tests NaN on the bits, or keeps its own
    relu / sigmoid / tanh table."""
    names = math_helper_names()
    # cpu/ writes ONNX graphs for ONNX Runtime (its Pow and Sigmoid nodes are ONNX operators, not
    # WGSL builtins), vendor/ is ORT's own code: neither holds WGSL
    modules = sorted(m for m in (p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.js"))
                     if not m.startswith(("cpu/", "vendor/")))
    assert len(modules) > 40
    found = [v for m in modules for v in violations(m, (ROOT / m).read_text(), names)]
    assert not found, "\n".join(found)


#: What this check replaced (rows.js's FLOAT_HELPERS and recurrent_kernels.js's table, abridged).
OLD_ROWS = """
export const FLOAT_HELPERS = `
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn nan_f32(zero: u32) -> f32 { return bitcast<f32>(0x7fc00000u + zero); }
fn max_nan(a: f32, b: f32) -> f32 { return select(max(a, b), nan_f32(0u), is_nan(a) || is_nan(b)); }
fn exp_acc(x: f32) -> f32 { let k = round(x * 1.4426950408889634); return ldexp(p, i32(k)); }
`;
"""
OLD_RECURRENT = """
/** MLRecurrentNetworkActivation -> WGSL expression of x. */
const ACTIVATION = {
  sigmoid: '1.0 / (1.0 + exp_acc(-x))',
  tanh: 'select(tanh(x), sign(x), abs(x) > 10.0)',
  relu: 'max(x, 0.0)',
};
"""


def test_the_check_catches_the_old_duplicates():
    names = math_helper_names()
    rows = violations("ops/rows.js", OLD_ROWS, names)
    for what in ("fn is_nan ", "fn nan_f32 ", "fn max_nan ", "fn exp_acc ", "NaN on the bits", "builtin ldexp()"):
        assert any(what in v for v in rows), (what, rows)
    recurrent = violations("ops/recurrent_kernels.js", OLD_RECURRENT, names)
    assert sum("activation" in v for v in recurrent) == 3, recurrent
    assert any("builtin tanh()" in v for v in recurrent), recurrent
    # comments and JS's Math functions are not WGSL calls; the library itself may do all of it
    assert violations("ops/x.js", "/** exp(x) */ const y = Math.exp(2); // sqrt(x)\n", names) == []
    assert violations(MATH_JS, "fn exp_f(x: f32) -> f32 { return ldexp(x, 1); }", names) == []


# --------------------------------------------------------------------------------------------
# recurrent operators: activations from ops/activations.js, NaN and ±Inf propagated as NumPy does

F32, F16 = np.float32, np.float16
KERNELS = ["invocation", "workgroup"]


def _recurrent_bound(steps, input_size, hidden, is_lstm, expected, ulp_of_one):
    """tests/conformance/cases/recurrent.py's bound, at the scale of the finite expected values
    (an infinite output is compared exactly, so it must not widen the bound of the others)."""
    finite = [np.abs(e[np.isfinite(e)]) for e in expected]
    scale = max([1.0] + [float(f.max()) for f in finite if f.size])
    return steps * (2 * (input_size + hidden) + 60 + (16 if is_lstm else 0)) * ulp_of_one * scale


def _special_x(rng, shape, dtype):
    """Inputs whose batch rows are: ordinary; one NaN; one +Inf; one -Inf; 40 times larger (gate
    pre-activations of +-50, where sigmoid's exp(-x) overflows)."""
    x = rng.uniform(-0.6, 0.6, shape)
    x[..., 1, 0] = np.nan
    x[..., 2, 1] = np.inf
    x[..., 3, 2] = -np.inf
    x[..., 4, :] *= 40.0
    return x.astype(dtype)


def _recurrent_case(op, name, dtype, args, arrays, options, expected, steps, input_size, hidden):
    dt = data_type_of(arrays["x"])
    opts = dict(options) | {k: operand(k) for k in ("bias", "recurrentBias") if k in arrays}
    bound = _recurrent_bound(steps, input_size, hidden, op.startswith("lstm"), expected,
                             2.0 ** -10 if dtype == F16 else 2.0 ** -23)
    return op_case(f"{op}/{dt}/{name}", op, dt, args, opts, inputs={"x": arrays["x"]},
                   constants={k: v for k, v in arrays.items() if k != "x"},
                   expected={f"y{i}": (e, dt) for i, e in enumerate(expected)}, metric="ATOL", value=bound)


def recurrent_cases() -> list[dict]:
    """gruCell, gru, lstmCell and lstm over _special_x inputs. Weights are positive, so the
    input projection of the +Inf row is +Inf and of the -Inf row -Inf (not Inf - Inf)."""
    rng = np.random.default_rng(8)
    batch, input_size, hidden = 5, 3, 4
    cases = []
    with np.errstate(all="ignore"):
        for dtype in (F32, F16):
            gru_acts = [["sigmoid", "tanh"], ["relu", "relu"], ["tanh", "relu"]] if dtype == F32 else [["relu", "tanh"]]
            for acts in gru_acts:
                for reset_after in (True, False):
                    a = {"x": _special_x(rng, (batch, input_size), dtype),
                         "w": rng.uniform(0.1, 0.6, (3 * hidden, input_size)).astype(dtype),
                         "r": rng.uniform(-0.6, 0.6, (3 * hidden, hidden)).astype(dtype),
                         "h": rng.uniform(-0.6, 0.6, (batch, hidden)).astype(dtype),
                         "bias": rng.uniform(-0.6, 0.6, (3 * hidden,)).astype(dtype),
                         "recurrentBias": rng.uniform(-0.6, 0.6, (3 * hidden,)).astype(dtype)}
                    opts = {"activations": acts, "resetAfter": reset_after}
                    ref = gruCell(a["x"], a["w"], a["r"], a["h"], hidden, opts | {"bias": a["bias"], "recurrentBias": a["recurrentBias"]})
                    args = [operand("x"), operand("w"), operand("r"), operand("h"), hidden]
                    cases.append(_recurrent_case("gruCell", f"{'-'.join(acts)}-resetAfter{int(reset_after)}", dtype, args, a,
                                                 opts, [ref], 1, input_size, hidden))
            lstm_acts = [["sigmoid", "tanh", "tanh"], ["relu", "relu", "relu"], ["tanh", "sigmoid", "relu"]] if dtype == F32 \
                else [["sigmoid", "relu", "tanh"]]
            for acts in lstm_acts:
                a = {"x": _special_x(rng, (batch, input_size), dtype),
                     "w": rng.uniform(0.1, 0.6, (4 * hidden, input_size)).astype(dtype),
                     "r": rng.uniform(-0.6, 0.6, (4 * hidden, hidden)).astype(dtype),
                     "h": rng.uniform(-0.6, 0.6, (batch, hidden)).astype(dtype),
                     "c": rng.uniform(-0.6, 0.6, (batch, hidden)).astype(dtype),
                     "bias": rng.uniform(-0.6, 0.6, (4 * hidden,)).astype(dtype)}
                opts = {"activations": acts}
                ref = lstmCell(a["x"], a["w"], a["r"], a["h"], a["c"], hidden, opts | {"bias": a["bias"]})
                args = [operand("x"), operand("w"), operand("r"), operand("h"), operand("c"), hidden]
                cases.append(_recurrent_case("lstmCell", "-".join(acts), dtype, args, a, opts, list(ref), 1, input_size, hidden))
        # sequences: a NaN or Inf reaches the next step through the recurrent product
        steps = 2
        for op, acts in (("gru", ["relu", "tanh"]), ("gru", ["sigmoid", "relu"]),
                         ("lstm", ["relu", "sigmoid", "tanh"]), ("lstm", ["sigmoid", "tanh", "relu"])):
            gates = 3 if op == "gru" else 4
            a = {"x": _special_x(rng, (steps, batch, input_size), F32),
                 "w": rng.uniform(0.1, 0.6, (1, gates * hidden, input_size)).astype(F32),
                 "r": rng.uniform(-0.6, 0.6, (1, gates * hidden, hidden)).astype(F32),
                 "bias": rng.uniform(-0.6, 0.6, (1, gates * hidden)).astype(F32)}
            opts = {"activations": acts, "returnSequence": True}
            fn = gru if op == "gru" else lstm
            ref = fn(a["x"], a["w"], a["r"], steps, hidden, opts | {"bias": a["bias"]})
            args = [operand("x"), operand("w"), operand("r"), steps, hidden]
            cases.append(_recurrent_case(op, "-".join(acts), F32, args, a, opts, ref, steps, input_size, hidden))
    return cases


def test_recurrent_reference_has_nan_and_inf():
    """The cases really contain NaN outputs (a relu that dropped NaN would give numbers there)
    and outputs that saturated at +-1 or 0 from infinite pre-activations."""
    cases = recurrent_cases()
    outs = [decode_tensor(e) for c in cases for e in c["expected"].values()]
    assert all(np.isnan(o).any() for o in outs)
    relu_cells = [c for c in cases if c["op"] == "gruCell" and "relu-relu" in c["name"]]
    assert relu_cells and all(np.isnan(decode_tensor(c["expected"]["y0"])[1]).all() for c in relu_cells)
    # sigmoid(+Inf) = 1, tanh(+Inf) = 1: c' = c + 1; sigmoid(-Inf) = 0: c' = 0, h' = 0
    cell = next(c for c in cases if c["name"] == "lstmCell/float32/sigmoid-tanh-tanh")
    h, c = decode_tensor(cell["expected"]["y0"]), decode_tensor(cell["expected"]["y1"])
    c0 = decode_tensor(cell["graph"]["constants"]["c"])
    assert np.allclose(c[2], c0[2] + 1.0) and np.allclose(h[2], np.tanh(c0[2] + 1.0), atol=1e-6)
    assert (c[3] == 0).all() and (h[3] == 0).all()


@pytest.mark.parametrize("kernel", KERNELS)
def test_recurrent_special_values(webnn_page, server_url, kernel):
    """GRU / LSTM gates with relu, sigmoid and tanh: NaN where NumPy has NaN (relu included),
    sigmoid(+-Inf) = 1 / 0, tanh(+-Inf) = +-1, saturated gates for large inputs; float32 and
    float16. (The gate kernels are element-wise; `kernel` only varies the row kernels around.)"""
    assert_all_pass(run_cases(webnn_page, server_url, recurrent_cases(), {"rows": kernel}))


# --------------------------------------------------------------------------------------------
# row kernels: softmax, reduceLogSumExp, normalizations


def logsumexp64(x, axis):
    """log(sum(exp(x))) in float64 with the row max factored out, so that rows whose exp
    overflows (x > 709) or underflows (x < -745) in float64 keep their finite value; rows whose
    max is NaN or ±Inf get the direct formula's value (NaN, +Inf, or -Inf for a row of -Inf)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        direct = np.log(np.sum(np.exp(x), axis=axis))
        safe = np.where(np.isfinite(m), m, 0.0)
        shifted = np.squeeze(safe, axis) + np.log(np.sum(np.exp(x - safe), axis=axis))
        return np.where(np.isfinite(np.squeeze(m, axis)), shifted, direct)


def _row_specials(rng, n, dtype):
    """Rows: far beyond exp's range (max of the type, equal); the max and the lowest of the type
    together; around +1000 and -1000 (exp overflows / underflows in float64); -Inf among finite
    values; NaN; +Inf; a row of -Inf; +Inf and -Inf; ordinary values."""
    big = float(np.finfo(dtype).max)
    far = 1000.0 if dtype == F32 else 10000.0
    rows = [np.full(n, big), np.r_[big, -big, rng.uniform(-1, 1, n - 2)],
            far + rng.uniform(-5, 5, n), -far + rng.uniform(-5, 5, n),
            np.r_[-np.inf, rng.uniform(-3, 3, n - 1)], np.r_[rng.uniform(-3, 3, n - 1), np.nan],
            np.r_[rng.uniform(-3, 3, n - 1), np.inf], np.full(n, -np.inf),
            np.r_[np.inf, -np.inf, rng.uniform(-3, 3, n - 2)], rng.uniform(-3, 3, n)]
    return np.stack(rows).astype(dtype)


def row_cases() -> list[dict]:
    rng = np.random.default_rng(88)
    cases = []
    with np.errstate(all="ignore"):
        for dtype in (F32, F16):
            dt = data_type_of(np.zeros(1, dtype))
            for n in (6, 300):
                x = _row_specials(rng, n, dtype)
                cases.append(op_case(f"softmax/{dt}/specials-n{n}", "softmax", dt, [operand("x"), 1], None,
                                     inputs={"x": x}, expected={"y": (softmax(x, 1), dt)}, metric="ULP", value=3 * n + 3))
                cases.append(op_case(f"reduceLogSumExp/{dt}/specials-n{n}", "reduceLogSumExp", dt, [operand("x")],
                                     {"axes": [1]}, inputs={"x": x}, expected={"y": (logsumexp64(x, 1), dt)},
                                     metric="ULP", value=2 * n + 18))
            # normalizations: rows with NaN, +Inf, -Inf, both infinities (all NaN, as in float64),
            # huge magnitudes (x - mean and its square stay finite), ordinary values
            scale = 1e15 if dtype == F32 else 1e4
            x = rng.uniform(-2, 2, (6, 8))
            x[1, 3], x[2, 0], x[3, 7], x[4, 1], x[4, 2] = np.nan, np.inf, -np.inf, np.inf, -np.inf
            x[5] *= scale
            x = x.astype(dtype)
            sc, bi = rng.uniform(0.5, 2, (8,)).astype(dtype), rng.uniform(-1, 1, (8,)).astype(dtype)
            opts = {"axes": [1]}
            ref = layerNormalization(x, opts | {"scale": sc, "bias": bi}, dt)
            cases.append(op_case(f"layerNormalization/{dt}/specials", "layerNormalization", dt, [operand("x")],
                                 opts | {"scale": operand("s"), "bias": operand("b")}, inputs={"x": x},
                                 constants={"s": sc, "b": bi}, expected={"y": (ref, dt)}, metric="ATOL",
                                 value=1 / 1024 if dtype == F32 else 1 / 512))
            x = rng.uniform(-2, 2, (2, 3, 2, 4))
            x[0, 1, 0, 2], x[1, 0, 1, 1], x[1, 2] = np.nan, np.inf, x[1, 2] * scale
            x = x.astype(dtype)
            cases.append(op_case(f"instanceNormalization/{dt}/specials", "instanceNormalization", dt, [operand("x")],
                                 None, inputs={"x": x}, expected={"y": (instanceNormalization(x, None, dt), dt)},
                                 metric="ULP", value=840 if dtype == F32 else 8400))
    return cases


def test_row_references_cover_the_special_results():
    """The references hold what the kernels must reproduce: finite values where a direct float64
    exp overflows or underflows, NaN rows, infinities."""
    by_name = {c["name"]: c for c in row_cases()}
    lse = decode_tensor(by_name["reduceLogSumExp/float32/specials-n6"]["expected"]["y"])
    assert np.isfinite(lse[:4]).all() and lse[0] == np.finfo(F32).max
    assert np.isnan(lse[5]) and lse[6] == np.inf and lse[7] == -np.inf and lse[8] == np.inf
    sm = decode_tensor(by_name["softmax/float32/specials-n6"]["expected"]["y"])
    assert np.allclose(sm[0], 1 / 6) and sm[1, 0] == 1 and (sm[1, 1:] == 0).all()
    assert np.isnan(sm[5:9]).all() and sm[4, 0] == 0
    ln = decode_tensor(by_name["layerNormalization/float32/specials"]["expected"]["y"])
    assert np.isnan(ln[1:5]).all() and np.isfinite(ln[[0, 5]]).all()


@pytest.mark.parametrize("kernel", KERNELS)
def test_row_special_values(webnn_page, server_url, kernel):
    """softmax, reduceLogSumExp, layerNormalization and instanceNormalization with NaN, ±Inf and
    out-of-exp-range magnitudes match float64 NumPy within tolerances.md's bounds, with one
    invocation and with one workgroup per row."""
    assert_all_pass(run_cases(webnn_page, server_url, row_cases(), {"rows": kernel}))
