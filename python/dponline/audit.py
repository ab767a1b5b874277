"""Black-box empirical privacy auditing: a lower confidence bound on the ε of a mechanism or learner.

An ``(ε, δ)``-DP mechanism ``M`` satisfies, for every pair of neighbouring inputs ``a, b`` and every event ``E``,
``P[M(a) ∈ E] ≤ e^ε · P[M(b) ∈ E] + δ`` (and the same with ``a`` and ``b`` swapped). :func:`audit` runs a fresh
copy of the mechanism many times on each of two neighbouring inputs, counts how often the output falls in an event,
and turns the two counts into a lower bound on ε that holds with confidence ``1 − alpha``:

    ε ≥ ln((P̂_a,lower − δ) / P̂_b,upper),

with one-sided Clopper-Pearson bounds at ``alpha/2`` each (the form of Jagielski, Ullman & Oprea 2020,
"Auditing differentially private machine learning: how private is private SGD?", and Nasr et al. 2021,
"Adversary instantiation: lower bounds for differentially private machine learning"). Whatever the mechanism,
with probability at least ``1 − alpha`` over the trials the reported bound does not exceed its true ε; so a
bound above the claimed ε refutes the claim, with that confidence.

Choosing the event. A statistic maps each output to a number (:class:`Threshold`, :class:`FirstAction` with a
coordinate) or to a category (:class:`Categories`, :class:`LatticeGrid`, :class:`FirstAction` of a discrete
action). When the statistic fixes its event in advance (a given threshold or set of categories, or a plain
callable returning a bool), every trial estimates it and both directions (``a`` over ``b`` and ``b`` over ``a``)
are bounded at ``alpha/2`` each (Bonferroni). Otherwise the event, and the direction, are chosen on the first
``selection`` fraction of the trials of each input (the threshold or set of categories whose Clopper-Pearson
bound is largest there) and the bound is computed on the remaining trials only, which are independent of the
choice — the split of Ding, Wang, Wang, Zhang & Kifer 2018 ("Detecting violations of differential privacy").
Choosing the event on the same trials that estimate it would make the bound invalid (the best of many
thresholds is an optimistic estimate).

The power-of-two lattice. Floating-point noise ``x + Z`` does not have the distribution of its real-number
model: the set of floats an output can take depends on ``x`` (Mironov 2012, "On significance of the least
significant bits for differential privacy"). :class:`LatticeGrid` maps every output to the finest power-of-two
grid it lies on; an output on a grid that only one input can produce is a certain distinguisher, and the audit
then reports an ε limited only by the number of trials: about ``ln(P·n/15)`` at ``alpha = 1e-6`` for an event of
probability ``P`` under one input and 0 under the other, over ``n`` estimation trials.

What an audit cannot show. A bound at or below the claim is not a proof of privacy: it only says that this
statistic, on these two inputs, with this many trials, found no violation. Reaching a tight ε needs the worst-case
inputs, an event close to the likelihood-ratio test, and enough hits: the bound comes within about ``Δ`` of the
event's log-ratio only with some ``(5/Δ)²`` hits under each input (at ``alpha = 1e-6``), i.e. ``(5/Δ)²/P``
trials for an event of probability ``P`` — and the events that attain a large ε are rare, so audits of large ε
are weak. Only the outputs are observed: timing and other side channels (Jin, McMurtry, Rubinstein &
Ohrimenko 2022, "Are we there yet? Timing and floating-point attacks on differential privacy systems") are out
of scope, as are the internal states and anything a mechanism does not release.

Speed. ``batch`` runs many independent trials per object: a :class:`~dponline.TreeAggregator` of dimension ``n``
whose ``n`` coordinates each receive the same input is ``n`` independent one-coordinate trials (its noise is
i.i.d. per coordinate), and a :class:`~dponline.LocalLaplaceRandomizer` randomises ``n`` rows at once. 10⁵ trials
per input then take a fraction of a second.

Example:
    >>> import numpy as np, dponline
    >>> from dponline.audit import audit, Threshold
    >>> result = audit(
    ...     lambda seed: dponline.TreeAggregator.calibrated(10_000, 1, epsilon=1.0, sensitivity=1.0, seed=seed),
    ...     lambda tree, x: tree.push(np.full(tree.dim, x)),
    ...     1.0, 0.0, trials=100_000, batch=10_000, statistic=Threshold(), claimed=1.0, seed=0,
    ... )
    >>> result.passed, 0.5 < result.epsilon_lower <= 1.0
    (True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _validate
from ._extras import require
from ._seed import SeedLike
from .errors import InvalidInputError

__all__ = [
    "audit",
    "AuditResult",
    "epsilon_lower_bound",
    "play",
    "Threshold",
    "Categories",
    "LatticeGrid",
    "FirstAction",
    "grid_exponent",
]

# Outputs are turned into statistic values this many trials at a time (bounds the memory of the raw outputs).
_CHUNK = 1 << 14
# Candidate thresholds tried on the selection trials: this many quantiles of the pooled values.
_CANDIDATES = 512


def epsilon_lower_bound(
    hits_a: float | np.ndarray,
    hits_b: float | np.ndarray,
    trials_a: int,
    trials_b: int | None = None,
    *,
    delta: float = 0.0,
    alpha: float = 1e-6,
) -> float | np.ndarray:
    """The lower confidence bound ``ln((P_a,lower − δ) / P_b,upper)`` from two binomial counts of one event.

    ``P_a,lower`` is the one-sided Clopper-Pearson lower bound on the event's probability under input ``a`` from
    ``hits_a`` of ``trials_a`` trials, ``P_b,upper`` the upper bound under ``b``, each at level ``alpha/2``: with
    probability ≥ ``1 − alpha`` both hold, so the result is at most the ε of any ``(ε, δ)``-DP mechanism.

    Args:
        hits_a, hits_b: event counts (floats are accepted, e.g. expected counts in a power calculation; arrays
            broadcast).
        trials_a: trials on input ``a``; ``trials_b`` defaults to it.
        delta: the claimed δ in ``[0, 1)``.
        alpha: ``1 −`` the confidence level, in ``(0, 1)``.

    Returns:
        The bound in nats (a float, or an array for array counts); ``-inf`` where ``P_a,lower ≤ δ`` (no bound).
        It can be negative: :func:`audit` reports ``max(bound, 0)``.

    Raises:
        InvalidInputError: trials < 1, counts outside ``[0, trials]``, ``delta`` or ``alpha`` out of range.
    """
    from scipy.stats import beta

    n_a = float(_validate.integer("trials_a", trials_a, low=1))
    n_b = n_a if trials_b is None else float(_validate.integer("trials_b", trials_b, low=1))
    delta = _validate.real("delta", delta, low=0.0, high=1.0, high_open=True)
    alpha = _validate.real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    h_a, h_b = np.asarray(hits_a, dtype=np.float64), np.asarray(hits_b, dtype=np.float64)
    for name, h, n in (("hits_a", h_a, n_a), ("hits_b", h_b, n_b)):
        if not np.all((h >= 0) & (h <= n)):
            raise InvalidInputError(
                f"{name} must be counts in [0, {n:.0f}], got {_validate._shown(hits_a if name == 'hits_a' else hits_b)}"
            )
    with np.errstate(divide="ignore", invalid="ignore"):
        lower_a = np.where(h_a > 0, beta.ppf(alpha / 2, np.maximum(h_a, 1e-300), n_a - h_a + 1), 0.0)
        upper_b = np.where(h_b < n_b, beta.ppf(1 - alpha / 2, h_b + 1, np.maximum(n_b - h_b, 1e-300)), 1.0)
        bound = np.where(lower_a > delta, np.log(np.maximum(lower_a - delta, 1e-300)) - np.log(upper_b), -np.inf)
    return float(bound) if bound.ndim == 0 else bound


# -- events ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    """A set of statistic values: ``{v >= threshold}`` / ``{v <= threshold}``, or ``{v ∈ members}``."""

    text: str
    threshold: float = 0.0
    above: bool = True
    members: frozenset[Any] | None = None

    def count(self, values: np.ndarray) -> int:
        if self.members is None:
            return int(np.count_nonzero(values >= self.threshold if self.above else values <= self.threshold))
        if values.dtype != object:
            return int(np.count_nonzero(np.isin(values, np.array(list(self.members)))))
        return sum(1 for v in values if v in self.members)


def _best(bounds: np.ndarray) -> int:
    """Index of the largest bound (the first on ties; -inf, "no bound", counts as the smallest)."""
    return int(np.argmax(np.where(np.isfinite(bounds), bounds, -1e300)))


def _directed_bounds(
    hits_a: np.ndarray, hits_b: np.ndarray, n_a: int, n_b: int, delta: float, alpha: float
) -> list[tuple[np.ndarray, bool]]:
    """The bounds of candidate events in both directions: ``[(ln(a/b) bounds, True), (ln(b/a) bounds, False)]``."""
    return [
        (np.atleast_1d(epsilon_lower_bound(hits_a, hits_b, n_a, n_b, delta=delta, alpha=alpha)), True),
        (np.atleast_1d(epsilon_lower_bound(hits_b, hits_a, n_b, n_a, delta=delta, alpha=alpha)), False),
    ]


# -- statistics -----------------------------------------------------------------------------------------------

Select = None | int | tuple[int, ...] | Callable[[Any], Any]


def _key(value: Any) -> Any:
    """A hashable category key: arrays and lists become tuples of their entries."""
    return tuple(np.ravel(value).tolist()) if isinstance(value, (np.ndarray, list, tuple)) else value


def _keys(picked: Sequence[Any]) -> np.ndarray:
    keys = np.empty(len(picked), dtype=object)
    for i, p in enumerate(picked):
        keys[i] = _key(p)
    return keys


def _select(outputs: Sequence[Any] | np.ndarray, select: Select, numeric: bool) -> np.ndarray:
    """One value per output: the whole (scalar) output, a flat index, an array index, or a callable's value."""
    n = len(outputs)
    if callable(select):
        picked = [select(o) for o in outputs]
        return np.asarray(picked, dtype=np.float64).reshape(n) if numeric else _keys(picked)
    try:
        arr = np.asarray(outputs)
    except ValueError:  # ragged outputs (e.g. sets of different sizes): index each one
        arr = np.empty(0, dtype=object)
    if arr.dtype == object or arr.shape[:1] != (n,):
        if isinstance(select, tuple):
            picked = [_index(o, select) for o in outputs]
            return np.asarray(picked, dtype=np.float64).reshape(n) if numeric else _keys(picked)
        raise InvalidInputError(
            "statistic: the outputs have different shapes or types; pass select= a tuple index or a callable that "
            "maps one output to its value"
        )
    if select is None:
        if arr.size != n:
            raise InvalidInputError(
                f"statistic: each output has {arr.size // max(n, 1)} values; pass select= an index or a callable"
            )
        picked_arr = arr.reshape(n)
    elif isinstance(select, tuple):
        picked_arr = arr[(slice(None), *select)]
    else:
        picked_arr = arr.reshape(n, -1)[:, select]
    if numeric:
        return np.asarray(picked_arr, dtype=np.float64).reshape(n)
    return picked_arr if picked_arr.ndim == 1 else _keys(list(picked_arr.reshape(n, -1)))


