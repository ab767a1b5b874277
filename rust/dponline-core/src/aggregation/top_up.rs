//! A mechanism whose releases are topped up to identically distributed Gaussian noise.
//!
//! [`TopUp`] wraps a linear mechanism with Gaussian draws on the floating-point path (the Honaker tree, BLT) and
//! adds to the release after push `t` fresh independent `N(0, σ²(v_max − v_t))` noise per coordinate, where `v_t`
//! is the inner mechanism's [`PrefixSumMechanism::unit_variance`] of that release and `v_max` its
//! [`PrefixSumMechanism::max_unit_variance`].
//!
//! **Lemma (identical marginals).** Every release's noise is `N(0, σ² v_max I)`. *Proof.* The inner release's
//! noise is a fixed linear combination `Σ_i B_{t,i} z_i` of i.i.d. `N(0, σ² I)` draws, so it is
//! `N(0, σ² v_t I)` with `v_t = Σ_i B_{t,i}²`; the top-up is independent of it and `N(0, σ²(v_max − v_t) I)`, and
//! variances of independent Gaussians add. Correlations between releases are those of the inner mechanism (the
//! top-ups are independent across releases). *Privacy* is the inner mechanism's: the top-up does not depend on
//! the data, so the topped-up releases are post-processing of the inner ones. This is what Agarwal & Singh's
//! regret analysis of DP-FTRL needs ("identically (though not necessarily independently) distributed" noise in
//! every release), and what their padded tree provides by adding whole draws.
//!
//! Not defined for Laplace noise or the exact discrete path (a combination of Laplace or discrete Gaussian draws
//! with other weights is not one law, and adding noise cannot make it one), nor for the padded tree (already
//! identically distributed).

use serde::{Deserialize, Serialize};

use super::{Mechanism, PrefixSumMechanism, SamplerKind};
use crate::error::{CoreError, Result};
use crate::noise::NoiseDistribution;
use crate::noise::grid::Grid;
use crate::rng::Generator;

/// A Gaussian floating-point mechanism topped up to identically distributed releases (module docs). A decoded
/// state is checked like a constructed one.
#[derive(Debug, Serialize, Deserialize)]
#[serde(try_from = "TopUpState")]
pub struct TopUp {
    inner: Mechanism,
    /// `v_max`, the unit variance every release is raised to.
    target: f64,
    /// `L̃_0` with its top-up.
    initial: Vec<f64>,
    /// The top-up's own generator, independent of the inner mechanism's.
    rng: Generator,
}

impl TopUp {
    /// Top up `inner` (before its first push) with noise from `rng`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] (named `top_up`) for Laplace noise, the exact sampler, the padded
    /// tree or a mechanism that was pushed already; those of [`PrefixSumMechanism::max_unit_variance`].
    pub fn new(inner: Mechanism, mut rng: Generator) -> Result<Self> {
        let gaussian = matches!(inner.noise(), NoiseDistribution::Gaussian { .. });
        let padded = matches!(&inner, Mechanism::Tree(t) if t.padded());
        let nested = matches!(&inner, Mechanism::TopUp(_));
        if !gaussian
            || inner.sampler() != SamplerKind::FloatingPoint
            || padded
            || nested
            || inner.t() != 0
        {
            return Err(CoreError::InvalidArgument {
                name: "top_up",
                allowed: "Gaussian noise (delta > 0) drawn by the floating-point sampler, mechanism 'honaker' or \
                          'blt', before the first push",
                value: format!(
                    "{} noise, sampler {:?}, mechanism {:?}, t = {}",
                    inner.noise().name(),
                    inner.sampler(),
                    inner.kind(),
                    inner.t()
                ),
            });
        }
        let target = inner.max_unit_variance()?;
        let mut initial = inner.initial().to_vec();
        add(&inner, target, &mut rng, 0, &mut initial)?;
        Ok(TopUp {
            inner,
            target,
            initial,
            rng,
        })
    }

    /// The mechanism topped up.
    pub fn inner(&self) -> &Mechanism {
        &self.inner
    }

