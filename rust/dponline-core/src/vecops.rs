//! Small dense-vector kernels used in hot loops.
//!
//! Reductions keep four independent partial sums so the additions are not one serial dependency chain
//! (a sequential `f64` sum of `n` terms costs `n` floating-point-add latencies). The summation order is
//! fixed, so results are deterministic and identical on every run and platform.

/// `Σ a_i`, with four partial sums.
#[inline(always)]
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

/// `⟨a, b⟩` at the level of its caller ([`crate::simd`]): eight running sums over consecutive groups of eight
/// (one vector of four or eight lanes per group), combined pairwise, then the leftover terms — the same order,
/// hence the same bits, at every level.
#[inline(always)]
pub fn dot_kernel(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut tail = 0.0;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) + tail
}

/// `out += c·x` at the level of its caller ([`crate::simd`]).
#[inline(always)]
pub fn axpy_kernel(out: &mut [f64], c: f64, x: &[f64]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o += c * v;
    }
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

/// The number of entries of `values` outside `[0, 1]` (NaN included): one branch-free pass at the CPU's
/// widest vector level ([`crate::simd`]).
pub fn count_outside_unit(values: &[f64]) -> usize {
    crate::simd::dispatch(
        #[inline(always)]
        || count_outside_unit_kernel(values),
    )
}

/// [`count_outside_unit`] at the level of its caller: eight counters over consecutive groups of eight, kept as
/// doubles (a select and an add per entry, which vectorise; exact below 2^53 entries).
#[inline(always)]
pub(crate) fn count_outside_unit_kernel(values: &[f64]) -> usize {
    let mut acc = [0.0f64; 8];
    let chunks = values.chunks_exact(8);
    #[allow(clippy::manual_range_contains)] // `&` on both comparisons keeps the loop branch-free
    let outside = |v: f64| if (v >= 0.0) & (v <= 1.0) { 0.0 } else { 1.0 };
    let tail: f64 = chunks.remainder().iter().map(|&v| outside(v)).sum();
    for c in chunks {
        for j in 0..8 {
            acc[j] += outside(c[j]);
        }
    }
    (acc.iter().sum::<f64>() + tail) as usize
}

/// `1/i!` for `i = 0..=13`.
pub(crate) const TAYLOR: [f64; 14] = [
    1.0,
    1.0,
    0.5,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5_040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

/// `e^x` for `x <= 0` (values above 0 are treated as 0), to within a few ulp; 0 below `−708` (where `e^x` is
/// below the smallest normal double). Branch-free so that loops over it vectorise: `x = k·ln 2 + r` with `k`
/// rounded by the `1.5·2⁵²` shifter and `|r| <= ln 2 / 2` (Cody-Waite split of `ln 2`), `e^r` by its Taylor
/// polynomial of degree 13 evaluated by Estrin's scheme (remainder below `0.35^14/14! < 4·10⁻¹⁸`), and `2^k`
/// assembled in the exponent bits.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    exp_core(x, x.clamp(-708.0, 0.0))
}

/// `e^x` for `x <= 709` (values above are treated as 709), to within a few ulp; 0 below `−708`. The same
/// branch-free polynomial and exponent assembly as [`exp_nonpositive`], which hold for every
/// `k = round(x / ln 2)` in `[−1022, 1023]`: a libm-free exponential for hot loops whose argument may be
/// positive.
#[inline(always)]
pub fn exp_clamped(x: f64) -> f64 {
    exp_core(x, x.clamp(-708.0, 709.0))
}

