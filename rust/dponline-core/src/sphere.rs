//! Uniform random directions: on the sphere `S^{d−1}`, in the ball `B^d`, and within a linear subspace.
//!
//! Method: an isotropic Gaussian vector normalised to unit length is uniform on the sphere (Muller 1959);
//! its orthogonal projection onto a subspace is isotropic in that subspace, so projecting *before*
//! normalising gives the uniform distribution on the unit sphere of the subspace. A uniform point of the
//! ball is a uniform direction scaled by `U^{1/d}`.

use rand_distr::StandardNormal;

use crate::rng::Generator;

/// Overwrite `out` with a uniform unit vector of `R^{out.len()}`. Allocation-free.
pub fn unit_sphere(rng: &mut Generator, out: &mut [f64]) {
    unit_sphere_in(rng, out, |_| {});
}

/// Overwrite `out` with a uniform unit vector of the linear subspace onto which `project` projects
/// orthogonally (in place). Allocation-free if `project` is.
///
/// The Gaussian draw is repeated in the (probability-zero) event that its projection is exactly 0.
pub fn unit_sphere_in(rng: &mut Generator, out: &mut [f64], project: impl FnMut(&mut [f64])) {
    let norm = gaussian_in(rng, out, project);
    let inv = 1.0 / norm;
    out.iter_mut().for_each(|v| *v *= inv);
}

/// Overwrite `out` with an isotropic Gaussian vector of the subspace onto which `project` projects, and
/// return its (strictly positive) norm: `out / norm` is then uniform on the subspace's unit sphere. Hot loops
/// use this to fold the normalisation into their next pass.
#[inline]
pub fn gaussian_in(
    rng: &mut Generator,
    out: &mut [f64],
    mut project: impl FnMut(&mut [f64]),
) -> f64 {
    loop {
        rng.fill_from(&StandardNormal, out);
        project(out);
        let norm = crate::vecops::dot(out, out).sqrt();
        if norm > 0.0 {
            return norm;
        }
    }
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
