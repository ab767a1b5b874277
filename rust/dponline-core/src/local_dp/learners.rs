//! The d-dimensional learners of van der Hoeven (2019) and two baselines, on one protocol, with a native
//! `run` over a [`LocalStream`] in which every provider's subgradient is computed, clipped and privatised.
//!
//! * [`Algorithm::Coordinatewise`] — Algorithm 3: one Algorithm-1 learner per coordinate, fed `g̃_{t,j}`
//!   (needs `|E g̃_{t,j}| ≤ G`; gradients are clipped coordinate-wise to `[−G, G]`). Regret: Theorem 2.
//! * [`Algorithm::Unconstrained`] — Algorithm 2: `w_t = v_t z_t`, `z_t` from projected gradient descent on
//!   the unit ℓ2 ball with `η_t = √2 / sqrt(Σ_{s≤t} ‖g̃_s‖²)` (`D/(√2 sqrt(Σ‖g̃‖²))` with diameter `D = 2`;
//!   Orabona 2019, Theorem 4.14: regret `≤ √2·D·sqrt(Σ‖g̃_t‖²)`), `v_t` from Algorithm 1 fed `⟨z_t, g̃_t⟩`
//!   (needs `‖E g̃_t‖₂ ≤ G`; gradients are clipped to the ℓ2 ball of radius `G`). Regret: Lemma 6 + Theorem 1.
//! * [`Algorithm::Ogd`] — online gradient descent `w ← w − η g̃` with a fixed step (baseline).
//! * [`Algorithm::AdaGrad`] — diagonal AdaGrad (Duchi, Hazan & Singer 2011) on the box `[−D, D]^d`:
//!   `w_j ← Π_{[−D,D]}(w_j − √2 D g̃_j / sqrt(Σ_{s≤t} g̃_{s,j}²))` (baseline; `D` must be guessed).
//!
//! Round `t` of a native run ([`crate::learners::Learner::run`]) uses row `t` of the stream: predict
//! `p = ⟨w_t, x_t⟩`, suffer `ℓ(p, y_t)`, form `g_t = ℓ'(p, y_t) x_t`, clip it to the declared bound
//! (coordinate-wise for Algorithm 3 and the baselines with the Laplace mechanism, in ℓ2 for Algorithm 2 and for
//! the ℓ2 mechanism), add the provider's noise with the row's budgets, and update. `ask`/`tell` is the same loop with the caller
//! computing and privatising the gradient.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_dim, check_positive};
use crate::learners::{Checkpoints, Learner};
use crate::losses::check_checkpoints;
use crate::rng::{Generator, Seed};
use crate::state::ensure;

use super::potential::{Potential1D, Prior};
use super::randomizer::{Mechanism, add_noise, check_budgets, check_sampler, clip};
use crate::noise::release::SamplerKind;

/// The loss of a stream row: `ℓ(p, y)` of the prediction `p = ⟨w, x⟩`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LocalLoss {
    /// `ln(1 + e^{−y p})` (labels `±1`); `|ℓ'| ≤ 1`.
    Logistic,
    /// `½(p − y)²`; `ℓ' = p − y` is unbounded, so the clipping of the gradient matters.
    Squared,
    /// `|p − y|`; `ℓ' = sign(p − y)`.
    Absolute,
}

impl LocalLoss {
    /// Parse `"logistic"`, `"squared"` or `"absolute"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "logistic" => Ok(LocalLoss::Logistic),
            "squared" => Ok(LocalLoss::Squared),
            "absolute" => Ok(LocalLoss::Absolute),
            other => Err(CoreError::invalid(
                "loss",
                "'logistic', 'squared' or 'absolute'",
                format!("{other:?}"),
            )),
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            LocalLoss::Logistic => "logistic",
            LocalLoss::Squared => "squared",
            LocalLoss::Absolute => "absolute",
        }
    }

    /// `(ℓ(p, y), ℓ'(p, y))`.
    #[inline]
    pub fn value_and_derivative(self, p: f64, y: f64) -> (f64, f64) {
        match self {
            LocalLoss::Logistic => {
                let m = -y * p;
                // softplus(m) and sigmoid(m), stably.
                let value = if m > 0.0 {
                    m + (-m).exp().ln_1p()
                } else {
                    m.exp().ln_1p()
                };
                let sig = if m >= 0.0 {
                    1.0 / (1.0 + (-m).exp())
                } else {
                    let e = m.exp();
                    e / (1.0 + e)
                };
                (value, -y * sig)
            }
            LocalLoss::Squared => {
                let r = p - y;
                (0.5 * r * r, r)
            }
            LocalLoss::Absolute => {
                let r = p - y;
                (
                    r.abs(),
                    if r > 0.0 {
                        1.0
                    } else if r < 0.0 {
                        -1.0
                    } else {
                        0.0
                    },
                )
            }
        }
    }
}

