"""Decision sets with linear minimisation oracles (LMOs).

Every domain has ``lmo(direction)`` (a minimising vertex), ``dim``, ``diameter``, ``contains(x, atol)``,
``interior_point`` with a certified ``inscribed_radius`` (the ball, within the affine hull, that PrivateBandit
needs so every queried point stays feasible: Ene-Nguyen-Vladu 2021, Appendix D), ``affine_dim`` and
``project_tangent``. Domains pickle.
"""

from __future__ import annotations

from ._core import Domain, Simplex

__all__ = ["Domain", "Simplex"]
