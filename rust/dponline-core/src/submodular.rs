//! Monotone submodular function streams evaluated natively, with batched marginal gains.
//!
//! A family holds a matrix of rows (one per round of a real or synthetic stream, `n` = ground-set size
//! columns, every entry in `[0, 1]`) and maps round `t` to a row by a [`RowOrder`], as the loss families of
//! [`crate::losses`] do. Each row defines a monotone submodular `f_t : 2^U → [0, 1]` with `f_t(∅) = 0`:
//!
//! * [`SubmodularKind::ProbabilisticCoverage`]: `f_t(S) = 1 − Π_{a∈S}(1 − p_a^t)` — the probability that a
//!   user who clicks each displayed item `a` independently with probability `p_a^t` clicks at least one
//!   (Perez-Salazar & Cummings 2021, Section 1, "Motivating Example"). Marginal gain of `a ∉ S`:
//!   `f_t(S + a) − f_t(S) = p_a^t · Π_{b∈S}(1 − p_b^t)`.
//! * [`SubmodularKind::FacilityLocation`]: `f_t(S) = max_{a∈S} s_a^t` (0 for `S = ∅`) for similarities
//!   `s^t ∈ [0, 1]^n` of round `t`'s client to the items: the one-client facility-location function. Marginal
//!   gain: `max(0, s_a^t − max_{b∈S} s_b^t)`.
//!
//! * Weighted coverage ([`SubmodularFamily::weighted_coverage`]): `f_t(S) = Σ_{j ∈ ∪_{a∈S} C(a)} w_j^t` for
//!   element weights `w^t` (rows of length `elements`, each summing to at most 1) and a fixed sparse incidence
//!   `C(a)`; gain of `a`: the weight of the elements of `C(a)` not covered by `S` (one pass over the incidence
//!   with a bit set of the covered elements as scratch).
//!
//! The first two need one scalar per row and prefix (`Π(1 − p_b)` resp. `max s_b`), so the gains of **every** `a ∈ U`
//! given a prefix `S` cost one `O(|U|)` pass ([`gains_into`]), and greedy over the summed function keeps
//! one scalar per distinct row ([`SubmodularFamily::lazy_greedy`]).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_finite};
use crate::interrupt::Poll;
use crate::losses::RowStream;

/// The kind of set function a row defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SubmodularKind {
    /// `1 − Π_{a∈S}(1 − p_a)`.
    ProbabilisticCoverage,
    /// `max_{a∈S} s_a`.
    FacilityLocation,
}

impl SubmodularKind {
    /// Parse `"probabilistic_coverage"` or `"facility_location"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`].
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "probabilistic_coverage" => Ok(SubmodularKind::ProbabilisticCoverage),
            "facility_location" => Ok(SubmodularKind::FacilityLocation),
            other => Err(CoreError::invalid(
                "kind",
                "'probabilistic_coverage' or 'facility_location'",
                format!("{other:?}"),
            )),
        }
    }

    /// The name accepted by [`SubmodularKind::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            SubmodularKind::ProbabilisticCoverage => "probabilistic_coverage",
            SubmodularKind::FacilityLocation => "facility_location",
        }
    }

    /// The per-row scalar of the empty prefix (`Π ∅ = 1`, `max ∅ = 0`).
    #[inline]
    pub(crate) fn empty_state(self) -> f64 {
        match self {
            SubmodularKind::ProbabilisticCoverage => 1.0,
            SubmodularKind::FacilityLocation => 0.0,
        }
    }

    /// Add item value `x` to the per-row scalar.
    #[inline]
    pub(crate) fn extend(self, state: f64, x: f64) -> f64 {
        match self {
            SubmodularKind::ProbabilisticCoverage => state * (1.0 - x),
            SubmodularKind::FacilityLocation => state.max(x),
        }
    }

    /// Marginal gain of an item of value `x` (not in the prefix) given the prefix's scalar.
    #[inline(always)]
    pub(crate) fn gain(self, state: f64, x: f64) -> f64 {
        match self {
            SubmodularKind::ProbabilisticCoverage => state * x,
            SubmodularKind::FacilityLocation => (x - state).max(0.0),
        }
    }

    /// `f(S)` from the scalar of `S`.
    #[inline]
    fn value_of(self, state: f64) -> f64 {
        match self {
            SubmodularKind::ProbabilisticCoverage => 1.0 - state,
            SubmodularKind::FacilityLocation => state,
        }
    }
}

/// The per-row scalar of `items` (duplicates count once).
#[inline]
pub(crate) fn state_of(kind: SubmodularKind, row: &[f64], items: &[usize]) -> f64 {
    let mut s = kind.empty_state();
    for (j, &a) in items.iter().enumerate() {
        if !items[..j].contains(&a) {
            s = kind.extend(s, row[a]);
        }
    }
    s
}

/// `f(S)` for the row `row` and item ids `items` (duplicates count once; ids must be `< row.len()`).
#[inline]
pub fn value(kind: SubmodularKind, row: &[f64], items: &[usize]) -> f64 {
    kind.value_of(state_of(kind, row, items))
}

/// The marginal gains `f(S + a) − f(S)` of every item `a` given the prefix `S = prefix`, written into `out`
/// (length `row.len()`): one pass over the row. Items of the prefix gain 0.
#[inline(always)]
pub fn gains_into(kind: SubmodularKind, row: &[f64], prefix: &[usize], out: &mut [f64]) {
    let s = state_of(kind, row, prefix);
    for (o, &x) in out.iter_mut().zip(row) {
        *o = kind.gain(s, x);
    }
    for &a in prefix {
        out[a] = 0.0;
    }
}

/// The marginal gain `f(S + a) − f(S)` of one item `a` given the prefix (0 if `a ∈ S`).
#[inline]
pub fn gain(kind: SubmodularKind, row: &[f64], prefix: &[usize], a: usize) -> f64 {
    if prefix.contains(&a) {
        0.0
    } else {
        kind.gain(state_of(kind, row, prefix), row[a])
    }
}

/// Validate round `round`'s caller-computed marginal gains (the row-major `(k, n)` matrix `gains`, each expert's
/// gains given its prefix) and payoff `f_t(S_t)`: the shape, finite values, and every value in `[0, 1]` (clipped
/// into it unless `strict`). Returns the number of values to clip (gains and payoff). Nothing is written when an
/// error is returned.
///
/// Errors: [`CoreError::Shape`]; [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`] naming
/// the round, not the value.
pub fn check_gains(
    gains: &[f64],
    payoff: f64,
    k: usize,
    n: usize,
    strict: bool,
    round: u64,
) -> Result<u64> {
    if k.checked_mul(n) != Some(gains.len()) {
        return Err(CoreError::Shape {
            name: "gains",
            expected: format!("shape ({k}, {n})"),
            got: format!("{} values", gains.len()),
        });
    }
    check_finite("payoff", &[payoff])?;
    let outside = check_row(gains, strict, round)?;
    let payoff_outside = !(0.0..=1.0).contains(&payoff);
    if payoff_outside && strict {
        return Err(CoreError::strict_bound(
            "payoff",
            "in [0, 1] (strict=True)",
            round,
        ));
    }
    Ok(outside as u64 + u64::from(payoff_outside))
}

/// Validate round `round`'s row (1-based, for the error message): finite, and every entry in `[0, 1]` (clipped
/// into it unless `strict`). Returns the number of entries clipped. Nothing is written when an error is returned.
///
/// Errors: [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`] naming the round, not the
/// value.
pub fn check_row(row: &[f64], strict: bool, round: u64) -> Result<usize> {
    // One branch-free vectorised pass counting entries outside [0, 1] (NaN included); the finiteness check
    // only then.
    let outside = crate::vecops::count_outside_unit(row);
    if outside > 0 {
        check_finite("row", row)?;
    }
    if strict && outside > 0 {
        return Err(CoreError::strict_bound(
            "row",
            "in [0, 1] (strict=True)",
            round,
        ));
    }
    Ok(outside)
}

