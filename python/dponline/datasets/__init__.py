"""Bundled data sets for examples, tests and benchmarks.

Online portfolio selection and expert advice

* :func:`load_nyse` — the NYSE(O) price relatives (36 stocks x 5,651 trading days, 1962-1984)
  of Cover (1991) and Borodin, El-Yaniv & Gogan (2004), returned as a read-only
  :class:`NYSEData`; :func:`nyse_expert_losses` — the ``(5651, 36)`` expert losses
  ``1 - r[t, i] / max_j r[t, j]`` in ``[0, 1)``.
* :func:`load_trump_approval` — five pollsters and FiveThirtyEight's average of Donald Trump's
  approval rating over 1,001 days (:class:`TrumpApprovalData`); :func:`trump_approval_expert_losses`
  — the ``(1001, 5)`` expert losses (squared error against the average over an a-priori
  ``max_error``, clipped) in ``[0, 1]``.

Binary classification streams (labels in ``{-1, +1}``, features scaled into ``[-1, 1]``)

* :func:`load_phishing` — 1,250 web pages x 9 indicator features (:class:`ClassificationData`).
* :func:`load_shuttle` — 49,097 Statlog Shuttle readings x 9 features, anomaly vs normal.

Bandits and submodular maximisation

* :func:`load_open_bandit` — the Open Bandit Dataset sample: 10,000 logged rounds, 80 items,
  3 positions (:class:`OpenBanditData`); :func:`open_bandit_click_probabilities` (80 smoothed item
  click rates), :func:`open_bandit_round_probabilities` (per-round ``(10000, 80)`` click
  probabilities) and :func:`open_bandit_item_blocks` (a partition of the items by category).

All arrays are read-only and every loader is cached. Nothing here needs the compiled extension
``dponline._core``, and nothing is downloaded. Provenance, licences and checksums are in
``PROVENANCE.md`` in this directory.
"""

from __future__ import annotations

from .classification import (
    EMPIRICAL_SHUTTLE_SCALE,
    PHISHING_FEATURE_SCALE,
    ClassificationData,
    load_phishing,
    load_shuttle,
)
from .nyse import NYSEData, load_nyse, nyse_expert_losses
from .open_bandit import (
    DEFAULT_PRIOR_STRENGTH,
    OpenBanditData,
    load_open_bandit,
    open_bandit_click_probabilities,
    open_bandit_item_blocks,
    open_bandit_round_probabilities,
)
from .trump_approval import (
    DEFAULT_MAX_ERROR,
    TrumpApprovalData,
    load_trump_approval,
    trump_approval_expert_losses,
)

__all__ = [
    "DEFAULT_MAX_ERROR",
    "DEFAULT_PRIOR_STRENGTH",
    "EMPIRICAL_SHUTTLE_SCALE",
    "PHISHING_FEATURE_SCALE",
    "ClassificationData",
    "NYSEData",
    "OpenBanditData",
    "TrumpApprovalData",
    "load_nyse",
    "load_open_bandit",
    "load_phishing",
    "load_shuttle",
    "load_trump_approval",
    "nyse_expert_losses",
    "open_bandit_click_probabilities",
    "open_bandit_item_blocks",
    "open_bandit_round_probabilities",
    "trump_approval_expert_losses",
]
