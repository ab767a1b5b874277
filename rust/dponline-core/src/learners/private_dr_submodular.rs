//! PrivateDRSubmodular: differentially private online maximisation of the multilinear extension of
//! probabilistic coverage over a matroid polytope (Perez-Salazar & Cummings, AISTATS 2021, Algorithm 4,
//! Theorem 9), played as sets by pipage rounding.
//!
//! Round `t`: a function `f_t(S) = 1 − Π_{a∈S}(1 − p_a^t)` (click probabilities `p^t ∈ [0, 1]^n`) with
//! multilinear extension `F_t(x) = 1 − Π_a (1 − p_a^t x_a)` — monotone and DR-submodular on `[0, 1]^n`, with
//! gradient `∂F_t/∂x_a = p_a^t Π_{b≠a}(1 − p_b^t x_b)` ([`coverage_gradient`]).
//!
//! Algorithm 4 (the online Frank-Wolfe of Chen, Hassani & Karbasi 2018 with private copies): `K` copies
//! `E_0..E_{K−1}` of a private follow-the-approximate-leader (PFTAL, Thakurta & Smith 2013), each at privacy
//! `ε/K`. Copy `k` plays `v_t^k ∈ X`; the learner plays `x_t = (1/K) Σ_k v_t^k` and feeds copy `k` the linear
//! gain `v ↦ ⟨∇F_t(x_t^k), v⟩` at the partial average `x_t^k = (1/K) Σ_{j<k} v_t^j` (`x_t^0 = 0`).
//!
//! One PFTAL copy for linear gains `⟨g_s, v⟩` (`‖g_s‖ ≤ G` after clipping): the gradients enter a private
//! prefix-sum mechanism (the padded binary tree by default, [`crate::aggregation`]), and after `t` rounds
//! `v_{t+1} = argmin_{v∈X} −⟨G̃_t, v⟩ + (λ_t/2)‖v‖²`, `λ_t = H·max(t, 1)`, `G̃_t` the release. This is
//! Thakurta & Smith's approximate leader for the losses `−⟨g_s, v⟩ + (H/2)‖v‖²` (their regularised
//! treatment of linear losses): the quadratic approximation of an `H`-strongly convex loss around `v_s` sums
//! to `⟨·, v⟩ + (Ht/2)‖v‖²` up to constants. The argmin is the Euclidean projection `Π_X(G̃_t/λ_t)`
//! ([`Argmin`]):
//!
//! * `Projection` (default): exact, block by block — `clamp(c − θ, 0, 1)` with `θ = 0` if that fits the
//!   capacity, else the `θ > 0` where the block sums to `k_j`, found by Newton steps safeguarded by bisection
//!   (an iteration cap gives [`CoreError::IterationLimit`]; it is never reached for finite input);
//! * `FrankWolfe`: `lmo_calls` Frank-Wolfe steps with the domain's LMO ([`crate::frank_wolfe::FrankWolfe`], exact
//!   line search) per copy and round, warm-started from `v_t`: within `2D/sqrt(lmo_calls + 2)` of the argmin
//!   (Ene-Nguyen-Vladu Lemma C.4, from any feasible start).
//!
//! Rounding: `x_t` is rounded to a set `S_t` by randomized pipage rounding block by block (Ageev &
//! Sviridenko 2004; Calinescu, Chekuri, Pál & Vondrák 2011, Section 2.4): two fractional coordinates of a
//! block move along `e_i − e_j` until one is integral, up or down with the probabilities that keep the mean;
//! the last fractional coordinate of a block is kept with probability equal to its value. Every `S_t` is
//! independent in the matroid (block `j` holds at most `k_j` items), `E[1_{S_t}] = x_t`, and
//! `E[f_t(S_t)] ≥ F_t(x_t)`: `F_t` is convex along `e_i − e_j` (`∂²F/∂x_i∂x_j ≤ 0`), so each pipage step does
//! not decrease `E[F_t]`, and `F_t` is linear in the last coordinate.
//!
//! Privacy: the gradients fed to each copy are clipped to `‖g‖ ≤ G` (L1 for Laplace noise, L2 for Gaussian)
//! so that replacing one `f_t` moves each copy's round-`t` input by at most `2G`; each copy is `ε/K`-DP
//! (`(ε/K, δ/K)` for Gaussian noise) given the earlier copies' outputs, and the `K` copies compose to
//! `(ε, δ)` — Lemma 4 / Lemma 6 (basic adaptive composition). Calibration lives in the Python wrapper.
//!
//! Per-round loss reported by `run`: `−f_t(S_t)`.

use serde::{Deserialize, Serialize};

use crate::aggregation::{Mechanism, MechanismSpec, PrefixSumMechanism, padded_draws};
use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_positive};
use crate::frank_wolfe::FrankWolfe;
use crate::learners::{Learner, LossNorm, MechanismSetup};
use crate::noise::NoiseDistribution;
use crate::rng::Generator;
use crate::submodular::{SubmodularFamily, SubmodularKind};

/// Largest number of PFTAL copies accepted.
pub const MAX_COPIES: usize = 4096;

/// `∇F(x)` of the multilinear extension `F(x) = 1 − Π_a (1 − p_a x_a)` of probabilistic coverage, written into
/// `out`: `out[a] = p_a Π_{b≠a} (1 − p_b x_b)`, by prefix and suffix products (no division, so factors equal
/// to 0 are exact). `p`, `x` in `[0, 1]^n`; `O(n)`.
#[inline]
pub fn coverage_gradient(p: &[f64], x: &[f64], out: &mut [f64]) {
    let mut prefix = 1.0;
    for ((o, &pa), &xa) in out.iter_mut().zip(p).zip(x) {
        *o = prefix;
        prefix *= 1.0 - pa * xa;
    }
    let mut suffix = 1.0;
    for ((o, &pa), &xa) in out.iter_mut().zip(p).zip(x).rev() {
        *o *= suffix * pa;
        suffix *= 1.0 - pa * xa;
    }
}

