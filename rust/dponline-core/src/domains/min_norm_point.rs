//! Wolfe's minimum-norm-point algorithm (Wolfe 1976, "Finding the nearest point in a polytope") over a
//! polytope given by its LMO: the Euclidean projection of a point, used by the submodular base polytope's
//! membership test (Fujishige 1980: the minimum-norm point of `B(f) − x` reveals a minimiser of `f − x`).
//!
//! The iterate is kept as a convex combination of at most `dim + 1` affinely independent vertices (the
//! *corral*). A major cycle adds the LMO vertex for the current point; minor cycles move to the affine
//! minimiser of the corral, or as far towards it as the convex weights allow, dropping the vertices whose
//! weight reaches 0. Allocates (it serves membership tests, not hot loops).

use super::linalg::Cholesky;

/// Weights below this are dropped from the corral.
const WEIGHT_FLOOR: f64 = 1e-14;

/// Relative optimality tolerance: stop when `‖z‖² − ⟨z, p⟩ ≤ OPTIMALITY · max‖p_i‖²` for the new LMO point `p`.
const OPTIMALITY: f64 = 1e-13;

/// The point `z = y − x` for `y` (approximately) the point of `conv(vertices)` nearest to `x`, where `lmo(d,
/// out)` writes a vertex minimising `⟨d, ·⟩`. At most `major_cap` major cycles (each one LMO call and at
/// most `dim + 1` minor cycles); then the current `z` is returned.
pub(super) fn nearest_point_offset(
    x: &[f64],
    mut lmo: impl FnMut(&[f64], &mut [f64]),
    major_cap: usize,
) -> Vec<f64> {
    let n = x.len();
    let mut vertex = vec![0.0; n];
    let neg: Vec<f64> = x.iter().map(|v| -v).collect();
    lmo(&neg, &mut vertex);
    let offset = |v: &[f64]| -> Vec<f64> { v.iter().zip(x).map(|(a, b)| a - b).collect() };
    let mut corral: Vec<Vec<f64>> = vec![offset(&vertex)];
    let mut weights = vec![1.0];
    let mut z = corral[0].clone();
    let dot = |a: &[f64], b: &[f64]| crate::vecops::dot(a, b);
    for _ in 0..major_cap {
        lmo(&z, &mut vertex);
        let p = offset(&vertex);
        let scale = corral
            .iter()
            .chain(std::iter::once(&p))
            .map(|q| dot(q, q))
            .fold(0.0, f64::max);
        if dot(&z, &z) - dot(&z, &p) <= OPTIMALITY * scale || corral.contains(&p) {
            break;
        }
        corral.push(p);
        weights.push(0.0);
        while let Some(alpha) = affine_minimizer(&corral) {
            if alpha.iter().all(|&a| a > WEIGHT_FLOOR) {
                weights = alpha;
                break;
            }
            // Move from the weights towards alpha until a weight reaches 0.
            let theta = weights
                .iter()
                .zip(&alpha)
                .filter(|(_, a)| **a <= WEIGHT_FLOOR)
                .map(|(w, a)| w / (w - a))
                .fold(1.0, f64::min);
            for (w, a) in weights.iter_mut().zip(&alpha) {
                *w = (1.0 - theta) * *w + theta * a;
            }
            let before = corral.len();
            let mut keep = weights.iter().map(|&w| w > WEIGHT_FLOOR);
            corral.retain(|_| keep.next().unwrap_or(false));
            weights.retain(|&w| w > WEIGHT_FLOOR);
            let total: f64 = weights.iter().sum();
            weights.iter_mut().for_each(|w| *w /= total);
            if corral.len() == before || corral.is_empty() {
                break;
            }
        }
        if corral.is_empty() {
            break;
        }
        z.fill(0.0);
        for (q, &w) in corral.iter().zip(&weights) {
            z.iter_mut().zip(q).for_each(|(z, q)| *z += w * q);
        }
    }
    z
}

/// The weights `α` (summing to 1) of the point of the affine hull of `points` nearest to the origin:
/// `α = β / Σβ` for `(G + 11ᵀ) β = 1`, `G` the Gram matrix (non-singular iff the points are affinely
/// independent). `None` if the factorisation fails.
fn affine_minimizer(points: &[Vec<f64>]) -> Option<Vec<f64>> {
    let k = points.len();
    let mut lower = Vec::with_capacity(k * (k + 1) / 2);
    for i in 0..k {
        for j in 0..=i {
            lower.push(crate::vecops::dot(&points[i], &points[j]) + 1.0);
        }
    }
    let factor = Cholesky::factor(k, lower)?;
    let mut beta = vec![1.0; k];
    factor.solve_in_place(&mut beta);
    let total: f64 = beta.iter().sum();
    (total.is_finite() && total != 0.0).then(|| beta.iter().map(|b| b / total).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LMO of the unit square `[0, 1]²`.
    fn square(d: &[f64], out: &mut [f64]) {
        for (o, &v) in out.iter_mut().zip(d) {
            *o = if v < 0.0 { 1.0 } else { 0.0 };
        }
    }

    #[test]
    fn projects_onto_a_square() {
        for (x, nearest) in [
            ([2.0, 0.5], [1.0, 0.5]),
            ([-1.0, -2.0], [0.0, 0.0]),
            ([0.3, 0.6], [0.3, 0.6]),
            ([3.0, 3.0], [1.0, 1.0]),
        ] {
            let z = nearest_point_offset(&x, square, 100);
            for i in 0..2 {
                assert!((x[i] + z[i] - nearest[i]).abs() < 1e-12, "{x:?}: {z:?}");
            }
        }
    }
}
