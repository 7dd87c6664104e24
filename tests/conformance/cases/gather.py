"""Conformance cases for gather, gatherElements, gatherND, scatterElements, scatterND, where
and triangular (spec §gather ... §scatterND, §where, §triangular): every data type, ranks 0 to 5,
indices int32/uint32/int64.

All cases are exact. Indices stay in [-n, n) (negative ones count from the end; out-of-range
values are implementation-clamped per the spec's notes, so they are tested in
tests/test_ops_gather.py rather than here), and scatter targets are distinct (the spec leaves
the winner of duplicate targets open).
"""
from __future__ import annotations

import numpy as np

from tests.conformance.cases.movement import TYPES, case, invalid, js_input, tag, values
from tests.reference import movement as ref

SEED = 4343
INDEX_TYPES = ["int32", "uint32", "int64"]


def index_values(shape, n, index_type, rng):
    """Indices in [-n, n) ([0, n) for uint32)."""
    low = 0 if index_type == "uint32" else -n
    return rng.integers(low, n, size=shape).astype(np.dtype(index_type))


def distinct_indices(shape, axis, n, index_type, rng):
    """Indices of `shape` whose values along `axis` are distinct (a permutation prefix), some negative."""
    out = np.empty(shape, dtype=np.int64)
    for c in np.ndindex(*[d for i, d in enumerate(shape) if i != axis]):
        perm = rng.permutation(n)[: shape[axis]]
        if index_type != "uint32":
            perm = np.where(rng.random(perm.size) < 0.5, perm - n, perm)
        sl = list(c)
        sl.insert(axis, slice(None))
        out[tuple(sl)] = perm
    return out.astype(np.dtype(index_type))


