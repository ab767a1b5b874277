"""Private continual prefix sums (continual counting).

* :class:`TreeAggregator` — the binary mechanism (tree-based aggregation), plain or Agarwal-Singh padded;
* :class:`HonakerTree` — the binary tree with the online Honaker (BLUE) readout (≈1.8× less variance);
* :class:`KaryTree` — ``k``-ary trees with plain or Honaker readout (``k ≈ 16`` for Laplace noise);
* :class:`BLT` — buffered-linear-Toeplitz matrix factorisation (Gaussian noise; ≈7× lower mean and ≈14× lower
  worst-step squared error than the binary mechanism at T = 2²⁰ with 4-6 buffers).

Every mechanism is linear: its releases are a fixed post-processing of ``A x + z`` for an encoder ``A`` and
i.i.d. noise ``z``, so under single participation (one round's input replaced) it is exactly a Laplace /
Gaussian mechanism with sensitivity ``Δ · sensitivity_l1`` / ``Δ · sensitivity_l2`` (the encoder's largest
column norm), and each release ``t`` has an exact per-coordinate noise variance ``variance(t)``.
"""

from __future__ import annotations

import math
from typing import Any

from . import _calibrate, _core, _state, _validate, privacy
from ._options import (
    CALIBRATIONS,
    LINEAR_CALIBRATIONS,
    Calibration,
    LinearCalibration,
    Noise,
    Sampler,
)
from ._seed import SeedLike
from ._state import recording_calibration
from .errors import InvalidInputError, StateError
from .privacy import PrivacyGuarantee
from .privacy.discrete import exact_noise

__all__ = ["TreeAggregator", "HonakerTree", "KaryTree", "BLT", "exact_noise"]

_TREE_SOURCE = (
    "binary mechanism (Ene-Nguyen-Vladu 2021 Theorem 2.3; Agarwal-Singh 2017 Lemma 3.3), floor(log2 T)+1 nodes per row"
)


