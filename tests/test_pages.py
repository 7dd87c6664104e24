"""Every page the index (``/``) links to opens and finishes its normal run cleanly, as a user gets
it after ``make setup``: no HTTP status >= 400 for anything it loads, no console error, no
uncaught exception or unhandled rejection, and no error text on the page. Pages with a choice of
context run on both (``?device=cpu`` and ``?device=gpu``; the benchmark page's runtimes cover both).

The pages open without the suite's ``webnnPolyfillOptions`` (a user's page has none), with small
inputs where a page takes them, and each is waited on until it says it is done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from tests.conftest import ConsoleWatcher

#: generous: the benchmark page's SwiftShader run of six runtimes, on a busy 2-core machine
PAGE_TIMEOUT_MS = 420_000
#: text on a page that means something went wrong (pages print these on failure)
ERROR_TEXT = re.compile(r"\b(error|failed|exception|differs|refused|undefined|NaN)\b|Error:", re.IGNORECASE)


@dataclass(frozen=True)
class PageRun:
    """How to open one page and tell when its normal run is over."""
    path: str  # the page as the index links it
    query: str = ""  # small inputs / the context, within the page's normal run
    done: str = "() => true"  # JS: true once the run is over (successfully or not)
    check: str = "() => null"  # JS: a problem (string) once done, or null
    text_selector: str = "body"  # where the page reports (error text must not appear there)


RUNS = {
    "index": PageRun("/", text_selector="main"),
    "harness": PageRun("/harness/", done="() => window.harnessStatus !== undefined",
                       check="() => window.harnessStatus.ready ? null : window.harnessStatus.error",
                       text_selector="#status"),
    "conformance-cpu": PageRun(
        "/conformance/", "?device=cpu", done="() => window.conformance !== undefined",
        check="""() => window.conformance.context !== 'cpu' ? `ran on ${window.conformance.context}`
            : window.conformance.failed ? `${window.conformance.failed} cases failed`
            : document.getElementById('implementation').textContent.includes('CPU context') ? null
            : 'the page does not name its context'""",
        text_selector="#status, #implementation, #failures"),
    "conformance-gpu": PageRun(
        "/conformance/", "?device=gpu&op=relu", done="() => window.conformance !== undefined",
        check="""() => window.conformance.context !== 'gpu' ? `ran on ${window.conformance.context}`
            : window.conformance.failed ? `${window.conformance.failed} cases failed`
            : window.conformance.results.length ? null : 'no cases ran'""",
        text_selector="#status, #implementation, #failures"),
    "image-classification-cpu": PageRun(
        "/demos/image-classification/", "?device=cpu&runs=1&warmup=0",
        done="() => window.lastRun !== undefined || window.lastError !== undefined || window.demoStatus?.state === 'error'",
        check="() => window.lastRun?.top5?.length === 5 ? null : JSON.stringify(window.lastError ?? window.demoStatus)",
        text_selector="#error, #load-status, #adapter, #run-status, #predictions, #inference-time"),
    "image-classification-gpu": PageRun(
        "/demos/image-classification/", "?device=gpu&runs=1&warmup=0",
        done="() => window.lastRun !== undefined || window.lastError !== undefined || window.demoStatus?.state === 'error'",
        check="() => window.lastRun?.top5?.length === 5 ? null : JSON.stringify(window.lastError ?? window.demoStatus)",
        text_selector="#error, #load-status, #adapter, #run-status, #predictions, #inference-time"),
    # after make setup SmolLM2 is not converted (make llm is on demand): the page says how to
    # convert it; its runs on a model are tests/test_llm_page.py's
    "text-generation": PageRun(
        "/demos/text-generation/", "?model=not-converted-yet",
        done="() => window.demoStatus && window.demoStatus.state !== 'loading'",
        check="""() => window.demoStatus.state !== 'missing' ? JSON.stringify(window.demoStatus)
            : document.getElementById('missing').textContent.includes('make llm') ? null : 'no make llm message'""",
        text_selector="#error, #missing, #load-status"),
    "interop": PageRun(
        "/demos/interop/", "?size=small&iterations=2&warmup=1",
        done="() => window.lastRun !== undefined || window.lastError !== undefined",
        check="() => window.lastRun?.agree ? null : JSON.stringify(window.lastError ?? 'the four results disagree')",
        text_selector="#status, #results, #adapter"),
    "onnx-node": PageRun(
        "/demos/onnx-node/", done="() => window.onnxNodeRun !== undefined",
        check="""() => window.onnxNodeRun.error ?? (window.onnxNodeRun.rows.every((r) => r.webnn.verdict === 'agrees')
            ? null : JSON.stringify(window.onnxNodeRun.rows.filter((r) => r.webnn.verdict !== 'agrees')))""",
        text_selector="#out"),
    "bench-ort": PageRun(
        "/demos/bench-ort/", "?models=bert-encoder&runs=1&warmup=0&batch=1",
        done="() => window.lastRun !== undefined || window.lastError !== undefined",
        check="""() => window.lastError ? `${window.lastError.name}: ${window.lastError.message}`
            : Object.entries(window.lastRun.models[0].runtimes).filter(([, r]) => r.error).map(([n, r]) => `${n}: ${r.error}`).join('; ')
              || (window.lastRun.models[0].runtimes.cpu?.calls.dispatchesPerRun === 1 ? null : 'cpu runtime miscounted')""",
        text_selector="#out"),
}


@pytest.fixture
def user_page(browser, server_url: str):
    """A fresh page as a user's browser has it (no suite options), with its console errors,
    page errors and HTTP statuses >= 400 recorded."""
    context = browser.new_context(base_url=server_url)
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    watcher = ConsoleWatcher(page)
    bad_status: list[str] = []
    page.on("response", lambda r: r.status >= 400 and bad_status.append(f"HTTP {r.status} {r.url}"))
    page.on("requestfailed", lambda r: bad_status.append(f"request failed: {r.url} ({r.failure})"))
    yield page, watcher, bad_status
    context.close()


def check_page(user_page, server_url: str, run: PageRun) -> None:
    """Open ``run``'s page, wait for its run to end and fail on any sign of trouble."""
    page, watcher, bad_status = user_page
    page.goto(f"{server_url}{run.path}{run.query}")
    page.wait_for_load_state("load")
    page.wait_for_function(run.done, polling=250)
    problem = page.evaluate(run.check)
    watcher.flush()
    texts = page.locator(run.text_selector).all_inner_texts()
    text = "\n".join(texts)
    found = [m.group(0) for m in ERROR_TEXT.finditer(text)]
    failures = [*bad_status, *watcher.errors]
    if problem:
        failures.append(f"page check: {problem}")
    if found:
        failures.append(f"error text on the page: {found[:5]} in {text[:1500]!r}")
    assert not failures, f"{run.path}{run.query}:\n" + "\n".join(failures)


