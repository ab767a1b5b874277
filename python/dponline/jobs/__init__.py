"""The ``dponline`` command's jobs, each a preset of :mod:`dponline.experiments` (one module per job)."""
