"""Tests of the dev server (server/): routes, Content-Types, traversal, the CLI.

The app runs over a temporary folder tree (so the files, including a secret one
beside the served roots, are known) on a free port in a background thread, and is
queried with raw HTTP requests whose paths go on the wire exactly as written.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from server.app import ServerConfig, create_app, discover_demos
from tests.live_server import serve_in_thread

REPO = Path(__file__).resolve().parent.parent
SECRET = "TOP-SECRET-do-not-serve"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A static/ + models/ tree with one file of each served type, and secrets around it."""
    root = tmp_path_factory.mktemp("site")
    files = {
        "static/polyfill/webnn.js": "export const ok = 1;\n",
        "static/polyfill/ops/add.mjs": "export {};\n",
        "static/polyfill/kernels.wasm": b"\x00asm\x01\x00\x00\x00",
        "static/polyfill/shader.wgsl": "@compute @workgroup_size(1) fn main() {}\n",
        "static/polyfill/.hidden.js": SECRET,
        "static/harness/index.html": "<!doctype html><title>harness</title>",
        "static/harness/graph_json.js": "export async function runGraph() {}\n",
        "static/demos/alpha/index.html": "<!doctype html><title>alpha</title>",
        "static/demos/alpha/demo.json": json.dumps({"title": "Alpha <demo>", "description": "Classifies & ranks"}),
        "static/demos/alpha/pic.png": b"\x89PNG\r\n\x1a\n",
        "static/demos/alpha/photo.jpg": b"\xff\xd8\xff\xe0",
        "static/demos/alpha/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
        "static/demos/beta/index.html": "<!doctype html><title>beta</title>",
        "static/demos/broken/index.html": "<!doctype html><title>broken</title>",
        "static/demos/broken/demo.json": "{not json",
        "static/demos/no-index/readme.txt": "not a demo",
        "static/demos/_private/index.html": "hidden",
        "static/secret.txt": SECRET,
        "models/tiny/manifest.json": json.dumps({"inputs": {}}),
        "models/tiny/weights.bin": b"\x01\x02\x03\x04",
        "models/tiny/.converted": "",
        "models/.cache/x.whl": SECRET,
        "secret.txt": SECRET,
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    (root / "static/polyfill/escape.txt").symlink_to(root / "secret.txt")
    (root / "static/polyfill/escape-dir").symlink_to(root, target_is_directory=True)
    (root / "static/polyfill/inner-link.js").symlink_to(root / "static/polyfill/webnn.js")
    return root


@pytest.fixture(scope="module")
def base(tree: Path):
    """Base URL of the app serving ``tree``."""
    config = ServerConfig(static_dir=tree / "static", models_dir=tree / "models")
    with serve_in_thread(create_app(config)) as url:
        yield url


def get(base_url: str, raw_path: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``raw_path`` verbatim (no normalisation, no re-encoding); (status, headers, body)."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest("GET", raw_path, skip_accept_encoding=True)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


# ----------------------------------------------------------------------- routes


@pytest.mark.parametrize(
    ("path", "ctype", "body_start"),
    [
        ("/polyfill/webnn.js", "text/javascript", b"export const ok"),
        ("/polyfill/ops/add.mjs", "text/javascript", b"export {}"),
        ("/polyfill/kernels.wasm", "application/wasm", b"\x00asm"),
        ("/polyfill/shader.wgsl", "text/wgsl", b"@compute"),
        ("/polyfill/inner-link.js", "text/javascript", b"export const ok"),
        ("/harness/", "text/html", b"<!doctype html><title>harness"),
        ("/harness/index.html", "text/html", b"<!doctype html><title>harness"),
        ("/harness/graph_json.js", "text/javascript", b"export async"),
        ("/demos/alpha/", "text/html", b"<!doctype html><title>alpha"),
        ("/demos/alpha/pic.png", "image/png", b"\x89PNG"),
        ("/demos/alpha/photo.jpg", "image/jpeg", b"\xff\xd8"),
        ("/demos/alpha/logo.svg", "image/svg+xml", b"<svg"),
        ("/demos/alpha/demo.json", "application/json", b"{"),
        ("/models/tiny/manifest.json", "application/json", b'{"inputs"'),
        ("/models/tiny/weights.bin", "application/octet-stream", b"\x01\x02\x03\x04"),
    ],
)
def test_serves_files_with_their_content_type(base, path, ctype, body_start):
    status, headers, body = get(base, path)
    assert status == 200, path
    assert headers["content-type"].split(";")[0].strip() == ctype
    assert body.startswith(body_start)
    assert headers["cache-control"] == "no-cache"


def test_coi_query_makes_a_page_cross_origin_isolated(base):
    """``?coi=1`` adds COOP/COEP (the CPU context and ORT's wasm EP get threads there); a plain
    request has neither."""
    _, isolated, _ = get(base, "/demos/alpha/?coi=1")
    _, plain, _ = get(base, "/demos/alpha/")
    assert isolated["cross-origin-opener-policy"] == "same-origin"
    assert isolated["cross-origin-embedder-policy"] == "require-corp"
    assert "cross-origin-opener-policy" not in plain and "cross-origin-embedder-policy" not in plain


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/demos/alpha", "/demos/alpha/"),
        ("/harness", "/harness/"),
        ("/models/tiny", "/models/tiny/"),
    ],
)
def test_folder_without_slash_redirects_to_folder_url(base, path, location):
    status, headers, _ = get(base, path)
    assert status == 301
    assert headers["location"] == location