/// A stream of providers: features `x_t`, labels `y_t`, a loss, and each provider's budgets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalStream {
    dim: usize,
    rows: usize,
    features: Vec<f64>,
    labels: Vec<f64>,
    loss: LocalLoss,
    mechanism: Mechanism,
    sampler: SamplerKind,
    budgets: Vec<f64>,
}

impl LocalStream {
    /// A stream of `labels.len()` rounds: `features` row-major `(rows, dim)`; `budgets` `(rows, dim)` for
    /// [`Mechanism::Coordinate`] or `(rows,)` for [`Mechanism::L2`], every entry `> 0` (`+∞` = no noise); the
    /// providers' noise is drawn by `sampler` (module docs of [`super::randomizer`], "Samplers").
    ///
    /// Errors: [`CoreError::Shape`], [`CoreError::NonFinite`] (features, labels, NaN budgets),
    /// [`CoreError::InvalidArgument`] (budgets `≤ 0`, a mechanism and sampler refused by [`check_sampler`];
    /// noise scales above `1e250` for `G = 1` and budgets outside the exact sampler's range are refused by the
    /// learner's own check, which knows `G`).
    pub fn new(
        dim: usize,
        features: Vec<f64>,
        labels: Vec<f64>,
        loss: LocalLoss,
        mechanism: Mechanism,
        sampler: SamplerKind,
        budgets: Vec<f64>,
    ) -> Result<Self> {
        check_dim(dim)?;
        check_sampler(mechanism, sampler)?;
        let rows = labels.len();
        let expected = crate::alloc::checked_len("features", rows, dim)?;
        if features.len() != expected {
            return Err(CoreError::Shape {
                name: "features",
                expected: format!("({rows}, {dim})"),
                got: format!("{} values", features.len()),
            });
        }
        let per = mechanism.budgets_per_round(dim);
        if budgets.len() != rows * per {
            return Err(CoreError::Shape {
                name: "budgets",
                expected: format!("({rows}, {per})"),
                got: format!("{} values", budgets.len()),
            });
        }
        crate::error::check_finite("features", &features)?;
        crate::error::check_finite("labels", &labels)?;
        check_budgets("budgets", &budgets, 0.0, sampler)?;
        Ok(LocalStream {
            dim,
            rows,
            features,
            labels,
            loss,
            mechanism,
            sampler,
            budgets,
        })
    }

    /// Feature dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Rounds.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The loss.
    pub fn loss(&self) -> LocalLoss {
        self.loss
    }

    /// The mechanism.
    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// The providers' sampler.
    pub fn sampler(&self) -> SamplerKind {
        self.sampler
    }

    /// Budgets of round `t`.
    pub fn budgets(&self, t: usize) -> &[f64] {
        let per = self.mechanism.budgets_per_round(self.dim);
        &self.budgets[t * per..(t + 1) * per]
    }

    /// Features of round `t`.
    pub fn features(&self, t: usize) -> &[f64] {
        &self.features[t * self.dim..(t + 1) * self.dim]
    }

    /// `(ℓ_t(w), g_t)` with `g_t = ℓ'(⟨w, x_t⟩, y_t) x_t` written into `grad`.
    #[inline]
    pub fn subgradient(&self, t: usize, w: &[f64], grad: &mut [f64]) -> f64 {
        let x = self.features(t);
        let p = crate::vecops::dot(w, x);
        let (value, slope) = self.loss.value_and_derivative(p, self.labels[t]);
        for (g, xi) in grad.iter_mut().zip(x) {
            *g = slope * xi;
        }
        value
    }

