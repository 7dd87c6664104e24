"""Data-movement operators (spec §reshape, §transpose, §concat, §identity, §slice, §split,
§expand, §tile, §reverse, §pad): bit-exact results against tests/reference/movement.py for
every data type the graph boundary accepts, ranks 0-8, and the spec's validation errors.

Each test runs its cases in one page.evaluate on one context (tests/graph_batch.py).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.graph_batch import expect_errors, run_graphs
from tests.graph_runner import GraphError
from tests.reference import movement as ref

#: data types whose graph inputs/outputs need no boundary conversion
DIRECT_TYPES = ["float32", "int32", "uint32", "int64", "uint64"]
NP = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "uint32": np.uint32,
      "int64": np.int64, "uint64": np.uint64, "int8": np.int8, "uint8": np.uint8}


def data(shape, data_type, seed=0):
    """Distinct values of ``data_type`` (floats include NaN, ±Inf, -0; int64 beyond 32 bits)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    dtype = NP[data_type]
    if data_type in ("float32", "float16"):
        x = (rng.standard_normal(n) * 100).astype(dtype)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype)
        x[: min(n, 4)] = specials[: min(n, 4)] if n >= 8 else x[: min(n, 4)]
    elif data_type in ("int64", "uint64"):
        x = (np.arange(n, dtype=np.int64) * 0x100000001 + (-(2 ** 40) if data_type == "int64" else 7)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=np.int64).astype(dtype)
    return x.reshape(shape)


def single(op, x, *args, options=None, outputs="y", inputs=None):
    """Description of one op on input ``x`` (plus extra named inputs), outputs ``outputs``."""
    names = outputs if isinstance(outputs, list) else [outputs]
    desc = {
        "inputs": {"x": {"dataType": dtype_name(x), "shape": list(x.shape)}},
        "operators": [{"op": op, "args": [{"operand": "x"}, *args], "outputs": outputs}],
        "outputs": names,
    }
    if options is not None:
        desc["operators"][0]["options"] = options
    return desc, {"x": x, **(inputs or {})}


def dtype_name(x):
    return next(k for k, v in NP.items() if np.dtype(v) == x.dtype)


