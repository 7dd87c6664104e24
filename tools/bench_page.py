"""What the per-kernel benchmark commands (``tools.bench_conv``, ``tools.bench_matmul``) share.

- ``page_function(params, body, profile=False)``: the JavaScript they evaluate on ``/harness/``,
  opening with ``PAGE_SETUP_JS`` (the adapter, the context and the timing loop); with
  ``profile`` the context is in the polyfill's profiling mode and ``profileSteps(graph)`` returns
  the graph's steps with their GPU ms.
- ``top_steps_table(groups, n)``: the ``n`` slowest profiled steps as a table (``--profile``).
- ``run_in_harness(script, arg, timeout_s)``: serve the project, open ``/harness/`` in a fresh
  headless Chromium (``tools.chromium.launch_options()``) and evaluate the script, in a new
  browser when the page found no WebGPU adapter.
- ``adapter_line(adapter)`` and ``report(run, format_table, out)``: the table's adapter line,
  and printing the table and writing the JSON.
- ``run_page(browser, url, timeout_s)`` and ``BenchError``: open a benchmark demo page
  (``/demos/interop/``, ``/demos/bench-ort/``) and take its ``window.lastRun``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Statements opening a benchmark page function. They define ``info`` (the high-performance
#: GPUAdapter's info; an Error 'no WebGPU adapter' is thrown without one), ``context`` (an
#: MLContext asked for high performance), ``hooks`` (static/polyfill/inspect.js
#: queueHooks(context): its GPUDevice and prompt queue waits, for raw timings), ``queueState``
#: (inspect.js: the context's nudge counters), ``tune(context, switches)`` (configureContext's tuning), ``count(shape)`` (element count), ``adapterInfo`` (vendor,
#: architecture, device, description, isFallbackAdapter) and
#: ``timeDispatches(graph, inputs, outputs, out, reps, batch)``: after 3 warm-up round trips,
#: ``latency`` (``reps`` times dispatch + readTensor(out), ms each) and ``batchMs`` (``batch``
#: dispatches then one readTensor(out), ms in all); ``profileSteps(graph)``: undefined unless
#: ``profiling`` (set by ``page_function``), else readProfile(graph, {reset: true}).steps of
#: /polyfill/profiling.js ({index, name, kernel, operators, ms}: mean GPU ms per dispatch over
#: every dispatch since the last call, in profiling mode, which encodes one pass per step).
PAGE_SETUP_JS = """
  const {queueHooks, queueState} = await import('/polyfill/inspect.js');
  const adapter = await navigator.gpu.requestAdapter({powerPreference: 'high-performance'});
  if (!adapter) throw new Error('no WebGPU adapter');
  const info = adapter.info;
  const context = await navigator.ml.createContext({powerPreference: 'high-performance', deviceType: 'gpu', polyfill: {profiling}});
  const {readProfile} = await import('/polyfill/profiling.js');
  const profileSteps = async (graph) => (profiling ? (await readProfile(graph, {reset: true})).steps : undefined);
  // the context's device and prompt queue waits, for work a tool encodes itself (docs/profiling.md)
  const hooks = queueHooks(context);
  const {configureContext} = await import('/polyfill/options.js');
  // sets tuning switches (static/polyfill/tuning.js) on a context: the only way tools change them
  const tune = (ctx, tuning) => configureContext(ctx, {tuning});
  const count = (shape) => shape.reduce((a, v) => a * v, 1);
  const adapterInfo = {vendor: info.vendor, architecture: info.architecture, device: info.device,
                       description: info.description, isFallbackAdapter: info.isFallbackAdapter};
  async function timeDispatches(graph, inputs, outputs, out, reps, batch) {
    for (let i = 0; i < 3; i++) { context.dispatch(graph, inputs, outputs); await context.readTensor(out); }
    const latency = [];
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      context.dispatch(graph, inputs, outputs);
      await context.readTensor(out);
      latency.push(performance.now() - t0);
    }
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) context.dispatch(graph, inputs, outputs);
    await context.readTensor(out);
    return {latency, batchMs: performance.now() - t0};
  }
