"""``python -m server [--host HOST] [--port PORT]``: run the webnn-wgsl dev server.

Prints ``Serving webnn-wgsl on http://HOST:PORT/`` once it listens (with the real
port when ``--port 0`` asked for any free one). When the port cannot be bound it
prints one line to stderr (``error: port 8000 on 127.0.0.1 is already in use``) and
exits with status 1. Ctrl-C stops it cleanly (exit status 0).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import sys

from aiohttp import web

from server.app import create_app


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``--host``, default 127.0.0.1; ``--port``, default 8000)."""
    parser = argparse.ArgumentParser(prog="python -m server", description="Run the webnn-wgsl dev server.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port, 0 for any free one (default: %(default)s)")
    return parser.parse_args(argv)


def format_url(host: str, port: int) -> str:
    """Return ``http://host:port/``, bracketing IPv6 literals."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


async def serve(host: str, port: int) -> None:
    """Listen on ``host:port``, announce the URL on stdout, and serve until cancelled.

    Raises:
        OSError: the address could not be bound (``errno.EADDRINUSE`` when taken).
    """
    runner = web.AppRunner(create_app(), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_port = runner.addresses[0][1] if runner.addresses else port
        print(f"Serving webnn-wgsl on {format_url(host, bound_port)}", flush=True)
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    args = parse_args(argv)
    try:
        asyncio.run(serve(args.host, args.port))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(f"error: port {args.port} on {args.host} is already in use", file=sys.stderr)
        else:
            reason = exc.strerror or str(exc)
            print(f"error: cannot listen on {args.host} port {args.port}: {reason}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
