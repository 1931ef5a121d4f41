//! A small exact linear-program solver: maximise c·x subject to A·x ≤ b and x ≥ 0, with b ≥ 0
//! (so x = 0 is feasible and no first phase is needed). Dense tableau simplex: the entering
//! variable is the one of largest reduced cost (Dantzig's rule) until a run of degenerate
//! pivots, then Bland's rule (lowest-index entering and leaving variables) for the rest of the
//! solve, which cannot cycle, so it always ends.
//!
//! Ours rather than a crate: the core is `no_std` + `alloc` and runs in wasm, and its LPs are
//! small (Gavel's allocation: jobs × GPU types + 1 variables); the pure-Rust solvers on
//! crates.io need `std`. Arithmetic is plain `f64` in a fixed order, so a solution is the same
//! natively and in wasm.

use alloc::vec;
use alloc::vec::Vec;

/// Pivots below this magnitude count as zero.
const EPS: f64 = 1e-9;

/// Degenerate pivots in a row after which Bland's rule takes over.
const DEGENERATE_RUN: u32 = 50;

/// Why an LP has no optimal solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpError {
    /// The objective grows without bound.
    Unbounded,
    /// A right-hand side is negative or not finite, or a row's length differs from c's.
    BadInput,
}

/// An optimal solution.
#[derive(Clone, Debug, PartialEq)]
pub struct LpSolution {
    /// The variables' values.
    pub x: Vec<f64>,
    /// c·x.
    pub objective: f64,
}

/// Maximises `c`·x subject to `a` x ≤ `b` (one row of `a` per entry of `b`) and x ≥ 0.
///
/// # Errors
/// [`LpError::BadInput`] for a negative or non-finite `b` or a row of the wrong length;
/// [`LpError::Unbounded`] when the objective has no maximum.
pub fn maximize(c: &[f64], a: &[Vec<f64>], b: &[f64]) -> Result<LpSolution, LpError> {
    let n = c.len();
    let m = b.len();
    if a.len() != m
        || a.iter().any(|r| r.len() != n)
        || b.iter().any(|&v| !v.is_finite() || v < 0.0)
    {
        return Err(LpError::BadInput);
    }
    // Tableau: m rows of [A | I | b]; variables 0..n are x, n..n+m the slacks.
    let width = n + m + 1;
    let mut t = vec![0.0; m * width];
    for i in 0..m {
        t[i * width..i * width + n].copy_from_slice(&a[i]);
        t[i * width + n + i] = 1.0;
        t[i * width + width - 1] = b[i];
    }
    // Reduced costs of every variable (the objective row), and the objective's value.
    let mut reduced: Vec<f64> = c
        .iter()
        .copied()
        .chain(core::iter::repeat_n(0.0, m))
        .collect();
    let mut value = 0.0;
    let mut basis: Vec<usize> = (n..n + m).collect();
    let mut degenerate = 0u32;
    loop {
        let enter = if degenerate < DEGENERATE_RUN {
            // Largest reduced cost, lowest index among equals.
            (0..n + m)
                .filter(|&j| reduced[j] > EPS)
                .fold(None, |best: Option<usize>, j| match best {
                    Some(b) if reduced[b] >= reduced[j] => Some(b),
                    _ => Some(j),
                })
        } else {
            (0..n + m).find(|&j| reduced[j] > EPS)
        };
        let Some(enter) = enter else { break };
        let leave = (0..m)
            .filter(|&i| t[i * width + enter] > EPS)
            .min_by(|&i, &k| {
                let ri = t[i * width + width - 1] / t[i * width + enter];
                let rk = t[k * width + width - 1] / t[k * width + enter];
                ri.total_cmp(&rk).then(basis[i].cmp(&basis[k]))
            })
            .ok_or(LpError::Unbounded)?;
        if t[leave * width + width - 1] <= EPS {
            degenerate += 1;
        } else if degenerate < DEGENERATE_RUN {
            degenerate = 0;
        }
        pivot(&mut t, width, leave, enter);
        let f = reduced[enter];
        for j in 0..n + m {
            reduced[j] -= f * t[leave * width + j];
        }
        value += f * t[leave * width + width - 1];
        basis[leave] = enter;
    }
    let mut x = vec![0.0; n];
    for (i, &v) in basis.iter().enumerate() {
        if v < n {
            x[v] = t[i * width + width - 1];
        }
    }
    Ok(LpSolution {
        x,
        objective: value,
    })
}

/// Pivots the tableau `t` (rows of `width`) on row `r`, column `col`.
fn pivot(t: &mut [f64], width: usize, r: usize, col: usize) {
    let p = t[r * width + col];
    for j in 0..width {
        t[r * width + j] /= p;
    }
    let m = t.len() / width;
    for i in 0..m {
        if i == r {
            continue;
        }
        let f = t[i * width + col];
        if f != 0.0 {
            for j in 0..width {
                t[i * width + j] -= f * t[r * width + j];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn solves_the_textbook_instance() {
        // max 3x + 5y, x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18 → x = 2, y = 6, 36 (Hillier & Lieberman).
        let a = vec![vec![1.0, 0.0], vec![0.0, 2.0], vec![3.0, 2.0]];
        let s = maximize(&[3.0, 5.0], &a, &[4.0, 12.0, 18.0]).unwrap();
        assert!(
            close(s.objective, 36.0) && close(s.x[0], 2.0) && close(s.x[1], 6.0),
            "{s:?}"
        );
    }

    #[test]
    fn ends_on_a_degenerate_instance_that_cycles_without_bland() {
        // Beale's example (cycles under the largest-coefficient rule); optimum 1/20 at
        // x = (1/25, 0, 1, 0).
        let a = vec![
            vec![0.25, -60.0, -0.04, 9.0],
            vec![0.5, -90.0, -0.02, 3.0],
            vec![0.0, 0.0, 1.0, 0.0],
        ];
        let s = maximize(&[0.75, -150.0, 0.02, -6.0], &a, &[0.0, 0.0, 1.0]).unwrap();
        assert!(close(s.objective, 0.05), "{s:?}");
        assert!(close(s.x[0], 0.04) && close(s.x[2], 1.0), "{s:?}");
    }

    #[test]
    fn reports_unbounded_and_bad_input() {
        assert_eq!(
            maximize(&[1.0], &[vec![-1.0]], &[1.0]),
            Err(LpError::Unbounded)
        );
        assert_eq!(
            maximize(&[1.0], &[vec![1.0]], &[-1.0]),
            Err(LpError::BadInput)
        );
        assert_eq!(
            maximize(&[1.0], &[vec![1.0, 2.0]], &[1.0]),
            Err(LpError::BadInput)
        );
        assert_eq!(maximize(&[1.0], &[], &[]), Err(LpError::Unbounded));
    }

    #[test]
    fn zero_objective_stays_at_the_origin() {
        let s = maximize(&[0.0, 0.0], &[vec![1.0, 1.0]], &[2.0]).unwrap();
        assert_eq!(s.x, vec![0.0, 0.0]);
        assert_eq!(s.objective, 0.0);
    }
}