def test_the_index_links_only_to_pages_checked_here(user_page, server_url):
    """Every link of the index is a page this module runs (a new page needs its entry in RUNS)."""
    page, _, _ = user_page
    page.goto(f"{server_url}/")
    links = set(page.eval_on_selector_all("main a[href]", "(as) => as.map((a) => new URL(a.href).pathname)"))
    checked = {run.path for run in RUNS.values()}
    assert links - checked == set(), f"pages the index links to that test_pages.py does not run: {links - checked}"
    assert checked - links - {"/"} == set(), f"pages checked here that the index no longer links to: {checked - links}"


@pytest.mark.parametrize("name", list(RUNS))
def test_page_runs_cleanly(user_page, server_url, name):
    check_page(user_page, server_url, RUNS[name])


def test_image_demo_clears_the_previous_result(user_page, server_url):
    """A second photo's classification starts with an empty top 5, not the previous photo's."""
    page, watcher, bad_status = user_page
    page.goto(f"{server_url}/demos/image-classification/?device=cpu&runs=1&warmup=0")
    page.wait_for_function("() => window.lastRun !== undefined || window.lastError !== undefined")
    page.evaluate("""() => {
      window.predictionCounts = [];
      new MutationObserver(() => window.predictionCounts.push(document.getElementById('predictions').children.length))
        .observe(document.getElementById('predictions'), {childList: true});
    }""")
    page.locator("#photos button").nth(1).click()
    page.wait_for_function("() => window.lastRun?.sequence === 2 || window.lastError !== undefined")
    assert page.evaluate("() => window.lastError") is None
    counts = page.evaluate("() => window.predictionCounts")
    assert counts and counts[0] == 0 and counts[-1] == 5, counts
    watcher.flush()
    assert not watcher.errors and not bad_status, [*watcher.errors, *bad_status]


def test_conformance_page_shows_progress_on_the_cpu_context(user_page, server_url):
    """The CPU context finishes its work in microtasks; the page must still paint its progress
    counter while the suite runs (a check polled on animation frames sees it before the end)."""
    page, watcher, bad_status = user_page
    page.goto(f"{server_url}/conformance/?device=cpu")
    page.wait_for_function("() => /cases run/.test(document.getElementById('status').textContent)"
                           " || window.conformance !== undefined", polling="raf")
    assert page.evaluate("() => window.conformance") is None, "the run ended before its progress was painted"
    page.wait_for_function("() => window.conformance !== undefined")
    watcher.flush()
    assert not watcher.errors and not bad_status, [*watcher.errors, *bad_status]
