"""Layer normalizations written out as reductions and element-wise operators (compile/layer_norm.js):
the step each becomes and its values against the operator-by-operator float64 reference.

The cases are the conformance family ``transformer``'s ``layer-norm/`` cases
(tests/conformance/cases/transformer.py), which test_conformance.py also runs on the adapter's
own plan; here their step lists are checked, and the values again where the product before the
normalization is split along K (hardware adapters split BERT's products; forced here), so the
normalization's step adds the partial sums. ORT's WebNN EP's graph of an opset-14 encoder:
tests/test_ort_webnn_ep.py.
"""
from __future__ import annotations

import pytest

from tests.conformance.cases import transformer as transformer_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

#: the operators of a written-out layer normalization, PyTorch's order (pow, div)
LAYER_NORM = ["reduceMean", "sub", "pow", "reduceMean", "add", "sqrt", "div"]


def _cases(data_type):
    return {c["name"].split("/layer-norm/")[-1]: c for c in transformer_cases.graph_cases()
            if "/layer-norm/" in c["name"] and c["dataType"] == data_type}


def _steps(results, cases):
    by_name = {r["name"]: r for r in results}
    return {name: by_name[c["name"]]["steps"] for name, c in cases.items()}


def test_written_out_layer_norms_are_one_step(webnn_page, server_url):
    """Each written-out layer normalization (PyTorch's order; mul(d, d), the reciprocal and every
    operand order swapped, over two axes; no scale or bias) and RMS norm (ORT's WebNN EP's
    SimplifiedLayerNormalization; mul(x, x) and the reciprocal) is one step that lists its
    operators in graph order; a scale that varies along the rows stays a step of its own with the
    bias add; with the mean a graph output or d also read by a relu the mean and the subtraction
    keep their steps and the rest is d's RMS norm, one step; an exponent of 3 leaves every
    reduction a step of its own. The values pass in both data types (float16: the squares of
    ±300 overflow to +Inf as the operators compute them one by one, so those rows are the bias
    alone)."""
    cases = _cases("float32")
    results = run_cases(webnn_page, server_url, list(cases.values()) + list(_cases("float16").values()), steps=True)
    assert_all_pass(results)
    got = _steps(results, cases)
    assert got["pytorch"] == [LAYER_NORM + ["mul", "add"]], got
    assert got["mul-square-reciprocal-swapped"] == [
        ["reduceMean", "sub", "mul", "reduceMean", "add", "sqrt", "reciprocal", "mul", "mul", "add"]], got
    assert got["rank4-no-scale-eps0"] == [LAYER_NORM], got
    assert got["large-rows"] == [LAYER_NORM + ["add"]], got
    assert got["matmul-bias-residual"] == [["matmul", "add", "add"], LAYER_NORM + ["mul", "add"]], got
    assert got["scale-per-row"] == [LAYER_NORM, ["mul", "add"]], got
    # RMS norms: one step each; the residual add reading x stays a step of its own
    assert got["rms-ort-simplified"] == [["pow", "reduceMean", "add", "sqrt", "div", "mul"], ["add"]], got
    assert got["rms-mul-square-reciprocal"] == [["mul", "reduceMean", "add", "sqrt", "reciprocal", "mul", "mul"]], got
    # the mean a graph output or d read by a relu: no layer norm, but what follows the subtraction
    # is the RMS norm of d; an exponent of 3 is neither
    rms_of_d = [["reduceMean"], ["sub"], ["pow", "reduceMean", "add", "sqrt", "div"]]
    assert got["unfused/mean-is-output"] == rms_of_d, got
    assert got["unfused/d-read-by-relu"][:3] == rms_of_d and len(got["unfused/d-read-by-relu"]) == 4, got
    assert [s for s in got["unfused/exponent-3"] if "reduceMean" in s] == [["reduceMean"], ["reduceMean"]], got


def test_written_out_layer_norm_adds_the_split_partial_sums(webnn_page, server_url):
    """matmul + bias + residual -> a written-out layer normalization, the product split along K
    in 3 ranges: the split step, then one step that adds the partial sums, the bias and residual
    and normalizes (no reduce step, as for the spec's operator: compile/split_norm.js); the
    values pass in both data types."""
    cases = {t: _cases(t)["matmul-bias-residual"] for t in ("float32", "float16")}
    results = run_cases(webnn_page, server_url, list(cases.values()), {"matmul": "tiled", "splitK": 3}, steps=True)
    assert_all_pass(results)
    steps = {r["name"]: r["steps"] for r in results}[cases["float32"]["name"]]
    assert steps == [["matmul", "add", "add"], ["matmul", "add", "add"] + LAYER_NORM + ["mul", "add"]], steps
