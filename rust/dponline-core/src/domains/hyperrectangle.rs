//! The box `{x ∈ R^n : lower ≤ x ≤ upper}` (exposed to Python as `Box`).

use serde::{Deserialize, Serialize};

use super::linalg::norm2;
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite};

/// The axis-aligned box `[lower_1, upper_1] × … × [lower_n, upper_n]`: vertices are its `2^n` corners,
/// diameter `‖upper − lower‖₂` (exact, between the corners `lower` and `upper`), centre the midpoint,
/// certified inscribed radius the smallest half-width.
/// Full-dimensional.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "HyperrectangleSpec", into = "HyperrectangleSpec")]
pub struct Hyperrectangle {
    lower: Vec<f64>,
    upper: Vec<f64>,
    geometry: Geometry,
}

constructor_spec! {
    /// What a pickled [`Hyperrectangle`] stores: its constructor arguments (validated again on restore).
    HyperrectangleSpec for Hyperrectangle |b| {
        lower: Vec<f64> = b.lower,
        upper: Vec<f64> = b.upper,
    }
}

impl Hyperrectangle {
    /// The box with corners `lower` and `upper`.
    ///
    /// Errors: [`CoreError::Shape`] if `lower` is empty or `upper` has a different length;
    /// [`CoreError::NonFinite`] for a NaN or infinite bound; [`CoreError::InvalidArgument`] if some
    /// `upper_i <= lower_i` or some width `upper_i − lower_i` overflows.
    pub fn new(lower: Vec<f64>, upper: Vec<f64>) -> Result<Self> {
        if lower.is_empty() {
            return Err(CoreError::Shape {
                name: "lower",
                expected: "length >= 1".into(),
                got: "length 0".into(),
            });
        }
        if upper.len() != lower.len() {
            return Err(CoreError::Shape {
                name: "upper",
                expected: format!("the length of lower ({})", lower.len()),
                got: format!("length {}", upper.len()),
            });
        }
        check_finite("lower", &lower)?;
        check_finite("upper", &upper)?;
        let widths: Vec<f64> = upper.iter().zip(&lower).map(|(u, l)| u - l).collect();
        if let Some(i) = widths.iter().position(|&w| w <= 0.0) {
            return Err(CoreError::invalid(
                "upper",
                "> lower in every coordinate",
                format!("upper[{i}] = {} <= lower[{i}] = {}", upper[i], lower[i]),
            ));
        }
        if let Some(i) = widths.iter().position(|w| !w.is_finite()) {
            return Err(CoreError::invalid(
                "upper - lower",
                "finite in every coordinate",
                format!("an overflow at index {i}"),
            ));
        }
        let center = lower
            .iter()
            .zip(&widths)
            .map(|(l, w)| l + 0.5 * w)
            .collect();
        // Certificate: if `‖x − c‖₂ ≤ r` then every `|x_i − c_i| ≤ r ≤ (upper_i − lower_i)/2`, so `x` satisfies
        // both bounds of every coordinate; it is the largest ball (the narrowest side touches it). A width of
        // 5e-324 has a half-width that rounds to 0: no certified ball then.
        let radius = 0.5 * widths.iter().fold(f64::INFINITY, |m, &w| m.min(w));
        let n = lower.len();
        Ok(Hyperrectangle {
            lower,
            upper,
            geometry: Geometry::new(norm2(&widths), center, Some(radius), n),
        })
    }
}

impl LinearMinimizationOracle for Hyperrectangle {
    /// Coordinate-wise: `upper_i` where `d_i < 0`, otherwise `lower_i` (so `d_i = 0` gives `lower_i`).
    /// `O(n)`.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        // Iterators (no bounds checks) let the compiler emit a branch-free select.
        let bounds = self.lower.iter().zip(&self.upper);
        for ((v, &d), (&l, &u)) in vertex.iter_mut().zip(direction).zip(bounds) {
            *v = if d < 0.0 { u } else { l };
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `lower_i − atol ≤ x_i ≤ upper_i + atol` for every `i`.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.lower.len()
            && x.iter()
                .zip(self.lower.iter().zip(&self.upper))
                .all(|(&v, (&l, &u))| v >= l - atol && v <= u + atol)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn corners(lower: &[f64], upper: &[f64]) -> Vec<Vec<f64>> {
        let n = lower.len();
        (0u32..1 << n)
            .map(|mask| {
                (0..n)
                    .map(|i| {
                        if mask >> i & 1 == 1 {
                            upper[i]
                        } else {
                            lower[i]
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn lmo_matches_brute_force() {
        let (lower, upper) = (vec![-1.0, 0.0, 2.0, -5.0], vec![1.0, 0.5, 3.0, 5.0]);
        let mut b = Hyperrectangle::new(lower.clone(), upper.clone()).unwrap();
        testing::lmo_matches_brute_force(&mut b, &corners(&lower, &upper), 7);
        let mut v = [0.0; 4];
        b.lmo(&[0.0, -1.0, 1.0, 0.0], &mut v);
        assert_eq!(v, [-1.0, 0.5, 2.0, -5.0]);
    }

    #[test]
    fn geometry() {
        let mut b = Hyperrectangle::new(vec![0.0, -2.0, 1.0], vec![1.0, 2.0, 4.0]).unwrap();
        assert_eq!(b.interior_point(), &[0.5, 0.0, 2.5]);
        assert_eq!(b.inscribed_radius(), Some(0.5));
        assert!((b.diameter() - 26f64.sqrt()).abs() < 1e-12);
        testing::certified_ball_is_inside(&mut b, 8);
        testing::projection_is_orthogonal(&mut b, 9);
        assert!(!b.contains(&[1.1, 0.0, 2.0], 1e-9));
    }

    #[test]
    fn bad_arguments_are_named() {
        let msg = |l: Vec<f64>, u: Vec<f64>| Hyperrectangle::new(l, u).unwrap_err().to_string();
        assert!(msg(vec![], vec![]).contains("lower"));
        assert!(msg(vec![0.0], vec![1.0, 2.0]).contains("upper"));
        assert!(msg(vec![f64::NAN], vec![1.0]).contains("lower"));
        assert!(msg(vec![0.0, 1.0], vec![1.0, 1.0]).contains("upper[1] = 1 <= lower[1] = 1"));
        assert!(msg(vec![-1e308, 0.0], vec![1e308, 1.0]).contains("upper - lower"));
    }
}
