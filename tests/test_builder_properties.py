"""Property-based test of MLGraphBuilder validation (hypothesis): generated builder calls with
random shapes, data types and options, valid and invalid, checked against a NumPy-side shape
oracle written from the spec's shape rules.

Each call must either return operands whose shape and dataType are the oracle's, or throw a
TypeError where the oracle says the call is invalid — never another error, never a silent
success — and the builder must still build afterwards. Data type and rank support come from
the context's own opSupportLimits() (what the implementation says it supports), the shapes from
the oracle. Every hypothesis example is one page.evaluate of a batch of calls on one builder.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.graph_runner import open_harness

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")
BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")
LOGICAL = ("equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual")
UNARY = ("abs", "neg", "exp", "sqrt", "relu", "sigmoid", "tanh", "floor", "ceil", "cos", "log", "erf", "sign",
         "identity", "softsign", "gelu")
REDUCE = ("reduceSum", "reduceMean", "reduceMax", "reduceMin", "reduceProduct", "reduceL1", "reduceL2",
          "reduceLogSumExp", "reduceSumSquare")


class Invalid(Exception):
    """The oracle's verdict: the spec makes this call throw a TypeError."""


def need(condition):
    if not condition:
        raise Invalid


# ------------------------------------------------------------------------------ strategies

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4)
dtypes = st.sampled_from(TYPES)
float_or_any = st.one_of(st.sampled_from(("float32", "float16")), dtypes)


def desc(dt, shape):
    return {"dataType": dt, "shape": list(shape)}


@st.composite
def broadcast_partner(draw, shape):
    """A shape broadcastable with `shape` most of the time (dims set to 1, leading dims dropped),
    sometimes an arbitrary one."""
    if draw(st.integers(0, 4)) == 0:
        return draw(shapes)
    out = [1 if draw(st.booleans()) else d for d in shape]
    return out[draw(st.integers(0, len(out))):]


@st.composite
def binary_call(draw):
    op = draw(st.sampled_from(BINARY + LOGICAL))
    a = draw(shapes)
    b = draw(broadcast_partner(a))
    dt = draw(dtypes)
    dtb = dt if draw(st.integers(0, 5)) else draw(dtypes)
    return {"op": op, "inputs": [desc(dt, a), desc(dtb, b)], "args": [{"operand": 0}, {"operand": 1}]}


@st.composite
def unary_call(draw):
    op = draw(st.sampled_from(UNARY))
    return {"op": op, "inputs": [desc(draw(float_or_any), draw(shapes))], "args": [{"operand": 0}]}


@st.composite
def axes_for(draw, rank):
    """Distinct in-range axes mostly; sometimes a duplicate or an out-of-range one."""
    axes = draw(st.lists(st.integers(0, max(rank - 1, 0)), unique=True, max_size=rank)) if rank else []
    if draw(st.integers(0, 6)) == 0:
        axes = axes + [draw(st.integers(0, rank + 1))]
    return axes


@st.composite
def reduce_call(draw):
    op = draw(st.sampled_from(REDUCE))
    shape = draw(shapes)
    options = {"keepDimensions": draw(st.booleans())}
    if draw(st.booleans()):
        options["axes"] = draw(axes_for(len(shape)))
    return {"op": op, "inputs": [desc(draw(float_or_any), shape)], "args": [{"operand": 0}, options]}


@st.composite
def arg_call(draw):
    shape = draw(shapes)
    options = {"keepDimensions": draw(st.booleans()), "outputDataType": draw(st.sampled_from(("int32", "int64", "float32")))}
    return {"op": draw(st.sampled_from(("argMin", "argMax"))), "inputs": [desc(draw(dtypes), shape)],
            "args": [{"operand": 0}, draw(st.integers(0, len(shape))), options]}


