"""Opening one of the project's pages that announce their readiness in a window global.

Pages such as ``/harness/`` (``window.harnessStatus``) and ``/demos/onnx-node/``
(``window.onnxNodeStatus``) set ``{ready: true}`` once their modules loaded, or
``{ready: false, error}`` when loading failed.
"""

from __future__ import annotations

from typing import Any


def open_ready_page(page: Any, base_url: str, path: str, status_global: str) -> dict[str, Any]:
    """Navigate the Playwright ``page`` to ``base_url + path`` unless it is already there, wait
    until ``window[status_global]`` is set and return it (``{ready, error?}``); the caller raises
    its own error when ``ready`` is false."""
    url = base_url.rstrip("/") + path
    if page.url != url:
        page.goto(url)
    page.wait_for_function(f"() => window.{status_global} !== undefined")
    return page.evaluate(f"() => window.{status_global}")
