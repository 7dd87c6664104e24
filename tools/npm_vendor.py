"""The text-generation page's JavaScript libraries from npm, pinned, into a git-ignored vendor folder
(``make setup`` runs it, as it installs onnxruntime-web with tools/bench_ort.py).

* ``@huggingface/tokenizers`` (tokenizers.js): loads the model's ``tokenizer.json`` +
  ``tokenizer_config.json`` (BPE, byte-level pre-tokenizer and decoder, added tokens);
* ``@huggingface/jinja``: renders the chat template of ``tokenizer_config.json``.

Both ship one self-contained ES module each (no imports), copied as ``vendor/tokenizers.mjs`` and
``vendor/jinja.mjs`` with their licences; ``vendor/VERSION`` names the versions.

Usage::

    python -m tools.npm_vendor [--out static/demos/text-generation/vendor]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "static" / "demos" / "text-generation" / "vendor"
#: npm package -> (version, {file in the package: name in the vendor folder})
PACKAGES = {
    "@huggingface/tokenizers": ("0.2.0", {"dist/tokenizers.mjs": "tokenizers.mjs", "LICENSE": "tokenizers.LICENSE"}),
    "@huggingface/jinja": ("0.5.13", {"dist/index.js": "jinja.mjs", "LICENSE": "jinja.LICENSE"}),
}


def install(vendor: Path = VENDOR) -> None:
    """``npm install`` PACKAGES in a scratch folder; copy their files into ``vendor``, then VERSION.

    Raises:
        FileNotFoundError: npm is not on PATH, or a package lacks a file;
        subprocess.CalledProcessError: npm failed.
    """
    npm = shutil.which("npm")
    if not npm:
        raise FileNotFoundError("npm is not on PATH (needed once to install the text-generation page's libraries)")
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", scratch,
                        *(f"{name}@{version}" for name, (version, _) in PACKAGES.items())], check=True)
        vendor.mkdir(parents=True, exist_ok=True)
        for name, (_, files) in PACKAGES.items():
            for source, target in files.items():
                shutil.copyfile(Path(scratch) / "node_modules" / name / source, vendor / target)
    (vendor / "VERSION").write_text("".join(f"{name} {version}\n" for name, (version, _) in PACKAGES.items()),
                                    encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.npm_vendor", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=VENDOR)
    args = parser.parse_args(argv)
    install(args.out)
    print(f"installed {', '.join(f'{n}@{v}' for n, (v, _) in PACKAGES.items())} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