/// `F(x) = 1 − Π_a (1 − p_a x_a)`.
#[inline]
pub fn coverage_multilinear(p: &[f64], x: &[f64]) -> f64 {
    1.0 - p
        .iter()
        .zip(x)
        .map(|(&pa, &xa)| 1.0 - pa * xa)
        .product::<f64>()
}

/// The paper's number of copies: `K = sqrt(√T / ln^{2.5} T)` (Algorithm 4), rounded up, at least 1
/// (`ln T` read as `max(ln T, 1)`).
pub fn paper_copies(horizon: u64) -> usize {
    let t = horizon.max(1) as f64;
    let l = t.ln().max(1.0);
    let k = (t.sqrt() / l.powf(2.5)).sqrt().ceil();
    (k.max(1.0) as usize).min(MAX_COPIES)
}

/// The blocks of a matroid polytope in independence form: `(coordinates, capacity)`.
fn matroid_blocks(domain: &Domain) -> Result<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    let refuse = |what: &str| {
        Err(CoreError::InvalidArgument {
            name: "domain",
            allowed: "a UniformMatroid or PartitionMatroid in independence form (base=False): Algorithm 4 \
                      needs 0 in the domain (the partial averages start at 0)",
            value: what.to_string(),
        })
    };
    match domain {
        Domain::UniformMatroid(m) if !m.is_base() => {
            Ok(((0..m.dim()).collect(), vec![0, m.dim()], vec![m.k()]))
        }
        Domain::PartitionMatroid(m) if !m.is_base() => {
            let (mut members, mut start, mut caps) = (Vec::new(), vec![0], Vec::new());
            for (block, k) in m.blocks() {
                members.extend_from_slice(block);
                start.push(members.len());
                caps.push(k);
            }
            Ok((members, start, caps))
        }
        Domain::UniformMatroid(_) | Domain::PartitionMatroid(_) => {
            refuse("a base polytope (base=True)")
        }
        other => refuse(other.kind()),
    }
}

/// Where each copy's regulariser `(λ/2)‖v − c‖²` is centred; its argmin is then `Π_X(c + G̃_t/λ_t)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Center {
    /// `c = 0`: the paper's `(λ/2)‖v‖²` (Algorithm 4 with Thakurta & Smith's PFTAL).
    Origin,
    /// `c_a = k_j/|B_j|` for the items `a` of block `B_j` (capacity `k_j`): the marginals of a uniformly random
    /// full independent set. While the noise dominates the copies play near `c`, which pipage rounding turns into
    /// a uniformly random full set, instead of near the empty set; FTRL's bound is unchanged in form with
    /// `R_c² = max_{x∈X} ‖x − c‖² = Σ_j k_j·max(q_j, 1 − q_j)`, `q_j = k_j/|B_j|` (at most the rank `Σ_j k_j`).
    Uniform,
}

impl Center {
    /// Parse `"origin"` or `"uniform"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for any other name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "origin" => Ok(Center::Origin),
            "uniform" => Ok(Center::Uniform),
            other => Err(CoreError::invalid("center", "'origin' or 'uniform'", other)),
        }
    }

    /// The name [`Center::from_name`] parses.
    pub fn name(self) -> &'static str {
        match self {
            Center::Origin => "origin",
            Center::Uniform => "uniform",
        }
    }

    /// `c_a` on a block of `len` items with capacity `cap`.
    fn of_block(self, cap: usize, len: usize) -> f64 {
        match self {
            Center::Origin => 0.0,
            Center::Uniform => cap as f64 / len as f64,
        }
    }

    /// `R_c² = max_{x∈X} ‖x − c‖²` over the independence polytope of the blocks (`start`, `caps` as
    /// [`matroid_blocks`]): the maximum of a convex function is at a vertex, a 0/1 vector with `s ≤ k_j` ones in
    /// block `j`, where `‖x − c‖²` restricted to the block is `s(1 − 2q) + |B_j| q²` — linear in `s`, so largest at
    /// `s = k_j` (`k_j(1 − q)`) or `s = 0` (`k_j q`).
    fn radius_squared(self, start: &[usize], caps: &[usize]) -> f64 {
        caps.iter()
            .zip(start.windows(2))
            .map(|(&cap, w)| {
                let q = self.of_block(cap, w[1] - w[0]);
                cap as f64 * q.max(1.0 - q)
            })
            .sum()
    }
}

/// How each copy computes its argmin `Π_X(c + G̃_t/λ_t)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Argmin {
    /// Exact projection onto the matroid polytope (bisection per block).
    Projection,
    /// `lmo_calls` warm-started Frank-Wolfe steps per round.
    FrankWolfe,
}

impl Argmin {
    /// Parse `"projection"` or `"frank-wolfe"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`].
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "projection" => Ok(Argmin::Projection),
            "frank-wolfe" => Ok(Argmin::FrankWolfe),
            other => Err(CoreError::invalid(
                "argmin",
                "'projection' or 'frank-wolfe'",
                format!("{other:?}"),
            )),
        }
    }

    /// The name accepted by [`Argmin::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Argmin::Projection => "projection",
            Argmin::FrankWolfe => "frank-wolfe",
        }
    }
}

/// Bisection steps allowed per block projection (float64 intervals reach adjacent floats in fewer than 2,200).
pub const PROJECTION_STEPS: u32 = 4096;