    /// `Σ_{t<n} ℓ_t(u)` at each checkpoint `n` (cumulative losses of a fixed comparator).
    ///
    /// Errors: [`CoreError::Shape`] for `u`; [`CoreError::InvalidArgument`] for bad checkpoints;
    /// [`CoreError::NonFinite`] when the sum overflows (huge labels, features or `u`).
    pub fn cumulative_at(&self, u: &[f64], checkpoints: &[u64]) -> Result<Vec<f64>> {
        crate::error::check_len("u", u, self.dim)?;
        check_checkpoints(checkpoints, self.rows as u64)?;
        let mut out = crate::alloc::zeros("checkpoints", checkpoints.len())?;
        let (mut total, mut next) = (0.0, 0);
        for t in 0..self.rows {
            while next < checkpoints.len() && checkpoints[next] == t as u64 {
                out[next] = total;
                next += 1;
            }
            let p = crate::vecops::dot(u, self.features(t));
            total += self.loss.value_and_derivative(p, self.labels[t]).0;
            if !total.is_finite() {
                return Err(CoreError::NonFinite {
                    name: "the cumulative loss of u (overflow), round",
                    index: t,
                    value: total,
                });
            }
        }
        while next < checkpoints.len() {
            out[next] = total;
            next += 1;
        }
        Ok(out)
    }
}

/// The update rule of a [`LocalLearner`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Algorithm {
    /// Algorithm 3: one [`Potential1D`] per coordinate.
    Coordinatewise {
        /// The per-coordinate learners.
        coords: Vec<Potential1D>,
    },
    /// Algorithm 2: `w = v·z`.
    Unconstrained {
        /// Algorithm 1 for the norm.
        norm: Potential1D,
        /// The direction `z_t` in the unit ball.
        z: Vec<f64>,
        /// `Σ ‖g̃_s‖²`.
        sq_norms: f64,
        /// The current `v_t`.
        v: f64,
    },
    /// Online gradient descent with a fixed step.
    Ogd {
        /// Step size `η > 0`.
        lr: f64,
    },
    /// Diagonal AdaGrad on `[−D, D]^d`.
    AdaGrad {
        /// Box half-width `D > 0`.
        radius: f64,
        /// `Σ g̃_{s,j}²` per coordinate.
        sq: Vec<f64>,
    },
}

impl Algorithm {
    /// `"coordinatewise"`, `"unconstrained"`, `"ogd"` or `"adagrad"`.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Coordinatewise { .. } => "coordinatewise",
            Algorithm::Unconstrained { .. } => "unconstrained",
            Algorithm::Ogd { .. } => "ogd",
            Algorithm::AdaGrad { .. } => "adagrad",
        }
    }
}

/// Which learner to build, with its constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AlgorithmSpec {
    /// Algorithm 3 with Algorithm 1's prior.
    Coordinatewise(Prior),
    /// Algorithm 2 with Algorithm 1's prior.
    Unconstrained(Prior),
    /// OGD with step `lr > 0`.
    Ogd {
        /// Step size.
        lr: f64,
    },
    /// AdaGrad on `[−radius, radius]^d`.
    AdaGrad {
        /// Box half-width `D > 0`.
        radius: f64,
    },
}

impl AlgorithmSpec {
    /// Parse `"coordinatewise"`, `"unconstrained"`, `"ogd"` or `"adagrad"` with the constants they use.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name.
    pub fn from_name(name: &str, prior: Prior, lr: f64, radius: f64) -> Result<Self> {
        match name {
            "coordinatewise" => Ok(AlgorithmSpec::Coordinatewise(prior)),
            "unconstrained" => Ok(AlgorithmSpec::Unconstrained(prior)),
            "ogd" => Ok(AlgorithmSpec::Ogd { lr }),
            "adagrad" => Ok(AlgorithmSpec::AdaGrad { radius }),
            other => Err(CoreError::invalid(
                "algorithm",
                "'coordinatewise', 'unconstrained', 'ogd' or 'adagrad'",
                format!("{other:?}"),
            )),
        }
    }
}

/// The constants a [`LocalLearner`] is built with (the algorithm's own constants — prior, step, box — are in
/// its [`Algorithm`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LocalParams {
    /// Dimension `d >= 1`.
    pub dim: usize,
    /// The declared bound `G > 0` (`|E g̃_j| <= G`, or `‖E g̃‖₂ <= G` for Algorithm 2).
    pub g_bound: f64,
}

