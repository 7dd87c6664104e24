"""Float64 NumPy references for batchNormalization, instanceNormalization, layerNormalization.

Spec sections of the same names in the WebNN spec; options are dicts keyed
by the members of MLBatchNormalizationOptions / MLInstanceNormalizationOptions /
MLLayerNormalizationOptions (scale and bias as arrays) with the spec's defaults. Variance is the
population variance (mean of squared deviations), as in the spec's emulation code.
"""
from __future__ import annotations

import numpy as np


def _f64(x):
    return None if x is None else np.asarray(x, dtype=np.float64)


def _cast_epsilon(options, data_type):
    eps = float((options or {}).get("epsilon", 1e-5))
    return float(np.float32(eps)) if data_type == "float32" else float(np.float16(eps))


def batchNormalization(x, mean, variance, options=None, data_type="float32"):
    """scale * ((x - mean) / sqrt(variance + epsilon)) + bias along options["axis"] (default 1)."""
    options = options or {}
    x = _f64(x)
    axis = int(options.get("axis", 1))
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    per = lambda v: _f64(v).reshape(shape)  # noqa: E731
    with np.errstate(all="ignore"):
        y = (x - per(mean)) / np.sqrt(per(variance) + _cast_epsilon(options, data_type))
        if options.get("scale") is not None:
            y = per(options["scale"]) * y
        if options.get("bias") is not None:
            y = y + per(options["bias"])
    return y


def _normalize(x, axes, epsilon):
    mean = np.mean(x, axis=axes, keepdims=True)
    variance = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon)


def instanceNormalization(x, options=None, data_type="float32"):
    """Per sample and channel over the spatial dimensions; layout "nchw" (default) or "nhwc"."""
    options = options or {}
    x = _f64(x)
    nchw = options.get("layout", "nchw") == "nchw"
    shape = [1, x.shape[1], 1, 1] if nchw else [1, 1, 1, x.shape[3]]
    with np.errstate(all="ignore"):
        y = _normalize(x, (2, 3) if nchw else (1, 2), _cast_epsilon(options, data_type))
        if options.get("scale") is not None:
            y = _f64(options["scale"]).reshape(shape) * y
        if options.get("bias") is not None:
            y = y + _f64(options["bias"]).reshape(shape)
    return y


def layerNormalization(x, options=None, data_type="float32"):
    """Over options["axes"] (default 1..rank-1); scale/bias shaped as the input's dimensions
    listed in axes, in that order."""
    options = options or {}
    x = _f64(x)
    axes = options.get("axes")
    axes = list(range(1, x.ndim)) if axes is None else [int(a) for a in axes]

    def param(v):
        # move the parameter's dimensions (in axes order) to their input positions
        v = _f64(v)
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        v = np.transpose(v, order) if v.ndim else v
        shape = [x.shape[d] if d in axes else 1 for d in range(x.ndim)]
        return v.reshape(shape)

    with np.errstate(all="ignore"):
        y = _normalize(x, tuple(axes), _cast_epsilon(options, data_type))
        if options.get("scale") is not None:
            y = param(options["scale"]) * y
        if options.get("bias") is not None:
            y = y + param(options["bias"])
    return y
