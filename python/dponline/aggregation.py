"""Private continual prefix sums: :class:`TreeAggregator` (the binary mechanism / tree-based aggregation)."""

from __future__ import annotations

from typing import Any

from . import _core, _validate, privacy
from ._seed import SeedLike
from .errors import InvalidInputError
from .privacy import PrivacyGuarantee

__all__ = ["TreeAggregator"]


class TreeAggregator(_core.TreeAggregator):
    """Private prefix sums of a stream of vectors, released after every push (continual observation).

    Source: the binary mechanism of Dwork, Naor, Pitassi & Rothblum (2010) and Chan, Shi & Song (2011), in
    the form of Ene, Nguyen & Vladu (2021), Appendix A, Algorithms 3-5 (``TreeBasedAgg``), with the padding
    of Agarwal & Singh (2017, Algorithm 2): with ``padded=True`` every release (including :meth:`initial`)
    carries exactly ``ceil(log2 horizon)`` i.i.d. noise draws per coordinate; with ``padded=False`` the release
    after push ``t`` carries ``popcount(t)`` draws (the plain binary mechanism).

    ``TreeAggregator(dim, horizon, *, scale, noise="laplace", padded=True, seed=None, secure=False)``

    Args:
        dim: vector dimension (>= 1).
        horizon: maximum number of pushes ``T`` (>= 1).
        scale: Laplace scale ``b`` or Gaussian ``sigma`` of each tree node's noise, per coordinate; finite,
            ``>= 0`` and ``<= 1e150`` (0 disables noise, for testing). Use :meth:`calibrated` to set it from
            ``epsilon``.
        noise: ``"laplace"`` or ``"gaussian"``.
        padded: Agarwal-Singh padding (identically distributed noise in every release).
        seed: ``None``, an int, a ``numpy.random.SeedSequence`` or ``numpy.random.Generator``. Same seed and
            inputs give bit-identical releases on every platform.
        secure: draw noise from ChaCha20 keyed by the operating system (not reproducible; ``seed`` must be
            ``None``). Floating-point Laplace/Gaussian samplers remain subject to Mironov (2012).

    Cost: ``push`` is O(dim) amortised (one vector of node noise, plus one vector of padding); memory is
    O(dim · log horizon) and constant after construction. ``push_many`` runs the whole block natively with
    the GIL released.

    Raises:
        InvalidInputError: bad ``dim``/``horizon``/``scale``/``noise``/``seed``; ``push`` of a wrong shape.
        NonFiniteError: NaN or inf in a pushed row (the aggregator is left unchanged).
        HorizonExhaustedError: pushing more than ``horizon`` rows (the aggregator is left unchanged).
        InvalidInputError: a row that would take a running sum beyond ``±1e306`` (unchanged as well).
        MemoryError: ``dim`` and ``horizon`` whose buffers (``dim · (floor(log2 horizon) + 3)`` floats) cannot be
            allocated.
        StateError: the tree is being used by another thread (e.g. during ``push_many``).

    Example:
        >>> import numpy as np, dponline
        >>> tree = dponline.TreeAggregator.calibrated(3, 1000, epsilon=1.0, sensitivity=2.0, seed=0)
        >>> tree.privacy.epsilon
        1.0
        >>> tree.push(np.ones(3)).shape
        (3,)

    Pickling a tree mid-stream and restoring it continues bit-identically. The pickled state contains
    unreleased exact sums and noise: keep it as confidential as the raw data.
    """

    @classmethod
    def calibrated(
        cls,
        dim: int,
        horizon: int,
        *,
        epsilon: float,
        sensitivity: float,
        delta: float = 0.0,
        noise: str | None = None,
        calibration: str = "paper",
        padded: bool = True,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> TreeAggregator:
        """A tree whose whole release sequence is ``(epsilon, delta)``-DP for rows differing by ``sensitivity``.

        Args:
            epsilon: target ε > 0.
            sensitivity: the largest change of one row between neighbouring streams, ``max ‖x − x'‖`` — in
                L1 for Laplace noise, in L2 for Gaussian noise. (Rows with ``‖x‖ <= Y`` under replacement:
                pass ``2Y``.)
            delta: target δ in [0, 1); must be > 0 for Gaussian noise.
            noise: ``"laplace"`` or ``"gaussian"``; default Laplace when ``delta == 0``, else Gaussian.
            calibration: ``"paper"`` (Ene-Nguyen-Vladu Theorem 2.3 / Agarwal-Singh Lemma 3.3, with the exact
                count ``floor(log2 T) + 1`` of released nodes a row enters; for Gaussian never below the
                exact requirement), ``"analytic"`` (Gaussian only: the release is one Gaussian mechanism,
                Balle-Wang 2018) or ``"zcdp"`` (Gaussian only: Bun-Steinke 2016 with the
                Canonne-Kamath-Steinke conversion).
            padded, seed, secure: as the constructor.

        Returns:
            A :class:`TreeAggregator` with :attr:`privacy` set.

        Raises:
            InvalidInputError: ε ≤ 0, δ ∉ [0, 1), δ = 0 with Gaussian noise, a non-positive sensitivity, or an
                unknown ``noise``/``calibration``.
        """
        delta = _validate.real("delta", delta, low=0.0, high=1.0, high_open=True)
        if noise is None:
            noise = "laplace" if delta == 0 else "gaussian"
        if noise == "laplace":
            if calibration != "paper":
                raise InvalidInputError(
                    f"calibration must be 'paper' for Laplace noise (it is already exact), got {calibration!r}"
                )
            scale = privacy.tree_laplace_scale(epsilon, sensitivity, horizon)
            guarantee = privacy.tree_privacy("laplace", scale, sensitivity, horizon)
        elif noise == "gaussian":
            scale = privacy.tree_gaussian_sigma(epsilon, delta, sensitivity, horizon, calibration=calibration)
            guarantee = PrivacyGuarantee(
                epsilon=float(epsilon),
                delta=float(delta),
                source=f"Ene-Nguyen-Vladu Theorem 2.3, calibration={calibration!r}",
            )
        else:
            raise InvalidInputError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
        tree = cls(dim, horizon, scale=scale, noise=noise, padded=padded, seed=seed, secure=secure)
        tree._privacy = guarantee
        return tree

    @property
    def privacy(self) -> PrivacyGuarantee | None:
        """The (ε, δ) guarantee of the release sequence, or ``None`` if built with a raw ``scale``."""
        return getattr(self, "_privacy", None)

    def __getstate__(self) -> tuple[bytes, dict[str, Any]]:
        return (super().__getstate__(), dict(self.__dict__))

    def __setstate__(self, state: tuple[bytes, dict[str, Any]]) -> None:
        core_state, attributes = state
        super().__setstate__(core_state)
        self.__dict__.update(attributes)
