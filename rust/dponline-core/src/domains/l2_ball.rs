//! The Euclidean ball `{x ∈ R^n : ‖x‖₂ ≤ radius}`.

use serde::{Deserialize, Serialize};

use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_positive};

/// The Euclidean ball of radius `radius` in `R^n`: every boundary point is an extreme point, diameter
/// `2·radius`, centre `0`, inscribed radius `radius` (exact). Full-dimensional.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "L2BallSpec", into = "L2BallSpec")]
pub struct L2Ball {
    radius: f64,
    geometry: Geometry,
}

constructor_spec! {
    /// What a pickled [`L2Ball`] stores: its constructor arguments (validated again on restore).
    L2BallSpec for L2Ball |b| {
        n: usize = b.geometry.center.len(),
        radius: f64 = b.radius,
    }
}

impl L2Ball {
    /// The ball `{x ∈ R^n : ‖x‖₂ ≤ radius}`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `n < 1` or `radius` is not finite and `> 0`.
    pub fn new(n: usize, radius: f64) -> Result<Self> {
        super::reserve_for("L2Ball", n)?;
        if n < 1 {
            return Err(CoreError::invalid("n", ">= 1", n));
        }
        check_positive("radius", radius)?;
        Ok(L2Ball {
            radius,
            geometry: Geometry::new(2.0 * radius, vec![0.0; n], Some(radius), n),
        })
    }
}

impl LinearMinimizationOracle for L2Ball {
    /// `−radius·d/‖d‖` (the unique minimiser), and `radius·e_1` when `d = 0`. The norm is computed after
    /// scaling by `max|d_i|`, so no finite direction overflows. `O(n)`.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let scale = direction.iter().fold(0.0_f64, |m, d| m.max(d.abs()));
        if scale == 0.0 {
            vertex.fill(0.0);
            vertex[0] = self.radius;
            return;
        }
        let norm = direction
            .iter()
            .map(|d| (d / scale) * (d / scale))
            .sum::<f64>()
            .sqrt();
        let factor = -self.radius / norm;
        for (v, d) in vertex.iter_mut().zip(direction) {
            *v = factor * (d / scale);
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `‖x‖₂ ≤ radius + atol`.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.geometry.center.len() && super::linalg::norm2(x) <= self.radius + atol
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    #[test]
    fn lmo_is_the_scaled_negative_direction() {
        let mut b = L2Ball::new(3, 2.0).unwrap();
        let mut rng = testing::rng(4);
        let mut v = [0.0; 3];
        for _ in 0..50 {
            let d = testing::gaussian(&mut rng, 3);
            b.lmo(&d, &mut v);
            let norm = super::super::linalg::norm2(&d);
            let value: f64 = d.iter().zip(&v).map(|(a, b)| a * b).sum();
            assert!((value + 2.0 * norm).abs() < 1e-12);
            assert!(b.contains(&v, 1e-12));
        }
        b.lmo(&[0.0; 3], &mut v);
        assert_eq!(v, [2.0, 0.0, 0.0]);
        b.lmo(&[1e300, -1e300, 0.0], &mut v);
        assert!((v[0] + 2f64.sqrt()).abs() < 1e-12 && (v[1] - 2f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn certificate_and_projection() {
        let mut b = L2Ball::new(4, 0.5).unwrap();
        testing::certified_ball_is_inside(&mut b, 5);
        testing::projection_is_orthogonal(&mut b, 6);
        assert!(!b.contains(&[0.5, 0.01, 0.0, 0.0], 1e-9));
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(L2Ball::new(0, 1.0).is_err());
        assert!(L2Ball::new(2, -1.0).is_err());
    }
}
