"""``dponline display``: choose k display slots among 80 items on real click probabilities, privately.

Each round shows items of the 80 Open Bandit items; a user with per-item click probabilities p_a^t (built from
the logged rounds, dponline.datasets.open_bandit_round_probabilities) clicks at least one with probability
f_t(S) = 1 − Π_{a∈S}(1 − p_a^t). Learners (Perez-Salazar & Cummings 2021), each private at every --epsilon and
as its non-private twin, on common random numbers:

* --domain k-sets (default): full information (FI-DP, Algorithm 2; and the same reduction with DP-FTRL experts,
  PrivateSubmodularFTRL) and bandit feedback (BanditDP, Algorithm 3) on sets of --k items, against greedy in
  hindsight with the (1 − 1/e) factor; do-nothing baseline: a uniformly random k-set each round (its expected
  clicks, computed exactly);
* --domain matroid: the continuous DR-submodular learner (Algorithm 4, PrivateDRSubmodular) on a partition
  matroid of the items — at most one item per value of the categorical item_feature_3 (7 categories) — against
  greedy on that matroid (with the same factor); baseline: one uniformly random item per category.

Prints expected clicks (a gain: higher is better) and (1 − 1/e)-regrets (+ = worse) in expected clicks with 95%
t-intervals over seeds, the guarantees per replaced f_t and per logged round of the bootstrapped stream
(flagged when vacuous), and one verdict per private learner: whether it beats its random baseline and what
privacy costs against its twin, or that the difference is within noise.

A preset of the experiments harness: outputs in --out (runs.parquet, summary.csv, runs_index.csv,
metadata.json, regret.png and, for several ε, price_of_privacy.png) replaced all at once at the end; finished
runs are cached in OUT/cache so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import math
import warnings
from typing import Any

import numpy as np

from .. import privacy
from ..datasets import open_bandit_item_blocks, open_bandit_round_probabilities
from ..domains import PartitionMatroid
from ..errors import ExplorationCappedWarning, InvalidInputError
from ..experiments import Experiment, Reference, format_summary
from ..experiments.verdict import format_number, vacuous
from ..learners import PrivateDRSubmodular, PrivateSubmodular, PrivateSubmodularFTRL
from ..regret import APPROXIMATION, greedy_in_hindsight, matroid_greedy_in_hindsight
from ..submodular import ProbabilisticCoverage
from . import _args

__all__ = ["add_parser", "build_experiment", "run", "submodular_learner", "exploration_note"]

DR_FEATURE = 3
"""The categorical item feature whose values are the blocks of the DR-submodular learner's partition matroid."""
DR_CAPACITY = 1
"""Items per block (category) the DR-submodular learner may show."""
ITEMS = 80
"""Items of the Open Bandit sample (the ground set)."""
DOMAINS = ("k-sets", "matroid")
"""The feasible sets of ``--domain``."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline display``."""
    p = sub.add_parser(
        "display",
        help="private choice of k display slots of 80 items on Open Bandit clicks",
        **_args.parser_options(__doc__),
    )
    p.add_argument(
        "--domain",
        choices=DOMAINS,
        default="k-sets",
        help="k-sets: FI-DP, FI with DP-FTRL experts and BanditDP on sets of --k items (default); matroid: the "
        "DR-submodular learner, one item per category",
    )
    p.add_argument("--k", type=_args.positive_int, default=3, help=f"slots per round, 1 to {ITEMS} (default 3)")
    p.add_argument("--horizon", type=_args.positive_int, default=10**6, help="rounds (default 10^6, bootstrapped)")
    p.add_argument(
        "--epsilon", type=_args.epsilons, default=[1.0], help="privacy ε, or a list such as 1,10 (default 1)"
    )
    p.add_argument("--delta", type=_args.delta, default=1e-6, help="privacy δ (default 1e-6; must be > 0)")
    p.add_argument("--seeds", type=_args.positive_int, default=3, help="runs per learner (default 3)")
    _args.add_seed_flags(p, stream="bootstrap", learners="learners")
    p.add_argument("--out", default="dponline-display", help="output directory (default ./dponline-display)")
    _args.add_execution_flags(p)
    p.set_defaults(func=run, parser=p)
    return p


def submodular_learner(**kwargs: Any) -> PrivateSubmodular:
    """``PrivateSubmodular(**kwargs)`` without its :class:`~dponline.errors.ExplorationCappedWarning`: built once
    per run (in worker processes too), it would repeat on standard error what the job's report says once
    (:func:`exploration_note`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExplorationCappedWarning)
        return PrivateSubmodular(**kwargs)


def exploration_note(args: argparse.Namespace) -> str | None:
    """The bandit learner's :class:`~dponline.errors.ExplorationCappedWarning` at these flags (its exploration
    rate capped at 1: every round explores), or ``None``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExplorationCappedWarning)
        PrivateSubmodular(
            ITEMS, args.k, horizon=args.horizon, epsilon=args.epsilon[0], delta=args.delta, feedback="bandit"
        )
    capped = [w for w in caught if issubclass(w.category, ExplorationCappedWarning)]
    return str(capped[0].message) if capped else None


