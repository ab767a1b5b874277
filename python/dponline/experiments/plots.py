"""The one plotting module of every job and sweep: regret curves and the price of privacy, drawn from
:class:`~dponline.experiments.Results` with matplotlib.

Conventions shared by every plot: units on the y axis (the experiment's ``unit``: nats, expected clicks …) and
``+ = worse``; bands and error bars are the 95% Student-t interval over seeds, computed in one place
(:func:`dponline.experiments.verdict.band` and :func:`~dponline.experiments.verdict.interval`, scipy); every
curve has its own line style and marker so curves that coincide stay visible; the legend sits outside the data;
titles wrap instead of being clipped; log axes print the swept values plainly (0.1, 1, 10).
"""

from __future__ import annotations

import math
import numbers
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..errors import InvalidInputError
from .spec import Configuration
from .verdict import band, interval

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["PLOTS", "plot"]

PLOTS = ("regret", "price_of_privacy")
"""The kinds of plot :func:`plot` draws."""

_STYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


class Results(Protocol):
    """What the plots read of a sweep's :class:`~dponline.experiments.Results` (named here, not imported:
    ``Results.plot`` is this module's :func:`plot`)."""

    configurations: list[Configuration]
    comparators: list[str]

    def finished(self, config: Configuration) -> list[dict[str, Any]]: ...
    @property
    def comparator_curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]: ...
    def param_value(self, config: Configuration, name: str) -> Any: ...
    def metadata(self) -> dict[str, Any]: ...


def _wrap(text: str, width: int = 95) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _interval(x: np.ndarray) -> tuple[float, float, float, float]:
    iv = interval(x)
    return iv.mean, iv.se, iv.low, iv.high


