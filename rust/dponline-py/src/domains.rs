//! `dponline._core.Domain` and its concrete subclasses: bindings of `dponline_core::domains`.
//!
//! `Domain` holds the core enum and every method; each concrete class (`Simplex`, `L1Ball`, …) is a Rust
//! subclass that only adds its constructor and docstring. Pickling: `__reduce__` returns
//! `(type(self)._from_state, (state,))`, and `_from_state` rebuilds the concrete class of the stored variant.

use dponline_core::CoreError;
use dponline_core::domains::{
    BipartiteMatchingPolytope, BirkhoffPolytope, Domain, FlowPolytope, GraphicMatroid,
    Hyperrectangle, KSparsePolytope, L1Ball, L2Ball, LinearMinimizationOracle, NuclearNormBall,
    PartitionMatroid, PathPolytope, Simplex, Spectraplex, SubmodularBasePolytope, UniformMatroid,
};
use dponline_core::error::check_finite;
use dponline_core::state::{from_state_bytes, to_state_bytes};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::PyClass;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::False;
use pyo3::types::{PyBytes, PyType};

use crate::convert::{len_arg, real_arg, slice, vector};
use crate::errors::{OrRaise, invalid_input, to_py};
use crate::submodular::PySubmodularFamily;

/// `(num_nodes, source, target)` validated as integers (nodes are checked against the graph by the core).
fn node_args(
    num_nodes: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
) -> PyResult<(usize, usize, usize)> {
    Ok((
        len_arg(num_nodes, "num_nodes", 0)?,
        len_arg(source, "source", 0)?,
        len_arg(target, "target", 0)?,
    ))
}

crate::class::py_class! {
    /// A convex decision set accessed through its linear minimisation oracle (LMO).
    ///
    /// Not constructed directly: use one of the concrete classes in ``dponline.domains``. Every domain has
    /// ``lmo``, ``contains``, ``project_tangent``, and the properties ``dim``, ``diameter``, ``affine_dim``,
    /// ``interior_point``, ``inscribed_radius`` and ``kind``; domains pickle.
    class PyDomain as "Domain" (subclass) { inner: Domain }
    getters {
        /// Ambient dimension.
        dim(&this, _py) { this.inner.dim() }
        /// Euclidean diameter, or a proven upper bound (each class says which).
        diameter(&this, _py) { this.inner.diameter() }
        /// Dimension of the affine hull.
        affine_dim(&this, _py) { this.inner.affine_dim() }
        /// A relative-interior point, the centre of the certified inscribed ball, shape ``(dim,)``.
        interior_point(&this, py) { PyArray1::from_slice(py, this.inner.interior_point()) }
        /// Certified radius ``r`` with ``B(c, r) ∩ aff(D) ⊆ D`` for ``c = interior_point``, or ``None`` if the
        /// domain has no certified radius.
        inscribed_radius(&this, _py) { this.inner.inscribed_radius() }
        /// Kind of domain, e.g. ``"Simplex"``.
        kind(&this, _py) { this.inner.kind() }
    }
    methods {
        /// A vertex ``v`` minimising ``⟨direction, v⟩`` over the domain, shape ``(dim,)``.
        ///
        /// Ties are broken deterministically (see the class). Raises ``InvalidInputError`` for a wrong shape
        /// and ``NonFiniteError`` for NaN or infinite entries.
        fn lmo<'py>(
            &mut self,
            py: Python<'py>,
            direction: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let d = finite_vector(direction, "direction", self.inner.dim())?;
            let out = PyArray1::<f64>::zeros(py, self.inner.dim(), false);
            {
                let mut rw = out.readwrite();
                let vertex = rw
                    .as_slice_mut()
                    .map_err(|e| invalid_input(e.to_string()))?;
                self.inner.lmo(slice(&d), vertex);
            }
            Ok(out)
        }

        /// Whether ``x`` (shape ``(dim,)``) lies in the domain up to ``atol`` on each defining constraint.
        #[pyo3(signature = (x, atol = 1e-9))]
        fn contains(
            &self,
            x: &Bound<'_, PyAny>,
            #[pyo3(from_py_with = crate::convert::atol)] atol: f64,
        ) -> PyResult<bool> {
            let x = vector(x, "x", self.inner.dim())?;
            Ok(self.inner.contains(slice(&x), atol))
        }

        /// Orthogonal projection of ``u`` (shape ``(dim,)``) onto the linear subspace parallel to the affine
        /// hull; a new array. Raises ``NonFiniteError`` for NaN or infinite entries.
        fn project_tangent<'py>(
            &mut self,
            py: Python<'py>,
            u: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let u = finite_vector(u, "u", self.inner.dim())?;
            // The projection is linear: project u / max|u| and scale back, so huge entries do not overflow the
            // sums inside the projection.
            let peak = slice(&u).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let scale = if peak > 0.0 { peak } else { 1.0 };
            let mut out: Vec<f64> = slice(&u).iter().map(|v| v / scale).collect();
            self.inner.project_tangent(&mut out);
            out.iter_mut().for_each(|v| *v *= scale);
            check_finite("project_tangent(u)", &out).or_raise()?;
            Ok(PyArray1::from_vec(py, out))
        }

        fn __reduce__<'py>(
            slf: &Bound<'py, Self>,
        ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
            let state = to_state_bytes(&slf.borrow().inner).or_raise()?;
            Ok((
                slf.get_type().getattr("_from_state")?,
                (PyBytes::new(slf.py(), &state),),
            ))
        }

        /// Rebuild a domain from ``__reduce__``'s state (the constructor arguments, validated again).
        ///
        /// Raises ``StateError`` for corrupt state or a domain of another kind than ``cls``.
        #[classmethod]
        fn _from_state<'py>(cls: &Bound<'py, PyType>, state: &[u8]) -> PyResult<Bound<'py, PyAny>> {
            let inner: Domain = from_state_bytes(state).or_raise()?;
            let kind = inner.kind();
            let obj = wrap(cls.py(), inner)?;
            if !obj.is_instance(cls)? {
                return Err(to_py(CoreError::State(format!(
                    "the state holds a {kind}, which is not a {}",
                    cls.name()?
                ))));
            }
            Ok(obj)
        }

        fn __repr__(&self) -> String {
            format!(
                "{}(dim={}, affine_dim={})",
                self.inner.kind(),
                self.inner.dim(),
                self.inner.affine_dim()
            )
        }
    }
}

