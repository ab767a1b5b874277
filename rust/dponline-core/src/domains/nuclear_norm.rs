//! The nuclear-norm ball `{X ∈ R^{rows×cols} : ‖X‖_* ≤ radius}` (flattened row-major), the convex hull of
//! the rank-one matrices `radius·u vᵀ` with unit `u`, `v`: the standard convex relaxation of low-rank
//! matrices.

use serde::{Deserialize, Serialize};

use super::linalg::{norm2, power_of_two_scale};
use super::spectral::{End, Lanczos, singular_values};
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_positive};
use crate::vecops::{axpy_kernel, dot_kernel};

/// The nuclear-norm (trace-norm) ball of radius `radius` in `R^{rows×cols}`, coordinates `X_ij` at
/// `i·cols + j`. Full-dimensional, centred at 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "NuclearNormSpec", into = "NuclearNormSpec")]
pub struct NuclearNormBall {
    rows: usize,
    cols: usize,
    radius: f64,
    geometry: Geometry,
    /// Lanczos on `DᵀD` (`cols <= rows`) or `D Dᵀ`, whichever is smaller.
    lanczos: Lanczos,
    /// Scratch: the Ritz vector (smaller side) and the other singular vector / intermediate product.
    small: Vec<f64>,
    large: Vec<f64>,
    unconverged: u64,
}

constructor_spec! {
    /// What a pickled [`NuclearNormBall`] stores: its constructor arguments (validated again on restore).
    NuclearNormSpec for NuclearNormBall |b| {
        rows: usize = b.rows,
        cols: usize = b.cols,
        radius: f64 = b.radius,
    }
}

impl NuclearNormBall {
    /// The ball of `rows × cols` matrices with nuclear norm at most `radius`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `rows` or `cols` is 0 or `radius` is not finite and `> 0`;
    /// [`CoreError::Allocation`] if `rows·cols` coordinates cannot be held.
    pub fn new(rows: usize, cols: usize, radius: f64) -> Result<Self> {
        let dim = crate::alloc::checked_len("NuclearNormBall", rows, cols)?;
        super::reserve_for("NuclearNormBall", dim)?;
        for (name, value) in [("rows", rows), ("cols", cols)] {
            if value < 1 {
                return Err(CoreError::invalid(name, ">= 1", value));
            }
        }
        check_positive("radius", radius)?;
        let (small, large) = (rows.min(cols), rows.max(cols));
        // Diameter `2·radius` (exact): `‖X‖_F ≤ ‖X‖_*`, attained by `±radius·u vᵀ`. Radius
        // `radius/√min(rows, cols)` (exact): `‖X‖_* ≤ √rank(X)·‖X‖_F` (Cauchy-Schwarz on the singular
        // values), and `(radius/k)·[I_k 0]` with `k = min(rows, cols)` is a boundary point at that Frobenius
        // distance.
        let inscribed = radius / (small as f64).sqrt();
        Ok(NuclearNormBall {
            rows,
            cols,
            radius,
            geometry: Geometry::new(2.0 * radius, vec![0.0; dim], Some(inscribed), dim),
            lanczos: Lanczos::new(small),
            small: vec![0.0; small],
            large: vec![0.0; large],
            unconverged: 0,
        })
    }

    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// How many LMO calls of this object returned a Lanczos pair that had not met its tolerance within the
    /// restart cap (expected 0; the vertex returned is still a feasible rank-one matrix).
    pub fn unconverged_calls(&self) -> u64 {
        self.unconverged
    }
}

/// `out = s·D q` for the row-major `rows × cols` matrix `d`.
#[inline(always)]
fn times(d: &[f64], cols: usize, s: f64, q: &[f64], out: &mut [f64]) {
    for (o, row) in out.iter_mut().zip(d.chunks_exact(cols)) {
        *o = s * dot_kernel(row, q);
    }
}

