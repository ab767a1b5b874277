//! The probability simplex `Δ_n = {x ∈ R^n : x ≥ 0, Σ x_i = 1}`.

use serde::{Deserialize, Serialize};

use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The probability simplex in `R^n`: vertices `e_1..e_n`, diameter `√2` (for `n ≥ 2`), centre `1/n`,
/// inscribed radius (within the hyperplane `Σx = 1`) `1/√(n(n−1))`, the distance from `1/n` to the facet
/// `x_i = 0` inside `Σx = 1` (`(1/n) / ‖P e_i‖`); affine dimension `n − 1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "SimplexSpec", into = "SimplexSpec")]
pub struct Simplex {
    n: usize,
    geometry: Geometry,
}

/// What a pickled [`Simplex`] stores: `n` and the centre (the layout of format version 8); restored through
/// the constructor, refused unless the centre is the one it computes.
#[derive(Serialize, Deserialize)]
struct SimplexSpec {
    n: usize,
    center: Vec<f64>,
}

impl Simplex {
    /// The simplex in `R^n`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `n < 2`.
    pub fn new(n: usize) -> Result<Self> {
        super::reserve_for("Simplex", n)?;
        if n < 2 {
            return Err(CoreError::invalid("n", ">= 2", n));
        }
        let m = n as f64;
        Ok(Simplex {
            n,
            geometry: Geometry::new(
                std::f64::consts::SQRT_2,
                vec![1.0 / m; n],
                Some(1.0 / (m * (m - 1.0)).sqrt()),
                n - 1,
            ),
        })
    }
}

impl From<Simplex> for SimplexSpec {
    fn from(s: Simplex) -> Self {
        SimplexSpec {
            n: s.n,
            center: s.geometry.center,
        }
    }
}

impl TryFrom<SimplexSpec> for Simplex {
    type Error = CoreError;
    fn try_from(s: SimplexSpec) -> Result<Self> {
        let simplex = Simplex::new(s.n)?;
        if s.center != simplex.geometry.center {
            return Err(CoreError::invalid(
                "center",
                "1/n in every coordinate",
                "another vector",
            ));
        }
        Ok(simplex)
    }
}

impl LinearMinimizationOracle for Simplex {
    /// `e_i` for the smallest `direction_i` (lowest index on ties). `O(n)`.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        // Track the running minimum in a register (branch-free select), lowest index on ties.
        let (mut best, mut best_value) = (0, direction[0]);
        for (i, &d) in direction.iter().enumerate().skip(1) {
            let better = d < best_value;
            best = if better { i } else { best };
            best_value = if better { d } else { best_value };
        }
        vertex.fill(0.0);
        vertex[best] = 1.0;
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Subtract the mean: projection onto `{u : Σu = 0}`.
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        let mean = crate::vecops::sum(u) / self.n as f64;
        u.iter_mut().for_each(|x| *x -= mean);
    }

    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.n
            && x.iter().all(|&v| v >= -atol)
            && (x.iter().sum::<f64>() - 1.0).abs() <= atol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lmo_picks_the_smallest_coordinate() {
        let mut s = Simplex::new(4).unwrap();
        let mut v = [0.0; 4];
        s.lmo(&[3.0, -1.0, 2.0, -1.0], &mut v);
        assert_eq!(v, [0.0, 1.0, 0.0, 0.0]);
        assert!(s.contains(&v, 0.0));
        assert!(Simplex::new(1).is_err());
    }

    #[test]
    fn inscribed_ball_touches_a_facet() {
        let mut s = Simplex::new(5).unwrap();
        // The tangent direction towards facet x_0 = 0 is -P e_0; moving r along its unit vector hits x_0 = 0.
        let x = super::super::testing::towards_facet(&mut s, 0);
        assert!(x[0].abs() < 1e-12);
        assert!(s.contains(&x, 1e-12));
    }
}
