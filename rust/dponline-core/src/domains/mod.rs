//! Decision sets accessed through a linear minimisation oracle (LMO).
//!
//! Projection-free methods (Frank-Wolfe, Ene-Nguyen-Vladu's PrivateBandit, DP-FTPL) touch a domain only
//! through `lmo(d) = argmin_{v ∈ D} ⟨d, v⟩`. Bandit learners additionally need a point `c` and a radius `r`
//! such that the ball `B(c, r) ∩ aff(D)` lies in `D` (Ene-Nguyen-Vladu, Appendix D), and the orthogonal
//! projection onto the linear subspace parallel to `aff(D)` (to sample directions inside the affine hull).
//!
//! [`Domain`] is the closed set of domains the package ships, as one serializable enum so learners can be
//! pickled; every variant implements [`LinearMinimizationOracle`].

mod simplex;

pub use simplex::Simplex;

use serde::{Deserialize, Serialize};

/// A convex compact set `D ⊂ R^dim` with a linear minimisation oracle.
pub trait LinearMinimizationOracle {
    /// Ambient dimension `n`.
    fn dim(&self) -> usize;

    /// Write a vertex `v ∈ argmin_{v ∈ D} ⟨direction, v⟩` into `vertex` (both of length `dim`).
    ///
    /// `direction` may have entries of any sign; it must be finite (callers validate). Ties are broken
    /// deterministically. Must not allocate (scratch space lives in `self`).
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]);

    /// Euclidean diameter `max_{x,y ∈ D} ‖x − y‖₂` (or a documented upper bound).
    fn diameter(&self) -> f64;

    /// A point `c` in the relative interior, the centre of the inscribed ball.
    fn interior_point(&self) -> &[f64];

    /// A radius `r > 0` with `B(c, r) ∩ aff(D) ⊆ D` (a lower bound on the inscribed radius), or `None` if the
    /// domain does not know one.
    fn inscribed_radius(&self) -> Option<f64>;

    /// Dimension of the affine hull `aff(D)`.
    fn affine_dim(&self) -> usize;

    /// Project `u` in place onto the linear subspace parallel to `aff(D)` (identity for full-dimensional
    /// domains). Must not allocate.
    fn project_tangent(&mut self, u: &mut [f64]);

    /// Whether `x ∈ D` up to absolute tolerance `atol` on each defining constraint.
    fn contains(&self, x: &[f64], atol: f64) -> bool;
}

/// Every domain dponline ships, as one serializable type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Domain {
    /// The probability simplex.
    Simplex(Simplex),
}

macro_rules! dispatch {
    ($self:expr, $d:ident => $body:expr) => {
        match $self {
            Domain::Simplex($d) => $body,
        }
    };
}

impl LinearMinimizationOracle for Domain {
    fn dim(&self) -> usize {
        dispatch!(self, d => d.dim())
    }
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        dispatch!(self, d => d.lmo(direction, vertex))
    }
    fn diameter(&self) -> f64 {
        dispatch!(self, d => d.diameter())
    }
    fn interior_point(&self) -> &[f64] {
        dispatch!(self, d => d.interior_point())
    }
    fn inscribed_radius(&self) -> Option<f64> {
        dispatch!(self, d => d.inscribed_radius())
    }
    fn affine_dim(&self) -> usize {
        dispatch!(self, d => d.affine_dim())
    }
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        dispatch!(self, d => d.project_tangent(u))
    }
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        dispatch!(self, d => d.contains(x, atol))
    }
}

impl Domain {
    /// Short name of the domain kind, e.g. `"Simplex"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Domain::Simplex(_) => "Simplex",
        }
    }
}
