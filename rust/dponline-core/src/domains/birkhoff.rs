//! The Birkhoff polytope: the `n × n` doubly stochastic matrices, flattened row-major.

use serde::{Deserialize, Serialize};

use super::assignment::Assignment;
use super::linalg::power_of_two_scale;
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The Birkhoff polytope `{X ∈ R^{n×n} : X ≥ 0, X 1 = 1, Xᵀ 1 = 1}`, coordinates `X_ij` at `i·n + j`.
///
/// Its vertices are the `n!` permutation matrices (Birkhoff 1946, von Neumann 1953).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "BirkhoffSpec", into = "BirkhoffSpec")]
pub struct BirkhoffPolytope {
    n: usize,
    geometry: Geometry,
    solver: Assignment,
    /// Projection scratch: row and column means.
    row_mean: Vec<f64>,
    col_mean: Vec<f64>,
}

constructor_spec! {
    /// What a pickled [`BirkhoffPolytope`] stores: its constructor argument (validated again on restore).
    BirkhoffSpec for BirkhoffPolytope |b| {
        n: usize = b.n,
    }
}

impl BirkhoffPolytope {
    /// The doubly stochastic `n × n` matrices.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `n < 2` (one point); [`CoreError::Allocation`] if `n²`
    /// coordinates cannot be held.
    pub fn new(n: usize) -> Result<Self> {
        let dim = crate::alloc::checked_len("BirkhoffPolytope", n, n)?;
        super::reserve_for("BirkhoffPolytope", dim)?;
        if n < 2 {
            return Err(CoreError::invalid("n", ">= 2", n));
        }
        let m = n as f64;
        // Diameter `√(2n)` (exact): two permutation matrices differ in at most `2n` entries, all of them when
        // one permutation is a derangement of the other. Centre: the uniform matrix `J/n`, the average of all
        // permutation matrices. Radius `1/(n − 1)` (exact): the tangent space is
        // `T = {U : U 1 = 0, Uᵀ 1 = 0}`, with projection `P = (I − J/n) ⊗ (I − J/n)`, so `‖P e_ij‖ = 1 − 1/n`
        // and a tangent `U` has `|U_ij| = |⟨U, P e_ij⟩| ≤ ‖U‖ (1 − 1/n)`. For `‖U‖ ≤ (1/n)/(1 − 1/n)` every
        // entry of `J/n + U` stays `≥ 0`, and the row and column sums stay 1; the facet `X_ij = 0` is at
        // exactly that distance. Affine dimension `(n − 1)²`.
        let geometry = Geometry::new(
            (2.0 * m).sqrt(),
            vec![1.0 / m; dim],
            Some(1.0 / (m - 1.0)),
            (n - 1) * (n - 1),
        );
        Ok(BirkhoffPolytope {
            n,
            geometry,
            solver: Assignment::new(n),
            row_mean: vec![0.0; n],
            col_mean: vec![0.0; n],
        })
    }

    /// The side `n`.
    pub fn n(&self) -> usize {
        self.n
    }
}

impl LinearMinimizationOracle for BirkhoffPolytope {
    /// The permutation matrix of a minimum-cost assignment for the costs `direction` (an `n × n` matrix),
    /// by shortest augmenting paths (see `assignment`): `O(n³)`, deterministic ties, no allocation.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let n = self.n;
        let scale = power_of_two_scale(direction);
        let cols = self.solver.solve(direction, scale);
        vertex.fill(0.0);
        for (i, &j) in cols.iter().enumerate() {
            vertex[i * n + j] = 1.0;
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `U_ij − r_i − c_j + g` with `r`, `c` the row and column means of `U` and `g` its mean: the projection
    /// `(I − J/n) U (I − J/n)`. `O(n²)`, no allocation.
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        let n = self.n;
        let inv = 1.0 / n as f64;
        self.col_mean.fill(0.0);
        for (row, r) in u.chunks_exact(n).zip(self.row_mean.iter_mut()) {
            *r = crate::vecops::sum(row) * inv;
            self.col_mean
                .iter_mut()
                .zip(row)
                .for_each(|(c, x)| *c += x * inv);
        }
        let grand = crate::vecops::sum(&self.row_mean) * inv;
        for (row, r) in u.chunks_exact_mut(n).zip(&self.row_mean) {
            let shift = grand - r;
            row.iter_mut()
                .zip(&self.col_mean)
                .for_each(|(x, c)| *x += shift - c);
        }
    }

