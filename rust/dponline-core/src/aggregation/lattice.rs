//! The exact path of the prefix-sum mechanisms, and the one push guard every mechanism shares.
//!
//! **Exact sampling** ([`SamplerKind::Exact`], the default of every learner and of the Python classes). The
//! noise is an [`ExactNoise`]: discrete Laplace `DLap(t)` or discrete Gaussian `N_ℤ(0, σ²)` in units of the
//! power-of-two grid `γ = 2^e` of [`Grid::for_scale`] (the requested scale rounded **up** to `t` or `σ ∈
//! [2³⁰, 2³¹]` units), drawn by the exact samplers of Canonne, Kamath & Steinke (2020) in integer arithmetic.
//! Each pushed row is rounded to the grid, `n_s = round(x_s/γ)` ([`Grid::quantize_units`]), and every noisy
//! node value is the integer `ỹ_v = Σ_{s ∈ v} n_s + z_v`:
//!
//! * **tree and plain `k`-ary readout** — the release after push `t` is `γ·(Σ_{s<=t} n_s + Σ_{v ∈ cover(t)}
//!   z_v) = γ·Σ_{v ∈ cover(t)} ỹ_v`, computed as that integer: the data's running sum is kept in `i128`
//!   (`|n_s| < 2⁶²` and `t < 2⁶⁴`, so it cannot overflow) and the noise rows are sums of at most `2¹¹` draws
//!   of magnitude below `2⁴²` held in `f64`, exact integers ([`crate::noise::UnitDraw`]). The release is
//!   [`Grid::value`] of the integer: exact below `2⁵³` units, otherwise the correctly rounded float of the
//!   integer — a function of the integer either way;
//! * **Honaker readout** — each node's estimate is computed bottom-up in `f64` from the integers `ỹ_v`
//!   (each converted once, `i128 → f64`), so the release is a deterministic function of the integer node
//!   values: post-processing.
//!
//! So every release is a function of the integer vector `(ỹ_v)_v` alone, and the privacy of the mechanism is
//! that of the integer mechanism `n ↦ A n + z` (`A` the 0/1 encoder of [`super::PrefixSumMechanism`]) — no
//! floating-point representation effect (Mironov 2012) enters.
//!
//! **Sensitivity with the rounding.** Neighbouring streams differ in one row, `x_s` vs `x′_s`. By the grid
//! Lemma ([`crate::noise::grid`]) the rounded rows satisfy `‖n_s − n′_s‖₁ <= ⌈Δ₁/γ⌉ + d` and `‖n_s − n′_s‖₂
//! <= Δ₂/γ + √d` (every other row rounds identically), and the row enters the column of `A` of the
//! mechanism, whose largest L1 / L2 norm is `sensitivity_l1` / `sensitivity_l2` (0/1 entries). So the
//! integer node vector has L1 sensitivity `sensitivity_l1 · (⌈Δ₁/γ⌉ + d)` and L2 sensitivity `sensitivity_l2 ·
//! (Δ₂/γ + √d)` ([`Grid::integer_sensitivity_l1`], [`Grid::integer_sensitivity_l2`]); the discrete Laplace
//! of scale `t` is then exactly `ε = sensitivity_l1·(⌈Δ₁/γ⌉ + d)/t`-DP and the discrete Gaussian `ρ =
//! (sensitivity_l2·(Δ₂/γ + √d))²/(2σ²)`-zCDP (CKS 2020; `dponline.privacy.discrete`), which is what the
//! Python calibration solves for.
//!
//! **BLT** has real encoder entries: it evaluates its encoder in integers with a bounded deterministic
//! rounding, adds the exact noise to that integer vector and decodes it in `f64` (post-processing); its
//! sensitivity is the above with `Ĉ`'s column norms plus the rounding slack of its Lemma (`super::blt`).
//!
//! **The push guard** ([`push_guarded`]): shapes, non-finite values, the horizon, then on the float path the
//! `±1e306` bound on running sums, on the exact path the `2⁶²`-unit bound of the quantisation — all before
//! anything changes. The only failure after a change is the exact samplers' (probability below `e^{−2048}`
//! per draw, [`crate::noise::UnitDraw`]): the push then returns [`CoreError::IterationLimit`], releases
//! nothing, and the mechanism is not usable afterwards (its noise rows hold `NaN`, so every later push fails
//! the same way).

use serde::{Deserialize, Serialize};

use super::{check_block, check_push, check_room, check_sums};
use crate::error::{CoreError, Result};
use crate::noise::grid::{ExactNoise, Grid};
use crate::noise::{NoiseDistribution, SumOf};

/// How a mechanism draws its noise (one type for every release: [`crate::noise::release::SamplerKind`]).
pub use crate::noise::release::SamplerKind;

