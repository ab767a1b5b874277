"""Decision sets with linear minimisation oracles (LMOs).

Every domain has ``lmo(direction)`` (a minimising vertex, deterministic ties), ``dim``, ``diameter``,
``contains(x, atol)``, ``interior_point`` with a certified ``inscribed_radius`` (the ball, within the affine
hull, that PrivateBandit needs so every queried point stays feasible: Ene-Nguyen-Vladu 2021, Appendix D),
``affine_dim`` and ``project_tangent``. Domains pickle.

* :class:`Simplex`, :class:`L1Ball`, :class:`L2Ball`, :class:`Box` — the classic convex bodies.
* :class:`UniformMatroid`, :class:`PartitionMatroid` — choose ``k`` items (per block): hypersimplex and
  independence polytopes.
* :class:`GraphicMatroid` — spanning trees or forests of a graph (Kruskal LMO).
* :class:`PathPolytope` — source-target paths of a DAG (shortest-path LMO); ``PathPolytope.from_undirected``
  orients a network away from the source.
* :class:`FlowPolytope` — source-target flows of a value within capacities, in graphs with cycles (network
  simplex LMO).
* :class:`BirkhoffPolytope`, :class:`BipartiteMatchingPolytope` — doubly stochastic matrices and bipartite
  matchings (assignment and shortest-augmenting-path LMOs).
* :class:`NuclearNormBall`, :class:`Spectraplex` — low-rank relaxations and density matrices (Lanczos LMOs).
* :class:`SubmodularBasePolytope` — base polytopes of monotone submodular functions (Edmonds' greedy LMO).
* :class:`KSparsePolytope`, :func:`Hypersimplex` — ``k``-sparse vectors and ``k``-subsets (selection LMOs).
* :class:`LinearProgramPolytope` — any bounded ``{A_ub x ≤ b_ub, A_eq x = b_eq}``, the LMO an LP solved by
  HiGHS through SciPy: a fallback that runs in Python, so the native learners cannot use it.

Matrix domains (Birkhoff, nuclear-norm ball, spectraplex) flatten their points row-major: coordinate
``i·cols + j`` is entry ``(i, j)``.

Example::

    >>> from dponline.domains import UniformMatroid
    >>> UniformMatroid(5, 2).lmo([0.3, -1.0, 0.2, 0.5, -0.1])
    array([0., 1., 0., 0., 1.])
"""

from __future__ import annotations

import numpy as np

from . import _validate
from ._core import (
    BipartiteMatchingPolytope,
    BirkhoffPolytope,
    Box,
    Domain,
    FlowPolytope,
    GraphicMatroid,
    KSparsePolytope,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    PartitionMatroid,
    PathPolytope,
    Simplex,
    Spectraplex,
    SubmodularBasePolytope,
    UniformMatroid,
)
from .errors import InvalidInputError

__all__ = [
    "Domain",
    "Simplex",
    "L1Ball",
    "L2Ball",
    "Box",
    "UniformMatroid",
    "PartitionMatroid",
    "GraphicMatroid",
    "PathPolytope",
    "FlowPolytope",
    "BirkhoffPolytope",
    "BipartiteMatchingPolytope",
    "NuclearNormBall",
    "Spectraplex",
    "SubmodularBasePolytope",
    "KSparsePolytope",
    "Hypersimplex",
    "LinearProgramPolytope",
]


def Hypersimplex(n: int, k: int) -> UniformMatroid:  # noqa: N802 - a domain constructor, named like the set
    """The hypersimplex ``{x ∈ [0, 1]^n : Σx = k}``, the convex hull of the ``k``-subsets' indicator vectors:
    the base polytope of the uniform matroid, returned as ``UniformMatroid(n, k, base=True)``.

    Args:
        n: dimension.
        k: ``0 < k < n``.

    LMO: ones at the ``k`` smallest entries of the direction (lowest index on ties), ``O(n)`` by selection.

    Raises:
        InvalidInputError: ``k`` out of range.

    Example:
        >>> Hypersimplex(4, 2).lmo([0.5, -1.0, 2.0, 0.0])
        array([0., 1., 0., 1.])
    """
    return UniformMatroid(n, k, base=True)


