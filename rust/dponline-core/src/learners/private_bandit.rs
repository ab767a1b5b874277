//! PrivateBandit: differentially private projection-free bandit convex optimisation.
//!
//! Source: Ene, Nguyen & Vladu, "Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021),
//! Algorithm 1, with Appendix D so that every queried point lies in the domain. It instantiates the
//! NoisyOCO template (their Algorithm 2): `NoisyGrad` is the batched one-point gradient estimate (lines
//! 5-12), `NoisyMap` is Frank-Wolfe on `½‖x‖² − ⟨−η s̃, x⟩` (line 14) fed by the private prefix sums of the
//! tree (line 13).
//!
//! Per round `t` in batch `R` (`T_batch` rounds per batch, `T_round` batches):
//! * sample `u_t` uniform on the unit sphere of the tangent space of `aff(D)` (line 8);
//! * play `y_t = c + (1 − ζ/r)(x̃_{R−1} + ζ u_t − c)` (line 9 applied to `f'(x) = f(c + (1 − ζ/r)(x − c))`,
//!   Appendix D; `B(c, r) ∩ aff(D) ⊆ D` makes `y_t ∈ D`);
//! * observe `f_t(y_t)` (clipped to `[−B, B]`), add `F_t u_t = (d/ζ) f_t(y_t) u_t` to `g̃_R` (lines 10-11);
//! * make one Frank-Wolfe step towards `x̃_R` with target `−η s̃_{R−1}` (line 14: one LMO call per round).
//!
//! At the end of batch `R`: `s̃_R = TreeBasedAgg(g̃_R)` (line 13) and `x̃_R` = the Frank-Wolfe iterate.
//! Line 14 as printed reads `⟨η s̃_{R−1}, x⟩`; NoisyOCO (Algorithm 2 line 3, `NoisyMap(−η s_{t−1})`) and
//! Corollary C.5 fix the sign to `−η s̃_{R−1}`, which is what is implemented.
//!
//! Parameters (line 1), with `d` the dimension of `aff(D)` (the paper's `n` for full-dimensional domains):
//! `T_batch = ⌈√T⌉`, `T_round = ⌈T / T_batch⌉`, `η = D / (T^{3/4} d^{1/2} L)`, `ζ = D d^{1/2} / T^{1/4}`,
//! capped at `r/2` because Appendix D needs `ζ < r` (unless a smoothing radius is given).
//! Extra regret of Appendix D: at most `T · ζ · L · D / r` (their last display).

use serde::{Deserialize, Serialize};

use crate::aggregation::TreeAggregator;
use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_positive};
use crate::frank_wolfe::FrankWolfe;
use crate::losses::{LossFamily, check_checkpoints};
use crate::noise::NoiseDistribution;
use crate::rng::{Generator, Seed, from_state_bytes, to_state_bytes};
use crate::sphere::gaussian_in;

use super::noisy_oco::{NoisyGradient, NoisyMap, NoisyOco};

/// The schedule of Algorithm 1, line 1, and the constants the privacy analysis needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrivateBanditParams {
    /// Horizon `T`.
    pub horizon: u64,
    /// Ambient dimension `n`.
    pub dim: usize,
    /// Dimension `d` of the domain's affine hull (the paper's `n`).
    pub affine_dim: usize,
    /// Batch length `T_batch = ⌈√T⌉`.
    pub t_batch: u64,
    /// Number of batches `T_round = ⌈T / T_batch⌉` (leaves of the tree).
    pub t_round: u64,
    /// Step size `η = D / (T^{3/4} d^{1/2} L)`.
    pub eta: f64,
    /// Smoothing radius `ζ` actually used.
    pub zeta: f64,
    /// `ζ` of line 1, `D d^{1/2} / T^{1/4}`.
    pub zeta_paper: f64,
    /// Lipschitz constant `L` of the losses.
    pub lipschitz: f64,
    /// Diameter `D` of the domain.
    pub diameter: f64,
    /// Bound `B` on `|f_t|` (losses are clipped to `[−B, B]`); default `L·D`.
    pub loss_bound: f64,
    /// Certified inscribed radius `r` of the domain.
    pub inscribed_radius: f64,
    /// Appendix D shrink factor `ζ / r`.
    pub shrink: f64,
}

