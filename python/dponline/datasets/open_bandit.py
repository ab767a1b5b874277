"""The Open Bandit Dataset sample shipped with ``obp`` 0.4.1 (uniform-random policy, "all" campaign).

10,000 logged impressions from ZOZOTOWN's fashion e-commerce site (Saito, Aihara, Matsutani &
Narita, "Open Bandit Dataset and Pipeline", 2020): in each, the uniformly random policy showed one
of 80 items at one of 3 positions to a user and logged whether it was clicked (38 clicks in all).
Two bundled files, both derived from the ``obp`` 0.4.1 wheel (Apache-2.0; see ``PROVENANCE.md``):

* ``data/obd_random_all.csv.gz`` — a compact copy of ``obp/dataset/obd/random/all/all.csv``: the
  rows in their original (time) order with only ``item_id``, ``position``, ``click`` and the four
  categorical user features, whose hashed values are replaced by small integer codes (``0, 1, ...``
  in order of first appearance in the file; the code-to-hash table is in ``PROVENANCE.md``).
* ``data/obd_random_all_item_context.csv.gz`` — ``item_context.csv`` unchanged, gzip-compressed.

Loaders and derived products (all deterministic, no randomness, cached, read-only arrays):

* :func:`load_open_bandit` — the logged rounds and the item features (:class:`OpenBanditData`);
* :func:`open_bandit_click_probabilities` — 80 smoothed item click-through rates, the arms of a
  Bernoulli bandit environment;
* :func:`open_bandit_round_probabilities` — per-round click probabilities ``p[t, a]`` of shape
  ``(10000, 80)``: the item rates modulated by the logged round's user context;
* :func:`open_bandit_item_blocks` — a partition of the 80 items by a categorical item feature,
  the blocks of a partition matroid.

This module deliberately imports nothing from the compiled extension ``dponline._core``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ._common import positive_finite, read_bundled_table, read_bundled_text, read_only

__all__ = [
    "DEFAULT_PRIOR_STRENGTH",
    "OpenBanditData",
    "load_open_bandit",
    "open_bandit_click_probabilities",
    "open_bandit_item_blocks",
    "open_bandit_round_probabilities",
]

_ROUNDS_FILE = "obd_random_all.csv.gz"
_ITEMS_FILE = "obd_random_all_item_context.csv.gz"
_ROUNDS_HEADER = ("item_id", "position", "click") + tuple(f"user_feature_{k}" for k in range(4))
_ITEMS_HEADER = ("", "item_id") + tuple(f"item_feature_{k}" for k in range(4))
_N_ROUNDS, _N_ITEMS, _N_POSITIONS, _N_USER_FEATURES = 10000, 80, 3, 4
_USER_FEATURE_LEVELS = (3, 5, 8, 8)

#: Default strength ``m`` (in pseudo-impressions) of the Beta prior used by the smoothed rates.
DEFAULT_PRIOR_STRENGTH = 100.0

_DESCRIPTION = (
    "Open Bandit Dataset sample (uniform-random policy, 'all' campaign): 10,000 logged impressions of "
    "80 fashion items at 3 positions on ZOZOTOWN, with clicks and 4 categorical user features, and the "
    "80 items' features. From obp/dataset/obd/random/all/{all.csv,item_context.csv} of the PyPI package "
    "obp 0.4.1 (Apache-2.0); compact copy: columns item_id, position, click, user features as integer "
    "codes. Cite Saito, Aihara, Matsutani & Narita, 'Open Bandit Dataset and Pipeline: Towards "
    "Realistic and Reproducible Off-Policy Evaluation', arXiv:2008.07146 (2020)."
)


@dataclass(frozen=True, eq=False)
class OpenBanditData:
    """The Open Bandit Dataset sample as returned by :func:`load_open_bandit`.

    Attributes
    ----------
    item_id:
        ``int64`` array of shape ``(10000,)``, read-only: the item shown in each logged round,
        in ``0..79``.
    position:
        ``int64`` array of shape ``(10000,)``, read-only: the slot it was shown in, in ``0..2``
        (the file's ``position`` 1, 2, 3 minus one, as ``obp`` does).
    click:
        ``int64`` array of shape ``(10000,)``, read-only: 1 if the impression was clicked, else 0
        (38 clicks in all).
    user_features:
        ``int64`` array of shape ``(10000, 4)``, read-only: the codes of the four categorical user
        features ``user_feature_0..3`` (3, 5, 8 and 8 levels; codes in order of first appearance).
    item_feature_0:
        ``float64`` array of shape ``(80,)``, read-only: the items' numerical feature (a
        standardised value with 41 distinct levels, -1.06 to 3.78).
    item_categories:
        ``int64`` array of shape ``(80, 3)``, read-only: codes of the categorical item features
        ``item_feature_1..3`` (12, 21 and 7 levels; codes in order of first appearance by item id).
    description:
        Short provenance text: source, transformation, licence and citation.
    """

    item_id: np.ndarray
    position: np.ndarray
    click: np.ndarray
    user_features: np.ndarray
    item_feature_0: np.ndarray
    item_categories: np.ndarray
    description: str

    @property
    def n_rounds(self) -> int:
        """Number of logged rounds, 10000."""
        return int(self.item_id.shape[0])

    @property
    def n_items(self) -> int:
        """Number of items (arms), 80."""
        return _N_ITEMS

    @property
    def n_positions(self) -> int:
        """Number of display positions (slots), 3."""
        return _N_POSITIONS


def _first_appearance_codes(values: list[str]) -> np.ndarray:
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(v, len(codes)) for v in values], dtype=np.int64)


def _read_rounds() -> np.ndarray:
    _, table = read_bundled_table(_ROUNDS_FILE, _ROUNDS_HEADER, _N_ROUNDS, np.int64)
    ok = (
        np.all((table[:, 0] >= 0) & (table[:, 0] < _N_ITEMS))
        and np.all((table[:, 1] >= 1) & (table[:, 1] <= _N_POSITIONS))
        and np.all((table[:, 2] == 0) | (table[:, 2] == 1))
        and all(np.all((table[:, 3 + k] >= 0) & (table[:, 3 + k] < n)) for k, n in enumerate(_USER_FEATURE_LEVELS))
    )
    if not ok:
        raise RuntimeError(f"bundled {_ROUNDS_FILE} is corrupt: table of shape {table.shape} or values out of range")
    return table


def _read_items() -> tuple[np.ndarray, np.ndarray]:
    text = read_bundled_text(_ITEMS_FILE)
    lines = text.splitlines()
    if tuple(lines[0].split(",")) != _ITEMS_HEADER or len(lines) != _N_ITEMS + 1:
        raise RuntimeError(f"bundled {_ITEMS_FILE} is corrupt: header {lines[0]!r}, {len(lines)} lines")
    fields = [line.split(",") for line in lines[1:]]
    if any(len(f) != len(_ITEMS_HEADER) for f in fields) or [int(f[1]) for f in fields] != list(range(_N_ITEMS)):
        raise RuntimeError(f"bundled {_ITEMS_FILE} is corrupt: rows are not items 0..79 in order")
    numeric = np.array([float(f[2]) for f in fields], dtype=np.float64)
    categories = np.stack([_first_appearance_codes([f[3 + k] for f in fields]) for k in range(3)], axis=1)
    if not np.all(np.isfinite(numeric)):
        raise RuntimeError(f"bundled {_ITEMS_FILE} is corrupt: non-finite item_feature_0")
    return numeric, categories


@functools.lru_cache(maxsize=1)
def load_open_bandit() -> OpenBanditData:
    """Load the Open Bandit Dataset sample: 10,000 logged rounds, 80 items, 3 positions.

    Returns
    -------
    OpenBanditData
        The logged rounds (``item_id``, ``position`` 0-based, ``click``, ``user_features`` codes;
        ``int64``, shapes ``(10000,)`` and ``(10000, 4)``) and the item features
        (``item_feature_0`` ``float64`` ``(80,)``, ``item_categories`` ``int64`` ``(80, 3)``).
        All arrays read-only; cached (every call returns the same object).

    Notes
    -----
    Source: ``obp/dataset/obd/random/all/all.csv`` and ``item_context.csv`` of the PyPI package
    ``obp`` 0.4.1 (Apache-2.0); see the module docstring for the compact format and
    ``PROVENANCE.md`` for checksums. The propensity score (1/80 in every row of this sample), the
    timestamps and the 80 ``user-item_affinity_*`` columns of the original are not shipped.
    """
    table = _read_rounds()
    numeric, categories = _read_items()
    return OpenBanditData(
        item_id=read_only(table[:, 0]),
        position=read_only(table[:, 1] - 1),
        click=read_only(table[:, 2]),
        user_features=read_only(table[:, 3:]),
        item_feature_0=read_only(numeric),
        item_categories=read_only(categories),
        description=_DESCRIPTION,
    )


def _smoothed_rates(clicks: np.ndarray, shows: np.ndarray, prior_mean: float, strength: float) -> np.ndarray:
    """Posterior means ``(clicks + m*mu) / (shows + m)`` under a Beta(m*mu, m*(1 - mu)) prior."""
    return (clicks + strength * prior_mean) / (shows + strength)


def _logit(p: np.ndarray | float) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    return np.log(p) - np.log1p(-p)


@functools.lru_cache(maxsize=8)
def _click_probabilities(strength: float) -> np.ndarray:
    data = load_open_bandit()
    pooled = float(data.click.sum()) / data.n_rounds
    clicks = np.bincount(data.item_id, weights=data.click, minlength=_N_ITEMS)
    shows = np.bincount(data.item_id, minlength=_N_ITEMS).astype(np.float64)
    return read_only(_smoothed_rates(clicks, shows, pooled, strength))


def open_bandit_click_probabilities(prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> np.ndarray:
    """Smoothed click-through rate of each of the 80 items: the arms of a Bernoulli bandit.

    For item ``a`` shown ``n_a`` times and clicked ``c_a`` times in the logged rounds (positions
    pooled), the rate is the posterior mean under a Beta prior of mean ``mu`` and strength
    ``m = prior_strength`` pseudo-impressions::

        p[a] = (c_a + m * mu) / (n_a + m),     mu = 38 / 10000 (the pooled click rate).

    The prior mean is the pooled rate of the sample (empirical Bayes): it shrinks the very noisy
    per-item rates (each item was shown 96 to 160 times; 51 of the 80 were never clicked) towards
    the common rate. These numbers define a simulation environment; they are not privacy
    parameters of any learner.

    Parameters
    ----------
    prior_strength:
        ``m``, finite and > 0 (default :data:`DEFAULT_PRIOR_STRENGTH` = 100).

    Returns
    -------
    numpy.ndarray
        ``float64``, shape ``(80,)``, every value in the open interval ``(0, 1)`` (0.00148 to
        0.0158 with the default), read-only; cached per ``prior_strength``.

    Raises
    ------
    ValueError
        If ``prior_strength`` is not finite or not > 0.
    """
    return _click_probabilities(positive_finite("prior_strength", prior_strength))


@functools.lru_cache(maxsize=4)
def _round_probabilities(strength: float) -> np.ndarray:
    data = load_open_bandit()
    pooled = float(data.click.sum()) / data.n_rounds
    offset = np.zeros(data.n_rounds, dtype=np.float64)
    clicks = data.click.astype(np.float64)
    for k, levels in enumerate(_USER_FEATURE_LEVELS):
        codes = data.user_features[:, k]
        rate = _smoothed_rates(
            np.bincount(codes, weights=clicks, minlength=levels),
            np.bincount(codes, minlength=levels).astype(np.float64),
            pooled,
            strength,
        )
        offset += (_logit(rate) - _logit(pooled))[codes]
    logits = _logit(_click_probabilities(strength))[None, :] + offset[:, None]
    # The logistic function of a finite logit lies strictly inside (0, 1) at these magnitudes.
    return read_only(1.0 / (1.0 + np.exp(-logits)))


def open_bandit_round_probabilities(prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> np.ndarray:
    """Per-round click probabilities ``p[t, a]`` for the 10,000 logged rounds and 80 items.

    Item rates modulated by each round's user context, additively on the log-odds scale (a
    naive-Bayes-style model: the user features act independently of each other and of the item)::

        logit p[t, a] = logit p_a + sum_{k=0..3} ( logit q_k(u_{t,k}) - logit mu ),

    where ``p_a`` = :func:`open_bandit_click_probabilities` ``(prior_strength)``, ``mu`` = 38/10000
    is the pooled click rate, ``u_{t,k}`` is the code of user feature ``k`` in round ``t`` and
    ``q_k(v) = (c_{k,v} + m * mu) / (n_{k,v} + m)`` is the smoothed click rate of the rounds whose
    user feature ``k`` equals ``v`` (``n_{k,v}`` rounds, ``c_{k,v}`` clicks, ``m = prior_strength``),
    with ``logit x = log(x / (1 - x))``. A user level seen often and clicked at the pooled rate
    leaves the rates unchanged; rare levels are shrunk towards no effect. The construction is
    deterministic and uses every logged round (positions pooled); the user-item affinity columns
    of the original data are not used. Rows share one of 240 distinct user contexts.

    The probabilistic-coverage click model built on them is ``f_t(S) = 1 - prod_{a in S} (1 - p[t, a])``.

    Parameters
    ----------
    prior_strength:
        ``m``, as in :func:`open_bandit_click_probabilities`.

    Returns
    -------
    numpy.ndarray
        ``float64``, shape ``(10000, 80)`` (rounds x items), C order, every value in the open
        interval ``(0, 1)`` (1.5e-4 to 0.035 with the default; mean 0.0039), read-only; cached per
        ``prior_strength``.

    Raises
    ------
    ValueError
        If ``prior_strength`` is not finite or not > 0.
    """
    return _round_probabilities(positive_finite("prior_strength", prior_strength))


def open_bandit_item_blocks(feature: int = 1) -> tuple[tuple[int, ...], ...]:
    """A partition of the 80 items by the categorical item feature ``item_feature_<feature>``.

    Items sharing the feature's value form one block; blocks are listed in order of their smallest
    item id and each block's item ids are increasing. The result can be passed as ``blocks`` to
    :class:`dponline.domains.PartitionMatroid`. ``item_feature_0`` is numerical (41 distinct
    values), so the categorical features 1, 2 and 3 are the ones offered:

    ========  ======  ===========================================
    feature   blocks  block sizes
    ========  ======  ===========================================
    1         12      14, 13, 10, 10, 6, 5, 5, 5, 4, 4, 3, 1
    2         21      11, 10, 7, 7, 4 (x7), 3, 3, 2, 2, 2, 1 (x5)
    3         7       27, 19, 17, 7, 7, 2, 1
    ========  ======  ===========================================

    (sizes sorted here for display; the blocks themselves are in the order stated above).

    Parameters
    ----------
    feature:
        1, 2 or 3 (default 1: 12 blocks).

    Returns
    -------
    tuple of tuple of int
        The blocks: disjoint, covering ``0..79``.

    Raises
    ------
    ValueError
        If ``feature`` is not 1, 2 or 3.
    """
    if isinstance(feature, bool) or feature not in (1, 2, 3):
        raise ValueError(f"feature must be 1, 2 or 3 (the categorical item features), got {feature!r}")
    codes = load_open_bandit().item_categories[:, feature - 1]
    n_blocks = int(codes.max()) + 1
    return tuple(tuple(int(a) for a in np.flatnonzero(codes == b)) for b in range(n_blocks))
