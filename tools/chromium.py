"""Find (and, with ``--ensure``, install) the Chromium that the browser tests drive.

Order of preference, the same for ``make test`` and ``tests/conftest.py``:

1. ``$WEBNN_CHROMIUM`` -- an explicit executable (the GPU host bundle sets it); it
   must exist, otherwise that is an error rather than a silent fallback.
2. A system Chromium on ``PATH``: ``chromium``, ``chromium-browser``,
   ``google-chrome``, ``google-chrome-stable``.
3. Playwright's own Chromium download, when one is already installed.

``--ensure`` installs one when none is found: ``apt-get install -y chromium`` when
running as root on Debian/Ubuntu, otherwise ``python -m playwright install chromium``.

Usage::

    python -m tools.chromium            # print the executable, exit 1 if none
    python -m tools.chromium --ensure   # install one if needed, then print it

The path goes to stdout alone; progress and errors go to stderr.

``launch_options()`` gives the Playwright launch arguments for that Chromium, used by the test
suite (``tests/conftest.py``) and the benchmark commands (``tools/bench_*.py``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: Chromium flags giving WebGPU through SwiftShader on a machine without a GPU.
SWIFTSHADER_ARGS = [
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--enable-unsafe-swiftshader",
    "--no-sandbox",
]


class ChromiumNotFound(RuntimeError):
    """No usable Chromium executable was found (or ``$WEBNN_CHROMIUM`` is wrong)."""


def _is_executable(path: str | os.PathLike[str]) -> bool:
    p = Path(path)
    return p.is_file() and os.access(p, os.X_OK)


def playwright_chromium() -> str | None:
    """Return Playwright's downloaded Chromium if it is installed, else ``None``.

    Asks the installed ``playwright`` package where its browser would live; returns
    ``None`` when the package is missing or the browser was never downloaded.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    try:
        with sync_playwright() as p:
            path = p.chromium.executable_path
    except Exception:  # driver missing or broken: treat as "no Playwright browser"
        return None
    return path if path and _is_executable(path) else None


def find_chromium(*, include_playwright: bool = True) -> str | None:
    """Return the Chromium executable to use, or ``None`` when there is none.

    Raises:
        ChromiumNotFound: ``$WEBNN_CHROMIUM`` is set but is not an executable file.
    """
    explicit = os.environ.get("WEBNN_CHROMIUM")
    if explicit:
        if not _is_executable(explicit):
            raise ChromiumNotFound(f"$WEBNN_CHROMIUM={explicit!r} is not an executable file")
        return explicit
    for name in SYSTEM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return playwright_chromium() if include_playwright else None


def launch_options() -> dict[str, Any]:
    """Playwright ``chromium.launch`` keyword arguments from the environment.

    ``executable_path``: ``find_chromium(include_playwright=False)`` when it finds one (else absent:
    Playwright uses its own download); ``args``: ``$WEBNN_CHROMIUM_ARGS`` shell-split, or
    ``SWIFTSHADER_ARGS`` when it is unset; ``ignore_default_args``: ``$WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS``
    shell-split, when set and not empty (the GPU host sets all three). ``headless`` is left to the
    caller.

    Raises:
        ChromiumNotFound: ``$WEBNN_CHROMIUM`` is set but is not an executable file.
    """
    options: dict[str, Any] = {}
    executable = find_chromium(include_playwright=False)
    if executable:
        options["executable_path"] = executable
    env_args = os.environ.get("WEBNN_CHROMIUM_ARGS")
    options["args"] = shlex.split(env_args) if env_args is not None else list(SWIFTSHADER_ARGS)
    ignore = os.environ.get("WEBNN_CHROMIUM_IGNORE_DEFAULT_ARGS")
    if ignore:
        options["ignore_default_args"] = shlex.split(ignore)
    return options


def _is_debian_like() -> bool:
    return Path("/etc/debian_version").exists() and shutil.which("apt-get") is not None


def install_chromium() -> None:
    """Install a Chromium: Debian's package as root on Debian/Ubuntu, else Playwright's.

    Raises:
        subprocess.CalledProcessError: the installer failed.
    """
    if hasattr(os, "geteuid") and os.geteuid() == 0 and _is_debian_like():
        print("tools.chromium: installing Debian's chromium with apt-get", file=sys.stderr)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update"], check=True, env=env, stdout=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
                       check=True, env=env, stdout=sys.stderr)
    else:
        print("tools.chromium: installing Playwright's chromium", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"],
                       check=True, stdout=sys.stderr)


def ensure_chromium() -> str:
    """Return a Chromium executable, installing one first when none is found.

    Raises:
        ChromiumNotFound: still none after installing, or ``$WEBNN_CHROMIUM`` is wrong.
    """
    found = find_chromium()
    if found:
        return found
    install_chromium()
    found = find_chromium()
    if not found:
        raise ChromiumNotFound("installed a Chromium but still cannot find its executable")
    return found


def main(argv: list[str] | None = None) -> int:
    """Command line: print the Chromium executable (installing one with ``--ensure``)."""
    parser = argparse.ArgumentParser(prog="python -m tools.chromium", description=__doc__.splitlines()[0])
    parser.add_argument("--ensure", action="store_true", help="install a Chromium when none is found")
    args = parser.parse_args(argv)
    try:
        path = ensure_chromium() if args.ensure else find_chromium()
    except (ChromiumNotFound, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not path:
        print("error: no Chromium found (run with --ensure to install one)", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