/// `out = s²·DᵀD q` for the row-major `rows × cols` matrix `d` in one pass over `d`: each row is read for
/// its inner product with `q` and, still in cache, added to `out` with that weight.
#[inline(always)]
fn gram_times(d: &[f64], cols: usize, s: f64, q: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for row in d.chunks_exact(cols) {
        axpy_kernel(out, s * s * dot_kernel(row, q), row);
    }
}

/// `out = s·Dᵀ p` for the row-major `rows × cols` matrix `d`.
#[inline(always)]
fn times_transpose(d: &[f64], cols: usize, s: f64, p: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (&pi, row) in p.iter().zip(d.chunks_exact(cols)) {
        axpy_kernel(out, s * pi, row);
    }
}

impl LinearMinimizationOracle for NuclearNormBall {
    /// `−radius·u vᵀ` for a top singular pair `(u, v)` of the direction `D` (a `rows × cols` matrix): the
    /// minimum of `⟨D, X⟩ = tr(DᵀX)` over the ball is `−radius·σ₁(D)` (the nuclear and spectral norms are
    /// dual). The top right (left) singular vector is the top eigenvector of `DᵀD` (`D Dᵀ`, whichever is
    /// smaller), found by the Lanczos method from a fixed start (`spectral::Lanczos`: residual at most
    /// `10⁻¹⁰‖DᵀD‖`, so the value is within a relative `10⁻¹⁰` of `−radius·σ₁`; per step one pass over `D`
    /// for `DᵀD q` — each row's inner product and update while it is in cache — or two for `D Dᵀ q`, at the
    /// CPU's widest vector level, [`crate::simd`]); the other vector is `D v/‖D v‖` (`e_1` if `D v = 0`). If the Lanczos restart cap is reached
    /// (never observed) the best pair is used and [`NuclearNormBall::unconverged_calls`] counts it. The
    /// result is always a feasible vertex; deterministic; no allocation.
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let (rows, cols) = (self.rows, self.cols);
        let s = power_of_two_scale(direction);
        let d = direction;
        // Each product runs at the CPU's widest vector level (the kernels are inlined into the dispatched
        // closure; the rest of a Lanczos step is small next to a pass over D).
        let large = &mut self.large;
        let pair = if cols <= rows {
            self.lanczos.solve(
                |q, out| {
                    crate::simd::dispatch(
                        #[inline(always)]
                        || gram_times(d, cols, s, q, out),
                    )
                },
                End::Largest,
                &mut self.small,
            )
        } else {
            self.lanczos.solve(
                |q, out| {
                    crate::simd::dispatch(
                        #[inline(always)]
                        || {
                            times_transpose(d, cols, s, q, large);
                            times(d, cols, s, large, out);
                        },
                    )
                },
                End::Largest,
                &mut self.small,
            )
        };
        self.unconverged += u64::from(!pair.converged);
        // The other singular vector: D v (for cols <= rows) or Dᵀ u, normalised.
        if cols <= rows {
            times(d, cols, s, &self.small, &mut self.large);
        } else {
            times_transpose(d, cols, s, &self.small, &mut self.large);
        }
        let norm = norm2(&self.large);
        if norm > 0.0 {
            self.large.iter_mut().for_each(|x| *x /= norm);
        } else {
            self.large.fill(0.0);
            self.large[0] = 1.0;
        }
        let (u, v) = if cols <= rows {
            (&self.large, &self.small)
        } else {
            (&self.small, &self.large)
        };
        for (row, &ui) in vertex.chunks_exact_mut(cols).zip(u.iter()) {
            let c = -self.radius * ui;
            row.iter_mut().zip(v.iter()).for_each(|(x, vj)| *x = c * vj);
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `‖X‖_* ≤ radius + atol`, the singular values by the one-sided Jacobi method (`spectral`):
    /// `O(rows·cols·min(rows, cols))` per sweep.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        let (rows, cols) = (self.rows, self.cols);
        if x.len() != rows * cols {
            return false;
        }
        let nuclear: f64 = singular_values(x, rows, cols).iter().sum();
        nuclear <= self.radius + atol
    }
}

#[cfg(test)]
mod tests {
    use super::super::spectral::symmetric_eigenvalues;
    use super::super::testing;
    use super::*;

