"""Suite-wide fixtures: the live dev server and the browser (pytest-playwright).

Fixtures:
    server_url    session: the real app (``create_app()``) on a free loopback port,
                  e.g. ``"http://127.0.0.1:41234"`` (no trailing slash). Playwright
                  pages get it as their ``base_url``, so ``page.goto("/harness/")`` works.
    webnn_page    function: pytest-playwright's ``page`` with a default timeout fit for
                  SwiftShader, whose browser console errors and page errors (uncaught
                  exceptions, unhandled rejections) FAIL the test. Opt out with
                  ``@pytest.mark.allow_console_errors``. In a module marked
                  ``pytestmark = pytest.mark.shared_page`` its tests share one page (and
                  browser context), which stays on the page the last test left it at: a
                  test that only runs JS on the harness skips a new context, page and
                  harness load (about 1 s each on SwiftShader); after a failed test the
                  next one gets a fresh page, and errors that reach the page after its test's
                  last check fail the next test's setup, naming the test they came after.

The browser (one per session) is launched with ``tools.chromium.launch_options()``:
chosen by ``tools.chromium.find_chromium`` (``$WEBNN_CHROMIUM``, else a system
Chromium, else Playwright's own), with ``$WEBNN_CHROMIUM_ARGS`` (shell-split) or, when
unset, the SwiftShader WebGPU flags; ``$WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS`` (shell-split)
drops Playwright defaults such as ``--headless`` (the GPU host sets all three, see
``shared/gpu-chrome/README.md``). ``$WEBNN_TEST_TIMEOUT_MS`` overrides the default
Playwright timeout (120 s). On failure, the test's console log is written to
``test-results/<test>/console.log`` beside pytest-playwright's screenshot.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.app import create_app
from tests.live_server import serve_in_thread
from tools.chromium import launch_options

#: Default Playwright timeout (navigation, waits, run_graph) in milliseconds.
DEFAULT_TIMEOUT_MS = int(os.environ.get("WEBNN_TEST_TIMEOUT_MS", "120000"))

ALLOW_CONSOLE_ERRORS = "allow_console_errors"
SHARED_PAGE = "shared_page"
_WATCHER_KEY = pytest.StashKey["ConsoleWatcher"]()
_FAILED_ON_CONSOLE_KEY = pytest.StashKey[bool]()
_FIRST_ERROR_KEY = pytest.StashKey[int]()  # the watcher's errors before the test began (a shared page's)


def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's markers."""
    config.addinivalue_line(
        "markers",
        f"{ALLOW_CONSOLE_ERRORS}: browser console errors and page errors do not fail this test "
        "(for tests that provoke them on purpose)",
    )
    config.addinivalue_line(
        "markers",
        f"{SHARED_PAGE}: the module's tests share one webnn_page (for modules whose tests only run JS "
        "on the harness and leave nothing on the page that a later test relies on; see webnn_page)",
    )


# --------------------------------------------------------------------------- server


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """The real dev server (``create_app()``) on a free port; yields its base URL."""
    with serve_in_thread(create_app()) as url:
        yield url


# -------------------------------------------------------------------------- browser


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright launch options with ``tools.chromium.launch_options()`` merged in: our
    Chromium and its WebGPU flags."""
    return {**browser_type_launch_args, **launch_options()}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict, server_url: str) -> dict:
    """pytest-playwright context options: relative URLs resolve against the live server."""
    return {**browser_context_args, "base_url": server_url}


class ConsoleWatcher:
    """Records a page's console messages, and its errors that must fail a test.

    ``errors`` holds every ``console.error`` message and every ``pageerror`` event
    (an uncaught exception or an unhandled promise rejection in the page), and a
    crash of the page; ``log`` holds all console messages, for the failure artefact.
    """

    def __init__(self, page) -> None:
        self.page = page
        self.log: list[str] = []
        self.errors: list[str] = []
        self.checked = 0  # errors already reported by a check
        page.on("console", self._on_console)
        page.on("pageerror", self._on_pageerror)
        page.on("crash", lambda _page: self._add_error("page crashed"))

    def _on_console(self, message) -> None:
        location = message.location or {}
        where = f" ({location.get('url', '')}:{location.get('lineNumber', '')})" if location.get("url") else ""
        line = f"console.{message.type}: {message.text}{where}"
        self.log.append(line)
        if message.type == "error":
            self.errors.append(line)

    def _on_pageerror(self, error) -> None:
        stack = getattr(error, "stack", None) or ""
        self._add_error(f"pageerror: {error.name}: {error.message}" + (f"\n{stack}" if stack else ""))

    def _add_error(self, line: str) -> None:
        self.log.append(line)
        self.errors.append(line)

    def flush(self) -> None:
        """Round-trip to the page, so events it already emitted get dispatched."""
        try:
            if not self.page.is_closed():
                self.page.evaluate("() => 0")
        except Exception:  # page navigated away, crashed or closed: nothing more to get
            pass

    def take_new_errors(self) -> list[str]:
        """Return the errors not reported yet, and mark them reported."""
        new = self.errors[self.checked:]
        self.checked = len(self.errors)
        return new


def _format_errors(errors: list[str]) -> str:
    shown = "\n".join(f"  {e}" for e in errors[:20])
    more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
    return (f"{len(errors)} browser console error(s) / page error(s) "
            f"(mark the test @pytest.mark.{ALLOW_CONSOLE_ERRORS} if they are expected):\n{shown}{more}")


def _prepare(page) -> ConsoleWatcher:
    """Set ``page``'s timeouts and polyfill options; return its console watcher."""
    page.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page.set_default_navigation_timeout(DEFAULT_TIMEOUT_MS)
    # This machine's adapter is SwiftShader, where createContext() would pick the CPU context
    # (ml.js): the suite tests the WebGPU path unless a test asks for deviceType 'cpu'.
    page.add_init_script("globalThis.webnnPolyfillOptions = {deviceType: 'gpu'};")
    return ConsoleWatcher(page)


