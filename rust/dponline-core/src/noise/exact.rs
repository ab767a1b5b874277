//! Exact samplers on the integers: Bernoulli(exp(−γ)) for rational `γ`, the discrete Laplace and the discrete
//! Gaussian, after Canonne, Kamath & Steinke (2020, "The Discrete Gaussian for Differential Privacy", NeurIPS;
//! arXiv 2004.00010), Algorithms 1-3, with integer arithmetic only: no floating-point number enters any
//! decision, so every output has exactly the stated law (given uniform random bits).
//!
//! | sampler | law on ℤ | variance ([`IntegerSampler::variance`]) |
//! | --- | --- | --- |
//! | [`DiscreteLaplace`] `DLap(τ)`, `τ = t/s` | `P(x) = (1 − e^{−1/τ})/(1 + e^{−1/τ}) · e^{−\|x\|/τ}` | `2e^{−1/τ}/(1 − e^{−1/τ})²` |
//! | [`DiscreteGaussian`] `N_ℤ(0, σ²)`, `σ²` rational | `P(x) = e^{−x²/(2σ²)} / Σ_{y∈ℤ} e^{−y²/(2σ²)}` | `Σ x²e^{−x²/2σ²} / Σ e^{−x²/2σ²} ≤ σ²` |
//!
//! Both are generic over the generator (`R: rand_core::Rng + ?Sized`): the seeded xoshiro256++ and the ChaCha20
//! secure generator of [`crate::rng::Generator`] through [`crate::with_generator!`].
//!
//! # The algorithms
//!
//! *Uniform bits.* A 64-bit word `w` of the generator is read as the first 64 binary digits of a uniform real
//! `U = (w + R)/2⁶⁴`, where `R ∈ [0, 1)` is made of later words, drawn only when needed. Every decision below is
//! "is `U` below some number `p`?", answered exactly: it is certain from `w` alone unless `p·2⁶⁴` lies in `[w,
//! w + 1)`, an event of probability at most `2⁻⁶⁴` per decision, and then the next word refines `U` (a
//! decision that continues with probability `2⁻⁶⁴` per word ends after `k` extra words with probability at
//! least `1 − 2^{−64k}`).
//!
//! * [`bernoulli_ratio`] — Bernoulli(`a/b`) for integers `0 <= a <= b < 2⁶⁴`: `U < a/b` ⇔ `(w + R)·b < a·2⁶⁴`.
//!   With `x = w·b` and `y = a·2⁶⁴` (both below `2¹²⁸`, one `64×64 → 128`-bit product, no division): `x + b <=
//!   y` means yes whatever `R`; `x >= y` means no; otherwise `0 < y − x < b` and the answer is `R < (y −
//!   x)/b`, the same question on the next word. CKS draw a uniform integer of `{1, …, b}` instead (their
//!   Section 5); the law is the same.
//! * [`uniform_below`] — a uniform integer of `{0, …, n−1}` by Lemire's multiply-and-reject (2019, "Fast
//!   random integer generation in an interval"): `⌊w·n/2⁶⁴⌋`, the word redrawn when the low half of `w·n` falls
//!   below `2⁶⁴ mod n` (probability `< n/2⁶⁴`), which makes every value equally likely.
//! * **Algorithm 1**, [`bernoulli_exp_neg`] — Bernoulli(`e^{−γ}`) for `γ = num/den >= 0`: write `γ = n + f`,
//!   `n = ⌊γ⌋`, `f ∈ [0, 1)`; the answer is Bernoulli(`e^{−n}`) and an independent Bernoulli(`e^{−f}`).
//!   - `e^{−f}` by von Neumann's trick as in CKS Algorithm 1 (von Neumann 1951; Forsythe 1972): `K ← 1`; while
//!     Bernoulli(`f/K`) is 1, `K ← K + 1`; answer "`K` is odd". `P(K > k) = f^k/k!`, so `P(K odd) = Σ_j
//!     (f^{2j}/(2j)! − f^{2j+1}/(2j+1)!) = e^{−f}`, after `e^f <= e` Bernoulli draws on average. Each
//!     Bernoulli(`f/K`) = Bernoulli(`r/(den·K)`) is one [`bernoulli_ratio`] when `den·K < 2⁶⁴`, otherwise
//!     Bernoulli(`1/K`) ∧ Bernoulli(`r/den`) (independent, the product of the probabilities).
//!   - `e^{−n}` **from a table instead of `n` draws of Bernoulli(`e^{−1}`)** (CKS's remark after Algorithm 1):
//!     `EXP_NEG_2_64[v−1] = T_v = ⌊e^{−v}·2⁶⁴⌋` for `v = 1, …, 44` (`T_44 = 1`, `T_45 = 0`). `U < e^{−v}` is
//!     yes if `w < T_v` (then `U < (w+1)/2⁶⁴ <= T_v/2⁶⁴ <= e^{−v}`), no if `w > T_v` (then `U >= (T_v + 1)/2⁶⁴
//!     > e^{−v}`), and only for `w = T_v` (probability `2⁻⁶⁴`) does it need more digits of `U`; those are
//!     compared with rigorous rational bounds on `e^{−v}·2^{64k}` from its Taylor series in exact big-integer
//!     arithmetic (`exp_neg_bounds`), until the comparison is certain (`e^{−v}` is irrational, so it ends with
//!     probability 1, after one more word with probability `1 − 2⁻⁶²`). The table is certified by the test
//!     `exp_table_is_certified` with the same bounds. `e^{−n}` for `n > 44` is a product of independent
//!     factors `e^{−44}`, `e^{−(n−44)}`, … (one word in all but `e^{−44}` of the cases).
//! * **Algorithm 2**, [`DiscreteLaplace`] `DLap(t/s)`: a geometric `G`, `P(G = k) ∝ e^{−k/t}`, as `G = U + t·V`
//!   with `U ∈ {0, …, t−1}` of law `∝ e^{−u/t}` (a uniform integer accepted with Bernoulli(`e^{−u/t}`)) and
//!   `V` independent with `P(V >= v) = e^{−v}`: then `P(G = u + tv) ∝ e^{−u/t}e^{−v} = e^{−(u+tv)/t}`. `Y =
//!   ⌊G/s⌋` is geometric with ratio `e^{−s/t}` (`P(Y >= y) = P(G >= sy) = e^{−sy/t}`). A fair sign `B`; `B = 1`
//!   with `Y = 0` is rejected (so 0 is not counted twice); the output `(1 − 2B)·Y` has `P(x) ∝ e^{−|x|s/t}`.
//!   **`V` from one word** instead of CKS's loop of Bernoulli(`e^{−1}`) draws: `V` is the number of `v >= 1`
//!   with `U' < e^{−v}` for a fresh uniform `U'` (`P(V >= v) = P(U' < e^{−v}) = e^{−v}`), each comparison decided
//!   by the table as above (at most one of them can be undecided for a given `w`: consecutive `T_v` differ by
//!   more than one). If all 44 hold (`U' < e^{−44}`, probability `e^{−44}`), `V − 44` is again such a variable
//!   (memorylessness) and is drawn afresh.
//! * **Algorithm 3**, [`DiscreteGaussian`] `N_ℤ(0, σ²)`: propose `Y ~ DLap(t)` for an integer `t >= 1` and
//!   accept with Bernoulli(`e^{−γ}`), `γ = (|Y| − σ²/t)²/(2σ²)`. The proposal's weight times the acceptance is
//!   `e^{−|y|/t − (|y| − σ²/t)²/(2σ²)} = e^{−y²/(2σ²)} · e^{−σ²/(2t²)}`, proportional to the target, so the
//!   accepted `Y` is exact for every `t > 0` (CKS take `t = ⌊σ⌋ + 1`). Here `t = max(1, ⌊σ⌋)`: **for an integer
//!   `σ` it is `t = σ`, and `γ = (|Y| − σ)²/(2σ²)` is a ratio of integers below `2¹²⁸` and `2⁶⁴`** (the fast
//!   path, `σ <= 2³¹`); a general rational `σ²` (e.g. the exact value of a float `σ`, whose square has a
//!   106-bit numerator) takes the same steps on big integers ([`num_bigint`]), slower. About `1.3` proposals per
//!   draw for large `σ` (acceptance `→ √(π/2)·e^{−1/2} ≈ 0.76`).
//!
//! # Limits and refusals
//!
//! A scale outside what this arithmetic supports is refused with [`CoreError::InvalidArgument`] naming the
//! argument, before anything is drawn: `0`, negative, NaN, infinite, subnormal, below [`MIN_EXACT_SCALE`] or
//! above [`MAX_EXACT_SCALE`] (a draw then exceeds `2⁶³` with probability below `e^{−2048}`). The rejection
//! loops stop after [`MAX_TRIALS`] proposals (each succeeds with probability `> 0.3`, so the cap binds with
//! probability below `10⁻⁶⁰⁰`) and the big-integer refinements after [`MAX_REFINEMENTS`] words (probability
//! below `2^{−3900}`), with [`CoreError::IterationLimit`]; a draw beyond the `i64` range gives the same error.
//! Neither is expected in the life of the universe; they exist so that no input can make a call hang or panic.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use rand_core::Rng;

