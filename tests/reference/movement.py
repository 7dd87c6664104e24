"""NumPy reference implementations of the WebNN data-movement operators.

Each function is named after the ``MLGraphBuilder`` method, takes the method's
positional arguments as NumPy arrays / Python values and its options as a dict
keyed by the spec's dictionary member names, applies the spec's defaults and
returns an array of the input's dtype (data movement never changes values, so
no float64 round trip is needed: results are bit-exact copies). Written from the
spec's algorithms (the WebNN spec); shape errors raise
``ValueError``.

Index semantics for gather*/scatter* (the spec leaves out-of-range indices to
clamping): an index ``i`` into a dimension of size ``n`` is first clamped to
``[-n, n - 1]``, then a negative index counts from the end (``i + n``).
scatter*: when several updates hit the same element, the last one in row-major
order of the updates wins.

reshape, transpose and concat are those of ``tests.reference.ops``.
"""

from __future__ import annotations

import numpy as np

from .ops import concat, reshape, transpose  # noqa: F401  (re-exported: one namespace)

PADDING_MODES = ("constant", "edge", "reflection", "symmetric")


def identity(input, options=None):
    """Spec "identity": a copy of the input."""
    return np.array(input, copy=True)


def slice(input, starts, sizes, options=None):  # noqa: A001 - spec name
    """Spec "slice": ``input[starts[d] : starts[d] + sizes[d] : strides[d]]`` per axis."""
    x = np.asarray(input)
    strides = (options or {}).get("strides") or [1] * x.ndim
    if not (len(starts) == len(sizes) == len(strides) == x.ndim):
        raise ValueError("slice: starts, sizes and strides must have one value per axis")
    index = []
    for d in range(x.ndim):
        if sizes[d] < 1 or strides[d] < 1 or starts[d] + sizes[d] > x.shape[d]:
            raise ValueError(f"slice: bad window on axis {d}")
        index.append(np.s_[starts[d]:starts[d] + sizes[d]:strides[d]])
    return x[tuple(index)].copy()


def split(input, splits, options=None):
    """Spec "split": a count that divides ``shape[axis]`` or a list of sizes summing to it."""
    x = np.asarray(input)
    axis = (options or {}).get("axis", 0)
    if axis >= x.ndim:
        raise ValueError("split: axis out of range")
    if isinstance(splits, int):
        if splits < 1 or x.shape[axis] % splits:
            raise ValueError("split: count does not divide the axis")
        sizes = [x.shape[axis] // splits] * splits
    else:
        sizes = list(splits)
        if any(s < 1 for s in sizes) or sum(sizes) != x.shape[axis]:
            raise ValueError("split: sizes do not sum to the axis")
    return [part.copy() for part in np.split(x, np.cumsum(sizes)[:-1], axis=axis)]


def expand(input, newShape, options=None):
    """Spec "expand": unidirectional broadcast of ``input`` to ``newShape``."""
    x = np.asarray(input)
    shape = tuple(int(d) for d in newShape)
    if x.ndim > len(shape) or any(a not in (1, b) for a, b in zip(x.shape[::-1], shape[::-1])):
        raise ValueError(f"expand: {x.shape} is not unidirectionally broadcastable to {shape}")
    return np.broadcast_to(x, shape).copy()


def tile(input, repetitions, options=None):
    """Spec "tile": repeat each axis ``repetitions[d]`` times."""
    x = np.asarray(input)
    if len(repetitions) != x.ndim or any(r < 1 for r in repetitions):
        raise ValueError("tile: one positive repetition per axis")
    return np.tile(x, tuple(repetitions)) if x.ndim else x.copy()


def reverse(input, options=None):
    """Spec "reverse": flip the given axes (all when ``axes`` is absent)."""
    x = np.asarray(input)
    axes = (options or {}).get("axes")
    axes = list(range(x.ndim)) if axes is None else list(axes)
    if len(set(axes)) != len(axes) or any(a >= x.ndim for a in axes):
        raise ValueError("reverse: bad axes")
    return np.flip(x, axis=tuple(axes)).copy() if axes else x.copy()


def pad(input, beginningPadding, endingPadding, options=None):
    """Spec "pad" with ``MLPadOptions`` {mode="constant", value=0}.

    ``value`` must already be cast to the input's type by the caller (the spec casts
    it). "reflection" mirrors without repeating the edge, "symmetric" repeats it.
    """
    x = np.asarray(input)
    options = options or {}
    mode = options.get("mode", "constant")
    if mode not in PADDING_MODES:
        raise ValueError(f"pad: unknown mode {mode}")
    if len(beginningPadding) != x.ndim or len(endingPadding) != x.ndim:
        raise ValueError("pad: one padding per axis")
    for b, e, n in zip(beginningPadding, endingPadding, x.shape):
        if mode == "reflection" and (b >= n or e >= n):
            raise ValueError("pad: reflection padding must be smaller than the dimension")
        if mode == "symmetric" and (b > n or e > n):
            raise ValueError("pad: symmetric padding must not exceed the dimension")
    if x.ndim == 0:
        return x.copy()
    widths = list(zip(beginningPadding, endingPadding))
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=np.array(options.get("value", 0), dtype=x.dtype))
    return np.pad(x, widths, mode={"edge": "edge", "reflection": "reflect", "symmetric": "symmetric"}[mode])


