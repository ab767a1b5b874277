"""Privacy accounting for dponline: guarantees, noise calibration, conversions and composition.

Everything here is pure Python (``math``, NumPy, SciPy); nothing needs the compiled core. One subject per
module, every public name re-exported here:

* :mod:`~dponline.privacy.guarantee` — :class:`PrivacyGuarantee`, how the noise was keyed, row multiplicity;
* :mod:`~dponline.privacy.laplace`, :mod:`~dponline.privacy.gaussian` — the Laplace scale; the classical and the
  analytic Gaussian mechanism;
* :mod:`~dponline.privacy.zcdp` — zero-concentrated DP and its conversions;
* :mod:`~dponline.privacy.composition` — basic and advanced composition;
* :mod:`~dponline.privacy.tree`, :mod:`~dponline.privacy.linear` — calibration of the binary tree mechanism and
  of linear prefix-sum mechanisms;
* :mod:`~dponline.privacy.discrete` — the exact discrete mechanisms (discrete Laplace and discrete Gaussian
  noise on an integer query).

Conventions used by every function:

* ``epsilon`` is in nats (natural logarithm); ``delta`` is a probability.
* ``sensitivity`` is the largest change of the mechanism's input between neighbouring datasets: in L1 for
  Laplace noise, in L2 for Gaussian noise. Unless stated otherwise, neighbouring inputs differ in one
  round's input, replaced by another (so rows with ``‖x‖ <= Y`` have sensitivity ``2Y``).
* Bad input raises :class:`~dponline.errors.InvalidInputError` (a ``ValueError``) whose message names the
  argument and its allowed range; NaN or infinity raises its subclass
  :class:`~dponline.errors.NonFiniteError`.
* Numerical inverses (σ from (ε, δ), ε from (δ, σ), ρ from (ε, δ)) are solved to a relative tolerance of
  1e-12 and then rounded to the safe side, so the returned value meets its target as evaluated.
"""

from __future__ import annotations

from . import discrete as _discrete
from .composition import advanced_composition, basic_composition
from .discrete import *  # noqa: F403 - every public name of the exact discrete mechanisms (its __all__)
from .gaussian import gaussian_delta, gaussian_epsilon_analytic, gaussian_sigma_analytic, gaussian_sigma_classical
from .guarantee import NEIGHBOURING_ROUND, UNIT_ROUND, PrivacyGuarantee, randomness_of, row_multiplicity
from .laplace import laplace_scale
from .linear import linear_gaussian_sigma, linear_laplace_scale, linear_privacy
from .tree import levels_touched, tree_gaussian_sigma, tree_laplace_scale, tree_privacy
from .zcdp import dp_to_zcdp_rho, zcdp_gaussian_rho, zcdp_gaussian_sigma, zcdp_to_dp

__all__ = [
    "PrivacyGuarantee",
    "NEIGHBOURING_ROUND",
    "UNIT_ROUND",
    "row_multiplicity",
    "randomness_of",
    "laplace_scale",
    "gaussian_sigma_classical",
    "gaussian_delta",
    "gaussian_sigma_analytic",
    "gaussian_epsilon_analytic",
    "zcdp_gaussian_rho",
    "zcdp_to_dp",
    "dp_to_zcdp_rho",
    "zcdp_gaussian_sigma",
    "basic_composition",
    "advanced_composition",
    "levels_touched",
    "tree_laplace_scale",
    "tree_gaussian_sigma",
    "tree_privacy",
    "linear_laplace_scale",
    "linear_gaussian_sigma",
    "linear_privacy",
    *_discrete.__all__,
]
