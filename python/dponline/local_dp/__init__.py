"""User-specified local differential privacy for unconstrained online learning (van der Hoeven 2019).

Source: D. van der Hoeven, "User-Specified Local Differential Privacy in Unconstrained Adaptive Online
Learning", NeurIPS 2019 (``shared/papers/001_b4b7b13171319a52.txt``).

In the *local* model every data provider privatises its own subgradient before the learner sees it:
round ``t``'s provider releases ``g̃_t = g_t + ξ_t`` with symmetric zero-mean noise of its own choosing (its
budget is never revealed), and the learner adapts to whatever noise arrives.

* :class:`LocalLaplaceRandomizer` — the local Laplace randomiser of §2.1 (per-coordinate budgets, Lemma 1)
  and the ℓ2 variant ``ρ(z) ∝ exp(−ε‖z‖₂/2)`` (Song et al. 2015, Theorem 1).
* :class:`PotentialLearner1D` — Algorithm 1, the one-dimensional parameter-free potential learner
  (eqs. 5-7, Theorem 1).
* :class:`LocalStream` — providers (features, labels, loss, per-round budgets) for native runs.
* :class:`CoordinatewiseLearner` (Algorithm 3, Theorem 2), :class:`UnconstrainedLearner` (Algorithm 2,
  Lemma 6), and the baselines :class:`OnlineGradientDescent` and :class:`AdaGrad`, all with ``ask``/``tell``
  and a native ``run`` in which each provider's subgradient is computed, clipped to ``G`` and privatised.

The learners add no noise: privacy is the providers' (local model), see :meth:`LocalStream.privacy`; each
learner's :attr:`~LocalLearner.privacy` is therefore ``None``. In a simulation the learner's ``seed`` keys the
providers' noise; a seeded simulation is private only while its seed is secret.
"""

from __future__ import annotations

from .learners import AdaGrad, CoordinatewiseLearner, LocalLearner, OnlineGradientDescent, UnconstrainedLearner
from .potential import ACTION_LIMIT, PotentialLearner1D, theorem1_bound
from .randomizer import NEIGHBOURING_LOCAL_COORDINATE, NEIGHBOURING_LOCAL_L2, UNIT_LOCAL, LocalLaplaceRandomizer
from .stream import LocalStream

__all__ = [
    "LocalLaplaceRandomizer",
    "PotentialLearner1D",
    "LocalStream",
    "LocalLearner",
    "CoordinatewiseLearner",
    "UnconstrainedLearner",
    "OnlineGradientDescent",
    "AdaGrad",
    "theorem1_bound",
    "NEIGHBOURING_LOCAL_COORDINATE",
    "NEIGHBOURING_LOCAL_L2",
    "UNIT_LOCAL",
    "ACTION_LIMIT",
]
