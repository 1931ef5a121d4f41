//! The tuning lab's Report: the shrinker table, loss-vs-learning-rate curves per width under SP
//! (`tuning.sp`) and μP (`tuning.mup`), the best rate per width, and the fusion curves.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::experiment::{spread_steps, stable_edge_spread_steps, Outcome, WidthSweep};
use super::fusion::{FusionModel, SurrogateShape};
use super::mlp::Optimizer;
use super::mup::ShrunkLayer;
use super::params::TuningParams;
use crate::report::{Cell, Report, Series, Table};

/// Chart keys.
pub const CHARTS: [&str; 4] = [
    "tuning.sp",
    "tuning.mup",
    "tuning.fusion.throughput",
    "tuning.fusion.memory",
];

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

fn num(v: f64) -> Cell {
    Cell::Num(v)
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

fn curves(sweeps: &[WidthSweep], lrs: &[f64], chart: &str, tag: &str) -> Vec<Series> {
    sweeps
        .iter()
        .map(|s| Series {
            name: format!("{tag} width {}", s.width),
            chart: chart.into(),
            x_label: "learning rate (log2 η)".into(),
            y_label: "held-out MSE".into(),
            points: s
                .results
                .iter()
                .zip(lrs)
                .map(|(r, &lr)| (libm::log2(lr), r.eval_loss))
                .collect(),
        })
        .collect()
}

/// Builds the Report.
#[must_use]
#[allow(clippy::too_many_lines)] // the Report's sections in the order the page shows them
pub fn build(
    params: &TuningParams,
    layers: &[ShrunkLayer],
    outcome: &Outcome,
    shape: &SurrogateShape,
    model: &FusionModel,
) -> Report {
    let e = &params.experiment;
    let sh = &params.shrinker;
    let lrs = &e.learning_rates;
    let opt = match e.optimizer {
        Optimizer::Adam => "Adam",
        Optimizer::Sgd => "SGD",
    };
    let mut report = Report {
        lab: "tuning".into(),
        title: format!(
            "μTransfer: MLPs of width {} trained with {opt} ({} steps, batch {}) over {} learning rates, SP vs μP; {} shrunk ÷{}",
            e.widths
                .iter()
                .map(|w| format!("{w}"))
                .collect::<Vec<_>>()
                .join("/"),
            e.steps,
            e.batch,
            lrs.len(),
            sh.model,
            sh.ratio
        ),
        ..Report::default()
    };
    let sp_spread = spread_steps(&outcome.sp);
    let mup_spread = spread_steps(&outcome.mup);
    let sp_edge = stable_edge_spread_steps(&outcome.sp);
    let mup_edge = stable_edge_spread_steps(&outcome.mup);
    report.push_metric(
        "tuning.sp.stable_edge_spread_steps",
        "SP: largest-stable-LR drift across widths",
        sp_edge as f64,
        "grid steps",
    );
    report.push_metric(
        "tuning.mup.stable_edge_spread_steps",
        "μP: largest-stable-LR drift across widths",
        mup_edge as f64,
        "grid steps",
    );
    let target_params: u64 = layers.iter().map(|l| l.target.params()).sum();
    report.push_metric(
        "tuning.sp.best_lr_spread_steps",
        "SP: best-LR drift across widths",
        sp_spread as f64,
        "grid steps",
    );
    report.push_metric(
        "tuning.mup.best_lr_spread_steps",
        "μP: best-LR drift across widths",
        mup_spread as f64,
        "grid steps",
    );
    report.push_metric(
        "tuning.shrinker.target_params",
        "target parameters",
        target_params as f64,
        "count",
    );
    report.push_metric(
        "tuning.shrinker.surrogate_params",
        "surrogate parameters",
        shape.params as f64,
        "count",
    );
    let fmax = params.fusion.max_fusion;
    let top = model.point(fmax);
    report.push_metric(
        "tuning.fusion.speedup_max_f",
        &format!("fusion speedup at F={fmax}"),
        top.speedup,
        "ratio",
    );
    report.push_metric(
        "tuning.fusion.step_fixed_ms",
        "fused step: fixed part",
        model.fixed_s * 1e3,
        "ms",
    );
    report.push_metric(
        "tuning.fusion.step_per_trial_ms",
        "fused step: per trial",
        model.per_trial_s * 1e3,
        "ms",
    );

    // The shrinker table.
    report.tables.push(Table {
        key: "shrinker".into(),
        title: format!(
            "μP shrinker: {} → ÷{} surrogate (multipliers carry a rate tuned on the surrogate to the target; Tensor Programs V, Table 3)",
            sh.model, sh.ratio
        ),
        columns: [
            "layer",
            "class",
            "×",
            "target fan_in × fan_out",
            "surrogate fan_in × fan_out",
            "target init std",
            "surrogate init std",
            "SGD LR ×",
            "Adam LR ×",
            "output ×",
        ]
        .iter()
        .map(|s| String::from(*s))
        .collect(),
        rows: layers
            .iter()
            .map(|l| {
                alloc::vec![
                    text(l.target.name.clone()),
                    text(l.target.class.id()),
                    num(f64::from(l.target.repeat)),
                    text(format!("{} × {}", l.target.fan_in, l.target.fan_out)),
                    text(format!("{} × {}", l.surrogate.fan_in, l.surrogate.fan_out)),
                    num(l.target_init_std),
                    num(l.surrogate_init_std),
                    num(l.rule.sgd_lr_mult),
                    num(l.rule.adam_lr_mult),
                    num(l.rule.output_mult),
                ]
            })
            .collect(),
    });

    // Best rate per width.
    let mut rows = Vec::new();
    for (s, m) in outcome.sp.iter().zip(&outcome.mup) {
        let (bs, bm) = (s.best_index(), m.best_index());
        rows.push(alloc::vec![
            num(f64::from(s.width)),
            num(lrs[bs]),
            num(s.results[bs].eval_loss),
            num(f64::from(
                s.results.iter().filter(|r| r.diverged).count() as u32
            )),
            num(lrs[bm]),
            num(m.results[bm].eval_loss),
            num(f64::from(
                m.results.iter().filter(|r| r.diverged).count() as u32
            )),
        ]);
    }
    report.tables.push(Table {
        key: "best_lr".into(),
        title: format!(
            "Best learning rate per width (held-out MSE; zero predictor {:.4}; base width {})",
            outcome
                .sp
                .first()
                .and_then(|s| s.results.first())
                .map_or(0.0, |r| r.zero_loss),
            e.base()
        ),
        columns: [
            "width",
            "SP best η",
            "SP loss",
            "SP diverged rates",
            "μP best η",
            "μP loss",
            "μP diverged rates",
        ]
        .iter()
        .map(|s| String::from(*s))
        .collect(),
        rows,
    });

    // Fusion.
    let fs: Vec<u32> = (1..=fmax).collect();
    report.tables.push(Table {
        key: "fusion".into(),
        title: format!(
            "Trial fusion of the surrogate on {} ({} kernels per step, {:.3e} parameters per trial)",
            params.fusion.gpu.label(),
            shape.kernels,
            shape.params as f64
        ),
        columns: [
            "F",
            "step (ms)",
            "trial-steps/s",
            "speedup vs F separate",
            "utilisation",
            "memory (GiB)",
            "fits",
        ]
        .iter()
        .map(|s| String::from(*s))
        .collect(),
        rows: fs
            .iter()
            .map(|&f| {
                let p = model.point(f);
                alloc::vec![
                    num(f64::from(f)),
                    num(p.step_s * 1e3),
                    num(p.trial_steps_per_s),
                    num(p.speedup),
                    num(p.utilisation),
                    num(p.memory_bytes as f64 / GIB),
                    text(if p.fits { "yes" } else { "no" }),
                ]
            })
            .collect(),
    });

    report
        .series
        .extend(curves(&outcome.sp, lrs, CHARTS[0], "SP"));
    report
        .series
        .extend(curves(&outcome.mup, lrs, CHARTS[1], "μP"));
    report.series.push(Series {
        name: "fused".into(),
        chart: CHARTS[2].into(),
        x_label: "trials fused F".into(),
        y_label: "trial-steps/s".into(),
        points: fs
            .iter()
            .map(|&f| (f64::from(f), model.point(f).trial_steps_per_s))
            .collect(),
    });
    report.series.push(Series {
        name: "F separate".into(),
        chart: CHARTS[2].into(),
        x_label: "trials fused F".into(),
        y_label: "trial-steps/s".into(),
        points: fs
            .iter()
            .map(|&f| (f64::from(f), model.point(1).trial_steps_per_s))
            .collect(),
    });
    report.series.push(Series {
        name: "bundle memory".into(),
        chart: CHARTS[3].into(),
        x_label: "trials fused F".into(),
        y_label: "memory (GiB)".into(),
        points: fs
            .iter()
            .map(|&f| (f64::from(f), model.memory_bytes(f) as f64 / GIB))
            .collect(),
    });

    let best = |s: &[WidthSweep]| -> String {
        s.iter()
            .map(|w| format!("{}→{}", w.width, lrs[w.best_index()]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    report.findings.push(format!(
        "SP: the best {opt} learning rate moves by {sp_spread} grid steps across widths ({}).",
        best(&outcome.sp)
    ));
    report.findings.push(format!(
        "μP: it moves by {mup_spread} grid steps ({}).",
        best(&outcome.mup)
    ));
    report.findings.push(format!(
        "Largest rate that trains without diverging: moves by {sp_edge} grid steps across widths under SP, {mup_edge} under μP."
    ));
    report.findings.push(format!(
        "Fusing {fmax} surrogate trials: {:.2}× the throughput of running them one at a time, {:.1} GiB ({}).",
        top.speedup,
        top.memory_bytes as f64 / GIB,
        if top.fits { "fits" } else { "does not fit the GPU" }
    ));
    report
}