/// A stream of monotone submodular functions over `n` items: `horizon` rounds drawn from `rows` rows.
///
/// Not serialisable: a family is pickled through its constructor (weights and covers in the caller's element
/// ids), never as its internal layout.
#[derive(Debug, Clone)]
pub struct SubmodularFamily {
    kind: SubmodularKind,
    n: usize,
    /// Weighted coverage: the elements each item covers (then `kind` is unused).
    cover: Option<Incidence>,
    /// Rows of length `n`, or of the number of elements for weighted coverage; for weighted coverage the
    /// columns are in the incidence's internal element order (see [`Incidence`]).
    stream: RowStream,
}

/// Which elements each item covers (compressed sparse rows: item `a` covers
/// `indices[indptr[a]..indptr[a + 1]]`, distinct), in **internal element ids**: the caller's elements relabelled
/// in order of first occurrence in the item-major incidence (elements no item covers last, in the caller's
/// order), and the weight rows stored with their columns permuted alike. The gains pass reads the incidence
/// item by item and gathers one weight per entry; relabelled, an element's first read walks the weight row
/// forwards (the hardware prefetcher follows it) and only its later reads are random, which makes the set
/// coverage gains about 1.2× faster on random incidences. Each item's entries keep the order of the caller's
/// sorted ids, so every sum adds the same terms in the same order as without the relabelling (the same bits).
#[derive(Debug, Clone)]
struct Incidence {
    indptr: Vec<usize>,
    /// Internal element ids as `u32` (ids are checked to fit); per item in increasing order of caller's id.
    indices: Vec<u32>,
    /// The transpose, element-major: element `j` is covered by the items `items[item_ptr[j]..item_ptr[j + 1]]`
    /// (increasing ids as `u32`): the items whose gains a prefix changes.
    item_ptr: Vec<usize>,
    items: Vec<u32>,
    /// `labels[i]`: the caller's id of internal element `i` (a permutation of `0..elements`).
    labels: Vec<u32>,
}

impl Incidence {
    /// The incidence of `indices` (the caller's element ids, each item's sorted and distinct, all below
    /// `elements <= 2^32`), relabelled by first occurrence, with its element-major transpose (a counting sort of
    /// the entries by internal id).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for more than `2^32` items; [`CoreError::Allocation`].
    fn new(indptr: Vec<usize>, mut indices: Vec<u32>, elements: usize) -> Result<Self> {
        let n = indptr.len().saturating_sub(1);
        if u32::try_from(n.saturating_sub(1)).is_err() {
            return Err(CoreError::invalid(
                "covers",
                "at most 2^32 items (item ids are stored as 32-bit integers)",
                n,
            ));
        }
        // First-occurrence relabelling: `internal[j]` is the internal id of the caller's element `j`.
        let mut seen = crate::alloc::zeros::<u64>("incidence", elements.div_ceil(64))?;
        let mut internal = crate::alloc::zeros::<u32>("incidence", elements)?;
        let mut labels = crate::alloc::reserve::<u32>("incidence", elements)?;
        let mut label = |j: usize, internal: &mut [u32], seen: &mut [u64]| {
            if !is_set(seen, j) {
                set_bit(seen, j, true);
                internal[j] = labels.len() as u32;
                labels.push(j as u32);
            }
        };
        for &j in &indices {
            label(j as usize, &mut internal, &mut seen);
        }
        for j in 0..elements {
            label(j, &mut internal, &mut seen);
        }
        for j in indices.iter_mut() {
            *j = internal[*j as usize];
        }
        let mut item_ptr = crate::alloc::zeros::<usize>("incidence", elements + 1)?;
        for &j in &indices {
            item_ptr[j as usize + 1] += 1;
        }
        for j in 0..elements {
            item_ptr[j + 1] += item_ptr[j];
        }
        let mut items = crate::alloc::zeros::<u32>("incidence", indices.len())?;
        let mut next = item_ptr.clone();
        for (a, w) in indptr.windows(2).enumerate() {
            for &j in &indices[w[0]..w[1]] {
                items[next[j as usize]] = a as u32;
                next[j as usize] += 1;
            }
        }
        Ok(Incidence {
            indptr,
            indices,
            item_ptr,
            items,
            labels,
        })
    }

    /// The internal ids of the elements item `a` covers.
    #[inline]
    fn covers(&self, a: usize) -> &[u32] {
        &self.indices[self.indptr[a]..self.indptr[a + 1]]
    }

    /// `row` (a weight row in the caller's element order) permuted in place into internal order, with `tmp`
    /// (length `row.len()`) as scratch.
    fn to_internal(&self, row: &mut [f64], tmp: &mut [f64]) {
        tmp.copy_from_slice(row);
        for (w, &j) in row.iter_mut().zip(&self.labels) {
            *w = tmp[j as usize];
        }
    }

    /// `row` (internal order) into `out` in the caller's element order.
    fn to_caller(&self, row: &[f64], out: &mut [f64]) {
        for (&w, &j) in row.iter().zip(&self.labels) {
            out[j as usize] = w;
        }
    }
}

/// Weighted coverage `Σ_{j ∈ ∪_{a∈S} C(a)} w_j` of one row, with the bit set of `scratch` (all clear on entry and
/// exit).
#[inline]
fn coverage_value(cover: &Incidence, row: &[f64], items: &[usize], scratch: &mut Scratch) -> f64 {
    let covered = &mut scratch.covered[..];
    let mut total = 0.0;
    for &a in items {
        for &j in cover.covers(a) {
            let j = j as usize;
            if !is_set(covered, j) {
                set_bit(covered, j, true);
                total += row[j];
            }
        }
    }
    for &a in items {
        for &j in cover.covers(a) {
            set_bit(covered, j as usize, false);
        }
    }
    total.min(1.0)
}

/// `out[a] += Σ_r term(s_r, w_r, row_r[a])` over `(row, state, weight)` triples, four rows per pass over `out`
/// (one load and store of `out[a]` per four terms).
#[inline(always)]
fn accumulate_rows(
    used: &[(&[f64], f64, f64)],
    out: &mut [f64],
    term: impl Fn(f64, f64, f64) -> f64,
) {
    let n = out.len();
    let mut groups = used.chunks_exact(4);
    for q in &mut groups {
        let (r0, r1, r2, r3) = (&q[0].0[..n], &q[1].0[..n], &q[2].0[..n], &q[3].0[..n]);
        let (s, w) = (
            [q[0].1, q[1].1, q[2].1, q[3].1],
            [q[0].2, q[1].2, q[2].2, q[3].2],
        );
        for ((((o, &x0), &x1), &x2), &x3) in out.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3) {
            *o += (term(s[0], w[0], x0) + term(s[1], w[1], x1))
                + (term(s[2], w[2], x2) + term(s[3], w[3], x3));
        }
    }
    for &(row, s, w) in groups.remainder() {
        for (o, &x) in out.iter_mut().zip(row) {
            *o += term(s, w, x);
        }
    }
}

/// Whether bit `j` of the bit set `bits` is set.
#[inline(always)]
fn is_set(bits: &[u64], j: usize) -> bool {
    (bits[j >> 6] >> (j & 63)) & 1 == 1
}

/// Set or clear bit `j` of the bit set `bits`.
#[inline(always)]
fn set_bit(bits: &mut [u64], j: usize, on: bool) {
    let mask = 1u64 << (j & 63);
    if on {
        bits[j >> 6] |= mask;
    } else {
        bits[j >> 6] &= !mask;
    }
}