use crate::error::{CoreError, Result};

/// `T_v = ⌊e^{−v}·2⁶⁴⌋` for `v = 1, …, 44` (index `v − 1`); `T_45 = 0`. Certified by the test
/// `exp_table_is_certified` (rigorous Taylor bounds in exact arithmetic).
const EXP_NEG_2_64: [u64; 44] = [
    6_786_177_901_268_885_274,
    2_496_495_334_008_788_799,
    918_409_308_362_266_468,
    337_863_903_126_961_437,
    124_293_183_874_348_897,
    45_724_907_025_114_798,
    16_821_253_244_015_389,
    6_188_193_243_211_692,
    2_276_509_072_173_612,
    837_480_885_292_947,
    308_092_000_073_334,
    113_340_712_816_370,
    41_695_718_092_859,
    15_338_997_471_243,
    5_642_901_817_851,
    2_075_907_567_336,
    763_683_715_795,
    280_943_538_598,
    103_353_351_980,
    38_021_573_369,
    13_987_355_163,
    5_145_660_401,
    1_892_982_672,
    696_389_407,
    256_187_346,
    94_246_057,
    34_671_187,
    12_754_816,
    4_692_234,
    1_726_176,
    635_024,
    233_612,
    85_941,
    31_616,
    11_630,
    4_278,
    1_574,
    579,
    213,
    78,
    28,
    10,
    3,
    1,
];

