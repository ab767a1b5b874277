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
//!   path, `σ <= 2³¹`). About `1.3` proposals per draw for large `σ` (acceptance `→ √(π/2)·e^{−1/2} ≈ 0.76`).
//! * **Non-integer `σ`** (e.g. the exact value of a float `σ`, whose square is a ratio of big integers with a
//!   106-bit numerator), `σ' = ⌈σ⌉ <= 2³¹`: propose `Y ~ N_ℤ(0, σ'²)` by the integer path and accept with
//!   Bernoulli(`e^{−Y²κ}`), `κ = 1/(2σ²) − 1/(2σ'²) >= 0`. Weight times acceptance is `e^{−y²/(2σ'²) − y²κ} =
//!   e^{−y²/(2σ²)}`, so the accepted `Y` is exact; the acceptance rate is `Σe^{−y²/2σ²}/Σe^{−y²/2σ'²}`, about
//!   `σ/σ'` (at least about 0.4). `κ = P/Q` is a ratio of big integers, so `γ = Y²κ` is first bracketed from a
//!   64-bit `k` with `κ ∈ [k, k+1]·2^{−s}` (computed exactly once): `γ·2³² ∈ [L, H]`, `H − L` about `γ·2⁻³¹ + 2`
//!   units, by two `128×64`-bit products. `⌊γ⌋` is certain when `L` and `H` share it, and each Bernoulli(`f/K`)
//!   of von Neumann's loop (`f` the fractional part, known within `[L, H]` mod `2³²`) is certain from a half `w`
//!   unless `K·w` falls within the bracket; only then (probability about `K(H − L)·2⁻³²`) `γ` is computed
//!   exactly on big integers ([`num_bigint`]) and the same decision finished exactly with the same `w`. Any
//!   other `σ` (above `2³¹`) takes CKS's steps (proposal `DLap(⌊σ⌋)`) entirely on big integers, much slower.
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

/// The generator's bits, served as whole 64-bit words, 32-bit halves or single bits, each bit used once.
///
/// Words ([`Bits::word`]) come straight from the generator; halves and bits come from a buffered word, top bits
/// first, a new word drawn when too few are left (the rest of the old one is dropped). A [`IntegerSampler::fill`]
/// keeps one `Bits` for the whole slice, so a draw that needs one sign bit and a few 32-bit decisions reads a
/// fraction of a word for them: on the secure generator, where a word costs several nanoseconds, the halves
/// save about a third of the words a discrete Gaussian draw reads (6.8 instead of about 10 at `σ = 2³⁰`, the
/// `exact_draw_speed` timing test).
pub struct Bits<'a, R: Rng + ?Sized> {
    g: &'a mut R,
    buf: u64,
    left: u32,
}

impl<'a, R: Rng + ?Sized> Bits<'a, R> {
    /// Bits of `g`, none buffered yet.
    #[inline(always)]
    pub fn new(g: &'a mut R) -> Self {
        Bits { g, buf: 0, left: 0 }
    }

    /// A fresh 64-bit word of the generator.
    #[inline(always)]
    pub fn word(&mut self) -> u64 {
        self.g.next_u64()
    }

    /// The next 32 buffered bits.
    #[inline(always)]
    pub fn half(&mut self) -> u32 {
        if self.left < 32 {
            self.buf = self.g.next_u64();
            self.left = 64;
        }
        self.left -= 32;
        (self.buf >> self.left) as u32
    }

    /// The next buffered bit.
    #[inline(always)]
    pub fn bit(&mut self) -> bool {
        if self.left == 0 {
            self.buf = self.g.next_u64();
            self.left = 64;
        }
        self.left -= 1;
        (self.buf >> self.left) & 1 == 1
    }
}

/// Exact Bernoulli(`a/b`) for `0 <= a <= b`, `b >= 1` (module docs, "Uniform bits", on 32-bit halves): with a
/// half `w`, `U = (w + R)/2³²` and `U < a/b` ⇔ `(w + R)·b < a·2³²` (both sides below `2⁹⁶`): one half and one
/// `32×64`-bit product decide with probability at least `1 − 2⁻³²`, otherwise the next half refines.
#[inline(always)]
pub fn bernoulli_ratio<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, a: u64, b: u64) -> bool {
    let b = u128::from(b);
    let mut a = u128::from(a);
    loop {
        let x = u128::from(bits.half()) * b;
        let y = a << 32;
        if x + b <= y {
            return true;
        }
        if x >= y {
            return false;
        }
        // 0 < y − x < b: the answer is R < (y − x)/b, the same question on the next half.
        a = y - x;
    }
}

/// A uniform integer of `{0, …, n − 1}`, `n >= 1` (Lemire 2019; module docs).
#[inline(always)]
pub fn uniform_below<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, n: u64) -> u64 {
    let n128 = u128::from(n);
    let mut m = u128::from(bits.word()) * n128;
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(bits.word()) * n128;
        }
    }
    (m >> 64) as u64
}

/// Bernoulli(`e^{−r/d}`) for `0 <= r < d` by von Neumann's loop (module docs, Algorithm 1).
#[inline(always)]
fn bernoulli_exp_neg_fraction<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, r: u64, d: u64) -> bool {
    if r == 0 {
        return true;
    }
    let mut k: u64 = 1;
    loop {
        let one = match d.checked_mul(k) {
            Some(dk) => bernoulli_ratio(bits, r, dk),
            None => bernoulli_ratio(bits, 1, k) && bernoulli_ratio(bits, r, d),
        };
        if !one {
            return k % 2 == 1;
        }
        k += 1;
    }
}

/// Whether a fresh uniform `U` is below `e^{−v}`, `1 <= v <= 44`, from the table (module docs).
#[inline(always)]
fn below_exp_neg<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, v: u64) -> Result<bool> {
    let w = bits.word();
    let t = EXP_NEG_2_64[(v - 1) as usize];
    if w != t {
        Ok(w < t)
    } else {
        below_exp_neg_refined(bits, v, w)
    }
}