impl PrivateBanditParams {
    /// The schedule for `domain`, horizon `T`, Lipschitz constant `L`.
    ///
    /// Args: `loss_bound` defaults to `L·D`; `smoothing_radius` overrides `ζ` (must be in `(0, r)`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `T < 1`, non-positive `L`/`loss_bound`, a domain without a
    /// certified inscribed radius, or a smoothing radius outside `(0, r)`.
    pub fn new(
        domain: &Domain,
        horizon: u64,
        lipschitz: f64,
        loss_bound: Option<f64>,
        smoothing_radius: Option<f64>,
    ) -> Result<Self> {
        if horizon == 0 {
            return Err(CoreError::invalid("horizon", ">= 1", horizon));
        }
        check_positive("lipschitz", lipschitz)?;
        let r = domain
            .inscribed_radius()
            .ok_or(CoreError::InvalidArgument {
                name: "domain",
                allowed: "a domain with a certified inscribed ball (Ene-Nguyen-Vladu Appendix D)",
                value: domain.kind().to_string(),
            })?;
        let diameter = domain.diameter();
        let loss_bound = loss_bound.unwrap_or(lipschitz * diameter);
        check_positive("loss_bound", loss_bound)?;
        let d = domain.affine_dim().max(1) as f64;
        let tf = horizon as f64;
        let t_batch = (tf.sqrt().ceil() as u64).max(1);
        let t_round = horizon.div_ceil(t_batch);
        let zeta_paper = diameter * d.sqrt() / tf.powf(0.25);
        let zeta = match smoothing_radius {
            Some(z) if z.is_finite() && z > 0.0 && z < r => z,
            Some(z) => {
                return Err(CoreError::invalid(
                    "smoothing_radius",
                    "in (0, inscribed radius)",
                    z,
                ));
            }
            None => zeta_paper.min(0.5 * r),
        };
        Ok(PrivateBanditParams {
            horizon,
            dim: domain.dim(),
            affine_dim: domain.affine_dim(),
            t_batch,
            t_round,
            eta: diameter / (tf.powf(0.75) * d.sqrt() * lipschitz),
            zeta,
            zeta_paper,
            lipschitz,
            diameter,
            loss_bound,
            inscribed_radius: r,
            shrink: zeta / r,
        })
    }

    /// `M = (d/ζ)·B`: the largest `|F_t|` (Lemma 5.1's per-round bound, with the loss bound `B`).
    pub fn max_gradient_scale(&self) -> f64 {
        self.affine_dim.max(1) as f64 / self.zeta * self.loss_bound
    }

    /// L1 change of one tree input `g̃_R` when one round's loss is replaced: `2 M √n` (only `F_t u_t`
    /// changes, `‖u_t‖₁ ≤ √n‖u_t‖₂`).
    pub fn sensitivity_l1(&self) -> f64 {
        2.0 * self.max_gradient_scale() * (self.dim as f64).sqrt()
    }

    /// L2 change of one tree input when one round's loss is replaced: `2 M`.
    pub fn sensitivity_l2(&self) -> f64 {
        2.0 * self.max_gradient_scale()
    }
}

/// Totals of a native run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSummary {
    /// Rounds played in this call.
    pub rounds: u64,
    /// Sum of the (unclipped) losses of the played points.
    pub total_loss: f64,
    /// Rounds whose loss exceeded the bound and was clipped before entering the gradient estimate.
    pub clipped: u64,
}

/// `NoisyGrad` of Algorithm 1 (lines 5-12) with Appendix D: one-point gradient estimates summed over a batch.
///
/// Query `y = c + (1 − ζ/r)(x̃ + ζu − c)` for `u` uniform on the unit sphere of the tangent space; feedback
/// `f(y)` clipped to `[−B, B]` adds `(d/ζ) f(y) u` to the batch sum `g̃_R` (Lemma 2.2 applied to
/// `f'(x) = f(c + (1 − ζ/r)(x − c))`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SmoothedBatchGradient {
    center: Vec<f64>,
    shrink: f64,
    zeta: f64,
    /// `d / ζ`.
    gain: f64,
    loss_bound: f64,
    batch: u64,
    in_batch: u64,
    /// Unnormalised Gaussian direction of the tangent space, and `1/‖direction‖`.
    direction: Vec<f64>,
    inv_norm: f64,
    query: Vec<f64>,
    sum: Vec<f64>,
    clipped: u64,
    rng: Generator,
}

impl SmoothedBatchGradient {
    fn new(params: &PrivateBanditParams, center: Vec<f64>, rng: Generator) -> Self {
        let n = center.len();
        SmoothedBatchGradient {
            center,
            shrink: params.shrink,
            zeta: params.zeta,
            gain: params.affine_dim.max(1) as f64 / params.zeta,
            loss_bound: params.loss_bound,
            batch: params.t_batch,
            in_batch: 0,
            direction: vec![0.0; n],
            inv_norm: 0.0,
            query: vec![0.0; n],
            sum: vec![0.0; n],
            clipped: 0,
            rng,
        }
    }

