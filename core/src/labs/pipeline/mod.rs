//! The pipeline lab: pipeline-parallel training schedules and where their bubbles are.
//!
//! p stages each hold a contiguous slice of the model; an iteration pushes m micro-batches
//! forward through all stages and their gradients back. A stage idles (a *bubble*) while it
//! waits for its neighbour. The schedules in [`schedules`] order each stage's ops differently;
//! [`sim`] runs an order on the event engine and measures iteration time, bubbles and
//! activation memory. [`pipemorph`] reads real per-stage logs from PipeMorph's artifact.

pub mod fields;
pub mod params;
pub mod pipemorph;
pub mod schedules;
pub mod sim;
mod presets;
pub use presets::{CARD, PRESETS, TOURS};

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

pub use params::{PipelineParams, StageTimes};
pub use schedules::{one_f_one_b_orders, Op, OpKind, ScheduleKind};
pub use sim::{run_schedule, ScheduleRun};

use crate::report::{Cell, Report, Series, Table};
use crate::scenario::ScenarioError;
use crate::units::GIB;

/// A source's closed-form bubble ratio, and which measured ratio it describes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosedForm {
    /// Idle share of device time.
    pub bubble_ratio: f64,
    /// Whether it describes [`ScheduleRun::span_bubble_ratio`] (each device's own span, the
    /// zero-bubble papers' measure) rather than [`ScheduleRun::overall_bubble_ratio`] (the whole
    /// iteration up to the optimizer's barrier).
    pub over_spans: bool,
}

impl ClosedForm {
    fn iteration(bubble_ratio: f64) -> ClosedForm {
        ClosedForm {
            bubble_ratio,
            over_spans: false,
        }
    }
}

/// The closed-form bubble ratio of `kind` with uniform stages and free P2P, where its source
/// states one.
///
/// * GPipe and 1F1B: (p−1)/(m+p−1) (Huang et al. 2019; Narayanan et al. 2021).
/// * Interleaved 1F1B: bubble time (p−1)(t_F+t_B)/v, so ratio (p−1)/(v·m+p−1) (Narayanan et al.
///   2021, §2.2.1).
/// * ZB-H1: bubble time (p−1)(t_F+t_B−t_W) (Qi et al. 2024, §3.1), valid while t_W ≤ t_F+t_B.
/// * ZB-H2: bubble time (p−1)(t_F+t_B−2t_W) over each device's span (Qi et al. 2024, §2.2,
///   Table 2). Our runs give it exactly once the warm-up is whole (m ≥ 2p − 1) and t_W ≤ t_F,
///   2t_W ≤ t_F+t_B; a longer W than F leaves gaps the form does not count.
/// * ZB-V: no bubble over each device's span when t_F = t_B = t_W (Qi et al., arXiv 2401.10241
///   §6; the repository README's table); the source's planner reaches it from m ≥ 2p − 1.
/// * DualPipe and DualPipeV: bubble time (PP/2 − 1)(F&B + B − 3W) per device over PP pipeline
///   stages of chunk times F, full backward B and W (deepseek-ai/DualPipe README), with F&B =
///   F + B (no overlap gain is modelled). The README's figure draws F, B (input gradient) and W
///   of one size; the form is what the source's own order gives when t_F = t_B ≥ t_W, so it is
///   offered only then.
#[must_use]
pub fn theory_bubble_ratio(params: &PipelineParams, kind: ScheduleKind) -> Option<ClosedForm> {
    if !params.is_uniform() {
        return None;
    }
    let p = f64::from(params.stages);
    let m = f64::from(params.micro_batches);
    let (f, b, w) = params.stage_op_ns(0);
    let work = m * (f + b + w);
    match kind {
        ScheduleKind::Gpipe | ScheduleKind::OneFOneB => {
            Some(ClosedForm::iteration((p - 1.0) / (m + p - 1.0)))
        }
        ScheduleKind::Interleaved => {
            let v = f64::from(params.virtual_stages);
            Some(ClosedForm::iteration((p - 1.0) / (v * m + p - 1.0)))
        }
        ScheduleKind::ZbH1 => {
            if w > f + b {
                return None;
            }
            let bubble = (p - 1.0) * (f + b - w);
            Some(ClosedForm::iteration(bubble / (work + bubble)))
        }
        ScheduleKind::ZbH2 => {
            if m < 2.0 * p - 1.0 || w > f || 2.0 * w > f + b {
                return None;
            }
            let bubble = (p - 1.0) * (f + b - 2.0 * w);
            Some(ClosedForm {
                bubble_ratio: bubble / (work + bubble),
                over_spans: true,
            })
        }
        ScheduleKind::ZbV => (f == b && b == w && m >= 2.0 * p - 1.0).then_some(ClosedForm {
            bubble_ratio: 0.0,
            over_spans: true,
        }),
        ScheduleKind::DualPipe | ScheduleKind::DualPipeV => {
            if f != b || w > f {
                return None;
            }
            let (stages, share) = if kind == ScheduleKind::DualPipe {
                (p, 1.0)
            } else {
                (2.0 * p, 0.5)
            };
            let (cf, cb, cw) = (f * share, (b + w) * share, w * share);
            let bubble = (stages / 2.0 - 1.0) * ((cf + cb) + cb - 3.0 * cw);
            Some(ClosedForm::iteration(bubble / (work + bubble)))
        }
    }
}

