//! NoisyOCO: online convex optimisation with noisy gradients and a noisy mirror map.
//!
//! Source: Ene, Nguyen & Vladu (AAAI 2021), Algorithm 2 and Lemma 4.1. With a strongly convex mirror map
//! `ω` and step `η`, each round plays `x̃_t = NoisyMap(−η s_{t−1})`, obtains `g̃_t = NoisyGrad(f_t, x̃_t)` and
//! sets `s_t = s_{t−1} + g̃_t`. If `E g̃ = ∇f_t(x̃_t)`, `E‖g̃‖² ≤ κ²` and `E‖∇ω*(g) − NoisyMap(g)‖ ≤ γ`, the
//! expected regret is `O(T^{1/2} κ D_ω + T κ γ)`.
//!
//! Two things live here:
//!
//! * [`NoisyOcoTemplate`], the template as a state machine over *learner steps*: a NoisyOCO round may span
//!   several steps (PrivateBandit's batches), so a [`NoisyGradient`] says when its estimate is complete and a
//!   [`NoisyMap`] spends one unit of work per step (PrivateBandit: one Frank-Wolfe iteration, i.e. one LMO
//!   call, charged to that step as in the paper);
//! * [`NoisyOco`], Algorithm 2 itself as a full-information private learner on any domain: `NoisyGrad` is the
//!   told gradient (clipped to the declared Lipschitz bound), `NoisyMap` is Frank-Wolfe on the private prefix
//!   sums released by a [`crate::aggregation`] mechanism.

use serde::{Deserialize, Serialize};

use crate::aggregation::{Mechanism, PrefixSumMechanism};
use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite, check_positive};
use crate::frank_wolfe::FrankWolfe;
use crate::learners::{Learner, LossNorm, MechanismSetup};
use crate::losses::LossFamily;
use crate::noise::NoiseDistribution;

/// `NoisyGrad`: builds an unbiased gradient estimate at the current iterate from per-step feedback.
pub trait NoisyGradient {
    /// Write the point to play this step, given the round's iterate `x̃`.
    fn query(&mut self, domain: &mut Domain, iterate: &[f64]) -> &[f64];
    /// The point returned by the last [`NoisyGradient::query`].
    fn last_query(&self) -> &[f64];
    /// Absorb the (validated, finite) feedback of the last query; `true` when the round's estimate is ready.
    fn observe(&mut self, loss: f64) -> bool;
    /// The completed estimate `g̃` of this round.
    fn estimate(&self) -> &[f64];
    /// Start a new round.
    fn reset(&mut self);
}

/// `NoisyMap`: approximates `∇ω*(−η s)` for the running sum `s` of estimates, one unit of work at a time.
pub trait NoisyMap {
    /// Add a completed round estimate to the running sum (possibly through a privacy mechanism).
    ///
    /// Errors: whatever the mechanism refuses (e.g. a non-finite estimate, which bounded feedback rules out).
    fn absorb(&mut self, estimate: &[f64]) -> Result<()>;
    /// Spend one step's work (e.g. one LMO call) on the next iterate.
    fn work(&mut self, domain: &mut Domain);
    /// The next round's iterate, as computed so far.
    fn iterate(&self) -> &[f64];
}

/// Algorithm 2 as a state machine: `ask` a point, `tell` its loss.
#[derive(Debug, Serialize, Deserialize)]
pub struct NoisyOcoTemplate<G, M> {
    domain: Domain,
    gradient: G,
    map: M,
    /// `x̃` of the current round.
    iterate: Vec<f64>,
    pending: bool,
}