    /// Rounds of the current batch so far.
    pub fn in_batch(&self) -> u64 {
        self.in_batch
    }

    /// Losses clipped so far.
    pub fn clipped(&self) -> u64 {
        self.clipped
    }
}

impl NoisyGradient for SmoothedBatchGradient {
    #[inline]
    fn query(&mut self, domain: &mut Domain, iterate: &[f64]) -> &[f64] {
        // `direction` holds an unnormalised Gaussian of the tangent space; u = direction / norm.
        let norm = gaussian_in(&mut self.rng, &mut self.direction, |u| {
            domain.project_tangent(u)
        });
        self.inv_norm = 1.0 / norm;
        let keep = 1.0 - self.shrink;
        let step = self.zeta * self.inv_norm;
        for (((y, x), c), u) in self
            .query
            .iter_mut()
            .zip(iterate)
            .zip(&self.center)
            .zip(&self.direction)
        {
            *y = c + keep * (x + step * u - c);
        }
        &self.query
    }

    fn last_query(&self) -> &[f64] {
        &self.query
    }

    #[inline]
    fn observe(&mut self, loss: f64) -> bool {
        let bound = self.loss_bound;
        if loss.abs() > bound {
            self.clipped += 1;
        }
        let scaled = self.gain * loss.clamp(-bound, bound) * self.inv_norm;
        for (g, u) in self.sum.iter_mut().zip(&self.direction) {
            *g += scaled * u;
        }
        self.in_batch += 1;
        self.in_batch == self.batch
    }

    fn estimate(&self) -> &[f64] {
        &self.sum
    }

    fn reset(&mut self) {
        self.sum.fill(0.0);
        self.in_batch = 0;
    }
}

/// `NoisyMap` of Algorithm 1 (lines 13-14): batch sums go through the padded tree (`s̃_R`), and Frank-Wolfe
/// on `½‖x‖² − ⟨−η s̃_{R−1}, x⟩` makes one LMO call per step, warm-started from its previous iterate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrivateFrankWolfeMap {
    tree: TreeAggregator,
    fw: FrankWolfe,
    eta: f64,
    release: Vec<f64>,
}

impl PrivateFrankWolfeMap {
    fn new(tree: TreeAggregator, start: &[f64], eta: f64) -> Result<Self> {
        let target: Vec<f64> = tree.initial().iter().map(|s| -eta * s).collect();
        let fw = FrankWolfe::new(start, &target, false)?;
        Ok(PrivateFrankWolfeMap {
            release: vec![0.0; start.len()],
            tree,
            fw,
            eta,
        })
    }

    /// The tree of private prefix sums.
    pub fn tree(&self) -> &TreeAggregator {
        &self.tree
    }
}

impl NoisyMap for PrivateFrankWolfeMap {
    fn absorb(&mut self, estimate: &[f64]) {
        // Estimates are finite (bounded losses, unit directions) and there is one leaf per batch.
        self.tree
            .push(estimate, &mut self.release)
            .expect("one tree leaf per batch and finite batch gradients");
        let eta = self.eta;
        for (v, s) in self.fw.target_mut().iter_mut().zip(&self.release) {
            *v = -eta * s;
        }
    }

    #[inline]
    fn work(&mut self, domain: &mut Domain) {
        self.fw.step(domain);
    }

    fn iterate(&self) -> &[f64] {
        self.fw.x()
    }
}

/// The PrivateBandit learner (see the module docs): NoisyOCO with [`SmoothedBatchGradient`] and
/// [`PrivateFrankWolfeMap`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrivateBandit {
    params: PrivateBanditParams,
    oco: NoisyOco<SmoothedBatchGradient, PrivateFrankWolfeMap>,
    t: u64,
    strict: bool,
}

