"""Float64 reference for the sliding-window operators: conv2d and pooling.

Spec sections "conv2d" and "Pooling operations" of
the WebNN spec. Everything is computed in the canonical
NCHW / OIHW layout; other layouts are transposed in and out. Import these
through :mod:`tests.reference.ops`.
"""

from __future__ import annotations

import math

import numpy as np

# filterLayout -> axes permutation that turns it into OIHW
_FILTER_TO_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (3, 2, 0, 1), "ohwi": (0, 3, 1, 2), "ihwo": (3, 0, 1, 2)}


def list_option(options: dict, key: str, default: tuple[int, ...], length: int) -> tuple[int, ...]:
    """Read a list option of ``length`` items (as ints), or ``default`` when it is absent or None.
    Raises ValueError for another length."""
    value = options.get(key)
    if value is None:
        return default
    value = tuple(int(v) for v in value)
    if len(value) != length:
        raise ValueError(f"{key} must have {length} items, got {value}")
    return value


def window_options(options: dict) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(padding, strides, dilations) of conv2d, convTranspose2d and the pooling operators, with the
    spec's defaults [0, 0, 0, 0], [1, 1], [1, 1]. Raises ValueError for a list of the wrong length."""
    return (list_option(options, "padding", (0, 0, 0, 0), 4), list_option(options, "strides", (1, 1), 2),
            list_option(options, "dilations", (1, 1), 2))


def _to_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    """Return an NCHW view of ``x`` given MLInputOperandLayout ``layout``."""
    if x.ndim != 4:
        raise ValueError(f"input must be 4-D, got shape {x.shape}")
    if layout == "nchw":
        return x
    if layout == "nhwc":
        return x.transpose(0, 3, 1, 2)
    raise ValueError(f"unknown layout {layout!r}")


def _from_nchw(y: np.ndarray, layout: str) -> np.ndarray:
    """Inverse of :func:`_to_nchw` for the output."""
    return y if layout == "nchw" else y.transpose(0, 2, 3, 1)


def _window_taps(padded: np.ndarray, out_hw, window, strides, dilations):
    """Yield, per window tap (i, j), the [N, C, outH, outW] slice of ``padded`` it reads."""
    (oh, ow), (wh, ww), (sh, sw), (dh, dw) = out_hw, window, strides, dilations
    for i in range(wh):
        for j in range(ww):
            y0, x0 = i * dh, j * dw
            yield i, j, padded[:, :, y0:y0 + sh * (oh - 1) + 1:sh, x0:x0 + sw * (ow - 1) + 1:sw]


def conv2d(input, filter, options=None):  # noqa: A002 - spec names
    """Spec "conv2d": 2-D convolution (cross-correlation) with groups and bias.

    ``options``: ``MLConv2dOptions`` {padding=[0,0,0,0] as [beginningHeight,
    endingHeight, beginningWidth, endingWidth], strides=[1,1],
    dilations=[1,1], groups=1, inputLayout="nchw"|"nhwc",
    filterLayout="oihw"|"hwio"|"ohwi"|"ihwo", bias (1-D [outputChannels])}.
    Output size per spatial dim: floor(1 + (in - (k-1)*d - 1 + pb + pe) / s).
    Returns float64 in ``inputLayout``. Raises ValueError on inconsistent shapes.
    """
    options = options or {}
    layout = options.get("inputLayout", "nchw")
    filter_layout = options.get("filterLayout", "oihw")
    padding, strides, dilations = window_options(options)
    groups = int(options.get("groups", 1))
    x = _to_nchw(np.asarray(input, dtype=np.float64), layout)
    w = np.asarray(filter, dtype=np.float64)
    if w.ndim != 4 or filter_layout not in _FILTER_TO_OIHW:
        raise ValueError(f"filter must be 4-D with a known layout, got {w.shape} {filter_layout!r}")
    w = w.transpose(_FILTER_TO_OIHW[filter_layout])
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if groups < 1 or c % groups or c // groups != cg or o % groups or 0 in strides or 0 in dilations:
        raise ValueError(f"conv2d: input {x.shape}, filter(oihw) {w.shape}, groups {groups} do not match")
    out_h = (h - (kh - 1) * dilations[0] - 1 + padding[0] + padding[1]) // strides[0] + 1
    out_w = (wd - (kw - 1) * dilations[1] - 1 + padding[2] + padding[3]) // strides[1] + 1
    if out_h < 1 or out_w < 1:
        raise ValueError(f"conv2d: output size {out_h}x{out_w} is not valid")
    padded = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[1]), (padding[2], padding[3])))
    og = o // groups
    wg = w.reshape(groups, og, cg, kh, kw)
    out = np.zeros((n, groups, og, out_h * out_w))
    for i, j, patch in _window_taps(padded, (out_h, out_w), (kh, kw), strides, dilations):
        patch = patch.reshape(n, groups, cg, out_h * out_w)
        out += np.matmul(wg[None, :, :, :, i, j], patch)
    out = out.reshape(n, o, out_h, out_w)
    bias = options.get("bias")
    if bias is not None:
        bias = np.asarray(bias, dtype=np.float64)
        if bias.shape != (o,):
            raise ValueError(f"conv2d: bias shape {bias.shape} != ({o},)")
        out = out + bias.reshape(1, o, 1, 1)
    return _from_nchw(out, layout)


