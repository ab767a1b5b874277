//! Uniform random directions: on the sphere `S^{d−1}`, in the ball `B^d`, and within a linear subspace.
//!
//! Method: an isotropic Gaussian vector normalised to unit length is uniform on the sphere (Muller 1959);
//! its orthogonal projection onto a subspace is isotropic in that subspace, so projecting *before*
//! normalising gives the uniform distribution on the unit sphere of the subspace. A uniform point of the
//! ball is a uniform direction scaled by `U^{1/d}`.

use crate::noise::NoiseDistribution;
use crate::rng::Generator;

/// Overwrite `out` with a uniform unit vector of `R^{out.len()}`. Allocation-free.
pub fn unit_sphere(rng: &mut Generator, out: &mut [f64]) {
    unit_sphere_in(rng, out, |_| {});
}

/// Overwrite `out` with a uniform unit vector of the linear subspace onto which `project` projects
/// orthogonally (in place). Allocation-free if `project` is.
///
/// When the subspace is `{0}` (a domain whose affine hull is a single point) there is no unit vector:
/// `out` is then the zero vector, so a learner perturbing along it plays its point exactly (see
/// [`gaussian_in`]).
pub fn unit_sphere_in(rng: &mut Generator, out: &mut [f64], project: impl FnMut(&mut [f64])) {
    let norm = gaussian_in(rng, out, project);
    let inv = 1.0 / norm;
    out.iter_mut().for_each(|v| *v *= inv);
}

/// Draws [`gaussian_in`] makes before concluding that the subspace is `{0}`.
pub const MAX_DRAWS: u32 = 16;

/// A projected draw counts as zero below this fraction of the norm of the unprojected draw: projecting onto
/// `{0}` in floating point leaves rounding residue of order `1e-16` relative, which must not be normalised
/// into a spurious "direction".
const ZERO_RELATIVE: f64 = 1e-9;

/// Overwrite `out` with an isotropic Gaussian vector of the subspace onto which `project` projects, and
/// return its (strictly positive) norm: `out / norm` is then uniform on the subspace's unit sphere. Hot loops
/// use this to fold the normalisation into their next pass.
///
/// A draw whose projection is shorter than `1e-9` times the draw is redrawn. The direction of an isotropic
/// Gaussian is independent of its norm, so this rejection leaves the direction exactly uniform; for a
/// subspace of dimension `k >= 1` it happens with probability below `(1e-9 · √n)^k`. After [`MAX_DRAWS`]
/// rejections in a row the subspace is `{0}` (up to rounding): `out` is set to zero and `1.0` returned,
/// so the iteration count is bounded for every input.
#[inline]
pub fn gaussian_in(
    rng: &mut Generator,
    out: &mut [f64],
    mut project: impl FnMut(&mut [f64]),
) -> f64 {
    for _ in 0..MAX_DRAWS {
        // Standard normal draws (σ = 1: the ziggurat's values unscaled), through the noise module's inlined fill.
        NoiseDistribution::Gaussian { sigma: 1.0 }.fill(rng, out);
        let raw = crate::vecops::dot(out, out);
        project(out);
        let norm = crate::vecops::dot(out, out).sqrt();
        if norm > ZERO_RELATIVE * raw.sqrt() && norm.is_finite() {
            return norm;
        }
    }
    out.fill(0.0);
    1.0
}

/// Overwrite `out` with a uniform point of the unit ball of `R^{out.len()}`.
pub fn unit_ball(rng: &mut Generator, out: &mut [f64]) {
    unit_sphere(rng, out);
    let radius = rng.open01().powf(1.0 / out.len() as f64);
    out.iter_mut().for_each(|v| *v *= radius);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_have_unit_norm_and_zero_mean() {
        let mut rng = Generator::from_seed([3, 1, 4, 1]);
        let d = 5;
        let mut u = vec![0.0; d];
        let mut mean = vec![0.0; d];
        let n = 100_000;
        for _ in 0..n {
            unit_sphere_in(&mut rng, &mut u, |v| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                v.iter_mut().for_each(|x| *x -= m);
            });
            assert!((u.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(u.iter().sum::<f64>().abs() < 1e-12);
            mean.iter_mut()
                .zip(&u)
                .for_each(|(m, x)| *m += x / n as f64);
        }
        // Each coordinate has variance (1 - 1/d)/(d - 1) = 1/d; 6 sd of the mean.
        let tol = 6.0 * (1.0 / d as f64 / n as f64).sqrt();
        assert!(mean.iter().all(|m| m.abs() < tol), "{mean:?}");
    }

    #[test]
    fn the_zero_subspace_gives_the_zero_vector_after_a_bounded_number_of_draws() {
        let mut rng = Generator::from_seed([1, 2, 3, 4]);
        let mut u = [0.0; 4];
        let mut calls = 0;
        // Rounding residue only: a "projection onto {0}" that leaves 1e-17 relative noise.
        unit_sphere_in(&mut rng, &mut u, |v| {
            calls += 1;
            v.iter_mut().for_each(|x| *x *= 1e-17);
        });
        assert_eq!(u, [0.0; 4]);
        assert_eq!(calls, MAX_DRAWS);
    }

    #[test]
    fn ball_radius_distribution() {
        // P(|x| <= 1/2) = 2^-d for the uniform ball.
        let mut rng = Generator::from_seed([2, 7, 1, 8]);
        let mut x = [0.0; 3];
        let n = 80_000;
        let inside = (0..n)
            .filter(|_| {
                unit_ball(&mut rng, &mut x);
                x.iter().map(|v| v * v).sum::<f64>().sqrt() <= 0.5
            })
            .count() as f64
            / n as f64;
        let p: f64 = 0.125;
        assert!((inside - p).abs() < 6.0 * (p * (1.0 - p) / n as f64).sqrt());
    }
}
