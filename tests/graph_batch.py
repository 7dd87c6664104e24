"""Run many JSON graph descriptions in one page.evaluate, on one MLContext.

SwiftShader makes a page load and a context creation cost about a second, so op-family
tests build their cases as data and run them together::

    results = run_graphs(webnn_page, server_url, [(description, {"x": x}), ...])
    # results[i] is {output name: np.ndarray} or a GraphError for a case that threw

and validation cases (JS that must throw) with :func:`expect_errors`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tests.graph_runner import GraphError, decode_tensor, encode_tensor, open_harness

_RUN_MANY_JS = """
async (casesJson) => {
  const {runGraph} = await import('/harness/graph_json.js');
  const cases = JSON.parse(casesJson);
  const context = await navigator.ml.createContext();
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
"""

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


def run_graphs(page, base_url: str,
               cases: Sequence[tuple[Mapping[str, Any], Mapping[str, np.ndarray]]]) -> list[Any]:
    """Build and compute each (description, inputs) case on one context.

    Returns:
        One entry per case: ``{output name: np.ndarray}``, or the :class:`GraphError`
        the case raised (build or compute).
    """
    open_harness(page, base_url)
    payload = [{"description": d, "inputs": {n: encode_tensor(a) for n, a in inputs.items()}}
               for d, inputs in cases]
    raw = page.evaluate(_RUN_MANY_JS, json.dumps(payload))
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