/// A new Python object of the concrete class `S` holding `inner`.
fn new_object<'py, S>(py: Python<'py>, inner: Domain, class: S) -> PyResult<Bound<'py, PyAny>>
where
    S: PyClass<BaseType = PyDomain, Frozen = False>,
{
    check_constants(&inner)?;
    let init = PyClassInitializer::from(PyDomain { inner }).add_subclass(class);
    Ok(Bound::new(py, init)?.into_any())
}

/// The Python object of the concrete class matching `inner`'s variant.
fn wrap(py: Python<'_>, inner: Domain) -> PyResult<Bound<'_, PyAny>> {
    match &inner {
        Domain::Simplex(_) => new_object(py, inner, PySimplex),
        Domain::L1Ball(_) => new_object(py, inner, PyL1Ball),
        Domain::L2Ball(_) => new_object(py, inner, PyL2Ball),
        Domain::Box(_) => new_object(py, inner, PyBox),
        Domain::UniformMatroid(_) => new_object(py, inner, PyUniformMatroid),
        Domain::PartitionMatroid(_) => new_object(py, inner, PyPartitionMatroid),
        Domain::GraphicMatroid(_) => new_object(py, inner, PyGraphicMatroid),
        Domain::PathPolytope(_) => new_object(py, inner, PyPathPolytope),
        Domain::KSparse(_) => new_object(py, inner, PyKSparsePolytope),
        Domain::Birkhoff(_) => new_object(py, inner, PyBirkhoffPolytope),
        Domain::BipartiteMatching(_) => new_object(py, inner, PyBipartiteMatchingPolytope),
        Domain::Flow(_) => new_object(py, inner, PyFlowPolytope),
        Domain::NuclearNormBall(_) => new_object(py, inner, PyNuclearNormBall),
        Domain::Spectraplex(_) => new_object(py, inner, PySpectraplex),
        Domain::SubmodularBase(_) => new_object(py, inner, PySubmodularBasePolytope),
    }
}

/// A float64 vector of length `len` as [`vector`], refused (``NonFiniteError`` naming `name`) with a NaN or
/// infinite entry.
fn finite_vector<'py>(
    obj: &Bound<'py, PyAny>,
    name: &'static str,
    len: usize,
) -> PyResult<numpy::PyReadonlyArray1<'py, f64>> {
    let x = vector(obj, name, len)?;
    check_finite(name, slice(&x)).or_raise()?;
    Ok(x)
}

/// The optional ``radius`` of a ball: finite, ``> 0``, default 1.
fn radius_arg(radius: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
    radius.map_or(Ok(1.0), |r| real_arg(r, "radius", Some(0.0), true))
}

/// A domain with an optional ``radius`` (as [`radius_arg`], converted after the other arguments `args`):
/// `make(args, radius)` (e.g. `L1Ball::new`), its error raised as the mapped exception.
fn with_radius<A, D>(
    args: A,
    radius: Option<&Bound<'_, PyAny>>,
    make: impl FnOnce(A, f64) -> dponline_core::error::Result<D>,
) -> PyResult<D> {
    make(args, radius_arg(radius)?).or_raise()
}

/// The edges of a graph domain with one coordinate per edge, in coordinate order (empty for other domains;
/// each class's ``edges`` getter only ever passes its own kind).
fn edges_of(inner: &Domain) -> Vec<(usize, usize)> {
    match inner {
        Domain::PathPolytope(p) => p.edges().to_vec(),
        Domain::BipartiteMatching(p) => p.edges().to_vec(),
        Domain::Flow(p) => p.edges().to_vec(),
        _ => Vec::new(),
    }
}

/// The base-class initializer of a concrete class.
///
/// Raises `InvalidInputError` when a reported constant of the domain (diameter, centre, inscribed radius)
/// exceeds 1e150: e.g. ``L2Ball(n, radius=1e308)`` has diameter ``2e308 = inf``, and squared distances of
/// ``L2Ball(n, radius=1e300)`` overflow, which no learner can use.
fn base(inner: Domain) -> PyResult<PyClassInitializer<PyDomain>> {
    check_constants(&inner)?;
    Ok(PyClassInitializer::from(PyDomain { inner }))
}

fn check_constants(inner: &Domain) -> PyResult<()> {
    // Learners and Frank-Wolfe work with squared distances (½‖x‖², ‖s − x‖²): they stay finite when the
    // domain's extent is at most 1e150 (< sqrt(f64::MAX) ≈ 1.3e154).
    const MAX_EXTENT: f64 = 1e150;
    let within = |v: f64| v.is_finite() && v.abs() <= MAX_EXTENT;
    let finite = within(inner.diameter())
        && inner.interior_point().iter().all(|&v| within(v))
        && inner.inscribed_radius().is_none_or(within);
    if finite {
        Ok(())
    } else {
        Err(invalid_input(format!(
            "{} is too large for float64 arithmetic: its diameter ({:e}) and centre must be within 1e150 so that \
             squared distances stay finite; rescale the domain",
            inner.kind(),
            inner.diameter()
        )))
    }
}

