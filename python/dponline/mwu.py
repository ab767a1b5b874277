"""Hedge (multiplicative weights, Freund & Schapire 1997) over large action sets.

:class:`Hedge` keeps log-weights ``η·Σ_s g_s(i)`` (minus a running offset), the weights
``exp(log-weight − reference)`` and a sum tree over blocks of 32 weights: a full-information update (payoffs
``g ∈ [0, 1]^n``) is one pass over the weights that also writes the block sums, plus ``n/32`` additions for the
tree; a bandit update of one coordinate costs ``O(32 + log(n/32))``, and so does sampling (a descent to a block,
then a scan of its weights). For small ``η`` the weights are updated multiplicatively (a Taylor polynomial of
``e^{ηg}`` accurate to half an ulp) and recomputed from the log-weights every 64 updates. The log-weights are
renormalised (their log-sum-exp subtracted, so the largest is within ``ln n`` below ``η``) on every exact
update and whenever the weights' sum would exceed ``e^300``, so nothing overflows or underflows over any number
of rounds with payoffs in ``[0, 1]``. It is the expert used by :class:`dponline.PrivateSubmodular`
(Perez-Salazar & Cummings 2021, Algorithm 1) with ``sampler="floating-point"``; the learner's default
(``sampler="exact"``) uses the core's exact Hedge instead (payoffs on a power-of-two grid summed in integers, exact
draws), which is not exposed here. This class makes no privacy claim and has no ``sampler`` option: its draws are
floating-point.

``Hedge(n, eta, *, seed=None, secure=False)``:

* ``update_full(payoffs)`` — ``w(i) ← w(i)·e^{η g(i)}`` for all ``i``; payoffs float64 ``(n,)`` in ``[0, 1]``.
* ``update_one(i, payoff)`` — the same for one action (the others earn 0).
* ``sample(size=1)`` — int64 ``(size,)`` draws from ``w / Σ w``; ``probabilities()`` — float64 ``(n,)``.
* ``log_weights``, ``offset``, ``total``, ``eta``, ``n``; pickles (``to_bytes``/``from_bytes``): a seeded
  Hedge resumes bit-identically; an unseeded one (OS-keyed ChaCha20, the default) re-keys from the OS, as it
  does when copied or in a forked child.

Errors: ``InvalidInputError`` for payoffs outside ``[0, 1]``, an action out of range, ``n = 0``, ``eta <= 0`` or
``eta > 1e100`` (so that log-weights and offset stay finite over any number of updates), a ``size`` or argument
that is not an integer / real number; ``NonFiniteError`` for NaN/inf; ``MemoryError`` for an ``n`` or ``size``
too large to allocate. The state is unchanged when an error is raised.
"""

from __future__ import annotations

from ._core import Hedge

__all__ = ["Hedge"]