/// Number of table entries: `e^{−v}` for `v = 1..=TABLE_LEN`.
const TABLE_LEN: u64 = 44;

/// Smallest scale (`τ` of [`DiscreteLaplace`], `σ` of [`DiscreteGaussian`]) built from a float: `2⁻⁶⁰`.
/// Below it the distribution is `0` with probability `1 − 2e^{−2⁶⁰}` and the big-integer work per draw grows
/// with the exponent; subnormal floats are far below it.
pub const MIN_EXACT_SCALE: f64 = 1.0 / (1u64 << 60) as f64;

/// Largest scale accepted: `2⁵²`. A draw exceeds `2⁶³` (the `i64` range) only when its geometric part reaches
/// `2¹¹` scale units, probability below `e^{−2048}`.
pub const MAX_EXACT_SCALE: f64 = (1u64 << 52) as f64;

/// Largest integer `σ` of the fast path: `2³¹`, so `2σ² <= 2⁶³` and every Bernoulli of the acceptance test is
/// one `64×64`-bit product.
pub const MAX_FAST_SIGMA: u64 = 1 << 31;

/// Cap on the proposals of one draw (rejection loops of Algorithms 2 and 3).
pub const MAX_TRIALS: u32 = 1 << 12;

/// Cap on the extra 64-bit words of one big-integer comparison.
pub const MAX_REFINEMENTS: u32 = 64;

fn limit(routine: &'static str, what: &str) -> CoreError {
    CoreError::IterationLimit {
        routine,
        limit: u64::from(MAX_TRIALS),
        detail: format!(": {what}"),
    }
}

/// Exact Bernoulli(`a/b`) for `0 <= a <= b`, `b >= 1` (module docs, "Uniform bits"): one word and one `64×64 →
/// 128`-bit product, another word with probability at most `2⁻⁶⁴`.
#[inline(always)]
pub fn bernoulli_ratio<R: Rng + ?Sized>(g: &mut R, a: u64, b: u64) -> bool {
    let b = u128::from(b);
    let mut a = a;
    loop {
        let x = u128::from(g.next_u64()) * b;
        let y = u128::from(a) << 64;
        if x + b <= y {
            return true;
        }
        if x >= y {
            return false;
        }
        // 0 < y − x < b: the answer is R < (y − x)/b, the same question on the next word.
        a = (y - x) as u64;
    }
}

/// A uniform integer of `{0, …, n − 1}`, `n >= 1` (Lemire 2019; module docs).
#[inline(always)]
pub fn uniform_below<R: Rng + ?Sized>(g: &mut R, n: u64) -> u64 {
    let n128 = u128::from(n);
    let mut m = u128::from(g.next_u64()) * n128;
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(g.next_u64()) * n128;
        }
    }
    (m >> 64) as u64
}

/// Bernoulli(`e^{−r/d}`) for `0 <= r < d` by von Neumann's loop (module docs, Algorithm 1).
#[inline(always)]
fn bernoulli_exp_neg_fraction<R: Rng + ?Sized>(g: &mut R, r: u64, d: u64) -> bool {
    if r == 0 {
        return true;
    }
    let mut k: u64 = 1;
    loop {
        let one = match d.checked_mul(k) {
            Some(dk) => bernoulli_ratio(g, r, dk),
            None => bernoulli_ratio(g, 1, k) && bernoulli_ratio(g, r, d),
        };
        if !one {
            return k % 2 == 1;
        }
        k += 1;
    }
}