@st.composite
def transpose_call(draw):
    shape = draw(shapes)
    args = [{"operand": 0}]
    if draw(st.booleans()):
        perm = list(draw(st.permutations(range(len(shape)))))
        if draw(st.integers(0, 4)) == 0:
            perm = draw(st.lists(st.integers(0, len(shape)), max_size=len(shape) + 1))
        args.append({"permutation": perm})
    return {"op": "transpose", "inputs": [desc(draw(dtypes), shape)], "args": args}


@st.composite
def reshape_call(draw):
    shape = draw(shapes)
    count = math.prod(shape)
    if draw(st.integers(0, 4)):
        new, rest = [], count
        for d in range(draw(st.integers(0, 4))):
            divisors = [k for k in range(1, rest + 1) if rest % k == 0]
            new.append(draw(st.sampled_from(divisors)))
            rest //= new[-1]
        if rest > 1:
            new.append(rest)
    else:
        new = draw(st.lists(st.integers(0, 5), max_size=4))
    return {"op": "reshape", "inputs": [desc(draw(dtypes), shape)], "args": [{"operand": 0}, new]}


@st.composite
def slice_call(draw):
    shape = draw(shapes)
    starts = [draw(st.integers(0, d)) for d in shape]
    sizes = [draw(st.integers(0, d + 1)) for d in shape]
    args = [{"operand": 0}, starts, sizes]
    if draw(st.booleans()):
        args.append({"strides": [draw(st.integers(0, 3)) for _ in shape]})
    return {"op": "slice", "inputs": [desc(draw(dtypes), shape)], "args": args}


@st.composite
def concat_call(draw):
    shape = draw(shapes)
    axis = draw(st.integers(0, len(shape)))
    count = draw(st.integers(1, 3))
    inputs = []
    for _ in range(count):
        s = list(shape)
        if axis < len(s):
            s[axis] = draw(st.integers(1, 3))
        if draw(st.integers(0, 6)) == 0:
            s = draw(shapes)
        inputs.append(s)
    dt = draw(dtypes)
    return {"op": "concat", "inputs": [desc(dt, s) for s in inputs],
            "args": [[{"operand": i} for i in range(count)], axis]}


@st.composite
def gather_call(draw):
    shape = draw(shapes)
    indices = draw(st.lists(st.integers(1, 3), max_size=3))
    options = {"axis": draw(st.integers(0, len(shape)))} if draw(st.booleans()) else {}
    return {"op": "gather", "inputs": [desc(draw(dtypes), shape), desc(draw(st.sampled_from(("int32", "int64", "uint32", "float32"))), indices)],
            "args": [{"operand": 0}, {"operand": 1}, options]}


@st.composite
def conv2d_call(draw):
    groups = draw(st.sampled_from((1, 1, 2)))
    c = groups * draw(st.integers(1, 2))
    o = groups * draw(st.integers(1, 2))
    x = [draw(st.integers(1, 2)), c, draw(st.integers(1, 6)), draw(st.integers(1, 6))]
    w = [o, c // groups if draw(st.integers(0, 5)) else c + 1, draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    options = {"groups": groups, "strides": [draw(st.integers(1, 2)), draw(st.integers(1, 2))],
               "dilations": [draw(st.integers(1, 2)), draw(st.integers(1, 2))],
               "padding": [draw(st.integers(0, 1)) for _ in range(4)]}
    dt = draw(st.sampled_from(("float32", "float16", "int32")))
    return {"op": "conv2d", "inputs": [desc(dt, x), desc(dt, w)], "args": [{"operand": 0}, {"operand": 1}, options]}


@st.composite
def pool_call(draw):
    op = draw(st.sampled_from(("averagePool2d", "maxPool2d", "l2Pool2d")))
    x = [draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 6)), draw(st.integers(1, 6))]
    options = {"strides": [draw(st.integers(1, 2)), draw(st.integers(1, 2))],
               "padding": [draw(st.integers(0, 1)) for _ in range(4)]}
    if draw(st.booleans()):
        options["windowDimensions"] = [draw(st.integers(1, 4)), draw(st.integers(1, 4))]
    return {"op": op, "inputs": [desc(draw(float_or_any), x)], "args": [{"operand": 0}, options]}