impl<G: NoisyGradient, M: NoisyMap> NoisyOcoTemplate<G, M> {
    /// A template over `domain` starting from `iterate` (the first round's `x̃`).
    pub fn new(domain: Domain, gradient: G, map: M, iterate: Vec<f64>) -> Self {
        NoisyOcoTemplate {
            domain,
            gradient,
            map,
            iterate,
            pending: false,
        }
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The gradient estimator.
    pub fn gradient(&self) -> &G {
        &self.gradient
    }

    /// The noisy map.
    pub fn map(&self) -> &M {
        &self.map
    }

    /// `x̃` of the current round.
    pub fn iterate(&self) -> &[f64] {
        &self.iterate
    }

    /// Whether a point has been asked and awaits its loss.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The point to play (the same point until [`NoisyOcoTemplate::tell`]).
    #[inline]
    pub fn ask(&mut self) -> &[f64] {
        if !self.pending {
            self.pending = true;
            self.gradient.query(&mut self.domain, &self.iterate)
        } else {
            self.gradient.last_query()
        }
    }

    /// Feed the loss of the asked point: one step of estimation and one unit of map work; at the end of a
    /// round, `x̃` advances to the map's iterate and the estimate joins the running sum.
    /// The caller guarantees a pending point and a finite loss.
    ///
    /// Errors: as [`NoisyMap::absorb`] at the end of a round.
    #[inline]
    pub fn tell(&mut self, loss: f64) -> Result<()> {
        debug_assert!(self.pending);
        let complete = self.gradient.observe(loss);
        self.map.work(&mut self.domain);
        self.pending = false;
        if complete {
            self.end_round()?;
        }
        Ok(())
    }

    /// Close the current round early (e.g. a last, shorter batch).
    ///
    /// Errors: as [`NoisyMap::absorb`].
    pub fn end_round(&mut self) -> Result<()> {
        self.iterate.copy_from_slice(self.map.iterate());
        self.map.absorb(self.gradient.estimate())?;
        self.gradient.reset();
        Ok(())
    }
}

/// The declared constants of the full-information [`NoisyOco`] and the step size derived from them.
///
/// Mirror map: ENV's `ω(x) = ½‖x‖²` (their §2) on the domain translated so that its interior point `c` is the
/// origin, i.e. `ω(x) = ½‖x − c‖²`, `∇ω*(y) = Π_D(c + y)`. The algorithm is translation-equivariant, and the
/// translation makes Lemma 4.1's `ω*(0) + ω(x*) = ½‖x* − c‖² ≤ D²/2 =: D_ω²` for every comparator `x* ∈ D`
/// (`ω*(0) = −min ω = 0` because `c ∈ D`), which is the bound `D_ω ≤ D` of the proof of Lemma 3.1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoisyOcoParams {
    /// Horizon `T`.
    pub horizon: u64,
    /// Dimension `n`.
    pub dim: usize,
    /// Declared Lipschitz constant `L`: every gradient is clipped to `‖g‖₂ ≤ L` (Lemma 4.1's `κ`, exactly:
    /// full information makes `NoisyGrad` deterministic).
    pub lipschitz: f64,
    /// Diameter `D` of the domain (exact or a documented upper bound).
    pub diameter: f64,
    /// `D_ω² = D²/2` (see the type docs).
    pub mirror_range: f64,
    /// Frank-Wolfe LMO calls per round (`k`, the budget of `NoisyMap`).
    pub lmo_calls: u32,
    /// Step size `η`.
    pub eta: f64,
    /// Whether `η` is the default rule (noise-aware once [`NoisyOcoParams::tune_for_noise`] has run).
    pub eta_default: bool,
    /// `μ̄`: the bound on `E‖s̃_t − s_t‖₂` (mean over the releases `t = 0..T−1`) the step size is tuned to; 0
    /// until [`NoisyOcoParams::tune_for_noise`].
    pub noise_norm: f64,
}

