"""The documentation's code runs: every ``python`` block of the site's pages and of the README is executed (the
blocks of one page in order, in one namespace, in a scratch directory), a block that includes a file
(``--8<-- "examples/x.py"``) names a file of ``examples/`` that ``test_examples_and_cli.py`` runs, and the
benchmark tables are generated from the committed pytest-benchmark JSON."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_INCLUDE = re.compile(r'^--8<-- "([^"]+)"\s*$')


def _blocks(page: Path) -> list[str]:
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in _blocks(page):
        include = _INCLUDE.match(block.strip())
        if include:
            path = ROOT / include.group(1)
            assert path.parent == ROOT / "examples" and path.is_file(), include.group(1)
            assert path.name in (ROOT / "tests" / "test_examples_and_cli.py").read_text(encoding="utf-8")
            continue
        exec(compile(block, str(page), "exec"), namespace)


def test_the_benchmark_tables_are_generated():
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benches" / "report.py")
    assert spec is not None and spec.loader is not None
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    text = report.markdown(ROOT / "docs" / "benchmarks" / "pytest-benchmark.json")
    assert text.startswith("CPU: ") and "| benchmark | min | median | rounds | × fastest |" in text
    assert "networkx" in text and "1.00×" in text
