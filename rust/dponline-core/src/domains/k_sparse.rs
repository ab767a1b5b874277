//! The `k`-sparse polytope: the convex hull of the vectors of `R^n` with at most `k` non-zero entries, each in
//! `[−radius, radius]`.

use serde::{Deserialize, Serialize};

use super::l1_ball::{l1_norm, vertex_entry};
use super::selection::{KSmallest, SAMPLE_CAPACITY};
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_positive};

/// The `k`-sparse polytope `conv{x : ‖x‖₀ ≤ k, ‖x‖_∞ ≤ radius}` in `R^n`.
///
/// Its linear description is `{x : ‖x‖_∞ ≤ radius, ‖x‖₁ ≤ k·radius}` (for integer `k`, every vertex of that
/// intersection has `k` entries `±radius` and the rest 0: at a vertex, `n` linearly independent constraints
/// are tight, and the only ℓ1 facet normals are sign vectors). Vertices: `k` entries `±radius`, the rest 0.
/// `k = 1` is the ℓ1 ball, `k = n` the box `[−radius, radius]^n`. Full-dimensional, centred at the origin.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "KSparseSpec", into = "KSparseSpec")]
pub struct KSparsePolytope {
    k: usize,
    radius: f64,
    geometry: Geometry,
    /// Selection scratch: `−|d_i|`, and the sample buffer of [`KSmallest`].
    scratch: Vec<f64>,
    sample: Vec<f64>,
}

constructor_spec! {
    /// What a pickled [`KSparsePolytope`] stores: its constructor arguments (validated again on restore).
    KSparseSpec for KSparsePolytope |p| {
        n: usize = p.geometry.center.len(),
        k: usize = p.k,
        radius: f64 = p.radius,
    }
}

impl KSparsePolytope {
    /// The `k`-sparse polytope in `R^n` with entries bounded by `radius`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if not `1 <= k <= n` or `radius` is not finite and `> 0`.
    pub fn new(n: usize, k: usize, radius: f64) -> Result<Self> {
        super::reserve_for("KSparsePolytope", n)?;
        if n < 1 {
            return Err(CoreError::invalid("n", ">= 1", n));
        }
        if k < 1 || k > n {
            return Err(CoreError::invalid(
                "k",
                ">= 1 and <= n",
                format!("{k} (n = {n})"),
            ));
        }
        check_positive("radius", radius)?;
        // Diameter `2·radius·√k` (exact: between a vertex and its negative). Inscribed radius
        // `radius·min(1, k/√n)` (exact): the distances from 0 to the facet hyperplanes `x_i = ±radius` and
        // `⟨s, x⟩ = k·radius` (`s` a sign vector, `‖s‖ = √n`) are `radius` and `k·radius/√n`, and a ball
        // closer to no facet hyperplane than its radius lies in every half-space.
        let (nf, kf) = (n as f64, k as f64);
        Ok(KSparsePolytope {
            k,
            radius,
            geometry: Geometry::new(
                2.0 * radius * kf.sqrt(),
                vec![0.0; n],
                Some(radius * (kf / nf.sqrt()).min(1.0)),
                n,
            ),
            scratch: vec![0.0; n],
            sample: Vec::with_capacity(SAMPLE_CAPACITY),
        })
    }
}

impl LinearMinimizationOracle for KSparsePolytope {
    /// `−radius·sign(d_i)` at the `k` largest `|d_i|` (lowest index on ties; `+radius` where `d_i = 0`, as
    /// the ℓ1 ball), 0 elsewhere: `⟨d, x⟩ ≥ −radius·(sum of the k largest |d_i|)` on the polytope, with
    /// equality there. `O(n)` by selection on `−|d_i|`, allocation-free.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let n = direction.len();
        let magnitudes = direction.iter().map(|d| -d.abs());
        let mut choice = KSmallest::new(magnitudes, n, self.k, &mut self.scratch, &mut self.sample);
        for (v, &d) in vertex.iter_mut().zip(direction) {
            *v = if choice.take(-d.abs()) {
                vertex_entry(d, self.radius)
            } else {
                0.0
            };
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `|x_i| ≤ radius + atol` and `Σ|x_i| ≤ k·radius + atol`.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.geometry.center.len()
            && x.iter().all(|v| v.abs() <= self.radius + atol)
            && l1_norm(x) <= self.k as f64 * self.radius + atol
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Every vector with `k` entries `±radius` and the rest 0.
    fn vertices(n: usize, k: usize, radius: f64) -> Vec<Vec<f64>> {
        let mut out = Vec::new();
        for support in testing::k_subsets(n, k) {
            for signs in 0u32..1 << k {
                let mut v = vec![0.0; n];
                for (j, &i) in support.iter().enumerate() {
                    v[i] = if signs >> j & 1 == 1 { radius } else { -radius };
                }
                out.push(v);
            }
        }
        out
    }

    #[test]
    fn lmo_matches_brute_force() {
        for (n, k, radius) in [
            (1, 1, 1.0),
            (4, 2, 0.5),
            (6, 3, 2.0),
            (5, 5, 1.0),
            (7, 1, 3.0),
        ] {
            let mut p = KSparsePolytope::new(n, k, radius).unwrap();
            testing::lmo_matches_brute_force(&mut p, &vertices(n, k, radius), n as u64);
        }
    }

    #[test]
    fn ties_and_zeros() {
        let mut p = KSparsePolytope::new(5, 2, 1.0).unwrap();
        let mut v = [0.0; 5];
        p.lmo(&[1.0, -1.0, 1.0, 0.5, -1.0], &mut v);
        assert_eq!(v, [-1.0, 1.0, 0.0, 0.0, 0.0]);
        p.lmo(&[0.0; 5], &mut v);
        assert_eq!(v, [1.0, 1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn geometry_certificate_and_projection() {
        for (n, k) in [(4, 1), (4, 2), (9, 3), (9, 9), (3, 2)] {
            let mut p = KSparsePolytope::new(n, k, 1.5).unwrap();
            testing::certified_ball_is_inside(&mut p, 7);
            testing::projection_is_orthogonal(&mut p, 8);
            let brute = vertices(n, k, 1.5);
            let diam = testing::diameter_of(&brute);
            assert!((p.diameter() - diam).abs() < 1e-12);
            // The radius is tight: the ball touches a facet.
            let r = p.inscribed_radius().unwrap();
            let towards = if k as f64 >= (n as f64).sqrt() {
                let mut e = vec![0.0; n];
                e[0] = r;
                e
            } else {
                vec![r / (n as f64).sqrt(); n]
            };
            assert!(p.contains(&towards, 1e-12));
            let beyond: Vec<f64> = towards.iter().map(|x| x * (1.0 + 1e-6)).collect();
            assert!(!p.contains(&beyond, 0.0));
        }
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(KSparsePolytope::new(0, 1, 1.0).is_err());
        for k in [0, 4] {
            let err = KSparsePolytope::new(3, k, 1.0).unwrap_err().to_string();
            assert!(err.starts_with("k must be"), "{err}");
        }
        for r in [0.0, f64::NAN, f64::INFINITY] {
            assert!(KSparsePolytope::new(3, 1, r).is_err());
        }
    }

    #[test]
    fn serde_round_trip() {
        let mut p = KSparsePolytope::new(6, 2, 0.5).unwrap();
        let back = testing::state_round_trip(&mut p, &testing::gaussian(&mut testing::rng(9), 6));
        assert_eq!((back.dim(), back.k, back.radius), (6, 2, 0.5));
    }
}
