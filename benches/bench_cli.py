"""The command line the ``compare_*.py`` scripts share: a parser described by the script's first docstring line
with a ``--quick`` flag, and one JSON line per measured row."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any


def quick_parser(doc: str, quick_help: str = "shorter runs") -> argparse.ArgumentParser:
    """An argument parser whose description is the first line of ``doc`` (the script's ``__doc__``), with the
    ``--quick`` flag (``quick_help`` says what it shortens); a script adds its own flags to it."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    return parser


def print_row(row: Mapping[str, Any], digits: int = 3) -> None:
    """``row`` as one JSON line on stdout, floats rounded to ``digits`` decimals, flushed so that each row shows
    as soon as it is measured."""
    print(json.dumps({k: round(v, digits) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
