//! Eigenvalues of symmetric matrices for the spectral domains (nuclear-norm ball, spectraplex): an extreme
//! eigenpair of an implicit symmetric operator by the Lanczos method, and every eigenvalue of a small dense
//! symmetric matrix (for membership tests).
//!
//! Tridiagonal matrices `T` (diagonal `α`, off-diagonal `β`) are handled by Sturm-sequence bisection
//! (the number of eigenvalues below `x` is the number of negative pivots of `LDLᵀ = T − xI`; Golub & Van
//! Loan 2013, §8.4.1) for eigenvalues, and a twisted factorisation (Dhillon & Parlett 2004) for one
//! eigenvector.

use rand_distr::{Distribution, StandardNormal};

use crate::rng::Generator;
use crate::vecops::{axpy_kernel, dot_kernel};

/// The Lanczos method stops when the residual `‖A x − θ x‖` of its Ritz pair is at most this times the
/// estimate `max(|θ_min|, |θ_max|)` of `‖A‖` from the Ritz values.
pub(super) const LANCZOS_TOLERANCE: f64 = 1e-10;

/// Explicit restarts allowed before the Lanczos method returns its best Ritz pair unconverged.
const LANCZOS_RESTARTS: usize = 40;

/// Largest Krylov basis kept between restarts.
const LANCZOS_BASIS: usize = 80;

/// Bisection stops when the bracket is this many units of `f64::EPSILON` times the spectrum's scale (the
/// larger Gershgorin bound in absolute value) wide, or after `BISECTION_STEPS` halvings.
const BISECTION_WIDTH: f64 = 2.0;
const BISECTION_STEPS: usize = 200;

/// Pivots this close to 0 are replaced by it in Sturm counts (a standard safeguard: the count is then that of
/// a matrix perturbed by about this much).
const PIVOT_FLOOR: f64 = 1e-300;

/// Number of eigenvalues of the tridiagonal `(alpha, beta)` below `x`.
fn sturm_count(alpha: &[f64], beta: &[f64], x: f64) -> usize {
    let mut count = 0;
    let mut d = 1.0;
    for (i, &a) in alpha.iter().enumerate() {
        let b2 = if i == 0 {
            0.0
        } else {
            beta[i - 1] * beta[i - 1]
        };
        d = a - x - b2 / d;
        if d.abs() < PIVOT_FLOOR {
            d = -PIVOT_FLOOR;
        }
        count += usize::from(d < 0.0);
    }
    count
}

/// Gershgorin bounds `[lo, hi]` on the spectrum of the tridiagonal `(alpha, beta)`.
fn gershgorin(alpha: &[f64], beta: &[f64]) -> (f64, f64) {
    let k = alpha.len();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, &a) in alpha.iter().enumerate() {
        let left = if i > 0 { beta[i - 1].abs() } else { 0.0 };
        let right = if i + 1 < k { beta[i].abs() } else { 0.0 };
        lo = lo.min(a - left - right);
        hi = hi.max(a + left + right);
    }
    (lo, hi)
}