/// Whether a fresh uniform `U` is below `e^{−v}`, `1 <= v <= 44`, from the table (module docs).
#[inline(always)]
fn below_exp_neg<R: Rng + ?Sized>(g: &mut R, v: u64) -> Result<bool> {
    let w = g.next_u64();
    let t = EXP_NEG_2_64[(v - 1) as usize];
    if w != t {
        Ok(w < t)
    } else {
        below_exp_neg_refined(g, v, w)
    }
}

/// Bernoulli(`e^{−n}`) for an integer `n >= 0`: independent factors `e^{−44}`, …, `e^{−(n mod 44)}`.
#[inline(always)]
fn bernoulli_exp_neg_integer<R: Rng + ?Sized>(g: &mut R, mut n: u128) -> Result<bool> {
    while n > 0 {
        let v = n.min(u128::from(TABLE_LEN)) as u64;
        if !below_exp_neg(g, v)? {
            return Ok(false);
        }
        n -= u128::from(v);
    }
    Ok(true)
}

/// Exact Bernoulli(`e^{−γ}`) for a rational `γ = num/den >= 0` (CKS 2020 Algorithm 1; module docs): `e^{−⌊γ⌋}`
/// from the table, `e^{−(γ − ⌊γ⌋)}` by von Neumann's loop.
///
/// Errors: [`CoreError::InvalidArgument`] for `den = 0`; [`CoreError::IterationLimit`] if a big-integer
/// refinement exceeds [`MAX_REFINEMENTS`] words (probability below `2^{−3900}`).
#[inline]
pub fn bernoulli_exp_neg<R: Rng + ?Sized>(g: &mut R, num: u128, den: u64) -> Result<bool> {
    if den == 0 {
        return Err(CoreError::invalid("den", ">= 1", den));
    }
    let d = u128::from(den);
    if !bernoulli_exp_neg_integer(g, num / d)? {
        return Ok(false);
    }
    Ok(bernoulli_exp_neg_fraction(g, (num % d) as u64, den))
}

/// `V >= 0` with `P(V >= v) = e^{−v}`, from one word in all but `2⁻⁶²` of the cases (module docs, Algorithm 2).
#[inline(always)]
fn geometric_exp1<R: Rng + ?Sized>(g: &mut R) -> Result<u64> {
    let mut base: u64 = 0;
    loop {
        let w = g.next_u64();
        let mut v: u64 = 0;
        // The decided comparisons `U < e^{−(v+1)}` (w < T_{v+1}); the table decreases.
        while v < TABLE_LEN && EXP_NEG_2_64[v as usize] > w {
            v += 1;
        }
        if v < TABLE_LEN && EXP_NEG_2_64[v as usize] == w && below_exp_neg_refined(g, v + 1, w)? {
            v += 1;
        }
        if v < TABLE_LEN {
            return Ok(base + v);
        }
        // U < e^{−44}: V − 44 is again geometric (memoryless).
        base = base
            .checked_add(TABLE_LEN)
            .ok_or_else(|| limit("geometric sampler", "a draw beyond 2^64"))?;
    }
}

/// Rigorous bounds `lo <= e^{−v}·2^bits <= hi` (`hi − lo <= 3`), from the Taylor series of `e^v` in exact
/// integer arithmetic: with `A_N = Σ_{n<=N} v^n N!/n!`, `A_N/N! <= e^v <= A_N/N! + 2v^{N+1}/(N+1)!` once `N + 2
/// >= 2v` (the tail is a geometric series of ratio at most `1/2`), `N` grown until the tail times `2^{bits+2}`
/// is below 1.
fn exp_neg_bounds(v: u64, bits: u64) -> (BigUint, BigUint) {
    let vb = BigUint::from(v);
    // a = A_n, fact = n!, pow = v^n.
    let (mut a, mut fact, mut pow) = (BigUint::one(), BigUint::one(), BigUint::one());
    let mut n: u64 = 0;
    let scale = BigUint::one() << bits;
    loop {
        // The tail bound 2v^{n+1}/(n+1)! times 2^{bits+2} below 1.
        let next_pow = &pow * &vb;
        let next_fact = &fact * BigUint::from(n + 1);
        if n + 2 >= 2 * v && (&next_pow << (bits + 3)) < next_fact {
            let lo_den = &a * BigUint::from(n + 1) + (&next_pow << 1u32);
            let lo = (&scale * &next_fact) / lo_den;
            let hi = (&scale * &fact + &a - 1u32) / &a;
            return (lo, hi);
        }
        n += 1;
        pow = next_pow;
        fact = next_fact;
        a = &a * BigUint::from(n) + &pow;
    }
}