impl NoisyOcoParams {
    /// The constants for `domain`: Algorithm 2 line 1 with `κ = L`, `D_ω² = D²/2`, before the noise is known:
    /// `η = D/(L√T)`, the minimiser of `D_ω²/η + η T κ²/2` (the first two terms of the proof of Lemma 4.1; the
    /// printed line 1, `D_ω^{1/2}/(κ T^{1/2})`, drops a square and the proof's factor).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `T < 1`, a non-positive or non-finite `L` or learning rate,
    /// `lmo_calls == 0`, or constants whose products overflow.
    pub fn new(
        domain: &Domain,
        horizon: u64,
        lipschitz: f64,
        learning_rate: Option<f64>,
        lmo_calls: u32,
    ) -> Result<Self> {
        crate::error::check_horizon(horizon)?;
        check_positive("lipschitz", lipschitz)?;
        super::check_clip_bound("lipschitz", lipschitz, domain.dim())?;
        if lmo_calls == 0 {
            return Err(CoreError::invalid("lmo_calls", ">= 1", lmo_calls));
        }
        let diameter = domain.diameter();
        let mut params = NoisyOcoParams {
            horizon,
            dim: domain.dim(),
            lipschitz,
            diameter,
            mirror_range: 0.5 * diameter * diameter,
            lmo_calls,
            eta: 0.0,
            eta_default: learning_rate.is_none(),
            noise_norm: 0.0,
        };
        match learning_rate {
            Some(eta) => {
                check_positive("learning_rate", eta)?;
                params.eta = eta;
            }
            None => params.eta = params.optimal_eta(0.0),
        }
        let derived = [
            ("mirror range", params.mirror_range),
            ("eta", params.eta),
            (
                "eta * lipschitz * horizon",
                params.eta * lipschitz * horizon as f64 * 1e6,
            ),
            ("the trivial bound T L D", params.trivial_bound()),
        ];
        match derived.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            None if params.eta > 0.0 => Ok(params),
            None => Err(CoreError::invalid("learning_rate", "> 0", params.eta)),
            Some((what, v)) => Err(CoreError::InvalidArgument {
                name: "lipschitz/learning_rate/horizon",
                allowed: "values whose derived constants are finite",
                value: format!("{what} = {v}"),
            }),
        }
    }

    /// `argmin_η D_ω²/η + η(T L²/2 + L T μ̄) = sqrt(D_ω² / (T L²/2 + L T μ̄))`, computed as
    /// `sqrt(D_ω² / (T/2 + T μ̄/L)) / L` (`L²` alone overflows for `L > 1.3e154`). A single point (`D = 0`)
    /// gets the step of `D_ω² = f64::MIN_POSITIVE` (any `η` plays the point).
    fn optimal_eta(&self, noise_norm: f64) -> f64 {
        let (tf, l) = (self.horizon as f64, self.lipschitz);
        (self.mirror_range.max(f64::MIN_POSITIVE) / (0.5 * tf + tf * (noise_norm / l))).sqrt() / l
    }

    /// Make the default step size noise-aware: `η = sqrt(D_ω² / (T L²/2 + L T μ̄))`, the minimiser of
    /// [`NoisyOcoParams::regret_bound`] when every release's noise norm is bounded by `μ̄` in mean (the step
    /// sizes of the proof of Lemma 3.1 put the noise into `γ` the same way). With no noise this is line 1's
    /// `D/(L√T)`; under heavy noise `η` shrinks and the learner stays near `c`. An explicit learning rate is kept.
    pub fn tune_for_noise(&mut self, noise_norm: f64) {
        self.noise_norm = noise_norm;
        if self.eta_default {
            let eta = self.optimal_eta(noise_norm);
            if eta.is_finite() && eta > 0.0 {
                self.eta = eta;
            }
        }
    }

    /// `2D/√(k+2)`: the distance of `k` Frank-Wolfe steps (exact line search, any feasible start) from
    /// `∇ω*` — `q(x_k) − q* ≤ 2D²/(k+2)` (Jaggi 2013, Theorem 1, curvature `C_q ≤ D²`) and 1-strong convexity.
    /// At most ENV Lemma C.4's `√20·D/√k`.
    pub fn frank_wolfe_error(&self) -> f64 {
        2.0 * self.diameter / (f64::from(self.lmo_calls) + 2.0).sqrt()
    }

    /// `T·L·D`: every round's linearised regret `⟨g_t, x̃_t − x*⟩` is at most `L·D`.
    pub fn trivial_bound(&self) -> f64 {
        self.horizon as f64 * self.lipschitz * self.diameter
    }

    /// L1 change of one tree input when one round's loss is replaced: `2√n·L` (both gradients lie in the L2
    /// ball of radius `L`, and `‖v‖₁ ≤ √n‖v‖₂`). The Laplace calibration's sensitivity. Its two roundings
    /// (`√n`, the product with `L`) lose at most `2u` relatively, inside the `4u` that Lemma *rounded clip*
    /// ([`super::clip_to_bound`]) leaves below `L` for the pushed gradients.
    pub fn sensitivity_l1(&self) -> f64 {
        2.0 * (self.dim as f64).sqrt() * self.lipschitz
    }

    /// L2 change of one tree input when one round's loss is replaced: `2L`. The Gaussian calibration's.
    pub fn sensitivity_l2(&self) -> f64 {
        2.0 * self.lipschitz
    }

    /// The terms of the regret bound of Lemma 4.1's proof for Algorithm 2 with full information, given
    /// `noise_sum ≥ Σ_{t=0}^{T−1} E‖s̃_t − s_t‖₂` (the released prefix sums' error, [`NoisyOco::noise_norm_sum`]).
    ///
    /// Proof (ENV Appendix B, line by line, with `κ = L`, `D_ω² = D²/2`). (B.1) holds pathwise for the clipped
    /// gradients `g_t` and every comparator `x*`: `Σ_t ⟨g_t, ∇ω*(−η s_{t−1}) − x*⟩ ≤ D_ω²/η + (η/2) Σ_t ‖g_t‖²`.
    /// Convexity gives `f_t(x̃_t) − f_t(x*) ≤ ⟨g_t, x̃_t − x*⟩` (for `‖∇f_t‖₂ ≤ L`, no clipping), and
    /// `⟨g_t, x̃_t − ∇ω*(−η s_{t−1})⟩ ≤ L·(‖x̃_t − ∇ω*(−η s̃_{t−1})‖ + η‖s̃_{t−1} − s_{t−1}‖)` (`∇ω*` is
    /// 1-Lipschitz: Lemma C.3's step), whose first part is at most [`NoisyOcoParams::frank_wolfe_error`]
    /// (Lemma C.4). So, in expectation over the noise and for any (even adaptive) sequence of `L`-Lipschitz convex
    /// losses, the regret is at most `mirror + stability + noise + frank_wolfe` below (and, whatever the bound,
    /// at most [`NoisyOcoParams::trivial_bound`]).
    pub fn regret_bound(&self, noise_sum: f64) -> RegretBound {
        let (tf, l, eta) = (self.horizon as f64, self.lipschitz, self.eta);
        RegretBound {
            mirror: self.mirror_range / eta,
            stability: 0.5 * (eta * l) * tf * l,
            noise: (eta * l) * noise_sum,
            frank_wolfe: tf * l * self.frank_wolfe_error(),
            trivial: self.trivial_bound(),
        }
    }
}

