//! The base polytope `B(f) = {x ∈ R^n : x(S) ≤ f(S) ∀S ⊆ U, x(U) = f(U)}` of a monotone submodular
//! function `f` with `f(∅) = 0`, through Edmonds' greedy algorithm.

use serde::{Deserialize, Serialize};

use super::graph::UnionFind;
use super::min_norm_point::nearest_point_offset;
use super::selection::order_key;
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite};
use crate::submodular::{Scratch, SubmodularFamily, SubmodularKind};

/// Major cycles of the minimum-norm-point membership test per item (the test's cap, see `contains`).
const MEMBERSHIP_CYCLES_PER_ITEM: usize = 20;

/// The submodular functions the base polytope is built on, evaluated natively.
#[derive(Debug, Clone)]
pub enum SetFunction {
    /// `F(S) = Σ_r f_r(S)` over the rows of a submodular family, each once (probabilistic coverage,
    /// facility location or weighted coverage; see [`SubmodularFamily::row_sum_value`]).
    Family(Box<SubmodularFamily>),
    /// `F(S) = g(|S|)` for `g(0) = 0`, non-decreasing and concave: `values[k] = g(k)`, `k = 0..=n`.
    ConcaveOfCardinality(Vec<f64>),
    /// Any monotone submodular `F` on `n <= 20` items given by all its values: `values[mask] = F(S)` for the
    /// set `S = {a : bit a of mask is set}` (validated exhaustively).
    Table(Vec<f64>),
}

/// Largest ground set a [`SetFunction::Table`] may have (`2^20` values, 8 MB).
pub const MAX_TABLE_ITEMS: usize = 20;

/// The base polytope of a monotone submodular function on `n` items, one coordinate per item.
///
/// Every vertex is the greedy vector of some order of the items (Edmonds 1970; Shapley 1971): for the order
/// `σ`, `x_{σ(k)} = F({σ(1..=k)}) − F({σ(1..k)})`. Monotonicity makes vertices non-negative and submodularity
/// bounds `x_a ≤ F({a})`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "SubmodularBaseSpec", into = "SubmodularBaseSpec")]
pub struct SubmodularBasePolytope {
    function: SetFunction,
    n: usize,
    geometry: Geometry,
    /// Connected component of each item and each component's size (the tangent projection subtracts the
    /// mean within each component).
    component: Vec<usize>,
    component_size: Vec<usize>,
    /// Scratch: per-component sums, sort keys, the order, and the family's evaluation scratch.
    component_sum: Vec<f64>,
    keys: Vec<(u64, usize)>,
    order: Vec<usize>,
    scratch: Scratch,
}

/// What a pickled [`SubmodularBasePolytope`] stores: the function's constructor arguments (validated again
/// on restore).
#[derive(Serialize, Deserialize)]
enum SubmodularBaseSpec {
    Family {
        kind: String,
        data: Vec<f64>,
        width: usize,
        covers: Option<Vec<Vec<usize>>>,
    },
    ConcaveOfCardinality(Vec<f64>),
    Table(Vec<f64>),
}

impl SubmodularBasePolytope {
    /// The base polytope of the summed function of `family`'s rows (each row once).
    ///
    /// Errors: [`CoreError::InvalidArgument`] (`f`) if the polytope is a single point (no two items
    /// interact: every connected component of `F` is one item); [`CoreError::Allocation`].
    pub fn from_family(family: SubmodularFamily) -> Result<Self> {
        super::reserve_for("SubmodularBasePolytope", family.ground_set_size())?;
        Self::build(SetFunction::Family(Box::new(family)))
    }

