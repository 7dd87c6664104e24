"""ONNX's operator (node) tests through ONNX Runtime Web's WebNN EP on this polyfill: ``make test-onnx``.

Serves the project, opens ``/demos/onnx-node/`` in one headless Chromium and runs the selected
cases of ``server/models/generated/onnx-node/`` (``tools/onnx_node_cases.py``, ``make setup``) in
batches through ``window.runOnnxCases`` (``static/demos/onnx-node/runner.js``): each case on ORT's
WebNN EP with no CPU fallback (and again with its attribute-like inputs frozen into initializers when
the first session is refused), and on ORT's wasm EP. Then compares every output with the case's
expected one (:func:`compare`) and classifies the case (:func:`classify`):

- ``rejected``: ORT would not create a WebNN-only session, not even with frozen inputs;
- ``right`` / ``wrong`` / ``error`` (the run threw): accepted cases (``frozen`` when only the frozen
  model was accepted);
- ``wasm-wrong``: ORT's wasm EP disagrees with the expected outputs too (or its run throws), so the
  case says nothing about WebNN; the pass rate is right / (accepted and not wasm-wrong). A case whose
  wasm session cannot be created (ORT has no wasm kernel for it) is judged on WebNN alone.

Prints a table per class and per operator and writes JSON (``--out``, default
bench-results/onnx-node.json). ``--write-subset RUN_JSON`` rewrites tests/data/onnx_node_subset.txt
(the cases ``make test`` runs) from such a JSON instead (:func:`choose_subset`). ``--cases`` takes a
comma list or ``@file``; ``--match`` a substring.
Exit status: 0 when every judged case that is wrong or throws has an ORT-side verdict in
tests/data/onnx_node_ort_verdicts.txt, 1 when one has none, 2 when the run itself failed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.onnx_node_cases import NUMPY_TYPES, OUT as CASES_DIR, load_index  # noqa: E402
from tools.page_ready import open_ready_page  # noqa: E402

DEFAULT_OUT = Path("bench-results/onnx-node.json")
#: the page, without its own sample run (page.js)
PAGE = "/demos/onnx-node/?autorun=0"
BATCH = 20
#: float32: |got - want| <= F32_ATOL + F32_RTOL * |want|; float16 looser; integers, bools exact
F32_ATOL, F32_RTOL = 1e-4, 1e-3
F16_ATOL, F16_RTOL = 1e-3, 1e-2
CLASSES = ("right", "wrong", "error", "rejected", "wasm-wrong")


def decode(encoded: dict[str, Any]) -> np.ndarray:
    """An output as ORT-web gave it ({type, dims, bytes}) as an ndarray."""
    raw = base64.b64decode(encoded["bytes"])
    return np.frombuffer(raw, NUMPY_TYPES[encoded["type"]]).reshape(encoded["dims"])


def compare(got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0) -> tuple[bool, float, str]:
    """(agree, max |got - want|, why not) for one output.

    float32: within F32_ATOL + F32_RTOL·|want| (or the case's own rtol/atol when larger), float16
    within F16_ATOL + F16_RTOL·|want|; integer and bool outputs exactly; NaN equals NaN, ±Inf itself.
    """
    if got.shape != want.shape:
        return False, float("inf"), f"shape {list(got.shape)} instead of {list(want.shape)}"
    if want.dtype.kind in "biu" or want.dtype == np.bool_:
        if got.dtype.kind == "f":
            return False, float("inf"), f"dtype {got.dtype} instead of {want.dtype}"
        bad = got.astype(np.int64) != want.astype(np.int64) if want.dtype != np.uint64 else got != want
        diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if got.size else 0.0
        return not bad.any(), diff, "" if not bad.any() else f"{int(bad.sum())} of {bad.size} values differ"
    g, w = got.astype(np.float64), want.astype(np.float64)
    a, r = (F16_ATOL, F16_RTOL) if want.dtype == np.float16 else (F32_ATOL, F32_RTOL)
    a, r = max(a, atol), max(r, rtol)
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(w) & (g == w)
    with np.errstate(invalid="ignore"):
        err = np.where(both_nan | same_inf, 0.0, np.abs(g - w))
        err = np.where(np.isnan(err), np.inf, err)
    bad = err > a + r * np.abs(np.where(np.isfinite(w), w, 0))  # NaN/Inf wants: only exact matches pass
    diff = float(err.max()) if err.size else 0.0
    return not bad.any(), diff, "" if not bad.any() else f"{int(bad.sum())} of {bad.size} values off"


def _agreement(result: dict[str, Any], meta: dict[str, Any]) -> tuple[bool, float, str]:
    """Whether an EP's outputs (runOn's result) match every data set's expected outputs."""
    worst, why = 0.0, ""
    ok = True
    for got_set, want_set in zip(result["outputs"], meta["datasets"]):
        for got, want in zip(got_set, want_set["outputs"]):
            want_array = np.frombuffer(base64.b64decode(want["bytes"]), NUMPY_TYPES[want["type"]]).reshape(want["shape"])
            agree, diff, reason = compare(decode(got), want_array, meta.get("rtol", 0), meta.get("atol", 0))
            worst = max(worst, diff)
            if not agree:
                ok = False
                why = why or f"{want['name']}: {reason}"
    return ok, worst, why


