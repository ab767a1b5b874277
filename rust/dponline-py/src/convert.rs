//! Conversions at the Python boundary: seeds, numpy arrays, and the one helper that releases the GIL.

use std::sync::Mutex;

use dponline_core::CoreError;
use dponline_core::interrupt::Poll;
use dponline_core::rng::{Generator, Seed};
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::errors::{OrRaise, invalid_input};

/// How an object's noise is keyed: seed material and whether the generator is the secure one.
///
/// Without a seed (or with `secure=True`, which then refuses a seed) the object is secure: OS-keyed ChaCha20,
/// the words are unused. With a seed (int / SeedSequence / numpy Generator) the words key xoshiro256++.
pub fn keying(
    py: Python<'_>,
    seed: Option<&Bound<'_, PyAny>>,
    secure: bool,
) -> PyResult<(Seed, bool)> {
    let secure = secure || seed.is_none_or(|s| s.is_none());
    Ok((seed_words(py, seed, secure)?, secure))
}

/// The generator of stream `stream` for a Python `seed`: secure when unseeded (see [`keying`]).
pub fn generator(
    py: Python<'_>,
    seed: Option<&Bound<'_, PyAny>>,
    secure: bool,
    stream: u64,
) -> PyResult<Generator> {
    let (words, secure) = keying(py, seed, secure)?;
    Generator::for_stream(&words, stream, secure).or_raise()
}

/// Seed material from a Python `seed`, derived here (no call into the Python package):
///
/// * `None`, or any seed with `secure` (which then must be `None`): four zero words (the secure generator is
///   OS-keyed and ignores them);
/// * a non-negative `int` or NumPy integer: the words of `numpy.random.SeedSequence(seed)`
///   ([`dponline_core::rng::seed_sequence_words`], computed natively);
/// * a `numpy.random.SeedSequence`: its `generate_state(4, dtype=uint64)` (pass `ss.spawn(k)` children for
///   independent objects);
/// * a `numpy.random.Generator`: four words drawn from it (advancing it).
///
/// Raises `InvalidInputError` for a negative int, an unsupported type, or a seed combined with `secure=True`.
pub fn seed_words(py: Python<'_>, seed: Option<&Bound<'_, PyAny>>, secure: bool) -> PyResult<Seed> {
    static GENERATOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static SEED_SEQUENCE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    static INTEGER: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let Some(seed) = seed.filter(|s| !s.is_none()) else {
        return Ok([0; 4]);
    };
    if secure {
        return Err(invalid_input(format!(
            "seed must be None when secure=True: the secure generator is keyed from the operating system and \
             cannot be reproduced, got seed={}",
            seed.repr()?
        )));
    }
    let words: Vec<u64> = if seed.is_instance(GENERATOR.import(
        py,
        "numpy.random",
        "Generator",
    )?)? {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("size", 4)?;
        kwargs.set_item("dtype", "uint64")?;
        kwargs.set_item("endpoint", false)?;
        seed.call_method("integers", (0, 1u128 << 64), Some(&kwargs))?
            .extract()?
    } else if seed.is_instance(SEED_SEQUENCE.import(py, "numpy.random", "SeedSequence")?)? {
        seed.call_method1("generate_state", (4, "uint64"))?
            .extract()?
    } else if (seed.is_instance_of::<pyo3::types::PyInt>()
        && !seed.is_instance_of::<pyo3::types::PyBool>())
        || seed.is_instance(INTEGER.import(py, "numpy", "integer")?)?
    {
        let n = crate::validate::integer("seed", seed, Some(0), None)
            .map_err(|_| invalid_input(format!("seed must be a non-negative int, got {seed}")))?;
        let bits: usize = n.call_method0("bit_length")?.extract()?;
        let bytes: Vec<u8> = n
            .call_method1("to_bytes", (bits.div_ceil(32).max(1) * 4, "little"))?
            .extract()?;
        let entropy: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        return Ok(dponline_core::rng::seed_sequence_words(&entropy));
    } else {
        return Err(invalid_input(format!(
            "seed must be None, a non-negative int, a numpy.random.SeedSequence or a numpy.random.Generator, \
             got {}",
            seed.get_type().name()?
        )));
    };
    words
        .try_into()
        .map_err(|_| invalid_input("seed material must be four 64-bit words"))
}

/// Whether `obj` is exactly a NumPy `ndarray` (not a subclass such as a masked array, whose mask the fast paths
/// would ignore).
fn plain_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_exact_instance_of::<numpy::PyUntypedArray>()
}