    /// The base polytope of `F(S) = g(|S|)` with `values[k] = g(k)` for `k = 0..=n` (its vertices are the
    /// permutations of the increments `g(k) − g(k−1)`; `g(k) = min(k, r)` gives the hypersimplex, the uniform
    /// matroid's base polytope).
    ///
    /// Errors: [`CoreError::Shape`] for fewer than 3 values (`n >= 2`); [`CoreError::NonFinite`];
    /// [`CoreError::InvalidArgument`] (`g`) if `g(0) ≠ 0`, an increment is negative (not monotone) or larger
    /// than the one before it (not concave, hence not submodular) — the first offending `k` is named — or `g`
    /// is linear (the polytope is one point).
    pub fn concave_of_cardinality(values: Vec<f64>) -> Result<Self> {
        super::reserve_for("SubmodularBasePolytope", values.len())?;
        if values.len() < 3 {
            return Err(CoreError::Shape {
                name: "g",
                expected: "n + 1 >= 3 values g(0), ..., g(n)".into(),
                got: format!("{} values", values.len()),
            });
        }
        check_finite("g", &values)?;
        if values[0] != 0.0 {
            return Err(CoreError::invalid(
                "g",
                "g(0) = 0",
                format!("g(0) = {}", values[0]),
            ));
        }
        let mut previous = f64::INFINITY;
        for k in 1..values.len() {
            let step = values[k] - values[k - 1];
            if step < 0.0 {
                return Err(CoreError::invalid(
                    "g",
                    "non-decreasing (a monotone function)",
                    format!("g({k}) = {} < g({}) = {}", values[k], k - 1, values[k - 1]),
                ));
            }
            if step > previous {
                return Err(CoreError::invalid(
                    "g",
                    "concave: increments g(k) - g(k-1) that never increase (a submodular function)",
                    format!("the increment at k = {k} is {step} > {previous}"),
                ));
            }
            previous = step;
        }
        Self::build(SetFunction::ConcaveOfCardinality(values))
    }

    /// The base polytope of the function with `values[mask] = F({a : bit a of mask is set})`, on
    /// `n = log₂(values.len()) <= 20` items.
    ///
    /// Validated exhaustively (`O(2^n n²)`): `F(∅) = 0`, every marginal gain `F(S + a) − F(S) ≥ −tol`
    /// (monotone) and never larger than at a subset, `F(S + a) − F(S) ≥ F(S + b + a) − F(S + b) − tol`
    /// (submodular; it suffices to compare sets one item apart), with `tol = 10⁻¹² · max|F|` for rounding in
    /// the caller's function. The first violation is reported with its sets.
    ///
    /// Errors: [`CoreError::Shape`] (`f`) unless the length is `2^n` with `2 <= n <= 20`;
    /// [`CoreError::NonFinite`]; [`CoreError::InvalidArgument`] (`f`) for a violation above, or a separable
    /// function (the polytope is one point).
    pub fn from_values(values: Vec<f64>) -> Result<Self> {
        let len = values.len();
        let n = len.trailing_zeros() as usize;
        if !len.is_power_of_two() || !(2..=MAX_TABLE_ITEMS).contains(&n) {
            return Err(CoreError::Shape {
                name: "f",
                expected: format!(
                    "2^n values (one per subset) for 2 <= n <= {MAX_TABLE_ITEMS} items"
                ),
                got: format!("{len} values"),
            });
        }
        check_finite("f", &values)?;
        let set = |mask: usize| -> String {
            let items: Vec<String> = (0..n)
                .filter(|a| mask >> a & 1 == 1)
                .map(|a| a.to_string())
                .collect();
            format!("{{{}}}", items.join(", "))
        };
        if values[0] != 0.0 {
            return Err(CoreError::invalid(
                "f",
                "a function with f(∅) = 0",
                format!("f(∅) = {}", values[0]),
            ));
        }
        let tol = 1e-12 * values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for mask in 0..len {
            for a in (0..n).filter(|a| mask >> a & 1 == 0) {
                let gain = values[mask | 1 << a] - values[mask];
                if gain < -tol {
                    return Err(CoreError::invalid(
                        "f",
                        "monotone: f(S + a) >= f(S)",
                        format!("f(S + {a}) - f(S) = {gain} for S = {}", set(mask)),
                    ));
                }
                for b in (a + 1..n).filter(|b| mask >> b & 1 == 0) {
                    let later = values[mask | 1 << a | 1 << b] - values[mask | 1 << b];
                    if later > gain + tol {
                        return Err(CoreError::invalid(
                            "f",
                            "submodular: marginal gains that never increase as the set grows",
                            format!(
                                "the gain of item {a} increases from {gain} at S = {} to {later} at S = {}",
                                set(mask),
                                set(mask | 1 << b)
                            ),
                        ));
                    }
                }
            }
        }
        Self::build(SetFunction::Table(values))
    }