"""


def page_function(params: str, body: str, profile: bool = False) -> str:
    """``async (params) => { PAGE_SETUP_JS body }``: a function for Playwright's ``page.evaluate``;
    ``profile`` puts the context in profiling mode (``profileSteps`` then returns steps)."""
    return f"async ({params}) => {{const profiling = {'true' if profile else 'false'};{PAGE_SETUP_JS}{body}}}\n"


def top_steps_table(groups: list[tuple[str, list[dict[str, Any]]]], n: int = 10) -> str:
    """The ``n`` slowest steps over all profiled graphs, as a Markdown table.

    Args:
        groups: (graph name, profileSteps() steps) pairs; steps are {index, name, kernel,
            operators [{type, label}], ms}, ms the mean GPU milliseconds per dispatch.
        n: rows to print.
    Returns:
        A header line and one row per step, slowest first: ms, graph, step index/name, kernel,
        operators (``type 'label'``); "no profiled steps" when there are none.
    """
    rows = [(step["ms"], name, step) for name, steps in groups for step in steps or []]
    if not rows:
        return "no profiled steps"
    rows.sort(key=lambda r: -r[0])
    lines = [f"top {min(n, len(rows))} GPU steps (mean ms per dispatch, profiling mode: one pass per step)",
             "| GPU ms | graph | step | kernel | operators |", "|---:|---|---|---|---|"]
    for ms, name, step in rows[:n]:
        ops = ", ".join(o["type"] + (f" '{o['label']}'" if o["label"] else "") for o in step["operators"]) or "(input conversion)"
        lines.append(f"| {ms:.4f} | {name} | {step['index']} {step['name']} | {step['kernel']} | {ops} |")
    return "\n".join(lines)


def run_in_harness(script: str, arg: Any, timeout_s: float, launches: int = 3, query: str = "") -> dict[str, Any]:
    """Evaluate ``script(arg)`` on ``/harness/`` in a fresh headless browser; returns its result
    plus ``browser`` (the version). ``query`` is appended to the page's URL (``?coi=1``: the
    server makes the page cross-origin isolated, so ``performance.now()`` is fine-grained).

    A failure whose message mentions "adapter" is retried in a new browser, up to ``launches``
    browsers; ``timeout_s`` bounds each Playwright wait (the whole evaluate included).

    Raises:
        RuntimeError: the last failure's message.
    """
    from playwright.sync_api import sync_playwright

    from server.app import create_app
    from tests.live_server import serve_in_thread
    from tools.chromium import launch_options

    last: Exception | None = None
    with serve_in_thread(create_app()) as base_url, sync_playwright() as p:
        for _ in range(launches):
            browser = p.chromium.launch(headless=True, **launch_options())
            try:
                page = browser.new_page()
                page.set_default_timeout(timeout_s * 1000)
                page.goto(base_url + "/harness/" + query)
                page.wait_for_function("() => window.harnessStatus !== undefined")
                result = page.evaluate(script, arg)
                result["browser"] = browser.version
                return result
            except Exception as exc:  # noqa: BLE001 - retried when it is the missing adapter
                last = exc
                if "adapter" not in str(exc):
                    break
            finally:
                browser.close()
    raise RuntimeError(str(last))


class BenchError(RuntimeError):
    """A benchmark page reported an error, or no result came within the time limit."""


def run_page(browser, url: str, timeout_s: float) -> dict[str, Any]:
    """Open a benchmark page at ``url`` in a new tab and return its ``window.lastRun``.

    Console errors do not fail the run; they are returned in ``consoleErrors``.

    Raises:
        BenchError: the page set ``window.lastError``, threw (a page error), or timed out.
    """
    page = browser.new_page()
    page_errors: list[str] = []
    console_errors: list[str] = []
    page.on("pageerror", lambda e: page_errors.append(f"{e.name}: {e.message}"))
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(url)
        page.wait_for_function("() => window.lastRun !== undefined || window.lastError !== undefined",
                               timeout=timeout_s * 1000, polling=250)
        error = page.evaluate("() => window.lastError")
        if error:
            raise BenchError(f"{error['name']}: {error['message']}")
        if page_errors:
            raise BenchError("page errors: " + "; ".join(page_errors[:5]))
        run = page.evaluate("() => window.lastRun")
        run["consoleErrors"] = console_errors
        return run
    finally:
        page.close()


def run_page_retrying(playwright, url: str, timeout_s: float, launches: int = 3, what: str = "") -> dict[str, Any]:
    """``run_page`` in a fresh headless browser, in a new browser again (up to ``launches``) when
    the page found no WebGPU adapter; the run gets ``browser`` (version) and ``wallSeconds``.

    Raises:
        BenchError: the last failure, prefixed with ``what``.
    """
    import time

    from tools.chromium import launch_options

    started = time.monotonic()
    last_error: Exception | None = None
    prefix = f"{what}: " if what else ""
    for attempt in range(launches):
        browser = playwright.chromium.launch(headless=True, **launch_options())
        try:
            run = run_page(browser, url, timeout_s)
            run["browser"] = browser.version
            run["wallSeconds"] = round(time.monotonic() - started, 1)
            return run
        except BenchError as exc:
            last_error = exc
            if "adapter" not in str(exc).lower():  # only a missing adapter is worth a new browser
                break
            print(f"{prefix}attempt {attempt + 1}: {exc}; retrying in a new browser", file=sys.stderr)
        finally:
            browser.close()
    raise BenchError(f"{prefix}{last_error}")


def adapter_line(adapter: dict[str, Any]) -> str:
    """``vendor / architecture / device / description`` of a GPUAdapter.info (those given),
    `` (fallback adapter)`` for a fallback adapter, ``unknown`` when none is given."""
    parts = [adapter.get(k) for k in ("vendor", "architecture", "device", "description")]
    text = " / ".join(str(p) for p in parts if p) or "unknown"
    return text + (" (fallback adapter)" if adapter.get("isFallbackAdapter") else "")


def write_run(run: dict[str, Any], out: Path) -> None:
    """Warn on stderr about the page's console errors, write ``run`` as JSON to ``out``, say so."""
    for line in run.get("consoleErrors") or []:
        print(f"warning: browser console error: {line}", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def report(run: Callable[[], dict[str, Any]], format_table: Callable[[dict[str, Any]], str], out: Path) -> int:
    """Call ``run``, print ``format_table`` of its result and write the result as JSON to ``out``.

    Returns:
        0, or 2 when ``run`` raised (the error is printed to stderr).
    """
    try:
        result = run()
    except Exception as exc:  # noqa: BLE001 - any failure is exit status 2
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(format_table(result))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0