/// Whether `U < e^{−v}` for the uniform `U` whose first 64 digits are `w`, drawing further words until the
/// rigorous bounds decide (module docs).
///
/// Errors: [`CoreError::IterationLimit`] after [`MAX_REFINEMENTS`] words.
#[cold]
fn below_exp_neg_refined<R: Rng + ?Sized>(g: &mut R, v: u64, w: u64) -> Result<bool> {
    let mut prefix = BigUint::from(w);
    let mut bits: u64 = 64;
    for _ in 0..MAX_REFINEMENTS {
        let (lo, hi) = exp_neg_bounds(v, bits);
        if &prefix + 1u32 <= lo {
            return Ok(true);
        }
        if prefix >= hi {
            return Ok(false);
        }
        prefix = (prefix << 64u32) + g.next_u64();
        bits += 64;
    }
    Err(limit(
        "exact comparison with e^-v",
        "more refinements than MAX_REFINEMENTS",
    ))
}

/// Exact Bernoulli(`a/b`) for big integers `0 <= a < b` (one division per word; the slow path).
fn bernoulli_ratio_big<R: Rng + ?Sized>(g: &mut R, a: &BigUint, b: &BigUint) -> Result<bool> {
    let mut a = a.clone();
    for _ in 0..MAX_REFINEMENTS {
        if a.is_zero() {
            return Ok(false);
        }
        let shifted = &a << 64u32;
        let q = (&shifted / b).to_u64().unwrap_or(u64::MAX);
        let w = g.next_u64();
        if w != q {
            return Ok(w < q);
        }
        a = shifted - BigUint::from(q) * b;
    }
    Err(limit(
        "exact Bernoulli of a big ratio",
        "more refinements than MAX_REFINEMENTS",
    ))
}

/// A draw of `Y ~ DLap(t/s)` on ℤ: CKS 2020 Algorithm 2 with the one-word geometric (module docs).
///
/// `scale = t/s`, `1 <= t < 2⁶³`, `1 <= s`, `t/s <= 2⁵²`. `Copy`; sampling allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    t: u64,
    s: u128,
}

impl DiscreteLaplace {
    /// `DLap(t/s)`, `P(x) ∝ e^{−|x|·s/t}`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] unless `1 <= t < 2⁶³`, `s >= 1` and `t/s <= 2⁵²`.
    pub fn new(t: u64, s: u128) -> Result<Self> {
        if t == 0 || t >= 1 << 63 {
            return Err(CoreError::invalid("t", "in [1, 2^63)", t));
        }
        if s == 0 {
            return Err(CoreError::invalid("s", ">= 1", s));
        }
        if u128::from(t) > s.saturating_mul(1 << 52) {
            return Err(CoreError::invalid(
                "scale",
                "<= 2^52 (exact draws stay within int64)",
                format!("{t}/{s}"),
            ));
        }
        Ok(DiscreteLaplace { t, s })
    }

    /// `DLap(t)` for an integer scale `t` (the fast path: no division).
    ///
    /// Errors: [`CoreError::InvalidArgument`] unless `1 <= t <= 2⁵²`.
    pub fn integer(t: u64) -> Result<Self> {
        if t == 0 || t > 1 << 52 {
            return Err(CoreError::invalid("scale", "an integer in [1, 2^52]", t));
        }
        Ok(DiscreteLaplace { t, s: 1 })
    }

    /// `DLap(scale)` for the exact binary value of the float `scale = m·2^e`: `t/s = m·2^e` in lowest terms.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `scale` unless it is finite and in
    /// [[`MIN_EXACT_SCALE`], [`MAX_EXACT_SCALE`]] (so 0, negative, NaN, infinite, subnormal, `1e308` are refused).
    pub fn from_scale(scale: f64) -> Result<Self> {
        let (m, e) = exact_binary("scale", scale)?;
        if e >= 0 {
            Self::new(m << e, 1)
        } else {
            Self::new(m, 1u128 << -e)
        }
    }

    /// The scale `τ = t/s` (rounded to a float).
    pub fn scale(&self) -> f64 {
        self.t as f64 / self.s as f64
    }

    /// The magnitude `⌊G/s⌋` of Algorithm 2, before the sign.
    #[inline(always)]
    fn magnitude<R: Rng + ?Sized>(&self, g: &mut R) -> Result<u64> {
        let mut trials = 0;
        let u = loop {
            let u = uniform_below(g, self.t);
            if bernoulli_exp_neg_fraction(g, u, self.t) {
                break u;
            }
            trials += 1;
            if trials == MAX_TRIALS {
                return Err(limit("discrete Laplace sampler", "rejected every proposal"));
            }
        };
        let v = geometric_exp1(g)?;
        let big = v
            .checked_mul(self.t)
            .and_then(|tv| tv.checked_add(u))
            .ok_or_else(|| limit("discrete Laplace sampler", "a draw beyond 2^64"))?;
        Ok(if self.s == 1 {
            big
        } else {
            (u128::from(big) / self.s) as u64
        })
    }
}

