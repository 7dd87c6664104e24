"""The conformance suite (tests/conformance/): every graph case within its tolerance, every
validation case throwing the spec's error with its label; the comparator itself; the page."""
from __future__ import annotations

import json

import pytest

from tests.conformance.generate import OUT_DIR, collect, render

INDEX = json.loads((OUT_DIR / "index.json").read_text()) if (OUT_DIR / "index.json").exists() else {"families": []}


def test_committed_cases_match_generators():
    """static/conformance/cases/*.json are what the generators produce (deterministic)."""
    files = render(collect())
    for name, text in files.items():
        assert (OUT_DIR / name).read_text() == text, f"{name} is stale: run python -m tests.conformance.generate"


def _open(page):
    page.goto("/conformance/?autorun=0")
    page.wait_for_function("() => typeof window.runConformance === 'function'")


@pytest.mark.parametrize("family", INDEX["families"])
def test_family(webnn_page, family):
    """All cases of one family pass in the browser."""
    _open(webnn_page)
    run = webnn_page.evaluate("(family) => window.runConformance({family})", family)
    failures = [f"{r['name']}: {r.get('detail')}" for r in run["results"] if not r["pass"]]
    counts = INDEX["counts"][family]
    assert len(run["results"]) == counts["graph"] + counts["validation"]
    assert not failures, f"{len(failures)} of {len(run['results'])} cases failed:\n" + "\n".join(failures[:40])


COMPARE_JS = """
async ([a, e, dataType, tolerance]) => {
  const {compare} = await import('/conformance/compare.js');
  const views = {float32: Float32Array, float16: Uint16Array, int32: Int32Array, int64: BigInt64Array};
  const enc = (v) => new Uint8Array(new views[dataType](dataType === 'int64' ? v.map(BigInt) : v).buffer);
  const r = compare(enc(a), enc(e), dataType, tolerance);
  return {pass: r.pass, worst: r.worst};
}
"""


@pytest.mark.parametrize("actual, expected, data_type, tolerance, passes, worst", [
    ([1.0, -2.0], [1.0, -2.0], "float32", {"metric": "ULP", "value": 0}, True, 0),
    ([1.0000001192092896], [1.0], "float32", {"metric": "ULP", "value": 0}, False, 1),
    ([1.0000001192092896], [1.0], "float32", {"metric": "ULP", "value": 1}, True, 1),
    ([-1.4e-45], [1.4e-45], "float32", {"metric": "ULP", "value": 1}, False, 2),
    ([-0.0], [0.0], "float32", {"metric": "ULP", "value": 0}, True, 0),
    ([float("nan")], [float("nan")], "float32", {"metric": "ULP", "value": 0}, True, 0),
    ([float("nan")], [1.0], "float32", {"metric": "ULP", "value": 1000}, False, None),
    ([float("inf")], [3.4028234663852886e38], "float32", {"metric": "ULP", "value": 1000}, False, None),
    ([0x3c01], [0x3c00], "float16", {"metric": "ULP", "value": 0}, False, 1),
    ([0.5], [0.5009765625], "float32", {"metric": "ATOL", "value": 1 / 1024}, True, None),
    ([0.5], [0.502], "float32", {"metric": "ATOL", "value": 1 / 1024}, False, None),
    (["9007199254740993"], ["9007199254740992"], "int64", {"metric": "exact", "value": 0}, False, 1),
    ([-5], [-5], "int32", {"metric": "exact", "value": 0}, True, 0),
])
def test_comparator(webnn_page, actual, expected, data_type, tolerance, passes, worst):
    """The in-browser comparator fails what it must (a comparator that cannot fail is a defect)."""
    webnn_page.goto("/conformance/?autorun=0")
    r = webnn_page.evaluate(COMPARE_JS, [actual, expected, data_type, tolerance])
    assert r["pass"] is passes
    if worst is not None:
        assert r["worst"] == worst


def test_wrong_expectation_fails(webnn_page):
    """A graph case whose expected output is off by one ULP is reported as failed."""
    _open(webnn_page)
    result = webnn_page.evaluate("""async () => {
      const {runGraphCase} = await import('/conformance/runner.js');
      const f32 = (a) => btoa(String.fromCharCode(...new Uint8Array(new Float32Array(a).buffer)));
      const base = {name: 'probe', op: 'add', dataType: 'float32', tolerance: {metric: 'ULP', value: 0},
        graph: {inputs: {a: {dataType: 'float32', shape: [2]}, b: {dataType: 'float32', shape: [2]}},
                operators: [{op: 'add', args: [{operand: 'a'}, {operand: 'b'}], outputs: 'y'}], outputs: ['y']},
        inputs: {a: {dataType: 'float32', shape: [2], bytes: f32([1, 2])}, b: {dataType: 'float32', shape: [2], bytes: f32([0.5, -4])}}};
      const context = await navigator.ml.createContext();
      const good = await runGraphCase(context, {...base, expected: {y: {dataType: 'float32', shape: [2], bytes: f32([1.5, -2])}}});
      const bad = await runGraphCase(context, {...base, expected: {y: {dataType: 'float32', shape: [2], bytes: f32([1.5000001, -2])}}});
      context.destroy();
      return [good.pass, bad.pass, bad.worst];
    }""")
    assert result == [True, False, 1]


def test_page_renders_table(webnn_page):
    """The page runs a filtered set and renders the operator x data type table."""
    if not INDEX["families"]:
        pytest.skip("no conformance cases generated yet")
    webnn_page.goto("/conformance/?op=add")
    webnn_page.wait_for_function("() => window.conformance !== undefined")
    summary = webnn_page.evaluate("() => window.conformance")
    assert summary["failed"] == 0 and summary["passed"] > 0
    assert webnn_page.locator("#table tr").count() >= 2


def test_page_names_an_unknown_operator(webnn_page):
    """Filtering on an operator without cases says so instead of reporting '0 of 0 passed'."""
    webnn_page.goto("/conformance/?op=noSuchOp")
    webnn_page.wait_for_function("() => window.conformance !== undefined")
    status = webnn_page.locator("#status").inner_text()
    assert 'no cases for operator "noSuchOp"' in status and "conv2d" in status
