"""gruCell, gru, lstmCell and lstm in the browser against the float64 NumPy references
(tests/reference/recurrent.py, written from the spec's emulation code).

The cases (layouts, directions, returnSequence, initial states, peepholes, resetAfter,
activations, biases present or not, validation errors) are the conformance cases of
tests/conformance/cases/recurrent.py; the bound is derived there from the operators the
recurrent operators decompose into (tolerances.md has no row for them).
"""
from __future__ import annotations

import pytest

from tests.conformance.cases import recurrent as recurrent_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


@pytest.mark.parametrize("op", ["gruCell", "gru", "lstmCell", "lstm"])
def test_graph_cases(webnn_page, server_url, op):
    """Every graph case of the op within its bound."""
    cases = [c for c in recurrent_cases.graph_cases() if c["op"] == op]
    assert cases
    assert_all_pass(run_cases(webnn_page, server_url, cases))


def test_validation_cases(webnn_page, server_url):
    """Bad shapes, steps, directions, layouts and activations: a TypeError naming the label."""
    assert_all_pass(run_cases(webnn_page, server_url, recurrent_cases.validation_cases()))
