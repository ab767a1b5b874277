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

Example::

    >>> from dponline.domains import UniformMatroid
    >>> UniformMatroid(5, 2).lmo([0.3, -1.0, 0.2, 0.5, -0.1])
    array([0., 1., 0., 0., 1.])
"""

from __future__ import annotations

from ._core import (
    Box,
    Domain,
    GraphicMatroid,
    L1Ball,
    L2Ball,
    PartitionMatroid,
    PathPolytope,
    Simplex,
    UniformMatroid,
)

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
]
