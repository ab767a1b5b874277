"""Bundled data sets for examples, tests and benchmarks.

* :func:`load_nyse` — the NYSE(O) price relatives (36 stocks x 5,651 trading days, 1962-1984)
  of Cover (1991) and Borodin, El-Yaniv & Gogan (2004), returned as a read-only
  :class:`NYSEData`.

Nothing here needs the compiled extension ``dponline._core``. Provenance, licences and
checksums are in ``PROVENANCE.md`` in this directory.
"""

from __future__ import annotations

from .nyse import NYSEData, load_nyse

__all__ = ["NYSEData", "load_nyse"]
