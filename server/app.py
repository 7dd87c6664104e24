"""The aiohttp application of the webnn-wgsl dev server.

Routes (one table, :func:`_route_table`):

=========================  ==============================================================
``/``                      index of demos (``server/templates/index.html``)
``/polyfill/...``          ``static/polyfill/`` (the polyfill's ES modules)
``/harness/...``           ``static/harness/`` (the test harness page and graph_json.js)
``/demos/<name>/...``      ``static/demos/<name>/`` (``/demos/<name>`` redirects to the folder URL)
``/models/<name>/...``     ``server/models/generated/<name>/`` (converted weights + manifest)
``/conformance/...``       ``static/conformance/`` when it exists
``/api/models``            JSON: the converted models' folders and their files (:func:`list_models`)
=========================  ==============================================================

A folder URL (ending in ``/``) serves that folder's ``index.html``; a folder named
without the slash is redirected to it; there are no directory listings. Every
response carries ``Cache-Control: no-cache`` (this is a development server).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import web

from server.files import content_type_for, resolve_under_root

log = logging.getLogger(__name__)

#: The repository root (the folder holding ``static/`` and ``server/``).
REPO_ROOT = Path(__file__).resolve().parent.parent

#: URL mount name -> folder, relative to the :class:`ServerConfig` roots.
MOUNT_NAMES = ("polyfill", "harness", "demos", "models", "conformance")


@dataclass(frozen=True)
class ServerConfig:
    """Where the server finds what it serves.

    Attributes:
        static_dir: holds ``polyfill/``, ``harness/``, ``demos/`` and ``conformance/``.
        models_dir: holds one converted model per folder (``<name>/manifest.json``,
            weights), served under ``/models/``.
    """

    static_dir: Path = field(default_factory=lambda: REPO_ROOT / "static")
    models_dir: Path = field(default_factory=lambda: REPO_ROOT / "server" / "models" / "generated")

    def mounts(self) -> dict[str, Path]:
        """Return the URL mount name -> served folder mapping."""
        return {
            "polyfill": self.static_dir / "polyfill",
            "harness": self.static_dir / "harness",
            "demos": self.static_dir / "demos",
            "models": self.models_dir,
            "conformance": self.static_dir / "conformance",
        }


@dataclass(frozen=True)
class Demo:
    """One demo page found under ``static/demos/<name>/``.

    Attributes:
        name: the folder name (also the URL segment).
        title: ``demo.json``'s ``title``, else the folder name.
        description: ``demo.json``'s ``description``, else empty.
    """

    name: str
    title: str
    description: str = ""

    @property
    def url(self) -> str:
        """The demo's folder URL, ``/demos/<name>/``."""
        return f"/demos/{self.name}/"


#: Shared state, typed keys (see aiohttp's ``web.AppKey``).
CONFIG_KEY = web.AppKey("config", ServerConfig)
MOUNTS_KEY = web.AppKey("mounts", dict)


def discover_demos(demos_dir: Path) -> list[Demo]:
    """List the demos under ``demos_dir``, sorted by folder name.

    A demo is a folder (not starting with ``.`` or ``_``) that holds ``index.html``.
    Its optional ``demo.json`` may give ``{"title": str, "description": str}``; an
    unreadable or malformed ``demo.json`` is logged and ignored (the folder name is
    used), so one broken demo never breaks the index.
    """
    if not demos_dir.is_dir():
        return []
    demos = []
    for folder in sorted(demos_dir.iterdir()):
        if folder.name.startswith((".", "_")) or not (folder / "index.html").is_file():
            continue
        meta: dict = {}
        meta_file = folder / "demo.json"
        if meta_file.is_file():
            try:
                loaded = json.loads(meta_file.read_text(encoding="utf-8"))
                if not isinstance(loaded, dict):
                    raise ValueError("demo.json must hold a JSON object")
                meta = loaded
            except (OSError, ValueError) as exc:
                log.warning("ignoring %s: %s", meta_file, exc)
        title = meta.get("title") if isinstance(meta.get("title"), str) else None
        desc = meta.get("description") if isinstance(meta.get("description"), str) else ""
        demos.append(Demo(name=folder.name, title=title or folder.name, description=desc))
    return demos


