"""End-to-end test of the image-classification demo (``static/demos/image-classification/``).

One page load classifies three pictures — the coffee photo (automatically on load), Chelsea the
cat (photo button) and an upload through ``#image-file`` — and checks for each the top-1 class,
the ``#predictions`` list, ``window.lastRun``, and that the page's full probability vector equals
the float64 NumPy forward pass (``tests/reference``) of the exact tensor it fed the graph
(``window.lastInput``) within 1e-4 absolute. The same page also gets an undecodable upload and a
webcam request (no camera here), which must be reported on the page without console errors, and
its JavaScript preprocessing (Pillow's antialiased bilinear resize) is compared with
``tests.reference.classify.preprocess`` (which calls Pillow), on synthetic pixels and on the
bundled photos as Pillow decodes them. Real-size photos (3200 px wide down to 200 px, made from
the bundled ones) must give Pillow's input tensor and the NumPy top-5, and a file chosen before
the model is ready is classified once it is.

Slow-ish: EfficientNet-Lite0 takes seconds per inference on SwiftShader, so the page is opened
with ``?runs=1&warmup=0`` (one inference per picture, three in all).
"""

from __future__ import annotations

import base64
import json
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.reference.classify import classify, load_photo, preprocess
from tests.tolerance import assert_abs

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "static" / "demos" / "image-classification"
MANIFEST = REPO / "server" / "models" / "generated" / "efficientnet-lite0" / "manifest.json"
PAGE = "/demos/image-classification/?runs=1&warmup=0"
CATS = {"tiger cat", "Egyptian cat", "tabby, tabby cat"}
#: |page - float64 NumPy| bound on each of the 1000 probabilities (the brief's end-to-end bound).
PROBABILITY_ATOL = 1e-4
#: |page input - NumPy preprocessing of the Pillow-decoded photo|: exact with this Chromium (its
#: libjpeg-turbo decodes the bundled JPEGs to Pillow's pixels); 2/128 leaves room for a browser
#: whose decoder rounds a level or two differently.
INPUT_ATOL = 2 / 128
#: |page input - Pillow's| for pixels both sides decode alike (PNG): the brief's 1/255 bound. With
#: the (x - 127) / 128 normalisation one 8-bit level is 1/128, so this demands Pillow's exact pixels.
PILLOW_ATOL = 1 / 255

_WAIT_RUN_JS = """(after) => (window.lastRun?.sequence ?? 0) > after || (window.lastError?.sequence ?? 0) > after"""


@pytest.fixture(scope="module")
def manifest() -> dict:
    """The converted model's manifest (``make setup`` writes it)."""
    assert MANIFEST.is_file(), f"{MANIFEST} is missing: run `make setup` (python -m server.models.convert)"
    return json.loads(MANIFEST.read_text())


# Pixels in and the tensor out as base64 bytes (the harness's fromBase64/toBase64): a JSON list
# of a 700x530 RGBA image through page.evaluate takes seconds.
_PREPROCESS_JS = """async ([width, height, pixels, preprocessing]) => {
  const {preprocess} = await import('/demos/image-classification/preprocess.js');
  const {fromBase64, toBase64} = await import('/harness/graph_json.js');
  const image = {width, height, data: new Uint8ClampedArray(fromBase64(pixels).buffer)};
  const tensor = preprocess(image, preprocessing).tensor;
  return toBase64(new Uint8Array(tensor.buffer, tensor.byteOffset, tensor.byteLength));
}"""

# window.lastInput (a Float32Array) as base64 bytes.
_LAST_INPUT_JS = """async () => {
  const {toBase64} = await import('/harness/graph_json.js');
  const x = window.lastInput;
  return toBase64(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
}"""


def _last_input(page) -> np.ndarray:
    """The page's last input tensor (float32, flat)."""
    return np.frombuffer(base64.b64decode(page.evaluate(_LAST_INPUT_JS)), dtype=np.float32)


