"""``dponline local``: user-specified local DP on a real stream, the two scenarios of van der Hoeven (2019, §4).

Streams (--data): Phishing (default) and Shuttle (logistic loss, labels ±1, features in [−1, 1]) and the Trump
approval polls (squared loss: predict FiveThirtyEight's average from the five pollsters, both divided by 100).

* Scenario (a), ℓ2 randomiser ρ(z) ∝ exp(−ε‖z‖₂/(2G)): most providers add no noise and ⌈ln T⌉ of them (chosen
  at random per seed) use the budget ε ("few heavy"), against every provider using it ("all heavy") —
  Algorithm 2 (UnconstrainedLearner), with online gradient descent (untuned step 1/√T, and the best of a grid of
  steps chosen in hindsight) as baselines.
* Scenario (b), local Laplace randomiser: only the first two coordinates are sensitive (τ = ε/2 each, the others
  released exactly: "sparse τ"), against τ = ε/2 on every coordinate ("dense τ") — Algorithm 3
  (CoordinatewiseLearner) and AdaGrad on [−1, 1]^d.

ε is each privacy-conscious provider's budget (--epsilon, a list sweeps it). Every learner also runs on the
exact stream (no provider adds noise): its non-private twin. The do-nothing baseline is predicting 0 every
round. Regret is against the best fixed predictor in hindsight (L-BFGS on the convex total loss; + = worse), in
nats for the logistic loss and in squared-loss units for the polls, mean ± half-width of the 95% t-interval
over seeds. Each private learner ends with a verdict: whether it beats predicting 0 and what the providers'
noise costs against its twin, or that the difference is within noise.

A preset of the experiments harness: outputs in --out (runs.parquet, summary.csv, runs_index.csv,
metadata.json, regret.png and, for several ε, price_of_privacy.png) replaced all at once at the end; finished
runs are cached in OUT/cache so an interrupted run resumes. Run k of every learner keys the simulated
providers' noise with the same seed (common random numbers; OS entropy, never recorded, without --seed; a real
provider keys its own noise, secretly).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
from scipy import optimize, special

from .. import datasets, regret
from ..errors import InvalidInputError
from ..experiments import Experiment, LearnerSpec, format_summary
from ..experiments.verdict import vacuous
from ..local_dp import (
    AdaGrad,
    CoordinatewiseLearner,
    LocalLaplaceRandomizer,
    LocalStream,
    OnlineGradientDescent,
    UnconstrainedLearner,
)
from . import _args

__all__ = ["add_parser", "build_experiment", "best_fixed", "ProviderStream", "SimulatedProviders"]

DATA = ("phishing", "shuttle", "trump")
"""The streams of ``--data``."""
SHUTTLE_ROUNDS = 20_000
"""Rounds of Shuttle used by default (its 49,097 rows take longer and change no conclusion)."""
LEARNERS = (
    "UnconstrainedLearner",
    "OGD untuned 1/sqrt(T)",
    "OGD tuned in hindsight",
    "CoordinatewiseLearner",
    "AdaGrad D=1",
)
"""The learners: scenario (a)'s three, then scenario (b)'s two."""
LAYOUTS = {"few heavy": "l2", "all heavy": "l2", "sparse tau": "laplace", "dense tau": "laplace"}
"""The providers' budget layouts of the private runs and the randomiser each uses."""
OGD_RATES = 7
"""Steps of the hindsight-tuned OGD: a geometric grid from 1e-3 to 1, plus 1/√T."""


def best_fixed(X: np.ndarray, y: np.ndarray, loss: str) -> tuple[np.ndarray, float]:
    """The best fixed predictor ``u`` and its total loss (convex: L-BFGS to a tight tolerance)."""

    def f(u: np.ndarray) -> tuple[float, np.ndarray]:
        p = X @ u
        if loss == "logistic":
            m = -y * p
            return float(np.logaddexp(0, m).sum()), -(X * (y * special.expit(m))[:, None]).sum(axis=0)
        r = p - y
        return float(0.5 * r @ r), X.T @ r

    res = optimize.minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10})
    return np.asarray(res.x, dtype=np.float64), float(res.fun)


