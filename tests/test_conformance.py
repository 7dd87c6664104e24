"""The conformance suite (tests/conformance/): every graph case within its tolerance, every
validation case throwing the spec's error with its label; the comparator itself; the page."""
from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conformance.encode import canonical_nans
from tests.conformance.generate import OUT_DIR, collect, render, stale_files
from tests.conformance.staleness import differences

# the tests run JS on the conformance page and leave nothing on it that a later test relies on: one page
pytestmark = pytest.mark.shared_page

INDEX = json.loads((OUT_DIR / "index.json").read_text()) if (OUT_DIR / "index.json").exists() else {"families": []}


def test_committed_cases_match_generators():
    """static/conformance/cases/*.json are what the generators produce, on this machine's CPU.

    Not byte for byte: NumPy's float64 transcendental loops are CPU-specific, so a reference may
    round to the neighbouring float32/float16 on another machine (see
    tests/conformance/staleness.py); expected floats compare within one ULP of their type,
    everything else exactly. NaN signs are canonical in the files (encode.canonical_nans)."""
    stale = stale_files(render(collect()))
    assert not stale, "stale (run python -m tests.conformance.generate): " + "; ".join(
        f"{name}: {found[:3]}" for name, found in stale.items())


def _bump(encoded: dict, index: int, ulps: int) -> dict:
    """A copy of a float32 tensor record with element ``index`` moved by ``ulps`` ULP."""
    raw = bytearray(base64.b64decode(encoded["bytes"]))
    bits = np.frombuffer(raw, "<i4")
    bits[index] += ulps
    return {**encoded, "bytes": base64.b64encode(bytes(raw)).decode("ascii")}


def _float32_case(families, exact: bool = False):
    """The first float32 case with finite, non-empty expected outputs whose tolerance is 0
    (``exact``) or not."""
    for family in families.values():
        for case in family["graph"]:
            if case["dataType"] == "float32" and (case["tolerance"]["value"] == 0) == exact and all(
                    e["dataType"] == "float32" and e["shape"]
                    and np.isfinite(np.frombuffer(base64.b64decode(e["bytes"]), "<f4")).all()
                    for e in case["expected"].values()):
                return case
    raise AssertionError("no finite float32 case")


def test_staleness_check_tolerates_one_ulp_and_catches_real_changes():
    """The check passes a one-ULP move of a float reference (what another CPU may give) and
    NaN of either sign, but reports a two-ULP move, any move in a tolerance-0 case, a changed
    input, an integer output, an option and a removed case."""
    families = json.loads(json.dumps(collect()))
    case = _float32_case(families)
    name, out = next(iter(case["expected"].items()))
    exact_case = _float32_case(families, exact=True)
    exact_name, exact_out = next(iter(exact_case["expected"].items()))
    changed = copy.deepcopy(families)
    next(c for f in changed.values() for c in f["graph"] if c["name"] == exact_case["name"])["expected"][exact_name] = \
        _bump(exact_out, 0, 1)
    assert differences(families, changed), "a 1-ULP move in a tolerance-0 case must count"

    def check(mutate):
        changed = copy.deepcopy(families)
        target = next(c for f in changed.values() for c in f["graph"] if c["name"] == case["name"])
        mutate(changed, target)
        return differences(families, changed)

    assert check(lambda f, c: c["expected"].__setitem__(name, _bump(out, 0, 1))) == []
    assert check(lambda f, c: c["expected"].__setitem__(name, _bump(out, 0, -1))) == []
    assert check(lambda f, c: c["expected"].__setitem__(name, _bump(out, 0, 2)))
    input_name, input_tensor = next(iter(case["inputs"].items()))
    assert check(lambda f, c: c["inputs"].__setitem__(input_name, {
        **input_tensor, "bytes": base64.b64encode(b"\x01" + base64.b64decode(input_tensor["bytes"])[1:]).decode()}))
    assert check(lambda f, c: c["tolerance"].__setitem__("value", c["tolerance"]["value"] + 1))
    assert check(lambda f, c: c["graph"]["operators"][0].__setitem__("op", "sub"))
    assert check(lambda f, c: f[next(iter(f))]["graph"].pop())
    ints = next(c for fam in families.values() for c in fam["graph"]
                if all(e["dataType"] == "int32" and e["shape"] for e in c["expected"].values()))
    int_name, int_out = next(iter(ints["expected"].items()))
    raw = bytearray(base64.b64decode(int_out["bytes"]))
    raw[0] ^= 1
    changed = copy.deepcopy(families)
    next(c for f in changed.values() for c in f["graph"] if c["name"] == ints["name"])["expected"][int_name] = {
        **int_out, "bytes": base64.b64encode(bytes(raw)).decode()}
    assert differences(families, changed)


