"""The package's import graph: every module imports on its own in a fresh interpreter, and no module imports
itself through others (a cycle), not even from inside a function, where an import would only hide it."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dponline

PACKAGE = Path(dponline.__file__).parent
SCRIPTS = {"dponline.__main__"}  # runs the command when imported


def _modules() -> dict[str, Path]:
    """``{dotted name: file}`` of every Python module of the package (a package by its ``__init__.py``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
EXTENSIONS = {  # compiled modules, known by their stubs: they import nothing of the package
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.pyi")
    if not path.with_suffix(".py").exists()
}


def _imports(name: str, path: Path) -> set[str]:
    """The package's Python modules that ``name`` imports anywhere in its file: at the top, under ``TYPE_CHECKING``
    and inside functions (``from pkg import sub`` imports ``pkg.sub`` when that is a module, else ``pkg``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                targets.add(submodule if submodule in MODULES or submodule in EXTENSIONS else module)
    return {t for t in targets if t in MODULES and t != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_reads_the_package():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert {"dponline", "dponline.privacy", "dponline.privacy.guarantee", "dponline.experiments.experiment"} <= set(
        graph
    )
    assert "dponline.privacy.gaussian" in graph["dponline.privacy.guarantee"]  # from .gaussian import ...
    assert "dponline.privacy" in graph["dponline"]  # from . import privacy
    assert "dponline.experiments.results" in graph["dponline.experiments.experiment"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_through_others():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    assert _cycles(graph) == []


# Run in a fresh interpreter: learn which outside modules importing the whole package loads (numpy, scipy ...),
# load them once, then import each module of the package in a forked child in which no module of the package is
# loaded yet. Children print nothing; the parent prints {module: error} as JSON.
_ONE_BY_ONE = """
import importlib, json, os, sys

def in_child(names):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            for name in names:
                importlib.import_module(name)
            report = sorted(m for m in sys.modules if m.partition(".")[0] != "dponline")
        except BaseException as exc:
            report = f"{type(exc).__name__}: {exc}"
        os.write(write, json.dumps(report).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else "the child died"

names = sys.argv[1:]
outside = in_child(names)
if isinstance(outside, str):
    raise SystemExit(f"importing every module: {outside}")
for name in outside:
    try:
        importlib.import_module(name)
    except Exception:  # private or platform modules that only their package imports
        pass
assert not any(m.partition(".")[0] == "dponline" for m in sys.modules)
print(json.dumps({name: error for name in names if isinstance(error := in_child([name]), str)}))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="imports each module in a forked child")
def test_every_module_imports_on_its_own_in_a_fresh_interpreter():
    """The first import of a module in a cycle is the one that fails, so each module is imported first, alone."""
    names = sorted(set(MODULES) - SCRIPTS)
    single_threaded = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-c", _ONE_BY_ONE, *names], capture_output=True, text=True, env=single_threaded, timeout=600
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {}