/// The declared constants of a [`PrivateDrSubmodular`] learner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrSubmodularParams {
    /// `n = |U|`.
    pub n: usize,
    /// `T`.
    pub horizon: u64,
    /// `K`, the number of PFTAL copies.
    pub copies: usize,
    /// Whether `K` is the paper's [`paper_copies`].
    pub copies_default: bool,
    /// `G`, the declared bound on each fed gradient's norm (clipping).
    pub gradient_bound: f64,
    /// The norm of `G` (L1 for Laplace noise, L2 for Gaussian).
    pub norm: LossNorm,
    /// `R² = max_{x∈X} ‖x‖²`, the matroid's rank (Lemma 7's smoothness term).
    pub radius_squared: f64,
    /// Where the regulariser is centred.
    pub center: Center,
    /// `R_c² = max_{x∈X} ‖x − c‖²` (the FTRL term of each copy; [`Center::Uniform`]'s docs).
    pub center_radius_squared: f64,
    /// `N`: the bound `sqrt(n · draws · Var(draw))` on `E‖Z‖₂` of a padded-tree release's noise `Z` (0 when
    /// non-private).
    pub noise_norm: f64,
    /// `H`, the regularisation of each copy (`λ_t = H·max(t, 1)`).
    pub regularization: f64,
    /// Whether `H` is the default (the minimiser of the per-copy bound, see [`DrSubmodularParams::new`]).
    pub regularization_default: bool,
    /// How the argmin is computed.
    pub argmin: Argmin,
    /// Frank-Wolfe LMO calls per copy and round (`Argmin::FrankWolfe`).
    pub lmo_calls: u32,
    /// The domain's diameter `D`.
    pub diameter: f64,
}

impl DrSubmodularParams {
    /// The constants for `domain` (its rank gives `R²`).
    ///
    /// Default `H = sqrt(b/a)` minimises the per-copy regret bound `a·H + b/H (+ the Frank-Wolfe term)`
    /// ([`DrSubmodularParams::copy_regret_bound`]) with `a = T R_c²/2` and `b = (2 + ln T)(G²/2 + G·N)`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `T = 0`, `K ∉ 1..=MAX_COPIES`, a non-positive bound or
    /// regularisation, `lmo_calls = 0`, a noise scale that is negative or not finite, a domain
    /// other than a uniform / partition matroid in independence form, or derived constants that overflow.
    #[allow(clippy::too_many_arguments)] // one argument per declared constant of the Python signature
    pub fn new(
        domain: &Domain,
        horizon: u64,
        copies: Option<usize>,
        gradient_bound: f64,
        norm: LossNorm,
        noise: NoiseDistribution,
        regularization: Option<f64>,
        center: Center,
        argmin: Argmin,
        lmo_calls: u32,
    ) -> Result<Self> {
        crate::error::check_horizon(horizon)?;
        let (_, start, caps) = matroid_blocks(domain)?;
        check_positive("gradient_bound", gradient_bound)?;
        super::check_clip_bound("gradient_bound", gradient_bound, domain.dim())?;
        if lmo_calls == 0 {
            return Err(CoreError::invalid("lmo_calls", ">= 1", lmo_calls));
        }
        let scale = noise.scale();
        if !(scale.is_finite() && scale >= 0.0) {
            return Err(CoreError::invalid("scale", "finite and >= 0", scale));
        }
        let (k, copies_default) = match copies {
            Some(k) if (1..=MAX_COPIES).contains(&k) => (k, false),
            Some(k) => return Err(CoreError::invalid("copies", "in 1..=4096", k)),
            None => (paper_copies(horizon), true),
        };
        let n = domain.dim();
        let radius_squared = caps.iter().sum::<usize>() as f64;
        let center_radius_squared = center.radius_squared(&start, &caps);
        let draws = padded_draws(horizon) as f64;
        let noise_norm = (n as f64 * draws * noise.variance()).sqrt();
        let t = horizon as f64;
        let (h, regularization_default) = match regularization {
            Some(h) => {
                check_positive("regularization", h)?;
                (h, false)
            }
            None => {
                let a = 0.5 * t * center_radius_squared.max(1.0);
                let b = (2.0 + t.ln())
                    * (0.5 * gradient_bound * gradient_bound + gradient_bound * noise_norm);
                ((b / a).sqrt(), true)
            }
        };
        let params = DrSubmodularParams {
            n,
            horizon,
            copies: k,
            copies_default,
            gradient_bound,
            norm,
            radius_squared,
            center,
            center_radius_squared,
            noise_norm,
            regularization: h,
            regularization_default,
            argmin,
            lmo_calls,
            diameter: domain.diameter(),
        };
        let derived = params.copy_regret_bound();
        if !(h.is_finite() && h > 0.0 && derived.is_finite() && noise_norm.is_finite()) {
            return Err(CoreError::InvalidArgument {
                name: "gradient_bound/regularization/horizon",
                allowed: "values whose derived constants are finite and positive",
                value: format!("H = {h}, bound = {derived}"),
            });
        }
        Ok(params)
    }

    /// Explicit bound on the expected regret of one PFTAL copy against linear gains with `‖g‖₂ ≤ G` (`G`
    /// bounds the L2 norm under either declared norm):
    ///
    /// `H T R_c²/2 + (2 + ln T)(G²/2 + G·N)/H`, plus `T·G·2D/sqrt(lmo_calls + 2)` for Frank-Wolfe.
    ///
    /// FTRL with the regularisers `(λ_{t−1}/2)‖v − c‖²` (strong convexity `λ_{t−1} = H·max(t−1, 1)`, `c ∈ X`,
    /// so the regulariser's minimum over `X` is 0): regret `≤ λ_T R_c²/2 + Σ_t G²/(2λ_{t−1}) ≤ H T R_c²/2 +
    /// G²(2 + ln T)/(2H)` (Orabona 2019, Corollary 7.9);
    /// the noise `Z` of a release moves the projection `Π_X(c + G̃/λ)` by at most `‖Z‖/λ`, costing
    /// `Σ_t G·E‖Z‖/λ_{t−1} ≤ G N (2 + ln T)/H`; a Frank-Wolfe iterate after `k` steps from any feasible point
    /// is within `2D/sqrt(k + 2)` of the argmin (1-strong convexity), costing `T·G·2D/sqrt(k + 2)`.
    pub fn copy_regret_bound(&self) -> f64 {
        let t = self.horizon as f64;
        let g = self.gradient_bound;
        let h = self.regularization;
        0.5 * h * t * self.center_radius_squared
            + (2.0 + t.ln()) * (0.5 * g * g + g * self.noise_norm) / h
            + match self.argmin {
                Argmin::Projection => 0.0,
                Argmin::FrankWolfe => {
                    t * g * 2.0 * self.diameter / (f64::from(self.lmo_calls) + 2.0).sqrt()
                }
            }
    }
}