def _index(output: Any, index: tuple[int, ...]) -> Any:
    for i in index:
        output = output[i]
    return output


def _check_select(select: Select) -> Select:
    if select is None or callable(select):
        return select
    if isinstance(select, tuple):
        return tuple(_validate.integer("select", i) for i in select)
    return _validate.integer("select", select)


def _describe(select: Select) -> str:
    if select is None:
        return "output"
    if callable(select):
        name = getattr(select, "__name__", "statistic")
        return f"{name}(output)" if name.isidentifier() else name
    return f"output[{select if isinstance(select, int) else ', '.join(map(str, select))}]"


def _shown_set(members: Collection[Any]) -> str:
    shown = sorted(members, key=repr)
    items = [repr(m.item() if isinstance(m, np.generic) else m) for m in shown[:8]]
    return "{" + ", ".join(items) + (", …" if len(shown) > 8 else "") + "}"


class Threshold:
    """A scalar of the output compared with a threshold: the event ``{s ≥ τ}`` or ``{s ≤ τ}``.

    Args:
        select: which scalar: ``None`` (the output is a scalar or a one-element array), an int (a flat index into
            the output), a tuple (an index into the output array, e.g. ``(2, 0)``: release 3, coordinate 0) or a
            callable ``output -> float`` (any score, e.g. a likelihood-ratio statistic).
        threshold: a fixed ``τ`` (every trial then estimates the event); ``None`` chooses ``τ``, the side and the
            direction on the selection trials, among 512 quantiles of their pooled values.
        above: with a fixed ``threshold``, the event is ``{s ≥ τ}`` (``True``) or ``{s ≤ τ}``.
        name: how the event is described (default: from ``select``).

    Raises:
        InvalidInputError: a non-integer index, a non-finite threshold.
    """

    def __init__(
        self, select: Select = None, *, threshold: float | None = None, above: bool = True, name: str | None = None
    ) -> None:
        self.select = _check_select(select)
        self.threshold = _validate.optional_real("threshold", threshold)
        self.above = _validate.flag("above", above)
        self.name = _describe(self.select) if name is None else name

    def values(self, outputs: Sequence[Any] | np.ndarray) -> np.ndarray:
        """float64 ``(n,)``: the selected scalar of each output.

        Raises:
            InvalidInputError: a NaN or infinite value, or outputs the ``select`` cannot read.
        """
        v = _select(outputs, self.select, numeric=True)
        if not np.all(np.isfinite(v)):
            raise InvalidInputError(f"statistic: {self.name} is NaN or infinite in some trial")
        return v

    def fixed_event(self) -> _Event | None:
        """The event given in advance, or ``None`` when it is chosen from data."""
        if self.threshold is None:
            return None
        return _Event(f"{self.name} {'>=' if self.above else '<='} {self.threshold:.6g}", self.threshold, self.above)

    def choose(self, va: np.ndarray, vb: np.ndarray, delta: float, alpha: float) -> tuple[_Event, bool]:
        """The event and direction (``True``: likelier under ``a``) with the largest bound on these trials."""
        taus = np.unique(np.quantile(np.concatenate([va, vb]), np.linspace(0.0, 1.0, _CANDIDATES)))
        sa, sb = np.sort(va), np.sort(vb)
        best: tuple[float, _Event, bool] | None = None
        for above in (True, False):
            if above:
                ha, hb = len(va) - np.searchsorted(sa, taus, "left"), len(vb) - np.searchsorted(sb, taus, "left")
            else:
                ha, hb = np.searchsorted(sa, taus, "right"), np.searchsorted(sb, taus, "right")
            for bounds, a_first in _directed_bounds(ha, hb, len(va), len(vb), delta, alpha):
                i = _best(bounds)
                if best is None or bounds[i] > best[0]:
                    tau = float(taus[i])
                    best = (
                        float(bounds[i]),
                        _Event(f"{self.name} {'>=' if above else '<='} {tau:.6g}", tau, above),
                        a_first,
                    )
        assert best is not None
        return best[1], best[2]


