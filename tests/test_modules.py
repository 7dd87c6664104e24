"""The polyfill's ES module graph (static/polyfill/**/*.js): acyclic, and every module loads alone.

An import cycle makes the evaluation order depend on which module a page imports first (a module
in the cycle can run before a binding it imports is initialised: ReferenceError), so the project
keeps none (COMMON.md). The static check reads the ``import ... from '...'`` / ``export ... from``
statements; the browser check imports each module first in a fresh iframe.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "static" / "polyfill"
MODULES = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.js"))

#: Static import/re-export statements; `import x from`, `import {a} from`, `import '...'`, `export {a} from`.
IMPORT = re.compile(r"""^\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]""", re.M)


def imports_of(module: str) -> list[str]:
    """Relative module paths (under static/polyfill/) that ``module`` imports statically."""
    text = (ROOT / module).read_text()
    out = []
    for spec in IMPORT.findall(text):
        target = (ROOT / module).parent.joinpath(spec).resolve()
        out.append(target.relative_to(ROOT).as_posix())
    return out


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path [a, b, ..., a], or None when it is acyclic (DFS colouring)."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in graph:
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_reports_a_cycle():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None


def test_imports_resolve_to_modules():
    for module in MODULES:
        for target in imports_of(module):
            assert (ROOT / target).is_file(), f"{module} imports missing {target}"


def test_module_graph_is_acyclic():
    graph = {m: imports_of(m) for m in MODULES}
    assert sum(map(len, graph.values())) > len(MODULES), "the import parser found too few imports"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_each_module_imports_alone(webnn_page, server_url):
    """Each module, imported first in a fresh realm (one same-origin iframe per module, so each has
    its own module map), evaluates without error: no binding is read before it is initialised."""
    from tests.graph_runner import open_harness

    open_harness(webnn_page, server_url)
    failures = webnn_page.evaluate("""async (modules) => {
      const failures = {};
      const one = async (m) => {
        const frame = document.createElement('iframe');
        document.body.append(frame);
        try {
          await frame.contentWindow.eval(`import(${JSON.stringify(location.origin + '/polyfill/' + m)})`);
        } catch (e) {
          failures[m] = `${e.name}: ${e.message}`;
        } finally {
          frame.remove();
        }
      };
      for (let i = 0; i < modules.length; i += 8) await Promise.all(modules.slice(i, i + 8).map(one));
      return failures;
    }""", MODULES)
    assert len(MODULES) > 40 and "ops/conv2d.js" in MODULES
    assert failures == {}


#: sources the repository rules below apply to (the vendored libraries excepted)
SOURCES = [p for p in ROOT.rglob("*.js") if "vendor" not in p.relative_to(ROOT).parts]
REPO = ROOT.parent.parent
#: absolute paths of a machine, spelled so that this file does not hold them
MACHINE_PATH = re.compile("(?<![\\w.])/(?:" + "|".join(["wo" + "rk", "ho" + "me", "Us" + "ers"]) + ")/")


def test_ops_import_nothing_from_compile():
    """Operators and kernels (ops/) lower what the passes decided, as attributes of the nodes they
    get; they never reach into compile/ (the passes, Lowering, the plan)."""
    offenders = [f"ops/{p.name} -> {t}" for p in (ROOT / "ops").glob("*.js")
                 for t in imports_of(f"ops/{p.name}") if t.startswith("compile/")]
    assert not offenders, offenders


def test_modules_stay_small():
    """A module owns one thing: about 400 lines at most."""
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in SOURCES}
    assert len(sizes) > 40
    assert not {m: n for m, n in sizes.items() if n > 420}, sizes


def test_no_machine_paths_or_issue_numbers():
    """Code and docs name no absolute path of a machine; the polyfill's comments cite no issue
    numbers (what an issue decided is said as a current fact, measurements live in docs/)."""
    texts = SOURCES + [*(REPO / "docs").glob("*.md"), *(REPO / "tools").glob("*.py"), REPO / "README.md"]
    paths = [f"{p.relative_to(REPO)}:{n}" for p in texts
             for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if MACHINE_PATH.search(line)]
    assert not paths, paths
    issue = re.compile(r"\b[Ii]ssues? \d+|(?<![\w&'])#\d+\b")
    numbers = [f"{p.relative_to(REPO)}:{n}" for p in SOURCES
               for n, line in enumerate(p.read_text().splitlines(), 1) if issue.search(line)]
    assert not numbers, numbers