def graph_cases() -> list[dict]:
    """gather/scatter/where/triangular graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    cases = []
    for k, dt in enumerate(TYPES):
        v = lambda *shape: values(list(shape), dt, rng)  # noqa: E731
        it = INDEX_TYPES[k % 3]
        for shape, ishape, axis in [([5], [], 0), ([4, 3], [2, 2], 1), ([2, 3, 4], [5], 2), ([2, 2, 3, 2, 2], [3], 0)]:
            x, i = v(*shape), index_values(ishape, shape[axis], it, rng)
            cases.append(case(f"{tag(shape)}-axis{axis}-{it}-{tag(ishape)}", "gather", dt, {"x": x, "i": i},
                              options={"axis": axis}, expected={"y": ref.gather(x, i, {"axis": axis})},
                              constants={"i"} if axis % 2 else ()))
        for shape, ishape, axis in [([4, 3], [2, 3], 0), ([2, 3, 4], [2, 3, 2], 2), ([2, 1, 3, 2, 2], [2, 1, 4, 2, 2], 2)]:
            x, i = v(*shape), index_values(ishape, shape[axis], it, rng)
            cases.append(case(f"{tag(shape)}-axis{axis}-{it}", "gatherElements", dt, {"x": x, "i": i},
                              options={"axis": axis}, expected={"y": ref.gatherElements(x, i, {"axis": axis})}))
        for shape, ishape in [([2, 2], [3, 2]), ([2, 3, 2], [2, 1]), ([3, 2, 2, 2, 2], [2, 2, 3]), ([4, 3], [2])]:
            x = v(*shape)
            i = np.stack([index_values(ishape[:-1], shape[t], it, rng) for t in range(ishape[-1])], axis=-1)
            cases.append(case(f"{tag(shape)}-{it}-{tag(ishape)}", "gatherND", dt, {"x": x, "i": i.astype(np.dtype(it))},
                              expected={"y": ref.gatherND(x, i)}))
        for shape, ishape, axis in [([5], [3], 0), ([3, 4], [3, 2], 1), ([2, 3, 4, 2], [2, 2, 4, 2], 1)]:
            x, i, u = v(*shape), distinct_indices(ishape, axis, shape[axis], it, rng), v(*ishape)
            cases.append(case(f"{tag(shape)}-axis{axis}-{it}", "scatterElements", dt, {"x": x, "i": i, "u": u},
                              options={"axis": axis}, expected={"y": ref.scatterElements(x, i, u, {"axis": axis})},
                              constants={"u"} if axis else ()))
        for shape, rows, kk in [([6], 3, 1), ([4, 3], 2, 1), ([3, 2, 2], 3, 2), ([2, 2, 3, 2], 2, 4)]:
            x = v(*shape)
            flat = rng.permutation(int(np.prod(shape[:kk])))[:rows]
            coords = np.stack(np.unravel_index(flat, shape[:kk]), axis=-1)
            if it != "uint32":
                coords = np.where(rng.random(coords.shape) < 0.4, coords - np.array(shape[:kk]), coords)
            i = coords.astype(np.dtype(it))
            u = v(rows, *shape[kk:])
            cases.append(case(f"{tag(shape)}-k{kk}-{it}", "scatterND", dt, {"x": x, "i": i, "u": u},
                              expected={"y": ref.scatterND(x, i, u)}))
        for shape, opts in [([3, 4], None), ([4, 3], {"upper": False}), ([2, 3, 3], {"diagonal": 1}),
                            ([2, 1, 3, 4], {"upper": False, "diagonal": -1}), ([2, 1, 2, 3, 3], {"diagonal": -2})]:
            x = v(*shape)
            name = "default" if opts is None else "-".join(f"{a}{b}" for a, b in opts.items())
            cases.append(case(f"{tag(shape)}-{name}", "triangular", dt, {"x": x}, options=opts,
                              expected={"y": ref.triangular(x, opts)}))
        for cs, ts, fs in [([], [], []), ([2, 3], [2, 3], [2, 3]), ([3, 1], [1, 4], [4]), ([2, 1, 3, 1], [], [1, 2, 1, 2]),
                           ([1, 2, 1, 2, 2], [2, 1, 2, 2, 1], [2])]:
            c = rng.choice(np.array([0, 1, 0, 255, 3], dtype=np.uint8), size=cs)
            t, f = v(*ts), v(*fs)
            cases.append(case(f"{tag(cs)}-{tag(ts)}-{tag(fs)}", "where", dt, {"c": c, "t": t, "f": f},
                              expected={"y": ref.where(c, t, f)}, constants={"c"} if len(cs) == 2 else ()))
    return cases


def validation_cases() -> list[dict]:
    """Calls the spec refuses with a TypeError (each names its label)."""
    f = "float32"
    x = js_input(f, [4, 3])
    i = lambda shape, t="int32": js_input(t, shape, "i")  # noqa: E731
    u = lambda shape, t=f: js_input(t, shape, "u")  # noqa: E731
    rows = [
        ("gather", "indices-float32", f"gather({x}, {i([2], 'float32')}, {{label: 'L'}})"),
        ("gather", "indices-uint64", f"gather({x}, {i([2], 'uint64')}, {{label: 'L'}})"),
        ("gather", "indices-int8", f"gather({x}, {i([2], 'int8')}, {{label: 'L'}})"),
        ("gather", "axis-out-of-range", f"gather({x}, {i([2])}, {{axis: 2, label: 'L'}})"),
        ("gather", "scalar-input", f"gather({js_input(f, [])}, {i([2])}, {{label: 'L'}})"),
        ("gather", "output-rank-too-large", f"gather({js_input(f, [2, 2, 2, 2, 2])}, {i([2, 2, 2, 2, 2])}, {{label: 'L'}})"),
        ("gather", "indices-not-an-operand", f"gather({x}, 3, {{label: 'L'}})"),
        ("gatherElements", "indices-float32", f"gatherElements({x}, {i([4, 3], 'float32')}, {{label: 'L'}})"),
        ("gatherElements", "shape-mismatch-off-axis", f"gatherElements({x}, {i([4, 2])}, {{axis: 0, label: 'L'}})"),
        ("gatherElements", "rank-mismatch", f"gatherElements({x}, {i([4])}, {{label: 'L'}})"),
        ("gatherElements", "axis-out-of-range", f"gatherElements({x}, {i([4, 3])}, {{axis: 2, label: 'L'}})"),
        ("gatherND", "coordinate-too-long", f"gatherND({x}, {i([2, 3])}, {{label: 'L'}})"),
        ("gatherND", "indices-uint8", f"gatherND({x}, {i([2, 2], 'uint8')}, {{label: 'L'}})"),
        ("gatherND", "scalar-indices", f"gatherND({x}, {i([])}, {{label: 'L'}})"),
        ("gatherND", "scalar-input", f"gatherND({js_input(f, [])}, {i([1])}, {{label: 'L'}})"),
        ("scatterElements", "updates-type-mismatch", f"scatterElements({x}, {i([2, 3])}, {u([2, 3], 'int32')}, {{label: 'L'}})"),
        ("scatterElements", "updates-shape-mismatch", f"scatterElements({x}, {i([2, 3])}, {u([2, 2])}, {{label: 'L'}})"),
        ("scatterElements", "indices-shape-off-axis", f"scatterElements({x}, {i([2, 2])}, {u([2, 2])}, {{label: 'L'}})"),
        ("scatterElements", "indices-float32", f"scatterElements({x}, {i([2, 3], 'float32')}, {u([2, 3])}, {{label: 'L'}})"),
        ("scatterElements", "axis-out-of-range", f"scatterElements({x}, {i([4, 3])}, {u([4, 3])}, {{axis: 2, label: 'L'}})"),
        ("scatterND", "coordinate-too-long", f"scatterND({x}, {i([2, 3])}, {u([2])}, {{label: 'L'}})"),
        ("scatterND", "updates-shape-mismatch", f"scatterND({x}, {i([2, 1])}, {u([2, 4])}, {{label: 'L'}})"),
        ("scatterND", "updates-type-mismatch", f"scatterND({x}, {i([2, 2])}, {u([2], 'int32')}, {{label: 'L'}})"),
        ("scatterND", "indices-uint64", f"scatterND({x}, {i([2, 2], 'uint64')}, {u([2])}, {{label: 'L'}})"),
        ("where", "condition-float32", f"where({js_input(f, [2], 'c')}, {js_input(f, [2], 't')}, {js_input(f, [2], 'f')}, {{label: 'L'}})"),
        ("where", "condition-int32", f"where({js_input('int32', [2], 'c')}, {js_input(f, [2], 't')}, {js_input(f, [2], 'f')}, {{label: 'L'}})"),
        ("where", "value-type-mismatch", f"where({js_input('uint8', [2], 'c')}, {js_input(f, [2], 't')}, {js_input('float16', [2], 'f')}, {{label: 'L'}})"),
        ("where", "condition-not-broadcastable", f"where({js_input('uint8', [3], 'c')}, {js_input(f, [2], 't')}, {js_input(f, [2], 'f')}, {{label: 'L'}})"),
        ("where", "values-not-broadcastable", f"where({js_input('uint8', [2], 'c')}, {js_input(f, [2, 3], 't')}, {js_input(f, [3, 3], 'f')}, {{label: 'L'}})"),
        ("triangular", "rank-1", f"triangular({js_input(f, [3])}, {{label: 'L'}})"),
        ("triangular", "rank-0", f"triangular({js_input(f, [])}, {{label: 'L'}})"),
        ("triangular", "diagonal-fraction", f"triangular({js_input(f, [2, 2])}, {{diagonal: 0.5, label: 'L'}})"),
        ("triangular", "diagonal-out-of-long", f"triangular({js_input(f, [2, 2])}, {{diagonal: 2147483648, label: 'L'}})"),
    ]
    return [invalid(op, name, call) for op, name, call in rows]
