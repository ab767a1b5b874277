//! Fuzzing every state decoder (issue 23): each stateful type's `from_bytes` over mutated bytes of a real
//! state (bit flips, truncations, extensions, overwritten bytes, and arbitrary payloads in a valid container)
//! must return an error — never a panic, never a changed object. Brief by design (a few hundred mutations per
//! type); `tests/fuzz/mutated_pickles.py` runs >= 10⁵ per learner through the Python bindings.

// A test crate: its helpers (outside `#[test]` functions) may unwrap like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use dponline_core::CoreError;
use dponline_core::aggregation::{
    Mechanism, MechanismSpec, PrefixSumMechanism, SamplerKind, TreeAggregator,
};
use dponline_core::domains::{Domain, L2Ball, Simplex, UniformMatroid};
use dponline_core::learners::dp_ftrl::{DpFtrlParams, LossNorm, Regularizer};
use dponline_core::learners::private_bandit::Feasibility;
use dponline_core::learners::private_dr_submodular::{Argmin, Center};
use dponline_core::learners::{
    DpFtrl, DrSubmodularParams, Exp3Params, Exp3Tuning, Exploration, Feedback, HedgeCalibration,
    Learner, MechanismSetup, NoisyOco, NoisyOcoParams, PrivateBandit, PrivateBanditParams,
    PrivateDrSubmodular, PrivateExp3, PrivateScrible, PrivateSubmodular, SubmodularParams,
};
use dponline_core::local_dp::{
    AlgorithmSpec, LocalLearner, LocalRandomizer, Mechanism as LocalMechanism, Prior,
};
use dponline_core::noise::NoiseDistribution;
use dponline_core::noise::release::scalar_laplace;
use dponline_core::rng::{Generator, Seed};
use dponline_core::state::{mutations, seal};
use dponline_core::submodular::SubmodularKind;
use proptest::prelude::*;

/// Every mutation of `bytes` is refused with `CoreError::State`; the bytes themselves restore to the same
/// bytes; and arbitrary payloads in a valid container give a value or an error, never a panic.
fn fuzz<T>(
    bytes: &[u8],
    decode: impl Fn(&[u8]) -> dponline_core::Result<T>,
    encode: impl Fn(&T) -> Vec<u8>,
) {
    assert_eq!(encode(&decode(bytes).unwrap()), bytes);
    for (i, m) in mutations(bytes, 400, bytes.len() as u64).iter().enumerate() {
        assert!(
            matches!(decode(m), Err(CoreError::State(_))),
            "mutation {i} was accepted"
        );
    }
    let payload = &bytes[16..bytes.len() - 4];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    // Payload-level damage behind a valid checksum (what a crafted state looks like): never a panic.
    runner
        .run(
            &(0..payload.len(), any::<u8>(), 0..payload.len() + 1),
            |(at, byte, cut)| {
                let mut p = payload.to_vec();
                p[at] ^= byte;
                let _ = decode(&seal(&p));
                let _ = decode(&seal(&payload[..cut]));
                Ok(())
            },
        )
        .unwrap();
}

/// [`fuzz`] on the state of `learner`.
fn fuzz_learner<L: Learner>(learner: &L) {
    fuzz(&learner.to_bytes().unwrap(), L::from_bytes, |l| {
        l.to_bytes().unwrap()
    });
}

/// The seeded, non-strict setup on the padded tree with exact noise (every learner fuzzed here on a mechanism).
fn exact_tree(noise: NoiseDistribution, seed: Seed) -> MechanismSetup {
    MechanismSetup::padded_tree(noise, SamplerKind::Exact, seed)
}

/// [`fuzz_learner`] on `learner` after `rounds` rounds of `round` (one `ask` and its `tell`).
fn fuzz_after<L: Learner>(mut learner: L, rounds: usize, mut round: impl FnMut(&mut L)) {
    for _ in 0..rounds {
        round(&mut learner);
    }
    fuzz_learner(&learner);
}

fn simplex(n: usize) -> Domain {
    Domain::Simplex(Simplex::new(n).unwrap())
}

#[test]
fn mechanisms() {
    let noise = NoiseDistribution::laplace(1.0).unwrap();
    for name in ["tree", "honaker", "blt"] {
        let spec = MechanismSpec::from_name(name).unwrap();
        let mut m = spec
            .build(
                3,
                20,
                noise,
                SamplerKind::Exact,
                Generator::from_seed([1, 2, 3, 4]),
            )
            .unwrap();
        let mut out = [0.0; 3];
        for _ in 0..5 {
            m.push(&[0.5, -0.25, 1.0], &mut out).unwrap();
        }
        fuzz(&m.to_bytes().unwrap(), Mechanism::from_bytes, |m| {
            m.to_bytes().unwrap()
        });
    }
    let mut t = TreeAggregator::new(2, 9, noise, true, Generator::from_seed([1, 1, 1, 1])).unwrap();
    t.push(&[1.0, 2.0], &mut [0.0; 2]).unwrap();
    fuzz(&t.to_bytes().unwrap(), TreeAggregator::from_bytes, |m| {
        m.to_bytes().unwrap()
    });
}

