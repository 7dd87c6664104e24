"""Run many JSON graph descriptions in one page.evaluate, on one MLContext.

SwiftShader makes a page load and a context creation cost about a second, so op-family
tests build their cases as data and run them together::

    results = run_graphs(webnn_page, server_url, [(description, {"x": x}), ...])
    # results[i] is {output name: np.ndarray} or a GraphError for a case that threw

and validation cases (JS that must throw) with :func:`expect_errors`; JS that needs a context of
its own (with forced kernels, say) runs through :func:`run_on_context`.

Folded dispatch grids (more workgroups than one grid dimension takes) are tested end to end at the
device's own limit of 65,535 by tests/test_api.py and the element-wise and movement tests; the
kernels that compute their own (batch, row) from the folded index run on a context whose device
reports a small limit (``workgroup_limit``, :data:`TUNE_CONTEXT_JS`), so that a few hundred
workgroups fold the grid in 2-D or 3-D instead of 70,000 (tens of seconds on SwiftShader).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tests.graph_runner import GraphError, decode_tensor, encode_tensor, open_harness

#: JS function ``async (context, tuning, limit) => void``: sets the context's tuning switches
#: (static/polyfill/tuning.js, through options.js configureContext) to ``tuning`` (e.g.
#: ``{matmul: 'tiled'}``, or null for none) and, when ``limit`` is given, the switch
#: ``workgroupsPerDimension``: compile/lowering.js then folds the grid of any step of more than
#: ``limit`` workgroups (gpu/wgsl.js foldWorkgroups, the same code as at the device's real
#: ``maxComputeWorkgroupsPerDimension``). Only graphs built afterwards see it.
TUNE_CONTEXT_JS = """async (context, tuning, limit) => {
  const {configureContext} = await import('/polyfill/options.js');
  configureContext(context, {tuning: {...(tuning ?? {}), ...(limit ? {workgroupsPerDimension: limit} : {})}});
}"""

_RUN_MANY_JS = """
async ([casesJson, tuning]) => {
  const {runGraph} = await import('/harness/graph_json.js');
  const cases = JSON.parse(casesJson);
  const context = await navigator.ml.createContext();
  if (tuning) await (TUNE_CONTEXT_JS)(context, tuning, null);
  const results = [];
  try {
    for (const c of cases) {
      try {
        results.push({ok: await runGraph(c.description, c.inputs, {context})});
      } catch (e) {
        results.push({error: {name: e?.name ?? typeof e, message: e?.message ?? String(e)}});
      }
    }
  } finally {
    context.destroy();
  }
  return results;
}
""".replace("TUNE_CONTEXT_JS", TUNE_CONTEXT_JS)

_ERRORS_JS = """
async (snippets) => {
  const context = await navigator.ml.createContext();
  const out = [];
  try {
    for (const js of snippets) {
      const builder = new MLGraphBuilder(context);
      try {
        await (0, eval)(js)(builder, context);
        out.push({threw: false});
      } catch (e) {
        out.push({threw: true, name: e?.name ?? typeof e, message: e?.message ?? String(e)});
      }
    }
  } finally {
    context.destroy();
  }
  return out;
}
"""


_ON_CONTEXT_JS = """
async ([js, arg, kernelOverrides, workgroupLimit]) => {
  const context = await navigator.ml.createContext();
  await (TUNE_CONTEXT_JS)(context, kernelOverrides, workgroupLimit);
  try {
    return await (0, eval)(js)(context, arg);
  } finally {
    context.destroy();
  }
}
""".replace("TUNE_CONTEXT_JS", TUNE_CONTEXT_JS)


def run_graphs(page, base_url: str,
               cases: Sequence[tuple[Mapping[str, Any], Mapping[str, np.ndarray]]],
               tuning: Mapping[str, Any] | None = None) -> list[Any]:
    """Build and compute each (description, inputs) case on one context (with the tuning
    switches ``tuning``, static/polyfill/tuning.js, when given).

    Returns:
        One entry per case: ``{output name: np.ndarray}``, or the :class:`GraphError`
        the case raised (build or compute).
    """
    open_harness(page, base_url)
    payload = [{"description": d, "inputs": {n: encode_tensor(a) for n, a in inputs.items()}}
               for d, inputs in cases]
    raw = page.evaluate(_RUN_MANY_JS, [json.dumps(payload), dict(tuning) if tuning else None])
    results: list[Any] = []
    for r in raw:
        if "error" in r:
            results.append(GraphError(r["error"]["name"], r["error"]["message"]))
        else:
            results.append({name: decode_tensor(v) for name, v in r["ok"].items()})
    return results


def expect_errors(page, base_url: str, snippets: Sequence[str]) -> list[dict[str, Any]]:
    """Run ``(builder, context) => ...`` JS snippets, each with a fresh MLGraphBuilder.

    Returns:
        One ``{"threw": bool, "name": ..., "message": ...}`` per snippet.
    """
    open_harness(page, base_url)
    return page.evaluate(_ERRORS_JS, list(snippets))


def run_on_context(page, base_url: str, js: str, arg: Any = None,
                   kernel_overrides: Mapping[str, str] | None = None, workgroup_limit: int | None = None) -> Any:
    """Run the JS function ``js``, ``async (context, arg) => ...``, on a fresh MLContext whose
    tuning switches (static/polyfill/tuning.js) are ``kernel_overrides`` (e.g. ``{"rows": "workgroup"}``) and whose
    grids fold at ``workgroup_limit`` workgroups per dimension (:data:`TUNE_CONTEXT_JS`;
    None: its own 65,535), destroyed afterwards; returns what the function returns
    (JSON-serialisable)."""
    open_harness(page, base_url)
    return page.evaluate(_ON_CONTEXT_JS, [js, arg, kernel_overrides, workgroup_limit])


# ------------------------------------------------------------ op-family test helpers

#: every MLOperandDataType (float16/int8/uint8 cross the graph boundary conversions)
ALL_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
NP = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "uint32": np.uint32,
      "int64": np.int64, "uint64": np.uint64, "int8": np.int8, "uint8": np.uint8}


def typed_rows(table, every):
    """Each row of an op's case table with the data types it runs in: yields (k, j, row,
    data_type) for row k and every ``every``-th type of ALL_TYPES from the (k % every)-th, j
    counting those types (so successive rows cover the types in turn)."""
    for k, row in enumerate(table):
        for j, data_type in enumerate(ALL_TYPES[k % every::every]):
            yield k, j, row, data_type


def data(shape, data_type, seed=0):
    """Distinct values of ``data_type`` (floats include NaN, ±Inf, -0; int64 beyond 32 bits)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    dtype = NP[data_type]
    if data_type in ("float32", "float16"):
        x = (rng.standard_normal(n) * 100).astype(dtype)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype)
        x[: min(n, 4)] = specials[: min(n, 4)] if n >= 8 else x[: min(n, 4)]
    elif data_type in ("int64", "uint64"):
        x = (np.arange(n, dtype=np.int64) * 0x100000001 + (-(2 ** 40) if data_type == "int64" else 7)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=np.int64).astype(dtype)
    return x.reshape(shape)