class TreeAggregator(_state.MechanismState, _core.TreeAggregator):
    """Private prefix sums of a stream of vectors, released after every push (continual observation).

    Source: the binary mechanism of Dwork, Naor, Pitassi & Rothblum (2010) and Chan, Shi & Song (2011), in
    the form of Ene, Nguyen & Vladu (2021), Appendix A, Algorithms 3-5 (``TreeBasedAgg``), with the padding
    of Agarwal & Singh (2017, Algorithm 2): with ``padded=True`` every release (including :meth:`initial`)
    carries exactly ``ceil(log2 horizon)`` i.i.d. noise draws per coordinate; with ``padded=False`` the release
    after push ``t`` carries ``popcount(t)`` draws (the plain binary mechanism). The padding draws are
    persistent nodes, one per clear bit of ``t`` below ``ceil(log2 horizon)``, each drawn when the bit clears
    and kept while it stays clear (like the data nodes of the set bits; a retiring padding node is handed down
    to the position below when that one needs a node): every release has exactly the marginal
    of Algorithm 2, two releases share the nodes they have in common, and the padding is independent of the
    data (post-processing: privacy unchanged). Details in the core's ``aggregation/tree.rs``.

    ``TreeAggregator(dim, horizon, *, scale, noise="laplace", padded=True, seed=None, secure=False,
    sampler="exact")``

    **Exact sampling** (``sampler="exact"``, the default): every row is rounded to the power-of-two grid
    ``γ = 2**(floor(log2 scale) − 30)`` (:attr:`grid`), each node holds the integer sum of its rounded rows plus an
    exact discrete Laplace / discrete Gaussian draw (Canonne, Kamath & Steinke 2020) of scale ``scale`` rounded up
    to whole grid units (:attr:`scale` reports it: at most ``2**-30`` relatively larger), and every release is the
    integer sum of its cover's nodes times ``γ`` — exact in float64, so the floating-point attack of Mironov
    (2012) finds nothing. *How the rounding enters the sensitivity*: rows ``x, x'`` with ``‖x − x'‖₁ <= Δ₁``
    round to integer rows with ``‖n − n'‖₁ <= ⌈Δ₁/γ⌉ + dim`` (``‖·‖₂ <= Δ₂/γ + sqrt(dim)``), since each
    coordinate's rounding moves it by at most 1/2 (the grid Lemma of the core's ``noise::grid``); a row enters
    ``floor(log2 horizon) + 1`` nodes, so :meth:`calibrated` solves ``ε = (floor(log2 T) + 1)·(⌈Δ₁/γ⌉ + dim)/t``
    for the integer scale ``t`` (:func:`dponline.privacy.exact_linear_noise`). ``sampler="floating-point"`` is
    the fast float path, reproducible with earlier versions for a given seed; its guarantee holds for the
    real-valued mechanism only. With ``scale=0`` there is no noise and no grid (``sampler`` reads
    ``"floating-point"``).

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
        secure: ``True`` only asserts the default: without a seed the noise comes from ChaCha20 keyed by the
            operating system, never serialised and re-keyed on copy, unpickling and in a forked child (``seed``
            must then be ``None``).
        sampler: ``"exact"`` (default) or ``"floating-point"``.

    Cost: ``push`` is O(dim) amortised (1.5 vectors of fresh draws on average: the new data node and the padding
    nodes the push opens); memory is
    O(dim · log horizon) and constant after construction. ``push_many`` runs the whole block natively with
    the GIL released.

    Raises:
        InvalidInputError: bad ``dim``/``horizon``/``scale``/``noise``/``seed``/``sampler`` (with the exact
            sampler a scale > 0 must be in ``[1e-150, 1e150]``); ``push`` of a wrong shape.
        NonFiniteError: NaN or inf in a pushed row (the aggregator is left unchanged).
        HorizonExhaustedError: pushing more than ``horizon`` rows (the aggregator is left unchanged).
        InvalidInputError: a row that would take a running sum beyond ``±1e306`` (floating-point path) or a value
            beyond ``2**62`` grid units (exact path); unchanged as well.
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
    @recording_calibration
    def calibrated(
        cls,
        dim: int,
        horizon: int,
        *,
        epsilon: float,
        sensitivity: float,
        delta: float = 0.0,
        noise: Noise | None = None,
        calibration: Calibration | None = None,
        padded: bool = True,
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
    ) -> TreeAggregator:
        """A tree whose whole release sequence is ``(epsilon, delta)``-DP for rows differing by ``sensitivity``.

        Args:
            epsilon: target ε > 0.
            sensitivity: the largest change of one row between neighbouring streams, ``max ‖x − x'‖`` — in
                L1 for Laplace noise, in L2 for Gaussian noise. (Rows with ``‖x‖ <= Y`` under replacement:
                pass ``2Y``.)
            delta: target δ in [0, 1); must be > 0 for Gaussian noise.
            noise: ``"laplace"`` or ``"gaussian"``; default Laplace when ``delta == 0``, else Gaussian.
            calibration: ``None`` (default) — the tightest proved calibration for the sampler: with
                ``sampler="exact"`` the discrete mechanism's (:func:`exact_noise`: discrete Laplace exact ε,
                discrete Gaussian through zCDP and Canonne-Kamath-Steinke), with ``"floating-point"``
                ``"paper"`` (as before, so seeded float runs reproduce). ``"paper"`` (Ene-Nguyen-Vladu Theorem
                2.3 / Agarwal-Singh Lemma 3.3, with the exact count ``floor(log2 T) + 1`` of released nodes a row
                enters; for Gaussian never below the exact requirement; with the exact sampler never below the
                discrete requirement either), ``"analytic"`` (floating-point: the exact requirement of the
                real-valued mechanism, Balle-Wang 2018 for Gaussian; for Laplace identical to ``"paper"``;
                refused for the discrete Gaussian, which it does not bound) or ``"zcdp"`` (Gaussian only:
                Bun-Steinke 2016 with the Canonne-Kamath-Steinke conversion; with the exact sampler, the
                default).
            padded, seed, secure, sampler: as the constructor.

        Returns:
            A :class:`TreeAggregator` with :attr:`privacy` set.

        Raises:
            InvalidInputError: ε ≤ 0, δ ∉ [0, 1), δ = 0 with Gaussian noise, a non-positive sensitivity, or an
                unknown ``noise``/``calibration``.
        """
        calibration, sampler, delta, noise = _calibrate.calibration_options(
            calibration, CALIBRATIONS, sampler, delta, noise
        )
        if sampler == "exact":
            levels = privacy.levels_touched(horizon)
            paper = 0.0
            if calibration == "paper":
                paper = (
                    privacy.tree_laplace_scale(epsilon, sensitivity, horizon)
                    if noise == "laplace"
                    else privacy.tree_gaussian_sigma(epsilon, delta, sensitivity, horizon, calibration="paper")
                )
            fit = exact_noise(
                noise,
                calibration,
                epsilon=epsilon,
                delta=delta,
                sensitivity=sensitivity,
                column_l1=float(levels),
                column_l2=math.sqrt(levels),
                dim=_validate.integer("dim", dim, low=1),
                at_least=paper,
            )
            tree = cls(dim, horizon, scale=fit.scale, noise=noise, padded=padded, seed=seed, secure=secure)
            tree._privacy = _calibrate.exact_guarantee(fit, _TREE_SOURCE, calibration, seed, secure)
            return tree
        if calibration is None:
            calibration = "paper"
        if noise == "laplace":
            if calibration == "zcdp":
                raise InvalidInputError("calibration='zcdp' needs Gaussian noise (delta > 0)")
            # For Laplace noise the paper's calibration is already exact: "paper" and "analytic" coincide.
            scale = privacy.tree_laplace_scale(epsilon, sensitivity, horizon)
            guarantee = privacy.tree_privacy("laplace", scale, sensitivity, horizon)
        elif noise == "gaussian":
            scale = privacy.tree_gaussian_sigma(epsilon, delta, sensitivity, horizon, calibration=calibration)
            guarantee = PrivacyGuarantee(
                epsilon=float(epsilon),
                delta=float(delta),
                source=f"Ene-Nguyen-Vladu Theorem 2.3, calibration={calibration!r}",
                noise_multiplier=scale / (sensitivity * math.sqrt(privacy.levels_touched(horizon))),
            )
        else:
            raise InvalidInputError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
        tree = cls(
            dim, horizon, scale=scale, noise=noise, padded=padded, seed=seed, secure=secure, sampler="floating-point"
        )
        tree._privacy = _calibrate.float_guarantee(guarantee, seed, secure)
        return tree

    @property
    def privacy(self) -> PrivacyGuarantee | None:
        """The (ε, δ) guarantee of the release sequence, or ``None`` if built with a raw ``scale``."""
        return getattr(self, "_privacy", None)


class _LinearMechanism(_state.MechanismState, _core.Mechanism):
    """Shared ``calibrated`` / ``privacy`` / pickling of the :class:`_core.Mechanism` wrappers."""

    _KINDS: tuple[str, ...] = ()

    _SOURCE = ""

    @classmethod
    def _build(
        cls,
        dim: int,
        horizon: int,
        scale: float,
        noise: Noise,
        seed: SeedLike,
        secure: bool,
        options: dict[str, Any],
        sampler: Sampler = "floating-point",
    ) -> Any:
        return cls(dim, horizon, scale=scale, noise=noise, seed=seed, secure=secure, sampler=sampler, **options)

    @classmethod
    def _calibrate(
        cls,
        dim: int,
        horizon: int,
        *,
        epsilon: float,
        sensitivity: float,
        delta: float,
        noise: Noise | None,
        calibration: LinearCalibration | None,
        seed: SeedLike,
        secure: bool,
        options: dict[str, Any],
        sampler: Sampler,
    ) -> Any:
        calibration, sampler, delta, noise = _calibrate.calibration_options(
            calibration, LINEAR_CALIBRATIONS, sampler, delta, noise
        )
        # The encoder's column norms depend only on the structure, not on dim, noise or seed.
        probe = cls._build(1, horizon, 0.0, "gaussian", 0, False, options)
        options = cls._same_structure(probe, options)
        if sampler == "exact":
            fit = exact_noise(
                noise,
                calibration,
                epsilon=epsilon,
                delta=delta,
                sensitivity=sensitivity,
                column_l1=probe.sensitivity_l1,
                column_l2=probe.sensitivity_l2,
                dim=_validate.integer("dim", dim, low=1),
                rounding_slack=probe.rounding_slack,
            )
            mechanism = cls._build(dim, horizon, fit.scale, noise, seed, secure, options, "exact")
            mechanism._privacy = _calibrate.exact_guarantee(fit, cls._SOURCE, calibration, seed, secure)
            return mechanism
        scale, guarantee = privacy.linear.linear_float_noise(
            noise,
            calibration,
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            column_l1=probe.sensitivity_l1,
            column_l2=probe.sensitivity_l2,
        )
        mechanism = cls._build(dim, horizon, scale, noise, seed, secure, options)
        mechanism._privacy = _calibrate.float_guarantee(guarantee, seed, secure)
        return mechanism

    @classmethod
    def _same_structure(cls, probe: Any, options: dict[str, Any]) -> dict[str, Any]:
        """Options that rebuild ``probe``'s structure without repeating expensive set-up."""
        return options

    @property
    def privacy(self) -> PrivacyGuarantee | None:
        """The (ε, δ) guarantee of the release sequence, or ``None`` if built with a raw ``scale``."""
        return getattr(self, "_privacy", None)

    def _check_restored(self) -> None:
        if self.kind not in self._KINDS:
            raise StateError(f"state is of a {self.kind!r} mechanism, not {' or '.join(map(repr, self._KINDS))}")


