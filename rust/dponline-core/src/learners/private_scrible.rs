//! PrivateSCRiBLe: bandit linear optimisation with a self-concordant barrier, fed with Laplace-noised feedback.
//!
//! Source: Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017), Theorem 4.5:
//! Algorithm 4 (release `f̂_t = f_t + Lap(λ)`, one release per round) around SCRiBLe (Abernethy, Hazan &
//! Rakhlin 2012). Per round:
//!
//! * `x_t = argmin_x η⟨L̂_{t−1}, x⟩ + R(x)` with `R` a ν-self-concordant barrier of the domain — closed forms
//!   here (below);
//! * eigen-decompose `∇²R(x_t) = Σ λ_i e_i e_iᵀ`, draw `i` uniformly and a sign `s = ±1`, play
//!   `y_t = x_t + s λ_i^{−1/2} e_i` (on the Dikin ellipsoid, which lies in the domain);
//! * observe `f_t = ⟨ℓ_t, y_t⟩` clipped to `[−B, B]`, release `f̂_t = f_t + Lap(λ)`, and add
//!   `ℓ̂_t = n f̂_t s λ_i^{1/2} e_i` to `L̂`.
//!
//! Domains and barriers:
//! * box `[l, u]`: `R = −Σ ln(u_i − x_i) + ln(x_i − l_i)` (ν = 2n); the argmin is coordinate-wise,
//!   `x_i = m_i − c_i h_i² / (1 + sqrt(1 + c_i² h_i²))` with `c = η L̂`, centre `m`, half-width `h`; the Hessian
//!   is diagonal, `λ_i = 1/(u_i − x_i)² + 1/(x_i − l_i)²`, `e_i` the coordinate vectors;
//! * ball of radius `r`: `R = −ln(r² − ‖x‖²)` (ν = 1); the argmin is `x = −τ L̂/‖L̂‖` with
//!   `τ = a r²/(1 + sqrt(1 + a² r²))`, `a = η‖L̂‖`; the Hessian `2I/σ + 4xxᵀ/σ²` (`σ = r² − ‖x‖²`) has
//!   eigenvector `x̂ = x/‖x‖` (eigenvalue `2/σ + 4‖x‖²/σ²`) and the orthogonal complement (eigenvalue `2/σ`),
//!   for which the columns of the Householder reflection sending `e_1` to `x̂` give an orthonormal basis.
//!
//! Privacy: as PrivateEXP3 — one Laplace release per round of a value in `[−B, B]`, so `λ = 2B/ε` makes the
//! played points ε-DP per round's loss (replacement).

use serde::{Deserialize, Serialize};

use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite, check_positive};
use crate::losses::{LossFamily, LossKind, check_checkpoints};
use crate::noise::{NoiseDistribution, Sampler, SumOf, WithSampler};
use crate::rng::{Generator, Seed, from_state_bytes, to_state_bytes};

use super::{RunSummary, check_len_pair};

/// The barrier's domain.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Barrier {
    Box { mid: Vec<f64>, half: Vec<f64> },
    Ball { radius: f64 },
}

/// Constants of PrivateSCRiBLe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScribleParams {
    /// Horizon `T`.
    pub horizon: u64,
    /// Dimension `n`.
    pub dim: usize,
    /// Bound `B` on `|⟨ℓ, y⟩|` (feedback clipped to `[−B, B]`).
    pub loss_bound: f64,
    /// Laplace scale `λ` (0 = non-private).
    pub noise_scale: f64,
    /// `B' = B + 2λ ln T`: the range of the noisy feedback with probability `≥ 1 − 1/T`.
    pub noisy_range: f64,
    /// Barrier parameter `ν` (2n for the box, 1 for the ball).
    pub nu: f64,
    /// Step size `η = sqrt(ν ln T / (2 n² B'² T))`.
    pub eta: f64,
}

impl ScribleParams {
    /// Regret bound `ν ln T / η + 2 η n² B'² T + B` (the SCRiBLe analysis, Abernethy-Hazan-Rakhlin 2012
    /// Theorem 5.1 with the feedback range `B'`; the last `B` pays for the noise event's complement).
    pub fn regret_bound(&self) -> f64 {
        let (n, tf) = (self.dim as f64, self.horizon as f64);
        let log_t = tf.ln().max(1.0);
        self.nu * log_t / self.eta
            + 2.0 * self.eta * n * n * self.noisy_range * self.noisy_range * tf
            + self.loss_bound
    }
}

