"""``dponline display``: choose k display slots among 80 items on real click probabilities, privately.

Each round shows k of the 80 Open Bandit items; a user with per-item click probabilities p_a^t (built from the
logged rounds, dponline.datasets.open_bandit_round_probabilities) clicks at least one with probability
f_t(S) = 1 − Π_{a∈S}(1 − p_a^t). Learners (Perez-Salazar & Cummings 2021), each private at every --epsilon and
as its non-private twin, on common random numbers:

* full information (FI-DP, Algorithm 2) and bandit feedback (BanditDP, Algorithm 3) on k-sets, against greedy
  in hindsight with the (1 − 1/e) factor; do-nothing baseline: a uniformly random k-set each round (its
  expected clicks, computed exactly);
* the continuous DR-submodular learner (Algorithm 4, PrivateDRSubmodular) on a partition matroid of the items —
  at most one item per value of the categorical item_feature_3 (7 categories) — against greedy on that matroid;
  baseline: one uniformly random item per category.

Prints expected clicks (a gain: higher is better) and regrets (+ = worse) in clicks with 95% t-intervals over
seeds, the guarantees per replaced f_t and per logged round of the bootstrapped stream (flagged when vacuous),
and one verdict per private learner: whether it beats its random baseline and what privacy costs against its
twin, or that the difference is within noise. Outputs in --out, replaced all at once at the end: display.csv
(one row per learner and seed) and display.png (one panel per comparator).
"""

from __future__ import annotations

import argparse
import csv
import functools
import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import privacy
from ..datasets import open_bandit_item_blocks, open_bandit_round_probabilities
from ..domains import PartitionMatroid
from ..errors import InvalidInputError
from ..experiments.outputs import exclusive_output, publish
from ..experiments.verdict import band, format_interval, format_number, interval, vacuous, verdict
from ..learners import PrivateDRSubmodular, PrivateSubmodular
from ..regret import APPROXIMATION, greedy_in_hindsight, matroid_greedy_in_hindsight, submodular_regret_curve
from ..submodular import ProbabilisticCoverage
from ._args import (
    add_execution_flags,
    add_seed_flags,
    delta,
    epsilons,
    map_runs,
    parser_options,
    positive_int,
    randomness_text,
    root_seed,
)

__all__ = ["add_parser", "run"]

DR_FEATURE = 3
"""The categorical item feature whose values are the blocks of the DR-submodular learner's partition matroid."""
DR_CAPACITY = 1
"""Items per block (category) the DR-submodular learner may show."""


ITEMS = 80
"""Items of the Open Bandit sample (the ground set)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline display``."""
    p = sub.add_parser(
        "display",
        help="private choice of k display slots of 80 items on Open Bandit clicks",
        **parser_options(__doc__),
    )
    p.add_argument("--k", type=positive_int, default=3, help=f"slots per round, 1 to {ITEMS} (default 3)")
    p.add_argument("--horizon", type=positive_int, default=10**6, help="rounds (default 10^6, bootstrapped)")
    p.add_argument("--epsilon", type=epsilons, default=[1.0], help="privacy ε, or a list such as 1,10 (default 1)")
    p.add_argument("--delta", type=delta, default=1e-6, help="privacy δ (default 1e-6; must be > 0)")
    p.add_argument("--seeds", type=positive_int, default=3, help="runs per learner (default 3)")
    add_seed_flags(p, stream="bootstrap", learners="learners")
    p.add_argument("--out", default="dponline-display", help="output directory (default ./dponline-display)")
    add_execution_flags(p, scheduler=False)
    p.set_defaults(func=run, parser=p)
    return p


@functools.cache
def _stream(horizon: int, stream_seed: int) -> Any:
    return ProbabilisticCoverage(
        open_bandit_round_probabilities(), horizon=horizon, resample="bootstrap", seed=stream_seed
    )


def _blocks() -> list[list[int]]:
    return [list(b) for b in open_bandit_item_blocks(DR_FEATURE)]


def _learner(feedback: str, epsilon: float | None, args: dict[str, Any], seed: Any) -> Any:
    if feedback == "dr":
        blocks = _blocks()
        domain = PartitionMatroid(blocks, [DR_CAPACITY] * len(blocks), base=False)
        return PrivateDRSubmodular(domain, horizon=args["horizon"], epsilon=epsilon, delta=args["delta"], seed=seed)
    return PrivateSubmodular(
        ITEMS, args["k"], horizon=args["horizon"], epsilon=epsilon, delta=args["delta"], feedback=feedback, seed=seed
    )


def _task(task: tuple[str, float | None, int, int, dict[str, Any]]) -> dict[str, Any]:
    """One run (a process-pool task): the learner's checkpoints and cumulative loss (−clicks), and its
    guarantees."""
    feedback, epsilon, k, root, args = task
    stream = _stream(args["horizon"], args["stream_seed"])
    learner = _learner(feedback, epsilon, args, np.random.SeedSequence(root, spawn_key=(k,)))
    result = learner.run(stream, checkpoints=200)
    return {
        "checkpoints": np.asarray(result.checkpoints),
        "cumulative_loss": np.asarray(result.cumulative_loss),
        "privacy": learner.privacy if epsilon is not None else None,
        "per_row": learner.privacy_per_source_row(stream) if epsilon is not None else None,
    }