/// A d-dimensional learner for locally privatised gradients (see the module docs), on the [`Learner`] protocol:
/// its native run plays a [`LocalStream`].
#[derive(Debug, Serialize, Deserialize)]
pub struct LocalLearner {
    params: LocalParams,
    algorithm: Algorithm,
    w: Vec<f64>,
    /// Coordinates whose prediction must be recomputed (Algorithm 3 only).
    dirty: Vec<bool>,
    pending: bool,
    t: u64,
    clipped: u64,
    saturated: u64,
    rng: Generator,
    strict: bool,
    #[serde(skip)]
    grad: Vec<f64>,
    #[serde(skip)]
    direction: Vec<f64>,
}

impl LocalLearner {
    /// Build a learner of dimension `dim` with declared bound `G` (`|E g̃_j| ≤ G` for Algorithm 3 and the
    /// baselines, `‖E g̃‖₂ ≤ G` for Algorithm 2) running `spec`. The generator (stream 0 of `seed`, or OS-keyed
    /// when `secure`) draws the providers' noise inside [`Learner::run`]. With `strict`, a run refuses a stream
    /// whose feature rows let the gradient leave the bound ([`Learner::check_run`]) instead of clipping.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `dim = 0`, a bad `G`, prior, `lr` or `radius`; allocation
    /// and entropy failures.
    pub fn new(
        dim: usize,
        g_bound: f64,
        spec: AlgorithmSpec,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        check_dim(dim)?;
        check_positive("G", g_bound)?;
        if let AlgorithmSpec::Coordinatewise(Prior::External)
        | AlgorithmSpec::Unconstrained(Prior::External) = spec
        {
            return Err(CoreError::invalid(
                "prior",
                "'conjugate', 'uniform' or 'improper'",
                "a callable",
            ));
        }
        let algorithm = match spec {
            AlgorithmSpec::Coordinatewise(prior) => {
                let one = Potential1D::new(g_bound, prior)?;
                let mut coords = crate::alloc::reserve("per-coordinate learners", dim)?;
                coords.resize(dim, one);
                Algorithm::Coordinatewise { coords }
            }
            AlgorithmSpec::Unconstrained(prior) => Algorithm::Unconstrained {
                norm: Potential1D::new(g_bound, prior)?,
                z: crate::alloc::zeros("direction", dim)?,
                sq_norms: 0.0,
                v: 0.0,
            },
            AlgorithmSpec::Ogd { lr } => {
                check_positive("lr", lr)?;
                Algorithm::Ogd { lr }
            }
            AlgorithmSpec::AdaGrad { radius } => {
                check_positive("radius", radius)?;
                Algorithm::AdaGrad {
                    radius,
                    sq: crate::alloc::zeros("AdaGrad accumulators", dim)?,
                }
            }
        };
        let mut dirty = crate::alloc::reserve("dirty flags", dim)?;
        dirty.resize(dim, true);
        Ok(LocalLearner {
            params: LocalParams { dim, g_bound },
            algorithm,
            w: crate::alloc::zeros("action", dim)?,
            dirty,
            pending: false,
            t: 0,
            clipped: 0,
            saturated: 0,
            rng: Generator::for_stream(&seed, 0, secure)?,
            strict,
            grad: crate::alloc::zeros("gradient buffer", dim)?,
            direction: crate::alloc::zeros("sphere direction", dim)?,
        })
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.params.dim
    }

    /// Declared bound `G`.
    pub fn g_bound(&self) -> f64 {
        self.params.g_bound
    }

    /// The algorithm and its state.
    pub fn algorithm(&self) -> &Algorithm {
        &self.algorithm
    }

    /// Predictions of Algorithm 1 that saturated at `±ACTION_LIMIT`.
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// The last action computed (`w_t` after `ask`).
    pub fn current(&self) -> &[f64] {
        &self.w
    }

    /// Whether gradients are clipped in ℓ2 (Algorithm 2, or the ℓ2 mechanism) rather than per coordinate.
    pub fn clips_l2(&self, mechanism: Mechanism) -> bool {
        matches!(self.algorithm, Algorithm::Unconstrained { .. }) || mechanism == Mechanism::L2
    }