/// The learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateDrSubmodular {
    params: DrSubmodularParams,
    domain: Domain,
    /// Matroid blocks: block `j` is `members[start[j]..start[j + 1]]` with capacity `caps[j]`.
    members: Vec<usize>,
    start: Vec<usize>,
    caps: Vec<usize>,
    /// One prefix-sum mechanism per copy.
    trees: Vec<Mechanism>,
    /// The copies' points `v^k`, row-major `(K, n)`.
    points: Vec<f64>,
    /// One Frank-Wolfe solver per copy (`Argmin::FrankWolfe` only).
    solvers: Vec<FrankWolfe>,
    /// The fractional point `x_t` of the pending round.
    x: Vec<f64>,
    /// The set played this round (increasing ids).
    played: Vec<usize>,
    rng: Generator,
    t: u64,
    pending: bool,
    strict: bool,
    clipped: u64,
    /// Frank-Wolfe gap before the last step of the latest solve, the largest over the copies (diagnostic).
    last_gap: f64,
    #[serde(skip)]
    acc: Vec<f64>,
    #[serde(skip)]
    partial: Vec<f64>,
    #[serde(skip)]
    grad: Vec<f64>,
    #[serde(skip)]
    release: Vec<f64>,
    #[serde(skip)]
    row: Vec<f64>,
}

impl PrivateDrSubmodular {
    /// A learner over `domain` with constants `params`; copy `k`'s prefix sums are released by `mechanism`
    /// with per-draw `noise` (scale 0 = the non-private algorithm on the same code path), drawn by `sampler`
    /// ([`crate::aggregation::SamplerKind`]), from stream `2 + k`
    /// of `seed`; the rounding draws from stream 1 (the OS with `secure`).
    ///
    /// Errors: [`CoreError::Shape`] for `params` of another dimension; those of [`DrSubmodularParams::new`]'s
    /// domain check and of the mechanism; [`CoreError::Allocation`]; entropy failures.
    pub fn new(domain: Domain, params: DrSubmodularParams, setup: MechanismSetup) -> Result<Self> {
        let n = domain.dim();
        super::check_params_dim(n, params.n)?;
        let (members, start, caps) = matroid_blocks(&domain)?;
        let k = params.copies;
        let total = crate::alloc::checked_len("copies x ground set", k, n)?;
        // Probe the k copies' state at once — a lower bound per copy and item: its point, and the mechanism's
        // (1 + padded)·levels noise rows for the tree, at least a prefix and an initial release otherwise — so
        // that sizes beyond the machine are refused up front (MemoryError) instead of being allocated copy by
        // copy until the process runs out of memory.
        let per_item = 1 + match setup.mechanism {
            MechanismSpec::Tree { padded } => {
                crate::aggregation::levels_touched(params.horizon) as usize
                    * (1 + usize::from(padded))
                    + 2
            }
            _ => 2,
        };
        let probe = crate::alloc::checked_len("the PFTAL copies' state", total, per_item)?;
        drop(crate::alloc::reserve::<f64>(
            "the PFTAL copies' state",
            probe,
        )?);
        let mut trees = crate::alloc::reserve("PFTAL copies", k)?;
        let frank_wolfe = params.argmin == Argmin::FrankWolfe;
        let mut solvers = crate::alloc::reserve("PFTAL copies", if frank_wolfe { k } else { 0 })?;
        let zero = crate::alloc::zeros("iterate", n)?;
        for c in 0..k {
            trees.push(setup.build_mechanism(n, params.horizon, 2 + c as u64)?);
            if frank_wolfe {
                solvers.push(FrankWolfe::new(&zero, &zero, false)?);
            }
        }
        let mut learner = PrivateDrSubmodular {
            points: crate::alloc::zeros("copies' points", total)?,
            played: crate::alloc::reserve("played set", n)?,
            x: crate::alloc::zeros("point", n)?,
            acc: crate::alloc::zeros("partial sum", n)?,
            partial: crate::alloc::zeros("partial average", n)?,
            grad: crate::alloc::zeros("gradient", n)?,
            release: crate::alloc::zeros("release", n)?,
            row: crate::alloc::zeros("row", n)?,
            params,
            domain,
            members,
            start,
            caps,
            trees,
            solvers,
            rng: setup.generator(1)?,
            t: 0,
            pending: false,
            strict: setup.strict,
            clipped: 0,
            last_gap: 0.0,
        };
        // v_1^k: the argmin for the release before any data (noise only, for the padded tree).
        let lambda = learner.params.regularization;
        for c in 0..k {
            let mut release = core::mem::take(&mut learner.release);
            release.copy_from_slice(learner.trees[c].initial());
            let solved = learner.solve(c, &release, lambda);
            learner.release = release;
            solved?;
        }
        Ok(learner)
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// Whether a set was asked and awaits `tell`.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// Frank-Wolfe: the largest gap (before the last step) of the latest solves; 0 for exact projection.
    pub fn last_gap(&self) -> f64 {
        self.last_gap
    }

    /// The kind of each copy's mechanism.
    pub fn mechanism_kind(&self) -> &'static str {
        self.trees.first().map_or("tree", |m| m.kind())
    }

    /// The per-draw noise of the copies' mechanisms.
    pub fn noise(&self) -> NoiseDistribution {
        self.trees
            .first()
            .map_or(NoiseDistribution::Gaussian { sigma: 0.0 }, |m| m.noise())
    }

    /// Copy `k`'s current point `v^k` (`k < K`).
    pub fn copy_point(&self, k: usize) -> Option<&[f64]> {
        let n = self.params.n;
        (k < self.params.copies).then(|| &self.points[k * n..(k + 1) * n])
    }

