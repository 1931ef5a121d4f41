//! Fits the synthetic agents' turn count to a measured engine-alone batch time, then shows how
//! every controller's speedup depends on it.
//!
//! CONCUR (§5) does not publish its agent workload, and an agent's history, hence the KV it
//! holds, grows with every turn: the turn count is the unknown the batch time depends on most.
//! With `fit.engine_alone_batch_s` set, the lab searches the mean turns per agent T at which the
//! engine alone (unbounded admission, the paper's baseline) finishes the batch closest to that
//! time, reading only engine-alone runs, and runs every controller on those agents unchanged:
//! their results are predictions, reported with the fit's residual. At mean T the turn counts keep
//! the scenario's spread s = (max − min)/(max + min): min = round(T(1 − s)), max = round(T(1 + s)).
//!
//! Search: T doubles from `fit.min_mean_turns` until the engine alone takes at least the target
//! (or T reaches `fit.max_mean_turns`), then bisects between the last two; of the two neighbouring
//! turn counts the closer one wins (the lower on a tie). Sensitivity: each controller's speedup in
//! batch completion over the engine alone at T̂·{½, ¾, 1, 1¼, 1½, 2}.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use super::controllers::ControllerSpec;
use super::params::{field, AgenticParams};
use super::sim::run_controller;
use super::workload::{self, SyntheticSpec};
use crate::report::{Cell, Report, Series, Table};
use crate::scenario::ScenarioError;

/// Chart of the engine-alone batch time against the mean turns the fit tried.
pub const FIT_CHART: &str = "agentic.fit";
/// Chart of each controller's speedup against the mean turns per agent.
pub const SENSITIVITY_CHART: &str = "agentic.sensitivity";
/// Multiples of the fitted mean turns at which the sensitivity curve runs, in quarters.
const CURVE_QUARTERS: [u32; 6] = [2, 3, 4, 5, 6, 8];

/// The baseline the synthetic agents' turn count is fitted to (off when the time is 0).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TurnFit {
    /// Engine-alone batch completion to reproduce, s (0 = no fit: the turns as given).
    pub engine_alone_batch_s: f64,
    /// Fewest mean turns per agent the search tries.
    pub min_mean_turns: u32,
    /// Most mean turns per agent the search tries.
    pub max_mean_turns: u32,
}

impl Default for TurnFit {
    fn default() -> Self {
        TurnFit {
            engine_alone_batch_s: 0.0,
            min_mean_turns: 2,
            max_mean_turns: 200,
        }
    }
}

impl TurnFit {
    /// Whether the fit runs.
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.engine_alone_batch_s > 0.0
    }

    /// Checks what the field table cannot: the bounds' order and a valid workload at the most
    /// turns tried (`base` is the scenario's synthetic spec).
    ///
    /// # Errors
    /// [`ScenarioError::Field`] with the path `agentic.fit.<field>`.
    pub fn validate(&self, base: &SyntheticSpec) -> Result<(), ScenarioError> {
        if !self.enabled() {
            return Ok(());
        }
        crate::scenario::check_range(
            "agentic",
            "fit.max_mean_turns",
            self.max_mean_turns,
            self.min_mean_turns,
            workload::MAX_TURNS,
        )?;
        spec_at(base, self.max_mean_turns)
            .validate()
            .map_err(|e| {
                field(
                    "fit.max_mean_turns",
                    format!("at {} mean turns the agents break a limit ({e})", self.max_mean_turns),
                )
            })
    }
}

/// The synthetic spec with mean turns `mean`, keeping `base`'s spread of turn counts.
#[must_use]
pub fn spec_at(base: &SyntheticSpec, mean: u32) -> SyntheticSpec {
    let sum = f64::from(base.max_turns) + f64::from(base.min_turns);
    let spread = if sum > 0.0 {
        (f64::from(base.max_turns) - f64::from(base.min_turns)) / sum
    } else {
        0.0
    };
    let t = f64::from(mean);
    let lo = (libm::round(t * (1.0 - spread)) as u32).max(1);
    let hi = (libm::round(t * (1.0 + spread)) as u32).clamp(lo, workload::MAX_TURNS);
    SyntheticSpec {
        min_turns: lo,
        max_turns: hi,
        ..base.clone()
    }
}

/// One point of the sensitivity curve.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    /// Mean turns per agent.
    pub mean_turns: u32,
    /// Engine-alone batch completion, s.
    pub engine_s: f64,
    /// Each other controller's (id, label, batch completion in s), in the scenario's order.
    pub controllers: Vec<(String, String, f64)>,
}

/// What the fit found.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOutcome {
    /// The engine-alone batch time fitted to, s.
    pub target_s: f64,
    /// The fitted mean turns per agent.
    pub mean_turns: u32,
    /// The scenario's synthetic spec (its spread of turn counts is kept).
    pub base: SyntheticSpec,
    /// Every (mean turns, engine-alone batch s) the search ran, by mean turns.
    pub tried: BTreeMap<u32, f64>,
    /// The sensitivity curve, by mean turns.
    pub curve: Vec<CurvePoint>,
}

