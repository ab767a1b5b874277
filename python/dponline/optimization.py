"""Stand-alone Frank-Wolfe and sphere sampling (the primitives the learners use internally)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _core
from ._seed import SeedLike

__all__ = ["FrankWolfeResult", "frank_wolfe", "sample_sphere"]


@dataclass(frozen=True)
class FrankWolfeResult:
    """Output of :func:`frank_wolfe`.

    Attributes:
        x: the iterate, shape ``(dim,)``; ``x = weights @ vertices``.
        gap: Frank-Wolfe gap of the last iteration, an upper bound on ``q(x) − q*`` before that step.
        vertices: active set, shape ``(k, dim)``; each row is an LMO output.
        weights: convex weights, shape ``(k,)``.
    """

    x: np.ndarray
    gap: float
    vertices: np.ndarray
    weights: np.ndarray

    def sample_vertex(self, rng: np.random.Generator) -> np.ndarray:
        """A vertex drawn with probability equal to its weight (so its expectation is ``x``)."""
        return self.vertices[rng.choice(len(self.weights), p=self.weights / self.weights.sum())]


def frank_wolfe(domain: _core.Domain, v: np.ndarray, iterations: int) -> FrankWolfeResult:
    """Frank-Wolfe with exact line search for ``min_{x ∈ domain} ½‖x‖² − ⟨v, x⟩`` (the projection of ``v``).

    Starts at the vertex ``lmo(−v)`` and makes one LMO call per iteration. After ``k`` iterations
    ``‖x − x*‖ ≤ sqrt(20)·D/sqrt(k)`` (Ene-Nguyen-Vladu 2021, Lemma C.4; ``D`` the diameter). This is the
    ``NoisyMap`` step of PrivateBandit (their Algorithm 1, line 14).

    Args:
        domain: any :mod:`dponline.domains` domain.
        v: target, shape ``(domain.dim,)``, finite.
        iterations: number of LMO calls (>= 0).

    The loop runs natively in blocks and stops early when the gap reaches 0 (the iterate is then a fixed point);
    Ctrl-C interrupts it between blocks. ``gap`` is ``inf`` when ``iterations == 0`` (no step, no certificate).

    Raises:
        InvalidInputError: wrong shape of ``v``. NonFiniteError: NaN/inf in ``v``.
    """
    x, gap, vertices, weights = _core.frank_wolfe(domain, v, iterations)
    return FrankWolfeResult(x=x, gap=gap, vertices=vertices, weights=weights)


def sample_sphere(
    dim: int, size: int, *, ball: bool = False, domain: _core.Domain | None = None, seed: SeedLike = None
) -> np.ndarray:
    """``size`` uniform unit vectors of ``R^dim``, shape ``(size, dim)``.

    ``ball=True`` gives uniform points of the unit ball; ``domain`` restricts the directions to the linear
    subspace parallel to the domain's affine hull (e.g. ``Σu = 0`` for the simplex). Method: normalised
    (projected) isotropic Gaussians.

    Raises:
        InvalidInputError: bad ``dim``/``size``/``ball``/``seed``, a domain of another dimension, or a domain that
            is a single point (it has no directions).
        MemoryError: ``size × dim`` (or one row of ``dim``) floats cannot be allocated.
    """
    return _core.sample_sphere(dim, size, ball=ball, domain=domain, seed=seed)