/// The float `x = m·2^e` with `m` odd, for `x` finite in [[`MIN_EXACT_SCALE`], [`MAX_EXACT_SCALE`]].
fn exact_binary(name: &'static str, x: f64) -> Result<(u64, i32)> {
    if !(x.is_finite() && (MIN_EXACT_SCALE..=MAX_EXACT_SCALE).contains(&x)) {
        return Err(CoreError::invalid(
            name,
            "finite and in [2^-60, 2^52] (exact integer arithmetic)",
            x,
        ));
    }
    // Normal (x >= 2^-60): mantissa with the implicit bit, exponent of its last digit.
    let bits = x.to_bits();
    let m = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let tz = m.trailing_zeros();
    Ok((m >> tz, e + tz as i32))
}

/// An exact integer-valued sampler: one draw, bulk fills, the variance of its law.
pub trait IntegerSampler {
    /// One draw.
    ///
    /// Errors: [`CoreError::IterationLimit`] in the events of probability below `10⁻⁶⁰⁰` of the module docs.
    fn sample<R: Rng + ?Sized>(&self, g: &mut R) -> Result<i64>;

    /// Overwrite every entry of `out` with an independent draw (the stream of [`IntegerSampler::sample`]).
    ///
    /// Errors: as [`IntegerSampler::sample`]; the entries before the failing one are then already written.
    #[inline]
    fn fill<R: Rng + ?Sized>(&self, g: &mut R, out: &mut [i64]) -> Result<()> {
        for o in out.iter_mut() {
            *o = self.sample(g)?;
        }
        Ok(())
    }

    /// Add an independent draw to every entry of `out` (the stream of [`IntegerSampler::fill`]).
    ///
    /// Errors: as [`IntegerSampler::sample`], and [`CoreError::InvalidArgument`] naming `out` if a sum leaves
    /// the `i64` range (entries before it are then already updated).
    #[inline]
    fn add_to<R: Rng + ?Sized>(&self, g: &mut R, out: &mut [i64]) -> Result<()> {
        for o in out.iter_mut() {
            *o = o.checked_add(self.sample(g)?).ok_or_else(|| {
                CoreError::invalid("out", "entries whose noisy sum fits in int64", "an overflow")
            })?;
        }
        Ok(())
    }

    /// The variance of one draw (exact formula, evaluated in floating point).
    fn variance(&self) -> f64;
}

impl IntegerSampler for DiscreteLaplace {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, g: &mut R) -> Result<i64> {
        for _ in 0..MAX_TRIALS {
            let y = self.magnitude(g)?;
            let negative = g.next_u64() >> 63 == 1;
            if negative && y == 0 {
                continue;
            }
            let y = i64::try_from(y)
                .map_err(|_| limit("discrete Laplace sampler", "a draw beyond int64"))?;
            return Ok(if negative { -y } else { y });
        }
        Err(limit("discrete Laplace sampler", "rejected every proposal"))
    }

    /// `2e^{−1/τ}/(1 − e^{−1/τ})²` (the variance of a difference of two i.i.d. geometrics of ratio `e^{−1/τ}`).
    fn variance(&self) -> f64 {
        discrete_laplace_variance(self.scale())
    }
}

/// A draw of `Y ~ N_ℤ(0, σ²)` on ℤ: CKS 2020 Algorithm 3 with the proposal `DLap(max(1, ⌊σ⌋))` (module
/// docs). An integer `σ <= 2³¹` takes the fast path; any other rational `σ²` the big-integer one.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteGaussian {
    kind: GaussianKind,
}

#[derive(Debug, Clone, PartialEq)]
enum GaussianKind {
    /// Integer `σ`, `t = σ`: `γ = (|Y| − σ)²/(2σ²)`.
    Integer { sigma: u64, laplace: DiscreteLaplace },
    /// `σ² = num/den` in big integers.
    Rational(Box<RationalGaussian>),
}

/// The constants of the big-integer path: `γ = (|Y|·den·t − num)² / (2·num·den·t²)`.
#[derive(Debug, Clone, PartialEq)]
struct RationalGaussian {
    num: BigUint,
    den_t: BigUint,
    gamma_den: BigUint,
    laplace: DiscreteLaplace,
    sigma_sq: f64,
}