def single(op, x, *args, options=None, outputs="y", inputs=None):
    """Description of one op on input ``x`` (plus extra named inputs), outputs ``outputs``."""
    names = outputs if isinstance(outputs, list) else [outputs]
    desc = {
        "inputs": {"x": {"dataType": dtype_name(x), "shape": list(x.shape)}},
        "operators": [{"op": op, "args": [{"operand": "x"}, *args], "outputs": outputs}],
        "outputs": names,
    }
    if options is not None:
        desc["operators"][0]["options"] = options
    return desc, {"x": x, **(inputs or {})}


def dtype_name(x):
    """The WebNN dataType name of an array."""
    return next(k for k, v in NP.items() if np.dtype(v) == x.dtype)


def assert_bits(actual, expected):
    """Bit-exact equality (NaN payloads and -0 included), with dtype and shape."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    unsigned = np.dtype(f"u{expected.dtype.itemsize}")
    bad = np.flatnonzero(np.ascontiguousarray(actual).view(unsigned) != np.ascontiguousarray(expected).view(unsigned))
    assert bad.size == 0, f"{bad.size} elements differ, first at {bad[:5]}: {actual.flat[bad[:5]]} vs {expected.flat[bad[:5]]}"


def check_all(page, server_url, cases, tuning=None):
    """cases: (description, inputs, {output: expected}) triples, all run in one batch (on a
    context with the tuning switches ``tuning`` when given)."""
    results = run_graphs(page, server_url, [(d, i) for d, i, _ in cases], tuning)
    failures = []
    for (desc, _, expected), result in zip(cases, results):
        op = desc["operators"][-1]
        tag = f"{op['op']} {op.get('args')[1:]} {op.get('options')} {[list(v.shape) for v in _.values()]}"
        if isinstance(result, GraphError):
            failures.append(f"{tag}: {result}")
            continue
        for name, want in expected.items():
            try:
                assert_bits(result[name], want)
            except AssertionError as e:
                failures.append(f"{tag} -> {name}: {e}")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures[:20])


def check_errors(page, server_url, snippets):
    """Each (js, error name) must throw that error; TypeErrors must carry the label [L]."""
    outcomes = expect_errors(page, server_url, [js for js, _ in snippets])
    failures = []
    for (js, name), out in zip(snippets, outcomes):
        if not out["threw"] or out["name"] != name or (name == "TypeError" and "[L]" not in out["message"]):
            failures.append(f"{js}\n   -> {out}")
    assert not failures, f"{len(failures)} of {len(snippets)} did not throw as expected:\n" + "\n".join(failures)


def inp(data_type, shape, name="x"):
    """JS creating an input operand on `builder` (for validation snippets)."""
    return f"builder.input('{name}', {{dataType: '{data_type}', shape: {list(shape)}}})"


def op_graph(op, operands, *args, options=None, outputs="y", constants=()):
    """Description of one op whose leading arguments are ``operands`` (name -> array, in order),
    followed by ``args``; names in ``constants`` become inline constants, the others inputs.

    Returns:
        (description, inputs) for :func:`run_graphs`.
    """
    names = outputs if isinstance(outputs, list) else [outputs]
    desc = {"inputs": {}, "constants": {}, "outputs": names,
            "operators": [{"op": op, "args": [*({"operand": n} for n in operands), *args], "outputs": outputs}]}
    if options is not None:
        desc["operators"][0]["options"] = options
    inputs = {}
    for name, array in operands.items():
        spec = {"dataType": dtype_name(array), "shape": list(array.shape)}
        if name in constants:
            desc["constants"][name] = {**spec, "bytes": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()}
        else:
            desc["inputs"][name] = spec
            inputs[name] = array
    return desc, inputs