class Categories:
    """A discrete value of the output (an arm, a chosen set, a vertex, a bit pattern): the event ``{v ∈ S}``.

    Args:
        select: as :class:`Threshold`; the selected value (a scalar, an array — compared entry by entry — or any
            hashable a callable returns) is the category.
        members: a fixed set ``S`` (every trial then estimates the event); ``None`` chooses ``S`` and the direction
            on the selection trials: the categories sorted by their estimated likelihood ratio, the prefix with the
            largest bound (the Neyman-Pearson form of the best event for these counts).
        name: how the event is described (default: from ``select``).

    Raises:
        InvalidInputError: a non-integer index, an empty ``members``.
    """

    def __init__(
        self, select: Select = None, *, members: Collection[Any] | None = None, name: str | None = None
    ) -> None:
        self.select = _check_select(select)
        self.members = None if members is None else frozenset(_key(m) for m in members)
        if self.members is not None and not self.members:
            raise InvalidInputError("members: must name at least one category")
        self.name = _describe(self.select) if name is None else name

    def values(self, outputs: Sequence[Any] | np.ndarray) -> np.ndarray:
        """``(n,)``: the category of each output (a numeric array, or an object array of hashable keys)."""
        return _select(outputs, self.select, numeric=False)

    def fixed_event(self) -> _Event | None:
        """The event given in advance, or ``None`` when it is chosen from data."""
        if self.members is None:
            return None
        return _Event(f"{self.name} in {_shown_set(self.members)}", members=self.members)

    def choose(self, va: np.ndarray, vb: np.ndarray, delta: float, alpha: float) -> tuple[_Event, bool]:
        """The set of categories and direction (``True``: likelier under ``a``) with the largest bound."""
        labels, codes = _codes(np.concatenate([va, vb]))
        ca = np.bincount(codes[: len(va)], minlength=len(labels))
        cb = np.bincount(codes[len(va) :], minlength=len(labels))
        best: tuple[float, _Event, bool] | None = None
        for a_first in (True, False):
            num, den, n_num, n_den = (ca, cb, len(va), len(vb)) if a_first else (cb, ca, len(vb), len(va))
            order = np.argsort(-((num + 0.5) / n_num) / ((den + 0.5) / n_den), kind="stable")
            bounds = np.atleast_1d(
                epsilon_lower_bound(
                    np.cumsum(num[order]), np.cumsum(den[order]), n_num, n_den, delta=delta, alpha=alpha
                )
            )
            i = _best(bounds)
            if best is None or bounds[i] > best[0]:
                members = frozenset(labels[order[: i + 1]].tolist())
                best = (float(bounds[i]), _Event(f"{self.name} in {_shown_set(members)}", members=members), a_first)
        assert best is not None
        return best[1], best[2]


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels, codes) with ``labels[codes] == values``; object keys are coded through a dict."""
    if values.dtype != object:
        labels, codes = np.unique(values, return_inverse=True)
        return labels, codes.reshape(-1)
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    labels = np.empty(len(index), dtype=object)
    for key, i in index.items():
        labels[i] = key
    return labels, codes


def grid_exponent(x: Any) -> np.ndarray:
    """The finest power-of-two grid each float lies on: the largest ``k`` with ``x·2^k`` an integer.

    ``x = m·2^(−k)`` with ``m`` an odd integer: ``grid_exponent(0.75) == 2``, ``grid_exponent(6.0) == -1``, and a
    float using all 53 significand bits has ``k = 52 − floor(log2 |x|)``. Zero, which lies on every grid, maps to
    ``2**31 − 1``.

    Args:
        x: finite float64 values (any shape).

    Returns:
        int64 array of the shape of ``x``.

    Raises:
        InvalidInputError: NaN or infinite values.
    """
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError("x: grid_exponent needs finite values")
    mantissa, exponent = np.frexp(arr)  # x = mantissa · 2^exponent, 0.5 <= |mantissa| < 1 (exact, subnormals too)
    m = np.abs(mantissa * 2.0**53).astype(np.int64)  # x = ±m · 2^(exponent − 53), m < 2^53 an exact integer
    _, shift = np.frexp((m & -m).astype(np.float64))  # the lowest set bit of m is 2^(shift − 1)
    k = 53 - exponent.astype(np.int64) - (shift.astype(np.int64) - 1)
    return np.where(arr == 0.0, np.int64(2**31 - 1), k)


class LatticeGrid(Categories):
    """The power-of-two grid of a float output (Mironov 2012): its :func:`grid_exponent` is the category.

    ``x + Z`` computed in floating point lies on grids that depend on ``x``: when ``|1 + Z| < 1/2``, ``1 + Z`` is a
    multiple of ``2^-53`` (both terms are), while ``0 + Z`` is a float of that magnitude with all its significand
    bits, on a much finer grid. An event made of grids reachable under one input only gives an ε bound limited
    only by the number of trials. An exact mechanism (integer noise on a fixed grid) shows no such difference.

    Args:
        select: as :class:`Threshold` (which float of the output).
        members: a fixed set of grid exponents, or ``None`` to choose it on the selection trials.
    """

    def __init__(self, select: Select = None, *, members: Collection[int] | None = None) -> None:
        super().__init__(select, members=members)
        self.name = f"grid exponent of {self.name}"

    def values(self, outputs: Sequence[Any] | np.ndarray) -> np.ndarray:
        """int64 ``(n,)``: the grid exponent of the selected float of each output.

        Raises:
            InvalidInputError: a NaN or infinite value, or outputs the ``select`` cannot read.
        """
        return grid_exponent(_select(outputs, self.select, numeric=True))


class FirstAction:
    """A learner's first action that can reveal the differing round, from the actions :func:`play` returns.

    Args:
        after: the action played after ``after`` rounds of feedback (default 1: round 2's action, the first that
            can depend on round 1's loss; a learner that updates once per batch of ``B`` rounds first reveals
            round 1 in round ``B + 1``: ``after=B``).
        component: ``None`` treats the action as a category (an arm, a set of items, a vertex: the event is a set
            of actions, as :class:`Categories`); an int thresholds that coordinate of the action (as
            :class:`Threshold`).
        threshold, above, members: a fixed event, as in :class:`Threshold` / :class:`Categories`.

    Raises:
        InvalidInputError: a negative ``after`` or ``component``; ``threshold`` without ``component``, or
            ``members`` with one.
    """

    def __init__(
        self,
        after: int = 1,
        component: int | None = None,
        *,
        threshold: float | None = None,
        above: bool = True,
        members: Collection[Any] | None = None,
    ) -> None:
        after = _validate.integer("after", after, low=0)
        self.inner: Threshold | Categories
        if component is None:
            if threshold is not None:
                raise InvalidInputError("threshold: needs a component (a categorical action takes members=)")
            self.inner = Categories((after,), members=members, name=f"action after {after} round(s)")
        else:
            if members is not None:
                raise InvalidInputError("members: needs component=None (a thresholded coordinate takes threshold=)")
            component = _validate.integer("component", component, low=0)
            name = f"coordinate {component} of the action after {after} round(s)"
            self.inner = Threshold((after, component), threshold=threshold, above=above, name=name)

    def values(self, outputs: Sequence[Any] | np.ndarray) -> np.ndarray:
        """``(n,)``: the action (a category) or its coordinate (float64) in each trial's list of actions."""
        return self.inner.values(outputs)

    def fixed_event(self) -> _Event | None:
        """The event given in advance, or ``None`` when it is chosen from data."""
        return self.inner.fixed_event()

    def choose(self, va: np.ndarray, vb: np.ndarray, delta: float, alpha: float) -> tuple[_Event, bool]:
        """As :meth:`Threshold.choose` / :meth:`Categories.choose`."""
        return self.inner.choose(va, vb, delta, alpha)