impl DiscreteGaussian {
    /// `N_ℤ(0, σ²)` for an integer `σ` (the fast path when `σ <= 2³¹`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `sigma` unless `1 <= σ <= 2⁵²`.
    pub fn integer(sigma: u64) -> Result<Self> {
        if sigma == 0 || sigma > 1 << 52 {
            return Err(CoreError::invalid("sigma", "an integer in [1, 2^52]", sigma));
        }
        if sigma > MAX_FAST_SIGMA {
            let s = BigUint::from(sigma);
            return Self::rational(&s * &s, BigUint::one());
        }
        Ok(DiscreteGaussian {
            kind: GaussianKind::Integer {
                sigma,
                laplace: DiscreteLaplace::integer(sigma)?,
            },
        })
    }

    /// `N_ℤ(0, σ²)` for a rational `σ² = num/den` (the big-integer path).
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `sigma` unless `num, den >= 1`, both below `2²⁵⁶`, and
    /// `2⁻¹²⁰ <= σ² <= 2¹⁰⁴`.
    pub fn rational(num: BigUint, den: BigUint) -> Result<Self> {
        let shown = || format!("sqrt({num}/{den})");
        if num.is_zero() || den.is_zero() || num.bits() > 256 || den.bits() > 256 {
            return Err(CoreError::invalid(
                "sigma",
                "sqrt(num/den) with 1 <= num, den < 2^256",
                shown(),
            ));
        }
        // σ² in [2^-120, 2^104]: num·2^120 >= den and num <= den·2^104.
        if (&num << 120u32) < den || num > (&den << 104u32) {
            return Err(CoreError::invalid(
                "sigma",
                "in [2^-60, 2^52] (exact integer arithmetic)",
                shown(),
            ));
        }
        let t = (&num / &den).sqrt().to_u64().unwrap_or(1).max(1);
        let tb = BigUint::from(t);
        let den_t = &den * &tb;
        let gamma_den = (&num << 1u32) * &den_t * &tb;
        let sigma_sq = ratio_to_f64(&num, &den);
        Ok(DiscreteGaussian {
            kind: GaussianKind::Rational(Box::new(RationalGaussian {
                num,
                den_t,
                gamma_den,
                laplace: DiscreteLaplace::integer(t)?,
                sigma_sq,
            })),
        })
    }

    /// `N_ℤ(0, σ²)` for the exact binary value of the float `sigma = m·2^e`: the integer path when it is an
    /// integer `<= 2³¹`, else `σ² = m²·4^e` on big integers.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `sigma` unless it is finite and in
    /// [[`MIN_EXACT_SCALE`], [`MAX_EXACT_SCALE`]] (so 0, negative, NaN, infinite, subnormal, `1e308` are refused).
    pub fn from_sigma(sigma: f64) -> Result<Self> {
        let (m, e) = exact_binary("sigma", sigma)?;
        if e >= 0 {
            return Self::integer(m << e);
        }
        let m = BigUint::from(m);
        Self::rational(&m * &m, BigUint::one() << (-2 * e) as u32)
    }

    /// `σ²` (rounded to a float).
    pub fn sigma_sq(&self) -> f64 {
        match &self.kind {
            GaussianKind::Integer { sigma, .. } => (*sigma as f64) * (*sigma as f64),
            GaussianKind::Rational(r) => r.sigma_sq,
        }
    }
}

/// `num/den` as a float (relative error a few ulp): both scaled to 64 significant bits first.
fn ratio_to_f64(num: &BigUint, den: &BigUint) -> f64 {
    let top = |x: &BigUint| {
        let shift = x.bits().saturating_sub(64);
        ((x >> shift).to_u64().unwrap_or(u64::MAX) as f64, shift as i32)
    };
    let ((a, ea), (b, eb)) = (top(num), top(den));
    a / b * 2f64.powi(ea - eb)
}

impl IntegerSampler for DiscreteGaussian {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, g: &mut R) -> Result<i64> {
        match &self.kind {
            GaussianKind::Integer { sigma, laplace } => {
                let (sigma, two_sigma_sq) = (*sigma, 2 * sigma * sigma);
                for _ in 0..MAX_TRIALS {
                    let y = laplace.sample(g)?;
                    let d = u128::from(y.unsigned_abs().abs_diff(sigma));
                    if bernoulli_exp_neg(g, d * d, two_sigma_sq)? {
                        return Ok(y);
                    }
                }
                Err(limit("discrete Gaussian sampler", "rejected every proposal"))
            }
            GaussianKind::Rational(r) => r.sample(g),
        }
    }

    /// `Σ x²e^{−x²/2σ²} / Σ e^{−x²/2σ²}` to float precision ([`discrete_gaussian_variance`]).
    fn variance(&self) -> f64 {
        discrete_gaussian_variance(self.sigma_sq())
    }
}