/// `e^y` for `y` in `[−708, 709]` (see [`exp_nonpositive`]); 0 when `x < −708`.
#[inline(always)]
fn exp_core(x: f64, y: f64) -> f64 {
    const SHIFTER: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000); // fdlibm ln2_hi
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76); // fdlibm ln2_lo
    let shifted = y * core::f64::consts::LOG2_E + SHIFTER;
    let kf = shifted - SHIFTER;
    let r = (y - kf * LN2_HI) - kf * LN2_LO;
    // Estrin's scheme (depth 5 instead of 13 for Horner) for Σ_{i<=13} r^i / i!.
    let (r2, c) = (r * r, &TAYLOR);
    let (r4, r8) = (r2 * r2, r2 * r2 * (r2 * r2));
    let q0 = (c[0] + c[1] * r) + (c[2] + c[3] * r) * r2;
    let q1 = (c[4] + c[5] * r) + (c[6] + c[7] * r) * r2;
    let q2 = (c[8] + c[9] * r) + (c[10] + c[11] * r) * r2;
    let q3 = c[12] + c[13] * r;
    let p = (q0 + q1 * r4) + (q2 + q3 * r4) * r8;
    // k in [-1022, 1023] sits in the low bits of `shifted` (its bits are those of the shifter plus k, and the
    // shifter's low 12 bits are 0), so the low 12 bits of bits(shifted) + 1023 are the biased exponent k + 1023
    // of 2^k (at most 2046: the sign bit stays 0): one integer add and one shift, which vectorise.
    let scale = f64::from_bits(shifted.to_bits().wrapping_add(1023) << 52);
    if x < -708.0 { 0.0 } else { p * scale }
}

/// `2/(2i+3)` for `i = 0..10`: the coefficients of `s²` in `(ln m − 2s)/s³ = Σ_i 2 s^{2i}/(2i+3)`.
const LN_SERIES: [f64; 10] = [
    2.0 / 3.0,
    2.0 / 5.0,
    2.0 / 7.0,
    2.0 / 9.0,
    2.0 / 11.0,
    2.0 / 13.0,
    2.0 / 15.0,
    2.0 / 17.0,
    2.0 / 19.0,
    2.0 / 21.0,
];

/// `ln x` for a positive normal finite `x` (`f64::MIN_POSITIVE <= x <= f64::MAX`), to within a few ulp;
/// branch-free, so loops over it vectorise (the result is meaningless for zero, subnormal, negative or
/// non-finite `x`: callers guarantee the range). Write `x = 2^e · m` with `m` in `[√½, √2)` — the exponent
/// field gives `e` exactly (assembled as a float by the `2⁵²` shifter) after an integer offset that carries
/// mantissas at or above that of `√2` into the next binade, so the mantissa field gives `m` directly — then `ln x = e·ln 2 + ln m` with `ln m = 2 artanh s =
/// 2(s + s³/3 + s⁵/5 + …)`, `s = (m − 1)/(m + 1)`, `|s| <= 3 − 2√2 < 0.1716`. The series is cut after
/// `s²¹/21` (remainder below `2|s|·s²²/23 < 2⁻⁵⁶·|2s|`), its tail `Σ 2 s^{2i}/(2i+3)` evaluated by Estrin's
/// scheme in `s²`; `e·ln 2` uses the Cody-Waite split of `ln 2` (`e·LN2_HI` is exact). Because `|ln x| >=
/// |e|·ln 2 / 2` there is no cancellation between the two parts.
#[inline(always)]
pub fn ln_normal(x: f64) -> f64 {
    const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000); // fdlibm ln2_hi: 32 significant bits
    const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76); // ln 2 − LN2_HI
    const MANTISSA: u64 = (1 << 52) - 1;
    // The bits of the largest double below √½ (whose mantissa field starts the reduced range) and the offset
    // that moves a mantissa field at or above that of √2 into the next binade.
    const LOW: u64 = 0x3FE6_A09E_667F_3BCC;
    const OFFSET: u64 = 0x3FF0_0000_0000_0000 - LOW;
    const SHIFTER: f64 = 4_503_599_627_370_496.0; // 2^52
    // Integer-only reduction (no compare, no select: branch-free even where the loop is not vectorised):
    // `bits + OFFSET` carries into the exponent field exactly when the mantissa is at least that of √2, so
    // its exponent field is the biased `e` and its mantissa field, rebased on `LOW`, is `m` in [√½, √2).
    let ix = x.to_bits().wrapping_add(OFFSET);
    let m = f64::from_bits((ix & MANTISSA).wrapping_add(LOW));
    // The biased exponent (11 bits) in the low mantissa bits of 2^52: exact, no integer-to-float conversion.
    let e = (f64::from_bits(SHIFTER.to_bits() | (ix >> 52)) - SHIFTER) - 1023.0;
    let s = (m - 1.0) / (m + 1.0);
    let (z, c) = (s * s, &LN_SERIES);
    let (z2, z4) = (z * z, z * z * (z * z));
    let z8 = z4 * z4;
    let q0 = (c[0] + c[1] * z) + (c[2] + c[3] * z) * z2;
    let q1 = (c[4] + c[5] * z) + (c[6] + c[7] * z) * z2;
    let q2 = c[8] + c[9] * z;
    let tail = (q0 + q1 * z4) + q2 * z8;
    e * LN2_HI + ((s + s) + (s * z * tail + e * LN2_LO))
}

