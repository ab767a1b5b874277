"""``python -m dponline`` runs the ``dponline`` command."""

from .cli import main

raise SystemExit(main())