def _check_preprocessing(page, manifest: dict) -> None:
    """The page's crop/resize/normalise equals Pillow's (the reference) on synthetic noise, the worst
    case for aliasing and rounding: shrinking by 1.3x and 2.7x, enlarging, odd sizes."""
    rng = np.random.default_rng(7)
    for height, width in ((256, 300), (64, 64), (97, 61), (700, 530)):
        rgb = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        rgba = np.concatenate([rgb, np.full((height, width, 1), 255, np.uint8)], axis=2)
        encoded = base64.b64encode(rgba.tobytes()).decode()
        got = np.frombuffer(base64.b64decode(page.evaluate(_PREPROCESS_JS, [width, height, encoded, manifest["preprocessing"]])),
                            dtype=np.float32)
        assert_abs(got.reshape(1, 3, 224, 224), preprocess(rgb, manifest["preprocessing"]), PILLOW_ATOL)


def _open_demo(page, manifest: dict) -> None:
    """Open the demo, check its preprocessing, and wait until the model is built."""
    page.goto(PAGE)
    page.wait_for_function("() => window.demoStatus && window.demoStatus.state !== 'loading'")
    _check_preprocessing(page, manifest)
    status = page.evaluate("() => window.demoStatus")
    assert status == {"state": "ready"}, status
    assert page.locator("#error").is_hidden()


def _sequence(page) -> int:
    return page.evaluate("() => Math.max(window.lastRun?.sequence ?? 0, window.lastError?.sequence ?? 0)")


def _wait_for_run(page, after: int) -> dict:
    """Wait for the classification after number ``after``; fail on a reported error."""
    page.wait_for_function(_WAIT_RUN_JS, arg=after)
    error = page.evaluate("() => window.lastError")
    if error and error["sequence"] > after:
        pytest.fail(f"the page reported: {error['message']}")
    return page.evaluate("() => window.lastRun")


def _check_run(page, run: dict, manifest: dict, source: str, photo: Path | None = None) -> np.ndarray:
    """Check lastRun, #predictions and the probabilities against NumPy; return the probabilities.

    With ``photo``, the input tensor must also match the NumPy preprocessing of that file."""
    labels = json.loads((MANIFEST.parent / manifest["labels"]).read_text())
    assert run["source"] == source
    assert run["buildMs"] > 0 and run["inferenceMs"] > 0, run
    assert run["runs"] == 1 and run["warmup"] == 0 and len(run["timesMs"]) == 1
    adapter = run["adapter"]
    assert adapter["implementation"] in {"polyfill", "native"}
    assert isinstance(adapter.get("vendor"), str) and isinstance(adapter.get("architecture"), str), adapter
    assert isinstance(adapter.get("isFallbackAdapter"), bool), adapter

    items = page.locator("#predictions li")
    shown = [{"label": items.nth(i).get_attribute("data-label"),
              "probability": float(items.nth(i).get_attribute("data-probability"))} for i in range(items.count())]
    assert shown == run["top5"]

    x = _last_input(page)
    x = x.reshape(manifest["inputs"]["input"]["shape"])
    assert np.all(np.abs(x) <= 1.0), "inputs (x - 127) / 128 of 8-bit pixels lie in [-0.99, 1]"
    if photo is not None:
        assert_abs(x, preprocess(load_photo(photo), manifest["preprocessing"]), INPUT_ATOL)
    probabilities = np.asarray(page.evaluate("() => window.lastProbabilities"), dtype=np.float32).reshape(1, 1000)
    expected = classify(MANIFEST, x)
    assert_abs(probabilities, expected, PROBABILITY_ATOL)

    order = np.argsort(-probabilities[0], kind="stable")[:5]
    assert [t["label"] for t in run["top5"]] == [labels[i] for i in order]
    assert [t["probability"] for t in run["top5"]] == pytest.approx([float(probabilities[0, i]) for i in order])
    return probabilities[0]


