//! Sampler entry points used by `dponline.noise` (for testing and auditing the core's samplers).

use dponline_core::noise::NoiseDistribution;
use dponline_core::rng::Generator;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::convert::{detached, seed_words};
use crate::errors::OrRaise;

/// ``size`` i.i.d. draws of the sum of ``count`` i.i.d. ``noise(scale)`` variables (``count = 1``: plain draws).
#[pyfunction]
#[pyo3(signature = (noise, scale, size, *, count = 1, seed = None, secure = false))]
pub fn sample_noise<'py>(
    py: Python<'py>,
    noise: &str,
    scale: f64,
    size: usize,
    count: u32,
    seed: Option<&Bound<'py, PyAny>>,
    secure: bool,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let dist = NoiseDistribution::from_name(noise, scale).or_raise()?;
    let mut rng = Generator::for_stream(&seed_words(py, seed, secure)?, 0, secure).or_raise()?;
    let out = detached(py, move || {
        let mut out = vec![0.0; size];
        dist.sum_of(count).add_to(&mut rng, &mut out);
        Ok(out)
    })?;
    Ok(out.into_pyarray(py))
}