def random_values(P: np.ndarray, k: int, blocks: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
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


def _check(args: argparse.Namespace) -> None:
    if args.delta <= 0:
        raise InvalidInputError("--delta must be > 0: the submodular learners are (ε, δ)-DP (Theorems 5, 7)")
    if args.k > ITEMS:
        raise InvalidInputError(f"--k must be at most {ITEMS} (the items of the Open Bandit sample), got {args.k}")


def build_experiment(args: argparse.Namespace) -> Experiment:
    """The display sweep the flags describe (a bad value raises ``InvalidInputError`` before any computing)."""
    _check(args)
    P = np.asarray(open_bandit_round_probabilities())
    stream = ProbabilisticCoverage(P, horizon=args.horizon, resample="bootstrap", seed=args.stream_seed)
    blocks = [list(b) for b in open_bandit_item_blocks(DR_FEATURE)]
    if args.domain == "k-sets":
        fixed = {"ground_set_size": ITEMS, "k": args.k, "horizon": args.horizon, "delta": args.delta}
        specs = [
            *_args.with_non_private_twin(
                "FI-DP (full information)", "FI, non-private", submodular_learner, {**fixed, "feedback": "full"}
            ),
            *_args.with_non_private_twin(
                "FI, DP-FTRL experts", "FI DP-FTRL, non-private", PrivateSubmodularFTRL, fixed
            ),
            *_args.with_non_private_twin(
                "BanditDP (bandit feedback)", "bandit, non-private", submodular_learner, {**fixed, "feedback": "bandit"}
            ),
        ]
    else:
        domain = PartitionMatroid(blocks, [DR_CAPACITY] * len(blocks), base=False)
        fixed = {"domain": domain, "horizon": args.horizon, "delta": args.delta}
        specs = _args.with_non_private_twin("DR-submodular", "DR-submodular, non-private", PrivateDRSubmodular, fixed)
    return _args.preset_experiment(
        args,
        stream,
        specs,
        checkpoints=200,
        comparators=_comparators(args, stream, P, blocks),
        name="dponline display",
        description=_description(args, len(blocks)),
        baseline="random",
        unit="expected clicks",
    )


def _description(args: argparse.Namespace, n_blocks: int) -> str:
    where = (
        f"k-sets of {args.k} of {ITEMS} items"
        if args.domain == "k-sets"
        else f"a partition matroid: at most {DR_CAPACITY} item per value of item_feature_{DR_FEATURE} ({n_blocks} "
        "categories)"
    )
    return (
        f"Open Bandit click probabilities, {args.horizon} rounds bootstrapped from the logged rounds (stream seed "
        f"{args.stream_seed}); {where}"
    )


def _comparators(args: argparse.Namespace, stream: Any, P: np.ndarray, blocks: list[list[int]]) -> dict[str, Any]:
    """Greedy in hindsight (scaled by 1 − 1/e) and the random baseline, as cumulative losses (−clicks)."""
    if args.domain == "k-sets":
        greedy = greedy_in_hindsight(stream, args.k)
        what = "greedy in hindsight"
    else:
        greedy = matroid_greedy_in_hindsight(stream, blocks, [DR_CAPACITY] * len(blocks))
        what = "greedy on the matroid"
    items = [int(a) for a in greedy.items]
    k_set, per_block = random_values(P, args.k, blocks)
    per_round = (k_set if args.domain == "k-sets" else per_block)[stream.row_indices().astype(np.int64)]
    random_clicks = np.cumsum(per_round)

    def greedy_curve(marks: np.ndarray) -> np.ndarray:
        return -APPROXIMATION * np.asarray(stream.cumulative_at(items, [int(m) for m in marks]))

    def random_curve(marks: np.ndarray) -> np.ndarray:
        return -random_clicks[np.asarray(marks, dtype=np.int64) - 1]

    random_what = "a uniformly random k-set" if args.domain == "k-sets" else "one uniformly random item per category"
    return {
        "greedy": Reference(
            f"(1 − 1/e) × {what} (items {items}: {format_number(greedy.total_value)} expected clicks)",
            -APPROXIMATION * greedy.total_value,
            greedy_curve,
            x=items,
        ),
        "random": Reference(
            f"{random_what} each round (expected clicks, exact)", -float(random_clicks[-1]), random_curve
        ),
    }


def run(args: argparse.Namespace) -> int:
    """Run the job: build, sweep (cached, resumable), write the outputs, print the table and verdicts."""
    if args.delta <= 0:
        args.parser.error("--delta must be > 0: the submodular learners are (ε, δ)-DP (Theorems 5, 7)")
    _check(args)  # before the output folder is touched: one line, exit code 2
    random_name = "a random k-set" if args.domain == "k-sets" else "a random item per category"
    names = {"greedy": "(1-1/e) greedy", "random": random_name}

    multiplicity: list[int] = []

    def build(a: argparse.Namespace) -> Experiment:
        experiment = build_experiment(a)
        multiplicity.append(privacy.row_multiplicity(experiment.stream))
        return experiment

    def report(results: Any) -> str:
        notes = _privacy_lines(results, args, multiplicity[0])
        capped = exploration_note(args) if args.domain == "k-sets" else None
        if capped:
            notes += f"\nnote: {capped}"
        return format_summary(results, names=names, notes=notes, gain="expected clicks")

    return _args.run_preset(args, build, args.out, report=report)


def _privacy_lines(results: Any, args: argparse.Namespace, multiplicity: int) -> str:
    lines = ["privacy (replacing one round's click function f_t):"]
    for c in results.configurations:
        if not c.privacy:
            continue
        g = c.privacy
        lines.append(
            f"  {c.label}: (ε={g['epsilon']:g}, δ={g['delta']:.3g}) — {g['source']}" + vacuous(g["epsilon"], g["delta"])
        )
        row = c.privacy_per_source_row
        if isinstance(row, dict) and "epsilon" in row:
            lines.append(
                f"    per logged round (used in up to {multiplicity} rounds): "
                f"(ε={row['epsilon']:.4g}, δ={row['delta']:.3g})" + vacuous(row["epsilon"], row["delta"])
            )
    lines.append(f"  randomness: {_args.randomness_text(args.seed)}")
    lines.append("  not private: clicks, regrets and the comparators are evaluations computed from the data")
    return "\n".join(lines)