    /// The fractional point `x = (1/K) Σ_k v^k` of the current (or next) round, written into `out`.
    pub fn fractional_point(&self, out: &mut [f64]) {
        out.fill(0.0);
        for v in self.points.chunks_exact(self.params.n) {
            for (o, &a) in out.iter_mut().zip(v) {
                *o += a;
            }
        }
        let inv = 1.0 / self.params.copies as f64;
        out.iter_mut().for_each(|o| *o = (*o * inv).clamp(0.0, 1.0));
    }

    /// Copy `c`'s next point `argmin_{v∈X} −⟨release, v⟩ + (λ/2)‖v − centre‖² = Π_X(centre + release/λ)`.
    ///
    /// Errors: [`CoreError::IterationLimit`] if a block's bisection does not close (not expected).
    fn solve(&mut self, c: usize, release: &[f64], lambda: f64) -> Result<()> {
        let n = self.params.n;
        let v = &mut self.points[c * n..(c + 1) * n];
        let inv = 1.0 / lambda;
        let target = match self.params.argmin {
            Argmin::Projection => &mut *v,
            Argmin::FrankWolfe => self.solvers[c].target_mut(),
        };
        for j in 0..self.caps.len() {
            let members = &self.members[self.start[j]..self.start[j + 1]];
            let centre = self.params.center.of_block(self.caps[j], members.len());
            for &a in members {
                target[a] = centre + release[a] * inv;
            }
        }
        match self.params.argmin {
            Argmin::Projection => {
                for j in 0..self.caps.len() {
                    let members = &self.members[self.start[j]..self.start[j + 1]];
                    project_block(members, self.caps[j] as f64, v)?;
                }
            }
            Argmin::FrankWolfe => {
                let fw = &mut self.solvers[c];
                let mut gap = 0.0f64;
                for _ in 0..self.params.lmo_calls {
                    gap = fw.step(&mut self.domain);
                }
                v.copy_from_slice(fw.x());
                self.last_gap = if c == 0 { gap } else { self.last_gap.max(gap) };
            }
        }
        Ok(())
    }

    /// The set `S_t` to play: increasing item ids, independent in the matroid. Asking again before `tell`
    /// returns the same set.
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[usize]> {
        self.check_rounds_fit(1, self.params.horizon)?;
        if !self.pending {
            self.decide();
        }
        Ok(&self.played)
    }

    /// `x_t` and its pipage rounding.
    fn decide(&mut self) {
        let mut x = core::mem::take(&mut self.x);
        self.fractional_point(&mut x);
        self.x = x;
        self.played.clear();
        for j in 0..self.caps.len() {
            let (lo, hi) = (self.start[j], self.start[j + 1]);
            pipage_block(
                &self.members[lo..hi],
                self.caps[j],
                &self.x,
                &mut self.rng,
                &mut self.played,
            );
        }
        self.played.sort_unstable();
        self.pending = true;
    }

    /// The fractional point `x_t` of the asked round (meaningful after `ask`).
    pub fn point(&self) -> &[f64] {
        &self.x
    }

    /// Report the click probabilities `p^t` (length `n`) of round `t`; returns `f_t(S_t)`. Entries outside
    /// `[0, 1]` are clipped into it (counted in [`PrivateDrSubmodular::clipped`]) unless `strict`.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a pending `ask`; [`CoreError::Shape`];
    /// [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`].
    pub fn tell(&mut self, p: &[f64]) -> Result<f64> {
        super::check_asked(self.pending, "probability row per asked set")?;
        crate::error::check_len("p", p, self.params.n)?;
        let outside = crate::submodular::check_row(p, self.strict, self.t + 1)?;
        let mut row = core::mem::take(&mut self.row);
        for (r, &v) in row.iter_mut().zip(p) {
            *r = v.clamp(0.0, 1.0);
        }
        let payoff = self.step(&row, outside > 0);
        self.row = row;
        payoff
    }

    /// Algorithm 4's feedback for a valid row: every copy's gradient at its partial average, pushed into its
    /// mechanism, and its next point. Returns `f_t(S_t)`. The gradient is computed in floating point from the
    /// private row; the exact norm of what is pushed is within `G` (issue 21; Lemma *rounded clip*,
    /// [`super::clip_to_bound`]), so each copy's calibrated `2G` holds.
    fn step(&mut self, p: &[f64], row_clipped: bool) -> Result<f64> {
        let payoff = 1.0 - self.played.iter().map(|&a| 1.0 - p[a]).product::<f64>();
        let (k, n) = (self.params.copies, self.params.n);
        let inv = 1.0 / k as f64;
        let (bound, norm) = (self.params.gradient_bound, self.params.norm);
        let lambda = self.params.regularization * (self.t + 1) as f64;
        let mut clipped = row_clipped;
        // All gradients first, at the points played this round: x_t^c = (1/K) Σ_{j<c} v_t^j.
        self.acc.fill(0.0);
        let mut release = core::mem::take(&mut self.release);
        let mut result = Ok(());
        for c in 0..k {
            for (q, &a) in self.partial.iter_mut().zip(&self.acc) {
                *q = a * inv;
            }
            coverage_gradient(p, &self.partial, &mut self.grad);
            // Entries lie in [0, 1]: the plain sums cannot overflow.
            // DP-FTRL's norms (the scaled L2 norm meets Lemma *rounded clip*'s hypothesis down to tiny bounds).
            let size = norm.of(&self.grad);
            // Lemma *rounded clip*: the exact norm of the pushed gradient is within `G`.
            clipped |= super::clip_to_bound(&mut self.grad, size, bound);
            for (a, &v) in self.acc.iter_mut().zip(&self.points[c * n..(c + 1) * n]) {
                *a += v;
            }
            // Cannot fail: t < T was checked, the gradient is finite and of length n.
            if let Err(e) = self.trees[c].push(&self.grad, &mut release) {
                result = Err(e);
                continue;
            }
            if let Err(e) = self.solve(c, &release, lambda) {
                result = Err(e);
            }
        }
        self.release = release;
        if clipped {
            self.clipped += 1;
        }
        self.pending = false;
        self.t += 1;
        result.map(|()| payoff)
    }
}

