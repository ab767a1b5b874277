"""The pickled form of dponline's Python objects: one checksummed container (the core's state format: magic,
format version, length, CRC-32C; see ``rust/dponline-core/src/state.rs``) around the object's state, so that a
damaged, truncated or extended pickle is refused with :class:`~dponline.errors.StateError` instead of loading
with silently changed parameters."""

from __future__ import annotations

import pickle
from typing import Any

from . import _core
from .errors import StateError

__all__ = ["seal", "unseal"]


def seal(value: Any) -> bytes:
    """``value`` (plain data and dponline objects) pickled inside the checksummed container."""
    return _core.seal_state(pickle.dumps(value, protocol=5))


def unseal(state: object, what: str, kind: type | tuple[type, ...] = object) -> Any:
    """The value sealed by :func:`seal` in ``state``, which must be an instance of ``kind``.

    Raises:
        StateError: naming ``what``: not a dponline state, damaged (checksum mismatch), truncated or extended
            bytes, another format version, or a value of another shape.
    """
    if not isinstance(state, bytes):
        raise StateError(f"cannot restore {what}: the pickled state is not a dponline state")
    try:
        value = pickle.loads(_core.open_state(state))  # noqa: S301 - our own pickle, checksummed
    except StateError as e:
        raise StateError(f"cannot restore {what}: {e}") from None
    except Exception as e:
        raise StateError(f"cannot restore {what}: the pickled state does not decode ({type(e).__name__})") from None
    if not isinstance(value, kind):
        raise StateError(f"cannot restore {what}: the pickled state is not a dponline state")
    return value