/// The terms of [`NoisyOcoParams::regret_bound`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegretBound {
    /// `D_ω²/η`.
    pub mirror: f64,
    /// `η T L²/2`.
    pub stability: f64,
    /// `η L Σ_t E‖s̃_t − s_t‖₂` (the privacy noise, and the grid rounding on the exact path).
    pub noise: f64,
    /// `T L · 2D/√(k+2)`.
    pub frank_wolfe: f64,
    /// `T L D`.
    pub trivial: f64,
}

impl RegretBound {
    /// `mirror + stability + noise + frank_wolfe`: the bound (it informs only below [`RegretBound::trivial`]).
    pub fn total(&self) -> f64 {
        self.mirror + self.stability + self.noise + self.frank_wolfe
    }
}

/// Largest horizon for which [`NoisyOco::noise_norm_sum`] sums the releases one by one (mechanisms other than
/// the padded tree, whose releases do not all carry the same noise).
pub const MAX_SUMMED_RELEASES: u64 = 1 << 24;

/// The `μ̄` the default step size is tuned to: `sqrt(n·v) + √n·γ·(T−1)/4`, with `v` the per-coordinate variance
/// of every release for the padded tree (all equal) and of the last release otherwise (the convention of
/// DP-FTRL's step size), and `γ` the exact path's grid (0 on the floating-point path): the mean over
/// `t = 0..T−1` of the rounding error `√n·t·γ/2` of `s̃_t`.
///
/// Errors: as [`PrefixSumMechanism::variance`].
fn tuning_noise_norm(tree: &Mechanism, horizon: u64) -> Result<f64> {
    let n = tree.dim() as f64;
    let at = if padded(tree) { 0 } else { horizon };
    let gamma = tree.grid().map_or(0.0, |g| g.gamma());
    Ok((n * tree.variance(at)?).sqrt() + n.sqrt() * gamma * (horizon - 1) as f64 / 4.0)
}

/// Whether `tree` is the padded binary tree (every release sums the same number of draws).
fn padded(tree: &Mechanism) -> bool {
    matches!(tree, Mechanism::Tree(t) if t.padded())
}

/// ENV Algorithm 2 (NoisyOCO) as a full-information private learner on any domain.
///
/// Per round `t` (the lines of Algorithm 2):
/// * line 1 (construction): `η` from [`NoisyOcoParams`], `s_0 = 0`; the mechanism's first release is
///   `s̃_0` (noise only);
/// * line 3: `x̃_t = NoisyMap(−η s_{t−1})`: `k` Frank-Wolfe steps (exact line search, one LMO call each,
///   warm-started from `x̃_{t−1}`, the first round from `c`) on `½‖x‖² − ⟨c − η s̃_{t−1}, x⟩`, whose minimiser
///   is `∇ω*(−η s̃_{t−1}) = Π_D(c − η s̃_{t−1})`; `s̃_{t−1}` is the mechanism's private release of `s_{t−1}`;
/// * line 4: output `x̃_t` ([`NoisyOco::ask`]) and query `g̃_t = NoisyGrad(f_t, x̃_t) = ∇f_t(x̃_t)`, the
///   gradient told ([`NoisyOco::tell`]), clipped to `‖g‖₂ ≤ L`;
/// * line 5: `s_t = s_{t−1} + g̃_t` (printed `s_t = s_t + g̃_t`), released as `s̃_t` by pushing `g̃_t` into the
///   mechanism (ENV's TreeBasedAgg, line 13 of Algorithm 1, by default).
///
/// Privacy: neighbouring streams differ in one round's loss function; only that round's tree input changes
/// (by `2L` in L2, `2√n L` in L1) given the released history — later gradients are functions of earlier
/// releases — so the actions are post-processing of the mechanism's releases, private under adaptively chosen
/// inputs (ENV Theorem 2.3; the calibration lives in the Python wrapper).
#[derive(Debug, Serialize, Deserialize)]
pub struct NoisyOco {
    params: NoisyOcoParams,
    domain: Domain,
    tree: Mechanism,
    /// `NoisyMap`: Frank-Wolfe whose target is `c − η s̃_t` and whose iterate is `x̃_{t+1}`.
    map: FrankWolfe,
    /// `c`, the domain's interior point (the mirror map's centre).
    center: Vec<f64>,
    /// `s̃_t` after the last push (`s̃_0` at the start).
    release: Vec<f64>,
    /// Scratch: the clipped gradient of the current round.
    gradient: Vec<f64>,
    t: u64,
    pending: bool,
    strict: bool,
    clipped: u64,
}

