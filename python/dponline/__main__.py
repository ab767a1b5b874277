"""``python -m dponline`` runs the ``dponline`` command."""

from ._console import main

raise SystemExit(main())
