//! Ordering keys and `k`-smallest selection shared by the matroid oracles.
//!
//! A direction entry `d_i` is turned into the pair `(order_key(d_i), i)`. Pairs compare lexicographically, so
//! sorting or selecting on them orders by value and breaks exact ties by the lower index: the result is a
//! unique, deterministic set. Working on a contiguous buffer of pairs (instead of an index buffer compared
//! through `direction[i]`) keeps the memory access sequential.

/// A sort key for a finite `f64`, ordered exactly as the number.
///
/// `-0.0` and `+0.0` get the same key (they are equal numbers), so they tie and fall back to the index.
/// The mapping is the usual sign-magnitude to two's-complement trick behind `f64::total_cmp`.
#[inline]
pub(super) fn order_key(x: f64) -> u64 {
    // Adding +0.0 turns -0.0 into +0.0 (round-to-nearest) and leaves every other value unchanged.
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Reorder `keys` so that its first `k` entries are the `k` smallest pairs (in no particular order among
/// themselves) and return them. `O(len)` expected and worst case (`select_nth_unstable`).
///
/// `k` may be anything from 0 to `keys.len()`.
#[inline]
pub(super) fn smallest_k(keys: &mut [(u64, usize)], k: usize) -> &[(u64, usize)] {
    if k > 0 && k < keys.len() {
        keys.select_nth_unstable(k - 1);
    }
    &keys[..k.min(keys.len())]
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
        let d = [1.0, 0.0, 1.0, 0.0, 1.0];
        let mut keys: Vec<(u64, usize)> = d.iter().map(|&x| order_key(x)).zip(0..).collect();
        keys.reverse();
        let mut chosen: Vec<usize> = smallest_k(&mut keys, 3).iter().map(|p| p.1).collect();
        chosen.sort_unstable();
        // The two zeros, then the lowest-index one among the tied ones.
        assert_eq!(chosen, [0, 1, 3]);
        assert!(smallest_k(&mut keys, 0).is_empty());
        assert_eq!(smallest_k(&mut keys, 5).len(), 5);
    }
}
