"""Data-movement operators (spec §reshape, §transpose, §concat, §identity, §slice, §split,
§expand, §tile, §reverse, §pad): bit-exact results against tests/reference/movement.py for
every data type the graph boundary accepts, ranks 0-8, and the spec's validation errors.

Each test runs its cases in one page.evaluate on one context (tests/graph_batch.py).
"""
from __future__ import annotations

import base64
import itertools

import numpy as np
import pytest

from tests.graph_batch import ALL_TYPES
from tests.graph_batch import NP, check_all, check_errors, data, dtype_name, inp, single, typed_rows
from tests.reference import movement as ref

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

# ----------------------------------------------------------------------------- reshape


RESHAPES = [([], [1]), ([1], []), ([], [1, 1, 1]), ([6], [2, 3]), ([2, 3, 4], [4, 6]), ([2, 3, 4], [24]),
            ([1, 32, 1, 1], [1, 32]), ([2, 1, 3, 1, 2, 1, 2, 1], [24]), ([24], [2, 1, 3, 1, 2, 1, 2, 1]),
            ([5, 7], [7, 5])]


def test_reshape(webnn_page, server_url):
    cases = []
    for (src, dst), data_type in itertools.product(RESHAPES, ALL_TYPES):
        x = data(src, data_type)
        d, i = single("reshape", x, dst)
        cases.append((d, i, {"y": ref.reshape(x, dst)}))
    check_all(webnn_page, server_url, cases)


def test_reshape_aliases_through_chains(webnn_page, server_url):
    """reshape(transpose(reshape(x))) and a reshaped constant: aliases feed later steps and outputs."""
    x = data([2, 3, 4], "float32")
    c = data([4, 6], "int32", seed=3)
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
            data_type = ALL_TYPES[k % len(ALL_TYPES)]
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
            data_type = ALL_TYPES[(rank + axis) % len(ALL_TYPES)]
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


# ---------------------------------------------------------------------- identity, slice


def test_identity(webnn_page, server_url):
    cases = []
    for k, shape in enumerate([[], [7], [2, 3], [2, 1, 3, 1, 2, 1, 1, 2]]):
        for data_type in ALL_TYPES:
            x = data(shape, data_type, seed=k)
            d, i = single("identity", x)
            cases.append((d, i, {"y": ref.identity(x)}))
    # identity feeding another op and being an output too
    x = data([3, 4], "float32")
    desc = {"inputs": {"x": {"dataType": "float32", "shape": [3, 4]}},
            "operators": [{"op": "identity", "args": [{"operand": "x"}], "outputs": "i"},
                          {"op": "transpose", "args": [{"operand": "i"}], "outputs": "t"},
                          {"op": "identity", "args": [{"operand": "t"}], "outputs": "y"}],
            "outputs": ["i", "t", "y"]}
    cases.append((desc, {"x": x}, {"i": x, "t": x.T, "y": x.T}))
    check_all(webnn_page, server_url, cases)


SLICES = [
    ([], [], [], None),
    ([10], [0], [10], None),
    ([10], [3], [4], None),
    ([10], [1], [9], [3]),
    ([10], [9], [1], [5]),
    ([4, 5], [1, 2], [2, 3], None),
    ([4, 5], [0, 0], [4, 5], [2, 2]),
    ([4, 5], [1, 0], [3, 5], [2, 4]),
    ([3, 4, 5], [0, 1, 2], [3, 3, 3], [1, 2, 1]),
    ([2, 3, 4, 5], [1, 0, 1, 0], [1, 3, 3, 5], [1, 1, 2, 2]),
    ([2, 3, 2, 3, 2], [0, 1, 0, 1, 1], [2, 2, 2, 2, 1], [1, 1, 1, 2, 1]),
    ([2, 2, 2, 2, 2, 3], [1, 0, 1, 0, 1, 0], [1, 2, 1, 2, 1, 3], [1, 1, 1, 1, 1, 2]),
    ([2, 2, 2, 2, 2, 2, 3, 2], [0, 1, 0, 1, 0, 1, 1, 0], [2, 1, 2, 1, 2, 1, 2, 2], [2, 1, 1, 1, 1, 1, 2, 2]),
    ([1, 16, 8, 8], [0, 4, 1, 2], [1, 8, 7, 6], [1, 3, 2, 3]),
]