/// Euclidean projection of `v` (at the coordinates `members`) onto `{0 ≤ y ≤ 1, Σ y ≤ cap}`, in place:
/// `y = clamp(v − θ, 0, 1)` with `θ = 0` when that sums to at most `cap` (KKT: the capacity constraint is
/// slack), else the `θ > 0` at which the sum `S(θ)` equals `cap`. `S` is continuous, piecewise linear and
/// non-increasing, `> cap` at 0 and 0 at `max v`; the root is found by Newton steps on the linear piece
/// (slope = minus the number of coordinates strictly inside `(0, 1)`), safeguarded by bisection of the bracket
/// `S(lo) > cap ≥ S(hi)`: exact once the step lands on the root's piece, so a few steps in practice. Stops when
/// `S(θ)` is within `1e-12·cap` of `cap` or the bracket holds adjacent floats (then `θ = hi`, feasible).
///
/// Errors: [`CoreError::IterationLimit`] after [`PROJECTION_STEPS`] steps (not reachable for finite `v`: each
/// bisection halves the bracket).
fn project_block(members: &[usize], cap: f64, v: &mut [f64]) -> Result<()> {
    // (S(θ), number of coordinates with 0 < v − θ < 1).
    let eval = |theta: f64, v: &[f64]| -> (f64, usize) {
        members.iter().fold((0.0, 0), |(s, m), &i| {
            let y = v[i] - theta;
            if y >= 1.0 {
                (s + 1.0, m)
            } else if y > 0.0 {
                (s + y, m + 1)
            } else {
                (s, m)
            }
        })
    };
    let (s0, m0) = eval(0.0, v);
    let theta = if s0 <= cap {
        0.0
    } else {
        let tol = 1e-12 * cap.max(1.0);
        let (mut lo, mut hi) = (0.0f64, members.iter().fold(0.0f64, |m, &i| m.max(v[i])));
        let (mut theta, mut s, mut m) = (0.0f64, s0, m0);
        let mut steps = 0u32;
        loop {
            if steps == PROJECTION_STEPS {
                return Err(CoreError::IterationLimit {
                    routine: "projection onto a matroid block",
                    limit: u64::from(PROJECTION_STEPS),
                    detail: String::new(),
                });
            }
            steps += 1;
            if s > cap {
                lo = theta;
            } else {
                hi = theta;
            }
            if (s - cap).abs() <= tol && s >= cap - tol {
                break theta;
            }
            let newton = if m > 0 {
                theta + (s - cap) / m as f64
            } else {
                f64::NAN
            };
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break hi;
            }
            theta = if newton > lo && newton < hi {
                newton
            } else {
                mid
            };
            (s, m) = eval(theta, v);
        }
    };
    for &i in members {
        v[i] = (v[i] - theta).clamp(0.0, 1.0);
    }
    Ok(())
}

/// Randomized pipage rounding of `x` on one block (`members`, capacity `cap`), appending the chosen items to
/// `out`: at most `cap` items, each `a` with probability `x_a` (see the module docs).
fn pipage_block(
    members: &[usize],
    cap: usize,
    x: &[f64],
    rng: &mut Generator,
    out: &mut Vec<usize>,
) {
    let mut taken = 0usize;
    let mut take = |a: usize, out: &mut Vec<usize>| {
        if taken < cap {
            out.push(a);
            taken += 1;
        }
    };
    // The fractional coordinate carried along: (item, value in (0, 1)).
    let mut carry: Option<(usize, f64)> = None;
    for &i in members {
        let b = x[i].clamp(0.0, 1.0);
        if b >= 1.0 {
            take(i, out);
            continue;
        }
        if b <= 0.0 {
            continue;
        }
        let Some((j, a)) = carry else {
            carry = Some((i, b));
            continue;
        };
        // Move along e_j − e_i: up by d1 = min(1 − a, b) with probability d2/(d1 + d2), else down by
        // d2 = min(a, 1 − b): the mean of each coordinate is kept.
        let (d1, d2) = ((1.0 - a).min(b), a.min(1.0 - b));
        let up = rng.open01() * (d1 + d2) < d2;
        carry = if up {
            if 1.0 - a <= b {
                take(j, out);
                let rest = b - (1.0 - a);
                (rest > 0.0).then_some((i, rest))
            } else {
                Some((j, a + b))
            }
        } else if a <= 1.0 - b {
            Some((i, b + a))
        } else {
            take(i, out);
            let rest = a - (1.0 - b);
            (rest > 0.0).then_some((j, rest))
        };
        if let Some((_, v)) = carry {
            if v >= 1.0 {
                if let Some((item, _)) = carry.take() {
                    take(item, out);
                }
            }
        }
    }
    if let Some((j, a)) = carry {
        if rng.open01() < a {
            take(j, out);
        }
    }
}

impl Learner for PrivateDrSubmodular {
    const NAME: &'static str = "PrivateDRSubmodular";
    type Family<'a> = &'a SubmodularFamily;

    super::learner_accessors!(DrSubmodularParams);

    /// Check that `rounds` rounds of `family` can be played from the current round, without changing anything.
    ///
    /// Errors: [`CoreError::Protocol`] if a set is pending; [`CoreError::InvalidArgument`] for a family other
    /// than probabilistic coverage; [`CoreError::Shape`] for another ground set; [`CoreError::HorizonExhausted`].
    fn check_run(&self, family: &SubmodularFamily, rounds: u64) -> Result<()> {
        super::check_idle(self.pending, "set")?;
        if family.kind() != Some(SubmodularKind::ProbabilisticCoverage) {
            return Err(CoreError::invalid(
                "family",
                "a ProbabilisticCoverage family (the gradient of its multilinear extension is closed-form)",
                family.kind_name(),
            ));
        }
        super::check_ground_set_run(self, self.params.n, self.params.horizon, family, rounds)
    }