_CALIBRATED_DOC = """
        Args:
            epsilon: target ε > 0.
            sensitivity: the largest change of one row between neighbouring streams, ``max ‖x − x'‖`` — in
                L1 for Laplace noise, in L2 for Gaussian noise. (Rows with ``‖x‖ <= Y`` under replacement:
                pass ``2Y``.)
            delta: target δ in [0, 1); must be > 0 for Gaussian noise.
            noise: ``"laplace"`` or ``"gaussian"``; default Laplace when ``delta == 0``, else Gaussian.
            calibration: ``None`` (default): the tightest proved calibration for the sampler — with
                ``sampler="exact"`` the discrete mechanism's (:func:`exact_noise`: discrete Laplace exact ε with
                the rounding in the sensitivity; discrete Gaussian through zCDP, Canonne-Kamath-Steinke 2020),
                with ``"floating-point"`` ``"analytic"``. ``"analytic"``: floating-point only for Gaussian
                (Laplace ``scale = Δ₁ · sensitivity_l1 / ε``, Gaussian ``σ = gaussian_sigma_analytic(ε, δ, Δ₂ ·
                sensitivity_l2)``, Balle-Wang 2018); ``"zcdp"`` (Gaussian only, Bun-Steinke with the
                Canonne-Kamath-Steinke conversion). No paper lemma calibrates this mechanism.
            seed, secure, sampler: as the constructor.

        Returns:
            A mechanism with :attr:`privacy` set.

        Raises:
            InvalidInputError: ε ≤ 0, δ ∉ [0, 1), δ = 0 with Gaussian noise, a non-positive sensitivity, an
                unknown ``noise``/``calibration``/``sampler``, or ``"analytic"`` with the exact Gaussian.
"""


