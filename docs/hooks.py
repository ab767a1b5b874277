"""MkDocs hooks of the documentation site.

* Docstrings are Google-style with Sphinx (reST) cross-reference roles, written for ``help()`` and for the
  source. mkdocstrings renders them as Markdown, where ``:class:`~dponline.aggregation.BLT``` becomes the text
  ``:class:`` followed by code: this hook turns each role into an optional cross-reference (a link when the
  target has a page in the API reference, plain code otherwise; an unresolved optional reference never warns,
  so the strict build stays strict about everything else) and a reST literal-block marker ``::`` into ``:``.
* ``<!-- benchmark-tables -->`` in a page is replaced by the tables :mod:`benches.report` generates from the
  pytest-benchmark JSON committed in ``docs/benchmarks/``.
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH_JSON = ROOT / "docs" / "benchmarks" / "pytest-benchmark.json"

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([^<]+?)</code>")
_LITERAL = re.compile(r"::(</p>)")


def _reference(match: re.Match[str]) -> str:
    tilde, target = match.group(1), html.unescape(match.group(2))
    text, _, explicit = target.partition(" &lt;")
    if explicit:  # :class:`text <target>`
        target, shown = explicit.rstrip("&gt;").rstrip(">"), text
    else:
        shown = target.rsplit(".", 1)[-1] if tilde else target
    identifier = target if target.startswith("dponline") else f"dponline.{target}"
    return f'<autoref identifier="{html.escape(identifier)}" optional><code>{html.escape(shown)}</code></autoref>'


def on_page_content(html_text: str, **kwargs: Any) -> str:
    """Sphinx roles to optional cross-references; ``text::`` (a reST literal block) to ``text:``."""
    return _LITERAL.sub(r":\1", _ROLE.sub(_reference, html_text))


def _report() -> Any:
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benches" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Insert the generated benchmark tables where a page asks for them."""
    marker = "<!-- benchmark-tables -->"
    if marker not in markdown:
        return markdown
    return markdown.replace(marker, _report().markdown(BENCH_JSON))