struct ScalarDraw<'a> {
    rng: &'a mut Generator,
}

impl WithSampler for ScalarDraw<'_> {
    type Output = f64;
    #[inline]
    fn call<S: Sampler>(self, s: S) -> f64 {
        crate::with_generator!(self.rng, g => s.sample(g))
    }
}

fn scalar_noise() -> SumOf {
    NoiseDistribution::Laplace { scale: 0.0 }.sum_of(1)
}

/// The PrivateSCRiBLe learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateScrible {
    params: ScribleParams,
    barrier: Barrier,
    domain: Domain,
    /// `L̂`, the sum of the loss estimates.
    estimate: Vec<f64>,
    /// `x_t`, the FTRL point.
    center: Vec<f64>,
    /// `y_t`, the played point.
    played: Vec<f64>,
    /// `s λ_i^{1/2} e_i · n` for the pending round (the estimate is `f̂` times this).
    gain: Vec<f64>,
    rng: Generator,
    noise_rng: Generator,
    #[serde(skip, default = "scalar_noise")]
    noise: SumOf,
    t: u64,
    pending: bool,
    strict: bool,
    clipped: u64,
}

impl PrivateScrible {
    /// A learner on a `Box` or `L2Ball` domain for `horizon` rounds, feedback bound `B`, Laplace scale `λ`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another domain, `T < 1`, a bad `B` or `λ`, or non-finite
    /// derived constants.
    pub fn new(
        domain: Domain,
        horizon: u64,
        loss_bound: f64,
        noise_scale: f64,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        if horizon == 0 {
            return Err(CoreError::invalid("horizon", ">= 1", horizon));
        }
        check_positive("loss_bound", loss_bound)?;
        crate::error::check_nonnegative("noise scale", noise_scale)?;
        let n = domain.dim();
        let (barrier, nu) = match &domain {
            Domain::Box(_) => {
                let mut d = domain.clone();
                let (mut lower, mut upper) = (vec![0.0; n], vec![0.0; n]);
                d.lmo(&vec![1.0; n], &mut lower);
                d.lmo(&vec![-1.0; n], &mut upper);
                let mid = lower
                    .iter()
                    .zip(&upper)
                    .map(|(l, u)| 0.5 * (l + u))
                    .collect();
                let half = lower
                    .iter()
                    .zip(&upper)
                    .map(|(l, u)| 0.5 * (u - l))
                    .collect();
                (Barrier::Box { mid, half }, 2.0 * n as f64)
            }
            Domain::L2Ball(_) => (
                Barrier::Ball {
                    radius: domain.diameter() / 2.0,
                },
                1.0,
            ),
            other => {
                return Err(CoreError::InvalidArgument {
                    name: "domain",
                    allowed: "a Box or an L2Ball (domains with a closed-form barrier argmin)",
                    value: other.kind().to_string(),
                });
            }
        };
        let tf = horizon as f64;
        let range = loss_bound + 2.0 * noise_scale * tf.ln();
        let nf = n as f64;
        let eta = (nu * tf.ln().max(1.0) / (2.0 * nf * nf * range * range * tf)).sqrt();
        if !(eta.is_finite() && eta > 0.0 && (range * nf * tf).is_finite()) {
            return Err(CoreError::InvalidArgument {
                name: "horizon/loss_bound/epsilon",
                allowed: "values whose step size and noise range are finite and > 0",
                value: format!("eta = {eta}, range = {range}"),
            });
        }
        let params = ScribleParams {
            horizon,
            dim: n,
            loss_bound,
            noise_scale,
            noisy_range: range,
            nu,
            eta,
        };
        let mut learner = PrivateScrible {
            params,
            barrier,
            domain,
            estimate: crate::alloc::zeros("loss estimate", n)?,
            center: crate::alloc::zeros("FTRL point", n)?,
            played: crate::alloc::zeros("played point", n)?,
            gain: crate::alloc::zeros("exploration direction", n)?,
            rng: Generator::for_stream(&seed, 2, secure)?,
            noise_rng: Generator::for_stream(&seed, 1, secure)?,
            noise: NoiseDistribution::laplace(noise_scale)?.sum_of(1),
            t: 0,
            pending: false,
            strict,
            clipped: 0,
        };
        learner.update_center();
        Ok(learner)
    }