class _Callable:
    """A plain callable ``output -> bool``: a fixed event."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def values(self, outputs: Sequence[Any] | np.ndarray) -> np.ndarray:
        return np.fromiter((bool(self.fn(o)) for o in outputs), dtype=bool, count=len(outputs))

    def fixed_event(self) -> _Event:
        return _Event(f"{getattr(self.fn, '__name__', 'event')}(output) is true", members=frozenset([True]))


Statistic = Threshold | Categories | FirstAction | Callable[[Any], Any]


# -- the auditor ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditResult:
    """What :func:`audit` found.

    Attributes:
        epsilon_lower: the lower confidence bound on ε (nats), ``max(0, ln((P_lower − δ)/P_upper))``: with
            probability ≥ :attr:`confidence` over the trials, the mechanism's true ε (at this δ) is at least this.
        event: the event counted, in words, and :attr:`likelier` the input under which it is likelier
            (``"a"`` or ``"b"``: the numerator of the ratio).
        hits: how many estimation trials fell in the event, ``(under a, under b)``.
        trials: estimation trials per input (the bound's sample size).
        selection_trials: trials per input spent choosing the event (0 for a fixed event).
        confidence: ``1 − alpha``.
        delta: the δ the bound is computed for.
        claimed: the claimed ε (``None`` if not given); :attr:`passed` compares with it.
    """

    epsilon_lower: float
    event: str
    likelier: str
    hits: tuple[int, int]
    trials: int
    selection_trials: int
    confidence: float
    delta: float
    claimed: float | None = None

    @property
    def passed(self) -> bool | None:
        """``epsilon_lower <= claimed`` (no violation found; not a proof of privacy), ``None`` without a claim."""
        return None if self.claimed is None else self.epsilon_lower <= self.claimed

    def __str__(self) -> str:
        a, b = self.hits if self.likelier == "a" else self.hits[::-1]
        other = "b" if self.likelier == "a" else "a"
        lines = [
            f"ε ≥ {self.epsilon_lower:.4g} at δ = {self.delta:g}, confidence 1 − {1 - self.confidence:.3g} "
            "(Clopper-Pearson)",
            f"event: {self.event}, likelier under input {self.likelier}: {a:,} of {self.trials:,} trials under "
            f"{self.likelier}, {b:,} of {self.trials:,} under {other}",
        ]
        if self.selection_trials:
            lines.append(f"event chosen on {self.selection_trials:,} other trials per input")
        if self.claimed is not None:
            verdict = "no violation found" if self.passed else "claim refuted"
            lines.append(f"claimed ε = {self.claimed:g}: {verdict}")
        return "\n".join(lines)


def play(learner: Any, losses: Sequence[Any]) -> list[Any]:
    """Play ``losses`` through a learner's ask/tell protocol and return the actions, one per round.

    ``actions[t]`` is the action of round ``t + 1``, chosen after the feedback of rounds ``1..t``
    (``learner.ask()``; then ``learner.tell(losses[t])``). Use it as :func:`audit`'s ``release`` for learners;
    :class:`FirstAction` picks one of the actions. The learner's horizon must be at least ``len(losses)``.

    Returns:
        A list of ``len(losses)`` actions (arrays are copied).
    """
    actions = []
    for loss in losses:
        action = learner.ask()
        actions.append(np.array(action, copy=True) if isinstance(action, np.ndarray) else action)
        learner.tell(loss)
    return actions


def audit(
    factory: Callable[..., Any],
    release: Callable[[Any, Any], Any],
    input_a: Any,
    input_b: Any,
    *,
    trials: int,
    statistic: Statistic,
    batch: int | None = None,
    delta: float = 0.0,
    alpha: float = 1e-6,
    claimed: float | None = None,
    selection: float = 0.5,
    seed: SeedLike = None,
    progress: bool = False,
) -> AuditResult:
    """Empirical lower bound on the ε of a mechanism or learner on two neighbouring inputs (see the module docs).

    Each trial builds a fresh object, ``obj = factory(seed=s)`` with ``s`` a distinct child
    ``numpy.random.SeedSequence`` of ``seed`` (a factory that ignores ``s`` uses its own generator, e.g. an
    OS-keyed ``secure=True`` one), and records ``release(obj, input)``. ``trials`` trials run on each input.

    Args:
        factory: ``factory(seed=...) -> object``: a fresh mechanism or learner (never reuse one: its state would
            make the trials dependent).
        release: ``release(obj, input) -> output``: runs the object on one input and returns what it releases (an
            array, a list of releases, an action, a list of actions — see :func:`play`). With ``batch``, it returns
            ``batch`` independent outputs along axis 0.
        input_a, input_b: the two neighbouring inputs, passed to ``release`` unchanged.
        trials: runs per input (>= 2 when the event is chosen from data).
        statistic: :class:`Threshold`, :class:`Categories`, :class:`LatticeGrid`, :class:`FirstAction`, or a
            callable ``output -> bool`` (a fixed event).
        batch: trials per object (``None``: one). Only valid when the ``batch`` outputs of one object are
            independent and identically distributed, each with the distribution of one trial (independent noise
            per coordinate or row, no shared state between them).
        delta: the claimed δ in ``[0, 1)``; the bound is on ε at this δ.
        alpha: ``1 −`` the confidence, in ``(0, 0.5)``.
        claimed: the claimed ε (optional), for :attr:`AuditResult.passed`.
        selection: fraction of the trials of each input used to choose the event, in ``(0, 1)``, when the
            statistic does not fix it.
        seed: ``None`` (OS entropy), an int or a ``SeedSequence``: the root of the trials' seeds.
        progress: show a tqdm progress bar over the trials.

    Returns:
        An :class:`AuditResult`.

    Raises:
        InvalidInputError: bad arguments; ``release`` returning the wrong number of outputs for ``batch``; a
            statistic that cannot read the outputs (NaN, unequal shapes without a ``select`` callable).
    """
    trials = _validate.integer("trials", trials, low=1)
    batch = 1 if batch is None else _validate.integer("batch", batch, low=1)
    delta = _validate.real("delta", delta, low=0.0, high=1.0, high_open=True)
    alpha = _validate.real("alpha", alpha, low=0.0, high=0.5, low_open=True, high_open=True)
    claimed = _validate.optional_real("claimed", claimed, low=0.0)
    selection = _validate.real("selection", selection, low=0.0, high=1.0, low_open=True, high_open=True)
    _validate.flag("progress", progress)
    if not callable(factory) or not callable(release):
        raise InvalidInputError("factory and release must be callables")
    stat: Any = statistic if hasattr(statistic, "fixed_event") else None
    if stat is None:
        if not callable(statistic):
            raise InvalidInputError(f"statistic: must be a dponline.audit statistic or a callable, got {statistic!r}")
        stat = _Callable(statistic)
    if isinstance(seed, np.random.Generator):
        raise InvalidInputError("seed: must be None, an int or a SeedSequence (each trial gets a child)")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    fixed = stat.fixed_event()
    if fixed is None and trials < 2:
        raise InvalidInputError("trials: choosing the event from data needs at least 2 trials per input")

    bar = None
    if progress:
        bar = require("tqdm.auto", "progress=True").tqdm(total=2 * trials, unit="trial", unit_scale=True, desc="audit")
    try:
        seeds = root.spawn(2)
        va = _collect(factory, release, input_a, trials, batch, stat, seeds[0], bar)
        vb = _collect(factory, release, input_b, trials, batch, stat, seeds[1], bar)
    finally:
        if bar is not None:
            bar.close()

    if fixed is not None:
        ha, hb = fixed.count(va), fixed.count(vb)
        # Both directions at alpha/2 each (Bonferroni): the larger bound holds with confidence 1 − alpha.
        ab = epsilon_lower_bound(ha, hb, trials, delta=delta, alpha=alpha / 2)
        ba = epsilon_lower_bound(hb, ha, trials, delta=delta, alpha=alpha / 2)
        a_first = ab >= ba
        return AuditResult(
            epsilon_lower=max(0.0, float(max(ab, ba))),
            event=fixed.text,
            likelier="a" if a_first else "b",
            hits=(ha, hb),
            trials=trials,
            selection_trials=0,
            confidence=1.0 - alpha,
            delta=delta,
            claimed=claimed,
        )
    n_sel = min(trials - 1, max(1, int(math.floor(selection * trials))))
    event, a_first = stat.choose(va[:n_sel], vb[:n_sel], delta, alpha)
    n = trials - n_sel
    ha, hb = event.count(va[n_sel:]), event.count(vb[n_sel:])
    bound = (
        epsilon_lower_bound(ha, hb, n, delta=delta, alpha=alpha)
        if a_first
        else epsilon_lower_bound(hb, ha, n, delta=delta, alpha=alpha)
    )
    return AuditResult(
        epsilon_lower=max(0.0, float(bound)),
        event=event.text,
        likelier="a" if a_first else "b",
        hits=(ha, hb),
        trials=n,
        selection_trials=n_sel,
        confidence=1.0 - alpha,
        delta=delta,
        claimed=claimed,
    )


def _collect(
    factory: Callable[..., Any],
    release: Callable[[Any, Any], Any],
    value: Any,
    trials: int,
    batch: int,
    stat: Any,
    seed: np.random.SeedSequence,
    bar: Any,
) -> np.ndarray:
    """The statistic's values of ``trials`` trials on one input, in trial order."""
    calls = -(-trials // batch)
    children = seed.spawn(calls)
    parts: list[np.ndarray] = []
    pending: list[Any] = []
    done = 0
    for child in children:
        out = release(factory(seed=child), value)
        need = min(batch, trials - done)
        if batch > 1:
            got = len(out) if hasattr(out, "__len__") else None
            if got != batch:
                raise InvalidInputError(f"release: returned {got} outputs for batch={batch}")
            parts.append(stat.values(out[:need]))
        else:
            pending.append(out)
            if len(pending) == _CHUNK:
                parts.append(stat.values(pending))
                pending = []
        done += need
        if bar is not None:
            bar.update(need)
    if pending:
        parts.append(stat.values(pending))
    return np.concatenate(parts)