@st.composite
def matmul_call(draw):
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a = batch + [m, k]
    b = draw(broadcast_partner(batch)) + [k if draw(st.integers(0, 5)) else k + 1, n]
    if draw(st.integers(0, 8)) == 0:
        a = a[-1:]
    dt = draw(float_or_any)
    return {"op": "matmul", "inputs": [desc(dt, a), desc(dt, b)], "args": [{"operand": 0}, {"operand": 1}]}


@st.composite
def gemm_call(draw):
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    a = [k, m] if ta else [m, k]
    b = [n, k] if tb else [k, n]
    if draw(st.integers(0, 6)) == 0:
        b = [b[0] + 1, b[1]]
    dt = draw(float_or_any)
    inputs = [desc(dt, a), desc(dt, b)]
    options = {"aTranspose": ta, "bTranspose": tb}
    if draw(st.booleans()):
        inputs.append(desc(dt, draw(broadcast_partner([m, n]))))
        options["c"] = {"operand": 2}
    return {"op": "gemm", "inputs": inputs, "args": [{"operand": 0}, {"operand": 1}, options]}


@st.composite
def pad_call(draw):
    shape = draw(shapes)
    rank = len(shape) if draw(st.integers(0, 6)) else len(shape) + 1
    begin = [draw(st.integers(0, 2)) for _ in range(rank)]
    end = [draw(st.integers(0, 2)) for _ in range(len(shape))]
    mode = draw(st.sampled_from(("constant", "edge", "reflection")))
    return {"op": "pad", "inputs": [desc(draw(dtypes), shape)], "args": [{"operand": 0}, begin, end, {"mode": mode}]}


@st.composite
def expand_call(draw):
    shape = draw(shapes)
    target = draw(st.lists(st.integers(1, 3), max_size=2)) + [d if d != 1 or draw(st.booleans()) else draw(st.integers(1, 3)) for d in shape]
    if draw(st.integers(0, 5)) == 0:
        target = draw(shapes)
    return {"op": "expand", "inputs": [desc(draw(dtypes), shape)], "args": [{"operand": 0}, target]}


@st.composite
def cast_call(draw):
    return {"op": "cast", "inputs": [desc(draw(dtypes), draw(shapes))], "args": [{"operand": 0}, draw(dtypes)]}


@st.composite
def clamp_call(draw):
    lo, hi = draw(st.integers(-10, 10)), draw(st.integers(-10, 10))
    return {"op": "clamp", "inputs": [desc(draw(dtypes), draw(shapes))], "args": [{"operand": 0}, {"minValue": lo, "maxValue": hi}]}


calls = st.one_of(binary_call(), unary_call(), reduce_call(), arg_call(), transpose_call(), reshape_call(),
                  slice_call(), concat_call(), gather_call(), conv2d_call(), pool_call(), matmul_call(),
                  gemm_call(), pad_call(), expand_call(), cast_call(), clamp_call())


# ---------------------------------------------------------------------------------- oracle

#: operand-taking argument names per op, for the opSupportLimits lookup.
OPERAND_KEYS = {**{op: ("a", "b") for op in BINARY + LOGICAL}, "gather": ("input", "indices"),
                "conv2d": ("input", "filter"), "matmul": ("a", "b"), "gemm": ("a", "b", "c"), "concat": ("inputs",)}


def check_limits(call, limits):
    """Data types and ranks the implementation says it supports (opSupportLimits)."""
    op_limits = limits[call["op"]]
    keys = OPERAND_KEYS.get(call["op"], ("input",))
    for k, d in enumerate(call["inputs"]):
        lim = op_limits[keys[min(k, len(keys) - 1)]]
        need(d["dataType"] in lim["dataTypes"])
        need(lim["rankRange"]["min"] <= len(d["shape"]) <= lim["rankRange"]["max"])