def test_slice(webnn_page, server_url):
    cases = []
    for k, (shape, starts, sizes, strides) in enumerate(SLICES):
        for data_type in (ALL_TYPES if k % 3 == 0 else ALL_TYPES[k % 8:k % 8 + 2]):
            x = data(shape, data_type, seed=k)
            options = None if strides is None else {"strides": strides}
            d, i = single("slice", x, starts, sizes, options=options)
            cases.append((d, i, {"y": ref.slice(x, starts, sizes, options)}))
    check_all(webnn_page, server_url, cases)


# ------------------------------------------------------------------------------ split


SPLITS = [([6], 3, 0), ([6], [1, 2, 3], 0), ([4, 6], 2, 1), ([4, 6], [4], 0), ([4, 6], [5, 1], 1),
          ([2, 3, 4], [1, 1, 1], 1), ([2, 3, 4], 4, 2), ([3, 1, 2, 5, 2], [2, 3], 3),
          ([2, 1, 2, 1, 2, 1, 4, 3], [1, 2, 1], 6), ([8, 2], 8, 0)]


def test_split(webnn_page, server_url):
    cases = []
    for k, _, (shape, splits, axis), data_type in typed_rows(SPLITS, 4):
        x = data(shape, data_type, seed=k)
        parts = ref.split(x, splits, {"axis": axis})
        names = [f"y{j}" for j in range(len(parts))]
        d, i = single("split", x, splits, options={"axis": axis} if axis else None, outputs=names)
        cases.append((d, i, dict(zip(names, parts))))
    check_all(webnn_page, server_url, cases)


# ------------------------------------------------------------------- expand, tile, reverse


EXPANDS = [([], [3]), ([], [2, 3]), ([1], [5]), ([3], [2, 3]), ([2, 1], [2, 4]), ([2, 1], [3, 2, 5]),
           ([1, 3, 1], [2, 3, 4]), ([4, 1, 1, 2], [4, 3, 2, 2]), ([1, 2, 1, 2, 1], [2, 1, 2, 2, 3, 2, 2]),
           ([2, 3], [2, 3]), ([1, 1, 1, 1, 1, 1, 1, 1], [2, 1, 2, 1, 2, 1, 2, 3])]


def one_argument_cases(op, table, reference):
    """Cases of ``op(x, argument)`` for each (shape, argument) row of ``table``, every fourth data
    type, expecting ``reference(x, argument)``."""
    cases = []
    for k, _, (shape, argument), data_type in typed_rows(table, 4):
        x = data(shape, data_type, seed=k)
        d, i = single(op, x, argument)
        cases.append((d, i, {"y": reference(x, argument)}))
    return cases


def test_expand(webnn_page, server_url):
    check_all(webnn_page, server_url, one_argument_cases("expand", EXPANDS, ref.expand))


TILES = [([], []), ([3], [1]), ([3], [4]), ([2, 3], [2, 2]), ([2, 3], [1, 3]), ([1, 3], [4, 1]),
         ([2, 1, 3], [2, 3, 2]), ([2, 2, 1, 2, 1], [1, 2, 3, 1, 2]), ([1, 2, 1, 2, 1, 2, 1, 2], [2, 1, 2, 1, 1, 2, 1, 1])]


def test_tile(webnn_page, server_url):
    check_all(webnn_page, server_url, one_argument_cases("tile", TILES, ref.tile))


REVERSES = [([], None), ([], []), ([5], None), ([5], []), ([3, 4], [0]), ([3, 4], [1]), ([3, 4], None),
            ([2, 3, 4], [2, 0]), ([2, 3, 4, 5], [1, 3]), ([2, 1, 3, 2, 2], [4, 2, 1]),
            ([2, 2, 1, 2, 2, 1, 2, 3], [0, 3, 7]), ([2, 2, 1, 2, 2, 1, 2, 3], None)]


def test_reverse(webnn_page, server_url):
    cases = []
    for k, _, (shape, axes), data_type in typed_rows(REVERSES, 4):
        x = data(shape, data_type, seed=k)
        options = None if axes is None else {"axes": axes}
        d, i = single("reverse", x, options=options)
        cases.append((d, i, {"y": ref.reverse(x, options)}))
    check_all(webnn_page, server_url, cases)


# -------------------------------------------------------------------------------- pad


