"""Run JSON graph descriptions in the browser through the harness page.

The harness (``/harness/``, ``static/harness/index.html``) installs the polyfill and
exposes ``window.runGraph(descriptionJson, inputsJson, optionsJson)``, which builds
the graph with ``static/harness/graph_json.js``, computes it and returns
``{name: {dataType, shape, bytes}}`` (``bytes``: base64 of the little-endian raw
data). This module converts NumPy arrays to and from that form.

Typical use::

    from tests.graph_runner import run_graph
    out = run_graph(webnn_page, server_url, description, {"x": x.astype(np.float32)})
    assert_ulp(out["y"], np.abs(x.astype(np.float64)), 0, np.float32)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from tools.page_ready import open_ready_page

#: WebNN MLOperandDataType -> NumPy dtype (little-endian, as on the wire).
DTYPES: dict[str, np.dtype] = {
    "float32": np.dtype("<f4"),
    "float16": np.dtype("<f2"),
    "int32": np.dtype("<i4"),
    "uint32": np.dtype("<u4"),
    "int64": np.dtype("<i8"),
    "uint64": np.dtype("<u8"),
    "int8": np.dtype("i1"),
    "uint8": np.dtype("u1"),
}

HARNESS_PATH = "/harness/"

#: JS-side limit for one runGraph call, in milliseconds (page.evaluate has none).
RUN_TIMEOUT_MS = 120_000


class HarnessError(RuntimeError):
    """The harness page failed to load (e.g. the polyfill threw while importing)."""


class GraphError(RuntimeError):
    """runGraph rejected; ``name`` and ``message`` are the JS error's (e.g. ``TypeError``)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def data_type_of(array: np.ndarray) -> str:
    """Return the WebNN ``dataType`` name of a NumPy array's dtype.

    Raises:
        TypeError: the dtype has no WebNN counterpart (e.g. float64, bool).
    """
    for name, dtype in DTYPES.items():
        if array.dtype.newbyteorder("<") == dtype:
            return name
    raise TypeError(f"dtype {array.dtype} is not a WebNN dataType; cast the input explicitly")


def encode_tensor(array: np.ndarray) -> dict[str, Any]:
    """Encode an array as ``{dataType, shape, bytes}`` (bytes: base64, little-endian).

    Raises:
        TypeError: see :func:`data_type_of`.
    """
    array = np.asarray(array)
    data_type = data_type_of(array)
    raw = np.ascontiguousarray(array, dtype=DTYPES[data_type]).tobytes()
    return {"dataType": data_type, "shape": list(array.shape), "bytes": base64.b64encode(raw).decode("ascii")}


def decode_tensor(encoded: Mapping[str, Any]) -> np.ndarray:
    """Decode ``{dataType, shape, bytes}`` into a native-endian NumPy array.

    Raises:
        ValueError: unknown dataType, or the byte count does not match the shape.
    """
    data_type = encoded["dataType"]
    if data_type not in DTYPES:
        raise ValueError(f"unknown dataType {data_type!r}")
    dtype = DTYPES[data_type]
    shape = tuple(int(d) for d in encoded["shape"])
    raw = base64.b64decode(encoded["bytes"])
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(f"{data_type}{list(shape)} needs {expected} bytes, got {len(raw)}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def open_harness(page, base_url: str) -> None:
    """Navigate ``page`` to the harness unless it is already there, and wait until ready.

    Raises:
        HarnessError: the harness reported a failure while loading.
    """
    status = open_ready_page(page, base_url, HARNESS_PATH, "harnessStatus")
    if not status.get("ready"):
        raise HarnessError(f"harness failed to load: {status.get('error')}")


_RUN_JS = """
async ([description, inputs, options, timeoutMs]) => {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`runGraph took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return {ok: await Promise.race([window.runGraph(description, inputs, options), timeout])};
  } catch (e) {
    return {error: {name: e?.name ?? typeof e, message: e?.message ?? String(e)}};
  } finally {
    clearTimeout(timer);
  }
}
"""


def run_graph(
    page,
    base_url: str,
    description: Mapping[str, Any],
    inputs: Mapping[str, np.ndarray],
    options: Mapping[str, Any] | None = None,
    *,
    timeout_ms: int = RUN_TIMEOUT_MS,
) -> dict[str, np.ndarray]:
    """Build and compute a graph in the browser; return its outputs as NumPy arrays.

    Args:
        page: a Playwright page (use the ``webnn_page`` fixture).
        base_url: the server's base URL (the ``server_url`` fixture).
        description: the JSON graph description (constants inline as ``bytes``).
        inputs: input name -> array; the dtype picks the WebNN dataType (float64 is
            refused: cast to float32/float16 yourself).
        options: passed to graph_json.js's ``runGraph`` as its third argument.
        timeout_ms: JS-side limit for the whole call.

    Returns:
        Output name -> array with the output's dtype (float16 -> np.float16,
        int64 -> np.int64, ...) and shape.

    Raises:
        GraphError: runGraph threw or rejected (name/message of the JS error).
        HarnessError: the harness page did not load.
    """
    open_harness(page, base_url)
    encoded_inputs = {name: encode_tensor(array) for name, array in inputs.items()}
    result = page.evaluate(
        _RUN_JS,
        [json.dumps(description), json.dumps(encoded_inputs),
         json.dumps(options) if options is not None else None, timeout_ms],
    )
    if "error" in result:
        raise GraphError(result["error"]["name"], result["error"]["message"])
    return {name: decode_tensor(value) for name, value in result["ok"].items()}


def expect_error(page, base_url: str, js: str, arg: Any = None) -> dict[str, str]:
    """Run a JS function on the harness page and return the error it throws.

    Args:
        js: a JS function expression, e.g. ``"async () => { const ctx = await
            navigator.ml.createContext(); ... }"``; it is awaited and called with
            ``arg`` (any JSON-serialisable value).

    Returns:
        ``{"name": ..., "message": ...}`` of the thrown error (or rejection).

    Raises:
        AssertionError: the function returned without throwing.
    """
    open_harness(page, base_url)
    outcome = page.evaluate(
        f"""async (arg) => {{
              try {{ await ({js})(arg); }}
              catch (e) {{ return {{threw: true, name: e?.name ?? typeof e, message: e?.message ?? String(e)}}; }}
              return {{threw: false}};
            }}""",
        arg,
    )
    if not outcome["threw"]:
        raise AssertionError(f"expected the JS function to throw, it returned normally:\n{js}")
    return {"name": outcome["name"], "message": outcome["message"]}


_RUN_BODY_JS = """async (body) => {
  const f = new Function('return (async () => {' + body + '})();');
  try { return {ok: await f()}; }
  catch (e) { return {error: e?.name ?? String(e), message: e?.message ?? ''}; }
}"""


def run_js(page, base_url: str, body: str) -> dict[str, Any]:
    """Run the statements ``body`` as an async function on the harness page (polyfill installed).

    Returns:
        ``{"ok": value}`` with what the body returned (JSON-serialisable), or
        ``{"error": name, "message": message}`` when it threw or rejected.
    """
    open_harness(page, base_url)
    return page.evaluate(_RUN_BODY_JS, body)


def outside_event_loop(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` in a worker thread and return its result (re-raising its error).

    For tests that run a tool which starts its own ``sync_playwright()`` (tools/bench_*.py): once
    pytest-playwright's fixtures have run in this session, the main thread has a running asyncio
    loop, and Playwright's sync API refuses to start inside it. A fresh thread has none.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn, *args, **kwargs).result()