    /// The largest singular value from the dense eigenvalues of `DᵀD`.
    fn top_singular_value(d: &[f64], rows: usize, cols: usize) -> f64 {
        let mut gram = vec![0.0; cols * cols];
        for a in 0..cols {
            for b in 0..cols {
                gram[a * cols + b] = (0..rows).map(|i| d[i * cols + a] * d[i * cols + b]).sum();
            }
        }
        symmetric_eigenvalues(&mut gram, cols)
            .last()
            .unwrap()
            .max(0.0)
            .sqrt()
    }

    #[test]
    fn lmo_attains_minus_radius_sigma_one() {
        let mut rng = testing::rng(91);
        for (rows, cols) in [(1, 1), (1, 5), (5, 1), (4, 4), (7, 3), (3, 9), (40, 30)] {
            let mut ball = NuclearNormBall::new(rows, cols, 2.5).unwrap();
            let mut v = vec![0.0; rows * cols];
            for trial in 0..10 {
                let d = testing::mixed_direction(&mut rng, rows * cols, trial, 3);
                ball.lmo(&d, &mut v);
                let value: f64 = d.iter().zip(&v).map(|(a, b)| a * b).sum();
                let want = -2.5 * top_singular_value(&d, rows, cols);
                assert!(
                    (value - want).abs() <= 1e-9 * (1.0 + want.abs()),
                    "{value} vs {want}"
                );
                assert!(ball.contains(&v, 1e-9));
                let mut again = vec![0.0; rows * cols];
                ball.lmo(&d, &mut again);
                assert_eq!(v, again);
            }
            assert_eq!(ball.unconverged_calls(), 0);
        }
    }

    #[test]
    fn degenerate_directions() {
        let mut ball = NuclearNormBall::new(3, 2, 1.0).unwrap();
        let mut v = vec![0.0; 6];
        ball.lmo(&[0.0; 6], &mut v);
        assert!(ball.contains(&v, 1e-12));
        assert!(
            (v.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12,
            "rank one, unit norm"
        );
        // Repeated top singular value (the identity block) and huge entries.
        ball.lmo(&[1e300, 0.0, 0.0, 1e300, 0.0, 0.0], &mut v);
        let value = 1e300 * (v[0] + v[3]);
        assert!((value / 1e300 + 1.0).abs() < 1e-9, "{v:?}");
    }

    #[test]
    fn geometry_certificate_and_frank_wolfe() {
        let mut ball = NuclearNormBall::new(4, 3, 2.0).unwrap();
        testing::certified_ball_is_inside(&mut ball, 92);
        testing::projection_is_orthogonal(&mut ball, 93);
        // (r/k)[I_k 0] is on the boundary, a hair further out is not.
        let r = ball.inscribed_radius().unwrap();
        let mut x = vec![0.0; 12];
        for i in 0..3 {
            x[i * 3 + i] = r / 3f64.sqrt();
        }
        assert!(ball.contains(&x, 1e-12));
        x.iter_mut().for_each(|v| *v *= 1.0 + 1e-6);
        assert!(!ball.contains(&x, 0.0));
        let mut domain = crate::domains::Domain::NuclearNormBall(Box::new(ball));
        testing::frank_wolfe_converges(&mut domain, 94);
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(
            NuclearNormBall::new(0, 3, 1.0)
                .unwrap_err()
                .to_string()
                .starts_with("rows")
        );
        assert!(
            NuclearNormBall::new(3, 0, 1.0)
                .unwrap_err()
                .to_string()
                .starts_with("cols")
        );
        assert!(NuclearNormBall::new(3, 3, -1.0).is_err());
        assert!(NuclearNormBall::new(usize::MAX, 3, 1.0).is_err());
    }

    #[test]
    fn serde_round_trip() {
        let mut b = NuclearNormBall::new(3, 5, 0.5).unwrap();
        let back = testing::state_round_trip(&mut b, &testing::gaussian(&mut testing::rng(92), 15));
        assert_eq!((back.shape(), back.radius), ((3, 5), 0.5));
    }
}