/// The maximum of a non-empty slice of finite values, in a form that vectorises (four running maxima).
#[inline]
pub fn max_of(values: &[f64]) -> f64 {
    let mut acc = [f64::NEG_INFINITY; 4];
    let chunks = values.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for j in 0..4 {
            acc[j] = if c[j] > acc[j] { c[j] } else { acc[j] };
        }
    }
    let mut m = acc[0].max(acc[1]).max(acc[2].max(acc[3]));
    for &v in rest {
        m = m.max(v);
    }
    m
}

/// `e^x` for any `x`: [`exp_nonpositive`] for `x <= 0` (a few ulp, no libm call), `f64::exp` above.
#[inline]
pub fn exp_any(x: f64) -> f64 {
    if x <= 0.0 {
        exp_nonpositive(x)
    } else {
        x.exp()
    }
}

/// `out = softmax(−η·s)`, i.e. `out_i = e^{−η(s_i − min s)} / Σ_j e^{−η(s_j − min s)}`, for a non-empty `s`
/// of finite values and `η > 0`: the exponential-weights distribution in log-domain (every exponent `<= 0`, the
/// smallest `s_i` gets the largest term, exactly 1 before normalisation, so the sum is in `[1, n]` and never
/// overflows or vanishes). Four vectorisable passes (minimum; [`exp_nonpositive`], skipping blocks that all
/// underflow; sum; scaling), no allocation, at the CPU's widest vector level ([`crate::simd`]; the result
/// does not depend on the level). `out` must have the length of `s`.
pub fn softmax_neg_scaled(s: &[f64], eta: f64, out: &mut [f64]) {
    crate::simd::dispatch(
        #[inline(always)]
        || softmax_neg_scaled_kernel(s, eta, out),
    );
}

