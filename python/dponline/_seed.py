"""Turning a user's ``seed`` into the core's 256-bit seed material."""

from __future__ import annotations

import numpy as np

from .errors import InvalidInputError

SeedLike = None | int | np.random.SeedSequence | np.random.Generator

__all__ = ["SeedLike", "seed_words"]


def seed_words(seed: SeedLike, secure: bool = False) -> list[int]:
    """Return four 64-bit words of seed material for the core's xoshiro256++ generator.

    Args:
        seed: ``None`` (no seed: the core keys ChaCha20 from the OS and ignores the words, all zero), a
            non-negative ``int``, a ``numpy.random.SeedSequence`` (its ``generate_state``; pass ``ss.spawn(k)``
            children for independent objects) or a ``numpy.random.Generator`` (four words are drawn from it,
            advancing it).
        secure: ``True`` asserts that the object is OS-keyed: ``seed`` must then be ``None``.

    Raises:
        InvalidInputError: for a negative int, an unsupported type, or a seed combined with ``secure=True``.
    """
    if secure:
        if seed is not None:
            raise InvalidInputError(
                "seed must be None when secure=True: the secure generator is keyed from the operating "
                f"system and cannot be reproduced, got seed={seed!r}"
            )
        return [0, 0, 0, 0]
    if seed is None:
        return [0, 0, 0, 0]
    if isinstance(seed, np.random.Generator):
        words = seed.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
        return [int(w) for w in words]
    if isinstance(seed, np.random.SeedSequence):
        seq = seed
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if int(seed) < 0:
            raise InvalidInputError(f"seed must be a non-negative int, got {seed}")
        seq = np.random.SeedSequence(int(seed))
    else:
        raise InvalidInputError(
            "seed must be None, a non-negative int, a numpy.random.SeedSequence or a numpy.random.Generator, "
            f"got {type(seed).__name__}"
        )
    return [int(w) for w in seq.generate_state(4, dtype=np.uint64)]