impl FitOutcome {
    /// The synthetic spec the controllers run on.
    #[must_use]
    pub fn synthetic(&self) -> SyntheticSpec {
        spec_at(&self.base, self.mean_turns)
    }

    /// Engine-alone batch time at the fitted turns, s.
    #[must_use]
    pub fn engine_s(&self) -> f64 {
        self.tried.get(&self.mean_turns).copied().unwrap_or(0.0)
    }

    /// (fitted − target) / target.
    #[must_use]
    pub fn residual(&self) -> f64 {
        (self.engine_s() - self.target_s) / self.target_s
    }
}

/// Runs estimated for a fit of `params` (for progress bars).
#[must_use]
pub fn estimated_runs(params: &AgenticParams) -> usize {
    let f = &params.fit;
    let span = f.max_mean_turns.max(1) / f.min_mean_turns.max(1);
    let doublings = (u32::BITS - span.leading_zeros()) as usize + 1;
    let bisections = (u32::BITS - f.max_mean_turns.leading_zeros()) as usize;
    let others = params
        .controllers
        .iter()
        .filter(|c| **c != ControllerSpec::Unbounded)
        .count();
    doublings + bisections + CURVE_QUARTERS.len() * (1 + others)
}

/// Batch completion of `controller` on the agents of `spec`, s.
fn completion_s(
    params: &AgenticParams,
    spec: &SyntheticSpec,
    controller: &ControllerSpec,
) -> Result<f64, ScenarioError> {
    let (work, _) = super::prepare(params, &workload::generate(spec))?;
    let run = run_controller(
        &params.engine,
        controller,
        &work,
        params.interval_ns(),
        params.step_objective_ns(),
        0,
    )?;
    Ok(run.makespan_ns as f64 / 1e9)
}

/// Engine-alone batch completion at mean turns `t`, s, from `tried` or a new run (recorded).
fn engine_alone_s(
    params: &AgenticParams,
    t: u32,
    tried: &mut BTreeMap<u32, f64>,
    progress: &mut dyn FnMut(),
) -> Result<f64, ScenarioError> {
    if let Some(&s) = tried.get(&t) {
        return Ok(s);
    }
    let s = completion_s(
        params,
        &spec_at(&params.synthetic, t),
        &ControllerSpec::Unbounded,
    )?;
    tried.insert(t, s);
    progress();
    Ok(s)
}

/// Fits the mean turns to `params.fit` (which must be enabled) and runs the sensitivity curve,
/// calling `progress()` after every run.
///
/// # Errors
/// As the lab's runs ([`super::prepare`], [`run_controller`]).
pub fn fit_turns(
    params: &AgenticParams,
    progress: &mut dyn FnMut(),
) -> Result<FitOutcome, ScenarioError> {
    let f = &params.fit;
    let target = f.engine_alone_batch_s;
    let mut tried = BTreeMap::new();
    // Double until the engine alone takes at least the target, then bisect.
    let (mut below, mut above) = (None, f.min_mean_turns);
    let reached = loop {
        if engine_alone_s(params, above, &mut tried, progress)? >= target {
            break true;
        }
        if above == f.max_mean_turns {
            break false;
        }
        below = Some(above);
        above = above.saturating_mul(2).min(f.max_mean_turns);
    };
    let mean_turns = match below {
        Some(mut lo) if reached => {
            while above - lo > 1 {
                let mid = lo + (above - lo) / 2;
                if engine_alone_s(params, mid, &mut tried, progress)? >= target {
                    above = mid;
                } else {
                    lo = mid;
                }
            }
            let miss = |t: u32| libm::fabs(tried[&t] - target);
            if miss(lo) <= miss(above) {
                lo
            } else {
                above
            }
        }
        _ => above,
    };
    let mut curve = Vec::new();
    let mut last = 0;
    for q in CURVE_QUARTERS {
        let t = ((mean_turns * q + 2) / 4).clamp(1, f.max_mean_turns);
        if t == last {
            continue;
        }
        last = t;
        let spec = spec_at(&params.synthetic, t);
        let engine_s = engine_alone_s(params, t, &mut tried, progress)?;
        let mut controllers = Vec::new();
        for c in params
            .controllers
            .iter()
            .filter(|c| **c != ControllerSpec::Unbounded)
        {
            controllers.push((c.id(), c.label(), completion_s(params, &spec, c)?));
            progress();
        }
        curve.push(CurvePoint {
            mean_turns: t,
            engine_s,
            controllers,
        });
    }
    Ok(FitOutcome {
        target_s: target,
        mean_turns,
        base: params.synthetic.clone(),
        tried,
        curve,
    })
}

fn round1(v: f64) -> f64 {
    libm::round(v * 10.0) / 10.0
}

