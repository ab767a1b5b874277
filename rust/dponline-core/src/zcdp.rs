//! Zero-concentrated differential privacy (zCDP) budgets: the conversion of `ρ`-zCDP to `(ε, δ)`-DP and its
//! inverse, for learners whose rates the core derives from `ε` and `δ` itself.
//!
//! * [`epsilon`] — the Canonne-Kamath-Steinke conversion (Canonne, Kamath & Steinke 2020, "The discrete Gaussian
//!   for differential privacy", Proposition 12 and Corollary 13): a `ρ`-zCDP mechanism is `(ε, δ)`-DP with
//!   `ε = inf_{α>1} αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1)`. Every order `α` gives a valid `ε`, so a
//!   numerically imperfect minimiser errs only on the conservative side.
//! * [`largest_rho`] — the largest `ρ` whose conversion is at most `ε`, found by bisection from the closed form
//!   of Bun & Steinke 2016, Proposition 1.3 (`ε = ρ + 2 sqrt(ρ ln(1/δ))`), which is always feasible.
//!
//! The Python functions `dponline.privacy.zcdp_to_dp` and `zcdp_gaussian_sigma` compute the same quantities; the
//! tests check the two against each other.

use std::cell::Cell;

/// Golden-section stopping width of [`epsilon`] in `ln(gap)`: the bound is flat at its minimum, so this leaves
/// its value within about `1e-16` relative of the minimum (at most 60 steps from any bracket it starts with).
const GOLDEN_WIDTH: f64 = 1e-8;
/// Relative stopping width of [`largest_rho`]'s bisection.
const BISECTION_WIDTH: f64 = 1e-12;

/// The CKS bound at order `α = 1 + gap` for `ρ`-zCDP (`log_inv_delta = ln(1/δ)`), written in `gap` so that orders
/// near 1 lose no precision: `(1 + gap)ρ + ln(gap/(1 + gap)) + (ln(1/δ) − ln(1 + gap))/gap`, plus a margin for
/// its floating-point evaluation (16 ulps of the sum of the terms' magnitudes, above the few roundings each
/// term has): the terms can cancel (a small `ε` against a larger `δ`), and the value returned stays an upper
/// bound.
fn cks_bound(gap: f64, rho: f64, log_inv_delta: f64) -> f64 {
    let log_alpha = gap.ln_1p();
    let terms = [
        (1.0 + gap) * rho,
        gap.ln() - log_alpha,
        (log_inv_delta - log_alpha) / gap,
    ];
    let magnitude: f64 = terms.iter().map(|x| x.abs()).sum();
    terms.iter().sum::<f64>() + 16.0 * f64::EPSILON * magnitude
}

/// The `ε` for which a `ρ`-zCDP mechanism is `(ε, δ)`-DP (CKS 2020, Corollary 13), clipped at 0.
///
/// `rho` must be finite and `>= 0` and `delta` in `(0, 1)` (callers validate; outside, the result is NaN or 0).
/// The bound is unimodal in the order: its derivative in `gap = α − 1` has the sign of
/// `ρ·gap² + ln(1 + gap) − ln(1/δ)`, increasing in `gap`, so the minimiser lies between
/// `min(sqrt(L/(2ρ)), e^{L/2} − 1)` and `min(sqrt(L/ρ), e^L − 1)` (`L = ln(1/δ)`); a golden-section search over
/// `ln(gap)` in that bracket finds it. The value returned is the bound at the order found, itself a valid `ε`.
pub fn epsilon(rho: f64, delta: f64) -> f64 {
    if rho == 0.0 {
        return 0.0;
    }
    let log_inv_delta = -delta.ln();
    let lo = (log_inv_delta / (2.0 * rho))
        .sqrt()
        .min((0.5 * log_inv_delta).exp_m1());
    let hi = (log_inv_delta / rho).sqrt().min(log_inv_delta.exp_m1());
    let f = |u: f64| cks_bound(u.exp(), rho, log_inv_delta);
    let ratio = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (lo.ln(), hi.ln());
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    while b - a > GOLDEN_WIDTH {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - ratio * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + ratio * (b - a);
            fd = f(d);
        }
    }
    fc.min(fd).min(f(a)).min(f(b)).max(0.0)
}

