"""Conformance cases for the data-movement operators (spec §reshape, §transpose, §concat,
§identity, §slice, §split, §expand, §tile, §reverse, §pad): every data type, ranks 0 to 5.

Data movement copies values, so every case is exact (tolerances.md: 0 ULP). Float inputs carry
NaN, ±Inf and -0; int64/uint64 values use both 32-bit halves. The gather/scatter/where/triangular
family lives in gather.py; shared helpers (case builder, data) are in this module.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import NUMPY_DTYPES, graph_case, operand, tensor, validation_case
from tests.reference import movement as ref

SEED = 4242
TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]


def values(shape, data_type, rng) -> np.ndarray:
    """Distinct-ish values of data_type; floats include NaN, Inf, -Inf, -0 when there is room."""
    n = int(np.prod(shape, dtype=np.int64))
    dtype = NUMPY_DTYPES[data_type]
    if dtype.kind == "f":
        x = (rng.standard_normal(n) * 50).astype(dtype)
        if n >= 6:
            x[rng.choice(n, 4, replace=False)] = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype)
    elif dtype.itemsize == 8:
        x = (rng.integers(-(2 ** 40), 2 ** 40, size=n) * 4099).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=n, endpoint=True).astype(dtype)
    return x.reshape(shape)


def case(name, op, data_type, operands, args=(), options=None, expected=None, constants=(), lead=True):
    """An exact graph case of one op call whose leading arguments are ``operands`` (name -> array).

    Args:
        expected: output name -> array (typed like the output); several names for split.
        constants: operand names embedded as constants instead of graph inputs.
        lead: False when ``args`` already reference the operands (concat's list).
    """
    outs = list(expected)
    lead_args = [operand(n) for n in operands] if lead else []
    entry = {"op": op, "args": [*lead_args, *args], "outputs": outs[0] if len(outs) == 1 else outs}
    if options is not None:
        entry["options"] = options
    graph = {
        "inputs": {n: {"dataType": _dt(a), "shape": list(a.shape)} for n, a in operands.items() if n not in constants},
        "constants": {n: tensor(a, _dt(a)) for n, a in operands.items() if n in constants},
        "operators": [entry],
        "outputs": outs,
    }
    inputs = {n: tensor(a, _dt(a)) for n, a in operands.items() if n not in constants}
    return graph_case(f"{op}/{data_type}/{name}", op, data_type, graph, inputs,
                      {n: tensor(a, _dt(a)) for n, a in expected.items()}, "exact", 0)


def _dt(array) -> str:
    return next(k for k, v in NUMPY_DTYPES.items() if v == np.asarray(array).dtype.newbyteorder("<"))


def tag(shape) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def js_input(data_type, shape, name="x") -> str:
    """JS for an input operand on `builder`."""
    return f"builder.input('{name}', {{dataType: '{data_type}', shape: {list(shape)}}})"


def invalid(op, name, call) -> dict:
    """A validation case: ``builder.<call>`` must throw a TypeError naming the label L."""
    return validation_case(f"{op}/validation/{name}", op, f"(builder) => builder.{call}", "TypeError", "L")


# ---------------------------------------------------------------------------- graph cases


def graph_cases() -> list[dict]:
    """Movement graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    cases = []
    for k, dt in enumerate(TYPES):
        v = lambda *shape: values(list(shape), dt, rng)  # noqa: E731
        for src, dst in [([], [1, 1]), ([1], []), ([2, 3], [3, 1, 2]), ([2, 3, 4, 5], [5, 4, 3, 2, 1]),
                         ([2, 1, 3, 2, 2], [4, 6])]:
            x = v(*src)
            cases.append(case(f"{tag(src)}-to-{tag(dst)}", "reshape", dt, {"x": x}, [dst], expected={"y": ref.reshape(x, dst)},
                              constants={"x"} if len(src) == 2 else ()))
        for shape, perm in [([], None), ([3, 4], None), ([2, 3, 4], [1, 2, 0]), ([2, 3, 4, 5], [0, 2, 3, 1]),
                            ([2, 3, 1, 2, 3], [4, 0, 3, 2, 1])]:
            x = v(*shape)
            opts = None if perm is None else {"permutation": perm}
            cases.append(case(f"{tag(shape)}-{'default' if perm is None else ''.join(map(str, perm))}", "transpose", dt,
                              {"x": x}, options=opts, expected={"y": ref.transpose(x, opts)}))
        for shapes, axis in [([[3], [1], [4]], 0), ([[2, 1, 3], [2, 4, 3]], 1), ([[2, 2, 1, 2, 1], [2, 2, 1, 2, 3]], 4)]:
            xs = {f"a{j}": v(*s) for j, s in enumerate(shapes)}
            cases.append(case(f"rank{len(shapes[0])}-axis{axis}-{len(shapes)}", "concat", dt, xs, [[operand(n) for n in xs], axis],
                              expected={"y": ref.concat(list(xs.values()), axis)}, constants={"a1"}, lead=False))
        for shape in ([], [2, 3, 2]):
            x = v(*shape)
            cases.append(case(tag(shape), "identity", dt, {"x": x}, expected={"y": ref.identity(x)}))
        for shape, starts, sizes, strides in [([7], [2], [4], None), ([4, 5], [1, 0], [3, 5], [2, 2]),
                                              ([2, 3, 4, 2, 3], [1, 0, 1, 0, 1], [1, 3, 3, 2, 2], [1, 2, 2, 1, 1]), ([], [], [], None)]:
            x = v(*shape)
            opts = None if strides is None else {"strides": strides}
            cases.append(case(f"{tag(shape)}-{'strided' if strides else 'plain'}", "slice", dt, {"x": x}, [starts, sizes], opts,
                              expected={"y": ref.slice(x, starts, sizes, opts)}))
        for shape, splits, axis in [([6, 2], 3, 0), ([2, 3, 2, 5], [1, 4], 3)]:
            x = v(*shape)
            parts = ref.split(x, splits, {"axis": axis})
            cases.append(case(f"{tag(shape)}-axis{axis}-{len(parts)}", "split", dt, {"x": x}, [splits], {"axis": axis},
                              expected={f"y{j}": p for j, p in enumerate(parts)}))
        for shape, new in [([], [2, 3]), ([3, 1], [2, 3, 4]), ([1, 2, 1, 3], [2, 2, 2, 4, 3])]:
            x = v(*shape)
            cases.append(case(f"{tag(shape)}-to-{tag(new)}", "expand", dt, {"x": x}, [new], expected={"y": ref.expand(x, new)}))
        for shape, reps in [([3], [3]), ([2, 1, 3], [2, 3, 1]), ([], [])]:
            x = v(*shape)
            cases.append(case(f"{tag(shape)}-by-{tag(reps)}", "tile", dt, {"x": x}, [reps], expected={"y": ref.tile(x, reps)}))
        for shape, axes in [([5], None), ([3, 4], [1]), ([2, 3, 2, 2, 3], [0, 2, 4]), ([], None)]:
            x = v(*shape)
            opts = None if axes is None else {"axes": axes}
            cases.append(case(f"{tag(shape)}-{'all' if axes is None else ''.join(map(str, axes))}", "reverse", dt, {"x": x},
                              options=opts, expected={"y": ref.reverse(x, opts)}))
        cases += pad_cases(dt, v, k)
    return cases


PAD_VALUES = {"float32": -1.5, "float16": 0.25, "int32": -9, "uint32": 3000000000, "int64": -(2 ** 40),
              "uint64": 2 ** 63 + 1, "int8": -128, "uint8": 255}


def pad_cases(dt, v, k) -> list[dict]:
    """pad in all four modes, ranks 0 to 5, for one data type."""
    cases = []
    layouts = [([4], [2], [3]), ([3, 4], [1, 2], [2, 1]), ([2, 3, 3], [1, 2, 0], [1, 0, 2]),
               ([2, 2, 3, 3, 2], [0, 1, 2, 1, 1], [1, 1, 0, 2, 1])]
    for mode in ("constant", "edge", "reflection", "symmetric"):
        for j, (shape, begin, end) in enumerate(layouts):
            if (j + k) % 2:
                continue
            if mode == "reflection" and any(b >= n or e >= n for b, e, n in zip(begin, end, shape)):
                continue
            x = v(*shape)
            opts = {"mode": mode}
            if mode == "constant":
                value = PAD_VALUES[dt]
                opts["value"] = {"bigint": str(value)} if dt in ("int64", "uint64") else value
                y = ref.pad(x, begin, end, {"value": NUMPY_DTYPES[dt].type(value)})
            else:
                y = ref.pad(x, begin, end, opts)
            cases.append(case(f"{mode}-{tag(shape)}", "pad", dt, {"x": x}, [begin, end], opts, expected={"y": y}))
    x = v(7) if dt != "int8" else v()
    cases.append(case(f"default-{tag(x.shape)}", "pad", dt, {"x": x}, [[1] * x.ndim, [2] * x.ndim],
                      expected={"y": ref.pad(x, [1] * x.ndim, [2] * x.ndim)}))
    return cases


# ----------------------------------------------------------------------- validation cases


def validation_cases() -> list[dict]:
    """Calls the spec refuses with a TypeError (each names its label)."""
    f = "float32"
    x23 = js_input(f, [2, 3])
    rows = [
        ("reshape", "count-mismatch", f"reshape({x23}, [4, 2], {{label: 'L'}})"),
        ("reshape", "zero-dimension", f"reshape({x23}, [6, 0], {{label: 'L'}})"),
        ("reshape", "negative-dimension", f"reshape({x23}, [-6], {{label: 'L'}})"),
        ("reshape", "rank-too-large", f"reshape({js_input(f, [1])}, [1, 1, 1, 1, 1, 1, 1, 1, 1], {{label: 'L'}})"),
        ("reshape", "not-an-operand", "reshape({}, [1], {label: 'L'})"),
        ("transpose", "permutation-too-short", f"transpose({x23}, {{permutation: [0], label: 'L'}})"),
        ("transpose", "permutation-duplicate", f"transpose({x23}, {{permutation: [0, 0], label: 'L'}})"),
        ("transpose", "permutation-out-of-range", f"transpose({x23}, {{permutation: [0, 2], label: 'L'}})"),
        ("transpose", "permutation-too-long", f"transpose({js_input(f, [2, 3, 4])}, {{permutation: [2, 1, 0, 3], label: 'L'}})"),
        ("transpose", "permutation-negative", f"transpose({x23}, {{permutation: [-1, 0], label: 'L'}})"),
        ("concat", "no-inputs", "concat([], 0, {label: 'L'})"),
        ("concat", "axis-out-of-range", f"concat([{x23}], 2, {{label: 'L'}})"),
        ("concat", "scalar-input", f"concat([{js_input(f, [])}], 0, {{label: 'L'}})"),
        ("concat", "shape-mismatch-off-axis", f"concat([{x23}, {js_input(f, [3, 3], 'y')}], 1, {{label: 'L'}})"),
        ("concat", "type-mismatch", f"concat([{x23}, {js_input('int32', [2, 3], 'y')}], 0, {{label: 'L'}})"),
        ("concat", "rank-mismatch", f"concat([{x23}, {js_input(f, [2, 3, 1], 'y')}], 0, {{label: 'L'}})"),
        ("concat", "non-operand-item", f"concat([{x23}, 5], 0, {{label: 'L'}})"),
        ("concat", "not-a-sequence", f"concat({x23}, 0, {{label: 'L'}})"),
        ("concat", "axis-negative", f"concat([{x23}], -1, {{label: 'L'}})"),
        ("identity", "not-an-operand", "identity(5, {label: 'L'})"),
        ("slice", "starts-too-short", f"slice({x23}, [0], [1], {{label: 'L'}})"),
        ("slice", "size-zero", f"slice({x23}, [0, 0], [2, 0], {{label: 'L'}})"),
        ("slice", "window-past-end", f"slice({x23}, [1, 0], [2, 3], {{label: 'L'}})"),
        ("slice", "start-past-end", f"slice({x23}, [3, 0], [1, 3], {{label: 'L'}})"),
        ("slice", "strides-too-short", f"slice({x23}, [0, 0], [2, 3], {{strides: [1], label: 'L'}})"),
        ("slice", "stride-zero", f"slice({x23}, [0, 0], [2, 3], {{strides: [1, 0], label: 'L'}})"),
        ("slice", "start-negative", f"slice({x23}, [0, -1], [2, 3], {{label: 'L'}})"),
        ("split", "count-not-dividing", f"split({x23}, 2, {{axis: 1, label: 'L'}})"),
        ("split", "count-zero", f"split({x23}, 0, {{label: 'L'}})"),
        ("split", "sizes-sum-short", f"split({x23}, [1, 1], {{axis: 1, label: 'L'}})"),
        ("split", "size-zero", f"split({x23}, [3, 0], {{axis: 1, label: 'L'}})"),
        ("split", "sizes-empty", f"split({x23}, [], {{axis: 1, label: 'L'}})"),
        ("split", "axis-out-of-range", f"split({x23}, 1, {{axis: 2, label: 'L'}})"),
        ("split", "scalar-input", f"split({js_input(f, [])}, 1, {{label: 'L'}})"),
        ("expand", "not-broadcastable", f"expand({x23}, [3, 3], {{label: 'L'}})"),
        ("expand", "rank-shrinks", f"expand({x23}, [3], {{label: 'L'}})"),
        ("expand", "zero-dimension", f"expand({x23}, [2, 0], {{label: 'L'}})"),
        ("expand", "rank-too-large", f"expand({x23}, [1, 1, 1, 1, 1, 1, 1, 2, 3], {{label: 'L'}})"),
        ("expand", "too-many-elements", f"expand({js_input(f, [2])}, [65536, 65536], {{label: 'L'}})"),
        ("tile", "repetitions-too-short", f"tile({x23}, [2], {{label: 'L'}})"),
        ("tile", "repetition-zero", f"tile({x23}, [2, 0], {{label: 'L'}})"),
        ("tile", "too-many-elements", f"tile({x23}, [65536, 65536], {{label: 'L'}})"),
        ("reverse", "axis-out-of-range", f"reverse({x23}, {{axes: [2], label: 'L'}})"),
        ("reverse", "axis-duplicate", f"reverse({x23}, {{axes: [1, 1], label: 'L'}})"),
        ("pad", "beginning-too-short", f"pad({x23}, [1], [1, 1], {{label: 'L'}})"),
        ("pad", "ending-too-long", f"pad({x23}, [1, 1], [1, 1, 1], {{label: 'L'}})"),
        ("pad", "reflection-equals-dimension", f"pad({x23}, [2, 0], [0, 0], {{mode: 'reflection', label: 'L'}})"),
        ("pad", "reflection-ending-too-large", f"pad({x23}, [0, 0], [0, 3], {{mode: 'reflection', label: 'L'}})"),
        ("pad", "symmetric-too-large", f"pad({x23}, [3, 0], [0, 0], {{mode: 'symmetric', label: 'L'}})"),
        ("pad", "unknown-mode", f"pad({x23}, [0, 0], [0, 0], {{mode: 'wrap', label: 'L'}})"),
        ("pad", "output-too-large", f"pad({x23}, [0, 2147483647], [0, 0], {{label: 'L'}})"),
    ]
    return [invalid(op, name, call) for op, name, call in rows]