@pytest.mark.parametrize(
    "path",
    [
        "/polyfill/missing.js",
        "/polyfill/",  # a folder without index.html: no listing
        "/polyfill/ops/",
        "/models/",
        "/models/tiny/",
        "/models/absent/manifest.json",
        "/demos/no-index/",
        "/demos/alpha/index.html/",  # a file named as a folder
        "/conformance/",  # static/conformance/ does not exist in this tree
        "/conformance/index.html",
        "/static/polyfill/webnn.js",  # only the mounts are served
        "/server/app.py",
        "/nope",
    ],
)
def test_missing_files_and_folders_without_index_are_404(base, path):
    status, headers, body = get(base, path)
    assert status == 404, path
    assert headers["cache-control"] == "no-cache"


TRAVERSALS = [
    "/polyfill/../secret.txt",
    "/polyfill/../../secret.txt",
    "/demos/alpha/../../secret.txt",
    "/demos/alpha/../../../secret.txt",
    "/models/tiny/../../secret.txt",
    "/polyfill/%2e%2e/secret.txt",
    "/polyfill/%2E%2E/%2E%2E/secret.txt",
    "/polyfill/.%2e/.%2e/secret.txt",
    "/polyfill/..%2fsecret.txt",
    "/polyfill/..%2f..%2fsecret.txt",
    "/polyfill/%2e%2e%2f%2e%2e%2fsecret.txt",
    "/polyfill/%2e%2e%5csecret.txt",
    "/polyfill/..\\secret.txt",
    "/polyfill/..\\..\\secret.txt",
    "/polyfill//etc/passwd",
    "/polyfill/%2fetc%2fpasswd",
    "/polyfill/%2F" + "%2E%2E%2F" * 3 + "secret.txt",
    "/polyfill/C:/secret.txt",
    "/polyfill/escape.txt",  # symlink to a file outside the root
    "/polyfill/escape-dir/secret.txt",  # symlink to a folder outside the root
    "/polyfill/escape-dir/static/secret.txt",
    "/polyfill/.hidden.js",
    "/polyfill/%2ehidden.js",
    "/polyfill/webnn.js%00.html",
    "/harness/./index.html",
    "/harness/%2e/index.html",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_attempts_are_404_and_leak_nothing(base, path):
    status, _, body = get(base, path)
    assert status == 404, f"{path} -> {status}"
    assert SECRET.encode() not in body
    assert b"root:" not in body


def test_traversal_with_absolute_url_in_request_line(base):
    status, _, body = get(base, "http://127.0.0.1/polyfill/../secret.txt")
    assert status in (400, 404)
    assert SECRET.encode() not in body


# ------------------------------------------------------------------------ index


def test_index_lists_demos_with_titles_and_links(base):
    status, headers, body = get(base, "/")
    text = body.decode()
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    assert headers["cache-control"] == "no-cache"
    assert 'href="/demos/alpha/"' in text
    assert "Alpha &lt;demo&gt;" in text  # the title, HTML-escaped
    assert "Classifies &amp; ranks" in text
    assert 'href="/demos/beta/">beta<' in text  # no demo.json: folder name
    assert 'href="/demos/broken/">broken<' in text  # malformed demo.json: ignored
    assert "no-index" not in text and "_private" not in text
    assert 'href="/conformance/"' in text
    assert text.index("/demos/alpha/") < text.index("/demos/beta/")


def test_discover_demos_reads_demo_json(tree):
    demos = discover_demos(tree / "static" / "demos")
    assert [(d.name, d.title, d.url) for d in demos] == [
        ("alpha", "Alpha <demo>", "/demos/alpha/"),
        ("beta", "beta", "/demos/beta/"),
        ("broken", "broken", "/demos/broken/"),
    ]
    assert discover_demos(tree / "absent") == []


def test_api_models_lists_model_folders_and_their_served_files(base):
    status, headers, body = get(base, "/api/models")
    assert status == 200 and headers["content-type"].startswith("application/json")
    assert json.loads(body) == {"models": {"tiny": ["manifest.json", "weights.bin"]}}


def test_favicon_is_empty(base):
    status, _, body = get(base, "/favicon.ico")
    assert (status, body) == (204, b"")


def test_real_app_serves_this_repository(server_url):
    status, _, body = get(server_url, "/harness/")
    assert status == 200 and b"window.runGraph" in body
    status, _, body = get(server_url, "/")
    assert status == 200 and b"webnn-wgsl" in body
    status, _, body = get(server_url, "/polyfill/../pyproject.toml")
    assert status == 404 and b"[project]" not in body


# -------------------------------------------------------------------------- CLI


def _run_server_cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "server", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_cli_reports_a_busy_port_in_one_line_and_exits_1():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _run_server_cli("--port", str(port))
    assert result.returncode == 1
    assert result.stderr == f"error: port {port} on 127.0.0.1 is already in use\n"
    assert "Traceback" not in result.stdout + result.stderr
    assert "Serving" not in result.stdout


def test_cli_prints_the_url_and_serves():
    proc = subprocess.Popen([sys.executable, "-m", "server", "--port", "0"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stdout.readline()
        assert line.startswith("Serving webnn-wgsl on http://127.0.0.1:"), line
        url = line.split(" on ", 1)[1].strip()
        assert url.endswith("/")
        status, _, body = get(url.rstrip("/"), "/")
        assert status == 200 and b"webnn-wgsl" in body
    finally:
        proc.terminate()
        proc.wait(10)


def test_cli_help_names_host_and_port():
    result = _run_server_cli("--help")
    assert result.returncode == 0
    assert "--host" in result.stdout and "--port" in result.stdout
