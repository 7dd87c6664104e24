"""JavaScript libraries from npm, pinned, into git-ignored vendor folders (``make setup`` runs it,
as it installs onnxruntime-web with tools/bench_ort.py).

``static/demos/text-generation/vendor/``, the text-generation page's:

* ``@huggingface/tokenizers`` (tokenizers.js): loads the model's ``tokenizer.json`` +
  ``tokenizer_config.json`` (BPE, byte-level pre-tokenizer and decoder, added tokens);
* ``@huggingface/jinja``: renders the chat template of ``tokenizer_config.json``.

``static/harness/vendor/``, clients the suite drives unmodified:

* ``@huggingface/transformers`` (transformers.js): its browser build ``transformers.web.js``, which
  imports ``onnxruntime-web/webgpu`` and ``onnxruntime-common`` by bare name (a page maps them to
  ONNX Runtime Web with an import map; tests/test_transformers_js.py).

Each is one self-contained ES module file, taken from the package's tarball (``npm pack``: no
dependency tree, no install scripts) with its licence; ``VERSION`` in each folder names the versions.

Usage::

    python -m tools.npm_vendor [text-generation] [harness]   (default: both)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "demos" / "text-generation" / "vendor"
HARNESS_VENDOR = ROOT / "static" / "harness" / "vendor"
#: folder name -> (folder, {npm package: (version, {file in the package: name in the folder})})
FOLDERS = {
    "text-generation": (VENDOR, {
        "@huggingface/tokenizers": ("0.2.0", {"dist/tokenizers.mjs": "tokenizers.mjs", "LICENSE": "tokenizers.LICENSE"}),
        "@huggingface/jinja": ("0.5.13", {"dist/index.js": "jinja.mjs", "LICENSE": "jinja.LICENSE"}),
    }),
    "harness": (HARNESS_VENDOR, {
        "@huggingface/transformers": ("4.3.2", {"dist/transformers.web.js": "transformers.web.js",
                                                "LICENSE": "transformers.LICENSE"}),
    }),
}


def install(name: str) -> Path:
    """Fetches the tarballs of FOLDERS[name]'s packages (``npm pack``), copies their files into the
    folder, then writes its VERSION (last, so that it stamps a complete folder).

    Returns:
        the folder.
    Raises:
        FileNotFoundError: npm is not on PATH;
        KeyError: a tarball lacks a file;
        subprocess.CalledProcessError: npm failed.
    """
    folder, packages = FOLDERS[name]
    npm = shutil.which("npm")
    if not npm:
        raise FileNotFoundError(f"npm is not on PATH (needed once to install {', '.join(packages)})")
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([npm, "pack", "--silent", "--pack-destination", scratch,
                        *(f"{package}@{version}" for package, (version, _) in packages.items())],
                       check=True, stdout=subprocess.DEVNULL)
        folder.mkdir(parents=True, exist_ok=True)
        for package, (version, files) in packages.items():
            tarball = Path(scratch) / f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
            with tarfile.open(tarball) as archive:
                for source, target in files.items():
                    member = archive.extractfile(f"package/{source}")
                    if member is None:
                        raise KeyError(f"{package}@{version} has no file {source}")
                    (folder / target).write_bytes(member.read())
    (folder / "VERSION").write_text("".join(f"{package} {version}\n" for package, (version, _) in packages.items()),
                                    encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.npm_vendor", description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", metavar="FOLDER", help=f"{' | '.join(FOLDERS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.folders if name not in FOLDERS]
    if unknown:
        parser.error(f"unknown folder {unknown[0]!r} (expected {' or '.join(FOLDERS)})")
    for name in args.folders or FOLDERS:
        folder = install(name)
        packages = FOLDERS[name][1]
        print(f"installed {', '.join(f'{p}@{v}' for p, (v, _) in packages.items())} into {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