/// Bernoulli(`e^{−n}`) for an integer `n >= 0`: independent factors `e^{−44}`, …, `e^{−(n mod 44)}`.
#[inline(always)]
fn bernoulli_exp_neg_integer<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, mut n: u128) -> Result<bool> {
    while n > 0 {
        let v = n.min(u128::from(TABLE_LEN)) as u64;
        if !below_exp_neg(bits, v)? {
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
pub fn bernoulli_exp_neg<R: Rng + ?Sized>(
    bits: &mut Bits<'_, R>,
    num: u128,
    den: u64,
) -> Result<bool> {
    if den == 0 {
        return Err(CoreError::invalid("den", ">= 1", den));
    }
    // ⌊γ⌋ and the remainder without a 128-bit division when they fit (the usual case: `γ < 1` near the mode of
    // a Gaussian proposal, a 64-bit numerator otherwise); the same values, so the same bits are read.
    let (whole, rest) = if num < u128::from(den) {
        (0, num as u64)
    } else if let Ok(n) = u64::try_from(num) {
        (u128::from(n / den), n % den)
    } else {
        let d = u128::from(den);
        (num / d, (num % d) as u64)
    };
    if !bernoulli_exp_neg_integer(bits, whole)? {
        return Ok(false);
    }
    Ok(bernoulli_exp_neg_fraction(bits, rest, den))
}

/// `V >= 0` with `P(V >= v) = e^{−v}`, from one word in all but `2⁻⁶²` of the cases (module docs, Algorithm 2).
#[inline(always)]
fn geometric_exp1<R: Rng + ?Sized>(bits: &mut Bits<'_, R>) -> Result<u64> {
    let mut base: u64 = 0;
    loop {
        let w = bits.word();
        let mut v: u64 = 0;
        // The decided comparisons `U < e^{−(v+1)}` (w < T_{v+1}); the table decreases.
        while v < TABLE_LEN && EXP_NEG_2_64[v as usize] > w {
            v += 1;
        }
        if v < TABLE_LEN && EXP_NEG_2_64[v as usize] == w && below_exp_neg_refined(bits, v + 1, w)?
        {
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
/// integer arithmetic: with `A_N = Σ_{n<=N} v^n N!/n!`, `A_N/N! <= e^v <= A_N/N! + 2v^{N+1}/(N+1)!` once
/// `N + 2 >= 2v` (the tail is a geometric series of ratio at most `1/2`), `N` grown until the tail times
/// `2^{bits+2}` is below 1.
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
fn below_exp_neg_refined<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, v: u64, w: u64) -> Result<bool> {
    let mut prefix = BigUint::from(w);
    let mut digits: u64 = 64;
    for _ in 0..MAX_REFINEMENTS {
        let (lo, hi) = exp_neg_bounds(v, digits);
        if prefix < lo {
            return Ok(true);
        }
        if prefix >= hi {
            return Ok(false);
        }
        prefix = (prefix << 64u32) + bits.word();
        digits += 64;
    }
    Err(limit(
        "exact comparison with e^-v",
        "more refinements than MAX_REFINEMENTS",
    ))
}

/// Exact Bernoulli(`a/b`) for big integers `0 <= a < b` (one division per half; the slow path). Reads the
/// halves [`bernoulli_ratio`] reads for the same `a, b`.
fn bernoulli_ratio_big<R: Rng + ?Sized>(
    bits: &mut Bits<'_, R>,
    a: &BigUint,
    b: &BigUint,
) -> Result<bool> {
    let mut a = a.clone();
    for _ in 0..MAX_REFINEMENTS {
        // U < a/b ⇔ w + R < q + rem/b with q = ⌊a·2^32/b⌋ (< 2^32): decided unless w = q.
        let shifted = &a << 32u32;
        let q = (&shifted / b).to_u32().unwrap_or(u32::MAX);
        let w = bits.half();
        if w != q {
            return Ok(w < q);
        }
        a = shifted - BigUint::from(q) * b;
        if a.is_zero() {
            return Ok(false);
        }
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
    fn magnitude<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<u64> {
        let mut trials = 0;
        let u = loop {
            let u = uniform_below(bits, self.t);
            if bernoulli_exp_neg_fraction(bits, u, self.t) {
                break u;
            }
            trials += 1;
            if trials == MAX_TRIALS {
                return Err(limit("discrete Laplace sampler", "rejected every proposal"));
            }
        };
        let v = geometric_exp1(bits)?;
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
    /// One draw from the bits of `bits`.
    ///
    /// Errors: [`CoreError::IterationLimit`] in the events of probability below `10⁻⁶⁰⁰` of the module docs.
    fn draw<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<i64>;

    /// One draw from the generator `g` (its buffered bits are dropped afterwards).
    ///
    /// Errors: as [`IntegerSampler::draw`].
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, g: &mut R) -> Result<i64> {
        self.draw(&mut Bits::new(g))
    }

    /// Overwrite every entry of `out` with an independent draw: the law of [`IntegerSampler::sample`], with
    /// one [`Bits`] for the whole slice (so not the stream of repeated `sample` calls).
    ///
    /// Errors: as [`IntegerSampler::draw`]; the entries before the failing one are then already written.
    #[inline]
    fn fill<R: Rng + ?Sized>(&self, g: &mut R, out: &mut [i64]) -> Result<()> {
        let mut bits = Bits::new(g);
        for o in out.iter_mut() {
            *o = self.draw(&mut bits)?;
        }
        Ok(())
    }

    /// Add an independent draw to every entry of `out` (the stream of [`IntegerSampler::fill`]).
    ///
    /// Errors: as [`IntegerSampler::draw`], and [`CoreError::InvalidArgument`] naming `out` if a sum leaves
    /// the `i64` range (entries before it are then already updated).
    #[inline]
    fn add_to<R: Rng + ?Sized>(&self, g: &mut R, out: &mut [i64]) -> Result<()> {
        let mut bits = Bits::new(g);
        for o in out.iter_mut() {
            *o = o.checked_add(self.draw(&mut bits)?).ok_or_else(|| {
                CoreError::invalid(
                    "out",
                    "entries whose noisy sum fits in int64",
                    "an overflow",
                )
            })?;
        }
        Ok(())
    }

    /// The variance of one draw (exact formula, evaluated in floating point).
    fn variance(&self) -> f64;
}

impl IntegerSampler for DiscreteLaplace {
    #[inline]
    fn draw<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<i64> {
        for _ in 0..MAX_TRIALS {
            let y = self.magnitude(bits)?;
            let negative = bits.bit();
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
    Integer(IntegerGaussian),
    /// A non-integer `σ` with `⌈σ⌉ <= 2³¹`: the integer sampler of `⌈σ⌉`, thinned.
    Thinned(Box<ThinnedGaussian>),
    /// `σ² = num/den` in big integers, proposal `DLap(⌊σ⌋)` (`σ > 2³¹`).
    Rational(Box<RationalGaussian>),
}

/// `N_ℤ(0, σ²)` from `Y ~ N_ℤ(0, σ'²)`, `σ' = ⌈σ⌉`, accepted with Bernoulli(`e^{−Y²κ}`), `κ = 1/(2σ²) −
/// 1/(2σ'²) = (σ'²·den − num)/(2·num·σ'²)` (module docs, "Non-integer σ").
#[derive(Debug, Clone, PartialEq)]
struct ThinnedGaussian {
    proposal: IntegerGaussian,
    kappa_num: BigUint,
    kappa_den: BigUint,
    /// `κ ∈ [k_lo, k_lo + 1]·2^{−shift}`, `k_lo < 2⁶⁴`; the interval shortcut needs `shift >= 32`.
    k_lo: u64,
    shift: i64,
    sigma_sq: f64,
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

/// `N_ℤ(0, σ²)` for an integer `1 <= σ <= 2³¹`: the fast path of [`DiscreteGaussian`] (CKS 2020 Algorithm 3
/// with the proposal `DLap(σ)`, module docs), as a small `Copy` value for hot loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntegerGaussian {
    sigma: u64,
    laplace: DiscreteLaplace,
}

impl IntegerGaussian {
    /// `N_ℤ(0, σ²)` for an integer `σ`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `sigma` unless `1 <= σ <= 2³¹` ([`MAX_FAST_SIGMA`]).
    pub fn new(sigma: u64) -> Result<Self> {
        if sigma == 0 || sigma > MAX_FAST_SIGMA {
            return Err(CoreError::invalid(
                "sigma",
                "an integer in [1, 2^31]",
                sigma,
            ));
        }
        Ok(IntegerGaussian {
            sigma,
            laplace: DiscreteLaplace::integer(sigma)?,
        })
    }
}

impl IntegerSampler for IntegerGaussian {
    #[inline]
    fn draw<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<i64> {
        let (sigma, two_sigma_sq) = (self.sigma, 2 * self.sigma * self.sigma);
        for _ in 0..MAX_TRIALS {
            let y = self.laplace.draw(bits)?;
            let d = u128::from(y.unsigned_abs().abs_diff(sigma));
            if bernoulli_exp_neg(bits, d * d, two_sigma_sq)? {
                return Ok(y);
            }
        }
        Err(limit(
            "discrete Gaussian sampler",
            "rejected every proposal",
        ))
    }

    /// [`discrete_gaussian_variance`] of `σ²`.
    fn variance(&self) -> f64 {
        discrete_gaussian_variance((self.sigma as f64) * (self.sigma as f64))
    }
}

impl DiscreteGaussian {
    /// `N_ℤ(0, σ²)` for an integer `σ` (the fast path when `σ <= 2³¹`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `sigma` unless `1 <= σ <= 2⁵²`.
    pub fn integer(sigma: u64) -> Result<Self> {
        if sigma == 0 || sigma > 1 << 52 {
            return Err(CoreError::invalid(
                "sigma",
                "an integer in [1, 2^52]",
                sigma,
            ));
        }
        if sigma > MAX_FAST_SIGMA {
            let s = BigUint::from(sigma);
            return Self::laplace_proposal(&s * &s, BigUint::one());
        }
        Ok(DiscreteGaussian {
            kind: GaussianKind::Integer(IntegerGaussian::new(sigma)?),
        })
    }

    /// `N_ℤ(0, σ²)` for a rational `σ² = num/den`: the integer path if `σ` is an integer `<= 2³¹`, the thinned
    /// integer sampler of `⌈σ⌉` if `⌈σ⌉ <= 2³¹`, else the big-integer path.
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
        let floor = (&num / &den).sqrt();
        let exact = &floor * &floor * &den == num;
        let up = (if exact { floor.clone() } else { &floor + 1u32 })
            .to_u64()
            .unwrap_or(u64::MAX);
        if up <= MAX_FAST_SIGMA {
            if exact {
                return Self::integer(up.max(1));
            }
            return Ok(DiscreteGaussian {
                kind: GaussianKind::Thinned(Box::new(ThinnedGaussian::new(num, den, up)?)),
            });
        }
        Self::laplace_proposal(num, den)
    }

    /// The big-integer path (CKS Algorithm 3 with `t = max(1, ⌊σ⌋)`) for `σ² = num/den`, checked by `rational`.
    fn laplace_proposal(num: BigUint, den: BigUint) -> Result<Self> {
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
            GaussianKind::Integer(g) => (g.sigma as f64) * (g.sigma as f64),
            GaussianKind::Thinned(r) => r.sigma_sq,
            GaussianKind::Rational(r) => r.sigma_sq,
        }
    }
}

/// `num/den` as a float (relative error a few ulp): both scaled to 64 significant bits first.
fn ratio_to_f64(num: &BigUint, den: &BigUint) -> f64 {
    let top = |x: &BigUint| {
        let shift = x.bits().saturating_sub(64);
        (
            (x >> shift).to_u64().unwrap_or(u64::MAX) as f64,
            shift as i32,
        )
    };
    let ((a, ea), (b, eb)) = (top(num), top(den));
    a / b * 2f64.powi(ea - eb)
}

impl IntegerSampler for DiscreteGaussian {
    #[inline]
    fn draw<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<i64> {
        match &self.kind {
            GaussianKind::Integer(g) => g.draw(bits),
            GaussianKind::Thinned(r) => r.draw(bits),
            GaussianKind::Rational(r) => r.draw(bits),
        }
    }

    /// `Σ x²e^{−x²/2σ²} / Σ e^{−x²/2σ²}` to float precision ([`discrete_gaussian_variance`]).
    fn variance(&self) -> f64 {
        discrete_gaussian_variance(self.sigma_sq())
    }
}

impl RationalGaussian {
    fn draw<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<i64> {
        for _ in 0..MAX_TRIALS {
            let y = self.laplace.draw(bits)?;
            let scaled = BigUint::from(y.unsigned_abs()) * &self.den_t;
            let diff = if scaled >= self.num {
                scaled - &self.num
            } else {
                &self.num - scaled
            };
            let sq = &diff * &diff;
            let (n, r) = (&sq / &self.gamma_den, &sq % &self.gamma_den);
            if accept_exact(bits, n, &r, &self.gamma_den)? {
                return Ok(y);
            }
        }
        Err(limit(
            "discrete Gaussian sampler",
            "rejected every proposal",
        ))
    }
}

impl ThinnedGaussian {
    /// For `σ² = num/den` not an integer square, `σ' = ⌈σ⌉ = up`.
    fn new(num: BigUint, den: BigUint, up: u64) -> Result<Self> {
        let up2 = BigUint::from(up) * BigUint::from(up);
        let kappa_num = &up2 * &den - &num;
        let kappa_den = (&num << 1u32) * &up2;
        // κ·2^shift in [2^62, 2^64).
        let shift = 63 - (kappa_num.bits() as i64 - kappa_den.bits() as i64);
        let k_lo = if shift >= 0 {
            (&kappa_num << shift as u64) / &kappa_den
        } else {
            &kappa_num / (&kappa_den << (-shift) as u64)
        }
        .to_u64()
        .unwrap_or(u64::MAX);
        Ok(ThinnedGaussian {
            proposal: IntegerGaussian::new(up)?,
            sigma_sq: ratio_to_f64(&num, &den),
            kappa_num,
            kappa_den,
            k_lo,
            shift,
        })
    }

    fn draw<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>) -> Result<i64> {
        for _ in 0..MAX_TRIALS {
            let y = self.proposal.draw(bits)?;
            let y2 = u128::from(y.unsigned_abs()) * u128::from(y.unsigned_abs());
            if self.accept(bits, y2, false)? {
                return Ok(y);
            }
        }
        Err(limit(
            "discrete Gaussian sampler",
            "rejected every proposal",
        ))
    }

    /// `γ·2³² ∈ [lo, hi]` for `γ = y2·κ`, from `k_lo` (`None` when `shift < 32` or on overflow: then exactly).
    #[inline(always)]
    fn scaled_gamma(&self, y2: u128) -> Option<(u128, u128)> {
        let r = u32::try_from(self.shift - 32).ok()?;
        let (h, l) = mul_wide(y2, self.k_lo);
        let lo = shr_wide(h, l, r, false)?;
        // y2·(k_lo + 1) = y2·k_lo + y2.
        let (sum, carry) = l.overflowing_add(y2 as u64);
        let h = h.checked_add(y2 >> 64)?.checked_add(u128::from(carry))?;
        let hi = shr_wide(h, sum, r, true)?;
        Some((lo, hi))
    }

    /// Bernoulli(`e^{−y2·κ}`): the integer part and each Bernoulli(`f/k`) of von Neumann's loop decided from
    /// the interval of `scaled_gamma` when it is certain, exactly on big integers otherwise (`exact_only`: always;
    /// the halves read are the same either way).
    fn accept<R: Rng + ?Sized>(
        &self,
        bits: &mut Bits<'_, R>,
        y2: u128,
        exact_only: bool,
    ) -> Result<bool> {
        if y2 == 0 {
            // γ = 0: accepted, nothing drawn (as on the exact path).
            return Ok(true);
        }
        let exact = || {
            let g = BigUint::from(y2) * &self.kappa_num;
            (&g / &self.kappa_den, &g % &self.kappa_den)
        };
        let (lo, hi) = match self.scaled_gamma(y2) {
            Some((lo, hi)) if !exact_only && lo >> 32 == hi >> 32 => (lo, hi),
            _ => {
                let (n, r) = exact();
                return accept_exact(bits, n, &r, &self.kappa_den);
            }
        };
        if !bernoulli_exp_neg_integer(bits, lo >> 32)? {
            return Ok(false);
        }
        // f·2^32 in [fl, fh], f the fractional part of γ.
        let (fl, fh) = (lo & 0xffff_ffff, hi - (lo >> 32 << 32));
        let mut rem: Option<BigUint> = None;
        if fl == 0 {
            // f may be exactly 0 (e^0 = 1, nothing drawn, as on the exact path): find out.
            let r = rem.get_or_insert_with(|| exact().1);
            if r.is_zero() {
                return Ok(true);
            }
        }
        let mut k: u64 = 1;
        loop {
            let w = bits.half();
            let kw = u128::from(k) * u128::from(w);
            let one = if kw + u128::from(k) <= fl {
                true
            } else if kw >= fh {
                false
            } else {
                // U = (w + R)/2^32 < f/k ⇔ R < (r·2^32 − k·w·d)/(k·d), with f = r/d exactly.
                let r = rem.get_or_insert_with(|| exact().1);
                let d = &self.kappa_den;
                let kd = BigUint::from(k) * d;
                let top = &*r << 32u32;
                let kwd = BigUint::from(kw) * d;
                if top <= kwd {
                    false
                } else if &top - &kwd >= kd {
                    true
                } else {
                    bernoulli_ratio_big(bits, &(top - kwd), &kd)?
                }
            };
            if !one {
                return Ok(k % 2 == 1);
            }
            k += 1;
        }
    }
}

/// `a·b` as `(h, l)` with `a·b = h·2⁶⁴ + l` (no overflow: `h < 2¹²⁸`).
#[inline(always)]
fn mul_wide(a: u128, b: u64) -> (u128, u64) {
    let p0 = u128::from(a as u64) * u128::from(b);
    let p1 = (a >> 64) * u128::from(b);
    (p1 + (p0 >> 64), p0 as u64)
}

/// `⌊(h·2⁶⁴ + l)/2^r⌋` (or the ceiling), `None` if it does not fit in `u128`.
#[inline(always)]
fn shr_wide(h: u128, l: u64, r: u32, ceil: bool) -> Option<u128> {
    let (q, lost) = if r >= 64 {
        let s = r - 64;
        let q = h.checked_shr(s).unwrap_or(0);
        let lost = l != 0 || (s > 0 && h & ((1u128 << s.min(127)) - 1) != 0) || s >= 128 && h != 0;
        (q, lost)
    } else if r == 0 {
        if h >> 64 != 0 {
            return None;
        }
        (h << 64 | u128::from(l), false)
    } else {
        if h >> (64 + r) != 0 {
            return None;
        }
        let q = h << (64 - r) | u128::from(l >> r);
        (q, l & ((1u64 << r) - 1) != 0)
    };
    if ceil && lost {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

/// Bernoulli(`e^{−(n + r/d)}`), `r < d` (Algorithm 1 on big integers).
fn accept_exact<R: Rng + ?Sized>(
    bits: &mut Bits<'_, R>,
    n: BigUint,
    r: &BigUint,
    d: &BigUint,
) -> Result<bool> {
    let mut rest = n;
    while !rest.is_zero() {
        let chunk = rest.to_u128().unwrap_or(u128::MAX);
        if !bernoulli_exp_neg_integer(bits, chunk)? {
            return Ok(false);
        }
        rest -= BigUint::from(chunk);
    }
    if r.is_zero() {
        return Ok(true);
    }
    // r/d = (f + ρ/d)/2^32 with f = ⌊r·2^32/d⌋: Bernoulli(r/(d·k)) decided by one half unless k·w is
    // within k of f (then exactly, on big integers). The halves read are those of the integer path.
    let shifted = r << 32u32;
    let f = (&shifted / d).to_u64().unwrap_or(u64::MAX);
    let rho = shifted - BigUint::from(f) * d;
    let f128 = u128::from(f);
    let mut k: u64 = 1;
    loop {
        let w = bits.half();
        let kw = u128::from(k) * u128::from(w);
        let one = if kw + u128::from(k) <= f128 {
            true
        } else if kw > f128 {
            false
        } else {
            // U < r/(d·k) ⇔ k(w + R) < f + ρ/d ⇔ R < ((f − kw)·d + ρ)/(k·d), with 0 <= f − kw < k.
            let a = BigUint::from(f128 - kw) * d + &rho;
            bernoulli_ratio_big(bits, &a, &(BigUint::from(k) * d))?
        };
        if !one {
            return Ok(k % 2 == 1);
        }
        k += 1;
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::Generator;
    use core::convert::Infallible;

    /// A generator that returns the given words, then those of `rest`.
    pub(crate) struct Scripted<'a> {
        pub words: Vec<u64>,
        pub rest: &'a mut Generator,
    }

    impl rand_core::TryRng for Scripted<'_> {
        type Error = Infallible;
        fn try_next_u32(&mut self) -> core::result::Result<u32, Infallible> {
            Ok((self.try_next_u64()? >> 32) as u32)
        }
        fn try_next_u64(&mut self) -> core::result::Result<u64, Infallible> {
            Ok(if self.words.is_empty() {
                self.rest.next_u64()
            } else {
                self.words.remove(0)
            })
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> core::result::Result<(), Infallible> {
            self.rest.try_fill_bytes(dst)
        }
    }

    fn seeded(k: u64) -> Generator {
        Generator::from_seed([k, 0x5eed, 7, 11])
    }

    #[test]
    fn exp_table_is_certified() {
        // T_v <= e^{-v}·2^64 < T_v + 1 from rigorous bounds at 2^84, and e^{-45}·2^64 < 1.
        for v in 1..=TABLE_LEN {
            let (lo, hi) = exp_neg_bounds(v, 84);
            let t = BigUint::from(EXP_NEG_2_64[(v - 1) as usize]);
            assert!(lo >= &t << 20u32, "v = {v}: lower bound below T_v");
            assert!(
                hi <= (&t + 1u32) << 20u32,
                "v = {v}: upper bound above T_v + 1"
            );
        }
        let (_, hi) = exp_neg_bounds(TABLE_LEN + 1, 84);
        assert!(hi <= BigUint::one() << 84u32);
        // The bounds bracket e^{-v} as the float sees it.
        for v in [1u64, 5, 20] {
            let (lo, hi) = exp_neg_bounds(v, 60);
            let x = (-(v as f64)).exp() * 2f64.powi(60);
            assert!(
                lo.to_f64().unwrap() <= x * (1.0 + 1e-15)
                    && hi.to_f64().unwrap() >= x * (1.0 - 1e-15)
            );
        }
    }

    #[test]
    fn bernoulli_ratio_matches_the_big_integer_path_word_for_word() {
        let mut pick = seeded(1);
        let mut a_rng = seeded(2);
        let mut b_rng = seeded(2);
        let mut a_gen = Bits::new(&mut a_rng);
        let mut b_gen = Bits::new(&mut b_rng);
        for i in 0..20_000u64 {
            let b = match i % 3 {
                0 => pick.next_u64() >> (pick.next_u64() % 64),
                1 => pick.next_u64() % 1000,
                _ => u64::MAX - pick.next_u64() % 7,
            }
            .max(1);
            let a = (u128::from(pick.next_u64()) % (u128::from(b) + 1)) as u64;
            let fast = bernoulli_ratio(&mut a_gen, a, b);
            let slow = if a == b {
                // The big-integer path takes a < b; a = b is always 1 and reads one half.
                let _ = b_gen.half();
                true
            } else {
                bernoulli_ratio_big(&mut b_gen, &BigUint::from(a), &BigUint::from(b)).unwrap()
            };
            assert_eq!(fast, slow, "a = {a}, b = {b}");
        }
        let _ = (a_gen, b_gen);
        assert_eq!(a_rng, b_rng, "both read the same number of words");
        // The ambiguous half q = ⌊a·2^32/b⌋ needs the next half: R < (a·2^32 − q·b)/b.
        let mut rest = seeded(3);
        for (a, b) in [(1u64, 3u64), (2, 3), (5, 7), (1, u64::MAX)] {
            let q = ((u128::from(a) << 32) / u128::from(b)) as u64;
            let rem = (u128::from(a) << 32) % u128::from(b);
            for next in [
                0u64,
                u64::from(u32::MAX),
                ((rem << 32) / u128::from(b)) as u64,
            ] {
                let words = vec![q << 32 | next, 0];
                let mut s1 = Scripted {
                    words: words.clone(),
                    rest: &mut rest,
                };
                let fast = bernoulli_ratio(&mut Bits::new(&mut s1), a, b);
                let mut s2 = Scripted {
                    words,
                    rest: &mut rest,
                };
                let slow = bernoulli_ratio_big(
                    &mut Bits::new(&mut s2),
                    &BigUint::from(a),
                    &BigUint::from(b),
                )
                .unwrap();
                assert_eq!(fast, slow, "a = {a}, b = {b}, next = {next}");
            }
            let mut s = Scripted {
                words: vec![q << 32, 0],
                rest: &mut rest,
            };
            assert!(
                bernoulli_ratio(&mut Bits::new(&mut s), a, b),
                "R ≈ 0 is below rem/b > 0"
            );
            let mut s = Scripted {
                words: vec![q << 32 | u64::from(u32::MAX), u64::MAX],
                rest: &mut rest,
            };
            assert!(!bernoulli_ratio(&mut Bits::new(&mut s), a, b));
        }
    }

    /// `U < e^{−v}` decided from the first word by the exact bounds alone (no table).
    fn below_by_bounds<R: Rng + ?Sized>(g: &mut R, v: u64) -> bool {
        let mut bits = Bits::new(g);
        let w = bits.word();
        below_exp_neg_refined(&mut bits, v, w).unwrap()
    }

    #[test]
    fn table_decisions_match_the_exact_bounds_word_for_word() {
        let mut a = seeded(4);
        let mut b = seeded(4);
        for i in 0..5_000u64 {
            let v = 1 + i % TABLE_LEN;
            assert_eq!(
                below_exp_neg(&mut Bits::new(&mut a), v).unwrap(),
                below_by_bounds(&mut b, v),
                "v = {v}"
            );
        }
        assert_eq!(a, b);
        // Words at and around every threshold, followed by words that make U just above or below T_v·2^-64.
        let mut rest = seeded(5);
        for v in 1..=TABLE_LEN {
            let t = EXP_NEG_2_64[(v - 1) as usize];
            for (w, next) in [
                (t.wrapping_sub(1), 0),
                (t, 0),
                (t, u64::MAX),
                (t + 1, 0),
                (t, 1 << 63),
            ] {
                let mut s1 = Scripted {
                    words: vec![w, next, 5],
                    rest: &mut rest,
                };
                let fast = below_exp_neg(&mut Bits::new(&mut s1), v).unwrap();
                let mut s2 = Scripted {
                    words: vec![w, next, 5],
                    rest: &mut rest,
                };
                assert_eq!(
                    fast,
                    below_by_bounds(&mut s2, v),
                    "v = {v}, w = {w}, next = {next}"
                );
            }
            // U = T_v·2^-64 + tiny is below e^{-v} (its fractional part is positive); U just under
            // (T_v + 1)·2^-64 is not.
            let mut s = Scripted {
                words: vec![t, 0, 0],
                rest: &mut rest,
            };
            assert!(below_exp_neg(&mut Bits::new(&mut s), v).unwrap());
            let mut s = Scripted {
                words: vec![t, u64::MAX, u64::MAX],
                rest: &mut rest,
            };
            assert!(!below_exp_neg(&mut Bits::new(&mut s), v).unwrap());
        }
    }

    #[test]
    fn one_word_geometric_matches_the_exact_count() {
        // V = #{v >= 1 : U < e^{-v}} with each comparison by the exact bounds, on the same words.
        let mut a = seeded(6);
        let mut words = seeded(6);
        for _ in 0..20_000 {
            let v = geometric_exp1(&mut Bits::new(&mut a)).unwrap();
            let w = words.next_u64();
            let mut bits = Bits::new(&mut words);
            let want = (1..=TABLE_LEN)
                .take_while(|&k| below_exp_neg_refined(&mut bits, k, w).unwrap())
                .count() as u64;
            assert_eq!(v, want);
        }
        // Crafted: w = 0 is U < 2^-64 <= e^{-44}, so V >= 44 and V − 44 comes from the next word.
        let mut rest = seeded(7);
        let mut s = Scripted {
            words: vec![0, u64::MAX],
            rest: &mut rest,
        };
        assert_eq!(geometric_exp1(&mut Bits::new(&mut s)).unwrap(), 44);
        for v in 1..TABLE_LEN {
            let t = EXP_NEG_2_64[(v - 1) as usize];
            let mut s = Scripted {
                words: vec![t, 0],
                rest: &mut rest,
            };
            assert_eq!(
                geometric_exp1(&mut Bits::new(&mut s)).unwrap(),
                v,
                "U just above T_v·2^-64"
            );
            let mut s = Scripted {
                words: vec![t, u64::MAX, u64::MAX],
                rest: &mut rest,
            };
            assert_eq!(geometric_exp1(&mut Bits::new(&mut s)).unwrap(), v - 1);
        }
    }

    #[test]
    fn integer_gaussian_matches_the_big_integer_path_word_for_word() {
        // The same algorithm (t = σ) on native integers and on big integers reads the same words.
        for sigma in [1u64, 3, 17, 1000, 1 << 20] {
            let fast = DiscreteGaussian::integer(sigma).unwrap();
            let s = BigUint::from(sigma);
            let slow = DiscreteGaussian::laplace_proposal(&s * &s, BigUint::one()).unwrap();
            assert!(matches!(slow.kind, GaussianKind::Rational(_)));
            let (mut a, mut b) = (seeded(8), seeded(8));
            for _ in 0..5_000 {
                assert_eq!(
                    fast.sample(&mut a).unwrap(),
                    slow.sample(&mut b).unwrap(),
                    "sigma = {sigma}"
                );
            }
            assert_eq!(a, b);
        }
    }

    #[test]
    fn thinned_gaussian_interval_shortcut_matches_the_exact_decisions_word_for_word() {
        for sigma in [0.3f64, 0.5, 1.7, 2.9999, 10.25, 1000.3, 2f64.powi(30) + 0.5] {
            let d = DiscreteGaussian::from_sigma(sigma).unwrap();
            let GaussianKind::Thinned(t) = &d.kind else {
                panic!("sigma {sigma}: {:?}", d.kind)
            };
            let (mut a, mut b) = (seeded(20), seeded(20));
            let mut accepted = 0;
            for _ in 0..5_000 {
                let y = t.proposal.sample(&mut a).unwrap();
                assert_eq!(y, t.proposal.sample(&mut b).unwrap());
                let y2 = u128::from(y.unsigned_abs()).pow(2);
                let fast = t.accept(&mut Bits::new(&mut a), y2, false).unwrap();
                let slow = t.accept(&mut Bits::new(&mut b), y2, true).unwrap();
                assert_eq!(fast, slow, "sigma {sigma}, y {y}");
                accepted += usize::from(fast);
            }
            assert_eq!(a, b);
            // Acceptance Z(σ)/Z(⌈σ⌉) >= about σ/⌈σ⌉ (or 0.39 below 1).
            assert!(accepted > 1_500, "sigma {sigma}: {accepted}");
        }
        for (sigma, kind) in [(3e9 + 0.5, "Rational"), (4.0, "Integer"), (4.5, "Thinned")] {
            let d = DiscreteGaussian::from_sigma(sigma).unwrap();
            assert!(format!("{:?}", d.kind).starts_with(kind), "{sigma}");
        }
    }

    #[test]
    fn wide_products_and_shifts_are_exact() {
        let mut g = seeded(21);
        for _ in 0..10_000 {
            let a = u128::from(g.next_u64()) << 64 | u128::from(g.next_u64());
            let a = a >> (g.next_u64() % 128);
            let b = g.next_u64() >> (g.next_u64() % 64);
            let (h, l) = mul_wide(a, b);
            let exact = BigUint::from(a) * BigUint::from(b);
            assert_eq!((BigUint::from(h) << 64u32) + BigUint::from(l), exact);
            let r = (g.next_u64() % 200) as u32;
            let floor = &exact >> r;
            let ceil = (&exact + (BigUint::one() << r) - 1u32) >> r;
            let want = |x: &BigUint| x.to_u128();
            assert_eq!(shr_wide(h, l, r, false), want(&floor), "a {a} b {b} r {r}");
            assert_eq!(shr_wide(h, l, r, true), want(&ceil), "a {a} b {b} r {r}");
        }
    }

    /// `|count − n·p| <= 5.3 sd` (two-sided level about `1e-7`).
    fn binomial_ok(count: u64, n: u64, p: f64) -> bool {
        let (n, c) = (n as f64, count as f64);
        (c - n * p).abs() <= 5.3 * (n * p * (1.0 - p)).sqrt().max(1e-300)
    }

    #[test]
    fn bernoulli_exp_neg_has_the_stated_frequencies() {
        let n = 1u64 << 20;
        let mut rng = seeded(9);
        let mut g = Bits::new(&mut rng);
        for (num, den) in [
            (0u128, 1u64),
            (1, 1000),
            (1, 2),
            (1, 1),
            (5, 2),
            (40, 1),
            (1 << 100, 3),
        ] {
            let p = (-(num as f64) / den as f64).exp();
            let hits = (0..n)
                .filter(|_| bernoulli_exp_neg(&mut g, num, den).unwrap())
                .count() as u64;
            if p < 1e-12 {
                assert_eq!(hits, 0, "gamma = {num}/{den}");
            } else {
                assert!(
                    binomial_ok(hits, n, p),
                    "gamma = {num}/{den}: {hits} of {n}, p = {p}"
                );
            }
        }
        assert!(bernoulli_exp_neg(&mut g, 1, 0).is_err());
    }

    /// Chi-square goodness of fit of integer `xs` against `cdf(x) = P(X <= x)`, on bins cut at `cuts` and
    /// merged until each expects at least 20 draws; the critical value at level `1e-6` by Wilson-Hilferty
    /// (conservative at these degrees of freedom).
    pub(crate) fn chi_square_ok(xs: &[i64], cuts: &[i64], cdf: &dyn Fn(i64) -> f64) -> (f64, f64) {
        let n = xs.len() as f64;
        let mut cuts: Vec<i64> = cuts.to_vec();
        cuts.sort_unstable();
        cuts.dedup();
        // Bin j is (cuts[j-1], cuts[j]] with cuts[-1] = -inf, and a last bin (cuts[last], inf).
        let mut probs = Vec::new();
        let mut prev = 0.0;
        for &c in &cuts {
            let f = cdf(c);
            probs.push(f - prev);
            prev = f;
        }
        probs.push(1.0 - prev);
        let mut counts = vec![0u64; probs.len()];
        for &x in xs {
            counts[cuts.partition_point(|&c| c < x)] += 1;
        }
        // Merge sparse bins into their neighbour.
        let (mut ps, mut cs) = (Vec::new(), Vec::new());
        let (mut p_acc, mut c_acc) = (0.0, 0u64);
        for (p, c) in probs.into_iter().zip(counts) {
            p_acc += p;
            c_acc += c;
            if p_acc * n >= 20.0 {
                ps.push(p_acc);
                cs.push(c_acc);
                p_acc = 0.0;
                c_acc = 0;
            }
        }
        if let (Some(lp), Some(lc)) = (ps.last_mut(), cs.last_mut()) {
            *lp += p_acc;
            *lc += c_acc;
        }
        let stat: f64 = ps
            .iter()
            .zip(&cs)
            .map(|(&p, &c)| (c as f64 - n * p).powi(2) / (n * p))
            .sum();
        let k = (ps.len() - 1).max(1) as f64;
        let z = 4.753_424_308_822_899;
        let crit = k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3);
        assert!(ps.len() >= 2, "too few bins");
        (stat, crit)
    }

    pub(crate) fn laplace_cdf(scale: f64) -> impl Fn(i64) -> f64 {
        let p = (-1.0 / scale).exp();
        move |x: i64| {
            if x < 0 {
                p.powf(-(x as f64)) / (1.0 + p)
            } else {
                1.0 - p.powf(x as f64 + 1.0) / (1.0 + p)
            }
        }
    }

    pub(crate) fn gaussian_cdf(sigma_sq: f64) -> Box<dyn Fn(i64) -> f64> {
        let sigma = sigma_sq.sqrt();
        if sigma <= 100.0 {
            let k = (40.0 * sigma).ceil() as i64 + 2;
            let w: Vec<f64> = (-k..=k)
                .map(|x| (-((x * x) as f64) / (2.0 * sigma_sq)).exp())
                .collect();
            let z: f64 = w.iter().sum();
            let mut acc = 0.0;
            let cum: Vec<f64> = w
                .iter()
                .map(|p| {
                    acc += p / z;
                    acc
                })
                .collect();
            Box::new(move |x: i64| {
                if x < -k {
                    0.0
                } else if x >= k {
                    1.0
                } else {
                    cum[(x + k) as usize]
                }
            })
        } else {
            // Midpoint rule: P(X <= x) = Φ((x + 1/2)/σ) up to O(1/σ²) (Euler-Maclaurin), below 1e-5 here.
            Box::new(move |x: i64| {
                0.5 * libm::erfc(-((x as f64) + 0.5) / (sigma * core::f64::consts::SQRT_2))
            })
        }
    }

    fn cuts_for(scale: f64) -> Vec<i64> {
        [
            -6.0, -4.0, -3.0, -2.0, -1.5, -1.0, -0.7, -0.4, -0.2, -0.1, 0.0, 0.1, 0.2, 0.4, 0.7,
            1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
        ]
        .iter()
        .map(|z| (z * scale).round() as i64)
        .chain(-3..=3)
        .collect()
    }

    /// Mean 0 (5.3 sd), sample variance within 5.3 sd of `var` (kurtosis at most 6 for these laws), and as
    /// many positive as negative draws (binomial, 5.3 sd).
    pub(crate) fn moments_ok(xs: &[i64], var: f64, what: &str) {
        let n = xs.len() as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let m2 = xs.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / n;
        assert!(
            mean.abs() <= 5.3 * (var / n).sqrt() + 1e-12,
            "{what}: mean {mean}"
        );
        assert!(
            (m2 - var).abs() <= 5.3 * var * (5.0 / n).sqrt(),
            "{what}: variance {m2} vs {var}"
        );
        let pos = xs.iter().filter(|&&x| x > 0).count() as u64;
        let nonzero = xs.iter().filter(|&&x| x != 0).count() as u64;
        assert!(
            binomial_ok(pos, nonzero, 0.5),
            "{what}: {pos} positive of {nonzero}"
        );
    }

    #[test]
    fn discrete_laplace_fits_its_pmf() {
        let n = 1 << 20;
        let cases: Vec<(DiscreteLaplace, f64)> = vec![
            (DiscreteLaplace::from_scale(0.3).unwrap(), 0.3),
            (DiscreteLaplace::integer(1).unwrap(), 1.0),
            (DiscreteLaplace::from_scale(2.5).unwrap(), 2.5),
            (DiscreteLaplace::new(7, 3).unwrap(), 7.0 / 3.0),
            (DiscreteLaplace::integer(7).unwrap(), 7.0),
            (DiscreteLaplace::from_scale(1000.3).unwrap(), 1000.3),
            (
                DiscreteLaplace::integer(1 << 30).unwrap(),
                (1u64 << 30) as f64,
            ),
            (
                DiscreteLaplace::integer((1 << 31) - 1).unwrap(),
                ((1u64 << 31) - 1) as f64,
            ),
        ];
        for (i, (d, scale)) in cases.into_iter().enumerate() {
            assert_eq!(d.scale(), scale);
            let mut g = seeded(100 + i as u64);
            let mut xs = vec![0i64; n];
            d.fill(&mut g, &mut xs[..1000]).unwrap();
            d.fill(&mut g, &mut xs[1000..]).unwrap();
            let (stat, crit) = chi_square_ok(&xs, &cuts_for(scale), &laplace_cdf(scale));
            assert!(stat < crit, "scale {scale}: chi-square {stat} >= {crit}");
            moments_ok(&xs, d.variance(), &format!("DLap({scale})"));
            // Tail: P(|X| >= k) = 2p^k/(1+p) at k = ⌈5·scale⌉.
            let k = (5.0 * scale).ceil() as i64;
            let p = (-1.0 / scale).exp();
            let tail = xs.iter().filter(|x| x.abs() >= k).count() as u64;
            assert!(
                binomial_ok(tail, n as u64, 2.0 * p.powf(k as f64) / (1.0 + p)),
                "scale {scale}: tail {tail}"
            );
        }
    }

    #[test]
    fn discrete_gaussian_fits_its_pmf() {
        let cases: Vec<(DiscreteGaussian, f64, usize)> = vec![
            (DiscreteGaussian::from_sigma(0.5).unwrap(), 0.25, 1 << 20),
            (DiscreteGaussian::integer(1).unwrap(), 1.0, 1 << 20),
            (
                DiscreteGaussian::from_sigma(1.7).unwrap(),
                1.7 * 1.7,
                1 << 20,
            ),
            (DiscreteGaussian::integer(3).unwrap(), 9.0, 1 << 20),
            (
                DiscreteGaussian::from_sigma(10.25).unwrap(),
                10.25 * 10.25,
                1 << 20,
            ),
            (
                DiscreteGaussian::from_sigma(0.3).unwrap(),
                0.3 * 0.3,
                1 << 18,
            ),
            (
                DiscreteGaussian::integer(1 << 30).unwrap(),
                2f64.powi(60),
                1 << 20,
            ),
            (
                DiscreteGaussian::integer(1 << 31).unwrap(),
                2f64.powi(62),
                1 << 20,
            ),
            (
                DiscreteGaussian::from_sigma(3e9 + 0.5).unwrap(),
                (3e9 + 0.5f64).powi(2),
                1 << 16,
            ),
        ];
        for (i, (d, sigma_sq, n)) in cases.into_iter().enumerate() {
            assert!((d.sigma_sq() / sigma_sq - 1.0).abs() < 1e-15);
            let mut g = seeded(200 + i as u64);
            let mut xs = vec![0i64; n];
            d.fill(&mut g, &mut xs).unwrap();
            let (stat, crit) =
                chi_square_ok(&xs, &cuts_for(sigma_sq.sqrt()), &*gaussian_cdf(sigma_sq));
            assert!(
                stat < crit,
                "sigma^2 = {sigma_sq}: chi-square {stat} >= {crit}"
            );
            moments_ok(&xs, d.variance(), &format!("N_Z(0, {sigma_sq})"));
        }
    }

    #[test]
    fn variances_follow_their_formulas() {
        // Direct sums and Poisson-summation forms agree where both are accurate, and never exceed σ².
        for s2 in [0.01, 0.25, 1.0, 2.89, 50.0, 100.0] {
            let v = discrete_gaussian_variance(s2);
            assert!(v <= s2 * (1.0 + 1e-14) && v > 0.0, "{s2}: {v}");
        }
        let pi2 = core::f64::consts::PI.powi(2);
        let s2 = 0.25f64;
        // Var = σ²(1 − 8π²σ²Σk²e^{−2π²σ²k²}/(1 + 2Σe^{−2π²σ²k²})) at σ² = 1/4 by many terms of the dual sum.
        let (mut num, mut den) = (0.0, 1.0);
        for k in 1..50 {
            let k2 = f64::from(k * k);
            num += k2 * (-2.0 * pi2 * s2 * k2).exp();
            den += 2.0 * (-2.0 * pi2 * s2 * k2).exp();
        }
        let dual = s2 * (1.0 - 8.0 * pi2 * s2 * num / den);
        assert!((discrete_gaussian_variance(s2) / dual - 1.0).abs() < 1e-12);
        assert_eq!(discrete_gaussian_variance(1e6), 1e6);
        // DLap: 2e^{-1/τ}/(1 − e^{-1/τ})² by the direct series at τ = 0.7.
        let p = (-1.0f64 / 0.7).exp();
        let direct: f64 = (1..200)
            .map(|x| 2.0 * f64::from(x * x) * p.powi(x))
            .sum::<f64>()
            * (1.0 - p)
            / (1.0 + p);
        assert!((discrete_laplace_variance(0.7) / direct - 1.0).abs() < 1e-12);
    }

    #[test]
    fn seeded_streams_repeat_and_secure_streams_have_the_law() {
        let d = DiscreteGaussian::integer(5).unwrap();
        let l = DiscreteLaplace::from_scale(2.5).unwrap();
        let draw = |seed| {
            let mut g = seeded(seed);
            let mut xs = vec![0i64; 500];
            d.fill(&mut g, &mut xs[..250]).unwrap();
            l.add_to(&mut g, &mut xs[200..]).unwrap();
            xs
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        // The secure generator: ChaCha20 from the OS (not reproducible); the laws at level about 1e-7.
        let mut g = Generator::secure().unwrap();
        let n = 1 << 18;
        let mut xs = vec![0i64; n];
        crate::with_generator!(&mut g, r => d.fill(r, &mut xs)).unwrap();
        moments_ok(&xs, d.variance(), "secure N_Z(0, 25)");
        crate::with_generator!(&mut g, r => l.fill(r, &mut xs)).unwrap();
        moments_ok(&xs, l.variance(), "secure DLap(2.5)");
    }

    #[test]
    fn bad_scales_are_refused_by_name() {
        let bad = [
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e308,
            5e-324,
            1e-310,
            1e-19,
            2f64.powi(53),
        ];
        for x in bad {
            match DiscreteLaplace::from_scale(x) {
                Err(CoreError::InvalidArgument { name: "scale", .. }) => {}
                other => panic!("scale {x}: {other:?}"),
            }
            match DiscreteGaussian::from_sigma(x) {
                Err(CoreError::InvalidArgument { name: "sigma", .. }) => {}
                other => panic!("sigma {x}: {other:?}"),
            }
        }
        assert!(DiscreteLaplace::new(0, 1).is_err());
        assert!(DiscreteLaplace::new(5, 0).is_err());
        assert!(DiscreteLaplace::new(1 << 63, 1).is_err());
        assert!(DiscreteLaplace::new(1 << 60, 2).is_err());
        assert!(DiscreteLaplace::integer(0).is_err());
        assert!(DiscreteGaussian::integer(0).is_err());
        assert!(DiscreteGaussian::integer((1 << 52) + 1).is_err());
        assert!(DiscreteGaussian::rational(BigUint::zero(), BigUint::one()).is_err());
        assert!(DiscreteGaussian::rational(BigUint::one(), BigUint::one() << 300u32).is_err());
        assert!(DiscreteGaussian::rational(BigUint::one(), BigUint::one() << 121u32).is_err());
        // The extremes accepted.
        for x in [MIN_EXACT_SCALE, MAX_EXACT_SCALE] {
            let mut g = seeded(10);
            DiscreteLaplace::from_scale(x)
                .unwrap()
                .sample(&mut g)
                .unwrap();
            DiscreteGaussian::from_sigma(x)
                .unwrap()
                .sample(&mut g)
                .unwrap();
        }
    }

    /// Draw time per sampler: `cargo test -p dponline-core --profile dev-release --lib -- --ignored
    /// exact_draw_speed --nocapture`.
    #[test]
    #[ignore = "timing, not a test"]
    fn exact_draw_speed() {
        use std::time::Instant;
        let n = 1 << 16;
        let mut out = vec![0i64; n];
        type Fill = Box<dyn Fn(&mut Generator, &mut [i64])>;
        // A labelled fill by a sampler built fresh from `$make` (a `Result`) on every call.
        macro_rules! fill {
            ($label:expr, $make:expr) => {
                (
                    $label,
                    Box::new(|g: &mut Generator, o: &mut [i64]| {
                        crate::with_generator!(g, r => $make.unwrap().fill(r, o)).unwrap()
                    }) as Fill,
                )
            };
        }
        let samplers: Vec<(&str, Fill)> = vec![
            fill!("DLap(1)", DiscreteLaplace::integer(1)),
            fill!("DLap(2^30)", DiscreteLaplace::integer(1 << 30)),
            fill!("DLap(2.5)", DiscreteLaplace::from_scale(2.5)),
            fill!("N_Z(1)", DiscreteGaussian::integer(1)),
            fill!("N_Z(2^30)", DiscreteGaussian::integer(1 << 30)),
            fill!("N_Z(1.7)", DiscreteGaussian::from_sigma(1.7)),
        ];
        // Words read per draw: a counting wrapper around the seeded generator.
        struct Counting<'a>(&'a mut Generator, u64);
        impl rand_core::TryRng for Counting<'_> {
            type Error = Infallible;
            fn try_next_u32(&mut self) -> core::result::Result<u32, Infallible> {
                Ok((self.try_next_u64()? >> 32) as u32)
            }
            fn try_next_u64(&mut self) -> core::result::Result<u64, Infallible> {
                self.1 += 1;
                Ok(self.0.next_u64())
            }
            fn try_fill_bytes(&mut self, dst: &mut [u8]) -> core::result::Result<(), Infallible> {
                self.0.try_fill_bytes(dst)
            }
        }
        let mut base = seeded(1);
        let mut c = Counting(&mut base, 0);
        let per = |c: &mut Counting<'_>, f: &dyn Fn(&mut Counting<'_>)| {
            c.1 = 0;
            f(c);
            c.1 as f64 / n as f64
        };
        let mut o = vec![0i64; n];
        println!(
            "words/draw: DLap(1) {:.2}, DLap(2^30) {:.2}, DLap(2.5) {:.2}, N_Z(1) {:.2}, N_Z(2^30) {:.2}, N_Z(1.7) {:.2}",
            per(&mut c, &|c| DiscreteLaplace::integer(1)
                .unwrap()
                .fill(c, &mut o.clone())
                .unwrap()),
            per(&mut c, &|c| DiscreteLaplace::integer(1 << 30)
                .unwrap()
                .fill(c, &mut o.clone())
                .unwrap()),
            per(&mut c, &|c| DiscreteLaplace::from_scale(2.5)
                .unwrap()
                .fill(c, &mut o.clone())
                .unwrap()),
            per(&mut c, &|c| DiscreteGaussian::integer(1)
                .unwrap()
                .fill(c, &mut o.clone())
                .unwrap()),
            per(&mut c, &|c| DiscreteGaussian::integer(1 << 30)
                .unwrap()
                .fill(c, &mut o.clone())
                .unwrap()),
            per(&mut c, &|c| DiscreteGaussian::from_sigma(1.7)
                .unwrap()
                .fill(c, &mut o.clone())
                .unwrap()),
        );
        o.clear();
        for secure in [false, true] {
            let mut g = if secure {
                Generator::secure().unwrap()
            } else {
                seeded(1)
            };
            let t = Instant::now();
            let mut sink = 0u64;
            for _ in 0..20 {
                crate::with_generator!(&mut g, r => for _ in 0..n { sink ^= r.next_u64(); });
            }
            let word = t.elapsed().as_secs_f64() / (20 * n) as f64 * 1e9;
            println!("secure={secure}: generator word {word:.2} ns ({sink})");
            for (name, f) in &samplers {
                let mut best = f64::INFINITY;
                for _ in 0..10 {
                    let t = Instant::now();
                    f(&mut g, &mut out);
                    best = best.min(t.elapsed().as_secs_f64());
                }
                println!(
                    "secure={secure}: {name} {:.1} ns/draw",
                    best / n as f64 * 1e9
                );
            }
        }
    }
}
