"""Helpers for writing single-operator conformance cases and running them from pytest.

``op_case`` turns NumPy inputs, the operator call and the float64 reference into a graph case
(format in encode.py); ``run_cases`` runs a list of graph and validation cases in the page
through ``/conformance/runner.js`` on one MLContext and returns the runner's results, so an
op-family test can assert on the very cases the conformance suite ships.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tests.conformance.encode import graph_case, tensor
from tests.graph_batch import TUNE_CONTEXT_JS
from tests.graph_runner import data_type_of, open_harness


def describe(array: np.ndarray) -> dict:
    """``{dataType, shape}`` of a typed NumPy array."""
    return {"dataType": data_type_of(array), "shape": [int(d) for d in array.shape]}


def op_graph(op: str, args: Sequence[Any], options: Mapping[str, Any] | None = None, *,
             inputs: Mapping[str, np.ndarray] | None = None,
             constants: Mapping[str, np.ndarray] | None = None,
             outputs: str | Sequence[str] = "y") -> dict:
    """A JSON graph description of one operator call.

    Args:
        args: the builder method's positional arguments (operands as ``{"operand": name}``).
        options: its options dictionary (operands likewise), or None.
        inputs: graph inputs by name (typed arrays; only dtype and shape are used).
        constants: constants by name (typed arrays, embedded as base64 bytes).
        outputs: the output name, or names for an operator returning a list.
    """
    entry: dict[str, Any] = {"op": op, "args": list(args), "outputs": outputs}
    if options is not None:
        entry["options"] = dict(options)
    names = [outputs] if isinstance(outputs, str) else list(outputs)
    return {
        "inputs": {n: describe(a) for n, a in (inputs or {}).items()},
        "constants": {n: tensor(a, data_type_of(a)) for n, a in (constants or {}).items()},
        "operators": [entry],
        "outputs": names,
    }


def op_case(name: str, op: str, data_type: str, args: Sequence[Any], options: Mapping[str, Any] | None,
            *, inputs: Mapping[str, np.ndarray] | None = None,
            constants: Mapping[str, np.ndarray] | None = None,
            expected: Mapping[str, tuple[np.ndarray, str]], metric: str, value: float) -> dict:
    """A conformance graph case for one operator call.

    Args:
        expected: output name -> (float64 or integer reference values, output data type); the
            values are rounded to that type (encode.to_type).
        metric, value: the tolerance (``"ULP"`` | ``"ATOL"`` | ``"exact"``).
    """
    outs = list(expected)
    graph = op_graph(op, args, options, inputs=inputs, constants=constants,
                     outputs=outs[0] if len(outs) == 1 else outs)
    return graph_case(
        name, op, data_type, graph,
        {n: tensor(a, data_type_of(a)) for n, a in (inputs or {}).items()},
        {n: tensor(values, dt) for n, (values, dt) in expected.items()},
        metric, value)


_RUN_JS = """
async ([casesJson, overrides, withSteps, workgroupLimit]) => {
  const {runGraphCase, runValidationCase} = await import('/conformance/runner.js');
  const {describeGraph} = await import('/polyfill/inspect.js');
  const cases = JSON.parse(casesJson);
  const context = await navigator.ml.createContext();
  await (TUNE_CONTEXT_JS)(context, overrides, workgroupLimit);
  // withSteps: the operators of each step of the graph a case builds, and each step's workgroup
  // grid, read at build (one build serves both the step structure and the values)
  const build = MLGraphBuilder.prototype.build;
  let steps = null;
  let grids = null;
  let sizes = null;
  if (withSteps) {
    MLGraphBuilder.prototype.build = async function (...args) {
      const graph = await build.apply(this, args);
      const described = describeGraph(graph).steps;
      steps = described.map((st) => st.operators.map((o) => o.type));
      grids = described.map((st) => st.workgroups);
      sizes = described.map((st) => st.workgroupSize);
      return graph;
    };
  }
  const results = [];
  try {
    for (const c of cases) {
      steps = grids = sizes = null;
      const r = c.js !== undefined ? await runValidationCase(context, c) : await runGraphCase(context, c);
      results.push(withSteps ? {...r, steps, grids, sizes} : r);
    }
  } finally {
    MLGraphBuilder.prototype.build = build;
    context.destroy();
  }
  return results;
}
""".replace("TUNE_CONTEXT_JS", TUNE_CONTEXT_JS)


def run_cases(page, base_url: str, cases: Sequence[dict], overrides: Mapping[str, str] | None = None,
              steps: bool = False, workgroup_limit: int | None = None) -> list[dict]:
    """Runs graph and validation cases in the harness page on one context.

    Args:
        overrides: the context's tuning switches (static/polyfill/tuning.js), e.g. to force a kernel choice
            (e.g. ``{"matmul": "tiled"}``), so kernels the adapter would not pick are tested too.
        steps: also return, per graph case, ``steps``: the builder operator types of each GPU
            step of the graph it built (as compile/plan.js describeSteps() lists them), and
            ``grids``: each step's workgroup grid ``[x, y, z]``, ``sizes``: its workgroup size
            (invocations).
        workgroup_limit: the tuning switch workgroupsPerDimension: grids fold at this many workgroups a dimension
            (tests.graph_batch.TUNE_CONTEXT_JS), None for its own.

    Returns:
        The runner's result per case: ``{name, pass, worst, detail?, steps?, ...}``.
    """
    open_harness(page, base_url)
    return page.evaluate(_RUN_JS, [json.dumps(list(cases)), dict(overrides) if overrides else None, steps,
                                   workgroup_limit])


def assert_all_pass(results: Sequence[dict]) -> None:
    """Fails with every failing case's name and detail."""
    failures = [f"{r['name']}: {r.get('detail')}" for r in results if not r["pass"]]
    assert not failures, f"{len(failures)} of {len(results)} cases failed:\n" + "\n".join(failures[:60])