def test_classification_demo(webnn_page, manifest):
    """Coffee on load, Chelsea by button, an upload, a bad upload and the webcam, in one page load."""
    page = webnn_page
    _open_demo(page, manifest)

    coffee = _wait_for_run(page, 0)  # started on load
    _check_run(page, coffee, manifest, "coffee.jpg", DEMO / "images" / "coffee.jpg")
    assert coffee["top5"][0]["label"] == "espresso", coffee["top5"]
    coffee_input = _last_input(page)

    after = _sequence(page)
    page.click("button[data-photo=chelsea]")
    chelsea = _wait_for_run(page, after)
    _check_run(page, chelsea, manifest, "chelsea.jpg", DEMO / "images" / "chelsea.jpg")
    assert chelsea["top5"][0]["label"] in CATS, chelsea["top5"]
    assert page.get_attribute("button[data-photo=chelsea]", "aria-pressed") == "true"
    assert "Stefan van der Walt" in page.inner_text("#attribution")

    after = _sequence(page)
    page.set_input_files("#image-file", files=[{"name": "my-photo.jpg", "mimeType": "image/jpeg",
                                                "buffer": (DEMO / "images" / "coffee.jpg").read_bytes()}])
    upload = _wait_for_run(page, after)
    _check_run(page, upload, manifest, "my-photo.jpg")
    assert upload["top5"][0]["label"] == "espresso"
    assert np.array_equal(_last_input(page), coffee_input), "same file, same tensor"

    # A file that is no image: reported on the page, not as a console error.
    after = _sequence(page)
    page.set_input_files("#image-file", files=[{"name": "notes.jpg", "mimeType": "image/jpeg", "buffer": b"no image"}])
    page.wait_for_function(_WAIT_RUN_JS, arg=after)
    assert page.evaluate("() => window.lastError.sequence") == after + 1
    assert "notes.jpg could not be decoded" in page.inner_text("#error")

    # No camera on the test machine (or permission refused): a message, no error.
    page.click("#camera-start")
    page.wait_for_function("() => !['', 'Starting the camera…'].includes("
                           "document.getElementById('camera-status').textContent)")
    assert page.locator("#camera-capture").is_disabled()


def test_missing_operator_is_named_on_the_page(webnn_page, manifest):
    """A manifest using an operator the implementation lacks gives a page error naming it
    (a NotSupportedError: console.warn, not console.error)."""
    broken = json.loads(json.dumps(manifest))
    broken["operators"][-1]["op"] = "softmaxWithTemperature"

    def serve_broken(route):
        route.fulfill(status=200, content_type="application/json", body=json.dumps(broken))

    page = webnn_page
    page.route("**/models/efficientnet-lite0/manifest.json", serve_broken)
    page.goto(PAGE)
    page.wait_for_function("() => window.demoStatus && window.demoStatus.state !== 'loading'")
    status = page.evaluate("() => window.demoStatus")
    assert status["state"] == "error"
    assert "softmaxWithTemperature" in status["error"]
    assert "softmaxWithTemperature" in page.inner_text("#error")
    assert page.evaluate("() => window.lastRun") is None


def test_demo_is_listed_on_the_index(server_url):
    """The dev server's index links the demo with demo.json's title."""
    meta = json.loads((DEMO / "demo.json").read_text())
    with urllib.request.urlopen(server_url + "/") as response:
        html = response.read().decode()
    assert 'href="/demos/image-classification/"' in html
    assert meta["title"] in html


def _real_size_photos() -> dict[str, "Image.Image"]:
    """Photos of camera-like sizes made from the bundled ones (nothing big is committed)."""
    from PIL import Image

    def photo(name):
        with Image.open(DEMO / "images" / f"{name}.jpg") as image:
            return image.convert("RGB")

    chelsea, coffee, astronaut = photo("chelsea"), photo("coffee"), photo("astronaut")
    return {
        "chelsea-3200x2127.png": chelsea.resize((3200, 2127), Image.LANCZOS),  # 12.4x down to 224
        "coffee-900x1350.png": coffee.resize((900, 1350), Image.LANCZOS),  # portrait
        "astronaut-768x576.png": astronaut.resize((768, 576), Image.LANCZOS),  # 4:3, 2.25x
        "chelsea-200x133.png": chelsea.resize((200, 133), Image.LANCZOS),  # smaller than 224
    }


