"""The webnn-wgsl development server (aiohttp + aiohttp-jinja2).

``create_app()`` in :mod:`server.app` builds the application; ``python -m server``
runs it (see :mod:`server.__main__`).
"""

from server.app import create_app

__all__ = ["create_app"]