fn as_float_array<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    // A masked array's hidden values would be used silently: refused.
    crate::validate::unmasked(name, obj)?;
    let np = obj.py().import("numpy")?;
    // A complex array would lose its imaginary part silently (numpy only warns): refuse it.
    let complex = np
        .getattr("iscomplexobj")?
        .call1((obj,))
        .and_then(|c| c.is_truthy())
        .unwrap_or(false);
    if complex {
        return Err(invalid_input(format!(
            "{name} must be an array of real numbers, got complex values"
        )));
    }
    let kwargs = pyo3::types::PyDict::new(obj.py());
    kwargs.set_item("dtype", np.getattr("float64")?)?;
    np.getattr("ascontiguousarray")?
        .call((obj,), Some(&kwargs))
        .map_err(|e| {
            invalid_input(format!(
                "{name} must be convertible to a float64 array, got {} ({e})",
                type_name(obj)
            ))
        })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// A float64 vector of length `len` (any array-like accepted; no copy for a contiguous float64 array).
///
/// Raises `InvalidInputError` naming `name` for a wrong shape or a non-numeric input.
pub fn vector<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    len: usize,
) -> PyResult<PyReadonlyArray1<'py, f64>> {
    let arr: PyReadonlyArray1<'py, f64> = match obj.extract::<PyReadonlyArray1<'py, f64>>() {
        Ok(a) if a.is_c_contiguous() && plain_ndarray(obj) => a,
        _ => {
            let converted = as_float_array(obj, name)?;
            converted
                .extract::<PyReadonlyArray1<'py, f64>>()
                .map_err(|_| {
                    let shape: Vec<usize> = converted
                        .getattr("shape")
                        .and_then(|s| s.extract())
                        .unwrap_or_default();
                    invalid_input(format!(
                        "{name} must be a 1-D array of length {len}, got shape {shape:?}"
                    ))
                })?
        }
    };
    if arr.len() != len {
        return Err(invalid_input(format!(
            "{name} must be a 1-D array of length {len}, got shape ({},)",
            arr.len()
        )));
    }
    Ok(arr)
}

/// Call `f` on `obj` as a float64 slice of length `len`. A C-contiguous float64 ndarray is read in place
/// (the fast path of per-round calls); anything else goes through [`vector`].
///
/// Raises `InvalidInputError` naming `name` for a wrong shape or a non-numeric input.
pub fn with_vector<'py, T>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    len: usize,
    f: impl FnOnce(&[f64]) -> PyResult<T>,
) -> PyResult<T> {
    if let Ok(arr) = obj.cast::<numpy::PyArray1<f64>>() {
        if arr.is_c_contiguous() && arr.len() == len && plain_ndarray(obj) {
            // SAFETY: the GIL is held for the whole call (nothing here releases it and the module runs with
            // the GIL), so no Python code can mutate or resize the array while the slice is alive.
            let data = unsafe { numpy::PyArrayMethods::as_slice(arr) }
                .map_err(|e| invalid_input(format!("{name}: {e}")))?;
            return f(data);
        }
    }
    let arr = vector(obj, name, len)?;
    f(slice(&arr))
}

/// A C-contiguous float64 matrix with `cols` columns, copied into an owned row-major `Vec` (so it can be
/// read without the GIL). Returns `(rows, data)`.
pub fn matrix_owned(
    obj: &Bound<'_, PyAny>,
    name: &str,
    cols: usize,
) -> PyResult<(usize, Vec<f64>)> {
    let shape_error = |shape: Vec<usize>| {
        invalid_input(format!(
            "{name} must be a 2-D array of shape (m, {cols}), got shape {shape:?}"
        ))
    };
    let converted;
    let arr: PyReadonlyArray2<'_, f64> = match obj.extract::<PyReadonlyArray2<'_, f64>>() {
        Ok(a) if a.is_c_contiguous() && plain_ndarray(obj) => a,
        _ => {
            converted = as_float_array(obj, name)?;
            converted
                .extract::<PyReadonlyArray2<'_, f64>>()
                .map_err(|_| {
                    shape_error(
                        converted
                            .getattr("shape")
                            .and_then(|s| s.extract())
                            .unwrap_or_default(),
                    )
                })?
        }
    };
    let shape = arr.shape().to_vec();
    if shape[1] != cols {
        return Err(shape_error(shape));
    }
    // Copy in logical (row-major) order: works for any layout, including misaligned buffers (e.g. arrays
    // unpickled from a byte stream), which `as_slice` refuses.
    let view = arr.as_array();
    let mut data = dponline_core::alloc::reserve(format!("{name} of shape {shape:?}"), view.len())
        .or_raise()?;
    data.extend(view.iter().copied());
    Ok((shape[0], data))
}