impl NoisyOco {
    /// A learner over `domain` with constants `params`, the prefix sums of the gradients released by
    /// `mechanism` with per-draw `noise` (scale 0 = the non-private NoisyOCO on the same code path) drawn by
    /// `sampler` ([`crate::aggregation::SamplerKind`]: exact discrete noise on a grid, or floating point). The
    /// noise comes from stream 1 of `seed` (the OS with `secure`). With `strict`, a gradient with `‖g‖₂ > L` is
    /// an error instead of being clipped.
    ///
    /// Errors: [`CoreError::Shape`] if `params` were made for another dimension; [`CoreError::InvalidArgument`]
    /// for a noise scale so large that `η` times the released sums could overflow; those of the mechanism;
    /// entropy failures.
    pub fn new(domain: Domain, params: NoisyOcoParams, setup: MechanismSetup) -> Result<Self> {
        let n = domain.dim();
        super::check_params_dim(n, params.dim)?;
        super::check_noise_scale(setup.noise.scale(), params.eta)?;
        let tree = setup.build_mechanism(n, params.horizon, 1)?;
        // Line 1. The step size only shrinks when tuned, so the finiteness check above still holds.
        let mut params = params;
        params.tune_for_noise(tuning_noise_norm(&tree, params.horizon)?);
        let center = domain.interior_point().to_vec();
        let release = tree.initial().to_vec();
        let target: Vec<f64> = center
            .iter()
            .zip(&release)
            .map(|(c, s)| c - params.eta * s)
            .collect();
        let map = FrankWolfe::new(&center, &target, false)?;
        let mut learner = NoisyOco {
            gradient: crate::alloc::zeros("gradient", n)?,
            params,
            domain,
            tree,
            map,
            center,
            release,
            t: 0,
            pending: false,
            strict: setup.strict,
            clipped: 0,
        };
        learner.noisy_map();
        Ok(learner)
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The mechanism's noise distribution (per draw).
    pub fn noise(&self) -> NoiseDistribution {
        self.tree.noise()
    }

    /// The kind of mechanism releasing the prefix sums (see [`Mechanism::kind`]).
    pub fn mechanism_kind(&self) -> &'static str {
        self.tree.kind()
    }

    /// Per-coordinate variance of the noise of release `s̃_t` (`0 <= t <= T`), exact
    /// ([`PrefixSumMechanism::variance`]).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `t > T`.
    pub fn release_variance(&self, t: u64) -> Result<f64> {
        self.tree.variance(t)
    }

    /// The exact path's grid step `γ` (every release is a multiple of it), or `None` on the floating-point path.
    pub fn grid(&self) -> Option<f64> {
        self.tree.grid().map(|g| g.gamma())
    }

    /// The latest private prefix sum `s̃_t` of the gradients (`s̃_0` before any data).
    pub fn noisy_cumulative_gradient(&self) -> &[f64] {
        &self.release
    }

    /// The action `x̃_{t+1}` of the next round, without marking it as asked.
    pub fn action(&self) -> &[f64] {
        self.map.x()
    }

