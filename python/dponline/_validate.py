"""The one set of argument checks used at every boundary of dponline.

Every Python wrapper validates its arguments here; the compiled classes of ``dponline._core`` apply the same
rules with the same messages natively (``rust/dponline-py/src/validate.rs``, without calling back into Python),
so a value is accepted or refused, with the same message, wherever it is passed.

Rules:

* **real numbers**: ``int``, ``float`` and NumPy integer/floating scalars (anything registered as
  ``numbers.Real``); never ``bool``, ``str`` or arrays. NaN and infinities raise :class:`NonFiniteError`.
* **integers**: ``int`` and NumPy integer scalars (anything with ``__index__``); never ``bool`` or ``float``
  (``1e6`` is refused: write ``10**6``).
* **options**: one of a fixed set of strings (the stubs declare them as ``Literal``).
* **flags**: ``bool`` or NumPy ``bool_``.
* **arrays**: anything NumPy converts to float64, of the expected shape, every entry finite; never complex, nor a
  masked array with masked entries.

A refused value raises :class:`InvalidInputError` (a ``ValueError``) whose message names the argument, what is
allowed and what was given.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence
from typing import TypeVar, cast

import numpy as np

from .errors import InvalidInputError, NonFiniteError

__all__ = ["real", "integer", "option", "flag", "real_array", "optional_real", "unmasked", "row_schedule"]

_Option = TypeVar("_Option", bound=str)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


def real(
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite ``float`` within the given bounds.

    Raises:
        InvalidInputError: not a real number (``bool``, ``str``, arrays are refused), or out of range.
        NonFiniteError: NaN or an infinity.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{name} must be a real number, got {_shown(value)} ({type(value).__name__})")
    try:
        x = float(value)
    except OverflowError:  # an int beyond float64 (e.g. 10**400)
        raise InvalidInputError(f"{name} must be a finite real number, got an integer too large for float64") from None
    bounds = _range_text(low, high, low_open, high_open)
    allowed = bounds if bounds.startswith("in ") else (f"finite and {bounds}" if bounds else "finite")
    if not math.isfinite(x):
        raise NonFiniteError(f"{name} must be {allowed}, got {x!r}")
    if low is not None and (x < low or (low_open and x == low)):
        raise InvalidInputError(f"{name} must be {allowed}, got {x!r}")
    if high is not None and (x > high or (high_open and x == high)):
        raise InvalidInputError(f"{name} must be {allowed}, got {x!r}")
    return x


def optional_real(name: str, value: object, **bounds: float | bool | None) -> float | None:
    """``None`` or :func:`real` of ``value``."""
    return None if value is None else real(name, value, **bounds)  # type: ignore[arg-type]


def integer(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``[low, high]``.

    Raises:
        InvalidInputError: not an integer (``bool`` and ``float`` are refused), or out of range.
    """
    if isinstance(value, (bool, np.bool_)) or not hasattr(type(value), "__index__"):
        hint = ""
        if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
            hint = f": write {int(value)} (e.g. 10**6 rather than 1e6, a float)"
        raise InvalidInputError(f"{name} must be an integer, got {_shown(value)} ({type(value).__name__}){hint}")
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:  # e.g. an array with __index__ that refuses (more than one element, float dtype)
        raise InvalidInputError(f"{name} must be an integer, got {_shown(value)} ({type(value).__name__})") from None
    if (low is not None and n < low) or (high is not None and n > high):
        allowed = " and ".join(
            part for part in (f">= {low}" if low is not None else "", f"<= {high}" if high is not None else "") if part
        )
        raise InvalidInputError(f"{name} must be an integer {allowed}, got {n}")
    return n


def option(name: str, value: object, options: Sequence[_Option]) -> _Option:
    """``value`` if it is one of ``options`` (typed as their ``Literal``, e.g. :data:`dponline._options.NOISES`).

    Raises:
        InvalidInputError: any other value.
    """
    if not isinstance(value, str) or value not in options:
        raise InvalidInputError(f"{name} must be one of {', '.join(map(repr, options))}; got {_shown(value)}")
    return cast(_Option, value)


def flag(name: str, value: object) -> bool:
    """``value`` as a ``bool`` (``bool`` or NumPy ``bool_`` only).

    Raises:
        InvalidInputError: any other type.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidInputError(f"{name} must be True or False, got {_shown(value)}")
    return bool(value)


def row_schedule(horizon: object, resample: object, seed: object) -> tuple[int | None, str, int | None]:
    """The ``(horizon, order, seed)`` of a native loss or submodular family, from the public ``horizon`` (``None``
    or an integer in ``[1, 2**63)``), ``resample`` (``None``: the rows in order, ``"sequential"``; ``"cycle"`` or
    ``"bootstrap"``) and ``seed`` (``None`` or an integer in ``[0, 2**64)``), checked in that order.

    Raises:
        InvalidInputError: a value outside those.
    """
    order = "sequential" if resample is None else option("resample", resample, ("cycle", "bootstrap"))
    rounds = None if horizon is None else integer("horizon", horizon, low=1, high=2**63 - 1)
    return rounds, order, None if seed is None else integer("seed", seed, low=0, high=2**64 - 1)


def _is_complex(value: object) -> bool:
    try:
        return bool(np.iscomplexobj(value))
    except (TypeError, ValueError):  # ragged or unconvertible: refused below with its own message
        return False


def unmasked(name: str, value: object) -> object:
    """``value`` unless it is a NumPy masked array with masked entries (NumPy's conversions read the hidden
    values under the mask, so using them would silently use data the caller excluded).

    Raises:
        InvalidInputError: a masked array with at least one masked entry.
    """
    if isinstance(value, np.ma.MaskedArray):
        masked = int(np.count_nonzero(np.ma.getmaskarray(value)))
        if masked:
            raise InvalidInputError(
                f"{name} must not have masked entries, got a masked array with {masked} masked: the values under a "
                "mask would be used; fill them (.filled(...)) or drop them first"
            )
    return value


def real_array(name: str, value: object, shape: tuple[int | None, ...]) -> np.ndarray:
    """``value`` as a C-contiguous float64 array of ``shape`` (``None`` matches any length), all finite.

    Raises:
        InvalidInputError: not convertible to float64 (strings, objects), or the wrong shape.
        NonFiniteError: a NaN or an infinity (the message gives the index of the first one).
    """
    if isinstance(value, (str, bytes)):
        raise InvalidInputError(f"{name} must be an array of real numbers, got {_shown(value)}")
    if _is_complex(value):
        raise InvalidInputError(f"{name} must be an array of real numbers, got complex values")
    unmasked(name, value)
    try:
        arr = np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be an array of real numbers, got {_shown(value)} ({exc})") from None
    if arr.ndim != len(shape) or any(want not in (None, got) for got, want in zip(arr.shape, shape, strict=True)):
        dims = ", ".join("m" if w is None else str(w) for w in shape)
        want_text = f"({dims},)" if len(shape) == 1 else f"({dims})"
        raise InvalidInputError(f"{name} must have shape {want_text}, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        raise NonFiniteError(f"{name} must be finite, got {arr[index]!r} at index {where}")
    return arr
