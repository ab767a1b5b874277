//! Frank-Wolfe (conditional gradient) for `min_{x ∈ D} q(x) = ½‖x‖² − ⟨v, x⟩`, i.e. the Euclidean projection of
//! `v` onto `D` — the `NoisyMap` of Ene-Nguyen-Vladu (2021), Algorithm 1 line 14 — with exact line search.
//!
//! Each iteration makes one LMO call: `s = lmo(∇q(x)) = lmo(x − v)`, then `x ← x + γ(s − x)` with the exact
//! minimiser `γ = clip(⟨v − x, s − x⟩ / ‖s − x‖², 0, 1)` of the quadratic along the segment. After `k`
//! iterations from any feasible start, `q(x_k) − q* ≤ 2D²/(k+2)`, hence (1-strong convexity)
//! `‖x_k − x*‖ ≤ 2D/√(k+2) ≤ √20·D/√k` — Lemma C.4 of Ene-Nguyen-Vladu. The Frank-Wolfe gap
//! `⟨x − v, x − s⟩ ≥ q(x) − q*` is returned as a certificate.
//!
//! Optionally the iterate is kept as an explicit convex combination of LMO vertices (the *active set*), so a
//! fractional point can be rounded to a vertex with the right expectation ([`FrankWolfe::sample_vertex`]).

use serde::{Deserialize, Serialize};

use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite, check_len};
use crate::rng::Generator;

/// Vertices with convex weights; the iterate equals `Σ w_i v_i`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ActiveSet {
    dim: usize,
    /// Row-major `(len, dim)`.
    vertices: Vec<f64>,
    weights: Vec<f64>,
}

impl ActiveSet {
    /// Number of distinct vertices.
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Whether there is no vertex.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Vertex `i` (length `dim`).
    pub fn vertex(&self, i: usize) -> &[f64] {
        &self.vertices[i * self.dim..(i + 1) * self.dim]
    }

    /// Convex weights, summing to 1.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    fn start(&mut self, vertex: &[f64]) {
        self.dim = vertex.len();
        self.vertices.clear();
        self.vertices.extend_from_slice(vertex);
        self.weights.clear();
        self.weights.push(1.0);
    }

    /// Record `x ← (1−γ)x + γ s`.
    fn step(&mut self, s: &[f64], gamma: f64) {
        self.weights.iter_mut().for_each(|w| *w *= 1.0 - gamma);
        let existing = (0..self.len()).find(|&i| self.vertex(i) == s);
        match existing {
            Some(i) => self.weights[i] += gamma,
            None => {
                self.vertices.extend_from_slice(s);
                self.weights.push(gamma);
            }
        }
        if gamma >= 1.0 {
            // Full step: only `s` remains.
            let keep = existing.unwrap_or(self.len() - 1);
            let v = self.vertex(keep).to_vec();
            self.start(&v);
        }
    }
}

/// One Frank-Wolfe run on `½‖x‖² − ⟨v, x⟩` over a domain, advanced one LMO call at a time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrankWolfe {
    x: Vec<f64>,
    v: Vec<f64>,
    grad: Vec<f64>,
    vertex: Vec<f64>,
    gap: f64,
    active: Option<ActiveSet>,
}

impl FrankWolfe {
    /// Start at the feasible point `x0` with target `v` (both of length `domain.dim()`).
    ///
    /// With `track_active_set`, `x0` must be a vertex of the domain (e.g. an LMO output); the iterate is then
    /// kept as a convex combination of vertices.
    ///
    /// Errors: [`CoreError::Shape`] or [`CoreError::NonFinite`] for bad `x0` / `v`.
    pub fn new(x0: &[f64], v: &[f64], track_active_set: bool) -> Result<Self> {
        let n = x0.len();
        check_len("v", v, n)?;
        check_finite("x0", x0)?;
        check_finite("v", v)?;
        let active = track_active_set.then(|| {
            let mut a = ActiveSet::default();
            a.start(x0);
            a
        });
        Ok(FrankWolfe {
            x: x0.to_vec(),
            v: v.to_vec(),
            grad: vec![0.0; n],
            vertex: vec![0.0; n],
            gap: f64::INFINITY,
            active,
        })
    }

    /// The target `v`.
    pub fn target(&self) -> &[f64] {
        &self.v
    }

    /// Mutable access to the target `v` (warm start: the iterate is kept); the caller keeps it finite.
    pub fn target_mut(&mut self) -> &mut [f64] {
        &mut self.v
    }

