//! The ℓ1 ball (cross-polytope) `{x ∈ R^n : Σ|x_i| ≤ radius}`.

use serde::{Deserialize, Serialize};

use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_positive};

/// The ℓ1 ball of radius `radius` in `R^n`: vertices `±radius·e_i`, diameter `2·radius`, centre `0`,
/// certified inscribed radius `radius/√n`. Full-dimensional.
///
/// Certificate of the radius: if `‖x‖₂ ≤ radius/√n` then `‖x‖₁ ≤ √n·‖x‖₂ ≤ radius` (Cauchy-Schwarz with the
/// all-ones vector), so `B(0, radius/√n) ⊆ D`. It is the largest such ball: the facet point `(radius/n)·1` is
/// at distance `radius/√n`. The diameter `2·radius` is attained between `radius·e_1` and `−radius·e_1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "L1BallSpec", into = "L1BallSpec")]
pub struct L1Ball {
    radius: f64,
    geometry: Geometry,
}

constructor_spec! {
    /// What a pickled [`L1Ball`] stores: its constructor arguments (validated again on restore).
    L1BallSpec for L1Ball |b| {
        n: usize = b.geometry.center.len(),
        radius: f64 = b.radius,
    }
}

impl L1Ball {
    /// The ℓ1 ball `{x ∈ R^n : ‖x‖₁ ≤ radius}`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `n < 1` or `radius` is not finite and `> 0`.
    pub fn new(n: usize, radius: f64) -> Result<Self> {
        super::reserve_for("L1Ball", n)?;
        if n < 1 {
            return Err(CoreError::invalid("n", ">= 1", n));
        }
        check_positive("radius", radius)?;
        Ok(L1Ball {
            radius,
            geometry: Geometry::new(
                2.0 * radius,
                vec![0.0; n],
                Some(radius / (n as f64).sqrt()),
                n,
            ),
        })
    }
}

impl LinearMinimizationOracle for L1Ball {
    /// `−radius·sign(d_i)·e_i` for the largest `|d_i|` (lowest index on ties; `+radius·e_i` when
    /// `d_i = 0`). `O(n)`.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let mut best = 0;
        for (i, d) in direction.iter().enumerate().skip(1) {
            if d.abs() > direction[best].abs() {
                best = i;
            }
        }
        vertex.fill(0.0);
        vertex[best] = vertex_entry(direction[best], self.radius);
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `Σ|x_i| ≤ radius + atol`.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.geometry.center.len() && l1_norm(x) <= self.radius + atol
    }
}

/// The entry `±radius` of a coordinate of a vertex minimising `d·v` over `[−radius, radius]`: `−radius` for
/// `d > 0`, else `+radius` (also for `d = 0`). The nonzero entries of the ℓ1 ball's and the k-sparse
/// polytope's LMO vertices.
#[inline]
pub(super) fn vertex_entry(d: f64, radius: f64) -> f64 {
    if d > 0.0 { -radius } else { radius }
}

/// `Σ|x_i|`, summed in index order (the membership tests of the ℓ1 ball and the k-sparse polytope).
#[inline]
pub(super) fn l1_norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v.abs()).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn vertices(n: usize, radius: f64) -> Vec<Vec<f64>> {
        let mut out = Vec::new();
        for i in 0..n {
            for sign in [1.0, -1.0] {
                let mut v = vec![0.0; n];
                v[i] = sign * radius;
                out.push(v);
            }
        }
        out
    }

    #[test]
    fn lmo_matches_brute_force() {
        for (n, radius) in [(1, 1.0), (3, 2.5), (6, 0.1)] {
            let mut b = L1Ball::new(n, radius).unwrap();
            testing::lmo_matches_brute_force(&mut b, &vertices(n, radius), 1);
        }
    }

    #[test]
    fn ties_and_zero_direction() {
        let mut b = L1Ball::new(3, 2.0).unwrap();
        let mut v = [0.0; 3];
        b.lmo(&[1.0, -1.0, 0.5], &mut v);
        assert_eq!(v, [-2.0, 0.0, 0.0]);
        b.lmo(&[0.0, 0.0, 0.0], &mut v);
        assert_eq!(v, [2.0, 0.0, 0.0]);
    }

    #[test]
    fn certificate_and_projection() {
        let mut b = L1Ball::new(5, 3.0).unwrap();
        testing::certified_ball_is_inside(&mut b, 2);
        testing::projection_is_orthogonal(&mut b, 3);
        assert_eq!(b.diameter(), 6.0);
        assert!(!b.contains(&[3.0, 0.1, 0.0, 0.0, 0.0], 1e-9));
        assert!(!b.contains(&[0.0; 4], 1e-9));
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(L1Ball::new(0, 1.0).is_err());
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = L1Ball::new(2, r).unwrap_err().to_string();
            assert!(err.contains("radius"), "{err}");
        }
    }

    #[test]
    fn serde_round_trip() {
        let mut b = L1Ball::new(4, 1.5).unwrap();
        let c = testing::state_round_trip(&mut b, &testing::gaussian(&mut testing::rng(5), 4));
        assert_eq!((c.dim(), c.radius), (4, 1.5));
    }
}
