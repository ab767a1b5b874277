"""The ``dponline`` console script: runs :func:`dponline.cli.main`, or says in one line which extra the command
needs when the core install lacks it (the jobs write Parquet tables and plots: ``dponline[experiments]``)."""

from __future__ import annotations

import sys

from ._extras import MissingExtraError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dponline`` console script and of ``python -m dponline``.

    Returns:
        The command's exit code; 2 (a usage error) when an optional dependency is missing.
    """
    try:
        from .cli import main as command
    except MissingExtraError as exc:
        print(f"dponline: error: {exc}", file=sys.stderr)
        return 2
    return command(argv)