class HonakerTree(_LinearMechanism):
    """Binary-tree prefix sums with the online Honaker readout: the BLUE of each release from the tree nodes
    complete at that time, ≈1.8× less variance than the binary mechanism at equal privacy.

    Source: Honaker (2015), "Efficient use of differentially private binary trees"; the bottom-up pass of
    Hay, Rastogi, Miklau & Suciu (2010). Every node ``v`` of the dyadic tree over ``1..horizon`` holds its
    block sum plus one i.i.d. draw, ``y_v = S_v + n_v``. Node sums are estimated bottom-up,
    ``ŝ_v = y_v`` for leaves and ``ŝ_v = w_j y_v + (1 − w_j)(ŝ_left + ŝ_right)`` at level ``j``, with
    ``w_j = v_j = 2^j / (2^{j+1} − 1)`` the estimate's variance in units of ``Var(n_v)``. The release after push
    ``t`` is ``Σ ŝ_v`` over the dyadic cover of ``[1, t]``, with noise variance ``Var(draw) · Σ_{j: bit j of t}
    v_j`` (:meth:`variance`): each term is between 1/2 and 1 instead of 1 for the binary mechanism. Every
    complete node is noised (about two draws per push); a row enters ``floor(log2 horizon) + 1`` nodes, as in
    the binary mechanism, so the privacy cost is the same.

    ``HonakerTree(dim, horizon, *, scale, noise="laplace", seed=None, secure=False, sampler="exact")``

    **Exact sampling** (default): rows rounded to the power-of-two grid, integer node values ``ỹ_v`` (rounded
    block sum plus an exact discrete draw), and the Honaker estimates computed in float64 from those integers —
    post-processing of the integer nodes, so the privacy is that of the integer mechanism, with the rounding in
    the sensitivity as for :class:`~dponline.TreeAggregator` (a row enters ``floor(log2 horizon) + 1`` nodes).

    Args:
        dim: vector dimension (>= 1).
        horizon: maximum number of pushes ``T`` (>= 1).
        scale: Laplace scale or Gaussian σ of each node's noise (>= 0; 0 disables noise). Use :meth:`calibrated`.
        noise: ``"laplace"`` or ``"gaussian"``.
        seed: ``None``, an int, a ``numpy.random.SeedSequence`` or ``numpy.random.Generator``. A seeded run is
            private only while its seed is secret.
        secure: draw noise from ChaCha20 keyed by the operating system (``seed`` must be ``None``).
        sampler: ``"exact"`` (default) or ``"floating-point"`` (as :class:`~dponline.TreeAggregator`).

    Cost: ``push`` is O(dim) amortised (about two draws per coordinate); memory O(dim · log horizon).

    Raises:
        InvalidInputError: bad ``dim``/``horizon``/``scale``/``noise``/``seed``; ``push`` of a wrong shape.
        NonFiniteError: NaN or inf in a pushed row (the mechanism is left unchanged).
        HorizonExhaustedError: pushing more than ``horizon`` rows (the mechanism is left unchanged).

    Example:
        >>> import numpy as np
        >>> from dponline.aggregation import HonakerTree
        >>> tree = HonakerTree.calibrated(3, 1000, epsilon=1.0, delta=1e-6, sensitivity=2.0, seed=0)
        >>> tree.push(np.ones(3)).shape
        (3,)
        >>> round(tree.unit_variance(3), 4)  # nodes [1,2] (2/3) and [3] (1)
        1.6667
    """

    _KINDS = ("honaker",)
    _SOURCE = "Honaker 2015 online readout of the binary tree (post-processing), floor(log2 T)+1 nodes per row"

    def __new__(
        cls,
        dim: int,
        horizon: int,
        *,
        scale: float,
        noise: Noise = "laplace",
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
    ) -> HonakerTree:
        return super().__new__(
            cls, "honaker", dim, horizon, scale=scale, noise=noise, seed=seed, secure=secure, sampler=sampler
        )

    def __getnewargs_ex__(self) -> tuple[tuple[int, int], dict[str, Any]]:
        return ((1, 1), {"scale": 0.0})

    @classmethod
    @recording_calibration
    def calibrated(
        cls,
        dim: int,
        horizon: int,
        *,
        epsilon: float,
        sensitivity: float,
        delta: float = 0.0,
        noise: Noise | None = None,
        calibration: LinearCalibration | None = None,
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
    ) -> HonakerTree:
        """A Honaker tree whose whole release sequence is ``(epsilon, delta)``-DP."""
        return cls._calibrate(
            dim,
            horizon,
            epsilon=epsilon,
            sensitivity=sensitivity,
            delta=delta,
            noise=noise,
            calibration=calibration,
            seed=seed,
            secure=secure,
            options={},
            sampler=sampler,
        )