    fn compute_action(&mut self) -> Result<()> {
        match &mut self.algorithm {
            Algorithm::Coordinatewise { coords } => {
                for ((w, c), dirty) in self.w.iter_mut().zip(coords.iter()).zip(&mut self.dirty) {
                    if *dirty {
                        let (value, sat) = c.prediction()?.value();
                        *w = value;
                        self.saturated += u64::from(sat);
                        *dirty = false;
                    }
                }
            }
            Algorithm::Unconstrained { norm, z, v, .. } => {
                let (value, sat) = norm.prediction()?.value();
                self.saturated += u64::from(sat);
                *v = value;
                for (w, zi) in self.w.iter_mut().zip(z.iter()) {
                    *w = value * zi;
                }
            }
            Algorithm::Ogd { .. } | Algorithm::AdaGrad { .. } => {}
        }
        Ok(())
    }

    /// The action `w_t`. Asking again before `tell` returns the same action.
    ///
    /// Errors: quadrature errors of the improper prior.
    pub fn ask(&mut self) -> Result<&[f64]> {
        if !self.pending {
            self.compute_action()?;
            self.pending = true;
        }
        Ok(&self.w)
    }

    /// Check a noisy gradient without changing anything.
    ///
    /// Errors: [`CoreError::Protocol`] without a preceding `ask`; [`CoreError::Shape`];
    /// [`CoreError::NonFinite`] for NaN/inf or values whose squares overflow the running sums.
    pub fn check_tell(&self, noisy: &[f64]) -> Result<()> {
        crate::learners::check_asked(self.pending, "gradient per asked action")?;
        crate::error::check_len("gradient", noisy, self.params.dim)?;
        crate::error::check_finite("gradient", noisy)?;
        let sq = crate::vecops::dot(noisy, noisy);
        let overflow = !sq.is_finite()
            || match &self.algorithm {
                Algorithm::Coordinatewise { coords } => coords
                    .iter()
                    .zip(noisy)
                    .any(|(c, &g)| c.check_tell(g).is_err()),
                Algorithm::Unconstrained {
                    norm, z, sq_norms, ..
                } => {
                    !(sq_norms + sq).is_finite()
                        || norm.check_tell(crate::vecops::dot(z, noisy)).is_err()
                }
                Algorithm::Ogd { lr } => self
                    .w
                    .iter()
                    .zip(noisy)
                    .any(|(w, g)| !(w - lr * g).is_finite()),
                Algorithm::AdaGrad { sq, .. } => {
                    sq.iter().zip(noisy).any(|(s, g)| !(s + g * g).is_finite())
                }
            };
        if overflow {
            return Err(CoreError::NonFinite {
                name: "gradient",
                index: 0,
                value: f64::INFINITY,
            });
        }
        Ok(())
    }

    /// Absorb the noisy gradient `g̃_t` of the asked action.
    ///
    /// Errors (state unchanged): as [`LocalLearner::check_tell`].
    pub fn tell(&mut self, noisy: &[f64]) -> Result<()> {
        self.check_tell(noisy)?;
        self.update(noisy);
        Ok(())
    }

    fn update(&mut self, g: &[f64]) {
        match &mut self.algorithm {
            Algorithm::Coordinatewise { coords } => {
                for ((c, &gj), dirty) in coords.iter_mut().zip(g).zip(&mut self.dirty) {
                    if gj != 0.0 {
                        c.absorb(gj);
                        *dirty = true;
                    }
                }
            }
            Algorithm::Unconstrained {
                norm, z, sq_norms, ..
            } => {
                norm.absorb(crate::vecops::dot(z, g));
                *sq_norms += crate::vecops::dot(g, g);
                if *sq_norms > 0.0 {
                    let eta = core::f64::consts::SQRT_2 / sq_norms.sqrt();
                    for (zi, gi) in z.iter_mut().zip(g) {
                        *zi -= eta * gi;
                    }
                    let n = crate::vecops::dot(z, z).sqrt();
                    if n > 1.0 {
                        z.iter_mut().for_each(|zi| *zi /= n);
                    }
                }
            }
            Algorithm::Ogd { lr } => {
                for (w, gi) in self.w.iter_mut().zip(g) {
                    *w -= *lr * gi;
                }
            }
            Algorithm::AdaGrad { radius, sq } => {
                let step = core::f64::consts::SQRT_2 * *radius;
                for ((w, s), gi) in self.w.iter_mut().zip(sq.iter_mut()).zip(g) {
                    *s += gi * gi;
                    if *s > 0.0 {
                        *w = (*w - step * gi / s.sqrt()).clamp(-*radius, *radius);
                    }
                }
            }
        }
        self.pending = false;
        self.t += 1;
    }

