//! Orthogonal projection onto the kernel of a graph's node-arc incidence matrix with one node grounded:
//! `u ↦ u − Aᵀ (A Aᵀ)⁻¹ A u`.
//!
//! `A` has a row per node except the grounded one and a column per arc (`+1` at the tail, `−1` at the
//! head). For a connected graph `A` has full row rank, and `A Aᵀ` is the graph Laplacian with the grounded
//! node's row and column removed, which is positive definite. It is solved with a dense Cholesky factor
//! up to [`DENSE_LIMIT`] rows (`O(rows³/6)` once, `O(rows²)` per solve, `rows²/2` numbers of memory) and
//! otherwise by conjugate gradients preconditioned with the diagonal (`O(arcs)` per iteration, no
//! factor), both allocation-free per call.

use super::graph::NONE;
use super::linalg::Cholesky;

/// Largest number of rows solved with a dense factor (about 16 MB of factor at the limit).
pub(super) const DENSE_LIMIT: usize = 2000;

/// Relative residual at which conjugate gradients stop.
const CG_TOLERANCE: f64 = 1e-13;

/// One arc: its coordinate and the rows of its tail and head (`NONE` for the grounded node).
#[derive(Debug, Clone, Copy)]
pub(super) struct Arc {
    pub(super) coordinate: usize,
    pub(super) tail: usize,
    pub(super) head: usize,
}

#[derive(Debug, Clone)]
enum Solver {
    Dense(Cholesky),
    ConjugateGradient {
        diagonal: Vec<f64>,
        /// Scratch: iterate, residual, search direction, `M p`, preconditioned residual.
        scratch: [Vec<f64>; 5],
    },
}

impl Solver {
    /// Prepare `(A Aᵀ)⁻¹` for `rows` non-grounded nodes and the given arcs, which must connect all nodes:
    /// a dense Cholesky factor if `rows <= dense_limit` (and the factorisation succeeds), else conjugate
    /// gradients with the diagonal as preconditioner.
    fn new(rows: usize, arcs: &[Arc], dense_limit: usize) -> Self {
        let mut diagonal = vec![0.0; rows];
        for arc in arcs {
            for row in [arc.tail, arc.head] {
                if row != NONE {
                    diagonal[row] += 1.0;
                }
            }
        }
        let dense = (rows <= dense_limit)
            .then(|| {
                let mut lower = vec![0.0; rows * (rows + 1) / 2];
                let at = |i: usize, j: usize| {
                    let (i, j) = (i.max(j), i.min(j));
                    i * (i + 1) / 2 + j
                };
                (0..rows).for_each(|i| lower[at(i, i)] = diagonal[i]);
                for arc in arcs {
                    if arc.tail != NONE && arc.head != NONE {
                        lower[at(arc.tail, arc.head)] -= 1.0;
                    }
                }
                Cholesky::factor(rows, lower)
            })
            .flatten();
        match dense {
            Some(factor) => Solver::Dense(factor),
            None => Solver::ConjugateGradient {
                diagonal,
                scratch: std::array::from_fn(|_| vec![0.0; rows]),
            },
        }
    }
}

/// The tangent projection of a flow-type polytope: `u ↦ u − Aᵀ (A Aᵀ)⁻¹ A u` on the coordinates of a fixed
/// set of arcs (see the module docs), and 0 on every other coordinate (edges that never carry a varying
/// flow). The default projects onto `{0}` of `R^0`: a placeholder until the arcs are known.
#[derive(Debug, Clone, Default)]
pub(super) struct FlowProjection {
    arcs: Vec<Arc>,
    /// Whether each coordinate is an arc's.
    spanned: Vec<bool>,
    dense_limit: usize,
    /// Prepared by the first [`FlowProjection::project`].
    solver: Option<Solver>,
    rhs: Vec<f64>,
}

impl FlowProjection {
    /// The projection for `rows` non-grounded nodes and the given arcs (which must connect all nodes) in
    /// `R^dim`. The solver is prepared by the first projection: a dense factor if `rows <= dense_limit`.
    pub(super) fn new(rows: usize, arcs: Vec<Arc>, dim: usize, dense_limit: usize) -> Self {
        let mut spanned = vec![false; dim];
        for arc in &arcs {
            spanned[arc.coordinate] = true;
        }
        FlowProjection {
            arcs,
            spanned,
            dense_limit,
            solver: None,
            rhs: vec![0.0; rows],
        }
    }