/// [`softmax_neg_scaled`] at the level of its caller.
#[inline(always)]
pub(crate) fn softmax_neg_scaled_kernel(s: &[f64], eta: f64, out: &mut [f64]) {
    debug_assert_eq!(s.len(), out.len());
    let mut lo = [f64::INFINITY; 4];
    let chunks = s.chunks_exact(4);
    let mut m = chunks
        .remainder()
        .iter()
        .fold(f64::INFINITY, |m, &v| m.min(v));
    for c in chunks {
        for j in 0..4 {
            lo[j] = if c[j] < lo[j] { c[j] } else { lo[j] };
        }
    }
    m = m.min(lo[0].min(lo[1]).min(lo[2].min(lo[3])));
    // Blocks of 64 whose weights all underflow (exponent below −708: exactly 0 from `exp_nonpositive`) are
    // the common case once the leaders separate; they are zero-filled without the polynomial (bit-identical).
    // Live blocks are one plain map, which vectorises better than a loop that also accumulates.
    for (c, o) in s.chunks(64).zip(out.chunks_mut(64)) {
        // The block's largest exponent is at its smallest value (`−η(v − m)` is non-increasing in `v`, also
        // after rounding), so the block is live iff that one exponent reaches −708: a minimum with eight lanes
        // (vectorises), the same decision as testing every entry.
        let mut lanes = [f64::INFINITY; 8];
        let eights = c.chunks_exact(8);
        let rest = eights.remainder();
        for e in eights {
            for j in 0..8 {
                lanes[j] = if e[j] < lanes[j] { e[j] } else { lanes[j] };
            }
        }
        let low = rest.iter().fold(
            lanes.iter().fold(f64::INFINITY, |a, &b| a.min(b)),
            |a, &b| a.min(b),
        );
        let live = -eta * (low - m) >= -708.0;
        if live {
            for (o, &v) in o.iter_mut().zip(c) {
                *o = exp_nonpositive(-eta * (v - m));
            }
        } else {
            o.fill(0.0);
        }
    }
    let inv = 1.0 / sum(out);
    out.iter_mut().for_each(|o| *o *= inv);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_exp_is_accurate() {
        let mut rng = crate::rng::Generator::from_seed([7, 7, 7, 7]);
        for i in 0..200_000 {
            let x = if i % 2 == 0 {
                -rng.open01() * 708.0
            } else {
                -rng.open01() * 2.0
            };
            let (got, want) = (exp_nonpositive(x), x.exp());
            assert!(
                ((got - want) / want).abs() < 4.0 * f64::EPSILON,
                "{x}: {got} vs {want}"
            );
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-800.0), 0.0);
        assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
        assert_eq!(max_of(&[1.0, 5.0, -2.0, 3.0, 4.0, 9.0, 0.0]), 9.0);
    }

    /// Relative error of [`ln_normal`] against `f64::ln` in units of `f64::EPSILON` (`2⁻⁵²`).
    fn ln_error(x: f64) -> f64 {
        let (got, want) = (ln_normal(x), x.ln());
        if want == 0.0 {
            assert_eq!(got, 0.0, "ln({x})");
            return 0.0;
        }
        ((got - want) / want).abs() / f64::EPSILON
    }

    #[test]
    fn fast_ln_is_accurate() {
        // 10^6 points log-uniform over the whole normal range, 10^6 within a factor 2 of 1 (where ln is small
        // and the series carries everything), the range endpoints and the points around √2 (the switch of the
        // reduction) and around powers of two.
        let mut rng = crate::rng::Generator::from_seed([5, 4, 3, 2]);
        let mut worst: f64 = 0.0;
        for _ in 0..1_000_000 {
            let x = (rng.open01() * 2044.0 - 1021.0).exp2();
            worst = worst.max(ln_error(x));
            let y = 0.5 + 1.5 * rng.open01();
            worst = worst.max(ln_error(y));
        }
        let sqrt2 = core::f64::consts::SQRT_2;
        let mut special = vec![
            f64::MIN_POSITIVE,
            f64::MAX,
            1.0,
            2.0,
            0.5,
            2f64.powi(-64),
            2f64.powi(-65),
        ];
        for k in -40i64..=40 {
            for base in [
                sqrt2,
                1.0,
                0.5 * sqrt2,
                2f64.powi(-64),
                f64::MIN_POSITIVE,
                f64::MAX,
            ] {
                let v = f64::from_bits(base.to_bits().wrapping_add_signed(k));
                if v.is_normal() && v > 0.0 {
                    special.push(v);
                }
            }
        }
        for &x in &special {
            worst = worst.max(ln_error(x));
        }
        assert!(worst <= 2.0, "worst relative error {worst} ulp (of 2^-52)");
        assert_eq!(ln_normal(1.0), 0.0);
        assert_eq!(ln_normal(2.0), core::f64::consts::LN_2);
    }

    #[test]
    fn softmax_skips_exactly_the_dead_blocks() {
        // Blocks of 64: block 0 entirely beyond the cut (exponent < −708), block 1 dead except one entry just
        // inside it, block 2 with its smallest value exactly at the cut, block 3 live (holds the minimum 0),
        // and a short last block. The block decision must equal the per-entry one, at every level.
        let eta = 2.0;
        let mut s = vec![400.0; 64 * 4 + 5];
        s[64 + 17] = 353.5; // exponent −707
        for v in &mut s[128..192] {
            *v = 380.0;
        }
        s[128 + 40] = 354.0; // exponent exactly −708: live
        for (i, v) in s[192..256].iter_mut().enumerate() {
            *v = i as f64 * 0.5;
        }
        let mut out = vec![0.0; s.len()];
        softmax_neg_scaled(&s, eta, &mut out);
        let w: Vec<f64> = s.iter().map(|&v| exp_nonpositive(-eta * v)).collect();
        let total: f64 = w.iter().sum();
        for (i, (o, wi)) in out.iter().zip(&w).enumerate() {
            assert!(
                (o - wi / total).abs() <= 1e-15 * (wi / total),
                "{i}: {o} vs {}",
                wi / total
            );
            assert_eq!(*o == 0.0, *wi == 0.0, "{i}");
        }
        assert!(out[64 + 17] > 0.0 && out[128 + 40] > 0.0 && out[0] == 0.0 && out[128] == 0.0);
        let at = |level| {
            let mut o = vec![0.0; s.len()];
            crate::simd::run_at(
                level,
                #[inline(always)]
                || softmax_neg_scaled_kernel(&s, eta, &mut o),
            );
            o.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        use crate::simd::Level;
        assert_eq!(at(Level::Baseline), at(Level::Avx2));
        assert_eq!(at(Level::Baseline), at(Level::Avx512));
    }

    #[test]
    fn clamped_exp_is_accurate_on_both_sides_and_agrees_below_zero() {
        let mut rng = crate::rng::Generator::from_seed([7, 7, 7, 8]);
        for _ in 0..200_000 {
            let x = 1417.0 * rng.open01() - 708.0;
            let (got, want) = (exp_clamped(x), x.exp());
            assert!(
                ((got - want) / want).abs() < 4.0 * f64::EPSILON,
                "{x}: {got} vs {want}"
            );
            let y = -x.abs();
            assert_eq!(exp_clamped(y).to_bits(), exp_nonpositive(y).to_bits());
        }
        assert_eq!(exp_clamped(0.0), 1.0);
        assert_eq!(exp_clamped(-800.0), 0.0);
        assert!(exp_clamped(1e6).is_finite() && exp_clamped(1e6) == exp_clamped(709.0));
        assert!(((exp_clamped(709.0) - 709f64.exp()) / 709f64.exp()).abs() < 4.0 * f64::EPSILON);
    }

    #[test]
    fn softmax_matches_the_naive_formula() {
        for n in [1usize, 3, 4, 9, 100] {
            let s: Vec<f64> = (0..n).map(|i| 50.0 * (i as f64 * 0.71).sin()).collect();
            for eta in [1e-3, 0.3, 40.0] {
                let mut out = vec![0.0; n];
                softmax_neg_scaled(&s, eta, &mut out);
                let m = s.iter().fold(f64::INFINITY, |m, &v| m.min(v));
                let w: Vec<f64> = s.iter().map(|v| (-eta * (v - m)).exp()).collect();
                let total: f64 = w.iter().sum();
                for (o, wi) in out.iter().zip(&w) {
                    assert!(
                        (o - wi / total).abs() <= 1e-14 * (wi / total) + 1e-300,
                        "n={n} eta={eta}"
                    );
                }
                assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            }
        }
    }

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