    /// The native rounds `t .. end` of `stream` (checked by [`Learner::check_run`]): each round computes the
    /// provider's subgradient, clips it to `G`, privatises it with the row's budgets (noise from this learner's
    /// generator) and updates. Returns the loss summed since the start of the call, recorded at each mark.
    ///
    /// Errors: a quadrature failure of the improper prior, or a round whose loss or subgradient overflows at the
    /// played action ([`CoreError::NonFinite`]); the rounds before stay played ([`Learner::run`] puts them back,
    /// [`Learner::play_may_fail`]).
    fn play_rounds(
        &mut self,
        stream: &LocalStream,
        end: u64,
        marks: &mut Checkpoints<'_>,
        grad: &mut [f64],
        direction: &mut [f64],
    ) -> Result<f64> {
        let l2 = self.clips_l2(stream.mechanism());
        let mechanism = stream.mechanism();
        let mut total = 0.0;
        while self.t < end {
            let t = self.t as usize;
            self.ask()?;
            let value = stream.subgradient(t, &self.w, grad);
            // Huge labels or features at a large action overflow the loss or its gradient: an error (the run puts
            // back the state from before the call) rather than inf/NaN in the totals.
            if !(total + value).is_finite() {
                return Err(CoreError::NonFinite {
                    name: "the loss at the played action (overflow), round",
                    index: t,
                    value: total + value,
                });
            }
            crate::error::check_finite("the provider's subgradient (overflow)", grad)?;
            total += value;
            if clip(grad, self.params.g_bound, l2) {
                self.clipped += 1;
            }
            add_noise(
                &mut self.rng,
                mechanism,
                stream.sampler(),
                self.params.g_bound,
                stream.budgets(t),
                grad,
                direction,
            )?;
            self.check_tell(grad)?;
            self.update(grad);
            marks.record(self.t, total);
        }
        Ok(total)
    }
}

impl Learner for LocalLearner {
    const NAME: &'static str = "LocalLearner";
    type Family<'a> = &'a LocalStream;

    crate::learners::learner_accessors!(LocalParams);

    /// Check that `rounds` rounds of `stream` can be played from the current round, without changing anything.
    ///
    /// Errors: [`CoreError::Protocol`] if an action is pending; [`CoreError::Shape`] for another dimension;
    /// [`CoreError::HorizonExhausted`] beyond the stream; [`CoreError::InvalidArgument`] for budgets whose
    /// noise scale `2G/τ` exceeds `1e250`, or (with `strict`) a feature row that lets the gradient leave the
    /// bound for a loss with `|ℓ'| ≤ 1`.
    fn check_run(&self, stream: &LocalStream, rounds: u64) -> Result<()> {
        crate::learners::check_idle(self.pending, "action")?;
        crate::learners::check_dim("stream", "dimension", self.params.dim, stream.dim())?;
        let limit = stream.rows() as u64;
        crate::learners::check_room("LocalStream", self.t, rounds, limit)?;
        let end = self.t + rounds;
        let per = stream.mechanism().budgets_per_round(self.params.dim);
        let (lo, hi) = (self.t as usize * per, end as usize * per);
        check_budgets(
            "budgets",
            &stream.budgets[lo..hi],
            self.params.g_bound,
            stream.sampler(),
        )?;
        if self.strict {
            let l2 = self.clips_l2(stream.mechanism());
            for t in self.t as usize..end as usize {
                if super::randomizer::exceeds(stream.features(t), self.params.g_bound, l2) {
                    return Err(CoreError::InvalidArgument {
                        name: "features",
                        allowed: "within the declared bound G (strict=True)",
                        value: format!("row {t}"),
                    });
                }
            }
        }
        Ok(())
    }

    /// A round fails after [`Learner::check_run`] when its loss or subgradient overflows at the played action, or
    /// the improper prior's quadrature does not converge: always keep the state to put back.
    fn play_may_fail(&self) -> bool {
        true
    }