/// A 2-D float array of rows as `(columns, row-major values)`; `axes` names its axes in the error.
pub fn rows_arg(data: &Bound<'_, PyAny>, name: &str, axes: &str) -> PyResult<(usize, Vec<f64>)> {
    let shape: Vec<usize> = data
        .getattr("shape")
        .and_then(|s| s.extract())
        .unwrap_or_default();
    let [_, cols] = shape.as_slice() else {
        return Err(invalid_input(format!(
            "{name} must be a 2-D array ({axes}), got shape {shape:?}"
        )));
    };
    let (_, values) = matrix_owned(data, name, *cols)?;
    Ok((*cols, values))
}

/// Run `f` with the GIL released and map its core error. The only place bindings release the GIL.
pub fn detached<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce() -> dponline_core::Result<T>,
{
    crate::errors::guarded(|| py.detach(f).or_raise())
}

/// Run the core call `f` with the GIL released, giving it a [`Poll`] that checks for Python signals (Ctrl-C)
/// each time the core asks (every [`dponline_core::interrupt::POLL_ROUNDS`] rounds of a long loop).
///
/// Raises what the signal handler raised (`KeyboardInterrupt`) when the poll stopped the call, else as
/// [`detached`].
pub fn detached_polled<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce(Poll<'_>) -> dponline_core::Result<T>,
{
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let poll = || match Python::attach(|py| py.check_signals()) {
        Ok(()) => false,
        Err(err) => {
            if let Ok(mut slot) = raised.lock() {
                *slot = Some(err);
            }
            true
        }
    };
    let outcome = crate::errors::guarded(|| Ok(py.detach(|| f(&poll))))?;
    match outcome {
        Err(CoreError::Interrupted) => Err(raised
            .into_inner()
            .ok()
            .flatten()
            .unwrap_or_else(|| crate::errors::to_py(CoreError::Interrupted))),
        other => other.or_raise(),
    }
}

/// Read-only slice of a contiguous array (contiguity is guaranteed by the constructors above).
pub fn slice<'a>(arr: &'a PyReadonlyArray1<'_, f64>) -> &'a [f64] {
    // Arrays from `vector`/`any_vector` are C-contiguous, so `as_slice` cannot fail.
    arr.as_slice().unwrap_or(&[])
}

/// A flag argument (`#[pyo3(from_py_with = flag)]`): `bool` or NumPy `bool_` only, else `InvalidInputError`
/// (the rule of every Python wrapper).
pub fn flag(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    crate::validate::flag("flag argument", value)
}

/// The `atol` argument of `contains` (`#[pyo3(from_py_with = atol)]`): a finite real number.
pub fn atol(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    crate::validate::real("atol", value, None, false)
}

/// A list of non-negative integers named `name`, each through the shared validator (a string, bytes or a
/// non-iterable is refused).
///
/// Raises `InvalidInputError` naming `name` (negative or huge entries, wrong types).
pub fn int_list(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<u64>> {
    let refuse = || invalid_input(format!("{name} must be a list of integers, got {value}"));
    sequence_items(value, refuse)?
        .map(|item| int_arg(&item?, name, 0, None))
        .collect()
}

/// The items of a sequence-of-numbers argument: an iterator over `value`, or the error `refuse()` for a value
/// that is not iterable or is a `str` or `bytes` (iterable, but never a sequence of numbers meant as one).
pub fn sequence_items<'py>(
    value: &Bound<'py, PyAny>,
    refuse: impl Fn() -> PyErr,
) -> PyResult<Bound<'py, pyo3::types::PyIterator>> {
    if value.is_instance_of::<pyo3::types::PyString>()
        || value.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(refuse());
    }
    value.try_iter().map_err(|_| refuse())
}

/// A list of non-negative integers (`#[pyo3(from_py_with = indices)]`), each through the shared validator.
pub fn indices(value: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    int_list(value, "index or capacity")?
        .into_iter()
        .map(|n| {
            usize::try_from(n).map_err(|_| {
                invalid_input(format!(
                    "index or capacity is too large for this platform: {n}"
                ))
            })
        })
        .collect()
}

/// The `checkpoints` argument (`#[pyo3(from_py_with = checkpoints)]`): a list of round numbers `>= 0`.
pub fn checkpoints(value: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    int_list(value, "checkpoints")
}

/// A round argument `t >= 0` (`#[pyo3(from_py_with = round)]`).
pub fn round(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_arg(value, "t", 0, None)
}

/// An arm argument `>= 0` (`#[pyo3(from_py_with = arm)]`).
pub fn arm(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    len_arg(value, "arm", 0)
}

