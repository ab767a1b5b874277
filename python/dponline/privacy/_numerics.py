"""Numerical safety and argument checks shared by the privacy calculators.

No overflow exception, no inf/NaN and no zero noise ever leaves :mod:`dponline.privacy` (issue 13): every
calibration and accounting function is wrapped by :func:`_numeric`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from .. import _validate
from ..errors import ConvergenceError, DPOnlineError, InvalidInputError

_RTOL = 1e-12
_R = TypeVar("_R")

_MAX_STEPS = 2200  # doublings/halvings: 2**2200 exceeds the ratio of any two positive float64 numbers
_POSITIVE_RESULTS = frozenset(
    {
        "laplace_scale",
        "gaussian_sigma_classical",
        "gaussian_sigma_analytic",
        "zcdp_gaussian_sigma",
        "zcdp_gaussian_rho",
        "dp_to_zcdp_rho",
        "tree_laplace_scale",
        "tree_gaussian_sigma",
        "discrete_laplace_scale",
        "discrete_gaussian_rho",
    }
)


def _steps(routine: str, limit: int = _MAX_STEPS):  # type: ignore[no-untyped-def]
    """``range(limit)`` that raises :class:`ConvergenceError` naming ``routine`` when it is exhausted."""
    yield from range(limit)
    raise ConvergenceError(f"{routine} did not converge within {limit} iterations")


def _numeric(fn: Callable[..., _R]) -> Callable[..., _R]:
    """Make a calibration/accounting function total on finite inputs.

    Float overflow/underflow inside the formulas becomes :class:`InvalidInputError` naming the function and its
    arguments (the user's arguments are too extreme for float64), a root finder that fails becomes
    :class:`ConvergenceError`, and a result that is not finite — or a noise scale, σ or ρ that underflows to
    0, which would release data without noise — is refused the same way instead of being returned.
    """

    @functools.wraps(fn)
    def checked(*args: object, **kwargs: object) -> _R:
        shown = ", ".join([*(repr(a) for a in args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        try:
            result = fn(*args, **kwargs)
        except DPOnlineError:
            raise
        except (OverflowError, ZeroDivisionError, FloatingPointError, ValueError) as e:
            raise InvalidInputError(f"{fn.__name__}({shown}): arguments too extreme for float64 ({e})") from None
        except RuntimeError as e:
            raise ConvergenceError(f"{fn.__name__}({shown}): {e}") from None
        # A PrivacyGuarantee result needs no check here: its constructor refuses a non-finite ε or δ.
        values = [result] if isinstance(result, float) else []
        for v in values:
            if not math.isfinite(v) or (fn.__name__ in _POSITIVE_RESULTS and v <= 0.0):
                raise InvalidInputError(
                    f"{fn.__name__}({shown}): the result ({v!r}) is not representable as a finite positive float64; "
                    "the arguments are too extreme"
                )
        return result

    return checked


# --------------------------------------------------------------------------------------------------------
# Input validation


def _positive(name: str, value: object) -> float:
    return _validate.real(name, value, low=0.0, low_open=True)


def _nonnegative(name: str, value: object) -> float:
    return _validate.real(name, value, low=0.0)


def _delta_open(value: object) -> float:
    """δ in (0, 1): for the formulas that need δ > 0."""
    return _validate.real("delta", value, low=0.0, high=1.0, low_open=True, high_open=True)


def _delta_half_open(value: object) -> float:
    """δ in [0, 1)."""
    return _validate.real("delta", value, low=0.0, high=1.0, high_open=True)


def _count(name: str, value: object) -> int:
    return _validate.integer(name, value, low=1)


def _feasible_root(excess: Callable[[float], float], infeasible: float, feasible: float) -> float:
    """The root of a monotone ``excess`` between ``excess(infeasible) > 0 >= excess(feasible)``.

    Solved with Brent's method to relative tolerance ``_RTOL``, then moved towards ``feasible`` in steps of
    ``_RTOL`` (relative) until ``excess <= 0``, so the answer never misses its target by rounding.
    """
    lo, hi = sorted((infeasible, feasible))
    from scipy import optimize  # imported on use: scipy costs a second at `import dponline`
    root = optimize.brentq(excess, lo, hi, xtol=np.finfo(float).tiny, rtol=_RTOL)
    step = 1.0 + _RTOL if feasible > infeasible else 1.0 - _RTOL
    for _ in _steps("moving the root to the feasible side", 10_000):
        if not excess(root) > 0.0:
            return root
        root *= step
    raise AssertionError("unreachable: _steps raises")  # pragma: no cover