    /// Whether a decoded state is one [`TopUp::new`] could produce: the conditions above, the target the inner
    /// mechanism implies, and the initial release's length.
    fn is_consistent(&self) -> bool {
        let gaussian = matches!(self.inner.noise(), NoiseDistribution::Gaussian { .. });
        let padded = matches!(&self.inner, Mechanism::Tree(t) if t.padded());
        gaussian
            && !padded
            && !matches!(&self.inner, Mechanism::TopUp(_))
            && self.inner.sampler() == SamplerKind::FloatingPoint
            && self.inner.max_unit_variance().ok() == Some(self.target)
            && self.initial.len() == self.inner.dim()
            && self.initial.iter().all(|v| v.is_finite())
    }
}

/// The serialized fields of [`TopUp`], validated on decoding.
#[derive(Deserialize)]
struct TopUpState {
    inner: Mechanism,
    target: f64,
    initial: Vec<f64>,
    rng: Generator,
}

impl TryFrom<TopUpState> for TopUp {
    type Error = CoreError;

    fn try_from(s: TopUpState) -> Result<Self> {
        let top = TopUp {
            inner: s.inner,
            target: s.target,
            initial: s.initial,
            rng: s.rng,
        };
        if top.is_consistent() {
            Ok(top)
        } else {
            Err(CoreError::State(
                "TopUp state is inconsistent with its mechanism".into(),
            ))
        }
    }
}

/// Add `N(0, σ²(target − v_t))` to every coordinate of `release`, the release after push `t`.
fn add(
    inner: &Mechanism,
    target: f64,
    rng: &mut Generator,
    t: u64,
    release: &mut [f64],
) -> Result<()> {
    let deficit = (target - inner.unit_variance(t)?).max(0.0);
    if deficit > 0.0 {
        let sigma = inner.noise().scale() * deficit.sqrt();
        NoiseDistribution::Gaussian { sigma }.add_to(rng, release);
    }
    Ok(())
}

impl PrefixSumMechanism for TopUp {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn horizon(&self) -> u64 {
        self.inner.horizon()
    }
    fn t(&self) -> u64 {
        self.inner.t()
    }
    fn noise(&self) -> NoiseDistribution {
        self.inner.noise()
    }
    fn is_secure(&self) -> bool {
        self.inner.is_secure()
    }
    fn sampler(&self) -> SamplerKind {
        self.inner.sampler()
    }
    fn grid(&self) -> Option<Grid> {
        self.inner.grid()
    }
    fn initial(&self) -> &[f64] {
        &self.initial
    }
    fn push(&mut self, x: &[f64], out: &mut [f64]) -> Result<()> {
        self.inner.push(x, out)?;
        // Cannot fail: t <= horizon after a successful push.
        add(&self.inner, self.target, &mut self.rng, self.inner.t(), out)
    }
    fn push_many(&mut self, xs: &[f64], out: &mut [f64]) -> Result<()> {
        let start = self.inner.t();
        self.inner.push_many(xs, out)?;
        for (i, release) in out.chunks_exact_mut(self.inner.dim().max(1)).enumerate() {
            add(
                &self.inner,
                self.target,
                &mut self.rng,
                start + 1 + i as u64,
                release,
            )?;
        }
        Ok(())
    }
    /// `v_max` for every release (the Lemma in the module docs).
    fn unit_variance(&self, t: u64) -> Result<f64> {
        if t > self.horizon() {
            return Err(CoreError::invalid("t", "between 0 and horizon", t));
        }
        Ok(self.target)
    }
    fn max_unit_variance(&self) -> Result<f64> {
        Ok(self.target)
    }
    fn sensitivity_l1(&self) -> f64 {
        self.inner.sensitivity_l1()
    }
    fn sensitivity_l2(&self) -> f64 {
        self.inner.sensitivity_l2()
    }
    fn rounding_slack(&self) -> (f64, f64) {
        self.inner.rounding_slack()
    }
    fn state_nbytes(&self) -> usize {
        self.inner.state_nbytes() + self.initial.len() * core::mem::size_of::<f64>()
    }
}
