//! Sampler entry points used by `dponline.noise` (for testing and auditing the core's samplers).

use dponline_core::noise::NoiseDistribution;
use dponline_core::noise::exact::{DiscreteGaussian, DiscreteLaplace, IntegerSampler};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::convert::{detached, generator, int_arg, len_arg, real_arg};
use crate::errors::OrRaise;

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
    let mut rng = generator(py, seed, secure, 0)?;
    let out = detached(py, move || {
        let mut out = dponline_core::alloc::zeros(format!("{size} noise draws"), size)?;
        dist.sum_of(count).add_to(&mut rng, &mut out);
        Ok(out)
    })?;
    Ok(out.into_pyarray(py))
}

/// Draws below this many are made with the GIL held (releasing it costs more than they do).
const DETACH_DRAWS: usize = 1 << 12;

/// ``size`` i.i.d. exact draws on the integers: ``noise = "laplace"`` is ``DLap(scale)``, ``"gaussian"`` is
/// ``N_Z(0, scale²)`` (the core's `noise::exact`, Canonne-Kamath-Steinke 2020). ``seed=None`` draws from the
/// OS-keyed ChaCha20 generator; a seed from the reproducible xoshiro256++ one.
#[pyfunction]
#[pyo3(signature = (noise, scale, size, *, seed = None))]
pub fn sample_discrete<'py>(
    py: Python<'py>,
    noise: &str,
    scale: &Bound<'py, PyAny>,
    size: &Bound<'py, PyAny>,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    enum Exact {
        Laplace(DiscreteLaplace),
        Gaussian(DiscreteGaussian),
    }
    let (name, exact) = match noise {
        "laplace" => ("scale", true),
        "gaussian" => ("sigma", false),
        other => {
            return Err(crate::errors::invalid_input(format!(
                "noise must be 'laplace' or 'gaussian', got {other:?}"
            )));
        }
    };
    let scale = real_arg(scale, name, Some(0.0), true)?;
    let size = len_arg(size, "size", 0)?;
    let sampler = if exact {
        Exact::Laplace(DiscreteLaplace::from_scale(scale).or_raise()?)
    } else {
        Exact::Gaussian(DiscreteGaussian::from_sigma(scale).or_raise()?)
    };
    let mut rng = generator(py, seed, false, 0)?;
    let mut draw = move || {
        let mut out: Vec<i64> = dponline_core::alloc::zeros(format!("{size} noise draws"), size)?;
        dponline_core::with_generator!(&mut rng, g => match &sampler {
            Exact::Laplace(s) => s.fill(g, &mut out),
            Exact::Gaussian(s) => s.fill(g, &mut out),
        })?;
        Ok(out)
    };
    let out = if size >= DETACH_DRAWS {
        detached(py, draw)?
    } else {
        draw().or_raise()?
    };
    Ok(out.into_pyarray(py))
}