#[test]
fn private_bandit() {
    let domain = simplex(4);
    let params = PrivateBanditParams::new(&domain, 50, 1.0, None, None, Feasibility::Fkm).unwrap();
    let l = PrivateBandit::new(
        domain,
        params,
        exact_tree(NoiseDistribution::gaussian(3.0).unwrap(), [5, 0, 0, 0]),
    )
    .unwrap();
    fuzz_after(l, 9, |l| {
        l.ask().unwrap();
        l.tell(0.5).unwrap();
    });
}

#[test]
fn dp_ftrl() {
    let domain = simplex(3);
    let params = DpFtrlParams::new(
        &domain,
        30,
        1.0,
        LossNorm::L2,
        Regularizer::Euclidean,
        None,
        None,
        1,
    )
    .unwrap();
    let l = DpFtrl::new(
        domain,
        params,
        exact_tree(NoiseDistribution::laplace(2.0).unwrap(), [6, 0, 0, 0]),
    )
    .unwrap();
    fuzz_after(l, 7, |l| {
        l.ask().unwrap();
        l.tell(&[0.1, 0.2, 0.3]).unwrap();
    });
}

#[test]
fn noisy_oco() {
    let domain = Domain::UniformMatroid(UniformMatroid::new(4, 2, true).unwrap());
    let params = NoisyOcoParams::new(&domain, 30, 1.0, None, 2).unwrap();
    let l = NoisyOco::new(
        domain,
        params,
        exact_tree(NoiseDistribution::gaussian(2.0).unwrap(), [12, 0, 0, 0]),
    )
    .unwrap();
    fuzz_after(l, 7, |l| {
        l.ask().unwrap();
        l.tell(&[0.1, -0.2, 0.3, 0.0]).unwrap();
    });
}

#[test]
fn private_exp3() {
    // The exact feedback noise (the default): its grid and integer block are part of the state.
    let (scale, exact) = scalar_laplace(1.0, Some(0.5), SamplerKind::Exact).unwrap();
    let params = Exp3Params::new(4, 40, 1.0, scale, Exp3Tuning::Variance).unwrap();
    let l = PrivateExp3::new(params, exact, [7, 0, 0, 0], false, false).unwrap();
    fuzz_after(l, 5, |l| {
        l.ask().unwrap();
        l.tell(0.5).unwrap();
    });
}

#[test]
fn private_scrible() {
    let domain = Domain::L2Ball(L2Ball::new(3, 1.0).unwrap());
    let (scale, exact) = scalar_laplace(2.0, Some(1.0), SamplerKind::Exact).unwrap();
    let l = PrivateScrible::new(domain, 40, 1.0, scale, exact, [8, 0, 0, 0], false, false).unwrap();
    fuzz_after(l, 5, |l| {
        l.ask().unwrap();
        l.tell(0.5).unwrap();
    });
}

#[test]
fn private_submodular() {
    for sampler in [SamplerKind::FloatingPoint, SamplerKind::Exact] {
        let params = SubmodularParams::new(
            6,
            2,
            30,
            Some(1.0),
            1e-6,
            Feedback::Full,
            Exploration::Online,
            None,
            sampler,
            HedgeCalibration::Zcdp,
        )
        .unwrap();
        let l = PrivateSubmodular::new(params, [9, 0, 0, 0], false, false).unwrap();
        fuzz_after(l, 3, |l| {
            l.ask().unwrap();
            l.tell_row(SubmodularKind::ProbabilisticCoverage, &[0.3; 6])
                .unwrap();
        });
    }
}

#[test]
fn private_dr_submodular() {
    let domain = Domain::UniformMatroid(UniformMatroid::new(5, 2, false).unwrap());
    let noise = NoiseDistribution::laplace(1.0).unwrap();
    let params = DrSubmodularParams::new(
        &domain,
        16,
        Some(2),
        1.0,
        LossNorm::L2,
        noise,
        None,
        Center::Uniform,
        Argmin::FrankWolfe,
        1,
    )
    .unwrap();
    let l = PrivateDrSubmodular::new(domain, params, exact_tree(noise, [10, 0, 0, 0])).unwrap();
    fuzz_learner(&l);
}

#[test]
fn local_randomizer() {
    let r = LocalRandomizer::new(
        3,
        1.0,
        LocalMechanism::Coordinate,
        SamplerKind::Exact,
        [11, 0, 0, 0],
        false,
        false,
    )
    .unwrap();
    fuzz(&r.to_bytes().unwrap(), LocalRandomizer::from_bytes, |r| {
        r.to_bytes().unwrap()
    });
}

#[test]
fn local_learner() {
    // The strict flag lives inside the checksummed container: flipping it is a detected mutation.
    for (spec, strict) in [
        (
            AlgorithmSpec::Coordinatewise(Prior::Conjugate { b: 1.0 }),
            true,
        ),
        (AlgorithmSpec::AdaGrad { radius: 2.0 }, false),
    ] {
        fuzz_learner(&LocalLearner::new(3, 1.0, spec, [13, 0, 0, 0], false, strict).unwrap());
    }
}

#[test]
fn domains() {
    for d in [
        simplex(4),
        Domain::UniformMatroid(UniformMatroid::new(5, 2, true).unwrap()),
    ] {
        fuzz(
            &dponline_core::state::to_state_bytes(&d).unwrap(),
            dponline_core::state::from_state_bytes::<Domain>,
            |d| dponline_core::state::to_state_bytes(d).unwrap(),
        );
    }
}