/// `Σ_{j ∈ elements} weight[j]`, skipping (adding 0 for) the elements set in `covered` when `masked`: four
/// running sums over consecutive groups of four (independent addition chains), combined pairwise, then the
/// leftover terms in turn — the one order every coverage gain is summed in, so that the unmasked sum of a set
/// without covered elements has the same bits as the masked one.
#[inline(always)]
fn cover_sum<const MASKED: bool>(elements: &[u32], weight: &[f64], covered: &[u64]) -> f64 {
    let Some(last) = weight.len().checked_sub(1) else {
        return 0.0;
    };
    // Ids are below `weight.len()` by construction; the clamp (a no-op) lets the compiler drop the bounds
    // check (no panic path even for a corrupt state), leaving one load and one add per entry.
    let term = |j: u32| {
        let j = (j as usize).min(last);
        let w = weight[j];
        if MASKED
            && covered
                .get(j >> 6)
                .is_some_and(|b| (b >> (j & 63)) & 1 == 1)
        {
            0.0
        } else {
            w
        }
    };
    let mut acc = [0.0; 4];
    let chunks = elements.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..4 {
            acc[k] += term(c[k]);
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for &j in rest {
        s += term(j);
    }
    s
}

/// `out[a] = min(cap, Σ_{j ∈ C(a), j not covered} weight[j])` for every item, then 0 for the prefix items.
/// Most items share no element with the prefix: their gains are plain gathers and adds over the item-major
/// incidence (no test of the bit set); the items that do are found through the element-major transpose
/// (the items covering each element of the prefix) and summed again with the covered elements skipped.
#[inline(always)]
fn coverage_gains_kernel(
    cover: &Incidence,
    weight: &[f64],
    covered: &[u64],
    prefix: &[usize],
    cap: f64,
    out: &mut [f64],
) {
    let (indptr, indices) = (&cover.indptr, &cover.indices[..]);
    let of = |a: usize| {
        indptr
            .get(a..a + 2)
            .and_then(|w| indices.get(w[0]..w[1]))
            .unwrap_or(&[])
    };
    for (a, o) in out.iter_mut().enumerate() {
        let s = cover_sum::<false>(of(a), weight, covered);
        *o = if s < cap { s } else { cap };
    }
    for &a in prefix {
        for &j in of(a) {
            let j = j as usize;
            let touched = cover
                .item_ptr
                .get(j..j + 2)
                .and_then(|r| cover.items.get(r[0]..r[1]))
                .unwrap_or(&[]);
            for &b in touched {
                let s = cover_sum::<true>(of(b as usize), weight, covered);
                if let Some(o) = out.get_mut(b as usize) {
                    *o = if s < cap { s } else { cap };
                }
            }
        }
    }
    for &a in prefix {
        out[a] = 0.0;
    }
}

/// Gains `Σ_{j ∈ C(a) \ C(S)} w_j` of every item given the prefix (0 for prefix items): [`coverage_gains_kernel`]
/// with the prefix's elements marked in the bit set `covered` (clear again on return).
#[inline]
fn coverage_gains(
    cover: &Incidence,
    weight: &[f64],
    prefix: &[usize],
    cap: f64,
    out: &mut [f64],
    covered: &mut [u64],
) {
    for &a in prefix {
        for &j in cover.covers(a) {
            set_bit(covered, j as usize, true);
        }
    }
    // Not dispatched: the kernel is a chain of random loads from the weight row, and at AVX2/AVX-512 LLVM
    // turns each group of four into a gather, which on the CPUs measured (AMD Zen 4) is slower than four
    // scalar loads (set-coverage bench: about 1.3× slower). The result is the same at every level.
    coverage_gains_kernel(cover, weight, covered, prefix, cap, out);
    for &a in prefix {
        for &j in cover.covers(a) {
            set_bit(covered, j as usize, false);
        }
    }
}

/// Scratch for [`SubmodularFamily::value_with`] / [`SubmodularFamily::gains_with`] (empty for the row-scalar
/// kinds): for weighted coverage, a bit set with one bit per element (all clear between calls).
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    covered: Vec<u64>,
}

/// The summed gains of the row-scalar kinds over `(row, prefix scalar, multiplicity)` triples, added into
/// `out` (zero on entry): [`accumulate_rows`] with the kind's term, at the level of its caller.
#[inline(always)]
fn summed_row_gains(kind: SubmodularKind, used: &[(&[f64], f64, f64)], out: &mut [f64]) {
    match kind {
        SubmodularKind::ProbabilisticCoverage => {
            // One product per entry: the row's weight times its prefix scalar, then times `p_a`.
            let scaled: Vec<(&[f64], f64, f64)> =
                used.iter().map(|&(row, s, w)| (row, w * s, 1.0)).collect();
            accumulate_rows(&scaled, out, |ws, _, x| ws * x);
        }
        SubmodularKind::FacilityLocation if used.iter().all(|u| u.2 == 1.0) => {
            // Σ_r max(0, x_r − s_r) = Σ_r max(x_r, s_r) − Σ_r s_r, both sums grouped alike: rounding is
            // monotone, so the difference is >= 0 and exactly 0 when no row improves.
            accumulate_rows(used, out, |s, _, x| if x > s { x } else { s });
            let mut base = [0.0];
            let states: Vec<(&[f64], f64, f64)> =
                used.iter().map(|&(_, s, w)| (&[0.0][..], s, w)).collect();
            accumulate_rows(&states, &mut base, |s, _, _| s);
            for o in out.iter_mut() {
                *o -= base[0];
            }
        }
        SubmodularKind::FacilityLocation => accumulate_rows(used, out, |s, w, x| {
            let d = x - s;
            w * if d > 0.0 { d } else { 0.0 }
        }),
    }
}

/// Largest Gauss-Legendre rule the probabilistic-coverage Shapley value uses (exact for up to `2·256` items).
const SHAPLEY_NODES: usize = 256;

/// The summed function `F(S) = Σ_r f_r(S)` over a family's distinct rows, each once (the row order and
/// horizon play no part): what the submodular base polytope (`crate::domains::SubmodularBasePolytope`) is
/// built on. Monotone submodular, `F(∅) = 0`.
impl SubmodularFamily {
    /// `F(items)` (ids `< n`, duplicates counted once).
    pub fn row_sum_value(&self, items: &[usize], scratch: &mut Scratch) -> f64 {
        (0..self.rows())
            .map(|r| {
                let row = self.row(r);
                match &self.cover {
                    Some(c) => coverage_value(c, row, items, scratch),
                    None => value(self.kind, row, items),
                }
            })
            .sum()
    }

    /// The greedy marginal gains along `order` (a permutation of the items): `out[order[k]] =
    /// F({order[0..=k]}) − F({order[0..k]})`, summed row by row (each row walks the order once, keeping its
    /// prefix scalar or, for weighted coverage, its covered elements in `scratch`, cleared again on return).
    /// `O(rows·n)` (weighted coverage: `O(rows·incidence)`), no allocation.
    #[inline]
    pub fn row_sum_chain_gains(&self, order: &[usize], out: &mut [f64], scratch: &mut Scratch) {
        out.fill(0.0);
        for r in 0..self.rows() {
            let row = self.row(r);
            match &self.cover {
                Some(cover) => {
                    let covered = &mut scratch.covered[..];
                    for &a in order {
                        out[a] += cover_sum::<true>(cover.covers(a), row, covered);
                        for &j in cover.covers(a) {
                            set_bit(covered, j as usize, true);
                        }
                    }
                    for &a in order {
                        for &j in cover.covers(a) {
                            set_bit(covered, j as usize, false);
                        }
                    }
                }
                None => {
                    let kind = self.kind;
                    let mut state = kind.empty_state();
                    for &a in order {
                        let x = row[a];
                        out[a] += kind.gain(state, x);
                        state = kind.extend(state, x);
                    }
                }
            }
        }
    }