    fn build(function: SetFunction) -> Result<Self> {
        let (n, links) = match &function {
            SetFunction::Family(f) => (f.ground_set_size(), f.row_sum_links()),
            SetFunction::ConcaveOfCardinality(g) => {
                let n = g.len() - 1;
                // Non-linear concave g: inseparable (g(k) + g(n − k) = g(n) for some 0 < k < n forces equal
                // increments). Linear g: every set separates.
                let linear = g.windows(2).all(|w| w[1] - w[0] == g[1]);
                let links = if linear {
                    Vec::new()
                } else {
                    (1..n).map(|b| (0, b)).collect()
                };
                (n, links)
            }
            SetFunction::Table(values) => {
                let n = values.len().trailing_zeros() as usize;
                (n, table_links(values, n))
            }
        };
        let mut sets = UnionFind::new(n);
        for &(a, b) in &links {
            sets.union(a, b);
        }
        let mut label = vec![usize::MAX; n];
        let mut component = vec![0; n];
        let mut component_size = Vec::new();
        for (a, c) in component.iter_mut().enumerate() {
            let root = sets.find(a);
            if label[root] == usize::MAX {
                label[root] = component_size.len();
                component_size.push(0);
            }
            *c = label[root];
            component_size[label[root]] += 1;
        }
        let affine_dim = n - component_size.len();
        if affine_dim == 0 {
            return Err(CoreError::invalid(
                "f",
                "a submodular function whose base polytope is more than one point (some items must interact)",
                "a function that is separable into single items (a modular function)",
            ));
        }
        let scratch = match &function {
            SetFunction::Family(f) => f.scratch()?,
            SetFunction::ConcaveOfCardinality(_) | SetFunction::Table(_) => Scratch::default(),
        };
        let mut polytope = SubmodularBasePolytope {
            function,
            n,
            geometry: Geometry::new(0.0, vec![0.0; n], None, affine_dim),
            component,
            component_sum: vec![0.0; component_size.len()],
            component_size,
            keys: vec![(0, 0); n],
            order: (0..n).collect(),
            scratch,
        };
        polytope.describe()?;
        Ok(polytope)
    }

    /// The function.
    pub fn function(&self) -> &SetFunction {
        &self.function
    }

    /// `F(S)` for the items `items` (duplicates counted once).
    pub fn value(&mut self, items: &[usize]) -> f64 {
        match &self.function {
            SetFunction::Family(f) => f.row_sum_value(items, &mut self.scratch),
            SetFunction::ConcaveOfCardinality(g) => {
                let mut distinct = items.to_vec();
                distinct.sort_unstable();
                distinct.dedup();
                g[distinct.len()]
            }
            SetFunction::Table(values) => values[items.iter().fold(0, |m, &a| m | 1 << a)],
        }
    }

    /// The [`Geometry`] (the affine dimension is set by the constructor):
    /// - diameter, an upper bound: `√min(Σ_a F({a})², 2·F(U)·max_a F({a}))`, since every point has
    ///   `0 ≤ x_a ≤ F({a})` and `Σ x = F(U)` (so `‖x − y‖² ≤ ‖x − y‖_∞‖x − y‖₁`). Concave of cardinality:
    ///   exact, the increments against their reverse (rearrangement inequality);
    /// - centre: the Shapley value of `F`, the average of the greedy vertices over all `n!` orders: a strictly
    ///   positive combination of every vertex (each vertex is the greedy vector of some order), hence in the
    ///   relative interior (closed forms per kind, see [`SubmodularFamily::row_sum_shapley`]; `(g(n)/n)·1` for
    ///   concave of cardinality; the defining sum over all sets for a table);
    /// - radius: concave of cardinality: exact, `min_{0<k<n} (g(k) − k g(n)/n)/√(k(n − k)/n)` (the facet
    ///   `x(S) ≤ g(k)`, `|S| = k`, at its distance from the centre within `{Σx = g(n)}`; every facet of `B(F)`
    ///   is of this form, and the value is positive for non-linear concave `g`). Tables: exact, the same
    ///   minimum over every set (`O(2^n·n)` once). The families: `None` — certifying a ball would need the
    ///   minimum of `(F(S) − c(S))/‖P 1_S‖` over all sets, a submodular-type minimisation not done here, so
    ///   PrivateBandit does not accept these domains (DP-FTPL and DP-FTRL do);
    /// - affine dimension: `n` minus the number of connected components of `F` (its affine hull is
    ///   `{x(C) = F(C) for every component C}`; Fujishige 2005, Theorem 3.38).
    fn describe(&mut self) -> Result<()> {
        let n = self.n;
        let everything: Vec<usize> = (0..n).collect();
        let total = self.value(&everything);
        let singletons: Vec<f64> = (0..n).map(|a| self.value(&[a])).collect();
        let largest = singletons.iter().copied().fold(0.0, f64::max);
        let squares: f64 = singletons.iter().map(|s| s * s).sum();
        let bound = squares.min(2.0 * total * largest).sqrt();
        let (diameter, center, radius) = match &self.function {
            SetFunction::Family(f) => {
                let mut center = vec![0.0; n];
                f.row_sum_shapley(&mut center)?;
                (bound, center, None)
            }
            SetFunction::Table(values) => {
                let (center, radius) =
                    table_center_and_radius(values, n, &self.component, &self.component_size);
                (bound, center, radius)
            }
            SetFunction::ConcaveOfCardinality(g) => {
                let nf = n as f64;
                // Exact inradius at the centre: the facet x(S) ≤ g(|S|), |S| = k, is at distance
                // (g(k) − k g(n)/n)/‖P 1_S‖ with ‖P 1_S‖² = k(n − k)/n.
                let radius = (1..n)
                    .map(|k| {
                        let kf = k as f64;
                        (g[k] - kf * g[n] / nf) / (kf * (nf - kf) / nf).sqrt()
                    })
                    .fold(f64::INFINITY, f64::min);
                // Exact diameter: the increments sorted against their reverse.
                let steps: Vec<f64> = g.windows(2).map(|w| w[1] - w[0]).collect();
                let diameter = steps
                    .iter()
                    .zip(steps.iter().rev())
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    .sqrt();
                (diameter, vec![g[n] / nf; n], Some(radius))
            }
        };
        let affine_dim = self.geometry.affine_dim;
        self.geometry = Geometry::new(diameter, center, radius, affine_dim);
        Ok(())
    }
}

