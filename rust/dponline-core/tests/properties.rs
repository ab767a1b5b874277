//! Property-based tests of core invariants (issue 13), with `proptest`:
//!
//! * tree aggregation with the noise switched off releases exactly the prefix sums;
//! * every LMO is optimal against brute force over the 0/1 points of small matroid and path polytopes;
//! * every Frank-Wolfe iterate is feasible, with a finite gap.

// A test crate: its helpers (outside `#[test]` functions) may unwrap like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use dponline_core::aggregation::TreeAggregator;
use dponline_core::domains::{
    BipartiteMatchingPolytope, BirkhoffPolytope, Domain, FlowPolytope, GraphicMatroid,
    LinearMinimizationOracle, PartitionMatroid, PathPolytope, Simplex, UniformMatroid,
};
use dponline_core::frank_wolfe::FrankWolfe;
use dponline_core::noise::NoiseDistribution;
use dponline_core::rng::Generator;
use proptest::prelude::*;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The edges `(u mod n, v mod n)` of `pairs` between distinct nodes: a graph on `n` nodes without loops.
fn loopless(pairs: Vec<(usize, usize)>, n: usize) -> Vec<(usize, usize)> {
    pairs
        .into_iter()
        .map(|(u, v)| (u % n, v % n))
        .filter(|(u, v)| u != v)
        .collect()
}

/// Small 0/1 polytopes (at most 8 coordinates), every kind that has 0/1 vertices.
fn small_domain() -> impl Strategy<Value = Domain> {
    prop_oneof![
        (2usize..8).prop_map(|n| Domain::Simplex(Simplex::new(n).unwrap())),
        (2usize..8, 1usize..8, any::<bool>()).prop_filter_map("k in range", |(n, k, base)| {
            UniformMatroid::new(n, k, base)
                .ok()
                .map(Domain::UniformMatroid)
        }),
        (1usize..4, 1usize..4, 0usize..4, 0usize..4, any::<bool>()).prop_filter_map(
            "capacities in range",
            |(a, b, ka, kb, base)| {
                let blocks = vec![(0..a).collect(), (a..a + b).collect()];
                PartitionMatroid::new(blocks, vec![ka, kb], base)
                    .ok()
                    .map(Domain::PartitionMatroid)
            }
        ),
        (
            3usize..6,
            prop::collection::vec((0usize..6, 0usize..6), 1..8),
            any::<bool>()
        )
            .prop_filter_map("a valid graph", |(n, edges, base)| {
                let edges: Vec<_> = edges.into_iter().map(|(u, v)| (u % n, v % n)).collect();
                GraphicMatroid::new(n, edges, base)
                    .ok()
                    .map(|g| Domain::GraphicMatroid(Box::new(g)))
            }),
        (
            3usize..7,
            prop::collection::vec((0usize..7, 0usize..7), 1..8)
        )
            .prop_filter_map("a DAG with an s-t path", |(n, pairs)| {
                // Edges from the lower to the higher index: acyclic by construction.
                let edges = loopless(pairs, n)
                    .into_iter()
                    .map(|(u, v)| (u.min(v), u.max(v)))
                    .collect();
                PathPolytope::new(n, edges, 0, n - 1)
                    .ok()
                    .map(|p| Domain::PathPolytope(Box::new(p)))
            }),
        Just(Domain::Birkhoff(Box::new(
            BirkhoffPolytope::new(2).unwrap()
        ))),
        (
            1usize..4,
            1usize..4,
            prop::collection::vec((0usize..4, 0usize..4), 1..8)
        )
            .prop_map(|(nl, nr, pairs)| {
                let edges = pairs.into_iter().map(|(i, j)| (i % nl, j % nr)).collect();
                Domain::BipartiteMatching(Box::new(
                    BipartiteMatchingPolytope::new(nl, nr, edges).unwrap(),
                ))
            }),
        (
            3usize..6,
            prop::collection::vec((0usize..6, 0usize..6), 1..8)
        )
            .prop_filter_map("a graph with a unit s-t flow", |(n, pairs)| {
                // Unit capacities and value 1: every vertex is a 0/1 flow (directed cycles allowed).
                let edges = loopless(pairs, n);
                let caps = vec![1.0; edges.len()];
                FlowPolytope::new(n, edges, 0, n - 1, Some(caps), 1.0)
                    .ok()
                    .map(|p| Domain::Flow(Box::new(p)))
            }),
    ]
}

