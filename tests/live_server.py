"""Run an aiohttp application on a free loopback port in a background thread.

Used by the session-scoped ``server_url`` fixture (the real app) and by
``tests/test_server.py`` (the app over a temporary folder tree).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import web


@contextmanager
def serve_in_thread(app: web.Application, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` on ``host`` and an OS-chosen port until the block exits.

    Yields:
        The base URL without a trailing slash, e.g. ``"http://127.0.0.1:41234"``.

    Raises:
        RuntimeError: the server did not start within 30 s (its exception chained).
    """
    loop = asyncio.new_event_loop()
    started = threading.Event()
    state: dict = {}

    async def start() -> web.AppRunner:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, host, 0).start()
        return runner

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            state["runner"] = loop.run_until_complete(start())
        except BaseException as exc:  # reported to the caller below
            state["error"] = exc
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.run_until_complete(state["runner"].cleanup())
        loop.close()

    thread = threading.Thread(target=run, name="webnn-wgsl-test-server", daemon=True)
    thread.start()
    if not started.wait(30) or "error" in state:
        raise RuntimeError("test server did not start") from state.get("error")
    port = state["runner"].addresses[0][1]
    try:
        yield f"http://{host}:{port}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
