//! The overlap lab's sweep over Helix's tile streams K and the bucket pass's memory budget:
//! every combination run as its own scenario, one row per point (`bubblelab overlap --sweep
//! K=1,2,4 --sweep budget=8,none`). The generic `--sweep PATH=…` reaches one pass's field; this
//! one sets every tile or bucket pass, adding the pass where the scenario has none.

use alloc::format;
use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use super::{run, OverlapParams, PassSpec};
use crate::report::{Cell, Report, Table};
use crate::scenario::ScenarioError;

/// The values swept: K values and budgets in GiB (`None`: no budget); an empty list keeps the
/// scenario's own value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sweep {
    /// Tile streams K, 1 to 16 each.
    pub ks: Vec<u32>,
    /// Memory budgets, GiB; `None` runs the bucket pass without one.
    pub budgets_gib: Vec<Option<f64>>,
}

/// `base` with every tile pass's K and every bucket pass's budget replaced (the pass added
/// where the scenario has none); `None` keeps the scenario's value.
#[allow(clippy::option_option)] // budget: None = keep the scenario's, Some(None) = no budget
fn with_point(base: &OverlapParams, k: Option<u32>, budget: Option<Option<f64>>) -> OverlapParams {
    let mut p = base.clone();
    if let Some(k) = k {
        if !p.passes.iter().any(|x| matches!(x, PassSpec::Tile { .. })) {
            p.passes.insert(
                0,
                PassSpec::Tile {
                    k,
                    dim: crate::graph::Dim::Batch,
                },
            );
        }
        for pass in &mut p.passes {
            if let PassSpec::Tile { k: kk, .. } = pass {
                *kk = k;
            }
        }
    }
    if let Some(b) = budget {
        if !p
            .passes
            .iter()
            .any(|x| matches!(x, PassSpec::Bucket { .. }))
        {
            p.passes.push(PassSpec::Bucket {
                memory_budget_gib: b,
            });
        }
        for pass in &mut p.passes {
            if let PassSpec::Bucket { memory_budget_gib } = pass {
                *memory_budget_gib = b;
            }
        }
    }
    p
}

/// Runs every point of `sweep` on `base` (the first axis, K, outermost), all validated before
/// any runs, calling `progress(points done, points)`.
///
/// # Errors
/// The first point's [`ScenarioError`] that does not validate or run.
pub fn run_sweep(
    base: &OverlapParams,
    sweep: &Sweep,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Report, ScenarioError> {
    let ks: Vec<Option<u32>> = if sweep.ks.is_empty() {
        vec![None]
    } else {
        sweep.ks.iter().copied().map(Some).collect()
    };
    let budgets: Vec<Option<Option<f64>>> = if sweep.budgets_gib.is_empty() {
        vec![None]
    } else {
        sweep.budgets_gib.iter().copied().map(Some).collect()
    };
    let points: Vec<OverlapParams> = ks
        .iter()
        .flat_map(|&k| budgets.iter().map(move |&b| (k, b)))
        .map(|(k, b)| with_point(base, k, b))
        .collect();
    for p in &points {
        p.validate()?;
    }
    let mut table = Table {
        key: "sweep".into(),
        title: "Helix over the sweep (serial, eager and AsyncTP-style do not depend on K or the budget)".into(),
        columns: [
            "K",
            "budget (GiB)",
            "serial step (ms)",
            "AsyncTP-style step (ms)",
            "Helix step (ms)",
            "Helix exposed comm (ms)",
            "Helix peak activations (GiB)",
            "Helix faster than serial (%)",
        ]
        .iter()
        .map(ToString::to_string)
        .collect(),
        rows: Vec::new(),
    };
    progress(0, points.len());
    for (i, p) in points.iter().enumerate() {
        let r = run(p)?;
        table.rows.push(row(p, &r));
        progress(i + 1, points.len());
    }
    Ok(Report {
        lab: "overlap".into(),
        title: format!("Overlap sweep: {} point(s)", points.len()),
        tables: vec![table],
        ..Report::default()
    })
}

/// One point's row: its K and budget as run, then Helix's figures against serial.
fn row(p: &OverlapParams, r: &Report) -> Vec<Cell> {
    let m = |key: &str| Cell::Num(r.metric(key).unwrap_or(f64::NAN));
    let k_used = p.passes.iter().find_map(|x| match x {
        PassSpec::Tile { k, .. } => Some(*k),
        _ => None,
    });
    let budget = p.passes.iter().find_map(|x| match x {
        PassSpec::Bucket { memory_budget_gib } => Some(*memory_budget_gib),
        _ => None,
    });
    vec![
        k_used.map_or(Cell::Missing, |k| Cell::Num(f64::from(k))),
        match budget {
            Some(Some(b)) => Cell::Num(b),
            Some(None) => Cell::Text("none".into()),
            None => Cell::Missing,
        },
        m("serial.makespan_ms"),
        m("async_tp.makespan_ms"),
        m("helix.makespan_ms"),
        m("helix.exposed_comm_ms"),
        m("helix.peak_gib"),
        Cell::Num(r.metric("helix.speedup_vs_serial").unwrap_or(f64::NAN) * 100.0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_a_row_with_the_k_and_budget_it_ran() {
        let base = OverlapParams::default();
        let sweep = Sweep {
            ks: vec![1, 2],
            budgets_gib: vec![Some(8.0), None],
        };
        let mut steps = Vec::new();
        let report = run_sweep(&base, &sweep, &mut |d, t| steps.push((d, t))).unwrap();
        let rows = &report.tables[0].rows;
        assert_eq!(rows.len(), 4);
        assert_eq!(steps.last(), Some(&(4, 4)));
        assert_eq!(rows[1][0], Cell::Num(1.0));
        assert_eq!(rows[1][1], Cell::Text("none".into()));
        assert_eq!(rows[2][1], Cell::Num(8.0));
        // A row's figures are that point's own run.
        let point = run(&with_point(&base, Some(2), Some(Some(8.0)))).unwrap();
        assert_eq!(
            rows[2][4],
            Cell::Num(point.metric("helix.makespan_ms").unwrap())
        );
    }

    #[test]
    fn a_bad_point_is_refused_before_any_runs() {
        let sweep = Sweep {
            ks: vec![1, 0],
            budgets_gib: Vec::new(),
        };
        let mut ran = false;
        let e = run_sweep(&OverlapParams::default(), &sweep, &mut |_, _| ran = true);
        assert!(e.is_err());
        assert!(!ran, "no point runs when one is invalid");
    }
}