    /// The constants.
    pub fn params(&self) -> &ScribleParams {
        &self.params
    }

    /// Rounds completed.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Feedback values clipped so far.
    pub fn clipped(&self) -> u64 {
        self.clipped
    }

    /// The current FTRL point `x_t` (the centre of the exploration).
    pub fn center(&self) -> &[f64] {
        &self.center
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// `x = argmin η⟨L̂, x⟩ + R(x)`, closed forms (module docs).
    fn update_center(&mut self) {
        let eta = self.params.eta;
        match &self.barrier {
            Barrier::Box { mid, half } => {
                for (((x, &g), &m), &h) in self
                    .center
                    .iter_mut()
                    .zip(&self.estimate)
                    .zip(mid)
                    .zip(half)
                {
                    let c = eta * g;
                    *x = m - c * h * h / (1.0 + (1.0 + c * c * h * h).sqrt());
                }
            }
            Barrier::Ball { radius } => {
                let norm = self.estimate.iter().map(|v| v * v).sum::<f64>().sqrt();
                let a = eta * norm;
                if a > 0.0 && a.is_finite() {
                    let r = *radius;
                    let tau = a * r * r / (1.0 + (1.0 + a * a * r * r).sqrt());
                    for (x, &g) in self.center.iter_mut().zip(&self.estimate) {
                        *x = -tau * g / norm;
                    }
                } else {
                    self.center.fill(0.0);
                }
            }
        }
    }

    /// The point `y_t` to play (asking again before `tell` returns the same point).
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[f64]> {
        if self.pending {
            return Ok(&self.played);
        }
        if self.t >= self.params.horizon {
            return Err(CoreError::HorizonExhausted {
                what: "PrivateSCRiBLe",
                horizon: self.params.horizon,
            });
        }
        self.explore();
        Ok(&self.played)
    }

    /// Draw the eigen-direction and sign, set `played` and `gain`.
    fn explore(&mut self) {
        let n = self.params.dim;
        let nf = n as f64;
        let i = ((self.rng.open01() * nf) as usize).min(n - 1);
        let sign = if self.rng.open01() < 0.5 { -1.0 } else { 1.0 };
        self.gain.fill(0.0);
        match &self.barrier {
            Barrier::Box { mid, half } => {
                let (x, m, h) = (self.center[i], mid[i], half[i]);
                let (up, down) = (m + h - x, x - (m - h));
                let lambda = 1.0 / (up * up) + 1.0 / (down * down);
                let root = lambda.sqrt();
                self.played.copy_from_slice(&self.center);
                self.played[i] = x + sign / root;
                self.gain[i] = nf * sign * root;
            }
            Barrier::Ball { radius } => {
                let xs: f64 = self.center.iter().map(|v| v * v).sum();
                let sigma = radius * radius - xs;
                let norm = xs.sqrt();
                // Orthonormal basis: columns of the Householder reflection H with H e_1 = x̂ (or e_i when x = 0).
                let lambda = if i == 0 {
                    2.0 / sigma + 4.0 * xs / (sigma * sigma)
                } else {
                    2.0 / sigma
                };
                let root = lambda.sqrt();
                // Column i of H = I − 2 v vᵀ/‖v‖², v = e_1 − x̂ (H = I when x̂ = e_1 or x = 0).
                let dir = &mut self.played;
                dir.fill(0.0);
                dir[i] = 1.0;
                if norm > 0.0 {
                    let mut vv = 0.0;
                    for (k, &c) in self.center.iter().enumerate() {
                        let v = f64::from(u8::from(k == 0)) - c / norm;
                        vv += v * v;
                    }
                    if vv > 1e-30 {
                        let vi = f64::from(u8::from(i == 0)) - self.center[i] / norm;
                        let coef = 2.0 * vi / vv;
                        for (k, (d, &c)) in dir.iter_mut().zip(&self.center).enumerate() {
                            let v = f64::from(u8::from(k == 0)) - c / norm;
                            *d -= coef * v;
                        }
                    }
                }
                for ((g, d), &c) in self.gain.iter_mut().zip(dir.iter_mut()).zip(&self.center) {
                    *g = nf * sign * root * *d;
                    *d = c + sign * *d / root;
                }
            }
        }
        self.pending = true;
    }

    /// Report `⟨ℓ_t, y_t⟩` for the asked point.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without `ask`; [`CoreError::NonFinite`]; with `strict`,
    /// [`CoreError::InvalidArgument`] for `|loss| > B`.
    pub fn tell(&mut self, loss: f64) -> Result<()> {
        if !self.pending {
            return Err(CoreError::Protocol(
                "tell() must follow ask(): one loss per asked point".into(),
            ));
        }
        check_finite("loss", &[loss])?;
        if self.strict && loss.abs() > self.params.loss_bound {
            return Err(CoreError::invalid(
                "loss",
                "within [-loss_bound, loss_bound] (strict=True)",
                loss,
            ));
        }
        self.update(loss);
        Ok(())
    }

    fn update(&mut self, loss: f64) {
        let bound = self.params.loss_bound;
        if loss.abs() > bound {
            self.clipped += 1;
        }
        let released = loss.clamp(-bound, bound)
            + self.noise.with_sampler(ScalarDraw {
                rng: &mut self.noise_rng,
            });
        for (l, g) in self.estimate.iter_mut().zip(&self.gain) {
            *l += released * g;
        }
        self.pending = false;
        self.t += 1;
        if self.t < self.params.horizon {
            self.update_center();
        }
    }

    /// Check that `rounds` rounds of a linear `family` can be played, without changing anything.
    ///
    /// Errors: [`CoreError::Protocol`], [`CoreError::Shape`], [`CoreError::InvalidArgument`] (non-linear family),
    /// [`CoreError::HorizonExhausted`].
    pub fn check_run(&self, family: &LossFamily, rounds: u64) -> Result<()> {
        if self.pending {
            return Err(CoreError::Protocol(
                "run() cannot start while an asked point awaits tell()".into(),
            ));
        }
        if family.kind() != LossKind::Linear {
            return Err(CoreError::invalid(
                "losses",
                "a linear family",
                "a portfolio family",
            ));
        }
        if family.dim() != self.params.dim {
            return Err(CoreError::Shape {
                name: "losses",
                expected: format!("dimension {}", self.params.dim),
                got: format!("dimension {}", family.dim()),
            });
        }
        let limit = self.params.horizon.min(family.horizon());
        super::check_room("PrivateSCRiBLe", self.t, rounds, limit)
    }

    /// Play `rounds` rounds of a linear family natively (bandit feedback `⟨ℓ_t, y_t⟩`).
    ///
    /// Errors (state unchanged): as [`PrivateScrible::check_run`]; bad checkpoints.
    pub fn run(
        &mut self,
        family: &LossFamily,
        rounds: u64,
        checkpoints: &[u64],
        cumulative: &mut [f64],
    ) -> Result<RunSummary> {
        self.check_run(family, rounds)?;
        check_len_pair(checkpoints, cumulative)?;
        let (start, end) = (self.t, self.t + rounds);
        check_checkpoints(checkpoints, end)?;
        let clipped_before = self.clipped;
        let mut total = 0.0;
        let mut next = checkpoints.partition_point(|&c| c <= start);
        cumulative[..next].fill(0.0);
        while self.t < end {
            self.explore();
            let loss = family.value(self.t, &self.played);
            total += loss;
            self.update(loss);
            while next < checkpoints.len() && checkpoints[next] == self.t {
                cumulative[next] = total;
                next += 1;
            }
        }
        Ok(RunSummary {
            rounds,
            total_loss: total,
            clipped: self.clipped - clipped_before,
        })
    }

    /// Serialize the learner (format-versioned).
    ///
    /// Errors: [`CoreError::State`] (not expected).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        to_state_bytes(self)
    }

