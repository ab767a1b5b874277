"""Two binary-classification streams from ``river`` 0.26.1: Phishing and Shuttle.

Both bundled files are byte-exact copies of the gzip files in the ``river`` 0.26.1 wheel
(BSD-3-Clause): ``river/datasets/phishing.csv.gz`` (1,250 web pages x 9 features, phishing or
not) and ``river/datasets/shuttle.csv.gz`` (49,097 Statlog Shuttle sensor readings x 9 features,
anomaly or not). Labels are returned in ``{-1.0, +1.0}`` and features as ``float64`` scaled
coordinatewise into ``[-1, 1]`` by constants fixed in this module (documented per loader:
a-priori for Phishing, empirical for Shuttle). See ``PROVENANCE.md``.

This module deliberately imports nothing from the compiled extension ``dponline._core``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ._common import read_bundled_table, read_only

__all__ = [
    "EMPIRICAL_SHUTTLE_SCALE",
    "PHISHING_FEATURE_SCALE",
    "ClassificationData",
    "load_phishing",
    "load_shuttle",
]

_PHISHING_FILE = "phishing.csv.gz"
_PHISHING_HEADER = (
    "empty_server_form_handler",
    "popup_window",
    "https",
    "request_from_other_domain",
    "anchor_from_other_domain",
    "is_popular",
    "long_url",
    "age_of_domain",
    "ip_in_url",
    "is_phishing",
)
_PHISHING_SHAPE = (1250, 9)

#: A-priori scale of the Phishing features: every feature is an indicator coded in ``[0, 1]``
#: (three-valued ones as 0, 0.5, 1; two-valued ones as 0, 1), so the scale is 1 by the coding.
PHISHING_FEATURE_SCALE = (1.0,) * 9

_SHUTTLE_FILE = "shuttle.csv.gz"
_SHUTTLE_HEADER = tuple(f"f{i}" for i in range(1, 10)) + ("anomaly",)
_SHUTTLE_SHAPE = (49097, 9)

#: Empirical scale of the Shuttle features: ``max_t |x[t, j]|`` over the whole bundled file,
#: computed once and written here. No range is documented for these sensor readings, so this is
#: a property of the data, not an a-priori bound (hence the ``EMPIRICAL_`` prefix).
EMPIRICAL_SHUTTLE_SCALE = (126.0, 5075.0, 149.0, 3939.0, 436.0, 26739.0, 105.0, 353.0, 356.0)


@dataclass(frozen=True, eq=False)
class ClassificationData:
    """A binary-classification stream as returned by :func:`load_phishing` and :func:`load_shuttle`.

    Attributes
    ----------
    features:
        ``float64`` array of shape ``(n, d)``, read-only: ``raw_features / scale`` per column, every
        entry in ``[-1, 1]``; so ``|features[t, j]| <= 1`` and ``||features[t]||_2 <= sqrt(d)``.
    labels:
        ``float64`` array of shape ``(n,)``, read-only, values in ``{-1.0, +1.0}`` (``+1`` = the
        positive class named in :attr:`positive_class`).
    raw_features:
        ``float64`` array of shape ``(n, d)``, read-only: the feature values as written in the file.
    feature_names:
        The ``d`` column names of the file, in column order.
    feature_scale:
        The a-priori per-feature scale (``float64``, shape ``(d,)``, read-only) when the data set's
        coding fixes one, else ``None``.
    empirical_feature_scale:
        The per-feature scale measured on the data (``max_t |raw_features[t, j]|``), used when no
        a-priori scale exists, else ``None``. Exactly one of the two scales is set.
    positive_class:
        What label ``+1`` means.
    description:
        Short provenance text: source, transformation and licence.
    """

    features: np.ndarray
    labels: np.ndarray
    raw_features: np.ndarray
    feature_names: tuple[str, ...]
    feature_scale: np.ndarray | None
    empirical_feature_scale: np.ndarray | None
    positive_class: str
    description: str

    @property
    def n_samples(self) -> int:
        """Number of rounds (rows)."""
        return int(self.features.shape[0])

    @property
    def n_features(self) -> int:
        """Number of features (columns of :attr:`features`)."""
        return int(self.features.shape[1])

    @property
    def scale(self) -> np.ndarray:
        """The scale actually used: :attr:`feature_scale` if set, else :attr:`empirical_feature_scale`."""
        scale = self.feature_scale if self.feature_scale is not None else self.empirical_feature_scale
        assert scale is not None
        return scale


def _read_table(filename: str, header: tuple[str, ...], shape: tuple[int, int]) -> np.ndarray:
    _, table = read_bundled_table(filename, header, shape[0])
    if table.shape[1] != shape[1] + 1:
        raise RuntimeError(f"bundled {filename} is corrupt: table of shape {table.shape}")
    if not np.all((table[:, -1] == 0.0) | (table[:, -1] == 1.0)):
        raise RuntimeError(f"bundled {filename} is corrupt: labels outside {{0, 1}}")
    return table


def _build(
    table: np.ndarray,
    header: tuple[str, ...],
    *,
    scale: tuple[float, ...],
    empirical: bool,
    positive_class: str,
    description: str,
) -> ClassificationData:
    raw = table[:, :-1]
    scale_array = np.asarray(scale, dtype=np.float64)
    features = raw / scale_array
    if not np.all(np.abs(features) <= 1.0):
        raise RuntimeError("bundled data exceed their declared scale")
    labels = np.where(table[:, -1] == 1.0, 1.0, -1.0)
    frozen_scale = read_only(scale_array)
    return ClassificationData(
        features=read_only(features),
        labels=read_only(labels),
        raw_features=read_only(raw),
        feature_names=header[:-1],
        feature_scale=None if empirical else frozen_scale,
        empirical_feature_scale=frozen_scale if empirical else None,
        positive_class=positive_class,
        description=description,
    )


@functools.lru_cache(maxsize=1)
def load_phishing() -> ClassificationData:
    """Load the Phishing stream: 1,250 web pages, 9 features, label +1 = phishing (548 of 1,250).

    Returns
    -------
    ClassificationData
        ``features``: ``float64`` ``(1250, 9)`` in ``[0, 1]`` (equal to ``raw_features``: the
        a-priori scale is 1); ``labels``: ``float64`` ``(1250,)`` in ``{-1, +1}``, ``+1`` for
        ``is_phishing == 1``. All arrays read-only; cached (every call returns the same object).

    Notes
    -----
    Source: ``river/datasets/phishing.csv.gz`` of ``river`` 0.26.1 (BSD-3-Clause), bundled
    byte-exactly; river cites the UCI "Website Phishing" data set. The features are indicators:
    seven three-valued ones coded ``0, 0.5, 1`` (``empty_server_form_handler`` ... ``long_url``)
    and two binary ones (``age_of_domain``, ``ip_in_url``). Their range ``[0, 1]`` follows from
    this coding, so :attr:`ClassificationData.feature_scale` is all ones, declared a priori and
    not measured on the stream. Rows are in file order.
    """
    table = _read_table(_PHISHING_FILE, _PHISHING_HEADER, _PHISHING_SHAPE)
    return _build(
        table,
        _PHISHING_HEADER,
        scale=PHISHING_FEATURE_SCALE,
        empirical=False,
        positive_class="phishing web page (is_phishing == 1)",
        description=(
            "Phishing: 1,250 web pages x 9 indicator features coded in [0, 1], label +1 = phishing. "
            "Byte-exact copy of river/datasets/phishing.csv.gz from the PyPI package river 0.26.1 "
            "(BSD-3-Clause, (c) 2020 the river developers); river cites the UCI Website Phishing data set."
        ),
    )


@functools.lru_cache(maxsize=1)
def load_shuttle() -> ClassificationData:
    """Load the Shuttle stream: 49,097 sensor readings, 9 features, label +1 = anomaly (3,511).

    The binary task is river's (after the ODDS benchmark): the UCI Statlog (Shuttle) data with the
    majority class ("Rad Flow") as normal (label ``-1``), the rare classes as anomalies (label
    ``+1``) and the second-largest class removed.

    Returns
    -------
    ClassificationData
        ``features``: ``float64`` ``(49097, 9)``, ``raw_features / EMPIRICAL_SHUTTLE_SCALE`` per
        column, in ``[-1, 1]``; ``raw_features``: the integer readings as ``float64``; ``labels``:
        ``float64`` ``(49097,)`` in ``{-1, +1}``, ``+1`` for ``anomaly == 1``. All arrays
        read-only; cached (every call returns the same object).

    Notes
    -----
    Source: ``river/datasets/shuttle.csv.gz`` of ``river`` 0.26.1 (BSD-3-Clause), bundled
    byte-exactly. No range is documented for the nine readings, so the scale
    (:data:`EMPIRICAL_SHUTTLE_SCALE`, stored as :attr:`ClassificationData.empirical_feature_scale`)
    is **empirical**: the largest absolute value of each column in this file. It is a fixed
    property of the bundled data, not an a-priori bound: a private learner that needs a bound on
    its inputs must declare its own (e.g. ``|x_j| <= 1`` for these scaled features, with clipping)
    and must not present this scale as part of a privacy claim. The columns are heavy-tailed
    (``f6`` spans -26,739 to 15,164 with median |value| 5), so several scaled columns sit close
    to 0. Rows are in file order.
    """
    table = _read_table(_SHUTTLE_FILE, _SHUTTLE_HEADER, _SHUTTLE_SHAPE)
    return _build(
        table,
        _SHUTTLE_HEADER,
        scale=EMPIRICAL_SHUTTLE_SCALE,
        empirical=True,
        positive_class="anomaly (anomaly == 1: the rare Statlog Shuttle classes)",
        description=(
            "Shuttle: 49,097 Statlog (Shuttle) sensor readings x 9 features, label +1 = anomaly (rare "
            "classes), -1 = the majority class; features divided by the empirical column max |value|. "
            "Byte-exact copy of river/datasets/shuttle.csv.gz from the PyPI package river 0.26.1 "
            "(BSD-3-Clause, (c) 2020 the river developers); data from the UCI Statlog (Shuttle) data set "
            "as cast for anomaly detection by ODDS."
        ),
    )
