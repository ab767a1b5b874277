//! The spectraplex `{X ∈ S^n : X ⪰ 0, tr X = 1}` (density matrices), flattened row-major: the convex hull of
//! the rank-one matrices `v vᵀ` with unit `v`.

use serde::{Deserialize, Serialize};

use super::linalg::power_of_two_scale;
use super::spectral::{End, Lanczos, symmetric_eigenvalues};
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The spectraplex in `R^{n×n}`, coordinates `X_ij` at `i·n + j` (its points are symmetric).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "SpectraplexSpec", into = "SpectraplexSpec")]
pub struct Spectraplex {
    n: usize,
    geometry: Geometry,
    lanczos: Lanczos,
    /// Scratch: the symmetrised, scaled direction and the eigenvector.
    symmetric: Vec<f64>,
    vector: Vec<f64>,
    unconverged: u64,
}

constructor_spec! {
    /// What a pickled [`Spectraplex`] stores: its constructor argument (validated again on restore).
    SpectraplexSpec for Spectraplex |s| {
        n: usize = s.n,
    }
}

impl Spectraplex {
    /// The `n × n` density matrices.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `n < 2` (one point); [`CoreError::Allocation`] if `n²`
    /// coordinates cannot be held.
    pub fn new(n: usize) -> Result<Self> {
        let dim = crate::alloc::checked_len("Spectraplex", n, n)?;
        super::reserve_for("Spectraplex", dim)?;
        if n < 2 {
            return Err(CoreError::invalid("n", ">= 2", n));
        }
        let m = n as f64;
        // Centre `I/n`. Diameter `√2` (exact): `‖v vᵀ − w wᵀ‖² = 2 − 2(vᵀw)² ≤ 2`, attained for orthogonal
        // `v`, `w`. Radius `1/√(n(n−1))` (exact): for a tangent `H` (symmetric, trace 0), the eigenvalues sum
        // to 0, so `max|λ_i(H)|² ≤ (1 − 1/n)·Σλ_i² = (1 − 1/n)‖H‖²`; with `‖H‖ ≤ 1/√(n(n−1))`,
        // `λ_min(I/n + H) ≥ 1/n − 1/n = 0`. The bound is attained along `H ∝ I/n − e_1 e_1ᵀ`, which reaches
        // `X_11 = 0` at exactly that distance. Affine dimension `n(n+1)/2 − 1`.
        let mut center = vec![0.0; dim];
        (0..n).for_each(|i| center[i * n + i] = 1.0 / m);
        let geometry = Geometry::new(
            std::f64::consts::SQRT_2,
            center,
            Some(1.0 / (m * (m - 1.0)).sqrt()),
            n * (n + 1) / 2 - 1,
        );
        Ok(Spectraplex {
            n,
            geometry,
            lanczos: Lanczos::new(n),
            symmetric: vec![0.0; dim],
            vector: vec![0.0; n],
            unconverged: 0,
        })
    }

    /// The side `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// How many LMO calls returned a Lanczos pair that had not met its tolerance within the restart cap
    /// (expected 0; the vertex is still feasible).
    pub fn unconverged_calls(&self) -> u64 {
        self.unconverged
    }
}

impl LinearMinimizationOracle for Spectraplex {
    /// `v vᵀ` for a bottom eigenvector `v` of `S = (D + Dᵀ)/2` (for symmetric `X`, `⟨D, X⟩ = ⟨S, X⟩`, whose
    /// minimum over the spectraplex is `λ_min(S)`), by the Lanczos method from a fixed start
    /// (`spectral::Lanczos`: residual at most `10⁻¹⁰‖S‖`, so the value is within `10⁻¹⁰‖S‖` of `λ_min` for a
    /// start not orthogonal to the bottom eigenspace; one product with `S` per step). If the restart cap is
    /// reached (never observed) the best pair is used and [`Spectraplex::unconverged_calls`] counts it. Always
    /// a feasible vertex; deterministic; no allocation.
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let n = self.n;
        let s = 0.5 * power_of_two_scale(direction);
        for i in 0..n {
            for j in 0..n {
                self.symmetric[i * n + j] = s * (direction[i * n + j] + direction[j * n + i]);
            }
        }
        let symmetric = &self.symmetric;
        let pair = self.lanczos.solve(
            |q, out| {
                crate::simd::dispatch(
                    #[inline(always)]
                    || {
                        for (o, row) in out.iter_mut().zip(symmetric.chunks_exact(n)) {
                            *o = crate::vecops::dot_kernel(row, q);
                        }
                    },
                )
            },
            End::Smallest,
            &mut self.vector,
        );
        self.unconverged += u64::from(!pair.converged);
        for (row, &vi) in vertex.chunks_exact_mut(n).zip(&self.vector) {
            row.iter_mut()
                .zip(&self.vector)
                .for_each(|(x, vj)| *x = vi * vj);
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Symmetrise, then subtract `tr/n` from the diagonal: the orthogonal projection of `R^{n×n}` onto the
    /// symmetric matrices of trace 0. `O(n²)`, in place.
    fn project_tangent(&mut self, u: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            for j in 0..i {
                let m = 0.5 * (u[i * n + j] + u[j * n + i]);
                u[i * n + j] = m;
                u[j * n + i] = m;
            }
        }
        let mean = (0..n).map(|i| u[i * n + i]).sum::<f64>() / n as f64;
        (0..n).for_each(|i| u[i * n + i] -= mean);
    }