    /// One iteration (one LMO call). Returns the Frank-Wolfe gap at the iterate before the step.
    #[inline]
    pub fn step(&mut self, domain: &mut Domain) -> f64 {
        for ((g, x), v) in self.grad.iter_mut().zip(&self.x).zip(&self.v) {
            *g = x - v;
        }
        domain.lmo(&self.grad, &mut self.vertex);
        // gap = ⟨∇q(x), x − s⟩ = ⟨v − x, s − x⟩ (the line-search numerator); dd = ‖s − x‖².
        let (gap, dd) = crate::vecops::gap_and_distance(&self.grad, &self.x, &self.vertex);
        let gamma = if dd > 0.0 {
            (gap / dd).clamp(0.0, 1.0)
        } else {
            0.0
        };
        if gamma > 0.0 {
            for (x, s) in self.x.iter_mut().zip(&self.vertex) {
                *x += gamma * (s - *x);
            }
            if let Some(active) = self.active.as_mut() {
                active.step(&self.vertex, gamma);
            }
        }
        self.gap = gap;
        gap
    }

    /// The current iterate.
    pub fn x(&self) -> &[f64] {
        &self.x
    }

    /// Frank-Wolfe gap of the last step (an upper bound on `q(x) − q*` before that step).
    pub fn gap(&self) -> f64 {
        self.gap
    }

    /// The active set, if tracked.
    pub fn active_set(&self) -> Option<&ActiveSet> {
        self.active.as_ref()
    }

    /// Write into `out` a vertex drawn with probability equal to its weight, so `E[out] = x`.
    ///
    /// Errors: [`CoreError::Protocol`] if the active set is not tracked.
    pub fn sample_vertex(&self, rng: &mut Generator, out: &mut [f64]) -> Result<()> {
        let active = self.active.as_ref().ok_or_else(|| {
            CoreError::Protocol("sample_vertex needs track_active_set=True".into())
        })?;
        let mut u = rng.open01();
        let mut chosen = active.len() - 1;
        for (i, w) in active.weights().iter().enumerate() {
            if u < *w {
                chosen = i;
                break;
            }
            u -= w;
        }
        out.copy_from_slice(active.vertex(chosen));
        Ok(())
    }
}

/// Run `iterations` Frank-Wolfe steps for the projection of `v` onto `domain`, starting from the vertex
/// `lmo(−v)`, tracking the active set. Returns the solver.
///
/// Errors: [`CoreError::Shape`] / [`CoreError::NonFinite`] for a bad `v`.
pub fn project(domain: &mut Domain, v: &[f64], iterations: u64) -> Result<FrankWolfe> {
    check_len("v", v, domain.dim())?;
    check_finite("v", v)?;
    let mut start = vec![0.0; v.len()];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    domain.lmo(&neg, &mut start);
    let mut fw = FrankWolfe::new(&start, v, true)?;
    for _ in 0..iterations {
        fw.step(domain);
    }
    Ok(fw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::Simplex;

    /// Euclidean projection onto the simplex by sorting (Held, Wolfe & Crowder 1974).
    fn simplex_projection(v: &[f64]) -> Vec<f64> {
        let mut u = v.to_vec();
        u.sort_by(|a, b| b.total_cmp(a));
        let (mut cum, mut theta) = (0.0, 0.0);
        for (j, uj) in u.iter().enumerate() {
            cum += uj;
            let t = (cum - 1.0) / (j as f64 + 1.0);
            if uj - t > 0.0 {
                theta = t;
            }
        }
        v.iter().map(|x| (x - theta).max(0.0)).collect()
    }

    #[test]
    fn reaches_the_projection_within_lemma_c4() {
        let mut domain = Domain::Simplex(Simplex::new(6).unwrap());
        let v = [0.3, -0.2, 0.9, 0.1, 0.85, -1.0];
        let exact = simplex_projection(&v);
        for k in [10u64, 100, 1000] {
            let fw = project(&mut domain, &v, k).unwrap();
            let err = fw
                .x()
                .iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                err <= 20f64.sqrt() * domain.diameter() / (k as f64).sqrt(),
                "k={k} err={err}"
            );
            let active = fw.active_set().unwrap();
            let w: f64 = active.weights().iter().sum();
            assert!((w - 1.0).abs() < 1e-12);
            let mut rebuilt = [0.0; 6];
            for i in 0..active.len() {
                rebuilt
                    .iter_mut()
                    .zip(active.vertex(i))
                    .for_each(|(r, x)| *r += active.weights()[i] * x);
            }
            assert!(
                rebuilt
                    .iter()
                    .zip(fw.x())
                    .all(|(a, b)| (a - b).abs() < 1e-12)
            );
        }
    }
}