def _pool(input, options, kind: str) -> np.ndarray:
    """Shared body of the pooling operators (spec "create a pooling operation").

    ``kind`` is "average", "l2" or "max". Window positions in the padding, or
    past the padded input when the output size was rounded up, are ignored:
    they count neither in the average's divisor nor as a maximum.
    """
    options = options or {}
    layout = options.get("layout", "nchw")
    x = _to_nchw(np.asarray(input, dtype=np.float64), layout)
    n, c, h, w = x.shape
    window = list_option(options, "windowDimensions", (h, w), 2)
    # Padding applies with outputSizes too (Chromium and WPT; the 2026-06 draft's reset of padding
    # to zero when outputSizes exists is not followed, see static/polyfill/shape/pool.js).
    padding, strides, dilations = window_options(options)
    if 0 in window or 0 in strides or 0 in dilations:
        raise ValueError("pool2d: windowDimensions, strides and dilations must be non-zero")
    calculated = [
        (size - ((k - 1) * d + 1) + pb + pe) / s + 1
        for size, k, d, pb, pe, s in ((h, window[0], dilations[0], padding[0], padding[1], strides[0]),
                                      (w, window[1], dilations[1], padding[2], padding[3], strides[1]))]
    if options.get("outputSizes") is not None:
        out_hw = list_option(options, "outputSizes", (0, 0), 2)
        if out_hw != tuple(math.floor(v) for v in calculated) and out_hw != tuple(math.ceil(v) for v in calculated):
            raise ValueError(f"pool2d: outputSizes {out_hw} match neither floor nor ceil of {calculated}")
    else:
        rounding = math.ceil if options.get("outputShapeRounding", "floor") == "ceil" else math.floor
        out_hw = tuple(rounding(v) for v in calculated)
    if out_hw[0] < 1 or out_hw[1] < 1:
        raise ValueError(f"pool2d: output size {out_hw} is not valid")
    # Extra rows/columns at the end so that every (rounded-up) window fits.
    extra = [max(0, (o - 1) * s + (k - 1) * d + 1 - (size + pb + pe))
             for o, s, k, d, size, pb, pe in ((out_hw[0], strides[0], window[0], dilations[0], h, padding[0], padding[1]),
                                              (out_hw[1], strides[1], window[1], dilations[1], w, padding[2], padding[3]))]
    pad = ((0, 0), (0, 0), (padding[0], padding[1] + extra[0]), (padding[2], padding[3] + extra[1]))
    valid = np.pad(np.ones((1, 1, h, w)), pad)
    fill = -np.inf if kind == "max" else 0.0
    padded = np.pad(x, pad, constant_values=fill)
    taps = list(_window_taps(padded, out_hw, window, strides, dilations))
    if kind == "max":
        return _from_nchw(np.max(np.stack([t for _, _, t in taps]), axis=0), layout)
    if kind == "l2":
        return _from_nchw(np.sqrt(sum(t * t for _, _, t in taps)), layout)
    count = sum(t for _, _, t in _window_taps(valid, out_hw, window, strides, dilations))
    with np.errstate(invalid="ignore", divide="ignore"):
        return _from_nchw(sum(t for _, _, t in taps) / count, layout)



def averagePool2d(input, options=None):  # noqa: N802 - spec name
    """Spec "averagePool2d": mean over each window of the valid (non-padding) elements.

    ``options``: ``MLPool2dOptions`` {windowDimensions=[H, W] of the input
    (global pooling), padding=[0,0,0,0], strides=[1,1], dilations=[1,1],
    layout="nchw"|"nhwc", outputShapeRounding="floor"|"ceil", outputSizes}.
    """
    return _pool(input, options, "average")


def l2Pool2d(input, options=None):  # noqa: N802 - spec name
    """Spec "l2Pool2d": sqrt of the sum of squares over each window (options as averagePool2d)."""
    return _pool(input, options, "l2")


def maxPool2d(input, options=None):  # noqa: N802 - spec name
    """Spec "maxPool2d": maximum over each window (options as averagePool2d)."""
    return _pool(input, options, "max")
