//! Routines shared by the learners' unit tests (compiled for tests only): the property "a native run plays what
//! `ask`/`tell` plays", and "every dispatch level computes the same bits". Each learner's test module calls them
//! with its own learners, family and feedback.

use crate::rng::Generator;
use crate::simd::Level;
use crate::submodular::{SubmodularFamily, SubmodularKind};

use super::Learner;

/// Play rounds `0 .. rounds` by `ask`/`tell` on `told` — `round(told, t)` plays round `t` and returns its loss —
/// and the same rounds as one native run of `ran` (a twin of `told`: the same arguments and seed) with checkpoints
/// halfway and at the end; assert that the run's total and its last checkpoint are the told total, bit for bit (the
/// same actions, their losses summed in the same order). `what` names the case in the messages.
///
/// Panics if a call fails or the totals differ.
pub(crate) fn assert_run_equals_ask_tell<L: Learner>(
    what: &str,
    told: &mut L,
    ran: &mut L,
    family: L::Family<'_>,
    rounds: u64,
    mut round: impl FnMut(&mut L, u64) -> f64,
) {
    let mut total = 0.0;
    for t in 0..rounds {
        total += round(told, t);
    }
    let mut cumulative = [0.0; 2];
    let summary = ran
        .run(family, rounds, &[rounds / 2, rounds], &mut cumulative)
        .unwrap();
    assert_eq!(summary.total_loss, total, "{what}");
    assert_eq!(cumulative[1], total, "{what}");
}

/// Assert that `at(level)` is the same at the baseline, AVX2 and AVX-512 dispatch levels ([`crate::simd::run_at`]
/// runs at the lower of a level and the CPU's): the dispatched kernels are bit-identical at every level.
///
/// Panics if two levels differ.
pub(crate) fn assert_same_at_every_level<T: PartialEq + core::fmt::Debug>(at: impl Fn(Level) -> T) {
    let base = at(Level::Baseline);
    assert_eq!(base, at(Level::Avx2), "AVX2");
    assert_eq!(base, at(Level::Avx512), "AVX-512");
}

/// A probabilistic-coverage family of `rows` rows over `n` items, click probabilities uniform in `[0, ½)` from the
/// seed `[seed, 0, 0, 0]` (the submodular learners' tests).
pub(crate) fn coverage_family(rows: usize, n: usize, seed: u64) -> SubmodularFamily {
    let mut rng = Generator::from_seed([seed, 0, 0, 0]);
    let data = (0..rows * n).map(|_| 0.5 * rng.open01()).collect();
    SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, data, n).unwrap()
}
