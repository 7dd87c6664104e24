"""The tuning switches (static/polyfill/tuning.js): declared in one table, one frozen object per
context, set only through createContext({polyfill: {tuning}}) and configureContext({tuning}),
and reaching the code that reads them (a forced kernel shows in the plan's steps).

Also the repository rules that no page, demo, tool or test outside the polyfill writes a
context's private slots, or reads a context's or graph's: they use the documented entry points
instead (static/polyfill/inspect.js, options.js, profiling.js).
"""
from __future__ import annotations

import re
from pathlib import Path

from tests.graph_runner import run_js

ROOT = Path(__file__).resolve().parent.parent

_BODY = """
const {SWITCHES, DEFAULT_TUNING} = await import('/polyfill/tuning.js');
const {configureContext, contextInfo} = await import('/polyfill/options.js');
const {describeGraph} = await import('/polyfill/inspect.js');
const error = async (f) => { try { await f(); return null; } catch (e) { return [e.name, e.message]; } };
const declared = Object.entries(SWITCHES).map(([name, s]) => ({name, keys: Object.keys(s).sort(),
  defaultIsValid: s.default === undefined || s.valid(s.default)}));
const kernels = async (context) => {
  const b = new MLGraphBuilder(context);
  const a = b.input('a', {dataType: 'float32', shape: [8, 64]});
  const w = b.constant({dataType: 'float32', shape: [64, 8]}, new Float32Array(512));
  const graph = await b.build({y: b.matmul(a, w)});
  const names = describeGraph(graph).steps.map((s) => s.kernel);
  graph.destroy();
  return names;
};
const plain = await navigator.ml.createContext();
const tiled = await navigator.ml.createContext({polyfill: {tuning: {matmul: 'tiled', splitK: 2}}});
const before = contextInfo(tiled).tuning;
const after = configureContext(tiled, {tuning: {splitK: undefined, submitSteps: 4}}).tuning;
const result = {
  declared,
  defaultsFrozen: Object.isFrozen(DEFAULT_TUNING) && Object.isFrozen(contextInfo(plain).tuning),
  plainTuning: contextInfo(plain).tuning,
  before: {matmul: before.matmul, splitK: before.splitK, frozen: Object.isFrozen(before)},
  after: {matmul: after.matmul, splitK: after.splitK ?? null, submitSteps: after.submitSteps, beforeUnchanged: before.splitK === 2},
  plainKernels: await kernels(plain),
  tiledKernels: await kernels(await navigator.ml.createContext({polyfill: {tuning: {matmul: 'tiled', splitK: 2}}})),
  unknown: await error(() => navigator.ml.createContext({polyfill: {tuning: {matmull: 'tiled'}}})),
  badValue: await error(() => configureContext(plain, {tuning: {rows: 'column'}})),
  plainAfterBad: contextInfo(plain).tuning.rows ?? null,
  // an object switch checks its members: matrixKernel's depth is 16, 32 or 64
  badShape: await error(() => configureContext(plain, {tuning: {matrixKernel: {depth: 48, stages: 2}}})),
  shape: configureContext(plain, {tuning: {matrixKernel: {depth: 16, stages: 2}}}).tuning.matrixKernel,
  notContext: await error(() => configureContext({}, {tuning: {}})),
  // a misspelt option is named, and changes nothing
  badOption: await error(() => configureContext(plain, {fastReadbak: true, tuning: {splitK: 3}})),
  splitAfterBadOption: contextInfo(plain).tuning.splitK ?? null,
};
plain.destroy(); tiled.destroy();
return result;
"""


def test_switches_declared_set_and_read(webnn_page, server_url):
    r = run_js(webnn_page, server_url, _BODY)
    assert "ok" in r, r
    r = r["ok"]
    # every switch declares its default, unit, reader, meaning and check; defaults pass the check
    assert len(r["declared"]) >= 20
    for d in r["declared"]:
        assert d["keys"] == ["default", "readBy", "unit", "valid", "what"], d
        assert d["defaultIsValid"], d
    assert r["defaultsFrozen"]
    assert r["plainTuning"]["stageWrites"] is True and r["plainTuning"]["nudge"] == "submit"
    assert r["before"] == {"matmul": "tiled", "splitK": 2, "frozen": True}
    # configureContext replaces the given members (undefined: the default) and keeps the others
    assert r["after"] == {"matmul": "tiled", "splitK": None, "submitSteps": 4, "beforeUnchanged": True}
    # the switches reach the kernel choice: SwiftShader's own pick is the blocked kernel
    assert r["plainKernels"] == ["matmul_blocked"], r["plainKernels"]
    assert r["tiledKernels"] == ["matmul_tiled_split", "matmul_split_reduce"], r["tiledKernels"]
    assert r["unknown"][0] == "TypeError" and "matmull" in r["unknown"][1]
    assert r["badValue"][0] == "TypeError" and "rows" in r["badValue"][1]
    assert r["plainAfterBad"] is None  # a rejected change changes nothing
    assert r["badShape"][0] == "TypeError" and "matrixKernel" in r["badShape"][1]
    assert r["shape"] == {"depth": 16, "stages": 2}
    assert r["notContext"][0] == "TypeError"
    assert r["badOption"][0] == "TypeError" and "fastReadbak" in r["badOption"][1] and r["splitAfterBadOption"] is None


#: writes into a context's private slots (<accessor>(x).name = ..., slots.name = ...)
_SLOT_WRITE = re.compile(r"(\w+Slots\([^)]*\)|\bslots|\bs|\bc)\.(\w+)(\.\w+)?\s*=[^=>]")
_SWITCH_NAMES = {"kernelOverrides", "submitSteps", "deferWrites", "stageWrites", "holdStagedWrites", "faultInReads",
                 "adapterInfo", "hardware", "nudge", "capMs", "intervalMs", "enabled"}


def test_no_switch_set_through_private_slots():
    """Pages, demos, tools and tests set switches through configureContext / createContext's
    polyfill.tuning only; the demos read nothing private."""
    files = [p for d in ("static/demos", "tools", "tests") for p in (ROOT / d).rglob("*")
             if p.suffix in (".js", ".py", ".html") and "vendor" not in p.parts and p.name != "test_tuning.py"]
    offenders = []
    for p in files:
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            m = _SLOT_WRITE.search(line)
            if m and (m.group(2) in _SWITCH_NAMES or (m.group(3) or ".")[1:] in _SWITCH_NAMES):
                offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


#: the polyfill's private-slot accessors of contexts, graphs and tensors (context.js, graph.js,
#: tensor.js), spelled so that this file does not name them
_PRIVATE = tuple(kind + "Slots" for kind in ("context", "graph", "tensor"))


def test_no_private_slots_outside_the_polyfill():
    """Tests, tools and demos read graphs, contexts and tensors through static/polyfill/inspect.js
    (describeGraph, queueState, queueHooks, encodeSteps, tensorState; docs/profiling.md),
    options.js and profiling.js, never through the private slots of context.js, graph.js and
    tensor.js."""
    files = [p for d in ("static/demos", "tools", "tests") for p in (ROOT / d).rglob("*")
             if p.suffix in (".js", ".py", ".html", ".mjs") and "vendor" not in p.parts and p.is_file()]
    assert len(files) > 50
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in files
                 for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
                 if any(name in line for name in _PRIVATE)]
    assert not offenders, offenders