/// A list of lists of non-negative integers (`#[pyo3(from_py_with = index_lists)]`).
pub fn index_lists(value: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<usize>>> {
    if value.is_instance_of::<pyo3::types::PyString>() {
        return Err(invalid_input(format!(
            "expected a list of lists of integers, got {value}"
        )));
    }
    let items = value
        .try_iter()
        .map_err(|_| invalid_input(format!("expected a list of lists of integers, got {value}")))?;
    items.map(|item| indices(&item?)).collect()
}

/// A validated integer in `[low, high]` ([`crate::validate::integer`]); `high = None` means "fits in a `u64`".
pub fn int_arg(value: &Bound<'_, PyAny>, name: &str, low: u64, high: Option<u64>) -> PyResult<u64> {
    crate::validate::integer(name, value, Some(low), high)?
        .extract::<u64>()
        .map_err(|_| invalid_input(format!("{name} is too large for this platform: {value}")))
}

/// A validated integer `>= low` that fits in a `usize` (see [`int_arg`]).
pub fn len_arg(value: &Bound<'_, PyAny>, name: &str, low: u64) -> PyResult<usize> {
    let n = int_arg(value, name, low, None)?;
    usize::try_from(n)
        .map_err(|_| invalid_input(format!("{name} is too large for this platform: {n}")))
}

/// A validated finite float `>= low` (`> low` when `low_open`), or any finite float
/// ([`crate::validate::real`]).
pub fn real_arg(
    value: &Bound<'_, PyAny>,
    name: &str,
    low: Option<f64>,
    low_open: bool,
) -> PyResult<f64> {
    crate::validate::real(name, value, low, low_open)
}

/// The value named `value` among `options` (`(name, value)` pairs, written once per option set).
///
/// Raises `InvalidInputError`: "`{what} must be 'a' or 'b', got "c"`".
pub fn named<T: Copy>(what: &str, value: &str, options: &[(&str, T)]) -> PyResult<T> {
    options
        .iter()
        .find(|(name, _)| *name == value)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let quoted: Vec<String> = options.iter().map(|(o, _)| format!("'{o}'")).collect();
            invalid_input(format!(
                "{what} must be {}, got {value:?}",
                quoted.join(" or ")
            ))
        })
}

/// The name of `value` in `options` (the inverse of [`named`]; `""` for a value not listed).
pub fn name_of<T: PartialEq>(options: &[(&'static str, T)], value: &T) -> &'static str {
    options
        .iter()
        .find(|(_, v)| v == value)
        .map_or("", |(name, _)| name)
}

/// What `__reduce__` returns to pickle an object rebuilt by `target(*args, **kwargs)`: a
/// `functools.partial(target, **kwargs)` and `args`.
pub fn reduce_partial<'py>(
    target: Bound<'py, PyAny>,
    args: impl IntoPyObject<'py>,
    kwargs: Bound<'py, pyo3::types::PyDict>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let py = target.py();
    let args = pyo3::IntoPyObjectExt::into_bound_py_any(args, py)?;
    let partial = py
        .import("functools")?
        .getattr("partial")?
        .call((target,), Some(&kwargs))?;
    Ok((partial, args))
}

/// Borrow a pyclass mutably, or raise `StateError` when another thread is using it (instead of a panic or
/// PyO3's generic borrow error).
pub fn exclusive<'py, T>(slf: &Bound<'py, T>, what: &str) -> PyResult<PyRefMut<'py, T>>
where
    T: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::False>,
{
    slf.try_borrow_mut().map_err(|_| crate::errors::busy(what))
}

/// Borrow a pyclass immutably, or raise `StateError` when another thread holds it mutably.
pub fn shared<'py, T: pyo3::PyClass>(slf: &Bound<'py, T>, what: &str) -> PyResult<PyRef<'py, T>> {
    slf.try_borrow().map_err(|_| crate::errors::busy(what))
}

/// Rounds per native block between two checks for signals (Ctrl-C) in [`run_blocks`].
pub const BLOCK_ROUNDS: u64 = 1 << 16;

/// Totals of a native run, as every learner's core `run` reports them.
pub use dponline_core::learners::RunSummary;

/// What a learner's native `run` returns to Python: `(total_loss, clipped, cumulative loss at each checkpoint)`.
pub type RunOutput<'py> = (f64, u64, Bound<'py, numpy::PyArray1<f64>>);