class ProviderStream:
    """The providers' exact data (features, labels, loss) as the stream of an :class:`Experiment`: the harness
    evaluates a fixed predictor ``u`` on it (``cumulative_at``) and :class:`SimulatedProviders` privatises each
    provider's gradient with its layout's budgets.

    Args:
        features: ``(T, d)`` float64; labels: ``(T,)`` float64; loss: ``"logistic"`` or ``"squared"``.
    """

    order = "sequential"

    def __init__(self, features: np.ndarray, labels: np.ndarray, loss: str) -> None:
        self.exact = LocalStream(features, labels, loss=loss)  # type: ignore[arg-type]  # validated there
        self.kind = f"local_{loss}"
        self.loss = loss

    @property
    def horizon(self) -> int:
        return self.exact.horizon

    @property
    def dim(self) -> int:
        return self.exact.dim

    @property
    def data(self) -> np.ndarray:
        """Features and labels side by side, ``(T, d + 1)`` (what identifies the stream in the cache)."""
        return np.hstack([self.exact.features, self.exact.labels[:, None]])

    def cumulative_at(self, u: Any, checkpoints: list[int]) -> np.ndarray:
        """``Σ_{t<n} ℓ_t(u)`` of a fixed predictor ``u`` at each checkpoint ``n``."""
        return self.exact.cumulative_loss(u, checkpoints)


def _seed_sequence(seed: Any) -> np.random.SeedSequence:
    return seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)