/// Runs every schedule the scenario names and builds the comparison Report.
///
/// # Errors
/// A [`ScenarioError`] if validation fails or a schedule deadlocks.
pub fn run(params: &PipelineParams) -> Result<Report, ScenarioError> {
    params.validate()?;
    let runs: Vec<ScheduleRun> = params
        .schedules
        .iter()
        .map(|&k| run_schedule(params, k))
        .collect::<Result<_, _>>()?;
    Ok(report(params, &runs))
}

fn report(params: &PipelineParams, runs: &[ScheduleRun]) -> Report {
    let p = params.stages;
    let mut report = Report {
        lab: "pipeline".into(),
        title: format!(
            "Pipeline schedules: p={p} stages, m={} micro-batches",
            params.micro_batches
        ),
        ..Report::default()
    };
    let mut summary = Table {
        key: "schedules".into(),
        title: "Schedules compared".into(),
        columns: [
            "schedule",
            "iteration (ms)",
            "bubble ratio",
            "bubble ratio without barrier",
            "bubble ratio, closed form",
            "peak activations, worst stage (GiB)",
            "peak in-flight micro-batches, stage 0",
            "parameters per device (× model/p)",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        rows: Vec::new(),
    };
    let mut per_stage = Table {
        key: "stages".into(),
        title: "Per stage".into(),
        columns: [
            "schedule",
            "stage",
            "busy (ms)",
            "bubble ratio",
            "peak activations (GiB)",
            "peak in-flight micro-batches",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        rows: Vec::new(),
    };
    for run in runs {
        let id = run.kind.id();
        let label = run.kind.label_with(params.virtual_stages);
        let iteration_ms = run.iteration_ns as f64 / 1e6;
        let bubble = run.overall_bubble_ratio();
        let peak_bytes = run.peak_activation_bytes.iter().copied().max().unwrap_or(0);
        report.push_metric(
            &format!("{id}.iteration_ms"),
            &format!("{label} iteration time"),
            iteration_ms,
            "ms",
        );
        report.push_metric(
            &format!("{id}.bubble_ratio"),
            &format!("{label} bubble ratio"),
            bubble,
            "ratio",
        );
        report.push_metric(
            &format!("{id}.peak_activation_bytes"),
            &format!("{label} peak activations (worst stage)"),
            peak_bytes as f64,
            "bytes",
        );
        report.push_metric(
            &format!("{id}.span_bubble_ratio"),
            &format!("{label} bubble ratio without barrier (device spans)"),
            run.span_bubble_ratio(),
            "ratio",
        );
        let theory = theory_bubble_ratio(params, run.kind);
        summary.rows.push(vec_cells([
            Cell::Text(label.clone()),
            Cell::Num(iteration_ms),
            Cell::Num(bubble),
            Cell::Num(run.span_bubble_ratio()),
            theory.map_or(Cell::Missing, |t| Cell::Num(t.bubble_ratio)),
            Cell::Num(peak_bytes as f64 / GIB as f64),
            Cell::Num(run.peak_in_flight.first().copied().unwrap_or(0.0)),
            Cell::Num(f64::from(run.kind.parameter_copies())),
        ]));
        for d in 0..p as usize {
            per_stage.rows.push(vec_cells([
                Cell::Text(label.clone()),
                Cell::Num(d as f64),
                Cell::Num(run.busy_ns[d] as f64 / 1e6),
                Cell::Num(run.bubble_ratio(d)),
                Cell::Num(run.peak_activation_bytes[d] as f64 / GIB as f64),
                Cell::Num(run.peak_in_flight[d]),
            ]));
        }
        report.series.push(Series {
            name: label.clone(),
            chart: "peak_activations".into(),
            x_label: "stage".into(),
            y_label: "peak activations (GiB)".into(),
            points: (0..p as usize)
                .map(|d| (d as f64, run.peak_activation_bytes[d] as f64 / GIB as f64))
                .collect(),
        });
        report.series.push(Series {
            name: label.clone(),
            chart: "bubble_by_stage".into(),
            x_label: "stage".into(),
            y_label: "bubble ratio".into(),
            points: (0..p as usize)
                .map(|d| (d as f64, run.bubble_ratio(d)))
                .collect(),
        });
        report.timelines.push(sim::timeline(run, &label, p));
    }
    report.tables.push(summary);
    report.tables.push(per_stage);
    report.findings = findings(params, runs);
    report
}

fn vec_cells<const N: usize>(cells: [Cell; N]) -> Vec<Cell> {
    cells.into_iter().collect()
}

fn findings(params: &PipelineParams, runs: &[ScheduleRun]) -> Vec<String> {
    let mut out = Vec::new();
    let find = |k: ScheduleKind| runs.iter().find(|r| r.kind == k);
    if let Some(best) = runs.iter().map(|r| r.iteration_ns).min() {
        let fastest: Vec<&ScheduleRun> = runs.iter().filter(|r| r.iteration_ns == best).collect();
        let names: Vec<String> = fastest
            .iter()
            .map(|r| r.kind.label_with(params.virtual_stages))
            .collect();
        let bubble = fastest[0].overall_bubble_ratio() * 100.0;
        let ms = best as f64 / 1e6;
        out.push(if names.len() == 1 {
            format!("{} is fastest here: {ms:.3} ms per iteration, {bubble:.1}% of stage time idle.", names[0])
        } else {
            format!("{} tie as fastest here: {ms:.3} ms per iteration, {bubble:.1}% of stage time idle.", names.join(" and "))
        });
    }
    if let (Some(g), Some(o)) = (find(ScheduleKind::Gpipe), find(ScheduleKind::OneFOneB)) {
        let gm = g.peak_activation_bytes.first().copied().unwrap_or(0);
        let om = o.peak_activation_bytes.first().copied().unwrap_or(0);
        out.push(format!(
            "1F1B idles {:.1}% of stage time against GPipe's {:.1}%, while stage 0 holds at most {} micro-batches of activations instead of {} ({:.2} vs {:.2} GiB).",
            o.overall_bubble_ratio() * 100.0,
            g.overall_bubble_ratio() * 100.0,
            o.peak_in_flight.first().copied().unwrap_or(0.0),
            g.peak_in_flight.first().copied().unwrap_or(0.0),
            om as f64 / GIB as f64,
            gm as f64 / GIB as f64,
        ));
    }
    if let (Some(o), Some(i)) = (
        find(ScheduleKind::OneFOneB),
        find(ScheduleKind::Interleaved),
    ) {
        let bo = (o.iteration_ns - o.busy_ns[0]) as f64 / 1e6;
        let bi = (i.iteration_ns - i.busy_ns[0]) as f64 / 1e6;
        out.push(format!(
            "Interleaving with v={} cuts stage 0's idle time from {bo:.3} ms to {bi:.3} ms; it sends {} P2P messages per micro-batch instead of {}.",
            params.virtual_stages,
            params.virtual_stages * params.stages - 1,
            params.stages - 1
        ));
    }
    if let (Some(o), Some(z)) = (find(ScheduleKind::OneFOneB), find(ScheduleKind::ZbH1)) {
        let bo = (o.iteration_ns - o.busy_ns[0]) as f64;
        let bz = (z.iteration_ns - z.busy_ns[0]) as f64;
        if bo > 0.0 {
            out.push(format!(
                "ZB-H1 leaves {:.0}% of 1F1B's idle time on stage 0 by moving weight-gradient (W) passes into the bubbles.",
                bz / bo * 100.0
            ));
        }
    }
    let spans: Vec<String> = runs
        .iter()
        .filter(|r| matches!(r.kind, ScheduleKind::ZbH2 | ScheduleKind::ZbV))
        .map(|r| {
            format!(
                "{} idles {:.1}% of each device's span ({:.1}% up to the barrier)",
                r.kind.label(),
                r.span_bubble_ratio() * 100.0,
                r.overall_bubble_ratio() * 100.0
            )
        })
        .collect();
    if !spans.is_empty() {
        out.push(format!(
            "Without a barrier at the optimizer step, each device starts its next iteration as soon as it is done (Qi et al. §4): {}. The barrier adds back the stagger of the first and last ops across devices.",
            spans.join("; ")
        ));
    }
    for r in runs
        .iter()
        .filter(|r| matches!(r.kind, ScheduleKind::DualPipe | ScheduleKind::DualPipeV))
    {
        out.push(format!(
            "{} idles {:.1}% of stage time and holds up to {} micro-batches of a stage's activations per device, with {}× the parameters: {}.",
            r.kind.label(),
            r.overall_bubble_ratio() * 100.0,
            r.peak_in_flight.first().copied().unwrap_or(0.0),
            r.kind.parameter_copies(),
            if r.kind == ScheduleKind::DualPipe {
                "each device keeps its stage for both directions"
            } else {
                "the V folds 2p half-size stages onto p devices, one copy each"
            }
        ));
    }
    if !params.is_uniform() {
        out.push("Stages are not uniform (per-stage times, a slow stage or P2P cost): closed-form bubble ratios do not apply, the simulated ones do.".into());
    }
    out
}

impl crate::scenario::LabParams for PipelineParams {
    const FIELDS: &'static [crate::fields::Field] = fields::FIELDS;

    fn check(&self) -> Result<(), ScenarioError> {
        self.validate()
    }

    fn run_lab(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<Report, ScenarioError> {
        crate::scenario::one_step(progress, || run(self))
    }

    const INPUTS: &'static [crate::scenario::InputSlot] = &[pipemorph::STAGE_LOGS];

    /// A measured run's stage logs give the measured run's Report
    /// ([`pipemorph::PipelineRun::report`]) instead of the simulated schedules.
    fn run_with_inputs(
        &self,
        inputs: &[crate::scenario::InputFile<'_>],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Report, ScenarioError> {
        crate::scenario::check_slots::<Self>(inputs)?;
        match pipemorph::read_stage_logs(inputs)? {
            None => self.run_lab(progress),
            Some((log, first)) => crate::scenario::one_step(progress, || Ok(log.report(&first))),
        }
    }
}
