//! Decision sets accessed through a linear minimisation oracle (LMO).
//!
//! Projection-free methods (Frank-Wolfe, Ene-Nguyen-Vladu's PrivateBandit, DP-FTPL) touch a domain only
//! through `lmo(d) = argmin_{v ∈ D} ⟨d, v⟩`. Bandit learners additionally need a point `c` and a radius `r`
//! such that the ball `B(c, r) ∩ aff(D)` lies in `D` (Ene-Nguyen-Vladu, Appendix D), and the orthogonal
//! projection onto the linear subspace parallel to `aff(D)` (to sample directions inside the affine hull).
//!
//! [`Domain`] is the closed set of domains the package ships, as one serializable enum so learners can be
//! pickled; every variant implements [`LinearMinimizationOracle`].

/// Declares the struct a domain is pickled as, and the conversions serde uses through it
/// (`#[serde(try_from = "XSpec", into = "XSpec")]` on the domain): each stored field is listed once, with its
/// type and the expression that reads it from the domain (bound to the name between the bars); restoring
/// calls the domain's `new` with the fields in the order listed, so a restored domain passes the same
/// validation as a new one. The spec's field names and order are its serialized layout.
///
/// ```ignore
/// constructor_spec! {
///     /// What a pickled [`L2Ball`] stores: its constructor arguments (validated again on restore).
///     L2BallSpec for L2Ball |b| {
///         n: usize = b.geometry.center.len(),
///         radius: f64 = b.radius,
///     }
/// }
/// // expands to `struct L2BallSpec { n: usize, radius: f64 }` (Serialize, Deserialize),
/// // `From<L2Ball> for L2BallSpec` and `TryFrom<L2BallSpec> for L2Ball` (via `L2Ball::new(s.n, s.radius)`).
/// ```
macro_rules! constructor_spec {
    (
        $(#[$meta:meta])*
        $spec:ident for $domain:ident |$d:ident| { $($field:ident: $ty:ty = $get:expr),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize, serde::Deserialize)]
        struct $spec {
            $($field: $ty),+
        }

        impl From<$domain> for $spec {
            fn from($d: $domain) -> Self {
                $spec { $($field: $get),+ }
            }
        }

        impl TryFrom<$spec> for $domain {
            type Error = crate::error::CoreError;
            fn try_from(s: $spec) -> crate::error::Result<Self> {
                $domain::new($(s.$field),+)
            }
        }
    };
}

mod assignment;
mod bipartite_matching;
mod birkhoff;
mod dag;
mod flow_polytope;
mod flow_projection;
mod forest_membership;
mod graph;
mod graphic_matroid;
mod hyperrectangle;
mod k_sparse;
mod l1_ball;
mod l2_ball;
mod linalg;
mod min_norm_point;
mod network_simplex;
mod nuclear_norm;
mod partition_matroid;
mod path_polytope;
mod selection;
mod simplex;
mod spectral;
mod spectraplex;
mod submodular_base;
#[cfg(test)]
mod testing;
mod tree_blocks;
mod uniform_matroid;

pub use bipartite_matching::BipartiteMatchingPolytope;
pub use birkhoff::BirkhoffPolytope;
pub use flow_polytope::FlowPolytope;
pub use graphic_matroid::GraphicMatroid;
pub use hyperrectangle::Hyperrectangle;
pub use k_sparse::KSparsePolytope;
pub use l1_ball::L1Ball;
pub use l2_ball::L2Ball;
pub use nuclear_norm::NuclearNormBall;
pub use partition_matroid::PartitionMatroid;
pub use path_polytope::PathPolytope;
pub use simplex::Simplex;
pub use spectraplex::Spectraplex;
pub use submodular_base::{MAX_TABLE_ITEMS, SetFunction, SubmodularBasePolytope};
pub use uniform_matroid::UniformMatroid;

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Bytes per coordinate (or node) that a domain holds at most, across its centre, scratch and index buffers;
/// used by [`reserve_for`] to refuse impossible sizes before any allocation.
pub(crate) const BYTES_PER_ITEM: usize = 64;

