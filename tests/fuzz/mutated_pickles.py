"""Mutated pickles of every learner and mechanism (issue 23): bit flips, truncations, extensions and overwritten
bytes of a real pickle. Every load must either be refused with an exception (``DPOnlineError`` from dponline's
checks, or an error of the pickle parser itself for the few bytes outside dponline's state) or give an object
whose parameters and guarantee equal the original's; no load and no later call may raise a ``BaseException``
that is not an ``Exception`` (PyO3's ``PanicException``).

Run: ``python tests/fuzz/mutated_pickles.py [mutations per class, default 100000] [class ...]``; prints the
outcome counts per class and the time taken. ``tests/test_state_integrity.py`` runs the same checks briefly.
"""

from __future__ import annotations

import pickle
import random
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

import dponline
from dponline import aggregation, local_dp
from dponline.domains import L2Ball, Simplex, UniformMatroid

OUTCOMES = ("refused", "refused by the pickle parser", "not the class", "identical", "silent change", "panic")


def _played(learner: Any, rounds: int, loss: Callable[[Any], Any]) -> Any:
    for _ in range(rounds):
        learner.tell(loss(learner.ask()))
    return learner


def _pushed(mechanism: Any, rows: int) -> Any:
    for i in range(rows):
        mechanism.push(np.full(mechanism.dim, 0.1 * i))
    return mechanism


FACTORIES: dict[str, Callable[[], Any]] = {
    "PrivateBandit": lambda: _played(
        dponline.PrivateBandit(Simplex(3), horizon=100, epsilon=1.0, lipschitz=1.0, seed=1), 7, lambda x: 0.3
    ),
    "DPFTRL": lambda: _played(
        dponline.DPFTRL(Simplex(3), horizon=100, epsilon=1.0, loss_bound=1.0, seed=2), 7, lambda x: [0.1, 0.5, 0.2]
    ),
    "DPFTPL": lambda: _played(
        dponline.DPFTPL(Simplex(3), horizon=100, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=3),
        7,
        lambda x: [0.1, 0.5, 0.2],
    ),
    "NoisyOCO": lambda: _played(
        dponline.NoisyOCO(UniformMatroid(4, 2), horizon=100, epsilon=1.0, lipschitz=1.0, seed=12),
        7,
        lambda x: [0.1, 0.5, 0.2, -0.3],
    ),
    "PrivateEXP3": lambda: _played(dponline.PrivateEXP3(4, horizon=100, epsilon=1.0, seed=4), 7, lambda a: 0.5),
    "PrivateSCRiBLe": lambda: _played(
        dponline.PrivateSCRiBLe(L2Ball(3), horizon=100, epsilon=1.0, loss_bound=1.0, seed=5), 7, lambda x: 0.2
    ),
    "PrivateSubmodular": lambda: dponline.PrivateSubmodular(6, 2, horizon=50, epsilon=1.0, delta=1e-6, seed=6),
    "PrivateDRSubmodular": lambda: dponline.PrivateDRSubmodular(
        UniformMatroid(5, 2, base=False), horizon=16, epsilon=1.0, gradient_bound=1.0, seed=7
    ),
    "CoordinatewiseLearner": lambda: _played(local_dp.CoordinatewiseLearner(3, 1.0, seed=8), 5, lambda w: [0.1] * 3),
    "LocalLaplaceRandomizer": lambda: local_dp.LocalLaplaceRandomizer(3, bound=1.0, seed=9),
    "TreeAggregator": lambda: _pushed(
        aggregation.TreeAggregator.calibrated(2, 20, epsilon=1.0, sensitivity=1.0, seed=10), 5
    ),
    "HonakerTree": lambda: _pushed(aggregation.HonakerTree.calibrated(2, 20, epsilon=1.0, sensitivity=1.0, seed=11), 5),
}


def summary(obj: Any) -> tuple[Any, ...]:
    """What a restored object must keep: its class, parameters, guarantee, round and whole state."""
    params = getattr(obj, "params", None)
    params = None if params is None else {k: repr(v) for k, v in params.items()}
    return (type(obj), params, repr(getattr(obj, "privacy", None)), getattr(obj, "t", None), obj.__getstate__())


