//! Run-time CPU-feature dispatch for the hot loops: the one place in `dponline-core` that uses `unsafe`.
//!
//! The wheel is built for baseline x86-64 (SSE2: two doubles per instruction). [`dispatch`] runs a closure
//! inside a function compiled for the widest instruction set the running CPU supports — AVX-512 (x86-64-v4),
//! AVX2 with FMA (x86-64-v3) or the baseline — so the loops inlined into the closure are auto-vectorised
//! four or eight doubles wide. Callers write their kernel once, as ordinary safe Rust marked
//! `#[inline(always)]` (a call that is not inlined runs at the baseline), and wrap the call in a closure that
//! is itself `#[inline(always)]`: `simd::dispatch(#[inline(always)] || kernel(a, b, out))`. The attribute on
//! the closure matters: [`run_at`] calls the closure from three places (one per level), so without it LLVM
//! keeps a large closure body as one out-of-line function compiled for the baseline, and every level runs
//! the baseline code (measured: the softmax at N = 10⁴ took the same time at every level without it, 2.4×
//! less at AVX-512 with it).
//!
//! **Results do not depend on the level.** Rust never contracts `a * b + c` into a fused multiply-add and
//! LLVM never reorders floating-point reductions without fast-math flags, so a kernel computes the same bits
//! at every level; only the width of the instructions changes. `tests::levels_agree_bitwise` checks this on
//! the kernels that use dispatch, and a seeded run stays bit-identical across machines.
//!
//! **Why this is sound.** Calling a `#[target_feature]` function on a CPU without those features is undefined
//! behaviour, so each call below is made only after [`detected`] confirmed every feature it enables
//! (`is_x86_feature_detected!`, cached by the standard library). The level can be capped, never raised, with
//! the environment variable `DPONLINE_SIMD` (`baseline`, `avx2` or `avx512`, read once) or [`run_at`].
#![allow(unsafe_code)]

use std::sync::OnceLock;

/// An instruction-set level for [`run_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The build's baseline (SSE2 on x86-64; every level on other architectures).
    Baseline,
    /// x86-64-v3: AVX2, FMA, BMI1/2, LZCNT, POPCNT.
    Avx2,
    /// x86-64-v4: x86-64-v3 plus AVX-512 F, DQ, VL, BW and CD.
    Avx512,
}

impl Level {
    /// The name accepted by `DPONLINE_SIMD`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn cpu_level() -> Level {
    use std::arch::is_x86_feature_detected as has;
    let v3 = has!("avx")
        && has!("avx2")
        && has!("fma")
        && has!("bmi1")
        && has!("bmi2")
        && has!("lzcnt")
        && has!("popcnt");
    let v4 = v3
        && has!("avx512f")
        && has!("avx512dq")
        && has!("avx512vl")
        && has!("avx512bw")
        && has!("avx512cd");
    if v4 {
        Level::Avx512
    } else if v3 {
        Level::Avx2
    } else {
        Level::Baseline
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_level() -> Level {
    Level::Baseline
}

/// The level [`dispatch`] uses: the CPU's, capped by `DPONLINE_SIMD` if that is set to a known name.
pub fn detected() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let cap = match std::env::var("DPONLINE_SIMD").as_deref() {
            Ok("baseline") => Level::Baseline,
            Ok("avx2") => Level::Avx2,
            _ => Level::Avx512,
        };
        cpu_level().min(cap)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
fn run_avx2<R, F: FnOnce() -> R>(f: F) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512dq,avx512vl,avx512bw,avx512cd"
)]
fn run_avx512<R, F: FnOnce() -> R>(f: F) -> R {
    f()
}

/// Run `f` compiled for the widest level the CPU supports (see the module docs). Both `f` (write
/// `#[inline(always)] || kernel(..)`) and the kernel it calls must be `#[inline(always)]` to benefit; the
/// result is the same at every level.
#[inline(always)]
pub fn dispatch<R, F: FnOnce() -> R>(f: F) -> R {
    run_at(Level::Avx512, f)
}

/// Run `f` compiled for `level`, or for the CPU's level ([`detected`]) if that is lower.
#[inline(always)]
pub fn run_at<R, F: FnOnce() -> R>(level: Level, f: F) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        match level.min(detected()) {
            // SAFETY: `detected()` confirmed every feature `run_avx512` enables.
            Level::Avx512 => unsafe { run_avx512(f) },
            // SAFETY: `detected()` confirmed every feature `run_avx2` enables.
            Level::Avx2 => unsafe { run_avx2(f) },
            Level::Baseline => f(),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_agree_bitwise() {
        let mut rng = crate::rng::Generator::from_seed([3, 1, 4, 1]);
        let s: Vec<f64> = (0..1003).map(|_| 50.0 * rng.open01()).collect();
        let at = |level| {
            let mut out = vec![0.0; s.len()];
            run_at(
                level,
                #[inline(always)]
                || crate::vecops::softmax_neg_scaled_kernel(&s, 0.7, &mut out),
            );
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        let base = at(Level::Baseline);
        assert_eq!(base, at(Level::Avx2));
        assert_eq!(base, at(Level::Avx512));
    }

    #[test]
    fn level_is_capped_never_raised() {
        assert!(detected() <= Level::Avx512);
        assert_eq!(run_at(Level::Baseline, || 7), 7);
        assert_eq!(Level::Avx2.name(), "avx2");
    }
}