/// A 1-D float64 array-like of any length, copied.
fn float_vector(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
    let len = obj
        .len()
        .map_err(|_| invalid_input(format!("{name} must be a 1-D array of floats")))?;
    Ok(slice(&vector(obj, name, len)?).to_vec())
}

/// A list of `(u, v)` node pairs (tuples, lists, or the rows of an `(m, 2)` integer array).
///
/// Raises `InvalidInputError` for an item that is not a pair of integers and `InvalidGraphError` for a
/// negative node index.
fn edge_list(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, usize)>> {
    let mut edges = Vec::new();
    for (i, item) in obj
        .try_iter()
        .map_err(|_| invalid_input("edges must be a sequence of (u, v) pairs"))?
        .enumerate()
    {
        let item = item?;
        let pair: Vec<i64> = item
            .extract()
            .ok()
            .filter(|p: &Vec<i64>| p.len() == 2)
            .ok_or_else(|| {
                invalid_input(format!(
                    "edges[{i}] must be a pair of integer node indices, got {}",
                    item.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
        let (u, v) = (pair[0], pair[1]);
        if u < 0 || v < 0 {
            return Err(to_py(CoreError::InvalidGraph(format!(
                "edge {i} = ({u}, {v}) has a negative node index"
            ))));
        }
        edges.push((u as usize, v as usize));
    }
    Ok(edges)
}

/// Declare a concrete domain class (a subclass of ``Domain``) whose constructor converts its arguments and
/// returns the core [`Domain`]; the constants are checked ([`base`]) before the object exists.
///
/// ```text
/// py_domain! {
///     /// Class docstring.
///     class PyL2Ball as "L2Ball";
///     #[pyo3(signature = (n, radius = None))]
///     new(n: &Bound<'_, PyAny>, radius: Option<&Bound<'_, PyAny>>) { Domain::L2Ball(...) }
///     #[getter] fn ...(...) { ... }   // other methods, spliced into the class's #[pymethods] as written
/// }
/// ```
macro_rules! py_domain {
    (
        $(#[doc = $doc:literal])*
        class $py:ident as $name:literal;
        $(#[$attr:meta])*
        new($($(#[$parg:meta])* $arg:ident: $ty:ty),* $(,)?) $body:block
        $($methods:tt)*
    ) => {
        $(#[doc = $doc])*
        #[pyclass(extends = PyDomain, module = "dponline.domains", name = $name)]
        pub struct $py;

        #[pymethods]
        impl $py {
            #[new]
            $(#[$attr])*
            fn new($($(#[$parg])* $arg: $ty),*) -> PyResult<PyClassInitializer<Self>> {
                let inner: Domain = $body;
                Ok(self::base(inner)?.add_subclass($py))
            }

            $($methods)*
        }
    };
}

py_domain! {
    /// The probability simplex ``{x ∈ R^n : x ≥ 0, Σx = 1}``.
    ///
    /// Args:
    ///     n: dimension, ``>= 2``.
    ///
    /// LMO: the vertex ``e_i`` of the smallest ``direction_i`` (lowest index on ties), ``O(n)``. Diameter
    /// ``√2``; centre ``1/n``; certified radius ``1/√(n(n−1))`` inside the hyperplane ``Σx = 1``;
    /// ``affine_dim = n − 1``.
    ///
    /// Raises:
    ///     InvalidInputError: ``n < 2``.
    class PySimplex as "Simplex";
    #[pyo3(signature = (n = None))]
    new(n: Option<&Bound<'_, PyAny>>) {
        let n = n.map_or(Ok(2), |n| len_arg(n, "n", 0))?;
        Domain::Simplex(Simplex::new(n).or_raise()?)
    }
}

py_domain! {
    /// The ℓ1 ball (cross-polytope) ``{x ∈ R^n : Σ|x_i| ≤ radius}``.
    ///
    /// Args:
    ///     n: dimension, ``>= 1``.
    ///     radius: finite, ``> 0``.
    ///
    /// LMO: ``−radius·sign(d_i)·e_i`` for the largest ``|d_i|`` (lowest index on ties, ``+radius·e_i`` when
    /// ``d = 0``), ``O(n)``. Diameter ``2·radius``; centre ``0``; certified radius ``radius/√n``
    /// (``‖x‖₁ ≤ √n‖x‖₂``); full-dimensional.
    ///
    /// Raises:
    ///     InvalidInputError: ``n < 1`` or a bad ``radius``.
    class PyL1Ball as "L1Ball";
    #[pyo3(signature = (n, radius = None))]
    new(n: &Bound<'_, PyAny>, radius: Option<&Bound<'_, PyAny>>) {
        Domain::L1Ball(with_radius(len_arg(n, "n", 0)?, radius, L1Ball::new)?)
    }
}

py_domain! {
    /// The Euclidean ball ``{x ∈ R^n : ‖x‖₂ ≤ radius}``.
    ///
    /// Args:
    ///     n: dimension, ``>= 1``.
    ///     radius: finite, ``> 0``.
    ///
    /// LMO: ``−radius·d/‖d‖`` (``radius·e_1`` when ``d = 0``), ``O(n)``, overflow-safe. Diameter
    /// ``2·radius``; centre ``0``; inscribed radius ``radius``; full-dimensional.
    ///
    /// Raises:
    ///     InvalidInputError: ``n < 1`` or a bad ``radius``.
    class PyL2Ball as "L2Ball";
    #[pyo3(signature = (n, radius = None))]
    new(n: &Bound<'_, PyAny>, radius: Option<&Bound<'_, PyAny>>) {
        Domain::L2Ball(with_radius(len_arg(n, "n", 0)?, radius, L2Ball::new)?)
    }
}

py_domain! {
    /// The axis-aligned box ``{x : lower ≤ x ≤ upper}``.
    ///
    /// Args:
    ///     lower: shape ``(n,)``, finite.
    ///     upper: shape ``(n,)``, finite, ``upper > lower`` in every coordinate.
    ///
    /// LMO: ``upper_i`` where ``d_i < 0``, else ``lower_i`` (so ``d_i = 0`` gives ``lower_i``), ``O(n)``.
    /// Diameter ``‖upper − lower‖``; centre the midpoint; certified radius the smallest half-width;
    /// full-dimensional.
    ///
    /// Raises:
    ///     InvalidInputError: mismatched or empty shapes, ``upper_i <= lower_i``, or an overflowing width.
    ///     NonFiniteError: a NaN or infinite bound.
    class PyBox as "Box";
    new(lower: &Bound<'_, PyAny>, upper: &Bound<'_, PyAny>) {
        let (lower, upper) = (float_vector(lower, "lower")?, float_vector(upper, "upper")?);
        Domain::Box(Hyperrectangle::new(lower, upper).or_raise()?)
    }
}

py_domain! {
    /// The uniform matroid polytope: ``{0 ≤ x ≤ 1, Σx = k}`` (``base=True``, the hypersimplex) or
    /// ``{0 ≤ x ≤ 1, Σx ≤ k}`` (``base=False``); vertices are indicator vectors of ``k``-subsets (of subsets
    /// of size ``≤ k``).
    ///
    /// Args:
    ///     n: number of coordinates.
    ///     k: rank; ``0 < k < n`` for the base polytope, ``1 <= k <= n`` for the independence polytope.
    ///     base: which polytope.
    ///
    /// LMO: ones at the ``k`` smallest ``d_i`` (independence: only those ``< 0``), lowest index on ties;
    /// ``O(n)`` by selection. Diameter (exact) ``√(2·min(k, n−k))`` (base) or ``√min(2k, n)``. Centre and
    /// certified radius: base ``(k/n)·1`` and ``min(k/n, 1−k/n)/√(1−1/n)``; independence ``a·1`` and ``a`` with
    /// ``a = min(1/2, k/(n+√n))``.
    ///
    /// Raises:
    ///     InvalidInputError: ``k`` out of range.
    class PyUniformMatroid as "UniformMatroid";
    #[pyo3(signature = (n, k, *, base = true))]
    new(n: &Bound<'_, PyAny>, k: &Bound<'_, PyAny>, #[pyo3(from_py_with = crate::convert::flag)] base: bool) {
        let (n, k) = (len_arg(n, "n", 0)?, len_arg(k, "k", 0)?);
        Domain::UniformMatroid(UniformMatroid::new(n, k, base).or_raise()?)
    }
}

py_domain! {
    /// The partition matroid polytope: blocks ``B_j`` of coordinates, each with ``Σ_{i∈B_j} x_i = k_j``
    /// (``base=True``) or ``≤ k_j`` (``base=False``), and ``0 ≤ x ≤ 1``. A product of uniform-matroid polytopes.
    ///
    /// Args:
    ///     blocks: list of lists of coordinate indices that together contain each of ``0..n`` exactly once
    ///         (``n`` = total number of indices).
    ///     capacities: ``k_j`` per block, ``0 <= k_j <= len(blocks[j])``.
    ///     base: which polytope.
    ///
    /// A block whose own polytope is a point (base with ``k_j`` in ``{0, |B_j|}``, independence with
    /// ``k_j = 0``) is fixed and does not count towards ``affine_dim``. LMO: per block, the uniform-matroid
    /// LMO, ``O(n)``. Diameter exact; certified radius the smallest over the blocks that are not fixed.
    ///
    /// Raises:
    ///     InvalidInputError: blocks not a partition, a capacity larger than its block, a wrong number of
    ///         capacities, or every block fixed.
    class PyPartitionMatroid as "PartitionMatroid";
    #[pyo3(signature = (blocks, capacities, *, base = true))]
    new(#[pyo3(from_py_with = crate::convert::index_lists)] blocks: Vec<Vec<usize>>, #[pyo3(from_py_with = crate::convert::indices)] capacities: Vec<usize>, #[pyo3(from_py_with = crate::convert::flag)] base: bool) {
        Domain::PartitionMatroid(PartitionMatroid::new(blocks, capacities, base).or_raise()?)
    }
}

py_domain! {
    /// The graphic matroid polytope of an undirected multigraph, one coordinate per edge: spanning trees
    /// (``base=True``, the graph must be connected) or forests (``base=False``).
    ///
    /// Args:
    ///     num_nodes: nodes are ``0..num_nodes``.
    ///     edges: ``(u, v)`` pairs; parallel edges allowed (each its own coordinate), self-loops rejected.
    ///     base: spanning-tree or forest polytope.
    ///
    /// LMO: Kruskal's algorithm with union-find; spanning trees: a minimum spanning tree for weights of any
    /// sign; forests: a minimum-weight forest (only negative edges). Equal weights go to the lower edge
    /// index; ``O(m log m)``. Spanning trees: the interior point averages the DFS tree and fundamental
    /// exchanges of it (proven relative-interior), ``project_tangent`` subtracts each block's (biconnected
    /// component's) mean, ``affine_dim = m − #blocks``, ``inscribed_radius`` is ``None`` (not certified) and
    /// the diameter is an upper bound. Forests: centre ``a·1`` with certified radius ``a = 1/(m+√m)`` (a ball
    /// in the corner simplex; loose), full-dimensional, diameter bound ``√min(2·rank, m)``. ``contains`` is
    /// exact (``num_nodes`` max-flow computations).
    ///
    /// Raises:
    ///     InvalidGraphError: no edges, an endpoint out of range or negative, a self-loop, or (``base=True``)
    ///         a disconnected graph (the message counts the components).
    ///
    /// Source: Kruskal (1956); Edmonds (1971) for the polytopes; Padberg & Wolsey (1983) for membership.
    class PyGraphicMatroid as "GraphicMatroid";
    #[pyo3(signature = (num_nodes, edges, *, base = true))]
    new(num_nodes: &Bound<'_, PyAny>, edges: &Bound<'_, PyAny>, #[pyo3(from_py_with = crate::convert::flag)] base: bool) {
        let num_nodes = len_arg(num_nodes, "num_nodes", 0)?;
        let graph = GraphicMatroid::new(num_nodes, edge_list(edges)?, base).or_raise()?;

        Domain::GraphicMatroid(Box::new(graph))
    }
}

py_domain! {
    /// The s-t path polytope of a directed acyclic graph: the convex hull of the indicator vectors (one
    /// coordinate per edge) of the directed paths from ``source`` to ``target``.
    ///
    /// Args:
    ///     num_nodes: nodes are ``0..num_nodes``.
    ///     edges: directed ``(u, v)`` pairs; parallel edges allowed.
    ///     source, target: distinct nodes.
    ///
    /// Edges on no s-t path are fixed at 0. LMO: shortest path for costs of any sign by dynamic programming
    /// in topological order, lowest edge index on ties, ``O(n + m)``. Centre: the average of all s-t paths
    /// (path counts in log space); certified radius: the smallest centre coordinate of an edge on a path.
    /// ``project_tangent`` projects onto the flows with zero net flow at every node (dense Cholesky factor of
    /// the grounded Laplacian, built on first use, up to 2001 live nodes; conjugate gradients beyond).
    /// Diameter bound ``√min(2·L, m_live)`` with ``L`` the longest s-t path's edge count.
    ///
    /// Raises:
    ///     InvalidGraphError: an endpoint out of range or negative, a self-loop, a directed cycle (one is
    ///         reported), ``source == target``, or no s-t path.
    class PyPathPolytope as "PathPolytope";
    new(num_nodes: &Bound<'_, PyAny>, edges: &Bound<'_, PyAny>, source: &Bound<'_, PyAny>, target: &Bound<'_, PyAny>) {
        let (num_nodes, source, target) = node_args(num_nodes, source, target)?;
        let paths = PathPolytope::new(num_nodes, edge_list(edges)?, source, target).or_raise()?;

        Domain::PathPolytope(Box::new(paths))
    }

    /// The path polytope of an undirected graph, each edge oriented away from ``source``.
    ///
    /// Edge ``i`` stays coordinate ``i``, oriented from the endpoint with the smaller
    /// ``(BFS distance from source, node index)`` to the other (acyclic by construction); nothing is
    /// dropped, and edges that end up on no source-target path are fixed at 0. The orientation is
    /// available as ``edges``.
    ///
    /// Raises:
    ///     InvalidGraphError: as the constructor, e.g. ``target`` not connected to ``source``.
    #[staticmethod]
    fn from_undirected<'py>(
        py: Python<'py>,
        num_nodes: &Bound<'py, PyAny>,
        edges: &Bound<'py, PyAny>,
        source: &Bound<'py, PyAny>,
        target: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyPathPolytope>> {
        let (num_nodes, source, target) = node_args(num_nodes, source, target)?;
        let paths = PathPolytope::from_undirected(num_nodes, &edge_list(edges)?, source, target)
            .or_raise()?;
        Bound::new(
            py,
            base(Domain::PathPolytope(Box::new(paths)))?.add_subclass(PyPathPolytope),
        )
    }

    /// The directed edges ``(u, v)``, one per coordinate.
    #[getter]
    fn edges(slf: PyRef<'_, Self>) -> Vec<(usize, usize)> {
        edges_of(&slf.as_super().inner)
    }
}

py_domain! {
    /// The ``k``-sparse polytope: the convex hull of the vectors of ``R^n`` with at most ``k`` non-zero entries,
    /// each in ``[−radius, radius]``; equivalently ``{x : ‖x‖_∞ ≤ radius, ‖x‖₁ ≤ k·radius}``.
    ///
    /// Args:
    ///     n: dimension, ``>= 1``.
    ///     k: sparsity, ``1 <= k <= n`` (``k = 1``: the ℓ1 ball; ``k = n``: the box ``[−radius, radius]^n``).
    ///     radius: finite, ``> 0`` (default 1).
    ///
    /// LMO: ``−radius·sign(d_i)`` at the ``k`` largest ``|d_i|`` (lowest index on ties, ``+radius`` where
    /// ``d_i = 0``), 0 elsewhere; ``O(n)`` by selection. Diameter ``2·radius·√k`` (exact); centre 0; certified
    /// radius ``radius·min(1, k/√n)`` (exact); full-dimensional.
    ///
    /// Raises:
    ///     InvalidInputError: ``n < 1``, ``k`` out of range, or a bad ``radius``.
    ///
    /// Source: the polytope and its LMO as in Frank-Wolfe practice (e.g. Combettes & Pokutta 2021, "Complexity of
    /// linear minimization and projection on some sets").
    class PyKSparsePolytope as "KSparsePolytope";
    #[pyo3(signature = (n, k, radius = None))]
    new(n: &Bound<'_, PyAny>, k: &Bound<'_, PyAny>, radius: Option<&Bound<'_, PyAny>>) {
        let (n, k) = (len_arg(n, "n", 0)?, len_arg(k, "k", 0)?);
        Domain::KSparse(with_radius((n, k), radius, |(n, k), r| {
            KSparsePolytope::new(n, k, r)
        })?)
    }
}

py_domain! {
    /// The Birkhoff polytope: the ``n × n`` doubly stochastic matrices ``{X ≥ 0, X1 = 1, Xᵀ1 = 1}``, points
    /// flattened row-major (coordinate ``i·n + j`` is ``X_ij``; ``dim = n²``). Its vertices are the permutation
    /// matrices.
    ///
    /// Args:
    ///     n: side, ``>= 2``.
    ///
    /// LMO: the permutation matrix of a minimum-cost assignment for the cost matrix ``direction.reshape(n, n)``,
    /// by shortest augmenting paths with dual potentials (Jonker-Volgenant type, ``O(n³)``, deterministic ties;
    /// costs are scaled by a power of two, so entries up to ``1e308`` do not overflow). Diameter ``√(2n)``
    /// (exact); centre ``J/n``; certified radius ``1/(n − 1)`` (exact); ``affine_dim = (n − 1)²``;
    /// ``project_tangent`` removes row and column means.
    ///
    /// Raises:
    ///     InvalidInputError: ``n < 2``.
    ///
    /// Source: Birkhoff (1946); Jonker & Volgenant (1987); Crouse (2016).
    class PyBirkhoffPolytope as "BirkhoffPolytope";
    new(n: &Bound<'_, PyAny>) {
        Domain::Birkhoff(Box::new(
            BirkhoffPolytope::new(len_arg(n, "n", 0)?).or_raise()?,
        ))
    }
}

py_domain! {
    /// The matching polytope of a bipartite graph: the convex hull of the indicator vectors (one coordinate per
    /// edge) of its matchings of every size, ``{x ≥ 0 : Σ_{e ∋ v} x_e ≤ 1 for every node v}``.
    ///
    /// Args:
    ///     n_left, n_right: numbers of left and right nodes.
    ///     edges: ``(i, j)`` pairs joining left node ``i`` to right node ``j``; parallel edges allowed (each its
    ///         own coordinate).
    ///
    /// LMO: a minimum-cost matching of any size (only negative-cost edges can be in it) by successive shortest
    /// augmenting paths with potentials (Dijkstra), at most ``min(n_left, n_right)`` searches of
    /// ``O((m + n) log m)``; a path of cost exactly 0 is not taken, heap ties go to the lower node. Centre
    /// ``a·1`` with certified radius ``a = 1/(Δ + √Δ)`` (``Δ`` the largest degree); full-dimensional; diameter
    /// bound ``√min(2ν, m)``.
    ///
    /// Raises:
    ///     InvalidGraphError: no edges, an endpoint out of range or negative.
    ///
    /// Source: Egerváry (1931) and König for the polytope; Edmonds & Karp (1972) for shortest augmenting paths
    /// with potentials.
    class PyBipartiteMatchingPolytope as "BipartiteMatchingPolytope";
    new(n_left: &Bound<'_, PyAny>, n_right: &Bound<'_, PyAny>, edges: &Bound<'_, PyAny>) {
        let (n_left, n_right) = (
            len_arg(n_left, "n_left", 0)?,
            len_arg(n_right, "n_right", 0)?,
        );
        let matching =
            BipartiteMatchingPolytope::new(n_left, n_right, edge_list(edges)?).or_raise()?;

        Domain::BipartiteMatching(Box::new(matching))
    }

    /// The edges ``(left node, right node)``, one per coordinate.
    #[getter]
    fn edges(slf: PyRef<'_, Self>) -> Vec<(usize, usize)> {
        edges_of(&slf.as_super().inner)
    }
}

py_domain! {
    /// The flow polytope: the ``source``-``target`` flows of a given ``value`` in a directed graph, one coordinate
    /// per edge, ``{x : 0 ≤ x_e ≤ capacity_e, out(v) − in(v) = value·([v = source] − [v = target])}``.
    /// Generalises :class:`PathPolytope` (``value=1``, no capacities, a DAG) to graphs with cycles and capacities.
    ///
    /// Args:
    ///     num_nodes: nodes are ``0..num_nodes``.
    ///     edges: directed ``(u, v)`` pairs; parallel edges and directed cycles allowed, self-loops rejected.
    ///     source, target: distinct nodes.
    ///     capacities: shape ``(m,)``, finite and ``>= 0``; ``None`` (default): uncapacitated, which needs an
    ///         acyclic graph (a directed cycle could carry any amount of circulation).
    ///     value: the flow value, finite and ``> 0`` (default 1), at most the maximum flow.
    ///
    /// LMO: a minimum-cost flow for edge costs of any sign (negative cycles are saturated) by the primal network
    /// simplex (strongly feasible trees, block pricing) from a feasible basis found once at construction: a
    /// vertex, a deterministic function of the direction, optimal up to a relative ``1e-11·(8n + 10)``. The
    /// simplex is capped at ``50·(m + n)`` pivots (never observed), after which the feasible vertex it holds is
    /// returned. Edges that take one value on the whole polytope (zero capacity, saturated cuts, edges on no
    /// flow) are fixed; ``affine_dim`` counts the free edges' cycle space. Centre: an average of a few LMO
    /// vertices with every free edge strictly inside its bounds; certified radius: the centre's smallest slack.
    /// ``project_tangent``: onto the free edges' circulations (dense Cholesky up to 2000 rows, conjugate
    /// gradients beyond). Diameter bound ``√Σ_{e free} capacity_e²`` (uncapacitated: ``value·√min(2L, m)``).
    ///
    /// Raises:
    ///     InvalidGraphError: bad terminals, no edges, an endpoint out of range or negative, a self-loop, a
    ///         directed cycle without capacities, or no path from ``source`` to ``target`` through edges of
    ///         positive capacity.
    ///     InvalidInputError: a negative capacity, wrong number of capacities, ``value`` not ``> 0``, ``value``
    ///         above the maximum flow (the message gives it), or a single feasible flow.
    ///     NonFiniteError: a NaN or infinite capacity.
    ///
    /// Source: Dantzig (1963) and Ahuja, Magnanti & Orlin (1993), ch. 11, for the network simplex; Cunningham
    /// (1976) for strongly feasible trees.
    class PyFlowPolytope as "FlowPolytope";
    #[pyo3(signature = (num_nodes, edges, source, target, *, capacities = None, value = None))]
    new(num_nodes: &Bound<'_, PyAny>, edges: &Bound<'_, PyAny>, source: &Bound<'_, PyAny>, target: &Bound<'_, PyAny>, capacities: Option<&Bound<'_, PyAny>>, value: Option<&Bound<'_, PyAny>>) {
        let (num_nodes, source, target) = node_args(num_nodes, source, target)?;
        let edges = edge_list(edges)?;
        let capacities = capacities
            .filter(|c| !c.is_none())
            .map(|c| float_vector(c, "capacities"))
            .transpose()?;
        let value = value.map_or(Ok(1.0), |v| real_arg(v, "value", Some(0.0), true))?;
        let flows =
            FlowPolytope::new(num_nodes, edges, source, target, capacities, value).or_raise()?;

        Domain::Flow(Box::new(flows))
    }

    /// The directed edges ``(u, v)``, one per coordinate.
    #[getter]
    fn edges(slf: PyRef<'_, Self>) -> Vec<(usize, usize)> {
        edges_of(&slf.as_super().inner)
    }

    /// The flow value.
    #[getter]
    fn value(slf: PyRef<'_, Self>) -> f64 {
        match &slf.as_super().inner {
            Domain::Flow(p) => p.value(),
            _ => 0.0,
        }
    }
}

py_domain! {
    /// The nuclear-norm ball ``{X ∈ R^{rows×cols} : ‖X‖_* ≤ radius}`` (the sum of singular values), points
    /// flattened row-major (``dim = rows·cols``): the convex hull of ``radius·u vᵀ`` for unit ``u``, ``v``, the
    /// standard convex relaxation of low-rank matrices.
    ///
    /// Args:
    ///     rows, cols: shape, each ``>= 1``.
    ///     radius: finite, ``> 0`` (default 1).
    ///
    /// LMO: ``−radius·u vᵀ`` for a top singular pair of ``direction.reshape(rows, cols)``, by the Lanczos method
    /// with full reorthogonalisation on ``DᵀD`` or ``DDᵀ`` (the smaller), from a fixed start vector
    /// (deterministic): it stops at residual ``≤ 1e-10·‖DᵀD‖``, so ``⟨D, X⟩`` is within a relative ``1e-10`` of
    /// ``−radius·σ₁(D)``; after 40 restarts of 80 steps (never observed) the best pair is used. Always a feasible
    /// vertex. Diameter ``2·radius``; centre 0; certified radius ``radius/√min(rows, cols)`` (exact);
    /// full-dimensional. ``contains`` computes the singular values by one-sided Jacobi.
    ///
    /// Raises:
    ///     InvalidInputError: ``rows`` or ``cols`` < 1, or a bad ``radius``.
    ///
    /// Source: Jaggi (2013), "Revisiting Frank-Wolfe", §4 for the LMO; Golub & Van Loan (2013), §10.1-10.3 for
    /// Lanczos.
    class PyNuclearNormBall as "NuclearNormBall";
    #[pyo3(signature = (rows, cols, radius = None))]
    new(rows: &Bound<'_, PyAny>, cols: &Bound<'_, PyAny>, radius: Option<&Bound<'_, PyAny>>) {
        let shape = (len_arg(rows, "rows", 0)?, len_arg(cols, "cols", 0)?);
        let ball = with_radius(shape, radius, |(rows, cols), r| NuclearNormBall::new(rows, cols, r))?;
        Domain::NuclearNormBall(Box::new(ball))
    }

    /// ``(rows, cols)``.
    #[getter]
    fn shape(slf: PyRef<'_, Self>) -> (usize, usize) {
        match &slf.as_super().inner {
            Domain::NuclearNormBall(b) => b.shape(),
            _ => (0, 0),
        }
    }
}

py_domain! {
    /// The spectraplex ``{X ∈ S^n : X ⪰ 0, tr X = 1}`` (density matrices), points flattened row-major
    /// (``dim = n²``): the convex hull of ``v vᵀ`` for unit ``v``.
    ///
    /// Args:
    ///     n: side, ``>= 2``.
    ///
    /// LMO: ``v vᵀ`` for a bottom eigenvector of ``(D + Dᵀ)/2``, ``D = direction.reshape(n, n)``, by the Lanczos
    /// method (as :class:`NuclearNormBall`: residual ``≤ 1e-10·‖S‖``, fixed start, always a feasible vertex).
    /// Diameter ``√2``; centre ``I/n``; certified radius ``1/√(n(n−1))`` (exact); ``affine_dim = n(n+1)/2 − 1``;
    /// ``project_tangent`` symmetrises and removes the trace. ``contains`` checks symmetry, trace and the
    /// smallest eigenvalue (Householder tridiagonalisation and bisection).
    ///
    /// Raises:
    ///     InvalidInputError: ``n < 2``.
    ///
    /// Source: Hazan (2008) and Jaggi (2013) for Frank-Wolfe over the spectraplex.
    class PySpectraplex as "Spectraplex";
    new(n: &Bound<'_, PyAny>) {
        Domain::Spectraplex(Box::new(Spectraplex::new(len_arg(n, "n", 0)?).or_raise()?))
    }
}

/// The values ``f(S)`` of a Python callable on every subset of ``0..n`` (``S`` passed as a ``frozenset`` of
/// ints), indexed by bitmask: the callable runs ``2^n`` times here and never again.
fn tabulate(f: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<f64>> {
    let py = f.py();
    let mut values = Vec::with_capacity(1 << n);
    for mask in 0usize..1 << n {
        let items: Vec<usize> = (0..n).filter(|a| mask >> a & 1 == 1).collect();
        let set = pyo3::types::PyFrozenSet::new(py, &items)?;
        let value = f.call1((set,))?;
        values.push(value.extract::<f64>().map_err(|_| {
            invalid_input(format!(
                "f must return a real number, got {} for S = {items:?}",
                value.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?);
    }
    Ok(values)
}

py_domain! {
    /// The base polytope ``B(f) = {x : x(S) ≤ f(S) ∀S, x(U) = f(U)}`` of a monotone submodular function ``f`` with
    /// ``f(∅) = 0``, one coordinate per item of the ground set ``U``.
    ///
    /// Args:
    ///     f: a :class:`~dponline.submodular.SubmodularFamily` (probabilistic coverage, facility location or
    ///         weighted coverage; ``f`` is then the sum of its rows' functions, each row once, evaluated
    ///         natively), or a Python callable ``f(S) -> float`` on ``frozenset`` s of items ``0..n-1``.
    ///     n: the ground-set size, ``2 <= n <= 20``, for a callable only.
    ///
    /// A callable is the slow path for small ground sets: it is evaluated on all ``2^n`` subsets once, here
    /// (about a second for ``n = 20``), and checked exhaustively — ``f(∅) = 0``, monotone (no negative marginal
    /// gain) and submodular (no marginal gain that increases as the set grows), the first violation named with
    /// its sets; afterwards everything runs natively on the table, so learners never call back into Python.
    /// See also :meth:`concave_of_cardinality`.
    ///
    /// LMO: Edmonds' greedy algorithm (items by increasing direction, lowest index on ties, each given its
    /// marginal gain): ``O(n log n + rows·n)``. Centre: the Shapley value (the average of all greedy vertices,
    /// closed form per kind), in the relative interior. ``affine_dim = n − #components`` of ``f`` (items linked
    /// by a row, element or separator-free pair). Certified radius: exact for tables and concave functions,
    /// ``None`` for families (certifying one needs a submodular minimisation: PrivateBandit refuses them; DPFTPL
    /// and DPFTRL accept them). Diameter bound ``√min(Σ f({a})², 2 f(U) max f({a}))``. ``contains`` is exact for
    /// tables and concave functions, and for families looks for a violated ``x(S) ≤ f(S)`` among the level sets
    /// of Wolfe's minimum-norm point (Fujishige 1980).
    ///
    /// Raises:
    ///     InvalidInputError: ``f`` neither a family nor a callable; ``n`` missing or out of range; a callable that
    ///         is not monotone, not submodular, has ``f(∅) ≠ 0`` or returns a non-number; a separable ``f`` (the
    ///         polytope is one point).
    ///     NonFiniteError: a callable returning NaN or inf.
    ///
    /// Source: Edmonds (1970), "Submodular functions, matroids, and certain polyhedra"; Fujishige (2005),
    /// "Submodular Functions and Optimization".
    class PySubmodularBasePolytope as "SubmodularBasePolytope";
    #[pyo3(signature = (f, n = None))]
    new(f: &Bound<'_, PyAny>, n: Option<&Bound<'_, PyAny>>) {
        let polytope = if let Ok(family) = f.cast::<PySubmodularFamily>() {
            if n.is_some_and(|n| !n.is_none()) {
                return Err(invalid_input(
                    "n is for a callable f only (a family knows its ground-set size)",
                ));
            }
            SubmodularBasePolytope::from_family(family.get().inner.clone()).or_raise()?
        } else if f.is_callable() {
            let n = n.filter(|n| !n.is_none()).ok_or_else(|| {
                invalid_input("n (the ground-set size) is required with a callable f")
            })?;
            let limit = dponline_core::domains::MAX_TABLE_ITEMS as u64;
            let n = crate::convert::int_arg(n, "n", 2, Some(limit))? as usize;
            SubmodularBasePolytope::from_values(tabulate(f, n)?).or_raise()?
        } else {
            return Err(invalid_input(format!(
                "f must be a dponline.submodular.SubmodularFamily or a callable, got {}",
                f.get_type().name()?
            )));
        };

        Domain::SubmodularBase(Box::new(polytope))
    }

    /// The base polytope of ``f(S) = g(|S|)`` for ``values[k] = g(k)``, ``k = 0..n`` (``n + 1 >= 3`` values,
    /// ``g(0) = 0``, non-decreasing, concave, not linear). Its vertices are the permutations of the
    /// increments; ``g(k) = min(k, r)`` gives the hypersimplex. Exact certified radius and diameter.
    ///
    /// Raises:
    ///     InvalidInputError: a violated condition, naming ``g`` and the first offending ``k``.
    ///     NonFiniteError: NaN or inf in ``values``.
    #[staticmethod]
    fn concave_of_cardinality<'py>(
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PySubmodularBasePolytope>> {
        let g = float_vector(values, "g")?;
        let polytope = SubmodularBasePolytope::concave_of_cardinality(g).or_raise()?;
        Bound::new(
            py,
            base(Domain::SubmodularBase(Box::new(polytope)))?
                .add_subclass(PySubmodularBasePolytope),
        )
    }
}