def conv_size(size, window, stride, dilation, begin, end):
    out = (size + begin + end - ((window - 1) * dilation + 1)) // stride + 1
    need(out >= 1)
    return out


def oracle(call, limits):
    """[(shape, dataType)] of the outputs, or Invalid."""
    check_limits(call, limits)
    op, ins, args = call["op"], call["inputs"], call["args"]
    x = ins[0]
    s, dt = list(x["shape"]), x["dataType"]
    rank = len(s)
    if op in BINARY + LOGICAL:
        need(ins[1]["dataType"] == dt)
        try:
            shape = list(np.broadcast_shapes(tuple(s), tuple(ins[1]["shape"])))
        except ValueError:
            raise Invalid from None
        return [(shape, "uint8" if op in LOGICAL else dt)]
    if op in UNARY:
        return [(s, dt)]
    if op in REDUCE:
        opts = args[1]
        axes = opts.get("axes", list(range(rank)))
        need(len(set(axes)) == len(axes) and all(a < rank for a in axes))
        keep = opts["keepDimensions"]
        return [([1 if i in axes else d for i, d in enumerate(s)] if keep else [d for i, d in enumerate(s) if i not in axes], dt)]
    if op in ("argMin", "argMax"):
        axis, opts = args[1], args[2]
        need(axis < rank)
        need(opts["outputDataType"] in limits[op]["output"]["dataTypes"])
        shape = [1 if i == axis else d for i, d in enumerate(s)] if opts["keepDimensions"] else [d for i, d in enumerate(s) if i != axis]
        return [(shape, opts["outputDataType"])]
    if op == "transpose":
        perm = args[1]["permutation"] if len(args) > 1 else list(range(rank))[::-1]
        need(sorted(perm) == list(range(rank)))
        return [([s[p] for p in perm], dt)]
    if op == "reshape":
        new = args[1]
        need(all(d >= 1 for d in new) and math.prod(new) == math.prod(s))
        return [(new, dt)]
    if op == "slice":
        starts, sizes = args[1], args[2]
        strides = args[3]["strides"] if len(args) > 3 else [1] * rank
        need(all(n >= 1 for n in sizes) and all(k >= 1 for k in strides))
        need(all(b < d and b + n <= d for b, n, d in zip(starts, sizes, s)))
        return [([-(-n // k) for n, k in zip(sizes, strides)], dt)]
    if op == "concat":
        axis = args[1]
        need(all(d["dataType"] == dt for d in ins) and axis < rank)
        need(all(len(d["shape"]) == rank and all(a == b for i, (a, b) in enumerate(zip(d["shape"], s)) if i != axis)
                 for d in ins))
        return [([sum(d["shape"][axis] for d in ins) if i == axis else n for i, n in enumerate(s)], dt)]
    if op == "gather":
        axis = args[2].get("axis", 0)
        need(axis < rank)
        return [(s[:axis] + ins[1]["shape"] + s[axis + 1:], dt)]
    if op == "conv2d":
        w = ins[1]["shape"]
        o = args[2]
        need(ins[1]["dataType"] == dt and s[1] == w[1] * o["groups"] and w[0] % o["groups"] == 0)
        p = o["padding"]
        h = conv_size(s[2], w[2], o["strides"][0], o["dilations"][0], p[0], p[1])
        ww = conv_size(s[3], w[3], o["strides"][1], o["dilations"][1], p[2], p[3])
        return [([s[0], w[0], h, ww], dt)]
    if op in ("averagePool2d", "maxPool2d", "l2Pool2d"):
        o = args[1]
        win = o.get("windowDimensions", s[2:])
        p = o["padding"]
        h = conv_size(s[2], win[0], o["strides"][0], 1, p[0], p[1])
        ww = conv_size(s[3], win[1], o["strides"][1], 1, p[2], p[3])
        return [([s[0], s[1], h, ww], dt)]
    if op == "matmul":
        b = ins[1]["shape"]
        need(ins[1]["dataType"] == dt and len(s) >= 2 and len(b) >= 2 and s[-1] == b[-2])
        try:
            batch = list(np.broadcast_shapes(tuple(s[:-2]), tuple(b[:-2])))
        except ValueError:
            raise Invalid from None
        return [(batch + [s[-2], b[-1]], dt)]
    if op == "gemm":
        o = args[2]
        a = s[::-1] if o["aTranspose"] else s
        b = ins[1]["shape"][::-1] if o["bTranspose"] else ins[1]["shape"]
        need(all(d["dataType"] == dt for d in ins) and a[1] == b[0])
        if len(ins) > 2:
            c = ins[2]["shape"]
            need(len(c) <= 2 and all(ci in (1, oi) for ci, oi in zip(c[::-1], [b[1], a[0]])))
        return [([a[0], b[1]], dt)]
    if op == "pad":
        begin, end, mode = args[1], args[2], args[3]["mode"]
        need(len(begin) == rank and len(end) == rank)
        if mode == "reflection":
            need(all(bb < d and e < d for bb, e, d in zip(begin, end, s)))
        return [([d + bb + e for d, bb, e in zip(s, begin, end)], dt)]
    if op == "expand":
        target = args[1]
        need(len(target) >= rank and all(a in (1, t) for a, t in zip(s[::-1], target[::-1])))
        return [(list(target), dt)]
    if op == "cast":
        need(args[1] in limits["cast"]["output"]["dataTypes"])
        return [(s, args[1])]
    if op == "clamp":
        need(args[1]["minValue"] <= args[1]["maxValue"])
        return [(s, dt)]
    raise AssertionError(op)


# ------------------------------------------------------------------------------ the test

RUN_CALLS = """
async (calls) => {
  window.propertyContext ??= await navigator.ml.createContext();
  const b = new MLGraphBuilder(window.propertyContext);
  let n = 0;
  const results = [];
  for (const c of calls) {
    const ops = c.inputs.map((d) => b.input(`i${n++}`, d));
    const resolve = (v) => {
      if (Array.isArray(v)) return v.map(resolve);
      if (v && typeof v === 'object') {
        if (Object.keys(v).length === 1 && 'operand' in v) return ops[v.operand];
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
      }
      return v;
    };
    try {
      const out = b[c.op](...c.args.map(resolve));
      results.push({ok: (Array.isArray(out) ? out : [out]).map((o) => [[...o.shape], o.dataType])});
    } catch (e) {
      const kind = e?.constructor === TypeError ? 'TypeError'
        : e instanceof DOMException ? `DOMException ${e.name}` : `${e?.constructor?.name ?? typeof e}`;
      results.push({error: kind, message: String(e?.message)});
    }
  }
  const graph = await b.build({y: b.relu(b.input('last', {dataType: 'float32', shape: [2]}))});
  return {results, built: graph instanceof MLGraph};
}
"""


@pytest.fixture
def limits(webnn_page, server_url):
    open_harness(webnn_page, server_url)
    return webnn_page.evaluate("async () => (await navigator.ml.createContext()).opSupportLimits()")


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=st.lists(calls, min_size=20, max_size=20))
def test_builder_calls_match_the_shape_oracle(webnn_page, limits, batch):
    """Each generated call returns what the oracle computes or throws the TypeError it expects."""
    out = webnn_page.evaluate(RUN_CALLS, batch)
    assert out["built"]
    failures = []
    for call, got in zip(batch, out["results"]):
        try:
            want = [[list(shape), dt] for shape, dt in oracle(call, limits)]
        except Invalid:
            want = None
        if want is None:
            if got.get("error") != "TypeError" or not got["message"].startswith(f"[{call['op']}]"):
                failures.append(f"{call}: expected a labelled TypeError, got {got}")
        elif got.get("ok") != want:
            failures.append(f"{call}: expected {want}, got {got}")
    assert not failures, "\n".join(failures)