impl PrivateBandit {
    /// A learner over `domain` with schedule `params` and tree noise `noise` (scale 0 = the non-private
    /// Garber-Kretzu-style baseline, same code path).
    ///
    /// Streams: stream 1 of `seed` drives the tree's noise, stream 2 the sphere directions (both keyed from
    /// the OS when `secure`). With `strict`, a loss outside `[−B, B]` is an error instead of being clipped.
    ///
    /// Errors: [`CoreError::Shape`] if `params` were made for another domain; entropy failures.
    pub fn new(
        domain: Domain,
        params: PrivateBanditParams,
        noise: NoiseDistribution,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        let n = domain.dim();
        if params.dim != n || params.affine_dim != domain.affine_dim() {
            return Err(CoreError::Shape {
                name: "params",
                expected: format!("parameters for a domain of dimension {n}"),
                got: format!("dimension {}", params.dim),
            });
        }
        let tree = TreeAggregator::new(
            n,
            params.t_round,
            noise,
            true,
            Generator::for_stream(&seed, 1, secure)?,
        )?;
        let center = domain.interior_point().to_vec();
        let map = PrivateFrankWolfeMap::new(tree, &center, params.eta)?;
        let gradient = SmoothedBatchGradient::new(
            &params,
            center.clone(),
            Generator::for_stream(&seed, 2, secure)?,
        );
        let oco = NoisyOco::new(domain, gradient, map, center);
        Ok(PrivateBandit {
            params,
            oco,
            t: 0,
            strict,
        })
    }

    /// The schedule.
    pub fn params(&self) -> &PrivateBanditParams {
        &self.params
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        self.oco.domain()
    }

    /// The tree's noise distribution.
    pub fn noise(&self) -> NoiseDistribution {
        self.oco.map().tree().noise()
    }

    /// Rounds completed.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Losses clipped so far.
    pub fn clipped(&self) -> u64 {
        self.oco.gradient().clipped()
    }

    /// `x̃` of the current batch (before Appendix D's shrink).
    pub fn anchor(&self) -> &[f64] {
        self.oco.iterate()
    }

    /// The point to play this round (`y_t`, in the domain). Asking again before `tell` returns the same point.
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[f64]> {
        if self.t >= self.params.horizon {
            return Err(CoreError::HorizonExhausted {
                what: "PrivateBandit",
                horizon: self.params.horizon,
            });
        }
        Ok(self.oco.ask())
    }

    /// Report the loss `f_t(y_t)` of the point returned by [`PrivateBandit::ask`].
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a preceding `ask`;
    /// [`CoreError::NonFinite`] for NaN/inf; with `strict`, [`CoreError::InvalidArgument`] for
    /// `|loss| > B`.
    pub fn tell(&mut self, loss: f64) -> Result<()> {
        if !self.oco.pending() {
            return Err(CoreError::Protocol(
                "tell() must follow ask(): one loss per asked point".into(),
            ));
        }
        if !loss.is_finite() {
            return Err(CoreError::NonFinite {
                name: "loss",
                index: 0,
                value: loss,
            });
        }
        if self.strict && loss.abs() > self.params.loss_bound {
            return Err(CoreError::invalid(
                "loss",
                "within [-loss_bound, loss_bound] (strict=True)",
                loss,
            ));
        }
        self.step(loss);
        Ok(())
    }

    #[inline]
    fn step(&mut self, loss: f64) {
        self.oco.tell(loss);
        self.t += 1;
        if self.t == self.params.horizon && self.oco.gradient().in_batch() > 0 {
            // The last batch is shorter when T_batch does not divide T.
            self.oco.end_round();
        }
    }

    /// Play `rounds` rounds against `family` natively (rounds `t..t+rounds` of the family), recording the
    /// cumulative loss of the played points after each absolute round in `checkpoints` into `cumulative`.
    ///
    /// Same seed ⇒ the same actions as the equivalent `ask`/`tell` loop.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] if a point is pending; [`CoreError::Shape`] for a
    /// family of another dimension or mismatched checkpoint buffers; [`CoreError::HorizonExhausted`] if
    /// `rounds` exceeds the learner's or the family's remaining horizon; [`CoreError::InvalidArgument`] for
    /// unsorted checkpoints.
    pub fn run(
        &mut self,
        family: &LossFamily,
        rounds: u64,
        checkpoints: &[u64],
        cumulative: &mut [f64],
    ) -> Result<RunSummary> {
        if self.oco.pending() {
            return Err(CoreError::Protocol(
                "run() cannot start while an asked point awaits tell()".into(),
            ));
        }
        if family.dim() != self.params.dim || checkpoints.len() != cumulative.len() {
            return Err(CoreError::Shape {
                name: "losses",
                expected: format!(
                    "dimension {} (and one output per checkpoint)",
                    self.params.dim
                ),
                got: format!("dimension {}", family.dim()),
            });
        }
        let end = self.t + rounds;
        if end > self.params.horizon || end > family.horizon() {
            return Err(CoreError::HorizonExhausted {
                what: "PrivateBandit",
                horizon: self.params.horizon.min(family.horizon()),
            });
        }
        check_checkpoints(checkpoints, end)?;
        let (start, clipped_before) = (self.t, self.clipped());
        let mut total = 0.0;
        let mut next = checkpoints
            .iter()
            .position(|&c| c > start)
            .unwrap_or(checkpoints.len());
        cumulative[..next].fill(0.0);
        while self.t < end {
            let loss = family.value(self.t, self.oco.ask());
            total += loss;
            self.step(loss);
            while next < checkpoints.len() && checkpoints[next] == self.t {
                cumulative[next] = total;
                next += 1;
            }
        }
        Ok(RunSummary {
            rounds,
            total_loss: total,
            clipped: self.clipped() - clipped_before,
        })
    }

