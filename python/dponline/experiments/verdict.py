"""Intervals, rounding and verdicts: the one place every job computes and words its uncertainty.

Conventions (every job, table, verdict, CSV and plot):

* every difference is a **regret**: the learner's loss minus the reference's, so **+ = worse**, − = better;
* ``±`` is always the half-width of the **95% Student-t interval** over seeds (:func:`interval`);
* a number is rounded to the interval's precision (:func:`format_interval`: two significant digits of the
  half-width, the mean to the same decimal), a zero-width interval prints as exact, and ``-0`` never prints;
* a verdict (:func:`verdict`) compares a private learner with the do-nothing baseline and with its non-private
  twin on paired per-seed differences, and says when the interval is too wide to tell and about how many seeds
  would resolve it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

__all__ = [
    "CONFIDENCE",
    "VACUOUS_EPSILON",
    "Interval",
    "interval",
    "band",
    "format_number",
    "format_interval",
    "compare",
    "verdict",
    "vacuous",
]

CONFIDENCE = 0.95
"""Coverage of every interval the package prints (Student t over seeds)."""
VACUOUS_EPSILON = 10.0
"""ε above which a guarantee is reported as vacuous: ``e^10 ≈ 22,026``, so an adversary's odds may move by more
than four orders of magnitude (δ ≥ 1 is vacuous at any ε)."""
MAX_SEEDS_ADVICE = 10**6
"""Beyond this many seeds the advice says the difference is negligible rather than naming a count."""


class Interval(NamedTuple):
    """Mean and 95% Student-t interval of ``n`` values (``se``, ``low``, ``high`` NaN for ``n < 2``)."""

    mean: float
    se: float
    low: float
    high: float
    n: int

    @property
    def half(self) -> float:
        """Half-width of the interval (NaN for ``n < 2``)."""
        return (self.high - self.low) / 2.0


def interval(values: Sequence[float] | np.ndarray) -> Interval:
    """Mean, standard error and 95% Student-t interval of ``values`` (1-D, finite floats; NaN spread for fewer
    than 2 values, all NaN for none)."""
    from scipy import stats

    x = np.asarray(values, dtype=np.float64).ravel()
    n = int(x.size)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, math.nan, 0)
    mean = float(np.mean(x))
    if n < 2:
        return Interval(mean, math.nan, math.nan, math.nan, 1)
    se = float(np.std(x, ddof=1) / math.sqrt(n))
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * se
    return Interval(mean, se, mean - half, mean + half, n)


def band(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 95% t half-width over the rows of ``curves`` (shape ``(seeds, points)``; half-width 0 for one
    row), for the shaded bands of the plots."""
    from scipy import stats

    curves = np.asarray(curves, dtype=np.float64)
    mean = curves.mean(axis=0)
    n = curves.shape[0]
    if n < 2:
        return mean, np.zeros_like(mean)
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * curves.std(axis=0, ddof=1) / math.sqrt(n)
    return mean, half


def _is_exact(mean: float, half: float) -> bool:
    """A zero-width interval, up to float summation noise (``1.7e-13`` on a value of 382 is zero)."""
    return half <= 1e-9 * max(1.0, abs(mean))


def format_number(value: float, decimals: int | None = None, *, signed: bool = False) -> str:
    """``value`` with ``decimals`` places (default: four significant digits), never ``-0``; ``signed`` puts
    ``+`` before positive values."""
    if not math.isfinite(value):
        return "-" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
    if decimals is None:
        if value == 0:
            decimals = 0
        else:
            decimals = max(0, 3 - math.floor(math.log10(abs(value))))
    rounded = round(value, decimals) + 0.0  # + 0.0 turns -0.0 into 0.0
    text = f"{rounded:.{max(decimals, 0)}f}"
    if text.lstrip("-").strip("0.") == "":
        text = text.lstrip("-")
    return f"+{text}" if signed and rounded > 0 else text