@aiohttp_jinja2.template("index.html")
async def index(request: web.Request) -> dict:
    """``GET /``: the demo index, with links to the harness and the conformance report."""
    config = request.app[CONFIG_KEY]
    return {
        "demos": discover_demos(config.static_dir / "demos"),
        "has_conformance": (config.static_dir / "conformance" / "index.html").is_file(),
    }


def model_files(models_dir: Path) -> dict[str, list[str]]:
    """The model folders under ``models_dir`` (not starting with ``.`` or ``_``) -> the names of the
    files in each that ``/models/<name>/`` serves, sorted. A page asks this instead of requesting a
    file that may be missing, which the browser would log as a console error."""
    if not models_dir.is_dir():
        return {}
    listing = {}
    for folder in sorted(models_dir.iterdir()):
        if folder.name.startswith((".", "_")) or not folder.is_dir():
            continue
        listing[folder.name] = sorted(f.name for f in folder.iterdir() if f.is_file()
                                      and resolve_under_root(models_dir, f"{folder.name}/{f.name}").path is not None)
    return listing


async def list_models(request: web.Request) -> web.Response:
    """``GET /api/models``: ``{"models": {name: [file, ...]}}`` (see :func:`model_files`)."""
    return web.json_response({"models": model_files(request.app[CONFIG_KEY].models_dir)})


async def favicon(request: web.Request) -> web.Response:
    """``GET /favicon.ico``: empty 204, so browsers log no 404 console error for it."""
    return web.Response(status=204)


async def serve_file(request: web.Request) -> web.StreamResponse:
    """``GET /<mount>/<tail>``: a file from the mount's folder (see :mod:`server.files`).

    Raises:
        web.HTTPNotFound: missing, refused (traversal, dot-file) or a folder without
            ``index.html``.
        web.HTTPMovedPermanently: a folder named without its trailing slash.
    """
    mount = request.match_info["mount"]
    root = request.app[MOUNTS_KEY][mount]
    resolved = resolve_under_root(root, request.match_info["tail"])
    if resolved.redirect_to_slash:
        raise web.HTTPMovedPermanently(location=request.rel_url.raw_path + "/")
    if resolved.path is None:
        raise web.HTTPNotFound()
    return web.FileResponse(resolved.path, headers={"Content-Type": content_type_for(resolved.path)})


async def mount_without_slash(request: web.Request) -> web.Response:
    """``GET /<mount>``: redirect to the folder URL ``/<mount>/``."""
    raise web.HTTPMovedPermanently(location=request.rel_url.raw_path + "/")


def _route_table() -> list[web.RouteDef]:
    """All routes of the server, in one place."""
    mounts = "|".join(MOUNT_NAMES)
    return [
        web.get("/", index, name="index"),
        web.get("/favicon.ico", favicon, name="favicon"),
        web.get("/api/models", list_models, name="models"),
        web.get(rf"/{{mount:(?:{mounts})}}", mount_without_slash, name="mount"),
        web.get(rf"/{{mount:(?:{mounts})}}/{{tail:.*}}", serve_file, name="static"),
    ]


async def _dev_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: no caching in development, no MIME sniffing; with ``?coi=1`` (a
    page) or under a ``vendor/`` folder (ONNX Runtime's worker scripts), COOP/COEP, so that a page
    asking for it is cross-origin isolated and the CPU context may use several threads."""
    response.headers["Cache-Control"] = "no-cache"
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if request.query.get("coi") == "1" or "/vendor/" in request.path:
        response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
        response.headers["Cross-Origin-Embedder-Policy"] = "require-corp"


def create_app(config: ServerConfig | None = None) -> web.Application:
    """Build the dev server application.

    Args:
        config: where to find the served folders; defaults to this repository's
            ``static/`` and ``server/models/generated/``. Folders may be created
            after the app starts (each request looks them up again).

    Returns:
        The :class:`aiohttp.web.Application`, ready for ``web.run_app`` or a runner.
    """
    config = config or ServerConfig()
    app = web.Application()
    app[CONFIG_KEY] = config
    app[MOUNTS_KEY] = config.mounts()
    aiohttp_jinja2.setup(
        app,
        loader=jinja2.PackageLoader("server", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
    )
    app.router.add_routes(_route_table())
    app.on_response_prepare.append(_dev_headers)
    return app
