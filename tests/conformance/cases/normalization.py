"""Conformance cases for batchNormalization, instanceNormalization and layerNormalization.

Bounds (tolerances.md): batchNormalization 6 ULP, instanceNormalization 840 ULP,
layerNormalization absolute 1/1024. ULP bounds are relative to each output, so the data keeps
outputs away from cancellation: for batchNormalization x > mean and bias of the sign of scale;
for instanceNormalization every row holds pairs mu +- d (|x - mean| >= 0.5) and |bias| exceeds
|scale * (x - mean) / sd|.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.graph_runner import data_type_of
from tests.reference.normalization import batchNormalization, instanceNormalization, layerNormalization

SEED = 777


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def _case(op, name, args, options, arrays, expected, metric, value, const=()):
    opts = {k: (operand(k) if k in ("scale", "bias") else v) for k, v in options.items()}
    dt = data_type_of(arrays["x"])
    return op_case(f"{op}/{dt}/{name}", op, dt, args, opts or None,
                   inputs={k: v for k, v in arrays.items() if k not in const},
                   constants={k: v for k, v in arrays.items() if k in const},
                   expected={"y": (expected, dt)}, metric=metric, value=value)


def _f16(arrays, options):
    """The float16 version of a case's arrays and options."""
    arrays = {k: v.astype(np.float16) for k, v in arrays.items()}
    return arrays, {k: (arrays[k] if k in arrays else v) for k, v in options.items()}


def batch_case(rng, name, shape, axis=None, scale=True, bias=True, epsilon=None, const=("mean", "variance", "scale", "bias"), x=None,
               half=False):
    c = shape[1 if axis is None else axis]
    mean = _f32(rng.uniform(-1.0, 0.5, c))
    variance = _f32(rng.uniform(0.2, 2.0, c))
    bshape = [1] * len(shape)
    bshape[1 if axis is None else axis] = c
    if x is None:
        x = _f32(mean.reshape(bshape) + rng.uniform(0.1, 3.0, shape))
    options = {} if axis is None else {"axis": axis}
    if epsilon is not None:
        options["epsilon"] = epsilon
    arrays = {"x": x, "mean": mean, "variance": variance}
    signs = np.where(rng.random(c) < 0.5, -1.0, 1.0) if scale else np.ones(c)
    if scale:
        arrays["scale"] = _f32(signs * rng.uniform(0.5, 2.0, c))
        options["scale"] = arrays["scale"]
    if bias:
        arrays["bias"] = _f32(signs * rng.uniform(0.1, 1.0, c))
        options["bias"] = arrays["bias"]
    if half:
        arrays, options = _f16(arrays, options)
        x, mean, variance = arrays["x"], arrays["mean"], arrays["variance"]
    expected = batchNormalization(x, mean, variance, options, data_type=data_type_of(x))
    return _case("batchNormalization", name, [operand("x"), operand("mean"), operand("variance")], options,
                 arrays, expected, "ULP", 6, const)


def paired_rows(rng, rows, n):
    """[rows, n] float32 rows of pairs mu +- d, d in [0.5, 2]: |x - mean| >= 0.5."""
    half = (n + 1) // 2
    d = rng.integers(4, 17, (rows, half)) / 8.0
    mu = rng.integers(-16, 17, (rows, 1)) / 8.0
    x = np.concatenate([mu + d, mu - d], axis=1)[:, :n]
    if n % 2:
        x[:, -1] = mu[:, 0] + 0.75  # odd count: moves the mean by 0.75 / n, keeping |x - mean| large
    return x


def instance_case(rng, name, n, c, h, w, layout="nchw", scale=True, bias=True, epsilon=None, half=False):
    rows = paired_rows(rng, n * c, h * w).reshape(n, c, h, w)
    x = _f32(rows if layout == "nchw" else rows.transpose(0, 2, 3, 1))
    options = {} if layout == "nchw" else {"layout": layout}
    if epsilon is not None:
        options["epsilon"] = epsilon
    arrays = {"x": x}
    s = _f32(np.where(rng.random(c) < 0.5, -1.0, 1.0) * rng.uniform(0.5, 2.0, c))
    if scale:
        arrays["scale"] = s
        options["scale"] = s
    if bias:
        bound = 3.0 * np.sqrt(h * w) * (np.abs(s) if scale else 1.0)
        arrays["bias"] = _f32(np.where(rng.random(c) < 0.5, -1.0, 1.0) * (bound + rng.uniform(0.0, 1.0, c)))
        options["bias"] = arrays["bias"]
    if half:
        arrays, options = _f16(arrays, options)
    expected = instanceNormalization(arrays["x"], options, data_type=data_type_of(arrays["x"]))
    return _case("instanceNormalization", name, [operand("x")], options, arrays, expected, "ULP", 8400 if half else 840,
                 const=("scale", "bias"))


