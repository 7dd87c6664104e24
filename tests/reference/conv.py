"""Float64 reference for convTranspose2d and resample2d.

Spec sections "convTranspose2d" and "resample2d" of the WebNN spec.
conv2d and the pooling operators are in :mod:`tests.reference.pool_conv` (re-exported by
:mod:`tests.reference.ops`). Shape errors raise ``ValueError``.
"""

from __future__ import annotations

import math

import numpy as np

from tests.reference.pool_conv import list_option, window_options

#: convTranspose2d filterLayout -> axes permutation that turns it into IOHW
_TRANSPOSE_FILTER_TO_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (3, 2, 0, 1), "ohwi": (3, 0, 1, 2)}


def convTranspose2d(input, filter, options=None):  # noqa: N802, A002 - spec names
    """Spec "convTranspose2d": the gradient of conv2d with respect to its input.

    ``options``: ``MLConvTranspose2dOptions`` {padding=[0,0,0,0] as [beginningHeight,
    endingHeight, beginningWidth, endingWidth], strides=[1,1], dilations=[1,1],
    outputPadding=[0,0], outputSizes, groups=1, inputLayout="nchw"|"nhwc",
    filterLayout="iohw"|"hwoi"|"ohwi", bias (1-D [outputChannels])}.
    Each input element x[n, ic, iy, ix] adds x * w[ic, oc, ky, kx] to the output at
    (iy * stride + ky * dilation - beginningPadding, ...) when that lands inside the output.
    Output size: (in - 1) * stride + (k - 1) * dilation + 1 - pb - pe + outputPadding,
    or outputSizes. Returns float64 in ``inputLayout``.
    """
    options = options or {}
    layout = options.get("inputLayout", "nchw")
    filter_layout = options.get("filterLayout", "iohw")
    padding, strides, dilations = window_options(options)
    output_padding = list_option(options, "outputPadding", (0, 0), 2)
    groups = int(options.get("groups", 1))
    x = np.asarray(input, dtype=np.float64)
    x = x if layout == "nchw" else x.transpose(0, 3, 1, 2)
    w = np.asarray(filter, dtype=np.float64).transpose(_TRANSPOSE_FILTER_TO_IOHW[filter_layout])
    n, c, h, wd = x.shape
    ci, og, kh, kw = w.shape
    if ci != c or c % groups:
        raise ValueError(f"convTranspose2d: input {x.shape}, filter(iohw) {w.shape}, groups {groups} do not match")
    natural = [(size - 1) * s + (k - 1) * d + 1 - pb - pe
               for size, s, k, d, pb, pe in ((h, strides[0], kh, dilations[0], padding[0], padding[1]),
                                             (wd, strides[1], kw, dilations[1], padding[2], padding[3]))]
    if options.get("outputSizes") is not None:
        out_h, out_w = list_option(options, "outputSizes", (0, 0), 2)
    else:
        out_h, out_w = natural[0] + output_padding[0], natural[1] + output_padding[1]
    if out_h < 1 or out_w < 1:
        raise ValueError(f"convTranspose2d: output size {out_h}x{out_w} is not valid")
    cg = c // groups
    o = og * groups
    # Scatter onto a canvas that starts at -beginningPadding and covers every output position.
    canvas_h = max((h - 1) * strides[0] + (kh - 1) * dilations[0] + 1, padding[0] + out_h)
    canvas_w = max((wd - 1) * strides[1] + (kw - 1) * dilations[1] + 1, padding[2] + out_w)
    canvas = np.zeros((n, groups, og, canvas_h, canvas_w))
    xg = x.reshape(n, groups, cg, h, wd)
    wg = w.reshape(groups, cg, og, kh, kw)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dilations[0], kx * dilations[1]
            contribution = np.einsum("ngchw,gco->ngohw", xg, wg[:, :, :, ky, kx])
            canvas[:, :, :, y0:y0 + (h - 1) * strides[0] + 1:strides[0],
                   x0:x0 + (wd - 1) * strides[1] + 1:strides[1]] += contribution
    out = canvas[:, :, :, padding[0]:padding[0] + out_h, padding[2]:padding[2] + out_w].reshape(n, o, out_h, out_w)
    bias = options.get("bias")
    if bias is not None:
        out = out + np.asarray(bias, dtype=np.float64).reshape(1, o, 1, 1)
    return out if layout == "nchw" else out.transpose(0, 2, 3, 1)


def _source_coordinates(in_size: int, out_size: int):
    """Spec resample2d coordinates per output index: the clamped input coordinate (float64)."""
    o = np.arange(out_size, dtype=np.float64)
    scale = out_size / in_size
    return np.clip((o + 0.5) / scale - 0.5, 0, in_size - 1)


def resample2d(input, options=None):  # noqa: A002 - spec name
    """Spec "resample2d": nearest-neighbor or bilinear resampling along ``axes`` (default [2, 3]).

    ``options``: ``MLResample2dOptions`` {mode="nearest-neighbor"|"linear", scales=[1.0, 1.0],
    sizes, axes=[2, 3]}. The output size along axes[i] is sizes[i], else
    floor(inputSize * scales[i]) with scales as float32; scale = outputSize / inputSize.
    Nearest-neighbor takes index ceil(c - 0.5); linear interpolates between floor(c) and
    ceil(c) along axes[1] (x) and then axes[0] (y), as the spec's formula.
    """
    options = options or {}
    mode = options.get("mode", "nearest-neighbor")
    axes = tuple(int(a) for a in options.get("axes", (2, 3)))
    x = np.asarray(input, dtype=np.float64)
    if options.get("sizes") is not None:
        sizes = tuple(int(s) for s in options["sizes"])
    else:
        scales = [float(np.float32(s)) for s in options.get("scales", (1.0, 1.0))]
        sizes = tuple(math.floor(x.shape[a] * s) for a, s in zip(axes, scales))
    if len(axes) != 2 or len(set(axes)) != 2 or min(sizes) < 1:
        raise ValueError(f"resample2d: bad axes {axes} or sizes {sizes}")
    out = x
    # x (axes[1]) first, then y (axes[0]): out = vy0 * (1 - ty) + vy1 * ty.
    for axis, size in ((axes[1], sizes[1]), (axes[0], sizes[0])):
        c = _source_coordinates(x.shape[axis], size)
        if mode == "nearest-neighbor":
            out = np.take(out, np.ceil(c - 0.5).astype(np.int64), axis=axis)
        elif mode == "linear":
            lo, hi = np.floor(c).astype(np.int64), np.ceil(c).astype(np.int64)
            t = (c - lo).reshape([-1 if d == axis else 1 for d in range(x.ndim)])
            out = np.take(out, lo, axis=axis) * (1 - t) + np.take(out, hi, axis=axis) * t
        else:
            raise ValueError(f"resample2d: unknown mode {mode!r}")
    return out
