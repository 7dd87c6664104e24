"""Classify a photo with a converted model manifest, in float64 NumPy.

Usage: ``python -m tests.reference.classify PHOTO [PHOTO ...] [--manifest PATH] [--top K]``

Preprocessing follows the manifest's ``preprocessing`` entry (what the demo
page does): take the centred square of ``centralCrop`` x the shorter side,
resize it to ``size`` x ``size`` with Pillow's antialiased bilinear filter
(``Image.resize(..., Image.BILINEAR, box=...)``, what torchvision's PIL path
does; the page's resize.js reproduces it), compute (x - mean) / scale per
channel, and lay it out as NCHW float32. Pillow is a test-time dependency
(``load_photo`` and ``preprocess`` raise ImportError without it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from .graph import load_manifest_constants, run_description

DEFAULT_MANIFEST = (Path(__file__).resolve().parents[2] / "server" / "models" / "generated"
                    / "efficientnet-lite0" / "manifest.json")


def load_photo(path: str | Path) -> np.ndarray:
    """Decode an image file to an RGB uint8 array [height, width, 3] (needs Pillow)."""
    from PIL import Image  # optional, test-only dependency

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def preprocess(rgb: np.ndarray, preprocessing: dict) -> np.ndarray:
    """Turn an RGB uint8 [H, W, 3] photo into the model's float32 [1, 3, S, S] input (needs Pillow).

    ``preprocessing`` is the manifest's dict: {layout: "nchw", size: S,
    centralCrop: fraction of the shorter side, mean, scale}.
    """
    if preprocessing.get("layout", "nchw") != "nchw":
        raise ValueError("only the nchw layout is implemented")
    from PIL import Image  # test-only dependency

    height, width = rgb.shape[:2]
    size = int(preprocessing["size"])
    side = preprocessing["centralCrop"] * min(height, width)
    left, top = (width - side) / 2, (height - side) / 2
    image = Image.fromarray(np.ascontiguousarray(rgb[..., :3], dtype=np.uint8), "RGB")
    resized = np.asarray(image.resize((size, size), Image.BILINEAR, box=(left, top, left + side, top + side)),
                         dtype=np.float64)
    normalised = (resized - preprocessing["mean"]) / preprocessing["scale"]
    return normalised.transpose(2, 0, 1)[None].astype(np.float32)


def classify(manifest_path: str | Path, input_tensor: np.ndarray) -> np.ndarray:
    """Run the manifest's graph on ``input_tensor``; returns the float64 output [1, classes]."""
    manifest_path = Path(manifest_path)
    manifest = json.loads(manifest_path.read_text())
    constants = load_manifest_constants(manifest_path)
    (input_name,) = manifest["inputs"]
    outputs = run_description(manifest, constants, {input_name: input_tensor})
    return outputs[manifest["output"]["name"]]


def top_k(probabilities: np.ndarray, labels: list[str], k: int = 5) -> list[tuple[int, str, float]]:
    """The ``k`` most probable classes as (index, label, probability), best first."""
    flat = np.asarray(probabilities).reshape(-1)
    order = np.argsort(-flat, kind="stable")[:k]
    return [(int(i), labels[i], float(flat[i])) for i in order]


def main(argv: list[str] | None = None) -> int:
    """Print the top classes of each photo given on the command line."""
    parser = argparse.ArgumentParser(description="float64 NumPy classification with a model manifest")
    parser.add_argument("photos", nargs="+", type=Path)
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args(argv)
    manifest = json.loads(args.manifest.read_text())
    labels = json.loads((args.manifest.parent / manifest["labels"]).read_text())
    for photo in args.photos:
        tensor = preprocess(load_photo(photo), manifest["preprocessing"])
        probabilities = classify(args.manifest, tensor)
        print(photo.name)
        for index, label, p in top_k(probabilities, labels, args.top):
            print(f"  {index:4d} {p:.4f} {label}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