    /// Serialize the learner (format-versioned). Contains unreleased sums: as sensitive as the data.
    ///
    /// Errors: [`CoreError::State`] (not expected).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        to_state_bytes(self)
    }

    /// Restore a learner from [`PrivateBandit::to_bytes`]; it continues bit-identically.
    ///
    /// Errors: [`CoreError::State`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        from_state_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::Simplex;
    use crate::losses::{LossKind, RowOrder};

    fn learner(horizon: u64, sigma: f64, seed: u64) -> PrivateBandit {
        let domain = Domain::Simplex(Simplex::new(4).unwrap());
        let params = PrivateBanditParams::new(&domain, horizon, 1.0, None, None).unwrap();
        PrivateBandit::new(
            domain,
            params,
            NoiseDistribution::Gaussian { sigma },
            [seed, 0, 0, 0],
            false,
            false,
        )
        .unwrap()
    }

    #[test]
    fn schedule_matches_line_one() {
        let domain = Domain::Simplex(Simplex::new(5).unwrap());
        let p = PrivateBanditParams::new(&domain, 10_000, 2.0, None, None).unwrap();
        let d: f64 = 4.0;
        let diam = 2f64.sqrt();
        assert_eq!((p.t_batch, p.t_round), (100, 100));
        assert!((p.eta - diam / (1000.0 * d.sqrt() * 2.0)).abs() < 1e-15);
        assert!((p.zeta_paper - diam * 2.0 / 10.0).abs() < 1e-15);
        assert!((p.zeta - 0.5 / 20f64.sqrt()).abs() < 1e-15); // capped at r/2, r = 1/sqrt(20)
        assert!((p.loss_bound - 2.0 * diam).abs() < 1e-15);
    }

    #[test]
    fn every_query_is_feasible_and_run_equals_ask_tell() {
        let data: Vec<f64> = (0..400)
            .map(|i| 0.9 + 0.2 * ((i * 37 % 17) as f64 / 17.0))
            .collect();
        let fam = LossFamily::new(LossKind::PortfolioLogLoss, data, 4)
            .unwrap()
            .reordered(2_000, RowOrder::Bootstrap { seed: 1 })
            .unwrap();
        let mut a = learner(2_000, 5.0, 9);
        let mut b = learner(2_000, 5.0, 9);
        let simplex = Simplex::new(4).unwrap();
        let mut total = 0.0;
        for t in 0..2_000 {
            let y = a.ask().unwrap().to_vec();
            assert!(simplex.contains(&y, 1e-12), "t={t} y={y:?}");
            let f = fam.value(t, &y);
            total += f;
            a.tell(f).unwrap();
        }
        let mut cum = [0.0; 2];
        let summary = b.run(&fam, 2_000, &[1_000, 2_000], &mut cum).unwrap();
        assert_eq!(summary.total_loss, total);
        assert_eq!(cum[1], total);
        assert_eq!(a.anchor(), b.anchor());
    }

    #[test]
    fn protocol_errors_leave_state_alone() {
        let mut l = learner(10, 1.0, 1);
        assert!(matches!(l.tell(0.0), Err(CoreError::Protocol(_))));
        let y = l.ask().unwrap().to_vec();
        assert_eq!(l.ask().unwrap(), &y[..]);
        let before = l.to_bytes().unwrap();
        assert!(l.tell(f64::NAN).is_err());
        assert_eq!(l.to_bytes().unwrap(), before);
        l.tell(0.1).unwrap();
        assert!(matches!(l.tell(0.1), Err(CoreError::Protocol(_))));
    }

    #[test]
    fn restored_learner_continues_bit_identically() {
        let mut a = learner(500, 2.0, 4);
        for _ in 0..123 {
            a.ask().unwrap();
            a.tell(0.3).unwrap();
        }
        let mut b = PrivateBandit::from_bytes(&a.to_bytes().unwrap()).unwrap();
        for _ in 0..300 {
            assert_eq!(a.ask().unwrap(), b.ask().unwrap());
            a.tell(-0.2).unwrap();
            b.tell(-0.2).unwrap();
        }
    }
}
