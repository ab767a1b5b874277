//! NoisyOCO: online convex optimisation with noisy gradients and a noisy mirror map.
//!
//! Source: Ene, Nguyen & Vladu (AAAI 2021), Algorithm 2 and Lemma 4.1. With a strongly convex mirror map
//! `ω` and step `η`, each round plays `x̃_t = NoisyMap(−η s_{t−1})`, obtains `g̃_t = NoisyGrad(f_t, x̃_t)` and
//! sets `s_t = s_{t−1} + g̃_t`. If `E g̃ = ∇f_t(x̃_t)`, `E‖g̃‖² ≤ κ²` and `E‖∇ω*(g) − NoisyMap(g)‖ ≤ γ`, the
//! expected regret is `O(T^{1/2} κ D_ω + T κ γ)`.
//!
//! [`NoisyOco`] is the template as a state machine over *learner steps*: a NoisyOCO round may span several
//! steps (PrivateBandit's batches), so a [`NoisyGradient`] says when its estimate is complete and a
//! [`NoisyMap`] spends one unit of work per step (PrivateBandit: one Frank-Wolfe iteration, i.e. one LMO
//! call, charged to that step as in the paper).

use serde::{Deserialize, Serialize};

use crate::domains::Domain;

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
    fn absorb(&mut self, estimate: &[f64]) -> crate::Result<()>;
    /// Spend one step's work (e.g. one LMO call) on the next iterate.
    fn work(&mut self, domain: &mut Domain);
    /// The next round's iterate, as computed so far.
    fn iterate(&self) -> &[f64];
}

/// Algorithm 2 as a state machine: `ask` a point, `tell` its loss.
#[derive(Debug, Serialize, Deserialize)]
pub struct NoisyOco<G, M> {
    domain: Domain,
    gradient: G,
    map: M,
    /// `x̃` of the current round.
    iterate: Vec<f64>,
    pending: bool,
}

impl<G: NoisyGradient, M: NoisyMap> NoisyOco<G, M> {
    /// A template over `domain` starting from `iterate` (the first round's `x̃`).
    pub fn new(domain: Domain, gradient: G, map: M, iterate: Vec<f64>) -> Self {
        NoisyOco {
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

    /// The point to play (the same point until [`NoisyOco::tell`]).
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
    pub fn tell(&mut self, loss: f64) -> crate::Result<()> {
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
    pub fn end_round(&mut self) -> crate::Result<()> {
        self.iterate.copy_from_slice(self.map.iterate());
        self.map.absorb(self.gradient.estimate())?;
        self.gradient.reset();
        Ok(())
    }
}