    /// Replace the arc coordinates of `u` by their projection onto `{A u = 0}` and zero the others. The first
    /// call prepares the solver; later calls do not allocate.
    pub(super) fn project(&mut self, u: &mut [f64]) {
        let solver = self
            .solver
            .get_or_insert_with(|| Solver::new(self.rhs.len(), &self.arcs, self.dense_limit));
        let rhs = &mut self.rhs;
        rhs.fill(0.0);
        for arc in &self.arcs {
            let value = u[arc.coordinate];
            if arc.tail != NONE {
                rhs[arc.tail] += value;
            }
            if arc.head != NONE {
                rhs[arc.head] -= value;
            }
        }
        match solver {
            Solver::Dense(factor) => factor.solve_in_place(rhs),
            Solver::ConjugateGradient { diagonal, scratch } => {
                conjugate_gradient(&self.arcs, diagonal, scratch, rhs)
            }
        }
        let potential = |row: usize| if row == NONE { 0.0 } else { rhs[row] };
        for arc in &self.arcs {
            u[arc.coordinate] -= potential(arc.tail) - potential(arc.head);
        }
        for (x, &spanned) in u.iter_mut().zip(&self.spanned) {
            if !spanned {
                *x = 0.0;
            }
        }
    }
}

/// `out = A Aᵀ x`, computed arc by arc.
fn laplacian_times(arcs: &[Arc], x: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    let value = |row: usize| if row == NONE { 0.0 } else { x[row] };
    for arc in arcs {
        let flow = value(arc.tail) - value(arc.head);
        if arc.tail != NONE {
            out[arc.tail] += flow;
        }
        if arc.head != NONE {
            out[arc.head] -= flow;
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Overwrite `b` with the solution of `A Aᵀ x = b` by Jacobi-preconditioned conjugate gradients (Hestenes
/// & Stiefel 1952), stopping at relative residual [`CG_TOLERANCE`] or after `2·rows + 100` iterations.
fn conjugate_gradient(arcs: &[Arc], diagonal: &[f64], scratch: &mut [Vec<f64>; 5], b: &mut [f64]) {
    let [x, r, p, q, z] = scratch;
    x.fill(0.0);
    r.copy_from_slice(b);
    let target = CG_TOLERANCE * dot(b, b).sqrt();
    z.iter_mut()
        .zip(r.iter().zip(diagonal))
        .for_each(|(z, (r, d))| *z = r / d);
    p.copy_from_slice(z);
    let mut rz = dot(r, z);
    for _ in 0..2 * b.len() + 100 {
        if dot(r, r).sqrt() <= target {
            break;
        }
        laplacian_times(arcs, p, q);
        let alpha = rz / dot(p, q);
        x.iter_mut()
            .zip(p.iter())
            .for_each(|(x, p)| *x += alpha * p);
        r.iter_mut()
            .zip(q.iter())
            .for_each(|(r, q)| *r -= alpha * q);
        z.iter_mut()
            .zip(r.iter().zip(diagonal))
            .for_each(|(z, (r, d))| *z = r / d);
        let rz_next = dot(r, z);
        let beta = rz_next / rz;
        rz = rz_next;
        p.iter_mut()
            .zip(z.iter())
            .for_each(|(p, z)| *p = z + beta * *p);
    }
    b.copy_from_slice(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arcs() -> Vec<Arc> {
        // Nodes 0..4, node 4 grounded (rows 0..3); a few parallel and crossing arcs.
        let list = [
            (0, 1),
            (0, 2),
            (1, 2),
            (2, 3),
            (1, 3),
            (3, 4),
            (2, 4),
            (0, 1),
        ];
        list.iter()
            .enumerate()
            .map(|(coordinate, &(a, b))| Arc {
                coordinate,
                tail: a,
                head: if b == 4 { NONE } else { b },
            })
            .collect()
    }

    #[test]
    fn dense_and_iterative_agree_and_land_in_the_kernel() {
        let mut dense = FlowProjection::new(4, arcs(), 8, DENSE_LIMIT);
        let mut iterative = FlowProjection::new(4, arcs(), 8, 0);
        assert!(dense.solver.is_none() && iterative.solver.is_none());
        let mut rng = super::super::testing::rng(41);
        for _ in 0..10 {
            let u = super::super::testing::gaussian(&mut rng, 8);
            let (mut a, mut b) = (u.clone(), u.clone());
            dense.project(&mut a);
            iterative.project(&mut b);
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() < 1e-10);
            }
            // A a = 0 at every non-grounded node.
            let mut net = [0.0; 4];
            for arc in arcs() {
                net[arc.tail] += a[arc.coordinate];
                if arc.head != NONE {
                    net[arc.head] -= a[arc.coordinate];
                }
            }
            assert!(net.iter().all(|v| v.abs() < 1e-12), "{net:?}");
        }
        assert!(matches!(dense.solver, Some(Solver::Dense(_))));
        assert!(matches!(
            iterative.solver,
            Some(Solver::ConjugateGradient { .. })
        ));
    }
}