/// Adds the fit's metrics, tables, charts and finding to the Report of the fitted run.
pub fn push(report: &mut Report, fit: &FitOutcome) {
    for (key, label, value, unit) in [
        (
            "fit.target_engine_batch_s",
            "Engine-alone batch completion fitted to",
            fit.target_s,
            "s",
        ),
        (
            "fit.mean_turns",
            "Fitted mean turns per agent",
            f64::from(fit.mean_turns),
            "count",
        ),
        (
            "fit.engine_batch_s",
            "Engine-alone batch completion at the fitted turns",
            fit.engine_s(),
            "s",
        ),
        (
            "fit.residual",
            "Fit residual: (engine alone − target) / target",
            fit.residual(),
            "ratio",
        ),
        (
            "fit.engine_runs",
            "Engine-alone runs of the fit and the curve",
            fit.tried.len() as f64,
            "count",
        ),
    ] {
        report.push_metric(key, label, value, unit);
    }
    let turns = |t: u32| {
        let spec = spec_at(&fit.base, t);
        format!("{}–{}", spec.min_turns, spec.max_turns)
    };
    report.tables.push(Table {
        key: "fit".into(),
        title: format!(
            "Turns fitted to the engine-alone batch time of {:.0} s (engine-alone runs only)",
            fit.target_s
        ),
        columns: [
            "mean turns per agent",
            "turns",
            "engine alone: batch completion (s)",
            "vs target",
        ]
        .iter()
        .map(|c| String::from(*c))
        .collect(),
        rows: fit
            .tried
            .iter()
            .map(|(&t, &e)| {
                let mark = if t == fit.mean_turns { " (fitted)" } else { "" };
                alloc::vec![
                    Cell::Text(format!("{t}{mark}")),
                    Cell::Text(turns(t)),
                    Cell::Num(round1(e)),
                    Cell::Num(libm::round((e - fit.target_s) / fit.target_s * 1e4) / 1e4),
                ]
            })
            .collect(),
    });
    push_curve(report, fit, &turns);
    report.findings.insert(
        0,
        format!(
            "Agents fitted to the engine alone's batch time: {} mean turns per agent ({} turns) make the engine alone finish in {:.0} s against the {:.0} s fitted to (residual {:+.1} %). Every controller's result here is a prediction on those agents; the sensitivity chart shows how it moves with the turns.",
            fit.mean_turns,
            turns(fit.mean_turns),
            fit.engine_s(),
            fit.target_s,
            fit.residual() * 100.0
        ),
    );
}

fn push_curve(report: &mut Report, fit: &FitOutcome, turns: &dyn Fn(u32) -> String) {
    let x_label = String::from("mean turns per agent");
    report.series.push(Series {
        name: "engine alone: batch completion".into(),
        chart: FIT_CHART.into(),
        x_label: x_label.clone(),
        y_label: "batch completion (s)".into(),
        points: fit
            .tried
            .iter()
            .map(|(&t, &e)| (f64::from(t), e))
            .collect(),
    });
    let (first, last) = (
        fit.tried.keys().next().copied().unwrap_or(0),
        fit.tried.keys().next_back().copied().unwrap_or(0),
    );
    report.series.push(Series {
        name: "target".into(),
        chart: FIT_CHART.into(),
        x_label: x_label.clone(),
        y_label: "batch completion (s)".into(),
        points: alloc::vec![
            (f64::from(first), fit.target_s),
            (f64::from(last), fit.target_s)
        ],
    });
    let Some(head) = fit.curve.first() else {
        return;
    };
    let mut columns = alloc::vec![
        String::from("mean turns per agent"),
        String::from("turns"),
        String::from("engine alone (s)"),
    ];
    for (i, (_, label, _)) in head.controllers.iter().enumerate() {
        columns.push(format!("{label} (s)"));
        columns.push(format!("{label}: speedup"));
        report.series.push(Series {
            name: format!("{label} / engine alone"),
            chart: SENSITIVITY_CHART.into(),
            x_label: x_label.clone(),
            y_label: "speedup in batch completion (×)".into(),
            points: fit
                .curve
                .iter()
                .map(|p| (f64::from(p.mean_turns), p.engine_s / p.controllers[i].2))
                .collect(),
        });
    }
    let rows = fit
        .curve
        .iter()
        .map(|p| {
            let mut row = alloc::vec![
                Cell::Num(f64::from(p.mean_turns)),
                Cell::Text(turns(p.mean_turns)),
                Cell::Num(round1(p.engine_s)),
            ];
            for (_, _, c) in &p.controllers {
                row.push(Cell::Num(round1(*c)));
                row.push(Cell::Num(libm::round(p.engine_s / c * 1e3) / 1e3));
            }
            row
        })
        .collect();
    report.tables.push(Table {
        key: "sensitivity".into(),
        title: "Sensitivity to the fitted turns: each controller against the engine alone".into(),
        columns,
        rows,
    });
}
