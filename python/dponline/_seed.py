"""Turning a user's ``seed`` into the core's 256-bit seed material."""

from __future__ import annotations

import numpy as np

from . import _core

SeedLike = None | int | np.random.SeedSequence | np.random.Generator

__all__ = ["SeedLike", "seed_words"]


def seed_words(seed: SeedLike, secure: bool = False) -> list[int]:
    """Return four 64-bit words of seed material for the core's xoshiro256++ generator: the words every native
    constructor derives from its ``seed`` (natively, ``rust/dponline-py/src/convert.rs``).

    Args:
        seed: ``None`` (no seed: the core keys ChaCha20 from the OS and ignores the words, all zero), a
            non-negative ``int``, a ``numpy.random.SeedSequence`` (its ``generate_state``; pass ``ss.spawn(k)``
            children for independent objects) or a ``numpy.random.Generator`` (four words are drawn from it,
            advancing it).
        secure: ``True`` asserts that the object is OS-keyed: ``seed`` must then be ``None``.

    Raises:
        InvalidInputError: for a negative int, an unsupported type, or a seed combined with ``secure=True``.
    """
    return list(_core.seed_words(seed, secure))
