"""Smoke tests of the browser side of the suite.

* The harness page loads the polyfill and the browser gets a WebGPU adapter.
* ``run_graph`` round-trips tensors (dtype, shape, bytes) through the harness.
* The ``webnn_page`` fixture fails a test on a console error, an uncaught exception
  or an unhandled rejection, and not when the test is marked ``allow_console_errors``
  (checked by running a small inner test session in a subprocess with pytester).
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.graph_runner import GraphError, expect_error, open_harness, run_graph
from tests.tolerance import assert_ulp

REPO = Path(__file__).resolve().parent.parent

ADAPTER_JS = """async () => {
  const adapter = await navigator.gpu?.requestAdapter({powerPreference: 'high-performance'});
  if (!adapter) return null;
  return {vendor: adapter.info.vendor, architecture: adapter.info.architecture,
          fallback: adapter.info.isFallbackAdapter, features: [...adapter.features]};
}"""


def test_harness_loads_polyfill_and_gets_webgpu_adapter(webnn_page, server_url):
    open_harness(webnn_page, server_url)
    assert webnn_page.evaluate("() => window.harnessStatus.hasML && typeof navigator.ml?.createContext === 'function'")
    info = webnn_page.evaluate(ADAPTER_JS)
    assert info is not None, "navigator.gpu.requestAdapter() returned null"
    assert info["vendor"], info


def test_run_graph_round_trips_through_the_harness(webnn_page, server_url):
    description = {
        "inputs": {"a": {"dataType": "float32", "shape": [2, 3]}, "b": {"dataType": "float32", "shape": [2, 3]}},
        "operators": [{"op": "add", "args": [{"operand": "a"}, {"operand": "b"}], "outputs": "y"}],
        "outputs": ["y"],
    }
    a = np.array([[1.5, -2.0, 0.0], [np.inf, 3.25, -0.0]], np.float32)
    b = np.array([[0.25, 2.0, -0.0], [1.0, 1e-7, -0.0]], np.float32)
    out = run_graph(webnn_page, server_url, description, {"a": a, "b": b})
    assert set(out) == {"y"}
    assert out["y"].dtype == np.float32 and out["y"].shape == (2, 3)
    assert_ulp(out["y"], a.astype(np.float64) + b.astype(np.float64), 1, np.float32)


def test_run_graph_reports_js_errors(webnn_page, server_url):
    description = {
        "inputs": {"a": {"dataType": "float32", "shape": [2]}},
        "operators": [{"op": "noSuchOperator", "args": [{"operand": "a"}], "outputs": "y"}],
        "outputs": ["y"],
    }
    with pytest.raises(GraphError):
        run_graph(webnn_page, server_url, description, {"a": np.zeros(2, np.float32)})


def test_expect_error_returns_name_and_message(webnn_page, server_url):
    err = expect_error(webnn_page, server_url, "async (n) => { throw new RangeError(`bad ${n}`); }", 7)
    assert err == {"name": "RangeError", "message": "bad 7"}
    with pytest.raises(AssertionError, match="expected the JS function to throw"):
        expect_error(webnn_page, server_url, "async () => 1")


INNER_TESTS = '''
import pytest

def test_console_error_fails(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => console.error('boom from console')")

def test_uncaught_exception_fails(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => new Promise(r => { setTimeout(() => { throw new Error('boom uncaught'); }, 0); setTimeout(r, 50); })")

def test_unhandled_rejection_fails(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => new Promise(r => { Promise.reject(new Error('boom rejected')); setTimeout(r, 50); })")

def test_missing_module_fails(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => import('/polyfill/no-such-module.js').catch(() => 0)")

@pytest.mark.allow_console_errors
def test_marked_test_may_log_errors(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => { console.error('expected boom'); Promise.reject(new Error('expected')); }")

def test_clean_page_passes(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => { console.log('fine'); console.warn('only a warning'); }")
'''


def test_console_errors_fail_the_test(pytester, monkeypatch):
    """An inner session: 4 tests provoke errors and must fail, 2 must pass."""
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]\n')
    pytester.makepyfile(test_inner=INNER_TESTS)
    pytester.makeini(textwrap.dedent("""
        [pytest]
        addopts = -p no:cacheprovider --screenshot=only-on-failure
    """))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    result = pytester.runpytest_subprocess("--output", str(pytester.path / "results"), timeout=300)
    result.assert_outcomes(passed=2, failed=4)
    out = result.stdout.str()
    for needle in ("boom from console", "boom uncaught", "boom rejected", "no-such-module.js"):
        assert needle in out, needle
    assert "expected boom" not in out
    results = pytester.path / "results"
    kept = sorted(p.name for p in results.iterdir())
    assert len(kept) == 4 and all("fails" in name for name in kept), kept
    console_log = next(results.glob("*console-error-fails*")) / "console.log"
    assert "boom from console" in console_log.read_text()
    assert list(console_log.parent.glob("*.png")), "no screenshot kept for the failed test"


SHARED_INNER_TESTS = "pytestmark = pytest.mark.shared_page\n" + INNER_TESTS.replace("import pytest\n", "", 1) + '''

def test_sets_a_mark(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    webnn_page.evaluate("() => { window.sharedMark = 7; }")

def test_sees_the_mark(webnn_page):
    assert webnn_page.evaluate("() => window.sharedMark") == 7

def test_late_timer(webnn_page, server_url):
    webnn_page.goto(server_url + "/")
    # 1 s: after this test's teardown check even on a loaded 2-core host, whose check can take
    # longer than 100 ms (an error arriving during it fails this test instead of the next one)
    webnn_page.evaluate("() => { setTimeout(() => { throw new Error('late from the timer test'); }, 1000); }")

def test_pause_on_another_page(page):
    page.wait_for_timeout(3500)  # Playwright delivers the shared page's late error meanwhile

def test_after_the_late_error(webnn_page):
    assert webnn_page.evaluate("() => 1") == 1
'''
SHARED_INNER_TESTS = "import pytest\n" + SHARED_INNER_TESTS


def test_console_errors_fail_the_test_on_a_shared_page(pytester, monkeypatch):
    """The same inner tests in a shared_page module (conftest.py SharedPage): the same 4 fail
    with their own errors, the marked test's errors reach no other test, each failed test's
    console.log holds its own lines only, and the page is reused (a global one test set is
    seen by the next). An error that reaches the page after its test finished (a timer) fails
    the next test using the page at setup, naming the test it came after."""
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]\n')
    pytester.makepyfile(test_inner=SHARED_INNER_TESTS)
    pytester.makeini(textwrap.dedent("""
        [pytest]
        addopts = -p no:cacheprovider
    """))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    result = pytester.runpytest_subprocess("--output", str(pytester.path / "results"), timeout=300)
    result.assert_outcomes(passed=6, failed=4, errors=1)
    out = result.stdout.str()
    for needle in ("boom from console", "boom uncaught", "boom rejected", "no-such-module.js"):
        assert needle in out, needle
    assert "late from the timer test" in out and "after test_inner.py::test_late_timer" in out, out
    assert "ERROR test_inner.py::test_after_the_late_error" in out, out
    assert "expected boom" not in out
    results = pytester.path / "results"
    console_log = (next(results.glob("*console-error-fails*")) / "console.log").read_text()
    assert "boom from console" in console_log and "boom uncaught" not in console_log, console_log
