"""The pickled form of dponline's Python objects: one checksummed container (the core's state format: magic,
format version, length, CRC-32C; see ``rust/dponline-core/src/state.rs``) around the object's state, so that a
damaged, truncated or extended pickle is refused with :class:`~dponline.errors.StateError` instead of loading
with silently changed parameters."""

from __future__ import annotations

import functools
import inspect
import pickle
from typing import Any, ClassVar

import numpy as np

from . import _core
from .errors import InvalidInputError, StateError

__all__ = [
    "seal",
    "unseal",
    "restore",
    "NativeState",
    "MechanismState",
    "check_agrees",
    "recording_calibration",
    "recalibrated",
]


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


def restore(cls: type, state: bytes, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
    """Rebuild a pickled dponline object of class ``cls`` from its ``state`` (what its ``__reduce__`` names, so
    that unpickling never yields an instance whose ``__setstate__`` did not run). ``args``/``kwargs`` go to
    ``cls.__new__`` (placeholder sizes of a native class, replaced by the state).

    Raises:
        StateError: ``cls`` is not a dponline class, or its ``__setstate__`` refuses the state.
    """
    if not (isinstance(cls, type) and cls.__module__.startswith("dponline.") and hasattr(cls, "__setstate__")):
        raise StateError(f"cannot restore an object of class {cls!r}: not a dponline class")
    if not (isinstance(args, tuple) and isinstance(kwargs, (dict, type(None)))):
        raise StateError(f"cannot restore an object of class {cls.__name__}: the pickle is damaged")
    obj = cls.__new__(cls, *args, **(kwargs or {}))  # type: ignore[call-overload]
    obj.__setstate__(state)
    return obj


class NativeState:
    """Pickling of a Python object around a native one (``self._core``, an instance of ``_core_type``: a
    ``dponline._core`` class with ``to_bytes`` and a static ``from_bytes``): the object's attributes, ``_core``
    as its state bytes, sealed by :func:`seal`; restored through :func:`restore`. A subclass adds what else it
    needs with ``_pack_state``/``_unpack_state``. (Learners restore through their constructor instead:
    :class:`dponline.learners._base.Learner`.)"""

    _core: Any
    _core_type: ClassVar[Any]

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore, (type(self), self.__getstate__()))

    def __getstate__(self) -> bytes:
        state = self.__dict__.copy()
        state["_core"] = self._core.to_bytes()
        return seal(self._pack_state(state))

    def __setstate__(self, state: bytes) -> None:
        value = unseal(state, type(self).__name__, dict)
        value["_core"] = self._core_type.from_bytes(value["_core"])
        self.__dict__.update(self._unpack_state(value))

    def _pack_state(self, state: dict[str, Any]) -> dict[str, Any]:
        return state

    def _unpack_state(self, state: dict[str, Any]) -> dict[str, Any]:
        return state


def _checked_state(state: Any) -> tuple[bytes, dict[str, Any]]:
    """A pickled mechanism's state, ``(core bytes, attributes)``, from its checksummed container
    (:mod:`dponline._state`), or :class:`StateError`."""
    value = unseal(state, "mechanism", tuple)
    if len(value) != 2 or not isinstance(value[0], bytes) or not isinstance(value[1], dict):
        raise StateError("cannot restore mechanism: the pickled state is not a dponline state")
    return value


def _attributes(mechanism: Any) -> dict[str, Any]:
    """What a mechanism pickles beside its native state: its attributes, except a guarantee that its declared
    calibration recomputes on restore."""
    attributes = dict(mechanism.__dict__)
    if "_calibration" in attributes:
        attributes.pop("_privacy", None)
    return attributes


def _recalibrate(mechanism: Any, attributes: dict[str, Any]) -> None:
    """Recompute the guarantee of a restored calibrated mechanism from its declared arguments (and check its
    noise against them); see :func:`dponline.learners._base.recalibrated`."""
    declared = attributes.get("_calibration")
    if declared is None:
        attributes.pop("_privacy", None)  # a guarantee without its calibration is not trusted
        return
    if not isinstance(declared, dict):
        raise StateError(f"cannot restore {type(mechanism).__name__}: the pickled state is not a dponline state")
    attributes["_privacy"] = recalibrated(mechanism, declared)


