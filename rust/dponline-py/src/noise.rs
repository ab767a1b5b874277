//! Sampler entry points used by `dponline.noise` (for testing and auditing the core's samplers).

use dponline_core::noise::NoiseDistribution;
use dponline_core::noise::exact::{DiscreteGaussian, DiscreteLaplace, IntegerSampler};
use dponline_core::rng::{Generator, with_shared_secure};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::convert::{detached, generator, int_arg, len_arg, real_arg};
use crate::errors::OrRaise;

/// Calls drawing fewer values than this are made with the GIL held (releasing it costs more than they do).
const DETACH_DRAWS: usize = 1 << 12;

/// `size` values written by `fill` into a zeroed buffer, from the generator a Python `seed` selects — the one
/// home of the keying, allocation and GIL policy of both sampler entry points.
///
/// * Seeded (`seed` not `None`): the reproducible xoshiro256++ stream 0 of the seed (the same draws every call).
/// * Unseeded, fewer than [`DETACH_DRAWS`] values: the process-wide OS-keyed ChaCha20 generator
///   ([`with_shared_secure`]: keyed once per process, re-keyed in a forked child, never copied), with the GIL
///   held, so a small call costs its draws and not a `getrandom` call and a key setup.
/// * Unseeded, larger: a freshly OS-keyed ChaCha20 generator (its key setup is then negligible), the GIL
///   released.
///
/// Raises `InvalidInputError` for a bad `seed` (or a seed with `secure=True`), `MemoryError` when `size` values
/// cannot be allocated, and what `fill` returns.
fn draws<T, F>(
    py: Python<'_>,
    size: usize,
    seed: Option<&Bound<'_, PyAny>>,
    secure: bool,
    fill: F,
) -> PyResult<Vec<T>>
where
    T: Clone + Default + Send,
    F: Send + FnOnce(&mut Generator, &mut [T]) -> dponline_core::Result<()>,
{
    let draw = move |g: &mut Generator| {
        let mut out = dponline_core::alloc::zeros("noise draws", size)?;
        fill(g, &mut out)?;
        Ok(out)
    };
    if size < DETACH_DRAWS && seed.is_none_or(|s| s.is_none()) {
        return with_shared_secure(draw).and_then(|r| r).or_raise();
    }
    let mut rng = generator(py, seed, secure, 0)?;
    if size < DETACH_DRAWS {
        draw(&mut rng).or_raise()
    } else {
        detached(py, move || draw(&mut rng))
    }
}

/// ``size`` i.i.d. draws of the sum of ``count`` i.i.d. ``noise(scale)`` variables (``count = 1``: plain draws).
#[pyfunction]
#[pyo3(signature = (noise, scale, size, *, count = None, seed = None, secure = false))]
pub fn sample_noise<'py>(
    py: Python<'py>,
    noise: &str,
    scale: &Bound<'py, PyAny>,
    size: &Bound<'py, PyAny>,
    count: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let scale = real_arg(scale, "scale", Some(0.0), false)?;
    let size = len_arg(size, "size", 0)?;
    let count = count.map_or(Ok(1), |c| int_arg(c, "count", 1, Some(u64::from(u32::MAX))))?;
    let count =
        u32::try_from(count).map_err(|_| crate::errors::invalid_input("count must be < 2**32"))?;
    let dist = NoiseDistribution::from_name(noise, scale).or_raise()?;
    let out = draws(py, size, seed, secure, move |g, out| {
        dist.sum_of(count).add_to(g, out);
        Ok(())
    })?;
    Ok(out.into_pyarray(py))
}

/// One of the core's exact samplers on the integers.
enum Exact {
    Laplace(DiscreteLaplace),
    Gaussian(DiscreteGaussian),
}

/// ``size`` i.i.d. exact draws on the integers: ``noise = "laplace"`` is ``DLap(scale)``, ``"gaussian"`` is
/// ``N_Z(0, scale²)`` (the core's `noise::exact`, Canonne-Kamath-Steinke 2020). ``seed=None`` draws from the
/// OS-keyed ChaCha20 generator (``secure=True`` only asserts it); a seed from the reproducible xoshiro256++ one.
#[pyfunction]
#[pyo3(signature = (noise, scale, size, *, seed = None, secure = false))]
pub fn sample_discrete<'py>(
    py: Python<'py>,
    noise: &str,
    scale: &Bound<'py, PyAny>,
    size: &Bound<'py, PyAny>,
    seed: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let sampler = match noise {
        "laplace" => Exact::Laplace(
            DiscreteLaplace::from_scale(real_arg(scale, "scale", Some(0.0), true)?).or_raise()?,
        ),
        "gaussian" => Exact::Gaussian(
            DiscreteGaussian::from_sigma(real_arg(scale, "sigma", Some(0.0), true)?).or_raise()?,
        ),
        other => {
            return Err(crate::errors::invalid_input(format!(
                "noise must be 'laplace' or 'gaussian', got {other:?}"
            )));
        }
    };
    let size = len_arg(size, "size", 0)?;
    let out = draws(py, size, seed, secure, move |g, out| {
        dponline_core::with_generator!(g, g => match &sampler {
            Exact::Laplace(s) => s.fill(g, out),
            Exact::Gaussian(s) => s.fill(g, out),
        })
    })?;
    Ok(out.into_pyarray(py))
}