def plot(
    results: Results,
    kind: str = "regret",
    path: str | Path | None = None,
    *,
    comparator: str | None = None,
    x: str = "epsilon",
    formats: Sequence[str] = ("png",),
    title: str | None = None,
) -> tuple[Figure, list[Path]]:
    """Draw a plot (matplotlib, Agg backend) and save it when ``path`` is given.

    Args:
        kind: ``"regret"`` — regret curves against ``comparator``, mean over seeds with its 95% t-band,
            one curve per learner × parameters; ``"price_of_privacy"`` — final regret (mean, 95%
            interval) against ``x`` (default ε, log scale) per learner, with learners that have no value
            of ``x`` (``epsilon=None``: non-private) as horizontal reference lines.
        path: file path without or with suffix; one file per entry of ``formats`` (``"png"``, ``"svg"``,
            ``"pdf"``) is written with that suffix.
        comparator: the comparator's name (default: the first, ``"best"``).
        x: the grid parameter on the horizontal axis of ``"price_of_privacy"``.
        formats: file formats to write.
        title: plot title (default: the experiment's name and description).

    Returns:
        ``(figure, written paths)``.

    Raises:
        InvalidInputError: unknown kind or comparator, or nothing to plot.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = results.metadata()
    if kind not in PLOTS:
        raise InvalidInputError(f"kind must be one of {', '.join(PLOTS)}; got {kind!r}")
    comparator = comparator or results.comparators[0]
    if comparator not in results.comparators:
        raise InvalidInputError(f"comparator must be one of {', '.join(results.comparators)}; got {comparator!r}")
    fig, ax = plt.subplots(figsize=(9.5, 4.8), dpi=120, layout="constrained")
    if kind == "regret":
        _regret(ax, results, comparator)
    else:
        _price_of_privacy(ax, results, comparator, x)
    heading = title or f"{meta['name']}: {meta['description']}".rstrip(": ")
    ax.set_title(_wrap(heading), fontsize=8)
    written: list[Path] = []
    if path is not None:
        base = Path(path)
        if base.suffix.lstrip(".") in ("png", "svg", "pdf"):
            base = base.with_suffix("")
        for fmt in formats:
            target = base.with_name(f"{base.name}.{fmt}")
            fig.savefig(target)
            written.append(target)
        plt.close(fig)
    return fig, written


def _regret(ax: Any, results: Results, comparator: str) -> None:
    """Regret curves against ``comparator``: mean over seeds and its 95% t-band per configuration, the other
    comparators as black reference lines."""
    meta = results.metadata()
    drawn = 0
    for c in results.configurations:
        ok = results.finished(c)
        if not ok:
            continue
        marks = ok[0]["checkpoints"]
        curves = np.vstack([r["regret"][comparator] for r in ok if len(r["checkpoints"]) == len(marks)])
        mean, half = band(curves)
        # Line style and marker vary with the curve, so curves that coincide (a learner equal to a reference)
        # stay visible; markers are spread over the checkpoints, offset per curve.
        (line,) = ax.plot(
            marks,
            mean,
            label=c.label,
            linewidth=1.3,
            linestyle=_STYLES[drawn % len(_STYLES)],
            marker=_MARKERS[drawn % len(_MARKERS)],
            markersize=4,
            markevery=(drawn % 7 / 70, 0.1),
        )
        if len(curves) > 1:
            ax.fill_between(marks, mean - half, mean + half, color=line.get_color(), alpha=0.2, linewidth=0)
        drawn += 1
    if not drawn:
        raise InvalidInputError("no finished run to plot")
    # The other comparators as references, drawn last and dashed so they stay visible over the learners.
    if comparator in results.comparator_curves:
        marks, base = results.comparator_curves[comparator]
        for n, (name, (ref_marks, values)) in enumerate(results.comparator_curves.items()):
            if name != comparator and np.array_equal(ref_marks, marks):
                style = ("--", "-.", ":")[n % 3]
                ax.plot(
                    marks,
                    values - base,
                    linestyle=style,
                    color="black",
                    linewidth=1.4,
                    zorder=5,
                    label=f"{name} (comparator)",
                )
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("round t (rounds)")
    unit = meta.get("unit", "loss units")
    ax.set_ylabel(f"cumulative regret vs {comparator} ({unit}; + = worse)")
    seeds = meta.get("seeds")
    ax.legend(
        title=f"mean, band = 95% t-interval\nover {seeds} seed(s)",
        fontsize=7,
        title_fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )


def _price_of_privacy(ax: Any, results: Results, comparator: str, x: str) -> None:
    """Final regret (mean, 95% interval) against the grid parameter ``x`` per learner; configurations without a
    value of ``x`` (non-private) and the do-nothing baseline as horizontal references."""
    meta = results.metadata()
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, tuple[float, ...]]]] = {}
    ticks: set[float] = set()
    references: list[tuple[str, tuple[float, ...]]] = []
    for c in results.configurations:
        ok = results.finished(c)
        if not ok:
            continue
        finals = np.asarray([r["regret"][comparator][-1] for r in ok], dtype=np.float64)
        summary = _interval(finals)
        value = results.param_value(c, x)
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            rest = tuple((k, _label_value(v)) for k, v in c.values.items() if k != x)
            groups.setdefault((c.name, rest), []).append((float(value), summary))
        else:
            references.append((c.label, summary))
    if not groups:
        raise InvalidInputError(f"the price-of-privacy plot needs a grid over {x!r} with numeric values")
    for n, ((name, rest), points) in enumerate(groups.items()):
        points.sort()
        xs = np.asarray([p[0] for p in points])
        mean = np.asarray([p[1][0] for p in points])
        low = np.asarray([p[1][2] for p in points])
        high = np.asarray([p[1][3] for p in points])
        label = name + (f" ({', '.join(f'{k}={v}' for k, v in rest)})" if rest else "")
        err = np.vstack([mean - low, high - mean])
        ax.errorbar(
            xs,
            mean,
            yerr=np.nan_to_num(err),
            marker=_MARKERS[n % len(_MARKERS)],
            linestyle=_STYLES[n % len(_STYLES)],
            capsize=3,
            label=label,
            linewidth=1.2,
        )
        ticks.update(float(v) for v in xs)
    shades = ["black", "dimgray", "saddlebrown", "darkslategray"]
    for n, (label, (ref_mean, _, ref_low, ref_high)) in enumerate(references):
        color = shades[n % len(shades)]
        ax.axhline(ref_mean, linestyle="--", linewidth=1.2, label=f"{label} (no {x})", color=color)
        if math.isfinite(ref_low):
            ax.axhspan(ref_low, ref_high, color=color, alpha=0.1, linewidth=0)
    base = meta.get("baseline")
    if base and base != comparator and {base, comparator} <= results.comparator_curves.keys():
        level = float(results.comparator_curves[base][1][-1] - results.comparator_curves[comparator][1][-1])
        ax.axhline(level, linestyle=":", linewidth=1.4, color="black", label=f"{base} (do-nothing baseline)")
    ax.set_xscale("log")
    # Ticks at the swept values, printed plainly (0.1, 1, 10 — not 10⁻¹ or 6×10⁻¹).
    ax.xaxis.set_major_locator(FixedLocator(sorted(ticks)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("ε (log scale)" if x == "epsilon" else x)
    unit = meta.get("unit", "loss units")
    ax.set_ylabel(f"final regret vs {comparator} ({unit}; + = worse)")
    ax.legend(
        title="mean and 95% t-interval\nover seeds",
        fontsize=7,
        title_fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )


def _label_value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)