/// Edmonds' greedy vertex of `function` for `direction`: the items sorted by `(direction, index)` into `order`
/// (with `keys` as scratch), then each item's marginal gain given the items before it into `out`.
#[inline]
fn greedy_vertex(
    function: &SetFunction,
    direction: &[f64],
    keys: &mut [(u64, usize)],
    order: &mut [usize],
    scratch: &mut Scratch,
    out: &mut [f64],
) {
    for (k, (a, &d)) in keys.iter_mut().zip(direction.iter().enumerate()) {
        *k = (order_key(d), a);
    }
    keys.sort_unstable();
    for (o, &(_, a)) in order.iter_mut().zip(keys.iter()) {
        *o = a;
    }
    match function {
        SetFunction::Family(f) => f.row_sum_chain_gains(order, out, scratch),
        SetFunction::ConcaveOfCardinality(g) => {
            for (k, &a) in order.iter().enumerate() {
                out[a] = g[k + 1] - g[k];
            }
        }
        SetFunction::Table(values) => {
            let mut mask = 0;
            for &a in order.iter() {
                out[a] = values[mask | 1 << a] - values[mask];
                mask |= 1 << a;
            }
        }
    }
}

/// Pairs of items in one connected component of the tabulated `F`: the component of `a` is the intersection
/// of the separators containing it (sets `S` with `F(S) + F(U∖S) = F(U)`, up to `10⁻¹²·F(U)`); each item is
/// linked to the first item of its component. `O(2^n·n)`.
fn table_links(values: &[f64], n: usize) -> Vec<(usize, usize)> {
    let full = values.len() - 1;
    let tol = 1e-12 * values[full].abs();
    let mut atom = vec![full; n];
    for mask in 1..full {
        if (values[mask] + values[full ^ mask] - values[full]).abs() <= tol {
            for (a, m) in atom.iter_mut().enumerate() {
                *m &= if mask >> a & 1 == 1 {
                    mask
                } else {
                    full ^ mask
                };
            }
        }
    }
    (0..n)
        .filter_map(|a| {
            let first = atom[a].trailing_zeros() as usize;
            (first != a).then_some((first, a))
        })
        .collect()
}

