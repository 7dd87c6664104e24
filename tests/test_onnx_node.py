"""A fixed subset of ONNX's own operator tests through ONNX Runtime Web's WebNN EP on the polyfill.

``tests/data/onnx_node_subset.txt`` names 156 cases of onnx 1.23.2's node tests (written by
``make setup`` into ``server/models/generated/onnx-node/``, ``tools/onnx_node_cases.py``), one to
three per operator family (104 families), all of which ORT-web 1.30.0's WebNN EP accepts with its
CPU fallback disabled (29 only with their attribute-like inputs frozen into initializers: those
go to the frozen model directly) and each building one WebNN graph. One page
(``/demos/onnx-node/``) runs them in batches through ORT's WebNN EP only (the full run,
``make test-onnx``, also runs ORT's wasm EP); each must build a WebNN graph (so the polyfill
computes it, not ORT), and every output must equal the case's expected
one within ``tools/onnx_node_tests.compare``'s tolerance (float32 1e-4 + 1e-3·|want|, float16
looser, integers and bools exactly, NaN = NaN). A case that ORT rejects, that throws or that is
wrong fails the test, named with its operator, largest difference and error.
"""

from __future__ import annotations

import re
from pathlib import Path

import base64

import numpy as np
import pytest

from tools.onnx_node_cases import OUT as CASES_DIR, load_index
from tools.onnx_node_tests import classify, compare, load_meta, ort_verdicts, run_on_page

SUBSET = Path(__file__).resolve().parent / "data" / "onnx_node_subset.txt"


def _subset() -> list[tuple[str, str, bool]]:
    """(case, family, frozen) per line of SUBSET (columns two spaces apart)."""
    rows = []
    for line in SUBSET.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, family, *flag = re.split(r"\s{2,}", line.strip())
            rows.append((name, family, flag == ["frozen"]))
    return rows


def test_compare_float32_tolerance_nan_and_inf():
    want = np.array([1.0, -200.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    inside = np.array([1.0 + 1.09e-3, -200.0 - 0.2, np.nan, np.inf, -np.inf, 0.9e-4], np.float32)
    assert compare(inside, want)[0]
    for i, bad in [(0, 1.0 + 2.2e-3), (2, 0.0), (3, 3e38), (4, np.inf), (5, np.nan)]:
        got = want.copy()
        got[i] = bad
        agree, diff, why = compare(got, want)
        assert not agree and diff > 0 and "1 of 6" in why, (i, bad)


def test_compare_float16_is_looser_integers_and_bools_exact():
    want = np.array([0.5, -3.0], np.float16)
    assert compare(np.array([0.5 + 5e-3, -3.0 - 3e-2], np.float16), want)[0]
    assert not compare(np.array([0.5 + 2e-2, -3.0], np.float16), want)[0]
    assert compare(np.array([-2, 7], np.int64), np.array([-2, 7], np.int64)) == (True, 0.0, "")
    assert not compare(np.array([-2, 8], np.int64), np.array([-2, 7], np.int64))[0]
    assert not compare(np.array([1, 0], np.uint8), np.array([True, True]))[0]
    assert not compare(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))[0]  # shape
    assert not compare(np.zeros(2, np.float32), np.zeros(2, np.int32))[0]  # float where ints are due


def _encoded(array):
    return {"name": "y", "type": "float32", "shape": list(array.shape), "dims": list(array.shape),
            "bytes": base64.b64encode(array.astype("<f4").tobytes()).decode()}


def test_classify_separates_ort_webnn_and_wasm_outcomes():
    y = np.array([1.0, 2.0], np.float32)
    meta = {"datasets": [{"outputs": [_encoded(y)]}]}
    right, wrong = {"builds": 1, "outputs": [[_encoded(y)]]}, {"builds": 1, "outputs": [[_encoded(y + 1)]]}
    assert classify({"name": "a", "webnn": right, "wasm": right}, meta)["class"] == "right"
    assert classify({"name": "a", "webnn": wrong, "wasm": right}, meta)["class"] == "wrong"
    assert classify({"name": "a", "webnn": wrong, "wasm": wrong}, meta)["class"] == "wasm-wrong"
    no_kernel = {"stage": "session", "error": "Error: Can't create a session. no kernel"}
    assert classify({"name": "a", "webnn": wrong, "wasm": no_kernel}, meta)["class"] == "wrong"
    threw = classify({"name": "a", "webnn": {"stage": "run", "error": "TypeError: x", "builds": 1}}, meta)
    assert threw["class"] == "error" and threw["accepted"]
    by_ort = classify({"name": "a", "webnn": {"stage": "session", "error": "Error: Can't create a session. CPU EP"}}, meta)
    assert (by_ort["class"], by_ort["rejectedBy"]) == ("rejected", "ort")
    by_webnn = classify({"name": "a", "webnn": {"stage": "session", "error": "Error: Can't create a session. CPU EP",
                                                 "frozenError": "TypeError: [clamp] minValue 2 > maxValue 1"}}, meta)
    assert (by_webnn["class"], by_webnn["rejectedBy"]) == ("rejected", "webnn")
    frozen = classify({"name": "a", "webnn": {**right, "frozen": True}}, meta)
    assert frozen["class"] == "right" and frozen["frozen"]


@pytest.fixture(scope="module")
def index():
    if not (CASES_DIR / "index.json").is_file():
        pytest.fail(f"{CASES_DIR}/index.json is missing: make setup writes the ONNX node test cases "
                    "(python -m tools.onnx_node_cases)")
    return load_index()


def test_subset_names_selected_cases_of_every_family(index):
    cases = {c["name"]: c for c in index["cases"]}
    subset = _subset()
    assert len(subset) >= 150
    assert len({n for n, _, _ in subset}) == len(subset), "a case is listed twice"
    for name, family, frozen in subset:
        assert name in cases, f"{name} is not an onnx {index['onnxVersion']} node test case"
        assert cases[name]["selected"], f"{name} is not selected: {cases[name].get('reason')}"
        assert cases[name]["op"] == family, f"{name} tests {cases[name]['op']}, listed as {family}"
        assert not frozen or cases[name]["frozen"], f"{name} has no attribute-like inputs to freeze"
    assert len({f for _, f, _ in subset}) >= 100  # 104 operator families had right cases with a WebNN graph


def test_ort_verdicts_name_selected_cases_outside_the_subset(index):
    cases = {c["name"]: c for c in index["cases"]}
    verdicts = ort_verdicts()
    assert len(verdicts) >= 20 and all(verdicts.values())
    assert all(cases[name]["selected"] for name in verdicts)
    assert not set(verdicts) & {n for n, _, _ in _subset()}


def test_onnx_node_subset_through_ort_webnn_ep(webnn_page, server_url, index):
    subset = _subset()
    names = [n for n, _, _ in subset]
    results = run_on_page(webnn_page, server_url, names, wasm=False,
                          frozen_first=[n for n, _, frozen in subset if frozen])
    assert [r["name"] for r in results] == names
    family = {n: f for n, f, _ in subset}
    failures = []
    for result in results:
        row = classify(result, load_meta(result["name"]))
        if row["class"] == "right" and not row["builds"]:
            row.update({"class": "no WebNN graph", "error": "ORT computed the outputs without WebNN"})
        if row["class"] != "right":
            diff = row.get("maxDiff")
            failures.append(f"{row['name']} ({family[row['name']]}): {row['class']}"
                            + (f", max diff {diff:.3g}" if diff is not None else "")
                            + f": {row.get('error') or row.get('why') or ''}")
    assert not failures, f"{len(failures)} of {len(subset)} cases not right:\n" + "\n".join(failures)