/// The exact path's state: the noise on its grid, the data's running sum in grid units, scratch rows.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Lattice {
    noise: ExactNoise,
    /// `Σ_{s<=t} n_s` per coordinate (tree and plain readouts; empty for the Honaker readout).
    prefix: Vec<i128>,
    /// One row in grid units (a push's scratch); rebuilt after deserialization.
    #[serde(skip)]
    units: Vec<f64>,
    /// One row of zeros (what the noise-only mechanisms are pushed); rebuilt after deserialization.
    #[serde(skip)]
    zeros: Vec<f64>,
}

/// The node sampler and the exact state of a mechanism built with `noise` and `sampler`: the float sampler and
/// no lattice on the floating-point path or with scale 0 (no noise, nothing to protect); otherwise the
/// [`ExactNoise`] of at least `noise`'s scale (module docs) and its [`UnitDraw`](crate::noise::UnitDraw)
/// sampler. `values`: the mechanism folds node values itself (the Honaker readout), so no running sum is kept.
///
/// Errors: [`CoreError::InvalidArgument`] naming `scale` unless, on the exact path, it is in `[1e-150, 1e150]`.
pub(crate) fn node_sampler(
    dim: usize,
    noise: NoiseDistribution,
    sampler: SamplerKind,
    values: bool,
) -> Result<(SumOf, Option<Lattice>)> {
    if sampler == SamplerKind::FloatingPoint || noise.scale() == 0.0 {
        return Ok((noise.sum_of(1), None));
    }
    let exact = match noise {
        NoiseDistribution::Laplace { scale } => ExactNoise::laplace(scale)?,
        NoiseDistribution::Gaussian { sigma } => ExactNoise::gaussian(sigma)?,
    };
    let lattice = Lattice {
        noise: exact,
        prefix: if values {
            Vec::new()
        } else {
            crate::alloc::zeros("dim", dim)?
        },
        units: crate::alloc::zeros("dim", dim)?,
        zeros: crate::alloc::zeros("dim", dim)?,
    };
    Ok((SumOf::exact(&exact)?, Some(lattice)))
}

impl Lattice {
    /// The exact noise.
    pub(crate) fn noise(&self) -> ExactNoise {
        self.noise
    }

    /// The grid.
    pub(crate) fn grid(&self) -> Grid {
        self.noise.grid
    }

    /// Bytes held.
    pub(crate) fn nbytes(&self) -> usize {
        16 * self.prefix.capacity() + 8 * (self.units.capacity() + self.zeros.capacity())
    }

    /// Check a deserialized lattice against the mechanism's `dim` and rebuild its scratch rows.
    pub(crate) fn restore(&mut self, dim: usize, values: bool) -> Result<()> {
        let bad = || CoreError::State("exact-path state is inconsistent".into());
        if self.prefix.len() != if values { 0 } else { dim } {
            return Err(bad());
        }
        // What `ExactNoise::laplace` / `gaussian` build: a valid grid and a scale of [2^30, 2^31] units.
        let units = self.noise.units_scale();
        if Grid::new(self.noise.grid.exponent).is_err() || !(1 << 30..=1 << 31).contains(&units) {
            return Err(bad());
        }
        self.units = crate::alloc::zeros("dim", dim)?;
        self.zeros = crate::alloc::zeros("dim", dim)?;
        Ok(())
    }

    /// Scale a release in grid units (computed at construction, before any data) to value units, checking it.
    ///
    /// Errors: [`CoreError::IterationLimit`] if a draw failed ([`crate::noise::UnitDraw`]).
    pub(crate) fn scale_release(&self, units: &mut [f64]) -> Result<()> {
        if units.iter().any(|u| u.is_nan()) {
            return Err(sampler_failed());
        }
        let gamma = self.grid().gamma();
        units.iter_mut().for_each(|u| *u *= gamma);
        Ok(())
    }
}

/// The node sampler of a decoded mechanism, [`node_sampler`]'s counterpart on restore: the exact sampler of
/// `lattice` once [`Lattice::restore`] has checked it against `dim` and `values`, else the floating-point
/// law `noise`.
///
/// Errors: [`CoreError::State`] from [`Lattice::restore`]; those of [`SumOf::exact`].
pub(crate) fn restored_node(
    lattice: &mut Option<Lattice>,
    dim: usize,
    values: bool,
    noise: NoiseDistribution,
) -> Result<SumOf> {
    match lattice.as_mut() {
        Some(l) => {
            l.restore(dim, values)?;
            SumOf::exact(&l.noise())
        }
        None => Ok(noise.sum_of(1)),
    }
}

/// Whether every entry of every one of a decoded state's floating-point `buffers` is finite.
pub(crate) fn all_finite(buffers: &[&[f64]]) -> bool {
    buffers.iter().all(|v| v.iter().all(|x| x.is_finite()))
}

