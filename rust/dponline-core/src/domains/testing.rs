//! Checks every domain's unit tests run: the LMO against brute force, the inscribed-ball certificate, and
//! the tangent projection.

use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::LinearMinimizationOracle;
use crate::rng::Generator;

/// A seeded generator for tests.
pub(super) fn rng(seed: u64) -> Generator {
    Generator::from_seed([seed, 17, 29, 31])
}

/// A standard Gaussian vector.
pub(super) fn gaussian(rng: &mut Generator, n: usize) -> Vec<f64> {
    (0..n).map(|_| StandardNormal.sample(rng)).collect()
}

/// A direction with many exact ties: entries from {-2, -1, 0, 1, 2}.
pub(super) fn tied(rng: &mut Generator, n: usize) -> Vec<f64> {
    (0..n).map(|_| (rng.open01() * 5.0).floor() - 2.0).collect()
}

/// The direction of trial `trial` in a mixed sequence: tie-heavy ([`tied`]) when `trial % period` is
/// `period − 1`, Gaussian otherwise.
pub(super) fn mixed_direction(
    rng: &mut Generator,
    n: usize,
    trial: usize,
    period: usize,
) -> Vec<f64> {
    if trial % period == period - 1 {
        tied(rng, n)
    } else {
        gaussian(rng, n)
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The point `center + length·u/‖u‖₂` (`u` non-zero).
pub(super) fn along(center: &[f64], length: f64, u: &[f64]) -> Vec<f64> {
    let norm = dot(u, u).sqrt();
    center
        .iter()
        .zip(u)
        .map(|(c, u)| c + length * u / norm)
        .collect()
}

/// The point at the certified radius `r` from the centre along the tangent direction `−P e_i`, towards the
/// facet `x_i = 0`: a tight certificate puts it on that facet.
pub(super) fn towards_facet<D: LinearMinimizationOracle>(domain: &mut D, i: usize) -> Vec<f64> {
    let mut u = vec![0.0; domain.dim()];
    u[i] = -1.0;
    domain.project_tangent(&mut u);
    let r = domain.inscribed_radius().expect("a certified radius");
    along(domain.interior_point(), r, &u)
}

/// The Euclidean diameter of a finite point set, by brute force over all pairs.
pub(super) fn diameter_of(points: &[Vec<f64>]) -> f64 {
    points
        .iter()
        .flat_map(|a| points.iter().map(move |b| (a, b)))
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>())
        .fold(0.0, f64::max)
        .sqrt()
}

/// Pickle `domain` in the state format and restore it: the copy's LMO returns the same vertex as the
/// original's for `direction`. Returns the copy, for checks of the domain's own fields.
pub(super) fn state_round_trip<D>(domain: &mut D, direction: &[f64]) -> D
where
    D: LinearMinimizationOracle + Serialize + DeserializeOwned,
{
    let bytes = crate::state::to_state_bytes(domain).unwrap();
    let mut back: D = crate::state::from_state_bytes(&bytes).unwrap();
    let n = domain.dim();
    let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
    domain.lmo(direction, &mut a);
    back.lmo(direction, &mut b);
    assert_eq!(a, b, "the restored domain's LMO differs for {direction:?}");
    back
}

/// Two descriptions of one polytope return the same vertex, ties broken alike, on `trials` tie-heavy
/// directions drawn from `seed`.
pub(super) fn same_vertices<A, B>(a: &mut A, b: &mut B, seed: u64, trials: usize)
where
    A: LinearMinimizationOracle,
    B: LinearMinimizationOracle,
{
    let n = a.dim();
    assert_eq!(n, b.dim());
    let mut rng = rng(seed);
    let (mut va, mut vb) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..trials {
        let d = tied(&mut rng, n);
        a.lmo(&d, &mut va);
        b.lmo(&d, &mut vb);
        assert_eq!(va, vb, "same vertex and the same tie-breaking for {d:?}");
    }
}

/// The LMO returns one of `vertices` with the minimal inner product, is deterministic, and its output is
/// contained in the domain; checked on Gaussian and tie-heavy directions.
pub(super) fn lmo_matches_brute_force<D: LinearMinimizationOracle>(
    domain: &mut D,
    vertices: &[Vec<f64>],
    seed: u64,
) {
    let n = domain.dim();
    let mut rng = rng(seed);
    let mut v = vec![0.0; n];
    let mut again = vec![0.0; n];
    for trial in 0..60 {
        let d = mixed_direction(&mut rng, n, trial, 2);
        domain.lmo(&d, &mut v);
        let best = vertices
            .iter()
            .map(|w| dot(&d, w))
            .fold(f64::INFINITY, f64::min);
        assert!(
            (dot(&d, &v) - best).abs() <= 1e-9 * (1.0 + best.abs()),
            "lmo value {} != brute force {best} for d = {d:?}",
            dot(&d, &v)
        );
        assert!(vertices.contains(&v), "{v:?} is not a vertex");
        assert!(domain.contains(&v, 1e-12), "{v:?} not contained");
        domain.lmo(&d, &mut again);
        assert_eq!(v, again, "lmo is not deterministic");
    }
}

/// Points `c + r u` for random unit tangent `u` (Gaussian, and ± projected coordinate vectors, which point
/// at facets) lie in the domain up to `1e-9`.
pub(super) fn certified_ball_is_inside<D: LinearMinimizationOracle>(domain: &mut D, seed: u64) {
    let n = domain.dim();
    let c = domain.interior_point().to_vec();
    assert!(domain.contains(&c, 1e-12), "centre not contained");
    let r = domain.inscribed_radius().expect("a certified radius");
    assert!(r > 0.0);
    let mut rng = rng(seed);
    let mut directions: Vec<Vec<f64>> = (0..200).map(|_| gaussian(&mut rng, n)).collect();
    for i in 0..n.min(50) {
        for sign in [-1.0, 1.0] {
            let mut e = vec![0.0; n];
            e[i] = sign;
            directions.push(e);
        }
    }
    for mut u in directions {
        domain.project_tangent(&mut u);
        if dot(&u, &u).sqrt() < 1e-12 {
            continue;
        }
        let x = along(&c, r, &u);
        assert!(domain.contains(&x, 1e-9), "c + r u left the domain: {x:?}");
    }
}

/// `project_tangent` is idempotent, orthogonal (residuals are orthogonal to the range), has trace
/// `affine_dim`, and fixes differences of LMO vertices.
pub(super) fn projection_is_orthogonal<D: LinearMinimizationOracle>(domain: &mut D, seed: u64) {
    let n = domain.dim();
    let mut rng = rng(seed);
    for _ in 0..10 {
        let u = gaussian(&mut rng, n);
        let mut pu = u.clone();
        domain.project_tangent(&mut pu);
        let mut ppu = pu.clone();
        domain.project_tangent(&mut ppu);
        let scale = 1.0 + dot(&u, &u).sqrt();
        for (a, b) in pu.iter().zip(&ppu) {
            assert!((a - b).abs() < 1e-9 * scale, "not idempotent");
        }
        let mut pw = gaussian(&mut rng, n);
        domain.project_tangent(&mut pw);
        let residual: Vec<f64> = u.iter().zip(&pu).map(|(a, b)| a - b).collect();
        assert!(dot(&residual, &pw).abs() < 1e-9 * scale * (1.0 + dot(&pw, &pw).sqrt()));
    }
    let mut trace = 0.0;
    let mut e = vec![0.0; n];
    for i in 0..n {
        e.fill(0.0);
        e[i] = 1.0;
        domain.project_tangent(&mut e);
        trace += e[i];
    }
    assert!(
        (trace - domain.affine_dim() as f64).abs() < 1e-6,
        "trace {trace} != affine_dim {}",
        domain.affine_dim()
    );
    let (mut x, mut y) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..10 {
        domain.lmo(&gaussian(&mut rng, n), &mut x);
        domain.lmo(&gaussian(&mut rng, n), &mut y);
        let diff: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        let mut pd = diff.clone();
        domain.project_tangent(&mut pd);
        for (a, b) in pd.iter().zip(&diff) {
            assert!((a - b).abs() < 1e-9, "a vertex difference is not tangent");
        }
    }
}

/// All subsets of `0..n` of size `k` (`n` small), in lexicographic order.
pub(super) fn k_subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    (0u32..1 << n)
        .filter(|mask| mask.count_ones() as usize == k)
        .map(|mask| (0..n).filter(|i| mask >> i & 1 == 1).collect())
        .collect()
}

