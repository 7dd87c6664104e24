"""Float64 NumPy references for the reductions, argMin/argMax and cumulativeSum.

Spec sections: "Reduction operations", "argMin/argMax operations", "cumulativeSum" of
the WebNN spec. Options are dicts keyed by the spec's dictionary members
(MLReduceOptions, MLArgMinMaxOptions, MLCumulativeSumOptions) with the spec's defaults.
Float inputs are computed in float64; integer inputs in int64 (uint64 in uint64), wrapping
modulo 2^64 as the kernels do, left for the caller to cast to the output type.
"""
from __future__ import annotations

import numpy as np


def _prepare(x):
    """float64 for floats; int64 for integers (uint64 kept: its arithmetic wraps modulo 2^64)."""
    x = np.asarray(x)
    if x.dtype == np.uint64:
        return x
    return x.astype(np.int64) if x.dtype.kind in "iu" else x.astype(np.float64)


def _axes(x, options):
    """MLReduceOptions.axes: None = all axes; [] = none (each element reduced alone)."""
    axes = (options or {}).get("axes")
    return tuple(range(x.ndim)) if axes is None else tuple(int(a) for a in axes)


def reduce(op: str, x, options=None) -> np.ndarray:
    """The reduction ``op`` (e.g. "reduceSum") of ``x`` over MLReduceOptions {axes, keepDimensions}.

    * L1: sum |x|; L2: sqrt(sum x^2); LogSum: log(sum x); LogSumExp: log(sum exp x);
      Max / Min; Mean: sum / count; Product; Sum; SumSquare: sum x^2.
    """
    x = _prepare(x)
    axes = _axes(x, options)
    keep = bool((options or {}).get("keepDimensions", False))
    kw = {"axis": axes, "keepdims": keep}
    with np.errstate(all="ignore"):
        if op == "reduceL1":
            return np.sum(np.abs(x), **kw)
        if op == "reduceL2":
            return np.sqrt(np.sum(x * x, **kw))
        if op == "reduceLogSum":
            return np.log(np.sum(x, **kw))
        if op == "reduceLogSumExp":
            return np.log(np.sum(np.exp(x), **kw))
        if op == "reduceMax":
            return np.max(x, **kw)
        if op == "reduceMin":
            return np.min(x, **kw)
        if op == "reduceMean":
            return np.mean(x, **kw)
        if op == "reduceProduct":
            return np.prod(x, **kw)
        if op == "reduceSum":
            return np.sum(x, **kw)
        if op == "reduceSumSquare":
            return np.sum(x * x, **kw)
    raise ValueError(f"unknown reduction {op}")


def _arg(fn, x, axis, options):
    x = np.asarray(x)
    keep = bool((options or {}).get("keepDimensions", False))
    with np.errstate(all="ignore"):
        idx = fn(x, axis=axis)  # first occurrence on ties; a NaN wins (NumPy)
    return np.expand_dims(idx, axis) if keep else idx


def argMax(x, axis: int, options=None) -> np.ndarray:
    """Index of the largest value along ``axis`` (first on ties, first NaN if any), int64."""
    return _arg(np.argmax, x, axis, options).astype(np.int64)


def argMin(x, axis: int, options=None) -> np.ndarray:
    """Index of the smallest value along ``axis`` (first on ties, first NaN if any), int64."""
    return _arg(np.argmin, x, axis, options).astype(np.int64)


def cumulativeSum(x, axis: int, options=None) -> np.ndarray:
    """Running sums along ``axis``; MLCumulativeSumOptions {exclusive, reversed}: exclusive
    sums start at 0 and leave out the current element; reversed sums run from the end."""
    x = _prepare(x)
    options = options or {}
    if options.get("reversed", False):
        x = np.flip(x, axis)
    with np.errstate(all="ignore"):
        y = np.cumsum(x, axis=axis)
    if options.get("exclusive", False):
        zeros = np.zeros_like(np.take(y, [0], axis=axis))
        y = np.concatenate([zeros, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    if options.get("reversed", False):
        y = np.flip(y, axis)
    return y