# --- gather / scatter ------------------------------------------------------------------

def _normalize(indices, n):
    """Clamp indices to [-n, n-1], then count negative ones from the end."""
    i = np.clip(np.asarray(indices).astype(np.int64), -n, n - 1)
    return np.where(i < 0, i + n, i)


def gather(input, indices, options=None):
    """Spec "gather": ``output = take(input, indices, axis)``; rank = r(input) + r(indices) - 1."""
    x = np.asarray(input)
    axis = (options or {}).get("axis", 0)
    if axis >= x.ndim:
        raise ValueError("gather: axis out of range")
    return np.take(x, _normalize(indices, x.shape[axis]), axis=axis)


def gatherElements(input, indices, options=None):
    """Spec "gatherElements": ``output[c] = input[c with c[axis] = indices[c]]``."""
    x = np.asarray(input)
    idx = np.asarray(indices)
    axis = (options or {}).get("axis", 0)
    if axis >= x.ndim or idx.ndim != x.ndim or any(
            a != b for d, (a, b) in enumerate(zip(idx.shape, x.shape)) if d != axis):
        raise ValueError("gatherElements: indices shape must match input off axis")
    return np.take_along_axis(x, _normalize(idx, x.shape[axis]), axis=axis)


def _nd_coordinates(x_shape, idx):
    """Normalised leading coordinates of gatherND/scatterND, shape idx.shape."""
    k = idx.shape[-1]
    if k > len(x_shape):
        raise ValueError("ND: coordinate size exceeds the input rank")
    coords = np.empty(idx.shape, dtype=np.int64)
    for t in range(k):
        coords[..., t] = _normalize(idx[..., t], x_shape[t])
    return coords


def gatherND(input, indices, options=None):
    """Spec "gatherND": shape indices.shape[:-1] + input.shape[k:], k = indices.shape[-1]."""
    x = np.asarray(input)
    idx = np.asarray(indices)
    coords = _nd_coordinates(x.shape, idx)
    k = idx.shape[-1]
    flat = coords.reshape(-1, k)
    out = np.stack([x[tuple(c)] for c in flat]) if len(flat) else np.empty((0,) + x.shape[k:], x.dtype)
    return out.reshape(idx.shape[:-1] + x.shape[k:])


def scatterElements(input, indices, updates, options=None):
    """Spec "scatterElements": a copy of input with ``out[c with c[axis]=indices[c]] = updates[c]``."""
    x = np.array(input, copy=True)
    idx = np.asarray(indices)
    upd = np.asarray(updates)
    axis = (options or {}).get("axis", 0)
    if axis >= x.ndim or idx.shape != upd.shape or idx.ndim != x.ndim or any(
            a != b for d, (a, b) in enumerate(zip(idx.shape, x.shape)) if d != axis):
        raise ValueError("scatterElements: shapes do not match")
    norm = _normalize(idx, x.shape[axis])
    for c in np.ndindex(*idx.shape):
        target = list(c)
        target[axis] = norm[c]
        x[tuple(target)] = upd[c]
    return x


def scatterND(input, indices, updates, options=None):
    """Spec "scatterND": a copy of input with the slices at ``indices`` replaced by ``updates``."""
    x = np.array(input, copy=True)
    idx = np.asarray(indices)
    upd = np.asarray(updates)
    k = idx.shape[-1]
    if upd.shape != idx.shape[:-1] + x.shape[k:]:
        raise ValueError("scatterND: updates shape mismatch")
    coords = _nd_coordinates(x.shape, idx).reshape(-1, k)
    slices = upd.reshape((-1,) + x.shape[k:])
    for c, u in zip(coords, slices):
        x[tuple(c)] = u
    return x


# --- selection ----------------------------------------------------------------------------

def triangular(input, options=None):
    """Spec "triangular" {upper=True, diagonal=0} over the last two axes (batched)."""
    x = np.asarray(input)
    if x.ndim < 2:
        raise ValueError("triangular: rank must be at least 2")
    options = options or {}
    diagonal = options.get("diagonal", 0)
    rows, cols = np.indices(x.shape[-2:])
    keep = (cols - rows >= diagonal) if options.get("upper", True) else (cols - rows <= diagonal)
    return np.where(keep, x, np.zeros((), x.dtype))


def where(condition, trueValue, falseValue, options=None):
    """Spec "where": broadcast select, non-zero condition picks trueValue."""
    c = np.asarray(condition)
    t = np.asarray(trueValue)
    f = np.asarray(falseValue)
    np.broadcast_shapes(c.shape, t.shape, f.shape)
    return np.where(c != 0, t, f).astype(t.dtype)