    /// `Σ_{t=0}^{T−1} bound on E‖s̃_t − s_t‖₂`: `sqrt(n·v_t)` for the noise (Jensen; `v_t` the exact
    /// per-coordinate variance of release `t`, an upper bound for the discrete samplers) plus `√n·t·γ/2` for
    /// the exact path's rounding of the `t` pushed gradients to the grid `γ` (round to nearest). Closed form
    /// for the padded tree; summed release by release for another mechanism.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `horizon` for a mechanism other than the padded tree with
    /// `T >` [`MAX_SUMMED_RELEASES`].
    pub fn noise_norm_sum(&self) -> Result<f64> {
        let (n, horizon) = (self.params.dim as f64, self.params.horizon);
        let tf = horizon as f64;
        let gamma = self.grid().unwrap_or(0.0);
        let rounding = n.sqrt() * gamma / 2.0 * (tf * (tf - 1.0) / 2.0);
        let noise = if padded(&self.tree) {
            tf * (n * self.tree.variance(0)?).sqrt()
        } else if horizon > MAX_SUMMED_RELEASES {
            return Err(CoreError::invalid(
                "horizon",
                "<= 2^24 for the regret bound of a mechanism other than the padded tree (summed release by \
                 release)",
                horizon,
            ));
        } else {
            let mut sum = 0.0;
            for t in 0..horizon {
                sum += (n * self.tree.variance(t)?).sqrt();
            }
            sum
        };
        Ok(noise + rounding)
    }

    /// The regret bound's terms at this learner's step size and noise ([`NoisyOcoParams::regret_bound`] with
    /// [`NoisyOco::noise_norm_sum`]).
    ///
    /// Errors: as [`NoisyOco::noise_norm_sum`].
    pub fn regret_bound(&self) -> Result<RegretBound> {
        Ok(self.params.regret_bound(self.noise_norm_sum()?))
    }

    /// Line 4: the action `x̃_t` to play this round. Asking again before `tell` returns the same point.
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[f64]> {
        self.check_rounds_fit(1, self.params.horizon)?;
        self.pending = true;
        Ok(self.map.x())
    }

    /// Line 4's query: report `∇f_t(x̃_t)` (any subgradient of a convex loss at the asked point; for a linear
    /// loss, its vector), shape `(n,)`.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a preceding `ask`; [`CoreError::Shape`];
    /// [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`] for `‖g‖₂ > L`.
    pub fn tell(&mut self, gradient: &[f64]) -> Result<()> {
        super::check_asked(self.pending, "gradient per asked point")?;
        crate::error::check_len("gradient", gradient, self.params.dim)?;
        check_finite("gradient", gradient)?;
        self.check_strict(gradient)?;
        self.gradient.copy_from_slice(gradient);
        self.absorb()?;
        self.pending = false;
        Ok(())
    }

    /// With `strict`, refuse a gradient with `‖g‖₂ > L` (this round's, named by number only).
    ///
    /// Errors: [`CoreError::InvalidArgument`] ([`CoreError::strict_bound`]).
    #[inline]
    fn check_strict(&self, gradient: &[f64]) -> Result<()> {
        if self.strict && LossNorm::L2.of(gradient) > self.params.lipschitz {
            return Err(CoreError::strict_bound(
                "gradient",
                "a vector with L2 norm <= lipschitz (strict=True)",
                self.t + 1,
            ));
        }
        Ok(())
    }

    /// Clip `self.gradient` to `‖g‖₂ ≤ L`, release `s̃_t` (line 5) and compute `x̃_{t+1}` (line 3). The exact
    /// norm of the float gradient pushed is within `L` (issue 21; Lemma *rounded clip*,
    /// [`super::clip_to_bound`]), so the calibrated `2L` (and `2√n L` in L1) holds.
    #[inline]
    fn absorb(&mut self) -> Result<()> {
        let norm = LossNorm::L2.of(&self.gradient);
        // Lemma *rounded clip*: the exact L2 norm of the pushed gradient is within `L`.
        let clipped = super::clip_to_bound(&mut self.gradient, norm, self.params.lipschitz);
        self.tree.push(&self.gradient, &mut self.release)?;
        // Counted once the push succeeded: an error leaves the learner as it was.
        self.clipped += u64::from(clipped);
        self.t += 1;
        self.noisy_map();
        Ok(())
    }

    /// Line 3: the target `c − η s̃_t`, then (while rounds remain) `k` Frank-Wolfe steps from the previous
    /// iterate.
    fn noisy_map(&mut self) {
        let eta = self.params.eta;
        for ((v, c), s) in self
            .map
            .target_mut()
            .iter_mut()
            .zip(&self.center)
            .zip(&self.release)
        {
            *v = c - eta * s;
        }
        if self.t < self.params.horizon {
            for _ in 0..self.params.lmo_calls {
                self.map.step(&mut self.domain);
            }
        }
    }
}

impl Learner for NoisyOco {
    const NAME: &'static str = "NoisyOCO";
    type Family<'a> = &'a LossFamily;

    super::learner_accessors!(NoisyOcoParams);

    super::full_information_check_run!();

    super::play_by_rounds!(|l, family| {
        let loss = super::full_information_feedback(family, l.t, l.map.x(), &mut l.gradient);
        l.check_strict(&l.gradient)?;
        l.absorb()?;
        Ok(loss)
    });