/// The Shapley value `φ_a = Σ_{S ∌ a} |S|!(n − |S| − 1)!/n! · (F(S + a) − F(S))` of the tabulated `F` and the
/// exact inscribed radius around it: `min (F(S) − φ(S))/‖P 1_S‖` over the sets with `P 1_S ≠ 0` (`P` the
/// tangent projection, subtracting component means: `‖P 1_S‖² = Σ_C |S∩C|(1 − |S∩C|/|C|)`), the distance
/// from `φ` to each constraint's hyperplane within the affine hull; `None` if not positive.
fn table_center_and_radius(
    values: &[f64],
    n: usize,
    component: &[usize],
    component_size: &[usize],
) -> (Vec<f64>, Option<f64>) {
    // weight[k] = k!(n − k − 1)!/n! = 1/(n·C(n−1, k)).
    let mut weight = vec![0.0; n];
    let mut binomial = 1.0;
    for (k, w) in weight.iter_mut().enumerate() {
        *w = 1.0 / (n as f64 * binomial);
        binomial *= (n - 1 - k) as f64 / (k + 1) as f64;
    }
    let mut center = vec![0.0; n];
    for mask in 0..values.len() {
        let k = mask.count_ones() as usize;
        for (a, c) in center.iter_mut().enumerate() {
            if mask >> a & 1 == 0 {
                *c += weight[k] * (values[mask | 1 << a] - values[mask]);
            }
        }
    }
    let mut radius = f64::INFINITY;
    let mut in_component = vec![0usize; component_size.len()];
    for (mask, &value) in values.iter().enumerate().skip(1) {
        in_component.fill(0);
        let mut sum = 0.0;
        for a in (0..n).filter(|a| mask >> a & 1 == 1) {
            in_component[component[a]] += 1;
            sum += center[a];
        }
        let norm2: f64 = in_component
            .iter()
            .zip(component_size)
            .map(|(&s, &c)| s as f64 * (1.0 - s as f64 / c as f64))
            .sum();
        if norm2 > 1e-12 {
            radius = radius.min((value - sum) / norm2.sqrt());
        }
    }
    (
        center,
        (radius.is_finite() && radius > 0.0).then_some(radius),
    )
}

impl From<SubmodularBasePolytope> for SubmodularBaseSpec {
    fn from(p: SubmodularBasePolytope) -> Self {
        match p.function {
            SetFunction::Family(f) => SubmodularBaseSpec::Family {
                kind: f.kind_name().to_string(),
                // A family's data is in memory already; only a weighted coverage copies it back to the
                // caller's element order, which cannot fail short of memory.
                data: f.data().map(|d| d.into_owned()).unwrap_or_default(),
                width: f.width(),
                covers: f.covers(),
            },
            SetFunction::ConcaveOfCardinality(g) => SubmodularBaseSpec::ConcaveOfCardinality(g),
            SetFunction::Table(values) => SubmodularBaseSpec::Table(values),
        }
    }
}

impl TryFrom<SubmodularBaseSpec> for SubmodularBasePolytope {
    type Error = CoreError;
    fn try_from(s: SubmodularBaseSpec) -> Result<Self> {
        match s {
            SubmodularBaseSpec::Family {
                kind,
                data,
                width,
                covers,
            } => {
                let family = match covers {
                    Some(covers) => SubmodularFamily::weighted_coverage(data, width, &covers)?,
                    None => SubmodularFamily::new(SubmodularKind::from_name(&kind)?, data, width)?,
                };
                SubmodularBasePolytope::from_family(family)
            }
            SubmodularBaseSpec::ConcaveOfCardinality(g) => {
                SubmodularBasePolytope::concave_of_cardinality(g)
            }
            SubmodularBaseSpec::Table(values) => SubmodularBasePolytope::from_values(values),
        }
    }
}