    /// `|X_ij − X_ji| ≤ atol`, `|tr X − 1| ≤ atol` and `λ_min((X + Xᵀ)/2) ≥ −atol` (Householder
    /// tridiagonalisation and bisection, `O(n³)`).
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        let n = self.n;
        if x.len() != n * n {
            return false;
        }
        let symmetric = (0..n).all(|i| (0..i).all(|j| (x[i * n + j] - x[j * n + i]).abs() <= atol));
        let trace: f64 = (0..n).map(|i| x[i * n + i]).sum();
        if !symmetric || (trace - 1.0).abs() > atol {
            return false;
        }
        let mut a: Vec<f64> = (0..n * n)
            .map(|k| 0.5 * (x[k] + x[(k % n) * n + k / n]))
            .collect();
        symmetric_eigenvalues(&mut a, n)
            .first()
            .is_some_and(|&l| l >= -atol)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    #[test]
    fn lmo_attains_the_smallest_eigenvalue() {
        let mut rng = testing::rng(101);
        for n in [2, 3, 5, 12, 40] {
            let mut s = Spectraplex::new(n).unwrap();
            let mut v = vec![0.0; n * n];
            for trial in 0..10 {
                let d = testing::mixed_direction(&mut rng, n * n, trial, 3);
                s.lmo(&d, &mut v);
                let value: f64 = d.iter().zip(&v).map(|(a, b)| a * b).sum();
                let mut sym: Vec<f64> = (0..n * n)
                    .map(|k| 0.5 * (d[k] + d[(k % n) * n + k / n]))
                    .collect();
                let want = symmetric_eigenvalues(&mut sym, n)[0];
                assert!(
                    (value - want).abs() <= 1e-9 * (1.0 + want.abs()),
                    "{value} vs {want}"
                );
                assert!(s.contains(&v, 1e-9));
            }
            assert_eq!(s.unconverged_calls(), 0);
        }
    }

    #[test]
    fn geometry_certificate_and_frank_wolfe() {
        for n in [2, 4] {
            let mut s = Spectraplex::new(n).unwrap();
            testing::certified_ball_is_inside(&mut s, 102);
            testing::projection_is_orthogonal(&mut s, 103);
        }
        // The radius is tight: towards e_1 e_1ᵀ's opposite face.
        let mut s = Spectraplex::new(3).unwrap();
        let x = testing::towards_facet(&mut s, 0);
        assert!(x[0].abs() < 1e-12 && s.contains(&x, 1e-12));
        let mut domain =
            crate::domains::Domain::Spectraplex(Box::new(Spectraplex::new(5).unwrap()));
        testing::frank_wolfe_converges(&mut domain, 104);
    }

    #[test]
    fn membership_and_bad_arguments() {
        let s = Spectraplex::new(2).unwrap();
        assert!(s.contains(&[0.5, 0.5, 0.5, 0.5], 1e-12));
        assert!(!s.contains(&[0.5, 0.6, 0.4, 0.5], 1e-9), "not symmetric");
        assert!(!s.contains(&[1.5, 0.0, 0.0, -0.5], 1e-9), "not PSD");
        assert!(!s.contains(&[0.5, 0.0, 0.0, 0.4], 1e-9), "trace");
        for n in [0, 1] {
            assert!(Spectraplex::new(n).is_err());
        }
    }
}