    /// `X_ij ≥ −atol` and every row and column sum within `atol` of 1.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        let n = self.n;
        if x.len() != n * n || x.iter().any(|&v| v < -atol) {
            return false;
        }
        let rows_ok = x
            .chunks_exact(n)
            .all(|row| (row.iter().sum::<f64>() - 1.0).abs() <= atol);
        rows_ok && (0..n).all(|j| ((0..n).map(|i| x[i * n + j]).sum::<f64>() - 1.0).abs() <= atol)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// All `n!` permutation matrices.
    fn permutation_matrices(n: usize) -> Vec<Vec<f64>> {
        let mut out = Vec::new();
        let mut perm: Vec<usize> = (0..n).collect();
        fn heap(k: usize, perm: &mut Vec<usize>, out: &mut Vec<Vec<f64>>) {
            if k <= 1 {
                let n = perm.len();
                let mut x = vec![0.0; n * n];
                perm.iter()
                    .enumerate()
                    .for_each(|(i, &j)| x[i * n + j] = 1.0);
                out.push(x);
                return;
            }
            for i in 0..k {
                heap(k - 1, perm, out);
                let j = if k % 2 == 0 { i } else { 0 };
                perm.swap(j, k - 1);
            }
        }
        heap(n, &mut perm, &mut out);
        out
    }

    #[test]
    fn lmo_matches_brute_force() {
        for n in 2..=5 {
            let mut b = BirkhoffPolytope::new(n).unwrap();
            let vertices = permutation_matrices(n);
            assert_eq!(vertices.len(), (1..=n).product::<usize>());
            testing::lmo_matches_brute_force(&mut b, &vertices, n as u64);
        }
    }

    #[test]
    fn geometry_certificate_and_projection() {
        for n in [2, 3, 6] {
            let mut b = BirkhoffPolytope::new(n).unwrap();
            testing::certified_ball_is_inside(&mut b, 21);
            testing::projection_is_orthogonal(&mut b, 22);
            // The facet X_00 = 0 is reached at distance r along -P e_00.
            assert!(testing::towards_facet(&mut b, 0)[0].abs() < 1e-12);
        }
        let vertices = permutation_matrices(4);
        let diam = testing::diameter_of(&vertices);
        assert_eq!(BirkhoffPolytope::new(4).unwrap().diameter(), diam);
    }

    #[test]
    fn frank_wolfe_gap_closes() {
        let mut domain =
            crate::domains::Domain::Birkhoff(Box::new(BirkhoffPolytope::new(6).unwrap()));
        testing::frank_wolfe_converges(&mut domain, 23);
    }

    #[test]
    fn bad_arguments_are_refused() {
        for n in [0, 1] {
            assert!(
                BirkhoffPolytope::new(n)
                    .unwrap_err()
                    .to_string()
                    .starts_with("n must be")
            );
        }
        assert!(BirkhoffPolytope::new(usize::MAX / 2).is_err());
        assert!(
            !BirkhoffPolytope::new(2)
                .unwrap()
                .contains(&[1.0, 0.0, 1.0, 0.0], 1e-9)
        );
    }

    #[test]
    fn serde_round_trip() {
        let mut b = BirkhoffPolytope::new(3).unwrap();
        let back = testing::state_round_trip(&mut b, &testing::gaussian(&mut testing::rng(23), 9));
        assert_eq!(back.dim(), 9);
    }
}