/// Refuse, with [`crate::CoreError::Allocation`], a domain of `items` coordinates or nodes whose buffers
/// (about [`BYTES_PER_ITEM`] bytes per item) cannot be allocated: the allocation is tried fallibly and
/// released at once, so `Simplex(2**40)` raises `MemoryError` instead of aborting the process.
pub(crate) fn reserve_for(kind: &str, items: usize) -> Result<()> {
    let what = format!("{kind} with {items} coordinates or nodes");
    let bytes = crate::alloc::checked_len(what.clone(), items, BYTES_PER_ITEM)?;
    crate::alloc::reserve::<u8>(what, bytes).map(drop)
}

/// What a domain reports besides its oracle, fixed by its constructor: the quantities the learners calibrate
/// their step sizes and exploration radii from (Ene-Nguyen-Vladu, Appendix D).
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    /// Euclidean diameter `max_{x,y ∈ D} ‖x − y‖₂`, or a documented upper bound.
    pub diameter: f64,
    /// A point `c` in the relative interior, the centre of the inscribed ball (length `dim`).
    pub center: Vec<f64>,
    /// A radius `r > 0` with `B(c, r) ∩ aff(D) ⊆ D`, or `None` if the domain certifies none.
    pub inscribed_radius: Option<f64>,
    /// Dimension of the affine hull `aff(D)`.
    pub affine_dim: usize,
}

impl Geometry {
    /// The geometry with these parts; a radius that is not positive and finite (e.g. one that underflows to
    /// 0, as for a box of width `5e-324`) is dropped to `None`, since a certificate must be positive.
    pub(crate) fn new(
        diameter: f64,
        center: Vec<f64>,
        inscribed_radius: Option<f64>,
        affine_dim: usize,
    ) -> Self {
        Geometry {
            diameter,
            center,
            inscribed_radius: inscribed_radius.filter(|r| *r > 0.0 && r.is_finite()),
            affine_dim,
        }
    }
}

/// A convex compact set `D ⊂ R^dim` with a linear minimisation oracle.
pub trait LinearMinimizationOracle {
    /// Ambient dimension `n`: the length of the centre of [`Self::geometry`], which every domain sizes to its
    /// coordinates.
    fn dim(&self) -> usize {
        self.geometry().center.len()
    }

    /// Write a vertex `v ∈ argmin_{v ∈ D} ⟨direction, v⟩` into `vertex` (both of length `dim`).
    ///
    /// `direction` may have entries of any sign; it must be finite (callers validate). Ties are broken
    /// deterministically. Must not allocate (scratch space lives in `self`).
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]);

    /// The domain's diameter, centre, inscribed radius and affine dimension, computed once by its
    /// constructor (each domain documents them, with their certificates, where it builds its [`Geometry`]).
    fn geometry(&self) -> &Geometry;

    /// Euclidean diameter `max_{x,y ∈ D} ‖x − y‖₂` (or a documented upper bound).
    fn diameter(&self) -> f64 {
        self.geometry().diameter
    }

    /// A point `c` in the relative interior, the centre of the inscribed ball.
    fn interior_point(&self) -> &[f64] {
        &self.geometry().center
    }

    /// A radius `r > 0` with `B(c, r) ∩ aff(D) ⊆ D` (a lower bound on the inscribed radius), or `None` if the
    /// domain does not know one (or its radius underflows to 0).
    fn inscribed_radius(&self) -> Option<f64> {
        self.geometry().inscribed_radius
    }

    /// Dimension of the affine hull `aff(D)`.
    fn affine_dim(&self) -> usize {
        self.geometry().affine_dim
    }

    /// Project `u` in place onto the linear subspace parallel to `aff(D)`. Must not allocate.
    ///
    /// The default is the identity, right for full-dimensional domains (`affine_dim == dim`, checked in debug
    /// builds); every domain with a smaller affine hull overrides it.
    #[inline]
    fn project_tangent(&mut self, _u: &mut [f64]) {
        debug_assert_eq!(
            self.affine_dim(),
            self.dim(),
            "a flat domain needs its own projection"
        );
    }

    /// Whether `x ∈ D` up to absolute tolerance `atol` on each defining constraint.
    fn contains(&self, x: &[f64], atol: f64) -> bool;
}