PADS = [([], [], []), ([5], [2], [3]), ([5], [0], [0]), ([2, 3], [1, 2], [1, 2]), ([3, 4], [2, 0], [1, 3]),
        ([2, 3, 4], [1, 2, 3], [1, 1, 0]), ([1, 3, 4, 5], [0, 0, 1, 2], [0, 0, 2, 1]),
        ([2, 2, 3, 2, 2], [1, 0, 2, 1, 0], [0, 1, 1, 0, 1]), ([2, 1, 2, 1, 2, 1, 2, 2], [1, 0, 1, 0, 0, 0, 1, 0], [0, 0, 1, 0, 1, 0, 0, 1])]


def pad_value(data_type, k):
    return {"float32": -2.5, "float16": 0.125, "int32": -7, "uint32": 4000000000, "int64": -(2 ** 40) - 3,
            "uint64": 2 ** 63 + 5, "int8": -100, "uint8": 200}[data_type] if k % 2 else 0


def test_pad(webnn_page, server_url):
    cases = []
    for k, (shape, begin, end) in enumerate(PADS):
        for mode in ("constant", "edge", "reflection", "symmetric"):
            limit = 0 if mode == "reflection" else 1
            if any(b > n - limit or e > n - limit for b, e, n in zip(begin, end, shape)) and mode != "edge" and mode != "constant":
                continue
            for data_type in ALL_TYPES[(k + len(mode)) % 4::4]:
                x = data(shape, data_type, seed=k)
                options = {"mode": mode} if mode != "constant" else {}
                if mode == "constant" and k % 2:
                    value = pad_value(data_type, k)
                    options["value"] = {"bigint": str(value)} if data_type in ("int64", "uint64") else value
                    expected = ref.pad(x, begin, end, {"value": NP[data_type](value)})
                else:
                    expected = ref.pad(x, begin, end, options)
                d, i = single("pad", x, begin, end, options=options or None)
                cases.append((d, i, {"y": expected}))
    check_all(webnn_page, server_url, cases)


def test_pad_value_is_cast(webnn_page, server_url):
    """options.value is cast to the input type (spec pad() step "cast"): rounding, saturation, NaN."""
    cases = []
    for data_type, value, want in [("int32", 3.5, 4), ("int32", 1e12, 2 ** 31 - 1), ("uint8", -5, 0), ("uint8", 300, 255),
                                   ("int8", 2.5, 2), ("float16", 70000, np.inf), ("float32", float("nan"), np.nan),
                                   ("uint32", -1, 0), ("int64", 2.0 ** 70, 2 ** 63 - 1), ("float32", "2.5", 2.5),
                                   ("int32", "x", 0), ("uint64", {"bigint": str(2 ** 64 + 5)}, 2 ** 64 - 1)]:
        x = data([2], data_type)
        value_json = {"number": "NaN"} if isinstance(value, float) and value != value else value
        d, i = single("pad", x, [1], [0], options={"value": value_json})
        expected = np.concatenate([np.array([want], dtype=NP[data_type]), x])
        cases.append((d, i, {"y": expected}))
    check_all(webnn_page, server_url, cases)


def test_pad_of_a_scalar_is_a_copy(webnn_page, server_url):
    """pad() of a 0-D input with empty padding lists is valid (spec pad(): both lists must have
    the input's rank, 0) and copies the value in every mode; a non-empty list is a TypeError."""
    cases = []
    for k, data_type in enumerate(("float32", "float16", "int64", "uint8")):
        x = np.array(data([1], data_type, seed=k)[0], dtype=NP[data_type])
        for mode in ("constant", "edge", "reflection", "symmetric"):
            d, i = single("pad", x, [], [], options={"mode": mode})
            cases.append((d, i, {"y": x}))
    check_all(webnn_page, server_url, cases)
    check_errors(webnn_page, server_url, [
        (f"builder => builder.pad({inp('float32', [])}, [1], [0], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({inp('float32', [])}, [], [0], {{label: 'L'}})", "TypeError"),
    ])


