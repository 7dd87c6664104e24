"""Whether the committed conformance cases are what the generators produce, on any machine.

Why not a byte comparison: the float64 references of the transcendental operators (``log``,
``exp``, ``tanh``, ``sin``, ``erf`` …) come from NumPy, whose float64 loops take CPU-specific SIMD
paths (AVX-512, AVX2, NEON, or scalar libm). Their last bits differ between machines, and so,
rarely, does the rounding of a reference to float32/float16 — by one unit in the last place of
the output type. The committed JSON is generated once; regenerating it on another CPU must not
make the suite red. The browser's tolerance for these operators is far wider (e.g. ``log``:
1,340 ULP of float32 in ``shared/reference/tolerances.md``), so a one-ULP wobble of the reference
says nothing about the implementation.

So :func:`differences` compares exactly everything that must be exact — case names, operators,
graphs, options, tolerances, every input tensor, and integer and boolean expected outputs — and
floating-point expected outputs within :data:`FLOAT_ULP` unit in the last place of their own type
(exactly where the case's tolerance is 0), with NaN only equal to NaN and ±Inf and ±0 only equal
to themselves. A change to a generator, an input, an
option or a reference beyond that bound is still reported.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tests.graph_runner import decode_tensor

#: How far (in units in the last place of the output's own type) a floating-point expected value
#: may move between machines. One: a float64 reference that differs in its last bits rounds to the
#: float32/float16 neighbour at most.
FLOAT_ULP = 1

_ORDERED_INT = {"float32": np.int32, "float16": np.int16}


def _ordered(values: np.ndarray, data_type: str) -> np.ndarray:
    """Maps floats to integers whose difference counts representable values between them."""
    bits = values.view(_ORDERED_INT[data_type]).astype(np.int64)
    sign_mask = np.int64(np.iinfo(_ORDERED_INT[data_type]).max)
    return np.where(bits < 0, -(bits & sign_mask), bits)


def float_tensor_difference(committed: dict, fresh: dict, ulp: int = FLOAT_ULP) -> str | None:
    """Why two encoded float32/float16 tensors differ by more than ``ulp`` units in the last
    place, or None. NaN must meet NaN (any sign), ±Inf and ±0 must match exactly."""
    a, b = decode_tensor(committed).ravel(), decode_tensor(fresh).ravel()
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if (nan_a != nan_b).any():
        return f"NaN at element {int(np.argmax(nan_a != nan_b))}"
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if (inf_a != inf_b).any() or (a[inf_a] != b[inf_a]).any():
        return f"±Inf at element {int(np.argmax((inf_a != inf_b) | (inf_a & (a != b))))}"
    zero_a, zero_b = a == 0, b == 0
    if (zero_a != zero_b).any() or (np.signbit(a[zero_a]) != np.signbit(b[zero_a])).any():
        return f"±0 at element {int(np.argmax((zero_a != zero_b) | (zero_a & (np.signbit(a) != np.signbit(b)))))}"
    finite = ~nan_a & ~inf_a
    ulps = np.abs(_ordered(a, committed["dataType"]) - _ordered(b, committed["dataType"]))
    ulps[~finite] = 0
    if ulps.size and ulps.max() > ulp:
        i = int(np.argmax(ulps))
        return f"element {i}: {a[i]!r} vs {b[i]!r} ({int(ulps[i])} ULP apart)"
    return None


def _is_float_tensor(value: Any) -> bool:
    return (isinstance(value, dict) and value.keys() == {"dataType", "shape", "bytes"}
            and value["dataType"] in _ORDERED_INT)


def differences(committed: Any, fresh: Any, path: str = "", expected: int | None = None) -> list[str]:
    """Paths where ``committed`` (parsed JSON) and ``fresh`` (what the generators give) differ.

    Everything compares exactly, except encoded float32/float16 tensors under a case's
    ``expected`` key, which compare within :data:`FLOAT_ULP` (same shape and type required) —
    or exactly (0 ULP) in a case whose tolerance is 0, where the browser asks for exact bits.
    ``expected`` is the ULP bound in force below an ``expected`` key (None above one).
    """
    if isinstance(committed, dict) and isinstance(fresh, dict):
        if expected is not None and _is_float_tensor(committed) and _is_float_tensor(fresh):
            if committed["dataType"] != fresh["dataType"] or committed["shape"] != fresh["shape"]:
                return [f"{path}: dataType/shape"]
            why = float_tensor_difference(committed, fresh, expected)
            return [f"{path}: {why}"] if why else []
        if committed.keys() != fresh.keys():
            return [f"{path}: keys {sorted(committed.keys() ^ fresh.keys())}"]
        exact = committed.get("tolerance", {}).get("value") == 0 if isinstance(committed.get("tolerance"), dict) else False
        found = []
        for key in committed:
            below = expected if key != "expected" else (0 if exact else FLOAT_ULP)
            found += differences(committed[key], fresh[key], f"{path}.{key}", below)
        return found
    if isinstance(committed, list) and isinstance(fresh, list):
        if len(committed) != len(fresh):
            return [f"{path}: {len(committed)} vs {len(fresh)} items"]
        found = []
        for i, (c, f) in enumerate(zip(committed, fresh)):
            found += differences(c, f, f"{path}[{c['name'] if isinstance(c, dict) and 'name' in c else i}]", expected)
        return found
    if type(committed) is not type(fresh) or committed != fresh:
        # NaN is not a JSON value, so plain equality is exact for everything that reaches here.
        return [f"{path}: {committed!r} vs {fresh!r}"]
    return []