class KaryTree(_LinearMechanism):
    """``k``-ary tree prefix sums: each release is the sum of at most ``(k − 1) · L`` node estimates, where
    ``L`` = the number of ``j`` with ``k^j <= horizon``.

    Source: the ``k``-ary generalisation of the binary mechanism (Dwork, Naor, Pitassi & Rothblum 2010; Chan,
    Shi & Song 2011); branching factors around 16 minimise the Laplace error (Qardaji, Yang & Li 2013).
    Level ``j`` has one node per block ``(e − k^j, e]``, ``k^j | e <= T``; the release after push ``t`` sums the
    ``k``-ary cover of ``[1, t]``: ``d_j`` consecutive level-``j`` nodes for the base-``k`` digits ``d_j`` of ``t``.

    * ``readout="plain"``: the cover's noisy nodes as they are (only nodes that appear in a cover are noised,
      one draw per push); variance ``Var(draw) · Σ_j d_j``.
    * ``readout="honaker"`` (default): each cover node is replaced by its bottom-up BLUE from its subtree
      (Honaker 2015), ``ŝ_v = w_j y_v + (1 − w_j) Σ_children ŝ_c`` with ``w_j = v_j``, ``v_0 = 1``,
      ``v_j = 1 / (1 + 1/(k v_{j−1}))``; variance ``Var(draw) · Σ_j d_j v_j``. This is the best linear unbiased
      estimate of the prefix from the nodes complete at release time (the nodes of a later parent are not
      available online). Every complete node is noised (``k/(k−1)`` draws per push on average).

    A row enters one node per level: ``sensitivity_l1 = L`` and ``sensitivity_l2 = sqrt(L)`` for both readouts
    (pure ε with Laplace noise, ``scale = Δ₁ L / ε``).

    ``KaryTree(dim, horizon, *, k, scale, noise="laplace", readout="honaker", seed=None, secure=False,
    sampler="exact")``

    **Exact sampling** (default): as :class:`HonakerTree` (the plain readout's releases are then integer
    multiples of the grid; it needs ``(k − 1)·L <= 2048`` draws per release).

    Args:
        dim: vector dimension (>= 1).
        horizon: maximum number of pushes ``T`` (>= 1).
        k: branching factor (>= 2).
        scale: Laplace scale or Gaussian σ of each node's noise (>= 0; 0 disables noise). Use :meth:`calibrated`.
        noise: ``"laplace"`` or ``"gaussian"``.
        readout: ``"honaker"`` or ``"plain"``.
        seed, secure, sampler: as :class:`HonakerTree`.

    Cost: ``push`` is O(dim) amortised; memory O(dim · L).

    Raises:
        InvalidInputError: bad ``dim``/``horizon``/``k``/``scale``/``noise``/``readout``/``seed``; ``push`` of a
            wrong shape.
        NonFiniteError: NaN or inf in a pushed row (the mechanism is left unchanged).
        HorizonExhaustedError: pushing more than ``horizon`` rows (the mechanism is left unchanged).

    Example:
        >>> import numpy as np
        >>> from dponline.aggregation import KaryTree
        >>> tree = KaryTree.calibrated(2, 4096, k=16, epsilon=1.0, sensitivity=1.0, readout="plain", seed=0)
        >>> tree.sensitivity_l1, round(tree.scale, 6)  # 16**3 = 4096: four levels; exact: (4 + 2/2**29)
        (4.0, 4.0)
        >>> tree.unit_variance(4095)  # digits (15, 15, 15)
        45.0
    """

    _KINDS = ("kary", "honaker")  # k = 2 with the Honaker readout is the Honaker tree
    _SOURCE = "k-ary tree (one node per level per row)"

    def __new__(
        cls,
        dim: int,
        horizon: int,
        *,
        k: int,
        scale: float,
        noise: Noise = "laplace",
        readout: str = "honaker",
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
    ) -> KaryTree:
        return super().__new__(
            cls,
            "kary",
            dim,
            horizon,
            scale=scale,
            noise=noise,
            k=k,
            readout=readout,
            seed=seed,
            secure=secure,
            sampler=sampler,
        )

    def __getnewargs_ex__(self) -> tuple[tuple[int, int], dict[str, Any]]:
        return ((1, 1), {"k": 3, "scale": 0.0})

    @classmethod
    @recording_calibration
    def calibrated(
        cls,
        dim: int,
        horizon: int,
        *,
        k: int,
        epsilon: float,
        sensitivity: float,
        delta: float = 0.0,
        noise: Noise | None = None,
        calibration: LinearCalibration | None = None,
        readout: str = "honaker",
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
    ) -> KaryTree:
        """A ``k``-ary tree whose whole release sequence is ``(epsilon, delta)``-DP."""
        return cls._calibrate(
            dim,
            horizon,
            epsilon=epsilon,
            sensitivity=sensitivity,
            delta=delta,
            noise=noise,
            calibration=calibration,
            seed=seed,
            secure=secure,
            options={"k": k, "readout": readout},
            sampler=sampler,
        )