/// The 0/1 indicator vector of `members` in `R^n`.
pub(super) fn indicator(n: usize, members: &[usize]) -> Vec<f64> {
    let mut x = vec![0.0; n];
    members.iter().for_each(|&i| x[i] = 1.0);
    x
}

/// Frank-Wolfe on `½‖x‖² − ⟨v, x⟩` (the projection of `v`, a target at distance `D` from the centre) closes
/// its gap at the rate of Jaggi (2013), Theorem 2: after `K` steps the smallest gap seen is at most
/// `(27/4)·C/(K + 2)`, with curvature `C ≤ D²` for this 1-smooth objective. Every iterate stays feasible.
pub(super) fn frank_wolfe_converges(domain: &mut super::Domain, seed: u64) {
    let n = domain.dim();
    let diameter = domain.diameter();
    let mut rng = rng(seed);
    let v = along(domain.interior_point(), diameter, &gaussian(&mut rng, n));
    let mut fw = crate::frank_wolfe::project(domain, &v, 0).unwrap();
    let mut smallest = f64::INFINITY;
    for k in 1..=1000u32 {
        let gap = fw.step(domain);
        assert!(gap >= -1e-9 * diameter * diameter, "negative gap {gap}");
        smallest = smallest.min(gap);
        if [10, 100, 1000].contains(&k) {
            let bound = 6.75 * diameter * diameter / (f64::from(k) + 2.0);
            assert!(
                smallest <= bound,
                "gap {smallest} > {bound} after {k} steps"
            );
            assert!(domain.contains(fw.x(), 1e-9), "an iterate left the domain");
        }
    }
}