/// The body of every learner's `run` binding: raise `check` (the core's `check_run`, which validates
/// everything and mutates nothing), then [`run_blocks`], and convert the totals for Python.
pub fn run_native<'py, F>(
    py: Python<'py>,
    check: dponline_core::Result<()>,
    start: u64,
    rounds: u64,
    checkpoints: &[u64],
    progress: Option<&Bound<'py, PyAny>>,
    block: F,
) -> PyResult<RunOutput<'py>>
where
    F: FnMut(u64, &[u64], &mut [f64]) -> dponline_core::Result<RunSummary> + Send,
{
    check.or_raise()?;
    let (summary, cumulative) = run_blocks(py, start, rounds, checkpoints, progress, block)?;
    Ok((
        summary.total_loss,
        summary.clipped,
        numpy::IntoPyArray::into_pyarray(cumulative, py),
    ))
}

/// Run a learner's native loop for `rounds` rounds starting at absolute round `start`, in blocks of
/// [`BLOCK_ROUNDS`] with the GIL released, checking for signals between blocks.
///
/// `block(rounds, checkpoints, cumulative)` runs one block natively (the core `run` contract: absolute
/// checkpoints of that block, cumulative loss since the block's start). `progress`, if given, is called with
/// the rounds done after every block. Returns the summed totals and the cumulative loss at each of the
/// `checkpoints` (absolute, sorted; those at or before `start` read 0).
///
/// Raises `KeyboardInterrupt` (or whatever a signal handler raises) at a block boundary: the learner is then
/// consistent — it has played whole blocks — and a later `run` continues exactly where it stopped.
pub fn run_blocks<F>(
    py: Python<'_>,
    start: u64,
    rounds: u64,
    checkpoints: &[u64],
    progress: Option<&Bound<'_, PyAny>>,
    mut block: F,
) -> PyResult<(RunSummary, Vec<f64>)>
where
    F: FnMut(u64, &[u64], &mut [f64]) -> dponline_core::Result<RunSummary> + Send,
{
    if checkpoints.windows(2).any(|w| w[0] > w[1]) {
        return Err(invalid_input(
            "checkpoints must be sorted in increasing order",
        ));
    }
    let mut cumulative =
        dponline_core::alloc::zeros("checkpoint buffer", checkpoints.len()).or_raise()?;
    let mut total = RunSummary {
        rounds: 0,
        total_loss: 0.0,
        clipped: 0,
    };
    let mut first = checkpoints.partition_point(|&c| c <= start);
    while total.rounds < rounds {
        let n = BLOCK_ROUNDS.min(rounds - total.rounds);
        let hi = start + total.rounds + n;
        let last = first + checkpoints[first..].partition_point(|&c| c <= hi);
        let (marks, out) = (&checkpoints[first..last], &mut cumulative[first..last]);
        let part = crate::errors::guarded(|| py.detach(|| block(n, marks, out)).or_raise())?;
        out.iter_mut().for_each(|c| *c += total.total_loss);
        total.rounds += part.rounds;
        total.total_loss += part.total_loss;
        total.clipped += part.clipped;
        first = last;
        if let Some(callback) = progress {
            callback.call1((n,))?;
        }
        py.check_signals()?;
    }
    Ok((total, cumulative))
}

/// A dict of named values, in the order written (`Ok(dict)`; `?` on every insertion):
/// `py_dict!(py, p; horizon, eta_rule = expr, bound ?= expr)` — `horizon` is `p.horizon` under its own name,
/// `eta_rule = expr` any value, `bound ?= expr` an `Option` present only when `Some`.
macro_rules! py_dict {
    ($py:expr, $p:ident; $($entries:tt)*) => {{
        let d = pyo3::types::PyDict::new($py);
        $crate::convert::py_dict!(@entry d, $p; $($entries)*);
        Ok::<_, pyo3::PyErr>(d)
    }};
    (@entry $d:ident, $p:ident;) => {};
    (@entry $d:ident, $p:ident; $key:ident = $value:expr $(, $($rest:tt)*)?) => {
        $d.set_item(stringify!($key), $value)?;
        $crate::convert::py_dict!(@entry $d, $p; $($($rest)*)?);
    };
    (@entry $d:ident, $p:ident; $key:ident ?= $value:expr $(, $($rest:tt)*)?) => {
        if let Some(value) = $value {
            $d.set_item(stringify!($key), value)?;
        }
        $crate::convert::py_dict!(@entry $d, $p; $($($rest)*)?);
    };
    (@entry $d:ident, $p:ident; $key:ident $(, $($rest:tt)*)?) => {
        $d.set_item(stringify!($key), $p.$key)?;
        $crate::convert::py_dict!(@entry $d, $p; $($($rest)*)?);
    };
}

pub(crate) use py_dict;
