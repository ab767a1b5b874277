"""``python -m dponline`` runs the ``dponline`` command."""

from ._console import main

if __name__ == "__main__":
    raise SystemExit(main())