def mutate(data: bytes, kind: int, position: float, value: int) -> bytes:
    """One mutation of ``data``: ``kind`` 0 flips bit ``position``, 1 truncates at ``position``, 2 appends
    ``value % 8 + 1`` bytes, 3 overwrites the byte at ``position`` (``position`` in ``[0, 1)``, scaled)."""
    m = bytearray(data)
    if kind == 0:
        bit = int(position * len(m) * 8)
        m[bit // 8] ^= 1 << (bit % 8)
    elif kind == 1:
        del m[int(position * len(m)) :]
    elif kind == 2:
        m.extend(bytes([value % 256]) * (value % 8 + 1))
    else:
        at = int(position * len(m))
        m[at] = (m[at] + 1 + value % 255) % 256
    return bytes(m)


def exercise(obj: Any) -> None:
    """Call what a user would call next on a restored object (a panic there would be a silent failure)."""
    for name in ("ask", "initial"):
        method = getattr(obj, name, None)
        if method is not None:
            try:
                method()
            except dponline.DPOnlineError:
                pass
            return


def outcome(original: tuple[Any, ...], data: bytes) -> str:
    """Load ``data`` and classify the result (see :data:`OUTCOMES`); a loaded object of the original class must
    be identical."""
    try:
        obj = pickle.loads(data)  # noqa: S301 - the point of the test
    except dponline.DPOnlineError:
        return "refused"
    except Exception:
        return "refused by the pickle parser"
    except BaseException:
        return "panic"
    if type(obj) is not original[0]:
        # The pickle's own opcodes were altered so that it no longer builds the object (e.g. STOP early returns
        # the state bytes): not a changed learner, and nothing dponline runs.
        return "not the class"
    try:
        same = summary(obj) == original
        exercise(obj)
    except Exception:
        return "silent change"
    except BaseException:
        return "panic"
    return "identical" if same else "silent change"


def state_outcome(obj: Any, original: tuple[Any, ...], state: bytes) -> str:
    """Restore a mutated ``state`` (what ``__getstate__`` returned) into a fresh instance: only ``DPOnlineError``
    or an identical object are acceptable."""
    make, args = obj.__reduce_ex__(5)[:2]
    fresh = make(*args)
    try:
        fresh.__setstate__(state)
    except dponline.DPOnlineError:
        return "refused"
    except Exception:
        return "silent change"
    except BaseException:
        return "panic"
    return "identical" if summary(fresh) == original else "silent change"


def run(name: str, count: int, seed: int = 0) -> tuple[Counter[str], float]:
    obj = FACTORIES[name]()
    original = summary(obj)
    data = pickle.dumps(obj)
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    began = time.perf_counter()
    # Bytes appended after the pickle's STOP opcode are never read by Python's unpickler (it stops at STOP): such a
    # load is the original load, checked once here and then counted without repeating it.
    assert outcome(original, data + b"\x00junk") == "identical"
    for _ in range(count):
        mutated = mutate(data, rng.randrange(4), rng.random(), rng.randrange(1 << 16))
        unread = mutated.startswith(data)
        counts["identical" if unread else outcome(original, mutated)] += 1
    return counts, time.perf_counter() - began


def main(argv: list[str]) -> int:
    count = int(argv[1]) if len(argv) > 1 else 100_000
    names = argv[2:] or list(FACTORIES)
    # A mutated opcode can make Python's unpickler itself allocate gigabytes (e.g. LONG_BINPUT with a memo index
    # near 2^30 grows the memo to that size): cap this process's memory so that such loads fail fast with
    # MemoryError (counted as refused by the pickle parser) instead of crowding the machine.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    bad = 0
    began = time.perf_counter()
    print(f"{'class':24s} {'bytes':>6s} " + " ".join(f"{o:>12.12s}" for o in OUTCOMES) + "   seconds")
    for name in names:
        counts, seconds = run(name, count)
        size = len(pickle.dumps(FACTORIES[name]()))
        print(f"{name:24s} {size:6d} " + " ".join(f"{counts[o]:12d}" for o in OUTCOMES) + f"   {seconds:7.1f}")
        bad += counts["silent change"] + counts["panic"]
    print(f"{count} mutations per class, {time.perf_counter() - began:.0f} s in all; silent changes + panics: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