    /// Restore from [`PrivateScrible::to_bytes`].
    ///
    /// Errors: [`CoreError::State`] for corrupt or inconsistent bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut learner: Self = from_state_bytes(bytes)?;
        let n = learner.params.dim;
        let fits = match &learner.barrier {
            Barrier::Box { mid, half } => mid.len() == n && half.len() == n,
            Barrier::Ball { .. } => true,
        };
        let consistent = fits
            && n > 0
            && learner.domain.dim() == n
            && [
                &learner.estimate,
                &learner.center,
                &learner.played,
                &learner.gain,
            ]
            .iter()
            .all(|v| v.len() == n);
        if !consistent {
            return Err(CoreError::State(
                "PrivateSCRiBLe state is inconsistent".into(),
            ));
        }
        learner.noise = NoiseDistribution::laplace(learner.params.noise_scale)?.sum_of(1);
        Ok(learner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::{Hyperrectangle, L2Ball};

    #[test]
    fn played_points_are_feasible_and_estimates_unbiased_directions() {
        for domain in [
            Domain::Box(Hyperrectangle::new(vec![-1.0, 0.0, 2.0], vec![1.0, 3.0, 2.5]).unwrap()),
            Domain::L2Ball(L2Ball::new(3, 2.0).unwrap()),
        ] {
            let mut l =
                PrivateScrible::new(domain.clone(), 2000, 5.0, 1.0, [1, 2, 3, 4], false, false)
                    .unwrap();
            for t in 0..2000 {
                let y = l.ask().unwrap().to_vec();
                assert!(domain.contains(&y, 1e-9), "{} t={t} {y:?}", domain.kind());
                // The exploration step has Hessian norm 1 (it lies on the Dikin ellipsoid).
                let loss = 0.3 * y[0] - 0.2 * y[1] + 0.1 * y[2];
                l.tell(loss).unwrap();
            }
        }
    }

    #[test]
    fn the_step_lies_on_the_dikin_ellipsoid_along_an_eigenvector() {
        // For d = y − x: dᵀ∇²R(x) d = 1 and the estimate direction is n ∇²R(x) d (= n s λ^{1/2} e).
        let n = 4;
        type Hessian = Box<dyn Fn(&[f64]) -> Vec<Vec<f64>>>;
        let hessians: Vec<(Domain, Hessian)> = vec![
            (
                Domain::L2Ball(L2Ball::new(n, 1.5).unwrap()),
                Box::new(|x: &[f64]| {
                    let sigma = 2.25 - x.iter().map(|v| v * v).sum::<f64>();
                    (0..4)
                        .map(|i| {
                            (0..4)
                                .map(|j| {
                                    f64::from(u8::from(i == j)) * 2.0 / sigma
                                        + 4.0 * x[i] * x[j] / (sigma * sigma)
                                })
                                .collect()
                        })
                        .collect()
                }),
            ),
            (
                Domain::Box(Hyperrectangle::new(vec![-1.0; 4], vec![1.0, 2.0, 3.0, 4.0]).unwrap()),
                Box::new(|x: &[f64]| {
                    let upper = [1.0, 2.0, 3.0, 4.0];
                    (0..4)
                        .map(|i| {
                            (0..4)
                                .map(|j| {
                                    if i == j {
                                        1.0 / (upper[i] - x[i]).powi(2) + 1.0 / (x[i] + 1.0).powi(2)
                                    } else {
                                        0.0
                                    }
                                })
                                .collect()
                        })
                        .collect()
                }),
            ),
        ];
        for (domain, hessian) in hessians {
            let mut l = PrivateScrible::new(domain, 100, 1.0, 0.0, [0; 4], false, false).unwrap();
            l.estimate = vec![0.3, -1.0, 2.0, 0.5];
            l.update_center();
            let x = l.center.clone();
            let h = hessian(&x);
            for _ in 0..50 {
                l.pending = false;
                l.explore();
                let d: Vec<f64> = l.played.iter().zip(&x).map(|(y, c)| y - c).collect();
                let hd: Vec<f64> = h
                    .iter()
                    .map(|row| row.iter().zip(&d).map(|(a, b)| a * b).sum())
                    .collect();
                let quad: f64 = d.iter().zip(&hd).map(|(a, b)| a * b).sum();
                assert!((quad - 1.0).abs() < 1e-9, "{quad}");
                for (g, v) in l.gain.iter().zip(&hd) {
                    assert!(
                        (g - n as f64 * v).abs() < 1e-9 * (1.0 + g.abs()),
                        "{g} vs {v}"
                    );
                }
            }
        }
    }
}