    /// The Shapley value of `F` (the average of its greedy vertices over all `n!` orders) into `out`
    /// (length `n`), summed over the rows:
    ///
    /// * facility location, `f = max_a s_a`: with the values sorted `s_(1) ≤ … ≤ s_(n)` (`s_(0) = 0`), the
    ///   increment `s_(j) − s_(j−1)` is shared equally by the `n − j + 1` items at or above it;
    /// * weighted coverage: each element's weight is shared equally by the items covering it;
    /// * probabilistic coverage: `φ_a = p_a ∫₀¹ Π_{b≠a}(1 − p_b t) dt` (the integral of the multilinear
    ///   extension's partial derivative along the diagonal, Owen 1972), by Gauss-Legendre with
    ///   `min(⌈n/2⌉, 256)` nodes: exact for `n ≤ 512` (a polynomial of degree `n − 1`), then rescaled to sum
    ///   to `F(U)` exactly.
    ///
    /// Errors: [`CoreError::IterationLimit`] from the Gauss-Legendre nodes (not expected);
    /// [`CoreError::Allocation`].
    pub fn row_sum_shapley(&self, out: &mut [f64]) -> Result<()> {
        let n = self.n;
        out.fill(0.0);
        match (&self.cover, self.kind) {
            (Some(cover), _) => {
                let mut degree = crate::alloc::zeros::<u32>("element degrees", self.width())?;
                for &j in &cover.indices {
                    degree[j as usize] += 1;
                }
                for r in 0..self.rows() {
                    let row = self.row(r);
                    for (a, o) in out.iter_mut().enumerate() {
                        *o += cover
                            .covers(a)
                            .iter()
                            .map(|&j| row[j as usize] / f64::from(degree[j as usize]))
                            .sum::<f64>();
                    }
                }
            }
            (None, SubmodularKind::FacilityLocation) => {
                let mut sorted = crate::alloc::zeros::<usize>("item order", n)?;
                for r in 0..self.rows() {
                    let row = self.row(r);
                    sorted.iter_mut().enumerate().for_each(|(i, s)| *s = i);
                    sorted.sort_unstable_by(|&a, &b| row[a].total_cmp(&row[b]).then(a.cmp(&b)));
                    let (mut share, mut below) = (0.0, 0.0);
                    for (j, &a) in sorted.iter().enumerate() {
                        share += (row[a] - below) / (n - j) as f64;
                        below = row[a];
                        out[a] += share;
                    }
                }
            }
            (None, SubmodularKind::ProbabilisticCoverage) => {
                let rule =
                    crate::special::GaussLegendre::new(n.div_ceil(2).clamp(1, SHAPLEY_NODES))?;
                let mut share = crate::alloc::zeros::<f64>("Shapley shares", n)?;
                let everything: Vec<usize> = (0..n).collect();
                for r in 0..self.rows() {
                    let row = self.row(r);
                    share.fill(0.0);
                    for (&t, &w) in rule.nodes.iter().zip(&rule.weights) {
                        // Every factor is in (0, 1] at a node t ∈ (0, 1), so dividing one out is exact to
                        // rounding.
                        let product: f64 = row.iter().map(|p| 1.0 - p * t).product();
                        for (s, &p) in share.iter_mut().zip(row) {
                            *s += w * p * product / (1.0 - p * t);
                        }
                    }
                    let total: f64 = share.iter().sum();
                    let want = value(self.kind, row, &everything);
                    let factor = if n > 2 * SHAPLEY_NODES && total > 0.0 {
                        want / total
                    } else {
                        1.0
                    };
                    out.iter_mut()
                        .zip(&share)
                        .for_each(|(o, s)| *o += factor * s);
                }
            }
        }
        Ok(())
    }

    /// Pairs of items that some row makes interact: for the row-scalar kinds, the first positive item of each
    /// row with every other positive item of that row; for weighted coverage, the first item covering each
    /// element of positive weight (in some row) with every other item covering it. The connected components
    /// of these pairs are the connected components of `F` (its finest separators): `f_r` of a row-scalar kind
    /// is inseparable on its positive items (`f({a, b}) < f({a}) + f({b})` whenever `p_a p_b > 0`, resp. `F`
    /// is a max) and a sum is separable exactly where every term is.
    pub fn row_sum_links(&self) -> Vec<(usize, usize)> {
        let mut links = Vec::new();
        match &self.cover {
            Some(cover) => {
                let mut heavy = vec![false; self.width()];
                for r in 0..self.rows() {
                    for (h, &w) in heavy.iter_mut().zip(self.row(r)) {
                        *h |= w > 0.0;
                    }
                }
                for (j, _) in heavy.iter().enumerate().filter(|(_, h)| **h) {
                    // Rows and the transpose share the internal element ids.
                    let items = &cover.items[cover.item_ptr[j]..cover.item_ptr[j + 1]];
                    if let Some((&first, rest)) = items.split_first() {
                        links.extend(rest.iter().map(|&b| (first as usize, b as usize)));
                    }
                }
            }
            None => {
                for r in 0..self.rows() {
                    let mut positive = self.row(r).iter().enumerate().filter(|(_, x)| **x > 0.0);
                    if let Some((first, _)) = positive.next() {
                        links.extend(positive.map(|(b, _)| (first, b)));
                    }
                }
            }
        }
        links
    }
}

/// Result of greedy maximisation of the summed function.
#[derive(Debug, Clone, PartialEq)]
pub struct GreedyResult {
    /// Items in the order greedy added them.
    pub items: Vec<usize>,
    /// `Σ_t f_t(S_j)` after each addition `j = 1..=|items|`.
    pub values: Vec<f64>,
    /// Marginal-gain evaluations (each over all distinct rows).
    pub evaluations: u64,
}

