"""Conformance cases for conv2d and convTranspose2d (spec §conv2d, §convTranspose2d).

Accuracy bound (tolerances.md): 2 * kh * kw * Cin / groups ULP. A ULP bound relative to each
output only holds where the sum does not cancel, so random data is either *dyadic* (multiples
of 1/8 and 1/16 whose products and sums are exact in float32, any signs) or *sign-structured*
(input channel c carries sign s_c, filter weights of (o, c) carry s_c * r_o, so every product
of output channel o has sign r_o: negative values without cancellation).

The shapes exercise every kernel of ops/conv2d.js: the general one (blocks of 4 output channels
and 4 columns, partial blocks included), depthwise, and the pointwise matrix product, in both
input layouts and every filter layout.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.reference.conv import convTranspose2d
from tests.reference.ops import conv2d

SEED = 20261130

#: filterLayout -> axes permutation from the canonical layout (conv2d: OIHW, convTranspose2d: IOHW)
CONV2D_FILTER_FROM_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}
TRANSPOSE_FILTER_FROM_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (2, 3, 1, 0), "ohwi": (1, 2, 3, 0)}
CONV2D_FILTER_LAYOUTS = tuple(CONV2D_FILTER_FROM_OIHW)
TRANSPOSE_FILTER_LAYOUTS = tuple(TRANSPOSE_FILTER_FROM_IOHW)


def dyadic(rng, shape, scale=8):
    """Multiples of 1/scale in [-1, 1] (float64, exact in float16 and float32)."""
    return rng.integers(-scale, scale + 1, shape) / scale


def sign_structured(rng, x_shape, w_shape, in_axis_w, out_axis_w):
    """(x, w) of uniform magnitudes in [0.1, 1) whose products share one sign per output channel.

    x is NCHW; w is canonical with its input-channel axis ``in_axis_w`` and output-channel axis
    ``out_axis_w`` (OIHW: 1, 0; IOHW: 0, 1). With groups, w's input axis is per group, so the
    input-channel signs repeat per group (s_c depends on c % (C / groups)).
    """
    cin_w = w_shape[in_axis_w]
    s = np.where(rng.random(cin_w) < 0.5, -1.0, 1.0)
    r = np.where(rng.random(w_shape[out_axis_w]) < 0.5, -1.0, 1.0)
    x = rng.uniform(0.1, 1.0, x_shape) * np.tile(s, x_shape[1] // cin_w).reshape(1, -1, 1, 1)
    shape = [1] * 4
    shape[in_axis_w] = cin_w
    w_sign = s.reshape(shape)
    shape = [1] * 4
    shape[out_axis_w] = len(r)
    w = rng.uniform(0.1, 1.0, w_shape) * w_sign * r.reshape(shape)
    return x, w, r


def _bias(rng, channels, r, data_type):
    """A dyadic bias; with output-channel signs ``r`` (sign-structured data) it takes those signs."""
    b = dyadic(rng, (channels,), 4) if r is None else rng.integers(1, 5, channels) / 4 * np.resize(r, channels)
    return _typed(b, data_type)


def _typed(values, data_type):
    return np.asarray(values).astype(np.float16 if data_type == "float16" else np.float32)


def conv2d_case(rng, tag, x_shape, w_shape, *, data="dyadic", data_type="float32", bias=True,
                filter_input=False, **options):
    """A conv2d case from an NCHW input shape and an OIHW filter shape; options as MLConv2dOptions
    (inputLayout / filterLayout select the layouts the operands are passed in)."""
    layout = options.get("inputLayout", "nchw")
    filter_layout = options.get("filterLayout", "oihw")
    r = None
    if data == "dyadic":
        x, w = dyadic(rng, x_shape), dyadic(rng, w_shape, 16)
    else:
        x, w, r = sign_structured(rng, x_shape, w_shape, 1, 0)
        if data == "special":
            x.reshape(-1)[[3, 17]] = [np.inf, np.nan]
    x = _typed(x if layout == "nchw" else x.transpose(0, 2, 3, 1), data_type)
    w = _typed(w.transpose(CONV2D_FILTER_FROM_OIHW[filter_layout]), data_type)
    arrays = {"x": x, "w": w}
    opts = dict(options)
    if bias:
        arrays["b"] = _bias(rng, w_shape[0], r, data_type)
        opts["bias"] = operand("b")
    ref = conv2d(x, w, {**options, **({"bias": arrays["b"]} if bias else {})})
    _, cin_g, kh, kw = w_shape
    return op_case(f"conv2d/{data_type}/{tag}", "conv2d", data_type, [operand("x"), operand("w")], opts or None,
                   inputs={n: a for n, a in arrays.items() if n == "x" or (n == "w" and filter_input)},
                   constants={n: a for n, a in arrays.items() if n != "x" and not (n == "w" and filter_input)},
                   expected={"y": (ref, data_type)}, metric="ULP", value=2 * kh * kw * cin_g)


def conv_transpose2d_case(rng, tag, x_shape, w_shape, *, data="dyadic", data_type="float32", bias=True, **options):
    """A convTranspose2d case from an NCHW input shape and an IOHW filter shape."""
    layout = options.get("inputLayout", "nchw")
    filter_layout = options.get("filterLayout", "iohw")
    r = None
    if data == "dyadic":
        x, w = dyadic(rng, x_shape), dyadic(rng, w_shape, 16)
    else:
        x, w, r = sign_structured(rng, x_shape, w_shape, 0, 1)
    x = _typed(x if layout == "nchw" else x.transpose(0, 2, 3, 1), data_type)
    w = _typed(w.transpose(TRANSPOSE_FILTER_FROM_IOHW[filter_layout]), data_type)
    arrays = {"x": x, "w": w}
    opts = dict(options)
    groups = options.get("groups", 1)
    if bias:
        arrays["b"] = _bias(rng, w_shape[1] * groups, r, data_type)
        opts["bias"] = operand("b")
    ref = convTranspose2d(x, w, {**options, **({"bias": arrays["b"]} if bias else {})})
    cin, _, kh, kw = w_shape
    return op_case(f"convTranspose2d/{data_type}/{tag}", "convTranspose2d", data_type, [operand("x"), operand("w")],
                   opts or None, inputs={"x": x}, constants={n: a for n, a in arrays.items() if n != "x"},
                   expected={"y": (ref, data_type)}, metric="ULP", value=2 * kh * kw * cin // groups)


def _conv2d_cases(rng):
    cases = []
    for layout in ("nchw", "nhwc"):
        for fl in CONV2D_FILTER_LAYOUTS:
            lay = {"inputLayout": layout, "filterLayout": fl}
            cases += [
                conv2d_case(rng, f"{layout}-{fl}/general-pad-stride-dilation", (2, 3, 7, 9), (5, 3, 3, 3),
                            padding=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2], **lay),
                conv2d_case(rng, f"{layout}-{fl}/depthwise-3x3-s2-end-padding", (1, 6, 9, 8), (6, 1, 3, 3),
                            groups=6, padding=[0, 1, 0, 1], strides=[2, 2], **lay),
                conv2d_case(rng, f"{layout}-{fl}/pointwise", (2, 19, 5, 7), (10, 19, 1, 1), **lay),
                conv2d_case(rng, f"{layout}-{fl}/groups-2", (1, 4, 6, 5), (6, 2, 2, 3), groups=2,
                            dilations=[2, 1], padding=[1, 1, 0, 2], bias=False, **lay),
            ]
    cases += [
        conv2d_case(rng, "default-options", (1, 2, 5, 5), (1, 2, 3, 3), bias=False),
        conv2d_case(rng, "depthwise-5x5-s2-efficientnet-padding", (1, 8, 11, 11), (8, 1, 5, 5), groups=8,
                    padding=[1, 2, 1, 2], strides=[2, 2]),
        conv2d_case(rng, "depthwise-5x5-nhwc-ihwo", (1, 5, 7, 6), (5, 1, 5, 5), groups=5, padding=[2, 2, 2, 2],
                    inputLayout="nhwc", filterLayout="ihwo"),
        conv2d_case(rng, "depthwise-strides-2x1-padding", (2, 3, 8, 13), (3, 1, 3, 3), groups=3, strides=[2, 1],
                    padding=[1, 0, 2, 1]),
        conv2d_case(rng, "depthwise-dilations-1x2-nhwc", (1, 4, 9, 10), (4, 1, 3, 3), groups=4, dilations=[1, 2],
                    padding=[1, 1, 2, 2], inputLayout="nhwc", filterLayout="hwio"),
        conv2d_case(rng, "depthwise-multiplier-2", (1, 3, 6, 7), (6, 1, 3, 3), groups=3, padding=[1, 1, 1, 1]),
        conv2d_case(rng, "1x1-stride-2", (1, 6, 7, 9), (4, 6, 1, 1), strides=[2, 2]),
        conv2d_case(rng, "1x1-padded", (1, 3, 4, 5), (4, 3, 1, 1), padding=[1, 0, 0, 2]),
        conv2d_case(rng, "pointwise-k70-partial-tiles", (1, 70, 6, 11), (33, 70, 1, 1)),
        conv2d_case(rng, "pointwise-nhwc-hwio-batch-3", (3, 9, 4, 5), (7, 9, 1, 1), inputLayout="nhwc", filterLayout="hwio"),
        conv2d_case(rng, "windows-only-padding", (1, 2, 3, 3), (3, 2, 2, 2), padding=[3, 3, 3, 3]),
        conv2d_case(rng, "kernel-larger-than-input", (1, 1, 3, 4), (2, 1, 5, 5), padding=[2, 2, 2, 2]),
        conv2d_case(rng, "global-output-1x1", (1, 3, 5, 5), (4, 3, 5, 5)),
        conv2d_case(rng, "filter-as-input", (1, 3, 6, 6), (4, 3, 3, 3), filter_input=True, padding=[1, 1, 1, 1]),
        conv2d_case(rng, "filter-as-input-pointwise", (1, 5, 4, 4), (3, 5, 1, 1), filter_input=True),
        conv2d_case(rng, "dilations-3x2", (1, 2, 11, 9), (3, 2, 3, 3), dilations=[3, 2], padding=[2, 1, 0, 3]),
        conv2d_case(rng, "strides-3-end-heavy-padding", (1, 3, 10, 8), (4, 3, 3, 2), strides=[3, 3], padding=[0, 2, 0, 2]),
        conv2d_case(rng, "stem-3to16-s2", (1, 3, 32, 32), (16, 3, 3, 3), strides=[2, 2], padding=[0, 1, 0, 1]),
        conv2d_case(rng, "batch-3-nhwc-groups-2", (3, 4, 5, 6), (6, 2, 3, 3), groups=2, inputLayout="nhwc",
                    filterLayout="ohwi", padding=[1, 1, 1, 1]),
        conv2d_case(rng, "signed-floats-3x3-cin16", (1, 16, 10, 12), (8, 16, 3, 3), data="signed", padding=[1, 1, 1, 1]),
        conv2d_case(rng, "signed-floats-pointwise-cin48", (1, 48, 7, 9), (20, 48, 1, 1), data="signed"),
        conv2d_case(rng, "signed-floats-depthwise-5x5", (1, 7, 9, 10), (7, 1, 5, 5), data="signed", groups=7, padding=[2, 2, 2, 2]),
        conv2d_case(rng, "signed-floats-nhwc-hwio-groups-3", (2, 6, 8, 7), (9, 2, 3, 2), data="signed", groups=3,
                    inputLayout="nhwc", filterLayout="hwio", strides=[1, 2]),
        conv2d_case(rng, "nan-inf-input", (1, 2, 4, 5), (3, 2, 2, 2), data="special", bias=False),
        conv2d_case(rng, "general", (1, 3, 7, 9), (5, 3, 3, 3), data_type="float16", padding=[1, 1, 1, 1]),
        conv2d_case(rng, "depthwise", (1, 4, 6, 7), (4, 1, 3, 3), data_type="float16", groups=4, strides=[2, 2]),
        conv2d_case(rng, "pointwise-nhwc", (1, 12, 5, 6), (8, 12, 1, 1), data_type="float16", inputLayout="nhwc"),
        conv2d_case(rng, "signed-floats", (1, 8, 6, 6), (4, 8, 3, 3), data_type="float16", data="signed"),
    ]
    return cases


def _conv_transpose2d_cases(rng):
    cases = []
    for layout in ("nchw", "nhwc"):
        for fl in TRANSPOSE_FILTER_LAYOUTS:
            lay = {"inputLayout": layout, "filterLayout": fl}
            cases.append(conv_transpose2d_case(rng, f"{layout}-{fl}/strides-padding-dilations", (2, 3, 4, 5), (3, 4, 3, 3),
                                               strides=[2, 3], padding=[1, 0, 0, 2], dilations=[1, 2], **lay))
            cases.append(conv_transpose2d_case(rng, f"{layout}-{fl}/groups-2", (1, 4, 3, 4), (4, 3, 2, 3), groups=2,
                                               strides=[2, 2], bias=False, **lay))
    cases += [
        conv_transpose2d_case(rng, "default-options", (1, 2, 3, 3), (2, 1, 3, 3), bias=False),
        conv_transpose2d_case(rng, "output-padding", (1, 2, 3, 4), (2, 3, 3, 3), strides=[2, 3], outputPadding=[1, 2]),
        conv_transpose2d_case(rng, "output-sizes", (1, 2, 3, 4), (2, 3, 3, 2), strides=[3, 2], outputSizes=[9, 9]),
        conv_transpose2d_case(rng, "output-sizes-nhwc-ohwi", (1, 2, 4, 3), (2, 2, 2, 2), strides=[2, 2], padding=[1, 0, 0, 1],
                              outputSizes=[8, 6], inputLayout="nhwc", filterLayout="ohwi"),
        conv_transpose2d_case(rng, "groups-equal-channels", (1, 4, 5, 5), (4, 1, 3, 3), groups=4, strides=[2, 2], padding=[1, 1, 1, 1]),
        conv_transpose2d_case(rng, "1x1", (2, 5, 3, 4), (5, 3, 1, 1)),
        conv_transpose2d_case(rng, "3x3-same-padding", (1, 3, 6, 5), (3, 2, 3, 3), padding=[1, 1, 1, 1]),
        conv_transpose2d_case(rng, "padding-larger-than-stride", (1, 2, 5, 5), (2, 2, 4, 4), strides=[2, 2], padding=[3, 2, 2, 3]),
        conv_transpose2d_case(rng, "dilations-2-strides-3", (1, 2, 3, 3), (2, 2, 3, 2), dilations=[2, 2], strides=[3, 3]),
        conv_transpose2d_case(rng, "signed-floats", (1, 6, 5, 4), (6, 3, 3, 3), data="signed", strides=[2, 2], padding=[1, 0, 1, 0]),
        conv_transpose2d_case(rng, "signed-floats-groups-3-nhwc", (1, 6, 4, 4), (6, 2, 2, 2), data="signed", groups=3,
                              strides=[2, 1], inputLayout="nhwc", filterLayout="hwoi"),
        conv_transpose2d_case(rng, "strides-padding", (1, 3, 4, 4), (3, 2, 3, 3), data_type="float16", strides=[2, 2], padding=[1, 1, 1, 1]),
    ]
    return cases


def graph_cases() -> list[dict]:
    """conv2d and convTranspose2d graph cases (float32 and float16)."""
    rng = np.random.default_rng(SEED)
    return _conv2d_cases(rng) + _conv_transpose2d_cases(rng)


def _conv_js(op, x_shape, w_shape, options="", x_type="float32", w_type=None, extra=""):
    w_type = w_type or x_type
    return (f"(builder) => {{ const x = builder.input('x', {{dataType: '{x_type}', shape: {list(x_shape)}}}); "
            f"const w = builder.input('w', {{dataType: '{w_type}', shape: {list(w_shape)}}}); {extra}"
            f"return builder.{op}(x, w, {{label: 'L'{options}}}); }}")


def _bias_js(shape, data_type="float32"):
    return f"const b = builder.input('b', {{dataType: '{data_type}', shape: {list(shape)}}}); "


def validation_cases() -> list[dict]:
    """Operands, data types, ranks, options and output sizes the spec refuses."""
    x, w = (1, 4, 6, 6), (6, 4, 3, 3)
    conv = {
        "input-rank-3": _conv_js("conv2d", (4, 6, 6), w),
        "filter-rank-5": _conv_js("conv2d", x, (6, 4, 3, 3, 1)),
        "input-int32": _conv_js("conv2d", x, w, x_type="int32"),
        "filter-data-type": _conv_js("conv2d", x, w, w_type="float16"),
        "bias-data-type": _conv_js("conv2d", x, w, ", bias: b", extra=_bias_js([6], "float16")),
        "bias-shape": _conv_js("conv2d", x, w, ", bias: b", extra=_bias_js([7])),
        "bias-rank-2": _conv_js("conv2d", x, w, ", bias: b", extra=_bias_js([1, 6])),
        "padding-length-2": _conv_js("conv2d", x, w, ", padding: [1, 1]"),
        "padding-negative": _conv_js("conv2d", x, w, ", padding: [1, 1, -1, 1]"),
        "strides-length-3": _conv_js("conv2d", x, w, ", strides: [1, 1, 1]"),
        "strides-zero": _conv_js("conv2d", x, w, ", strides: [1, 0]"),
        "dilations-zero": _conv_js("conv2d", x, w, ", dilations: [0, 1]"),
        "dilations-length-1": _conv_js("conv2d", x, w, ", dilations: [2]"),
        "groups-zero": _conv_js("conv2d", x, w, ", groups: 0"),
        "groups-not-dividing-input-channels": _conv_js("conv2d", x, (6, 1, 3, 3), ", groups: 3"),
        "filter-input-channels": _conv_js("conv2d", x, (6, 2, 3, 3)),
        "output-channels-not-divisible-by-groups": _conv_js("conv2d", x, (3, 2, 3, 3), ", groups: 2"),
        "output-size-zero": _conv_js("conv2d", (1, 4, 2, 6), w),
        "output-size-zero-dilated": _conv_js("conv2d", x, w, ", dilations: [3, 1]"),
        "input-layout": _conv_js("conv2d", x, w, ", inputLayout: 'nhcw'"),
        "filter-layout-of-convTranspose2d": _conv_js("conv2d", x, w, ", filterLayout: 'iohw'"),
        "input-of-another-builder": ("(builder, context) => { const other = new MLGraphBuilder(context); "
                                     "const x = other.input('x', {dataType: 'float32', shape: [1, 1, 3, 3]}); "
                                     "const w = builder.input('w', {dataType: 'float32', shape: [1, 1, 3, 3]}); "
                                     "return builder.conv2d(x, w, {label: 'L'}); }"),
    }
    tx, tw = (1, 4, 3, 3), (4, 2, 3, 3)
    transpose = {
        "input-rank-3": _conv_js("convTranspose2d", (4, 3, 3), tw),
        "input-int32": _conv_js("convTranspose2d", tx, tw, x_type="int32"),
        "filter-data-type": _conv_js("convTranspose2d", tx, tw, w_type="float16"),
        "filter-input-channels": _conv_js("convTranspose2d", tx, (3, 2, 3, 3)),
        "bias-shape": _conv_js("convTranspose2d", tx, tw, ", groups: 2, bias: b", extra=_bias_js([2])),
        "output-padding-not-below-strides": _conv_js("convTranspose2d", tx, tw, ", strides: [2, 2], outputPadding: [2, 0]"),
        "output-padding-length-1": _conv_js("convTranspose2d", tx, tw, ", outputPadding: [0]"),
        "output-sizes-length-3": _conv_js("convTranspose2d", tx, tw, ", outputSizes: [5, 5, 5]"),
        "output-sizes-too-large": _conv_js("convTranspose2d", tx, tw, ", strides: [2, 2], outputSizes: [9, 7]"),
        "output-sizes-too-small": _conv_js("convTranspose2d", tx, tw, ", strides: [2, 2], outputSizes: [6, 7]"),
        "groups-zero": _conv_js("convTranspose2d", tx, tw, ", groups: 0"),
        "filter-layout-of-conv2d": _conv_js("convTranspose2d", tx, tw, ", filterLayout: 'oihw'"),
        "output-size-zero": _conv_js("convTranspose2d", (1, 4, 1, 1), (4, 2, 1, 1), ", padding: [1, 0, 0, 0]"),
    }
    cases = [validation_case(f"conv2d/validation/{n}", "conv2d", js, "TypeError", "L") for n, js in conv.items()]
    cases += [validation_case(f"convTranspose2d/validation/{n}", "convTranspose2d", js, "TypeError", "L")
              for n, js in transpose.items()]
    cases.append(validation_case(
        "conv2d/validation/after-build", "conv2d",
        "async (builder) => { const x = builder.input('x', {dataType: 'float32', shape: [1, 1, 3, 3]}); "
        "const w = builder.constant({dataType: 'float32', shape: [1, 1, 1, 1]}, new Float32Array([2])); "
        "await builder.build({y: builder.conv2d(x, w)}); return builder.conv2d(x, w, {label: 'L'}); }",
        "InvalidStateError", "L"))
    cases.append(validation_case(
        "convTranspose2d/validation/after-build", "convTranspose2d",
        "async (builder) => { const x = builder.input('x', {dataType: 'float32', shape: [1, 1, 3, 3]}); "
        "const w = builder.constant({dataType: 'float32', shape: [1, 1, 2, 2]}, new Float32Array(4)); "
        "await builder.build({y: builder.convTranspose2d(x, w)}); return builder.convTranspose2d(x, w, {label: 'L'}); }",
        "InvalidStateError", "L"))
    return cases