def _random_values(P: np.ndarray, k: int, blocks: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per logged round, the expected clicks of a uniformly random k-set — ``1 − e_k(1 − p)/C(n, k)`` with
    ``e_k`` the elementary symmetric polynomial (a product over a random k-subset, averaged exactly) — and of
    one uniformly random item per block, ``1 − Π_B (1 − mean_{a∈B} p_a)``."""
    q = 1.0 - P
    e = np.zeros((P.shape[0], k + 1))
    e[:, 0] = 1.0
    for a in range(P.shape[1]):
        e[:, 1:] = e[:, 1:] + q[:, a, None] * e[:, :-1]
    k_set = 1.0 - e[:, k] / math.comb(P.shape[1], k)
    per_block = 1.0 - np.prod([1.0 - P[:, b].mean(axis=1) for b in blocks], axis=0)
    return k_set, per_block


def run(args: argparse.Namespace) -> int:
    """Run every learner for every seed; print the table and verdicts, write ``display.csv`` and
    ``display.png``."""
    if args.delta <= 0:
        args.parser.error("--delta must be > 0: the submodular learners are (ε, δ)-DP (Theorems 5, 7)")
    if args.k > ITEMS:
        raise InvalidInputError(f"--k must be at most {ITEMS} (the items of the Open Bandit sample), got {args.k}")
    with exclusive_output(args.out) as out:
        job = {"horizon": args.horizon, "delta": args.delta, "k": args.k, "stream_seed": args.stream_seed}
        for feedback in ("full", "dr"):  # refuse bad values before any run
            for epsilon in args.epsilon:
                try:
                    _learner(feedback, epsilon, job, None)
                except InvalidInputError as exc:
                    args.parser.error(str(exc))
        stream = _stream(args.horizon, args.stream_seed)
        blocks = _blocks()
        greedy = greedy_in_hindsight(stream, args.k)
        matroid_greedy = matroid_greedy_in_hindsight(stream, blocks, [DR_CAPACITY] * len(blocks))
        rows = stream.row_indices().astype(np.int64)
        k_set, per_block = _random_values(np.asarray(open_bandit_round_probabilities()), args.k, blocks)
        random_cum = {"k": np.cumsum(k_set[rows]), "dr": np.cumsum(per_block[rows])}
        root = root_seed(args.seed)
        configs = [(fb, eps) for fb in ("full", "bandit", "dr") for eps in [*args.epsilon, None]]
        tasks = [(fb, eps, k, root, job) for fb, eps in configs for k in range(args.seeds)]
        runs = map_runs(_task, tasks, workers=args.workers, quiet=args.quiet, desc="dponline display")
        records, curves, guarantees, marks = [], {}, {}, None
        references: dict[str, np.ndarray] = {}
        for (feedback, epsilon, k, _, _), result in zip(tasks, runs, strict=True):
            name = _name(feedback, epsilon)
            group = "dr" if feedback == "dr" else "k"
            marks = result["checkpoints"]
            comparator = matroid_greedy if group == "dr" else greedy
            curve = submodular_regret_curve(stream, marks, result["cumulative_loss"], comparator)
            curves.setdefault(name, []).append(curve)
            random_clicks = float(random_cum[group][-1])
            clicks = -float(result["cumulative_loss"][-1])
            if group not in references:
                references[group] = submodular_regret_curve(stream, marks, -random_cum[group][marks - 1], comparator)
            records.append(
                {
                    "learner": name,
                    "feedback": "full" if feedback == "dr" else feedback,
                    "epsilon": epsilon,
                    "seed": k,
                    "clicks": clicks,
                    "regret": float(curve[-1]),
                    "regret_vs_random": random_clicks - clicks,
                }
            )
            if result["privacy"] is not None and name not in guarantees:
                guarantees[name] = (result["privacy"], result["per_row"])
        random_total = {g: float(c[-1]) for g, c in random_cum.items()}
        text = _report(records, guarantees, greedy, matroid_greedy, random_total, stream, args, len(blocks))
        written = publish(out, lambda stage: _write(stage, records, marks, curves, references, args.k, args.seeds))
    print(text)
    print(f"\nwrote {', '.join(str(p) for p in written)}")
    return 0


def _name(feedback: str, epsilon: float | None) -> str:
    label = "DR-submodular" if feedback == "dr" else feedback
    return f"{label}, " + ("non-private" if epsilon is None else f"ε={epsilon:g}")


def _report(
    records: list[dict[str, Any]],
    guarantees: dict[str, Any],
    greedy: Any,
    matroid_greedy: Any,
    random_total: dict[str, float],
    stream: Any,
    args: argparse.Namespace,
    n_blocks: int,
) -> str:
    names = list(dict.fromkeys(r["learner"] for r in records))
    head = f"{'learner':<27} {'expected clicks':>18} {'(1-1/e)-regret vs greedy':>26} {'regret vs random':>18}"
    lines = [f"{'':<27} {'(gain)':>18} {'(+ = worse)':>26} {'(+ = worse)':>18}", head, "-" * len(head)]
    blocks_text = {
        "k": f"k-sets of {args.k} of {ITEMS} items (comparator: greedy in hindsight; baseline: a random k-set)",
        "dr": f"partition matroid, at most {DR_CAPACITY} item per value of item_feature_{DR_FEATURE} ({n_blocks} "
        "categories; comparator: greedy on the matroid; baseline: a random item per category)",
    }
    for group in ("k", "dr"):
        lines.append(blocks_text[group])
        for name in names:
            if name.startswith("DR") != (group == "dr"):
                continue
            mine = [r for r in records if r["learner"] == name]
            cells = []
            for key in ("clicks", "regret", "regret_vs_random"):
                iv = interval([r[key] for r in mine])
                cells.append(format_interval(iv.mean, iv.half, signed=key != "clicks"))
            lines.append(f"  {name:<25} {cells[0]:>18} {cells[1]:>26} {cells[2]:>18}")
        comparator = matroid_greedy if group == "dr" else greedy
        lines.append(
            f"  {'greedy' + (' on the matroid' if group == 'dr' else ' in hindsight'):<25} "
            f"{format_number(comparator.total_value):>18}   ((1 − 1/e)·greedy = "
            f"{format_number(APPROXIMATION * comparator.total_value)}; items {comparator.items.tolist()})"
        )
        baseline = "random item per category" if group == "dr" else "random k-set (baseline)"
        lines.append(f"  {baseline:<25} {format_number(random_total[group]):>18}   (expected clicks, exact)")
    lines.append("(clicks and regrets in expected clicks; mean ± half-width of the 95% t-interval over seeds)")
    lines.append("")
    lines.append("privacy (replacing one round's click function f_t):")
    for name, (per_round, per_row) in guarantees.items():
        lines.append(
            f"  {name}: (ε={per_round.epsilon:g}, δ={per_round.delta:.3g}) — {per_round.source}"
            + vacuous(per_round.epsilon, per_round.delta)
        )
        lines.append(
            f"    per logged round (used in up to {privacy.row_multiplicity(stream)} rounds): "
            f"(ε={per_row.epsilon:.4g}, δ={per_row.delta:.3g})" + vacuous(per_row.epsilon, per_row.delta)
        )
    lines.append(f"  randomness: {randomness_text(args.seed)}")
    lines.append("  not private: clicks, regrets and the comparators are evaluations computed from the data")
    lines.append("")
    for name in names:
        if name.endswith("non-private"):
            continue
        twin = name.split(",")[0] + ", non-private"
        mine = {r["seed"]: r for r in records if r["learner"] == name}
        theirs = {r["seed"]: r for r in records if r["learner"] == twin}
        group = "dr" if name.startswith("DR") else "k"
        baseline = "a random item per category" if group == "dr" else "a random k-set"
        lines.append(
            verdict(
                name,
                "clicks",
                (baseline, [r["regret_vs_random"] for r in mine.values()]),
                (twin, [theirs[k]["clicks"] - mine[k]["clicks"] for k in sorted(mine.keys() & theirs.keys())]),
            )
        )
    return "\n".join(lines)


def _write(
    out: Path,
    records: list[dict[str, Any]],
    marks: Any,
    curves: dict[str, list[np.ndarray]],
    references: dict[str, np.ndarray],
    k: int,
    seeds: int,
) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(out / "display.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), dpi=120, layout="constrained")
    titles = {
        "k": f"k = {k} of {ITEMS} items: (1 − 1/e)-regret vs greedy in hindsight",
        "dr": f"partition matroid (≤ {DR_CAPACITY} per category): (1 − 1/e)-regret vs greedy on the matroid",
    }
    styles = ("-", "--", "-.", ":")
    for ax, group in zip(axes, ("k", "dr"), strict=True):
        mine = [n for n in curves if n.startswith("DR") == (group == "dr")]
        for n, name in enumerate(mine):
            mean, half = band(np.vstack(curves[name]))
            (line,) = ax.plot(marks, mean, label=name, linewidth=1.3, linestyle=styles[n % len(styles)])
            if len(curves[name]) > 1:
                ax.fill_between(marks, mean - half, mean + half, color=line.get_color(), alpha=0.2, linewidth=0)
        baseline = "one random item per category" if group == "dr" else "a random k-set"
        ax.plot(marks, references[group], color="black", linestyle=":", linewidth=1.4, label=f"{baseline} (baseline)")
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_xlabel("round t (rounds)")
        ax.set_ylabel("(1 − 1/e)-regret (expected clicks; + = worse)")
        ax.set_title(titles[group], fontsize=9)
        ax.legend(fontsize=7, title=f"mean, band = 95% t-interval over {seeds} seed(s)", title_fontsize=7)
    path = out / "display.png"
    fig.savefig(path)
    plt.close(fig)
    return [out / "display.csv", path]