    // The loss is the negated payoff (`total + (−payoff)` is `total − payoff` exactly).
    super::play_by_rounds!(|l, family| {
        l.decide();
        Ok(-l.step(family.row_at(l.t), false)?)
    });

    /// The invariants of a decoded learner (see [`super::Learner::check_state`]).
    ///
    /// Errors: [`CoreError::State`]; [`CoreError::Allocation`].
    fn check_state(&mut self) -> Result<()> {
        let p = &self.params;
        let n = p.n;
        let blocks = matroid_blocks(&self.domain).ok();
        let consistent = self.t <= p.horizon
            && self.clipped <= self.t
            && crate::state::all_finite(&self.points)
            && crate::state::all_finite(&self.x)
            && self.domain.dim() == n
            && self.trees.len() == p.copies
            && self.trees.iter().all(|m| m.dim() == n && m.t() == self.t)
            && self.points.len() == p.copies * n
            && self.solvers.len()
                == if p.argmin == Argmin::FrankWolfe {
                    p.copies
                } else {
                    0
                }
            && self.solvers.iter().all(|f| f.x().len() == n)
            && self.x.len() == n
            && self.played.iter().all(|&a| a < n)
            && blocks.is_some_and(|(m, st, c)| {
                m == self.members
                    && st == self.start
                    && c == self.caps
                    && p.center.radius_squared(&st, &c) == p.center_radius_squared
            });
        if !consistent {
            return Err(CoreError::State(
                "inconsistent PrivateDRSubmodular state".into(),
            ));
        }
        self.acc = crate::alloc::zeros("partial sum", n)?;
        self.partial = crate::alloc::zeros("partial average", n)?;
        self.grad = crate::alloc::zeros("gradient", n)?;
        self.release = crate::alloc::zeros("release", n)?;
        self.row = crate::alloc::zeros("row", n)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregation::SamplerKind;
    use crate::domains::{PartitionMatroid, UniformMatroid};

    fn partition() -> Domain {
        Domain::PartitionMatroid(
            PartitionMatroid::new(
                vec![vec![0, 2, 4], vec![1, 3], vec![5]],
                vec![2, 1, 1],
                false,
            )
            .unwrap(),
        )
    }

    fn learner(
        domain: Domain,
        copies: usize,
        sigma: f64,
        seed: u64,
        horizon: u64,
    ) -> PrivateDrSubmodular {
        let noise = NoiseDistribution::Gaussian { sigma };
        let p = DrSubmodularParams::new(
            &domain,
            horizon,
            Some(copies),
            (domain.dim() as f64).sqrt(),
            LossNorm::L2,
            noise,
            None,
            Center::Uniform,
            Argmin::Projection,
            4,
        )
        .unwrap();
        let sampler = SamplerKind::FloatingPoint;
        PrivateDrSubmodular::new(
            domain,
            p,
            crate::learners::MechanismSetup::padded_tree(noise, sampler, [seed, 1, 2, 3]),
        )
        .unwrap()
    }

    #[test]
    fn gradient_matches_finite_differences_and_handles_zero_factors() {
        let p = [0.3, 1.0, 0.0, 0.7, 0.5];
        let x = [0.2, 1.0, 0.4, 0.9, 0.0];
        let mut g = [0.0; 5];
        coverage_gradient(&p, &x, &mut g);
        for a in 0..5 {
            let (mut hi, mut lo) = (x, x);
            hi[a] += 1e-6;
            lo[a] -= 1e-6;
            let fd = (coverage_multilinear(&p, &hi) - coverage_multilinear(&p, &lo)) / 2e-6;
            assert!((fd - g[a]).abs() < 1e-8, "a={a} {fd} {}", g[a]);
        }
        // p_1 x_1 = 1: every other partial derivative is 0, item 1's is the product of the others.
        assert_eq!([g[0], g[2], g[3], g[4]], [0.0; 4]);
        assert!((g[1] - 0.94 * 0.37).abs() < 1e-15);
        assert!(g.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn centre_radius_is_the_largest_distance_to_a_vertex() {
        let domain = partition(); // blocks of 3, 2 and 1 items with capacities 2, 1, 1
        let (members, start, caps) = matroid_blocks(&domain).unwrap();
        let n = domain.dim();
        let blocks: Vec<&[usize]> = start.windows(2).map(|w| &members[w[0]..w[1]]).collect();
        for center in [Center::Origin, Center::Uniform] {
            let mut c = vec![0.0; n];
            for (block, &cap) in blocks.iter().zip(&caps) {
                block
                    .iter()
                    .for_each(|&a| c[a] = center.of_block(cap, block.len()));
            }
            // Every 0/1 vector independent in the matroid.
            let brute = (0u32..1 << n)
                .filter(|mask| {
                    blocks.iter().zip(&caps).all(|(block, &cap)| {
                        block.iter().filter(|&&a| mask >> a & 1 == 1).count() <= cap
                    })
                })
                .map(|mask| {
                    (0..n)
                        .map(|a| (f64::from(mask >> a & 1) - c[a]).powi(2))
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            let r2 = center.radius_squared(&start, &caps);
            assert!((r2 - brute).abs() < 1e-12, "{center:?}: {r2} vs {brute}");
        }
        assert_eq!(Center::Origin.radius_squared(&start, &caps), 4.0); // the rank
    }

    #[test]
    fn the_first_play_is_the_centre() {
        // Without noise the first release is 0, so every copy starts at argmin ‖v − c‖² = c.
        for center in [Center::Origin, Center::Uniform] {
            let domain = partition();
            let p = DrSubmodularParams::new(
                &domain,
                100,
                Some(3),
                1.0,
                LossNorm::L2,
                NoiseDistribution::Gaussian { sigma: 0.0 },
                None,
                center,
                Argmin::Projection,
                4,
            )
            .unwrap();
            let noise = NoiseDistribution::Gaussian { sigma: 0.0 };
            let setup = crate::learners::MechanismSetup::padded_tree(
                noise,
                SamplerKind::FloatingPoint,
                [1, 2, 3, 4],
            );
            let l = PrivateDrSubmodular::new(domain, p, setup).unwrap();
            let mut x = vec![0.0; 6];
            l.fractional_point(&mut x);
            let want: &[f64] = match center {
                Center::Origin => &[0.0; 6],
                Center::Uniform => &[2.0 / 3.0, 0.5, 2.0 / 3.0, 0.5, 2.0 / 3.0, 1.0],
            };
            for (a, b) in x.iter().zip(want) {
                assert!((a - b).abs() < 1e-12, "{center:?}: {x:?}");
            }
        }
        assert_eq!(Center::from_name("uniform").unwrap().name(), "uniform");
        assert!(Center::from_name("middle").is_err());
    }

    #[test]
    fn paper_copies_and_refused_domains() {
        assert_eq!(paper_copies(1), 1);
        let t = 1e12f64;
        let want = (t.sqrt() / t.ln().powf(2.5)).sqrt().ceil() as usize;
        assert_eq!(paper_copies(1_000_000_000_000), want);
        let base = Domain::UniformMatroid(UniformMatroid::new(5, 2, true).unwrap());
        let noise = NoiseDistribution::Gaussian { sigma: 0.0 };
        assert!(
            DrSubmodularParams::new(
                &base,
                10,
                None,
                1.0,
                LossNorm::L2,
                noise,
                None,
                Center::Uniform,
                Argmin::Projection,
                1
            )
            .is_err()
        );
    }

    #[test]
    fn projection_satisfies_the_kkt_conditions() {
        let mut rng = Generator::from_seed([5, 0, 0, 0]);
        for case in 0..200 {
            let members: Vec<usize> = (0..7).collect();
            let v0: Vec<f64> = (0..7).map(|_| 3.0 * rng.open01() - 1.0).collect();
            let cap = (case % 4 + 1) as f64;
            let mut v = v0.clone();
            project_block(&members, cap, &mut v).unwrap();
            let sum: f64 = v.iter().sum();
            assert!(sum <= cap + 1e-9 && v.iter().all(|y| (0.0..=1.0).contains(y)));
            // y = clamp(v0 − θ, 0, 1) for one θ >= 0, with θ > 0 only when the capacity binds.
            let theta = v0
                .iter()
                .zip(&v)
                .find(|(_, y)| **y > 0.0 && **y < 1.0)
                .map(|(a, y)| a - y);
            if let Some(theta) = theta {
                assert!(theta >= -1e-12);
                for (a, y) in v0.iter().zip(&v) {
                    assert!(
                        (y - (a - theta).clamp(0.0, 1.0)).abs() < 1e-9,
                        "case {case}"
                    );
                }
                if theta > 1e-9 {
                    assert!((sum - cap).abs() < 1e-9);
                }
            }
        }
    }

    #[test]
    fn pipage_keeps_the_marginals_and_the_capacities() {
        let members = [0usize, 1, 2, 3, 4];
        let x = [0.5, 0.3, 0.9, 0.2, 0.6];
        let mut rng = Generator::from_seed([7, 0, 0, 0]);
        let mut counts = [0u64; 5];
        let mut out = Vec::new();
        let m = 200_000;
        for _ in 0..m {
            out.clear();
            pipage_block(&members, 3, &x, &mut rng, &mut out);
            assert!(out.len() <= 3);
            for &a in &out {
                counts[a] += 1;
            }
        }
        for a in 0..5 {
            let f = counts[a] as f64 / m as f64;
            // 5.3 standard errors ≈ α = 1e-7 two-sided.
            let se = (x[a] * (1.0 - x[a]) / m as f64).sqrt();
            assert!((f - x[a]).abs() < 5.3 * se, "a={a} {f} vs {}", x[a]);
        }
    }

    #[test]
    fn ask_tell_equals_run_restores_and_plays_independent_sets() {
        let horizon = 60;
        let mut rng = Generator::from_seed([3, 0, 0, 0]);
        let data: Vec<f64> = (0..30 * 6).map(|_| 0.8 * rng.open01()).collect();
        let fam = SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, data, 6)
            .unwrap()
            .reordered(horizon, crate::losses::RowOrder::Cycle)
            .unwrap();
        let d = partition();
        let mut a = learner(d.clone(), 3, 0.5, 9, horizon);
        let mut b = learner(d.clone(), 3, 0.5, 9, horizon);
        let mut total = 0.0;
        for t in 0..horizon {
            let s = a.ask().unwrap().to_vec();
            let mut ind = [0.0; 6];
            s.iter().for_each(|&i| ind[i] = 1.0);
            assert!(d.contains(&ind, 0.0), "t={t} {s:?}");
            assert!(d.contains(a.point(), 1e-9));
            total += a.tell(fam.row_at(t)).unwrap();
        }
        let mut cum = [0.0; 1];
        let r1 = b.run(&fam, 25, &[25], &mut cum).unwrap();
        let mut c = PrivateDrSubmodular::from_bytes(&b.to_bytes().unwrap()).unwrap();
        let r2 = c.run(&fam, 35, &[60], &mut cum).unwrap();
        assert!((r1.total_loss + r2.total_loss + total).abs() < 1e-9);
        for k in 0..3 {
            assert_eq!(a.copy_point(k), c.copy_point(k));
        }
        assert!(a.ask().is_err());
    }

    #[test]
    fn bad_rows_leave_the_state_unchanged() {
        let mut l = learner(partition(), 2, 0.0, 1, 10);
        assert!(l.tell(&[0.1; 6]).is_err());
        l.ask().unwrap();
        let before = l.to_bytes().unwrap();
        assert!(l.tell(&[0.1; 5]).is_err());
        assert!(l.tell(&[0.1, 0.1, f64::NAN, 0.1, 0.1, 0.1]).is_err());
        assert_eq!(l.to_bytes().unwrap(), before);
        l.tell(&[0.1, 0.1, 1.5, 0.1, 0.1, 0.1]).unwrap();
        assert_eq!(l.clipped(), 1);
    }
}
