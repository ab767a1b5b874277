"""Pure-Python/numpy peers of dponline's native loops, for the comparison scripts in ``benches/``.

* :class:`NumpyTree` — the padded binary mechanism (Chan-Shi-Song 2011 with Agarwal-Singh 2017 padding),
  one ``push`` per step, O(dim · log T) work per step: per-level arrays of exact partial sums and noisy nodes,
  one fresh noise vector per new node, the covering nodes summed, padding draws added.
* :class:`PyScalarTree` — the same for ``dim = 1`` in plain Python floats (``random.Random``): at dim 1 numpy's
  per-call overhead dominates, and this is what a Python user would write for a scalar stream.
* :func:`numpy_offline_release` — the same releases for a whole block of rows known in advance, vectorised
  over the rows (no Python loop per step). Not an online algorithm, but what a numpy user holding the whole
  stream would write; the fair peer of ``push_many``.
* :func:`dpcrpy_binmech` — dpcrpy's ``BinMech`` (the plain, unpadded binary mechanism), with a noise
  plug-in that draws one independent noise vector per node when ``dim > 1``.

These are benchmark baselines, written to be reasonably efficient, not strawmen: they use the same
O(1)-per-coordinate padding samplers as the core (a sum of ``r`` Gaussians is ``sqrt(r)·sigma·Z``; a sum of
``r`` Laplace draws is ``Gamma(r, b) − Gamma(r, b)``).
"""

from __future__ import annotations

import math
import random

import numpy as np


def ceil_log2(horizon: int) -> int:
    """``⌈log₂ T⌉`` (0 for ``T = 1``)."""
    return (horizon - 1).bit_length() if horizon > 1 else 0


class NumpyTree:
    """Padded binary mechanism in numpy, one step per :meth:`push` (see the module docs)."""

    def __init__(
        self, dim: int, horizon: int, scale: float, noise: str = "gaussian", rng: np.random.Generator | None = None
    ) -> None:
        if noise not in ("gaussian", "laplace"):
            raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
        self.dim, self.horizon, self.scale, self.noise = dim, horizon, float(scale), noise
        self.rng = np.random.default_rng(0) if rng is None else rng
        levels = max(1, horizon.bit_length())
        self.draws = max(1, ceil_log2(horizon))  # draws in every padded release
        self.alpha = np.zeros((levels, dim))  # alpha[j]: exact sum of the latest block at level j
        self.noisy = np.zeros((levels, dim))  # noisy[j]: alpha[j] + that node's noise
        self.cover: list[int] = []  # levels of the dyadic cover of [1, t] (set bits of t), decreasing
        self.t = 0
        self.initial = self._padding(self.draws)

    def _node_noise(self) -> np.ndarray:
        if self.noise == "gaussian":
            return self.rng.normal(0.0, self.scale, self.dim)
        return self.rng.laplace(0.0, self.scale, self.dim)

    def _padding(self, r: int) -> np.ndarray:
        if self.noise == "gaussian":
            return self.rng.normal(0.0, self.scale * math.sqrt(r), self.dim)
        if r == 1:
            return self.rng.laplace(0.0, self.scale, self.dim)
        return self.rng.gamma(r, self.scale, self.dim) - self.rng.gamma(r, self.scale, self.dim)

    def push(self, x: np.ndarray) -> np.ndarray:
        if self.t >= self.horizon:
            raise RuntimeError("horizon exhausted")
        t = self.t = self.t + 1
        i = (t & -t).bit_length() - 1  # level of the node (t - 2^i, t] that closes now
        a = self.alpha
        if i:
            # alpha[0..i-1] hold the blocks (t-2^i, t-2^(i-1)], ..., (t-2, t-1]: together (t-2^i, t-1].
            np.sum(a[:i], axis=0, out=a[i])
            a[i] += x
        else:
            a[0] = x
        np.add(a[i], self._node_noise(), out=self.noisy[i])
        cover = self.cover
        while cover and cover[-1] < i:
            cover.pop()
        cover.append(i)
        out = self.noisy[cover].sum(axis=0)
        r = self.draws - len(cover)
        if r:
            out += self._padding(r)
        return out