/// The `index`-th smallest eigenvalue (0-based) of the tridiagonal `(alpha, beta)` by bisection, to about two
/// units in the last place of the spectrum's scale (about 60 halvings).
fn tridiagonal_eigenvalue(alpha: &[f64], beta: &[f64], index: usize) -> f64 {
    let (mut lo, mut hi) = gershgorin(alpha, beta);
    let width = BISECTION_WIDTH * f64::EPSILON * lo.abs().max(hi.abs());
    for _ in 0..BISECTION_STEPS {
        let mid = 0.5 * (lo + hi);
        if hi - lo <= width || mid <= lo || mid >= hi {
            break;
        }
        if sturm_count(alpha, beta, mid) > index {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// An eigenvector `y` (unit norm) of the tridiagonal `(alpha, beta)` for the eigenvalue estimate `theta`, by
/// the twisted factorisation `T − θI = N_r Δ N_rᵀ` at the index `r` where `|γ_r|` is smallest; then
/// `‖(T − θ) y‖ = |γ_r| / ‖ŷ‖` for the unnormalised `ŷ`. `down`, `up` are scratch of the same length.
fn tridiagonal_eigenvector(
    alpha: &[f64],
    beta: &[f64],
    theta: f64,
    y: &mut [f64],
    down: &mut [f64],
    up: &mut [f64],
) {
    let k = alpha.len();
    let floor = |d: f64| {
        if d.abs() < PIVOT_FLOOR {
            PIVOT_FLOOR
        } else {
            d
        }
    };
    // Forward pivots D⁺ of T − θI = L D⁺ Lᵀ and backward pivots D⁻ of U D⁻ Uᵀ.
    down[0] = floor(alpha[0] - theta);
    for i in 1..k {
        down[i] = floor(alpha[i] - theta - beta[i - 1] * beta[i - 1] / down[i - 1]);
    }
    up[k - 1] = floor(alpha[k - 1] - theta);
    for i in (0..k - 1).rev() {
        up[i] = floor(alpha[i] - theta - beta[i] * beta[i] / up[i + 1]);
    }
    // γ_r = D⁺_r + D⁻_r − (α_r − θ).
    let mut twist = 0;
    let mut smallest = f64::INFINITY;
    for r in 0..k {
        let gamma = (down[r] + up[r] - (alpha[r] - theta)).abs();
        if gamma < smallest {
            smallest = gamma;
            twist = r;
        }
    }
    y[twist] = 1.0;
    for i in (0..twist).rev() {
        y[i] = -beta[i] / down[i] * y[i + 1];
    }
    for i in twist + 1..k {
        y[i] = -beta[i - 1] / up[i] * y[i - 1];
    }
    let norm = super::linalg::norm2(&y[..k]);
    y[..k].iter_mut().for_each(|v| *v /= norm);
}

/// One Lanczos step's orthogonalisation of `w = A q` (`q` the newest of the basis vectors `done`, `previous`
/// the one before with its `β`): the three-term recurrence, then full reorthogonalisation against the whole
/// basis by classical Gram-Schmidt, repeated once more only when a pass removed most of the vector (Daniel,
/// Gragg, Kaufman & Stewart 1976: a second pass is then enough). Returns `α = qᵀ A q` with the corrections.
/// Runs at the level of its caller ([`crate::simd`]). Norms are plain square roots: the operators here have
/// entries scaled to at most 2 in absolute value, so no square overflows.
#[inline(always)]
fn reorthogonalise(
    q: &[f64],
    previous: Option<(f64, &[f64])>,
    done: &[f64],
    w: &mut [f64],
    coefficients: &mut [f64],
) -> f64 {
    let dim = q.len();
    let mut alpha = dot_kernel(q, w);
    axpy_kernel(w, -alpha, q);
    if let Some((beta, before)) = previous {
        axpy_kernel(w, -beta, before);
    }
    for _ in 0..2 {
        let norm = dot_kernel(w, w).sqrt();
        for (i, c) in coefficients.iter_mut().enumerate() {
            *c = dot_kernel(&done[i * dim..(i + 1) * dim], w);
        }
        for (i, &c) in coefficients.iter().enumerate() {
            axpy_kernel(w, -c, &done[i * dim..(i + 1) * dim]);
        }
        alpha += coefficients[coefficients.len() - 1];
        if dot_kernel(w, w).sqrt() >= 0.7 * norm {
            break;
        }
    }
    alpha
}

/// Which end of the spectrum to find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    Smallest,
    Largest,
}

/// The Lanczos method with full reorthogonalisation and explicit restarts (Golub & Van Loan 2013, §10.1-10.3)
/// for one extreme eigenpair of a symmetric operator on `R^dim`, from a fixed start vector (Gaussian entries
/// of a generator with a fixed seed, so that a result depends on the operator alone). Buffers are sized once;
/// a solve does not allocate.
#[derive(Debug, Clone)]
pub(super) struct Lanczos {
    dim: usize,
    basis_len: usize,
    /// Row-major `(basis_len, dim)` orthonormal Krylov basis.
    basis: Vec<f64>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    start: Vec<f64>,
    w: Vec<f64>,
    /// Tridiagonal eigenvector and its scratch.
    y: Vec<f64>,
    down: Vec<f64>,
    up: Vec<f64>,
    coefficients: Vec<f64>,
}

/// What a Lanczos solve returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Eigenpair {
    /// The Ritz value `θ = xᵀ A x` of the returned unit vector `x`.
    pub(super) value: f64,
    /// Whether the residual met [`LANCZOS_TOLERANCE`] (otherwise the best pair after the restart cap).
    pub(super) converged: bool,
    /// Products with the operator made.
    pub(super) products: usize,
}

impl Lanczos {
    /// Buffers for operators on `R^dim` (`dim >= 1`).
    pub(super) fn new(dim: usize) -> Self {
        let basis_len = dim.min(LANCZOS_BASIS);
        let mut rng = Generator::from_seed([0x4c41_4e43, 0x5a4f_5354, 0x4152_5456, 0x4543_544f]);
        let mut start: Vec<f64> = (0..dim).map(|_| StandardNormal.sample(&mut rng)).collect();
        let norm = super::linalg::norm2(&start);
        start.iter_mut().for_each(|v| *v /= norm);
        Lanczos {
            dim,
            basis_len,
            basis: vec![0.0; basis_len * dim],
            alpha: vec![0.0; basis_len],
            beta: vec![0.0; basis_len],
            start,
            w: vec![0.0; dim],
            y: vec![0.0; basis_len],
            down: vec![0.0; basis_len],
            up: vec![0.0; basis_len],
            coefficients: vec![0.0; basis_len],
        }
    }

    /// An eigenpair at `end` of the symmetric operator `apply(q, out)` (`out = A q`), the unit eigenvector
    /// written into `x` (length `dim`).
    ///
    /// Stops when `‖A x − θ x‖ ≤ LANCZOS_TOLERANCE · max|θ_i|` (checked every other step; the bound `√(‖T y − θ y‖² + (β y_last)²)` of
    /// the Lanczos relation, with an orthonormal basis), at an invariant subspace, or after
    /// `LANCZOS_RESTARTS` restarts of up to 80 steps, each from the last Ritz vector; then the best Ritz pair
    /// so far is returned with `converged = false`. For an extreme eigenvalue the residual also bounds the
    /// eigenvalue error (some eigenvalue lies within it of `θ`; it is the extreme one unless the start
    /// vector is orthogonal to its eigenspace).
    pub(super) fn solve(
        &mut self,
        mut apply: impl FnMut(&[f64], &mut [f64]),
        end: End,
        x: &mut [f64],
    ) -> Eigenpair {
        let dim = self.dim;
        x.copy_from_slice(&self.start);
        let mut value = 0.0;
        let mut products = 0;
        for _ in 0..LANCZOS_RESTARTS {
            self.basis[..dim].copy_from_slice(x);
            let mut steps = 0;
            let mut residual = f64::INFINITY;
            let mut scale = 0.0f64;
            for j in 0..self.basis_len {
                steps = j + 1;
                let (done, rest) = self.basis.split_at_mut((j + 1) * dim);
                let q = &done[j * dim..(j + 1) * dim];
                apply(q, &mut self.w);
                products += 1;
                // The three-term recurrence, then full reorthogonalisation against the whole basis, repeated
                // once more only when it removed most of the vector (the criterion of Daniel, Gragg, Kaufman &
                // Stewart 1976: a second classical Gram-Schmidt pass is then enough).
                let (w, coefficients) = (&mut self.w, &mut self.coefficients[..=j]);
                let previous = self.beta[..j]
                    .last()
                    .map(|&b| (b, &done[(j - 1) * dim..j * dim]));
                let alpha = crate::simd::dispatch(
                    #[inline(always)]
                    || reorthogonalise(q, previous, done, w, coefficients),
                );
                self.alpha[j] = alpha;
                let b = dot_kernel(&self.w, &self.w).sqrt();
                self.beta[j] = b;
                let (alpha, beta) = (&self.alpha[..=j], &self.beta[..j]);
                let (lo, hi) = gershgorin(alpha, beta);
                scale = scale.max(lo.abs()).max(hi.abs());
                let invariant = b <= f64::EPSILON * scale.max(f64::MIN_POSITIVE);
                // The Ritz pair is computed every other step from the fifth on (a converged pair is noticed
                // at most one product late), at an invariant subspace, and before a restart.
                let last = j + 1 == self.basis_len;
                if !(invariant || last || (j >= 4 && j % 2 == 1)) {
                    rest[..dim]
                        .iter_mut()
                        .zip(&self.w)
                        .for_each(|(q, w)| *q = w / b);
                    continue;
                }
                let index = if end == End::Smallest { 0 } else { j };
                let theta = tridiagonal_eigenvalue(alpha, beta, index);
                let y = &mut self.y[..=j];
                tridiagonal_eigenvector(alpha, beta, theta, y, &mut self.down, &mut self.up);
                let mut inner = 0.0;
                for i in 0..=j {
                    let mut ty = alpha[i] * y[i] - theta * y[i];
                    if i > 0 {
                        ty += beta[i - 1] * y[i - 1];
                    }
                    if i < j {
                        ty += beta[i] * y[i + 1];
                    }
                    inner += ty * ty;
                }
                residual = (inner + (b * y[j]) * (b * y[j])).sqrt();
                value = theta;
                if residual <= LANCZOS_TOLERANCE * scale || invariant || last {
                    break;
                }
                rest[..dim]
                    .iter_mut()
                    .zip(&self.w)
                    .for_each(|(q, w)| *q = w / b);
            }
            // The Ritz vector x = Q y.
            x.fill(0.0);
            for (i, &c) in self.y[..steps].iter().enumerate() {
                axpy_kernel(x, c, &self.basis[i * dim..(i + 1) * dim]);
            }
            let norm = super::linalg::norm2(x);
            x.iter_mut().for_each(|v| *v /= norm);
            if residual <= LANCZOS_TOLERANCE * scale || self.beta[steps - 1] <= f64::EPSILON * scale
            {
                return Eigenpair {
                    value,
                    converged: true,
                    products,
                };
            }
        }
        Eigenpair {
            value,
            converged: false,
            products,
        }
    }
}

/// Every eigenvalue of the dense symmetric `n × n` matrix `a` (row-major; overwritten), in increasing order:
/// Householder reduction to tridiagonal form (Golub & Van Loan 2013, Algorithm 8.3.1), then bisection.
/// `O(n³)`; for membership tests, not hot loops.
pub(super) fn symmetric_eigenvalues(a: &mut [f64], n: usize) -> Vec<f64> {
    let mut alpha = vec![0.0; n];
    let mut beta = vec![0.0; n.saturating_sub(1)];
    let mut v = vec![0.0; n];
    let mut w = vec![0.0; n];
    for k in 0..n.saturating_sub(1) {
        let m = n - k - 1;
        let column: Vec<f64> = (0..m).map(|i| a[(k + 1 + i) * n + k]).collect();
        let norm = super::linalg::norm2(&column);
        alpha[k] = a[k * n + k];
        if norm == 0.0 {
            beta[k] = 0.0;
            continue;
        }
        let head = if column[0] >= 0.0 { -norm } else { norm };
        beta[k] = head;
        v[..m].copy_from_slice(&column);
        v[0] -= head;
        let vnorm = super::linalg::norm2(&v[..m]);
        v[..m].iter_mut().for_each(|x| *x /= vnorm);
        // B ← H B H with H = I − 2vvᵀ on the trailing block B = a[k+1.., k+1..].
        for i in 0..m {
            let row = &a[(k + 1 + i) * n + k + 1..(k + 1 + i) * n + n];
            w[i] = crate::vecops::dot(row, &v[..m]);
        }
        let kappa = crate::vecops::dot(&v[..m], &w[..m]);
        for i in 0..m {
            w[i] -= kappa * v[i];
        }
        for i in 0..m {
            let (vi, wi) = (v[i], w[i]);
            let row = &mut a[(k + 1 + i) * n + k + 1..(k + 1 + i) * n + n];
            row.iter_mut()
                .zip(v[..m].iter().zip(&w[..m]))
                .for_each(|(x, (vj, wj))| *x -= 2.0 * (vi * wj + wi * vj));
        }
    }
    if n > 0 {
        alpha[n - 1] = a[(n - 1) * n + n - 1];
    }
    (0..n)
        .map(|i| tridiagonal_eigenvalue(&alpha, &beta, i))
        .collect()
}

/// Sweeps of the one-sided Jacobi method before [`singular_values`] returns what it has.
const JACOBI_SWEEPS: usize = 60;

/// The singular values of the row-major `rows × cols` matrix `x` by the one-sided Jacobi method (Hestenes
/// 1958): plane rotations make the columns (of `x` or `xᵀ`, whichever has fewer) pairwise orthogonal, and
/// their norms are then the singular values, small ones included to high relative accuracy (unlike square
/// roots of the eigenvalues of `xᵀx`). A sweep is `O(rows·cols·min(rows, cols))`; at most 60 sweeps (it
/// converges quadratically, typically in under 10). For membership tests, not hot loops.
pub(super) fn singular_values(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    // Columns of the side with fewer of them, each stored contiguously.
    let (k, len) = (rows.min(cols), rows.max(cols));
    let mut columns: Vec<Vec<f64>> = (0..k)
        .map(|c| {
            if cols <= rows {
                (0..rows).map(|i| x[i * cols + c]).collect()
            } else {
                x[c * cols..(c + 1) * cols].to_vec()
            }
        })
        .collect();
    debug_assert!(columns.iter().all(|c| c.len() == len));
    for _ in 0..JACOBI_SWEEPS {
        let mut rotated = false;
        for p in 0..k {
            for q in p + 1..k {
                let (head, tail) = columns.split_at_mut(q);
                let (a, b) = (&mut head[p], &mut tail[0]);
                let alpha = crate::vecops::dot(a, a);
                let beta = crate::vecops::dot(b, b);
                let gamma = crate::vecops::dot(a, b);
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for (u, v) in a.iter_mut().zip(b.iter_mut()) {
                    let (x, y) = (*u, *v);
                    *u = c * x - s * y;
                    *v = s * x + c * y;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    let mut values: Vec<f64> = columns.iter().map(|c| super::linalg::norm2(c)).collect();
    values.sort_unstable_by(f64::total_cmp);
    values
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// A random symmetric matrix with a prescribed spectrum: `Q diag(values) Qᵀ` for `Q` from Householder
    /// reflections.
    fn with_spectrum(values: &[f64], seed: u64) -> Vec<f64> {
        let n = values.len();
        let mut rng = testing::rng(seed);
        let mut q: Vec<f64> = (0..n * n)
            .map(|i| f64::from(u8::from(i % (n + 1) == 0)))
            .collect();
        for _ in 0..3 {
            let v = testing::gaussian(&mut rng, n);
            let vv: f64 = v.iter().map(|x| x * x).sum();
            // q ← (I − 2vvᵀ/vv) q
            for col in 0..n {
                let d: f64 = (0..n).map(|i| v[i] * q[i * n + col]).sum();
                for i in 0..n {
                    q[i * n + col] -= 2.0 * v[i] * d / vv;
                }
            }
        }
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n)
                    .map(|k| q[i * n + k] * values[k] * q[j * n + k])
                    .sum();
            }
        }
        a
    }

    #[test]
    fn dense_eigenvalues_match_the_spectrum() {
        let values = [-3.0, -1.0, -1.0, 0.0, 0.5, 2.0, 7.0];
        let mut a = with_spectrum(&values, 81);
        let got = symmetric_eigenvalues(&mut a, 7);
        for (g, v) in got.iter().zip(values) {
            assert!((g - v).abs() < 1e-12, "{got:?}");
        }
        assert_eq!(symmetric_eigenvalues(&mut [4.0], 1), vec![4.0]);
    }

    #[test]
    fn singular_values_of_a_rank_one_matrix_are_exact_zeros_and_its_norm() {
        let u = [0.6, -0.8, 0.0];
        let v = [0.3, 0.4, 0.5, (1.0f64 - 0.5).sqrt()];
        let x: Vec<f64> = (0..12).map(|k| 2.5 * u[k / 4] * v[k % 4]).collect();
        let s = singular_values(&x, 3, 4);
        assert!(
            (s[2] - 2.5).abs() < 1e-14 && s[0].abs() < 1e-15 && s[1].abs() < 1e-15,
            "{s:?}"
        );
        // A known spectrum, both orientations.
        let values = [-3.0, -1.0, 0.5, 2.0, 7.0];
        let a = with_spectrum(&values, 83);
        let s = singular_values(&a, 5, 5);
        let mut want: Vec<f64> = values.iter().map(|v: &f64| v.abs()).collect();
        want.sort_by(f64::total_cmp);
        assert!(
            s.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12),
            "{s:?}"
        );
    }

    #[test]
    fn lanczos_finds_both_ends() {
        let n = 150;
        let values: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
        let a = with_spectrum(&values, 82);
        let mut solver = Lanczos::new(n);
        let mut x = vec![0.0; n];
        let apply = |q: &[f64], out: &mut [f64]| {
            for (i, o) in out.iter_mut().enumerate() {
                *o = crate::vecops::dot(&a[i * n..(i + 1) * n], q);
            }
        };
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for (end, want) in [(End::Smallest, lo), (End::Largest, hi)] {
            let pair = solver.solve(apply, end, &mut x);
            assert!(pair.converged);
            assert!((pair.value - want).abs() < 1e-9, "{} vs {want}", pair.value);
            let mut ax = vec![0.0; n];
            apply(&x, &mut ax);
            let r: f64 = ax
                .iter()
                .zip(&x)
                .map(|(a, x)| (a - pair.value * x).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(r <= 1e-9 * 3.0, "residual {r}");
        }
    }

    #[test]
    #[ignore = "prints the Lanczos work on a 500 x 500 Gaussian matrix; not a test"]
    fn lanczos_products_on_a_gaussian_gram_matrix() {
        let (rows, cols) = (500, 500);
        let d = testing::gaussian(&mut testing::rng(5), rows * cols);
        let mut solver = Lanczos::new(cols);
        let mut x = vec![0.0; cols];
        let mut p = vec![0.0; rows];
        let pair = solver.solve(
            |q, out| {
                for (pi, row) in p.iter_mut().zip(d.chunks_exact(cols)) {
                    *pi = dot_kernel(row, q);
                }
                out.fill(0.0);
                for (&pi, row) in p.iter().zip(d.chunks_exact(cols)) {
                    axpy_kernel(out, pi, row);
                }
            },
            End::Largest,
            &mut x,
        );
        eprintln!("{pair:?}");
    }

    #[test]
    fn lanczos_stops_at_an_invariant_subspace() {
        // The identity: the first step spans an invariant subspace.
        let mut solver = Lanczos::new(5);
        let mut x = vec![0.0; 5];
        let pair = solver.solve(|q, out| out.copy_from_slice(q), End::Largest, &mut x);
        assert!(pair.converged && (pair.value - 1.0).abs() < 1e-15);
        // The zero operator.
        let pair = solver.solve(|_, out| out.fill(0.0), End::Smallest, &mut x);
        assert!(pair.converged && pair.value.abs() < 1e-15);
        assert!((x.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
