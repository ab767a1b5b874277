"""The local Laplace randomiser of van der Hoeven (2019, §2.1) and its ℓ2 variant (Song et al. 2015)."""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import numpy as np

from .. import _core, _state, _validate
from .._options import SAMPLERS, Sampler
from .._seed import SeedLike
from ..errors import InvalidInputError
from ..privacy import PrivacyGuarantee, randomness_of

__all__ = ["LocalLaplaceRandomizer", "NEIGHBOURING_LOCAL_COORDINATE", "NEIGHBOURING_LOCAL_L2", "UNIT_LOCAL"]

UNIT_LOCAL = "one provider's gradient / one round"
"""The privacy unit of the local randomisers."""

NEIGHBOURING_LOCAL_COORDINATE = (
    "any two subgradients g, g' of one provider with |g_j| <= G for every coordinate j (inputs are clipped "
    "to [-G, G] first), local model: the guarantee holds against the learner and anyone who sees the release"
)
NEIGHBOURING_LOCAL_L2 = (
    "any two subgradients g, g' of one provider with ||g||_2 <= G (inputs are clipped to the G-ball first), "
    "local model: the guarantee holds against the learner and anyone who sees the release"
)

Mechanism = Literal["laplace", "l2"]
_MECHANISMS: tuple[Mechanism, ...] = get_args(Mechanism)

_EXACT_SOURCE = (
    "; exact: each clipped coordinate rounded onto its grid gamma_j and discrete Laplace DLap(t_j) added in "
    "integers, t_j = ceil((ceil(2G/gamma_j) + 1)/tau_j), so coordinate j is exactly tau_j-local DP for the released "
    "floats (the rounding Lemma of the core's noise::grid; the discrete Laplace (geometric) mechanism, "
    "Ghosh-Roughgarden-Sundararajan 2009 / Canonne-Kamath-Steinke 2020)"
)
_L2_FLOAT_NOTE = (
    "floating-point only: the noise's direction (uniform on the sphere) and Gamma(d, 2G/eps) radius are drawn in "
    "floating point (no exact sampler here); exact pure eps-LDP for l2-bounded inputs: mechanism='laplace' with "
    "budget eps/sqrt(d) per coordinate (L1 sensitivity 2 sqrt(d) G), about sqrt(2) times the expected noise norm"
)


def resolve_sampler(mechanism: str, sampler: Sampler | None) -> Sampler:
    """The sampler of a local randomiser: ``sampler`` checked, or for ``None`` the most secure one ``mechanism``
    has — ``"exact"`` for ``"laplace"``, ``"floating-point"`` for ``"l2"`` (its only one).

    Raises:
        InvalidInputError: an unknown sampler, or ``"exact"`` with ``"l2"`` (saying why and what to use).
    """
    if sampler is None:
        return "exact" if mechanism == "laplace" else "floating-point"
    sampler = _validate.option("sampler", sampler, SAMPLERS)  # type: ignore[assignment]
    if sampler == "exact" and mechanism == "l2":
        raise InvalidInputError(
            "sampler='exact' is not available for mechanism='l2': its direction (uniform on the sphere) and Gamma "
            "radius are drawn in floating point and have no exact sampler; for exact pure eps-LDP of inputs with "
            "||g||_2 <= G use mechanism='laplace' with budget eps/sqrt(d) per coordinate (the L1 sensitivity is "
            "2 sqrt(d) G; about sqrt(2) times the l2 mechanism's expected noise norm), or sampler='floating-point' "
            "(or None) to accept the floating-point caveat (Mironov 2012)"
        )
    return sampler  # type: ignore[return-value]