    fn play(&mut self, stream: &LocalStream, end: u64, marks: &mut Checkpoints<'_>) -> Result<f64> {
        let mut grad = core::mem::take(&mut self.grad);
        let mut direction = core::mem::take(&mut self.direction);
        let total = self.play_rounds(stream, end, marks, &mut grad, &mut direction);
        self.grad = grad;
        self.direction = direction;
        total
    }

    /// The invariants of a decoded learner: every per-coordinate vector has the dimension's length, `G` is a
    /// positive finite bound, no more rounds clipped than played; the scratch buffers are rebuilt.
    ///
    /// Errors: [`CoreError::State`]; [`CoreError::Allocation`].
    fn check_state(&mut self) -> Result<()> {
        let dim = self.params.dim;
        let per_coordinate = match &self.algorithm {
            Algorithm::Coordinatewise { coords } => coords.len() == dim,
            Algorithm::Unconstrained { z, .. } => z.len() == dim,
            Algorithm::Ogd { .. } => true,
            Algorithm::AdaGrad { sq, .. } => sq.len() == dim,
        };
        ensure(
            dim >= 1
                && self.params.g_bound > 0.0
                && self.params.g_bound.is_finite()
                && self.w.len() == dim
                && self.dirty.len() == dim
                && per_coordinate
                && self.clipped <= self.t,
            Self::NAME,
            "dimensions, bound and counters",
        )?;
        self.grad = crate::alloc::zeros("gradient buffer", dim)?;
        self.direction = crate::alloc::zeros("sphere direction", dim)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learners::testing::assert_run_equals_ask_tell;

    fn stream(rows: usize, dim: usize, tau: f64) -> LocalStream {
        let features: Vec<f64> = (0..rows * dim)
            .map(|i| ((i * 7919 % 101) as f64 / 50.0 - 1.0) * 0.9)
            .collect();
        let labels: Vec<f64> = (0..rows)
            .map(|t| if t % 3 == 0 { -1.0 } else { 1.0 })
            .collect();
        LocalStream::new(
            dim,
            features,
            labels,
            LocalLoss::Logistic,
            Mechanism::Coordinate,
            SamplerKind::FloatingPoint,
            vec![tau; rows * dim],
        )
        .unwrap()
    }

    #[test]
    fn run_equals_ask_tell_without_noise() {
        for alg in ["coordinatewise", "unconstrained", "ogd", "adagrad"] {
            let s = stream(300, 4, f64::INFINITY);
            let mk = || {
                let spec =
                    AlgorithmSpec::from_name(alg, Prior::Conjugate { b: 1.0 }, 0.1, 5.0).unwrap();
                LocalLearner::new(4, 4.0, spec, [1, 2, 3, 4], false, false).unwrap()
            };
            let (mut a, mut b) = (mk(), mk());
            let mut g = vec![0.0; 4];
            assert_run_equals_ask_tell(alg, &mut a, &mut b, &s, 300, |a, t| {
                let w = a.ask().unwrap().to_vec();
                let loss = s.subgradient(t as usize, &w, &mut g);
                a.tell(&g).unwrap();
                loss
            });
            assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap(), "{alg}");
        }
    }

    #[test]
    fn bad_runs_and_feedback_leave_state_unchanged() {
        let s = stream(50, 3, 1.0);
        let spec = AlgorithmSpec::Coordinatewise(Prior::Uniform);
        let mut l = LocalLearner::new(3, 1.0, spec, [0; 4], false, false).unwrap();
        let before = l.to_bytes().unwrap();
        assert!(l.run(&s, 51, &[], &mut []).is_err());
        assert!(l.run(&stream(5, 2, 1.0), 1, &[], &mut []).is_err());
        assert!(l.tell(&[0.0; 3]).is_err());
        l.ask().unwrap();
        let asked = l.to_bytes().unwrap();
        assert!(l.tell(&[0.0, f64::NAN, 0.0]).is_err());
        assert!(l.tell(&[0.0; 2]).is_err());
        assert_eq!(l.to_bytes().unwrap(), asked);
        assert_ne!(before, asked);
        assert!(AlgorithmSpec::from_name("sgd", Prior::Uniform, 0.0, 0.0).is_err());
        assert!(
            LocalLearner::new(
                3,
                1.0,
                AlgorithmSpec::Ogd { lr: -1.0 },
                [0; 4],
                false,
                false
            )
            .is_err()
        );
    }
}