def classify(result: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The verdict of one case from the page's result (runner.js runCase) and its case.json."""
    row: dict[str, Any] = {"name": result["name"]}
    if result.get("timeout"):
        return {**row, "class": "error", "accepted": True, "error": "timed out (60 s)"}
    webnn, wasm = result["webnn"], result.get("wasm")
    if wasm is not None:
        if wasm.get("stage") == "session":  # no wasm kernel for it: says nothing about the values
            row.update(wasm="unavailable", wasmError=wasm["error"])
        elif "error" in wasm:
            row.update(wasm="error", wasmError=wasm["error"])
        else:
            ok, diff, why = _agreement(wasm, meta)
            row.update(wasm="right" if ok else "wrong", wasmMaxDiff=diff, **({"wasmWhy": why} if why else {}))
    if webnn.get("stage") in ("session", "load"):
        row.update(accepted=False, error=webnn["error"])
        if "frozenError" in webnn:
            row["frozenError"] = webnn["frozenError"]
        # ORT's own refusals read "Can't create a session"; anything else is the polyfill's builder
        # throwing (a TypeError naming the operator) while ORT built the WebNN graph.
        last = row.get("frozenError") or row["error"]
        row["rejectedBy"] = "ort" if "Can't create a session" in last else "webnn"
        row["class"] = "rejected"
        return row
    row.update(accepted=True, frozen=bool(webnn.get("frozen")), builds=webnn.get("builds", 0))
    if "error" in webnn:
        row.update(outcome="error", error=webnn["error"])
    else:
        ok, diff, why = _agreement(webnn, meta)
        row.update(outcome="right" if ok else "wrong", maxDiff=diff, **({"why": why} if why else {}))
    row["class"] = row["outcome"] if row.get("wasm", "right") in ("right", "unavailable") else "wasm-wrong"
    return row


def run_on_page(page, base_url: str, names: list[str], batch: int = BATCH, wasm: bool = True,
                progress: bool = False, frozen_first: list[str] = ()) -> list[dict[str, Any]]:
    """Run ``names`` on an open Playwright page (navigated to PAGE here) in batches; returns the
    page's results (runner.js runCase), in order. ``wasm``: also on ORT's wasm EP;
    ``frozen_first``: cases to create from model_frozen.onnx directly."""
    status = open_ready_page(page, base_url, PAGE, "onnxNodeStatus")
    if not status.get("ready"):
        raise RuntimeError(f"{PAGE} failed to load: {status.get('error')}")
    results: list[dict[str, Any]] = []
    for start in range(0, len(names), batch):
        chunk = names[start:start + batch]
        results += page.evaluate("([names, wasm, frozenFirst]) => window.runOnnxCases(names, {wasm, frozenFirst})",
                                 [chunk, wasm, [n for n in frozen_first if n in chunk]])
        if progress:
            print(f"  {len(results)}/{len(names)} cases", file=sys.stderr, flush=True)
    return results


def load_meta(name: str) -> dict[str, Any]:
    """case.json of case ``name``."""
    return json.loads((CASES_DIR / name / "case.json").read_text(encoding="utf-8"))


def run_cases(names: list[str], timeout_s: float = 600.0, batch: int = BATCH) -> dict[str, Any]:
    """Serve the project, run ``names`` in one headless Chromium page, classify them.

    Returns:
        ``{browser, ortVersion, wallSeconds, cases: [classify rows]}``.
    """
    from playwright.sync_api import sync_playwright

    from server.app import create_app
    from tests.live_server import serve_in_thread
    from tools.chromium import launch_options

    started = time.monotonic()
    with serve_in_thread(create_app()) as base_url, sync_playwright() as p:
        browser = p.chromium.launch(headless=True, **launch_options())
        try:
            page = browser.new_page()
            page.set_default_timeout(timeout_s * 1000)
            results = run_on_page(page, base_url, names, batch, progress=True)
            version = browser.version
        finally:
            browser.close()
    rows = [classify(r, load_meta(r["name"])) for r in results]
    return {"browser": version, "wallSeconds": round(time.monotonic() - started, 1), "cases": rows}


def summarize(rows: list[dict[str, Any]], ops: dict[str, str]) -> tuple[Counter, dict[str, Counter]]:
    """Counts per class (plus ``accepted``, ``frozen``, ``cases``) overall and per operator."""
    total: Counter = Counter()
    per_op: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        for counter in (total, per_op[ops[row["name"]]]):
            counter["cases"] += 1
            counter[row["class"]] += 1
            counter["accepted"] += bool(row.get("accepted"))
            counter["frozen"] += bool(row.get("frozen"))
            counter["rejected-by-webnn"] += row.get("rejectedBy") == "webnn"
            counter["no-graph"] += bool(row.get("accepted")) and row.get("builds") == 0
    return total, per_op


def format_tables(run: dict[str, Any], ops: dict[str, str]) -> str:
    """Markdown: the per-class table, the per-operator table, the pass rate."""
    total, per_op = summarize(run["cases"], ops)
    judged = total["right"] + total["wrong"] + total["error"]
    lines = ["| class | cases |", "|---|---:|",
             f"| selected (ops in ORT's WebNN EP table, WebNN types) | {total['cases']} |",
             f"| accepted by ORT's WebNN EP (no CPU fallback) | {total['accepted']} |",
             f"| … of them only with attribute-like inputs frozen into initializers | {total['frozen']} |",
             f"| … of them with no WebNN graph at all (ORT computed the outputs itself) | {total['no-graph']} |",
             f"| rejected: session creation failed | {total['rejected']} |",
             f"| … of them because the polyfill's builder threw (a TypeError) | {total['rejected-by-webnn']} |",
             f"| accepted, ORT's wasm EP wrong too or its run throwing (not judged) | {total['wasm-wrong']} |",
             f"| judged: **right** | {total['right']} |",
             f"| judged: **wrong** | {total['wrong']} |",
             f"| judged: **error** (the run threw) | {total['error']} |", "",
             f"Pass rate of accepted, not wasm-wrong cases: {total['right']} of {judged}"
             + (f" ({100 * total['right'] / judged:.1f} %)" if judged else ""), "",
             "| operator | cases | accepted (frozen) | right | wrong | error | rejected | wasm-wrong |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for op in sorted(per_op):
        c = per_op[op]
        lines.append(f"| {op} | {c['cases']} | {c['accepted']} ({c['frozen']}) | {c['right']} | {c['wrong']} "
                     f"| {c['error']} | {c['rejected']} | {c['wasm-wrong']} |")
    return "\n".join(lines)


def format_failures(rows: list[dict[str, Any]], ops: dict[str, str], known: dict[str, str] | None = None) -> str:
    """One line per accepted case that is not right (wrong, error, wasm-wrong); ``known``: ORT-side
    verdicts (case -> reason), shown in the last column."""
    known = known or {}
    lines = ["| case | op | class | max diff | error / why | known ORT-side verdict |", "|---|---|---|---:|---|---|"]
    for row in rows:
        if row["class"] in ("right", "rejected"):
            continue
        diff = row.get("maxDiff")
        why = row.get("error") or row.get("why") or ""
        if row["class"] == "wasm-wrong":
            why = f"webnn {row.get('outcome')}; wasm {row.get('wasm')}: " + (row.get("wasmError") or row.get("wasmWhy") or "")
        lines.append(f"| {row['name']} | {ops[row['name']]} | {row['class']} | "
                     f"{'' if diff is None else f'{diff:.3g}'} | {why[:200].replace('|', '/')} | {known.get(row['name'], '')} |")
    return "\n".join(lines)


SUBSET = Path(__file__).resolve().parent.parent / "tests" / "data" / "onnx_node_subset.txt"
#: judged cases known to fail because of ORT's mapping (case -> reason); see docs/onnx-node-tests.md
ORT_VERDICTS = SUBSET.parent / "onnx_node_ort_verdicts.txt"


def ort_verdicts(path: Path = ORT_VERDICTS) -> dict[str, str]:
    """case -> reason of ``path`` (columns two spaces apart; ``#`` lines are comments)."""
    verdicts = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, reason = line.split("  ", 1)
            verdicts[name] = reason.strip()
    return verdicts
SUBSET_HEADER = """\
# ONNX node test cases that tests/test_onnx_node.py runs through ORT-web's WebNN EP on the polyfill.
# Written by `python -m tools.onnx_node_tests --write-subset RUN.json` from a full run ({when}).
# Of the cases that were right with a WebNN graph built, per operator family (index.json's `op`; a function expansion is its
# own family): 1 case when the family had <= 5 right cases, 2 when <= 12, else 3, evenly spaced over
# the family's names in sorted order. Columns (two spaces apart): case name, family, and `frozen`
# where ORT's WebNN EP accepted the case only with its attribute-like inputs frozen into
# initializers (the test goes to the frozen model directly).
"""


def choose_subset(rows: list[dict[str, Any]], ops: dict[str, str]) -> list[tuple[str, str, bool]]:
    """(case, family, frozen) of the subset SUBSET_HEADER describes, from a run's classified rows."""
    families: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["class"] == "right" and row.get("builds"):  # a case with no WebNN graph tests ORT only
            families[ops[row["name"]]].append(row)
    chosen = []
    for family in sorted(families):
        members = sorted(families[family], key=lambda r: r["name"])
        n = 1 if len(members) <= 5 else 2 if len(members) <= 12 else 3
        picks = sorted({round(i * (len(members) - 1) / (n - 1)) for i in range(n)}) if n > 1 else [0]
        chosen += [(members[i]["name"], family, bool(members[i].get("frozen"))) for i in picks]
    return chosen


def write_subset(run: dict[str, Any], ops: dict[str, str], when: str, path: Path = SUBSET) -> int:
    """Write choose_subset's cases to ``path``; returns how many."""
    lines = [f"{name}  {family}" + ("  frozen" if frozen else "") for name, family, frozen in choose_subset(run["cases"], ops)]
    path.write_text(SUBSET_HEADER.format(when=when) + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def select(index: dict[str, Any], cases: str | None, match: str | None) -> list[str]:
    names = [c["name"] for c in index["cases"] if c["selected"]]
    if cases:
        wanted = (Path(cases[1:]).read_text().split() if cases.startswith("@") else cases.split(","))
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            raise SystemExit(f"unknown or unselected cases: {', '.join(unknown[:10])}")
        names = [n for n in names if n in set(wanted)]
    if match:
        names = [n for n in names if match in n]
    return names


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.onnx_node_tests", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma list of case names, or @file with one per line (default: all selected)")
    parser.add_argument("--match", help="only cases whose name contains this")
    parser.add_argument("--batch", type=int, default=BATCH, help=f"cases per page call (default {BATCH})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one batch may take")
    parser.add_argument("--write-subset", type=Path, metavar="RUN_JSON",
                        help=f"only rewrite {SUBSET.relative_to(SUBSET.parent.parent.parent)} from a full run's JSON")
    args = parser.parse_args(argv)
    if args.write_subset:
        run = json.loads(args.write_subset.read_text(encoding="utf-8"))
        ops = {c["name"]: c["op"] for c in load_index()["cases"]}
        when = f"onnx {run.get('onnxVersion', '?')}, Chromium {run.get('browser', '?')}"
        print(f"wrote {write_subset(run, ops, when)} cases to {SUBSET}")
        return 0
    try:
        index = load_index()
        names = select(index, args.cases, args.match)
        print(f"{len(names)} onnx {index['onnxVersion']} node cases", file=sys.stderr)
        run = run_cases(names, args.timeout, args.batch)
    except Exception as exc:  # noqa: BLE001 - any failure of the run itself is exit status 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    ops = {c["name"]: c["op"] for c in index["cases"]}
    run["onnxVersion"] = index["onnxVersion"]
    for row in run["cases"]:
        row["op"] = ops[row["name"]]
    known = ort_verdicts()
    for row in run["cases"]:
        if row["name"] in known and row["class"] in ("wrong", "error"):
            row["ortVerdict"] = known[row["name"]]
    print(format_tables(run, ops))
    print()
    print(format_failures(run["cases"], ops, known))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({run['wallSeconds']} s)")
    new = [r["name"] for r in run["cases"] if r["class"] in ("wrong", "error") and r["name"] not in known]
    fixed = sorted(set(known) & {r["name"] for r in run["cases"] if r["class"] == "right"})
    if fixed:
        print(f"now right, listed in {ORT_VERDICTS.name}: {', '.join(fixed)}")
    if new:
        print(f"{len(new)} wrong or failing cases without an ORT-side verdict: {', '.join(new)}")
    return 1 if new else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
