"""Donald Trump's approval rating, 1,001 days: five pollsters against FiveThirtyEight's average.

The bundled file ``data/trump_approval.csv.gz`` is a byte-exact copy of
``river/datasets/trump_approval.csv.gz`` from the PyPI package ``river`` 0.26.1 (BSD-3-Clause),
itself a reshaping of the approval-rating data that FiveThirtyEight publishes for its
presidential approval tracker. One row per day, 2017-03-01 to 2019-11-26 (1,001 consecutive
days): the day (``ordinal_date``, Python's proleptic Gregorian ordinal), FiveThirtyEight's
average (``five_thirty_eight``) and the latest approval figure of five pollsters (Gallup,
Ipsos, Morning Consult, Rasmussen, YouGov), all in percent. See ``PROVENANCE.md``.

This module deliberately imports nothing from the compiled extension ``dponline._core``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ._common import positive_finite, read_bundled_table, read_only

__all__ = [
    "DEFAULT_MAX_ERROR",
    "TrumpApprovalData",
    "load_trump_approval",
    "trump_approval_expert_losses",
]

_DATA_FILE = "trump_approval.csv.gz"
_N_DAYS = 1001
_HEADER = ("ordinal_date", "five_thirty_eight", "gallup", "ipsos", "morning_consult", "rasmussen", "you_gov")
_POLLSTERS = _HEADER[2:]

#: Default a-priori error scale of :func:`trump_approval_expert_losses`, in approval points.
DEFAULT_MAX_ERROR = 10.0

_DESCRIPTION = (
    "Donald Trump's approval rating on 1,001 consecutive days (2017-03-01 to 2019-11-26): the latest "
    "figure of five pollsters (Gallup, Ipsos, Morning Consult, Rasmussen, YouGov) and FiveThirtyEight's "
    "average, in percent. Byte-exact copy of river/datasets/trump_approval.csv.gz from the PyPI package "
    "river 0.26.1 (BSD-3-Clause, (c) 2020 the river developers); the figures come from FiveThirtyEight's "
    "presidential approval tracker."
)


@dataclass(frozen=True, eq=False)
class TrumpApprovalData:
    """The approval data returned by :func:`load_trump_approval`.

    Attributes
    ----------
    days:
        ``datetime64[D]`` array of shape ``(1001,)``, read-only: the consecutive calendar days
        2017-03-01 to 2019-11-26.
    polls:
        ``float64`` array of shape ``(1001, 5)`` (days x pollsters), read-only: each pollster's
        latest approval figure on that day, in percent (a priori in ``[0, 100]``; in the data
        32.1 to 50.3).
    average:
        ``float64`` array of shape ``(1001,)``, read-only: FiveThirtyEight's approval average that
        day, in percent (36.4 to 44.8 in the data).
    pollsters:
        The five pollster names in column order: ``("gallup", "ipsos", "morning_consult",
        "rasmussen", "you_gov")``.
    description:
        Short provenance text: source and licence.
    """

    days: np.ndarray
    polls: np.ndarray
    average: np.ndarray
    pollsters: tuple[str, ...]
    description: str

    @property
    def n_days(self) -> int:
        """Number of days (rows), 1001."""
        return int(self.polls.shape[0])

    @property
    def n_pollsters(self) -> int:
        """Number of pollsters (columns of :attr:`polls`), 5."""
        return int(self.polls.shape[1])


@functools.lru_cache(maxsize=1)
def load_trump_approval() -> TrumpApprovalData:
    """Load the Trump approval data: five pollsters and FiveThirtyEight's average over 1,001 days.

    Returns
    -------
    TrumpApprovalData
        ``days`` (``datetime64[D]``, shape ``(1001,)``), ``polls`` (``float64``, shape
        ``(1001, 5)``, percent), ``average`` (``float64``, shape ``(1001,)``, percent),
        ``pollsters`` (5 names) and ``description``. All arrays are read-only.

    Notes
    -----
    Source: ``river/datasets/trump_approval.csv.gz`` of the PyPI package ``river`` 0.26.1
    (BSD-3-Clause), bundled byte-exactly; see ``PROVENANCE.md``. Values are parsed with numpy's
    correctly rounded parser, so each equals Python's ``float()`` of the field in the file.
    The result is cached: every call returns the same object.
    """
    _, table = read_bundled_table(_DATA_FILE, _HEADER, _N_DAYS)
    ordinals = table[:, 0].astype(np.int64)
    # Python's date ordinal 1 is 0001-01-01; numpy's day 0 is 1970-01-01 (ordinal 719163).
    days = (ordinals - 719163).astype("datetime64[D]")
    return TrumpApprovalData(
        days=read_only(days),
        polls=read_only(table[:, 2:]),
        average=read_only(table[:, 1]),
        pollsters=_POLLSTERS,
        description=_DESCRIPTION,
    )


@functools.lru_cache(maxsize=8)
def _expert_losses(max_error: float) -> np.ndarray:
    data = load_trump_approval()
    error = data.polls - data.average[:, None]
    np.clip(error, -max_error, max_error, out=error)
    return read_only(np.square(error / max_error))


def trump_approval_expert_losses(max_error: float = DEFAULT_MAX_ERROR) -> np.ndarray:
    """Expert-advice losses on the approval data: one expert per pollster.

    The loss of pollster ``i`` on day ``t`` is its squared error against FiveThirtyEight's average
    that day, normalised by a constant declared before looking at the data::

        loss[t, i] = min(|polls[t, i] - average[t]|, max_error)**2 / max_error**2   in [0, 1].

    Errors larger than ``max_error`` approval points are clipped to it (loss 1). The normaliser is
    the argument, never a maximum over the data, as the privacy convention requires of any bound
    a private learner relies on. With the default of 10 points nothing in this data set is clipped
    (the largest error is 8.19 points, loss 0.67).

    Parameters
    ----------
    max_error:
        The a-priori error scale in approval points, finite and > 0 (default
        :data:`DEFAULT_MAX_ERROR` = 10.0).

    Returns
    -------
    numpy.ndarray
        ``float64``, shape ``(1001, 5)`` (days x pollsters), values in ``[0, 1]``, read-only;
        cached per ``max_error``.

    Raises
    ------
    ValueError
        If ``max_error`` is not finite or not > 0.
    TypeError
        If ``max_error`` is not a real number.
    """
    return _expert_losses(positive_finite("max_error", max_error))