def _float_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array of any shape (NaN/inf kept: the caller checks), or :class:`InvalidInputError`
    for strings, complex numbers, ragged lists and other objects NumPy cannot convert."""
    if isinstance(value, (str, bytes)) or _validate._is_complex(value):
        raise InvalidInputError(f"{name} must be an array of real numbers, got {_validate._shown(value)}")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be convertible to a float64 array: {exc}") from None


def _budget_matrix(budgets: Any, rows: int, per: int, name: str = "budgets") -> np.ndarray:
    """``budgets`` broadcast to a C-contiguous float64 ``(rows, per)`` array (``+inf`` allowed, NaN not)."""
    arr = _float_array(name, budgets)
    if per == 1 and arr.ndim == 1:
        arr = arr[:, None]
    try:
        out = np.broadcast_to(arr, (rows, per))
    except ValueError:
        raise InvalidInputError(f"{name} must broadcast to shape ({rows}, {per}), got shape {arr.shape}") from None
    return np.ascontiguousarray(out)


class LocalLaplaceRandomizer(_state.NativeState):
    """The local Laplace randomiser of van der Hoeven (2019, §2.1) and its ℓ2 variant.

    Each call releases ``g̃ = clip_G(g) + ξ`` for one or many rounds in one native call:

    * ``mechanism="laplace"`` (the local Laplace randomiser): per-coordinate budgets ``τ_{t,j} > 0``, noise
      density ``ρ_t(z) ∝ exp(−Σ_j τ_{t,j}|z_j| / (2G))`` — independent ``Laplace(2G/τ_{t,j})`` per coordinate.
      For ``|g_j| ≤ G`` the release is ``ε_t``-local DP with ``ε_t = Σ_j τ_{t,j}`` (Lemma 1, stated for
      ``G = 1``; applied to ``g/G``), and coordinate ``j`` alone is ``τ_{t,j}``-local DP. ``τ = inf`` releases
      that coordinate exactly (no noise, no privacy for it). Inputs are clipped to ``[−G, G]`` per coordinate.
    * ``mechanism="l2"``: one budget ``ε_t`` per round, ``ρ_t(z) ∝ exp(−ε_t‖z‖₂ / (2G))`` — a direction uniform
      on the sphere times a radius ``Gamma(d, 2G/ε_t)``; ``ε_t``-local DP for ``‖g‖₂ ≤ G`` (Song et al. 2015,
      Theorem 1, quoted in §2.1 and §4). Inputs are clipped to the ℓ2 ball of radius ``G``.

    Both noises are symmetric with mean zero, so ``E[g̃] = g`` for inputs within the bound — the only
    property of the noise Algorithms 1-3 use (with ``sampler="exact"``, ``g`` rounded to the grid: within
    ``2⁻³⁰`` of the noise scale).

    Samplers. ``"exact"`` (the default of ``"laplace"``): each clipped coordinate with a finite budget is rounded
    onto a power-of-two grid ``γ_j = 2^(⌊log₂(2G/τ_j)⌋ − 30)`` (from ``G`` and ``τ`` only) and integer discrete
    Laplace noise ``DLap(t_j)`` is added, ``g̃_j = (round(g_j/γ_j) + Z_j)·γ_j`` (an exact float), with
    ``t_j = ⌈(⌈2G/γ_j⌉ + 1)/τ_j⌉``: rounding moves a value by at most ``γ_j/2``, so two inputs in ``[−G, G]``
    differ by at most ``⌈2G/γ_j⌉ + 1`` grid units (the rounding Lemma of the core's ``noise::grid``), and adding
    ``DLap(t)`` to an integer of sensitivity ``Δ`` is exactly ``Δ/t``-DP (the discrete Laplace Lemma,
    :func:`dponline.privacy.discrete_laplace_epsilon`) — so coordinate ``j`` is ``τ_j``-local DP for the floats
    it releases and the row ``Σ_j τ_j``. The noise's variance is that of ``DLap(t_j)`` times ``γ_j²``
    (``2e^{−1/t}/(1 − e^{−1/t})²``, within ``(2/τ_j + 1)·2⁻²⁹`` relative of ``2(2G/τ_j)²``). Budgets above about
    ``1.2·10⁵`` need ``"floating-point"``. ``"floating-point"``: ``Laplace(2G/τ_j)`` in floating point — the
    guarantee is that of the real-valued mechanism (Mironov 2012), bit-identical to earlier versions for a given
    seed.

    ``"l2"`` is **floating-point only** (``sampler=None`` selects it, ``sampler="exact"`` is refused), and its
    guarantee carries the Mironov (2012) caveat: the low bits of its float releases can reveal the input. Why
    there is no exact sampler: an exact draw on a grid ``γℤ^d`` with mass ``∝ exp(−a‖k‖₂)`` (``a = εγ/(2G)``) is
    pure ``ε``-LDP (the triangle inequality; the rounding adds ``√d`` grid units of ℓ2 sensitivity), but the only
    integer-arithmetic route found, rejection from the product discrete Laplace of rate ``a/√d`` (accept with
    probability ``exp(−a(‖k‖₂ − ‖k‖₁/√d))``, an exact Bernoulli of an irrational exponent), accepts a proposal
    with probability about ``0.79, 0.35, 0.12, 0.018, 2·10⁻⁴, 10⁻⁸`` at ``d = 2, 5, 9, 16, 32, 68`` (the continuous
    ratio of normalisers, ``≈ √2·(π/(2e))^{d/2}`` asymptotically): practical only for small ``d``; and rounding a
    continuous ℓ2-Laplace draw onto the grid needs that draw exact (lazily refined reals), which this library does
    not have. **The exact alternative** for inputs with ``‖g‖₂ ≤ G`` (clip them to that ball first): the default
    ``mechanism="laplace"`` with ``bound=G`` and budget ``τ_j = ε/√d`` on every coordinate. Two such inputs differ
    by at most ``‖g − g'‖₁ ≤ √d‖g − g'‖₂ ≤ 2√d·G``, so the privacy loss ``Σ_j τ_j|g_j − g'_j|/(2G)`` is at most
    ``ε``: exactly ``ε``-LDP for the ℓ2 relation (the guarantee :meth:`privacy` reports, ``Σ_j τ_j = √d·ε``, is
    for the wider per-coordinate relation ``|g_j| ≤ G``). Its cost: ``E‖ξ‖₂`` over the ℓ2 mechanism's
    ``2Gd/ε`` is 1.00, 1.15, 1.33 and 1.40 at ``d = 1, 2, 9, 68`` (measured, ``2·10⁵`` draws; ``√2`` as ``d``
    grows), against 1.00, 1.62, 4.0 and 11.6 for the per-coordinate split ``τ_j = ε/d``.

    Args:
        dim: vector length ``d >= 1``.
        bound: the declared bound ``G > 0`` (default 1, the paper's normalisation).
        mechanism: ``"laplace"`` (default) or ``"l2"``.
        sampler: ``None`` (default: the most secure the mechanism has — ``"exact"`` for ``"laplace"``,
            ``"floating-point"`` for ``"l2"``), ``"exact"`` or ``"floating-point"`` (see Samplers).
        strict: raise :class:`InvalidInputError` for inputs beyond ``G`` instead of clipping them.
        seed: ``None`` (the default: OS-keyed ChaCha20), int, ``SeedSequence`` or ``Generator``. A seeded
            randomiser is private only while its seed is secret.
        secure: ``True`` only asserts the default: without a seed the noise comes from ChaCha20 keyed by the
            operating system, never serialised and re-keyed on copy, unpickling and in a forked child (``seed``
            must then be ``None``).

    Raises:
        InvalidInputError: bad arguments; ``sampler="exact"`` with ``mechanism="l2"`` (no exact sampler).

    Example:
        >>> import numpy as np, dponline
        >>> r = dponline.LocalLaplaceRandomizer(3, seed=0)
        >>> r.randomize(np.array([0.5, -0.2, 1.0]), [1.0, 0.5, np.inf]).shape
        (3,)
        >>> r.privacy([1.0, 0.5, 2.0]).epsilon
        3.5
    """

    _core_type = _core.LocalRandomizer

    def __init__(
        self,
        dim: int,
        *,
        bound: float = 1.0,
        mechanism: Mechanism = "laplace",
        sampler: Sampler | None = None,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        dim = _validate.integer("dim", dim, low=1)
        bound = _validate.real("bound", bound, low=0.0, low_open=True)
        mechanism = _validate.option("mechanism", mechanism, _MECHANISMS)
        sampler = resolve_sampler(mechanism, sampler)
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        self._core = _core.LocalRandomizer(
            dim, bound=bound, mechanism=mechanism, sampler=sampler, strict=strict, seed=seed, secure=secure
        )
        self._randomness = randomness_of(seed, secure)

    # -- release ----------------------------------------------------------------------------------------
    def randomize(self, gradients: Any, budgets: Any) -> np.ndarray:
        """Release ``clip_G(g_t) + ξ_t`` for each round.

        Args:
            gradients: shape ``(d,)`` (one round) or ``(n, d)``; finite.
            budgets: ``"laplace"``: ``τ``, broadcastable to ``(n, d)`` (a scalar, ``(d,)``, ``(n, 1)``,
                ``(n, d)``); ``"l2"``: ``ε``, broadcastable to ``(n,)``. Every entry ``> 0``; ``inf`` = no
                noise.

        Returns:
            float64 array of the shape of ``gradients``.

        Raises:
            InvalidInputError: wrong shapes, a budget ``<= 0`` (or so small that ``2G/τ > 1e250``; with the exact
                sampler, outside its range), an input beyond ``G`` with ``strict=True``.
            NonFiniteError: NaN/inf in ``gradients`` or NaN in ``budgets``. In every case nothing is drawn and
                the randomiser is unchanged.
        """
        g = _float_array("gradients", gradients)
        single = g.ndim == 1
        g2 = np.ascontiguousarray(g[None, :] if single else g)
        if g2.ndim != 2 or g2.shape[1] != self.dim:
            raise InvalidInputError(f"gradients must have shape ({self.dim},) or (n, {self.dim}), got {g.shape}")
        per = self.dim if self.mechanism == "laplace" else 1
        taus = _budget_matrix(budgets, g2.shape[0], per)
        out = self._core.randomize(g2, taus)
        return out[0] if single else out

    def epsilons(self, budgets: Any, rounds: int | None = None) -> np.ndarray:
        """``ε_t`` of each round: ``Σ_j τ_{t,j}`` (Lemma 1) or the ℓ2 budget; ``inf`` when a coordinate is
        released exactly. Shape ``(n,)`` (``rounds`` sets ``n`` for budgets without a round axis)."""
        arr = _float_array("budgets", budgets)
        if np.isnan(arr).any() or (arr <= 0).any():
            raise InvalidInputError("budgets must be > 0 (inf = no noise), without NaN")
        if rounds is not None:
            rounds = _validate.integer("rounds", rounds, low=0)
        if self.mechanism == "l2":
            n = rounds if rounds is not None else (arr.shape[0] if arr.ndim else 1)
            return _budget_matrix(arr, n, 1)[:, 0]
        n = rounds if rounds is not None else (arr.shape[0] if arr.ndim == 2 else 1)
        with np.errstate(over="ignore"):  # finite budgets whose sum overflows: inf, i.e. no privacy
            return _budget_matrix(arr, n, self.dim).sum(axis=1)

    def privacy(self, budget: Any) -> PrivacyGuarantee | None:
        """The local guarantee of one round released with ``budget`` (``τ`` of shape ``(d,)`` or a scalar for
        ``"laplace"``; ``ε`` for ``"l2"``), or ``None`` when nothing is private (every budget infinite).

        With some ``τ_j = inf`` the guarantee covers the other coordinates only: ``ε = Σ_{τ_j<∞} τ_j`` for
        neighbouring inputs that agree on the exactly released coordinates (stated in ``neighbouring``).
        """
        if self.mechanism == "l2":
            arr = _float_array("budget", budget)
            if arr.size != 1:
                raise InvalidInputError(f"budget must be one number for the l2 mechanism, got shape {arr.shape}")
            eps = float(arr.reshape(()))
            if not eps > 0:
                raise InvalidInputError(f"budget must be > 0 (inf = no noise), got {eps}")
            if math.isinf(eps):
                return None
            return PrivacyGuarantee(
                epsilon=eps,
                delta=0.0,
                source="Song et al. 2015 Theorem 1 (l2 randomiser), van der Hoeven 2019 §2.1",
                neighbouring=NEIGHBOURING_LOCAL_L2.replace("G", f"G={self.bound:g}", 1),
                unit=UNIT_LOCAL,
                randomness=self._randomness,
                notes=f"noise density proportional to exp(-eps ||z||_2 / (2G)), G = {self.bound:g}; {_L2_FLOAT_NOTE}",
                sampler=self.sampler,
            )
        tau = _budget_matrix(budget, 1, self.dim)[0]
        if np.any(tau <= 0) or np.isnan(tau).any():
            raise InvalidInputError("budget entries must be > 0 (inf = no noise), without NaN")
        finite = np.isfinite(tau)
        if not finite.any():
            return None
        neighbouring = NEIGHBOURING_LOCAL_COORDINATE.replace("G", f"G={self.bound:g}", 1)
        notes = f"per-coordinate Laplace scales 2G/tau_j, G = {self.bound:g}; coordinate j alone is tau_j-local DP"
        if not finite.all():
            exact = np.flatnonzero(~finite).tolist()
            neighbouring += f"; coordinates {exact} (tau = inf) are released exactly and must agree"
            notes += f"; coordinates {exact} carry no privacy"
        with np.errstate(over="ignore"):
            epsilon = float(tau[finite].sum())
        if not math.isfinite(epsilon):
            raise InvalidInputError(f"the finite budgets sum beyond the float range: {_validate._shown(tau)}")
        if self.sampler == "exact":
            notes = notes.replace("Laplace scales 2G/tau_j", "discrete Laplace scales t_j*gamma_j >= 2G/tau_j")
        return PrivacyGuarantee(
            epsilon=epsilon,
            delta=0.0,
            source="van der Hoeven 2019, Lemma 1 (local Laplace randomiser)"
            + (_EXACT_SOURCE if self.sampler == "exact" else ""),
            neighbouring=neighbouring,
            unit=UNIT_LOCAL,
            randomness=self._randomness,
            notes=notes,
            sampler=self.sampler,
        )

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector length ``d``."""
        return int(self._core.dim)

    @property
    def bound(self) -> float:
        """The declared bound ``G``."""
        return float(self._core.bound)

    @property
    def mechanism(self) -> str:
        """``"laplace"`` or ``"l2"``."""
        return str(self._core.mechanism)

    @property
    def sampler(self) -> str:
        """``"exact"`` or ``"floating-point"``: how the noise is drawn."""
        return str(self._core.sampler)

    @property
    def rounds(self) -> int:
        """Rounds (rows) released so far."""
        return int(self._core.rounds)

    @property
    def clipped(self) -> int:
        """Rows clipped to the bound so far.

        Not private: an exact count over the raw gradients (do not publish it beside the releases)."""
        return int(self._core.clipped)

    def __repr__(self) -> str:
        return (
            f"LocalLaplaceRandomizer(dim={self.dim}, bound={self.bound:g}, mechanism={self.mechanism!r}, "
            f"sampler={self.sampler!r})"
        )
