"""Writes the conformance cases as JSON for the browser runner.

``python -m tests.conformance.generate [--check]`` collects ``graph_cases()`` and
``validation_cases()`` from every module in ``tests/conformance/cases/`` and writes
``static/conformance/cases/<family>.json`` plus ``index.json`` (served at /conformance/cases/).
Cases are deterministic (each module seeds its own generator), so ``--check`` can verify that
the committed files match the generators; it exits 1 when they differ. Floating-point expected
values may differ by one ULP between CPUs (NumPy's float64 loops are CPU-specific); see
``tests/conformance/staleness.py`` for what is compared exactly and what within that bound.
"""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from pathlib import Path

from tests.conformance import cases as cases_package
from tests.conformance.encode import canonical_nans
from tests.conformance.staleness import differences

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "static" / "conformance" / "cases"


def collect() -> dict[str, dict]:
    """Family name -> {"graph": [...], "validation": [...]} from every cases module."""
    families = {}
    for info in sorted(pkgutil.iter_modules(cases_package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{cases_package.__name__}.{info.name}")
        graph = list(getattr(module, "graph_cases", lambda: [])())
        for case in graph:
            case["expected"] = {k: canonical_nans(v) for k, v in case["expected"].items()}
        validation = list(getattr(module, "validation_cases", lambda: [])())
        names = [c["name"] for c in graph + validation]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"{info.name}: duplicate case names {sorted(duplicates)[:5]}")
        families[info.name] = {"graph": graph, "validation": validation}
    return families


def render(families: dict[str, dict]) -> dict[str, str]:
    """File name -> JSON text."""
    files = {f"{name}.json": json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n"
             for name, data in families.items()}
    index = {
        "families": sorted(families),
        "counts": {name: {"graph": len(d["graph"]), "validation": len(d["validation"])}
                   for name, d in sorted(families.items())},
    }
    files["index.json"] = json.dumps(index, indent=1, sort_keys=True) + "\n"
    return files


def stale_files(files: dict[str, str]) -> dict[str, list[str]]:
    """File name -> where the committed file differs from ``files`` (rendered JSON text) beyond
    what may differ between machines (:func:`tests.conformance.staleness.differences`); files
    that match are left out. A missing committed file is stale."""
    stale = {}
    for name, text in files.items():
        path = OUT_DIR / name
        if not path.exists():
            stale[name] = ["missing"]
        elif path.read_text() != text:
            found = differences(json.loads(path.read_text()), json.loads(text))
            if found:
                stale[name] = found
    return stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the files on disk")
    args = parser.parse_args(argv)
    files = render(collect())
    if args.check:
        stale = stale_files(files)
        extra = [p.name for p in OUT_DIR.glob("*.json") if p.name not in files] if OUT_DIR.exists() else []
        if stale or extra:
            print(f"conformance cases out of date: {sorted([*stale, *extra])}; run python -m tests.conformance.generate")
            for name, found in stale.items():
                print(f"  {name}: {found[0]}")
            return 1
        print("conformance cases up to date")
        return 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for old in OUT_DIR.glob("*.json"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        (OUT_DIR / name).write_text(text)
    counts = json.loads(files["index.json"])["counts"]
    total_g = sum(c["graph"] for c in counts.values())
    total_v = sum(c["validation"] for c in counts.values())
    print(f"wrote {len(counts)} families, {total_g} graph cases, {total_v} validation cases to {OUT_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
