//! Ordering keys and `k`-smallest selection shared by the matroid oracles.
//!
//! Exact ties are broken by the lower index everywhere: the graphic matroid sorts `(order_key, index)`
//! pairs, and [`KSmallest`] finds the `k`-th smallest value and then admits tied entries in index order.
//! Direction entries are finite (callers validate), so plain `<` and `==` on `f64` are a total order up to
//! `-0.0 == +0.0`, which is the tie we want.

/// A sort key for a finite `f64`, ordered exactly as the number.
///
/// `-0.0` and `+0.0` get the same key (they are equal numbers), so they tie and fall back to the index.
/// The mapping is the usual sign-magnitude to two's-complement trick behind `f64::total_cmp`.
#[inline]
pub(super) fn order_key(x: f64) -> u64 {
    // Adding +0.0 turns -0.0 into +0.0 (round-to-nearest) and leaves every other value unchanged.
    let bits = (x + 0.0).to_bits();
    // Negative numbers: flip every bit; others: flip the sign bit. Branch-free, as signs are unpredictable.
    let flip = ((bits as i64 >> 63) as u64) | (1 << 63);
    bits ^ flip
}

/// Capacity of the sample buffer [`KSmallest::new`] needs; allocate it once with
/// `Vec::with_capacity(SAMPLE_CAPACITY)`.
pub(super) const SAMPLE_CAPACITY: usize = 8192;

/// Below this many keys, selection runs directly on all of them.
const SAMPLE_FROM: usize = 1 << 15;

/// Which of the values, offered again one by one in increasing index order, belong to the `k` smallest
/// (ties to the earliest offered). Built by [`KSmallest::new`].
#[derive(Debug)]
pub(super) struct KSmallest {
    threshold: f64,
    ties_left: usize,
}

impl KSmallest {
    /// Prepare the choice of the `k` smallest of the `len` finite values that `values` yields
    /// (`1 <= k <= len`). `scratch` (length `>= len`) and `sample` (capacity [`SAMPLE_CAPACITY`], not
    /// reallocated) are overwritten.
    ///
    /// Large inputs use sampling in the manner of Floyd & Rivest (1975): bracket the `k`-th smallest value
    /// between two order statistics of an evenly strided sample, then in one pass count the values below
    /// the bracket and copy those inside it (about `6/√s` of them for a sample of size `s`) to `scratch`,
    /// and select among those only. If the bracket misses (possible for structured inputs), or for small
    /// inputs, `select_nth_unstable` runs on a copy of all values. Either way the result is exact and
    /// `O(len)`; the sampled path reads the values once and writes little.
    #[inline]
    pub(super) fn new<I>(
        values: I,
        len: usize,
        k: usize,
        scratch: &mut [f64],
        sample: &mut Vec<f64>,
    ) -> Self
    where
        I: Iterator<Item = f64> + Clone,
    {
        if len >= SAMPLE_FROM
            && let Some(choice) = Self::by_sampling(values.clone(), len, k, scratch, sample)
        {
            return choice;
        }
        let scratch = &mut scratch[..len];
        scratch.iter_mut().zip(values).for_each(|(s, x)| *s = x);
        Self::exact(scratch, k)
    }

    fn exact(values: &mut [f64], k: usize) -> Self {
        let (below, &mut threshold, _) = values.select_nth_unstable_by(k - 1, f64::total_cmp);
        let strictly_below = below.iter().filter(|&&x| x < threshold).count();
        KSmallest {
            threshold,
            ties_left: k - strictly_below,
        }
    }

    fn by_sampling<I: Iterator<Item = f64> + Clone>(
        values: I,
        len: usize,
        k: usize,
        scratch: &mut [f64],
        sample: &mut Vec<f64>,
    ) -> Option<Self> {
        let size = SAMPLE_CAPACITY.min(sample.capacity()).min(len / 4);
        sample.clear();
        sample.extend(values.clone().step_by(len / size).take(size));
        sample.sort_unstable_by(f64::total_cmp);
        // The k-th smallest value sits near position k·size/len of the sample, within a few sqrt(size).
        let rank = k * size / len;
        let margin = 3 * size.isqrt() + 1;
        let low = if rank > margin {
            sample[rank - margin]
        } else {
            f64::NEG_INFINITY
        };
        let high = sample.get(rank + margin).copied().unwrap_or(f64::INFINITY);
        // One pass (the inputs are large, so memory traffic dominates); the copy branch is taken for a
        // few percent of entries and well predicted.
        let (mut below, mut inside) = (0usize, 0usize);
        for x in values {
            below += usize::from(x < low);
            if x >= low && x <= high {
                scratch[inside] = x;
                inside += 1;
            }
        }
        if !(below < k && k <= below + inside) {
            return None;
        }
        // Values below the bracket are all below the threshold, so the tie count carries over.
        Some(Self::exact(&mut scratch[..inside], k - below))
    }

    /// Whether the entry with `value` is chosen; call once per entry, in increasing index order.
    #[inline]
    pub(super) fn take(&mut self, value: f64) -> bool {
        if value < self.threshold {
            true
        } else if value == self.threshold && self.ties_left > 0 {
            self.ties_left -= 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_like_the_numbers() {
        let xs = [f64::MIN, -3.5, -1e-300, -0.0, 0.0, 1e-300, 2.0, f64::MAX];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) <= order_key(w[1]), "{w:?}");
        }
        assert_eq!(order_key(-0.0), order_key(0.0));
        assert!(order_key(-3.5) < order_key(-1e-300));
    }

    #[test]
    fn selection_breaks_ties_by_index() {
        let d = [1.0, 0.0, 1.0, -0.0, 1.0, 2.0];
        for (k, want) in [(1, vec![1]), (3, vec![0, 1, 3]), (5, vec![0, 1, 2, 3, 4])] {
            let mut scratch = [0.0; 6];
            let reversed = d.iter().rev().copied();
            let mut choice = KSmallest::new(reversed, d.len(), k, &mut scratch, &mut Vec::new());
            let chosen: Vec<usize> = (0..d.len()).filter(|&i| choice.take(d[i])).collect();
            assert_eq!(chosen, want);
        }
    }

    #[test]
    fn sampling_agrees_with_exact_selection() {
        let mut rng = super::super::testing::rng(61);
        let n = 100_000;
        // Gaussian values, heavy ties, a sorted run, a periodic pattern, and large values exactly where the
        // strided sample looks (every 12th entry for n = 100 000), which makes the bracket miss and forces
        // the fallback.
        let inputs: Vec<Vec<f64>> = vec![
            super::super::testing::gaussian(&mut rng, n),
            super::super::testing::tied(&mut rng, n),
            (0..n).map(|i| i as f64).collect(),
            (0..n).map(|i| ((i * 7919) % 64) as f64).collect(),
            (0..n)
                .map(|i| if i % 12 == 0 { 1e9 } else { i as f64 })
                .collect(),
        ];
        let mut sample = Vec::with_capacity(SAMPLE_CAPACITY);
        let mut scratch = vec![0.0; n];
        for d in inputs {
            for k in [1, 17, n / 3, n - 1, n] {
                let mut fast = KSmallest::new(d.iter().copied(), n, k, &mut scratch, &mut sample);
                let mut copy = d.clone();
                let exact = KSmallest::exact(&mut copy, k);
                assert_eq!(
                    (fast.threshold, fast.ties_left),
                    (exact.threshold, exact.ties_left)
                );
                assert_eq!(d.iter().filter(|&&x| fast.take(x)).count(), k);
            }
            assert_eq!(sample.capacity(), SAMPLE_CAPACITY);
        }
    }
}