impl LinearMinimizationOracle for SubmodularBasePolytope {
    /// Edmonds' greedy algorithm: order the items by increasing `direction` (lower index on ties) and give
    /// each its marginal gain given the items before it; this vertex minimises `⟨d, x⟩` over `B(F)` (Edmonds
    /// 1970). `O(n log n)` for the sort plus one pass over the function's data (`O(rows·n)`, weighted
    /// coverage `O(rows·incidence)`; concave of cardinality and tables `O(n)`). No allocation.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        greedy_vertex(
            &self.function,
            direction,
            &mut self.keys,
            &mut self.order,
            &mut self.scratch,
            vertex,
        );
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Subtract the mean within every connected component of `F` (items alone in their component are
    /// zeroed). `O(n)`, no allocation.
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        self.component_sum.fill(0.0);
        for (&c, &x) in self.component.iter().zip(u.iter()) {
            self.component_sum[c] += x;
        }
        for (x, &c) in u.iter_mut().zip(&self.component) {
            *x -= self.component_sum[c] / self.component_size[c] as f64;
        }
    }

    /// `|x(U) − F(U)| ≤ atol` and `min_S F(S) − x(S) ≥ −atol`. Concave of cardinality: exact in
    /// `O(n log n)` (the largest `x(S)` with `|S| = k` is the sum of the `k` largest entries). Tables: every
    /// set, `O(2^n)`. The families:
    /// the minimum is found among the level sets of the minimum-norm point `z` of `B(F) − x` (Fujishige 1980:
    /// `{a : z_a < 0}` minimises `F − x`), `z` by Wolfe's algorithm with the greedy LMO (at most `20·n` major
    /// cycles) — a violation found is certain; if the cap left `z` inexact a violation could be missed.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        let n = self.n;
        if x.len() != n {
            return false;
        }
        let mut scratch = match &self.function {
            SetFunction::Family(f) => match f.scratch() {
                Ok(s) => s,
                Err(_) => return false,
            },
            SetFunction::ConcaveOfCardinality(_) | SetFunction::Table(_) => Scratch::default(),
        };
        let total = match &self.function {
            SetFunction::Family(f) => f.row_sum_value(&(0..n).collect::<Vec<_>>(), &mut scratch),
            SetFunction::ConcaveOfCardinality(g) => g[n],
            SetFunction::Table(values) => values[values.len() - 1],
        };
        if (x.iter().sum::<f64>() - total).abs() > atol {
            return false;
        }
        if let SetFunction::Table(values) = &self.function {
            // Every constraint, x(S) built up from S minus its lowest item.
            let mut partial = vec![0.0; values.len()];
            for mask in 1..values.len() {
                let a = mask.trailing_zeros() as usize;
                partial[mask] = partial[mask & (mask - 1)] + x[a];
                if partial[mask] > values[mask] + atol {
                    return false;
                }
            }
            return true;
        }
        let (mut keys, mut order) = (vec![(0, 0); n], vec![0; n]);
        let z = match &self.function {
            SetFunction::ConcaveOfCardinality(_) | SetFunction::Table(_) => {
                x.iter().map(|v| -v).collect()
            }
            SetFunction::Family(_) => nearest_point_offset(
                x,
                |d, out| greedy_vertex(&self.function, d, &mut keys, &mut order, &mut scratch, out),
                MEMBERSHIP_CYCLES_PER_ITEM * n,
            ),
        };
        // Level sets of z in increasing order are the prefixes of the order by (z_a, a); along it,
        // F(prefix) − x(prefix) is the running sum of (greedy gain − x_a).
        let mut gains = vec![0.0; n];
        greedy_vertex(
            &self.function,
            &z,
            &mut keys,
            &mut order,
            &mut scratch,
            &mut gains,
        );
        let mut slack = 0.0;
        for &a in &order {
            slack += gains[a] - x[a];
            if slack < -atol {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Every greedy vertex (all `n!` orders, `n` small), each gain evaluated independently as
    /// `F(prefix + a) − F(prefix)`.
    fn greedy_vertices(p: &mut SubmodularBasePolytope) -> Vec<Vec<f64>> {
        let n = p.n;
        let mut out = Vec::new();
        let mut perm: Vec<usize> = (0..n).collect();
        fn go(
            k: usize,
            perm: &mut Vec<usize>,
            p: &mut SubmodularBasePolytope,
            out: &mut Vec<Vec<f64>>,
        ) {
            if k == perm.len() {
                let mut x = vec![0.0; perm.len()];
                for j in 0..perm.len() {
                    x[perm[j]] = p.value(&perm[..=j]) - p.value(&perm[..j]);
                }
                out.push(x);
                return;
            }
            for i in k..perm.len() {
                perm.swap(k, i);
                go(k + 1, perm, p, out);
                perm.swap(k, i);
            }
        }
        go(0, &mut perm, p, &mut out);
        out
    }

    fn families() -> Vec<SubmodularBasePolytope> {
        let mut rng = testing::rng(111);
        let mut data = |rows: usize, n: usize, zero_every: usize| -> Vec<f64> {
            (0..rows * n)
                .map(|i| {
                    if i % zero_every == 3 {
                        0.0
                    } else {
                        rng.open01()
                    }
                })
                .collect()
        };
        let coverage =
            SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, data(3, 5, 7), 5).unwrap();
        let facility =
            SubmodularFamily::new(SubmodularKind::FacilityLocation, data(2, 6, 5), 6).unwrap();
        let weights = vec![0.1, 0.3, 0.0, 0.2, 0.15, 0.05, 0.2, 0.0, 0.1, 0.4];
        let covers = vec![vec![0, 1], vec![1, 2], vec![3], vec![3, 4], vec![2]];
        let weighted = SubmodularFamily::weighted_coverage(weights, 5, &covers).unwrap();
        vec![
            SubmodularBasePolytope::from_family(coverage).unwrap(),
            SubmodularBasePolytope::from_family(facility).unwrap(),
            SubmodularBasePolytope::from_family(weighted).unwrap(),
            SubmodularBasePolytope::concave_of_cardinality(vec![0.0, 1.0, 1.5, 1.75, 1.75, 1.75])
                .unwrap(),
            SubmodularBasePolytope::concave_of_cardinality(vec![0.0, 1.0, 2.0, 2.0, 2.0]).unwrap(),
            // The rank function of the uniform matroid U(2, 3) (a circuit: connected, though no two items
            // interact at the empty set) beside a free item 3 of rank 1: two components.
            SubmodularBasePolytope::from_values(
                (0..16usize)
                    .map(|m| ((m & 7).count_ones().min(2) + (m >> 3) as u32) as f64)
                    .collect(),
            )
            .unwrap(),
            // A coverage function on 4 items, tabulated.
            SubmodularBasePolytope::from_values(
                (0..16usize)
                    .map(|m| {
                        let covers = [0b0011u32, 0b0110, 0b1100, 0b1001];
                        let weights = [0.5, 0.25, 0.125, 1.0];
                        let union = (0..4)
                            .filter(|a| m >> a & 1 == 1)
                            .fold(0, |u, a| u | covers[a]);
                        (0..4)
                            .filter(|j| union >> j & 1 == 1)
                            .map(|j| weights[j])
                            .sum()
                    })
                    .collect(),
            )
            .unwrap(),
        ]
    }

    #[test]
    fn lmo_matches_brute_force() {
        for (i, mut p) in families().into_iter().enumerate() {
            let vertices = greedy_vertices(&mut p);
            let mut rng = testing::rng(112 + i as u64);
            let mut v = vec![0.0; p.n];
            for trial in 0..60 {
                let d = if trial % 2 == 0 {
                    testing::gaussian(&mut rng, p.n)
                } else {
                    testing::tied(&mut rng, p.n)
                };
                p.lmo(&d, &mut v);
                let dot = |x: &[f64]| x.iter().zip(&d).map(|(a, b)| a * b).sum::<f64>();
                let best = vertices
                    .iter()
                    .map(|x| dot(x))
                    .fold(f64::INFINITY, f64::min);
                assert!((dot(&v) - best).abs() < 1e-12, "{} vs {best}", dot(&v));
                assert!(
                    vertices
                        .iter()
                        .any(|w| w.iter().zip(&v).all(|(a, b)| (a - b).abs() < 1e-12)),
                    "{v:?} is not a vertex"
                );
                assert!(p.contains(&v, 1e-9));
            }
        }
    }

    #[test]
    fn hypersimplex_from_a_concave_function() {
        // g(k) = min(k, 2) on 5 items: the hypersimplex {0 <= x <= 1, Σx = 2}.
        let mut p =
            SubmodularBasePolytope::concave_of_cardinality(vec![0.0, 1.0, 2.0, 2.0, 2.0, 2.0])
                .unwrap();
        let mut h = crate::domains::UniformMatroid::new(5, 2, true).unwrap();
        testing::same_vertices(&mut p, &mut h, 113, 50);
        assert!((p.inscribed_radius().unwrap() - h.inscribed_radius().unwrap()).abs() < 1e-12);
        assert!((p.diameter() - h.diameter()).abs() < 1e-12);
    }

    #[test]
    fn geometry_certificate_projection_and_frank_wolfe() {
        for (i, mut p) in families().into_iter().enumerate() {
            let seed = 120 + 3 * i as u64;
            assert!(
                p.contains(&p.geometry.center.clone(), 1e-9),
                "the Shapley value is in B(F)"
            );
            testing::projection_is_orthogonal(&mut p, seed);
            if p.inscribed_radius().is_some() {
                testing::certified_ball_is_inside(&mut p, seed + 1);
            }
            let vertices = greedy_vertices(&mut p);
            let diam = testing::diameter_of(&vertices);
            assert!(p.diameter() >= diam - 1e-12);
            // The Shapley value is the average of the greedy vertices.
            let average: Vec<f64> = (0..p.n)
                .map(|a| vertices.iter().map(|v| v[a]).sum::<f64>() / vertices.len() as f64)
                .collect();
            for (c, m) in p.geometry.center.iter().zip(&average) {
                assert!(
                    (c - m).abs() < 1e-12,
                    "{:?} vs {average:?}",
                    p.geometry.center
                );
            }
            let mut domain = crate::domains::Domain::SubmodularBase(Box::new(p));
            testing::frank_wolfe_converges(&mut domain, seed + 2);
        }
    }

    #[test]
    fn membership_finds_violations() {
        for mut p in families() {
            let n = p.n;
            let c = p.geometry.center.clone();
            // Move mass from one item to another far beyond the polytope, keeping the sum.
            let mut x = c.clone();
            let top = p.value(&[0]);
            x[0] += 2.0 * top + 1.0;
            x[1] -= 2.0 * top + 1.0;
            assert!(!p.contains(&x, 1e-9));
            let mut y = c.clone();
            y[n - 1] += 1e-3;
            assert!(!p.contains(&y, 1e-9), "the sum is off");
        }
    }

    #[test]
    fn bad_functions_are_named() {
        let err = |g: Vec<f64>| {
            SubmodularBasePolytope::concave_of_cardinality(g)
                .unwrap_err()
                .to_string()
        };
        assert!(err(vec![0.0, 1.0]).starts_with("g must have"));
        assert!(err(vec![1.0, 1.0, 2.0]).contains("g(0) = 1"));
        assert!(err(vec![0.0, 2.0, 1.0]).contains("g(2) = 1 < g(1) = 2"));
        assert!(err(vec![0.0, 1.0, 3.0]).contains("k = 2"));
        assert!(err(vec![0.0, 1.0, 2.0, 3.0]).contains("one point"));
        assert!(err(vec![0.0, f64::NAN, 1.0]).contains("finite"));
        // One positive item per row, never together: separable.
        let family = SubmodularFamily::new(
            SubmodularKind::FacilityLocation,
            vec![0.5, 0.0, 0.0, 0.7],
            2,
        )
        .unwrap();
        let e = SubmodularBasePolytope::from_family(family)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f must be"), "{e}");
    }

    #[test]
    fn tables_are_checked_exhaustively() {
        let err = |v: Vec<f64>| {
            SubmodularBasePolytope::from_values(v)
                .unwrap_err()
                .to_string()
        };
        assert!(err(vec![0.0, 1.0, 1.0]).starts_with("f must have 2^n values"));
        assert!(err(vec![0.0, 1.0]).starts_with("f must have"), "one item");
        assert!(err(vec![0.5, 1.0, 1.0, 1.5]).contains("f(∅) = 0.5"));
        let e = err(vec![0.0, 1.0, 1.0, 0.5]);
        assert!(e.contains("monotone") && e.contains("S = {0}"), "{e}");
        let e = err(vec![0.0, 1.0, 1.0, 3.0]);
        assert!(
            e.contains("submodular") && e.contains("at S = {} to 2 at S = {1}"),
            "{e}"
        );
        assert!(
            err(vec![0.0, 1.0, 2.0, 3.0]).contains("one point"),
            "modular"
        );
        assert!(err(vec![0.0, f64::INFINITY, 1.0, 1.0]).contains("finite"));
        // The uniform matroid U(2, 3) tabulated is the hypersimplex {0 <= x <= 1, Σx = 2} in R^3.
        let mut table = SubmodularBasePolytope::from_values(
            (0..8usize).map(|m| m.count_ones().min(2) as f64).collect(),
        )
        .unwrap();
        let mut hyper = crate::domains::UniformMatroid::new(3, 2, true).unwrap();
        assert_eq!(table.affine_dim(), 2);
        assert!(
            (table.inscribed_radius().unwrap() - hyper.inscribed_radius().unwrap()).abs() < 1e-12
        );
        testing::same_vertices(&mut table, &mut hyper, 114, 20);
    }

    #[test]
    fn serde_round_trip() {
        for mut p in families() {
            let d: Vec<f64> = (0..p.n).map(|i| (i as f64 * 0.7).cos()).collect();
            testing::state_round_trip(&mut p, &d);
        }
    }
}
