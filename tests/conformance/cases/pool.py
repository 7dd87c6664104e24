"""Conformance cases for the pooling operators and resample2d (spec §Pooling operations,
§resample2d).

Accuracy bounds (tolerances.md): maxPool2d 0 ULP, averagePool2d and l2Pool2d kh * kw + 2 ULP,
resample2d nearest-neighbor 0 ULP, linear 84 ULP (float32) / 10 ULP (float16). Sums that could
cancel use data that cannot: averagePool2d windows see one sign per channel (or dyadic values,
whose sums are exact), l2Pool2d squares, resample2d linear interpolates between values of one
sign per channel.

Pooling with outputSizes follows Chromium and the web-platform-tests rather than two steps of
the 2026-06 draft (see static/polyfill/shape/pool.js): padding still applies, and outputSizes
items may be as large as the strides or larger.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.cases.conv import dyadic
from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.reference.conv import resample2d
from tests.reference.ops import averagePool2d, l2Pool2d, maxPool2d

SEED = 20261201
POOLS = {"averagePool2d": averagePool2d, "l2Pool2d": l2Pool2d, "maxPool2d": maxPool2d}


def channel_signed(rng, shape, axis=1):
    """Uniform magnitudes in [0.1, 1) with one random sign per index of ``axis`` (NCHW channels)."""
    signs = np.where(rng.random(shape[axis]) < 0.5, -1.0, 1.0).reshape([-1 if d == axis else 1 for d in range(len(shape))])
    return rng.uniform(0.1, 1.0, shape) * signs


_NUMPY = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "uint32": np.uint32, "int8": np.int8, "uint8": np.uint8}
_INT_RANGE = {"int32": (-1000, 1000), "uint32": (0, 4_000_000_000), "int8": (-128, 128), "uint8": (0, 256)}


def _typed(values, data_type):
    return np.asarray(values).astype(_NUMPY[data_type])


def pool_case(rng, op, tag, shape, *, data="signed", data_type="float32", **options):
    """A pooling case from an NCHW shape; ``layout`` in options selects the layout passed."""
    layout = options.get("layout", "nchw")
    if data == "int":
        x = rng.integers(*_INT_RANGE[data_type], shape)
    elif data == "dyadic":
        x = dyadic(rng, shape)
    else:
        x = channel_signed(rng, shape)
        if data == "special":
            x.reshape(-1)[[2, 9, 30]] = [np.nan, np.inf, -np.inf]
    x = _typed(x if layout == "nchw" else x.transpose(0, 2, 3, 1), data_type)
    ref = POOLS[op](x, options)
    if op == "maxPool2d":
        metric, value = "ULP" if data_type.startswith("float") else "exact", 0
    else:
        window = options.get("windowDimensions") or (x.shape[2:4] if layout == "nchw" else x.shape[1:3])
        metric, value = "ULP", window[0] * window[1] + 2
    return op_case(f"{op}/{data_type}/{tag}", op, data_type, [operand("x")], options or None,
                   inputs={"x": x}, expected={"y": (ref, data_type)}, metric=metric, value=value)


def _pool_cases(rng):
    cases = []
    for op in POOLS:
        cases += [
            pool_case(rng, op, "global-default-options", (2, 3, 5, 7)),
            pool_case(rng, op, "global-nhwc", (1, 4, 6, 5), layout="nhwc"),
            pool_case(rng, op, "3x3-s2-padding", (1, 3, 9, 8), windowDimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]),
            pool_case(rng, op, "3x3-s2-padding-nhwc", (2, 9, 8, 3), windowDimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1],
                      layout="nhwc"),
            pool_case(rng, op, "asymmetric-window-padding-strides", (1, 2, 7, 9), windowDimensions=[2, 3], strides=[1, 2],
                      padding=[0, 2, 1, 0]),
            pool_case(rng, op, "dilations", (1, 2, 9, 10), windowDimensions=[3, 2], dilations=[2, 3], padding=[1, 0, 2, 1]),
            pool_case(rng, op, "ceil-rounding", (1, 3, 7, 8), windowDimensions=[2, 3], strides=[2, 2], padding=[0, 0, 1, 0],
                      outputShapeRounding="ceil"),
            pool_case(rng, op, "ceil-rounding-nhwc", (1, 2, 6, 5), windowDimensions=[3, 3], strides=[2, 2],
                      outputShapeRounding="ceil", layout="nhwc"),
            pool_case(rng, op, "floor-rounding-explicit", (1, 2, 7, 8), windowDimensions=[2, 3], strides=[2, 2],
                      outputShapeRounding="floor"),
            pool_case(rng, op, "output-sizes-ceil", (1, 2, 5, 6), windowDimensions=[3, 3], strides=[4, 4], outputSizes=[2, 2]),
            pool_case(rng, op, "output-sizes-floor", (1, 2, 5, 6), windowDimensions=[3, 3], strides=[4, 4], outputSizes=[1, 1],
                      outputShapeRounding="ceil"),
            pool_case(rng, op, "output-sizes-with-padding-above-strides", (1, 2, 7, 7), windowDimensions=[4, 4],
                      strides=[2, 2], padding=[2, 1, 2, 1], outputSizes=[4, 4]),
            pool_case(rng, op, "window-larger-than-input", (1, 2, 3, 4), windowDimensions=[4, 5], padding=[1, 2, 1, 1]),
            pool_case(rng, op, "dyadic-window-4x4", (1, 3, 10, 11), data="dyadic", windowDimensions=[4, 4], strides=[3, 2]),
        ]
    cases += [
        pool_case(rng, "maxPool2d", "nan-inf", (1, 2, 5, 5), data="special", windowDimensions=[2, 2]),
        pool_case(rng, "maxPool2d", "padding-on-negative-values", (1, 1, 4, 4), data="dyadic", windowDimensions=[3, 3],
                  padding=[2, 2, 2, 2]),
        pool_case(rng, "maxPool2d", "window-3x3-s2", (1, 3, 9, 9), data="int", data_type="int32", windowDimensions=[3, 3],
                  strides=[2, 2], padding=[1, 1, 1, 1]),
        pool_case(rng, "maxPool2d", "window-2x3-nhwc", (2, 3, 5, 7), data="int", data_type="uint32", windowDimensions=[2, 3],
                  strides=[1, 2], layout="nhwc"),
        pool_case(rng, "maxPool2d", "window-3x3-padding", (1, 5, 6, 7), data="int", data_type="int8", windowDimensions=[3, 3],
                  padding=[1, 1, 1, 1]),
        pool_case(rng, "maxPool2d", "global", (1, 6, 4, 5), data="int", data_type="uint8"),
        pool_case(rng, "l2Pool2d", "signed-values", (1, 3, 6, 6), data="dyadic", windowDimensions=[3, 2]),
    ]
    for op in POOLS:
        cases.append(pool_case(rng, op, "3x3-s2", (1, 3, 7, 8), data_type="float16", windowDimensions=[3, 3], strides=[2, 2],
                               padding=[1, 1, 1, 1]))
    return cases


def resample_case(rng, tag, shape, *, data_type="float32", **options):
    """A resample2d case on a tensor of ``shape``, values of one sign per slice of an axis that is
    not resampled (so linear interpolation never mixes signs)."""
    axes = options.get("axes", [2, 3])
    x = _typed(channel_signed(rng, shape, min(set(range(4)) - set(axes))), data_type)
    linear = options.get("mode") == "linear"
    value = (84 if data_type == "float32" else 10) if linear else 0
    return op_case(f"resample2d/{data_type}/{options.get('mode', 'nearest-neighbor')}/{tag}", "resample2d", data_type,
                   [operand("x")], options or None, inputs={"x": x},
                   expected={"y": (resample2d(x, options), data_type)}, metric="ULP", value=value)


def _resample_cases(rng):
    cases = [resample_case(rng, "default-options", (1, 2, 3, 4))]
    for mode in ("nearest-neighbor", "linear"):
        m = {"mode": mode}
        cases += [
            resample_case(rng, "scales-2", (1, 2, 3, 4), scales=[2.0, 2.0], **m),
            resample_case(rng, "scales-0.5", (2, 2, 6, 8), scales=[0.5, 0.5], **m),
            resample_case(rng, "scales-1.5-0.7", (1, 3, 5, 7), scales=[1.5, 0.7], **m),
            resample_case(rng, "sizes", (1, 2, 4, 5), sizes=[7, 3], **m),
            resample_case(rng, "sizes-ties", (1, 1, 2, 6), sizes=[3, 4], **m),
            resample_case(rng, "sizes-ignore-scales", (1, 2, 3, 3), sizes=[5, 6], scales=[3.0, 0.5], **m),
            resample_case(rng, "axes-1-2", (1, 5, 4, 3), scales=[1.6, 2.0], axes=[1, 2], **m),
            resample_case(rng, "axes-0-1", (3, 4, 2, 2), sizes=[5, 2], axes=[0, 1], **m),
            resample_case(rng, "axes-3-2", (1, 2, 4, 6), sizes=[4, 7], axes=[3, 2], **m),
            resample_case(rng, "axes-0-3", (2, 1, 2, 3), scales=[2.5, 1.5], axes=[0, 3], **m),
            resample_case(rng, "upsample-large", (1, 2, 7, 9), sizes=[20, 31], **m),
            resample_case(rng, "scales-2", (1, 2, 3, 5), data_type="float16", scales=[2.0, 2.0], **m),
        ]
    return cases


def graph_cases() -> list[dict]:
    """averagePool2d, l2Pool2d, maxPool2d and resample2d graph cases."""
    rng = np.random.default_rng(SEED)
    return _pool_cases(rng) + _resample_cases(rng)


def _js(op, shape, options="", data_type="float32"):
    return (f"(builder) => builder.{op}(builder.input('x', {{dataType: '{data_type}', shape: {list(shape)}}}), "
            f"{{label: 'L'{options}}})")


def validation_cases() -> list[dict]:
    """Pooling and resample2d inputs and options the spec refuses."""
    x = (1, 2, 5, 5)
    pool = {
        "input-rank-3": (x[1:], ""),
        "window-length-1": (x, ", windowDimensions: [2]"),
        "window-zero": (x, ", windowDimensions: [0, 2]"),
        "window-larger-than-input": (x, ", windowDimensions: [6, 3]"),
        "padding-length-2": (x, ", padding: [1, 1]"),
        "strides-length-1": (x, ", strides: [2]"),
        "strides-zero": (x, ", strides: [0, 1]"),
        "dilations-length-3": (x, ", dilations: [1, 1, 1]"),
        "dilations-zero": (x, ", dilations: [1, 0]"),
        "dilations-too-large": (x, ", windowDimensions: [2, 2], dilations: [5, 1]"),
        "output-sizes-neither-floor-nor-ceil": (x, ", windowDimensions: [2, 2], strides: [4, 4], outputSizes: [3, 3]"),
        "output-sizes-length-3": (x, ", windowDimensions: [2, 2], strides: [4, 4], outputSizes: [1, 1, 1]"),
        "output-sizes-zero": (x, ", windowDimensions: [2, 2], strides: [4, 4], outputSizes: [0, 2]"),
        "layout": (x, ", layout: 'hwcn'"),
        "output-shape-rounding": (x, ", outputShapeRounding: 'round'"),
    }
    cases = [validation_case(f"{op}/validation/{name}", op, _js(op, shape, opts), "TypeError", "L")
             for op in POOLS for name, (shape, opts) in pool.items()]
    cases += [
        validation_case("averagePool2d/validation/int32", "averagePool2d", _js("averagePool2d", x, data_type="int32"), "TypeError", "L"),
        validation_case("l2Pool2d/validation/uint32", "l2Pool2d", _js("l2Pool2d", x, data_type="uint32"), "TypeError", "L"),
        validation_case("maxPool2d/validation/int64", "maxPool2d", _js("maxPool2d", x, data_type="int64"), "TypeError", "L"),
    ]
    resample = {
        "input-rank-3": ((2, 5, 5), ""),
        "input-int32": (x, "", "int32"),
        "mode": (x, ", mode: 'cubic'"),
        "scales-zero": (x, ", scales: [0, 1]"),
        "scales-negative": (x, ", scales: [1, -2]"),
        "scales-length-1": (x, ", scales: [2]"),
        "scales-nan": (x, ", scales: [NaN, 1]"),
        "sizes-length-3": (x, ", sizes: [2, 2, 2]"),
        "sizes-zero": (x, ", sizes: [0, 2]"),
        "axes-duplicate": (x, ", axes: [2, 2]"),
        "axes-out-of-range": (x, ", axes: [2, 4]"),
        "axes-length-1": (x, ", axes: [2]"),
        "output-size-zero": (x, ", scales: [0.1, 1]"),
    }
    cases += [validation_case(f"resample2d/validation/{name}", "resample2d", _js("resample2d", *spec), "TypeError", "L")
              for name, spec in resample.items()]
    cases += [validation_case(
        f"{op}/validation/after-build", op,
        f"async (builder) => {{ const x = builder.input('x', {{dataType: 'float32', shape: [1, 2, 4, 4]}}); "
        f"await builder.build({{y: builder.{op}(x)}}); return builder.{op}(x, {{label: 'L'}}); }}",
        "InvalidStateError", "L") for op in (*POOLS, "resample2d")]
    return cases
