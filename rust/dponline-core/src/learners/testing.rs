//! Routines shared by the learners' unit tests (compiled for tests only): building a learner on the padded tree,
//! the property "a native run plays what `ask`/`tell` plays", and "every dispatch level computes the same bits".
//! Each learner's test module calls them with its own constructor, family and feedback.

use crate::aggregation::{MechanismSpec, SamplerKind};
use crate::domains::Domain;
use crate::error::Result;
use crate::noise::NoiseDistribution;
use crate::rng::Seed;
use crate::simd::Level;

use super::Learner;

/// A core constructor of a learner on a prefix-sum mechanism (DP-FTRL, NoisyOCO, PrivateBandit,
/// PrivateDRSubmodular): `(domain, params, mechanism, noise, sampler, seed, secure, strict)`.
pub(crate) type OnMechanism<P, L> =
    fn(Domain, P, MechanismSpec, NoiseDistribution, SamplerKind, Seed, bool, bool) -> Result<L>;

/// The seeded (`secure = false`), non-strict learner `new` builds on the padded binary tree with `noise` drawn by
/// `sampler`.
///
/// Panics if the constructor refuses the arguments.
pub(crate) fn on_padded_tree<P, L>(
    new: OnMechanism<P, L>,
    domain: Domain,
    params: P,
    noise: NoiseDistribution,
    sampler: SamplerKind,
    seed: Seed,
) -> L {
    new(
        domain,
        params,
        MechanismSpec::Tree { padded: true },
        noise,
        sampler,
        seed,
        false,
        false,
    )
    .unwrap()
}

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