def assert_bits(actual, expected):
    """Bit-exact equality (NaN payloads and -0 included), with dtype and shape."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    bad = np.flatnonzero(np.ascontiguousarray(actual).view(unsigned) != np.ascontiguousarray(expected).view(unsigned))
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[:5]}: {actual.flat[bad[:5]]} vs {expected.flat[bad[:5]]}"


def check_all(page, server_url, cases):
    """cases: (description, inputs, {output: expected}) triples, all run in one batch."""
    results = run_graphs(page, server_url, [(d, i) for d, i, _ in cases])
    failures = []
    for (desc, _, expected), result in zip(cases, results):
        op = desc["operators"][-1]
        tag = f"{op['op']} {op.get('args')[1:]} {op.get('options')} {[list(v.shape) for v in _.values()]}"
        if isinstance(result, GraphError):
            failures.append(f"{tag}: {result}")
            continue
        for name, want in expected.items():
            try:
                assert_bits(result[name], want)
            except AssertionError as e:
                failures.append(f"{tag} -> {name}: {e}")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures[:20])


def check_errors(page, server_url, snippets):
    """Each (js, error name) must throw that error; TypeErrors must carry the label [L]."""
    outcomes = expect_errors(page, server_url, [js for js, _ in snippets])
    failures = []
    for (js, name), out in zip(snippets, outcomes):
        if not out["threw"] or out["name"] != name or (name == "TypeError" and "[L]" not in out["message"]):
            failures.append(f"{js}\n   -> {out}")
    assert not failures, f"{len(failures)} of {len(snippets)} did not throw as expected:\n" + "\n".join(failures)


def inp(data_type, shape, name="x"):
    return f"builder.input('{name}', {{dataType: '{data_type}', shape: {list(shape)}}})"


# ----------------------------------------------------------------------------- reshape


RESHAPES = [([], [1]), ([1], []), ([], [1, 1, 1]), ([6], [2, 3]), ([2, 3, 4], [4, 6]), ([2, 3, 4], [24]),
            ([1, 32, 1, 1], [1, 32]), ([2, 1, 3, 1, 2, 1, 2, 1], [24]), ([24], [2, 1, 3, 1, 2, 1, 2, 1]),
            ([5, 7], [7, 5])]


def test_reshape(webnn_page, server_url):
    cases = []
    for (src, dst), data_type in itertools.product(RESHAPES, DIRECT_TYPES):
        x = data(src, data_type)
        d, i = single("reshape", x, dst)
        cases.append((d, i, {"y": ref.reshape(x, dst)}))
    check_all(webnn_page, server_url, cases)


def test_reshape_aliases_through_chains(webnn_page, server_url):
    """reshape(transpose(reshape(x))) and a reshaped constant: aliases feed later steps and outputs."""
    x = data([2, 3, 4], "float32")
    c = data([4, 6], "int32", seed=3)
    import base64
    desc = {
        "inputs": {"x": {"dataType": "float32", "shape": [2, 3, 4]}},
        "constants": {"c": {"dataType": "int32", "shape": [4, 6], "bytes": base64.b64encode(c.tobytes()).decode()}},
        "operators": [
            {"op": "reshape", "args": [{"operand": "x"}, [6, 4]], "outputs": "r1"},
            {"op": "transpose", "args": [{"operand": "r1"}], "outputs": "t"},
            {"op": "reshape", "args": [{"operand": "t"}, [2, 12]], "outputs": "r2"},
            {"op": "reshape", "args": [{"operand": "r2"}, [24]], "outputs": "r3"},
            {"op": "reshape", "args": [{"operand": "c"}, [24]], "outputs": "rc"},
            {"op": "transpose", "args": [{"operand": "rc"}], "outputs": "tc"},
        ],
        "outputs": ["r2", "r3", "rc", "tc", "r1"],
    }
    t = x.reshape(6, 4).T
    check_all(webnn_page, server_url, [(desc, {"x": x}, {
        "r1": x.reshape(6, 4), "r2": t.reshape(2, 12), "r3": t.reshape(24), "rc": c.reshape(24), "tc": c.reshape(24)})])


# --------------------------------------------------------------------------- transpose


def test_transpose(webnn_page, server_url):
    rng = np.random.default_rng(1)
    cases = []
    shapes = [[], [5], [3, 4], [2, 3, 4], [1, 3, 5, 2], [2, 3, 1, 4, 2], [2, 1, 2, 3, 1, 2], [2, 2, 1, 2, 3, 1, 2],
              [2, 1, 2, 1, 2, 3, 1, 2]]
    for shape in shapes:
        perms = [None] + [list(p) for p in itertools.permutations(range(len(shape)))] if len(shape) <= 3 else \
            [None] + [list(rng.permutation(len(shape))) for _ in range(4)]
        for k, perm in enumerate(perms):
            data_type = DIRECT_TYPES[k % len(DIRECT_TYPES)]
            x = data(shape, data_type, seed=k)
            options = None if perm is None else {"permutation": [int(p) for p in perm]}
            d, i = single("transpose", x, options=options)
            cases.append((d, i, {"y": ref.transpose(x, options)}))
    # NCHW <-> NHWC on a larger tensor
    x = data([1, 16, 9, 11], "float32")
    d, i = single("transpose", x, options={"permutation": [0, 2, 3, 1]})
    cases.append((d, i, {"y": x.transpose(0, 2, 3, 1)}))
    check_all(webnn_page, server_url, cases)


# ------------------------------------------------------------------------------ concat


def concat_case(arrays, axis, constants=()):
    """concat of inputs a0.. (those in ``constants`` as inline constants)."""
    import base64
    desc = {"inputs": {}, "constants": {}, "operators": [], "outputs": ["y"]}
    inputs = {}
    for k, a in enumerate(arrays):
        spec = {"dataType": dtype_name(a), "shape": list(a.shape)}
        if k in constants:
            desc["constants"][f"a{k}"] = {**spec, "bytes": base64.b64encode(a.tobytes()).decode()}
        else:
            desc["inputs"][f"a{k}"] = spec
            inputs[f"a{k}"] = a
    desc["operators"].append({"op": "concat", "args": [[{"operand": f"a{k}"} for k in range(len(arrays))], axis],
                              "outputs": "y"})
    return desc, inputs, {"y": ref.concat(arrays, axis)}


def test_concat(webnn_page, server_url):
    cases = []
    for rank in range(1, 9):
        base = [2, 3, 1, 2, 3, 1, 2, 2][:rank]
        for axis in range(rank):
            data_type = DIRECT_TYPES[(rank + axis) % len(DIRECT_TYPES)]
            arrays = []
            for k, extra in enumerate([1, 3, 2]):
                shape = list(base)
                shape[axis] = extra
                arrays.append(data(shape, data_type, seed=10 * rank + k))
            cases.append(concat_case(arrays, axis, constants={1} if axis % 2 else ()))
    one = data([3, 4], "float32")
    cases.append(concat_case([one], 1))
    many = [data([2, k + 1, 3], "int32", seed=k) for k in range(12)]
    cases.append(concat_case(many, 1, constants={0, 5}))
    # the same operand twice
    x = data([2, 5], "uint32")
    desc = {"inputs": {"x": {"dataType": "uint32", "shape": [2, 5]}},
            "operators": [{"op": "concat", "args": [[{"operand": "x"}, {"operand": "x"}], 0], "outputs": "y"}],
            "outputs": ["y"]}
    cases.append((desc, {"x": x}, {"y": np.concatenate([x, x], 0)}))
    check_all(webnn_page, server_url, cases)


def test_reshape_transpose_concat_validation(webnn_page, server_url):
    f = "float32"
    check_errors(webnn_page, server_url, [
        (f"builder => builder.reshape({inp(f, [2, 3])}, [4, 2], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.reshape({inp(f, [2, 3])}, [6, 0], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.reshape({inp(f, [2, 3])}, [-6], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.reshape({inp(f, [1])}, [1, 1, 1, 1, 1, 1, 1, 1, 1], {{label: 'L'}})", "TypeError"),
        ("builder => builder.reshape({}, [1], {label: 'L'})", "TypeError"),
        (f"builder => builder.transpose({inp(f, [2, 3])}, {{permutation: [0], label: 'L'}})", "TypeError"),
        (f"builder => builder.transpose({inp(f, [2, 3])}, {{permutation: [0, 0], label: 'L'}})", "TypeError"),
        (f"builder => builder.transpose({inp(f, [2, 3])}, {{permutation: [0, 2], label: 'L'}})", "TypeError"),
        (f"builder => builder.transpose({inp(f, [2, 3, 4])}, {{permutation: [2, 1, 0, 3], label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([], 0, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([{inp(f, [2, 3])}], 2, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([{inp(f, [])}], 0, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([{inp(f, [2, 3])}, {inp(f, [3, 3], 'y')}], 1, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([{inp(f, [2, 3])}, {inp('int32', [2, 3], 'y')}], 0, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([{inp(f, [2, 3])}, {inp(f, [2, 3, 1], 'y')}], 0, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat([{inp(f, [2, 3])}, 5], 0, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.concat({inp(f, [2, 3])}, 0, {{label: 'L'}})", "TypeError"),
        (f"(builder, c) => builder.concat([{inp(f, [2, 3])}, new MLGraphBuilder(c).input('y', {{dataType: 'float32', shape: [2, 3]}})], 0, {{label: 'L'}})", "TypeError"),
    ])