    /// Besides the format ([`crate::state`]), the restored learner must be one that [`NoisyOco::new`] could have
    /// built and played to round `t`: constants equal to [`NoisyOcoParams::new`] recomputed from its domain and
    /// declared constants and tuned to its mechanism's noise, `t <= T` and the mechanism's counter equal to `t`,
    /// every vector finite and of the domain's dimension, the centre the domain's interior point, the map's
    /// target `c − η s̃_t`, and a noise scale the constructor accepts.
    fn check_state(&mut self) -> Result<()> {
        use crate::state::{all_finite_of_len, ensure};
        const WHAT: &str = "NoisyOCO";
        let p = &self.params;
        let recomputed = NoisyOcoParams::new(
            &self.domain,
            p.horizon,
            p.lipschitz,
            (!p.eta_default).then_some(p.eta),
            p.lmo_calls,
        )
        .and_then(|mut q| {
            q.tune_for_noise(tuning_noise_norm(&self.tree, q.horizon)?);
            Ok(q)
        });
        ensure(
            recomputed.as_ref() == Ok(p),
            WHAT,
            "its constants differ from the ones its domain, declared bounds and noise imply",
        )?;
        let n = p.dim;
        ensure(
            all_finite_of_len(
                n,
                &[&self.center, &self.release, &self.gradient, self.map.x()],
            ) && self.domain.dim() == n
                && self.center.as_slice() == self.domain.interior_point(),
            WHAT,
            "a vector is not finite or not of the domain's dimension",
        )?;
        let target = self.map.target();
        ensure(
            target.len() == n
                && target
                    .iter()
                    .zip(&self.center)
                    .zip(&self.release)
                    .all(|((v, c), s)| v.to_bits() == (c - p.eta * s).to_bits()),
            WHAT,
            "the Frank-Wolfe target is not c - eta * (the release)",
        )?;
        ensure(
            self.t <= p.horizon
                && self.clipped <= self.t
                && self.tree.dim() == n
                && self.tree.horizon() == p.horizon
                && self.tree.t() == self.t
                && !(self.pending && self.t >= p.horizon),
            WHAT,
            "its counters disagree with t",
        )?;
        ensure(
            (self.tree.noise().scale() * p.eta * 1e6).is_finite(),
            WHAT,
            "noise scale out of range",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregation::SamplerKind;
    use crate::domains::{L2Ball, Simplex, UniformMatroid};
    use crate::learners::testing::assert_run_equals_ask_tell;
    use crate::losses::{LossKind, RowOrder};
    use crate::rng::Generator;

    fn learner(domain: Domain, horizon: u64, scale: f64, calls: u32, seed: u64) -> NoisyOco {
        let params = NoisyOcoParams::new(&domain, horizon, 2.0, None, calls).unwrap();
        let noise = NoiseDistribution::Gaussian { sigma: scale };
        NoisyOco::new(
            domain,
            params,
            crate::learners::MechanismSetup::padded_tree(
                noise,
                SamplerKind::Exact,
                [seed, 1, 2, 3],
            ),
        )
        .unwrap()
    }

    fn simplex(n: usize) -> Domain {
        Domain::Simplex(Simplex::new(n).unwrap())
    }

    #[test]
    fn line_one_and_the_noise_aware_step_size() {
        let d = simplex(5);
        let p = NoisyOcoParams::new(&d, 400, 2.0, None, 4).unwrap();
        // η = D/(L√T) without noise.
        assert!((p.eta - 2f64.sqrt() / (2.0 * 20.0)).abs() < 1e-15);
        assert!((p.mirror_range - 1.0).abs() < 1e-15);
        let mut q = p.clone();
        q.tune_for_noise(3.0);
        assert!(q.eta < p.eta);
        // The tuned η minimises the bound at a constant noise sum T·μ̄.
        let at = |eta: f64| {
            let mut r = q.clone();
            r.eta = eta;
            let b = r.regret_bound(400.0 * 3.0);
            b.mirror + b.stability + b.noise
        };
        assert!(at(q.eta) <= at(q.eta * 1.01) && at(q.eta) <= at(q.eta * 0.99));
        assert!(NoisyOcoParams::new(&d, 0, 1.0, None, 4).is_err());
        assert!(NoisyOcoParams::new(&d, 10, -1.0, None, 4).is_err());
        assert!(NoisyOcoParams::new(&d, 10, 1.0, Some(0.0), 4).is_err());
        assert!(NoisyOcoParams::new(&d, 10, 1.0, None, 0).is_err());
    }

    #[test]
    fn every_action_is_feasible_and_run_equals_ask_tell() {
        let domains = [
            simplex(5),
            Domain::L2Ball(L2Ball::new(5, 2.0).unwrap()),
            Domain::UniformMatroid(UniformMatroid::new(5, 2, true).unwrap()),
        ];
        let data: Vec<f64> = (0..200)
            .map(|i| ((i * 37 % 17) as f64 / 17.0) - 0.4)
            .collect();
        for d in domains {
            let fam = LossFamily::new(LossKind::Linear, data.clone(), 5)
                .unwrap()
                .reordered(300, RowOrder::Bootstrap { seed: 1 })
                .unwrap();
            let mut a = learner(d.clone(), 300, 0.7, 3, 9);
            let mut b = learner(d.clone(), 300, 0.7, 3, 9);
            assert_run_equals_ask_tell(d.kind(), &mut a, &mut b, &fam, 300, |a, t| {
                let x = a.ask().unwrap().to_vec();
                assert!(d.contains(&x, 1e-9), "{} t={t} {x:?}", d.kind());
                a.tell(fam.row(fam.row_index(t))).unwrap();
                fam.value(t, &x)
            });
            assert!(a.ask().is_err());
            assert_eq!(a.noisy_cumulative_gradient(), b.noisy_cumulative_gradient());
        }
    }

    #[test]
    fn without_noise_the_regret_is_below_the_bound() {
        // Linear losses on the simplex, many LMO calls: the bound of Lemma 4.1 with κ = L and no noise.
        let (n, horizon) = (4, 500u64);
        let mut l = learner(simplex(n), horizon, 0.0, 400, 0);
        let mut rng = Generator::from_seed([3, 3, 3, 3]);
        let mut cumulative = vec![0.0; n];
        let mut total = 0.0;
        for _ in 0..horizon {
            let x = l.ask().unwrap().to_vec();
            let c: Vec<f64> = (0..n)
                .map(|i| rng.open01() + 0.2 * i as f64 - 0.5)
                .collect();
            total += crate::vecops::dot(&c, &x);
            cumulative.iter_mut().zip(&c).for_each(|(s, v)| *s += v);
            l.tell(&c).unwrap();
        }
        let best = cumulative.iter().copied().fold(f64::INFINITY, f64::min);
        let bound = l.regret_bound().unwrap();
        assert_eq!(bound.noise, 0.0);
        assert!(
            total - best <= bound.total(),
            "{} > {bound:?}",
            total - best
        );
    }

    #[test]
    fn errors_leave_state_alone_and_restore_is_bit_identical() {
        let mut l = learner(simplex(3), 50, 1.0, 2, 5);
        assert!(matches!(l.tell(&[0.0; 3]), Err(CoreError::Protocol(_))));
        l.ask().unwrap();
        let before = l.to_bytes().unwrap();
        assert!(l.tell(&[0.0, f64::NAN, 0.0]).is_err());
        assert!(l.tell(&[0.0; 2]).is_err());
        assert_eq!(l.to_bytes().unwrap(), before);
        l.tell(&[5.0, 0.1, 0.0]).unwrap();
        assert_eq!(l.clipped(), 1);
        let mut m = NoisyOco::from_bytes(&l.to_bytes().unwrap()).unwrap();
        for _ in 0..40 {
            assert_eq!(l.ask().unwrap(), m.ask().unwrap());
            l.tell(&[0.2, 0.9, 0.4]).unwrap();
            m.tell(&[0.2, 0.9, 0.4]).unwrap();
        }
        // Crafted states: a changed step size or counter is refused.
        let mut changed = NoisyOco::from_bytes(&l.to_bytes().unwrap()).unwrap();
        changed.params.eta *= 2.0;
        assert!(NoisyOco::from_bytes(&changed.to_bytes().unwrap()).is_err());
        changed.params.eta /= 2.0;
        changed.t += 1;
        assert!(NoisyOco::from_bytes(&changed.to_bytes().unwrap()).is_err());
    }

    #[test]
    fn every_reachable_state_restores() {
        let mut l = learner(simplex(3), 9, 2.0, 1, 4);
        for t in 0..=9 {
            let bytes = l.to_bytes().unwrap();
            assert_eq!(
                NoisyOco::from_bytes(&bytes).unwrap().to_bytes().unwrap(),
                bytes,
                "t={t}"
            );
            if t == 4 {
                crate::state::tests::fuzz_decoder(&bytes, NoisyOco::from_bytes);
            }
            if t < 9 {
                l.ask().unwrap();
                l.tell(&[0.1, -0.3, 0.2]).unwrap();
            }
        }
    }
}