def layer_case(rng, name, shape, axes=None, scale=True, bias=True, epsilon=None, x=None, half=False):
    x = _f32(rng.uniform(-3.0, 3.0, shape)) if x is None else x
    options = {} if axes is None else {"axes": axes}
    if epsilon is not None:
        options["epsilon"] = epsilon
    used = list(range(1, len(shape))) if axes is None else axes
    pshape = [shape[a] for a in used]
    arrays = {"x": x}
    if scale:
        arrays["scale"] = _f32(rng.uniform(-2.0, 2.0, pshape))
        options["scale"] = arrays["scale"]
    if bias:
        arrays["bias"] = _f32(rng.uniform(-1.0, 1.0, pshape))
        options["bias"] = arrays["bias"]
    if half:
        arrays, options = _f16(arrays, options)
    expected = layerNormalization(arrays["x"], options, data_type=data_type_of(arrays["x"]))
    return _case("layerNormalization", name, [operand("x")], options, arrays, expected, "ATOL", 1 / 512 if half else 1 / 1024,
                 const=("scale",))


def graph_cases() -> list[dict]:
    """Normalization graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    cases = []
    for name, shape, axis in [("nchw", (2, 3, 4, 5), None), ("axis3", (2, 3, 4, 5), 3), ("axis0", (3, 4, 5), 0),
                              ("rank1", (6,), 0), ("rank2", (4, 7), 1), ("rank5", (2, 3, 2, 2, 3), 2)]:
        for scale, bias in [(True, True), (False, False), (True, False), (False, True)]:
            cases.append(batch_case(rng, f"{name}-scale{int(scale)}-bias{int(bias)}", shape, axis, scale, bias))
    cases.append(batch_case(rng, "epsilon", (2, 3, 4), epsilon=0.25))
    cases.append(batch_case(rng, "all-inputs", (2, 3, 4), const=()))
    x = _f32(rng.uniform(1.0, 3.0, (1, 3, 2, 2)))
    x[0, 1, 0, 1], x[0, 2, 1, 1] = np.nan, np.inf
    cases.append(batch_case(rng, "nan-inf", x.shape, x=x))

    for layout in ("nchw", "nhwc"):
        for (n, c, h, w) in [(2, 3, 4, 5), (1, 2, 1, 1), (1, 2, 20, 20), (3, 1, 3, 3), (1, 4, 1, 7)]:
            for scale, bias in [(True, True), (False, False), (True, False), (False, True)]:
                if (h, w) in ((1, 1), (20, 20)) and not (scale and bias):
                    continue
                cases.append(instance_case(rng, f"{layout}-{n}x{c}x{h}x{w}-scale{int(scale)}-bias{int(bias)}", n, c, h, w, layout, scale, bias))
        cases.append(instance_case(rng, f"{layout}-epsilon", 1, 2, 3, 4, layout, epsilon=0.5))

    for name, shape, axes in [("default-rank4", (2, 3, 4, 5), None), ("last-axis", (2, 3, 4, 5), [3]),
                              ("axes-1-3", (2, 3, 4, 5), [1, 3]), ("axes-unsorted", (2, 3, 4, 5), [3, 1]),
                              ("axes-0", (4, 3, 2), [0]), ("empty-axes", (3, 4), []), ("rank1-default", (9,), None),
                              ("rank1-axis0", (9,), [0]), ("scalar", (), None), ("long-rows", (2, 700), [1]),
                              ("many-rows", (300, 6), [1]), ("all-axes", (3, 4, 5), [0, 1, 2])]:
        for scale, bias in [(True, True), (False, False)]:
            cases.append(layer_case(rng, f"{name}-scale{int(scale)}-bias{int(bias)}", shape, axes, scale, bias))
    cases.append(layer_case(rng, "scale-only", (3, 8), [1], True, False))
    cases.append(layer_case(rng, "bias-only", (3, 8), [1], False, True, epsilon=0.01))
    x = _f32(rng.uniform(-3.0, 3.0, (3, 8)))
    x[0, 2], x[1, 5] = np.nan, np.inf
    cases.append(layer_case(rng, "nan-inf", x.shape, [1], x=x))
    cases.append(layer_case(rng, "constant-rows", (2, 40), [1], x=np.full((2, 40), 2.5, np.float32)))
    # float16: bounds 6 ULP, 8400 ULP, 1/512
    cases.append(batch_case(rng, "nchw", (2, 3, 4, 5), half=True))
    cases.append(batch_case(rng, "axis3-no-bias", (2, 3, 4, 5), 3, bias=False, half=True))
    cases.append(instance_case(rng, "nchw-2x3x4x5", 2, 3, 4, 5, half=True))
    cases.append(instance_case(rng, "nhwc-1x2x20x20", 1, 2, 20, 20, "nhwc", half=True))
    cases.append(layer_case(rng, "default-rank4", (2, 3, 4, 5), half=True))
    cases.append(layer_case(rng, "axes-unsorted", (2, 3, 4, 5), [3, 1], half=True))
    return cases


def _in(name, shape, data_type="float32"):
    return f"builder.input('{name}', {{dataType: '{data_type}', shape: {list(shape)}}})"


def validation_cases() -> list[dict]:
    """Inputs the spec refuses: a TypeError naming the label."""
    bn = lambda x, m, v, opts="": (  # noqa: E731
        f"(builder) => builder.batchNormalization({x}, {m}, {v}, {{label: 'L'{opts}}})")
    x4, m3 = _in("x", [2, 3, 4, 5]), _in("m", [3])
    bad = {
        "batchNormalization/validation/axis-out-of-range": bn(x4, m3, _in("v", [3]), ", axis: 4"),
        "batchNormalization/validation/mean-shape": bn(x4, _in("m", [4]), _in("v", [3])),
        "batchNormalization/validation/mean-rank-2": bn(x4, _in("m", [1, 3]), _in("v", [3])),
        "batchNormalization/validation/variance-data-type": bn(x4, m3, _in("v", [3], "int32")),
        "batchNormalization/validation/scale-shape": bn(x4, m3, _in("v", [3]), f", scale: {_in('s', [5])}"),
        "batchNormalization/validation/bias-data-type": bn(x4, m3, _in("v", [3]), f", bias: {_in('b', [3], 'float16')}"),
        "batchNormalization/validation/input-int32": bn(_in("x", [2, 3], "int32"), _in("m", [3], "int32"), _in("v", [3], "int32")),
        "batchNormalization/validation/epsilon-nan": bn(x4, m3, _in("v", [3]), ", epsilon: NaN"),
        "batchNormalization/validation/axis-default-rank1": bn(_in("x", [3]), m3, _in("v", [3])),
        "instanceNormalization/validation/rank-3": f"(builder) => builder.instanceNormalization({_in('x', [2, 3, 4])}, {{label: 'L'}})",
        "instanceNormalization/validation/bad-layout": f"(builder) => builder.instanceNormalization({x4}, {{layout: 'nwhc', label: 'L'}})",
        "instanceNormalization/validation/scale-shape-nhwc": f"(builder) => builder.instanceNormalization({x4}, {{layout: 'nhwc', scale: {_in('s', [3])}, label: 'L'}})",
        "instanceNormalization/validation/bias-shape": f"(builder) => builder.instanceNormalization({x4}, {{bias: {_in('b', [3, 1])}, label: 'L'}})",
        "instanceNormalization/validation/int32": f"(builder) => builder.instanceNormalization({_in('x', [1, 2, 3, 4], 'int32')}, {{label: 'L'}})",
        "layerNormalization/validation/axis-out-of-range": f"(builder) => builder.layerNormalization({x4}, {{axes: [4], label: 'L'}})",
        "layerNormalization/validation/duplicate-axes": f"(builder) => builder.layerNormalization({x4}, {{axes: [1, 1], label: 'L'}})",
        "layerNormalization/validation/scale-rank": f"(builder) => builder.layerNormalization({x4}, {{scale: {_in('s', [3, 4])}, label: 'L'}})",
        "layerNormalization/validation/scale-order": f"(builder) => builder.layerNormalization({x4}, {{axes: [3, 1], scale: {_in('s', [3, 5])}, label: 'L'}})",
        "layerNormalization/validation/bias-data-type": f"(builder) => builder.layerNormalization({x4}, {{axes: [3], bias: {_in('b', [5], 'int32')}, label: 'L'}})",
        "layerNormalization/validation/uint32": f"(builder) => builder.layerNormalization({_in('x', [2, 3], 'uint32')}, {{label: 'L'}})",
    }
    return [validation_case(name, name.split("/")[0], js, "TypeError", "L") for name, js in bad.items()]