impl RationalGaussian {
    fn sample<R: Rng + ?Sized>(&self, g: &mut R) -> Result<i64> {
        for _ in 0..MAX_TRIALS {
            let y = self.laplace.sample(g)?;
            let scaled = BigUint::from(y.unsigned_abs()) * &self.den_t;
            let diff = if scaled >= self.num {
                scaled - &self.num
            } else {
                &self.num - scaled
            };
            let sq = &diff * &diff;
            let (n, r) = (&sq / &self.gamma_den, &sq % &self.gamma_den);
            if self.accept(g, n, &r)? {
                return Ok(y);
            }
        }
        Err(limit("discrete Gaussian sampler", "rejected every proposal"))
    }

    /// Bernoulli(`e^{−(n + r/d)}`), `d = gamma_den`, `r < d` (Algorithm 1 on big integers).
    fn accept<R: Rng + ?Sized>(&self, g: &mut R, n: BigUint, r: &BigUint) -> Result<bool> {
        let mut rest = n;
        while !rest.is_zero() {
            let chunk = rest.to_u128().unwrap_or(u128::MAX);
            if !bernoulli_exp_neg_integer(g, chunk)? {
                return Ok(false);
            }
            rest -= BigUint::from(chunk);
        }
        if r.is_zero() {
            return Ok(true);
        }
        // r/d = (f + ρ/d)/2^64 with f = ⌊r·2^64/d⌋: Bernoulli(r/(d·k)) decided by one word unless k·w is
        // within k of f (then exactly, on big integers).
        let d = &self.gamma_den;
        let shifted = r << 64u32;
        let f = (&shifted / d).to_u64().unwrap_or(u64::MAX);
        let rho = shifted - BigUint::from(f) * d;
        let f128 = u128::from(f);
        let mut k: u64 = 1;
        loop {
            let w = g.next_u64();
            let kw = u128::from(k) * u128::from(w);
            let one = if kw + u128::from(k) <= f128 {
                true
            } else if kw > f128 {
                false
            } else {
                // U < r/(d·k) ⇔ k(w + R) < f + ρ/d ⇔ R < ((f − kw)·d + ρ)/(k·d), with 0 <= f − kw < k.
                let a = BigUint::from(f128 - kw) * d + &rho;
                bernoulli_ratio_big(g, &a, &(BigUint::from(k) * d))?
            };
            if !one {
                return Ok(k % 2 == 1);
            }
            k += 1;
        }
    }
}

/// Variance of `DLap(τ)`: `2e^{−1/τ}/(1 − e^{−1/τ})²` (a difference of two i.i.d. geometrics of ratio
/// `e^{−1/τ}`), `≈ 2τ²` for large `τ`.
pub fn discrete_laplace_variance(scale: f64) -> f64 {
    let m = (-1.0 / scale).exp_m1();
    2.0 * (-1.0 / scale).exp() / (m * m)
}

/// Variance of `N_ℤ(0, σ²)`: `Σ x²e^{−x²/2σ²} / Σ e^{−x²/2σ²}`, to float precision. For `σ² <= 100` the sums
/// directly (terms below `e^{−745}` dropped); above, their Poisson-summation forms (`Σ_x e^{−x²/2σ²} =
/// σ√(2π)·Σ_k e^{−2π²σ²k²}`, and the same for `x²e^{−x²/2σ²}` with `σ² − 4π²σ⁴k²` in each term), which give
/// `σ²(1 − 8π²σ² Σ_{k>=1} k²e^{−2π²σ²k²} / (1 + 2Σ_{k>=1} e^{−2π²σ²k²}))` and equal `σ²` in float once `σ >= 2`.
pub fn discrete_gaussian_variance(sigma_sq: f64) -> f64 {
    if sigma_sq <= 100.0 {
        let (mut num, mut den) = (0.0, 1.0);
        let mut x = 1.0f64;
        loop {
            let e = x * x / (2.0 * sigma_sq);
            if e > 745.0 {
                break;
            }
            let p = (-e).exp();
            num += 2.0 * x * x * p;
            den += 2.0 * p;
            x += 1.0;
        }
        num / den
    } else {
        let pi2 = core::f64::consts::PI * core::f64::consts::PI;
        let (mut num, mut den) = (0.0, 1.0);
        for k in 1..4 {
            let k2 = f64::from(k * k);
            let p = (-2.0 * pi2 * sigma_sq * k2).exp();
            num += k2 * p;
            den += 2.0 * p;
        }
        sigma_sq * (1.0 - 8.0 * pi2 * sigma_sq * num / den)
    }
}