class SharedPage:
    """One browser context and page for the tests of a ``shared_page`` module, opened on first
    use and again after a test failed or the page crashed or closed (so a failure does not leak
    into the next test)."""

    def __init__(self, browser, context_args: dict) -> None:
        self.browser = browser
        self.context_args = context_args
        self.context = None
        self.page = None
        self.watcher: ConsoleWatcher | None = None
        self.crashed = False
        self.last_test: str | None = None  # the node id of the test that used the page last
        self.last_allowed = False  # whether that test was marked allow_console_errors

    def acquire(self):
        """The page and its watcher, a fresh pair when there is none or the last one is unusable."""
        if self.page is None or self.page.is_closed() or self.crashed:
            self.discard()
            self.context = self.browser.new_context(**self.context_args)
            self.page = self.context.new_page()
            self.watcher = _prepare(self.page)
            self.crashed = False
            self.page.on("crash", lambda _page: setattr(self, "crashed", True))
        return self.page, self.watcher

    def discard(self) -> None:
        """Close the context; the next acquire() opens a new one."""
        if self.context is not None:
            try:
                self.context.close()
            except Exception:  # the browser may be gone already
                pass
        self.context = self.page = self.watcher = None


@pytest.fixture(scope="module")
def _module_page(browser, browser_context_args: dict) -> Iterator[SharedPage]:
    """The shared page of a ``shared_page`` module (see webnn_page)."""
    shared = SharedPage(browser, browser_context_args)
    yield shared
    shared.discard()


@pytest.fixture
def webnn_page(request: pytest.FixtureRequest, output_path: str, browser_name: str):
    """pytest-playwright's ``page``, failing the test on browser console errors.

    The default timeout is ``DEFAULT_TIMEOUT_MS``. Errors seen while the test runs
    fail its call phase; errors that arrive afterwards fail its teardown. Unless the
    test is marked ``allow_console_errors``. In a ``shared_page`` module, the module's
    page (``SharedPage``) instead of a new one; the console log written on failure is
    then the part of the page's log since the test began. (``browser_name``: so that
    pytest-playwright parametrizes the test by browser, ``test_x[chromium-...]``, either way.)
    """
    shared = request.getfixturevalue("_module_page") if request.node.get_closest_marker(SHARED_PAGE) else None
    if shared is not None:
        page, watcher = shared.acquire()
        # errors that reached the page after the previous test's teardown check are that test's:
        # they fail this one's setup, naming it, on a fresh page (unless it allowed errors)
        watcher.flush()
        stale = watcher.take_new_errors()
        previous, allowed_before = shared.last_test, shared.last_allowed
        shared.last_test = request.node.nodeid
        shared.last_allowed = request.node.get_closest_marker(ALLOW_CONSOLE_ERRORS) is not None
        if stale and not allowed_before:
            shared.discard()
            pytest.fail(f"after {previous} finished, on the page it shared with this test: "
                        + _format_errors(stale), pytrace=False)
    else:
        page = request.getfixturevalue("page")
        watcher = _prepare(page)
    first_line = len(watcher.log)
    request.node.stash[_WATCHER_KEY] = watcher
    request.node.stash[_FIRST_ERROR_KEY] = len(watcher.errors)
    yield page
    watcher.flush()
    rep_call = getattr(request.node, "rep_call", None)
    allowed = request.node.get_closest_marker(ALLOW_CONSOLE_ERRORS) is not None
    new_errors = watcher.take_new_errors()
    late = [] if allowed else new_errors
    log = watcher.log[first_line:]
    if (rep_call is None or rep_call.failed or late) and log:
        folder = Path(output_path)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "console.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    if shared is not None and (rep_call is None or rep_call.failed or late):
        shared.discard()
    if late:
        pytest.fail(_format_errors(late), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Fail a test that used ``webnn_page`` when the page logged errors during it."""
    result = yield  # a failure of the test itself propagates unchanged
    watcher = item.stash.get(_WATCHER_KEY, None)
    if watcher is not None and item.get_closest_marker(ALLOW_CONSOLE_ERRORS) is None:
        watcher.flush()
        errors = watcher.take_new_errors()
        if errors:
            item.stash[_FAILED_ON_CONSOLE_KEY] = True
            pytest.fail(_format_errors(errors), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Attach the browser's console errors to a test's report when it failed otherwise."""
    report = yield
    watcher = item.stash.get(_WATCHER_KEY, None)
    if (watcher is not None and report.failed and watcher.errors and report.when == "call"
            and not item.stash.get(_FAILED_ON_CONSOLE_KEY, False)):
        report.sections.append(("browser console errors",
                                "\n".join(watcher.errors[item.stash.get(_FIRST_ERROR_KEY, 0):])))
    return report