def test_real_size_photos_match_pillow(webnn_page, manifest, tmp_path):
    """Uploaded photos of several sizes and aspect ratios: the page's input tensor is Pillow's
    (within 1/255) and its probabilities and top-5 are the NumPy forward pass of Pillow's input."""
    labels = json.loads((MANIFEST.parent / manifest["labels"]).read_text())
    page = webnn_page
    page.goto(PAGE + "&autorun=0")
    page.wait_for_function("() => window.demoStatus && window.demoStatus.state !== 'loading'")
    assert page.evaluate("() => window.demoStatus") == {"state": "ready"}
    for name, image in _real_size_photos().items():
        path = tmp_path / name
        image.save(path)  # PNG: the browser decodes Pillow's exact pixels
        after = _sequence(page)
        page.set_input_files("#image-file", str(path))
        run = _wait_for_run(page, after)
        assert run["source"] == name
        x = _last_input(page).reshape(1, 3, 224, 224)
        want = preprocess(np.asarray(image), manifest["preprocessing"])
        assert_abs(x, want, PILLOW_ATOL)
        expected = classify(MANIFEST, want)
        probabilities = np.asarray(page.evaluate("() => window.lastProbabilities"), dtype=np.float32).reshape(1, 1000)
        assert_abs(probabilities, expected, PROBABILITY_ATOL)
        top5 = [labels[i] for i in np.argsort(-expected[0], kind="stable")[:5]]
        assert [t["label"] for t in run["top5"]] == top5, name
        print(name, [(t["label"], round(t["probability"], 3)) for t in run["top5"]])


def test_file_chosen_before_ready_is_classified_once_ready(webnn_page, manifest):
    """A file set on #image-file while the model loads waits for it, then is classified (no console
    error), and takes the place of the coffee photo the page would classify on load."""
    held = []
    page = webnn_page
    page.route("**/models/efficientnet-lite0/weights.bin", lambda route: held.append(route))
    page.goto(PAGE)
    while not held:
        page.wait_for_timeout(50)
    page.set_input_files("#image-file", files=[{"name": "early.jpg", "mimeType": "image/jpeg",
                                                "buffer": (DEMO / "images" / "chelsea.jpg").read_bytes()}])
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.demoStatus.state") == "loading"
    assert page.evaluate("() => window.lastRun ?? window.lastError ?? null") is None
    assert page.inner_text("#run-status") == "Waiting for the model…"
    held[0].continue_()
    run = _wait_for_run(page, 0)
    assert run["source"] == "early.jpg" and run["sequence"] == 1
    assert run["top5"][0]["label"] in CATS, run["top5"]
    page.wait_for_function("() => document.getElementById('run-status').textContent === ''")
    assert page.evaluate("() => [window.lastRun.sequence, window.lastError ?? null]") == [1, None]
    assert page.locator("#error").is_hidden()


def test_classification_demo_on_the_cpu_context(webnn_page, manifest):
    """?device=cpu runs the demo on the polyfill's CPU context (ONNX Runtime Web's wasm EP): the
    page says so, and coffee.jpg's probabilities match the NumPy reference as on WebGPU."""
    page = webnn_page
    page.goto(PAGE + "&device=cpu")
    page.wait_for_function("() => window.demoStatus && window.demoStatus.state !== 'loading'")
    assert page.evaluate("() => window.demoStatus") == {"state": "ready"}
    run = _wait_for_run(page, 0)
    assert run["adapter"]["cpu"] is True
    assert "on the CPU" in page.inner_text("#adapter")
    assert run["top5"][0]["label"] == "espresso", run["top5"]
    x = _last_input(page).reshape(manifest["inputs"]["input"]["shape"])
    probabilities = np.asarray(page.evaluate("() => window.lastProbabilities"), dtype=np.float32).reshape(1, 1000)
    assert_abs(probabilities, classify(MANIFEST, x), PROBABILITY_ATOL)


def test_profile_on_the_cpu_context_keeps_the_classification(webnn_page):
    """?device=cpu&profile=1: the CPU context has no GPU steps to time (profiling.js readProfile
    rejects with a TypeError naming it), so the page classifies as usual and the profile section
    says why there is no profile; it reported "Classification failed" although the inference ran."""
    page = webnn_page
    page.goto(PAGE + "&device=cpu&profile=1")
    run = _wait_for_run(page, 0)
    assert run["adapter"]["cpu"] is True and run["top5"][0]["label"] == "espresso", run["top5"]
    assert page.evaluate("() => window.lastError ?? null") is None
    note = page.inner_text("#profile")
    assert "No GPU profile" in note and "CPU context" in note, note
    assert page.evaluate("() => window.lastProfile") is None