class PyScalarTree:
    """:class:`NumpyTree` for ``dim = 1`` in plain Python floats (no numpy call per step)."""

    def __init__(self, horizon: int, scale: float, noise: str = "gaussian", seed: int = 0) -> None:
        if noise not in ("gaussian", "laplace"):
            raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
        self.horizon, self.scale, self.gaussian = horizon, float(scale), noise == "gaussian"
        self.random = random.Random(seed)
        levels = max(1, horizon.bit_length())
        self.draws = max(1, ceil_log2(horizon))
        self.alpha = [0.0] * levels
        self.noisy = [0.0] * levels
        self.cover: list[int] = []
        self.t = 0
        self.initial = self._padding(self.draws)

    def _padding(self, r: int) -> float:
        rnd, b = self.random, self.scale
        if b == 0.0:
            return 0.0
        if self.gaussian:
            return rnd.gauss(0.0, b * math.sqrt(r))
        if r == 1:
            return b * (rnd.expovariate(1.0) - rnd.expovariate(1.0))
        return rnd.gammavariate(r, b) - rnd.gammavariate(r, b)

    def push(self, x: float) -> float:
        if self.t >= self.horizon:
            raise RuntimeError("horizon exhausted")
        t = self.t = self.t + 1
        i = (t & -t).bit_length() - 1
        a, noisy, rnd, b = self.alpha, self.noisy, self.random, self.scale
        a[i] = sum(a[:i]) + x
        if self.gaussian:
            noisy[i] = a[i] + rnd.gauss(0.0, b)
        else:
            noisy[i] = a[i] + b * (rnd.expovariate(1.0) - rnd.expovariate(1.0))
        cover = self.cover
        while cover and cover[-1] < i:
            cover.pop()
        cover.append(i)
        out = sum([noisy[j] for j in cover])
        r = self.draws - len(cover)
        if r:
            out += self._padding(r)
        return out


def numpy_offline_release(
    X: np.ndarray, horizon: int, scale: float, noise: str, rng: np.random.Generator
) -> np.ndarray:
    """Releases 1..m of the padded binary mechanism for the rows of ``X`` (shape ``(m, dim)``), vectorised.

    Same output distribution as ``m`` pushes into a fresh :class:`NumpyTree` (and dponline's tree). Every
    level draws the noise of its odd-indexed nodes (the only ones ever released) in one call.
    """
    m, dim = X.shape
    out = np.cumsum(X, axis=0)
    t = np.arange(1, m + 1)
    draws = max(1, ceil_log2(horizon))
    for j in range(m.bit_length()):
        k = t >> j
        sel = np.flatnonzero(k & 1)
        n_nodes = ((m >> j) + 1) // 2
        if noise == "gaussian":
            nodes = rng.normal(0.0, scale, (n_nodes, dim))
        else:
            nodes = rng.laplace(0.0, scale, (n_nodes, dim))
        out[sel] += nodes[k[sel] >> 1]
    r = (draws - np.bitwise_count(t)).astype(np.float64)[:, None]
    if noise == "gaussian":
        out += np.sqrt(r) * rng.normal(0.0, scale, (m, dim))
    else:
        shape = np.broadcast_to(r, (m, dim))
        out += rng.gamma(shape, scale) - rng.gamma(shape, scale)
    return out


def dpcrpy_binmech(dim: int, horizon: int, scale: float, noise: str = "gaussian"):
    """dpcrpy's ``BinMech`` over ``2^⌈log₂ horizon⌉`` steps with node noise of scale ``scale`` per coordinate.

    dpcrpy draws node noise with ``noiMech.genNoise()`` — a scalar. For ``dim > 1`` the noise plug-in below
    returns a ``(dim,)`` vector instead, which ``BinMech`` handles unchanged (its arithmetic is ``+=``), so
    every coordinate gets independent noise. Release with ``mech.dpRelease(x)[0]``. Not padded.
    """
    from dpcrpy.framework import noiMech
    from dpcrpy.treeMethods.binMech import BinMech

    k_order = ceil_log2(horizon)
    sens = math.sqrt(k_order + 1) if noise == "gaussian" else k_order + 1
    base = noiMech.GaussNoiMech if noise == "gaussian" else noiMech.LapNoiMech

    class VectorNoise(base):  # type: ignore[misc, valid-type]
        def genNoise(self, shape=None):  # noqa: N802 - dpcrpy's method name
            return super().genNoise(dim)

    plugin = VectorNoise if dim > 1 else base  # dim = 1: dpcrpy as shipped, scalar releases
    # BinMech rescales the plug-in by its own sensitivity (sqrt(kOrder+1) or kOrder+1): undo it so every
    # node's noise has exactly ``scale``.
    plug = plugin(sigma0=scale / sens) if noise == "gaussian" else plugin(b0=scale / sens)
    return BinMech(kOrder=k_order, noiMech=plug)