/// The largest `ρ` (to a relative `1e-12`, rounded towards less) such that `ρ`-zCDP implies `(ε, δ)`-DP by
/// [`epsilon`]; `epsilon(largest_rho(ε, δ), δ) <= ε` always holds.
///
/// `epsilon` must be finite and `> 0` and `delta` in `(0, 1)` (callers validate). Starts from Bun & Steinke's
/// closed form `ρ = (sqrt(ln(1/δ) + ε) − sqrt(ln(1/δ)))²`, which meets the target (their conversion is looser).
/// About 2,000 evaluations of the bound (tens of microseconds); the last answer is kept per thread, so building
/// many learners with one `(ε, δ)` pays once.
pub fn largest_rho(epsilon_target: f64, delta: f64) -> f64 {
    thread_local! {
        static LAST: Cell<(u64, u64, f64)> = const { Cell::new((0, 0, 0.0)) };
    }
    let key = (epsilon_target.to_bits(), delta.to_bits());
    let (e, d, rho) = LAST.with(Cell::get);
    if (e, d) == key {
        return rho;
    }
    let rho = search_rho(epsilon_target, delta);
    LAST.with(|last| last.set((key.0, key.1, rho)));
    rho
}

/// The bisection of [`largest_rho`], uncached. A budget that underflows (`ε` below about `1e-150`) is returned as
/// it is (0 or subnormal: the caller refuses the rate it gives); a budget whose bound overflows counts as
/// infeasible.
fn search_rho(epsilon_target: f64, delta: f64) -> f64 {
    let log_inv_delta = -delta.ln();
    let closed = epsilon_target / ((log_inv_delta + epsilon_target).sqrt() + log_inv_delta.sqrt());
    let mut feasible = (closed * closed).min(f64::MAX);
    while feasible.is_normal() && epsilon(feasible, delta) > epsilon_target {
        feasible *= 0.5; // not reached (CKS <= Bun-Steinke); it keeps the result feasible whatever the rounding
    }
    if !feasible.is_normal() {
        return feasible;
    }
    let mut infeasible = 2.0 * feasible;
    while infeasible.is_finite() && epsilon(infeasible, delta) <= epsilon_target {
        feasible = infeasible;
        infeasible *= 2.0;
    }
    if !infeasible.is_finite() {
        return feasible;
    }
    while infeasible - feasible > BISECTION_WIDTH * feasible {
        let mid = feasible + 0.5 * (infeasible - feasible);
        if epsilon(mid, delta) <= epsilon_target {
            feasible = mid;
        } else {
            infeasible = mid;
        }
    }
    feasible
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(ρ, δ)` or `(ε, δ)` pairs from tiny to large budgets.
    const CASES: &[(f64, f64)] = &[
        (0.01, 1e-6),
        (0.5, 1e-5),
        (3.0, 0.01),
        (1e-6, 1e-9),
        (40.0, 0.3),
        (1.0, 1e-6),
        (0.1, 1e-9),
        (8.0, 0.01),
    ];

    #[test]
    fn epsilon_is_below_bun_steinke_and_is_a_bound_at_every_order() {
        for &(rho, delta) in CASES {
            let l = -f64::ln(delta);
            let eps = epsilon(rho, delta);
            assert!(
                eps <= rho + 2.0 * (rho * l).sqrt(),
                "rho {rho} delta {delta}"
            );
            // The minimum over a fine grid of orders is never below the value found.
            let best = (1..100_000)
                .map(|i| cks_bound(10f64.powf(-6.0 + i as f64 * 1e-4), rho, l))
                .fold(f64::INFINITY, f64::min)
                .max(0.0);
            assert!(
                eps <= best + 1e-12 * best.max(1.0),
                "rho {rho}: {eps} vs grid {best}"
            );
            assert!(
                eps >= best - 1e-6 * best.max(1.0),
                "rho {rho}: {eps} vs grid {best}"
            );
        }
        assert_eq!(epsilon(0.0, 1e-6), 0.0);
    }

    #[test]
    fn extreme_targets_terminate() {
        assert_eq!(largest_rho(1e-310, 1e-6), 0.0); // underflows: the learner refuses η = 0
        let huge = largest_rho(1e300, 1e-6);
        assert!(huge.is_finite() && huge > 1e299 && epsilon(huge, 1e-6) <= 1e300);
        assert!(largest_rho(f64::MAX, 0.5).is_finite());
    }

    #[test]
    fn largest_rho_is_feasible_and_tight() {
        for &(eps, delta) in CASES {
            let rho = largest_rho(eps, delta);
            assert_eq!(largest_rho(eps, delta), rho); // the cached answer
            assert_eq!(search_rho(eps, delta), rho);
            assert!(epsilon(rho, delta) <= eps);
            assert!(
                epsilon(rho * (1.0 + 1e-9), delta) > eps,
                "eps {eps} delta {delta}"
            );
        }
    }
}
