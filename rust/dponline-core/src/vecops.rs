//! Small dense-vector kernels used in hot loops.
//!
//! Reductions keep four independent partial sums so the additions are not one serial dependency chain
//! (a sequential `f64` sum of `n` terms costs `n` floating-point-add latencies). The summation order is
//! fixed, so results are deterministic and identical on every run and platform.

/// `Σ a_i`, with four partial sums.
#[inline]
pub fn sum(a: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let chunks = a.chunks_exact(4);
    let tail: f64 = chunks.remainder().iter().sum();
    for c in chunks {
        for k in 0..4 {
            acc[k] += c[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `⟨a, b⟩`, with four partial sums. The slices must have equal length.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// For the Frank-Wolfe step from `x` towards vertex `s` with gradient `g`: returns
/// `(⟨g, x − s⟩, ‖s − x‖²)` (the Frank-Wolfe gap and the squared step length), with four partial sums each.
#[inline]
pub fn gap_and_distance(g: &[f64], x: &[f64], s: &[f64]) -> (f64, f64) {
    let (mut gap, mut dist) = ([0.0; 4], [0.0; 4]);
    let (cg, cx, cs) = (g.chunks_exact(4), x.chunks_exact(4), s.chunks_exact(4));
    let (mut gap_tail, mut dist_tail) = (0.0, 0.0);
    for ((gi, xi), si) in cg
        .remainder()
        .iter()
        .zip(cx.remainder())
        .zip(cs.remainder())
    {
        let d = si - xi;
        gap_tail -= gi * d;
        dist_tail += d * d;
    }
    for ((gc, xc), sc) in cg.zip(cx).zip(cs) {
        for k in 0..4 {
            let d = sc[k] - xc[k];
            gap[k] -= gc[k] * d;
            dist[k] += d * d;
        }
    }
    (
        (gap[0] + gap[1]) + (gap[2] + gap[3]) + gap_tail,
        (dist[0] + dist[1]) + (dist[2] + dist[3]) + dist_tail,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_naive_sums() {
        for n in 0..23 {
            let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 1.3).cos()).collect();
            assert!((sum(&a) - a.iter().sum::<f64>()).abs() < 1e-12);
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-12);
        }
    }
}
