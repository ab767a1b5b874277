"""The classic NYSE(O) price-relative data set of the online-portfolio literature.

36 NYSE stocks over 5,651 trading days (3 July 1962 to 31 December 1984), the data set used
by Cover (1991), "Universal Portfolios", and later by Borodin, El-Yaniv & Gogan (2004), "Can we
learn to beat the best stock", and most online portfolio selection papers since.

The bundled file ``data/nyse_o.csv.gz`` is a byte-exact, gzip-compressed copy of
``universal/data/nyse_o.csv`` from the PyPI package ``universal-portfolios`` 0.4.17. That CSV
holds *normalised* prices: row ``t`` is the cumulative product of the daily price relatives up
to day ``t``, i.e. every price is ``1`` just before the first trading day. Price relatives are
therefore recovered as ``r_0 = P_0`` and ``r_t = P_t / P_{t-1}`` for ``t >= 1``, which gives back
all 5,651 trading days. See ``PROVENANCE.md`` next to this module for checksums and licences.

This module deliberately imports nothing from the compiled extension ``dponline._core``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ._common import read_bundled_table, read_only

__all__ = ["NYSEData", "load_nyse", "nyse_expert_losses"]

_DATA_FILE = "nyse_o.csv.gz"
_N_DAYS = 5651
_N_ASSETS = 36

_DESCRIPTION = (
    "NYSE(O): daily price relatives of 36 NYSE stocks over 5,651 trading days "
    "(1962-07-03 to 1984-12-31), as used by Cover (1991) 'Universal Portfolios' and "
    "Borodin, El-Yaniv & Gogan (2004) 'Can we learn to beat the best stock'. "
    "Derived from universal/data/nyse_o.csv of the PyPI package universal-portfolios 0.4.17 "
    "(Feedback MIT License (FMIT), (c) 2014 Mojmir Vinkler); r_0 = P_0 and r_t = P_t / P_(t-1) "
    "from the package's normalised prices (P_(-1) = 1). Column labels are the package's "
    "placeholder names, not real ticker symbols."
)


@dataclass(frozen=True, eq=False)
class NYSEData:
    """The NYSE(O) data set as returned by :func:`load_nyse`.

    Attributes
    ----------
    relatives:
        ``float64`` array of shape ``(5651, 36)`` (days x assets), read-only. Entry ``[t, i]``
        is the price relative of stock ``i`` on trading day ``t``: the ratio of its closing
        price on day ``t`` to that on day ``t - 1`` (dimensionless, strictly positive).
        Buying and holding stock ``i`` from the start multiplies wealth by
        ``relatives[:, i].prod()``.
    tickers:
        The 36 column labels, in column order. They are the upstream CSV's header labels
        (``"A"``, ..., ``"x7"``, ..., ``"d"``), which are placeholders rather than NYSE ticker
        symbols.
    description:
        Short provenance text: source, transformation and licence.
    """

    relatives: np.ndarray
    tickers: tuple[str, ...]
    description: str

    @property
    def n_days(self) -> int:
        """Number of trading days (rows of :attr:`relatives`), 5651."""
        return int(self.relatives.shape[0])

    @property
    def n_assets(self) -> int:
        """Number of stocks (columns of :attr:`relatives`), 36."""
        return int(self.relatives.shape[1])


def _read_prices() -> tuple[np.ndarray, tuple[str, ...]]:
    """Parse the bundled CSV into (normalised prices ``(5651, 36)`` float64, column labels)."""
    tickers, prices = read_bundled_table(_DATA_FILE, None, _N_DAYS)
    if len(tickers) != _N_ASSETS:
        raise RuntimeError(f"bundled {_DATA_FILE} is corrupt: {len(tickers)} labels, expected {_N_ASSETS}")
    if not np.all(prices > 0.0):
        raise RuntimeError(f"bundled {_DATA_FILE} is corrupt: non-positive prices")
    return prices, tickers


def _relatives_from_prices(prices: np.ndarray) -> np.ndarray:
    """Price relatives of normalised prices whose implicit previous price is 1."""
    relatives = np.empty_like(prices)
    relatives[0] = prices[0]
    np.divide(prices[1:], prices[:-1], out=relatives[1:])
    return relatives


@functools.lru_cache(maxsize=1)
def load_nyse() -> NYSEData:
    """Load the NYSE(O) price relatives (36 stocks, 5,651 trading days, 1962-07-03 to 1984-12-31).

    Returns
    -------
    NYSEData
        ``relatives``: ``numpy.ndarray`` of dtype ``float64`` and shape ``(5651, 36)``
        (trading days x stocks), read-only. Entry ``[t, i]`` is the price relative of stock
        ``i`` on day ``t``: its (normalised) closing price on day ``t`` divided by that on day
        ``t - 1``; dimensionless and strictly positive (range about 0.75 to 1.35).
        ``tickers``: the 36 column labels (placeholders from the source, not NYSE symbols).
        ``description``: short provenance text. ``n_days`` and ``n_assets`` give the shape.

    Notes
    -----
    Source: ``universal/data/nyse_o.csv`` of the PyPI package ``universal-portfolios`` 0.4.17
    (licence: "The Feedback MIT License (FMIT)", copyright 2014 Mojmir Vinkler), bundled
    byte-exactly and gzip-compressed. The data set originates with Cover (1991), "Universal
    Portfolios", Mathematical Finance 1(1), and Borodin, El-Yaniv & Gogan (2004), "Can we learn
    to beat the best stock", JAIR 21. The relatives are recomputed on every fresh load from the
    stored prices, which makes them bit-for-bit reproducible: ``r_0 = P_0`` (prices are
    normalised to 1 before the first day) and ``r_t = P_t / P_{t-1}``.

    The result is cached: every call returns the same object, whose array is read-only (its
    writeable flag cannot be switched back on), so sharing it is safe. Copy it
    (``data.relatives.copy()``) to modify it.
    """
    prices, tickers = _read_prices()
    return NYSEData(relatives=read_only(_relatives_from_prices(prices)), tickers=tickers, description=_DESCRIPTION)


@functools.lru_cache(maxsize=1)
def nyse_expert_losses() -> np.ndarray:
    """Expert-advice losses on NYSE(O): one expert per stock.

    The loss of stock ``i`` on day ``t`` is ``1 - r[t, i] / max_j r[t, j]`` with ``r`` the price
    relatives of :func:`load_nyse`: 0 for the day's best stock, closer to 1 the worse the stock did
    relative to it. Each row depends on that day's relatives only (the normaliser is the same
    day's best relative, not a statistic of the stream), so replacing one day changes one row, and
    every loss lies in ``[0, 1)`` by construction (relatives are > 0; the correctly rounded
    quotient of ``r <= m`` by ``m`` is ``<= 1``).

    Returns
    -------
    numpy.ndarray
        ``float64``, shape ``(5651, 36)`` (days x stocks), values in ``[0, 1)``, at least one zero
        per row, read-only and cached (every call returns the same array).
    """
    relatives = load_nyse().relatives
    return read_only(1.0 - relatives / relatives.max(axis=1, keepdims=True))