def format_interval(mean: float, half: float, *, signed: bool = False) -> str:
    """``mean ± half`` rounded to the interval: two significant digits of ``half`` and ``mean`` to the same
    decimal; ``mean (exact)`` when the interval has zero width; ``mean`` alone when ``half`` is NaN (one
    seed)."""
    if not math.isfinite(half):
        return format_number(mean, signed=signed)
    if _is_exact(mean, half):
        return f"{format_number(mean, signed=signed)} (exact)"
    decimals = 1 - math.floor(math.log10(half))
    return f"{format_number(mean, decimals, signed=signed)} ± {format_number(half, decimals)}"


def _seeds_needed(iv: Interval) -> str:
    if iv.mean == 0 or not math.isfinite(iv.half):
        return "more seeds are needed"
    needed = math.ceil(iv.n * (iv.half / abs(iv.mean)) ** 2)
    if needed > MAX_SEEDS_ADVICE:
        return f"a difference this small would need over {MAX_SEEDS_ADVICE:,} seeds to resolve"
    return f"more seeds are needed, about {max(needed, iv.n + 1):,}"


def compare(diffs: Sequence[float] | np.ndarray, against: str, unit: str) -> str:
    """How a learner did against ``against``, from its per-seed regrets ``diffs`` (learner − reference, + =
    worse) in ``unit``: ``"beats X by 1.3 ± 0.4 nats"``, ``"worse than X by ..."``, ``"within noise of X
    (+0.2 ± 1.6 nats: more seeds are needed, about 260)"`` (the interval is wider than the mean),
    ``"identical to X in every seed"``, or the one-seed case."""
    iv = interval(diffs)
    if iv.n == 0:
        return f"no finished run to compare with {against}"
    if iv.n == 1:
        return (
            f"{format_number(iv.mean, signed=True)} {unit} against {against} from one seed: no interval, "
            "more seeds are needed"
        )
    if _is_exact(iv.mean, iv.half):
        if abs(iv.mean) <= 1e-9 * max(1.0, abs(iv.mean)):
            return f"identical to {against} in every seed"
        word = "worse than" if iv.mean > 0 else "beats"
        return f"{word} {against} by {format_number(abs(iv.mean))} {unit} in every seed"
    if iv.low > 0:
        return f"worse than {against} by {format_interval(iv.mean, iv.half)} {unit}"
    if iv.high < 0:
        return f"beats {against} by {format_interval(-iv.mean, iv.half)} {unit}"
    return f"within noise of {against} ({format_interval(iv.mean, iv.half, signed=True)} {unit}: {_seeds_needed(iv)})"


def verdict(
    label: str,
    unit: str,
    baseline: tuple[str, Sequence[float] | np.ndarray] | None,
    twin: tuple[str, Sequence[float] | np.ndarray] | None = None,
) -> str:
    """The ``verdict —`` line of a private learner ``label``: :func:`compare` against the do-nothing
    ``baseline`` (``(name, per-seed regrets)``), then against its non-private ``twin`` (the price of privacy,
    on paired per-seed differences). Every job prints its verdicts with this function."""
    parts = []
    if baseline is not None:
        parts.append(compare(baseline[1], baseline[0], unit))
    if twin is not None:
        parts.append(f"privacy: {compare(twin[1], twin[0], unit)}")
    return f"verdict — {label}: " + "; ".join(parts or ["no baseline to compare with"])


def vacuous(epsilon: float, delta: float) -> str:
    """``""`` for a meaningful guarantee, else a short note saying why ``(epsilon, delta)`` is vacuous
    (δ ≥ 1, or ε above :data:`VACUOUS_EPSILON`)."""
    if delta >= 1:
        return "  [vacuous: δ ≥ 1 protects nothing]"
    if epsilon > VACUOUS_EPSILON:
        return f"  [vacuous: ε > {VACUOUS_EPSILON:g}, odds may move by a factor e^ε > {math.exp(VACUOUS_EPSILON):,.0f}]"
    return ""
