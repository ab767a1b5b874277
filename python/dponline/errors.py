"""The exception hierarchy of dponline.

Every error the library raises on purpose derives from :class:`DPOnlineError`, except that a buffer too large
to allocate raises the builtin :class:`MemoryError` (naming the bytes requested). Errors caused by bad input
also derive from :class:`ValueError`, so ``except ValueError`` keeps working for callers that do not know
dponline. The Rust core maps each of its error variants onto exactly one of these classes (in
``rust/dponline-py/src/errors.rs``).
"""

from __future__ import annotations

__all__ = [
    "DPOnlineError",
    "InvalidInputError",
    "NonFiniteError",
    "HorizonExhaustedError",
    "ProtocolError",
    "InvalidGraphError",
    "StateError",
    "ConvergenceError",
    "ExplorationCappedWarning",
]


class DPOnlineError(Exception):
    """Base class of every error raised by dponline."""


class InvalidInputError(DPOnlineError, ValueError):
    """An argument is outside its allowed range, or has the wrong shape or dtype.

    The message names the argument and the allowed range. The object the call was made on is unchanged.
    """


class NonFiniteError(InvalidInputError):
    """A NaN or infinity was given where a finite number is required. The object is unchanged."""


class InvalidGraphError(InvalidInputError):
    """A graph given to a domain is malformed: an edge out of range, a cycle in a DAG, no s-t path, ..."""


class StateError(DPOnlineError, ValueError):
    """An object's state cannot be used: a pickled/serialized state could not be restored (corrupt bytes or an
    unsupported format version), or the object is being used by another thread at the same time."""


class ConvergenceError(DPOnlineError, RuntimeError):
    """An iterative routine (a calibration bisection, Frank-Wolfe, a Newton or line search) reached its iteration
    cap. The message names the routine and the cap; the object the call was made on is unchanged."""


class ProtocolError(DPOnlineError, RuntimeError):
    """A method was called out of order, e.g. ``tell`` before ``ask``. The object is unchanged."""


class HorizonExhaustedError(ProtocolError):
    """More rounds were requested than the ``horizon`` the object was built for."""


class ExplorationCappedWarning(UserWarning):
    """A learner's exploration rate reached its cap at the given horizon, so it explores every round and cannot
    exploit what it learns; the message names the horizon from which the rate drops below the cap."""