def test_nan_of_either_sign_is_written_and_compared_as_one_nan():
    """NumPy gives log(-1) as -NaN on some CPUs and +NaN on others: both encode to the same
    canonical bytes, and the comparison treats them as equal but never equal to a number; the
    sign of a zero is compared exactly."""
    neg = {"dataType": "float32", "shape": [2], "bytes": base64.b64encode(
        np.array([0xFFC00000, 0x3F800000], "<u4").tobytes()).decode()}
    pos = {**neg, "bytes": base64.b64encode(np.array([0x7FC00000, 0x3F800000], "<u4").tobytes()).decode()}
    one = {**neg, "bytes": base64.b64encode(np.array([0x3F800000, 0x3F800000], "<u4").tobytes()).decode()}
    assert canonical_nans(neg) == canonical_nans(pos) == pos
    assert differences({"expected": {"y": neg}}, {"expected": {"y": pos}}) == []
    assert differences({"expected": {"y": neg}}, {"expected": {"y": one}})
    zeros = [{**neg, "bytes": base64.b64encode(np.array([bits, 0x3F800000], "<u4").tobytes()).decode()}
             for bits in (0x00000000, 0x80000000)]
    assert differences({"expected": {"y": zeros[0]}}, {"expected": {"y": zeros[1]}}), "±0 must match exactly"


CONFORMANCE_PAGE = "/conformance/?autorun=0"


def _open(page):
    """The conformance page without its automatic run, loaded unless the (shared) page is on it."""
    if not page.url.endswith(CONFORMANCE_PAGE):
        page.goto(CONFORMANCE_PAGE)
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


#: CPU-context cases (static/polyfill/cpu/) that fail today, one name a line with the reason:
#: each must still fail (so the list stays true); every other case must pass.
CPU_GAPS_FILE = Path(__file__).parent / "data" / "cpu_context_gaps.txt"


def _cpu_gaps() -> dict[str, str]:
    gaps = {}
    for line in CPU_GAPS_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition("  ")
            gaps[name.strip()] = why.strip()
    return gaps


def test_family_cpu(webnn_page):
    """Every family's cases on the CPU context (createContext({deviceType: 'cpu'})) in one page
    and one context: all pass within the same tolerances, except the listed gaps, which must
    fail (a gap of an operator or data type missing from the context's opSupportLimits() must
    fail with NotSupportedError)."""
    _open(webnn_page)
    run = webnn_page.evaluate("""async () => {
      const c = await navigator.ml.createContext({deviceType: 'cpu'});
      const all = c.opSupportLimits();
      // operator -> the data types of its first operand (input, a, inputs)
      const limits = Object.fromEntries(Object.entries(all).filter(([, v]) => v && typeof v === 'object' && !v.dataTypes)
        .map(([op, v]) => [op, Object.values(v)[0].dataTypes]));
      c.destroy();
      return {limits, ...(await window.runConformance({deviceType: 'cpu'}))};
    }""")
    gaps = _cpu_gaps()
    total = sum(c["graph"] + c["validation"] for c in INDEX["counts"].values())
    assert len(run["results"]) == total
    failures = {r["name"]: r.get("detail") for r in run["results"] if not r["pass"]}
    unexpected = {n: d for n, d in failures.items() if n not in gaps}
    assert not unexpected, f"{len(unexpected)} cases failed on the CPU context:\n" + "\n".join(
        f"{n}: {d}" for n, d in list(unexpected.items())[:40])
    fixed = sorted(set(gaps) - set(failures))
    assert not fixed, f"listed in {CPU_GAPS_FILE.name} but passing now (remove them): {fixed[:20]}"
    cases = {r["name"]: r for r in run["results"]}
    for name in gaps:
        op, data_type = cases[name]["op"], cases[name]["dataType"]
        if op not in run["limits"] or data_type not in run["limits"][op]:
            assert failures[name].startswith("NotSupportedError"), f"{name}: {failures[name]}"


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
    _open(webnn_page)
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
