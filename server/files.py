"""Safe mapping of URL paths to files under a served root, and their Content-Types.

Every static mount of the dev server (``/polyfill/``, ``/harness/``, ``/demos/``,
``/models/``, ``/conformance/``) goes through :func:`resolve_under_root`, which
refuses anything that could leave the root: ``..`` or ``.`` segments, backslashes,
NUL bytes, drive letters, absolute paths (an empty segment, as in ``//etc``),
dot-files, and symbolic links that resolve outside the root. A refused path and a
missing file look the same to the client (404).
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path

#: Content-Types by file suffix (lower case). Explicit so that the served type does
#: not depend on the machine's mime.types (some map .js to application/javascript,
#: and few know .wasm or .wgsl).
CONTENT_TYPES: dict[str, str] = {
    ".html": "text/html",
    ".htm": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".bin": "application/octet-stream",
    ".css": "text/css",
    ".wgsl": "text/wgsl",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".map": "application/json",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}

#: Text types get an explicit UTF-8 charset.
_TEXT_TYPES = ("text/", "application/json", "image/svg+xml")


def content_type_for(path: Path) -> str:
    """Return the Content-Type header value for ``path`` (from its suffix).

    Unknown suffixes fall back to :mod:`mimetypes`, then to
    ``application/octet-stream``. Text types carry ``; charset=utf-8``.
    """
    ctype = CONTENT_TYPES.get(path.suffix.lower())
    if ctype is None:
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if ctype.startswith(_TEXT_TYPES):
        ctype += "; charset=utf-8"
    return ctype


@dataclass(frozen=True)
class Resolved:
    """Outcome of resolving a URL tail under a root.

    Attributes:
        path: the file to send, or ``None`` when nothing may be served.
        redirect_to_slash: the tail names a directory but lacks the trailing ``/``
            (the client should be redirected to the folder URL).
    """

    path: Path | None
    redirect_to_slash: bool = False


NOT_FOUND = Resolved(None)


def _safe_segments(tail: str) -> list[str] | None:
    """Split a decoded URL tail into path segments, or ``None`` if it is unsafe.

    The tail is what follows the mount prefix, already percent-decoded by aiohttp (so
    ``%2e%2e`` arrives as ``..`` and ``%2f`` as ``/``). A trailing ``/`` gives a final
    empty segment, which means "the folder's index.html".
    """
    if "\\" in tail or "\x00" in tail or tail.startswith("/"):
        return None
    segments = tail.split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "":
            if last:
                continue
            return None  # '//' inside the path: an absolute path in disguise
        if seg.startswith(".") or ":" in seg:
            return None  # '.', '..', dot-files, drive letters / alternate streams
    return segments


def resolve_under_root(root: Path, tail: str) -> Resolved:
    """Map the URL tail to a file under ``root`` without ever leaving it.

    Args:
        root: the served directory (need not exist; then everything is 404).
        tail: the decoded path after the mount prefix, e.g. ``"ops/add.js"``,
            ``"mobilenet/"`` or ``""`` (the mount's own folder URL).

    Returns:
        :class:`Resolved` with the file (a folder URL maps to its ``index.html``), or
        with ``redirect_to_slash`` for a folder named without the trailing slash, or
        :data:`NOT_FOUND`.
    """
    segments = _safe_segments(tail)
    if segments is None:
        return NOT_FOUND
    try:
        root_real = root.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError, RuntimeError):
        return NOT_FOUND
    if not root_real.is_dir():
        return NOT_FOUND
    wants_folder = segments[-1] == ""
    parts = [s for s in segments if s]
    candidate = root_real.joinpath(*parts)
    try:
        real = candidate.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError, RuntimeError, OSError):
        return NOT_FOUND
    if real != root_real and not real.is_relative_to(root_real):
        return NOT_FOUND  # a symbolic link pointing outside the root
    if real.is_dir():
        if not wants_folder:
            return Resolved(None, redirect_to_slash=True)
        index = real / "index.html"
        if index.is_file() and index.resolve().is_relative_to(root_real):
            return Resolved(index)
        return NOT_FOUND  # no directory listings
    if wants_folder or not real.is_file():
        return NOT_FOUND
    return Resolved(real)