class BLT(_LinearMechanism):
    """Buffered-linear-Toeplitz (BLT) matrix-factorisation prefix sums: correlated noise from a ``buffers``-state
    linear recurrence, optimised for the horizon.

    Source: Dvijotham, McMahan, Pillutla, Steinke & Thakurta (2024), "Efficient and near-optimal noise
    generation for streaming differential privacy"; McMahan et al. (2024). The prefix-sum matrix is factored
    as ``A = B C`` with ``C`` lower-triangular Toeplitz, ``c_0 = 1``, ``c_i = Σ_j ω_j θ_j^(i−1)``
    (``0 < θ_1 < … < θ_d < 1``, ``ω_j > 0``, ``d = buffers``). The mechanism releases ``B (C x + z) = A x + B z``:
    the noise ``ζ = C⁻¹ z`` is generated online by ``ζ_t = z_t − Σ_j ω_j S_j``, ``S_j ← θ_j S_j + ζ_t``, and the
    release after push ``t`` is ``Σ_{s<=t} (x_s + ζ_s)``.

    * Sensitivity (single participation): the first column of ``C`` is the largest, so
      ``sensitivity_l2 = ‖(c_0, …, c_{T−1})‖₂`` and ``sensitivity_l1 = Σ c_i`` (closed forms, exact).
    * Variance of release ``t``: ``Var(draw) · Σ_{n<t} r_n²`` with ``r_n`` the partial sums of the coefficients of
      ``C⁻¹``, in closed form through the eigenvalues of the recurrence (``O(d² log t)``).
    * Parameters: unless ``theta``/``omega`` are given, BFGS minimises the squared error at equal privacy,
      ``sensitivity_l2² × V(T)`` (``objective="max"``, the last step is the worst) or
      ``sensitivity_l2² × mean_t V(t)`` (``objective="mean"``), with at most 2000 iterations (an error if
      reached; see the core docs for the parametrisation, initialisation and stopping rule). :attr:`fit`
      reports ``(iterations, loss)``. Any parameters give an exactly calibrated mechanism: the optimisation
      only affects accuracy.

    ``BLT(dim, horizon, *, scale, buffers=4, objective="max", noise="gaussian", theta=None, omega=None,
    seed=None, secure=False, sampler="exact")``

    **Exact sampling** (``sampler="exact"``, the default): release = decode(round(encode(x)) + discrete noise).
    Adding integer noise in the noise space, ``A n + B z``, would not do: its support ``A n + B Z^T`` moves with the
    data off the lattice (``C e_s`` is not an integer vector), so neighbouring inputs would be told apart exactly.
    Instead each row is rounded to the power-of-two grid of the noise (``n = round(x/γ)``, as the trees), the
    encoder ``C n`` is evaluated in 128-bit integers with a deterministic rounding (parameters ``θ``, ``ω`` are
    multiples of ``2**-53`` on both paths; buffers with ``r`` fraction bits), exact discrete Laplace / Gaussian
    noise (Canonne-Kamath-Steinke 2020) is added to those integers, and the release is decoded from them in float
    and rounded onto the grid — post-processing of the integer view. *Lemma* (core ``aggregation::blt``): the
    integer encoding is within ``η = 1/2 + (d + Σ ω_j/(1 − θ_j))/2**(r+1)`` grid units of ``C n`` at every step, so
    one replaced row moves the integer view by at most ``sensitivity_l2 · (Δ₂/γ + sqrt(dim)) + 2η·sqrt(T·dim)`` in
    L2 and ``sensitivity_l1 · (⌈Δ₁/γ⌉ + dim) + 2η·T·dim`` in L1 (the grid Lemma plus :attr:`rounding_slack` ``=
    (2ηT, 2η·sqrt(T))`` per coordinate); :meth:`calibrated` solves the discrete Laplace's exact ε or the discrete
    Gaussian's zCDP (CKS conversion) for that, as for the trees (:func:`dponline.privacy.exact_linear_noise`). The
    slack is a few grid units per step against a noise of ``2**30`` units: negligible in L2 (about ``2**-15`` of the
    sensitivity at ``T = 2**20``, ``dim = 100``, ε = 1), noticeable in L1 at long horizons (about ``2**-10`` at ``T =
    2**20``, ε = 1: Laplace BLT grows like ``sqrt(T)`` anyway). Variance: the rounding is deterministic (a
    data-dependent shift of the mean below ``η Σ|r_n|`` grid units, no variance), so :meth:`variance` is exactly
    ``unit_variance(t)`` times the discrete law's variance; the float decoder and the final rounding onto the grid
    (at most ``γ/2``, below ``2**-31`` of a noise standard deviation) add only their rounding errors.
    ``sampler="floating-point"`` releases ``Σ x + Σ ζ`` with float noise, fast, with the Mironov 2012 caveat in its
    guarantee.

    Args:
        dim: vector dimension (>= 1).
        horizon: maximum number of pushes ``T`` (>= 1).
        scale: Gaussian σ (or Laplace scale) of each draw ``z_t`` (>= 0; 0 disables noise). Use :meth:`calibrated`.
        buffers: number of buffers ``d`` (1..16).
        objective: ``"max"`` or ``"mean"``.
        noise: ``"gaussian"`` (the mechanism is optimised for L2) or ``"laplace"`` (valid, with L1 sensitivity
            ``Σ c_i``, which grows like ``sqrt(T)``).
        theta, omega: explicit parameters instead of the optimiser (both or neither).
        seed, secure: as :class:`HonakerTree`.
        sampler: ``"exact"`` (default) or ``"floating-point"``.

    Cost: ``push`` is one draw and ``2·buffers`` multiply-adds per coordinate (exact path: also ``2·buffers``
    128-bit fixed-point products); memory ``O(dim · buffers)``. The
    optimiser costs ``O(buffers³ log T)`` per iteration, independent of ``dim``: about 10-100 ms for 4-6
    buffers, seconds for 12-16 (which gain little).

    Raises:
        InvalidInputError: bad ``dim``/``horizon``/``buffers``/``objective``/``scale``/``noise``/parameters
            (exact sampler: a scale > 0 outside ``[1e-150, 1e150]``, or parameters with ``1 − θ_d`` below about
            ``2**-59``); ``push`` of a wrong shape or (exact sampler) of a value beyond ``2**62`` grid units.
        NonFiniteError: NaN or inf in a pushed row (the mechanism is left unchanged).
        HorizonExhaustedError: pushing more than ``horizon`` rows (the mechanism is left unchanged).
        DPOnlineError: the optimiser did not converge within its iteration cap.

    Example:
        >>> import numpy as np
        >>> from dponline.aggregation import BLT
        >>> blt = BLT.calibrated(3, 2**20, buffers=4, epsilon=1.0, delta=1e-6, sensitivity=1.0, seed=0)
        >>> blt.push(np.ones(3)).shape
        (3,)
        >>> round(blt.sensitivity_l2**2 * blt.unit_variance(2**20), 1)  # binary mechanism: 21 · 20 = 420
        31.0
    """

    _KINDS = ("blt",)

    _SOURCE = (
        "BLT matrix factorisation (Dvijotham et al. 2024), encoder evaluated in integers: column norms of C plus the "
        "encoder-rounding slack rounding_slack (core aggregation::blt Lemma)"
    )

    def __new__(
        cls,
        dim: int,
        horizon: int,
        *,
        scale: float,
        buffers: int = 4,
        objective: str = "max",
        noise: Noise = "gaussian",
        theta: Any = None,
        omega: Any = None,
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
        _fit: tuple[int, float] | None = None,
    ) -> BLT:
        return super().__new__(
            cls,
            "blt",
            dim,
            horizon,
            scale=scale,
            noise=noise,
            buffers=buffers,
            objective=objective,
            theta=None if theta is None else _validate.real_array("theta", theta, (None,)).tolist(),
            omega=None if omega is None else _validate.real_array("omega", omega, (None,)).tolist(),
            fit=_fit,
            seed=seed,
            secure=secure,
            sampler=sampler,
        )

    def __getnewargs_ex__(self) -> tuple[tuple[int, int], dict[str, Any]]:
        return ((1, 1), {"scale": 0.0, "theta": [0.5], "omega": [0.5]})

    @classmethod
    def _same_structure(cls, probe: Any, options: dict[str, Any]) -> dict[str, Any]:
        return {**options, "theta": probe.theta, "omega": probe.omega, "_fit": probe.fit}

    @classmethod
    @recording_calibration
    def calibrated(
        cls,
        dim: int,
        horizon: int,
        *,
        epsilon: float,
        sensitivity: float,
        delta: float = 0.0,
        noise: Noise | None = None,
        calibration: LinearCalibration | None = None,
        buffers: int = 4,
        objective: str = "max",
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler = "exact",
    ) -> BLT:
        """A BLT mechanism (parameters optimised once) whose whole release sequence is ``(epsilon, delta)``-DP."""
        return cls._calibrate(
            dim,
            horizon,
            epsilon=epsilon,
            sensitivity=sensitivity,
            delta=delta,
            noise=noise,
            calibration=calibration,
            seed=seed,
            secure=secure,
            options={"buffers": buffers, "objective": objective},
            sampler=sampler,
        )


for _cls in (HonakerTree, KaryTree, BLT):
    _cls.calibrated.__func__.__doc__ = (_cls.calibrated.__doc__ or "") + "\n" + _CALIBRATED_DOC