fn sampler_failed() -> CoreError {
    CoreError::IterationLimit {
        routine: "exact noise sampler",
        limit: u64::from(crate::noise::exact::MAX_TRIALS),
        detail: ": a draw failed (probability below 1e-600); the mechanism cannot continue".into(),
    }
}

/// What the shared guard needs from a mechanism.
pub(crate) trait Guarded {
    /// Name in errors, e.g. `"TreeAggregator"`.
    const WHAT: &'static str;
    /// `(dim, t, horizon)`.
    fn counts(&self) -> (usize, u64, u64);
    /// The float path's running sums (checked against `±1e306`).
    fn running_sums(&self) -> &[f64];
    /// The exact state, if on the exact path.
    fn lattice(&mut self) -> Option<&mut Lattice>;
    /// Whether the exact path pushes the rows in grid units (the mechanism folds node values itself) rather
    /// than zeros (the mechanism keeps only noise; the guard adds the running sum).
    fn folds_values(&self) -> bool;
    /// Push rows that passed every check, writing one release per row into `out` (float path: data rows,
    /// releases in value units; exact path: rows in grid units or zeros, releases in grid units).
    fn push_checked(&mut self, xs: &[f64], out: &mut [f64]);
}

/// Push the row-major block `xs` (rows of length `dim`) one row at a time through `push_row`, each release
/// into the matching row of `out`: the block push of a mechanism whose rounds are independent single pushes.
pub(crate) fn push_rows(
    dim: usize,
    xs: &[f64],
    out: &mut [f64],
    mut push_row: impl FnMut(&[f64], &mut [f64]),
) {
    for (x, o) in xs.chunks_exact(dim).zip(out.chunks_exact_mut(dim)) {
        push_row(x, o);
    }
}

/// Push one row (`one`) or the row-major block `xs` through every check, then through the mechanism (module
/// docs, "The push guard").
///
/// Errors: [`CoreError::Shape`], [`CoreError::NonFinite`], [`CoreError::HorizonExhausted`],
/// [`CoreError::InvalidArgument`] naming `x` (a running sum beyond `±1e306`; a value beyond `2⁶²` grid units),
/// all with the mechanism unchanged; [`CoreError::IterationLimit`] as in the module docs.
pub(crate) fn push_guarded<M: Guarded>(
    m: &mut M,
    xs: &[f64],
    out: &mut [f64],
    one: bool,
) -> Result<()> {
    let (dim, t, horizon) = m.counts();
    let rows = if one {
        check_push(dim, xs, out)?;
        1
    } else {
        check_block(dim, xs, out)?
    };
    check_room(M::WHAT, t, horizon, rows)?;
    let values = m.folds_values();
    let Some(lattice) = m.lattice() else {
        check_sums(m.running_sums(), xs)?;
        m.push_checked(xs, out);
        return Ok(());
    };
    let grid = lattice.grid();
    // Scratch rows: the lattice's own for one row, a block's worth otherwise (one allocation per block).
    let mut units = if one {
        std::mem::take(&mut lattice.units)
    } else {
        crate::alloc::zeros("X in grid units", xs.len())?
    };
    if let Err(e) = grid.quantize_units(xs, &mut units) {
        if one {
            lattice.units = units;
        }
        return Err(e);
    }
    let zeros = if values {
        Vec::new()
    } else if one {
        std::mem::take(&mut lattice.zeros)
    } else {
        crate::alloc::zeros("X", xs.len())?
    };
    m.push_checked(if values { &units } else { &zeros }, out);
    let failed = out.iter().any(|o| o.is_nan());
    // The lattice is still there (push_checked does not remove it); `if let` only to avoid a panic path.
    if let Some(lattice) = m.lattice() {
        if !failed {
            let gamma = grid.gamma();
            if values {
                out.iter_mut().for_each(|o| *o *= gamma);
            } else {
                for (row, n) in out.chunks_exact_mut(dim).zip(units.chunks_exact(dim)) {
                    for ((o, p), &ni) in row.iter_mut().zip(lattice.prefix.iter_mut()).zip(n) {
                        // ni and *o are integers (exact in f64) below 2⁶² in magnitude (the guard's bound;
                        // the noise rows' bound), so the 64-bit conversions are exact; the sum is the integer
                        // Σ ỹ_v of the cover.
                        *p += i128::from(ni as i64);
                        *o = grid.value(*p + i128::from(*o as i64));
                    }
                }
            }
        }
        if one {
            lattice.units = units;
            if !values {
                lattice.zeros = zeros;
            }
        }
    }
    if failed {
        return Err(sampler_failed());
    }
    Ok(())
}
