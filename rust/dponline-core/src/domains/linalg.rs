//! Small dense linear algebra for the domains: a safe Euclidean norm and a packed Cholesky factor.

/// Euclidean norm `‖x‖₂`, scaled by the largest magnitude so that no finite input overflows or underflows.
pub(super) fn norm2(x: &[f64]) -> f64 {
    let scale = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    scale
        * x.iter()
            .map(|v| (v / scale) * (v / scale))
            .sum::<f64>()
            .sqrt()
}

/// A power of two `s` with `s·max|x_i| ∈ [1, 2)` (`2^1022` when the largest entry is subnormal, 1 for an
/// all-zero `x`): multiplying by it is exact, so an LMO that works on `s·d` instead of `d` makes the same
/// comparisons and breaks the same ties, while sums of scaled entries cannot overflow. Entries must be finite.
pub(super) fn power_of_two_scale(x: &[f64]) -> f64 {
    let peak = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    if peak == 0.0 || !peak.is_finite() {
        return 1.0;
    }
    if peak < f64::MIN_POSITIVE {
        return 2f64.powi(1022);
    }
    // peak = m·2^e with m in [1, 2): e from the exponent bits.
    let exponent = ((peak.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    2f64.powi(-exponent)
}

/// Position of entry `(i, j)`, `j <= i`, of a lower triangle stored row by row.
#[inline]
fn packed(i: usize, j: usize) -> usize {
    i * (i + 1) / 2 + j
}

/// Lower-triangular Cholesky factor `L` of a symmetric positive definite matrix `M = L Lᵀ`, stored packed
/// row by row (`n(n+1)/2` numbers).
#[derive(Debug, Clone)]
pub(super) struct Cholesky {
    n: usize,
    lower: Vec<f64>,
}

impl Cholesky {
    /// Factor the matrix whose lower triangle is `packed_lower` (row by row, `n(n+1)/2` entries), in place.
    ///
    /// Returns `None` if a pivot is not positive (the matrix is not numerically positive definite).
    /// `O(n³/6)` multiply-adds; the inner loops run over contiguous rows.
    pub(super) fn factor(n: usize, mut packed_lower: Vec<f64>) -> Option<Self> {
        debug_assert_eq!(packed_lower.len(), n * (n + 1) / 2);
        let l = &mut packed_lower;
        for i in 0..n {
            for j in 0..=i {
                let (row_i, row_j) = (packed(i, 0), packed(j, 0));
                let dot: f64 = (0..j).map(|k| l[row_i + k] * l[row_j + k]).sum();
                let s = l[row_i + j] - dot;
                if i == j {
                    if s <= 0.0 || !s.is_finite() {
                        return None;
                    }
                    l[row_i + j] = s.sqrt();
                } else {
                    l[row_i + j] = s / l[row_j + j];
                }
            }
        }
        Some(Cholesky {
            n,
            lower: packed_lower,
        })
    }

    /// Overwrite `b` with the solution `x` of `L Lᵀ x = b`. Allocation-free, `O(n²)`.
    pub(super) fn solve_in_place(&self, b: &mut [f64]) {
        let l = &self.lower;
        // Forward substitution L y = b.
        for i in 0..self.n {
            let row = packed(i, 0);
            let dot: f64 = (0..i).map(|k| l[row + k] * b[k]).sum();
            b[i] = (b[i] - dot) / l[row + i];
        }
        // Back substitution Lᵀ x = y, sweeping rows of L (columns of Lᵀ) to stay contiguous.
        for i in (0..self.n).rev() {
            let row = packed(i, 0);
            b[i] /= l[row + i];
            let xi = b[i];
            for k in 0..i {
                b[k] -= l[row + k] * xi;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_survives_extreme_values() {
        assert_eq!(norm2(&[3.0, 4.0]), 5.0);
        assert_eq!(norm2(&[0.0, 0.0]), 0.0);
        let big = norm2(&[1e300, 1e300]);
        assert!((big / 1e300 - std::f64::consts::SQRT_2).abs() < 1e-15);
        let tiny = norm2(&[3e-310, 4e-310]);
        assert!((tiny / 5e-310 - 1.0).abs() < 1e-6);
    }

    #[test]
    fn power_of_two_scales_into_one_two() {
        for x in [
            1.0,
            3.0,
            1e300,
            -2.5e-300,
            0.75,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let s = power_of_two_scale(&[0.0, x]);
            assert!((1.0..2.0).contains(&(x.abs() * s)), "{x} {s}");
            assert_eq!(s.log2().fract(), 0.0);
        }
        let s = power_of_two_scale(&[5e-324]);
        assert!(s.is_finite() && 5e-324 * s > 0.0 && 5e-324 * s <= 1.0);
        assert_eq!(power_of_two_scale(&[0.0, -0.0]), 1.0);
    }

    #[test]
    fn cholesky_solves_a_small_system() {
        // M = [[4, 2, 0], [2, 5, 1], [0, 1, 3]]
        let m = [[4.0, 2.0, 0.0], [2.0, 5.0, 1.0], [0.0, 1.0, 3.0]];
        let lower = vec![4.0, 2.0, 5.0, 0.0, 1.0, 3.0];
        let chol = Cholesky::factor(3, lower).unwrap();
        let x = [1.0, -2.0, 0.5];
        let mut b: Vec<f64> = m
            .iter()
            .map(|row| row.iter().zip(&x).map(|(a, b)| a * b).sum())
            .collect();
        chol.solve_in_place(&mut b);
        for (got, want) in b.iter().zip(&x) {
            assert!((got - want).abs() < 1e-12);
        }
        // [[1, 2], [2, 1]] is indefinite.
        assert!(Cholesky::factor(2, vec![1.0, 2.0, 1.0]).is_none());
    }
}
