"""Every MLGraphBuilder method's failure paths throw what the spec allows, never a plain Error.

Spec §MLGraphBuilder: a builder method that rejects its arguments throws a TypeError (or an
InvalidStateError DOMException when the builder can no longer build); our errors carry the
operator's ``[label]`` prefix (static/polyfill/errors.js). This test takes seed calls of every
method from the conformance data (static/conformance/cases/*.json, up to SEEDS_PER_OP graph cases
per operator, plus input() and constant() below), replays each on a fresh builder, and calls it
again with each argument and each options member replaced in turn by a hostile value (undefined,
null, negative, fractional, 2^32, NaN, BigInt, wrong-rank and wrong-type operands, an operand of
another builder, ...) and with arguments missing (tests/builder_error_scan.js). Any exception that
is not a DOMException or a ``[label]``-prefixed TypeError is reported: a plain ``Error``, a
``RangeError``, or a TypeError the engine threw from inside the polyfill. No GPU work runs.
"""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.graph_runner import open_harness, run_js

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "static/conformance/cases"
SCAN_JS = (Path(__file__).with_name("builder_error_scan.js")).read_text()
SEEDS_PER_OP = 3
#: Chromium 156's MLGraphBuilder methods (the surface test_api.py pins ours to).
BUILDER_METHODS = set(json.loads((ROOT / "tests/data/chromium-156-idl.json").read_text())["interfaces"]["MLGraphBuilder"])

#: Seeds for the two methods no conformance graph ends with.
EXTRA_SEEDS = [
    {"op": "input", "description": {"operators": [
        {"op": "input", "args": ["x", {"dataType": "float32", "shape": [2, 3]}], "outputs": "y"}]}},
    {"op": "constant", "description": {"operators": [
        {"op": "constant", "args": [{"dataType": "uint8", "shape": [2, 2]},
                                    {"bytes": base64.b64encode(bytes([1, 2, 3, 4])).decode()}], "outputs": "y"}]}},
]


def seeds() -> list[dict]:
    """Up to SEEDS_PER_OP single-family graph cases per builder method (the method of the graph's
    last operator), spread over its cases in file order, each with the union of option keys its
    method's cases use (so options a seed leaves at their defaults are varied too)."""
    by_op: dict[str, list[dict]] = {}
    option_keys: dict[str, set[str]] = {}
    for path in sorted(CASES.glob("*.json")):
        if path.name == "index.json":
            continue
        for case in json.loads(path.read_text())["graph"]:
            description = case["graph"]
            last = description["operators"][-1]
            by_op.setdefault(last["op"], []).append(description)
            for operator in description["operators"]:
                option_keys.setdefault(operator["op"], set()).update(operator.get("options", {}))
    chosen = []
    for op, descriptions in sorted(by_op.items()):
        step = max(1, len(descriptions) // SEEDS_PER_OP)
        for description in descriptions[::step][:SEEDS_PER_OP]:
            last = {**description["operators"][-1], "extraOptionKeys": sorted(option_keys[op] - {"label"})}
            chosen.append({"op": op, "description": {**description, "operators": [*description["operators"][:-1], last]}})
    return chosen + EXTRA_SEEDS


def test_builder_methods_never_throw_plain_errors(webnn_page, server_url):
    """Thousands of varied calls across every builder method: each either succeeds or throws a
    spec error (``[label]`` TypeError or DOMException); the seeds reach every method."""
    open_harness(webnn_page, server_url)
    result = webnn_page.evaluate(SCAN_JS, {"seeds": seeds(), "noOptions": ["input", "constant"]})
    assert result["ops"] == sorted(BUILDER_METHODS - {"build", "constructor"}), "a builder method has no seed"
    assert result["threw"] > result["calls"] // 2, result  # the variations do reach the checks
    assert result["defects"] == [], json.dumps(result["defects"][:40], indent=1)


def test_enum_arguments_convert_as_webidl_does(webnn_page, server_url):
    """WebIDL enum conversion is ToString then membership: an object whose toString gives a valid
    value is that value; a BigInt or another non-member is a ``[label]`` TypeError (formatting it
    with JSON.stringify used to throw the engine's own "Do not know how to serialize a BigInt")."""
    r = run_js(webnn_page, server_url, """
      const ctx = await navigator.ml.createContext();
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', {dataType: 'float32', shape: [2, 3]});
      const named = (text) => ({toString: () => text});
      const outcome = (f) => { try { const y = f(); return y.dataType; } catch (e) { return `${e.constructor.name}: ${e.message}`; } };
      return {
        cast: outcome(() => b.cast(x, named('int32'), {label: 'L'})),
        input: outcome(() => b.input('y', {dataType: named('uint8'), shape: [2]})),
        pad: outcome(() => b.pad(x, [1, 0], [0, 1], {mode: named('edge'), label: 'L'})),
        castBigInt: outcome(() => b.cast(x, -1n, {label: 'L'})),
        padBigInt: outcome(() => b.pad(x, [1, 0], [0, 1], {mode: 7n, label: 'L'})),
        convLayout: outcome(() => b.conv2d(b.input('i', {dataType: 'float32', shape: [1, 1, 3, 3]}),
            b.input('f', {dataType: 'float32', shape: [1, 1, 1, 1]}), {inputLayout: 1n, label: 'L'})),
        argMaxType: outcome(() => b.argMax(x, 0, {outputDataType: 2n ** 70n, label: 'L'})),
      };
    """)
    assert "ok" in r, r
    r = r["ok"]
    assert (r.pop("cast"), r.pop("input"), r.pop("pad")) == ("int32", "uint8", "float32")
    assert r == {
        "castBigInt": 'TypeError: [L] dataType "-1" is not one of "float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"',
        "padBigInt": 'TypeError: [L] mode "7" is not one of "constant", "edge", "reflection", "symmetric"',
        "convLayout": 'TypeError: [L] inputLayout "1" is not one of "nchw", "nhwc"',
        "argMaxType": 'TypeError: [L] outputDataType "1180591620717411303424" is not one of "int32", "int64"',
    }, r