class SimulatedProviders:
    """One local-DP learner of van der Hoeven (2019) facing providers who privatise their own gradients with the
    budgets of ``layout``: the "learner" of one run of ``dponline local`` (it has ``run`` and ``privacy``).

    Args:
        learner: one of :data:`LEARNERS`.
        layout: one of :data:`LAYOUTS` — which providers spend ``epsilon`` and on which coordinates.
        horizon, dim: the stream's shape (``ProviderStream.horizon``, ``.dim``).
        epsilon: the budget of a privacy-conscious provider (ℓ2 ε, or Σ τ_j over its two sensitive coordinates
            for ``"sparse tau"``), or ``None``: every provider releases exactly (the non-private twin).
        seed: keys the providers' noise (and, for ``"few heavy"``, which providers are heavy).

    Raises:
        InvalidInputError: an unknown learner or layout, ``epsilon <= 0``, a layout that does not fit the learner.
    """

    def __init__(
        self, *, learner: str, layout: str, horizon: int, dim: int, epsilon: float | None, seed: Any = None
    ) -> None:
        if learner not in LEARNERS:
            raise InvalidInputError(f"learner must be one of {', '.join(LEARNERS)}, got {learner!r}")
        if layout not in LAYOUTS:
            raise InvalidInputError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        self.mechanism = LAYOUTS[layout]
        if (self.mechanism == "l2") != (LEARNERS.index(learner) < 3):
            raise InvalidInputError(f"layout {layout!r} is not a scenario of {learner}")
        if epsilon is not None and not (math.isfinite(epsilon) and epsilon > 0):
            raise InvalidInputError(f"epsilon must be a finite number > 0 or None, got {epsilon!r}")
        self.learner, self.layout, self.horizon, self.dim, self.epsilon = learner, layout, horizon, dim, epsilon
        ss = _seed_sequence(seed)
        self._seed = ss
        # ‖x‖₂ ≤ √d and |ℓ'| ≤ 1 (logistic); squared-loss gradients are clipped to it: scenario (a)'s bound G.
        self.G = math.sqrt(dim) if self.mechanism == "l2" else 1.0
        if self.mechanism == "l2":
            budgets = np.full(horizon, np.inf)
            if epsilon is not None:
                if layout == "few heavy":
                    rng = np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, 1)))
                    budgets[rng.choice(horizon, size=math.ceil(math.log(horizon)), replace=False)] = epsilon
                else:
                    budgets[:] = epsilon
            heavy: Any = epsilon if epsilon is not None else np.inf
        else:
            budgets = np.full(dim, np.inf)
            if epsilon is not None:
                budgets[: 2 if layout == "sparse tau" else dim] = epsilon / 2
            heavy = budgets
        self.budgets = budgets
        randomiser = LocalLaplaceRandomizer(dim, bound=self.G, mechanism=self.mechanism)  # type: ignore[arg-type]
        self.privacy = randomiser.privacy(heavy)
        finite = np.isfinite(budgets)
        self.params = {
            "mechanism": self.mechanism,
            "G": self.G,
            "private_providers": int(finite.sum()) if self.mechanism == "l2" else (horizon if finite.any() else 0),
            "providers": horizon,
            "private_coordinates": dim if self.mechanism == "l2" else int(finite.sum()),
        }

    def _learners(self) -> list[Any]:
        d, T, seed = self.dim, self.horizon, self._seed
        if self.learner == "UnconstrainedLearner":
            return [UnconstrainedLearner(d, self.G, seed=seed)]
        if self.learner == "OGD untuned 1/sqrt(T)":
            return [OnlineGradientDescent(d, 1 / math.sqrt(T), G=self.G, seed=seed)]
        if self.learner == "OGD tuned in hindsight":
            rates = [*np.geomspace(1e-3, 1.0, OGD_RATES), 1 / math.sqrt(T)]
            return [OnlineGradientDescent(d, float(lr), G=self.G, seed=seed) for lr in rates]
        if self.learner == "CoordinatewiseLearner":
            return [CoordinatewiseLearner(d, 1.0, seed=seed)]
        return [AdaGrad(d, 1.0, seed=seed)]

    def run(self, stream: ProviderStream, *, checkpoints: int = 100) -> Any:
        """Play the whole stream, each provider privatising its clipped gradient with its budgets; the tuned OGD
        returns the run of its step with the smallest total loss (chosen in hindsight: a reference, not a
        learner one could deploy)."""
        exact = stream.exact
        providers = LocalStream(
            exact.features,
            exact.labels,
            loss=stream.loss,  # type: ignore[arg-type]
            budgets=self.budgets,
            mechanism=self.mechanism,  # type: ignore[arg-type]
        )
        results = [learner.run(providers, checkpoints=checkpoints) for learner in self._learners()]
        return min(results, key=lambda r: r.total_loss)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline local``."""
    p = sub.add_parser(
        "local",
        help="user-specified local DP on real streams (van der Hoeven 2019, scenarios a, b)",
        **_args.parser_options(__doc__),
    )
    p.add_argument("--data", choices=DATA, default="phishing", help="the providers' stream (default phishing)")
    p.add_argument(
        "--epsilon",
        "--heavy-eps",
        dest="epsilon",
        type=_args.epsilons,
        default=[1.0],
        help="budget of a privacy-conscious provider: ε in scenario (a), Σ τ_j over its two sensitive "
        "coordinates in scenario (b); a list such as 0.1,1,10 sweeps it (default 1)",
    )
    p.add_argument(
        "--horizon",
        "--rounds",
        dest="horizon",
        type=_args.positive_int,
        default=None,
        help=f"rounds: the first T providers (default: the whole stream; {SHUTTLE_ROUNDS} for shuttle)",
    )
    p.add_argument("--seeds", type=_args.positive_int, default=3, help="runs per learner (default 3)")
    p.add_argument(
        "--seed",
        type=_args.nonnegative_int,
        default=None,
        help="root seed of the simulated providers' noise (default: OS entropy, not recorded; a seeded run is "
        "private only while its seed is secret)",
    )
    p.add_argument("--out", default="dponline-local", help="output directory (default ./dponline-local)")
    _args.add_execution_flags(p)
    p.set_defaults(func=run, parser=p)
    return p


def _data(name: str, horizon: int | None) -> tuple[np.ndarray, np.ndarray, str]:
    if name == "trump":
        trump = datasets.load_trump_approval()
        X, y, loss = trump.polls / 100.0, trump.average / 100.0, "squared"
    else:
        data = datasets.load_phishing() if name == "phishing" else datasets.load_shuttle()
        X, y, loss = data.features, data.labels, "logistic"
        horizon = horizon or (SHUTTLE_ROUNDS if name == "shuttle" else None)
    if horizon is not None and horizon > len(y):
        raise InvalidInputError(f"--horizon must be at most {len(y)} for --data {name} (its rows), got {horizon}")
    return np.asarray(X[:horizon]), np.asarray(y[:horizon]), loss


def build_experiment(args: argparse.Namespace) -> Experiment:
    """The local-DP sweep the flags describe (a bad value raises ``InvalidInputError``)."""
    X, y, loss = _data(args.data, args.horizon)
    stream = ProviderStream(X, y, loss)
    T, d = stream.horizon, stream.dim
    specs = []
    for learner in LEARNERS:
        layouts = [k for k, m in LAYOUTS.items() if (m == "l2") == (LEARNERS.index(learner) < 3)]
        fixed = {"learner": learner, "horizon": T, "dim": d}
        twin = f"{learner}, no noise"
        specs += [
            LearnerSpec(f"{learner}, {layout}", SimulatedProviders, {**fixed, "layout": layout}, twin=twin)
            for layout in layouts
        ]
        specs.append(LearnerSpec(twin, SimulatedProviders, {**fixed, "layout": layouts[0], "epsilon": None}))
    u, total = best_fixed(X, y, loss)
    zero = np.zeros(d)
    comparators = {
        "best": regret.Comparator(x=u, total_loss=total, gap=0.0, method="best fixed predictor in hindsight (L-BFGS)"),
        "predict 0": regret.Comparator(
            x=zero,
            total_loss=float(stream.cumulative_at(zero, [T])[0]),
            gap=0.0,
            method="predicting 0 every round (no learning)",
        ),
    }
    unit = "nats" if loss == "logistic" else "squared-loss units"
    return _args.preset_experiment(
        args,
        stream,
        specs,
        checkpoints=min(200, T),
        comparators=comparators,
        name="dponline local",
        description=f"user-specified local DP (van der Hoeven 2019) on {args.data}: the first {T} providers in "
        f"order ({loss} loss, {d} features)",
        baseline="predict 0",
        unit=unit,
    )


def run(args: argparse.Namespace) -> int:
    """Run the job: build, sweep (cached, resumable), write the outputs, print the table and verdicts."""
    names = {"best": "best fixed", "predict 0": "predicting 0"}
    return _args.run_preset(
        args, build_experiment, args.out, report=lambda r: format_summary(r, names=names, notes=_privacy_lines(r, args))
    )


def _privacy_lines(results: Any, args: argparse.Namespace) -> str:
    lines = ["privacy (local: each provider's own release of its gradient, clipped to G):"]
    for c in results.configurations:
        if c.privacy:
            g, p = c.privacy, c.learner_params or {}
            who = f"{p.get('private_providers')}/{p.get('providers')} providers"
            if p.get("mechanism") == "laplace" and p.get("private_coordinates") != _dim(c):
                who += f", {p.get('private_coordinates')}/{_dim(c)} coordinates (the others released exactly)"
            source = g["source"].split(";")[0]
            lines.append(
                f"  {c.label}: (ε={g['epsilon']:g}, δ={g['delta']:g}) per provider for {who} — {source}"
                + vacuous(g["epsilon"], g["delta"])
            )
    if args.data == "shuttle":
        lines.append(
            "  Shuttle's features are divided by an empirical scale computed from the whole file: a data-dependent "
            "constant that is not private"
        )
    lines.append(f"  randomness: {_args.randomness_text(args.seed)}")
    lines.append("  not private: losses and regrets are evaluations computed from the data")
    lines.append(
        "  a parameter-free learner scoring exactly 'predict 0' is expected while the providers' noise hides the "
        "summed gradient signal: it moves only once that signal exceeds a few noise standard deviations (Theorem 1; "
        "see the learners' docstrings)"
    )
    return "\n".join(lines)


def _dim(config: Any) -> int:
    """The stream's dimension recorded in a configuration's arguments."""
    return int(config.kwargs["dim"])