/// Every 0/1 point of the domain (for these polytopes: exactly the vertices).
fn zero_one_points(d: &Domain) -> Vec<Vec<f64>> {
    let n = d.dim();
    (0u32..1 << n)
        .map(|mask| {
            (0..n)
                .map(|i| f64::from(mask >> i & 1))
                .collect::<Vec<f64>>()
        })
        .filter(|x| d.contains(x, 1e-9))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn tree_without_noise_releases_exact_prefix_sums(
        dim in 1usize..5,
        padded in any::<bool>(),
        gaussian in any::<bool>(),
        rows in prop::collection::vec(prop::collection::vec(-1e6f64..1e6, 4), 1..40),
    ) {
        let noise = if gaussian { NoiseDistribution::gaussian(0.0) } else { NoiseDistribution::laplace(0.0) }.unwrap();
        let horizon = rows.len() as u64;
        let mut tree = TreeAggregator::new(dim, horizon, noise, padded, Generator::from_seed([1, 2, 3, 4])).unwrap();
        prop_assert!(tree.initial().iter().all(|&v| v == 0.0));
        let mut exact = vec![0.0; dim];
        let mut out = vec![0.0; dim];
        for row in &rows {
            let x = &row[..dim];
            tree.push(x, &mut out).unwrap();
            exact.iter_mut().zip(x).for_each(|(e, v)| *e += v);
            prop_assert_eq!(&out, &exact);
        }
        prop_assert!(tree.push(&rows[0][..dim], &mut out).is_err(), "a push past the horizon must fail");
    }

    #[test]
    fn push_many_equals_pushes(
        dim in 1usize..4,
        rows in prop::collection::vec(prop::collection::vec(-1e3f64..1e3, 3), 1..20),
        seed in any::<u64>(),
    ) {
        let noise = NoiseDistribution::laplace(1.0).unwrap();
        let flat: Vec<f64> = rows.iter().flat_map(|r| r[..dim].to_vec()).collect();
        let horizon = rows.len() as u64;
        let mut a = TreeAggregator::new(dim, horizon, noise, true, Generator::from_seed([seed, 1, 2, 3])).unwrap();
        let mut b = TreeAggregator::new(dim, horizon, noise, true, Generator::from_seed([seed, 1, 2, 3])).unwrap();
        let mut many = vec![0.0; flat.len()];
        a.push_many(&flat, &mut many).unwrap();
        let mut one = vec![0.0; dim];
        for (x, expected) in flat.chunks(dim).zip(many.chunks(dim)) {
            b.push(x, &mut one).unwrap();
            prop_assert_eq!(&one[..], expected);
        }
    }

    #[test]
    fn lmo_is_optimal_against_brute_force(
        mut d in small_domain(),
        direction in prop::collection::vec(-10.0f64..10.0, 8),
    ) {
        let n = d.dim();
        let direction = &direction[..n];
        let mut vertex = vec![0.0; n];
        d.lmo(direction, &mut vertex);
        prop_assert!(d.contains(&vertex, 1e-9), "LMO output {vertex:?} is not in the domain");
        let best = zero_one_points(&d)
            .iter()
            .map(|x| dot(direction, x))
            .fold(f64::INFINITY, f64::min);
        prop_assert!(dot(direction, &vertex) <= best + 1e-9, "LMO value {} > brute force {}", dot(direction, &vertex), best);
    }

    #[test]
    fn every_frank_wolfe_iterate_is_feasible(
        mut d in small_domain(),
        v in prop::collection::vec(-5.0f64..5.0, 8),
        steps in 1usize..60,
    ) {
        let n = d.dim();
        let v = &v[..n];
        let neg: Vec<f64> = v.iter().map(|x| -x).collect();
        let mut start = vec![0.0; n];
        d.lmo(&neg, &mut start);
        let mut fw = FrankWolfe::new(&start, v, true).unwrap();
        for _ in 0..steps {
            let gap = fw.step(&mut d);
            prop_assert!(gap.is_finite());
            prop_assert!(d.contains(fw.x(), 1e-9), "iterate {:?} left the domain", fw.x());
            let active = fw.active_set().unwrap();
            let total: f64 = active.weights().iter().sum();
            prop_assert!((total - 1.0).abs() < 1e-9 && active.weights().iter().all(|&w| w >= 0.0));
        }
    }

    #[test]
    fn contains_refuses_non_finite_points(mut d in small_domain(), i in 0usize..8, bad in prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY])) {
        let n = d.dim();
        let mut x = vec![0.0; n];
        d.lmo(&vec![0.0; n], &mut x);
        x[i % n] = bad;
        prop_assert!(!d.contains(&x, 1e-9));
    }
}