impl SubmodularFamily {
    /// A family over the row-major `(rows, n)` matrix `data` (every entry finite and in `[0, 1]`), played in
    /// sequence (`horizon = rows`).
    ///
    /// Errors: [`CoreError::Shape`] for an empty or ragged matrix; [`CoreError::NonFinite`];
    /// [`CoreError::InvalidArgument`] for an entry outside `[0, 1]`.
    pub fn new(kind: SubmodularKind, data: Vec<f64>, n: usize) -> Result<Self> {
        RowStream::check_matrix(
            "data",
            "a non-empty 2-D array (rows, ground_set_size)",
            format_args!("{n} items"),
            &data,
            n,
        )?;
        if let Some(&v) = data.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(CoreError::invalid("data", "in [0, 1] everywhere", v));
        }
        Ok(SubmodularFamily {
            kind,
            n,
            cover: None,
            stream: RowStream::sequential(data, n),
        })
    }

    /// Weighted coverage over `n = covers.len()` items and `elements` elements: row `t` holds element weights
    /// `w^t ∈ [0, 1]^elements` with `Σ_j w_j^t <= 1`, item `a` covers the elements `covers[a]` (duplicates
    /// ignored), and `f_t(S) = Σ_{j ∈ ∪_{a∈S} C(a)} w_j^t` — monotone submodular with values in `[0, 1]`.
    /// Gains of all items given a prefix cost one pass over the incidence.
    ///
    /// Errors: [`CoreError::Shape`] for a ragged weight matrix or no items; [`CoreError::NonFinite`];
    /// [`CoreError::InvalidArgument`] for weights outside `[0, 1]`, a row summing to more than 1, or an
    /// element id `>= elements`.
    pub fn weighted_coverage(
        data: Vec<f64>,
        elements: usize,
        covers: &[Vec<usize>],
    ) -> Result<Self> {
        if elements == 0 || data.is_empty() || data.len() % elements != 0 || covers.is_empty() {
            return Err(CoreError::Shape {
                name: "weights",
                expected: "a non-empty 2-D array (rows, elements) and at least one item".into(),
                got: format!(
                    "{} values for {elements} elements, {} items",
                    data.len(),
                    covers.len()
                ),
            });
        }
        check_finite("weights", &data)?;
        if let Some(&v) = data.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(CoreError::invalid("weights", "in [0, 1] everywhere", v));
        }
        if let Some(sum) = data
            .chunks_exact(elements)
            .map(|r| r.iter().sum::<f64>())
            .find(|&s| s > 1.0 + 1e-9)
        {
            return Err(CoreError::invalid(
                "weights",
                "rows summing to at most 1 (so that f_t <= 1)",
                sum,
            ));
        }
        if u32::try_from(elements - 1).is_err() {
            return Err(CoreError::invalid(
                "elements",
                "at most 2^32 (element ids are stored as 32-bit integers)",
                elements,
            ));
        }
        let mut indptr = crate::alloc::reserve("incidence", covers.len() + 1)?;
        indptr.push(0);
        let total: usize = covers.iter().map(Vec::len).sum();
        let mut indices = crate::alloc::reserve("incidence", total)?;
        for c in covers {
            if let Some(&j) = c.iter().find(|&&j| j >= elements) {
                return Err(CoreError::invalid(
                    "covers",
                    "element ids in 0..elements",
                    j,
                ));
            }
            let mut c = c.clone();
            c.sort_unstable();
            c.dedup();
            indices.extend(c.iter().map(|&j| j as u32));
            indptr.push(indices.len());
        }
        let cover = Incidence::new(indptr, indices, elements)?;
        let mut data = data;
        let mut tmp = crate::alloc::zeros("weight row", elements)?;
        for row in data.chunks_exact_mut(elements) {
            cover.to_internal(row, &mut tmp);
        }
        Ok(SubmodularFamily {
            kind: SubmodularKind::ProbabilisticCoverage,
            n: covers.len(),
            cover: Some(cover),
            stream: RowStream::sequential(data, elements),
        })
    }

    /// `"probabilistic_coverage"`, `"facility_location"` or `"weighted_coverage"`.
    pub fn kind_name(&self) -> &'static str {
        if self.cover.is_some() {
            "weighted_coverage"
        } else {
            self.kind.name()
        }
    }

    /// Row length: `n`, or the number of elements for weighted coverage.
    pub fn width(&self) -> usize {
        self.stream.width()
    }

    /// For weighted coverage, the (sorted, distinct) elements each item covers, in the caller's element ids.
    pub fn covers(&self) -> Option<Vec<Vec<usize>>> {
        self.cover.as_ref().map(|c| {
            (0..self.n)
                .map(|a| {
                    c.covers(a)
                        .iter()
                        .map(|&j| c.labels[j as usize] as usize)
                        .collect()
                })
                .collect()
        })
    }

    /// Scratch for [`SubmodularFamily::value_with`] / [`SubmodularFamily::gains_with`] (see [`Scratch`]).
    ///
    /// Errors: [`CoreError::Allocation`].
    pub fn scratch(&self) -> Result<Scratch> {
        if self.cover.is_none() {
            return Ok(Scratch::default());
        }
        Ok(Scratch {
            covered: crate::alloc::zeros("coverage flags", self.width().div_ceil(64))?,
        })
    }

    /// `f_t(S)` without checks (round `< horizon`, ids `< n`, `scratch` from [`SubmodularFamily::scratch`]).
    #[inline]
    pub fn value_with(&self, t: u64, items: &[usize], scratch: &mut Scratch) -> f64 {
        let row = self.row_at(t);
        match &self.cover {
            Some(c) => coverage_value(c, row, items, scratch),
            None => value(self.kind, row, items),
        }
    }

    /// The gains of every item given `prefix` at round `t` into `out` (length `n`), without checks (the
    /// row-scalar kinds at the CPU's widest vector level, [`crate::simd`]; the same bits at every level).
    #[inline]
    pub fn gains_with(&self, t: u64, prefix: &[usize], out: &mut [f64], scratch: &mut Scratch) {
        let row = self.row_at(t);
        match &self.cover {
            Some(c) => coverage_gains(c, row, prefix, 1.0, out, &mut scratch.covered),
            None => crate::simd::dispatch(
                #[inline(always)]
                || gains_into(self.kind, row, prefix, out),
            ),
        }
    }

    crate::losses::row_stream_methods!();

    /// The kind of a row-scalar family (`None` for weighted coverage; see [`SubmodularFamily::kind_name`]).
    pub fn kind(&self) -> Option<SubmodularKind> {
        self.cover.is_none().then_some(self.kind)
    }

    /// Ground-set size `|U|`.
    pub fn ground_set_size(&self) -> usize {
        self.n
    }

    /// The row-major data, as given to the constructor (weighted coverage: a copy with the columns back in the
    /// caller's element order).
    ///
    /// Errors: [`CoreError::Allocation`].
    pub fn data(&self) -> Result<Cow<'_, [f64]>> {
        let data = self.stream.data();
        let Some(cover) = &self.cover else {
            return Ok(Cow::Borrowed(data));
        };
        let width = self.width();
        let mut out = crate::alloc::zeros("data", data.len())?;
        for (row, o) in data.chunks_exact(width).zip(out.chunks_exact_mut(width)) {
            cover.to_caller(row, o);
        }
        Ok(Cow::Owned(out))
    }

    /// Row `i` (`i < rows`); for weighted coverage with the columns in the family's internal element order.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        self.stream.row(i)
    }

    /// Row of round `t` (as [`SubmodularFamily::row`]).
    #[inline]
    pub fn row_at(&self, t: u64) -> &[f64] {
        self.row(self.row_index(t))
    }

    fn check_items(&self, items: &[usize]) -> Result<()> {
        match items.iter().find(|&&a| a >= self.n) {
            Some(&a) => Err(CoreError::invalid(
                "items",
                "item ids in 0..ground_set_size",
                a,
            )),
            None => Ok(()),
        }
    }

    fn check_round(&self, t: u64) -> Result<()> {
        if t >= self.horizon() {
            return Err(CoreError::invalid("t", "a round in 0..horizon", t));
        }
        Ok(())
    }

    /// `f_t(S)` (duplicates in `items` count once).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `t >= horizon` or an item id `>= n`.
    pub fn value(&self, t: u64, items: &[usize]) -> Result<f64> {
        self.check_round(t)?;
        self.check_items(items)?;
        let mut covered = self.scratch()?;
        Ok(self.value_with(t, items, &mut covered))
    }

    /// The marginal gains of every item given `prefix` at round `t`, into `out` (length `n`).
    ///
    /// Errors: as [`SubmodularFamily::value`]; [`CoreError::Shape`] for `out`.
    pub fn gains(&self, t: u64, prefix: &[usize], out: &mut [f64]) -> Result<()> {
        self.check_round(t)?;
        self.check_items(prefix)?;
        crate::error::check_len("out", out, self.n)?;
        let mut covered = self.scratch()?;
        self.gains_with(t, prefix, out, &mut covered);
        Ok(())
    }

    /// The marginal gains of every item given `prefix` for the summed function `F(S) = Σ_{t<horizon} f_t(S)`
    /// (the function [`SubmodularFamily::lazy_greedy`] maximises), into `out` (length `n`): one row-major pass
    /// over the distinct rows used, each weighted by its multiplicity (weighted coverage: one pass over the
    /// incidence with the summed element weights). Items of the prefix gain 0.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for an item id `>= n`; [`CoreError::Shape`] for `out`;
    /// [`CoreError::Allocation`]; [`CoreError::Interrupted`] (`out` unchanged) as [`SubmodularFamily::row_counts`].
    pub fn summed_gains(&self, prefix: &[usize], out: &mut [f64], poll: Poll<'_>) -> Result<()> {
        self.check_items(prefix)?;
        crate::error::check_len("out", out, self.n)?;
        let counts = self.row_counts(poll)?;
        out.fill(0.0);
        if let Some(cover) = &self.cover {
            let mut total_w: Vec<f64> =
                crate::alloc::zeros("summed element weights", self.width())?;
            for (r, &c) in counts.iter().enumerate() {
                if c > 0 {
                    for (w, &x) in total_w.iter_mut().zip(self.row(r)) {
                        *w += c as f64 * x;
                    }
                }
            }
            let mut scratch = self.scratch()?;
            coverage_gains(
                cover,
                &total_w,
                prefix,
                f64::INFINITY,
                out,
                &mut scratch.covered,
            );
        } else {
            let used: Vec<(&[f64], f64, f64)> = counts
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(r, &c)| {
                    let row = self.row(r);
                    (row, state_of(self.kind, row, prefix), c as f64)
                })
                .collect();
            let kind = self.kind;
            crate::simd::dispatch(
                #[inline(always)]
                || summed_row_gains(kind, &used, out),
            );
        }
        for &a in prefix {
            out[a] = 0.0;
        }
        Ok(())
    }

    /// `Σ_{s<c} f_s(S)` for the fixed set `items` at each checkpoint `c` (sorted, each `<= horizon`).
    ///
    /// `O(last checkpoint)` evaluations, asking `poll` before each block of at most
    /// [`crate::interrupt::POLL_ROUNDS`] rounds.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for bad item ids or checkpoints; [`CoreError::Interrupted`] if
    /// `poll` says stop.
    pub fn cumulative_at(
        &self,
        items: &[usize],
        checkpoints: &[u64],
        poll: Poll<'_>,
    ) -> Result<Vec<f64>> {
        self.check_items(items)?;
        let mut covered = self.scratch()?;
        self.stream
            .cumulative_at(checkpoints, poll, |rounds, total| {
                for t in rounds {
                    *total += self.value_with(t, items, &mut covered);
                }
            })
    }

    /// Greedy for weighted coverage: the summed function is itself a weighted coverage with element weights
    /// `W_j = Σ_t w_j^t`, so each step is one pass over the incidence.
    fn coverage_greedy(&self, cover: &Incidence, counts: &[u64], k: usize) -> GreedyResult {
        let mut total_w = vec![0.0; self.width()];
        for (r, &c) in counts.iter().enumerate() {
            if c > 0 {
                for (w, &x) in total_w.iter_mut().zip(self.row(r)) {
                    *w += c as f64 * x;
                }
            }
        }
        let mut covered = vec![false; self.width()];
        let (mut items, mut values, mut total) = (Vec::new(), Vec::new(), 0.0);
        let mut evaluations = 0u64;
        for _ in 0..k {
            let mut best = (0.0, usize::MAX);
            for a in (0..self.n).filter(|a| !items.contains(a)) {
                let g: f64 = cover
                    .covers(a)
                    .iter()
                    .filter(|&&j| !covered[j as usize])
                    .map(|&j| total_w[j as usize])
                    .sum();
                evaluations += 1;
                if g > best.0 {
                    best = (g, a);
                }
            }
            let (g, a) = best;
            if a == usize::MAX {
                break;
            }
            for &j in cover.covers(a) {
                covered[j as usize] = true;
            }
            total += g;
            items.push(a);
            values.push(total);
        }
        GreedyResult {
            items,
            values,
            evaluations,
        }
    }

    /// Greedy (Nemhauser-Wolsey-Fisher 1978) maximisation of `F(S) = Σ_t f_t(S)` over `|S| <= k`, with lazy
    /// evaluations (Minoux 1978): stale marginal gains are upper bounds by submodularity, so an item whose
    /// refreshed gain still tops the heap is the greedy choice. `F` is evaluated on the distinct rows weighted
    /// by their multiplicities. Guarantees `F(S) >= (1 − 1/e) max_{|S|<=k} F(S)`; stops early when no item
    /// has positive gain.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `k == 0` or `k > n`; [`CoreError::Allocation`];
    /// [`CoreError::Interrupted`] as [`SubmodularFamily::row_counts`].
    pub fn lazy_greedy(&self, k: usize, poll: Poll<'_>) -> Result<GreedyResult> {
        if k == 0 || k > self.n {
            return Err(CoreError::invalid("k", "in 1..=ground_set_size", k));
        }
        let counts = self.row_counts(poll)?;
        if let Some(cover) = &self.cover {
            return Ok(self.coverage_greedy(cover, &counts, k));
        }
        let used: Vec<usize> = (0..self.rows()).filter(|&r| counts[r] > 0).collect();
        let weight: Vec<f64> = used.iter().map(|&r| counts[r] as f64).collect();
        let mut state = vec![self.kind.empty_state(); used.len()];
        let kind = self.kind;
        let eval = |state: &[f64], a: usize| -> f64 {
            used.iter()
                .zip(state)
                .zip(&weight)
                .map(|((&r, &s), &w)| w * kind.gain(s, self.stream.data()[r * self.width() + a]))
                .sum()
        };
        // (upper bound on the gain, item, round of the bound's evaluation)
        let mut bounds: Vec<(f64, usize, usize)> =
            (0..self.n).map(|a| (eval(&state, a), a, 0)).collect();
        let mut evaluations = self.n as u64;
        let mut chosen = vec![false; self.n];
        let (mut items, mut values) = (Vec::with_capacity(k), Vec::with_capacity(k));
        let mut total = 0.0;
        for step in 0..k {
            let pick = loop {
                // The item with the largest bound (ties: smallest id) among those not chosen.
                let best = bounds.iter().filter(|b| !chosen[b.1]).copied().fold(
                    None::<(f64, usize, usize)>,
                    |acc, b| match acc {
                        Some(a) if a.0 > b.0 || (a.0 == b.0 && a.1 < b.1) => Some(a),
                        _ => Some(b),
                    },
                );
                let Some((bound, a, at)) = best else {
                    break None;
                };
                if at == step {
                    break Some((bound, a));
                }
                let fresh = eval(&state, a);
                evaluations += 1;
                bounds[a] = (fresh, a, step);
            };
            let Some((g, a)) = pick else { break };
            if g <= 0.0 {
                break;
            }
            chosen[a] = true;
            for (s, &r) in state.iter_mut().zip(&used) {
                *s = kind.extend(*s, self.stream.data()[r * self.width() + a]);
            }
            total = state
                .iter()
                .zip(&weight)
                .map(|(&s, &w)| w * kind.value_of(s))
                .sum::<f64>();
            items.push(a);
            values.push(total);
        }
        let _ = total;
        Ok(GreedyResult {
            items,
            values,
            evaluations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interrupt::NEVER;
    use crate::losses::RowOrder;

    fn brute(kind: SubmodularKind, row: &[f64], set: &[usize]) -> f64 {
        match kind {
            SubmodularKind::ProbabilisticCoverage => {
                let mut uniq: Vec<usize> = set.to_vec();
                uniq.sort_unstable();
                uniq.dedup();
                1.0 - uniq.iter().map(|&a| 1.0 - row[a]).product::<f64>()
            }
            SubmodularKind::FacilityLocation => set.iter().map(|&a| row[a]).fold(0.0, f64::max),
        }
    }

    #[test]
    fn summed_gains_equal_the_sum_of_the_rounds_gains() {
        let mut rng = crate::rng::Generator::from_seed([2, 7, 1, 8]);
        let (rows, n) = (5, 23);
        let data: Vec<f64> = (0..rows * n).map(|_| rng.open01()).collect();
        let prefix = [4, 17, 9];
        for kind in [
            SubmodularKind::ProbabilisticCoverage,
            SubmodularKind::FacilityLocation,
        ] {
            let fam = SubmodularFamily::new(kind, data.clone(), n)
                .unwrap()
                .reordered(12, RowOrder::Cycle)
                .unwrap();
            let mut got = vec![0.0; n];
            fam.summed_gains(&prefix, &mut got, NEVER).unwrap();
            let mut want = vec![0.0; n];
            let mut one = vec![0.0; n];
            for t in 0..12 {
                fam.gains(t, &prefix, &mut one).unwrap();
                want.iter_mut().zip(&one).for_each(|(w, g)| *w += g);
            }
            for (a, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() < 1e-12, "{kind:?} item {a}: {g} vs {w}");
            }
            // Unit multiplicities (sequential order): the facility-location fast path.
            let seq = SubmodularFamily::new(kind, data.clone(), n).unwrap();
            seq.summed_gains(&prefix, &mut got, NEVER).unwrap();
            let mut want = vec![0.0; n];
            for t in 0..rows as u64 {
                seq.gains(t, &prefix, &mut one).unwrap();
                want.iter_mut().zip(&one).for_each(|(w, g)| *w += g);
            }
            for (a, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    *g >= 0.0 && (g - w).abs() < 1e-12,
                    "{kind:?} item {a}: {g} vs {w}"
                );
                if *w == 0.0 {
                    assert_eq!(*g, 0.0, "{kind:?} item {a}");
                }
            }
        }
        let covers: Vec<Vec<usize>> = (0..n).map(|a| vec![a % 7, (3 * a) % 7]).collect();
        let w: Vec<f64> = (0..rows * 7).map(|_| rng.open01() / 7.0).collect();
        let fam = SubmodularFamily::weighted_coverage(w, 7, &covers).unwrap();
        let (mut got, mut want, mut one) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        fam.summed_gains(&prefix, &mut got, NEVER).unwrap();
        for t in 0..rows as u64 {
            fam.gains(t, &prefix, &mut one).unwrap();
            want.iter_mut().zip(&one).for_each(|(w, g)| *w += g);
        }
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-12);
        }
        assert!(fam.summed_gains(&[n], &mut got, NEVER).is_err());
        assert!(fam.summed_gains(&[], &mut got[..3], NEVER).is_err());
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn gains_equal_brute_force_differences() {
        let mut rng = crate::rng::Generator::from_seed([3, 1, 4, 1]);
        for kind in [
            SubmodularKind::ProbabilisticCoverage,
            SubmodularKind::FacilityLocation,
        ] {
            for _ in 0..200 {
                let n = 1 + crate::mwu::uniform_below(&mut rng, 12);
                let row: Vec<f64> = (0..n).map(|_| rng.open01()).collect();
                let len = crate::mwu::uniform_below(&mut rng, n + 1);
                let prefix: Vec<usize> = (0..len)
                    .map(|_| crate::mwu::uniform_below(&mut rng, n))
                    .collect();
                let mut out = vec![0.0; n];
                gains_into(kind, &row, &prefix, &mut out);
                let base = brute(kind, &row, &prefix);
                for a in 0..n {
                    let mut with = prefix.clone();
                    with.push(a);
                    let want = brute(kind, &row, &with) - base;
                    assert!(
                        (out[a] - want).abs() < 1e-14,
                        "{kind:?} {a}: {} vs {want}",
                        out[a]
                    );
                    assert!((gain(kind, &row, &prefix, a) - want).abs() < 1e-14);
                    assert!((0.0..=1.0).contains(&out[a]));
                }
                assert!((value(kind, &row, &prefix) - base).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn bootstrap_scans_stop_when_polled_and_change_nothing() {
        let data: Vec<f64> = (0..40).map(|i| f64::from(i % 7) / 10.0).collect();
        let fam = SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, data, 4)
            .unwrap()
            .reordered(1 << 40, RowOrder::Bootstrap { seed: 3 })
            .unwrap();
        // Stop at the third poll: each O(horizon) scan returns `Interrupted` after 2·POLL_ROUNDS rounds.
        let stop_third = || {
            let calls = std::sync::atomic::AtomicU32::new(0);
            move || calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 2
        };
        assert_eq!(fam.row_counts(&stop_third()), Err(CoreError::Interrupted));
        assert_eq!(
            fam.lazy_greedy(2, &stop_third()).err(),
            Some(CoreError::Interrupted)
        );
        let mut out = vec![7.0; 4];
        assert_eq!(
            fam.summed_gains(&[], &mut out, &stop_third()),
            Err(CoreError::Interrupted)
        );
        assert_eq!(out, vec![7.0; 4]);
        assert_eq!(
            fam.cumulative_at(&[1], &[1 << 30], &stop_third()),
            Err(CoreError::Interrupted)
        );
        // Unpolled, a scan of a small horizon runs to the end.
        let small = fam
            .reordered(1000, RowOrder::Bootstrap { seed: 3 })
            .unwrap();
        assert_eq!(small.row_counts(NEVER).unwrap().iter().sum::<u64>(), 1000);
    }

    #[test]
    fn lazy_greedy_matches_plain_greedy_and_brute_force_bound() {
        let mut rng = crate::rng::Generator::from_seed([2, 7, 1, 8]);
        let (rows, n) = (30, 9);
        let data: Vec<f64> = (0..rows * n).map(|_| 0.3 * rng.open01()).collect();
        for kind in [
            SubmodularKind::ProbabilisticCoverage,
            SubmodularKind::FacilityLocation,
        ] {
            let fam = SubmodularFamily::new(kind, data.clone(), n).unwrap();
            let total = |set: &[usize]| {
                (0..rows as u64)
                    .map(|t| fam.value(t, set).unwrap())
                    .sum::<f64>()
            };
            for k in 1..=3 {
                let g = fam.lazy_greedy(k, NEVER).unwrap();
                // plain greedy
                let mut set = Vec::new();
                for _ in 0..k {
                    let best = (0..n)
                        .filter(|a| !set.contains(a))
                        .map(|a| {
                            let mut w = set.clone();
                            w.push(a);
                            (total(&w), a)
                        })
                        .fold((f64::NEG_INFINITY, 0), |acc, x| {
                            if x.0 > acc.0 + 1e-12 { x } else { acc }
                        });
                    set.push(best.1);
                }
                assert_eq!(g.items, set, "{kind:?} k={k}");
                assert!((g.values.last().unwrap() - total(&set)).abs() < 1e-9);
                // (1 − 1/e) of the brute-force optimum
                let mut opt: f64 = 0.0;
                for mask in 0u32..(1 << n) {
                    if mask.count_ones() as usize <= k {
                        let s: Vec<usize> = (0..n).filter(|a| mask >> a & 1 == 1).collect();
                        opt = opt.max(total(&s));
                    }
                }
                assert!(*g.values.last().unwrap() >= (1.0 - (-1f64).exp()) * opt - 1e-12);
            }
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn weighted_coverage_gains_values_and_greedy() {
        let covers = vec![vec![0, 1], vec![1, 2, 2], vec![3], vec![0, 3, 4]];
        let data = vec![0.1, 0.2, 0.3, 0.15, 0.25, 0.3, 0.1, 0.1, 0.2, 0.3];
        let fam = SubmodularFamily::weighted_coverage(data.clone(), 5, &covers).unwrap();
        assert_eq!(fam.ground_set_size(), 4);
        let brute = |t: usize, set: &[usize]| -> f64 {
            let mut el: Vec<usize> = set.iter().flat_map(|&a| covers[a].clone()).collect();
            el.sort_unstable();
            el.dedup();
            el.iter().map(|&j| data[t * 5 + j]).sum()
        };
        let mut out = vec![0.0; 4];
        for t in 0..2 {
            for prefix in [vec![], vec![0], vec![1, 3], vec![2, 2]] {
                fam.gains(t as u64, &prefix, &mut out).unwrap();
                let base = brute(t, &prefix);
                assert!((fam.value(t as u64, &prefix).unwrap() - base).abs() < 1e-15);
                for a in 0..4 {
                    let mut w = prefix.clone();
                    w.push(a);
                    assert!(
                        (out[a] - (brute(t, &w) - base)).abs() < 1e-15,
                        "{t} {prefix:?} {a}"
                    );
                }
            }
        }
        let g = fam.lazy_greedy(2, NEVER).unwrap();
        let total = |set: &[usize]| brute(0, set) + brute(1, set);
        let best_pair = (0..4)
            .flat_map(|a| (0..4).map(move |b| (a, b)))
            .map(|(a, b)| total(&[a, b]))
            .fold(0.0, f64::max);
        assert!((g.values[1] - total(&g.items)).abs() < 1e-12);
        assert!(g.values[1] >= (1.0 - (-1f64).exp()) * best_pair);
        assert!(SubmodularFamily::weighted_coverage(vec![0.6, 0.6], 2, &covers).is_err());
        assert!(SubmodularFamily::weighted_coverage(vec![0.1, 0.1], 2, &[vec![2]]).is_err());
    }

    /// The first-occurrence relabelling of weighted coverage is invisible: `data` and `covers` come back in the
    /// caller's ids, internal ids number the elements by first occurrence, and values, gains and summed gains
    /// have the bits of the same sums taken in the caller's ids (each item's elements in increasing caller id,
    /// grouped as [`cover_sum`] groups them).
    #[test]
    fn weighted_coverage_relabelling_is_invisible() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut rng = crate::rng::Generator::from_seed([9, 1, 4, 7]);
        let (n, m, rows) = (203, 1500, 3);
        // Unsorted with duplicates; ids above 1400 never covered.
        let covers: Vec<Vec<usize>> = (0..n)
            .map(|a| {
                (0..1 + a % 17)
                    .map(|_| (rng.open01() * 1400.0) as usize)
                    .chain([(a * 7) % 1400, (a * 7) % 1400])
                    .collect()
            })
            .collect();
        let data: Vec<f64> = (0..rows * m).map(|_| rng.open01() / m as f64).collect();
        let fam = SubmodularFamily::weighted_coverage(data.clone(), m, &covers).unwrap();
        assert_eq!(bits(&fam.data().unwrap()), bits(&data));
        let sorted: Vec<Vec<usize>> = covers
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.sort_unstable();
                c.dedup();
                c
            })
            .collect();
        assert_eq!(fam.covers().unwrap(), sorted);
        let cover = fam.cover.as_ref().unwrap();
        let mut perm = cover.labels.clone();
        perm.sort_unstable();
        assert!(perm.iter().enumerate().all(|(i, &j)| i == j as usize));
        let (mut next, mut internal) = (0u32, vec![u32::MAX; m]);
        for c in &sorted {
            for &j in c {
                if internal[j] == u32::MAX {
                    internal[j] = next;
                    next += 1;
                }
            }
        }
        assert!(next < 1400 && (0..next).all(|i| internal[cover.labels[i as usize] as usize] == i));
        assert!((next as usize + 1..m).all(|i| cover.labels[i] > cover.labels[i - 1]));
        for t in 0..rows {
            assert_eq!(
                bits(fam.row(t)),
                bits(
                    &(0..m)
                        .map(|i| data[t * m + cover.labels[i] as usize])
                        .collect::<Vec<_>>()
                )
            );
        }
        let ids = |c: &[usize]| c.iter().map(|&j| j as u32).collect::<Vec<_>>();
        let reference = |row: &[f64], prefix: &[usize], cap: f64| {
            let mut covered = vec![0u64; m.div_ceil(64)];
            let (mut value, mut seen) = (0.0, vec![false; m]);
            for &a in prefix {
                for &j in &sorted[a] {
                    set_bit(&mut covered, j, true);
                    if !seen[j] {
                        seen[j] = true;
                        value += row[j];
                    }
                }
            }
            let gains: Vec<f64> = (0..n)
                .map(|a| {
                    if prefix.contains(&a) {
                        0.0
                    } else {
                        cover_sum::<true>(&ids(&sorted[a]), row, &covered).min(cap)
                    }
                })
                .collect();
            (value.min(1.0), gains)
        };
        let mut out = vec![0.0; n];
        for prefix in [vec![], vec![5], vec![0, 17, 99, 202, 17], (0..40).collect()] {
            for t in 0..rows {
                let (value, gains) = reference(&data[t * m..(t + 1) * m], &prefix, 1.0);
                assert_eq!(
                    fam.value(t as u64, &prefix).unwrap().to_bits(),
                    value.to_bits()
                );
                fam.gains(t as u64, &prefix, &mut out).unwrap();
                assert_eq!(bits(&out), bits(&gains), "{t} {prefix:?}");
            }
            let mut total = vec![0.0; m];
            for row in data.chunks_exact(m) {
                total.iter_mut().zip(row).for_each(|(w, &x)| *w += 1.0 * x);
            }
            fam.summed_gains(&prefix, &mut out, NEVER).unwrap();
            assert_eq!(
                bits(&out),
                bits(&reference(&total, &prefix, f64::INFINITY).1)
            );
        }
    }

    /// Every dispatched gain kernel computes the same bits at the baseline, AVX2 and AVX-512; the coverage
    /// gains (unmasked sums plus the items touched by the prefix summed again) equal the masked sum of every
    /// item bitwise.
    #[test]
    fn gain_kernels_agree_bitwise_across_levels() {
        use crate::simd::{Level, run_at};
        let levels = [Level::Baseline, Level::Avx2, Level::Avx512];
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut rng = crate::rng::Generator::from_seed([5, 4, 3, 2]);
        let (n, m) = (301, 997);
        let covers: Vec<Vec<usize>> = (0..n)
            .map(|a| {
                (0..1 + a % 23)
                    .map(|_| (rng.open01() * m as f64) as usize)
                    .collect()
            })
            .collect();
        let weights: Vec<f64> = (0..2 * m).map(|_| rng.open01() / m as f64).collect();
        let fam = SubmodularFamily::weighted_coverage(weights, m, &covers).unwrap();
        let cover = fam.cover.as_ref().unwrap();
        let prefix = [3, 77, 150, 299];
        let mut covered = fam.scratch().unwrap().covered;
        for &a in &prefix {
            for &j in cover.covers(a) {
                set_bit(&mut covered, j as usize, true);
            }
        }
        let row = fam.row(1);
        let at = |level| {
            let mut out = vec![0.0; n];
            run_at(
                level,
                #[inline(always)]
                || coverage_gains_kernel(cover, row, &covered, &prefix, 1.0, &mut out),
            );
            bits(&out)
        };
        let want: Vec<f64> = (0..n)
            .map(|a| {
                if prefix.contains(&a) {
                    0.0
                } else {
                    cover_sum::<true>(cover.covers(a), row, &covered).min(1.0)
                }
            })
            .collect();
        for level in levels {
            assert_eq!(at(level), bits(&want), "{level:?}");
        }
        let mut out = vec![0.0; n];
        fam.gains(1, &prefix, &mut out).unwrap();
        assert_eq!(bits(&out), bits(&want));

        let rows: Vec<f64> = (0..5 * n).map(|_| rng.open01()).collect();
        for kind in [
            SubmodularKind::ProbabilisticCoverage,
            SubmodularKind::FacilityLocation,
        ] {
            let used: Vec<(&[f64], f64, f64)> = rows
                .chunks_exact(n)
                .enumerate()
                .map(|(r, row)| (row, state_of(kind, row, &prefix), 1.0 + (r % 2) as f64))
                .collect();
            let one = |level, used: &[(&[f64], f64, f64)]| {
                let (mut summed, mut single) = (vec![0.0; n], vec![0.0; n]);
                run_at(
                    level,
                    #[inline(always)]
                    || summed_row_gains(kind, used, &mut summed),
                );
                run_at(
                    level,
                    #[inline(always)]
                    || gains_into(kind, used[0].0, &prefix, &mut single),
                );
                (bits(&summed), bits(&single))
            };
            let ones: Vec<(&[f64], f64, f64)> = used.iter().map(|&(r, s, _)| (r, s, 1.0)).collect();
            for used in [&used[..], &ones[..], &ones[..3]] {
                let base = one(Level::Baseline, used);
                assert_eq!(base, one(Level::Avx2, used), "{kind:?}");
                assert_eq!(base, one(Level::Avx512, used), "{kind:?}");
            }
        }
    }

    #[test]
    fn errors() {
        assert!(
            SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, vec![0.5, 1.5], 2)
                .is_err()
        );
        assert!(
            SubmodularFamily::new(
                SubmodularKind::ProbabilisticCoverage,
                vec![0.5, f64::NAN],
                2
            )
            .is_err()
        );
        assert!(
            SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, vec![0.5; 3], 2).is_err()
        );
        let fam =
            SubmodularFamily::new(SubmodularKind::FacilityLocation, vec![0.5, 0.2], 2).unwrap();
        assert!(fam.value(0, &[2]).is_err());
        assert!(fam.value(1, &[0]).is_err());
        assert!(fam.lazy_greedy(0, NEVER).is_err());
        assert!(fam.lazy_greedy(3, NEVER).is_err());
        assert_eq!(check_row(&[0.2, 1.2, -0.1], false, 1).unwrap(), 2);
        let message = check_row(&[0.2, 1.234567], true, 7)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("round 7") && !message.contains("1.234567"),
            "{message}"
        );
        assert!(check_row(&[0.2, f64::NAN], false, 1).is_err());
    }
}