/// Every domain dponline ships, as one serializable type.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Domain {
    /// The probability simplex.
    Simplex(Simplex),
    /// The ℓ1 ball (cross-polytope).
    L1Ball(L1Ball),
    /// The Euclidean ball.
    L2Ball(L2Ball),
    /// An axis-aligned box.
    Box(Hyperrectangle),
    /// The uniform matroid's base (hypersimplex) or independence polytope.
    UniformMatroid(UniformMatroid),
    /// A partition matroid's base or independence polytope.
    PartitionMatroid(PartitionMatroid),
    /// A graph's spanning-tree or forest polytope (boxed: the graph domains are much larger than the rest).
    GraphicMatroid(Box<GraphicMatroid>),
    /// The s-t path polytope of a directed acyclic graph (boxed, as above).
    PathPolytope(Box<PathPolytope>),
    /// The `k`-sparse polytope.
    KSparse(KSparsePolytope),
    /// The doubly stochastic matrices.
    Birkhoff(Box<BirkhoffPolytope>),
    /// A bipartite graph's matching polytope.
    BipartiteMatching(Box<BipartiteMatchingPolytope>),
    /// The s-t flows of a given value within capacities.
    Flow(Box<FlowPolytope>),
    /// The nuclear-norm ball.
    NuclearNormBall(Box<NuclearNormBall>),
    /// The density matrices.
    Spectraplex(Box<Spectraplex>),
    /// A monotone submodular function's base polytope.
    SubmodularBase(Box<SubmodularBasePolytope>),
}

macro_rules! dispatch {
    ($self:expr, $d:ident => $body:expr) => {
        match $self {
            Domain::Simplex($d) => $body,
            Domain::L1Ball($d) => $body,
            Domain::L2Ball($d) => $body,
            Domain::Box($d) => $body,
            Domain::UniformMatroid($d) => $body,
            Domain::PartitionMatroid($d) => $body,
            Domain::GraphicMatroid($d) => $body,
            Domain::PathPolytope($d) => $body,
            Domain::KSparse($d) => $body,
            Domain::Birkhoff($d) => $body,
            Domain::BipartiteMatching($d) => $body,
            Domain::Flow($d) => $body,
            Domain::NuclearNormBall($d) => $body,
            Domain::Spectraplex($d) => $body,
            Domain::SubmodularBase($d) => $body,
        }
    };
}

impl LinearMinimizationOracle for Domain {
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        dispatch!(self, d => d.lmo(direction, vertex))
    }
    fn geometry(&self) -> &Geometry {
        dispatch!(self, d => d.geometry())
    }
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        dispatch!(self, d => d.project_tangent(u))
    }
    /// Every domain is bounded, so a point with a NaN or an infinite coordinate is never a member (checked
    /// here once for all domains, whose own tests may let NaN through a comparison).
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.iter().all(|v| v.is_finite())
            && !atol.is_nan()
            && dispatch!(self, d => d.contains(x, atol))
    }
}

impl Domain {
    /// Why [`LinearMinimizationOracle::inscribed_radius`] is `None`, for error messages.
    pub fn missing_radius_reason(&self) -> &'static str {
        match self {
            Domain::GraphicMatroid(_) => {
                "no inscribed ball of a spanning-tree polytope is certified"
            }
            Domain::SubmodularBase(_) => {
                "no inscribed ball of a submodular family's base polytope is certified (it would need a \
                 submodular minimisation over all sets)"
            }
            _ => "its certified radius underflows to 0",
        }
    }

    /// Short name of the domain kind, e.g. `"Simplex"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Domain::Simplex(_) => "Simplex",
            Domain::L1Ball(_) => "L1Ball",
            Domain::L2Ball(_) => "L2Ball",
            Domain::Box(_) => "Box",
            Domain::UniformMatroid(_) => "UniformMatroid",
            Domain::PartitionMatroid(_) => "PartitionMatroid",
            Domain::GraphicMatroid(_) => "GraphicMatroid",
            Domain::PathPolytope(_) => "PathPolytope",
            Domain::KSparse(_) => "KSparsePolytope",
            Domain::Birkhoff(_) => "BirkhoffPolytope",
            Domain::BipartiteMatching(_) => "BipartiteMatchingPolytope",
            Domain::Flow(_) => "FlowPolytope",
            Domain::NuclearNormBall(_) => "NuclearNormBall",
            Domain::Spectraplex(_) => "Spectraplex",
            Domain::SubmodularBase(_) => "SubmodularBasePolytope",
        }
    }
}