def test_movement_validation(webnn_page, server_url):
    f = "float32"
    x23 = inp(f, [2, 3])
    check_errors(webnn_page, server_url, [
        ("builder => builder.identity(5, {label: 'L'})", "TypeError"),
        (f"builder => builder.slice({x23}, [0], [1], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.slice({x23}, [0, 0], [2, 0], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.slice({x23}, [1, 0], [2, 3], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.slice({x23}, [3, 0], [1, 3], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.slice({x23}, [0, 0], [2, 3], {{strides: [1], label: 'L'}})", "TypeError"),
        (f"builder => builder.slice({x23}, [0, 0], [2, 3], {{strides: [1, 0], label: 'L'}})", "TypeError"),
        (f"builder => builder.slice({x23}, [0, -1], [2, 3], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.split({x23}, 2, {{axis: 1, label: 'L'}})", "TypeError"),
        (f"builder => builder.split({x23}, 0, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.split({x23}, [1, 1], {{axis: 1, label: 'L'}})", "TypeError"),
        (f"builder => builder.split({x23}, [3, 0], {{axis: 1, label: 'L'}})", "TypeError"),
        (f"builder => builder.split({x23}, [], {{axis: 1, label: 'L'}})", "TypeError"),
        (f"builder => builder.split({x23}, 1, {{axis: 2, label: 'L'}})", "TypeError"),
        (f"builder => builder.split({inp(f, [])}, 1, {{label: 'L'}})", "TypeError"),
        (f"builder => builder.expand({x23}, [3, 3], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.expand({x23}, [3], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.expand({x23}, [2, 0], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.expand({x23}, [1, 1, 1, 1, 1, 1, 1, 2, 3], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.expand({inp(f, [2])}, [65536, 65536], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.tile({x23}, [2], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.tile({x23}, [2, 0], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.tile({x23}, [65536, 65536], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.reverse({x23}, {{axes: [2], label: 'L'}})", "TypeError"),
        (f"builder => builder.reverse({x23}, {{axes: [1, 1], label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [1], [1, 1], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [1, 1], [1, 1, 1], {{label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [2, 0], [0, 0], {{mode: 'reflection', label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [0, 0], [0, 3], {{mode: 'reflection', label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [3, 0], [0, 0], {{mode: 'symmetric', label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [0, 0], [0, 0], {{mode: 'wrap', label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [0, 0], [0, 0], {{value: Symbol(), label: 'L'}})", "TypeError"),
        (f"builder => builder.pad({x23}, [0, 2147483647], [0, 0], {{label: 'L'}})", "TypeError"),
    ])


def test_reshape_and_identity_add_no_steps(webnn_page, server_url):
    """reshape/identity alias their input: the plan holds only the transposes (and no output copy)."""
    from tests.graph_runner import open_harness
    open_harness(webnn_page, server_url)
    labels = webnn_page.evaluate("""async () => {
      const {describeGraph} = await import('/polyfill/inspect.js');
      const context = await navigator.ml.createContext();
      const b = new MLGraphBuilder(context);
      const x = b.input('x', {dataType: 'float32', shape: [2, 3, 4]});
      const t = b.transpose(b.reshape(x, [6, 4]), {label: 'T1'});
      const y = b.reshape(b.identity(b.reshape(t, [24])), [2, 12]);
      const z = b.transpose(b.identity(y), {label: 'T2'});
      const graph = await b.build({y, z});
      const steps = describeGraph(graph).steps.map((s) => s.name);
      context.destroy();
      return steps;
    }""")
    assert labels == ["T1", "T2"]


def test_large_tensors_fold_the_grid(webnn_page, server_url):
    """Over 65,535 workgroups (4.9M elements): tile -> reverse -> pad -> slice, a small output."""
    x = np.arange(7, dtype=np.float32) - 3.5
    n = 7 * 700_000
    desc = {"inputs": {"x": {"dataType": "float32", "shape": [7]}},
            "operators": [{"op": "tile", "args": [{"operand": "x"}, [700_000]], "outputs": "t"},
                          {"op": "reverse", "args": [{"operand": "t"}], "outputs": "r"},
                          {"op": "pad", "args": [{"operand": "r"}, [3], [2]], "options": {"mode": "edge"}, "outputs": "p"},
                          {"op": "slice", "args": [{"operand": "p"}, [n - 7], [12]], "outputs": "y"}],
            "outputs": ["y"]}
    padded = np.pad(np.tile(x, 700_000)[::-1], (3, 2), mode="edge")
    check_all(webnn_page, server_url, [(desc, {"x": x}, {"y": padded[n - 7:n + 5]})])