class MechanismState:
    """Pickling of a mechanism of :mod:`dponline.aggregation` (a subclass of a native mechanism class): the native
    state (its
    ``__getstate__``) and the attributes (:func:`_attributes`) in one checksummed container; restored through
    :func:`dponline.restore` with placeholder constructor arguments, then the native state in place, the
    guarantee recomputed from the declared calibration (:func:`_recalibrate`) and :meth:`_check_restored`."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore, (type(self), self.__getstate__(), *self.__getnewargs_ex__()))  # type: ignore[attr-defined]

    def __getstate__(self) -> bytes:
        return seal((super().__getstate__(), _attributes(self)))  # type: ignore[misc]

    def __setstate__(self, state: bytes) -> None:
        core_state, attributes = _checked_state(state)
        super().__setstate__(core_state)  # type: ignore[misc]
        _recalibrate(self, attributes)
        self._check_restored()
        self.__dict__.update(attributes)

    def _check_restored(self) -> None:
        """Refuse a restored native state of another kind (nothing to check for the tree)."""


# The attributes of a native object that its declared arguments determine, compared on restore (those it has).
_DETERMINED = ("params", "noise", "scale", "mechanism", "sampler", "dim", "horizon", "kind", "padded")


def declared_of(signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of a call by name, the first (``self``/``cls``) left out and the seed replaced by a stand-in
    that only says whether there was one (a root seed would let a reader of a pickle strip the noise of every
    past release)."""
    declared = dict(list(signature.bind(*args, **kwargs).arguments.items())[1:])
    if "seed" in declared:
        declared["seed"] = None if declared["seed"] is None else 0
    return declared


def recording_calibration(calibrated: Any) -> Any:
    """Wrap a mechanism's ``calibrated`` classmethod (under ``@classmethod``) so that the mechanism keeps its
    declared arguments (``_calibration``): on restore the guarantee is recomputed from them (see
    :func:`recalibrated`), never read back from the pickle."""
    signature = inspect.signature(calibrated)

    @functools.wraps(calibrated)
    def recorded(cls: Any, *args: Any, **kwargs: Any) -> Any:
        built = calibrated(cls, *args, **kwargs)
        built._calibration = declared_of(signature, (cls, *args), kwargs)
        return built

    return recorded


def recalibrated(restored: Any, declared: dict[str, Any]) -> Any:
    """The guarantee of a restored mechanism, recomputed by its ``calibrated`` from the ``declared`` arguments;
    the restored mechanism must agree with the one they build.

    Raises:
        StateError: the declared arguments are refused, or the restored noise differs from their calibration.
    """
    what = type(restored).__name__
    try:
        fresh = type(restored).calibrated(**declared)
    except (TypeError, InvalidInputError) as e:
        raise StateError(f"cannot restore {what}: its declared arguments are refused ({e})") from None
    check_agrees(what, fresh, restored)
    return fresh.privacy


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_agrees(what: str, fresh: Any, restored: Any, drawn: tuple[str, ...] = ()) -> None:
    """Refuse a restored native object that disagrees with the one its declared arguments build.

    ``drawn``: the ``params`` keys that are random draws of the object's own generator rather than functions of
    its declared arguments (the rebuilt object has another seed), left out of the comparison.

    Raises:
        StateError: naming the first attribute that differs (e.g. the noise scale).
    """
    for name in _DETERMINED:
        if not hasattr(fresh, name):
            continue
        mine, theirs = getattr(fresh, name), getattr(restored, name)
        if name == "params" and drawn:
            mine = {k: v for k, v in mine.items() if k not in drawn}
            theirs = {k: v for k, v in theirs.items() if k not in drawn}
        if not _same(mine, theirs):
            raise StateError(
                f"cannot restore {what}: its native state's {name} differs from what its declared arguments imply "
                "(the state is damaged or was altered)"
            )