def require_native(domain: object, learner: str) -> Domain:
    """``domain`` if the native learners can run on it; otherwise an :class:`~dponline.InvalidInputError` that
    says why (a :class:`LinearProgramPolytope` solves its LMO in Python, which native loops cannot call) and
    what accepts it."""
    if isinstance(domain, Domain):
        return domain
    if isinstance(domain, LinearProgramPolytope):
        raise InvalidInputError(
            f"domain must be a native dponline.domains domain for {learner}: a LinearProgramPolytope solves its "
            "LMO in Python (HiGHS through SciPy), which the learners' native loops cannot call, so no learner "
            "accepts it (dponline.regret.best_fixed and direct lmo/contains calls do); describe the set with a "
            "native domain (FlowPolytope, BipartiteMatchingPolytope, BirkhoffPolytope, SubmodularBasePolytope, ...)"
        )
    raise InvalidInputError(f"domain must be a dponline.domains domain, got {type(domain).__name__}")


class LinearProgramPolytope:
    """A bounded polytope ``{x ∈ R^n : A_ub x ≤ b_ub, A_eq x = b_eq}`` whose LMO solves a linear program with
    HiGHS (dual simplex, through :func:`scipy.optimize.linprog`): the fallback for sets no native domain
    describes.

    It runs in Python, one LP per call, so it is slow next to the native domains, and the learners' native
    loops cannot call it: every learner refuses it (their error says so). It serves comparators in hindsight
    (:func:`dponline.regret.best_fixed`), checks, and prototyping; express the set with a native domain
    (:class:`FlowPolytope`, :class:`BipartiteMatchingPolytope`, :class:`SubmodularBasePolytope`, …) to learn
    on it.

    Args:
        A_ub: shape ``(p, n)``, with ``b_ub`` of shape ``(p,)``; or both ``None``.
        b_ub: see ``A_ub``.
        A_eq: shape ``(q, n)``, with ``b_eq`` of shape ``(q,)``; or both ``None``.
        b_eq: see ``A_eq``.

    At construction (``2n`` + a few LPs): the bounding box (``diameter`` is its diagonal, an upper bound), the
    implicit equalities (inequalities tight on the whole set, found by maximising bounded slacks until none is
    left to prove strict), the affine hull (``affine_dim``, ``project_tangent``: the null space of the
    equalities by SVD), and the largest ball inside within the affine hull (the Chebyshev centre LP:
    ``interior_point``; ``inscribed_radius`` is recomputed from that centre's slacks, so it certifies the
    centre actually returned). LMO: a vertex (basic solution) of the dual simplex, HiGHS feasibility
    tolerances ``1e-10``.

    Raises:
        InvalidInputError: wrong shapes (naming the array), an empty or unbounded set, a single point, or a
            solver failure (its message is passed on).
        NonFiniteError: NaN or inf in an input, or in a direction.

    Source: HiGHS (Huangfu & Hall 2018, "Parallelizing the dual revised simplex method").
    """

    kind = "LinearProgramPolytope"

    _OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}

    def __init__(
        self,
        A_ub: np.ndarray | None = None,  # noqa: N803 - the names of scipy.optimize.linprog
        b_ub: np.ndarray | None = None,
        A_eq: np.ndarray | None = None,  # noqa: N803
        b_eq: np.ndarray | None = None,
    ) -> None:
        pairs = [("A_ub", A_ub, "b_ub", b_ub), ("A_eq", A_eq, "b_eq", b_eq)]
        n = None
        arrays: list[tuple[np.ndarray, np.ndarray] | None] = []
        for a_name, a, b_name, b in pairs:
            if (a is None) != (b is None):
                raise InvalidInputError(f"{a_name} and {b_name} must be given together")
            if a is None:
                arrays.append(None)
                continue
            a_arr = _validate.real_array(a_name, a, (None, n))
            b_arr = _validate.real_array(b_name, b, (a_arr.shape[0],))
            n = a_arr.shape[1]
            arrays.append((a_arr, b_arr))
        if n is None or n == 0:
            raise InvalidInputError("A_ub or A_eq must be given, with at least one column")
        self._n = n
        self._ub = arrays[0] or (np.zeros((0, n)), np.zeros(0))
        self._eq = arrays[1] or (np.zeros((0, n)), np.zeros(0))
        if self._eq[0].shape[1] != n:
            raise InvalidInputError(f"A_eq must have {n} columns (as A_ub), got {self._eq[0].shape[1]}")
        lower = np.array([self._solve(np.eye(n)[i])[i] for i in range(n)])
        upper = np.array([self._solve(-np.eye(n)[i])[i] for i in range(n)])
        self._diameter = float(np.linalg.norm(upper - lower))
        scale = 1.0 + max(np.abs(lower).max(), np.abs(upper).max())
        implicit = self._implicit_equalities(1e-9 * scale)
        a_ub, b_ub_ = self._ub
        equalities = np.vstack([self._eq[0], a_ub[implicit]])
        _, sing, vt = np.linalg.svd(equalities, full_matrices=True) if len(equalities) else (None, np.zeros(0), None)
        rank = int((sing > 1e-10 * max(1.0, sing.max(initial=0.0))).sum())
        self._normal = vt[:rank] if vt is not None else np.zeros((0, n))
        self._affine_dim = n - rank
        if self._affine_dim == 0:
            raise InvalidInputError("the polytope is a single point (its equalities fix every coordinate)")
        strict = np.flatnonzero(~implicit)
        self._center, self._radius = self._chebyshev_centre(strict)

    # -------------------------------------------------------------------------------------------- solver

    def _solve(self, c: np.ndarray, extra: dict | None = None) -> np.ndarray:
        from scipy.optimize import linprog

        a_ub, b_ub = self._ub
        a_eq, b_eq = self._eq
        res = linprog(
            c,
            A_ub=a_ub if len(b_ub) else None,
            b_ub=b_ub if len(b_ub) else None,
            A_eq=a_eq if len(b_eq) else None,
            b_eq=b_eq if len(b_eq) else None,
            bounds=(None, None),
            method="highs-ds",
            options=self._OPTIONS,
        )
        if res.status == 2:
            raise InvalidInputError("A_ub, b_ub, A_eq, b_eq describe an empty set (the LP is infeasible)")
        if res.status == 3:
            raise InvalidInputError("the polytope is unbounded: bound every coordinate")
        if res.status != 0:
            raise InvalidInputError(f"the LP solver failed: {res.message}")
        return np.asarray(res.x, dtype=np.float64)

    def _implicit_equalities(self, tol: float) -> np.ndarray:
        """Which inequalities are tight on the whole polytope: repeatedly maximise ``Σ s_i`` subject to
        ``a_i x + s_i ≤ b_i``, ``0 ≤ s_i ≤ 1`` over the rows not yet proven strict; rows with ``s_i > tol`` are
        strict somewhere, and when none is, the rest are implicit equalities."""
        from scipy.optimize import linprog

        a_ub, b_ub = self._ub
        a_eq, b_eq = self._eq
        p, n = a_ub.shape
        unknown = np.ones(p, dtype=bool)
        while unknown.any():
            rows = np.flatnonzero(unknown)
            k = len(rows)
            slack = np.zeros((p, k))
            slack[rows, np.arange(k)] = 1.0
            res = linprog(
                np.concatenate([np.zeros(n), -np.ones(k)]),
                A_ub=np.hstack([a_ub, slack]),
                b_ub=b_ub,
                A_eq=np.hstack([a_eq, np.zeros((len(b_eq), k))]) if len(b_eq) else None,
                b_eq=b_eq if len(b_eq) else None,
                bounds=[(None, None)] * n + [(0.0, 1.0)] * k,
                method="highs-ds",
                options=self._OPTIONS,
            )
            if res.status != 0:
                raise InvalidInputError(f"the LP solver failed: {res.message}")
            proven = res.x[n:] > tol
            if not proven.any():
                break
            unknown[rows[proven]] = False
        return unknown

    def _chebyshev_centre(self, strict: np.ndarray) -> tuple[np.ndarray, float | None]:
        """The centre of the largest ball inside within the affine hull, and that ball's radius recomputed
        from the centre's slacks (``(b_i − a_i c)/‖P a_i‖`` over the strict rows, ``P`` the tangent projection)."""
        from scipy.optimize import linprog

        a_ub, b_ub = self._ub
        a_eq, b_eq = self._eq
        n = self._n
        a_strict, b_strict = a_ub[strict], b_ub[strict]
        norms = np.linalg.norm(np.array([self._project(row) for row in a_strict]).reshape(len(strict), n), axis=1)
        a_imp = a_ub[np.setdiff1d(np.arange(len(b_ub)), strict)]
        b_imp = b_ub[np.setdiff1d(np.arange(len(b_ub)), strict)]
        eq_a = np.vstack([a_eq, a_imp])
        eq_b = np.concatenate([b_eq, b_imp])
        res = linprog(
            np.concatenate([np.zeros(n), [-1.0]]),
            A_ub=np.hstack([a_strict, norms[:, None]]) if len(strict) else None,
            b_ub=b_strict if len(strict) else None,
            A_eq=np.hstack([eq_a, np.zeros((len(eq_b), 1))]) if len(eq_b) else None,
            b_eq=eq_b if len(eq_b) else None,
            bounds=[(None, None)] * n + [(0.0, None)],
            method="highs-ds",
            options=self._OPTIONS,
        )
        if res.status != 0:
            raise InvalidInputError(f"the LP solver failed: {res.message}")
        centre = np.asarray(res.x[:n], dtype=np.float64)
        useful = norms > 1e-12
        if not useful.any():
            return centre, None
        radius = float(((b_strict - a_strict @ centre)[useful] / norms[useful]).min())
        return centre, (radius if radius > 0 else None)

    def _project(self, u: np.ndarray) -> np.ndarray:
        return u - self._normal.T @ (self._normal @ u)

    # ----------------------------------------------------------------------------------------- protocol

    def lmo(self, direction: object) -> np.ndarray:
        """A vertex minimising ``⟨direction, x⟩``, shape ``(dim,)`` (one LP)."""
        d = _validate.real_array("direction", direction, (self._n,))
        return self._solve(d)

    def contains(self, x: object, atol: float = 1e-9) -> bool:
        """Whether ``A_ub x ≤ b_ub + atol`` and ``|A_eq x − b_eq| ≤ atol`` (``x`` of shape ``(dim,)``)."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self._n,) or not np.isfinite(x).all():
            return False
        ok_ub = bool((self._ub[0] @ x <= self._ub[1] + atol).all())
        return ok_ub and bool((np.abs(self._eq[0] @ x - self._eq[1]) <= atol).all())

    def project_tangent(self, u: object) -> np.ndarray:
        """Orthogonal projection of ``u`` (shape ``(dim,)``) onto the linear subspace parallel to the affine
        hull; a new array."""
        return self._project(_validate.real_array("u", u, (self._n,)))

    @property
    def dim(self) -> int:
        """Ambient dimension ``n``."""
        return self._n

    @property
    def diameter(self) -> float:
        """An upper bound: the diagonal of the bounding box."""
        return self._diameter

    @property
    def affine_dim(self) -> int:
        """Dimension of the affine hull."""
        return self._affine_dim

    @property
    def interior_point(self) -> np.ndarray:
        """The Chebyshev centre within the affine hull, shape ``(dim,)``."""
        return self._center.copy()

    @property
    def inscribed_radius(self) -> float | None:
        """The radius of a ball around :attr:`interior_point` inside the polytope within its affine hull."""
        return self._radius

    def __repr__(self) -> str:
        return f"LinearProgramPolytope(dim={self._n}, affine_dim={self._affine_dim})"
