"""batchNormalization, instanceNormalization and layerNormalization in the browser against the
float64 NumPy references (tests/reference/normalization.py).

The cases (every option, layouts, axes orders, scale/bias present or not, short and long rows,
NaN/Inf, validation errors) are the conformance cases of tests/conformance/cases/normalization.py;
bounds are those of tolerances.md (see that module).
"""
from __future__ import annotations

import pytest

from tests.conformance.cases import normalization as norm_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


@pytest.mark.parametrize("kernel", ["invocation", "workgroup"])
@pytest.mark.parametrize("op", ["batchNormalization", "instanceNormalization", "layerNormalization"])
def test_graph_cases(webnn_page, server_url, op, kernel):
    """Every graph case of the op within its bound, with one invocation and with one workgroup
    per normalised row (batchNormalization has a single element-wise kernel)."""
    if op == "batchNormalization" and kernel == "workgroup":
        pytest.skip("batchNormalization has no row kernel")
    cases = [c for c in norm_cases.graph_cases() if c["op"] == op]
    assert cases
    assert_all_pass(run_cases(webnn_page, server_url, cases, {"rows": kernel}))


def test_validation_cases(webnn_page, server_url):
    """Bad axes, shapes, layouts and data types: a TypeError naming the label."""
    assert_all_pass(run_cases(webnn_page, server_url, norm_cases.validation_cases()))
