//! The probability simplex `Δ_n = {x ∈ R^n : x ≥ 0, Σ x_i = 1}`.

use serde::{Deserialize, Serialize};

use super::LinearMinimizationOracle;
use crate::error::{CoreError, Result};

/// The probability simplex in `R^n`: vertices `e_1..e_n`, diameter `√2` (for `n ≥ 2`), centre `1/n`,
/// inscribed radius (within the hyperplane `Σx = 1`) `1/√(n(n−1))`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Simplex {
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
        Ok(Simplex {
            n,
            center: vec![1.0 / n as f64; n],
        })
    }
}

impl LinearMinimizationOracle for Simplex {
    fn dim(&self) -> usize {
        self.n
    }

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

    fn diameter(&self) -> f64 {
        std::f64::consts::SQRT_2
    }

    fn interior_point(&self) -> &[f64] {
        &self.center
    }

    /// Distance from `1/n` to the facet `x_i = 0` inside `Σx = 1`: `(1/n) / ‖P e_i‖ = 1/√(n(n−1))`.
    fn inscribed_radius(&self) -> Option<f64> {
        let n = self.n as f64;
        Some(1.0 / (n * (n - 1.0)).sqrt())
    }

    fn affine_dim(&self) -> usize {
        self.n - 1
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
        let r = s.inscribed_radius().unwrap();
        // The tangent direction towards facet x_0 = 0 is -P e_0; moving r along its unit vector hits x_0 = 0.
        let mut u = [-1.0, 0.0, 0.0, 0.0, 0.0];
        s.project_tangent(&mut u);
        let norm = u.iter().map(|v| v * v).sum::<f64>().sqrt();
        let x: Vec<f64> = s
            .interior_point()
            .iter()
            .zip(u)
            .map(|(c, d)| c + r * d / norm)
            .collect();
        assert!(x[0].abs() < 1e-12);
        assert!(s.contains(&x, 1e-12));
    }
}
